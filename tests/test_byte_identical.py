"""Behaviour unchanged (issue 31), the library half: a seeded offline simulate -> grade -> measure run gives the
rows, measurements and report view in ``tests/golden/`` byte for byte (``golden_check`` says how they were made and
when they may change; the plugin half is ``tests/plugin/test_byte_identical_plugin.py``)."""

from __future__ import annotations

import json

from golden_check import MEASURE_FILE, ROWS_FILE, blank, check

import whileai as wai
from whileai_core.report.inputs import as_inputs
from whileai_core.report.view import build_view

# --- the library: simulate -> grade -> measure -------------------------------------------------------------------

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


@wai.tool
def cancel_order(order_id: str, reason: str = "") -> dict:
    """Cancel an order."""
    return {"order_id": order_id, "cancelled": True}


def _agent(message: str) -> dict:
    """Calls a tool (answered by the world: faults and world states land in the steps), says something, and
    fails on some messages after its tool call (an agent_error row that keeps its steps)."""
    result = get_order(order_id="O48537")
    steps = [{"tool": "get_order", "arguments": {"order_id": "O48537"}, "result": result, "text": "Looking it up."}]
    if len(message) % 7 == 0:
        raise ValueError("odd message length")
    if "cancel" in message.lower():
        steps.append({"tool": "cancel_order", "arguments": {"order_id": "O48537", "reason": "asked"},
                      "result": cancel_order(order_id="O48537", reason="asked")})
    return {"steps": steps, "final_text": f"Done ({len(message)} chars)."}


def _judge(row: dict) -> dict:
    """Deterministic rewards from the row's text; raises on some rows (judge_status error, reward None)."""
    h = sum(map(ord, row["prompt"] + row["row_id"]))
    if h % 11 == 0:
        raise KeyError("judge fell over")
    return {"reward": float(h % 3 != 0), "reason": f"h={h % 3}",
            "markers": {"looked_up": 1.0 if row["steps"] else None}}


def _after_judge(row: dict) -> dict:
    return {"reward": float(sum(map(ord, row["row_id"])) % 4 != 0)}


def test_seeded_rows_are_byte_identical():
    data = wai.simulate(_agent, tools=[get_order, cancel_order], simulator=False, budget=24, repeats=3, seed=7,
                        concurrency=1, progress=False)
    scored = data.grade(judge=_judge)
    rows = list(scored.rows)
    assert {r["status"] for r in rows} == {"ok", "agent_error"}  # the run covers errors ...
    assert {r.get("judge_status") for r in rows} >= {"ok", "error"}  # ... judge failures ...
    assert any(len(r["steps"]) > 1 for r in rows) and any(r["faults"] for r in rows)  # ... tool steps and faults
    check(ROWS_FILE, "".join(json.dumps(blank(r)) + "\n" for r in rows))
    report = wai.pass_at(scored, k=3, min_k=3)
    delta = wai.delta_report(scored, data.grade(judge=_after_judge))
    view = build_view(as_inputs(scored), repo=None)
    measured = {"pass_at": report.to_dict(), "pass_at_text": str(report), "delta_text": str(delta),
                "report_view": view}
    check(MEASURE_FILE, json.dumps(blank(measured), indent=1, default=str) + "\n")


