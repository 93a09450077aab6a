"""LangGraph / LangChain adapter (issue 27 item 2), against the loopback fake model server."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("langgraph", reason="the agents extra (langgraph) is not installed: pip install 'pytest-whileai[agents]'")
pytest.importorskip("langchain_openai", reason="the agents extra (langchain-openai) is not installed")

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

import whileai as wai
from tests.adapters.harness import check_framework
from tests.fakeserver import FakeServer

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # create_react_agent's move to langchain.agents (a package not required)
    from langgraph.prebuilt import create_react_agent


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped", "order_id": order_id}


def make_agent(base_url: str):
    llm = ChatOpenAI(model="fake", base_url=base_url, api_key="x", max_retries=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(llm, [get_order], prompt="Help customers with orders.")


def test_a_langgraph_agent_meets_the_failing_world():
    data = check_framework(make_agent)
    for r in data.rows:
        assert [s["node"] for s in r["steps"]] == ["agent"] and r["steps"][0]["tool_node"] == "tools"
        assert r["agent_extra"]["usage"]["calls"] == 2


def test_parallel_calls_are_one_turn_and_outside_a_rollout_the_tool_is_its_own():
    with FakeServer() as srv:
        srv.script({"tool_calls": [{"name": "get_order", "arguments": {"order_id": "A1"}},
                                   {"name": "get_order", "arguments": {"order_id": "A2"}}]},
                   {"text": "Both found."})
        row = wai.simulate(make_agent(srv.openai_url), simulator=False, asks=["Where are A1 and A2?"],
                           repeats=1, concurrency=1).rows[0]
    first, second = row["steps"]
    assert first["turn"] == second["turn"] == 0 and first["call_id"] != second["call_id"]
    assert row["final_text"] == "Both found."
    assert get_order.invoke({"order_id": "A1"}) == {"status": "shipped", "order_id": "A1"}
