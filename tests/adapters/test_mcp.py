"""MCP adapter (issue 27 item 2): tools listed from an MCP server the test starts over stdio become whileai
tools; their calls pass through the world (faults first), the server answering the rest under execute=."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the agents extra (mcp) is not installed: pip install 'pytest-whileai[agents]'")

import whileai as wai
from tests.adapters.harness import check_framework
from whileai_core.models.backends import Endpoint

SERVER = str(Path(__file__).with_name("mcp_shop_server.py"))


@pytest.fixture(scope="module")
def shop():
    with wai.mcp_tools(sys.executable, SERVER) as tools:
        yield tools


def test_mcp_tools_are_listed_and_called_outside_a_rollout(shop):
    (get_order,) = shop
    assert get_order.name == "get_order" and get_order.required == ["order_id"]
    assert get_order(order_id="A1") == {"status": "ok", "order_id": "A1", "state": "shipped", "source": "mcp"}


def test_a_model_agent_on_mcp_tools_meets_the_failing_world(shop):
    def make_agent(base_url: str):
        return Endpoint("fake", url=base_url, max_attempts=1)

    check_framework(make_agent, tools=list(shop))


def test_the_server_answers_what_the_faults_let_through(shop):
    def agent(message):
        result = shop[0](order_id="A100")  # the agent's own code calls the MCP tool directly
        return f"got {result.get('status') if isinstance(result, dict) else 'garbled'}"

    data = wai.simulate(agent, tools=list(shop), execute=shop.execute, simulator=False, budget=40, repeats=2)
    for r in data.rows:
        (step,) = r["steps"]
        if r["faults_scheduled"]:
            assert r["faults_delivered"] == 1 and step["result"] != {"status": "ok", "order_id": "A100",
                                                                     "state": "shipped", "source": "mcp"}
        else:
            assert step["result"]["source"] == "mcp"  # the real server's answer
