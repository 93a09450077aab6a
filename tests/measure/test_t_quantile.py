"""``t_quantile`` against scipy's ``stdtrit``, and ``power.t_tasks`` giving scipy's integers (issue 34: a plan
without importing scipy.special)."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from whileai_core import defaults as D
from whileai_core.measure import power
from whileai_core.measure.quantiles.student_t import t_quantile

special = pytest.importorskip("scipy.special")

DFS = [1, 2, 3, 4, 5, 7, 10, 15, 30, 59, 100, 158, 500, 999, 1000, 1001, 2500, 10_000, 1_000_000, 10_000_000]
PS = [0.5000001, 0.51, 0.6, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 1 - 1e-5, 1 - 5e-11, 0.2, 0.025]


@pytest.mark.parametrize("df", DFS)
def test_t_quantile_is_scipys_within_its_bound(df: float) -> None:
    for p in PS:
        ours, theirs = t_quantile(df, p), float(special.stdtrit(df, p))
        assert ours is not None
        assert abs(ours - theirs) <= D.T_QUANTILE_REL_TOL * max(1.0, abs(theirs)), (df, p, ours, theirs)


def test_t_quantile_edges() -> None:
    assert t_quantile(10, 0.5) == 0.0
    assert t_quantile(10, 0.0) is None and t_quantile(10, 1.0) is None and t_quantile(0.5, 0.9) is None
    assert t_quantile(7, 0.1) == -t_quantile(7, 0.9)  # type: ignore[operator]


def _scipy_t_tasks(effect: float, variance: float, *, alpha: float, power_: float, permutation: bool) -> int:
    """power.t_tasks as it was before t_quantile: every quantile from scipy."""
    sd = math.sqrt(variance)
    null_sd = math.sqrt(variance + effect**2) if permutation else sd
    z = NormalDist()
    n = max(2, math.ceil((z.inv_cdf(power_) * sd + z.inv_cdf(1 - alpha / 2) * null_sd) ** 2 / effect**2))
    for _ in range(100):
        df = max(n - 1, 1)
        want = math.ceil((special.stdtrit(df, power_) * sd + special.stdtrit(df, 1 - alpha / 2) * null_sd) ** 2
                         / effect**2 - 1e-9)
        if want == n:
            break
        n = max(2, want)
    return n


@pytest.mark.parametrize("effect", [0.02, 0.05, 0.1, 0.3, 0.8])
def test_t_tasks_gives_scipys_integers(effect: float) -> None:
    for variance in (0.01, 0.1, 0.25, 1.0):
        for alpha in (0.001, 0.05, 0.2):
            for power_ in (0.5, 0.8, 0.95):
                for permutation in (True, False):
                    got = power.t_tasks(effect, variance, alpha=alpha, power=power_, permutation=permutation)
                    assert got == _scipy_t_tasks(effect, variance, alpha=alpha, power_=power_,
                                                 permutation=permutation)


def test_plan_ceil_asks_scipy_next_to_an_integer() -> None:
    """With a safety so large that no expression is far enough from an integer, every plan is scipy's own."""
    got = power._plan_ceil(99, 0.3, 0.31, effect=0.05, alpha=0.05, power=0.8, safety=1e300)
    want = math.ceil((special.stdtrit(99, 0.8) * 0.3 + special.stdtrit(99, 0.975) * 0.31) ** 2 / 0.05**2 - 1e-9)
    assert got == want
