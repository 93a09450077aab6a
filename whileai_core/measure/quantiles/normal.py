"""The standard normal CDF and quantile from the standard library, so the sequential gate does not import
``scipy.special`` (0.12-0.18 s of a ``--wai-sequential`` run: more than the rounds it saves cost at 0 ms a
trial, issue 34).

``normal_cdf`` is ``erfc(-x / sqrt 2) / 2`` (C99 ``erfc``, through ``math``): within 4e-13 relative of
``scipy.special.ndtr`` over [-40, 40] where Phi > 1e-300 (below, a subnormal where scipy gives 0), and within
4e-15 over the z's a gate meets (|x| < 8). ``normal_quantile`` is ``statistics.NormalDist().inv_cdf`` (Wichura
1988, algorithm AS 241), within 2e-15 relative of ``scipy.special.ndtri``. Both are checked in
tests/measure/test_normal_quantiles.py, with the gate's boundaries built on them (within 1e-9 of scipy's).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

_ERFC = np.frompyfunc(math.erfc, 1, 1)
_STANDARD = NormalDist()
_SQRT_HALF = math.sqrt(0.5)


def normal_cdf(x: Any) -> np.ndarray:
    """Phi(x) elementwise, as a float array (a 0-d array for a scalar)."""
    z = np.asarray(x, dtype=float)
    out: np.ndarray = 0.5 * np.asarray(_ERFC(z * -_SQRT_HALF), dtype=float)
    return out


def normal_quantile(p: float) -> float:
    """Phi^-1(p) for 0 < p < 1; -inf at 0 and inf at 1 (as ``scipy.special.ndtri``)."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _STANDARD.inv_cdf(p)
