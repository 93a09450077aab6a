"""The basic verifiers: ExactMatch, Includes, Regex, MultipleChoice, Numeric, JSONValid, JSONFields, @verifier."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import whileai as wai
from whileai_core.grade.run import run_judge
from whileai_core.grade.verify.basic import (
    ANY,
    ExactMatch,
    Includes,
    JSONFields,
    JSONValid,
    MultipleChoice,
    Numeric,
    Regex,
    read_number,
    verifier,
)


def row(text, reference=None, **extra):
    r = {"task_id": "t", "final_text": text, **extra}
    if reference is not None:
        r["privileged"] = {"reference": reference}
    return r


def reward(v, text, reference=None):
    return v(row(text, reference))["reward"]


def test_exact_match_and_its_normalisation_options():
    assert reward(ExactMatch(), "  Paris\n", "Paris") == 1
    assert reward(ExactMatch(), "paris", "Paris") == 0
    assert reward(ExactMatch(case_sensitive=False), "PARIS", "Paris") == 1
    assert reward(ExactMatch(whitespace="exact"), "Paris ", "Paris") == 0
    assert reward(ExactMatch(whitespace="collapse"), "New   York\tCity", "New York City") == 1
    assert reward(ExactMatch(whitespace="strip"), "New  York", "New York") == 0
    assert reward(ExactMatch(whitespace="ignore"), "N e w York", "NewYork") == 1
    assert reward(ExactMatch(["Paris", "Paris, France"]), "Paris, France") == 1
    assert reward(ExactMatch(), "42", 42) == 1
    v = ExactMatch()(row("Lyon", "Paris"))
    assert v["reward"] == 0 and "'Lyon' is not the answer" in v["reason"]
    assert ExactMatch()(row("x"))["reward"] is None
    with pytest.raises(ValueError, match="whitespace="):
        ExactMatch(whitespace="squash")


def test_includes_any_all_and_case():
    inc = Includes()
    assert reward(inc, "The refund was ISSUED today.", "refund was issued") == 1
    assert reward(inc, "nothing here", "refund") == 0
    assert reward(Includes(case_sensitive=True), "REFUND", "refund") == 0
    assert reward(Includes(["order 5", "order five"]), "I found order five") == 1
    v = Includes(["refund", "apology"], require_all=True)(row("a refund only"))
    assert v["reward"] == 0 and "'apology'" in v["reason"]
    assert reward(Includes(["refund", "apology"], require_all=True), "a refund and an apology") == 1
    assert Includes()(row("anything", "   "))["reward"] is None  # an empty answer would pass everything


def test_regex_from_the_constructor_or_the_row():
    assert reward(Regex(r"order #\d+"), "see order #123 please") == 1
    assert reward(Regex(r"\d{3}-\d{4}", fullmatch=True), " 555-1234 ") == 1
    assert reward(Regex(r"\d{3}-\d{4}", fullmatch=True), "call 555-1234") == 0
    assert reward(Regex(r"yes", flags=re.IGNORECASE), "YES") == 1
    assert reward(Regex(), "id=77", r"id=\d+") == 1
    broken = Regex()(row("x", "(unclosed"))
    assert broken["reward"] is None and "not a valid regular expression" in broken["reason"]
    with pytest.raises(ValueError, match="pattern= is not a valid regular expression"):
        Regex("(")


@pytest.mark.parametrize("reply, letter", [
    ("(B)", "B"), ("Answer: B", "B"), ("**B**", "B"), ("The answer is B.", "B"),
    ("Let me think. A is wrong, C too.\nThe correct answer is (D).", "D"), ("answer: **C**", "C"),
    ("\\boxed{E}", "E"), ("\\boxed{\\text{A}}", "A"), ("b", "B"), ("C.", "C"), ("The choice is: J", "J"),
    ("Options (A) and (C) fail, so (B)", "B"),
])
def test_multiple_choice_reads_common_answer_formats(reply, letter):
    mc = MultipleChoice()
    assert mc.read_choice(reply)[0] == letter
    assert reward(mc, reply, letter) == 1
    assert reward(mc, reply, "(" + letter.lower() + ")") == 1
    assert reward(mc, reply, "F" if letter != "F" else "A") == 0


def test_multiple_choice_edge_cases():
    mc = MultipleChoice(letters="ABCD")
    assert mc.read_choice("The answer is a bit tricky")[0] is None  # an English 'a' is not a choice
    v = mc(row("I do not know", "B"))
    assert v["reward"] == 0 and "no choice letter" in v["reason"]
    assert reward(mc, "The answer is (C).", 2) == 1  # a 0-based index as the reference
    assert mc(row("(A)", "Z"))["reward"] is None
    v = mc(row("The answer is A", "B"))
    assert "read from an 'answer is/:' line" in v["reason"]
    with pytest.raises(ValueError, match="letters="):
        MultipleChoice(letters="abc")


def test_numeric_tolerance_is_stated_and_exact():
    assert reward(Numeric(), "The answer is 3.1415926", "3.1415926") == 1
    assert reward(Numeric(), "The answer is 3.1416", "3.14159") == 0
    assert reward(Numeric(tol=1e-3), "The answer is 3.1416", "3.14159") == 1
    assert reward(Numeric(rel=0.01), "about 101", 100) == 1
    assert reward(Numeric(rel=0.01), "about 102", 100) == 0
    assert reward(Numeric(), "total: $1,234.50", "1234.5") == 1
    assert reward(Numeric(), "\\boxed{\\frac{3}{4}}", 0.75) == 1
    assert reward(Numeric(), "Final answer: 1.5e3", 1500) == 1
    assert reward(Numeric(), f"answer: {10**30 + 1}", 10**30) == 0  # exact arithmetic, no float rounding
    v = Numeric(tol=0.5)(row("\\boxed{9}", "7"))
    assert v["reward"] == 0 and "tol=0.5, rel=0" in v["reason"]
    assert Numeric()(row("no digits", "7"))["reason"] == "numeric: no number in the reply's answer"
    assert Numeric()(row("5", "seven"))["reward"] is None
    assert read_number("x = -2.5") == -2.5 and read_number("50%") == 50 and read_number("1e99999") is None
    with pytest.raises(ValueError, match="answer= must be a number"):
        Numeric(answer="seven")


def test_json_valid():
    assert reward(JSONValid(), 'Sure: {"a": 1}') == 1
    assert reward(JSONValid(), "```json\n[1, 2]\n```") == 1
    assert reward(JSONValid(), "{'a': 1}") == 0
    assert reward(JSONValid(top_type="object"), "[1, 2]") == 0
    assert reward(JSONValid(top_type="array"), "[1, 2]") == 1
    assert reward(JSONValid(whole=True), 'Sure: {"a": 1}') == 0
    assert reward(JSONValid(whole=True), '```json\n{"a": 1}\n```') == 1
    deep = JSONValid()(row("[" * 100000 + "]" * 100000))
    assert deep["reward"] == 0 and deep["reason"].startswith("json: not valid JSON")
    with pytest.raises(ValueError, match="top_type="):
        JSONValid(top_type="string")


def test_json_fields_values_predicates_and_any():
    reply = '{"order": {"id": 5, "items": [{"sku": "A1", "qty": 2}], "paid": true}, "note": null}'
    ok = JSONFields({"order.id": 5, "order.items.0.sku": "A1", "order.items.0.qty": lambda q: q > 0,
                     "order.paid": True, "note": ANY})
    assert reward(ok, reply) == 1
    v = JSONFields({"order.id": 6})(row(reply))
    assert v["reward"] == 0 and v["reason"] == "json: field 'order.id' is 5, expected 6"
    v = JSONFields({"order.items.0.qty": lambda q: q > 5})(row(reply))
    assert v["reason"] == "json: field 'order.items.0.qty' failed the check <lambda> on 2"
    assert JSONFields({"order.ship": ANY})(row(reply))["reason"] == "json: field 'order.ship' is missing"
    assert reward(JSONFields({"order.paid": 1}), reply) == 0  # True is not 1
    assert reward(JSONFields({"order.id": 5.0}), reply) == 1  # 5 == 5.0
    assert reward(JSONFields({"order.id": "5"}), reply) == 0
    assert reward(JSONFields(), reply, {"order.items.0.sku": "A1"}) == 1  # fields from the row
    assert reward(JSONFields({"a": 1}), "not json") == 0
    assert JSONFields()(row(reply, "not a dict"))["reward"] is None
    with pytest.raises(ValueError, match="fields="):
        JSONFields({})


def test_verifier_decorator_plain_function_forms():
    @verifier
    def starts_with_answer(reply, reference):
        return reply.startswith(reference)

    @verifier(name="half")
    def half(reply, reference):
        return 0.5, f"half credit for {len(reply)} chars"

    @verifier
    def with_row(reply, reference, row):
        return None if reference is None else row["task_id"] == "t"

    assert starts_with_answer(row("Paris is", "Paris")) == {"reward": 1, "reason": "starts_with_answer: pass",
                                                            "verifier": "starts_with_answer", "scorer_kind": "rule"}
    assert starts_with_answer(row("It is Paris", "Paris"))["reward"] == 0
    assert half(row("abc", "x"))["reward"] == 0.5 and half(row("abc", "x"))["reason"] == "half credit for 3 chars"
    assert with_row(row("x", "y"))["reward"] == 1
    assert with_row(row("x"))["reward"] is None
    scored = run_judge([row("Paris is", "Paris"), row("Lyon", "Paris")], starts_with_answer)
    assert [r["reward"] for r in scored.rows] == [1, 0] and scored.judge_name == "starts_with_answer"
    with pytest.raises(TypeError, match="@verifier wraps a function"):
        verifier(42)


def test_the_facade_names_the_new_verifiers():
    from whileai_core.grade.verify.toolcalls import ToolCalls
    from whileai_core.grade.verify.math_equal import MathEqual

    assert wai.ExactMatch is ExactMatch and wai.Includes is Includes and wai.Regex is Regex
    assert wai.MultipleChoice is MultipleChoice and wai.Numeric is Numeric and wai.JSONValid is JSONValid
    assert wai.JSONFields is JSONFields and wai.verifier is verifier and wai.ToolCalls is ToolCalls
    assert wai.MathEqual is MathEqual
    names = {"ExactMatch", "Includes", "Regex", "MultipleChoice", "Numeric", "JSONValid", "JSONFields", "verifier",
             "ToolCalls", "MathEqual"}
    assert names <= set(wai.__all__) and names <= set(dir(wai))


def test_import_whileai_loads_none_of_the_verifier_modules():
    code = ("import sys, whileai; print([m for m in ('whileai_core.grade.verify.basic', 'whileai_core.grade.verify.math_equal', "
            "'whileai_core.grade.verify.toolcalls', 'sympy', 'math_verify') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
