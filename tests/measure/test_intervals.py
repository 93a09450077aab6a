"""The interval of Cohen's kappa and of a difference of two proportions, against published worked examples."""

from __future__ import annotations

import pytest

import whileai as wai
from whileai_core.measure.stats import cohen_kappa, cohen_kappa_interval, newcombe_interval


def raters(table: list[list[int]]) -> tuple[list[int], list[int]]:
    """Two label lists from a table of counts (rows: rater a's label, columns: rater b's)."""
    a: list[int] = []
    b: list[int] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return a, b


def test_kappa_interval_matches_the_sas_worked_example():
    # SAS PROC FREQ "Simple Kappa Coefficient" printout for this 3x3 table (also statsmodels' test vector):
    # Kappa 0.4842, ASE 0.1380, 95% limits 0.2137 .. 0.7547
    a, b = raters([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert cohen_kappa(a, b, labels=[0, 1, 2]) == pytest.approx(0.4842, abs=5e-5)
    lo, hi = cohen_kappa_interval(a, b, labels=[0, 1, 2])
    assert (lo, hi) == pytest.approx((0.2137, 0.7547), abs=5e-5)
    assert (hi - lo) / 2 / 1.959964 == pytest.approx(0.1380, abs=5e-5)  # the ASE itself


@pytest.mark.parametrize("table, expected", [
    # statsmodels 0.15.0 cohens_kappa(table).kappa_low / kappa_upp (the same Fleiss-Cohen-Everitt ASE)
    ([[20, 5], [10, 15]], (0.151092290476661, 0.6489077095233389)),
    ([[45, 15], [25, 15]], (-0.06293827779258965, 0.3238078430099807)),
    ([[90, 5], [5, 0]], (-0.08520715763781875, -0.020056000256915764)),  # the prevalence paradox
])
def test_kappa_interval_matches_statsmodels(table, expected):
    a, b = raters(table)
    assert cohen_kappa_interval(a, b) == pytest.approx(expected, abs=1e-12)


def test_kappa_interval_edges():
    assert cohen_kappa_interval([1, 1, 1], [1, 1, 1]) is None  # kappa undefined: no interval
    assert cohen_kappa_interval([0, 1, 0, 1], [0, 1, 0, 1]) == (1.0, 1.0)  # zero width at perfect agreement
    lo, hi = cohen_kappa_interval([0, 1] * 5, [1, 0] * 5)
    assert lo == -1.0 and hi <= -1.0 + 1e-12  # clipped to [-1, 1]
    narrow = cohen_kappa_interval(*raters([[80, 20], [40, 60]]), level=0.5)
    wide = cohen_kappa_interval(*raters([[80, 20], [40, 60]]), level=0.99)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa_interval([0, 1], [0])
    assert wai.cohen_kappa_interval is cohen_kappa_interval


# Newcombe (1998) "Interval estimation for the difference between independent proportions", Stat Med 17:873,
# Table II, method 10 (hybrid score), examples (a)-(h); statsmodels' confint_proportions_2indep(method="newcomb")
# gives the same to 1e-12.
NEWCOMBE_1998 = [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((6, 7, 2, 7), (0.0582, 0.8062)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((0, 10, 0, 10), (-0.2775, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0)),
    ((10, 10, 0, 10), (0.6075, 1.0)),
]


@pytest.mark.parametrize("counts, expected", NEWCOMBE_1998)
def test_newcombe_interval_matches_the_published_table(counts, expected):
    assert newcombe_interval(*counts) == pytest.approx(expected, abs=5e-5)


def test_newcombe_interval_fagerland_example_and_edges():
    # Fagerland, Lydersen & Laake 2015 (7/34 vs 1/34): Newcombe hybrid score 0.019 .. 0.34;
    # statsmodels 0.15.0 to 16 digits: (0.018921443885772937, 0.3403686870327074)
    assert newcombe_interval(7, 34, 1, 34) == pytest.approx((0.018921443885772937, 0.3403686870327074), abs=1e-12)
    assert newcombe_interval(1, 2, 0, 0) is None
    lo, hi = newcombe_interval(3, 10, 7, 10)
    assert (lo, hi) == pytest.approx(tuple(-x for x in reversed(newcombe_interval(7, 10, 3, 10))), abs=1e-12)
    assert wai.newcombe_interval is newcombe_interval
