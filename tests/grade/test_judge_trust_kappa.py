"""judge_trust prints kappa with its interval and n, and holds kappa's floor on the interval's lower bound."""

from __future__ import annotations

import json

import pytest

from whileai_core.grade.trust import judge_trust
from whileai_core.measure.stats import cohen_kappa_interval


def table_rows(tp: int, fp: int, fn: int, tn: int) -> list[dict]:
    """Graded rows with human gold labels: (judge, gold) = (1, 1) tp times, (1, 0) fp, (0, 1) fn, (0, 0) tn.
    One row per task and one reply length, so the halves and the length check have nothing to flag."""
    pairs = [(1, 1)] * tp + [(1, 0)] * fp + [(0, 1)] * fn + [(0, 0)] * tn
    return [{"task_id": f"t{i}", "rollout_index": 0, "final_text": "the same reply", "reward": jr, "gold_reward": gr,
             "gold_kind": "human"} for i, (jr, gr) in enumerate(pairs)]


def test_kappa_floor_is_held_on_the_lower_bound_not_the_estimate():
    # 200 labels, 91% agreement (Wilson lower bound 0.86 clears 0.8), kappa 0.71 clears 0.6 as a point, but its
    # 95% interval 0.59..0.84 does not: the sample cannot show the judge is above the floor
    rows = table_rows(30, 8, 10, 152)
    rep = judge_trust(rows)
    assert rep.agreement_ci[0] >= 0.8 and rep.kappa == pytest.approx(0.7134, abs=1e-4)
    j, g = [r["reward"] for r in rows], [r["gold_reward"] for r in rows]
    assert rep.kappa_ci == pytest.approx(cohen_kappa_interval(j, g, labels=[0, 1]), abs=1e-15)
    assert rep.kappa_ci[0] == pytest.approx(0.5892, abs=1e-4)
    assert not rep.ok and rep.verdict == "FAIL"
    assert [w for w in rep.warnings if "kappa" in w] == [(
        "kappa 0.71 (95% CI 0.59..0.84, n=200): its lower bound is under 0.60; the estimate clears the floor but "
        "the sample is too small to show it")]
    text = str(rep)
    assert "kappa 0.71 (95% CI 0.59..0.84, n=200)" in text
    assert "floors on the lower bounds: agreement >= 80%, kappa >= 0.60" in text
    assert json.loads(json.dumps(rep.to_dict()))["kappa_ci"] == pytest.approx(list(rep.kappa_ci))


def test_four_times_the_labels_at_the_same_rates_pass():
    rep = judge_trust(table_rows(120, 32, 40, 608))
    assert rep.kappa == pytest.approx(0.7134, abs=1e-4) and rep.kappa_ci[0] > 0.6
    assert rep.ok and rep.verdict == "PASS", rep.table()


def test_every_number_in_the_table_has_its_interval_or_is_a_count():
    rows = table_rows(60, 6, 6, 128)
    for i, r in enumerate(rows):
        r["final_text"] = "short" if i % 2 else "a much longer reply " * 5
        r["verdict"] = r["reward"]  # what the judge below says again (the re-judged copy has no reward)
    rep = judge_trust(rows, judge=lambda row: {"reward": row["verdict"]})
    table = rep.table()
    assert "half a: agreement" in table and "] (n=" in table.split("half a:")[1].splitlines()[0]
    for line in table.splitlines():
        if line.strip().startswith("gold="):
            assert line.count("] (n=") == 2, line  # short and long pass rates, each with [lo..hi] and n
    rejudge = next(line for line in table.splitlines() if "re-judge flips" in line)
    assert rejudge.startswith("  re-judge flips 0% [0%..") and "filler flips +0/-0 of" in rejudge


def test_undefined_kappa_prints_so_and_fails():
    rep = judge_trust(table_rows(20, 0, 0, 0))
    assert rep.kappa is None and rep.kappa_ci is None and not rep.ok
    assert "kappa undefined" in str(rep)


def test_a_zero_width_kappa_says_why():
    """A judge that passes everything at 67% agreement: kappa 0 in every resample, which is not "every item
    agreed" (issue 32); a judge that agrees on every item still says that."""
    constant = str(judge_trust(table_rows(160, 80, 0, 0)))
    assert "agreement 67%" in constant and "every item agreed" not in constant
    assert "zero width: the judge said pass on every item, so kappa is 0 in every resample" in constant
    perfect = str(judge_trust(table_rows(160, 0, 0, 80)))
    assert "kappa 1.00 (95% CI 1.00..1.00, n=240; zero width: every item agreed)" in perfect
