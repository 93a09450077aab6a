"""Sequential stopping and pooled baselines (issue 21), seeded simulations printed side by side with Wilson
intervals (the tests assert the same bounds on smaller runs: tests/measure/test_sequential.py, test_history.py).

1. Sequential vs fixed design (Lan-DeMets O'Brien-Fleming spending, rounds of 2 up to k=8, baseline k=8):
   A/A false alarms at max_drop=0 (pure significance), power at a drop where the fixed design has ~80%, both
   on the same simulated runs; and the trials an A/A run uses, on a suite that can rule out max_drop=0.05.
2. Pooled vs single-run baseline under between-run variation (each run jitters every scenario's logit rate
   by N(0, 0.5^2)): A/A false alarms and power at the same PR cost (k=4 trials now), 1 vs 5 baseline runs.

    python benchmarks/bench_sequential.py [--runs 4000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from whileai_core.measure.between_runs import pooling_weights, prediction_band
from whileai_core.measure.sequential import SequentialPlan, sequential_paths
from whileai_core.measure.stats import wilson_interval

ALPHA = 0.05


def rate(hits: np.ndarray) -> str:
    n, k = len(hits), int(np.sum(hits))
    lo, hi = wilson_interval(k, n)
    return f"{k / n:.4f} [{lo:.4f}, {hi:.4f}] (n={n})"


def mean_ci(x: np.ndarray) -> str:
    m, se = float(np.mean(x)), float(np.std(x, ddof=1) / np.sqrt(len(x)))
    return f"{m:.3f} [{m - 1.96 * se:.3f}, {m + 1.96 * se:.3f}] (n={len(x)})"


def simulate(runs: int, scenarios: int, *, drop: float, seed: int, k: int = 8, m: int = 2, kb: int = 8):
    rng = np.random.default_rng(seed)
    p = rng.beta(4, 2, size=(runs, scenarios))
    bc = rng.binomial(kb, p)
    plan = SequentialPlan(m, k)
    sizes = [len(plan.trials(r)) for r in range(plan.rounds)]
    inc = np.stack([rng.binomial(s, np.clip(p - drop, 0, 1)) for s in sizes], axis=1)
    an = np.broadcast_to(np.cumsum(sizes)[None, :, None], inc.shape)
    return bc, np.full_like(bc, kb), np.cumsum(inc, axis=1), an, plan


def sequential_vs_fixed(runs: int, seed: int) -> None:
    print(f"1. sequential (rounds of 2 up to k=8) vs fixed k=8; 40 scenarios, baseline k=8, alpha {ALPHA} "
          "(red side alpha/2)")
    for label, drop in (("A/A false alarms (max_drop=0)", 0.0), ("power at a 0.10 drop (max_drop=0)", 0.10)):
        bc, bn, ac, an, plan = simulate(runs, 40, drop=drop, seed=seed + int(drop * 100))
        seq = sequential_paths(bc, bn, ac, an, plan.max_trials, alpha=ALPHA, max_drop=0.0)
        fixed = sequential_paths(bc, bn, ac[:, -1:], an[:, -1:], plan.max_trials, alpha=ALPHA, max_drop=0.0)
        print(f"   {label:<36} sequential {rate(seq.red)}   fixed {rate(fixed.red)}   "
              f"difference {seq.red.mean() - fixed.red.mean():+.4f}")
    bc, bn, ac, an, plan = simulate(runs // 2, 300, drop=0.0, seed=seed + 7)
    paths = sequential_paths(bc, bn, ac, an, plan.max_trials, alpha=ALPHA, max_drop=0.05)
    used = an[np.arange(len(paths.stop)), paths.stop, 0] / plan.max_trials
    print(f"   A/A trials used vs fixed, 300 scenarios, max_drop=0.05: {mean_ci(used)} of the fixed design; "
          f"stopped after round 1/2/3/4: {np.bincount(paths.stop, minlength=4).tolist()}; "
          f"false alarms {rate(paths.red)}")


def history(runs: int, scenarios: int, n_hist: int, *, drop: float, seed: int, k: int = 4, sd: float = 0.5,
            shift: float = 0.0, drift: float = 0.0):
    """Logit rates N(0.8, 1) jittered per run and scenario (logit sd ``sd``), every run shifted as a whole by
    N(0, shift^2) in probability, the two oldest runs better by ``drift``, the current run worse by ``drop``."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.8, 1.0, size=(runs, 1, scenarios))
    p = 1 / (1 + np.exp(-(mu + rng.normal(0, sd, size=(runs, n_hist + 1, scenarios)))))
    offset = np.r_[np.full(2, drift), np.zeros(n_hist - 2), -drop][None, :, None]
    p = p + offset + (rng.normal(0, shift, size=(runs, n_hist + 1, 1)) if shift else 0.0)
    passes = rng.binomial(k, np.clip(p, 0, 1))
    return passes[:, :n_hist], passes[:, n_hist], k


def red(base: np.ndarray, current: np.ndarray, k: int, used: int) -> np.ndarray:
    bc = base[:, -used:].sum(axis=1)
    return sequential_paths(bc, np.full_like(bc, k * used), current[:, None, :], np.full_like(current, k)[:, None, :],
                            k, alpha=ALPHA, max_drop=0.0).red


def band_red(base: np.ndarray, current: np.ndarray, k: int) -> np.ndarray:
    """The pooled runs' noise band (History.noise, drift refusal included) cleared on the worse side."""
    rates = base / k
    weights, _ = pooling_weights(rates.mean(axis=-1), alpha=ALPHA)
    band, _, _ = prediction_band(rates, weights)
    delta = (current / k).mean(axis=-1) - (weights * rates.mean(axis=-1)).sum(axis=-1) / weights.sum(axis=-1)
    return delta <= -band


def pooled_vs_single(runs: int, seed: int) -> None:
    print("2. pooled (last 5 runs) vs single-run baseline; 60 scenarios, k=4 now, between-run logit sd 0.5 per "
          "scenario; 'pooled + band' also clears the runs' noise band (delta_report(noise=History.noise))")
    rows = (("A/A false alarms", {}), ("A/A, run-level shift sd 0.03", {"shift": 0.03}),
            ("A/A, 2 of 5 old runs better by 0.05", {"drift": 0.05}), ("power at a 0.06 drop", {"drop": 0.06}),
            ("power at a 0.10 drop", {"drop": 0.10}))
    for i, (label, kw) in enumerate(rows):
        base, cur, k = history(runs, 60, 5, seed=seed + 11 + i, **{"drop": 0.0, **kw})
        pooled = red(base, cur, k, 5)
        print(f"   {label:<36} single {rate(red(base, cur, k, 1))}   pooled {rate(pooled)}   "
              f"pooled + band {rate(pooled & band_red(base, cur, k))}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    start = time.perf_counter()
    sequential_vs_fixed(args.runs, args.seed)
    pooled_vs_single(args.runs, args.seed)
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
