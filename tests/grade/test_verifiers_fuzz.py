"""A grader never crashes on a reply: every verifier scores arbitrary text, JSON and huge numbers with a reason."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whileai_core.grade.run import normalize_verdict
from whileai_core.grade.verify.toolcalls import ANY, ToolCalls
from whileai_core.grade.verify.basic import (
    ExactMatch,
    Includes,
    JSONFields,
    JSONValid,
    MultipleChoice,
    Numeric,
    Regex,
    verifier,
)
from whileai_core.grade.verify.math_equal import MathEqual


@verifier
def nonempty(reply, reference):
    return bool(reply.strip())


VERIFIERS = [
    MathEqual(answer="\\frac{1}{2}", timeout=1.0),
    MathEqual(answer="Paris"),
    ExactMatch("42"),
    Includes(["refund", "apology"]),
    Regex(r"order #\d+"),
    MultipleChoice(answer="B"),
    Numeric(answer=42, rel=0.01),
    JSONValid(top_type="object"),
    JSONFields({"a.b": 1, "c": ANY, "d": lambda v: v > 0}),
    nonempty,
]

HUGE = st.sampled_from([str(10**400), "1e400", "-1e-400", "9" * 5000, "1e99999999", "\\boxed{10^{10^{10}}}",
                        f"\\frac{{{10**400}}}{{3}}", "inf", "NaN", "\\infty", "2^{2^{64}}", str(2**64) + "!"])
JSON_TEXT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
).map(lambda v: json.dumps(v))
REPLIES = st.one_of(st.text(max_size=300), JSON_TEXT, HUGE,
                    st.tuples(st.text(max_size=40), HUGE).map(lambda t: f"{t[0]} \\boxed{{{t[1]}}}"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=REPLIES)
def test_no_verifier_raises_on_any_reply(reply):
    for v in VERIFIERS:
        out = v({"task_id": "t", "final_text": reply})
        assert out["reward"] in (0, 1) or (isinstance(out["reward"], float) and 0 <= out["reward"] <= 1), out
        assert isinstance(out["reason"], str) and out["reason"]


@settings(max_examples=40, deadline=None)
@given(args=st.one_of(JSON_TEXT, st.text(max_size=50), st.dictionaries(st.text(max_size=5), st.integers() | HUGE)))
def test_tool_calls_never_raise_on_any_arguments(args):
    row = {"task_id": "t", "steps": [{"tool": "refund", "arguments": args, "result": None}], "final_text": ""}
    for mode in ToolCalls.MODES:
        out = ToolCalls([("refund", {"order_id": 5, "amount": lambda a: a > 0})], mode=mode)(row)
        assert out["reward"] in (0, 1) and out["reason"]


@pytest.mark.parametrize("verdict", [10**400, -(10**400), 10**5000, {"reward": 10**400},
                                     {"reward": 1, "markers": {"m": 10**400}}],
                         ids=["1e400", "-1e400", "1e5000", "dict", "marker"])
def test_normalize_verdict_on_huge_integers_is_a_contract_error_not_an_overflow(verdict):
    with pytest.raises(ValueError, match="integer of \\d+ bits"):
        normalize_verdict(verdict)
