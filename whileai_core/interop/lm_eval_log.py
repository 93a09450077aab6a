"""lm-evaluation-harness ``--log_samples`` output as trial rows.

``lm_eval --log_samples --output_path OUT`` writes, per model, ``results_<datetime>.json`` (the aggregate, with
``group_subtasks`` and ``n-samples``) and one ``samples_<task>_<datetime>.jsonl`` per task: one record per doc
(per filter), with ``doc_id``, ``doc``, ``filter``, ``metrics`` (the metric names) and each metric's value.
File names are parsed with lm-eval's own helpers (``lm_eval.utils.get_file_task_name``/``get_file_datetime``).

A sample is ``<task>/<doc_id>`` with one trial (lm-eval scores a doc once; ``repeats`` are folded into its
metric). The reward is the metric (``scorer=``; default the record's first metric, e.g. ``acc`` or
``exact_match``), read from the first filter unless ``scorer="metric,filter"`` names one, as lm-eval's results
name them. Slices: ``task``, its ``group`` (from ``group_subtasks``) and the doc's short scalar fields
(at most ``INTEROP_SLICE_CHARS`` characters, e.g. ``subject``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.interop.common import ImportReport, need, score_reward, trial, unscored_why

FORMAT = "lm_eval"


def is_results_json(head: dict[str, Any]) -> bool:
    return isinstance(head.get("results"), dict) and "configs" in head and "n-samples" in head


def sample_files(results_json: str | os.PathLike[str]) -> list[Path]:
    """The ``samples_*.jsonl`` files written with one ``results_<datetime>.json`` (same folder, same datetime)."""
    utils = need("lm_eval.utils", FORMAT)
    p = Path(results_json)
    stamp = utils.get_file_datetime(p.name).replace(".json", "")
    return sorted(f for f in p.parent.glob("samples_*.jsonl") if utils.get_file_datetime(f.name) == stamp)


def _aggregate(path: Path) -> dict[str, Any]:
    """The ``results_<datetime>.json`` beside a samples file (same datetime), or {}."""
    utils = need("lm_eval.utils", FORMAT)
    stamp = utils.get_file_datetime(path.name)
    for f in path.parent.glob(f"results_{stamp}.json"):
        try:
            return json.loads(f.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}
    return {}


def _doc_slices(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict):
        return {}
    return {f"doc.{k}": v for k, v in doc.items() if isinstance(v, (str, int, bool)) and not isinstance(v, float)
            and len(str(v)) <= D.INTEROP_SLICE_CHARS}


def read(path: str | os.PathLike[str], *, scorer: str | None = None, errors: str = "infra_error"
         ) -> tuple[list[dict[str, Any]], ImportReport]:
    """The trial rows of one ``samples_<task>_<datetime>.jsonl`` and its load report."""
    utils = need("lm_eval.utils", FORMAT)
    p = Path(path)
    task = utils.get_file_task_name(p.name)
    agg = _aggregate(p)
    group = next((g for g, subs in (agg.get("group_subtasks") or {}).items() if task in (subs or [])), None)
    metric, _, want_filter = (scorer or "").partition(",")
    report = ImportReport(str(p), FORMAT)
    rows: list[dict[str, Any]] = []
    use_filter: str | None = want_filter or None
    for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            report.skip(f"{p.name} line {lineno}", f"not JSON ({exc.msg})")
            continue
        if not isinstance(rec, dict) or "doc_id" not in rec:
            report.skip(f"{p.name} line {lineno}", "no doc_id: not an lm-eval sample record")
            continue
        use_filter = use_filter or rec.get("filter")
        if rec.get("filter") != use_filter:
            continue  # the same doc under another filter: one filter is read (scorer="metric,filter")
        report.n_samples += 1
        name = metric or next(iter(rec.get("metrics") or []), None)
        report.scorer = f"{name},{use_filter}"
        reward, state = score_reward(rec.get(name)) if name else (None, "none_verdict")
        label = f"{task}/{rec['doc_id']}"
        if state is not None:
            report.unscore(label, unscored_why(state, f"{name}={rec.get(name)!r}"))
        slices = {**({"group": group} if group else {}), **_doc_slices(rec.get("doc"))}
        rows.append(trial(FORMAT, task, rec["doc_id"], 0, reward, state, scorer=report.scorer, slices=slices,
                          source=str(p), filter=use_filter))
    expected = ((agg.get("n-samples") or {}).get(task) or {}).get("effective")
    if expected is not None and expected != len(rows):
        report.notes.append(f"{task}: results json says {expected} samples were evaluated, {p.name} holds "
                            f"{len(rows)} (filter {use_filter})")
    report.n_rows = len(rows)
    return rows, report
