"""Statistics primitives on arrays: estimators, task bootstrap, paired permutation test, power, agreement.

Everything here works on per-task numbers (pass counts, per-task rates, paired differences), never on rows;
``columns.py``, ``pass_at.py``, ``delta.py``, ``between_runs.py`` and ``power.py`` turn rows into those arrays. All resampling is
vectorized with numpy:

* a bootstrap draw over tasks is a multinomial count vector over the *distinct* task values (cells); a task
  enters pass@1, pass@k and pass^k only through its (n_i, c_i), so with few cells a draw costs O(#cells),
  independent of the number of tasks (same distribution as resampling task indices);
* with many distinct values (continuous rewards) it falls back to a chunked int32 index bootstrap;
* a paired sign-flip test enumerates all 2^m flips when the m non-zero differences are few (exact), draws
  Binomial(h_j, 1/2) per distinct |d| level when levels are few, and chunked random signs otherwise.

Sources: Chen et al. 2021 (pass@k), Yao et al. 2024 (pass^k), Miller 2024 "Adding Error Bars to Evals"
(clustered SE, paired SE, power), Efron & Tibshirani 1993 (percentile / basic / BCa), Phipson & Smyth 2010
(+1 on random permutation p-values), Wilson 1927 / Newcombe 1998 (and his hybrid score interval of a
difference), Cohen 1960 with the Fleiss, Cohen & Everitt 1969 standard error.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from whileai_core.defaults import (
    ALPHA,
    BINOM_HALF_EXACT_MAX,
    BINOM_HALF_SCALE_MAX,
    BOOTSTRAP_CHUNK_BYTES,
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    DIRECT_CONVOLUTION_MAX,
    EXACT_BOOTSTRAP,
    EXACT_BOOTSTRAP_DIRECT_MAX,
    EXACT_BOOTSTRAP_MAX_SUPPORT,
    EXACT_BOOTSTRAP_SMALL_N,
    EXACT_BOOTSTRAP_TAIL,
    EXACT_LATTICE_MAX_SUPPORT,
    EXACT_PERMUTATION_CAP,
    EXACT_PERMUTATION_MAX,
    EXACT_PERMUTATION_TABLE_MAX,
    EXACT_QUANTILE_TOL,
    FLOAT32_TIE_RTOL,
    LATTICE_MAX_DENOMINATOR,
    LATTICE_QUICK_SCALES,
    MIN_CI_TASKS,
    PERMUTATION_TIE_RTOL,
    PERMUTATIONS,
    POWER,
    SUFFSTAT_MAX_CELL_SHARE,
    SUFFSTAT_MIN_CELLS,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType

Interval = tuple[float, float]
METHODS = ("percentile", "basic", "bca")
ALTERNATIVES = ("two-sided", "greater", "less")

_NORMAL = NormalDist()


# ------------------------------------------------------------------------------------------------
# argument checks (shared with the row-level measures)
# ------------------------------------------------------------------------------------------------
def check_level(level: Any, name: str = "level") -> float:
    """``level`` as a float strictly inside (0, 1), else a ValueError naming the argument."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not 0 < float(level) < 1:
        raise InvalidArgument(f"{name}= must be a number strictly between 0 and 1 (0.95 for a 95% interval); got {level!r}")
    return float(level)


def check_int(value: Any, name: str, minimum: int) -> int:
    """``value`` as an int >= minimum (bools refused), else a ValueError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < minimum:
        raise InvalidArgument(f"{name}= must be an int >= {minimum}; got {value!r}")
    return int(value)


def check_method(method: Any) -> str:
    """Normalize a bootstrap interval method name ("percentile", "basic", "BCa")."""
    m = str(method).lower() if isinstance(method, str) else None
    if m not in METHODS:
        raise InvalidArgument(f"method= must be one of 'percentile', 'basic', 'BCa'; got {method!r}")
    return m


def _check_alternative(alternative: Any) -> str:
    if alternative not in ALTERNATIVES:
        raise InvalidArgument(f"alternative= must be one of {', '.join(map(repr, ALTERNATIVES))}; got {alternative!r}")
    return str(alternative)


def _finite_1d(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise InvalidArgument(f"{name}= must be one-dimensional (one number per task); got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise InvalidArgument(f"{name}[{bad}] is {arr[bad]!r}; every value must be a finite number (drop or fix it)")
    return arr


_Z_BY_LEVEL: dict[float, float] = {}  # z_value's answers (a few levels per run; it runs per scenario interval)


def z_value(level: float) -> float:
    """Two-sided standard normal quantile for a central interval at ``level`` (1.95996... at 0.95)."""
    level = check_level(level)
    z = _Z_BY_LEVEL.get(level)
    if z is None:
        z = _Z_BY_LEVEL[level] = _NORMAL.inv_cdf(0.5 + level / 2)
    return z


# ------------------------------------------------------------------------------------------------
# estimators (Chen et al. 2021; Yao et al. 2024)
# ------------------------------------------------------------------------------------------------
def _counts(n: Any, c: Any, k: Any) -> tuple[np.ndarray, np.ndarray, int]:
    k = check_int(k, "k", 1)
    n_arr = np.atleast_1d(np.asarray(n))
    c_arr = np.atleast_1d(np.asarray(c))
    if n_arr.shape != c_arr.shape:
        raise InvalidArgument(f"n and c must have the same shape; got {n_arr.shape} and {c_arr.shape}")
    for name, arr in (("n", n_arr), ("c", c_arr)):
        if arr.dtype.kind in "iu":  # whole numbers already
            continue
        if arr.size and (not np.all(np.isfinite(arr.astype(float))) or np.any(arr != np.round(arr))):
            raise InvalidArgument(f"{name}= must hold whole numbers (rollouts per task, passes per task)")
    n_arr = n_arr.astype(np.int64)
    c_arr = c_arr.astype(np.int64)
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        raise InvalidArgument("c= must satisfy 0 <= c <= n for every task (passes cannot exceed rollouts)")
    short = n_arr < k
    if np.any(short):
        i = int(np.flatnonzero(short)[0])
        raise InvalidArgument(
            f"task {i} has n={n_arr[i]} rollouts but k={k}; the unbiased estimator needs n >= k. "
            f"Drop tasks with fewer than k rollouts (measure.pass_at does and counts them) or lower k"
        )
    return n_arr, c_arr, k


def _small_int_unique(x: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, return_inverse=True)`` for integers in [0, bound): by counting, without a sort, when bound
    is at most len(x) (the same answer)."""
    if bound > len(x):
        values, inverse = np.unique(x, return_inverse=True)
        return values, inverse.reshape(-1)
    values = np.flatnonzero(np.bincount(x, minlength=bound))
    position = np.empty(bound, dtype=np.intp)
    position[values] = np.arange(len(values))
    return values, position[x]


def _falling_ratio(top: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """prod_{j<k} (top-j)/(n-j), computed once per distinct (top, n) cell, as a product (no float comb)."""
    if top.size == 0:
        return np.zeros(0)
    radix = int(n.max()) + 1
    codes, inverse = _small_int_unique(top * radix + n, radix * radix)  # one code per (top, n)
    cell_top, cell_n = np.divmod(codes, radix)
    j = np.arange(k)
    num = cell_top[:, None] - j  # (cells, k)
    den = cell_n[:, None] - j
    factors = np.where(num > 0, num / den, 0.0)
    per_row: np.ndarray = np.prod(factors, axis=1)[inverse.reshape(-1)]
    return per_row


def pass_at_k(n: Any, c: Any, k: int) -> np.ndarray:
    """Unbiased pass@k per task, ``1 - C(n-c, k)/C(n, k)`` (Chen et al. 2021); requires n >= k per task."""
    n_arr, c_arr, k = _counts(n, c, k)
    return 1.0 - _falling_ratio(n_arr - c_arr, n_arr, k)


def pass_pow_k(n: Any, c: Any, k: int) -> np.ndarray:
    """Unbiased pass^k per task, ``C(c, k)/C(n, k)`` (tau-bench, Yao et al. 2024); requires n >= k per task."""
    n_arr, c_arr, k = _counts(n, c, k)
    return _falling_ratio(c_arr, n_arr, k)


# ------------------------------------------------------------------------------------------------
# bootstrap over tasks
# ------------------------------------------------------------------------------------------------
def _as_columns(values: Any, weights: Any, name: str) -> tuple[np.ndarray, np.ndarray, bool]:
    v = np.asarray(values, dtype=float)
    single = v.ndim == 1
    if v.ndim == 1:
        v = v[:, None]
    if v.ndim != 2:
        raise InvalidArgument(f"{name}= must be 1-D (one value per task) or 2-D (tasks x statistics); got shape {v.shape}")
    if weights is None:
        w = np.ones_like(v)
    else:
        w = np.asarray(weights, dtype=float)
        if w.ndim == 1:
            w = w[:, None]
        if w.shape != v.shape:
            raise InvalidArgument(f"weights= must have the shape of {name}= {v.shape}; got {w.shape}")
        if np.any(w < 0) or not np.all(np.isfinite(w)):
            raise InvalidArgument("weights= must be finite and >= 0 (use 0 to leave a task out of a statistic)")
    if not np.all(np.isfinite(v)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(v), axis=1))[0])
        raise InvalidArgument(f"{name}[{bad}] is not a finite number; every task value must be finite (drop or fix it)")
    return v, w, single


def _row_groups(x: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Rows of ``x`` grouped by one float per row (a fixed combination of the columns, one sort): each group's
    first row index and every row's group, when every group holds equal rows (checked); None when two different
    rows share a value (the caller then factorizes column by column)."""
    h = np.zeros(len(x))
    for j in range(x.shape[1]):
        h += x[:, j] * _ROW_MIX[j % len(_ROW_MIX)] * (1 + j // len(_ROW_MIX))
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    if not np.array_equal(x, x[first][inv]):
        return None
    return first, inv


#: below this many rows the columns are factorized directly (grouping first costs more than it saves)
ROW_GROUPS_MIN = 256
#: half-sums of at most this many differences come from a cached sign table (2^12 x 12 floats: 384 KB)
SIGN_TABLE_MAX = 12
_ROW_MIX = (1.0, 0.6180339887498949, 0.41421356237309515, 0.7320508075688772, 0.2360679774997898,
            0.5772156649015329, 0.3183098861837907, 0.8414709848078965)  # fractional parts of irrationals


def _column_codes(x: np.ndarray) -> np.ndarray | None:
    """One int64 per row, equal for equal rows and ordered as the rows' values (first column first), by
    factorizing each column (1-D sorts, much faster than ``np.unique(axis=0)``) and combining the codes while
    their product fits in int64; None when even the compressed codes would not fit."""
    codes = np.zeros(len(x), dtype=np.int64)
    radix = 1
    for j in range(x.shape[1]):
        _, inv = np.unique(x[:, j], return_inverse=True)
        inv = inv.reshape(-1)
        size = int(inv.max()) + 1 if len(inv) else 1
        if radix * size >= 2**62:
            # too many distinct combinations to encode: compress what we have, then go on
            _, codes = np.unique(codes, return_inverse=True)
            codes = codes.reshape(-1).astype(np.int64)
            radix = int(codes.max()) + 1
            if radix * size >= 2**62:
                return None
        codes = codes * size + inv
        radix *= size
    return codes


def _task_groups(x: np.ndarray, tasks: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``_row_groups``' answer from the caller's codes (``bootstrap_means(tasks=)``: one small int per row, equal
    codes for equal rows): each code's first row and every row's group, by counting (no sort); None when the
    codes are not such ints, or two rows of one code differ (checked; the caller then groups by value)."""
    codes = np.asarray(tasks)
    if codes.shape != (len(x),) or codes.dtype.kind not in "iu" or not len(x) or codes.min() < 0:
        return None
    values, inv = _small_int_unique(codes.astype(np.intp), max(int(codes.max()) + 1, len(x)))
    first = np.full(len(values), len(x), dtype=np.intp)
    np.minimum.at(first, inv, np.arange(len(x)))
    return (first, inv) if np.array_equal(x, x[first][inv]) else None


def _distinct_rows(x: np.ndarray, limit: float | None = None, tasks: Any = None
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """Distinct rows of a 2-D array (ordered as their values, first column first), each taken at its first
    occurrence, and their counts; None when there are more than ``limit``.

    Rows are first grouped by one float each (``_row_groups``: one sort instead of one per column), or by the
    caller's codes (``tasks``, ``_task_groups``), and the columns factorized over one row per group; the answer
    is the same as factorizing every row."""
    groups = _task_groups(x, tasks) if tasks is not None else None
    if groups is not None and limit is not None and len(groups[0]) > limit:  # codes may split equal rows
        groups = None
    if groups is None:
        groups = _row_groups(x) if len(x) >= ROW_GROUPS_MIN else None  # a speed choice: the answer is the same
    if groups is not None:
        first, inv = groups
        if limit is not None and len(first) > limit:  # verified groups are the distinct rows
            return None
        mult = np.bincount(inv, minlength=len(first))
        codes = _column_codes(x[first])
        if codes is not None:
            _, cell = np.unique(codes, return_inverse=True)
            cell = cell.reshape(-1)
            n_cells = int(cell.max()) + 1
            rep = np.full(n_cells, len(x), dtype=np.int64)
            np.minimum.at(rep, cell, first)  # each distinct row at its first occurrence
            counts = np.bincount(cell, weights=mult, minlength=n_cells).astype(np.int64)
            return x[rep], counts
    codes = _column_codes(x)
    if codes is None:
        uniq, counts = np.unique(x, axis=0, return_counts=True)
    else:
        _, first_at, counts = np.unique(codes, return_index=True, return_counts=True)
        uniq = x[first_at]
    if limit is not None and len(uniq) > limit:
        return None
    return uniq, counts


def bootstrap_means(
    values: Any,
    weights: Any = None,
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int | np.random.Generator | None = 0,
    chunk_bytes: int = BOOTSTRAP_CHUNK_BYTES,
    max_cell_share: float = SUFFSTAT_MAX_CELL_SHARE,
    min_cells: int = SUFFSTAT_MIN_CELLS,
    tasks: Any = None,
) -> np.ndarray:
    """Bootstrap distribution over tasks of the weighted mean ``sum(w*x)/sum(w)`` of each column.

    ``values`` is (tasks,) or (tasks, statistics); ``weights`` (same shape, default 1) lets one draw carry
    statistics over different task subsets (weight 0 leaves a task out of that column). Returns an array of
    shape (draws, statistics); a draw whose resample holds no weight for a column is NaN there. ``tasks``: one
    small int per task, equal for tasks whose values and weights are equal (``pass_at``'s (n, c) cell), which
    groups the tasks without a sort; a speed hint only (checked, and the draws are the same without it).
    """
    v, w, _ = _as_columns(values, weights, "values")
    draws = check_int(draws, "draws", 1)
    chunk_bytes = check_int(chunk_bytes, "chunk_bytes", 1)
    n, s = v.shape
    if n == 0:
        raise InvalidArgument("values= is empty; the bootstrap needs at least one task")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    out = np.empty((draws, s))
    distinct = _distinct_rows(np.hstack([v * w, w]), limit=max(min_cells, max_cell_share * n), tasks=tasks)
    if distinct is not None:
        cells, counts = distinct
        num_c, den_c = cells[:, :s], cells[:, s:]
        # sufficient statistic: resampling n tasks with replacement == multinomial(n, counts/n) over cells
        p = counts / n
        rows = max(1, chunk_bytes // (8 * len(cells)))
        for start in range(0, draws, rows):
            m = rng.multinomial(n, p, size=min(rows, draws - start)).astype(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[start:start + len(m)] = (m @ num_c) / (m @ den_c)
        return out
    # many distinct values: chunked index bootstrap (int32 indices, one gather per statistic column)
    vw = v * w
    rows = max(1, chunk_bytes // (12 * n))
    for start in range(0, draws, rows):
        b = min(rows, draws - start)
        idx = rng.integers(0, n, size=(b, n), dtype=np.int32)
        for j in range(s):
            num = vw[:, j][idx].sum(axis=1)
            den = w[:, j][idx].sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[start:start + b, j] = num / den
    return out


def _jackknife_acceleration(v: np.ndarray, w: np.ndarray) -> float:
    """BCa acceleration from the closed-form leave-one-task-out values of sum(w x)/sum(w) (O(n), no n x n matrix)."""
    keep = w > 0
    v, w = v[keep], w[keep]
    if len(v) < 2:
        return 0.0
    num, den = float(np.sum(w * v)), float(np.sum(w))
    loo = (num - w * v) / (den - w) if np.all(den - w > 0) else None
    if loo is None:
        return 0.0
    u = loo.mean() - loo  # (n-1) factors cancel in the ratio below
    s2 = float(np.sum(u**2))
    return 0.0 if s2 == 0 else float(np.sum(u**3) / (6 * s2**1.5))


def _bca_levels(share: float, a_lo: float, a_hi: float, acceleration: float) -> tuple[float, float]:
    """BCa's adjusted quantile levels (Efron & Tibshirani 14.3): z0 from the share of the bootstrap distribution
    below the estimate (ties counted half), the levels unchanged when that share is 0 or 1 (degenerate)."""
    if not 0 < share < 1:
        return a_lo, a_hi
    z0 = _NORMAL.inv_cdf(share)
    qs = []
    for a_ in (a_lo, a_hi):
        za = _NORMAL.inv_cdf(a_)
        qs.append(_NORMAL.cdf(z0 + (z0 + za) / (1 - acceleration * (z0 + za))))
    return qs[0], qs[1]


def interval_from_distribution(
    dist: np.ndarray,
    estimate: float,
    *,
    level: float = CI_LEVEL,
    method: str = "percentile",
    acceleration: float = 0.0,
) -> Interval | None:
    """A two-sided interval from bootstrap replicates: percentile, basic, or BCa (Efron & Tibshirani 14.3).

    Returns None when no replicate is finite. BCa with a degenerate distribution (every replicate on one side
    of the estimate) falls back to the percentile interval, which is then zero-width or one-sided.
    """
    level = check_level(level)
    method = check_method(method)
    d = np.asarray(dist, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return None
    a_lo, a_hi = (1 - level) / 2, (1 + level) / 2
    if method == "bca":
        share = (np.count_nonzero(d < estimate) + np.count_nonzero(d <= estimate)) / (2 * d.size)
        a_lo, a_hi = _bca_levels(share, a_lo, a_hi, acceleration)
    lo, hi = np.quantile(d, [a_lo, a_hi])
    if method == "basic":
        lo, hi = 2 * estimate - hi, 2 * estimate - lo
    return (float(lo), float(hi))


@dataclass(frozen=True)
class ExactMean:
    """The exact bootstrap distribution of a mean of n equally weighted lattice values (Fisher & Hall 1991):
    ``pmf[j]`` is the probability that the resampled mean is ``(base + j) / scale``; ``observed`` is the
    sample's own j. ``tail`` bounds the mass left outside ``pmf`` (0: the whole support; see
    ``exact_bootstrap_mean``)."""

    pmf: np.ndarray
    base: int
    scale: int
    observed: int
    tail: float = 0.0

    def quantiles(self, levels: tuple[float, float], tol: float = EXACT_QUANTILE_TOL) -> tuple[float, float]:
        """The smallest means whose CDF reaches each level: the limit of ``np.quantile`` over Monte Carlo draws."""
        cdf = np.cumsum(self.pmf)
        cdf /= cdf[-1]
        at = np.searchsorted(cdf, (levels[0] - tol, levels[1] - tol), side="left").tolist()
        top = len(cdf) - 1
        return (self.base + min(at[0], top)) / self.scale, (self.base + min(at[1], top)) / self.scale

    def share_below(self) -> float:
        """P(mean < observed) + P(mean == observed) / 2: BCa's z0 share, exactly."""
        total = float(self.pmf.sum())
        below = float(self.pmf[: self.observed].sum())
        return (below + float(self.pmf[self.observed]) / 2) / total


#: IEEE 754 doubles hold every integer below 2^53: a lattice value |v| x L past it has no exact integer
FLOAT_EXACT_INT = 2.0**53


def _lattice_tally(values: np.ndarray, max_denominator: int, max_support: int,
                   small_n: int = EXACT_BOOTSTRAP_SMALL_N) -> tuple[int, int, np.ndarray, int] | None:
    """(low, L, share, s) with every value equal to (low + j) / L for a j in 0..span, ``share[j]`` the fraction
    of values there and s the sum of their j (the observed sum on the lattice); None when the values are off every lattice with L <= ``max_denominator`` (``_lattice``)
    or their resampled sum would take more than ``max_support`` values (n x span + 1). Up to ``small_n``
    values are tallied in a dict (no sort), above it by ``np.unique``: the same answer."""
    n = len(values)
    if n + 1 > max_support and values.max() != values.min():  # span >= 1 step: n x span + 1 > max_support
        return None  # (no sort of the values to learn what their lattice would be)
    if n <= small_n:
        xs = values.tolist()
        levels = sorted(set(xs))
        if max(-levels[0], levels[-1]) * max_denominator >= FLOAT_EXACT_INT:
            return None
        tally = [xs.count(u) for u in levels]
        scale = _small_scale(levels, min(max_denominator, LATTICE_QUICK_SCALES))
        if scale is not None:  # all in Python: a few levels
            ints = [round(u * scale) for u in levels]
            if n * (ints[-1] - ints[0]) + 1 > max_support:
                return None
            shares = [0.0] * (ints[-1] - ints[0] + 1)
            for c, i in zip(tally, ints):
                shares[i - ints[0]] = c / n
            return ints[0], scale, np.array(shares), sum((i - ints[0]) * c for c, i in zip(tally, ints))
        counts = np.array(tally, dtype=np.int64)
        lat = _lattice(np.array(levels), max_denominator)
    else:
        level_arr, counts = np.unique(values, return_counts=True)
        if max(-level_arr[0], level_arr[-1]) * max_denominator >= FLOAT_EXACT_INT:
            return None
        lat = _lattice(level_arr, max_denominator)
    if lat is None:
        return None
    level_ints, scale = lat
    low = int(level_ints[0])
    span = int(level_ints[-1]) - low
    if n * span + 1 > max_support:
        return None
    share = np.zeros(span + 1)
    share[level_ints - low] = counts / n
    return low, scale, share, int(np.dot(level_ints - low, counts))


def _convolution_power(share: np.ndarray, n: int) -> np.ndarray:
    """The n-fold convolution of ``share`` with itself by repeated squaring (about 2 log2(n) ``np.convolve``)."""
    out = None
    base = share
    while n:
        if n & 1:
            out = base if out is None else np.convolve(out, base)
        n >>= 1
        if n:
            base = np.convolve(base, base)
    return np.ones(1) if out is None else out


def _tail_width(share: np.ndarray, n: int, observed: int, tail: float) -> int:
    """A t with P(|S - s| >= t) <= ``tail`` for S the sum of n draws from ``share`` (on 0..span, mean s / n):
    the smaller of Hoeffding's t = span sqrt(n log(2/tail) / 2) (Hoeffding 1963, Thm 2) and Bernstein's
    t = b L / 3 + sqrt((b L / 3)^2 + 2 n var L), L = log(2/tail), b = the largest |draw - mean|, var the
    draws' variance (Bernstein's inequality, Boucheron, Lugosi & Massart 2013, Cor. 2.11): both hold, and
    Bernstein's is narrower when the draws spread less than half the span."""
    span = len(share) - 1
    log_term = math.log(2 / tail)
    mean = observed / n
    steps = np.arange(span + 1)
    var = max(0.0, float(np.dot(share, steps * steps)) - mean * mean)
    reach = max(mean, span - mean) * log_term / 3
    bernstein = reach + math.sqrt(reach * reach + 2 * n * var * log_term)
    return math.ceil(min(span * math.sqrt(n * log_term / 2), bernstein))


def _sum_pmf(share: np.ndarray, n: int, observed: int, tail: float, direct_max: int = EXACT_BOOTSTRAP_DIRECT_MAX
             ) -> tuple[np.ndarray, int]:
    """The pmf of the sum of n draws from ``share`` (on 0..span) at the points start, start + 1, ...: up to
    ``direct_max`` points the n-th convolution power, else the n-th power of its discrete Fourier transform.
    With ``tail`` > 0 the transform covers only the points within t of the observed sum s, where
    P(|S - s| >= t) <= tail (``_tail_width``: Hoeffding's or Bernstein's bound; the draws lie in [0, span]
    with mean s / n), on a circle of that width, which folds the mass outside (<= tail) onto it. Returns
    (pmf, start)."""
    span = len(share) - 1
    size = n * span + 1
    if size <= direct_max:
        return _convolution_power(share, n), 0
    start, stop = 0, size
    if tail > 0:
        t = _tail_width(share, n, observed, tail)
        start, stop = max(0, observed - t), min(size, observed + t + 1)
    width = stop - start
    fft_size = 1 << (width - 1).bit_length()  # a power of two, pocketfft's fastest lengths
    folded = np.fft.irfft(_power(np.fft.rfft(share, fft_size), n), fft_size)
    if fft_size >= size:
        pmf = folded[start:stop]
    else:
        cut = start % fft_size  # the point start sits at cut on the circle
        pmf = np.concatenate((folded[cut:], folded[:cut]))[:width]
    np.maximum(pmf, 0.0, out=pmf)
    return pmf, start


def exact_bootstrap_mean(values: np.ndarray, *, max_support: int = EXACT_BOOTSTRAP_MAX_SUPPORT,
                         max_denominator: int = LATTICE_MAX_DENOMINATOR,
                         tail: float = EXACT_BOOTSTRAP_TAIL) -> ExactMean | None:
    """The bootstrap distribution of the mean of n equally weighted values, exactly, when they lie on a lattice
    v/L (``_lattice``, as the permutation test's): the resampled sum is the n-fold convolution of one task's pmf
    on the integers, computed as one FFT raised to the n-th power (support n x span + 1). This is the limit of
    the Monte Carlo bootstrap as draws -> infinity (Fisher & Hall 1991, "Bootstrap algorithms for small
    samples"). With ``tail`` > 0 the pmf covers the sums within Hoeffding's / Bernstein's bound of the observed one
    (``_sum_pmf``; the rest, mass <= tail, is left out). None when the values are off every lattice with
    L <= ``max_denominator`` or the support passes ``max_support``."""
    n = len(values)
    lat = _lattice_tally(values, max_denominator, max_support)
    if lat is None:
        return None
    low, scale, share, observed = lat
    span = len(share) - 1
    if span == 0:
        return ExactMean(np.ones(1), n * low, n * scale, 0)
    pmf, start = _sum_pmf(share, n, observed, tail)
    return ExactMean(pmf, n * low + start, n * scale, observed - start, tail if len(pmf) < n * span + 1 else 0.0)


def _power(z: np.ndarray, n: int) -> np.ndarray:
    """``z ** n`` for a complex array by repeated squaring (about 2 log2(n) products; numpy's complex power
    goes through exp and log per element)."""
    out = None
    base = z
    while n:
        if n & 1:
            out = base.copy() if out is None else np.multiply(out, base, out=out)
        n >>= 1
        if n:
            base = base * base
    return np.ones_like(z) if out is None else out


def _exact_interval(values: np.ndarray, *, level: float, method: str, max_support: int, max_denominator: int,
                    tail: float = EXACT_BOOTSTRAP_TAIL) -> Interval | None:
    """``interval_from_distribution``'s answer from the exact bootstrap distribution of the mean of ``values``
    instead of draws; None when that distribution does not apply (``exact_bootstrap_mean``). A level within
    ``tail`` of 0 or 1 (far-out BCa levels) is read from the whole support."""
    whole = exact_bootstrap_mean(values, max_support=max_support, max_denominator=max_denominator, tail=tail)
    if whole is None:
        return None
    a_lo, a_hi = (1 - level) / 2, (1 + level) / 2
    if method == "bca":
        acceleration = _jackknife_acceleration(values, np.ones(len(values)))
        a_lo, a_hi = _bca_levels(whole.share_below(), a_lo, a_hi, acceleration)
    if whole.tail > 0 and min(a_lo, 1 - a_hi) <= whole.tail + EXACT_QUANTILE_TOL:
        whole = exact_bootstrap_mean(values, max_support=max_support, max_denominator=max_denominator, tail=0.0)
        assert whole is not None
    lo, hi = whole.quantiles((a_lo, a_hi))
    if method == "basic":
        estimate = float(np.sum(values) / len(values))
        lo, hi = 2 * estimate - hi, 2 * estimate - lo
    return (float(lo), float(hi))


def _pmf_quantiles(pmf: np.ndarray, base: int, scale: int, levels: tuple[float, float],
                   tol: float = EXACT_QUANTILE_TOL) -> tuple[float, float]:
    """``ExactMean(pmf, base, scale, ...).quantiles(levels, tol)``, bit for bit, in one numpy call: the CDF is
    the same ``np.cumsum``, and the first point whose CDF / total reaches level - tol is found by bisection,
    dividing only the ~log2(len) points it looks at (the division is the array's, element by element, and
    monotone, so the point is ``np.searchsorted``'s on the divided array)."""
    cdf = np.cumsum(pmf)
    total = cdf[-1]
    top = len(cdf) - 1

    def share(c: np.float64) -> float:
        return float(c / total)

    lo = bisect_left(cdf, levels[0] - tol, key=share)
    hi = bisect_left(cdf, levels[1] - tol, key=share)
    return (base + min(lo, top)) / scale, (base + min(hi, top)) / scale


def _exact_interval_fast(values: np.ndarray, *, level: float, method: str, max_support: int, max_denominator: int,
                         tail: float = EXACT_BOOTSTRAP_TAIL) -> Interval | None:
    """``_exact_interval``'s answer, bit for bit, with fewer calls: for BCa it is ``_exact_interval``; else the
    same tally (``_lattice_tally``) and pmf (``_sum_pmf``), without the ``ExactMean`` object, read by
    ``_pmf_quantiles`` (one ``np.cumsum`` and two bisections instead of cumsum, divide, searchsorted)."""
    if method == "bca":
        return _exact_interval(values, level=level, method=method, max_support=max_support,
                               max_denominator=max_denominator, tail=tail)
    lat = _lattice_tally(values, max_denominator, max_support)
    if lat is None:
        return None
    low, scale, share, observed = lat
    n = len(values)
    span = len(share) - 1
    a_lo, a_hi = (1 - level) / 2, (1 + level) / 2
    if span == 0:
        lo = hi = n * low / (n * scale)  # ExactMean(np.ones(1), n low, n scale, 0).quantiles: the one point
    else:
        pmf, start = _sum_pmf(share, n, observed, tail)
        if len(pmf) < n * span + 1 and min(a_lo, 1 - a_hi) <= tail + EXACT_QUANTILE_TOL:
            pmf, start = _sum_pmf(share, n, observed, 0.0)
        lo, hi = _pmf_quantiles(pmf, n * low + start, n * scale, (a_lo, a_hi))
    if method == "basic":
        estimate = float(np.sum(values) / n)
        lo, hi = 2 * estimate - hi, 2 * estimate - lo
    return (float(lo), float(hi))


def _plain_values(values: Any) -> np.ndarray | None:
    """``values`` as a 1-D float array of finite numbers, or None (not 1-D, or a value not finite: the general
    path's checks then speak). One sum instead of an ``isfinite`` pass when every value is finite."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        return None
    if not math.isfinite(x.sum()) and not np.isfinite(x).all():
        return None
    return x


def bootstrap_mean_ci(
    values: Any,
    weights: Any = None,
    *,
    level: float = CI_LEVEL,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int | np.random.Generator | None = 0,
    method: str = "percentile",
    min_n: int = MIN_CI_TASKS,
    chunk_bytes: int = BOOTSTRAP_CHUNK_BYTES,
    max_cell_share: float = SUFFSTAT_MAX_CELL_SHARE,
    exact: bool = EXACT_BOOTSTRAP,
    max_support: int = EXACT_BOOTSTRAP_MAX_SUPPORT,
    max_denominator: int = LATTICE_MAX_DENOMINATOR,
    tail: float = EXACT_BOOTSTRAP_TAIL,
) -> Any:
    """Bootstrap-over-tasks interval of the (weighted) mean of per-task values.

    1-D ``values`` -> ``(lo, hi)`` or None when fewer than ``min_n`` tasks carry weight; 2-D (tasks x
    statistics) -> a list with one such entry per column, all from the same resampled task sets.
    ``exact=True`` (default ``EXACT_BOOTSTRAP``): for 1-D values with equal weights on a lattice v/L (per-task
    rates c/k) whose resampled sum has at most ``max_support`` points, the interval comes from the exact
    bootstrap distribution (``exact_bootstrap_mean``, windowed to the sums within Hoeffding's / Bernstein's bound ``tail``:
    no draws, no seed, no Monte Carlo error); otherwise, and for weighted or ratio statistics, from ``draws``
    resamples.
    """
    level = check_level(level)
    method = check_method(method)
    min_n = check_int(min_n, "min_n", 1)
    if exact is not True and exact is not False:
        raise InvalidArgumentType(f"exact= must be True or False; got {exact!r}")
    tried = False  # the exact distribution was tried on these values (off every lattice: not tried again)
    if exact and weights is None:
        x = _plain_values(values)
        if x is not None:
            if len(x) < min_n:
                return None
            tried = True
            ci = _exact_interval_fast(x, level=level, method=method,
                                      max_support=check_int(max_support, "max_support", 1), max_denominator=check_int(max_denominator, "max_denominator", 1),
                                 tail=check_tail(tail))
            if ci is not None:
                return ci
    v, w, single = _as_columns(values, weights, "values")
    if v.shape[0] == 0:
        return None if single else [None] * v.shape[1]
    if exact and not tried and single and v.shape[0] >= min_n and w[0, 0] > 0 and np.all(w == w[0, 0]):
        x = v[:, 0]
        ci = _exact_interval_fast(x, level=level, method=method,
                                  max_support=check_int(max_support, "max_support", 1),
                                  max_denominator=check_int(max_denominator, "max_denominator", 1),
                                  tail=check_tail(tail))
        if ci is not None:
            return ci
    dist = bootstrap_means(v, w, draws=draws, seed=seed, chunk_bytes=chunk_bytes, max_cell_share=max_cell_share)
    out: list[Interval | None] = []
    for j in range(v.shape[1]):
        if np.count_nonzero(w[:, j]) < min_n:
            out.append(None)
            continue
        est = float(np.sum(v[:, j] * w[:, j]) / np.sum(w[:, j]))
        acc = _jackknife_acceleration(v[:, j], w[:, j]) if method == "bca" else 0.0
        out.append(interval_from_distribution(dist[:, j], est, level=level, method=method, acceleration=acc))
    return out[0] if single else out


def check_tail(tail: Any) -> float:
    """``tail`` as a float in [0, 1), else a ValueError naming the argument."""
    if tail.__class__ is float and 0.0 <= tail < 1.0:
        return float(tail)
    if isinstance(tail, bool) or not isinstance(tail, (int, float, np.floating)) or not 0 <= float(tail) < 1:
        raise InvalidArgument(f"tail= must be a number in [0, 1) (the mass the exact bootstrap may leave out); got {tail!r}")
    return float(tail)


# ------------------------------------------------------------------------------------------------
# paired sign-flip permutation test
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PermutationResult:
    """A paired sign-flip test of mean(d) = 0: p-value, how it was computed, and on how many differences."""

    p_value: float
    statistic: float  # mean of the differences
    n: int
    n_nonzero: int
    exact: bool
    permutations: int  # sign patterns evaluated (2^n_nonzero when enumerated, 0 for the exact convolution)
    alternative: str

    def __float__(self) -> float:
        return self.p_value

    def __str__(self) -> str:
        how = "exact" if self.exact else f"{self.permutations} random flips"
        return (f"p={self.p_value:.4g} ({how}, {self.alternative}) mean diff {self.statistic:+.4f} "
                f"(no interval: a test, measure.delta_report gives the interval; n={self.n}, {self.n_nonzero} non-zero)")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pvalue(count_ge: int, count_le: int, total: int, exact: bool, alternative: str) -> float:
    add = 0 if exact else 1
    p_ge = (count_ge + add) / (total + add)
    p_le = (count_le + add) / (total + add)
    if alternative == "greater":
        return float(min(1.0, p_ge))
    if alternative == "less":
        return float(min(1.0, p_le))
    return float(min(1.0, 2 * min(p_ge, p_le)))


#: levels up to this size are checked exactly by their binary fractions (``_dyadic_scale``); above it the 1e-9
#: relative tolerance of ``_small_scale`` could pass a scale L <= LATTICE_QUICK_SCALES that does not divide
#: a level's denominator (1e-9 x |u| x L >= 1 / L needs |u| >= 1e9 / L^2 >= 1.7e6), so they take the loop
DYADIC_MAX_LEVEL = 1e6


def _dyadic_scale(values: list[float], most: int) -> int | None:
    """``_small_scale``'s answer when every level is exactly a binary fraction a / 2^j with a small denominator
    (rates c/k for k = 1, 2, 4, 8, 16: ``float.as_integer_ratio`` is exact): the lcm of the denominators, which
    every scale that puts a level within the tolerance of an integer is a multiple of (|u| <= DYADIC_MAX_LEVEL);
    None (the caller's loop decides) otherwise."""
    scale = 1
    for u in values:
        if not -DYADIC_MAX_LEVEL <= u <= DYADIC_MAX_LEVEL:
            return None
        den = u.as_integer_ratio()[1]
        if den > most:
            return None
        scale = scale * den // math.gcd(scale, den)
    return scale if scale <= most else None


def _small_scale(levels: np.ndarray | list[float], most: int) -> int | None:
    """The smallest scale L <= ``most`` with every level within 1e-9 (relative) of a multiple of 1/L, or None:
    ``_lattice``'s scale, found without Fraction when the denominators are small (per-task rates c/k)."""
    values = levels.tolist() if isinstance(levels, np.ndarray) else levels
    if len(values) > most:
        return None
    dyadic = _dyadic_scale(values, most)
    if dyadic is not None:
        return dyadic
    tols = [1e-9 * max(1.0, abs(u)) for u in values]
    for scale in range(1, most + 1):
        for u, tol in zip(values, tols):  # a plain loop that stops at the first level off this scale
            x = u * scale
            if abs(x - round(x)) > tol * scale:
                break
        else:
            return scale
    return None


def _lattice(levels: np.ndarray, max_denominator: int) -> tuple[np.ndarray, int] | None:
    """Integers v and a scale L with levels == v / L (exactly, up to float round-off), or None."""
    from fractions import Fraction

    if len(levels) > 4 * max_denominator:
        return None
    scale = _small_scale(levels, min(max_denominator, LATTICE_QUICK_SCALES))
    if scale is not None:
        return np.rint(levels * scale).astype(np.int64), scale
    scale = 1
    for u in levels:
        f = Fraction(float(u)).limit_denominator(max_denominator)
        if abs(float(f) - u) > 1e-9 * max(1.0, abs(u)):
            return None
        scale = scale * f.denominator // math.gcd(scale, f.denominator)
        if scale > max_denominator:
            return None
    ints = np.rint(levels * scale).astype(np.int64)
    if not np.allclose(ints / scale, levels, rtol=1e-9, atol=0):
        return None
    return ints, scale


def _exact_lattice_null(ints: np.ndarray, h: np.ndarray, direct_max: int = DIRECT_CONVOLUTION_MAX) -> np.ndarray:
    """pmf of T = sum_j v_j Bin(h_j, 1/2) on 0..sum(v h): the exact sign-flip null (S = 2T - sum(v h))."""
    pmf = np.ones(1)
    for v, hj in zip(ints.tolist(), h.tolist()):
        part = np.zeros(v * hj + 1)
        part[::v] = _binom_half_pmf(hj)
        if len(pmf) * len(part) <= direct_max:
            pmf = np.convolve(pmf, part)
        else:
            pmf = np.clip(fft_convolve(pmf, part), 0.0, None)
    return pmf


def fft_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The full linear convolution of two 1-d float arrays by FFT: ``scipy.signal.fftconvolve(a, b)``, the same
    floats (the same ``scipy.fft`` calls on the same padded length), without importing ``scipy.signal``, which
    imports ``scipy.stats`` (~0.5 s of every gated run, issue 34)."""
    from scipy import fft as sp_fft

    if a.size == 0 or b.size == 0:
        return np.asarray([])
    if a.size == 1 or b.size == 1:  # fftconvolve broadcasts a length-1 axis instead of transforming it
        product: np.ndarray = a * b
        return product
    n = a.size + b.size - 1
    shape = [sp_fft.next_fast_len(n, True)]
    spectrum = sp_fft.rfftn(a, shape, axes=[0]) * sp_fft.rfftn(b, shape, axes=[0])
    out: np.ndarray = sp_fft.irfftn(spectrum, shape, axes=[0])[:n].copy()
    return out


_SIGNS: dict[int, np.ndarray] = {}  # h -> the 2^h x h matrix of +-1 sign patterns (small h only)


def _signed_sums(x: np.ndarray) -> np.ndarray:
    """All 2^len(x) sums of +-x_j (one entry per sign pattern), each added left to right from 0, so every sum
    is the same float whichever way it is computed (a running sum along each pattern: one cumsum)."""
    h = len(x)
    if h > SIGN_TABLE_MAX:
        sums = np.zeros(1)
        for v in x.tolist():
            sums = np.concatenate([sums + v, sums - v])
        return sums
    if h == 0:
        return np.zeros(1)
    out: np.ndarray = np.cumsum(_sign_table(h) * x, axis=1)[:, -1]
    return out


def _binom_half_pmf(h: int, exact_max: int = BINOM_HALF_EXACT_MAX, scale_max: int = BINOM_HALF_SCALE_MAX
                    ) -> np.ndarray:
    """Bin(h, 1/2)'s pmf on 0..h. Up to ``exact_max`` trials, each C(h, i) / 2^h from exact integers, rounded once
    (the exact pmf to the last bit), and no ``scipy.special`` import (0.3 s of a ``--wai-sequential`` run whose
    final gate tests a few-trial lattice, issue 34): half the coefficients, mirrored (C(h, i) = C(h, h - i)); up to
    ``scale_max`` trials each C(h, i) is made a float (rounded once, as ``int / int`` rounds) and scaled by 2^-h
    (exact while the result is a normal float: 2^-h >= 2^-1022), past it divided as integers. Past ``exact_max``,
    scipy's ``_binom_pmf`` ufunc (within 5e-13 relative of the exact one over h <= 4096, checked in the tests),
    ``binom.pmf`` itself where scipy moved that ufunc."""
    if h <= exact_max:
        counts: list[Any] = [0] * (h + 1)
        count, whole = 1, 1 << h
        scaled = h <= scale_max
        for i in range(h // 2 + 1):
            counts[i] = counts[h - i] = count if scaled else count / whole
            count = count * (h - i) // (i + 1)
        out = np.array(counts, dtype=float)  # int -> float rounds correctly (PyLong_AsDouble)
        return np.ldexp(out, -h) if scaled else out
    from scipy import special

    ufunc = getattr(special._ufuncs, "_binom_pmf", None)
    if ufunc is None:  # pragma: no cover  (a scipy without the private ufunc)
        from scipy.stats import binom

        return np.asarray(binom.pmf(np.arange(h + 1), h, 0.5))
    pmf: np.ndarray = np.clip(ufunc(np.arange(h + 1), h, 0.5), 0, 1)
    return pmf


def _sign_table(m: int) -> np.ndarray:
    """The 2^m x m matrix of +-1 sign patterns (cached per m; ``_signed_sums``'s row order)."""
    signs = _SIGNS.get(m)
    if signs is None:
        signs = _SIGNS[m] = 1.0 - 2.0 * ((np.arange(2**m)[:, None] >> np.arange(m)[::-1]) & 1)
    return signs


def _enumerated_counts(nz: np.ndarray, obs: float, gamma: float, table_max: int = EXACT_PERMUTATION_TABLE_MAX
                       ) -> tuple[int, int]:
    """How many of the 2^m sign patterns give a sum >= obs - gamma and <= obs + gamma. Up to ``table_max``
    differences all 2^m sums at once, one product with the cached sign table; above it counted exactly by
    meeting in the middle (Horowitz & Sahni 1974): the signed sums of each half, one half sorted, and for every
    sum of the other half the count of partners past the threshold by binary search. O(2^(m/2) m) time and
    memory instead of the 2^m x m sign matrix."""
    if len(nz) <= min(table_max, SIGN_TABLE_MAX):
        sums = _sign_table(len(nz)) @ nz
        return int(np.count_nonzero(sums >= obs - gamma)), int(np.count_nonzero(sums <= obs + gamma))
    half = len(nz) // 2
    left, right = _signed_sums(nz[:half]), np.sort(_signed_sums(nz[half:]))
    ge = int(np.sum(len(right) - np.searchsorted(right, obs - gamma - left, side="left")))
    le = int(np.sum(np.searchsorted(right, obs + gamma - left, side="right")))
    return ge, le


def paired_permutation_test(
    diffs: Any,
    *,
    permutations: int = PERMUTATIONS,
    seed: int | np.random.Generator | None = 0,
    alternative: str = "two-sided",
    exact: bool | None = None,
    exact_max: int = EXACT_PERMUTATION_MAX,
    table_max: int = EXACT_PERMUTATION_TABLE_MAX,
    max_support: int = EXACT_LATTICE_MAX_SUPPORT,
    max_denominator: int = LATTICE_MAX_DENOMINATOR,
    chunk_bytes: int = BOOTSTRAP_CHUNK_BYTES,
    max_level_share: float = SUFFSTAT_MAX_CELL_SHARE,
    tie_rtol: float = PERMUTATION_TIE_RTOL,
    float32_rtol: float = FLOAT32_TIE_RTOL,
    min_levels: int = SUFFSTAT_MIN_CELLS,
    direct_max: int = DIRECT_CONVOLUTION_MAX,
) -> PermutationResult:
    """Sign-flip permutation test on paired differences (e.g. per-task after - before pass rates).

    ``exact=None`` (auto): exact when the m non-zero differences are at most ``exact_max`` (all 2^m flips
    enumerated: one product with a sign table up to ``table_max``, else meeting in the middle) or lie on a
    lattice v/L (per-task rates c/k do) with sum|v| <= ``max_support`` (the null is the convolution of scaled
    Binomial(h_j, 1/2), no Monte Carlo; FFT round-off puts a floor near 1e-15 on tiny p-values). Otherwise ``permutations`` random flips with the Phipson-Smyth +1, drawn as Binomial(h, 1/2)
    per distinct |d| level when levels are few (cost independent of n), else chunked random signs.
    ``exact=False`` forces random flips; ``exact=True`` raises when no exact method applies.
    Zero differences carry no sign and are left out (the p-value is unchanged). All zero -> p = 1.
    Two-sided p = min(1, 2 min(p_greater, p_less)), as scipy.stats.permutation_test.
    """
    d = _finite_1d(diffs, "diffs")
    permutations = check_int(permutations, "permutations", 1)
    exact_max = check_int(exact_max, "exact_max", 0)
    if exact_max > EXACT_PERMUTATION_CAP:
        raise InvalidArgument(f"exact_max= enumerates 2^exact_max sign patterns; keep it <= {EXACT_PERMUTATION_CAP}; "
                         f"got {exact_max}")
    alternative = _check_alternative(alternative)
    if exact not in (None, True, False):
        raise InvalidArgument(f"exact= must be None (auto), True or False; got {exact!r}")
    n = d.size
    if n == 0:
        raise InvalidArgument("diffs= is empty; a paired test needs at least one paired task")
    nz = d[d != 0]
    m = nz.size
    stat = float(d.mean())
    if m == 0:
        return PermutationResult(1.0, stat, n, 0, True, 1, alternative)
    obs = float(nz.sum())
    gamma = tie_rtol * float(np.abs(nz).sum())
    mag = np.abs(nz)
    if exact is not False and m <= exact_max:
        ge, le = _enumerated_counts(nz, obs, gamma, check_int(table_max, "table_max", 0))
        return PermutationResult(_pvalue(ge, le, 2**m, True, alternative), stat, n, m, True, 2**m, alternative)
    levels, inv, h = np.unique(mag, return_inverse=True, return_counts=True)
    if exact is not False:
        lat = _lattice(levels, max_denominator)
        if lat is not None and int(np.sum(lat[0] * h)) <= max_support:
            ints = lat[0]
            pmf = _exact_lattice_null(ints, h, direct_max)
            total = int(np.sum(ints * h))
            signed = np.where(nz > 0, 1, -1) * ints[inv.reshape(-1)]
            t_obs = (int(signed.sum()) + total) // 2  # S = 2T - total, so T = (S + total) / 2 exactly
            p_le = float(min(1.0, np.sum(pmf[: t_obs + 1])))  # direct tail sums: no 1 - x cancellation
            p_ge = float(min(1.0, np.sum(pmf[t_obs:])))
            p = {"greater": p_ge, "less": p_le}.get(alternative, min(1.0, 2 * min(p_ge, p_le)))
            return PermutationResult(float(max(0.0, p)), stat, n, m, True, 0, alternative)
        if exact:
            raise InvalidArgument(f"exact=True but the {m} non-zero differences are too many to enumerate "
                             f"(exact_max={exact_max}) and are not on a small lattice; pass exact=None")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    ge = le = 0
    if len(levels) <= max(min_levels, max_level_share * m):
        # sum of h_j random +-v_j == v_j * (2 Bin(h_j, 1/2) - h_j)
        rows = max(1, chunk_bytes // (8 * len(levels)))
        for start in range(0, permutations, rows):
            b = min(rows, permutations - start)
            null = (2 * rng.binomial(h, 0.5, size=(b, len(levels))) - h) @ levels
            ge += int(np.count_nonzero(null >= obs - gamma))
            le += int(np.count_nonzero(null <= obs + gamma))
    else:
        tol = max(gamma, float32_rtol * float(mag.sum()))  # float32 accumulation
        nz32 = nz.astype(np.float32)
        rows = max(1, chunk_bytes // (6 * m))
        for start in range(0, permutations, rows):
            b = min(rows, permutations - start)
            # random bits from bytes (8 flips per RNG byte); flipping the set bits: S = total - 2 * bits @ d
            packed = rng.integers(0, 256, size=(b, (m + 7) // 8), dtype=np.uint8)
            bits = np.unpackbits(packed, axis=1, count=m).astype(np.float32)
            null = obs - 2.0 * (bits @ nz32)
            ge += int(np.count_nonzero(null >= obs - tol))
            le += int(np.count_nonzero(null <= obs + tol))
    return PermutationResult(_pvalue(ge, le, permutations, False, alternative), stat, n, m, False,
                             permutations, alternative)


def paired_permutation_pvalue(diffs: Any, **kwargs: Any) -> float:
    """The p-value of ``paired_permutation_test(diffs, **kwargs)``."""
    return paired_permutation_test(diffs, **kwargs).p_value


# ------------------------------------------------------------------------------------------------
# standard errors (Miller 2024)
# ------------------------------------------------------------------------------------------------
def mean_se(values: Any) -> float | None:
    """CLT standard error of a mean, sqrt(sum (x - mean)^2 / (n (n-1))) (Miller 2024 Eq. 1); None below 2 values."""
    x = _finite_1d(values, "values")
    if x.size < 2:
        return None
    return float(np.sqrt(np.sum((x - x.mean()) ** 2) / (x.size * (x.size - 1))))


def clustered_se(values: Any, clusters: Any) -> float | None:
    """Cluster-robust SE of a pooled mean (Miller 2024 Eq. 4): the CLT SE plus the within-cluster cross terms,

    sqrt( SE_CLT^2 + (1/n^2) sum_c sum_{i != j in c} (x_i - mean)(x_j - mean) ), clipped at 0; no finite-cluster
    correction. Singleton clusters reduce it to the CLT SE. None below 2 values.
    """
    x = _finite_1d(values, "values")
    g = np.asarray(clusters)
    if g.shape != x.shape:
        raise InvalidArgument(f"clusters= must give one cluster id per value; got {g.shape} ids for {x.shape} values")
    if x.size < 2:
        return None
    dev = x - x.mean()
    _, inv = np.unique(g, return_inverse=True)
    sums = np.bincount(inv.reshape(-1), weights=dev)
    cross = float(np.sum(sums**2) - np.sum(dev**2))
    var = float(np.sum(dev**2)) / (x.size * (x.size - 1)) + cross / x.size**2
    return float(np.sqrt(max(0.0, var)))


# ------------------------------------------------------------------------------------------------
# power (Miller 2024 Eq. 9)
# ------------------------------------------------------------------------------------------------
def check_prob(value: Any, name: str) -> float:
    """``value`` as a float strictly inside (0, 1) (alpha, power), else a ValueError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not 0 < float(value) < 1:
        raise InvalidArgument(f"{name}= must be a number strictly between 0 and 1; got {value!r}")
    return float(value)


def power_z(alpha: float = ALPHA, power: float = POWER) -> float:
    """z_{1-alpha/2} + z_{power}; its square is 7.8489 at alpha=0.05, power=0.8."""
    alpha = check_prob(alpha, "alpha")
    power = check_prob(power, "power")
    return _NORMAL.inv_cdf(1 - alpha / 2) + _NORMAL.inv_cdf(power)


def tasks_needed(effect: float, variance: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """Tasks to detect a paired gain ``effect``: ceil((z_{a/2}+z_b)^2 * variance / effect^2) (Miller 2024 Eq. 9).

    ``variance`` is the per-task variance of the paired difference, omega^2 + sigma_A^2/K_A + sigma_B^2/K_B.
    """
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not effect > 0:
        raise InvalidArgument(f"effect= must be a positive gain in pass rate (0.05 = 5 points); got {effect!r}")
    if isinstance(variance, bool) or not isinstance(variance, (int, float)) or not variance > 0:
        raise InvalidArgument(f"variance= must be a positive per-task variance of the paired difference; got {variance!r}")
    raw = power_z(alpha, power) ** 2 * variance / effect**2
    return math.ceil(raw - 1e-9)


def detectable_effect(n_tasks: int, variance: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """Minimum detectable paired effect with ``n_tasks``: (z_{a/2}+z_b) sqrt(variance / n) (Miller 2024)."""
    n_tasks = check_int(n_tasks, "n_tasks", 1)
    if isinstance(variance, bool) or not isinstance(variance, (int, float)) or not variance >= 0:
        raise InvalidArgument(f"variance= must be a per-task variance >= 0; got {variance!r}")
    return float(power_z(alpha, power) * math.sqrt(variance / n_tasks))


# ------------------------------------------------------------------------------------------------
# Wilson interval and Cohen's kappa
# ------------------------------------------------------------------------------------------------
def wilson_interval(successes: int, n: int, *, level: float = CI_LEVEL, z: float | None = None) -> Interval | None:
    """Wilson score interval for a proportion (Wilson 1927; Newcombe 1998); None when n = 0.

    Clipped to [0, 1], with lo = 0 exactly at 0 successes and hi = 1 exactly at n (as scipy's binomtest).
    Apply it to independent units (tasks), not to rollouts pooled across tasks.

    Args:
        successes: the number of successes, 0 <= successes <= n.
        n: the number of independent trials (tasks, not pooled rollouts).
        level: the two-sided interval level. Default ``CI_LEVEL`` (0.95) in defaults.py: Miller 2024, "Adding
            Error Bars to Evals" (arXiv 2411.00640): report 95% intervals.
        z: the SDK's spelling: the normal quantile instead of ``level`` (``z=1.96`` is 95%); not both.

    Returns:
        ``(lo, hi)``, or None when ``n`` is 0.

    Raises:
        InvalidArgument: ``successes`` outside [0, n], a negative ``n`` or a ``level`` outside (0, 1) (a
            ``ValueError``).

    Example:
        ```python
        lo, hi = wai.wilson_interval(45, 50)   # about (0.786, 0.957)
        ```
    """
    if z is not None:
        if level != CI_LEVEL:
            raise InvalidArgument(f"wilson_interval: pass level= ({level}) or z= ({z}), not both")
        if isinstance(z, bool) or not isinstance(z, (int, float)) or not 0 < z < math.inf:
            raise InvalidArgument(f"wilson_interval: z= must be a positive normal quantile (1.96 is 95%); got {z!r}")
        level = 2 * NormalDist().cdf(z) - 1
    n = check_int(n, "n", 0)
    successes = check_int(successes, "successes", 0)
    if successes > n:
        raise InvalidArgument(f"successes= must be <= n; got {successes} successes out of {n}")
    if n == 0:
        return None
    z = z_value(level)
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    lo = 0.0 if successes == 0 else max(0.0, center - half)
    hi = 1.0 if successes == n else min(1.0, center + half)
    return (lo, hi)


def wilson_mean_interval(mean: float, n: int, *, level: float = CI_LEVEL, continuity: bool = False
                         ) -> Interval | None:
    """Wilson score interval for the mean of ``n`` per-task values in [0, 1] (pass^k, pass@k), None at n = 0.

    The per-task value is read as a fractional success: its variance is at most mean (1 - mean), the
    Bernoulli worst case, so the interval is conservative for fractional values and exact Wilson for 0/1 ones.
    It never collapses to zero width when every task scored 0 (the bootstrap does). Clipped to [0, 1].
    ``continuity=True`` is Newcombe's (1998) method 4, Wilson with a continuity correction: its bounds solve
    |mean - pi| - 1/(2n) = z sqrt(pi (1 - pi) / n). For 0/1 values it covers >= 0.95 at every true rate from
    n = 10 on (exact binomial sums), where plain Wilson dips to 0.84 near 0 and 1 (0.90 for pass^8 at 10
    tasks, Beta(2, 2)).
    """
    n = check_int(n, "n", 0)
    if isinstance(mean, bool) or not isinstance(mean, (int, float, np.floating)) or not 0 <= float(mean) <= 1:
        raise InvalidArgument(f"mean= must be a number in [0, 1] (a mean of per-task values in [0, 1]); got {mean!r}")
    if n == 0:
        return None
    z = z_value(level)
    p = float(mean)
    if continuity:
        lo = (2 * n * p + z * z - 1 - z * math.sqrt(max(0.0, z * z - 2 - 1 / n + 4 * p * (n * (1 - p) + 1)))) \
            / (2 * (n + z * z))
        hi = (2 * n * p + z * z + 1 + z * math.sqrt(max(0.0, z * z + 2 - 1 / n + 4 * p * (n * (1 - p) - 1)))) \
            / (2 * (n + z * z))
    else:
        denom = 1 + z * z / n
        center = (p + z * z / (2 * n)) / denom
        half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        lo, hi = center - half, center + half
    return (0.0 if p == 0 else max(0.0, lo), 1.0 if p == 1 else min(1.0, hi))


def _agreement_table(rater_a: Sequence[Any], rater_b: Sequence[Any], labels: Sequence[Any] | None) -> np.ndarray:
    """The L x L table of counts (rows: rater_a's label, columns: rater_b's), after checking the two lists."""
    for name, rater in (("rater_a", rater_a), ("rater_b", rater_b)):
        if isinstance(rater, (str, bytes)):
            raise InvalidArgumentType(f"{name}= is a string; pass a list of labels, one per item (e.g. [1, 0, 1])")
    a, b = list(rater_a), list(rater_b)
    for name, seq in (("rater_a", a), ("rater_b", b)):
        blank = next((i for i, x in enumerate(seq) if x is None or (isinstance(x, float) and math.isnan(x))), None)
        if blank is not None:
            raise InvalidArgument(f"{name}[{blank}] is {seq[blank]!r}, not a label; drop the items a rater did not rate "
                             "from both lists")
    if len(a) != len(b):
        raise InvalidArgument(f"rater_a and rater_b must rate the same items; got {len(a)} and {len(b)} labels")
    if not a:
        raise InvalidArgument("rater_a= is empty; kappa needs at least one item rated by both")
    if labels is None:
        try:
            labels = sorted(set(a) | set(b))
        except TypeError:
            labels = list(dict.fromkeys(a + b))
    index = {lab: i for i, lab in enumerate(labels)}
    missing = [x for x in a + b if x not in index]
    if missing:
        raise InvalidArgument(f"label {missing[0]!r} is not in labels=; add it or drop those items")
    L = len(labels)
    table = np.zeros((L, L))
    np.add.at(table, (np.array([index[x] for x in a]), np.array([index[x] for x in b])), 1)
    return table


def cohen_kappa(
    rater_a: Sequence[Any],
    rater_b: Sequence[Any],
    *,
    labels: Sequence[Any] | None = None,
    weights: str | None = None,
) -> float:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e) (Cohen 1960); ``weights`` None, "linear" or "quadratic".

    Returns NaN when chance agreement is total (both raters constant on one label): kappa is undefined there,
    so report raw agreement beside it. Labels are compared as given; ``labels`` fixes their order (needed for
    weighted kappa on ordinal labels; default: sorted distinct labels). Its interval: ``cohen_kappa_interval``.

    Args:
        rater_a: the first rater's labels, one per item.
        rater_b: the second rater's labels, same items in the same order.
        labels: the label order (needed for weighted kappa on ordinal labels); default: the sorted distinct labels.
        weights: None (unweighted), ``"linear"`` or ``"quadratic"``.

    Returns:
        kappa as a float; NaN when chance agreement is total (both raters constant on one label).

    Raises:
        InvalidArgument: rater lists of different lengths, empty lists or an unknown ``weights`` (a
            ``ValueError``).

    Example:
        ```python
        wai.cohen_kappa([1, 1, 0, 0, 1], [1, 0, 0, 0, 1])   # 0.615
        ```
    """
    if weights not in (None, "linear", "quadratic"):
        raise InvalidArgument(f"weights= must be None, 'linear' or 'quadratic'; got {weights!r}")
    table = _agreement_table(rater_a, rater_b, labels)
    table /= table.sum()
    L = len(table)
    expected = np.outer(table.sum(axis=1), table.sum(axis=0))
    i, j = np.indices((L, L))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j).astype(float)
    else:
        w = ((i - j) ** 2).astype(float)
    den = float(np.sum(w * expected))
    if den == 0:
        return float("nan")
    return float(1 - np.sum(w * table) / den)


def cohen_kappa_interval(
    rater_a: Sequence[Any],
    rater_b: Sequence[Any],
    *,
    labels: Sequence[Any] | None = None,
    level: float = CI_LEVEL,
) -> Interval | None:
    """Large-sample interval of (unweighted) Cohen's kappa: kappa +- z * SE, clipped to [-1, 1].

    SE is the non-null asymptotic standard error of Fleiss, Cohen & Everitt (1969), the "ASE" SAS PROC FREQ
    and statsmodels print: with cell shares p_ij, margins p_i. and p_.j, chance agreement p_e and n items,
    var = (A + B - C) / (n (1 - p_e)^2), A = sum_i p_ii [1 - (p_i. + p_.i)(1 - kappa)]^2,
    B = (1 - kappa)^2 sum_(i != j) p_ij (p_.i + p_j.)^2, C = [kappa - p_e (1 - kappa)]^2.
    None when kappa is undefined (both raters constant on one label). It is a Wald interval: at perfect
    agreement it has zero width, so read it beside the agreement's Wilson interval, which does not collapse.

    Example: ``cohen_kappa_interval([0, 1, 1, 0, 1], [0, 1, 0, 0, 1])`` -> about (-0.01, 1.0) around kappa 0.62:
    five items say little. SAS's worked table [[0, 4, 1], [0, 8, 0], [0, 1, 5]] gives 0.4842 [0.2137, 0.7547].

    Args:
        rater_a: the first rater's labels.
        rater_b: the second rater's labels, same items.
        labels: the label order; default: sorted distinct labels.
        level: the two-sided interval level. Default ``CI_LEVEL`` (0.95) in defaults.py: Miller 2024, "Adding
            Error Bars to Evals" (arXiv 2411.00640): report 95% intervals.

    Returns:
        ``(lo, hi)`` clipped to [-1, 1], or None when kappa is undefined.

    Raises:
        InvalidArgument: rater lists of different lengths or a ``level`` outside (0, 1) (a ``ValueError``).

    Example:
        ```python
        wai.cohen_kappa_interval([0, 1, 1, 0, 1], [0, 1, 0, 0, 1])   # about (-0.01, 1.0) around kappa 0.62
        ```
    """
    level = check_level(level)
    counts = _agreement_table(rater_a, rater_b, labels)
    n = float(counts.sum())
    p = counts / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    pe = float(rows @ cols)
    if pe >= 1:
        return None
    kappa = (float(np.trace(p)) - pe) / (1 - pe)
    diag = np.diag(p)
    a = float(np.sum(diag * (1 - (rows + cols) * (1 - kappa)) ** 2))
    off = p.copy()
    np.fill_diagonal(off, 0.0)
    b = (1 - kappa) ** 2 * float(np.sum(off * (cols[:, None] + rows[None, :]) ** 2))
    c = (kappa - pe * (1 - kappa)) ** 2
    se = math.sqrt(max(0.0, a + b - c) / (n * (1 - pe) ** 2))
    half = z_value(level) * se
    return (max(-1.0, kappa - half), min(1.0, kappa + half))


def newcombe_interval(successes_1: int, n_1: int, successes_2: int, n_2: int, *,
                      level: float = CI_LEVEL) -> Interval | None:
    """Interval of a difference of two independent proportions p1 - p2: Newcombe's (1998) hybrid score
    interval (his method 10), built from each side's Wilson interval; None when either n is 0.

    With d = p1 - p2 and Wilson intervals (l1, u1), (l2, u2):
    [d - sqrt((p1 - l1)^2 + (u2 - p2)^2), d + sqrt((u1 - p1)^2 + (p2 - l2)^2)]. It stays inside [-1, 1] and
    keeps its width at 0 or n successes, where the Wald interval collapses. Newcombe 1998's example (a),
    56/70 - 48/80, gives [0.0524, 0.3339].

    Example: ``newcombe_interval(5, 10, 9, 10)`` -> about (-0.68, 0.00) for a drop from 9/10 to 5/10.

    Args:
        successes_1: successes on the first side.
        n_1: trials on the first side.
        successes_2: successes on the second side.
        n_2: trials on the second side.
        level: the two-sided interval level. Default ``CI_LEVEL`` (0.95) in defaults.py: Miller 2024, "Adding
            Error Bars to Evals" (arXiv 2411.00640): report 95% intervals.

    Returns:
        ``(lo, hi)`` for p1 - p2, or None when either n is 0.

    Raises:
        InvalidArgument: counts out of range or a ``level`` outside (0, 1) (a ``ValueError``).

    Example:
        ```python
        wai.newcombe_interval(56, 70, 48, 80)   # about (0.0524, 0.3339), Newcombe 1998 example (a)
        ```
    """
    level = check_level(level)
    one = wilson_interval(successes_1, n_1, level=level)
    two = wilson_interval(successes_2, n_2, level=level)
    if one is None or two is None:
        return None
    p1, p2 = successes_1 / n_1, successes_2 / n_2
    d = p1 - p2
    lo = d - math.sqrt((p1 - one[0]) ** 2 + (two[1] - p2) ** 2)
    hi = d + math.sqrt((one[1] - p1) ** 2 + (p2 - two[0]) ** 2)
    return (max(-1.0, lo), min(1.0, hi))


# --------------------------------------------------------------------------------------------------
# Per-task drop tests and multiple-comparison correction (used by the CI gate scenario by scenario)
# --------------------------------------------------------------------------------------------------
def fisher_drop_pvalues(before_passes: Any, before_n: Any, after_passes: Any, after_n: Any) -> Any:
    """One-sided exact p of "after passes less often than before" per task (Fisher's exact test, Fisher 1935).

    Under no change, given the total passes, the before-side passes X are hypergeometric; p = P(X >= observed)
    (``scipy.stats.hypergeom.sf(b - 1, bn + an, b + a, bn)``, the same numbers to rounding), summed exactly in
    integers with ``math.comb`` and divided once, so the gate does not import ``scipy.stats`` (~0.45 s of every
    gated run, issue 34). Each distinct table is computed once (a suite's tables repeat). Vectorized over
    scenarios: numpy arrays in (broadcast), an array of that shape out; scalars in, a numpy float out. A table
    scipy would refuse (no trials at all, a negative count, more passes than trials on both sides) gives nan.
    """
    b, bn, a, an = np.broadcast_arrays(*(np.asarray(x, dtype=np.int64) for x in
                                         (before_passes, before_n, after_passes, after_n)))
    if b.ndim == 0:  # one table (the gate asks per scenario): no np.unique
        return np.float64(_hypergeom_upper_tail(int(b), int(bn), int(a), int(an)))
    tables = np.stack([b.ravel(), bn.ravel(), a.ravel(), an.ravel()], axis=1)
    distinct, back = np.unique(tables, axis=0, return_inverse=True)
    p = np.array([_hypergeom_upper_tail(*(int(v) for v in row)) for row in distinct], dtype=float)
    out: np.ndarray = p[np.ravel(back)].reshape(b.shape) if distinct.size else np.empty(b.shape)
    return out


def _hypergeom_upper_tail(b: int, bn: int, a: int, an: int) -> float:
    """P(X >= b) for X ~ Hypergeometric(population bn + an, successes b + a, draws bn), exactly in integers."""
    total, successes, draws = bn + an, b + a, bn
    if not (total > 0 and 0 <= successes <= total and 0 <= draws <= total):  # scipy's argument check
        return math.nan
    lo, hi = max(0, draws - (total - successes)), min(successes, draws)
    if b <= lo:
        return 1.0
    if b > hi:
        return 0.0
    upper = range(b, hi + 1)
    # the shorter side of the support, exactly: P(X >= b) = 1 - P(X < b) in integers loses nothing
    side = upper if len(upper) <= b - lo else range(lo, b)
    mass = sum(math.comb(successes, x) * math.comb(total - successes, draws - x) for x in side)
    whole = math.comb(total, draws)
    return (mass if side is upper else whole - mass) / whole  # int / int: correctly rounded


def holm_adjust(p_values: Any) -> Any:
    """Holm (1979) step-down adjusted p-values: reject H_(i) at level a when adjusted_(i) <= a. Vectorized."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(scaled))
    out = np.empty(m)
    out[order] = adjusted_sorted
    return out
