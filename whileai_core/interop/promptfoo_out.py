"""promptfoo's JSON output (``promptfoo eval -o results.json``) as trial rows.

promptfoo has no Python API, so its documented output is read as JSON: ``results.results`` holds one record per
test case x prompt x provider (x repeat), each with ``success``, ``score``, ``namedScores``, ``gradingResult``
(its assertions' ``componentResults``), ``error`` and ``failureReason`` (0 none, 1 an assertion failed, 2 an
error), ``vars`` and ``testCase``.

A sample is the test case: its ``description``, else its vars (``n=1,topic=add``, hashed when long), so
reordering the tests keeps every key. The task is the prompt's label, with the provider in brackets when the
file holds several providers (one provider: the key leaves it out, so a run of the agent's next version
pairs with this one). A repeated test (``--repeat N``) is one trial per repeat. The reward is promptfoo's
verdict (``success``: 1 or 0); ``scorer="score"`` reads the graded score, ``scorer=NAME`` a named metric.
Slices: the vars, the test's metadata, ``provider`` and ``prompt``. An errored record is unscored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.interop.common import ImportReport, score_reward, slice_fields, trial, unscored_why
from whileai_core.rows import stable_id

FORMAT = "promptfoo"


def is_promptfoo_json(head: dict[str, Any]) -> bool:
    return "evalId" in head and isinstance(head.get("results"), dict)


def _test_key(rec: dict[str, Any]) -> str:
    case = rec.get("testCase") or {}
    if case.get("description"):
        return str(case["description"])
    variables = rec.get("vars") or case.get("vars") or {}
    text = ",".join(f"{k}={v}" for k, v in sorted(variables.items()))
    if len(text) > D.INTEROP_SLICE_CHARS:
        text = f"{text[:D.INTEROP_SLICE_CHARS]}~{stable_id(variables)}"
    return text or f"test-{rec.get('testIdx')}"


def _provider(rec: dict[str, Any]) -> str:
    p = rec.get("provider") or {}
    return str(p.get("label") or p.get("id") or "provider") if isinstance(p, dict) else str(p)


def _errored(rec: dict[str, Any]) -> bool:
    """promptfoo's ``failureReason`` 2 (an error; 1 is a failed assertion, whose text is in ``error`` too); an
    output without ``failureReason`` errored when it has an ``error`` and no grading."""
    if "failureReason" in rec:
        return rec.get("failureReason") == 2
    return bool(rec.get("error")) and not rec.get("gradingResult")


def _reward(rec: dict[str, Any], scorer: str | None) -> tuple[float | None, str | None, Any]:
    if _errored(rec):
        return None, "infra_error", rec.get("error") or "failureReason 2 (error)"
    if scorer is None:
        return (1.0 if rec.get("success") else 0.0), None, None
    value = rec.get("score") if scorer == "score" else (rec.get("namedScores") or {}).get(scorer)
    reward, state = score_reward(value)
    return reward, state, None if state is None else f"{scorer}={value!r}"


def read(path: str | os.PathLike[str], *, scorer: str | None = None, errors: str = "infra_error"
         ) -> tuple[list[dict[str, Any]], ImportReport]:
    """The trial rows of one promptfoo ``-o results.json`` and its load report."""
    p = Path(path)
    doc = json.loads(p.read_text(encoding="utf-8"))
    records = doc["results"]["results"]
    report = ImportReport(str(p), FORMAT, scorer=scorer or "success")
    providers = {_provider(r) for r in records if isinstance(r, dict)}
    rows: list[dict[str, Any]] = []
    repeats: dict[tuple[str, str], int] = {}
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            report.skip(f"results[{i}]", "not a result record")
            continue
        report.n_samples += 1
        prompt = str((rec.get("prompt") or {}).get("label") or f"prompt-{rec.get('promptIdx')}")
        task = prompt if len(providers) == 1 else f"{prompt}[{_provider(rec)}]"
        sid = _test_key(rec)
        epoch = repeats.get((task, sid), 0)
        repeats[(task, sid)] = epoch + 1
        reward, state, detail = _reward(rec, scorer)
        if state == "infra_error":
            state = errors
            reward = 0.0 if errors == "agent_error" else None
        if state is not None and state != "agent_error":
            report.unscore(f"{task}/{sid} repeat {epoch + 1}", unscored_why(state, detail))
        slices = {**slice_fields(rec.get("vars")), **slice_fields((rec.get("testCase") or {}).get("metadata")),
                  "provider": _provider(rec), "prompt": prompt}
        rows.append(trial(FORMAT, task, sid, epoch, reward, state, scorer=report.scorer, slices=slices,
                          error=(rec.get("error") or None) if _errored(rec) else None, source=str(p)))
    report.n_rows = len(rows)
    return rows, report
