"""The small-n fast paths of stats give the same floats as their definitions (issue 34).

Half-sums of sign flips come from a cached sign table and one running sum (the definition: concatenate +-x_j
one difference at a time); the exact lattice null takes the exact Bin(h, 1/2) pmf, correctly rounded (scipy's floats past 4096 trials);
distinct rows below ROW_GROUPS_MIN skip the grouping. Each is compared with its definition on random data.
"""

from __future__ import annotations

import numpy as np
import scipy.stats as sps

from whileai_core.measure import stats


def concatenated_sums(x: np.ndarray) -> np.ndarray:
    sums = np.zeros(1)
    for v in x.tolist():
        sums = np.concatenate([sums + v, sums - v])
    return sums


def test_signed_sums_are_the_concatenated_sums_float_for_float() -> None:
    rng = np.random.default_rng(4)
    for h in range(stats.SIGN_TABLE_MAX + 3):
        for x in (rng.normal(size=h), rng.integers(1, 4, size=h) / 3, rng.random(h) * 1e-8 + 1e8):
            got, want = np.sort(stats._signed_sums(x)), np.sort(concatenated_sums(x))
            assert np.array_equal(got, want)  # bit for bit, not approximately


def test_binom_half_pmf_is_the_exact_pmf_correctly_rounded_and_scipy_past_the_exact_range() -> None:
    """Up to BINOM_HALF_EXACT_MAX trials each value is C(h, i) / 2^h rounded once (Fraction -> float rounds
    correctly): the exact pmf, within 5e-13 of scipy's (which is the less exact one); past it, scipy's floats."""
    from fractions import Fraction
    from math import comb

    for h in list(range(60)) + [999, 1000, 1001, 1022, 1023, 1100, 4096]:
        got = stats._binom_half_pmf(h)
        assert got.tolist() == [float(Fraction(comb(h, i), 2**h)) for i in range(h + 1)]
        ref = sps.binom.pmf(np.arange(h + 1), h, 0.5)
        np.testing.assert_allclose(got, ref, rtol=5e-13, atol=1e-300)
    for h in (4097, 5000):
        assert np.array_equal(stats._binom_half_pmf(h), sps.binom.pmf(np.arange(h + 1), h, 0.5))
    assert np.array_equal(stats._binom_half_pmf(300, exact_max=10), sps.binom.pmf(np.arange(301), 300, 0.5))
    for h in range(0, 1001, 37):  # the scaled floats (h <= BINOM_HALF_SCALE_MAX) and the integer division agree
        assert stats._binom_half_pmf(h).tobytes() == stats._binom_half_pmf(h, scale_max=-1).tobytes()


def test_permutation_p_values_on_small_n_match_an_explicit_enumeration() -> None:
    """At n <= exact_max the p-value counts all 2^m sign patterns: the same count as listing them."""
    rng = np.random.default_rng(6)
    for _ in range(200):
        d = rng.normal(0.2, 1, int(rng.integers(1, 13))).round(int(rng.integers(1, 4)))
        nz = d[d != 0]
        res = stats.paired_permutation_test(d, alternative="greater")
        if nz.size == 0:
            assert res.p_value == 1.0
            continue
        sums = concatenated_sums(nz)
        gamma = stats.PERMUTATION_TIE_RTOL * float(np.abs(nz).sum())
        assert res.exact and res.p_value == np.count_nonzero(sums >= nz.sum() - gamma) / 2**nz.size


def test_bootstrap_on_few_tasks_matches_the_cells_definition() -> None:
    """Few tasks (below ROW_GROUPS_MIN): the multinomial over distinct values, ordered as np.unique orders them."""
    rng = np.random.default_rng(1)
    for n in (3, 10, 50, 255):
        v = rng.integers(0, 5, size=n) / 4
        cells, counts = np.unique(v, return_counts=True)
        draws = np.random.default_rng(7).multinomial(n, counts / n, size=300).astype(float)
        want = (draws @ cells) / draws.sum(axis=1)
        got = stats.bootstrap_means(v, draws=300, seed=7)[:, 0]
        assert np.array_equal(got, want)


def test_sequential_count_pairs_checked_at_once_equal_one_by_one() -> None:
    """``sequential._count_pairs`` (int tuples checked as arrays) gives ``_count_pair``'s answer or error per key."""
    import random

    from whileai_core.measure import sequential

    def one_by_one(counts: dict[str, object]) -> object:
        try:
            return {k: sequential._count_pair(v, f"after_rounds[0][{k!r}]") for k, v in counts.items()}
        except (TypeError, ValueError) as exc:
            return (type(exc).__name__, str(exc))

    def at_once(counts: dict[str, object]) -> object:
        try:
            return sequential._count_pairs(counts, "after_rounds[0]")
        except (TypeError, ValueError) as exc:
            return (type(exc).__name__, str(exc))

    rng = random.Random(5)
    odd = [(3, 2), (-1, 2), (1.0, 2), [1, 2], (True, 1), (1, 2, 3), "12", (2**70, 2**71), (np.int64(1), 2)]
    for _ in range(500):
        passes = [rng.randint(0, 4) for _ in range(rng.randint(0, 8))]
        counts: dict[str, object] = {f"s{i}": (c, c + rng.randint(0, 3)) for i, c in enumerate(passes)}
        if counts and rng.random() < 0.5:
            counts[rng.choice(list(counts))] = rng.choice(odd)
        assert at_once(counts) == one_by_one(counts)


def test_sign_table_counts_equal_meeting_in_the_middle_and_a_listing() -> None:
    """Up to EXACT_PERMUTATION_TABLE_MAX non-zero differences the p-value comes from one product with the sign
    table: the same p as meeting in the middle (table_max=0) and as listing every sign pattern in Python."""
    import itertools

    rng = np.random.default_rng(16)
    for _ in range(150):
        m = int(rng.integers(1, stats.EXACT_PERMUTATION_TABLE_MAX + 1))
        d = rng.choice([rng.normal(0.2, 1, m).round(2), (rng.integers(-4, 5, m) / 4)])
        nz = d[d != 0]
        gamma = stats.PERMUTATION_TIE_RTOL * float(np.abs(nz).sum())
        listed = [sum(s * x for s, x in zip(signs, nz.tolist())) for signs in itertools.product((1, -1), repeat=nz.size)]
        for alt in ("two-sided", "greater", "less"):
            table = stats.paired_permutation_test(d, alternative=alt)
            middle = stats.paired_permutation_test(d, alternative=alt, table_max=0)
            assert table.p_value == middle.p_value and table.exact and table.permutations == 2**nz.size or nz.size == 0
            if nz.size:
                ge = sum(v >= nz.sum() - gamma for v in listed) / len(listed)
                le = sum(v <= nz.sum() + gamma for v in listed) / len(listed)
                want = {"greater": ge, "less": le}.get(alt, min(1.0, 2 * min(ge, le)))
                assert table.p_value == want
