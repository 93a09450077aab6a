"""The Student t quantile in pure Python, close enough to decide integer plans without importing scipy.

``scipy.special`` costs about 0.2 s to import, and a pytest run without a baseline needs it only for the t
quantiles of one power plan (``power.t_tasks``). A plan is an integer, ceil(f(t quantiles)): this module's
quantile (relative error far below ``T_QUANTILE_REL_TOL``, checked against ``scipy.special.stdtrit`` in the tests)
decides that integer whenever f lies more than ``T_QUANTILE_PLAN_MARGIN`` from one; closer, the caller asks scipy,
so every plan is the integer scipy's quantiles give.

Large df: the Cornish-Fisher expansion of t in the normal quantile z to order 1/df^4 (Abramowitz and Stegun
26.7.5). Small df: the upper tail as a regularized incomplete beta, sf(t) = I_{df/(df+t^2)}(df/2, 1/2) / 2, by
its continued fraction (Lentz's method; Numerical Recipes 6.4), solved for the quantile by Newton steps on
log sf kept inside a bracket (bisection when a step leaves it).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from whileai_core.defaults import (
    T_QUANTILE_CF_STEPS,
    T_QUANTILE_NEWTON_STEPS,
    T_QUANTILE_REL_TOL,
    T_QUANTILE_SERIES_DF,
)

_TINY = 1e-300  # Lentz's guard against a zero denominator (Numerical Recipes 5.2)


def t_quantile(df: float, p: float, *, series_df: float = T_QUANTILE_SERIES_DF, tol: float = T_QUANTILE_REL_TOL,
               newton_steps: int = T_QUANTILE_NEWTON_STEPS) -> float | None:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom, or None when it did not converge
    (the caller then asks scipy). ``df`` >= ``series_df`` uses the Cornish-Fisher series."""
    if not 0.0 < p < 1.0 or not df >= 1:
        return None
    if p < 0.5:
        upper = t_quantile(df, 1.0 - p, series_df=series_df, tol=tol, newton_steps=newton_steps)
        return None if upper is None else -upper
    if p == 0.5:
        return 0.0
    if df >= series_df:
        return _cornish_fisher(df, NormalDist().inv_cdf(p))
    return _solve_tail(df, 1.0 - p, tol=tol, steps=newton_steps)


def _cornish_fisher(df: float, z: float) -> float:
    """t = z + g1/df + g2/df^2 + g3/df^3 + g4/df^4 (Abramowitz and Stegun 26.7.5)."""
    z2 = z * z
    g1 = z * (z2 + 1) / 4
    g2 = z * ((5 * z2 + 16) * z2 + 3) / 96
    g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384
    g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160
    return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df


def _log_sf(t: float, df: float) -> float:
    """log P(T > t) for t >= 0: log(I_x(df/2, 1/2) / 2) with x = df / (df + t^2), 1 - x = t^2 / (df + t^2)."""
    a, b = df / 2, 0.5
    s = df + t * t
    x, y = df / s, t * t / s
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + (b * math.log(y) if y > 0 else -math.inf))
    if x < (a + 1) / (a + b + 2):
        return log_front + math.log(_beta_cf(a, b, x) / a) - math.log(2)
    return math.log1p(-math.exp(log_front) * _beta_cf(b, a, y) / b) - math.log(2)


def _beta_cf(a: float, b: float, x: float, steps: int = T_QUANTILE_CF_STEPS) -> float:
    """The continued fraction of the incomplete beta (Numerical Recipes 6.4, modified Lentz)."""
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, steps + 1):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + num / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            return h
    return math.nan


def _log_pdf(t: float, df: float) -> float:
    return (math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
            - (df + 1) / 2 * math.log1p(t * t / df))


def _solve_tail(df: float, tail: float, *, tol: float, steps: int) -> float | None:
    """t >= 0 with P(T > t) = tail, by Newton steps on log sf inside a bracket [lo, hi]."""
    target = math.log(tail)
    lo, hi = 0.0, 1.0
    while _log_sf(hi, df) > target:  # sf decreases in t: double until the bracket holds the quantile
        lo, hi = hi, hi * 2
        if hi > 1e300:
            return None
    t = (lo + hi) / 2
    for _ in range(steps):
        g = _log_sf(t, df) - target
        if math.isnan(g):
            return None
        if g > 0:
            lo = t
        else:
            hi = t
        step = g * math.exp(_log_sf(t, df) - _log_pdf(t, df))  # g / (d log sf / dt) = g * sf / pdf, negated
        new = t + step
        if not lo < new < hi:
            new = (lo + hi) / 2
        if abs(new - t) <= tol * 1e-3 * abs(new):
            return new
        t = new
    return None
