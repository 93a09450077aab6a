"""Behaviour unchanged (issue 31): a small seeded offline run and a plugin run give the same rows, run documents and
report views as the golden files in ``tests/golden/``, byte for byte after the values that change from run to run
(wall time, creation time, machine, git state, absolute paths, the random scoring-run id) are blanked.

The golden files were written ONCE from main's code (be69997) with ``WHILEAI_WRITE_GOLDEN=1``. Do not rewrite
them to make a refactor pass: a difference here is a behaviour change. They change only with the row schema
(``ROW_SCHEMA_VERSION``) or the run-document schema (``RUN_SCHEMA``), whose versions are in the file names, so
a new schema writes new files and the old ones are deleted on purpose.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from whileai_core.defaults import ROW_SCHEMA_VERSION, RUN_SCHEMA

GOLDEN = Path(__file__).parent / "golden"
WRITE = os.environ.get("WHILEAI_WRITE_GOLDEN") == "1"
ROWS_FILE = GOLDEN / f"rows-{ROW_SCHEMA_VERSION}.jsonl"
MEASURE_FILE = GOLDEN / f"measure-rows-{ROW_SCHEMA_VERSION}.json"
RUN_FILE = GOLDEN / f"run-{RUN_SCHEMA.replace('/', '-')}.json"
VIEW_FILE = GOLDEN / f"report-view-{RUN_SCHEMA.replace('/', '-')}.json"
# keys whose values differ between two runs of the same seed, blanked wherever they appear
VOLATILE = {"latency_s": 0.0, "scoring_run_id": "<scoring-run-id>", "created": "<created>", "store": "<store>",
            "commit_info": "<commit-info>", "machine_info": "<machine-info>", "content_hash": "<content-hash>",
            "whileai_version": "<whileai-version>", "location": "<location>", "stale": "<stale>",
            "metadata": "<metadata>"}


def blank(obj: Any) -> Any:
    """``obj`` with every VOLATILE key's value replaced (key order kept)."""
    if isinstance(obj, dict):
        return {k: (VOLATILE[k] if k in VOLATILE else blank(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [blank(v) for v in obj]
    return obj


def check(path: Path, text: str) -> None:
    if WRITE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path.name} is missing: the schema changed? (see this module's docstring)"
    want = path.read_text()
    if text != want:  # name the first line that differs, not the whole file
        for i, (a, b) in enumerate(zip(text.splitlines(), want.splitlines(), strict=False)):
            assert a == b, f"{path.name} line {i + 1} differs:\n got: {a}\nwant: {b}"
        assert text == want, f"{path.name}: {len(text.splitlines())} lines, golden has {len(want.splitlines())}"


