"""Issue 27 item 4: framework trajectories are faithful (parallel calls as one turn, a handoff, a graph's nodes,
a tool error as the framework reports it) and their TRL export round-trips through a tiny tokenizer's chat
template: the calls parsed back out of the rendered text are the row's steps."""

from __future__ import annotations

import json
import re
import warnings

import pytest

pytest.importorskip("agents", reason="the agents extra (openai-agents) is not installed: pip install 'pytest-whileai[agents]'")
pytest.importorskip("langgraph", reason="the agents extra (langgraph) is not installed")
pytest.importorskip("tokenizers", reason="the train extra (tokenizers, transformers) is not installed")

from agents import Agent, OpenAIChatCompletionsModel, function_tool, set_tracing_disabled
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI

import whileai as wai
from tests.fakeserver import FakeServer
from tests.train_helpers import build_tiny_tokenizer

set_tracing_disabled(True)
_CALL = re.compile(r'<tool_call>(.*?)</tool_call>', re.DOTALL)


@function_tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped", "order_id": order_id}


@tool
def lookup_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped", "order_id": order_id}


@tool
def broken_report(order_id: str) -> str:
    """A report that always fails."""
    raise ValueError("report service is down")


@pytest.fixture(scope="module")
def tokenizer():
    return build_tiny_tokenizer()


def _round_trip(tokenizer, row, tools):
    """Export the row as TRL, render it with the chat template, tokenize and decode; the parsed calls per
    assistant turn."""
    (trl,) = wai.export([row], None, format="trl", tools=tools)["rows"]
    tools = json.loads(trl["tools"]) if isinstance(trl["tools"], str) else trl["tools"]  # TRL's rows: JSON text
    text = tokenizer.apply_chat_template(trl["messages"], tools=tools, tokenize=False)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids) == text  # the byte-level tokenizer loses nothing
    turns = [block for block in text.split("<|im_start|>assistant\n")[1:]]
    calls = [[json.loads(c) for c in _CALL.findall(block)] for block in turns]
    tool_texts = re.findall(r"<\|im_start\|>tool\n(.*?)<\|im_end\|>", text, re.DOTALL)
    return calls, tool_texts


def _by_turn(row):
    out: dict[int, list] = {}
    for s in row["steps"]:
        if "tool" in s:
            out.setdefault(s["turn"], []).append({"name": s["tool"], "arguments": s["arguments"]})
    return [out[t] for t in sorted(out)]


def test_agents_sdk_handoff_and_parallel_calls_round_trip(tokenizer):
    with FakeServer() as srv:
        srv.script({"tool_calls": [{"name": "transfer_to_orders", "arguments": {}}]},
                   {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "A1"}},
                                   {"name": "get_order", "arguments": {"order_id": "A2"}}]},
                   {"text": "Both found."})
        model = OpenAIChatCompletionsModel(model="fake", openai_client=AsyncOpenAI(base_url=srv.openai_url,
                                                                                   api_key="x"))
        orders = Agent(name="orders", instructions="Look orders up.", tools=[get_order], model=model)
        adapter = wai.agent(Agent(name="triage", instructions="Route.", handoffs=[orders], model=model))
        row = wai.simulate(adapter, simulator=False, asks=["Where are orders A1 and A2?"], repeats=1,
                           concurrency=1).rows[0]
    assert row["steps"][0]["handoff"] == {"from": "triage", "to": "orders"}
    calls, tool_texts = _round_trip(tokenizer, row, [t.schema for t in adapter.declared_tools()])
    assert calls[:-1] == _by_turn(row) and calls[-1] == []  # the handoff turn, the parallel turn, the reply
    assert [len(c) for c in calls] == [1, 2, 0]
    assert [json.loads(t) for t in tool_texts[1:]] == [s["result"] for s in row["steps"][1:]]


def test_langgraph_parallel_calls_and_a_tool_error_as_the_framework_reports_it(tokenizer):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import ToolNode, create_react_agent
    with FakeServer() as srv:
        srv.script({"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A1"}},
                                   {"name": "broken_report", "arguments": {"order_id": "A1"}}]},
                   {"text": "Found A1; the report failed."})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_react_agent's move to langchain.agents
            graph = create_react_agent(ChatOpenAI(model="fake", base_url=srv.openai_url, api_key="x",
                                                  max_retries=0),
                                       ToolNode([lookup_order, broken_report], handle_tool_errors=True))
        adapter = wai.agent(graph)
        # only lookup_order is the world's: broken_report runs its own code, and LangGraph's ToolNode reports
        # its exception as a tool message with status="error"
        row = wai.simulate(adapter, tools=[adapter.tools()[0]], simulator=False, asks=["Where is order A1?"],
                           repeats=1, concurrency=1).rows[0]
    looked, broken = row["steps"]
    assert looked["turn"] == broken["turn"] == 0 and looked["node"] == broken["node"] == "agent"
    assert broken.get("error") is True and "report service is down" in broken["result"]
    assert looked["result"]["status"] == "ok" and "error" not in looked
    calls, tool_texts = _round_trip(tokenizer, row, [t.schema for t in adapter.tools()])
    assert calls == [_by_turn(row)[0], []]
    assert "report service is down" in tool_texts[1]
