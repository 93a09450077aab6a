"""Pooled baselines, flakiness, drift and staleness (issue 21), checked against closed forms and seeded
simulations; the pooled-baseline done-when: A/A false alarms within alpha under between-run variation, and more
power than a single-run baseline at the same PR cost."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from math import comb

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr

from whileai_core.errors import CorruptBaseline, InvalidArgument, NonFiniteReward, WaiError
from whileai_core.measure.between_runs import between_run_variance, pooling_weights, prediction_band
from whileai_core.measure.delta import delta_report
from whileai_core.measure.exact import homogeneity_pvalues, mann_kendall_exact, mann_kendall_pvalues
from whileai_core.measure.history import (
    design_effect,
    effective_counts,
    homogeneity_p,
    mann_kendall,
    pool_runs,
    stale_note,
    trend_p,
)
from whileai_core.measure.sequential import sequential_paths
from whileai_core.measure.stats import wilson_interval

ALPHA = 0.05
# long mode (WHILEAI_LONG=1; the older WHILEAI_STATS_LONG=1 too): more replications, figures for the record
LONG = "1" in (os.environ.get("WHILEAI_LONG"), os.environ.get("WHILEAI_STATS_LONG"))


def test_design_effect_closed_forms():
    assert design_effect([4, 4, 4], [8, 8, 8]) == (0.0, 24.0)  # identical runs: no between-run variance
    rho, n_eff = design_effect([8, 0, 8], [8, 8, 8])
    assert rho == pytest.approx(1.0) and n_eff == pytest.approx(3.0)  # all-or-nothing runs: one trial per run
    assert design_effect([3], [8]) == (0.0, 8.0)


def test_cochran_armitage_equals_n_times_r_squared():
    passes, trials = [1, 3, 6, 7], [8, 8, 8, 8]
    x = np.repeat(np.arange(4), trials)
    y = np.concatenate([[1] * c + [0] * (n - c) for c, n in zip(passes, trials)])
    r = pearsonr(x, y).statistic
    from scipy.stats import chi2

    assert trend_p(passes, trials) == pytest.approx(chi2.sf(len(y) * r**2, 1), rel=1e-9)


def test_mann_kendall_is_exact_for_few_runs():
    tau, p = mann_kendall([0.5, 0.6, 0.65, 0.7, 0.8])
    assert tau == pytest.approx(1.0) and p == pytest.approx(2 / 120)  # 2 of 5! orderings are as extreme
    assert mann_kendall([0.5, 0.5, 0.5]) == (None, None)
    assert mann_kendall([0.6, 0.6, 0.7, 0.7, 0.8])[1] == pytest.approx(8 / 120)  # issue 30: not scipy's 0.0367


def test_mann_kendall_equals_the_enumerated_permutation_p_on_every_tied_series():
    """Issue 30 item 3: every series of length 3..7 over three levels with a tie (and two levels or more); the
    truth is |S| over every ordering of the series' values (all n! of them, ties kept), once per multiset."""
    from itertools import permutations, product

    for n in range(3, 8):
        perms = np.array(list(permutations(range(n))))
        i, j = np.triu_indices(n, k=1)
        series = np.array([s for s in product(range(3), repeat=n) if 1 < len(set(s)) < n], dtype=float)
        observed = np.abs(np.sign(series[:, j] - series[:, i]).sum(axis=1))
        truth = np.empty(len(series))
        multisets, which = np.unique(np.sort(series, axis=1), axis=0, return_inverse=True)
        for m, values in enumerate(multisets):
            null = np.sort(np.abs(np.sign(values[perms][:, j] - values[perms][:, i]).sum(axis=1)))
            rows = np.flatnonzero(which.reshape(-1) == m)
            truth[rows] = 1 - np.searchsorted(null, observed[rows], side="left") / len(null)
        assert mann_kendall_pvalues(series) == pytest.approx(truth, abs=1e-12)
        for row in series[:: max(1, len(series) // 40)]:  # the one-series call agrees with the vectorized one
            assert mann_kendall(row)[1] == pytest.approx(mann_kendall_pvalues(row[None])[0], abs=1e-12)
    tau_b = kendalltau(np.arange(6), [3, 1, 2, 2, 5, 4]).statistic
    assert mann_kendall([3, 1, 2, 2, 5, 4])[0] == pytest.approx(tau_b)


def test_mann_kendall_normal_law_above_the_exact_limit_is_close_to_the_exact_one():
    rng = np.random.default_rng(4)
    for _ in range(20):
        v = rng.integers(0, 4, size=40).astype(float)
        exact = mann_kendall_exact(v)[1]
        approx, is_exact = mann_kendall_exact(v, exact_max=10)[1:]
        assert not is_exact and approx == pytest.approx(exact, abs=0.01)


def _enumerated_homogeneity_p(x, n):
    """Every table with these trials and total passes, weighted by prod C(n_j, x_j) (the hypergeometric law)."""
    from itertools import product

    observed = sum(a * a / b for a, b in zip(x, n))
    hit = total = 0
    for t in product(*[range(b + 1) for b in n]):
        if sum(t) == sum(x):
            w = np.prod([comb(b, a) for a, b in zip(t, n)])
            total += w
            hit += w * (sum(a * a / b for a, b in zip(t, n)) >= observed - 1e-9)
    return hit / total


def test_flakiness_p_is_the_exact_conditional_p():
    rng = np.random.default_rng(1)
    cases = []
    for _ in range(80):
        runs = int(rng.integers(2, 5))
        n = rng.integers(1, 6, size=runs)
        cases.append((rng.binomial(n, rng.uniform(0.2, 0.8)).tolist(), n.tolist()))
    p, exact = homogeneity_pvalues([c[0] for c in cases], [c[1] for c in cases], alpha=ALPHA)
    assert exact.all()
    for (x, n), got in zip(cases, p):
        assert got == pytest.approx(_enumerated_homogeneity_p(x, n), abs=1e-12)
    mc, mc_exact = homogeneity_pvalues([c[0] for c in cases], [c[1] for c in cases], alpha=ALPHA, max_cells=1)
    assert not mc_exact[p < 1].any() and np.max(np.abs(mc - p)) < 0.01  # the Monte Carlo fallback agrees
    assert homogeneity_p([8, 0, 8], [8, 8, 8]) == pytest.approx(3 / comb(24, 8))
    assert homogeneity_p([8, 8, 8], [8, 8, 8]) == 1.0


def _stable_suite(m, seed):
    """m stable scenarios over 5 runs of 8 trials, rates Beta(4, 2), as run documents."""
    rng = np.random.default_rng(seed)
    p = rng.beta(4, 2, size=m)
    return [{"scenarios": [{"key": f"s{i}", "k": 8, "judge": None, "rewards": [float(x) for x in rng.random(8) < q]}
                           for i, q in enumerate(p)]} for _ in range(5)]


def test_flakiness_flags_8_0_8_0_8_among_200_scenarios_and_rarely_a_stable_one():
    """Issue 30 item 2: the 8/0/8/0/8 scenario is flagged at m = 200 (the old 2,000 reshuffles could not flag
    anything past m = 100), and suites of 200 stable scenarios are flagged at most alpha of the time."""
    for seed in range(50 if LONG else 1):  # among other stable scenarios each time
        docs = _stable_suite(199, seed=seed)
        for j, doc in enumerate(docs):
            doc["scenarios"].append({"key": "flaky", "k": 8, "judge": None, "rewards": [float(j % 2 == 0)] * 8})
        hist = pool_runs(docs)
        assert "flaky" in hist.flaky and hist.scenarios["flaky"].flaky_p_holm < 1e-6
    suites = 1000 if LONG else 40
    flagged = sum(bool(pool_runs(_stable_suite(200, seed=100 + s)).flaky) for s in range(suites))
    print(f"stable suites of 200 scenarios with a false flag: {flagged} of {suites}")
    assert flagged / suites <= ALPHA


def test_monte_carlo_flakiness_draws_scale_with_the_scenarios():
    passes, trials = [[8, 0, 8, 0, 8]] + [[4, 5, 4, 5, 4]] * 199, [[8] * 5] * 200
    p, exact = homogeneity_pvalues(passes, trials, alpha=ALPHA, max_cells=1)
    assert not exact.any() and p[0] * 200 <= ALPHA / 10  # the smallest p sits far below Holm's alpha/m


def _doc(rates_by_key, k=8, seed=0, created="2026-01-01T00:00:00Z"):
    rng = np.random.default_rng(seed)
    scen = []
    for key, p in rates_by_key.items():
        scen.append({"key": key, "k": k, "judge": None, "pass_reward": 1.0,
                     "rewards": [float(x) for x in rng.random(k) < p]})
    return {"created": created, "scenarios": scen}


def test_pool_runs_flags_the_flaky_scenario_and_pools_the_rest():
    docs = [_doc({"steady": 0.7, "flaky": 1.0 if i % 2 == 0 else 0.0}, seed=i) for i in range(3)]
    hist = pool_runs(docs, names=["r1", "r2", "r3"], requested=5)
    assert hist.flaky == ["flaky"]
    entry = hist.index["steady"]
    assert len(entry["rewards"]) == 24 and entry["pooled"]["runs"] == 3
    flaky = hist.scenarios["flaky"]
    assert flaky.passes == [8, 0, 8] and flaky.rho == pytest.approx(1.0)
    assert effective_counts(hist.index["flaky"]) == (2, 3)  # 16/24 at n_eff 3: pooling claims 3 trials, not 24
    text = "\n".join(hist.lines())
    assert "flaky: flaky" in text and "asked for 5" in text and "n=24" in text
    with pytest.raises(InvalidArgument, match="docs="):
        pool_runs([])


def test_suite_drift_is_shown():
    docs = [_doc({f"s{j}": 0.9 - 0.15 * i for j in range(20)}, seed=i) for i in range(5)]
    hist = pool_runs(docs)
    assert hist.suite_tau < 0 and hist.suite_trend_p <= ALPHA
    assert any(line.startswith("drift: pooling refused: the suite pass rate trends") for line in hist.lines())


def test_stale_note_names_age_and_commit_distance():
    now = datetime(2026, 2, 1, tzinfo=timezone.utc)
    assert stale_note("2026-01-31T00:00:00Z", 3, now=now) is None
    note = stale_note("2026-01-01T00:00:00Z", 80, now=now)
    assert "31.0 days old" in note and "80 commits behind" in note


def _history_sim(runs, scenarios, history, *, k=4, drop=0.0, sd=0.5, seed=0):
    """Logit rate mu_i ~ N(0.8, 1); each run jitters every scenario by N(0, sd^2) (scenario-level between-run
    variation); ``history`` baseline runs and one current run of k trials, the current shifted by ``drop``."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.8, 1.0, size=(runs, 1, scenarios))
    p = 1 / (1 + np.exp(-(mu + rng.normal(0, sd, size=(runs, history + 1, scenarios)))))
    passes = rng.binomial(k, np.clip(p - np.r_[np.zeros(history), drop][None, :, None], 0, 1))
    return passes[:, :history], passes[:, history], k


def _red(base, current, k, history):
    bc = base[:, -history:].sum(axis=1)
    return sequential_paths(bc, np.full_like(bc, k * history), current[:, None, :], np.full_like(current, k)[:, None, :],
                            k, alpha=ALPHA, max_drop=0.0).red


def _band_red(base, current, k):
    """The pooled rule's band half, vectorized as pool_runs applies it: weights from the drift test, then the
    suite delta against the weighted runs must fall below minus the runs' prediction band."""
    rates, now = base / k, current / k
    weights, _ = pooling_weights(rates.mean(axis=-1), alpha=ALPHA)
    band, _, _ = prediction_band(rates, weights)
    delta = now.mean(axis=-1) - (weights * rates.mean(axis=-1)).sum(axis=-1) / weights.sum(axis=-1)
    return delta <= -band


@pytest.mark.slow
def test_pooled_baseline_keeps_aa_false_alarms_within_alpha_under_scenario_jitter():
    base, cur, k = _history_sim(3000, 60, 5, seed=1)
    for history in (1, 5):
        assert _red(base, cur, k, history).mean() <= ALPHA / 2 + 0.01
    assert (_red(base, cur, k, 5) & _band_red(base, cur, k)).mean() <= ALPHA / 2 + 0.01
    base, cur, k = _history_sim(3000, 60, 5, drop=0.10, seed=2)
    assert (_red(base, cur, k, 5) & _band_red(base, cur, k)).mean() >= 0.5  # a 0.10 drop is still found


# ------------------------------------------------------------------------------------------------
# issue 30 item 1: pooled baselines hold their level when runs differ as a whole or drift
# ------------------------------------------------------------------------------------------------


def _suites(n, *, shift_sd=0.0, drift=0.0, drop=0.0, scenarios=60, k=4, runs=5, seed=0):
    """n histories of ``runs`` pooled runs plus one current run: scenario rates Beta(4, 2); every run shifts all
    its scenarios by N(0, shift_sd^2) (run-level); the two oldest runs are better by ``drift``; the current run
    is worse by ``drop``. Returns passes (n, runs, scenarios), current passes (n, scenarios), k."""
    rng = np.random.default_rng(seed)
    p = rng.beta(4, 2, size=(n, 1, scenarios))
    shift = rng.normal(0.0, shift_sd, size=(n, runs + 1, 1)) if shift_sd else 0.0
    offset = np.zeros(runs + 1)
    offset[:2] += drift
    offset[-1] -= drop
    passes = rng.binomial(k, np.clip(p + shift + offset[None, :, None], 0, 1))
    return passes[:, :runs], passes[:, runs], k


def _naive_red(base, current, k):
    """The old rule: the paired z over scenarios against the pooled rates, blind to run-level variance."""
    d = current / k - (base / k).mean(axis=1)
    return d.mean(axis=-1) / (d.std(axis=-1, ddof=1) / np.sqrt(d.shape[-1])) <= -1.959964


@pytest.mark.parametrize("setting", [{"shift_sd": 0.03}, {"drift": 0.05}])
def test_pooled_aa_holds_its_level_under_run_shifts_and_drift(setting):
    n = 100_000 if LONG else 20_000
    base, cur, k = _suites(n, seed=11, **setting)
    red = _band_red(base, cur, k)
    lo, hi = wilson_interval(int(red.sum()), n)
    print(f"pooled A/A red rate {setting}: {red.mean():.4f} [{lo:.4f}..{hi:.4f}] (n={n}); "
          f"naive {_naive_red(base, cur, k).mean():.4f}")
    assert red.mean() <= 0.03  # nominal one-sided 0.025
    assert _naive_red(base, cur, k).mean() >= 0.06  # the old rule fails here: the test has teeth
    refused = np.flatnonzero(pooling_weights((base / k).mean(axis=-1), alpha=ALPHA)[0][:, 0] == 0)
    for i in [*range(8), *refused[:4]]:  # the simulated rule is pool_runs': same weights (drift refusal), band
        docs = [{"scenarios": [{"key": f"s{s}", "k": k, "judge": None, "rewards": [float(t < c) for t in range(k)]}
                               for s, c in enumerate(run)]} for run in base[i]]
        hist = pool_runs(docs)
        weights, _ = pooling_weights((base[i] / k).mean(axis=-1), alpha=ALPHA)
        assert bool(hist.refused) == (weights[0] == 0) and len(hist.kept) == int(weights.sum())
        assert hist.noise.band() == pytest.approx(float(prediction_band(base[i] / k, weights)[0]))


def test_pool_runs_band_is_the_vectorized_rule_and_delta_report_uses_it():
    base, cur, k = _suites(1, shift_sd=0.03, seed=5)
    docs = [{"scenarios": [{"key": f"s{i}", "k": k, "judge": None, "rewards": [float(t < c) for t in range(k)]}
                           for i, c in enumerate(run)]} for run in base[0]]
    hist = pool_runs(docs)
    band, sd, df = prediction_band(base / k, np.ones((1, 5)))
    assert hist.noise.band() == pytest.approx(float(band[0])) and hist.noise.sd() == pytest.approx(float(sd[0]))
    assert df == 4 and hist.noise.n_effective == pytest.approx(5.0) and hist.kept == ["run 1", "run 2", "run 3",
                                                                                       "run 4", "run 5"]
    from scipy.stats import t as student_t

    assert hist.noise.band() == pytest.approx(student_t.ppf(0.975, 4) * np.std((base[0] / k).mean(axis=1), ddof=1)
                                              * np.sqrt(1 / 5 + 1))
    before = [{"task_id": key, "rollout_index": i, "reward": int(r)} for key, e in hist.index.items()
              for i, r in enumerate(e["rewards"])]
    after = [{"task_id": f"s{i}", "rollout_index": t, "reward": int(t < c - (t == 0 and c > 0))}
             for i, c in enumerate(cur[0]) for t in range(k)]
    rep = delta_report(before, after, noise=hist.noise)
    assert rep.noise_band == pytest.approx(hist.noise.band(sorted(hist.index)))
    text = "\n".join(hist.lines())
    assert "effective runs 5.0" in text and "run-level sd" in text and "scenario-level sd" in text


def test_variance_components_recover_a_run_shift_and_a_scenario_swing():
    rng = np.random.default_rng(3)
    s, runs, k = 400, 6, 400  # many trials: the binomial part is small, so the components are sharp
    p = rng.uniform(0.3, 0.7, size=(s, 1)) + rng.normal(0, 0.05, size=(1, runs)) + rng.normal(0, 0.04, size=(s, runs))
    passes = rng.binomial(k, np.clip(p, 0, 1))
    rv = between_run_variance([f"s{i}" for i in range(s)], passes, np.full_like(passes, k))
    assert np.sqrt(rv.run) == pytest.approx(0.05, rel=0.5) and np.sqrt(rv.scenario) == pytest.approx(0.04, rel=0.1)
    assert rv.f_p < 1e-6


def test_a_drifting_suite_is_not_pooled():
    docs = [_doc({f"s{j}": 0.95 - 0.1 * i for j in range(40)}, k=4, seed=i) for i in range(5)]
    hist = pool_runs(docs)
    assert hist.refused and hist.kept == ["run 5"] and hist.n_effective_runs == pytest.approx(1.0)
    assert all(e["pooled"]["runs"] == 1 and len(e["rewards"]) == 4 for e in hist.index.values())
    assert any(line.startswith("drift: pooling refused") for line in hist.lines())


# ------------------------------------------------------------------------------------------------
# issue 30 item 6: malformed documents are errors naming the field, never a silent drop or merge
# ------------------------------------------------------------------------------------------------
def _entry(key, rewards):
    return {"key": key, "k": len(rewards), "judge": None, "rewards": rewards}


@pytest.mark.parametrize("scenarios, error, match", [
    ([_entry("a", [1.0, float("nan"), 0.0])], NonFiniteReward,
     r"latest: scenarios\[0\] \('a'\) has reward nan at rewards\[1\]"),
    ([_entry("a", [1.0]), _entry("a", [0.0])], CorruptBaseline,
     r"latest: scenarios\[1\].key 'a' repeats scenarios\[0\] of the same run"),
    ([_entry(1, [1.0]), _entry("1", [0.0])], CorruptBaseline, r"latest: scenarios\[0\].key is 1 \(int\)"),
    ([_entry("a", [1.0, 2.0])], CorruptBaseline, r"reward 2.0 at rewards\[1\], not a number in \[0, 1\]"),
    ([_entry("a", [True])], CorruptBaseline, r"reward True at rewards\[0\]"),
    ([{"key": "a", "k": 1}], CorruptBaseline, r"scenarios\[0\].rewards \('a'\) missing"),
])
def test_pool_runs_refuses_malformed_documents(scenarios, error, match):
    good = {"scenarios": [_entry("a", [1.0, 0.0]), _entry("b", [1.0, 1.0])]}
    with pytest.raises(error, match=match):
        pool_runs([good, {"scenarios": scenarios}], names=["older", "latest"])
    assert issubclass(error, ValueError) and issubclass(error, WaiError)


def test_pool_runs_refuses_what_is_not_a_list_of_documents():
    with pytest.raises(TypeError, match="docs= is a list of run documents"):
        pool_runs({"scenarios": []})
    with pytest.raises(TypeError, match="run 2: a run document is a dict"):
        pool_runs([{"scenarios": []}, "run.json"])
    with pytest.raises(CorruptBaseline, match="run 1: field 'scenarios' missing"):
        pool_runs([{}])
    with pytest.raises(InvalidArgument, match="names= gives 1 name"):
        pool_runs([{"scenarios": []}, {"scenarios": []}], names=["only"])
