"""Power of the paired test ``delta_report`` runs, by a seeded, vectorised simulation of its decision rule.

``holdout_size`` plans with Miller's z formula; that formula ignores what ``delta_report`` actually does:
an *exact* sign-flip test on per-task differences that live on the lattice j/k (ties at 0 carry no sign), and a
percentile task-bootstrap interval that must also exclude 0. At 38 tasks (effect 0.15, base 0.6, k=4) that
rule reaches 0.747 power where the z formula promised 0.80. This module simulates the rule itself:

* per run, per task: before passes ~ Binomial(k, base), after passes ~ Binomial(k, q_i) with
  q_i = clip(base + effect + sqrt(omega2) Z_i, 0, 1); D_i = after - before is an integer in [-k, k];
* the exact sign-flip null of T = sum of positive D_i is the law of sum_j j Bin(h_j, 1/2) (h_j = #|D| = j),
  computed for every run at once from its discrete Fourier transform (no loop over runs);
* the bootstrap law of sum D* (n draws from the run's D with replacement) is the n-fold convolution of the
  run's empirical pmf, also by DFT; the two order statistics of ``draws`` replicates that ``np.quantile``
  interpolates for each endpoint are drawn exactly (uniform order statistics are Beta) and mapped through it.

Same distribution as ``delta_report(before, after)`` on those rows (checked against it in the tests), at a
few milliseconds per thousand runs. Sources: Phipson & Smyth 2010 (exact permutation p), Efron & Tibshirani
1993 (percentile interval), Miller 2024 Eq. 9 (the z formula this corrects).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from whileai_core.defaults import (
    ALPHA,
    BOOTSTRAP_CHUNK_BYTES,
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    HOLDOUT_MAX_TASKS,
    LOG_FLOOR,
)
from whileai_core.errors import InvalidArgument


@dataclass(frozen=True)
class SimulatedRuns:
    """Per simulated run: the delta, the exact sign-flip p, the percentile interval and the verdict (+1/-1/0)."""

    delta: np.ndarray
    p_value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    verdict: np.ndarray  # +1 better, -1 worse, 0 inconclusive (delta_report's rule)

    @property
    def runs(self) -> int:
        return int(self.verdict.size)


def draw_counts(n: int, *, base: float, effect: float, k: int, omega2: float, runs: int,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Before and after pass counts, shape (runs, n), under the binomial model with task gains N(effect, omega2)."""
    before = rng.binomial(k, base, size=(runs, n))
    q: float | np.ndarray = base + effect
    if omega2 > 0:
        q = np.clip(q + math.sqrt(omega2) * rng.standard_normal((runs, n)), 0.0, 1.0)
    after = rng.binomial(k, q, size=(runs, n))
    return before, after


def _spectrum(log_mag: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """exp(log_mag + i phase), built from real exp / cos / sin (several times faster than complex exp)."""
    mag = np.exp(log_mag)
    spectrum: np.ndarray = mag * np.cos(phase) + 1j * (mag * np.sin(phase))
    return spectrum


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an integer array and, per row, the index of its distinct row (np.unique, axis 0)."""
    uniq, inverse = np.unique(a, axis=0, return_inverse=True)
    return uniq, inverse.reshape(-1)


def signflip_pvalues(diffs: np.ndarray, k: int) -> np.ndarray:
    """Exact two-sided sign-flip p per row of integer differences ``diffs`` (runs, n) in [-k, k].

    The same p as ``stats.paired_permutation_test(diffs / k)``: zeros carry no sign; all-zero rows get p = 1.
    The DFT of the null pmf is prod_j ((1 + w^j) / 2)^h_j, evaluated for all runs as exp(h @ log factors).
    p depends on a row only through (h_1..h_k, T), so it is computed once per distinct (h, T) among the rows.
    """
    n = diffs.shape[1]
    mag = np.abs(diffs)
    h = np.stack([np.count_nonzero(mag == j, axis=1) for j in range(1, k + 1)], axis=1)
    t_obs = np.where(diffs > 0, diffs, 0).sum(axis=1)
    uniq, inverse = _unique_rows(np.column_stack([h, t_obs]))
    p: np.ndarray = _signflip_from_counts(uniq[:, :k].astype(float), uniq[:, k], k, n)[inverse]
    return p


def _signflip_from_counts(h: np.ndarray, t_obs: np.ndarray, k: int, n: int) -> np.ndarray:
    """Exact two-sided sign-flip p per row of (h_1..h_k) counts of |D| = j and observed T (see signflip_pvalues)."""
    runs = len(h)
    size = k * n + 1
    angle = np.pi * np.outer(np.arange(1, k + 1), np.arange(size // 2 + 1)) / size  # rfft frequencies
    cos = np.cos(angle)
    with np.errstate(divide="ignore"):
        log_cos = np.maximum(np.log(np.abs(cos)), LOG_FLOOR)  # (1 + w^j) / 2 = cos(a) e^{-ia}
    turn = np.where(cos < 0, np.pi, 0.0) - angle
    out = np.ones(runs)
    rows = max(1, BOOTSTRAP_CHUNK_BYTES // (16 * size * 2))
    for start in range(0, runs, rows):
        hh = h[start:start + rows]
        pmf = np.clip(np.fft.irfft(_spectrum(hh @ log_cos, hh @ turn), n=size, axis=1), 0.0, None)
        cdf = np.cumsum(pmf, axis=1)
        t = t_obs[start:start + rows]
        idx = np.arange(len(hh))
        p_le = cdf[idx, t]
        p_ge = cdf[idx, -1] - np.where(t > 0, cdf[idx, np.maximum(t - 1, 0)], 0.0)
        p = np.minimum(1.0, 2 * np.minimum(p_ge, p_le))
        out[start:start + rows] = np.where(hh.sum(axis=1) == 0, 1.0, p)
    return out


def _order_statistic_uniforms(draws: int, position: float, runs: int,
                              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Uniform order statistics U_(i), U_(i+1) of ``draws`` iid uniforms, i = floor(position), for each run.

    U_(i) ~ Beta(i+1, draws-i) and, given it, U_(i+1) is the smallest of the draws-i-1 uniforms above it.
    """
    i = math.floor(position)
    u_i = rng.beta(i + 1, draws - i, size=runs)
    if i + 1 >= draws:
        return u_i, u_i
    return u_i, u_i + (1 - u_i) * rng.beta(1, draws - i - 1, size=runs)


def _bootstrap_cdfs(cnt: np.ndarray, k: int, n: int) -> np.ndarray:
    """Normalised cdf of the bootstrap sum (n draws) per row of ``cnt`` (shares of each value -k..k), (rows, 2kn+1)."""
    width = 2 * k + 1
    size = 2 * k * n + 1
    basis = np.exp(-2j * np.pi * np.outer(np.arange(width), np.arange(size // 2 + 1)) / size)  # rfft frequencies
    one = cnt @ basis  # DFT of one draw's pmf; n draws: its n-th power
    with np.errstate(divide="ignore"):
        log_mag = np.maximum(np.log(np.abs(one)), LOG_FLOOR)
    spec = _spectrum(n * log_mag, n * np.angle(one))
    cdf = np.cumsum(np.clip(np.fft.irfft(spec, n=size, axis=1), 0.0, None), axis=1)
    cdf /= cdf[:, -1:]
    return cdf


def percentile_intervals(diffs: np.ndarray, k: int, *, level: float, draws: int,
                         rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Percentile task-bootstrap interval of mean(diffs / k) per row, as ``np.quantile`` reads it from ``draws``
    replicates: the two order statistics it interpolates are drawn exactly (inverse cdf of uniform order
    statistics) from the bootstrap law of the sum, the n-fold convolution of the run's empirical pmf.

    The law depends on a row only through its counts of each value, so it is computed once per distinct
    counts (while they fit in a few chunks of memory); the uniforms are drawn per row in the same order.
    """
    runs, n = diffs.shape
    width = 2 * k + 1
    counts = np.stack([np.count_nonzero(diffs == v - k, axis=1) for v in range(width)], axis=1)  # (runs, 2k+1)
    size = 2 * k * n + 1
    rows = max(1, BOOTSTRAP_CHUNK_BYTES // (16 * size * 3))
    uniq, inverse = _unique_rows(counts)
    shared = None
    if len(uniq) < runs and len(uniq) * size * 8 <= BOOTSTRAP_CHUNK_BYTES:
        shared = np.concatenate([_bootstrap_cdfs(uniq[s:s + rows] / n, k, n) for s in range(0, len(uniq), rows)])
    out = np.empty((runs, 2))
    for start in range(0, runs, rows):
        if shared is None:
            cdf = _bootstrap_cdfs(counts[start:start + rows] / n, k, n)
        else:
            cdf = shared[inverse[start:start + rows]]
        for e, q in enumerate(((1 - level) / 2, (1 + level) / 2)):
            position = (draws - 1) * q
            frac = position - math.floor(position)
            u_a, u_b = _order_statistic_uniforms(draws, position, len(cdf), rng)
            a = np.argmax(cdf >= u_a[:, None], axis=1)
            b = np.argmax(cdf >= u_b[:, None], axis=1)
            out[start:start + rows, e] = (a + frac * (b - a) - k * n) / (k * n)
    return out[:, 0], out[:, 1]


def simulate_delta_reports(n: int, *, base: float, effect: float, k: int, omega2: float = 0.0, runs: int,
                           seed: int | np.random.Generator = 0, alpha: float = ALPHA, level: float = CI_LEVEL,
                           draws: int = BOOTSTRAP_DRAWS) -> SimulatedRuns:
    """``runs`` simulated ``delta_report`` decisions on ``n`` fresh tasks with ``k`` rollouts per side."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    before, after = draw_counts(n, base=base, effect=effect, k=k, omega2=omega2, runs=runs, rng=rng)
    return decide(after - before, k, alpha=alpha, level=level, draws=draws, rng=rng)


def decide(diffs: np.ndarray, k: int, *, alpha: float = ALPHA, level: float = CI_LEVEL,
           draws: int = BOOTSTRAP_DRAWS, rng: np.random.Generator) -> SimulatedRuns:
    """delta_report's verdict per row of integer paired differences (after - before passes out of k)."""
    p = signflip_pvalues(diffs, k)
    lo, hi = percentile_intervals(diffs, k, level=level, draws=draws, rng=rng)
    delta = diffs.mean(axis=1) / k
    called = (p <= alpha) & ((lo > 0) | (hi < 0))
    verdict = np.where(called, np.sign(delta), 0).astype(int)
    return SimulatedRuns(delta, p, lo, hi, verdict)


def wilson_lower(successes: int, runs: int, level: float) -> float:
    """One-sided lower Wilson bound on a simulated rate (Wilson 1927), at confidence ``level``."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(level)
    p = successes / runs
    centre = p + z * z / (2 * runs)
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))
    return max(0.0, (centre - half) / (1 + z * z / runs))


# ------------------------------------------------------------------------------------------------
# planning: analytic bounds, refined by simulation of the rule
# ------------------------------------------------------------------------------------------------
def t_tasks(effect: float, variance: float, *, alpha: float, power: float, permutation: bool) -> int:
    """Tasks from the t version of Miller's Eq. 9, iterated to its fixed point (df = n - 1).

    ``permutation=False``: n = (t_{1-a/2} + t_power)^2 sd^2 / effect^2 (Miller's formula with t quantiles).
    ``permutation=True``: n = (t_power sd + t_{1-a/2} sqrt(sd^2 + effect^2))^2 / effect^2, because the sign-flip
    null spreads with sum d_i^2 ~ n (sd^2 + effect^2), not n sd^2; the larger (conservative) bound.
    """
    from scipy.special import stdtrit  # t quantile (== scipy.stats.t.ppf), without importing scipy.stats

    sd = math.sqrt(variance)
    null_sd = math.sqrt(variance + effect**2) if permutation else sd
    from statistics import NormalDist

    z = NormalDist()
    # start at the normal (df = infinity) n, not at 2: at a tiny alpha the df=1 quantile is astronomically large
    n = max(2, math.ceil((z.inv_cdf(power) * sd + z.inv_cdf(1 - alpha / 2) * null_sd) ** 2 / effect**2))
    for _ in range(100):  # the fixed point is reached in a handful of steps
        if n > HOLDOUT_MAX_TASKS:
            raise InvalidArgument(f"detecting {effect:g} at alpha={alpha:g}, power={power:g} needs more than "
                                  f"{HOLDOUT_MAX_TASKS:,} tasks (HOLDOUT_MAX_TASKS); raise alpha= or effect=")
        df = max(n - 1, 1)
        want = math.ceil((stdtrit(df, power) * sd + stdtrit(df, 1 - alpha / 2) * null_sd) ** 2
                         / effect**2 - 1e-9)
        if want == n:
            break
        n = max(2, want)
    return n


@dataclass(frozen=True)
class Plan:
    """The n a plan settled on, how (``"simulated"`` or ``"t"``), and the simulated power behind it."""

    n_tasks: int
    method: str
    hits: int | None = None  # simulated runs called "better" at n_tasks
    runs: int | None = None


def plan_tasks(effect: float, variance: float, *, base: float, k: int | None, omega2: float, alpha: float,
               power: float, level: float, runs: int, confidence: float, max_lattice: int, seed: int,
               draws: int, min_tasks: int) -> Plan:
    """Smallest n whose simulated power (delta_report's rule) has a one-sided Wilson lower bound >= ``power``.

    Bracketed by the t formula (lower start) and the permutation-variance t formula (upper start), then
    bisected with one seed per n. Without a binomial model (``k=None``) or above ``max_lattice`` (k x n lattice
    points per run) the permutation-variance t formula is the plan.
    """
    upper = max(min_tasks, t_tasks(effect, variance, alpha=alpha, power=power, permutation=True))
    if k is None or k * upper > max_lattice:
        return Plan(upper, "t")
    lower = max(min_tasks, t_tasks(effect, variance, alpha=alpha, power=power, permutation=False))
    hits_at: dict[int, int] = {}

    def enough(n: int) -> bool:
        sim = simulate_delta_reports(n, base=base, effect=effect, k=k, omega2=omega2, runs=runs, seed=seed,
                                     alpha=alpha, level=level, draws=draws)
        hits_at[n] = int(np.count_nonzero(sim.verdict == 1))
        return wilson_lower(hits_at[n], runs, confidence) >= power

    if enough(lower):
        return Plan(lower, "simulated", hits_at[lower], runs)
    fail, ok = lower, upper
    while not enough(ok):
        fail, ok = ok, ok + max(1, ok // 10)
        if k * ok > max_lattice:
            return Plan(ok, "t")
    while ok - fail > 1:
        mid = (ok + fail) // 2
        if enough(mid):
            ok = mid
        else:
            fail = mid
    return Plan(ok, "simulated", hits_at[ok], runs)
