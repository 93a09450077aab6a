"""How many tasks a held-out set needs (``holdout_size``, ``HoldoutSize``): the power of the paired test
``delta_report`` runs, by a seeded, vectorised simulation of its decision rule.

Miller's z formula ignores what ``delta_report`` actually does:
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
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from whileai_core.defaults import (
    ALPHA,
    BOOTSTRAP_CHUNK_BYTES,
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    HOLDOUT_BASE,
    HOLDOUT_BETWEEN_VAR,
    HOLDOUT_MAX_TASKS,
    HOLDOUT_SIM_CONFIDENCE,
    HOLDOUT_SIM_MAX_LATTICE,
    HOLDOUT_SIM_RUNS,
    HOLDOUT_SIM_SEED,
    LOG_FLOOR,
    MIN_CI_TASKS,
    POWER,
    ROLLOUTS_PER_TASK,
    T_QUANTILE_PLAN_SAFETY,
    T_QUANTILE_REL_TOL,
)
from whileai_core.errors import InvalidArgument
from whileai_core.measure import stats
from whileai_core.measure.delta import delta_report
from whileai_core.measure.pass_at import Interval, _ci_list, _fmt_ci, _sd_interval
from whileai_core.measure.quantiles.student_t import t_quantile
from whileai_core.rows import ReportMapping


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
        want = _plan_ceil(df, sd, null_sd, effect=effect, alpha=alpha, power=power)
        if want == n:
            break
        n = max(2, want)
    return n


def _plan_ceil(df: int, sd: float, null_sd: float, *, effect: float, alpha: float, power: float,
               tol: float = T_QUANTILE_REL_TOL, safety: float = T_QUANTILE_PLAN_SAFETY) -> int:
    """ceil((t_power sd + t_{1-alpha/2} null_sd)^2 / effect^2 - 1e-9) at ``df``: the integer scipy's t quantiles
    give. ``t_quantile`` decides it (no scipy import, ~0.2 s) when the expression lies more than ``safety`` times
    its error bound from an integer; closer, scipy's ``stdtrit`` computes it as before."""
    t_p, t_a = t_quantile(df, power), t_quantile(df, 1 - alpha / 2)
    if t_p is not None and t_a is not None:
        root = t_p * sd + t_a * null_sd
        x = root**2 / effect**2 - 1e-9
        bound = 2 * abs(root) * tol * (max(1.0, abs(t_p)) * sd + max(1.0, abs(t_a)) * null_sd) / effect**2
        if abs(x - round(x)) > safety * bound + 1e-12 * abs(x):  # + float rounding of the expression itself
            return math.ceil(x)
    from scipy.special import stdtrit  # t quantile (== scipy.stats.t.ppf), without importing scipy.stats

    value: float = (stdtrit(df, power) * sd + stdtrit(df, 1 - alpha / 2) * null_sd) ** 2 / effect**2 - 1e-9
    return math.ceil(value)


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


# ------------------------------------------------------------------------------------------------
# holdout size
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HoldoutSize(ReportMapping):
    """Tasks needed for ``delta_report`` to call a paired pass@1 gain ``effect`` "better" with ``power``.

    On the binomial model (``sd_source == "model"``, integer k) n is the smallest number of tasks at which a
    seeded simulation of delta_report's own rule (exact sign-flip p <= alpha and a percentile interval that
    excludes 0) reaches ``power`` with a one-sided Wilson lower bound (``method == "simulated"``; the simulated
    power is ``sim_power`` from ``sim_hits`` of ``sim_runs``). Otherwise (``task_sd``, rows, ``k=None``, or too
    many tasks to simulate) n comes from the t version of Miller 2024 Eq. 9 with the sign-flip null's variance,
    n = (t_power sd + t_{1-alpha/2} sqrt(sd^2 + effect^2))^2 / effect^2 (``method == "t"``).
    ``variance`` = omega^2 + p(1-p)/k + q(1-q)/k on the model path (q = base + effect), or the measured
    variance of per-task paired differences when rows are given. ``int(result)`` is n_tasks.
    """

    SDK_KEYS: ClassVar[dict[str, Any]] = {  # the SDK's holdout_size keys over ours
        "task_std": "task_sd", "notes": lambda r: [r.note] if r.note else [],
    }

    n_tasks: int
    effect: float
    base: float
    k: int | None
    power: float
    alpha: float
    variance: float
    sd_source: str  # "model", "given", "rows"
    omega2: float
    n_paired: int | None = None
    note: str | None = None
    method: str = "t"  # "simulated" or "t"
    sim_hits: int | None = None
    sim_runs: int | None = None
    task_sd_ci: Interval | None = None  # chi-square interval of the measured task sd ("rows" only)

    def __int__(self) -> int:
        return self.n_tasks

    def __index__(self) -> int:
        return self.n_tasks

    @property
    def task_sd(self) -> float:
        return math.sqrt(self.variance)

    @property
    def task_std(self) -> float:
        """The SDK's name for ``task_sd``."""
        return self.task_sd

    @property
    def sim_power(self) -> float | None:
        return None if not self.sim_runs or self.sim_hits is None else self.sim_hits / self.sim_runs

    @property
    def sim_power_ci(self) -> Interval | None:
        if not self.sim_runs or self.sim_hits is None:
            return None
        return stats.wilson_interval(self.sim_hits, self.sim_runs)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["task_sd_ci"] = _ci_list(self.task_sd_ci)
        d.update(task_sd=self.task_sd, task_std=self.task_sd, sim_power=self.sim_power,
                 sim_power_ci=_ci_list(self.sim_power_ci))
        return d

    def __str__(self) -> str:
        k = "inf" if self.k is None else self.k
        sd = f"per-task sd {self.task_sd:.3f}"
        src = {"model": f"{sd} (assumed, no interval: binomial model, base {self.base:.2f}, omega^2 {self.omega2:g})",
               "given": f"{sd} (given, no interval)",
               "rows": f"{sd}{_fmt_ci(self.task_sd_ci, 3)} (measured on {self.n_paired} paired tasks)"}[self.sd_source]
        if self.method == "simulated":
            how = (f"simulated power {self.sim_power:.3f}{_fmt_ci(self.sim_power_ci, 3)} over {self.sim_runs} runs "
                   f"of delta_report's rule")
        else:
            how = "t formula with the sign-flip variance, not simulated"
        line = (f"{self.n_tasks} tasks to detect {self.effect:+.3f} at {self.power:.0%} power, alpha {self.alpha:g} "
                f"(k={k}; {how}; {src})")
        return line + (f"; {self.note}" if self.note else "")


def holdout_size(
    effect: float,
    *,
    base: float = HOLDOUT_BASE,
    k: int | None = ROLLOUTS_PER_TASK,
    power: float = POWER,
    alpha: float = ALPHA,
    omega2: float = HOLDOUT_BETWEEN_VAR,
    task_sd: float | None = None,
    before: Any = None,
    after: Any = None,
    sim_runs: int = HOLDOUT_SIM_RUNS,
    sim_confidence: float = HOLDOUT_SIM_CONFIDENCE,
    sim_max_lattice: int = HOLDOUT_SIM_MAX_LATTICE,
    seed: int = HOLDOUT_SIM_SEED,
    draws: int = BOOTSTRAP_DRAWS,
    level: float = CI_LEVEL,
    task_std: float | None = None,
) -> HoldoutSize:
    """Tasks a held-out set needs for ``delta_report`` to detect a gain of ``effect`` in pass@1 with ``power``.

    On the binomial model n is found by simulating delta_report's rule (``sim_runs`` runs per candidate n,
    ``seed``, ``draws`` bootstrap replicates, ``level`` interval): the smallest n whose simulated power has a
    one-sided ``sim_confidence`` Wilson lower bound >= ``power``. Otherwise, and above ``sim_max_lattice``
    (k x n), the t formula with the sign-flip null's variance (see ``HoldoutSize``). The per-task variance of the paired difference comes from, best first: ``before`` + ``after`` rows (the
    measured variance of per-task paired differences), ``task_sd`` (given), or the binomial model
    omega^2 + (p(1-p) + q(1-q))/k with p = ``base``, q = base + effect: k rollouts per task shrink the
    within-task term by 1/k (``k=None`` is the k -> infinity limit). ``task_std`` is the SDK's name for
    ``task_sd``.

    Args:
        effect: the pass@1 gain to detect, in (0, 1).
        base: the pass@1 before training (binomial model). (``HOLDOUT_BASE``)
        k: rollouts per task; None: the k -> infinity limit. (``ROLLOUTS_PER_TASK``)
        power: the chance of detecting ``effect``. (``POWER``)
        alpha: the test's level. (``ALPHA``)
        omega2: the between-task variance of the gain (0: every task gains alike, optimistic).
            (``HOLDOUT_BETWEEN_VAR``)
        task_sd: a known sd of the per-task paired difference.
        before: measured rows before (with ``after``: the measured variance).
        after: measured rows after.
        sim_runs: simulated runs per candidate n. (``HOLDOUT_SIM_RUNS``)
        sim_confidence: the one-sided confidence of the simulated power's lower bound. (``HOLDOUT_SIM_CONFIDENCE``)
        sim_max_lattice: above this k x n, the t formula instead of simulation. (``HOLDOUT_SIM_MAX_LATTICE``)
        seed: the simulation's seed. (``HOLDOUT_SIM_SEED``)
        draws: bootstrap resamples inside each simulated run. (``BOOTSTRAP_DRAWS``)
        level: the two-sided interval level. (``CI_LEVEL``)
        task_std: the SDK's name for ``task_sd``; pass one of them, not both (default None).

    Returns:
        a ``HoldoutSize``: ``n_tasks`` and how it was found; it prints one line.

    Raises:
        InvalidArgument: an ``effect``, ``base``, ``power`` or ``alpha`` out of range (a ``ValueError``); both
            ``task_sd`` and ``task_std``.

    Example:
        ```python
        print(wai.holdout_size(0.05))   # 375 tasks to detect +0.050 at 80% power, alpha 0.05 (k=4; ...)
        ```
    """
    if task_std is not None:
        if task_sd is not None:
            raise InvalidArgument("pass the per-task sd once: task_sd= (ours) or task_std= (the SDK's name)")
        task_sd = task_std
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not 0 < effect < 1:
        raise InvalidArgument(f"effect= is the gain in pass rate to prove, between 0 and 1 (0.05 = 5 points); got {effect!r}")
    power = stats.check_prob(power, "power")
    alpha = stats.check_prob(alpha, "alpha")
    if isinstance(base, bool) or not isinstance(base, (int, float)) or not 0 <= base < 1:
        raise InvalidArgument(f"base= is the pass rate before the change, in [0, 1); got {base!r}")
    if base + effect > 1:
        raise InvalidArgument(f"base + effect must be <= 1; got base={base} effect={effect} (lower one of them)")
    if k is not None:
        k = stats.check_int(k, "k", 1)
    if isinstance(omega2, bool) or not isinstance(omega2, (int, float)) or not omega2 >= 0:
        raise InvalidArgument(f"omega2= is the between-task variance of true gains, >= 0; got {omega2!r}")
    if (before is None) != (after is None):
        raise InvalidArgument("before= and after= go together: pass both runs' rows to measure the task sd, or neither")
    n_paired = None
    note = None
    sd_ci = None
    if before is not None:
        rep = delta_report(before, after, draws=1, permutations=1)
        if rep.n_paired < MIN_CI_TASKS:
            raise InvalidArgument(f"before/after share {rep.n_paired} graded tasks; measuring a task sd needs "
                             f"{MIN_CI_TASKS}. Pass task_sd= or base= and k= instead")
        d = np.array(list(rep.per_task.values()))
        variance = float(np.var(d, ddof=1))
        n_paired = rep.n_paired
        sd_ci = _sd_interval(math.sqrt(variance), n_paired - 1, CI_LEVEL)
        source = "rows"
        if variance == 0:
            raise InvalidArgument("every paired task moved by the same amount (task sd 0); pass task_sd= or base= and k=")
    elif task_sd is not None:
        if isinstance(task_sd, bool) or not isinstance(task_sd, (int, float)) or not task_sd > 0:
            raise InvalidArgument(f"task_sd= must be a positive sd of per-task paired differences; got {task_sd!r}")
        variance = float(task_sd) ** 2
        source = "given"
    else:
        q = base + effect
        within = 0.0 if k is None else (base * (1 - base) + q * (1 - q)) / k
        variance = float(omega2) + within
        source = "model"
        if variance == 0:
            raise InvalidArgument("the model variance is 0 (base 0 or 1 with omega2=0 and k=None); pass task_sd=")
        if omega2 == 0:
            note = "omega2=0 assumes every task gains alike (optimistic); pass omega2= or before/after rows"
    sim_runs = stats.check_int(sim_runs, "sim_runs", 1)
    sim_confidence = stats.check_prob(sim_confidence, "sim_confidence")
    sim_max_lattice = stats.check_int(sim_max_lattice, "sim_max_lattice", 0)
    level = stats.check_level(level)
    plan = plan_tasks(
        float(effect), variance, base=float(base), k=k if source == "model" else None, omega2=float(omega2),
        alpha=alpha, power=power, level=level, runs=sim_runs, confidence=sim_confidence,
        max_lattice=sim_max_lattice, seed=stats.check_int(seed, "seed", 0), draws=stats.check_int(draws, "draws", 1),
        min_tasks=MIN_CI_TASKS)
    return HoldoutSize(plan.n_tasks, float(effect), float(base), k, power, alpha, variance, source, float(omega2),
                       n_paired, note, plan.method, plan.hits, plan.runs, sd_ci)
