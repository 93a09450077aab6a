"""Speed of the statistics core against scipy, measured side by side in one run.

    python benchmarks/bench_stats.py            # issue 34's table: each row a ratio with its goal (~2 min)
    python benchmarks/bench_stats.py --quick    # the same rows, fewer rounds (~40 s)
    python benchmarks/bench_stats.py --rows [--quick]  # only the rows-to-statistics goals (pass_at, compare)
    python benchmarks/bench_stats.py --small-n [--quick]   # only the bootstrap and permutation rows (~1 min)
    python benchmarks/bench_stats.py --detail [--n 20000]  # issue 3's comparisons: intervals, memory, BCa

Issue 34's rows: pass_at over 400,000 row dicts vs scipy.stats.bootstrap on the per-task rates (same draws);
compare on 100,000 rows a side, unsliced and with 10 slices; the bootstrap interval (the default, the exact
distribution; ``exact=False``'s draws; at n=10 the numpy floor) and the paired permutation test vs scipy at n
from 10 to 10,000, each call repeated until 10 ms have passed. Each row's two sides run in alternating rounds (medians), so a shared
machine's load hits both alike.

The ``--detail`` mode:

Prints, for each comparison, the median wall time of each side, the ratio, the interval both produce, and the
peak of traced (numpy) memory. Targets from issue 3: pass_at's bootstrap >= 20x faster than
scipy.stats.bootstrap on the same per-task data with the same interval to +-0.005; a paired permutation test
with 10,000 permutations at n = 100,000 under 1 s.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable
from itertools import repeat
from typing import Any

import numpy as np
import scipy.stats as sps

from whileai_core.measure import stats
from whileai_core.measure.columns import _dict_index
from whileai_core.measure.compare import compare
from whileai_core.measure.delta import delta_report
from whileai_core.measure.pass_at import pass_at


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def peak_mb(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def line(label: str, t: float, mem: float, extra: str = "") -> None:
    print(f"  {label:<46} {t * 1000:9.1f} ms  peak {mem:8.1f} MB  {extra}")


def detail(argv: list[str]) -> None:
    """Issue 3's detailed comparisons (``--detail``): intervals, memory, BCa, continuous values, sign flips."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000, help="tasks")
    ap.add_argument("--k", type=int, default=4, help="rollouts per task")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--permutations", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    n, k, B, P, R = args.n, args.k, args.draws, args.permutations, args.repeats
    rng = np.random.default_rng(0)
    counts = rng.binomial(k, rng.beta(2, 1.5, size=n))
    rates = counts / k
    print(f"numpy {np.__version__}, scipy {__import__('scipy').__version__}; n={n} tasks, k={k}, draws={B}")

    # 1. pass@1 task bootstrap: per-task counts -> multinomial over cells vs scipy.stats.bootstrap
    print("\n1. pass@1 percentile bootstrap over tasks (same per-task data)")
    ours = lambda: stats.bootstrap_mean_ci(rates, draws=B, seed=1)
    theirs = lambda: sps.bootstrap((rates,), np.mean, n_resamples=B, method="percentile",
                                   rng=2, batch=200, vectorized=True).confidence_interval
    t_ours, ci_ours = timed(ours, R)
    t_sc, ci_sc = timed(theirs, max(1, R - 2))
    line("whileai stats.bootstrap_mean_ci (cells)", t_ours, peak_mb(ours), f"[{ci_ours[0]:.5f}, {ci_ours[1]:.5f}]")
    line("scipy.stats.bootstrap (vectorized, batch=200)", t_sc, peak_mb(theirs),
         f"[{ci_sc.low:.5f}, {ci_sc.high:.5f}]")
    diff = max(abs(ci_ours[0] - ci_sc.low), abs(ci_ours[1] - ci_sc.high))
    print(f"  ratio scipy / whileai: {t_sc / t_ours:.0f}x   max endpoint difference {diff:.5f} (target <= 0.005)")

    # the whole pass_at call on rows (grouping row dicts dominates; reported, not compared)
    rows = [{"task_id": f"t{t}", "reward": int(r < c)} for t, c in enumerate(counts) for r in range(k)]
    t_rows, res = timed(lambda: pass_at(rows, draws=B), 1)
    line(f"measure.pass_at on {len(rows)} row dicts (all 4 intervals)", t_rows, peak_mb(lambda: pass_at(rows)))
    print(f"  {res}")
    t_int, _ = timed(lambda: stats.bootstrap_means(
        np.stack([rates, stats.pass_pow_k(np.full(n, k), counts, k), stats.pass_at_k(np.full(n, k), counts, k)], 1),
        draws=B, seed=0), R)
    print(f"  of which the joint 3-statistic bootstrap: {t_int * 1000:.1f} ms")

    # 2. BCa: closed-form jackknife acceleration vs scipy (O(n^2) jackknife: run at a smaller n)
    nb = min(n, 5000)
    print(f"\n2. BCa interval at n={nb} (scipy's jackknife is O(n^2) in time)")
    ours_b = lambda: stats.bootstrap_mean_ci(rates[:nb], draws=B, seed=1, method="BCa")
    theirs_b = lambda: sps.bootstrap((rates[:nb],), np.mean, n_resamples=B, method="BCa",
                                     rng=2, batch=500, vectorized=True).confidence_interval
    t1, c1 = timed(ours_b, R)
    t2, c2 = timed(theirs_b, 1)
    line("whileai BCa (cells, closed-form acceleration)", t1, peak_mb(ours_b), f"[{c1[0]:.5f}, {c1[1]:.5f}]")
    line("scipy BCa (batch=500)", t2, peak_mb(theirs_b), f"[{c2.low:.5f}, {c2.high:.5f}]")
    print(f"  ratio scipy / whileai: {t2 / t1:.0f}x")

    # 3. continuous per-task values: chunked index bootstrap vs scipy
    print(f"\n3. continuous per-task values (n={n}): chunked int32 index bootstrap")
    cont = rng.beta(2, 2, size=n)
    ours_c = lambda: stats.bootstrap_mean_ci(cont, draws=B, seed=1)
    theirs_c = lambda: sps.bootstrap((cont,), np.mean, n_resamples=B, method="percentile",
                                     rng=2, batch=200, vectorized=True).confidence_interval
    t1, c1 = timed(ours_c, 1)
    t2, c2 = timed(theirs_c, 1)
    line("whileai index bootstrap (64 MB chunks)", t1, peak_mb(ours_c), f"[{c1[0]:.5f}, {c1[1]:.5f}]")
    line("scipy.stats.bootstrap (batch=200)", t2, peak_mb(theirs_c), f"[{c2.low:.5f}, {c2.high:.5f}]")
    print(f"  ratio scipy / whileai: {t2 / t1:.1f}x")

    # 4. paired permutation test at n tasks, P permutations
    print(f"\n4. paired sign-flip test, n={n} paired tasks, P={P}")
    d = (rng.binomial(k, 0.52, size=n) - rng.binomial(k, 0.5, size=n)) / k
    exact = lambda: stats.paired_permutation_test(d)
    mc = lambda: stats.paired_permutation_test(d, permutations=P, exact=False)
    dc = d + rng.normal(0, 1e-3, size=n)  # continuous: no lattice, many levels
    flips = lambda: stats.paired_permutation_test(dc, permutations=P)
    t_e, r_e = timed(exact, R)
    t_m, r_m = timed(mc, R)
    t_f, r_f = timed(flips, 1)
    line("exact null by lattice convolution", t_e, peak_mb(exact), f"p={r_e.p_value:.6f}")
    line(f"{P} flips as Binomial(h, 1/2) per |d| level", t_m, peak_mb(mc), f"p={r_m.p_value:.6f}")
    line(f"{P} chunked random sign flips (continuous d)", t_f, peak_mb(flips), f"p={r_f.p_value:.6f}")
    print(f"  target: under 1 s -> exact {t_e:.3f} s, per-level {t_m:.3f} s, sign flips {t_f:.3f} s")
    ns = min(n, 1000)
    ours_s = lambda: stats.paired_permutation_test(d[:ns], permutations=P, exact=False)
    theirs_s = lambda: sps.permutation_test((d[:ns],), lambda x, axis: np.mean(x, axis=axis),
                                            permutation_type="samples", n_resamples=P, vectorized=True,
                                            rng=1, batch=1000)
    t1, o1 = timed(ours_s, R)
    t2, o2 = timed(theirs_s, 1)
    print(f"  at n={ns}: scipy.stats.permutation_test {t2 * 1000:.1f} ms (p={o2.pvalue:.4f}) vs whileai "
          f"{t1 * 1000:.2f} ms (p={o1.p_value:.4f}): ratio {t2 / t1:.0f}x")

    # 5. delta_report end to end on rows
    print(f"\n5. delta_report on 2 x {len(rows)} row dicts")
    after = [{"task_id": r["task_id"], "reward": r["reward"]} for r in rows]
    for r in after[: len(after) // 50]:
        r["reward"] = 1
    t_d, rep = timed(lambda: delta_report(rows, after), 1)
    line("measure.delta_report", t_d, peak_mb(lambda: delta_report(rows, after)))
    print(f"  {rep}")


def interleaved(ours: Callable[[], Any], theirs: Callable[[], Any], rounds: int, theirs_rounds: int | None = None
                ) -> tuple[float, float]:
    """Median wall time of each side over rounds run alternately (ours, theirs, ours, ...): under a shared
    machine's load both sides see the same conditions."""
    a, b = [], []
    ours()  # warm: first-call imports and caches are not what a user waits for on every call
    theirs_rounds = rounds if theirs_rounds is None else theirs_rounds
    for i in range(max(rounds, theirs_rounds)):
        if i < rounds:
            a.append(timed(ours, 1)[0])
        if i < theirs_rounds:
            b.append(timed(theirs, 1)[0])
    return statistics.median(a), statistics.median(b)


def rows_floor(rows: list[dict[str, Any]]) -> np.ndarray:
    """The least any statistic over row dicts does: ``task_id`` and ``reward`` read (``map(dict.get)``, no frame
    per row), the keys numbered by one ``dict.setdefault`` pass (``columns._dict_index``, the project's own),
    passes per task by ``bincount``."""
    keys = list(map(dict.get, rows, repeat("task_id")))
    rewards = np.fromiter(map(dict.get, rows, repeat("reward")), float, len(rows))
    codes = _dict_index(keys).codes
    passes: np.ndarray = np.bincount(codes, weights=rewards) / np.bincount(codes)
    return passes


def row(label: str, value: str, goal: str, ok: bool) -> None:
    print(f"  {label:<58} {value:>22}   goal {goal:<14} {'MET' if ok else 'not met'}")


def load() -> str:
    """The load average now (1, 5, 15 minutes): a shared machine's wall times move with it."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def table(quick: bool, rows_only: bool = False) -> None:
    """Issue 34's statistics rows, each measured side by side in this run, with its goal."""
    rounds = 2 if quick else 5
    draws, perms, k = 2000, 10_000, 4
    print(f"numpy {np.__version__}, scipy {__import__('scipy').__version__}; draws={draws}, permutations={perms}, "
          f"{rounds} interleaved rounds per row (medians); load {load()}\n")
    rng = np.random.default_rng(0)
    n = 100_000
    counts = rng.binomial(k, rng.beta(2, 1.5, size=n))
    rows = [{"task_id": f"t{t}", "reward": int(r < c)} for t, c in enumerate(counts) for r in range(k)]
    rates = counts / k
    ours, theirs = interleaved(lambda: pass_at(rows, draws=draws), lambda: sps.bootstrap(
        (rates,), np.mean, n_resamples=draws, method="percentile", rng=2, batch=200, vectorized=True), rounds,
        max(1, rounds // 2))
    row(f"pass_at over {len(rows):,} row dicts vs scipy.stats.bootstrap on the rates",
        f"{ours:.3f} s vs {theirs:.2f} s = {theirs / ours:.1f}x", ">= 20x", theirs / ours >= 20)
    floor, _ = interleaved(lambda: rows_floor(rows), lambda: None, rounds)
    print(f"      floor: the two fields read, task keys factorized, passes counted (no check, no interval) "
          f"{floor:.3f} s = {theirs / floor:.1f}x")

    tasks = 25_000
    p = rng.beta(2, 1.5, size=tasks)

    def side(shift: float, seed: int) -> list[dict[str, Any]]:
        r = np.random.default_rng(seed)
        return [{"task_id": f"t{t}", "rollout_index": i, "reward": int(r.random() < min(1.0, p[t] + shift)),
                 "scenario": {"tool": f"tool{t % 10}"}} for t in range(tasks) for i in range(k)]

    before, after = side(0.0, 1), side(0.01, 2)
    flat, sliced = interleaved(lambda: compare(before, after), lambda: compare(before, after, by="tool"), rounds)
    row(f"compare, {len(before):,} rows a side, unsliced", f"{flat:.3f} s = {flat / 0.3:.2f}x the goal", "<= 0.3 s",
        flat <= 0.3)
    row("compare with 10 slices (by=)", f"{sliced:.3f} s = {sliced / flat:.2f}x unsliced", "<= 2x unsliced",
        sliced <= 2 * flat)
    seq, _ = interleaved(lambda: compare(before, after, sequential=2), lambda: None, max(1, rounds // 2))
    row("compare sequential=2 (rounds of rollout_index)", f"{seq:.3f} s = {seq / flat:.2f}x unsliced", "(reported)",
        True)
    print(f"  (load {load()})")
    if rows_only:
        return

    small_n(quick)


#: a small call is repeated until this much wall time has passed, and timed as the mean over those calls
SMALL_CALL_MIN_S = 0.010


def per_call(fn: Callable[[], Any], min_s: float = SMALL_CALL_MIN_S) -> float:
    """Wall time of one call of ``fn``: calls repeated until ``min_s`` has passed (a 20 us call is timed over
    ~500 calls, not one), their mean."""
    count, t0 = 0, time.perf_counter()
    while True:
        fn()
        count += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= min_s:
            return elapsed / count


def sides(fns: dict[str, Callable[[], Any]], rounds: int, scipy_rounds: int) -> dict[str, float]:
    """Median per-call time of each side over rounds in which the sides run one after another (A, B, C, A, B,
    C, ...), so a shared machine's load hits all alike; scipy (the first side) runs in ``scipy_rounds`` of them."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()  # warm: first-call imports and caches are not what a user waits for on every call
    for i in range(rounds):
        for j, (name, fn) in enumerate(fns.items()):
            if j > 0 or i < scipy_rounds:
                gc.collect()
                times[name].append(per_call(fn))
    return {name: statistics.median(t) for name, t in times.items()}


def small_n(quick: bool) -> None:
    """Issue 34's small-n rows: the bootstrap interval (the default exact distribution, ``exact=False``'s 2000
    draws, and at n=10 the numpy floor: one ``np.quantile`` call over the values, less than any numpy-based
    interval can cost) and the paired permutation test, each against scipy at n = 10 to 10,000."""
    rounds, draws, perms, k = (3 if quick else 5), 2000, 10_000, 4
    rng = np.random.default_rng(0)
    print(f"\n  per call, median of {rounds} interleaved rounds, calls repeated to >= {SMALL_CALL_MIN_S * 1000:.0f} ms "
          f"(load average {load()})")
    for m in (10, 100, 1000, 10_000):
        v = rng.binomial(k, rng.beta(2, 1.5, size=m)) / k
        fns: dict[str, Callable[[], Any]] = {
            "scipy": lambda v=v: sps.bootstrap((v,), np.mean, n_resamples=draws, method="percentile", rng=2,
                                               batch=200, vectorized=True),
            "default": lambda v=v: stats.bootstrap_mean_ci(v),
            "draws": lambda v=v: stats.bootstrap_mean_ci(v, draws=draws, seed=1, exact=False)}
        if m == 10:
            fns["floor"] = lambda v=v: np.quantile(v, [0.025, 0.975])
        t = sides(fns, rounds, rounds if m < 10_000 else max(1, rounds - 2))
        extra = f"; numpy floor {t['floor'] * 1e6:.0f} us = {t['scipy'] / t['floor']:.0f}x" if m == 10 else ""
        row(f"bootstrap interval, n={m:,}, vs scipy.stats.bootstrap ({t['scipy'] * 1e3:.1f} ms)",
            f"{t['default'] * 1e6:.0f} us = {t['scipy'] / t['default']:.0f}x", ">= 100x", t["scipy"] / t["default"] >= 100)
        print(f"      exact=False ({draws} draws) {t['draws'] * 1e6:.0f} us = {t['scipy'] / t['draws']:.0f}x{extra}")
    for m in ((10, 100, 1000) if quick else (10, 100, 1000, 10_000)):
        d = (rng.binomial(k, 0.52, size=m) - rng.binomial(k, 0.5, size=m)) / k
        t = sides({"scipy": lambda d=d: sps.permutation_test(
            (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", n_resamples=perms,
            vectorized=True, rng=1, batch=1000),
            "ours": lambda d=d: stats.paired_permutation_test(d, permutations=perms)},
            rounds, rounds if m <= 100 else 1)
        res = stats.paired_permutation_test(d)
        how = ("exact, sign table" if res.n_nonzero <= stats.EXACT_PERMUTATION_TABLE_MAX else "exact")  \
            if res.exact else "random flips"
        row(f"permutation test ({how}), n={m:,}, vs scipy.stats.permutation_test ({t['scipy'] * 1e3:.0f} ms)",
            f"{t['ours'] * 1e6:.0f} us = {t['scipy'] / t['ours']:.0f}x", ">= 100x", t["scipy"] / t["ours"] >= 100)


def main() -> None:
    import sys

    argv = sys.argv[1:]
    if "--detail" in argv:
        detail([a for a in argv if a != "--detail"])
        return
    if "--small-n" in argv:
        small_n("--quick" in argv)
        return
    table("--quick" in argv, rows_only="--rows" in argv)


if __name__ == "__main__":
    main()
