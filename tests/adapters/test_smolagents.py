"""smolagents adapter (issue 27 item 2), against the loopback fake model server.

smolagents sends its memory to the model as text (``Calling tools:\\n[...]`` from the assistant,
``Observation:\\n...`` from the user) and ends a run with a ``final_answer`` tool call, so the server's
stand-in model here reads that format; the framework's own record of the calls is parsed from it."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

import pytest

pytest.importorskip("smolagents", reason="the agents extra (smolagents) is not installed: pip install 'pytest-whileai[agents]'")

from smolagents import OpenAIServerModel, ToolCallingAgent, tool

import whileai as wai
from tests.adapters.harness import check_framework
from tests.fakeserver import FakeServer, default_reply
from whileai_core.adapters.smolagents import literal

_STATUS = re.compile(r"'status': '(\w+)'")


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id.

    Args:
        order_id: the order's id.
    """
    return {"status": "shipped", "order_id": order_id}


def _texts(request: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for m in request.get("messages") or []:
        c = m.get("content")
        text = c if isinstance(c, str) else "".join(b.get("text", "") for b in c or () if isinstance(b, dict))
        out.append((m.get("role"), text))
    return out


def smol_reply(request: Mapping[str, Any], protocol: str, *, worse: bool = False) -> dict[str, Any]:
    """The stand-in model in smolagents' format: call the tool, then final_answer what it returned."""
    texts = _texts(request)
    last = texts[-1][1] if texts else ""
    if last.startswith("Observation:"):
        seen = _STATUS.search(last)
        status = "ok" if worse else (seen.group(1) if seen else "unreadable")
        return {"tool_calls": [{"name": "final_answer", "arguments": {"answer": f"Done: get_order returned {status}."}}]}
    reply = default_reply({**request, "messages": [{"role": "user", "content": last}],
                           "tools": [t for t in request.get("tools") or () if t["function"]["name"] != "final_answer"]},
                          protocol)
    return reply


def smol_record(server: FakeServer) -> dict[str, list[Any]]:
    """prompt -> [(tool, arguments, result)] from the memory smolagents sent in the last request of a run."""
    out: dict[str, list[Any]] = {}
    for req in server.requests:
        texts = _texts(req.get("body") or {})
        prompt = next((t[len("New task:\n"):] for role, t in texts if role == "user" and t.startswith("New task:")), None)
        calls = []
        for (role, text), (_, after) in zip(texts, texts[1:] + [("", "")]):
            if role == "assistant" and text.startswith("Calling tools:\n"):
                for c in ast.literal_eval(text[len("Calling tools:\n"):]):
                    if c["function"]["name"] != "final_answer":
                        calls.append((c["function"]["name"], c["function"]["arguments"],
                                      literal(after[len("Observation:\n"):])))
        if prompt is not None and len(calls) >= len(out.get(prompt, [])):
            out[prompt] = calls
    return out


def make_agent(base_url: str) -> ToolCallingAgent:
    model = OpenAIServerModel(model_id="fake", api_base=base_url, api_key="x")
    return ToolCallingAgent(tools=[get_order], model=model, verbosity_level=0, max_steps=3, name="desk")


def test_a_smolagents_agent_meets_the_failing_world():
    data = check_framework(make_agent, responder=smol_reply,
                           worse=lambda req, proto: smol_reply(req, proto, worse=True), record_of=smol_record)
    assert all(r["agent_extra"]["usage"]["calls"] == 2 for r in data.rows)


def test_outside_a_rollout_the_tool_is_its_own():
    assert get_order(order_id="A1") == {"status": "shipped", "order_id": "A1"}
    assert [t.name for t in wai.agent(make_agent("http://127.0.0.1:9/v1")).tools()] == ["get_order"]
