"""OpenAI Agents SDK adapter (issue 27 item 2), against the loopback fake model server."""

from __future__ import annotations

import pytest

pytest.importorskip("agents", reason="the agents extra (openai-agents) is not installed: pip install 'pytest-whileai[agents]'")

from agents import Agent, OpenAIChatCompletionsModel, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

import whileai as wai
from tests.adapters.harness import check_framework
from tests.fakeserver import FakeServer

set_tracing_disabled(True)  # no trace export: nothing leaves 127.0.0.1


@function_tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped", "order_id": order_id}


def make_agent(base_url: str) -> Agent:
    model = OpenAIChatCompletionsModel(model="fake", openai_client=AsyncOpenAI(base_url=base_url, api_key="x"))
    return Agent(name="desk", instructions="Help customers with orders.", tools=[get_order], model=model)


def test_an_agents_sdk_agent_meets_the_failing_world():
    data = check_framework(make_agent)
    assert {r["lineage"]["agent"] for r in data.rows} == {"desk"}
    assert all(r["agent_extra"]["usage"]["calls"] == 2 for r in data.rows)


def test_parallel_calls_and_a_handoff_are_recorded_faithfully():
    with FakeServer() as srv:
        srv.script({"tool_calls": [{"name": "transfer_to_orders", "arguments": {}}]},
                   {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "A1"}},
                                   {"name": "get_order", "arguments": {"order_id": "A2"}}]},
                   {"text": "Both found."})
        model = OpenAIChatCompletionsModel(model="fake", openai_client=AsyncOpenAI(base_url=srv.openai_url,
                                                                                   api_key="x"))
        orders = Agent(name="orders", instructions="Look orders up.", tools=[get_order], model=model)
        triage = Agent(name="triage", instructions="Route the customer.", handoffs=[orders], model=model)
        adapter = wai.agent(triage)
        assert [t.name for t in adapter.tools()] == ["get_order"]
        row = wai.simulate(adapter, simulator=False, asks=["Where are orders A1 and A2?"], repeats=1,
                           concurrency=1).rows[0]
    handoff, first, second = row["steps"]
    assert handoff["tool"] == "transfer_to_orders" and handoff["handoff"] == {"from": "triage", "to": "orders"}
    assert first["turn"] == second["turn"] != handoff["turn"]  # the two calls of one response: one turn
    assert [first["arguments"], second["arguments"]] == [{"order_id": "A1"}, {"order_id": "A2"}]
    assert row["final_text"] == "Both found." and row["agent_extra"]["last_agent"] == "orders"
    assistant = [m for m in row["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    assert [len(m["tool_calls"]) for m in assistant] == [1, 2]


def test_outside_a_rollout_the_tools_run_their_own_code():
    import asyncio

    from agents import Runner

    with FakeServer() as srv:
        adapter = wai.agent(make_agent(srv.openai_url))
        result = asyncio.run(Runner.run(adapter.routed, "Where is order A100?"))
    outputs = [item.output for item in result.new_items if type(item).__name__ == "ToolCallOutputItem"]
    assert outputs == [{"status": "shipped", "order_id": "A100"}]  # the function's own body, no world
