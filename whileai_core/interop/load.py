"""Load another framework's results: detect the format of a file (or of each file in a folder), read it with
its reader, and join the trials of every file into one ``Imported`` (rows + load report).

``load_results(path)`` is what ``whileai gate`` and ``pytest --wai-import`` call; ``load_run(path)`` gives the
gate's run document for a whileai run document or any of these formats.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument
from whileai_core.interop.common import FORMATS, Imported, ImportReport, dedupe

if TYPE_CHECKING:
    from whileai_core.gate.document import RunDocument

STOP_KEYS = ("samples", "testCases")  # top-level keys whose values are the (large) per-sample records


def _json_head(path: Path) -> Any:
    """The top-level fields of a JSON file, enough to tell the formats apart: the whole document when it is
    small, else its top-level keys streamed with ijson up to the first per-sample array (``STOP_KEYS``), each
    value a placeholder of its kind ({} for an object, [] for an array) or the scalar, so a 600 MB log is never
    parsed to be detected."""
    try:
        if path.stat().st_size <= D.INTEROP_DETECT_FULL_BYTES:
            with path.open(encoding="utf-8") as fh:
                return json.load(fh)
        import ijson

        head: dict[str, Any] = {}
        key = None
        with path.open("rb") as fh:
            for prefix, event, value in ijson.parse(fh):
                if prefix == "" and event == "map_key":
                    key = value
                elif prefix == key and key is not None and event in ("start_map", "start_array"):
                    head[key] = {} if event == "start_map" else []
                    if key in STOP_KEYS:
                        break
                elif prefix == key and key is not None and event in ("string", "number", "boolean", "null"):
                    head[key] = value
        return head
    except (OSError, UnicodeDecodeError, ValueError):  # json.JSONDecodeError and ijson's errors are ValueErrors
        return None


def detect(path: str | os.PathLike[str]) -> str | None:
    """The format of one result file (``"inspect_ai"``, ``"lm_eval"``, ``"promptfoo"``, ``"deepeval"``,
    ``"whileai"`` for a run document), or None when it is none of them."""
    p = Path(path)
    if p.suffix == ".eval":
        return "inspect_ai"
    if p.suffix == ".jsonl" and p.name.startswith("samples_"):
        return "lm_eval"
    if p.suffix != ".json":
        return None
    head = _json_head(p)
    if not isinstance(head, dict):
        return None
    from whileai_core.interop import deepeval_run, inspect_log, lm_eval_log, promptfoo_out

    checks: list[tuple[str, Callable[[dict[str, Any]], bool]]] = [
        ("whileai", lambda h: str(h.get("schema", "")).startswith("whileai.run/")),
        ("inspect_ai", inspect_log.is_inspect_json), ("promptfoo", promptfoo_out.is_promptfoo_json),
        ("deepeval", deepeval_run.is_test_run), ("lm_eval", lm_eval_log.is_results_json)]
    return next((fmt for fmt, check in checks if check(head)), None)


def _reader(fmt: str) -> Callable[..., tuple[list[dict[str, Any]], ImportReport]]:
    from whileai_core.interop import deepeval_run, inspect_log, lm_eval_log, promptfoo_out

    readers: dict[str, Any] = {"inspect_ai": inspect_log.read, "lm_eval": lm_eval_log.read,
                               "promptfoo": promptfoo_out.read, "deepeval": deepeval_run.read}
    return readers[fmt]


def _files(path: Path, fmt: str | None) -> list[tuple[Path, str]]:
    """The result files under ``path`` with their formats, oldest name first (inspect and lm-eval names start
    or end with a timestamp, so a later run of a task replaces an earlier one's trials, named in the report)."""
    candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    out = []
    for p in candidates:
        found = fmt if fmt is not None and (p.suffix in (".eval", ".json", ".jsonl")) else detect(p)
        if fmt == "lm_eval" and p.suffix == ".json":
            found = None  # a results_*.json is read through its samples_*.jsonl files
        if found is not None and found != "whileai" and not (found == "lm_eval" and p.suffix == ".json"):
            out.append((p, found))
    return out


def load_results(path: str | os.PathLike[str], *, format: str | None = None, scorer: str | None = None,
                 errors: str = "infra_error") -> Imported:
    """Every trial in a result file or a folder of them, with one load report.

    Args:
        path: a result file (inspect ``.eval``/``.json`` log, lm-eval ``samples_*.jsonl`` or its
            ``results_*.json``, promptfoo's ``-o results.json``, a deepeval test run ``.json``) or a folder.
        format: one of ``FORMATS`` to skip detection.
        scorer: which score to read when a sample has several (inspect: a scorer name, ``"name:key"`` for a dict
            score; lm-eval: a metric such as ``"acc"``; deepeval: a metric name; promptfoo: an assertion's metric).
        errors: the ledger state of a sample the framework marked errored: ``"infra_error"`` (unscored,
            default) or ``"agent_error"`` (the agent's failure, reward 0).
    """
    if format is not None and format not in FORMATS:
        raise InvalidArgument(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    if errors not in ("infra_error", "agent_error"):
        raise InvalidArgument(f"errors must be 'infra_error' or 'agent_error'; got {errors!r}")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such result file or folder: {p}")
    if p.is_file() and p.suffix == ".json" and format in (None, "lm_eval") and detect(p) == "lm_eval":
        from whileai_core.interop.lm_eval_log import sample_files

        found = [(f, "lm_eval") for f in sample_files(p)]
    else:
        found = _files(p, format)
    if not found:
        raise InvalidArgument(f"{p}: no inspect_ai, lm-eval, promptfoo or deepeval result file found there (an "
                              "inspect .eval/.json log, lm-eval samples_*.jsonl, promptfoo -o results.json, a "
                              "deepeval test run .json)")
    kinds = sorted({fmt for _, fmt in found})
    report = ImportReport(str(p), "+".join(kinds))
    rows: list[dict[str, Any]] = []
    for f, fmt in found:
        got, rep = _reader(fmt)(f, scorer=scorer, errors=errors)
        rows += got
        report.add(rep)
        report.scorer = report.scorer or rep.scorer
    rows = dedupe(rows, report)
    report.n_rows = len(rows)
    return Imported(rows, report)


def load_run(path: str | os.PathLike[str], **kwargs: Any) -> tuple[RunDocument, ImportReport | None]:
    """The gate's run document for ``path``: a whileai run document as it is (report None), or any framework's
    results imported (``load_results``) with their load report."""
    p = Path(path)
    if p.is_file() and p.suffix == ".json" and detect(p) == "whileai":
        from whileai_core.gate.document import load_document

        return load_document(p), None
    policy = kwargs.pop("policy", None)
    imported = load_results(p, **kwargs)
    doc = imported.document(**({"policy": policy} if policy else {}))
    return doc, imported.report
