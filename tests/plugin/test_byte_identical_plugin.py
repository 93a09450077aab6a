"""Behaviour unchanged (issue 31), the plugin half: a saved baseline and a red run with agent errors give the run
document and report view in ``tests/golden/`` byte for byte (``golden_check`` says how they were made and when
they may change)."""

from __future__ import annotations

import json

import pytest
from golden_check import RUN_FILE, VIEW_FILE, blank, check

from whileai_core.report.inputs import as_inputs
from whileai_core.report.view import build_view

# --- the plugin: a saved baseline, then a red run with agent errors --------------------------------------------

SUITE = """
import os
import pytest
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    \"\"\"Look up an order by id.\"\"\"
    return {"order_id": order_id, "status": "shipped"}


def agent(message):
    r = get_order(order_id="A100")
    if "three" in message and os.environ.get("BAD"):
        raise RuntimeError("agent broke on three")
    return {"steps": [{"tool": "get_order", "arguments": {"order_id": "A100"}, "result": r}],
            "final_text": "broken" if os.environ.get("BAD") and "two" in message else "fine"}


def judge(row):
    return {"reward": float(row["final_text"] == "fine"), "reason": "exact"}


@pytest.mark.wai_scenarios(["case one", "case two", "case three", "case four"])
@pytest.mark.wai(trials=6)
def test_s(wai_eval, wai_scenario):
    wai_eval.run(agent, judge=judge)
"""


def test_plugin_run_document_is_byte_identical(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    pytester.makepyfile(test_golden=SUITE)
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    monkeypatch.setenv("BAD", "1")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main", "--wai-json=r.json")
    assert res.ret == 1, res.stdout.str()
    doc = json.loads((pytester.path / "r.json").read_text())
    assert doc["gate"]["status"] == "regression"
    assert any(t["status"] == "agent_error" for sc in doc["scenarios"] for t in sc["transcripts"])
    check(RUN_FILE, json.dumps(blank(doc), indent=1) + "\n")
    base = json.loads((pytester.path / ".whileai" / "baselines" / "main.json").read_text())
    view = build_view(as_inputs(doc, baseline=base), repo=None)
    check(VIEW_FILE, json.dumps(blank(view), indent=1, default=str) + "\n")
