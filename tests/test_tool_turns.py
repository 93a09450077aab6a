"""Parallel tool calls stay one turn, and BFCL-style tool docs with dotted names work, from the agent to every
export: one assistant message carrying N ``tool_calls``, then N ``tool`` messages with matching ids, trained once.

The tool docs below are written here in BFCL's shape (function docs with dotted names, parallel questions);
no data is downloaded.
"""

from __future__ import annotations

import functools
import json

import pytest

import whileai as wai
from whileai_core.messages import chat_messages, loss_mask, tool_calls, tool_turns
from whileai_core.models.anthropic import to_anthropic
from whileai_core.tools import as_tool, as_tools, model_name
from whileai_core.train.trl_formats import completion_row, to_dpo, to_sft

# BFCL "simple"/"parallel" style function docs: dotted names, BFCL's Python-flavoured types ("dict", "float")
FACTORIAL = {"name": "math.factorial", "description": "Calculate the factorial of a given number.",
             "parameters": {"type": "dict", "properties": {
                 "number": {"type": "integer", "description": "The number to take the factorial of."},
                 "precision": {"type": "float", "description": "Unused."},
                 "factors": {"type": "array", "items": {"type": "tuple"}}},
                 "required": ["number"]}}
WEATHER = {"type": "function", "function": {
    "name": "weather.get_by_city", "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name."},
                                                    "unit": {"type": "string", "enum": ["c", "f"]}},
                   "required": ["city"]}}}
DOCS = [FACTORIAL, WEATHER]
SYSTEM = "You answer with tools."
CITIES = ("Boston", "Paris", "Tokyo")


def parallel_agent(message):
    """Asks for the weather in three cities in one turn (BFCL "parallel"), through the mock world by the
    original dotted name, returning the grouped step form."""
    world = message.world
    calls = [{"tool": "weather.get_by_city", "arguments": {"city": c},
              "result": world.call("weather.get_by_city", {"city": c})} for c in CITIES]
    then = {"tool": "math.factorial", "arguments": {"number": 5}, "result": 120}
    return {"steps": [{"tool_calls": calls, "text": "Checking all three."}, then], "final_text": "Done."}


def flat_agent(message):
    """The same turn written flat: tool steps sharing a ``turn`` id."""
    steps = [{"tool": "weather_get_by_city", "arguments": {"city": c}, "result": {"ok": True}, "turn": 0}
             for c in CITIES]
    steps.append({"tool": "math_factorial", "arguments": {"number": 5}, "result": 120, "turn": 1})
    return {"steps": steps, "final_text": "Done."}


def assert_parallel_turn(messages, n=3, *, arguments_as=str):
    """The first assistant message carries n tool_calls, then exactly n tool messages answer them in order."""
    first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    calls = messages[first]["tool_calls"]
    assert len(calls) == n
    assert [c["function"]["name"] for c in calls] == ["weather_get_by_city"] * n
    answers = messages[first + 1: first + 1 + n]
    assert [m["role"] for m in answers] == ["tool"] * n
    assert [m["tool_call_id"] for m in answers] == [c["id"] for c in calls]
    assert len({c["id"] for c in calls}) == n
    args = [c["function"]["arguments"] for c in calls]
    assert all(isinstance(a, arguments_as) for a in args)
    cities = [json.loads(a)["city"] if isinstance(a, str) else a["city"] for a in args]
    assert cities == list(CITIES)
    after = messages[first + 1 + n]  # the sequential call that follows is its own assistant turn
    assert after["role"] == "assistant" and len(after["tool_calls"]) == 1
    assert after["tool_calls"][0]["function"]["name"] == "math_factorial"
    return first


@pytest.fixture(scope="module")
def data():
    return wai.simulate(parallel_agent, tools=DOCS, system_prompt=SYSTEM, repeats=2, budget=4, seed=3)


# ------------------------------------------------------------------------------------------------ tool names
def test_dotted_names_map_for_the_model_and_keep_the_original():
    t = as_tool(FACTORIAL)
    assert (t.name, t.original_name, t.names) == ("math_factorial", "math.factorial",
                                                  ("math_factorial", "math.factorial"))
    assert t.schema["function"]["name"] == "math_factorial" and t.required == ["number"]
    params = t.schema["function"]["parameters"]  # BFCL's type names become JSON Schema's
    assert params["type"] == "object" and params["properties"]["precision"]["type"] == "number"
    assert params["properties"]["factors"] == {"type": "array", "items": {"type": "array"}}
    assert FACTORIAL["parameters"]["type"] == "dict"  # the caller's dict is not changed
    assert [x.name for x in as_tools(DOCS)] == ["math_factorial", "weather_get_by_city"]
    assert model_name("get_order") == "get_order" and model_name("a.b.c") == "a_b_c"
    assert wai.tool(WEATHER).name == "weather_get_by_city"  # a schema dict, as tools=[dict] takes
    assert wai.tool(FACTORIAL, name="fact").name == "fact" and wai.tool(FACTORIAL, name="fact").original_name is None
    with pytest.raises(ValueError, match="name='...'"):
        as_tool({"name": "get order", "parameters": {"type": "object", "properties": {}}})
    with pytest.raises(ValueError, match=r"two tools named 'math_factorial' \(from 'math.factorial'"):
        as_tools([FACTORIAL, {**FACTORIAL, "name": "math_factorial"}])

    @wai.tool(name="math.factorial")
    def factorial(number: int) -> int:
        """Factorial of a number."""
        return 1 if number < 2 else number * factorial.fn(number - 1)

    assert (factorial.name, factorial.original_name, factorial(number=5)) == ("math_factorial", "math.factorial", 120)


def test_the_world_answers_to_both_names():
    world = wai.World(DOCS)
    by_original = world.call("math.factorial", {"number": 5})
    assert by_original == world.call("math_factorial", {"number": 5})
    assert by_original.get("status") != "not_found"
    assert world.call("math.factorial", {})["error"] == "math_factorial: missing required argument 'number'"


def test_partials_and_callable_instances_are_named_or_asked_for_a_name():
    def convert(amount: float, currency: str, rate: float = 1.0) -> float:
        """Convert money.

        Args:
            amount: how much
        """
        return amount * rate

    part = wai.tool(functools.partial(convert, rate=2.0))
    assert part.name == "convert" and part.description == "Convert money."
    assert part.required == ["amount", "currency"] and part.properties["rate"]["default"] == 2.0
    assert part(amount=3, currency="EUR") == 6.0

    class Lookup:
        """Find a record."""

        def __call__(self, record_id: str) -> dict:
            return {"id": record_id}

    inst = wai.tool(Lookup())
    assert (inst.name, inst.description, inst.required, inst(record_id="A1")) == (
        "Lookup", "Find a record.", ["record_id"], {"id": "A1"})
    assert wai.tool(Lookup(), name="find_record").name == "find_record"
    with pytest.raises(ValueError, match="pass name="):
        wai.tool(lambda x: x)
    assert wai.tool(lambda x: x, name="echo").name == "echo"


# ------------------------------------------------------------------------------------------------ parallel turns
def test_a_parallel_turn_is_one_assistant_message_in_the_row(data):
    for row in data.rows:
        assert row["schema_version"] == "1.1"
        steps = row["steps"]
        assert [s["tool"] for s in steps] == ["weather.get_by_city"] * 3 + ["math.factorial"]
        assert [s["turn"] for s in steps[:3]] == [0, 0, 0] and "turn" not in steps[3]  # a turn of its own
        assert steps[0]["text"] == "Checking all three." and "text" not in steps[1]
        assert all(s["result"].get("status") != "not_found" for s in steps[:3])  # the world knew the dotted name
        msgs = row["messages"]
        first = assert_parallel_turn(msgs)
        assert msgs[first]["content"] == "Checking all three."
        assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "tool",
                                             "assistant", "tool", "assistant"]
        assert row["loss_mask"] == [0, 0, 1, 0, 0, 0, 1, 0, 1]  # the parallel turn is trained once
        read_back = tool_calls({"messages": msgs})
        assert [c["turn"] for c in read_back] == [0, 0, 0, 1]  # calls of one message share a turn


def test_flat_steps_with_a_shared_turn_read_the_same():
    out = flat_agent("q")
    msgs = chat_messages(SYSTEM, "q", out["steps"], out["final_text"])
    assert_parallel_turn(msgs)
    assert sum(loss_mask(msgs)) == 3
    # without a turn id every call is a turn of its own (rows written before schema 1.1)
    legacy = [{k: v for k, v in s.items() if k != "turn"} for s in out["steps"]]
    assert [len(t) for t in tool_turns(legacy)] == [1, 1, 1, 1]
    assert sum(1 for m in chat_messages(None, "q", legacy, "Done.") if m.get("tool_calls")) == 4


def test_grouped_steps_must_hold_calls():
    def empty_turn(message):
        return {"steps": [{"tool_calls": []}], "final_text": "x"}

    (row,) = wai.simulate(empty_turn, tools=DOCS, repeats=1, budget=1).rows
    assert row["status"] == "agent_error" and "['tool_calls'] must be a non-empty list" in row["error"]


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_export_format_keeps_the_turn(data, tmp_path):
    for mode in ("rl", "sft"):
        report = data.rows.export(tmp_path / f"{mode}.jsonl", mode=mode)
        assert report["tool_call_roundtrip"] == {"checked": 16, "invalid": 0, "rows": []}
        for item in read_jsonl(tmp_path / f"{mode}.jsonl"):
            first = assert_parallel_turn(item["messages"])
            assert item["loss_mask"][first] == 1 and item["loss_mask"][first + 1: first + 4] == [0, 0, 0]
            assert sum(item["loss_mask"]) == 3
            assert [t["function"]["name"] for t in item["tools"]] == ["math_factorial", "weather_get_by_city"]
            if mode == "rl":
                assert item["prompt"] == item["messages"][:2]

    report = data.rows.export(tmp_path / "final.jsonl", mode="sft", mask_mode="final")
    assert report["trained_messages"] == len(data.rows)
    for item in read_jsonl(tmp_path / "final.jsonl"):
        assert_parallel_turn(item["messages"])

    wai.export_trl(data.rows, tmp_path / "trl.jsonl", "sft", tools=DOCS)
    for ex in read_jsonl(tmp_path / "trl.jsonl"):  # conversational: arguments as dicts for chat templates
        assert_parallel_turn(ex["messages"], arguments_as=dict)
        assert [t["function"]["name"] for t in json.loads(ex["tools"])] == ["math_factorial", "weather_get_by_city"]

    wai.export_trl(data.rows, tmp_path / "trl_final.jsonl", "sft", mask="final")
    for ex in read_jsonl(tmp_path / "trl_final.jsonl"):  # prompt/completion: the turn sits whole in the prompt
        assert_parallel_turn(ex["prompt"] + ex["completion"], arguments_as=dict)
        assert [m["role"] for m in ex["completion"]] == ["assistant"]


def test_sft_unrolled_and_dpo_keep_the_turn():
    parallel = wai.simulate(parallel_agent, tools=DOCS, system_prompt=SYSTEM, repeats=1, budget=1, seed=1).rows[0]
    # one assistant turn untrained in the middle: to_sft unrolls one example per trained turn
    masked = dict(parallel, loss_mask=[0, 0, 1, 0, 0, 0, 0, 0, 1])
    examples = to_sft([masked], tools=DOCS)
    assert [len(ex["completion"]) for ex in examples] == [1, 1]
    assert len(examples[0]["completion"][0]["tool_calls"]) == 3
    assert_parallel_turn(examples[1]["prompt"], arguments_as=dict)

    sequential = dict(parallel, steps=[{k: v for k, v in s.items() if k not in ("turn", "text")}
                                       for s in parallel["steps"]], messages=None, loss_mask=None)
    (pair,) = to_dpo([{"chosen": parallel, "rejected": sequential}], tools=DOCS, arguments="string")
    assert_parallel_turn(pair["prompt"] + pair["chosen"])
    assert [len(m.get("tool_calls") or []) for m in pair["rejected"]] == [1, 0, 1, 0, 1, 0, 1, 0, 0]


def test_completions_and_anthropic_keep_the_turn():
    msgs = chat_messages(SYSTEM, "q", flat_agent("q")["steps"], "Done.")
    row = completion_row({"task_id": "t"}, msgs[:2], msgs[2:])
    assert [s["turn"] for s in row["steps"]] == [0, 0, 0, 1]
    assert_parallel_turn(chat_messages(SYSTEM, "q", row["steps"], "Done."))
    _, converted, tools = to_anthropic(msgs, [t.schema for t in as_tools(DOCS)])
    assert [t["name"] for t in tools] == ["math_factorial", "weather_get_by_city"]
    assistant, results = converted[1], converted[2]
    assert [b["type"] for b in assistant["content"]] == ["tool_use"] * 3
    assert [b["tool_use_id"] for b in results["content"]] == [b["id"] for b in assistant["content"]]


def test_a_logged_conversation_keeps_its_parallel_calls_as_one_turn():
    """messages -> steps (traces) -> messages: one assistant message with two calls stays one message."""
    from whileai_core.messages import chat_messages, steps_from_messages

    logged = [{"role": "user", "content": "5! and 3!?"},
              {"role": "assistant", "content": None, "tool_calls": [
                  {"id": "a", "type": "function", "function": {"name": "math_factorial", "arguments": '{"number": 5}'}},
                  {"id": "b", "type": "function", "function": {"name": "math_factorial", "arguments": '{"number": 3}'}}]},
              {"role": "tool", "tool_call_id": "a", "content": "120"},
              {"role": "tool", "tool_call_id": "b", "content": "6"},
              {"role": "assistant", "content": "120 and 6."}]
    parts = steps_from_messages(logged)
    assert [s["turn"] for s in parts["steps"]] == [1, 1]
    again = chat_messages(None, parts["prompt"], parts["steps"], parts["final_text"])
    assert [(m["role"], len(m.get("tool_calls") or [])) for m in again] == [
        ("user", 0), ("assistant", 2), ("tool", 0), ("tool", 0), ("assistant", 0)]
