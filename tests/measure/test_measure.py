"""The row-level measures pass_at, delta_report, eval_variance, holdout_size (checked against closed forms and scipy)."""

from __future__ import annotations

import itertools
import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest

import whileai as wai
from whileai_core.measure import delta, power, stats
from whileai_core.measure.between_runs import eval_variance
from whileai_core.measure.delta import DeltaReport, delta_report
from whileai_core.measure.pass_at import PassAt, pass_at
from whileai_core.measure.power import holdout_size


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
    res = pass_at(rows_from_counts(counts, 4), draws=20000, seed=1, k_interval="bootstrap")
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
    r"pass@4 \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| headroom \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \(16 groups, k=4(; .*)?\)$"
)


def test_printed_line_has_the_seed_form():
    res = pass_at(make_rows([0.67] * 16, 4, seed=0))
    assert LINE.match(str(res)), str(res)
    p1 = f"{res.pass_at_1:.2f} [{res.ci95[0]:.2f}..{res.ci95[1]:.2f}]"
    assert str(res).startswith(f"pass@1 {p1} | ")
    assert f"headroom {res.headroom:.2f} " in str(res)


def test_one_rollout_a_task_names_pass_at_1_once():
    """k=1: the line once read 'pass@1 0.68 ... | pass^1 (pass_pow_k) n/a | pass@1 n/a' (issue 32)."""
    res = pass_at(rows_from_counts([1, 0, 1, 1, 0, 1, 1, 1], 1))
    s = str(res)
    assert s.count("pass@1") == 1 and "pass^1" not in s, s
    assert " | pass^k, pass@k and headroom n/a (8 groups, k=1; " in s and "set repeats>=4" in s


def test_printed_line_missing_values_and_note():
    res = pass_at(rows_from_counts([1, 2], 3))
    s = str(res)
    assert "pass^3 (pass_pow_k) n/a | pass@3 n/a | headroom n/a (2 groups, k=3; " in s
    assert s.startswith("pass@1 0.50 (no interval) | ")  # no interval below MIN_CI_TASKS
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


# ------------------------------------------------------------------------------------------------
# delta_report
# ------------------------------------------------------------------------------------------------


def test_delta_matches_closed_form_scipy_permutation_and_bootstrap():
    rng = np.random.default_rng(2)
    cb = rng.binomial(4, 0.5, size=12)
    ca = rng.binomial(4, 0.7, size=12)
    rep = delta_report(rows_from_counts(cb, 4), rows_from_counts(ca, 4), draws=20000)
    rb, ra = cb / 4, ca / 4
    assert rep.delta == pytest.approx(np.mean(ra - rb)) and rep.n_paired == 12
    assert rep.before == pytest.approx(rb.mean()) and rep.after == pytest.approx(ra.mean())
    scipy_stats = pytest.importorskip("scipy.stats")
    ref = scipy_stats.permutation_test((ra, rb), lambda a, b, axis: np.mean(a - b, axis=axis),
                                       permutation_type="samples", n_resamples=np.inf, vectorized=True)
    assert rep.p_value == pytest.approx(ref.pvalue, abs=1e-12) and rep.p_exact
    assert rep.se == pytest.approx(scipy_stats.sem(ra - rb))
    # interval: 60 tasks, against scipy's paired bootstrap; replicates sit on a 1/240 lattice, so two
    # independent Monte Carlo runs may differ by a lattice step or two: tolerance 0.01
    cb, ca = rng.binomial(4, 0.5, size=60), rng.binomial(4, 0.6, size=60)
    rep = delta_report(rows_from_counts(cb, 4), rows_from_counts(ca, 4), draws=20000)
    boot = scipy_stats.bootstrap((ca / 4, cb / 4), lambda a, b, axis: np.mean(a - b, axis=axis), paired=True,
                                 n_resamples=20000, method="percentile", rng=3, vectorized=True)
    assert rep.ci[0] == pytest.approx(boot.confidence_interval.low, abs=0.01)
    assert rep.ci[1] == pytest.approx(boot.confidence_interval.high, abs=0.01)


def test_delta_verdicts_and_printed_line():
    rates = np.linspace(0.2, 0.7, 60)
    before = make_rows(rates, 4, seed=1)
    up = delta_report(before, make_rows(rates + 0.25, 4, seed=2))
    assert up.verdict == "better" and up.better and up.reason is None
    assert up.ci[0] > 0 and up.p_value <= 0.05
    down = delta_report(make_rows(rates + 0.25, 4, seed=2), before)
    assert down.verdict == "worse" and down.worse and down.delta == pytest.approx(-up.delta)
    s = str(up)
    assert s.startswith("better: pass@1 ")
    assert f"delta {up.delta:+.3f} [{up.ci[0]:+.3f}..{up.ci[1]:+.3f}]" in s
    assert f"p={up.p_value:.4g}" in s and "(60 paired tasks" in s and f"se {up.se:.3f}" in s
    d = up.to_dict()
    assert d["ci"] == list(up.ci) and d["verdict"] == "better" and d["n_paired"] == 60
    assert isinstance(up, DeltaReport) and delta.compare is delta_report


def test_delta_min_effect_and_too_few_tasks():
    rates = np.linspace(0.2, 0.7, 60)
    rep = delta_report(make_rows(rates, 4, seed=1), make_rows(rates + 0.25, 4, seed=2), min_effect=0.5)
    assert rep.verdict == "inconclusive" and "min_effect" in rep.reason
    few = delta_report(rows_from_counts([0, 1], 4), rows_from_counts([4, 4], 4))
    assert few.verdict == "inconclusive" and few.ci is None and "too few paired tasks" in few.reason
    assert few.delta == pytest.approx((1 + 0.75) / 2) and few.p_value == pytest.approx(0.5)  # exact, 2 flips


def test_delta_reports_unpaired_tasks():
    before = rows_from_counts([1, 2, 3, 4, 0], 4, prefix="t")
    after = rows_from_counts([2, 2, 3, 4], 4, prefix="t") + rows_from_counts([1], 4, prefix="new")
    rep = delta_report(before, after)
    assert rep.unpaired_before == ["t4"] and rep.unpaired_after == ["new0"] and rep.n_paired == 4
    assert rep.delta == pytest.approx(0.25 / 4)
    assert "1 before-only and 1 after-only tasks left out" in str(rep)
    none = delta_report(rows_from_counts([1], 4, prefix="a"), rows_from_counts([1], 4, prefix="b"))
    assert none.verdict == "inconclusive" and none.reason == "no paired tasks" and none.delta is None
    assert "delta n/a" in str(none)


def test_delta_inside_noise_is_refused():
    rates = np.linspace(0.3, 0.7, 80)
    runs = [make_rows(rates, 4, seed=s) for s in range(3)]
    noise = eval_variance(*runs)
    # after: the first run with 8 tasks gaining one pass each -> delta = 8 * 0.25 / 80 = 0.025
    after = [dict(r) for r in runs[0]]
    gained = set()
    for r in after:
        if r["reward"] == 0 and r["task_id"] not in gained and len(gained) < 8:
            r["reward"] = 1
            gained.add(r["task_id"])
    rep = delta_report(runs[0], after, noise=noise)
    assert rep.delta == pytest.approx(0.025)
    t = pytest.importorskip("scipy.stats").t
    assert rep.noise_band == pytest.approx(t.ppf(0.975, 2) * noise.sd * math.sqrt(2)) and rep.noise_band > 0.025
    assert rep.verdict == "inconclusive" and rep.reason.startswith("inside noise")
    assert "noise band" in str(rep)
    plain = delta_report(runs[0], after)  # the same change without noise data is judged on interval and p alone
    assert plain.noise_band is None and not (plain.reason or "").startswith("inside noise")
    # a scalar run sd works the same way, and a big one refuses even a large change
    big = delta_report(runs[0], make_rows(rates + 0.25, 4, seed=5), noise=0.2)
    assert big.verdict == "inconclusive" and big.reason.startswith("inside noise")
    assert big.noise_band == pytest.approx(stats.z_value(0.95) * 0.2 * math.sqrt(2))  # a bare sd: df unknown
    flat = delta_report(runs[0], after, noise=noise, noise_multiplier=2.0)  # the old flat rule, by hand
    assert flat.noise_band == pytest.approx(2 * noise.sd)
    with pytest.raises(ValueError, match=r"noise="):
        delta_report(runs[0], after, noise="big")
    with pytest.raises(ValueError, match=r"alpha="):
        delta_report(runs[0], after, alpha=5)
    with pytest.raises(ValueError, match=r"min_effect="):
        delta_report(runs[0], after, min_effect=-1)


@pytest.mark.slow
def test_aa_false_alarm_rate_at_most_alpha_plus_one_point():
    """600 A/A comparisons (same model, same tasks, independent reruns): 'better' or 'worse' <= alpha + 1%."""
    rng = np.random.default_rng(21)
    runs, n_tasks, k, alpha = 600, 40, 4, 0.05
    p = rng.beta(2, 2, size=n_tasks)
    alarms = 0
    for r in range(runs):
        cb = rng.binomial(k, p)
        ca = rng.binomial(k, p)
        rep = delta_report(rows_from_counts(cb, k), rows_from_counts(ca, k), draws=1000, seed=r, alpha=alpha)
        alarms += rep.verdict != "inconclusive"
    assert alarms / runs <= alpha + 0.01, f"{alarms} false alarms in {runs} A/A runs"


def test_delta_detects_a_real_effect_most_of_the_time():
    rng = np.random.default_rng(5)
    hits = 0
    for r in range(40):
        p = rng.beta(2, 2, size=80)
        cb = rng.binomial(4, p)
        ca = rng.binomial(4, np.clip(p + 0.15, 0, 1))
        hits += delta_report(rows_from_counts(cb, 4), rows_from_counts(ca, 4), draws=500, seed=r).better
    assert hits >= 32  # power is ~0.99 here (holdout_size says ~40 tasks suffice for +0.15)


# ------------------------------------------------------------------------------------------------
# eval_variance
# ------------------------------------------------------------------------------------------------
def test_eval_variance_closed_forms():
    rates = np.linspace(0.1, 0.9, 50)
    runs = [make_rows(rates, 4, seed=s) for s in range(4)]
    ev = eval_variance(*runs)
    means = [pass_at(r).pass_at_1 for r in runs]
    assert ev.means == pytest.approx(means) and ev.n_runs == 4 and ev.n_tasks == 50
    assert ev.run_sd == pytest.approx(np.std(means, ddof=1)) and ev.source == "reruns"
    scipy_stats = pytest.importorskip("scipy.stats")
    lo = math.sqrt(3 * ev.run_sd**2 / scipy_stats.chi2.ppf(0.975, 3))
    assert ev.run_sd_ci[0] == pytest.approx(lo) and ev.run_sd_ci[0] < ev.run_sd < ev.run_sd_ci[1]
    # within-task model from one run: sqrt(mean_i c(k-c)/(k(k-1)) / (k n))
    one = eval_variance(runs[0])
    c = np.array([sum(r["reward"] for r in runs[0] if r["task_id"] == f"t{t}") for t in range(50)])
    want = math.sqrt(np.mean(c * (4 - c) / 12) / (4 * 50))
    assert one.model_run_sd == pytest.approx(want) and one.run_sd is None and one.sd == one.model_run_sd
    assert "1 run" in one.note and "(within-task model from 1 run of 50 tasks, no interval)" in str(one)
    assert "3 runs" not in str(ev) and "(4 runs, 50 tasks)" in str(ev)
    assert ev.to_dict()["noise_band"] == pytest.approx(scipy_stats.t.ppf(0.975, 3) * ev.run_sd * math.sqrt(2))


def test_eval_variance_model_predicts_rerun_spread():
    """Miller 2024 section 6: the within-task model predicts the sd of pass@1 across reruns of fixed tasks."""
    rng = np.random.default_rng(3)
    p = rng.beta(2, 2, size=200)
    reruns = [rows_from_counts(rng.binomial(4, p), 4) for _ in range(60)]
    measured = eval_variance(*reruns)
    assert measured.model_run_sd == pytest.approx(measured.run_sd, rel=0.25)  # 60 reruns: sd of sd ~9%


def test_eval_variance_uneven_runs_and_errors():
    a = rows_from_counts([1, 2, 3], 4)
    b = rows_from_counts([1, 2], 4)
    ev = eval_variance(a, b)
    assert ev.n_tasks == 2 and "do not cover the same tasks" in ev.note and "two is a difference" in ev.note
    with pytest.raises(ValueError, match=r"at least one run"):
        eval_variance()
    with pytest.raises(TypeError, match=r"one re-run's rows"):
        eval_variance({"task_id": "a", "reward": 1})


# ------------------------------------------------------------------------------------------------
# holdout_size
# ------------------------------------------------------------------------------------------------
def t_plan(effect, var, alpha=0.05, power=0.8):
    """The permutation-variance t formula, iterated to its fixed point with scipy's t quantiles."""
    t = pytest.importorskip("scipy.stats").t
    n = 2
    while True:
        want = math.ceil((t.ppf(power, n - 1) * math.sqrt(var) + t.ppf(1 - alpha / 2, n - 1) *
                          math.sqrt(var + effect**2)) ** 2 / effect**2 - 1e-9)
        if want == n:
            return n
        n = want


def test_holdout_size_closed_forms():
    assert stats.tasks_needed(0.03, 1 / 9) == 969  # Miller's example (z formula): n = 968.997
    given = holdout_size(0.03, task_sd=1 / 3)  # the plan adds t quantiles and the sign-flip null's variance
    assert given.method == "t" and given.n_tasks == t_plan(0.03, 1 / 9) == 977
    res = holdout_size(0.05, base=0.6, k=4)  # 0.05 needs k x n above HOLDOUT_SIM_MAX_LATTICE: the t plan
    var = (0.6 * 0.4 + 0.65 * 0.35) / 4
    assert res.variance == pytest.approx(var) and res.method == "t" and res.n_tasks == t_plan(0.05, var)
    assert int(res) == res.n_tasks and res.sd_source == "model"
    # more rollouts per task shrink the within-task term by 1/k
    assert holdout_size(0.05, k=16).n_tasks < holdout_size(0.05, k=4).n_tasks < holdout_size(0.05, k=1).n_tasks
    om = holdout_size(0.05, k=None, omega2=1 / 9)
    assert om.n_tasks == t_plan(0.05, 1 / 9)
    assert "tasks to detect +0.050 at 80% power" in str(res) and res.to_dict()["n_tasks"] == res.n_tasks


def test_holdout_size_simulates_the_rule_it_plans_for():
    """A large effect: the z formula says 7 tasks, but 7 non-zero signs cannot reach p <= 0.05 often enough."""
    res = holdout_size(0.5, base=0.3, k=4)
    assert res.method == "simulated" and res.sim_runs == 2000
    assert stats.tasks_needed(0.5, res.variance) < res.n_tasks
    lo, hi = res.sim_power_ci
    assert lo <= res.sim_power <= hi and res.sim_power >= 0.8
    assert f"simulated power {res.sim_power:.3f} [{lo:.3f}..{hi:.3f}] over 2000 runs" in str(res)


def test_holdout_size_from_rows_and_errors():
    rates = np.linspace(0.2, 0.7, 30)
    b, a = make_rows(rates, 4, seed=1), make_rows(rates + 0.1, 4, seed=2)
    res = holdout_size(0.05, before=b, after=a)
    rep = delta_report(b, a)
    d = np.array(list(rep.per_task.values()))
    assert res.sd_source == "rows" and res.n_paired == 30 and res.method == "t"
    assert res.n_tasks == t_plan(0.05, np.var(d, ddof=1))
    chi2 = pytest.importorskip("scipy.stats").chi2
    assert res.task_sd_ci[1] == pytest.approx(math.sqrt(29 * np.var(d, ddof=1) / chi2.ppf(0.025, 29)))
    assert f"[{res.task_sd_ci[0]:.3f}..{res.task_sd_ci[1]:.3f}] (measured on 30 paired tasks)" in str(res)
    with pytest.raises(ValueError, match=r"effect= is the gain"):
        holdout_size(0)
    with pytest.raises(ValueError, match=r"before= and after= go together"):
        holdout_size(0.05, before=b)
    with pytest.raises(ValueError, match=r"power="):
        holdout_size(0.05, power=1.0)
    with pytest.raises(ValueError, match=r"base \+ effect"):
        holdout_size(0.5, base=0.6)
    with pytest.raises(ValueError, match=r"task_sd="):
        holdout_size(0.05, task_sd=0)


@pytest.mark.slow
def test_delta_interval_coverage_at_50_tasks():
    """Fresh tasks each run, true paired gain exactly +0.10: the 95% delta interval covers it in >= 93% of runs."""
    rng = np.random.default_rng(31)
    runs, covered = 500, 0
    for r in range(runs):
        p = 0.8 * rng.beta(2, 2, size=50)  # p + 0.1 stays below 1, so the true gain is 0.1 on every task
        rep = delta_report(rows_from_counts(rng.binomial(4, p), 4), rows_from_counts(rng.binomial(4, p + 0.1), 4),
                           draws=1000, seed=r)
        covered += rep.ci[0] <= 0.1 <= rep.ci[1]
    assert covered / runs >= 0.93, f"coverage {covered / runs:.3f}"


@pytest.mark.slow
@pytest.mark.parametrize("effect,base,k", [(0.15, 0.6, 4), (0.10, 0.3, 8), (0.20, 0.5, 2)])
def test_holdout_size_delivers_its_power(effect, base, k):
    """At holdout_size's n, delta_report's rule (simulated, 2,000 fresh runs, another seed) calls the gain
    'better' with a Wilson lower bound >= 0.775; the same n with no gain (A/A) alarms <= alpha + 1%."""
    n = holdout_size(effect, base=base, k=k).n_tasks
    runs = 2000
    sim = power.simulate_delta_reports(n, base=base, effect=effect, k=k, runs=runs, seed=12345)
    hits = int(np.count_nonzero(sim.verdict == 1))
    lo, _ = stats.wilson_interval(hits, runs)
    assert lo >= 0.775, f"power {hits / runs:.3f} (Wilson lower {lo:.3f}) at n={n}"
    aa = power.simulate_delta_reports(n, base=base, effect=0.0, k=k, runs=runs, seed=54321)
    assert np.count_nonzero(aa.verdict) / runs <= 0.05 + 0.01


def test_simulated_rule_is_delta_reports_rule():
    """The vectorised rule behind holdout_size against delta_report itself on 50 runs: the same exact p (to
    1e-9), the same verdict in >= 48 (bootstrap endpoints are random on both sides), endpoints within 0.02."""
    rng = np.random.default_rng(7)
    k, n, runs = 4, 40, 50
    before, after = power.draw_counts(n, base=0.6, effect=0.15, k=k, omega2=0.0, runs=runs, rng=rng)
    sim = power.decide(after - before, k, rng=rng)
    same = 0
    for r in range(runs):
        rep = delta_report(rows_from_counts(before[r], k), rows_from_counts(after[r], k), seed=r)
        assert rep.p_value == pytest.approx(sim.p_value[r], abs=1e-9) and rep.delta == pytest.approx(sim.delta[r])
        assert abs(rep.ci[0] - sim.lo[r]) <= 0.02 and abs(rep.ci[1] - sim.hi[r]) <= 0.02
        same += {"better": 1, "worse": -1, "inconclusive": 0}[rep.verdict] == sim.verdict[r]
    assert same >= 48, f"{same} of {runs} verdicts agree"
    assert 10 <= np.count_nonzero(sim.verdict == 1) <= 45  # the runs straddle the decision boundary


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_missing_task_id_names_the_row_and_its_keys():
    rows = [{"id": 1, "reward": 1}, {"id": 2, "reward": 0}]
    with pytest.raises(ValueError, match=r"rows\[0\].*it has 'id': rename it task_id.*keys are \['id', 'reward'\]"):
        wai.export(rows, None)


def test_int_task_ids_group_as_strings():
    rows = [{"task_id": i // 2, "reward": i % 2} for i in range(20)]
    res = wai.pass_at(rows, k=2)
    assert res.n_groups == 10 and res.pass_at_1 == pytest.approx(0.5)
    assert sorted(res.per_task) == sorted(str(i) for i in range(10))


def test_numpy_rewards_count_everywhere_pass_at_does():
    """pass_at counted numpy-int rewards but select, curriculum, preferences and hack_scan dropped them as
    unusable labels, and export could not write them."""
    np = pytest.importorskip("numpy")
    rows = [{"task_id": str(i // 4), "reward": np.int64(i % 2), "final_text": f"answer {i}."} for i in range(40)]
    assert wai.pass_at(rows).n_rows == 40
    sel = wai.select(rows, quiet=True)
    assert sel.report["gates"]["unusable_label"] == 0 and sel.report["n_selected"] == 40
    assert wai.select(rows, mode="sft", quiet=True).report["n_selected"] == 10
    assert len(wai.curriculum(rows).tasks) == 10
    assert len(wai.build_preference_pairs(rows).pairs) == 10
    assert wai.hack_scan(rows).n_graded == 40
    rep = wai.export(rows, None)
    assert rep["rewards"] == {"n_pass": 20, "n_fail": 20, "n_ungraded": 0}
    assert all(type(item["reward"]) is int for item in rep["rows"])
    json.dumps(rep["rows"], allow_nan=False)


def test_eval_variance_mean_interval_is_the_t_interval_cut_to_the_unit_interval():
    """Three runs near the ceiling: the t interval's upper end passes 1.0 and is cut there; the lower end is
    scipy's t interval (df = 2) exactly."""
    scipy_stats = pytest.importorskip("scipy.stats")
    runs = [rows_from_counts(c, 4) for c in ([4] * 8 + [0, 4], [4] * 10, [4] * 5 + [0] * 3 + [4, 4])]
    ev = eval_variance(*runs)
    means = np.array(ev.means)
    half = scipy_stats.t.ppf(0.975, 2) * means.std(ddof=1) / math.sqrt(3)
    assert means.mean() + half > 1.0  # the uncut interval leaves [0, 1]
    assert ev.mean_ci == (pytest.approx(means.mean() - half), 1.0)
    assert "..1.00]" in str(ev) or "..1.000]" in str(ev)


def test_eval_variance_takes_a_list_of_runs():
    def run(seed):
        return [{"task_id": f"t{i // 4}", "reward": (i * 7 + seed) % 3 == 0 and 1 or 0} for i in range(80)]

    runs = [run(0), run(1), run(2)]
    as_list = wai.eval_variance(runs)
    spread = wai.eval_variance(*runs)
    assert as_list.n_runs == spread.n_runs == 3
    assert as_list.means == spread.means and as_list.run_sd == spread.run_sd
    with pytest.raises(ValueError, match="got one empty run"):
        wai.eval_variance([])


def test_holdout_size_tiny_alpha_answers_and_impossible_plans_are_a_fast_clear_error():
    # issue 28 fuzz: alpha=1e-12 ran 10 s then raised scipy's TypeError (the t iteration started at df=1)
    import time
    t0 = time.monotonic()
    tiny = wai.holdout_size(0.05, alpha=1e-12)
    loose = wai.holdout_size(0.05, alpha=1e-6)
    assert tiny.n_tasks > loose.n_tasks > 1000 and tiny.method == "t"
    with pytest.raises(ValueError, match="HOLDOUT_MAX_TASKS"):
        wai.holdout_size(1e-5, alpha=1e-12)
    assert time.monotonic() - t0 < 5


def test_a_sides_pass_at_1_interval_is_the_same_in_pass_at_and_delta_report():
    """Learn lesson 5 printed A's pass@1 as [0.525..0.669] (pass_at) and [0.525..0.675] (delta_report): the
    side intervals were drawn jointly with the differences. Now each side is drawn as pass_at draws it."""
    before = rows_from_counts([1, 2, 3, 4, 2, 3, 1, 4, 3, 2] * 4, 4)
    after = rows_from_counts([2, 3, 4, 4, 3, 3, 2, 4, 4, 2] * 4, 4)
    rep = delta_report(before, after)
    assert rep.before_ci == pass_at(before).ci95 and rep.after_ci == pass_at(after).ci95
    same = delta_report(before, before)
    assert same.before_ci == same.after_ci
