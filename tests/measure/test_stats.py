"""stats.py primitives against exact enumeration, published vectors and scipy (all seeded)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats as sps

import whileai as wai
from whileai_core.measure import stats

# ------------------------------------------------------------------------------------------------
# pass@k / pass^k
# ------------------------------------------------------------------------------------------------
PASS_AT_K = [  # (n, c, k) -> exact value (statistics-methods.md B, exact Fractions via math.comb)
    (5, 0, 1, Fraction(0)),
    (5, 1, 1, Fraction(1, 5)),
    (5, 2, 2, Fraction(7, 10)),
    (10, 3, 5, Fraction(11, 12)),
    (10, 9, 2, Fraction(1)),
    (20, 1, 10, Fraction(1, 2)),
    (200, 10, 1, Fraction(1, 20)),
    (200, 10, 10, Fraction(9163146755077, 22428575733280)),
    (200, 1, 100, Fraction(1, 2)),
    (4, 2, 4, Fraction(1)),
    (5, 3, 4, Fraction(1)),
]
PASS_POW_K = [
    (4, 4, 4, Fraction(1)),
    (4, 3, 2, Fraction(1, 2)),
    (4, 2, 2, Fraction(1, 6)),
    (8, 6, 4, Fraction(3, 14)),
    (10, 7, 3, Fraction(7, 24)),
    (5, 3, 4, Fraction(0)),
]


@pytest.mark.parametrize("n,c,k,want", PASS_AT_K)
def test_pass_at_k_vectors(n, c, k, want):
    comb = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    assert comb == want  # the vector itself is the closed form
    assert stats.pass_at_k([n], [c], k)[0] == pytest.approx(float(want), rel=1e-12, abs=1e-15)


def test_pass_at_k_large_n_matches_exact_fraction():
    got = stats.pass_at_k([200], [10], 100)[0]
    want = 1 - Fraction(math.comb(190, 100), math.comb(200, 100))
    assert got == pytest.approx(float(want), rel=1e-12)
    assert got == pytest.approx(0.9992289739, abs=1e-10)


@pytest.mark.parametrize("n,c,k,want", PASS_POW_K)
def test_pass_pow_k_vectors(n, c, k, want):
    assert Fraction(math.comb(c, k), math.comb(n, k)) == want
    assert stats.pass_pow_k([n], [c], k)[0] == pytest.approx(float(want), rel=1e-12, abs=1e-15)


def test_estimators_against_subset_enumeration_vectorized():
    n = np.array([3, 4, 5, 6, 6, 7, 7, 7])
    c = np.array([0, 2, 5, 1, 3, 0, 4, 7])
    for k in (1, 2, 3):
        at = stats.pass_at_k(n, c, k)
        pw = stats.pass_pow_k(n, c, k)
        for i in range(len(n)):
            subsets = list(itertools.combinations([1] * c[i] + [0] * (n[i] - c[i]), k))
            assert at[i] == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
            assert pw[i] == pytest.approx(sum(all(s) for s in subsets) / len(subsets))
    # pass^1 == pass@1 == c/n
    assert np.allclose(stats.pass_at_k(n, c, 1), c / n) and np.allclose(stats.pass_pow_k(n, c, 1), c / n)


def test_estimator_guards():
    with pytest.raises(ValueError, match=r"n=3 rollouts but k=5"):
        stats.pass_at_k([3], [0], 5)  # the reference code returns 1.0 here; we refuse
    with pytest.raises(ValueError, match=r"k= must be an int >= 1; got 0"):
        stats.pass_pow_k([3], [1], 0)
    with pytest.raises(ValueError, match=r"0 <= c <= n"):
        stats.pass_at_k([3], [4], 1)
    with pytest.raises(ValueError, match=r"whole numbers"):
        stats.pass_at_k([3.5], [1], 1)


# ------------------------------------------------------------------------------------------------
# bootstrap
# ------------------------------------------------------------------------------------------------
def test_cell_and_index_bootstrap_have_the_same_distribution():
    rng = np.random.default_rng(0)
    x = rng.binomial(4, 0.6, size=500) / 4
    cells = stats.bootstrap_means(x, draws=4000, seed=1)[:, 0]  # 5 distinct values -> multinomial over cells
    index = stats.bootstrap_means(x, draws=4000, seed=2, max_cell_share=0.0)[:, 0]  # forced index path
    assert sps.ks_2samp(cells, index).pvalue > 0.01
    se_clt = x.std(ddof=0) / math.sqrt(len(x))  # the bootstrap SE of a mean is the plug-in CLT SE
    assert cells.std() == pytest.approx(se_clt, rel=0.05)
    assert index.std() == pytest.approx(se_clt, rel=0.05)


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_bootstrap_mean_ci_matches_scipy(method):
    rng = np.random.default_rng(4)
    x = rng.beta(0.7, 1.5, size=400)  # skewed, continuous -> index path
    got = stats.bootstrap_mean_ci(x, draws=20000, seed=5, method=method)
    ref = sps.bootstrap((x,), np.mean, n_resamples=20000, method=method, rng=6, batch=2000).confidence_interval
    # independent Monte Carlo runs: endpoint MC sd ~0.0003 at this n and B; tolerance 0.003 (10 sds)
    assert got[0] == pytest.approx(ref.low, abs=0.003)
    assert got[1] == pytest.approx(ref.high, abs=0.003)


def test_bca_with_the_same_replicates_is_scipys_bca():
    """Feed scipy's own bootstrap distribution through our BCa: the interval must agree to float precision."""
    rng = np.random.default_rng(8)
    x = rng.exponential(size=60)
    res = sps.bootstrap((x,), np.mean, n_resamples=5000, method="BCa", rng=9)
    acc = stats._jackknife_acceleration(x, np.ones_like(x))
    ours = stats.interval_from_distribution(res.bootstrap_distribution, float(x.mean()), method="bca",
                                            acceleration=acc)
    assert ours[0] == pytest.approx(res.confidence_interval.low, rel=1e-9)
    assert ours[1] == pytest.approx(res.confidence_interval.high, rel=1e-9)
    pct = sps.bootstrap((x,), np.mean, n_resamples=5000, method="percentile", rng=9)
    ours_p = stats.interval_from_distribution(pct.bootstrap_distribution, float(x.mean()))
    assert ours_p == pytest.approx((pct.confidence_interval.low, pct.confidence_interval.high), rel=1e-12)


def test_weighted_columns_and_small_n():
    x = np.array([0.0, 0.25, 0.5, 1.0, 1.0, 0.75])
    w = np.array([1, 1, 0, 1, 1, 1.0])
    dist = stats.bootstrap_means(np.stack([x, x], 1), np.stack([np.ones(6), w], 1), draws=3000, seed=0)
    assert dist.shape == (3000, 2)
    # column 2 never sees task 2: its replicates stay on the lattice of means of the other five values
    assert np.nanmean(dist[:, 1]) == pytest.approx(np.mean(x[w > 0]), abs=0.02)
    assert stats.bootstrap_mean_ci(x[:2]) is None  # below MIN_CI_TASKS
    assert stats.bootstrap_mean_ci(np.ones(10)) == (1.0, 1.0)
    with pytest.raises(ValueError, match=r"values\[1\]"):
        stats.bootstrap_mean_ci([0.5, float("nan"), 1.0])
    with pytest.raises(ValueError, match=r"method="):
        stats.bootstrap_mean_ci(x, method="normal")


def test_chunking_does_not_change_the_draws_in_distribution():
    x = np.random.default_rng(1).random(300)
    small = stats.bootstrap_means(x, draws=2000, seed=3, chunk_bytes=10_000)[:, 0]  # many small chunks
    whole = stats.bootstrap_means(x, draws=2000, seed=4)[:, 0]
    assert small.shape == whole.shape
    assert sps.ks_2samp(small, whole).pvalue > 0.01


# ------------------------------------------------------------------------------------------------
# paired permutation test
# ------------------------------------------------------------------------------------------------
def brute_sign_flip(d):
    """Two-sided exact p by listing all 2^n sign assignments in Python."""
    obs = sum(d)
    null = [sum(s * x for s, x in zip(signs, d)) for signs in itertools.product((1, -1), repeat=len(d))]
    ge = sum(v >= obs - 1e-12 for v in null) / len(null)
    le = sum(v <= obs + 1e-12 for v in null) / len(null)
    return min(1.0, 2 * min(ge, le))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exact_permutation_against_brute_force_and_scipy(seed):
    rng = np.random.default_rng(seed)
    before = rng.binomial(4, 0.5, size=11) / 4
    after = rng.binomial(4, 0.65, size=11) / 4
    d = after - before
    res = stats.paired_permutation_test(d)
    assert res.exact
    assert res.p_value == pytest.approx(brute_sign_flip(list(d)), abs=1e-12)
    ref = sps.permutation_test((after, before), lambda a, b, axis: np.mean(a - b, axis=axis),
                               permutation_type="samples", n_resamples=np.inf, vectorized=True)
    assert res.p_value == pytest.approx(ref.pvalue, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lattice_convolution_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    # unequal k per side (4 vs 5): differences are multiples of 1/20
    d = rng.binomial(5, 0.6, size=14) / 5 - rng.binomial(4, 0.5, size=14) / 4
    enum = stats.paired_permutation_test(d, exact_max=16)
    conv = stats.paired_permutation_test(d, exact_max=0)
    assert enum.exact and conv.exact and conv.permutations == 0 and enum.permutations == 2**enum.n_nonzero
    assert conv.p_value == pytest.approx(enum.p_value, abs=1e-12)
    for alt in ("greater", "less"):
        assert stats.paired_permutation_pvalue(d, exact_max=0, alternative=alt) == pytest.approx(
            stats.paired_permutation_pvalue(d, alternative=alt), abs=1e-12)


def test_exact_true_refuses_continuous_differences():
    with pytest.raises(ValueError, match=r"exact=True"):
        stats.paired_permutation_test(np.random.default_rng(0).normal(size=40), exact=True)


def test_one_sided_exact_matches_scipy():
    d = np.array([0.25, 0.5, -0.25, 0.75, 0.25, 0.0, 0.5, -0.5, 0.25])
    for alt in ("greater", "less"):
        ref = sps.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
                                   n_resamples=np.inf, vectorized=True, alternative=alt)
        assert stats.paired_permutation_pvalue(d, alternative=alt) == pytest.approx(ref.pvalue, abs=1e-12)


def test_k1_sign_flip_is_exact_mcnemar():
    # 26 vs 14 discordant pairs out of 400 (statistics-methods.md B): exact McNemar p = 0.0806904677519924
    d = np.array([1.0] * 26 + [-1.0] * 14 + [0.0] * 360)
    res = stats.paired_permutation_test(d)  # 40 non-zero: too many to enumerate, exact on the lattice
    assert res.exact and res.n_nonzero == 40 and res.permutations == 0
    assert res.p_value == pytest.approx(0.0806904677519924, abs=1e-12)
    assert res.p_value == pytest.approx(sps.binomtest(26, 40).pvalue, abs=1e-12)


def test_random_flips_agree_with_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(7)
    d = (rng.binomial(4, 0.55, size=300) - rng.binomial(4, 0.5, size=300)) / 4
    ours = stats.paired_permutation_test(d, permutations=20000, seed=1, exact=False)  # binomial-per-level path
    assert not ours.exact
    exact = stats.paired_permutation_test(d)  # lattice convolution
    assert exact.exact and abs(ours.p_value - exact.p_value) < 4 * math.sqrt(exact.p_value / 20000) + 1e-3
    ref = sps.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
                               n_resamples=20000, vectorized=True, rng=2, batch=2000)
    se = math.sqrt(ref.pvalue * (1 - ref.pvalue) / 20000) * 2  # two MC estimates
    assert abs(ours.p_value - ref.pvalue) < 4 * se + 1e-3
    cont = rng.normal(0.05, 1, size=200)  # continuous differences -> chunked random-sign path
    ours_c = stats.paired_permutation_test(cont, permutations=20000, seed=3)
    ref_c = sps.permutation_test((cont,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
                                 n_resamples=20000, vectorized=True, rng=4, batch=2000)
    se_c = math.sqrt(ref_c.pvalue * (1 - ref_c.pvalue) / 20000) * 2
    assert abs(ours_c.p_value - ref_c.pvalue) < 4 * se_c + 1e-3


def test_permutation_edge_cases():
    zero = stats.paired_permutation_test(np.zeros(50))
    assert zero.p_value == 1.0 and zero.exact and zero.n_nonzero == 0
    big = stats.paired_permutation_test(np.ones(200), permutations=999, exact=False)
    assert big.p_value == pytest.approx(2 / 1000)  # the smallest random two-sided p, 2/(P+1)
    assert stats.paired_permutation_pvalue(np.ones(200)) == pytest.approx(2.0**-199, rel=1e-9)  # exact
    with pytest.raises(ValueError, match=r"diffs\[2\]"):
        stats.paired_permutation_test([0.1, 0.2, float("inf")])
    with pytest.raises(ValueError, match=r"permutations= must be an int >= 1"):
        stats.paired_permutation_test([0.1], permutations=0)
    with pytest.raises(ValueError, match=r"alternative="):
        stats.paired_permutation_test([0.1], alternative="up")
    assert "exact" in str(stats.paired_permutation_test([0.5, 0.25, -0.25]))


# ------------------------------------------------------------------------------------------------
# standard errors and power (Miller 2024)
# ------------------------------------------------------------------------------------------------
def test_clustered_se_vector():
    s = [1, 1, 1, 0, 0, 0]
    cl = [0, 1, 1, 1, 0, 0]
    assert stats.clustered_se(s, cl) == pytest.approx(0.149071, abs=1e-6)
    assert stats.mean_se(s) == pytest.approx(0.223607, abs=1e-6)
    # singleton clusters reduce to the CLT SE
    x = np.array([0.2, 0.9, 0.4, 0.7])
    assert stats.clustered_se(x, range(4)) == pytest.approx(stats.mean_se(x))
    assert stats.mean_se(x) == pytest.approx(sps.sem(x))
    assert stats.mean_se([1.0]) is None


def test_power_vectors():
    assert stats.power_z() ** 2 == pytest.approx(7.848879734, rel=1e-9)
    assert stats.tasks_needed(0.03, 1 / 9) == 969  # Miller's example, 968.997
    # MDE at n=198 with omega^2=1/9 and sigma^2=1/6 per model
    assert stats.detectable_effect(198, 1 / 9 + 2 * (1 / 6) / 1) == pytest.approx(0.1327, abs=1e-4)
    assert stats.detectable_effect(198, 1 / 9 + 2 * (1 / 6) / 10) == pytest.approx(0.0757, abs=1e-4)
    assert stats.detectable_effect(198, 1 / 9 + 2 * (1 / 6) / 4) == pytest.approx(0.0878, abs=1e-4)
    with pytest.raises(ValueError, match=r"effect="):
        stats.tasks_needed(0, 0.1)
    with pytest.raises(ValueError, match=r"power="):
        stats.tasks_needed(0.1, 0.1, power=1.5)


# ------------------------------------------------------------------------------------------------
# Wilson interval and Cohen's kappa
# ------------------------------------------------------------------------------------------------
NEWCOMBE = [  # Newcombe 1998 Table I, Wilson 95%
    (81, 263, (0.2553, 0.3662)),
    (15, 148, (0.0624, 0.1605)),
    (0, 20, (0.0, 0.1611)),
    (1, 29, (0.0061, 0.1718)),
    (0, 8, (0.0, 0.3244)),
    (8, 8, (0.6756, 1.0)),
    (164, 164, (0.9771, 1.0)),
]


@pytest.mark.parametrize("k,n,want", NEWCOMBE)
def test_wilson_against_newcombe_and_scipy(k, n, want):
    lo, hi = stats.wilson_interval(k, n)
    assert (lo, hi) == pytest.approx(want, abs=1e-4)
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_wilson_levels_and_errors():
    ref = sps.binomtest(7, 50).proportion_ci(confidence_level=0.9, method="wilson")
    assert stats.wilson_interval(7, 50, level=0.9) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert stats.wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match=r"successes= must be <= n"):
        stats.wilson_interval(5, 4)


def table_labels(a_yes_b_yes, a_yes_b_no, a_no_b_yes, a_no_b_no):
    a = [1] * a_yes_b_yes + [1] * a_yes_b_no + [0] * a_no_b_yes + [0] * a_no_b_no
    b = [1] * a_yes_b_yes + [0] * a_yes_b_no + [1] * a_no_b_yes + [0] * a_no_b_no
    return a, b


@pytest.mark.parametrize("cells,want", [
    ((20, 5, 10, 15), 0.40),
    ((45, 15, 25, 15), 0.1304),
    ((25, 35, 5, 35), 0.2593),
    ((90, 5, 5, 0), -0.0526),  # prevalence paradox: 90% raw agreement, kappa below 0
])
def test_kappa_tables(cells, want):
    a, b = table_labels(*cells)
    assert stats.cohen_kappa(a, b) == pytest.approx(want, abs=1e-4)


def test_kappa_sklearn_doc_vector_weighted_and_undefined():
    y1 = ["negative", "positive", "negative", "neutral", "positive"]
    y2 = ["negative", "positive", "negative", "neutral", "negative"]
    assert stats.cohen_kappa(y1, y2) == pytest.approx(0.6875)
    a, b = [0, 1, 2, 2, 1, 0, 2], [0, 2, 2, 1, 1, 0, 0]
    assert stats.cohen_kappa(a, b, weights="linear") == pytest.approx(0.391304, abs=1e-6)
    assert stats.cohen_kappa(a, b, weights="quadratic") == pytest.approx(0.416667, abs=1e-6)
    assert math.isnan(stats.cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert stats.cohen_kappa([1, 1, 1, 1], [1, 0, 1, 0]) == 0.0  # one constant rater
    with pytest.raises(ValueError, match=r"same items"):
        stats.cohen_kappa([1, 0], [1])
    with pytest.raises(ValueError, match=r"weights="):
        stats.cohen_kappa([1, 0], [1, 0], weights="cubic")


def test_distinct_rows_matches_numpy_unique():
    rng = np.random.default_rng(0)
    x = np.stack([rng.integers(0, 5, 3000) / 4, rng.integers(0, 2, 3000) * 1.0, rng.integers(0, 7, 3000) / 6], 1)
    cells, counts = stats._distinct_rows(x)
    ref, ref_counts = np.unique(x, axis=0, return_counts=True)
    order = np.lexsort(cells.T[::-1])
    assert np.array_equal(cells[order], ref) and np.array_equal(counts[order], ref_counts)


def test_exact_lattice_null_on_the_fft_path_against_a_binomial_sum():
    """Two |d| levels with 2000 tasks each (FFT convolution): the exact p equals sum_b P(B2=b) P(B1 >= t - 2b)."""
    rng = np.random.default_rng(5)
    h = 2000
    s1 = np.where(rng.random(h) < 0.53, 1, -1)  # signs on the 1/4 level
    s2 = np.where(rng.random(h) < 0.5, 1, -1)  # signs on the 2/4 level
    d = np.concatenate([s1 * 0.25, s2 * 0.5])
    res = stats.paired_permutation_test(d)
    assert res.exact and res.permutations == 0
    # S = sum s_i v_i (v in {1, 2} after scaling by 4); T = (S + total) / 2 = B1 + 2 B2 under the null
    total = h * 1 + h * 2
    t_obs = (int(s1.sum() + 2 * s2.sum()) + total) // 2
    b2 = np.arange(h + 1)
    p_ge = float(np.sum(sps.binom.pmf(b2, h, 0.5) * sps.binom.sf(t_obs - 2 * b2 - 1, h, 0.5)))
    p_le = float(np.sum(sps.binom.pmf(b2, h, 0.5) * sps.binom.cdf(t_obs - 2 * b2, h, 0.5)))
    assert res.p_value == pytest.approx(min(1.0, 2 * min(p_ge, p_le)), rel=1e-9, abs=1e-13)


def test_direct_and_fft_convolution_agree():
    rng = np.random.default_rng(9)
    d = (rng.binomial(4, 0.6, size=500) - rng.binomial(4, 0.5, size=500)) / 4
    fft = stats.paired_permutation_test(d, direct_max=0)
    direct = stats.paired_permutation_test(d, direct_max=10**12)
    assert fft.exact and direct.exact
    assert fft.p_value == pytest.approx(direct.p_value, rel=1e-9, abs=1e-14)


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_cohen_kappa_refuses_strings_and_blanks():
    with pytest.raises(TypeError, match="rater_a= is a string"):
        wai.cohen_kappa("ab", "ab")
    with pytest.raises(ValueError, match=r"rater_a\[1\] is nan, not a label"):
        wai.cohen_kappa([1, float("nan")], [1, 0])
    with pytest.raises(ValueError, match=r"rater_b\[0\] is None"):
        wai.cohen_kappa([1, 0], [None, 0])
    # unchanged on good input: closed form (p_o - p_e) / (1 - p_e)
    a, b = [1, 0, 1, 1], [1, 0, 0, 1]
    p_o = 3 / 4
    p_e = (3 / 4) * (2 / 4) + (1 / 4) * (2 / 4)
    assert wai.cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))
