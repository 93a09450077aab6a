"""pydantic-ai adapter (issue 27 item 2), against the loopback fake model server."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("pydantic_ai", reason="the agents extra (pydantic-ai-slim[openai]) is not installed: "
                                          "pip install 'pytest-whileai[agents]'")

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import whileai as wai
from tests.adapters.harness import check_framework
from tests.fakeserver import FakeServer


def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped", "order_id": order_id}


def make_agent(base_url: str) -> Agent:
    model = OpenAIChatModel("fake", provider=OpenAIProvider(base_url=base_url, api_key="x"))
    return Agent(model, tools=[get_order], instructions="Help customers with orders.", name="desk")


def test_a_pydantic_ai_agent_meets_the_failing_world():
    data = check_framework(make_agent)
    assert all(r["agent_extra"]["usage"]["calls"] == 2 for r in data.rows)


def test_parallel_calls_are_one_turn_and_outside_a_rollout_the_tool_is_its_own():
    with FakeServer() as srv:
        srv.script({"tool_calls": [{"name": "get_order", "arguments": {"order_id": "A1"}},
                                   {"name": "get_order", "arguments": {"order_id": "A2"}}]},
                   {"text": "Both found."})
        row = wai.simulate(make_agent(srv.openai_url), simulator=False, asks=["Where are A1 and A2?"],
                           repeats=1, concurrency=1).rows[0]
        first, second = row["steps"]
        assert first["turn"] == second["turn"] == 0 and row["final_text"] == "Both found."
        out = asyncio.run(make_agent(srv.openai_url).run("Where is order A100?"))
    returns = [p.content for m in out.all_messages() for p in m.parts if type(p).__name__ == "ToolReturnPart"]
    assert returns == [{"status": "shipped", "order_id": "A100"}]


def test_one_agent_object_runs_again_and_trial_by_trial():
    """The framework's async client binds to the loop it first ran on: the adapters' one loop keeps the same
    agent object working across simulate runs (a fresh engine loop each) and the plugin's trials."""
    from whileai_core.simulate.rollout import rollout
    from whileai_core.simulate.situations import Scenario

    with FakeServer() as srv:
        agent = make_agent(srv.openai_url)
        for _ in range(2):
            data = wai.simulate(agent, simulator=False, budget=6, repeats=1)
            assert [r["status"] for r in data.rows] == ["ok"] * 6
        adapter = wai.agent(agent)
        faulted = Scenario("Where is order A100?", task_id="t", faults={"tool": "get_order", "mode": "denied"})
        rows = [rollout(adapter, faulted, rollout_index=i, tools=adapter.tools()) for i in range(2)]  # the plugin's way
    assert [r["faults_delivered"] for r in rows] == [1, 1]
    assert all(r["final_text"] == "Done: get_order returned denied." for r in rows)
