"""inspect_ai logs (``.eval`` or ``.json``) as trial rows, read with inspect_ai's own log API.

The header (``read_eval_log(header_only=True)``) gives the task, the planned sample ids and epochs and the
scorers; the samples come from ``read_eval_log_sample_summaries`` (ids, epochs, scores, metadata, errors,
without messages or events, so a 100k-sample log reads without its transcripts). A score becomes a reward
through inspect's own ``value_to_float`` (``C``/``I``/``P``/``N``, bools, numbers). A planned sample x epoch
the log does not hold (a cancelled or failed run) is a ``not_run`` trial; a sample with an error is an
``infra_error`` trial (unscored; ``errors="agent_error"`` counts it as the agent's failure instead).
"""

from __future__ import annotations

import os
from typing import Any

from whileai_core.interop.common import ImportReport, need, score_reward, slice_fields, trial, unscored_why

FORMAT = "inspect_ai"


def is_inspect_json(head: dict[str, Any]) -> bool:
    """A JSON document that is an inspect log (its top-level fields)."""
    return isinstance(head.get("eval"), dict) and "status" in head and "version" in head


def _scorer(header: Any, summaries: list[Any], wanted: str | None) -> tuple[str | None, str | None]:
    """(scorer name, key inside a dict score) to read: ``wanted`` ("name" or "name:key"), else the log's
    first scorer."""
    if wanted:
        name, _, key = wanted.partition(":")
        return name, key or None
    results = getattr(header, "results", None)
    for score in getattr(results, "scores", None) or []:
        return str(score.name), None
    for s in summaries:
        if s.scores:
            return next(iter(s.scores)), None
    return None, None


def _reward(score: Any, key: str | None, to_float: Any) -> tuple[float | None, str | None, str | None]:
    """(reward, ledger state, detail) of one inspect ``Score``."""
    if score is None:
        return None, "none_verdict", None
    value = score.value
    if isinstance(value, dict):
        if key is None:
            return None, "judge_error", f"a dict score {sorted(value)}: name its key, scorer='NAME:KEY'"
        value = value.get(key)
    try:
        number = None if value is None else to_float(value)
    except (TypeError, ValueError) as exc:
        return None, "judge_error", str(exc)
    reward, state = score_reward(number)
    return reward, state, None if state is None else repr(score.value)


def read(path: str | os.PathLike[str], *, scorer: str | None = None, errors: str = "infra_error"
         ) -> tuple[list[dict[str, Any]], ImportReport]:
    """The trial rows of one inspect log and its load report."""
    log_api = need("inspect_ai.log", FORMAT)
    to_float = need("inspect_ai.scorer", FORMAT).value_to_float()
    header = log_api.read_eval_log(str(path), header_only=True)
    summaries = list(log_api.read_eval_log_sample_summaries(str(path)))
    task = str(header.eval.task)
    name, key = _scorer(header, summaries, scorer)
    report = ImportReport(str(path), FORMAT, scorer=name)
    if header.status != "success":
        report.notes.append(f"the log's status is {header.status!r}: planned samples it lacks are not_run trials")
    rows, seen = [], set()
    for s in summaries:
        report.n_samples += 1
        seen.add((str(s.id), int(s.epoch)))
        label = f"{task}/{s.id} epoch {s.epoch}"
        reward: float | None
        state: str | None
        detail: str | None
        if s.error:
            reward, state, detail = None, errors, s.error
        elif name is None or not s.scores or name not in s.scores:
            reward, state, detail = None, "none_verdict", f"no {name or 'scorer'} score"
        else:
            reward, state, detail = _reward(s.scores[name], key, to_float)
        if state is not None and state != "agent_error":
            report.unscore(label, unscored_why(state, detail))
        rows.append(trial(FORMAT, task, s.id, int(s.epoch) - 1, 0.0 if state == "agent_error" else reward, state,
                          scorer=name, slices=slice_fields(s.metadata), error=s.error or None, source=str(path)))
    rows += _not_run(header, seen, task, name, report, str(path))
    report.n_rows = len(rows)
    return rows, report


def _not_run(header: Any, seen: set[tuple[str, int]], task: str, scorer: str | None, report: ImportReport,
             source: str) -> list[dict[str, Any]]:
    """A trial row for each planned sample x epoch the log does not hold (``not_run``)."""
    ids = getattr(header.eval.dataset, "sample_ids", None) or []
    epochs = int(getattr(header.eval.config, "epochs", None) or 1)
    out = []
    for sid in ids:
        for epoch in range(1, epochs + 1):
            if (str(sid), epoch) not in seen:
                report.unscore(f"{task}/{sid} epoch {epoch}", unscored_why("not_run", "planned, not in the log"))
                out.append(trial(FORMAT, task, sid, epoch - 1, None, "not_run", scorer=scorer, source=source))
    return out
