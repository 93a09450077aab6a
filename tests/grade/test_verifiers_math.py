"""MathEqual on math-verify: a labelled table of answer pairs, exact integers, reasons, deadline, abstentions."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from math_pairs import MATH_PAIRS

from whileai_core.grade.run import run_judge
from whileai_core.grade.verify.math_equal import MathEqual, call_with_deadline

MATH = MathEqual()


def row(text, reference=None, **extra):
    r = {"task_id": "t", "final_text": text, **extra}
    if reference is not None:
        r["privileged"] = {"reference": reference}
    return r


def test_the_table_covers_every_kind_of_answer():
    kinds = {c for c, *_ in MATH_PAIRS}
    assert len(MATH_PAIRS) >= 60
    assert kinds >= {"integer", "big integer", "fraction", "decimal", "latex", "boxed", "set", "tuple", "interval",
                     "expression", "units", "percent"}
    assert sum(lab for *_, lab in MATH_PAIRS) >= 25 and sum(not lab for *_, lab in MATH_PAIRS) >= 25


@pytest.mark.parametrize("kind, reply, reference, label", MATH_PAIRS,
                         ids=[f"{i}-{c}" for i, (c, *_) in enumerate(MATH_PAIRS)])
def test_math_equal_matches_every_label(kind, reply, reference, label):
    v = MATH({"final_text": reply, "answer": reference})
    assert v["reward"] == int(label), v["reason"]
    assert v["verifier"] == "math_equal" and v["scorer_kind"] == "rule"


def test_the_failures_the_issue_names():
    # exact integers: no relative tolerance turns 10^9+8 into 10^9+7
    v = MATH(row("\\boxed{1000000008}", "1000000007"))
    assert v["reward"] == 0
    assert "reply read as integer 1000000008" in v["reason"] and "reference as integer" in v["reason"]
    assert MathEqual(rel=1e-2)({"final_text": "101", "answer": "100"})["reward"] == 0  # never rel between integers
    assert MathEqual(rel=1e-2)({"final_text": "101.0", "answer": "100.5"})["reward"] == 1  # decimals: as stated
    assert MathEqual(tol=1e-3)({"final_text": "0.3334", "answer": "1/3"})["reward"] == 1
    # intervals keep their ends; sets are sets
    v = MATH({"final_text": "$[2, 5)$", "answer": "(2, 5)"})
    assert v["reason"] == "math: not equal (reply read as interval [2, 5), reference as interval (2, 5))"
    assert MATH({"final_text": "\\boxed{\\{1,2,3\\}}", "answer": "\\{3,2,1\\}"})["reward"] == 1
    assert MATH({"final_text": "$\\binom{5}{2}$", "answer": "2"})["reward"] == 0


def test_reasons_name_both_sides_and_hide_a_privileged_reference():
    open_ref = MATH({"final_text": "\\boxed{\\frac{2}{3}}", "answer": "0.75"})
    assert open_ref["reason"] == "math: not equal (reply read as fraction 2/3, reference as decimal 0.75)"
    hidden = MATH(row("\\boxed{\\frac{2}{3}}", "12345/7"))
    assert hidden["reward"] == 0
    assert "reply read as fraction 2/3" in hidden["reason"] and "reference as fraction)" in hidden["reason"]
    assert "12345" not in hidden["reason"] and "1763" not in hidden["reason"]


def test_text_and_choice_answers_compare_as_text():
    assert MATH(row("I think the answer is \\boxed{\\text{(C)}}", "C"))["reward"] == 1
    assert MATH(row("The answer is (B).", "C"))["reward"] == 0
    v = MATH({"final_text": "The capital is \\boxed{\\text{Paris}}", "answer": "Paris"})
    assert v["reward"] == 1 and "as text" in v["reason"]


def test_an_unreadable_reference_abstains_and_a_missing_one_too():
    v = MATH(row("\\boxed{3}", "}{\\frac{"))
    assert v["reward"] is None and "could not read the reference" in v["reason"]
    assert MATH(row("3"))["reward"] is None
    assert MATH({"final_text": "3", "answer": True})["reward"] is None


@pytest.mark.parametrize("reply", ["", "no idea", "\\boxed{", "}}}}{{{{", "$$$$", "\\frac{1}{0}", "1e999999",
                                   "$10^{10^{10}}$", "\\boxed{99999999!}", "\\boxed{2^{2^{2^{2^{2}}}}}",
                                   "9" * 5000, str(10**400) + ".5", "\\boxed{" + "(" * 300 + "1" + ")" * 300 + "}",
                                   "\x00\ud800", "\\boxed{\\sqrt{-1}}"])
def test_junk_and_huge_replies_score_zero_with_a_reason(reply):
    v = MathEqual(timeout=1.0)(row(reply, "1"))  # deeply nested parentheses run into the deadline
    assert v["reward"] == 0 and v["reason"].startswith("math:")


def test_answer_argument_numbers_and_tuples_as_reference():
    assert MathEqual(answer=7)(row("it is \\boxed{7}"))["reward"] == 1
    assert MathEqual(answer=0.5)(row("\\boxed{\\frac{1}{2}}"))["reward"] == 1
    assert MathEqual(answer=(1, 2))(row("\\boxed{(1, 2)}"))["reward"] == 1
    assert MathEqual(answer=10**30)(row(f"\\boxed{{{10**30 + 1}}}"))["reward"] == 0
    for bad in ({"tol": -1}, {"rel": float("nan")}, {"timeout": 0}, {"float_rounding": 0}, {"max_digits": True}):
        with pytest.raises(ValueError, match=f"{next(iter(bad))}="):
            MathEqual(**bad)


def test_deadline_interrupts_in_the_main_thread_and_in_workers():
    def spin():
        while True:
            pass

    assert call_with_deadline(spin, 0.2) == (None, True)
    assert call_with_deadline(lambda: 42, 5.0) == (42, False)
    got = []
    t = threading.Thread(target=lambda: got.append(call_with_deadline(spin, 0.2)))
    t.start()
    t.join(30)
    assert got == [(None, True)]


def test_a_check_past_its_deadline_scores_zero_with_the_reason():
    class Stuck(MathEqual):  # a comparison that never ends, standing in for a pathological expression
        def _check_math(self, candidate, ref_text, hidden):
            while True:
                pass

    v = Stuck(timeout=0.2)(row("\\boxed{1}", "1"))
    assert v["reward"] == 0 and v["reason"] == "math: timed out after 0.2 s reading or comparing the answers (scored 0)"


def test_graded_from_worker_threads_like_run_judge_does():
    rows = [row(f"\\boxed{{{i}}}", str(i if i % 2 else i + 1), rollout_index=i) for i in range(8)]
    scored = run_judge(rows, MathEqual(), concurrency=4)
    assert [r["reward"] for r in scored.rows] == [0, 1, 0, 1, 0, 1, 0, 1]
    assert {r["judge_status"] for r in scored.rows} == {"ok"}


def test_math_verify_and_sympy_load_only_when_a_row_is_checked():
    code = ("import sys, whileai_core.grade.verify.math_equal as m; before = 'sympy' in sys.modules or 'math_verify' in "
            "sys.modules; m.MathEqual()({'final_text': '1', 'answer': '1'}); print(before, 'math_verify' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_issue28_table_has_no_false_pass():
    from math_pairs import MATH_PAIRS_28

    assert len(MATH_PAIRS_28) >= 100
    kinds = {c for c, *_ in MATH_PAIRS_28}
    assert kinds >= {"scientific", "tiny", "huge", "hedge", "bare latex", "units", "interval", "set"}
    wrong = []
    for kind, reply, reference, label in MATH_PAIRS_28:
        v = MATH({"final_text": reply, "answer": reference})
        if v["reward"] != int(label):
            wrong.append((kind, reply, reference, label, v["reason"]))
    assert not [w for w in wrong if not w[3]], wrong  # 0 false passes
    assert not wrong, wrong  # and, measured, 0 false fails
