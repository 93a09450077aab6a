"""Pooled baselines, flakiness, drift and staleness (issue 21), checked against closed forms and seeded
simulations; the pooled-baseline done-when: A/A false alarms within alpha under between-run variation, and more
power than a single-run baseline at the same PR cost."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest
from scipy.stats import pearsonr

from whileai_core.errors import InvalidArgument
from whileai_core.measure.history import (design_effect, effective_counts, homogeneity_p, mann_kendall, pool_runs,
                                          stale_note, trend_p)
from whileai_core.measure.sequential import sequential_paths

ALPHA = 0.05


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


def test_homogeneity_test_holds_its_level_and_finds_a_flaky_scenario():
    rng = np.random.default_rng(0)
    ps = [homogeneity_p(rng.binomial(8, 0.6, size=4), [8] * 4, permutations=400, seed=i) for i in range(600)]
    assert np.mean(np.array(ps) <= ALPHA) <= ALPHA + 0.02
    assert homogeneity_p([8, 0, 8], [8, 8, 8]) < 0.01
    assert homogeneity_p([8, 8, 8], [8, 8, 8]) == 1.0


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
    assert any(line.startswith("drift: the suite") for line in hist.lines())


def test_stale_note_names_age_and_commit_distance():
    now = datetime(2026, 2, 1, tzinfo=timezone.utc)
    assert stale_note("2026-01-31T00:00:00Z", 3, now=now) is None
    note = stale_note("2026-01-01T00:00:00Z", 80, now=now)
    assert "31.0 days old" in note and "80 commits behind" in note


def _history_sim(runs, scenarios, history, *, k=4, drop=0.0, sd=0.5, seed=0):
    """Logit rate mu_i ~ N(0.8, 1); each run jitters every scenario by N(0, sd^2) (between-run variation);
    ``history`` baseline runs and one current run of k trials, the current shifted by ``drop`` in probability."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.8, 1.0, size=(runs, 1, scenarios))
    p = 1 / (1 + np.exp(-(mu + rng.normal(0, sd, size=(runs, history + 1, scenarios)))))
    passes = rng.binomial(k, np.clip(p - np.r_[np.zeros(history), drop][None, :, None], 0, 1))
    return passes[:, :history], passes[:, history], k


def _red(base, current, k, history):
    bc = base[:, -history:].sum(axis=1)
    return sequential_paths(bc, np.full_like(bc, k * history), current[:, None, :], np.full_like(current, k)[:, None, :],
                            k, alpha=ALPHA, max_drop=0.0).red


@pytest.mark.slow
def test_pooled_baseline_keeps_aa_false_alarms_within_alpha_and_gains_power():
    base, cur, k = _history_sim(3000, 60, 5, seed=1)
    for history in (1, 5):
        assert _red(base, cur, k, history).mean() <= ALPHA + 0.01
    base, cur, k = _history_sim(3000, 60, 5, drop=0.06, seed=2)
    single, pooled = _red(base, cur, k, 1).mean(), _red(base, cur, k, 5).mean()
    assert pooled > single + 0.05  # same PR cost (k trials now), more runs behind the baseline
