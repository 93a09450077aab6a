"""deepeval test runs as trial rows.

``deepeval.evaluate(...)`` (and ``deepeval test run``) write the run as ``test_run_<datetime>.json`` into
``DEEPEVAL_RESULTS_FOLDER`` (and ``.deepeval/.latest_run_full.json``): ``testCases`` (and
``conversationalTestCases``), each with its ``name``, ``metadata`` (the test case's ``additional_metadata``) and
``metricsData``: per metric its ``name``, ``score``, ``threshold``, ``success`` and ``error``. When deepeval is
importable the file is validated by its own ``TestRun`` model; without it (deepeval pins ``click<8.4``, which
huggingface_hub's ``click>=8.4.2`` excludes, so it often lives in its own environment) the same documented
fields are read as JSON.

A sample is ``deepeval/<test case name>`` (give each test case a ``name``: deepeval's default name is its
position); a name seen twice is a second trial. The reward is the metric's verdict (``success``: 1 or 0, the
score at the metric's threshold) of the first metric, or of ``scorer="NAME"``; ``scorer="NAME:score"`` reads
its raw score. A metric that raised (``error``) is a ``judge_error`` trial (unscored): deepeval's metrics are
judges. Slices: the test case's scalar metadata.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from whileai_core.interop.common import ImportReport, score_reward, slice_fields, trial, unscored_why

FORMAT = "deepeval"
TASK = "deepeval"


def is_test_run(head: dict[str, Any]) -> bool:
    return isinstance(head.get("testCases"), list) and "evalId" not in head


def _validated(doc: dict[str, Any], report: ImportReport) -> dict[str, Any]:
    """The test run through deepeval's own ``TestRun`` model when deepeval is importable (its field names back)."""
    try:
        from deepeval.test_run.test_run import TestRun
    except ImportError:
        report.notes.append("deepeval is not importable here: its test-run JSON is read by its documented fields")
        return doc
    return TestRun.model_validate(doc).model_dump(by_alias=True, exclude_none=True)


def _metric(case: dict[str, Any], scorer: str | None) -> tuple[dict[str, Any] | None, str]:
    name, _, part = (scorer or "").partition(":")
    metrics = [m for m in case.get("metricsData") or [] if isinstance(m, dict)]
    if name:
        return next((m for m in metrics if m.get("name") == name), None), part or "success"
    return (metrics[0] if metrics else None), "success"


def read(path: str | os.PathLike[str], *, scorer: str | None = None, errors: str = "infra_error"
         ) -> tuple[list[dict[str, Any]], ImportReport]:
    """The trial rows of one deepeval test-run file and its load report."""
    p = Path(path)
    report = ImportReport(str(p), FORMAT)
    doc = _validated(json.loads(p.read_text(encoding="utf-8")), report)
    cases = list(doc.get("testCases") or []) + list(doc.get("conversationalTestCases") or [])
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            report.skip(f"testCases[{i}]", "not a test case")
            continue
        report.n_samples += 1
        sid = str(case.get("name") or f"test_case_{case.get('order', i)}")
        epoch = seen.get(sid, 0)
        seen[sid] = epoch + 1
        metric, part = _metric(case, scorer)
        report.scorer = report.scorer or (None if metric is None else f"{metric.get('name')}:{part}")
        reward: float | None
        state: str | None
        detail: Any
        if metric is None:
            reward, state, detail = None, "none_verdict", f"no metric {scorer or ''}".strip()
        elif metric.get("error"):
            reward, state, detail = None, "judge_error", metric["error"]
        else:
            value = metric.get("success") if part == "success" else metric.get("score")
            reward, state = score_reward(float(bool(value)) if part == "success" else value)
            detail = None if state is None else f"{part}={value!r}"
        if state is not None:
            report.unscore(f"{TASK}/{sid} trial {epoch + 1}", unscored_why(state, detail))
        rows.append(trial(FORMAT, TASK, sid, epoch, reward, state, scorer=report.scorer,
                          slices=slice_fields(case.get("metadata")), error=(metric or {}).get("error"),
                          source=str(p)))
    report.n_rows = len(rows)
    return rows, report
