"""The exact bootstrap interval of a mean of lattice values (``stats.bootstrap_mean_ci(exact=True)``, Fisher &
Hall 1991): closed forms for 0/1 data, the Monte Carlo limit, scipy.stats.bootstrap, and invariants on seeded
random lattice data."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as sps

from whileai_core.errors import InvalidArgumentType
from whileai_core.measure import stats


@pytest.mark.parametrize("n, seed", [(10, 0), (37, 1), (200, 2), (1500, 3)])
@pytest.mark.parametrize("level", [0.8, 0.95])
def test_zero_one_data_is_binomial(n: int, seed: int, level: float) -> None:
    """0/1 values: the resampled mean is Binomial(n, p_hat) / n, so the percentile endpoints are binom.ppf's."""
    x = (np.random.default_rng(seed).random(n) < 0.3).astype(float)
    k = int(x.sum())
    lo, hi = stats.bootstrap_mean_ci(x, level=level, exact=True)
    a = (1 - level) / 2
    assert lo == sps.binom.ppf(a, n, k / n) / n
    assert hi == sps.binom.ppf(1 - a, n, k / n) / n
    blo, bhi = stats.bootstrap_mean_ci(x, level=level, exact=True, method="basic")
    assert blo == pytest.approx(2 * k / n - hi, abs=1e-12) and bhi == pytest.approx(2 * k / n - lo, abs=1e-12)


def test_zero_one_bca_uses_the_exact_share_below() -> None:
    n = 60
    x = (np.random.default_rng(4).random(n) < 0.2).astype(float)
    k = int(x.sum())
    share = sps.binom.cdf(k - 1, n, k / n) + sps.binom.pmf(k, n, k / n) / 2
    z0 = sps.norm.ppf(share)
    acc = stats._jackknife_acceleration(x, np.ones(n))
    levels = [sps.norm.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z))) for z in sps.norm.ppf([0.025, 0.975])]
    lo, hi = stats.bootstrap_mean_ci(x, exact=True, method="BCa")
    assert lo == sps.binom.ppf(levels[0], n, k / n) / n
    assert hi == sps.binom.ppf(levels[1], n, k / n) / n


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_monte_carlo_converges_to_the_exact_endpoints(method: str) -> None:
    v = np.random.default_rng(5).binomial(4, 0.6, size=80) / 4
    exact = stats.bootstrap_mean_ci(v, exact=True, method=method)
    drawn = stats.bootstrap_mean_ci(v, draws=200_000, seed=6, method=method)
    step = 1 / (4 * len(v))
    assert exact[0] == pytest.approx(drawn[0], abs=1.01 * step)
    assert exact[1] == pytest.approx(drawn[1], abs=1.01 * step)


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_close_to_scipy_bootstrap(method: str) -> None:
    v = np.random.default_rng(7).binomial(4, np.random.default_rng(8).beta(2, 1.5, size=300)) / 4
    lo, hi = stats.bootstrap_mean_ci(v, exact=True, method=method)
    ci = sps.bootstrap((v,), np.mean, n_resamples=20_000, method=method, rng=9, vectorized=True).confidence_interval
    assert abs(lo - ci.low) <= 0.005 and abs(hi - ci.high) <= 0.005


def test_random_lattice_data_invariants() -> None:
    rng = np.random.default_rng(10)
    for _ in range(200):
        k = int(rng.integers(1, 9))
        n = int(rng.integers(3, 300))
        v = rng.binomial(k, rng.beta(2, 1.5, size=n)) / k - (rng.integers(0, 2) * 0.5)
        est = float(np.sum(v) / n)
        previous = None
        for level in (0.5, 0.8, 0.9, 0.95, 0.99):
            lo, hi = stats.bootstrap_mean_ci(v, level=level, exact=True)
            assert lo <= est + 1e-12 and est - 1e-12 <= hi
            scale = n * 2 * k  # the -0.5 shift puts values on multiples of 1/(2k)
            for end in (lo, hi):
                assert math.isclose(end * scale, round(end * scale), abs_tol=1e-6)
            if previous is not None:
                assert lo <= previous[0] and hi >= previous[1]
            previous = (lo, hi)


def test_falls_back_to_draws_when_exact_does_not_apply() -> None:
    rng = np.random.default_rng(11)
    continuous = rng.random(50)
    lattice = rng.binomial(4, 0.5, size=50) / 4
    weights = rng.integers(1, 3, size=50).astype(float)
    assert stats.bootstrap_mean_ci(continuous, exact=True) == stats.bootstrap_mean_ci(continuous, exact=False)
    assert (stats.bootstrap_mean_ci(lattice, weights, exact=True)
            == stats.bootstrap_mean_ci(lattice, weights, exact=False))
    assert (stats.bootstrap_mean_ci(lattice, exact=True, max_support=100)
            == stats.bootstrap_mean_ci(lattice, exact=False))
    both = np.stack([lattice, lattice], axis=1)  # 2-D: the columns share draws
    assert stats.bootstrap_mean_ci(both, exact=True) == stats.bootstrap_mean_ci(both, exact=False)
    assert stats.bootstrap_mean_ci(lattice, np.full(50, 2.0), exact=True) == stats.bootstrap_mean_ci(lattice, exact=True)


def test_exact_is_a_bool() -> None:
    with pytest.raises(InvalidArgumentType):
        stats.bootstrap_mean_ci([0.0, 1.0, 1.0], exact="yes")


def test_constant_values_give_a_point() -> None:
    assert stats.bootstrap_mean_ci(np.full(12, 0.75), exact=True) == (0.75, 0.75)
