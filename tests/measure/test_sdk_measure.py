"""SDK parity for measurement (reference §3.1-3.6): compare_runs, noise_band, bootstrap_ci, eval_power,
pass_at(unanimous_short=) and .config, and the SDK's key names run_std / task_std. Checked against scipy and
closed forms with seeds.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from scipy import stats as sps

import whileai as wai

# long mode (WHILEAI_LONG=1; the older WHILEAI_STATS_LONG=1 too): more replications, figures for the record
LONG = "1" in (os.environ.get("WHILEAI_LONG"), os.environ.get("WHILEAI_STATS_LONG"))


def _rows(p_by_task, k, seed, prefix="t"):
    rng = np.random.default_rng(seed)
    return [{"task_id": f"{prefix}{t}", "rollout_index": i, "reward": int(rng.random() < p)}
            for t, p in enumerate(p_by_task) for i in range(k)]


def test_noise_band_is_the_z_or_t_rule():
    assert wai.noise_band(0.03, df=math.inf) == pytest.approx(sps.norm.ppf(0.975) * 0.03 * math.sqrt(2))
    assert wai.noise_band(0.03, 3, 3, df=2) == pytest.approx(sps.t.ppf(0.975, 2) * 0.03 * math.sqrt(2 / 3))
    assert wai.noise_band(0.05, 1, 4, df=math.inf, level=0.9) == pytest.approx(
        sps.norm.ppf(0.95) * 0.05 * math.sqrt(1.25))
    with pytest.raises(ValueError, match="n_a="):
        wai.noise_band(0.03, 0, df=2)
    with pytest.raises(ValueError, match="run_std="):
        wai.noise_band(-1.0, df=2)
    with pytest.raises(ValueError, match=r"needs df=, the re-runs behind the sd minus 1"):
        wai.noise_band(0.03)  # issue 30 item 8: a bare sd without its df was read with the normal quantile
    with pytest.raises(ValueError, match="df= is the degrees of freedom"):
        wai.noise_band(0.03, df=0)


def test_noise_band_reads_df_off_an_eval_variance_and_holds_alpha_with_three_reruns():
    """Issue 30 item 8: the sd of 3 re-runs, then an A/A delta between two more runs (60 tasks, k=4): the band
    lets <= 0.06 of pure-noise deltas through (the normal quantile let 0.175 through)."""
    rng = np.random.default_rng(8)
    trials, tasks, k = 40_000 if LONG else 4000, 60, 4
    p = rng.beta(2, 2, size=tasks)
    means = rng.binomial(k, p, size=(trials, 5, tasks)).mean(axis=2) / k
    sd = means[:, :3].std(axis=1, ddof=1)
    delta = np.abs(means[:, 4] - means[:, 3])
    per_sd = wai.noise_band(1.0, df=2)  # the band is linear in the sd
    assert wai.noise_band(float(sd[0]), df=2) == pytest.approx(per_sd * sd[0])
    through, normal = np.mean(delta > per_sd * sd), np.mean(delta > wai.noise_band(1.0, df=math.inf) * sd)
    print(f"noise band A/A with 3 re-runs: t {through:.4f}, normal {normal:.4f} (n={trials})")
    assert through <= 0.06 and normal >= 0.15
    runs = [[{"task_id": f"t{i}", "rollout_index": j, "reward": int(rng.random() < q)} for i, q in enumerate(p)
             for j in range(k)] for _ in range(3)]
    ev = wai.eval_variance(*runs)
    assert wai.noise_band(ev) == pytest.approx(wai.noise_band(ev.run_sd, df=2)) == pytest.approx(ev.noise_band)


def test_bootstrap_ci_matches_the_normal_interval_and_is_seeded():
    rng = np.random.default_rng(7)
    values = rng.normal(0.5, 0.2, size=400)
    lo, hi = wai.bootstrap_ci(values, n_boot=4000, seed=1)
    half = sps.norm.ppf(0.975) * values.std(ddof=1) / math.sqrt(len(values))
    assert lo == pytest.approx(values.mean() - half, abs=0.004) and hi == pytest.approx(values.mean() + half, abs=0.004)
    assert wai.bootstrap_ci(values, n_boot=500, seed=3) == wai.bootstrap_ci(values, n_boot=500, seed=3)
    assert wai.bootstrap_ci([0.1, 0.9]) is None  # below 3 values
    mlo, mhi = wai.bootstrap_ci(values, stat=np.median, n_boot=2000, seed=0)
    assert mlo < float(np.median(values)) < mhi
    with pytest.raises(ValueError, match="finite"):
        wai.bootstrap_ci([0.1, float("nan"), 0.3])


def test_compare_runs_paired_matches_scipy_sign_flip_test():
    p = np.linspace(0.2, 0.8, 12)
    a = _rows(p, 4, seed=0)
    b = _rows(np.minimum(p + 0.25, 1), 4, seed=1)
    r = wai.compare_runs(a, b, n_boot=4096, seed=0)
    ma = {t: np.mean([x["reward"] for x in a if x["task_id"] == t]) for t in {x["task_id"] for x in a}}
    mb = {t: np.mean([x["reward"] for x in b if x["task_id"] == t]) for t in ma}
    d = np.array([mb[t] - ma[t] for t in sorted(ma)])
    assert r["paired"] and r["n_paired"] == 12 and r["delta"] == pytest.approx(d.mean())
    exact = sps.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=2**12,
                                 alternative="two-sided").pvalue
    assert r["p_value"] == pytest.approx(exact, abs=0.01)
    lo, hi = r["ci95"]
    assert lo < r["delta"] < hi and r["verdict"] == ("b_better" if lo > 0 else "no_difference_detected")
    assert "12 paired tasks" in str(r)


def test_compare_runs_counts_every_sign_flip_of_a_continuous_metric():
    """Issue 30 item 9: a continuous metric on 17 tasks is counted over all 2^17 flips (it drew 2,000 random
    ones): the p equals brute-force enumeration and scipy's exact permutation test."""
    rng = np.random.default_rng(12)
    tasks = 17
    a = [{"task_id": f"t{i}", "rollout_index": 0, "reward": 1, "markers": {"polite": float(v)}}
         for i, v in enumerate(rng.uniform(0.2, 0.8, size=tasks))]
    b = [dict(r, markers={"polite": r["markers"]["polite"] + float(rng.normal(0.06, 0.1))}) for r in a]
    r = wai.compare_runs(a, b, metric="marker:polite")
    d = np.array([y["markers"]["polite"] - x["markers"]["polite"] for x, y in zip(a, b)])
    signs = 1.0 - 2.0 * ((np.arange(2**tasks)[:, None] >> np.arange(tasks)) & 1)
    null = signs @ d
    tol = 1e-9 * np.abs(d).sum()
    brute = min(1.0, 2 * min(np.mean(null >= d.sum() - tol), np.mean(null <= d.sum() + tol)))
    assert r["p_exact"] is True and r["p_value"] == pytest.approx(brute, rel=1e-12)
    ref = sps.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf, vectorized=True)
    assert r["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)


def test_compare_runs_unpaired_and_markers():
    a = _rows([0.2] * 4, 4, seed=2, prefix="a")
    b = _rows([0.8] * 4, 4, seed=3, prefix="b")
    r = wai.compare_runs(a, b)
    assert not r["paired"] and r["p_value"] is None and r["n_only_a"] == 4 and r["n_only_b"] == 4
    assert r["note"].startswith("most tasks unpaired: fewer than 5 shared tasks")
    assert r["delta"] == pytest.approx(np.mean([x["reward"] for x in b]) - np.mean([x["reward"] for x in a]))
    few = wai.compare_runs(a[:8], b[:8])
    assert few["ci95"] is None and few["verdict"] == "insufficient_data"
    ma = [dict(x, markers={"polite": 1.0}) for x in _rows([0.5] * 6, 2, seed=4)]
    mb = [dict(x, markers={"polite": 0.0}) for x in _rows([0.5] * 6, 2, seed=5)]
    m = wai.compare_runs(ma, mb, metric="marker:polite")
    assert m["delta"] == -1.0 and m["verdict"] == "a_better"
    with pytest.raises(ValueError, match="metric="):
        wai.compare_runs(a, b, metric="accuracy")


def test_eval_power_verdicts():
    assert wai.eval_power([])["verdict"] == "empty"
    saturated = wai.eval_power(_rows([1.0] * 30, 4, seed=0))
    assert saturated["verdict"] == "saturated" and saturated["tied_pass"] == 30
    assert saturated["warnings"][0].startswith("this held-out set cannot prove a 0.050 gain")
    assert wai.eval_power(_rows([0.0] * 30, 4, seed=0))["verdict"] == "floored"
    small = wai.eval_power(_rows(np.linspace(0.3, 0.7, 20), 4, seed=1), effect=0.05)
    expected = wai.holdout_size(0.05, base=small["base"], k=4).n_tasks
    assert small["verdict"] == "underpowered" and small["n_needed"] == expected > 20
    big = wai.eval_power(_rows(np.linspace(0.3, 0.7, 300), 8, seed=2), effect=0.3)
    assert big["verdict"] == "usable" and big["warnings"] == [] and big["resolvable"] >= big["n_needed"]
    assert "usable: 300 tasks" in str(big)
    with pytest.raises(ValueError, match="band="):
        wai.eval_power(_rows([0.5] * 5, 4, seed=0), band=(0.9, 0.1))


def test_pass_at_unanimous_short_imputes_only_unanimous_groups():
    rows = [{"task_id": "full", "rollout_index": i, "reward": r} for i, r in enumerate([1, 1, 0, 1])]
    rows += [{"task_id": "short_pass", "rollout_index": i, "reward": 1} for i in range(2)]
    rows += [{"task_id": "short_mixed", "rollout_index": i, "reward": i % 2} for i in range(2)]
    base = wai.pass_at(rows, k=4)
    assert base.n_groups_at_k == 1 and base.n_groups_imputed == 0
    imputed = wai.pass_at(rows, k=4, unanimous_short=True)
    assert imputed.n_groups_imputed == 1 and imputed.n_groups_at_k == 2
    pow_full = math.comb(3, 4) / math.comb(4, 4)  # 0: three passes cannot fill four draws
    at_full = 1 - math.comb(1, 4) / math.comb(4, 4)
    assert imputed.pass_pow_k == pytest.approx((pow_full + 1) / 2)
    assert imputed.pass_at_k == pytest.approx((at_full + 1) / 2)
    assert "1 short unanimous imputed" in str(imputed)


def test_pass_at_config_reads_the_run_conditions():
    rows = [{"task_id": f"t{i}", "rollout_index": 0, "reward": i % 2, "final_text": "ok" if i else "",
             "sampling": {"temperature": 0.7, "max_tokens": 256 if i < 3 else 512},
             "finish_reason": "length" if i == 1 else "stop", "policy_version": "m@abc123"} for i in range(4)]
    cfg = wai.pass_at(rows).config
    assert cfg["temperature"] == 0.7 and cfg["max_tokens"] is None and cfg["mixed"] == ["max_tokens"]
    assert cfg["prompt_hash"] == "abc123" and cfg["truncated_share"] == 0.25 and cfg["answered_share"] == 0.75
    assert cfg["graded_share"] == 1.0


def test_sdk_key_names_run_std_and_task_std():
    runs = [_rows(np.linspace(0.2, 0.8, 10), 4, seed=s) for s in range(3)]
    ev = wai.eval_variance(*runs)
    means = [np.mean([np.mean([x["reward"] for x in r if x["task_id"] == f"t{t}"]) for t in range(10)]) for r in runs]
    assert ev.run_std == ev.run_sd == pytest.approx(np.std(means, ddof=1))
    assert ev.to_dict()["run_std"] == ev.run_sd and ev.to_dict()["noise_band_df"] == 2
    before, after = runs[0], runs[1]
    assert wai.delta_report(before, after, run_std=0.03).noise_band == pytest.approx(wai.noise_band(0.03, df=math.inf))
    assert wai.delta_report(before, after, run_std=0.03, run_std_runs=3).noise_band == pytest.approx(
        wai.noise_band(0.03, df=2))
    with pytest.raises(ValueError, match="not both"):
        wai.delta_report(before, after, run_std=0.03, noise=0.03)
    with pytest.raises(ValueError, match="run_std_runs="):
        wai.delta_report(before, after, run_std_runs=3)
    h = wai.holdout_size(0.1, task_std=0.3)
    assert h.n_tasks == wai.holdout_size(0.1, task_sd=0.3).n_tasks and h.task_std == pytest.approx(0.3)
