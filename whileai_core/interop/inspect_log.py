"""inspect_ai logs (``.eval`` or ``.json``) as trial rows, read with inspect_ai's own log API.

The header (``read_eval_log(header_only=True)``) gives the task, the planned sample ids and epochs and the
scorers; the samples of a ``.eval`` log come from ``read_eval_log_sample_summaries`` (ids, epochs, scores,
metadata, errors, without messages or events, so a 100k-sample log reads without its transcripts), those of a
``.json`` log are streamed one at a time with ijson, inspect's own JSON streaming dependency. A score becomes a reward
through inspect's own ``value_to_float`` (``C``/``I``/``P``/``N``, bools, numbers). A planned sample x epoch
the log does not hold (a cancelled or failed run) is a ``not_run`` trial; a sample with an error is an
``infra_error`` trial (unscored; ``errors="agent_error"`` counts it as the agent's failure instead).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from whileai_core.interop.common import ImportReport, need, score_reward, slice_fields, trial, unscored_why

FORMAT = "inspect_ai"


def is_inspect_json(head: dict[str, Any]) -> bool:
    """A JSON document that is an inspect log (its top-level fields)."""
    return isinstance(head.get("eval"), dict) and "status" in head and "version" in head


def _scorer(header: Any, wanted: str | None) -> tuple[str | None, str | None]:
    """(scorer name, key inside a dict score) to read: ``wanted`` ("name" or "name:key"), else the log's
    first scorer (None when the header names none: the first sample's first score is read then)."""
    if wanted:
        name, _, key = wanted.partition(":")
        return name, key or None
    results = getattr(header, "results", None)
    for score in getattr(results, "scores", None) or []:
        return str(score.name), None
    return None, None


def _json_samples(path: str) -> Iterator[Any]:
    """The samples of a ``.json`` log, streamed one at a time with ijson (inspect's own dependency, which its
    ``header_only`` read streams with): inspect's sample readers parse a whole ``.json`` log into memory
    (``read_eval_log`` of a 100k-sample, 604 MB log: 98 s, 3.4 GB peak; this reader with the run document:
    10 s, 410 MB; benchmarks/bench_import.py). Each is the fields a summary has (id, epoch, scores' values,
    metadata, error message)."""
    import ijson

    with open(path, "rb") as fh:
        for raw in ijson.items(fh, "samples.item", use_float=True):
            error = raw.get("error")
            yield SimpleNamespace(
                id=raw.get("id"), epoch=raw.get("epoch", 1), metadata=raw.get("metadata"),
                error=(error.get("message") if isinstance(error, dict) else error) or None,
                scores={k: SimpleNamespace(value=(v or {}).get("value")) for k, v in (raw.get("scores") or {}).items()})


def _summaries(log_api: Any, path: str) -> Iterator[Any]:
    """Sample summaries: inspect's ``read_eval_log_sample_summaries`` for a ``.eval`` log (stored in it, no
    transcripts read), the streamed samples of a ``.json`` log."""
    if path.endswith(".json"):
        return _json_samples(path)
    return iter(log_api.read_eval_log_sample_summaries(path))


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
    task = str(header.eval.task)
    name, key = _scorer(header, scorer)
    report = ImportReport(str(path), FORMAT, scorer=name)
    if header.status != "success":
        report.notes.append(f"the log's status is {header.status!r}: planned samples it lacks are not_run trials")
    rows, seen = [], set()
    for s in _summaries(log_api, str(path)):
        if name is None and s.scores:
            name = report.scorer = next(iter(s.scores))
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
