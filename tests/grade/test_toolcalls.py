"""ToolCalls: the agent's calls against the expected ones in each mode, with per-argument matchers."""

from __future__ import annotations

import json

import pytest

from whileai_core.grade.run import run_judge
from whileai_core.messages import chat_messages as _messages
from whileai_core.grade.verify.toolcalls import ANY, ToolCalls, tool_calls

STEPS = [
    {"tool": "lookup_order", "arguments": {"order_id": 5}, "result": {"status": "paid"}},
    {"text": "Let me refund that."},
    {"tool": "refund", "arguments": {"order_id": 5, "amount": 10.0}, "result": "ok"},
]
LOOKUP = ("lookup_order", {"order_id": 5})
REFUND = ("refund", {"order_id": 5, "amount": 10.0})
NOTIFY = ("notify", {"channel": "email"})


def agent_row(steps=STEPS, **extra):
    return {"task_id": "t", "steps": steps, "final_text": "Refunded.", **extra}


def verdict(expected, mode, row=None, **kw):
    return ToolCalls(expected, mode=mode, **kw)(row or agent_row())


# made = [lookup, refund]
CASES = [
    # mode, expected, reward
    ("strict", [LOOKUP, REFUND], 1),
    ("strict", [REFUND, LOOKUP], 0),
    ("strict", [LOOKUP], 0),
    ("strict", [LOOKUP, REFUND, NOTIFY], 0),
    ("unordered", [REFUND, LOOKUP], 1),
    ("unordered", [LOOKUP], 0),
    ("unordered", [LOOKUP, REFUND, NOTIFY], 0),
    ("subset", [LOOKUP, REFUND, NOTIFY], 1),  # made only expected calls (agentevals: made within the reference)
    ("subset", [REFUND, LOOKUP], 1),
    ("subset", [LOOKUP], 0),  # the refund was not expected
    ("superset", [LOOKUP], 1),  # made at least the expected calls, extras allowed
    ("superset", [REFUND], 1),
    ("superset", [LOOKUP, NOTIFY], 0),
    ("superset", [], 1),
    ("strict", [], 0),
]


@pytest.mark.parametrize("mode, expected, want", CASES)
def test_each_mode(mode, expected, want):
    v = verdict(expected, mode)
    assert v["reward"] == want, v["reason"]
    assert v["calls_made"] == 2 and v["calls_expected"] == len(expected)


def test_reasons_name_the_first_missing_or_unexpected_call_and_the_argument():
    assert verdict([REFUND, LOOKUP], "strict")["reason"] == \
        "tool calls (strict): call #1 is lookup_order, expected refund"
    assert verdict([LOOKUP], "strict")["reason"] == \
        "tool calls (strict): unexpected call #2: refund(order_id=5, amount=10.0)"
    assert verdict([LOOKUP, REFUND, NOTIFY], "strict")["reason"] == \
        "tool calls (strict): missing call #3: notify(channel='email')"
    assert verdict([("lookup_order", {"order_id": 6}), REFUND], "strict")["reason"] == \
        "tool calls (strict): call #1 lookup_order: argument 'order_id' is 5, expected 6"
    assert verdict([LOOKUP, ("refund", {"order_id": 5, "amount": 12.5})], "superset")["reason"] == (
        "tool calls (superset): missing call: refund(order_id=5, amount=12.5) "
        "(the agent's refund call: argument 'amount' is 10.0, expected 12.5)")
    assert verdict([LOOKUP], "subset")["reason"] == \
        "tool calls (subset): unexpected call: refund(order_id=5, amount=10.0)"
    assert verdict([LOOKUP, NOTIFY], "unordered")["reason"] == \
        "tool calls (unordered): missing call: notify(channel='email')"


def test_argument_matchers_exact_predicate_any_and_extras():
    assert verdict([LOOKUP, ("refund", {"order_id": 5, "amount": lambda a: 0 < a <= 10})], "strict")["reward"] == 1
    v = verdict([LOOKUP, ("refund", {"order_id": 5, "amount": lambda a: a > 50})], "strict")
    assert v["reward"] == 0 and "argument 'amount' failed the check <lambda> on 10.0" in v["reason"]
    assert verdict([LOOKUP, ("refund", {"order_id": ANY, "amount": ANY})], "strict")["reward"] == 1
    assert verdict([LOOKUP, "refund"], "strict")["reward"] == 1  # no arguments listed: any arguments
    v = verdict([LOOKUP, ("refund", {"order_id": 5})], "strict")
    assert v["reward"] == 0 and "unexpected argument 'amount' (allow_extra_args=False)" in v["reason"]
    assert verdict([LOOKUP, ("refund", {"order_id": 5})], "strict", allow_extra_args=True)["reward"] == 1
    v = verdict([LOOKUP, ("refund", {"order_id": 5, "amount": 10.0, "reason": ANY})], "strict")
    assert "has no argument 'reason'" in v["reason"]
    assert verdict([("lookup_order", {"order_id": "5"}), REFUND], "strict")["reward"] == 0  # "5" is not 5
    raising = verdict([LOOKUP, ("refund", {"order_id": 5, "amount": lambda a: a.upper()})], "strict")
    assert raising["reward"] == 0 and "it raised AttributeError" in raising["reason"]


def test_unordered_matching_is_a_true_matching_not_greedy():
    steps = [{"tool": "search", "arguments": {"q": "a"}}, {"tool": "search", "arguments": {"q": "b"}}]
    # the first expected call accepts either; a greedy pass would take "a" and leave "b" unmatched for the second
    expected = [("search", {"q": ANY}), ("search", {"q": "a"})]
    assert verdict(expected, "unordered", agent_row(steps))["reward"] == 1


def test_calls_are_read_from_messages_when_steps_are_absent():
    msgs = _messages("sys", "refund order 5", STEPS, "Refunded.")
    only_messages = {"task_id": "t", "messages": msgs, "final_text": "Refunded."}
    assert tool_calls(only_messages) == [{"name": "lookup_order", "arguments": {"order_id": 5}},
                                         {"name": "refund", "arguments": {"order_id": 5, "amount": 10.0}}]
    assert verdict([LOOKUP, REFUND], "strict", only_messages)["reward"] == 1
    broken = {"steps": [{"tool": "refund", "arguments": "{not json", "result": None}]}
    v = ToolCalls([("refund", {"order_id": 5})])(broken)
    assert v["reward"] == 0 and "arguments that are not a JSON object" in v["reason"]


def test_expected_calls_from_the_row_and_hidden_values():
    row = agent_row(privileged={"expected_calls": [{"tool": "lookup_order", "arguments": {"order_id": 777}}]})
    v = ToolCalls(mode="superset")(row)
    assert v["reward"] == 0 and "777" not in v["reason"] and "differs from the expected value" in v["reason"]
    row = agent_row(privileged={"reference": [["lookup_order", {"order_id": 5}], ["refund", None]]})
    assert ToolCalls()(row)["reward"] == 1
    assert ToolCalls()(agent_row())["reward"] is None  # nothing to check against: abstain
    bad = ToolCalls()(agent_row(privileged={"reference": "the refund was made"}))
    assert bad["reward"] is None and "pass expected= or field=" in bad["reason"]


def test_with_run_judge_and_constructor_errors():
    rows = [agent_row(), agent_row(steps=STEPS[:1])]
    scored = run_judge(rows, ToolCalls([LOOKUP, REFUND], mode="unordered"))
    assert [r["reward"] for r in scored.rows] == [1, 0]
    assert scored.rows[1]["judge_meta"]["calls_matched"] == 1
    json.dumps([r["judge_meta"] for r in scored.rows])  # the meta a row keeps is JSON
    with pytest.raises(ValueError, match="mode= must be one of"):
        ToolCalls([LOOKUP], mode="loose")
    with pytest.raises(ValueError, match=r"expected\[0\] must be a tool name"):
        ToolCalls([42])
    with pytest.raises(ValueError, match="arguments must be a dict"):
        ToolCalls([("refund", [5])])


def test_dotted_reference_names_match_calls_recorded_under_the_model_facing_name():
    """BFCL writes ``math.factorial``; the model calls ``math_factorial`` (tools.model_name), and one turn of
    parallel calls (steps sharing ``turn``) is read as its calls in order."""
    steps = [{"tool": "math_factorial", "arguments": {"number": 5}, "result": 120, "turn": 0},
             {"tool": "math_factorial", "arguments": {"number": 3}, "result": 6, "turn": 0}]
    row = agent_row(steps)
    expected = [("math.factorial", {"number": 3}), ("math.factorial", {"number": 5})]
    assert verdict(expected, "unordered", row)["reward"] == 1
    strict = verdict(expected, "strict", row)
    assert strict["reward"] == 0 and "math_factorial" in strict["reason"]
    assert tool_calls(row) == [{"name": "math_factorial", "arguments": {"number": 5}},
                               {"name": "math_factorial", "arguments": {"number": 3}}]
