"""``bootstrap_mean_ci``'s small-call path (``stats._exact_interval_fast``, ``stats._pmf_quantiles``) against
the general one it replaces (``stats._exact_interval``, ``ExactMean.quantiles``): the same floats, bit for bit,
on seeded random inputs (lattices of many denominators, off-lattice values, ties, constants, n = 1 and 2,
weights, levels near 0 and 1, every method)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whileai_core.measure import stats

LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999999, 1 - 1e-15)
METHODS = ("percentile", "basic", "bca")


def _random_values(rng: np.random.Generator) -> np.ndarray:
    """One seeded input: lattice rates c/k (k up to 40), integers, constants, off-lattice floats, or a mix."""
    n = int(rng.choice([1, 2, 3, 5, 10, 17, 40, 64, 65, 100, 129, 300]))
    kind = int(rng.integers(6))
    if kind == 0:
        k = int(rng.integers(1, 41))
        return rng.binomial(k, rng.beta(2, 1.5, size=n)) / k
    if kind == 1:
        return rng.integers(-3, 4, size=n).astype(float)
    if kind == 2:
        return np.full(n, float(rng.choice([0.0, 1.0, 0.25, -2.5, 1 / 3])))
    if kind == 3:
        return rng.random(n)
    if kind == 4:
        return (rng.random(n) < rng.random()).astype(float)
    k = int(rng.choice([3, 7, 12, 1000, 997]))
    return rng.integers(0, k + 1, size=n) / k + float(rng.choice([0.0, 1e6, -7.0]))


def test_the_fast_exact_interval_is_the_general_one_bit_for_bit() -> None:
    rng = np.random.default_rng(34)
    for _ in range(1500):
        x = _random_values(rng)
        kw: dict[str, Any] = {"level": float(rng.choice(LEVELS)), "method": str(rng.choice(METHODS)),
                              "max_support": int(rng.choice([2**16, 300, 41])),
                              "max_denominator": int(rng.choice([1000, 8])),
                              "tail": float(rng.choice([1e-15, 0.0, 1e-3]))}
        assert stats._exact_interval_fast(x, **kw) == stats._exact_interval(x, **kw), (x.tolist(), kw)


def test_bootstrap_mean_ci_is_the_general_path_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole call, weights and 2-D values included, against the same call with the general exact path."""
    rng = np.random.default_rng(35)
    cases = []
    for _ in range(600):
        x = _random_values(rng)
        kw: dict[str, Any] = {"level": float(rng.choice(LEVELS)), "method": str(rng.choice(METHODS))}
        weights = None if rng.random() < 0.7 else np.full(len(x), float(rng.choice([1.0, 2.0])))
        if weights is not None and rng.random() < 0.5:
            weights = rng.random(len(x))
        cases.append((x, weights, kw))
    fast = [stats.bootstrap_mean_ci(x, w, draws=200, **kw) for x, w, kw in cases]
    monkeypatch.setattr(stats, "_exact_interval_fast", stats._exact_interval)
    general = [stats.bootstrap_mean_ci(x, w, draws=200, **kw) for x, w, kw in cases]
    assert fast == general


def test_pmf_quantiles_are_exact_mean_quantiles_bit_for_bit() -> None:
    """Random pmfs, pmfs with CDF steps landing on the levels (ties), and one-point pmfs."""
    rng = np.random.default_rng(36)
    for _ in range(2000):
        size = int(rng.choice([1, 2, 5, 31, 261, 1000]))
        pmf = rng.random(size) ** float(rng.choice([1.0, 8.0]))
        if rng.random() < 0.3:
            pmf = np.full(size, 1.0 / size)  # steps of 1/size: CDFs at 0.025 or 0.975 exactly when 40 | size
        if rng.random() < 0.2:
            pmf[rng.integers(size, size=size // 2)] = 0.0
        if pmf.sum() == 0:
            pmf[0] = 1.0
        level = float(rng.choice(LEVELS))
        levels = ((1 - level) / 2, (1 + level) / 2)
        base, scale = int(rng.integers(-50, 50)), int(rng.integers(1, 400))
        exact = stats.ExactMean(pmf, base, scale, 0)
        assert stats._pmf_quantiles(pmf, base, scale, levels) == exact.quantiles(levels)


def test_the_tally_refuses_exactly_the_supports_past_max_support() -> None:
    """``_lattice_tally`` under a small ``max_support`` (n + 1 or less skips the sort: any spread needs n + 1
    points) is the unbounded tally when its support ``n x span + 1`` fits, else None, on seeded inputs."""
    rng = np.random.default_rng(36)
    for _ in range(1500):
        x = _random_values(rng)
        n, most = len(x), int(rng.choice([1000, 8]))
        full = stats._lattice_tally(x, most, 10**12)
        for max_support in {1, n - 1, n, n + 1, n + 2, 2 * n + 1, 4 * n, 40 * n + 1} - {0, -1}:
            got = stats._lattice_tally(x, most, max_support)
            if full is None or n * (len(full[2]) - 1) + 1 > max_support:
                assert got is None, (x.tolist(), max_support)
            else:
                assert got is not None
                assert got[:2] == full[:2] and got[3] == full[3] and np.array_equal(got[2], full[2])
