"""Sequential stopping of the paired suite delta (issue 21): boundaries against published tables and a Brownian
simulation, and the done-when simulations (A/A false alarms, power at the last look, trials on A/A runs)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from whileai_core.errors import InvalidArgument
from whileai_core.measure.compare import compare
from whileai_core.measure.delta import delta_report
from whileai_core.measure.sequential import (SequentialPlan, boundaries, paired_z, sequential_paths,
                                             sequential_test, spent)
from whileai_core.measure.stats import wilson_interval

ALPHA = 0.05


def test_one_look_is_the_fixed_z_test():
    assert boundaries([1.0], alpha=0.025)[0] == pytest.approx(norm.isf(0.025), abs=1e-9)


def test_spending_ends_at_alpha_and_is_small_early():
    s = spent([0.25, 0.5, 1.0], 0.025)
    assert s[-1] == pytest.approx(0.025, abs=1e-12)
    assert s[0] == pytest.approx(2 * norm.sf(norm.isf(0.0125) / 0.5))  # closed form at t=1/4


def test_boundaries_match_published_lan_demets_obrien_fleming_tables():
    # Jennison & Turnbull 2000 (Table 7.6) / gsDesign: 4 and 5 equally spaced looks, one-sided 0.025
    assert boundaries([0.25, 0.5, 0.75, 1.0], alpha=0.025) == pytest.approx([4.333, 2.963, 2.359, 2.014], abs=2e-3)
    assert boundaries([0.2, 0.4, 0.6, 0.8, 1.0], alpha=0.025) == pytest.approx([4.877, 3.357, 2.680, 2.290, 2.031],
                                                                               abs=2e-3)


def test_boundaries_spend_alpha_on_a_simulated_brownian_motion_at_unequal_looks():
    t = np.array([0.4, 0.67, 0.83, 1.0])
    c = boundaries(t, alpha=0.025)
    rng = np.random.default_rng(1)
    steps = rng.standard_normal((200_000, len(t))) * np.sqrt(np.diff(np.concatenate([[0], t])))
    z = np.cumsum(steps, axis=1) / np.sqrt(t)
    crossed = (z >= c).any(axis=1).mean()
    lo, hi = wilson_interval(int(crossed * 200_000), 200_000, level=0.999)
    assert lo <= 0.025 <= hi


def test_bad_fractions_are_refused():
    with pytest.raises(InvalidArgument, match="fractions="):
        boundaries([0.5, 0.4])
    with pytest.raises(InvalidArgument, match="round_trials="):
        SequentialPlan(0, 4)


def _simulate(runs, scenarios, *, drop=0.0, k=8, m=2, kb=8, seed=0):
    """Scenario rates Beta(4, 2); baseline kb trials; the current run k trials in rounds of m, rate p - drop."""
    rng = np.random.default_rng(seed)
    p = rng.beta(4, 2, size=(runs, scenarios))
    bc = rng.binomial(kb, p)
    plan = SequentialPlan(m, k)
    sizes = [len(plan.trials(r)) for r in range(plan.rounds)]
    inc = np.stack([rng.binomial(s, np.clip(p - drop, 0, 1)) for s in sizes], axis=1)
    an = np.broadcast_to(np.cumsum(sizes)[None, :, None], inc.shape)
    return bc, np.full_like(bc, kb), np.cumsum(inc, axis=1), an, plan


@pytest.mark.slow
def test_aa_false_alarms_stay_within_alpha_over_4000_runs():
    bc, bn, ac, an, plan = _simulate(4000, 40, seed=2)
    paths = sequential_paths(bc, bn, ac, an, plan.max_trials, alpha=ALPHA, max_drop=0.0)  # pure significance
    rate = paths.red.mean()
    assert rate <= ALPHA / 2 + 0.01  # the red side spends alpha/2; the brief's bound is alpha + 1%
    with_drop = sequential_paths(bc, bn, ac, an, plan.max_trials, alpha=ALPHA, max_drop=0.05)
    assert with_drop.red.mean() <= rate


@pytest.mark.slow
def test_power_at_the_last_look_is_within_two_points_of_the_fixed_design():
    bc, bn, ac, an, plan = _simulate(4000, 40, drop=0.1, seed=3)  # the fixed z test has ~80% power here
    seq = sequential_paths(bc, bn, ac, an, plan.max_trials, alpha=ALPHA, max_drop=0.0)
    fixed = sequential_paths(bc, bn, ac[:, -1:], an[:, -1:], plan.max_trials, alpha=ALPHA, max_drop=0.0)
    assert 0.6 < fixed.red.mean() < 0.95
    assert seq.red.mean() >= fixed.red.mean() - 0.02
    assert abs(seq.red.mean() - fixed.red.mean()) <= 0.02


@pytest.mark.slow
def test_aa_runs_use_at_most_60_percent_of_the_fixed_trials_on_a_suite_that_can_rule_out_max_drop():
    bc, bn, ac, an, plan = _simulate(2000, 300, seed=4)
    paths = sequential_paths(bc, bn, ac, an, plan.max_trials, alpha=ALPHA, max_drop=0.05)
    used = an[np.arange(len(paths.stop)), paths.stop, 0] / plan.max_trials
    assert used.mean() <= 0.60
    assert paths.red.mean() <= ALPHA / 2


def test_paired_z_floor_keeps_an_all_pass_round_from_zero_width():
    delta, se = paired_z([4, 4], [4, 4], [2, 2], [2, 2])
    assert delta == 0 and se > 0


def _counts(rates, n):
    return {f"s{i}": (int(round(r * n)), n) for i, r in enumerate(rates)}


def test_sequential_test_stops_red_on_a_broken_run_and_green_on_an_unchanged_one():
    rng = np.random.default_rng(5)
    p = rng.uniform(0.5, 0.9, 400)
    before = {f"s{i}": (int(rng.binomial(8, q)), 8) for i, q in enumerate(p)}
    plan = SequentialPlan(2, 8)
    same = [{f"s{i}": (int(rng.binomial(2, q)), 2) for i, q in enumerate(p)}]
    green = sequential_test(before, same, plan=plan)
    broken = [{f"s{i}": (0, 2) for i in range(400)}]
    red = sequential_test(before, broken, plan=plan)
    assert red.decision == "regression" and red.red and red.stopped_early and red.round == 1
    assert red.trials_run == 800 and red.trials_fixed == 3200 and red.saved_share == 0.75
    assert green.decision in ("continue", "no regression") and not green.red
    assert "stopped red after round 1 of 4" in str(red) and "interval" in str(red)


def test_the_last_round_always_decides():
    before = _counts([0.5, 0.6, 0.7], 4)
    rounds = [_counts([0.5, 0.5, 0.5], 2), _counts([0.5, 0.5, 0.75], 4)]
    res = sequential_test(before, rounds, plan=SequentialPlan(2, 4))
    assert res.decision in ("regression", "no regression") and res.round == 2 and not res.stopped_early
    with pytest.raises(InvalidArgument, match="after_rounds="):
        sequential_test(before, rounds * 2, plan=SequentialPlan(2, 4))


def _rows(p, k, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    return [{"task_id": f"t{i}", "rollout_index": j, "reward": int(rng.random() < q - shift)}
            for i, q in enumerate(p) for j in range(k)]


def test_delta_report_and_compare_take_sequential():
    p = np.random.default_rng(6).uniform(0.6, 0.95, 200)
    before, broken = _rows(p, 8, 7), _rows(p, 8, 8, shift=0.3)
    rep = delta_report(before, broken, sequential=SequentialPlan(2, 8), min_effect=0.05, permutations=200, draws=200)
    assert rep.worse and rep.sequential.round == 1 and rep.sequential.red
    assert "stopped red after round 1 of 4" in str(rep)
    same = delta_report(before, _rows(p, 8, 9), sequential=2, min_effect=0.05, permutations=200, draws=200)
    assert not same.worse and same.sequential.decision == "no regression"
    assert same.to_dict()["sequential"]["decision"] == "no regression"
    cmp = compare(before, broken, sequential=2, target=0.05, permutations=200, draws=200)
    assert not cmp.ok and cmp.headline.sequential.red
    with pytest.raises(InvalidArgument, match="sequential="):
        delta_report(before, broken, sequential="soon", permutations=200, draws=200)


# ------------------------------------------------------------------------------------------------
# issue 30 items 4 and 5: impossible counts and unplaceable rows are errors naming the field
# ------------------------------------------------------------------------------------------------
PLAN = SequentialPlan(2, 4)
BEFORE = {"a": (3, 4), "b": (4, 4), "c": (2, 4)}


@pytest.mark.parametrize("rounds, match", [
    ([{"a": (3, 2), "b": (2, 2), "c": (1, 2)}], r"after_rounds\[0\]\['a'\] = \(3, 2\).*passes <= trials"),
    ([{"a": (-1, 2), "b": (2, 2), "c": (1, 2)}], r"after_rounds\[0\]\['a'\] = \(-1, 2\)"),
    ([{"a": (float("nan"), 2), "b": (2, 2), "c": (1, 2)}], r"after_rounds\[0\]\['a'\]: passes is nan"),
    ([{"a": (1.5, 2), "b": (2, 2), "c": (1, 2)}], r"passes is 1.5; counts are whole numbers"),
    ([{"a": (2, 2), "b": (2, 2), "c": (1, 2)}, {"a": (1, 4), "b": (4, 4), "c": (2, 4)}],
     r"after_rounds\[1\]\['a'\] = \(1, 4\) is below round 1's \(2, 2\)"),
    ([{"a": (2, 2), "b": (2, 2), "c": (1, 2)}, {"a": (3, 4), "b": (4, 4)}], r"after_rounds\[1\] lacks 'c'"),
    ([{"a": (2, 3), "b": (2, 2), "c": (1, 2)}], r"after_rounds\[0\]\['a'\] has 3 trials.*at most 2"),
    ([{"a": (2, 2)}] * 3, r"needs 1..2 rounds"),
])
def test_sequential_test_refuses_impossible_counts(rounds, match):
    with pytest.raises(InvalidArgument, match=match):
        sequential_test(BEFORE, rounds, plan=PLAN)


def test_sequential_test_refuses_bad_shapes_and_a_bad_baseline():
    with pytest.raises(InvalidArgument, match=r"before\['b'\] = \(5, 4\)"):
        sequential_test({"a": (3, 4), "b": (5, 4)}, [{"a": (2, 2), "b": (2, 2)}], plan=PLAN)
    with pytest.raises(TypeError, match=r"after_rounds\[0\]\['a'\] is 2; each entry is a \(passes, scored trials\)"):
        sequential_test(BEFORE, [{"a": 2, "b": (2, 2)}], plan=PLAN)
    with pytest.raises(TypeError, match="plan= is a SequentialPlan"):
        sequential_test(BEFORE, [{"a": (2, 2), "b": (2, 2)}], plan=2)
    ok = sequential_test(BEFORE, [{k: (np.int64(2), np.int64(2)) for k in BEFORE}], plan=PLAN)  # numpy ints count
    assert ok.round == 1


def _trial_rows(k, start=0, key="t", tasks=40, rate=0.7, seed=0, index=True):
    rng = np.random.default_rng(seed)
    return [{"task_id": f"{key}{t}", **({"rollout_index": i + start} if index else {}),
             "reward": int(rng.random() < rate)} for t in range(tasks) for i in range(k)]


def test_delta_report_sequential_refuses_rows_it_cannot_place_in_a_round():
    before = _trial_rows(4, seed=1)
    with pytest.raises(InvalidArgument, match=r"after\[3\] \(task 't0'\) has rollout_index 4, outside the plan's "
                                              r"0..3 \(40 row\(s\) outside\); the indices run 1..max_trials, so they look "
                                              r"1-based"):
        delta_report(before, _trial_rows(4, start=1, seed=2), sequential=2)
    with pytest.raises(InvalidArgument, match=r"after\[0\] \(task 't0'\) has no rollout_index"):
        delta_report(before, _trial_rows(4, seed=2, index=False), sequential=2)
    with pytest.raises(InvalidArgument, match=r"rollout_index 6, outside the plan's 0..3.*no trial 6"):
        delta_report(before, _trial_rows(4, seed=2)[:-1] + [{"task_id": "t39", "rollout_index": 6, "reward": 1}],
                     sequential=SequentialPlan(2, 4))
    rep = delta_report(before, _trial_rows(4, seed=2), sequential=2)  # 0-based indices inside the plan still decide
    assert rep.sequential is not None and rep.sequential.rounds == 2
