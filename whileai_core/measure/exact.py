"""Exact null distributions for the run-history tests, where enumeration would be too slow but a closed form
or a small lattice is cheap.

* Mann-Kendall (Kendall's S between run order and a value, ties allowed): under the permutation null every
  ordering of the values is equally likely, so S = P - 2I, with I the inversions of a random permutation of a
  multiset and P the pairs of distinct values. The generating function of I is the q-multinomial coefficient
  (MacMahon 1916; Stanley, Enumerative Combinatorics I, Prop. 1.7.1):
  prod_{i<=n} (1 - q^i) / prod_g prod_{i<=t_g} (1 - q^i), t_g the size of tie group g. It is computed in exact
  integers, so the p-value equals the p of enumerating all n! orderings, ties and all.
* Homogeneity of one scenario's pass rate over its runs (flakiness): given the scenario's total passes H, the
  passes per run are multivariate hypergeometric (Fisher-Freeman-Halton conditioning; Agresti 2002 sec. 3.5.3),
  and the statistic sum_j x_j^2 / n_j is a sum over runs. Its exact conditional law is a two-dimensional
  convolution over runs on the lattice (passes so far, L x statistic so far), L = lcm(n_j): one pass per
  distinct set of trial counts serves every scenario. Where that lattice is too large, Monte Carlo draws of the
  multivariate hypergeometric, enough of them that the smallest p is far below alpha / m (Holm's first step).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument


# ------------------------------------------------------------------------------------------------
# Mann-Kendall, exact under ties
# ------------------------------------------------------------------------------------------------
def _times(poly: np.ndarray, i: int) -> np.ndarray:
    """poly x (1 - q^i), exact (object dtype: Python integers)."""
    out = np.concatenate([poly, np.zeros(i, dtype=object)])
    out[i:] -= poly
    return out


def _over(poly: np.ndarray, i: int) -> np.ndarray:
    """poly / (1 - q^i) when it divides exactly: a_k = p_k + a_{k-i}, a cumulative sum per residue mod i."""
    out = poly.copy()
    for r in range(i):
        out[r::i] = np.cumsum(out[r::i])
    if any(out[len(out) - i:]):
        raise ArithmeticError("the q-multinomial division left a remainder")  # never: a q-multinomial is a polynomial
    quotient: np.ndarray = out[: len(out) - i]
    return quotient


def inversion_counts(ties: Sequence[int]) -> np.ndarray:
    """How many distinct orderings of a multiset with tie groups of sizes ``ties`` have I inversions, I = 0..P:
    the coefficients of the q-multinomial coefficient (exact integers, object dtype)."""
    t = [int(x) for x in ties if int(x) > 0]
    n = sum(t)
    power = np.ones(n + 1, dtype=np.int64)  # exponent of (1 - q^i): +1 for i <= n, -1 per group with t_g >= i
    power[0] = 0
    for size in t:
        power[1: size + 1] -= 1
    poly = np.array([1], dtype=object)
    for i in np.flatnonzero(power > 0):
        for _ in range(int(power[i])):
            poly = _times(poly, int(i))
    for i in np.flatnonzero(power < 0):
        for _ in range(int(-power[i])):
            poly = _over(poly, int(i))
    return poly


def kendall_s(values: Any) -> np.ndarray:
    """Kendall's S = sum_{i<j} sign(v_j - v_i) between position and value, per row of a 2-D array (vectorized)."""
    v = np.atleast_2d(np.asarray(values, dtype=float))
    i, j = np.triu_indices(v.shape[1], k=1)
    s: np.ndarray = np.sign(v[:, j] - v[:, i]).sum(axis=1).astype(np.int64)
    return s


def mann_kendall_exact(values: Sequence[float], *, exact_max: int = D.MANN_KENDALL_EXACT_MAX
                       ) -> tuple[float | None, float | None, bool]:
    """(tau_b, two-sided p, exact) of the Mann-Kendall trend test of ``values`` over their order.

    p = P(|S| >= |S_obs|) over the equally likely orderings of the values: exact (the q-multinomial law of S,
    ties included) up to ``exact_max`` values, above it the normal law with the tie-corrected variance
    n(n-1)(2n+5)/18 - sum_g t_g(t_g-1)(2t_g+5)/18 and a continuity correction of 1 (Kendall 1975, ch. 4).
    (None, None, True) below 3 values or when every value is the same.
    """
    from scipy.special import ndtr

    v = np.asarray([float(x) for x in values], dtype=float)
    if not np.all(np.isfinite(v)):
        raise InvalidArgument(f"values= must be finite numbers; got {list(values)!r}")
    n = v.size
    _, ties = np.unique(v, return_counts=True)
    if n < 3 or ties.size < 2:
        return None, None, True
    s = int(kendall_s(v)[0])
    pairs = n * (n - 1) // 2
    distinct = pairs - int(np.sum(ties * (ties - 1) // 2))
    tau = s / math.sqrt(pairs * distinct)
    if n <= exact_max:
        counts = inversion_counts(ties.tolist())
        s_values = distinct - 2 * np.arange(len(counts))
        hit = sum(int(c) for c, sv in zip(counts, s_values) if abs(int(sv)) >= abs(s))
        return tau, float(hit / sum(int(c) for c in counts)), True
    var = (n * (n - 1) * (2 * n + 5) - float(np.sum(ties * (ties - 1) * (2 * ties + 5)))) / 18.0
    z = max(0.0, abs(s) - 1.0) / math.sqrt(var)
    return tau, float(min(1.0, 2 * ndtr(-z))), False


def mann_kendall_pvalues(rows: Any, *, exact_max: int = D.MANN_KENDALL_EXACT_MAX) -> np.ndarray:
    """Two-sided Mann-Kendall p of each row of a 2-D array (many suites at once, for simulations): one exact
    null per distinct tie pattern (read off which neighbours tie once each row is sorted). NaN for a row
    whose values are all the same, or with fewer than 3 values."""
    v = np.atleast_2d(np.asarray(rows, dtype=float))
    n = v.shape[1]
    s = kendall_s(v)
    out = np.full(len(v), np.nan)
    if n < 3:
        return out
    tied = np.sort(v, axis=1)[:, 1:] == np.sort(v, axis=1)[:, :-1]
    code = tied.astype(np.int64) @ (1 << np.arange(n - 1, dtype=np.int64))
    for c in np.unique(code):
        idx = np.flatnonzero(code == c)
        bounds = np.flatnonzero(np.r_[True, ~tied[idx[0]], True])
        ties = np.diff(bounds).tolist()  # the tie group sizes of every row with this pattern
        if len(ties) < 2:
            continue
        if n > exact_max:
            out[idx] = [mann_kendall_exact(v[i], exact_max=exact_max)[1] for i in idx]
            continue
        counts = np.array([float(x) for x in inversion_counts(ties)])
        distinct = n * (n - 1) // 2 - sum(t * (t - 1) // 2 for t in ties)
        abs_s = np.abs(distinct - 2 * np.arange(len(counts)))
        seen, where = np.unique(np.abs(s[idx]), return_inverse=True)
        tail = np.array([counts[abs_s >= x].sum() for x in seen.tolist()]) / counts.sum()
        out[idx] = tail[where.reshape(-1)]
    return out


# ------------------------------------------------------------------------------------------------
# homogeneity of a pass rate over runs (flakiness), exact conditional test
# ------------------------------------------------------------------------------------------------
def _lattice_law(trials: tuple[int, ...], max_cells: int) -> tuple[np.ndarray, int] | None:
    """Joint weights over (total passes h, statistic sum_j x_j^2 L / n_j) when each run's passes are
    Binomial(n_j, 1/2); slicing at h = H and normalizing gives the conditional (multivariate hypergeometric)
    law. Returns (table (T+1, Q+1), L), or None when the lattice would exceed ``max_cells``."""
    from scipy.stats import binom

    scale = math.lcm(*trials)
    total = sum(trials)
    top = sum(n * scale for n in trials)  # sum_j n_j^2 L / n_j
    if (total + 1) * (top + 1) > max_cells:
        return None
    law = np.zeros((total + 1, top + 1))
    law[0, 0] = 1.0
    h_max = q_max = 0
    for n in trials:
        x = np.arange(n + 1)
        w, q = binom.pmf(x, n, 0.5), x * x * (scale // n)
        new = np.zeros_like(law)
        for xi, wi, qi in zip(x.tolist(), w.tolist(), q.tolist()):
            new[xi: xi + h_max + 1, qi: qi + q_max + 1] += wi * law[: h_max + 1, : q_max + 1]
        law, h_max, q_max = new, h_max + n, q_max + int(q[-1])
    return law, scale


def homogeneity_pvalues(passes: Sequence[Sequence[int]], trials: Sequence[Sequence[int]], *, alpha: float,
                        max_cells: int = D.HISTORY_EXACT_MAX_CELLS,
                        resolution: float = D.HISTORY_P_RESOLUTION, min_draws: int = D.HISTORY_PERMUTATIONS,
                        seed: int = D.GATE_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Conditional p of "every run has one pass rate" for each scenario (its runs' passes and trials), and
    whether each p is exact. Statistic sum_j x_j^2/n_j given the scenario's total passes (equivalently the
    chi-square numerator sum_j n_j (p_j - p)^2). A scenario with one run, or whose trials all agree, has p = 1.
    Exact on the (passes, statistic) lattice when it holds at most ``max_cells`` cells; otherwise Monte Carlo
    with max(``min_draws``, ``resolution`` x m / alpha) multivariate hypergeometric draws (m = scenarios that
    can vary), so the smallest attainable p stays ``resolution`` times below Holm's first threshold alpha/m.
    """
    xs = [np.asarray(p, dtype=np.int64) for p in passes]
    ns = [np.asarray(n, dtype=np.int64) for n in trials]
    out, exact = np.ones(len(xs)), np.ones(len(xs), dtype=bool)
    varies = [i for i, (x, n) in enumerate(zip(xs, ns)) if len(n) >= 2 and 0 < x.sum() < n.sum()]
    draws = max(min_draws, math.ceil(resolution * max(1, len(varies)) / alpha))
    groups: dict[tuple[int, ...], list[int]] = {}
    for i in varies:
        groups.setdefault(tuple(ns[i].tolist()), []).append(i)
    rng = np.random.default_rng(seed)
    for shape, idx in groups.items():
        lattice = _lattice_law(shape, max_cells)
        n = np.array(shape)
        if lattice is not None:
            law, scale = lattice
            tail = np.cumsum(law[:, ::-1], axis=1)[:, ::-1]  # tail[h, q] = sum_{q' >= q} law[h, q']
            h = np.array([xs[i].sum() for i in idx])
            q = np.array([int(np.sum(xs[i] ** 2 * (scale // n))) for i in idx])
            out[idx] = np.minimum(1.0, tail[h, q] / tail[h, 0])
            continue
        totals = np.array([int(xs[i].sum()) for i in idx])
        for total in np.unique(totals):  # one set of draws per total: the null depends on (trials, total) only
            rows = [i for i, t in zip(idx, totals) if t == total]
            null = np.sort((rng.multivariate_hypergeometric(n, int(total), size=draws).astype(float) ** 2 / n).sum(axis=1))
            observed = np.array([float(np.sum(xs[i].astype(float) ** 2 / n)) for i in rows])
            ge = draws - np.searchsorted(null, observed - D.NUMERIC_SLACK, side="left")
            out[rows] = (1 + ge) / (1 + draws)
            exact[rows] = False
    return out, exact
