"""Issue 27 item 1: a ``@wai.tool`` the agent's own code calls directly reaches the rollout's world.

The agents here are hand-written, as README's "plugin in 10 lines" has them: they call ``get_order(...)``
themselves and return only their reply (no ``steps``); the rows must show the fault and the agent's reaction.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

import whileai as wai
from tests.shop import TOOLS, get_order
from whileai_core.adapters.routing import missed, undelivered
from whileai_core.simulate.rollout import rollout
from whileai_core.simulate.situations import Scenario
from whileai_core.simulate.world import FAULT_MODES, MALFORMED_PAYLOAD

_REACTIONS = {"error": "sorry, the order service failed", "timeout": "the lookup timed out",
              "not_found": "no such order", "denied": "I may not look that up",
              "malformed": "the answer was garbled"}


def _react(result) -> str:
    """The agent's reaction to what get_order gave it."""
    if result == MALFORMED_PAYLOAD:
        return _REACTIONS["malformed"]
    status = result.get("status") if isinstance(result, dict) else "ok"
    return _REACTIONS.get(status, f"order state: {result.get('state')}")


def sync_agent(message):
    return _react(get_order("A1001"))


async def async_agent(message):
    await asyncio.sleep(0)
    return _react(get_order(order_id="A1001"))


@wai.tool
async def get_order_async(order_id: str) -> dict:
    """Look up an order by id (async)."""
    return {"status": "shipped"}


async def async_tool_agent(message):
    return _react(await get_order_async("A1001"))


def _faulted(mode: str, tool: str = "get_order") -> Scenario:
    return Scenario("Where is order A1001?", task_id=f"where-{mode}", faults={"tool": tool, "mode": mode},
                    entity_id="A1001")


@pytest.mark.parametrize("mode", FAULT_MODES)
@pytest.mark.parametrize("agent", [sync_agent, async_agent], ids=["sync", "async"])
def test_each_fault_mode_reaches_a_direct_call(agent, mode):
    row = rollout(agent, _faulted(mode), tools=[get_order])
    assert row["status"] == "ok"
    assert row["faults_scheduled"] == 1 and row["faults_delivered"] == 1
    (step,) = row["steps"]
    assert step["tool"] == "get_order" and step["arguments"] == {"order_id": "A1001"}
    if mode == "malformed":
        assert step["result"] == MALFORMED_PAYLOAD
    else:
        assert step["result"]["status"] == mode
    assert row["final_text"] == _REACTIONS[mode]  # the agent's reaction to the fault
    assert not missed(row)
    tool_msgs = [m for m in row["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 1  # the recorded call is in the conversation too


@pytest.mark.parametrize("mode", FAULT_MODES)
def test_an_async_tool_is_routed_too(mode):
    row = rollout(async_tool_agent, _faulted(mode, "get_order_async"), tools=[get_order_async])
    assert row["faults_delivered"] == 1 and row["final_text"] == _REACTIONS[mode]


def test_world_state_applies_and_outside_a_rollout_it_is_a_plain_function():
    assert get_order("A1001") == {}  # the function's own body
    present = rollout(sync_agent, Scenario("Where is A1001?", task_id="t", entity_id="A1001",
                                           world_state="present"), tools=[get_order])
    missing = rollout(sync_agent, Scenario("Where is A1001?", task_id="t", entity_id="A1001",
                                           world_state="missing"), tools=[get_order])
    assert present["steps"][0]["result"]["status"] == "ok" and present["faults_scheduled"] == 0
    assert missing["steps"][0]["result"]["status"] == "not_found"
    assert missing["final_text"] == _REACTIONS["not_found"]


def test_calls_from_threads_and_pools_the_rollout_starts_are_routed():
    def threaded(message):
        box = {}
        t = threading.Thread(target=lambda: box.update(r=get_order("A1001")))
        t.start()
        t.join()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            pooled = pool.submit(get_order, "A1001").result()
        return _react(box["r"]) + " / " + _react(pooled)

    row = rollout(threaded, _faulted("timeout"), tools=[get_order])
    assert row["faults_delivered"] == 2 and len(row["steps"]) == 2
    assert row["final_text"] == f"{_REACTIONS['timeout']} / {_REACTIONS['timeout']}"
    # a pool thread made inside the rollout does not carry it into a later job submitted outside
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        assert pool.submit(get_order, "A1001").result() == {}


def test_execute_runs_the_tools_own_body_behind_the_faults():
    @wai.tool
    def lookup(order_id: str) -> dict:
        """Look up an order."""
        return {"status": "shipped", "order_id": order_id}

    def agent(message):
        result = lookup(order_id="A1")
        return result if isinstance(result, str) else result["status"]

    data = wai.simulate(agent, tools=[lookup], execute=True, simulator=False, budget=40, repeats=2)
    modes = set()
    for row in data.rows:
        mode = row["faults"].get("mode")
        modes.add(mode)
        assert row["final_text"] == {None: "shipped", "malformed": MALFORMED_PAYLOAD}.get(mode, mode)
        assert row["steps"][0]["tool"] == "lookup"
    assert None in modes and len(modes) > 1  # real answers and faults both came


def test_simulate_delivers_every_scheduled_fault_to_a_direct_caller():
    data = wai.simulate(sync_agent, tools=TOOLS, simulator=False, budget=60, repeats=2, seed=3)
    rows = list(data.rows)
    faulted = [r for r in rows if r["faults"] and r["faults"].get("tool") in (None, "get_order")]
    assert faulted, "the covering array schedules get_order faults"
    assert all(r["faults_delivered"] >= 1 for r in faulted)
    assert undelivered(rows) == (0, sum(1 for r in rows if r["faults_scheduled"]))
    assert not any("fault not delivered" in w for w in data.warnings)


def test_a_call_around_the_world_is_detected_and_warned():
    plain = get_order.fn  # a framework that copied the function: calls never reach the world

    def agent(message):
        result = plain("A1001")
        return {"steps": [{"tool": "get_order", "arguments": {"order_id": "A1001"}, "result": result}],
                "final_text": _react(result)}

    data = wai.simulate(agent, tools=[get_order], simulator=False, budget=40, repeats=2, seed=1)
    n, m = undelivered(data.rows)
    assert m > 0 and n == m
    (warning,) = [w for w in data.warnings if "fault not delivered" in w]
    assert warning.startswith(f"fault not delivered in {n} of {m} rollouts: route your tools through")
    assert "@wai.tool" in warning
