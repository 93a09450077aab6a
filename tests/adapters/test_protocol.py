"""The adapter protocol (issue 27 item 2): wai.agent picks an adapter by type, a user writes and registers one,
and an object that merely lives in a module named like a framework stays a plain agent."""

from __future__ import annotations

import pytest

import whileai as wai
from whileai_core.adapters import is_framework_agent
from whileai_core.errors import InvalidArgumentType


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped"}


class Desk:
    """A home-made 'framework' agent."""

    async def ask(self, text: str) -> str:
        answer = get_order("A1001")
        return f"status {answer.get('status') if isinstance(answer, dict) else 'garbled'}"


class DeskAdapter(wai.AgentAdapter):
    framework = "desk"

    def tools(self):
        return [get_order]

    async def arun(self, message):
        return {"final_text": await self.obj.ask(message)}


def test_a_registered_adapter_runs_with_faults_delivered():
    wai.register_adapter(lambda obj: isinstance(obj, Desk), DeskAdapter)
    assert isinstance(wai.agent(Desk()), DeskAdapter)
    data = wai.simulate(Desk(), simulator=False, budget=20, repeats=1)
    faulted = [r for r in data.rows if r["faults_scheduled"]]
    assert faulted and all(r["faults_delivered"] == 1 for r in faulted)
    assert all(r["steps"][0]["tool"] == "get_order" for r in data.rows)
    assert {r["final_text"] for r in faulted} >= {"status timeout", "status garbled"}


def test_unknown_objects_are_refused_and_look_alikes_stay_plain_agents():
    with pytest.raises(InvalidArgumentType, match="no adapter knows"):
        wai.agent(object())
    LookAlike = type("LookAlike", (), {"__call__": lambda self, message: "hi", "__module__": "agents.support"})
    assert not is_framework_agent(LookAlike())
    data = wai.simulate(LookAlike(), tools=[get_order], simulator=False, budget=4, repeats=1)
    assert [r["final_text"] for r in data.rows] == ["hi"] * 4
    with pytest.raises(InvalidArgumentType):
        wai.register_adapter("not callable", DeskAdapter)
