"""What every reader shares: the trial row it makes, the load report that names every sample it skipped or
found errored, and the result of one load (rows + report).

A trial row is keyed so the same sample pairs across two runs: ``task_id`` is ``<task>/<sample id>`` (the gate's
scenario key) and ``rollout_index`` the 0-based epoch (the trial). ``reward`` is the framework's score as a
number in [0, 1] (``None`` when the trial is unscored), ``trial_state`` the gate's ledger state (``None`` =
scored, else one of ``whileai_core.gate.ledger.REASONS``) and ``scenario`` the sample's metadata, the fields
``compare(by=)`` and the slices read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from whileai_core import defaults as D
from whileai_core.errors import MissingExtra

if TYPE_CHECKING:
    from whileai_core.gate.document import RunDocument

FORMATS = ("inspect_ai", "lm_eval", "promptfoo", "deepeval")
EXTRA = {"inspect_ai": "inspect-ai", "lm_eval": "lm-eval", "deepeval": "deepeval", "promptfoo": None}


def need(module: str, fmt: str) -> Any:
    """Import a framework's module, or a ``MissingExtra`` naming the pip line."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        package = EXTRA.get(fmt) or module
        raise MissingExtra(f"reading {fmt} results needs {package} ({exc}); pip install 'pytest-whileai[interop]' or "
                           f"pip install {package}") from None


@dataclass
class Skipped:
    """One sample the reader left out or could not score: where it was and why."""

    sample: str
    why: str

    def __str__(self) -> str:
        return f"{self.sample}: {self.why}"


@dataclass
class ImportReport:
    """What a reader read: samples seen, trials made, and every sample skipped (no row) or unscored (a row with
    a ledger reason), each by name. Nothing is dropped silently."""

    source: str
    format: str
    n_samples: int = 0  # sample records (sample x epoch) the framework wrote
    n_rows: int = 0  # trial rows made (scored and unscored)
    skipped: list[Skipped] = field(default_factory=list)  # no row: not a sample, or a duplicate
    unscored: list[Skipped] = field(default_factory=list)  # a row with reward None (errored, no score, ...)
    notes: list[str] = field(default_factory=list)
    scorer: str | None = None

    def skip(self, sample: str, why: str) -> None:
        self.skipped.append(Skipped(sample, why))

    def unscore(self, sample: str, why: str) -> None:
        self.unscored.append(Skipped(sample, why))

    def add(self, other: ImportReport) -> None:
        self.n_samples += other.n_samples
        self.n_rows += other.n_rows
        self.skipped += other.skipped
        self.unscored += other.unscored
        self.notes += other.notes

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "format": self.format, "scorer": self.scorer, "n_samples": self.n_samples,
                "n_rows": self.n_rows, "skipped": [vars(s) for s in self.skipped],
                "unscored": [vars(s) for s in self.unscored], "notes": list(self.notes)}

    def __str__(self) -> str:
        return self.summary()

    def summary(self, limit: int = D.TRACE_REPORT_SKIPPED) -> str:
        """The report as text, naming at most ``limit`` samples of each kind."""
        scorer = f", scorer {self.scorer}" if self.scorer else ""
        lines = [(f"import {self.source} ({self.format}{scorer}): {self.n_samples} samples -> {self.n_rows} trials, "
                 f"{len(self.unscored)} unscored, {len(self.skipped)} skipped")]
        for word, items in (("unscored", self.unscored), ("skipped", self.skipped)):
            lines += [f"  {word} {s}" for s in items[:limit]]
            if len(items) > limit:
                lines.append(f"  ... and {len(items) - limit} more {word} (report.{word})")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


@dataclass
class Imported:
    """One load: the trial rows and the report. ``document()`` is the run document the gate reads."""

    rows: list[dict[str, Any]]
    report: ImportReport

    def document(self, **kwargs: Any) -> RunDocument:
        from whileai_core.interop.document import to_document

        return to_document(self, **kwargs)

    def gate_rows(self, policy: str = D.GATE_UNSCORED_POLICY) -> list[dict[str, Any]]:
        """The rows with rewards as the gate counts them (``gate.ledger.gate_rewards``): an unscored trial is
        0.0 under ``fail`` (the default) and stays None (left out) under ``drop``/``incomplete``; what
        ``compare(before, after, by=...)`` should read to agree with the gate."""
        from whileai_core.gate.ledger import check_policy, gate_rewards

        check_policy(policy)
        return [dict(r, reward=gate_rewards([r.get("reward")], [r.get("trial_state")], policy)[0]) for r in self.rows]


def slice_fields(metadata: Any) -> dict[str, Any]:
    """A sample's metadata as slice fields: its scalar values (str, number, bool), nested ones left out."""
    if not isinstance(metadata, Mapping):
        return {}
    return {str(k): v for k, v in metadata.items() if isinstance(v, (str, int, float, bool)) and v is not None}


def score_reward(value: Any) -> tuple[float | None, str | None]:
    """(reward, ledger state) of a numeric score: a finite number in [0, 1] is scored; NaN is ``nan_verdict``;
    None is ``none_verdict``; anything else (out of range, not a number) is ``judge_error`` (named by the caller)."""
    if value is None:
        return None, "none_verdict"
    if isinstance(value, bool):
        return float(value), None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None, "judge_error"
    if math.isnan(x):
        return None, "nan_verdict"
    if not 0.0 <= x <= 1.0:
        return None, "judge_error"
    return x, None


def trial(fmt: str, task: str, sample_id: Any, epoch: int, reward: float | None, state: str | None, *,
          scorer: str | None, slices: Mapping[str, Any] | None = None, error: str | None = None,
          **extra: Any) -> dict[str, Any]:
    """One trial row (``epoch`` is 0-based: the row's ``rollout_index``)."""
    sid = str(sample_id)
    return {"task_id": f"{task}/{sid}", "task": task, "sample_id": sid, "rollout_index": int(epoch),
            "reward": reward, "trial_state": state, "error": error, "scorer": scorer, "source_format": fmt,
            "scenario": {"task": task, **dict(slices or {})}, **extra}


def unscored_why(state: str, detail: Any = None) -> str:
    words = {"infra_error": "the framework recorded an error", "none_verdict": "no score",
             "nan_verdict": "the score is NaN", "judge_error": "the scorer failed or its score is not a number in [0, 1]",
             "not_run": "the sample was not run", "agent_error": "the agent failed"}
    text = words.get(state, state)
    return f"{text} ({state})" + (f": {str(detail)[:D.PLUGIN_ERROR_LINE_CHARS]}" if detail not in (None, "") else "")


def dedupe(rows: Iterable[dict[str, Any]], report: ImportReport) -> list[dict[str, Any]]:
    """One row per (task_id, rollout_index): a later file's trial replaces an earlier one's (a log folder that
    holds two runs of a task), and each replaced trial is named in the report."""
    kept: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        key = (row["task_id"], row["rollout_index"])
        old = kept.get(key)
        if old is not None:
            report.skip(f"{key[0]} epoch {key[1] + 1}", f"duplicate: {old.get('source') or 'an earlier file'} "
                        f"replaced by {row.get('source') or 'a later file'}")
        kept[key] = row
    return list(kept.values())
