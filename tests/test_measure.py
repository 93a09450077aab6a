"""measure.py on rows: pass_at, delta_report, eval_variance, holdout_size (checked against closed forms and scipy)."""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest

from whileai_core import measure, stats
from whileai_core.measure import PassAt, pass_at


def make_rows(rates, k, seed=0, prefix="t"):
    """k binary rollouts per task drawn at the given per-task pass rates."""
    rng = np.random.default_rng(seed)
    rows = []
    for t, p in enumerate(rates):
        for r in range(k):
            rows.append({"task_id": f"{prefix}{t}", "rollout_index": r, "reward": int(rng.random() < p)})
    return rows


def rows_from_counts(counts, k, prefix="t"):
    """Rows whose task t has counts[t] passes out of k."""
    return [
        {"task_id": f"{prefix}{t}", "reward": int(r < c)} for t, c in enumerate(counts) for r in range(k)
    ]


# ------------------------------------------------------------------------------------------------
# pass_at: estimators against brute force
# ------------------------------------------------------------------------------------------------
def brute(n, c, k):
    """pass@k and pass^k by enumerating every k-subset of the n rollouts."""
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    at = Fraction(sum(1 for s in subsets if any(s)), len(subsets))
    pow_ = Fraction(sum(1 for s in subsets if all(s)), len(subsets))
    return at, pow_


def test_pass_at_matches_brute_force_on_rows():
    counts = [0, 1, 2, 3, 4, 5, 6, 2, 6]
    k_roll = 6
    rows = rows_from_counts(counts, k_roll)
    for k in (1, 2, 3, 4):
        res = pass_at(rows, k=k, min_k=1)
        at = sum(brute(k_roll, c, k)[0] for c in counts) / len(counts)
        pw = sum(brute(k_roll, c, k)[1] for c in counts) / len(counts)
        assert res.pass_at_k == pytest.approx(float(at), abs=1e-12)
        assert res.pass_pow_k == pytest.approx(float(pw), abs=1e-12)
        assert res.pass_at_1 == pytest.approx(sum(counts) / (len(counts) * k_roll))
        assert res.n_groups == len(counts) and res.n_rows == len(rows) and res.k == k


def test_pass_at_varying_rollouts_per_task_uses_each_tasks_n():
    # task a: 5 rollouts 2 pass; task b: 8 rollouts 6 pass; task c: 4 rollouts 4 pass; task d: 2 rollouts (short)
    spec = {"a": (5, 2), "b": (8, 6), "c": (4, 4), "d": (2, 1)}
    rows = [{"task_id": t, "reward": int(i < c)} for t, (n, c) in spec.items() for i in range(n)]
    res = pass_at(rows, k=4)
    assert res.n_excluded == 1 and res.n_groups_at_k == 3 and res.n_groups == 4
    want_at = sum(float(brute(n, c, 4)[0]) for t, (n, c) in spec.items() if t != "d") / 3
    want_pow = sum(float(brute(n, c, 4)[1]) for t, (n, c) in spec.items() if t != "d") / 3
    assert res.pass_at_k == pytest.approx(want_at)
    assert res.pass_pow_k == pytest.approx(want_pow)
    # pass@1 is the macro average over all tasks, the short one included
    assert res.pass_at_1 == pytest.approx((2 / 5 + 6 / 8 + 1 + 1 / 2) / 4)
    assert "1 task(s) with fewer than k=4" in res.note


def test_default_k_is_smallest_group_with_two_or_more():
    rows = rows_from_counts([1, 2, 3], 5) + [{"task_id": "solo", "reward": 1}]
    res = pass_at(rows, min_k=1)
    assert res.k == 5 and res.n_excluded == 1


# ------------------------------------------------------------------------------------------------
# pass_at: intervals
# ------------------------------------------------------------------------------------------------
def test_pass_at_interval_matches_scipy_bootstrap():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    counts = rng.binomial(4, rng.beta(2, 1.2, size=300))
    res = pass_at(rows_from_counts(counts, 4), draws=20000, seed=1)
    rates = counts / 4
    ref = scipy_stats.bootstrap((rates,), np.mean, n_resamples=20000, method="percentile", rng=2, batch=2000)
    # two independent Monte Carlo runs of the same bootstrap: endpoint MC sd ~0.0005 here; tolerance 0.005
    assert res.ci95[0] == pytest.approx(ref.confidence_interval.low, abs=0.005)
    assert res.ci95[1] == pytest.approx(ref.confidence_interval.high, abs=0.005)
    ref_bca = scipy_stats.bootstrap((rates,), np.mean, n_resamples=20000, method="BCa", rng=2, batch=2000)
    bca = pass_at(rows_from_counts(counts, 4), draws=20000, seed=1, method="BCa")
    assert bca.ci95[0] == pytest.approx(ref_bca.confidence_interval.low, abs=0.005)
    assert bca.ci95[1] == pytest.approx(ref_bca.confidence_interval.high, abs=0.005)
    pw = stats.pass_pow_k(np.full(len(counts), 4), counts, 4)
    ref_pow = scipy_stats.bootstrap((pw,), np.mean, n_resamples=20000, method="percentile", rng=2, batch=2000)
    assert res.pass_pow_k_ci95[0] == pytest.approx(ref_pow.confidence_interval.low, abs=0.005)
    assert res.pass_pow_k_ci95[1] == pytest.approx(ref_pow.confidence_interval.high, abs=0.005)


def test_pass_at_is_seeded_and_contains_estimate():
    rows = make_rows(np.linspace(0.1, 0.9, 40), 4, seed=5)
    a, b = pass_at(rows, seed=7), pass_at(rows, seed=7)
    assert a.ci95 == b.ci95 and a.pass_pow_k_ci95 == b.pass_pow_k_ci95
    assert a.ci95[0] <= a.pass_at_1 <= a.ci95[1]
    assert a.pass_at_k_ci95[0] <= a.pass_at_k <= a.pass_at_k_ci95[1]
    assert a.headroom_ci95[0] <= a.headroom <= a.headroom_ci95[1]
    wide = pass_at(rows, level=0.99, seed=7)
    assert wide.ci95[0] <= a.ci95[0] and wide.ci95[1] >= a.ci95[1]


@pytest.mark.slow
def test_pass_at_interval_coverage_at_40_tasks():
    """Seeded simulation: the 95% interval covers the true (super-population) pass@1 in >= 93% of runs."""
    rng = np.random.default_rng(11)
    runs, n_tasks, k = 1000, 40, 4
    true = 0.6  # p_i ~ Beta(3, 2), mean 0.6
    covered = 0
    for r in range(runs):
        counts = rng.binomial(k, rng.beta(3, 2, size=n_tasks))
        res = pass_at(rows_from_counts(counts, k), draws=1000, seed=r)
        covered += res.ci95[0] <= true <= res.ci95[1]
    rate = covered / runs
    assert rate >= 0.93, f"coverage {rate:.3f} over {runs} runs"


# ------------------------------------------------------------------------------------------------
# pass_at: printed form, dict, inputs, edge cases
# ------------------------------------------------------------------------------------------------
LINE = re.compile(
    r"^pass@1 \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| pass\^4 \(pass_pow_k\) \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| "
    r"pass@4 \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| headroom \d\.\d\d \(16 groups, k=4\)$"
)


def test_printed_line_has_the_seed_form():
    res = pass_at(make_rows([0.67] * 16, 4, seed=0))
    assert LINE.match(str(res)), str(res)
    p1 = f"{res.pass_at_1:.2f} [{res.ci95[0]:.2f}..{res.ci95[1]:.2f}]"
    assert str(res).startswith(f"pass@1 {p1} | ")
    assert f"headroom {res.headroom:.2f} " in str(res)


def test_printed_line_missing_values_and_note():
    res = pass_at(rows_from_counts([1, 2], 3))
    s = str(res)
    assert "pass^3 (pass_pow_k) n/a | pass@3 n/a | headroom n/a (2 groups, k=3; " in s
    assert s.startswith("pass@1 0.50 | ")  # no interval below MIN_CI_TASKS
    assert res.ci95 is None and "bootstrap needs 3" in res.note


def test_to_dict_round_trips_fields():
    res = pass_at(make_rows([0.3, 0.5, 0.9, 0.7], 4))
    d = res.to_dict()
    assert d["pass_at_1"] == res.pass_at_1 and d["headroom"] == res.headroom
    assert d["ci95"] == list(res.ci95) and d["k"] == 4 and d["n_groups"] == 4
    assert set(d["per_task"]) == {"t0", "t1", "t2", "t3"}
    assert isinstance(res, PassAt)
    with pytest.raises(AttributeError):
        res.k = 3  # frozen


def test_accepts_object_with_rows_and_jsonl(tmp_path):
    from whileai_core.rows import write_jsonl

    rows = make_rows([0.2, 0.5, 0.8], 4)

    class Scored:
        def __init__(self, rows):
            self.rows = rows

    path = write_jsonl(tmp_path / "r.jsonl", rows)
    assert pass_at(Scored(rows)).pass_at_1 == pass_at(rows).pass_at_1 == pass_at(path).pass_at_1


def test_only_exact_binary_rewards_count():
    rows = rows_from_counts([2, 3, 1], 4)
    extra = [
        {"task_id": "t0", "reward": None},
        {"task_id": "t0", "reward": 0.5},
        {"task_id": "t1", "reward": True},
        {"task_id": "t2", "reward": 1.0},
    ]
    res = pass_at(rows + extra)
    assert res.n_rows == 13 and res.n_skipped == 3
    assert res.per_task["t2"] == pytest.approx(2 / 5)
    assert "1 ungraded" in res.note and "1 partial" in res.note and "1 bool" in res.note


def test_all_pass_and_all_fail():
    up = pass_at(rows_from_counts([4] * 10, 4))
    assert up.pass_at_1 == 1 and up.pass_pow_k == 1 and up.ci95 == (1.0, 1.0)
    assert "every row scored 1 (40 of 40)" in up.note
    down = pass_at(rows_from_counts([0] * 10, 4), method="BCa")
    assert down.pass_at_1 == 0 and down.pass_at_k == 0 and down.ci95 == (0.0, 0.0)
    assert "every row scored 0" in down.note


def test_single_task_and_k_above_every_group():
    one = pass_at(rows_from_counts([3], 4))
    assert one.pass_at_1 == 0.75 and one.ci95 is None and one.n_groups == 1
    big = pass_at(rows_from_counts([1, 2, 3], 4), k=6)
    assert big.pass_at_k is None and big.pass_pow_k is None and big.n_excluded == 3
    assert "no task has k=6" in big.note


def test_no_graded_rows_and_judge_failure():
    res = pass_at([{"task_id": "a", "reward": None, "judge_status": "error", "reason": "timeout"}] * 3)
    assert res.pass_at_1 is None and "judge failed on all 3 rows" in res.note and "timeout" in res.note
    assert pass_at([]).note == "no rows"


def test_nan_reward_and_bad_arguments_raise():
    with pytest.raises(ValueError, match=r"rows\[1\].*NaN"):
        pass_at([{"task_id": "a", "reward": 1}, {"task_id": "a", "reward": float("nan")}])
    with pytest.raises(ValueError, match=r"k= must be an int >= 1; got 0"):
        pass_at(rows_from_counts([1], 4), k=0)
    with pytest.raises(ValueError, match=r"level="):
        pass_at(rows_from_counts([1], 4), level=95)
    with pytest.raises(ValueError, match=r"method="):
        pass_at(rows_from_counts([1], 4), method="normal")
    with pytest.raises(ValueError, match=r"draws="):
        pass_at(rows_from_counts([1], 4), draws=0)
    with pytest.raises(TypeError, match=r"rows="):
        pass_at({"task_id": "a", "reward": 1})
