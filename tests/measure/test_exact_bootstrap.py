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


# ------------------------------------------------------------------------------------------------
# issue 34: the exact distribution against all n^n resamples, the Hoeffding window, the default path
# ------------------------------------------------------------------------------------------------
def all_resample_means(x: np.ndarray, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """Every one of the n^n resamples (index tuples) of x, as the distinct resampled sums on the lattice
    (integers: sum of x * scale) and how many tuples give each."""
    n = len(x)
    ints = np.rint(x * scale).astype(np.int64)
    idx = np.indices((n,) * n).reshape(n, -1)  # n x n^n: every index tuple
    sums = ints[idx].sum(axis=0)
    return np.unique(sums, return_counts=True)


def brute_interval(x: np.ndarray, scale: int, level: float, method: str) -> tuple[float, float]:
    """The interval by listing all n^n resamples: the smallest resampled mean whose share of tuples at or below
    it reaches each level (exact integers), BCa's share from the same counts."""
    from fractions import Fraction

    n = len(x)
    sums, counts = all_resample_means(x, scale)
    total = int(counts.sum())
    cum = np.cumsum(counts)
    a_lo, a_hi = (1 - level) / 2, (1 + level) / 2
    if method == "bca":
        obs = int(np.rint(x * scale).astype(np.int64).sum())
        share = (int(counts[sums < obs].sum()) + int(counts[sums == obs].sum()) / 2) / total
        a_lo, a_hi = stats._bca_levels(share, a_lo, a_hi, stats._jackknife_acceleration(x, np.ones(n)))
    ends = []
    for a in (a_lo, a_hi):
        j = int(np.searchsorted(cum / total, a - stats.EXACT_QUANTILE_TOL, side="left"))
        ends.append(float(Fraction(int(sums[min(j, len(sums) - 1)]), n * scale)))
    if method == "basic":
        est = float(np.sum(x) / n)
        ends = [2 * est - ends[1], 2 * est - ends[0]]
    return ends[0], ends[1]


@pytest.mark.parametrize("seed", range(6))
def test_exact_distribution_is_the_count_of_all_n_to_the_n_resamples(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n in (2, 3, 4, 5, 6, 7):
        k = int(rng.integers(1, 6))
        x = rng.integers(0, k + 1, size=n) / k - int(rng.integers(0, 2))  # rates c/k, some shifted below 0
        exact = stats.exact_bootstrap_mean(x)
        assert exact is not None
        sums, counts = all_resample_means(x, exact.scale // n)
        pmf = np.zeros(len(exact.pmf))
        pmf[sums - exact.base] = counts / n**n
        np.testing.assert_allclose(exact.pmf, pmf, rtol=0, atol=1e-14)
        for method in ("percentile", "basic", "BCa"):
            for level in (0.5, 0.8, 0.9, 0.95):
                assert stats.bootstrap_mean_ci(x, level=level, method=method, min_n=1) == brute_interval(
                    x, exact.scale // n, level, method.lower()), (n, k, method, level)


def test_binary_data_is_the_binomial_closed_form_at_every_n() -> None:
    """0/1 data: the resampled sum is Binomial(n, p_hat), the default path's pmf is its pmf (scipy)."""
    rng = np.random.default_rng(12)
    for n in (5, 10, 63, 64, 65, 100, 1000, 10_000):
        x = (rng.random(n) < rng.uniform(0.2, 0.8)).astype(float)
        exact = stats.exact_bootstrap_mean(x, tail=0.0)
        assert exact is not None
        np.testing.assert_allclose(exact.pmf, sps.binom.pmf(np.arange(n + 1), n, x.mean()), rtol=0, atol=1e-13)


@pytest.mark.parametrize("n", [50, 400, 3000, 10_000])
def test_hoeffding_window_keeps_the_interval_and_leaves_out_at_most_its_tail(n: int) -> None:
    rng = np.random.default_rng(n)
    for k in (1, 4, 8):
        x = rng.binomial(k, rng.beta(2, 1.5, size=n)) / k
        whole = stats.exact_bootstrap_mean(x, tail=0.0, max_support=2**20)
        window = stats.exact_bootstrap_mean(x, max_support=2**20)
        assert whole is not None and window is not None and whole.tail == 0
        start = window.base - whole.base
        inside = whole.pmf[start: start + len(window.pmf)]
        assert 1 - inside.sum() <= stats.EXACT_BOOTSTRAP_TAIL + 1e-13  # Hoeffding's bound holds
        np.testing.assert_allclose(window.pmf, inside, rtol=0, atol=1e-13)
        assert window.observed - window.pmf.size < 0 <= window.observed and whole.observed == start + window.observed
        if n >= 3000:
            assert len(window.pmf) < len(whole.pmf) / 4 and window.tail == stats.EXACT_BOOTSTRAP_TAIL
        for method in ("percentile", "basic", "BCa"):
            for level in (0.8, 0.95, 0.99):
                assert (stats.bootstrap_mean_ci(x, level=level, method=method, max_support=2**20)
                        == stats.bootstrap_mean_ci(x, level=level, method=method, max_support=2**20, tail=0.0))


def test_a_level_in_the_windows_tail_reads_the_whole_support() -> None:
    x = np.random.default_rng(13).binomial(4, 0.5, size=5000) / 4
    level = 1 - 1e-15  # (1 - level) / 2 is inside the mass the window leaves out
    assert stats.bootstrap_mean_ci(x, level=level) == stats.bootstrap_mean_ci(x, level=level, tail=0.0)


def test_the_default_is_the_exact_interval_and_draws_where_it_does_not_apply() -> None:
    rng = np.random.default_rng(14)
    for n in (3, 10, 64, 65, 100, 1000):
        v = rng.binomial(4, rng.beta(2, 1.5, size=n)) / 4
        assert stats.bootstrap_mean_ci(v) == stats.bootstrap_mean_ci(v, exact=True)
        assert stats.bootstrap_mean_ci(list(v)) == stats.bootstrap_mean_ci(v, np.ones(n))  # lists, equal weights
        assert stats.bootstrap_mean_ci(v, seed=1) == stats.bootstrap_mean_ci(v, seed=2)  # no draws, no seed
    assert stats.bootstrap_mean_ci([0.5, 1.0]) is None  # fewer than min_n tasks
    assert stats.bootstrap_mean_ci([]) is None
    cont = rng.random(40)
    assert stats.bootstrap_mean_ci(cont) == stats.bootstrap_mean_ci(cont, exact=False)
    big = rng.integers(0, 5, size=20_000) / 4  # support 80,001 > EXACT_BOOTSTRAP_MAX_SUPPORT: draws
    assert stats.bootstrap_mean_ci(big) == stats.bootstrap_mean_ci(big, exact=False)
    wide = np.array([0.0, 1e300, 1e300, 0.0])  # a lattice whose support is far past max_support: draws
    assert stats.bootstrap_mean_ci(wide) == stats.bootstrap_mean_ci(wide, exact=False)
    with pytest.raises(ValueError, match="finite"):
        stats.bootstrap_mean_ci([0.5, float("nan"), 1.0, 0.0])
    with pytest.raises(ValueError, match="tail="):
        stats.bootstrap_mean_ci([0.5, 0.25, 1.0], tail=1.5)


def test_the_dict_tally_and_the_sorted_tally_agree() -> None:
    rng = np.random.default_rng(15)
    for _ in range(100):
        n, k = int(rng.integers(1, 200)), int(rng.integers(1, 30))
        x = rng.integers(0, k + 1, size=n) / k * rng.choice([1.0, -1.0, 0.5])
        small = stats._lattice_tally(x, 1000, 2**16, small_n=10**9)
        big = stats._lattice_tally(x, 1000, 2**16, small_n=0)
        assert (small is None) == (big is None)
        if small is not None and big is not None:
            assert small[:2] == big[:2] and small[3] == big[3] and np.array_equal(small[2], big[2])
    assert stats._lattice_tally(np.array([0.1, np.pi]), 1000, 2**16) is None
    for _ in range(300):  # the binary-fraction shortcut finds the scale the tolerance loop finds
        k = int(rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 32]))
        levels = sorted(set((rng.integers(-3 * k, 3 * k, size=int(rng.integers(1, 6))) / k).tolist()))
        dyadic = stats._dyadic_scale(levels, 24)
        slow = [s for s in range(1, 25) if all(abs(u * s - round(u * s)) <= 1e-9 * max(1.0, abs(u)) * s
                                                for u in levels)]
        assert stats._small_scale(levels, 24) == (slow[0] if slow else None)
        if dyadic is not None:
            assert dyadic == slow[0]
    assert stats._lattice_tally(np.array([0.0, 1e300]), 1000, 2**16) is None  # support past max_support
