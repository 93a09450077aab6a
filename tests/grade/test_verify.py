"""Verifiers under the judge contract: MathEqual, JSONSchema, the base class, combinators, redaction."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import whileai as wai
from whileai_core.grade.verify.answers import extract_answer, parse_number
from whileai_core.grade.verify.checks import JSONSchema, extract_json
from whileai_core.grade.verify.math_equal import MathEqual
from whileai_core.grade.verify.contract import AllOf, AnyOf, Verifier, VerifierError


def row(text, reference=None, **extra):
    r = {"task_id": "t", "final_text": text, **extra}
    if reference is not None:
        r["privileged"] = {"reference": reference}
    return r


@pytest.mark.parametrize(
    "reply, reference",
    [
        ("The answer is 42.", "42"),
        ("so we get \\boxed{\\frac{3}{4}}", "0.75"),
        ("\\boxed{\\dfrac{-1}{2}}", "-1/2"),
        ("Total: 1,000,000", "1000000"),
        ("answer: 50%", "50"),
        ("$2\\sqrt{2}$", str(2 * math.sqrt(2))),
        ("x = \\boxed{\\pi}", "3.14159265358979"),
        ("Final answer: 1.5e3", "1500"),
        ("\\boxed{(1, 2)}", "(1,2)"),
        ("I think the answer is \\boxed{\\text{(C)}}", "C"),
        ("We compute 2+2.\nThe result = 4", 4),
        ("answer is \\boxed{\\left(\\frac{1}{3}\\right)}", str(1 / 3)),
        ("\\boxed{10 \\text{ cm}}", "10"),
    ],
)
def test_math_equal_accepts_equivalent_answers(reply, reference):
    v = MathEqual()(row(reply, reference))
    assert v["reward"] == 1, v["reason"]


@pytest.mark.parametrize(
    "reply, reference",
    [
        ("The answer is 41.", "42"),
        ("\\boxed{\\frac{2}{3}}", "0.75"),
        ("\\boxed{(2, 1)}", "(1,2)"),
        ("\\boxed{B}", "C"),
        ("no idea", "42"),
        ("", "1"),
    ],
)
def test_math_equal_rejects_wrong_answers(reply, reference):
    v = MathEqual()(row(reply, reference))
    assert v["reward"] == 0


def test_math_tolerance_and_answer_argument():
    assert MathEqual(tol=1e-3)(row("0.3334", "1/3"))["reward"] == 1
    assert MathEqual()(row("0.3334", "1/3"))["reward"] == 0
    # two integers compare exactly (answers mod 10^9+7 are exact): a relative tolerance is for Numeric
    assert MathEqual(tol=0, rel=1e-2)(row("101", "100"))["reward"] == 0
    assert wai.Numeric(rel=1e-2)(row("101", "100"))["reward"] == 1
    assert MathEqual(answer="7")(row("it is 7"))["reward"] == 1
    with pytest.raises(ValueError, match="tol= must be a number >= 0"):
        MathEqual(tol=-1)


def test_parse_number_against_exact_fractions():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a, b = int(rng.integers(-50, 50)), int(rng.integers(1, 50))
        want = float(Fraction(a, b))
        assert parse_number(f"\\frac{{{a}}}{{{b}}}") == pytest.approx(want, abs=1e-12)
        assert parse_number(f"{a}/{b}") == pytest.approx(want, abs=1e-12)
    assert parse_number("1,234") == 1234.0
    assert parse_number("2^{10}") == 1024.0
    assert parse_number("10**1000") == 1000.0  # too large to evaluate: falls back to the last number
    assert parse_number("hello") is None
    assert extract_answer("work\n\\boxed{\\frac{1}{\\sqrt{4}}} and then \\boxed{5}") == "5"
    assert extract_answer("\\boxed{\\frac{1}{\\sqrt{4}}}") == "\\frac{1}{\\sqrt{4}}"
    assert parse_number(extract_answer("\\boxed{\\frac{1}{\\sqrt{4}}}")) == 0.5


def test_reference_resolution_and_missing_reference():
    assert MathEqual()(row("3", answer="3"))["reward"] == 1
    assert MathEqual()({"final_text": "3", "metadata": {"expected": "3"}})["reward"] == 1
    assert MathEqual(field="info.gold")({"final_text": "3", "info": {"gold": 3}})["reward"] == 1
    # final_text absent: the last assistant message
    msgs = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "it is 9"}]
    assert MathEqual()({"messages": msgs, "answer": "9"})["reward"] == 1
    v = MathEqual()(row("3"))
    assert v["reward"] is None and v["reason"] == "math_equal: no reference to check against"
    with pytest.raises(ValueError, match="field="):
        MathEqual(field="")


def test_privileged_answer_is_redacted_from_reasons():
    v = MathEqual()(row("\\boxed{41.5}", "12345.5"))
    assert v["reward"] == 0 and "12345.5" not in v["reason"]

    class Leaky(Verifier):
        def check(self, candidate, reference, row):
            return 0, f"wanted {reference} but got {candidate}"

    v = Leaky()(row("7", "the secret answer line"))
    assert "secret" not in v["reason"] and "<reference>" in v["reason"]
    # a non-privileged reference is not redacted
    assert "99" in Leaky()({"final_text": "7", "answer": "99"})["reason"]


@pytest.mark.parametrize("ref", ["0", "2", "1.5", "42", "-3"])
def test_redact_takes_whole_numbers_only(ref):
    """A short reference is blanked where it stands as a token, never out of another number."""
    from whileai_core.grade.verify.contract import redact

    for other in ("0.25", "10.5", "12", "2.0.1", "x1.5y", "421", "-30"):
        if other != ref:
            assert redact(f"timed out after {other} s", ref) == f"timed out after {other} s"
    for form in (f"got {ref}", f"got {ref}.", f"got ({ref}), then", f"{ref} != 7"):
        assert ref not in redact(form, ref).replace("<reference>", "")


def test_verifier_contract_with_run_judge():
    from whileai_core.grade.run import run_judge

    rows = [row(f"\\boxed{{{i}}}", str(i if i % 2 else i + 1), rollout_index=i) for i in range(6)]
    scored = run_judge(rows, MathEqual())
    assert [r["reward"] for r in scored.rows] == [0, 1, 0, 1, 0, 1]
    assert {r["judge_name"] for r in scored.rows} == {"math_equal"}
    assert wai.verify.MathEqual is MathEqual and issubclass(wai.Verifier, object)


SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "integer"}, "status": {"enum": ["open", "closed"]}},
    "required": ["order_id", "status"],
    "additionalProperties": False,
}


def test_json_schema_valid_and_invalid():
    js = JSONSchema(SCHEMA)
    assert js(row('```json\n{"order_id": 5, "status": "open"}\n```'))["reward"] == 1
    assert js(row('Sure! {"order_id": 5, "status": "open"} done'))["reward"] == 1
    bad = js(row('{"order_id": "5", "status": "open"}'))
    assert bad["reward"] == 0 and "order_id" in bad["reason"]
    missing = js(row('{"order_id": 5}'))
    assert missing["reward"] == 0 and "status" in missing["reason"]
    extra = js(row('{"order_id": 5, "status": "open", "x": 1}'))
    assert extra["reward"] == 0
    assert js(row("no json here"))["reward"] == 0
    # the schema can come from the row
    assert JSONSchema()(row('{"a": 1}', {"type": "object", "required": ["a"]}))["reward"] == 1
    with pytest.raises(ValueError, match="schema= is not a valid JSON Schema"):
        JSONSchema({"type": "no-such-type"})
    broken = JSONSchema()(row("{}", {"type": 5}))
    assert broken["reward"] is None and "error" in broken


def test_json_schema_agrees_with_jsonschema_on_random_documents():
    import jsonschema

    rng = np.random.default_rng(3)
    js = JSONSchema(SCHEMA)
    import json

    for _ in range(40):
        doc = {}
        if rng.random() < 0.8:
            doc["order_id"] = int(rng.integers(0, 9)) if rng.random() < 0.7 else "x"
        if rng.random() < 0.8:
            doc["status"] = str(rng.choice(["open", "closed", "lost"]))
        if rng.random() < 0.2:
            doc["extra"] = 1
        want = jsonschema.Draft202012Validator(SCHEMA).is_valid(doc)
        assert js(row(json.dumps(doc)))["reward"] == int(want)


def test_extract_json():
    assert extract_json('[1, 2]') == [1, 2]
    assert extract_json('text ```json\n{"a": 1}\n``` more') == {"a": 1}
    with pytest.raises(ValueError):
        extract_json("nothing")


def test_combinators():
    both = AllOf([MathEqual(answer="3"), JSONSchema({"type": "integer"})])
    assert both(row("3"))["reward"] == 1
    assert both(row("4"))["reward"] == 0
    either = AnyOf([MathEqual(answer="3"), MathEqual(answer="4")])
    assert either(row("4"))["reward"] == 1 and either(row("5"))["reward"] == 0
    assert AllOf([MathEqual()])(row("1"))["reward"] is None
    with pytest.raises(ValueError, match="parts="):
        AllOf([])


def test_custom_verifier_and_errors():
    class Half(Verifier):
        def check(self, candidate, reference, row):
            if candidate == "boom":
                raise VerifierError("cannot parse")
            return 0.5

    assert Half()(row("x"))["reward"] == 0.5 and Half()(row("x"))["reason"] == "Half: 0.50"
    v = Half()(row("boom"))
    assert v["reward"] is None and "cannot parse" in v["error"]
    with pytest.raises(TypeError, match="row dict"):
        Half()("not a row")


def test_minimal_schema_check_agrees_with_jsonschema_on_its_subset(monkeypatch):
    import json
    import sys

    import jsonschema

    from whileai_core.grade.verify.checks import minimal_schema_error

    schema = {"type": "object", "required": ["id", "tags"], "additionalProperties": False,
              "properties": {"id": {"type": "integer", "minimum": 0}, "name": {"type": "string", "maxLength": 5},
                             "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3}}}
    rng = np.random.default_rng(9)
    docs = []
    for _ in range(200):
        d = {}
        if rng.random() < 0.9:
            d["id"] = [int(rng.integers(-2, 5)), "7", 1.5, True][int(rng.integers(0, 4))] if rng.random() < 0.4 \
                else int(rng.integers(0, 9))
        if rng.random() < 0.5:
            d["name"] = "x" * int(rng.integers(0, 8))
        if rng.random() < 0.9:
            d["tags"] = [str(rng.choice(["a", "b", "c"])) for _ in range(int(rng.integers(0, 5)))]
        if rng.random() < 0.1:
            d["other"] = 1
        docs.append(d)
    ref = jsonschema.Draft202012Validator(schema)
    for d in docs:
        assert (minimal_schema_error(schema, d) is None) == ref.is_valid(d), d
    # without the package JSONSchema falls back to the subset and says so
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    js = JSONSchema(schema)
    ok = js(row(json.dumps({"id": 1, "tags": ["a"]})))
    bad = js(row(json.dumps({"id": -1, "tags": ["a"]})))
    assert ok["reward"] == 1 and "minimal check" in ok["reason"]
    assert bad["reward"] == 0 and "minimum" in bad["reason"]


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_json_verifier_fails_a_too_deep_reply_instead_of_crashing_the_grading_run():
    verifier = wai.verify.JSONSchema({"type": "array"})
    deep = "[" * 20000 + "]" * 20000
    out = verifier({"final_text": deep})
    assert out["reward"] == 0 and "nested deeper" in out["reason"]
    assert verifier({"final_text": "[" * 50 + "]" * 50})["reward"] == 1
    rows = [{"task_id": "a", "rollout_index": i, "final_text": text} for i, text in enumerate([deep, "[]"])]
    scored = wai.run_judge(rows, verifier)
    assert [r["reward"] for r in scored.rows] == [0, 1]


def test_parse_number_on_an_int_beyond_float_range_is_none_not_an_overflow():
    from whileai_core.grade.verify.answers import parse_number

    assert parse_number(10**400) is None and parse_number(-(10**400)) is None
    assert parse_number(12) == 12.0 and parse_number(float("inf")) is None
