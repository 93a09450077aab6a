"""smolagents adapter (issue 27 item 2), against the loopback fake model server.

smolagents sends its memory to the model as text (``Calling tools:\\n[...]`` from the assistant,
``Observation:\\n...`` from the user) and ends a run with a ``final_answer`` call; the loopback server's stand-in
model reads that format (``tests.fakeserver.smolagents_reply``), and the framework's own record of the calls is
parsed from the memory it sent: a ``ToolCallingAgent``'s tool calls and observations, a ``CodeAgent``'s code
(the tool calls in it, read with ``ast``) and the printed result in the observation after it."""

from __future__ import annotations

import ast
from typing import Any

import pytest

pytest.importorskip("smolagents", reason="the agents extra (smolagents) is not installed: pip install 'pytest-whileai[agents]'")

from smolagents import CodeAgent, OpenAIServerModel, ToolCallingAgent, tool

import whileai as wai
from tests.adapters.harness import check_framework
from tests.fakeserver import FakeServer, message_texts, smolagents_reply
from whileai_core.adapters.smolagents import literal


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id.

    Args:
        order_id: the order's id.
    """
    return {"status": "shipped", "order_id": order_id}


def worse(request, protocol):
    return smolagents_reply(request, protocol, worse=True)


def _runs(server: FakeServer):
    """(prompt, [(assistant text, the observation after it)]) of each request smolagents sent."""
    for req in server.requests:
        texts = message_texts(req.get("body") or {})
        prompt = next((t[len("New task:\n"):] for role, t in texts if role == "user" and t.startswith("New task:")),
                      None)
        if prompt is not None:
            yield prompt, [(text, after) for (role, text), (_, after) in zip(texts, texts[1:] + [("", "")])
                           if role == "assistant"]


def _longest(out: dict[str, list[Any]], prompt: str, calls: list[Any]) -> None:
    if len(calls) >= len(out.get(prompt, [])):
        out[prompt] = calls


def smol_record(server: FakeServer) -> dict[str, list[Any]]:
    """prompt -> [(tool, arguments, result)]: the tool calls and observations of a ToolCallingAgent's memory."""
    out: dict[str, list[Any]] = {}
    for prompt, turns in _runs(server):
        calls = [(c["function"]["name"], c["function"]["arguments"], literal(after[len("Observation:\n"):]))
                 for text, after in turns if text.startswith("Calling tools:\n")
                 for c in ast.literal_eval(text[len("Calling tools:\n"):]) if c["function"]["name"] != "final_answer"]
        _longest(out, prompt, calls)
    return out


def code_record(server: FakeServer) -> dict[str, list[Any]]:
    """prompt -> [(tool, arguments, result)]: the calls of ``get_order`` in the code a CodeAgent's memory holds
    (its ``python_interpreter`` calls), each with the result its code printed (the observation's log)."""
    out: dict[str, list[Any]] = {}
    for prompt, turns in _runs(server):
        calls = []
        for text, after in turns:
            if "Calling tools:\n" not in text:
                continue
            (interp,) = ast.literal_eval(text.split("Calling tools:\n", 1)[1])
            code = ast.parse(interp["function"]["arguments"])
            found = [n for n in ast.walk(code) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "get_order"]
            printed = after.split("Execution logs:\n", 1)[1].split("\nLast output from code snippet:")[0]
            calls += [("get_order", {k.arg: ast.literal_eval(k.value) for k in n.keywords}, literal(printed))
                      for n in found]
        _longest(out, prompt, calls)
    return out


def make_agent(base_url: str) -> ToolCallingAgent:
    model = OpenAIServerModel(model_id="fake", api_base=base_url, api_key="x")
    return ToolCallingAgent(tools=[get_order], model=model, verbosity_level=0, max_steps=3, name="desk")


def make_code_agent(base_url: str) -> CodeAgent:
    model = OpenAIServerModel(model_id="fake", api_base=base_url, api_key="x")
    return CodeAgent(tools=[get_order], model=model, verbosity_level=0, max_steps=3, name="coder")


def test_a_smolagents_agent_meets_the_failing_world():
    data = check_framework(make_agent, worse=worse, record_of=smol_record)
    assert all(r["agent_extra"]["usage"]["calls"] == 2 for r in data.rows)


def test_a_smolagents_code_agent_meets_the_failing_world():
    """A CodeAgent's tool calls happen inside the code it writes: each reaches the world, and the row's tool
    steps are the calls that code made (by code step), equal to the calls read from its code."""
    data = check_framework(make_code_agent, worse=worse, record_of=code_record)
    for r in data.rows:
        (step,) = r["steps"]
        assert step["turn"] == 0 and step["code_call_id"] == "call_1" and step["call_id"] == "call_1.0"
    assert all(r["agent_extra"]["usage"]["calls"] == 2 for r in data.rows)


def test_a_code_agent_calling_by_position_and_twice_in_one_step():
    with FakeServer() as srv:
        srv.script({"text": "<code>\na = get_order('A1')\nb = get_order(order_id='A2')\nprint(a, b)\n</code>"},
                   {"text": "<code>\nfinal_answer('two')\n</code>"})
        row = wai.simulate(make_code_agent(srv.openai_url), simulator=False, asks=["Where are A1 and A2?"],
                           repeats=1, concurrency=1).rows[0]
    first, second = row["steps"]
    assert [first["arguments"], second["arguments"]] == [{"order_id": "A1"}, {"order_id": "A2"}]
    assert first["turn"] == second["turn"] == 0 and row["final_text"] == "two"
    assert first["result"]["status"] == "ok"  # the world's answer, not the function's own "shipped"


def test_outside_a_rollout_the_tool_is_its_own():
    assert get_order(order_id="A1") == {"status": "shipped", "order_id": "A1"}
    assert get_order("A1") == {"status": "shipped", "order_id": "A1"}
    assert [t.name for t in wai.agent(make_agent("http://127.0.0.1:9/v1")).tools()] == ["get_order"]


def test_the_runs_keep_the_engines_concurrency():
    """smolagents is synchronous: each rollout takes a worker thread, from a pool that does not cap the run at
    the event loop's default pool (min(32, cpus + 4) threads: 6 on a 2-core machine)."""
    with FakeServer(latency_s=0.3) as srv:
        data = wai.simulate(make_agent(srv.openai_url), simulator=False, budget=16, repeats=1, concurrency=16)
        peak = srv.peak_in_flight
    assert [r["status"] for r in data.rows] == ["ok"] * 16
    assert peak >= 12, peak


@tool
def broken_report(order_id: str) -> str:
    """A report that always fails.

    Args:
        order_id: the order's id.
    """
    raise ValueError("report service is down")


def test_a_code_agents_failing_tool_is_an_error_step():
    """A tool the world does not answer runs its own code; when it raises inside the CodeAgent's code, the step
    carries ``"error": true`` and the error, as smolagents reported it to the model."""
    with FakeServer() as srv:
        srv.script({"text": "<code>\na = get_order(order_id='A1')\nbroken_report(order_id='A1')\n</code>"},
                   {"text": "<code>\nfinal_answer('the report failed')\n</code>"})
        model = OpenAIServerModel(model_id="fake", api_base=srv.openai_url, api_key="x")
        coder = CodeAgent(tools=[get_order, broken_report], model=model, verbosity_level=0, max_steps=3)
        world = [t for t in wai.agent(coder).tools() if t.name == "get_order"]
        row = wai.simulate(coder, tools=world, simulator=False, asks=["Report on A1"], repeats=1).rows[0]
        sent = [m for r in srv.requests for m in message_texts(r["body"]) if m[1].startswith("Observation:")
                or "report service is down" in m[1]]
    looked, broken = row["steps"]
    assert looked["result"]["status"] == "ok" and "error" not in looked
    assert broken["error"] is True and "report service is down" in broken["result"]
    assert looked["turn"] == broken["turn"] == 0 and row["final_text"] == "the report failed"
    assert any("report service is down" in text for _, text in sent)  # the model was told of the failure
