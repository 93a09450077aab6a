"""``--wai-import=PATH``: another eval framework's results as this session's scenarios (docs/interop.md).

Each imported sample (``<task>/<sample id>``) becomes one test item whose trials are the sample's epochs, judged
by the same code as a ``wai_eval`` test (``gate.scenario.judge_scenario``: per-item thresholds, the drop vs the
baseline), so the suite gate, the store (``--wai-save``, ``--wai-baseline``, ``BRANCH~N`` pooling), JUnit,
Markdown, GitHub annotations and the HTML report treat it like any other scenario. An errored or unscored
sample is in the ledger with its reason. The items are added at collection (``plugin.py``), the same on every
xdist worker (the file is read on each).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_whileai.keys import WAI_KEY, WAI_RESULT, WAI_SESSION, WAI_THRESHOLDS
from pytest_whileai.markers import Thresholds
from whileai_core import defaults as D


class ImportedSample(pytest.Item):
    """One imported sample: its epochs' rewards and ledger states, judged at run time."""

    def __init__(self, *, rows: list[Mapping[str, Any]], source: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows = sorted(rows, key=lambda r: int(r["rollout_index"]))
        self.source = source
        self.add_marker("whileai")

    def runtest(self) -> None:
        from pytest_whileai.gate.scenario import failure_message, judge_scenario

        wai = self.config.stash[WAI_SESSION]
        key = self.stash[WAI_KEY]
        states = [r.get("trial_state") for r in self.rows]
        first_error = next((str(r["error"]) for r in self.rows if r.get("error")), None)
        n_infra = sum(1 for s in states if s == "infra_error")
        n_agent = sum(1 for s in states if s == "agent_error")
        entry = judge_scenario(
            key=key, nodeid=self.nodeid, rewards=[r.get("reward") for r in self.rows], k=len(self.rows),
            seed=0, judge=f"{self.rows[0].get('source_format')}:{self.rows[0].get('scorer')}", errors=n_agent,
            pass_reward=D.GATE_PASS_REWARD, level=wai.settings.level,
            thresholds=self.stash[WAI_THRESHOLDS], baseline=wai.baseline_index.get(key),
            baseline_note=wai.baseline_note, settings=wai.settings, family=max(1, wai.n_compared), trial_index=None,
            scenario=None, location=[self.source, 1], agent_error=first_error if n_agent else None,
            infra_errors=n_infra, infra_error=first_error if n_infra else None, states=states,
            policy=wai.settings.unscored)
        entry["scenario"] = dict(self.rows[0].get("scenario") or {})
        entry["imported"] = {"source": self.source, "format": self.rows[0].get("source_format")}
        self.stash[WAI_RESULT] = entry
        wai.add_result(entry)
        if entry["failures"]:
            __tracebackhide__ = True
            pytest.fail(failure_message(entry, baseline_name=wai.settings.baseline), pytrace=False)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"imported {self.name}"


def imported_items(session: pytest.Session, settings: Any) -> list[ImportedSample]:
    """One item per imported sample; a file that cannot be read is a ``UsageError`` naming it. The load report
    (every skipped or unscored sample) goes in the session's notes."""
    from whileai_core.errors import MissingExtra
    from whileai_core.interop.load import load_results

    path = Path(settings.import_path)
    if not path.is_absolute():
        path = Path(str(session.config.invocation_params.dir)) / path
    try:
        imported = load_results(path, scorer=settings.import_scorer)
    except (OSError, ValueError, MissingExtra) as exc:
        raise pytest.UsageError(f"--wai-import={settings.import_path}: {exc}") from None
    wai = session.config.stash[WAI_SESSION]
    if not wai.worker:
        wai.notes.append(imported.report.summary())
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in imported.rows:
        groups.setdefault(str(row["task_id"]), []).append(row)
    items = []
    for key in sorted(groups):
        item = ImportedSample.from_parent(session, name=key, nodeid=f"{path.name}::{key}", path=path,
                                          rows=groups[key], source=str(path))
        item.stash[WAI_KEY] = key
        item.stash[WAI_THRESHOLDS] = Thresholds(trials=len(groups[key]))
        items.append(item)
    return items
