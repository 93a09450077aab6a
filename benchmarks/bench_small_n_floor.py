"""Issue 34: the floor of a bit-identical exact bootstrap interval at n = 10 to 10,000.

``bootstrap_mean_ci(v)``'s answer is fixed by the float results of a few numpy calls: the input check
(``_plain_values``), the lattice tally (``_lattice_tally``), the sum's pmf (n=10: four ``np.convolve`` by
repeated squaring; n >= 100: rfft, its n-th power, irfft, clip) and one ``np.cumsum``. Any faster path that
keeps every output bit must still make those calls (or reproduce their round-off), so their summed time is the
floor; this prints it beside scipy.stats.bootstrap and the whole call, measured in one interleaved run.

    PYTHONPATH=. python benchmarks/bench_small_n_floor.py
"""

from __future__ import annotations

import gc
import statistics
import timeit
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import scipy.stats as sps

from whileai_core.defaults import (
    EXACT_BOOTSTRAP_DIRECT_MAX,
    EXACT_BOOTSTRAP_MAX_SUPPORT,
    EXACT_BOOTSTRAP_TAIL,
    LATTICE_MAX_DENOMINATOR,
)
from whileai_core.measure import stats

MIN_TIME_S = 0.02  # each timing repeats a call until it runs this long (timer resolution); convention
ROUNDS = 3  # interleaved rounds per size, median reported; convention
DRAWS, BATCH, K = 2000, 200, 4  # bench_stats.py --small-n's scipy call and its values on a lattice of quarters


def per_call(fn: Callable[[], Any], min_time: float = MIN_TIME_S) -> float:
    """Seconds per call of ``fn``, repeated until one timing lasts ``min_time``."""
    number = 1
    while timeit.timeit(fn, number=number) < min_time:
        number *= 2
    return timeit.timeit(fn, number=number) / number


def pmf_calls(v: np.ndarray) -> Callable[[], Any]:
    """The numpy calls that make the exact pmf of the resampled sum (``_sum_pmf``'s, without its bookkeeping)."""
    tally = stats._lattice_tally(v, LATTICE_MAX_DENOMINATOR, EXACT_BOOTSTRAP_MAX_SUPPORT)
    assert tally is not None
    _, _, share, observed = tally
    n = len(v)
    if n * (len(share) - 1) + 1 <= EXACT_BOOTSTRAP_DIRECT_MAX:
        return lambda: stats._convolution_power(share, n)
    size = 1 << (2 * stats._tail_width(share, n, observed, EXACT_BOOTSTRAP_TAIL)).bit_length()
    return lambda: np.maximum(np.fft.irfft(stats._power(np.fft.rfft(share, size), n), size), 0.0)


def main(rounds: int = ROUNDS) -> None:
    """One line per n: scipy, the call, the floor and its parts."""
    rng = np.random.default_rng(0)
    for m in (10, 100, 1000, 10_000):
        v = rng.binomial(K, rng.beta(2, 1.5, size=m)) / K
        pmf = stats.exact_bootstrap_mean(v)
        assert pmf is not None
        fns: dict[str, Callable[[], Any]] = {
            "scipy": partial(sps.bootstrap, (v,), np.mean, n_resamples=DRAWS, method="percentile", rng=2,
                             batch=BATCH, vectorized=True),
            "call": partial(stats.bootstrap_mean_ci, v),
            "input": partial(stats._plain_values, v),
            "tally": partial(stats._lattice_tally, v, LATTICE_MAX_DENOMINATOR, EXACT_BOOTSTRAP_MAX_SUPPORT),
            "pmf": pmf_calls(v),
            "cumsum": partial(np.cumsum, pmf.pmf)}
        times: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(rounds):
            for name, fn in fns.items():
                gc.collect()
                times[name].append(per_call(fn))
        t = {k: statistics.median(x) for k, x in times.items()}
        floor = t["input"] + t["tally"] + t["pmf"] + t["cumsum"]
        print(f"n={m:,}: scipy {t['scipy'] * 1e6:.0f} us; call {t['call'] * 1e6:.1f} us = "
              f"{t['scipy'] / t['call']:.0f}x; floor {floor * 1e6:.1f} us = {t['scipy'] / floor:.0f}x (input "
              f"{t['input'] * 1e6:.1f}, tally {t['tally'] * 1e6:.1f}, pmf {t['pmf'] * 1e6:.1f}, cumsum "
              f"{t['cumsum'] * 1e6:.1f})")


if __name__ == "__main__":
    main()
