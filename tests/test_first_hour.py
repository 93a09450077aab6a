"""What a newcomer met in the first hour and was not told (issue 32): each is now a warning or an error a test
reads. An agent answering ``{"reply": ...}``, a tool without docstring or annotations, a tool result with no
JSON form."""

from __future__ import annotations

import datetime
import enum
import json
import warnings

import pytest

import whileai as wai


def test_an_agent_that_returns_reply_is_an_error_naming_final_text():
    data = wai.simulate(lambda message: {"reply": "Your order shipped."}, asks=["Where is my order?"], repeats=1)
    (row,) = list(data)
    assert row["status"] == "agent_error" and row["final_text"] == ""
    assert "returned a dict with 'reply' but no 'final_text'" in row["error"]
    assert "rename 'reply' to 'final_text'" in row["error"]


def test_a_contract_dict_is_still_fine():
    """Only steps (a turn that ended on a tool call) or only final_text: as before, no error."""
    data = wai.simulate(lambda message: {"final_text": "ok", "extra": 1}, asks=["hi"], repeats=1)
    assert [r["status"] for r in data] == ["ok"]
    data = wai.simulate(lambda message: {"steps": []}, asks=["hi"], repeats=1)
    assert [r["status"] for r in data] == ["ok"]


def test_a_tool_without_docstring_or_annotations_warns():
    def lookup(order_id, verbose: bool = False):
        return {}

    with pytest.warns(UserWarning) as caught:
        made = wai.tool(lookup)
    (message,) = [str(w.message) for w in caught]
    assert message.startswith("tool 'lookup': no description (the model sees an empty one)")
    assert "parameter(s) order_id without an annotation (their schema is {}, any value)" in message
    assert caught[0].filename == __file__  # the warning names the user's line, not the library's
    assert made.description == "" and made.parameters["properties"]["order_id"] == {}


def test_a_documented_annotated_tool_is_silent():
    def lookup(order_id: str) -> dict:
        """Look up an order."""
        return {}

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wai.tool(lookup)
        wai.tool(lambda: {"up": True}, name="ping", description="Is the service up?")  # no parameters: nothing to annotate
    with pytest.warns(UserWarning, match="parameter\\(s\\) order_id without an annotation"):
        wai.tool(lambda order_id: {}, name="bare", description="Look up an order.")


class Colour(enum.Enum):
    RED = "red"


def _agent_returning(result):
    def agent(message):
        return {"steps": [{"tool": "now", "arguments": {}, "result": result}], "final_text": "done"}
    return agent


def test_a_datetime_result_is_stored_as_isoformat():
    when = datetime.datetime(2026, 1, 2, 3, 4, 5)
    result = {"at": when, "day": when.date(), "colour": Colour.RED}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (row,) = list(wai.simulate(_agent_returning(result), asks=["time?"], repeats=1))
    assert row["steps"][0]["result"] == {"at": "2026-01-02T03:04:05", "day": "2026-01-02", "colour": "red"}
    tool_message = next(m for m in row["messages"] if m["role"] == "tool")
    assert json.loads(tool_message["content"]) == row["steps"][0]["result"]


def test_a_result_with_no_json_form_warns_naming_tool_and_type():
    with pytest.warns(UserWarning, match="tool 'now' returned a object, which has no JSON form"):
        (row,) = list(wai.simulate(_agent_returning({"x": object()}), asks=["time?"], repeats=1))
    assert row["status"] == "ok" and row["steps"][0]["result"]["x"].startswith("<object object at 0x")
