"""Issue 27 item 1, the gate's side: a scheduled fault that misses the agent's tool calls is warned about."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


def test_the_gate_line_warns_when_faults_miss(pytester: pytest.Pytester):
    pytester.makepyfile(test_desk="""
import pytest
from tests.shop import get_order

plain = get_order.fn

def agent(message):
    r = plain("A1001")
    return {"steps": [{"tool": "get_order", "arguments": {"order_id": "A1001"}, "result": r}], "final_text": "ok"}

def routed(message):
    r = get_order("A1001")
    return str(r.get("status") if isinstance(r, dict) else r)

@pytest.mark.wai_scenarios(tools=[get_order], system_prompt="Help customers with orders.", budget=12)
@pytest.mark.wai(trials=2)
def test_desk(wai_eval, wai_scenario):
    wai_eval.run(agent, judge=lambda row: 1.0)

@pytest.mark.wai_scenarios(tools=[get_order], system_prompt="Help customers with orders.", budget=12)
@pytest.mark.wai(trials=2)
def test_routed(wai_eval, wai_scenario):
    wai_eval.run(routed, judge=lambda row: 1.0)
""")
    root = str(Path(__file__).resolve().parents[2])
    sys.path.insert(0, root)
    try:
        res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-k", "test_desk", "--wai-json=run.json")
        res.stdout.fnmatch_lines(["*WARNING: fault not delivered in * of * rollouts: route your tools through*"])
        res2 = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-k", "test_routed")
        assert "fault not delivered" not in res2.stdout.str()
    finally:
        sys.path.remove(root)
