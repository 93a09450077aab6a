"""Measurement on rows: pass@1 / pass^k / pass@k with task-bootstrap intervals, paired deltas, noise, power.

Rows are grouped by ``rows.task_key``; only rewards exactly 0 or 1 count (bools excluded). ``None`` and
partial rewards are skipped and counted in the note; a NaN reward is an error (a failed judge should write
None). Every interval is a bootstrap over tasks: rollouts of one task are not independent (Miller 2024).
The array-level work lives in ``whileai_core.measure.stats``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar, SupportsInt, cast

import numpy as np

from whileai_core.defaults import (
    ALPHA,
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_RELIABLE_TASKS,
    CI_LEVEL,
    HOLDOUT_BASE,
    HOLDOUT_BETWEEN_VAR,
    HOLDOUT_SIM_CONFIDENCE,
    HOLDOUT_SIM_MAX_LATTICE,
    HOLDOUT_SIM_RUNS,
    HOLDOUT_SIM_SEED,
    MIN_CI_TASKS,
    MIN_RERUNS,
    P_VALUE_PRINT_FLOOR,
    PASS_K_INTERVAL,
    PERMUTATIONS,
    POWER,
    ROLLOUTS_PER_TASK,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.measure import power as power_sim
from whileai_core.measure import sequential as sequential_design
from whileai_core.measure import stats
from whileai_core.measure.between_runs import RunVariance
from whileai_core.measure.columns import RowColumns, TaskCounts, task_counts
from whileai_core.rows import (
    ReportMapping,
    as_rows,
    task_key,
)

Interval = tuple[float, float]


def _fmt(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _fmt_ci(ci: Interval | None, digits: int = 2, signed: bool = False) -> str:
    if ci is None:
        return ""
    f = "+." if signed else "."
    return f" [{ci[0]:{f}{digits}f}..{ci[1]:{f}{digits}f}]"


def _est(x: float | None, ci: Interval | None, digits: int = 2, signed: bool = False) -> str:
    """An estimate as printed: ``n/a``, ``0.64 [0.57..0.72]``, or ``0.64 (no interval)`` (the note says why)."""
    if x is None:
        return "n/a"
    value = f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
    return value + (_fmt_ci(ci, digits, signed) if ci is not None else " (no interval)")


def _zero_width(named: list[tuple[str, Interval | None]]) -> str | None:
    """One note for the bootstrap intervals of zero width: every resampled task set gave the same value."""
    zero = [f"{name} [{ci[0]:.2f}..{ci[1]:.2f}]" for name, ci in named if ci is not None and ci[0] == ci[1]]
    if not zero:
        return None
    return (f"zero-width interval on {', '.join(zero)}: every task gives the same value, so resampling tasks "
            f"shows no spread; that is not certainty (more tasks or rollouts would show it)")


def _ci_list(ci: Interval | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


def _sd_interval(sd: float, df: int, level: float) -> Interval:
    """Chi-square interval of a normal sample sd with ``df`` degrees of freedom (sqrt(df s^2 / chi2 quantiles))."""
    from scipy.stats import chi2

    lo_q, hi_q = chi2.ppf([(1 + level) / 2, (1 - level) / 2], df)
    return (math.sqrt(df * sd**2 / lo_q), math.sqrt(df * sd**2 / hi_q))


def _check_seed(seed: Any) -> Any:
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    return stats.check_int(seed, "seed", 0)


# ------------------------------------------------------------------------------------------------
# pass@k
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PassAt:
    """pass@1, pass^k and pass@k over tasks, each with a task-bootstrap interval (None below MIN_CI_TASKS)."""

    k: int | None
    pass_at_1: float | None
    pass_pow_k: float | None
    pass_at_k: float | None
    ci95: Interval | None
    pass_pow_k_ci95: Interval | None
    pass_at_k_ci95: Interval | None
    headroom_ci95: Interval | None
    n_groups: int
    n_rows: int
    n_groups_at_k: int
    n_excluded: int
    n_skipped: int
    per_task: dict[str, float]
    level: float
    method: str
    draws: int
    note: str | None = None
    k_interval: str = PASS_K_INTERVAL  # how pass^k / pass@k intervals were made: "wilson_cc", "wilson", "bootstrap"
    n_groups_imputed: int = 0  # unanimous groups shorter than k scored at their 0/1 value (unanimous_short=True)
    config: dict[str, Any] = field(default_factory=dict)  # the run conditions the rows agree on (measure.config)

    @property
    def headroom(self) -> float | None:
        """pass@k - pass@1: the gap an RL update could close."""
        if self.pass_at_k is None or self.pass_at_1 is None:
            return None
        return self.pass_at_k - self.pass_at_1

    @property
    def n_tasks(self) -> int:
        return self.n_groups

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("ci95", "pass_pow_k_ci95", "pass_at_k_ci95", "headroom_ci95"):
            d[key] = _ci_list(d[key])
        d["headroom"] = self.headroom
        return d

    def __str__(self) -> str:
        k = "k" if self.k is None else self.k
        groups = f"{self.n_groups} group{'' if self.n_groups == 1 else 's'}"
        if self.n_excluded and self.pass_pow_k is not None:
            groups += f", {self.n_groups_at_k} tasks at k"
        if self.n_groups_imputed:
            groups += f", {self.n_groups_imputed} short unanimous imputed"
        if k == 1 and self.pass_pow_k is None and self.pass_at_k is None:  # one rollout a task: pass^1 and
            # pass@1 would print as "pass@1 0.68 ... | pass@1 n/a", the same name twice
            line = f"pass@1 {_est(self.pass_at_1, self.ci95)} | pass^k, pass@k and headroom n/a ({groups}, k=1"
        else:
            line = (
                f"pass@1 {_est(self.pass_at_1, self.ci95)} | "
                f"pass^{k} (pass_pow_k) {_est(self.pass_pow_k, self.pass_pow_k_ci95)} | "
                f"pass@{k} {_est(self.pass_at_k, self.pass_at_k_ci95)} | "
                f"headroom {_est(self.headroom, self.headroom_ci95)} ({groups}, k={k if self.k is not None else 'n/a'}"
            )
        if self.note:
            line += f"; {self.note}"
        return line + ")"

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(str(self))}</pre>"


def pass_at(
    rows: Any,
    k: int | None = None,
    *,
    level: float = CI_LEVEL,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int | None = 0,
    method: str = "percentile",
    min_k: int = ROLLOUTS_PER_TASK,
    min_tasks: int = MIN_CI_TASKS,
    dedupe: bool = False,
    k_interval: str = PASS_K_INTERVAL,
    reliable_tasks: int = BOOTSTRAP_RELIABLE_TASKS,
    unanimous_short: bool = False,
) -> PassAt:
    """pass@1, pass^k (tau-bench) and pass@k (Chen et al. 2021) over tasks, with bootstrap-over-tasks intervals.

    ``rows``: row dicts, a JSONL path, or an object with ``.rows`` (ScoredData). ``k`` defaults to the smallest
    number of rows per task (graded or not) among tasks with two or more, i.e. the repeats the run asked for:
    one ungraded row makes its task short, not the run. Tasks with fewer than k graded rollouts are left out of
    pass^k / pass@k, counted (``n_excluded``) and named in the note; pass@1 is the mean per-task rate over all
    tasks. Below ``min_k`` pass^k and pass@k are not reported. ``method``: "percentile" (default), "basic",
    "BCa". Repeated rollouts are an error unless ``dedupe=True`` (dropped and counted).
    ``k_interval``: "wilson_cc" (default; Wilson score with a continuity correction over the tasks at k, which
    covers >= 0.95 from 10 tasks on, pass^8 included, where the bootstrap covers 0.79 and plain Wilson 0.90),
    "wilson" or "bootstrap". Below ``min_tasks`` tasks at k there is no interval, as for pass@1. The headroom
    interval is a bootstrap; below
    ``reliable_tasks`` tasks at k the note flags it as too narrow.
    ``unanimous_short=True`` (the SDK's option) scores a task with fewer than k graded rollouts that all agree
    at its 0/1 value for pass^k and pass@k (counted in ``n_groups_imputed``); mixed short tasks stay out.
    ``config`` holds the conditions the rows agree on (``measure.config.run_config``).

    Args:
        rows: row dicts, a JSONL path, or an object with ``.rows`` (``ScoredData``, ``SimulationData``).
        k: tries per task for pass^k and pass@k; None: the repeats the run asked for.
        level: the two-sided interval level. (``CI_LEVEL``)
        draws: bootstrap resamples of the tasks. (``BOOTSTRAP_DRAWS``)
        seed: the bootstrap's seed (same seed, same interval).
        method: the bootstrap interval: ``"percentile"``, ``"basic"`` or ``"BCa"``.
        min_k: below this k, pass^k and pass@k are not reported. (``ROLLOUTS_PER_TASK``)
        min_tasks: below this many tasks there is no interval. (``MIN_CI_TASKS``)
        dedupe: drop repeated rollouts (counted in the note) instead of raising.
        k_interval: ``"wilson_cc"``, ``"wilson"`` or ``"bootstrap"`` for the pass^k / pass@k intervals.
            (``PASS_K_INTERVAL``)
        reliable_tasks: below this many tasks at k the headroom interval is flagged as too narrow.
            (``BOOTSTRAP_RELIABLE_TASKS``)
        unanimous_short: score a task with fewer than k graded rollouts that all agree (all 0 or all 1) at that
            value for pass^k and pass@k, counted in ``n_groups_imputed`` (default False: such tasks are left out).

    Returns:
        a ``PassAt`` (prints itself: every number with its interval and n; ``.to_dict()``).

    Raises:
        InvalidArgument: repeated rollouts without ``dedupe``, a task id seen as two types, or an argument out of
            range (a ``ValueError``).
        NonFiniteReward: a NaN reward (a ``ValueError``): a judge that failed should write None.
        InvalidArgumentType: ``unanimous_short`` that is not a bool, or ``rows`` that are not rows (a
            ``TypeError``).

    Example:
        ```python
        rows = [{"task_id": f"t{t}", "rollout_index": i, "reward": int((t + i) % 3 > 0)}
                for t in range(20) for i in range(4)]
        print(wai.pass_at(rows))   # pass@1 ... | pass^4 ... | pass@4 ... (20 groups, k=4)
        ```
    """
    if not isinstance(unanimous_short, bool):
        raise InvalidArgumentType(f"unanimous_short= must be True or False; got {unanimous_short!r}")
    k_given = k is not None
    if k is not None:
        k = stats.check_int(k, "k", 1)
    level = stats.check_level(level)
    draws = stats.check_int(draws, "draws", 1)
    method = stats.check_method(method)
    min_k = stats.check_int(min_k, "min_k", 1)
    min_tasks = stats.check_int(min_tasks, "min_tasks", 1)
    reliable_tasks = stats.check_int(reliable_tasks, "reliable_tasks", 1)
    if k_interval not in ("wilson_cc", "wilson", "bootstrap"):
        raise InvalidArgument(f"k_interval= must be 'wilson_cc', 'wilson' or 'bootstrap'; got {k_interval!r}")
    seed = _check_seed(seed)
    rows = RowColumns(rows, name="rows")  # once: each field read once for the counts and the config
    tc = task_counts(rows, dedupe=dedupe)
    notes: list[str] = []
    n_skipped = tc.n_none + tc.n_partial + tc.n_bool
    skipped = tc.skipped_note()

    def empty(note: str) -> PassAt:
        return PassAt(k, None, None, None, None, None, None, None, 0, 0, 0, 0, n_skipped, {}, level, method,
                      draws, note)

    if not tc.keys:
        if tc.n_total and tc.n_none == tc.n_total and tc.first_error:
            return empty(f"the judge failed on all {tc.n_total} rows: {tc.first_error}; re-run the judge")
        if tc.n_total == 0:
            return empty("no rows")
        return empty("no binary rewards; grade first" + (f" ({skipped})" if skipped else ""))

    n, c = tc.n, tc.c
    n_tasks = len(tc.keys)
    if tc.n_rows >= 2 and (tc.c.sum() == 0 or tc.c.sum() == tc.n_rows):
        value = int(tc.c.sum() > 0)
        notes.append(f"every row scored {value} ({tc.n_rows} of {tc.n_rows}); check the judge before reading this number")
    k, per_pow, per_at, eligible, k_notes = _pass_k(tc, k, k_given=k_given, min_k=min_k)
    n_imputed = 0
    if unanimous_short and per_pow is not None:
        short = ~eligible & ((c == 0) | (c == n))
        per_pow[short] = per_at[short] = (c[short] == n[short]).astype(float)
        eligible = eligible | short
        n_imputed = int(short.sum())
        k_notes = [x for x in k_notes if "left out of pass^" not in x or (~eligible).any()]
    notes += k_notes
    rates = c / n
    n_at_k = int(eligible.sum())
    n_excluded = n_tasks - n_at_k
    p1 = float(rates.mean())
    ppk = None if per_pow is None else float(per_pow[eligible].mean())
    pak = None if per_at is None else float(per_at[eligible].mean())
    ci1, cik, ciak, cih = _pass_cis(rates, per_pow, per_at, eligible, k, ppk=ppk, pak=pak, level=level,
                                    draws=draws, seed=seed, method=method, min_tasks=min_tasks,
                                    reliable_tasks=reliable_tasks, k_interval=k_interval, notes=notes)
    zero = _zero_width([("pass@1", ci1), (f"pass^{k}", cik), (f"pass@{k}", ciak), ("headroom", cih)])
    if zero:
        notes.append(zero)
    if skipped:
        notes.append(skipped)
    per_task = dict(zip(tc.keys, rates.tolist()))
    from whileai_core.measure.config import run_config

    return PassAt(k, p1, ppk, pak, ci1, cik, ciak, cih, n_tasks, tc.n_rows, n_at_k, n_excluded, n_skipped,
                  per_task, level, method, draws, "; ".join(notes) or None, k_interval, n_imputed, run_config(rows))


def _pass_cis(rates: np.ndarray, per_pow: Any, per_at: Any, eligible: np.ndarray, k: int, *, ppk: float | None,
              pak: float | None, level: float, draws: int, seed: Any, method: str, min_tasks: int,
              reliable_tasks: int, k_interval: str, notes: list[str]) -> tuple[Any, Any, Any, Any]:
    """The pass@1, pass^k, pass@k and headroom intervals (appending what limits them to ``notes``)."""
    n_tasks, n_at_k = len(rates), int(eligible.sum())
    ci1 = cik = ciak = cih = None
    if n_tasks < min_tasks:
        notes.append(
            f"no bootstrap interval: {n_tasks} task(s), and a bootstrap needs {min_tasks}; it resamples tasks, so "
            f"run more tasks, or give each row its own task_id when the rows are separate items"
        )
    else:
        if ppk is None:
            ci1 = stats.bootstrap_mean_ci(rates, level=level, draws=draws, seed=seed, method=method, min_n=min_tasks)
        else:
            ci1, cik, ciak, cih = _pass_intervals(rates, per_pow, per_at, eligible, level=level, draws=draws,
                                                  seed=seed, method=method, min_tasks=min_tasks)
            if cih is not None and n_at_k < reliable_tasks:
                notes.append(f"the headroom interval is a task bootstrap over {n_at_k} tasks, which runs too narrow "
                             f"below {reliable_tasks} tasks (measured in docs/measure.md)")
    if ppk is not None and n_at_k < min_tasks and n_tasks >= min_tasks:
        notes.append(f"no interval on pass^{k} / pass@{k}: {n_at_k} task(s) reached k={k}, an interval needs "
                     f"{min_tasks} (as pass@1's)")
    if ppk is not None and pak is not None and k_interval != "bootstrap" and n_at_k >= min_tasks:
        cc = k_interval == "wilson_cc"
        cik = stats.wilson_mean_interval(min(1.0, max(0.0, ppk)), n_at_k, level=level, continuity=cc)
        ciak = stats.wilson_mean_interval(min(1.0, max(0.0, pak)), n_at_k, level=level, continuity=cc)
    return ci1, cik, ciak, cih


def _pass_k(tc: TaskCounts, k: int | None, *, k_given: bool, min_k: int) -> tuple[Any, ...]:
    """k (default: the smallest number of rows per task among tasks with 2+), per-task pass^k and pass@k on the
    tasks with k graded rollouts (None when not reported), which tasks those are, and the notes."""
    n, c = tc.n, tc.c
    planned = tc.planned()
    multi = planned[planned >= 2]
    if k is None:
        k = int(multi.min()) if multi.size else 1
    eligible = n >= k
    notes = []
    if k < min_k and k_given:
        notes.append(f"k={k} is below min_k={min_k}; pass min_k={k} to report pass^{k} and pass@{k}")
    elif k < min_k:
        if multi.size and multi.min() != multi.max():
            notes.append(f"tasks have {k} to {int(multi.max())} rollouts, and k is the fewest; set repeats>={min_k} "
                         f"for pass^k and pass@k (or pass min_k={k}, or k= to leave out the tasks short of it)")
        else:
            notes.append(f"tasks have {k} rollout(s) each; set repeats>={min_k} for pass^k and pass@k "
                         f"(or pass min_k={k})")
    elif not eligible.any():
        notes.append(f"no task has k={k} graded rollouts (largest has {int(n.max())}); lower k or finish the groups")
    else:
        per_pow = np.zeros(len(n))
        per_at = np.zeros(len(n))
        per_pow[eligible] = stats.pass_pow_k(n[eligible], c[eligible], k)
        per_at[eligible] = stats.pass_at_k(n[eligible], c[eligible], k)
        if not eligible.all():
            notes.append(_short_note(tc.short_of(k), k))
        elif n.min() != n.max():
            notes.append(f"groups are uneven ({int(n.min())} to {int(n.max())} graded rollouts); each task uses "
                         f"its own n")
        return k, per_pow, per_at, eligible, notes
    return k, None, None, eligible, notes


def _short_note(short: list[tuple[str, int, int]], k: int, shown: int = 3) -> str:
    """Which tasks are short of k graded rollouts, and why (ungraded rows, or missing rows)."""
    named = []
    for key, graded, rows in short[:shown]:
        named.append(f"{key!r} has {graded} of {rows} rollouts graded" if rows > graded
                     else f"{key!r} has only {rows} rollout(s)")
    more = f" and {len(short) - shown} more" if len(short) > shown else ""
    return f"{len(short)} task(s) with fewer than k={k} graded rollouts left out of pass^{k} and pass@{k}: " \
           f"{'; '.join(named)}{more}"


def _pass_intervals(
    rates: np.ndarray,
    per_pow: np.ndarray,
    per_at: np.ndarray,
    eligible: np.ndarray,
    *,
    level: float,
    draws: int,
    seed: Any,
    method: str,
    min_tasks: int,
) -> list[Interval | None]:
    """pass@1, pass^k, pass@k and headroom intervals from one set of resampled task sets."""
    ew = eligible.astype(float)
    cols = np.stack([rates, per_pow, per_at], axis=1)
    wts = np.stack([np.ones(len(rates)), ew, ew], axis=1)
    dist = stats.bootstrap_means(cols, wts, draws=draws, seed=seed)
    ests = [float(rates.mean()), float(per_pow[eligible].mean()), float(per_at[eligible].mean())]
    accs = [0.0, 0.0, 0.0, 0.0]
    if method == "bca":
        accs = [stats._jackknife_acceleration(cols[:, j], wts[:, j]) for j in range(3)]
        accs.append(stats._jackknife_acceleration(per_at - rates, ew))
    out: list[Interval | None] = []
    for j in range(3):
        ok = j == 0 or eligible.sum() >= min_tasks
        out.append(stats.interval_from_distribution(dist[:, j], ests[j], level=level, method=method,
                                                    acceleration=accs[j]) if ok else None)
    head = None
    if eligible.sum() >= min_tasks:
        head = stats.interval_from_distribution(dist[:, 2] - dist[:, 0], ests[2] - ests[0], level=level,
                                                method=method, acceleration=accs[3])
    out.append(head)
    return out


# ------------------------------------------------------------------------------------------------
# run-to-run noise
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EvalVariance(ReportMapping):
    """Run-to-run noise of pass@1 on a fixed task set: the sd between re-runs and the band a delta must clear.

    ``run_sd`` is the sample sd (n-1) of the re-runs' pass@1 (None below 2 runs), with a chi-square interval.
    ``model_run_sd`` is the within-task prediction from one run, sqrt(mean_i s_i^2 / (K n)) with the unbiased
    per-task variance s_i^2 = c(K-c)/(K(K-1)) (Miller 2024 section 6); it needs K >= 2 rollouts per task.
    ``sd`` is ``run_sd`` when measured, else ``model_run_sd``.
    ``band(n_a, n_b)``: the largest |delta| between the mean of n_a runs and the mean of n_b runs that pure noise
    reaches with probability ``level``: t_{(1+level)/2, df} x sd x sqrt(1/n_a + 1/n_b), df = runs - 1 (the sd
    is estimated) or the normal quantile for the within-task model. ``noise_band`` is ``band(1, 1)``, the band
    for a delta between two single runs. A ``multiplier`` given by hand replaces the quantile x sqrt(...) by
    ``multiplier`` (the old flat rule, which at 2 x sd lets about one pure-noise delta in five through).
    """

    SDK_KEYS: ClassVar[dict[str, Any]] = {  # the SDK's eval_variance keys over ours
        "metric": lambda r: "pass_at_1", "means": lambda r: {f"run_{i}": m for i, m in enumerate(r.means, 1)},
        "run_std": "run_sd", "run_std_df": "df",
    }

    n_runs: int
    means: list[float]
    mean: float | None
    run_sd: float | None
    run_sd_ci: Interval | None
    model_run_sd: float | None
    multiplier: float | None  # None: the t rule
    n_tasks: int  # tasks graded in every run
    level: float
    note: str | None = None

    @property
    def df(self) -> int | None:
        """Degrees of freedom of the sd: runs - 1 when measured on re-runs, None (normal) for the model."""
        return self.n_runs - 1 if self.run_sd is not None else None

    def factor(self, n_a: int = 1, n_b: int = 1) -> float:
        """The band in units of sd: t quantile x sqrt(1/n_a + 1/n_b), or ``multiplier`` when given."""
        if self.multiplier is not None:
            return float(self.multiplier)
        q = (1 + self.level) / 2
        if self.df is None:
            quantile = stats.z_value(self.level)
        else:
            from scipy.stats import t as student_t

            quantile = float(student_t.ppf(q, self.df))
        return quantile * math.sqrt(1 / stats.check_int(n_a, "n_a", 1) + 1 / stats.check_int(n_b, "n_b", 1))

    def band(self, n_a: int = 1, n_b: int = 1) -> float | None:
        """Noise band for a delta between the mean of ``n_a`` runs and the mean of ``n_b`` runs."""
        return None if self.sd is None else self.factor(n_a, n_b) * self.sd

    def band_ci(self, n_a: int = 1, n_b: int = 1) -> Interval | None:
        """The band at the ends of the run sd's chi-square interval (None for the within-task model)."""
        if self.run_sd_ci is None:
            return None
        f = self.factor(n_a, n_b)
        return (f * self.run_sd_ci[0], f * self.run_sd_ci[1])

    def rule(self) -> str:
        if self.multiplier is not None:
            return f"{self.multiplier:g} x sd, flat rule"
        quantile = "normal quantile" if self.df is None else f"t quantile at df {self.df}"
        return f"{quantile} x sd x sqrt 2"

    @property
    def sd(self) -> float | None:
        return self.run_sd if self.run_sd is not None else self.model_run_sd

    @property
    def source(self) -> str | None:
        if self.run_sd is not None:
            return "reruns"
        return "within-task" if self.model_run_sd is not None else None

    @property
    def noise_band(self) -> float | None:
        return self.band(1, 1)

    @property
    def run_std(self) -> float | None:
        """The SDK's name for ``run_sd``: the sample sd of the re-runs' pass@1 (None below 2 runs)."""
        return self.run_sd

    @property
    def noise_band_ci(self) -> Interval | None:
        return self.band_ci(1, 1)

    @property
    def mean_ci(self) -> Interval | None:
        """t interval of the mean pass@1 over the re-runs (df = runs - 1), cut to [0, 1] (a pass rate cannot
        leave it, so the cut never lowers coverage); None below 2 runs."""
        if self.run_sd is None or self.mean is None:
            return None
        from scipy.stats import t as student_t

        half = float(student_t.ppf((1 + self.level) / 2, self.n_runs - 1)) * self.run_sd / math.sqrt(self.n_runs)
        return (max(0.0, self.mean - half), min(1.0, self.mean + half))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["run_sd_ci"] = _ci_list(self.run_sd_ci)
        d.update(sd=self.sd, source=self.source, noise_band=self.noise_band, noise_band_ci=_ci_list(self.noise_band_ci),
                 mean_ci=_ci_list(self.mean_ci), run_std=self.run_sd, noise_band_df=self.df)
        return d

    def __str__(self) -> str:
        if self.sd is None:
            body = "run-to-run sd n/a"
        elif self.run_sd is not None:
            body = f"run-to-run sd {_est(self.run_sd, self.run_sd_ci, 4)} ({self.n_runs} runs, {self.n_tasks} tasks)"
        else:
            body = (f"run-to-run sd {self.model_run_sd:.4f} (within-task model from 1 run of {self.n_tasks} tasks, "
                    f"no interval)")
        if self.noise_band is not None:
            band = _fmt_ci(self.noise_band_ci, 4) if self.noise_band_ci else " (no interval: model sd)"
            body += f"; noise band {self.noise_band:.4f}{band} ({self.rule()}): a delta under it is noise"
        if self.mean is not None:
            if self.n_runs >= 2:
                body = f"pass@1 mean {_est(self.mean, self.mean_ci, 3)} over {self.n_runs} runs | " + body
            else:
                body = f"pass@1 {self.mean:.3f} (1 run, no interval: pass_at gives one) | " + body
        return body + (f"; {self.note}" if self.note else "")


def _split_eval_runs(one: Any) -> tuple[Any, ...]:
    """One ``simulate(runs=N)`` result (or its rows) as its N runs, split on ``lineage.eval_run``; anything
    else is returned as the one run it is."""
    rows = getattr(one, "rows", one)
    if not isinstance(rows, (list, tuple)) or not rows or not all(isinstance(r, Mapping) for r in rows):
        return (one,)
    by_run: dict[int, list[Any]] = {}
    for r in rows:
        lineage = r.get("lineage")
        run = lineage.get("eval_run") if isinstance(lineage, Mapping) else None
        if run is None:
            return (one,)
        by_run.setdefault(int(run), []).append(r)
    return tuple(by_run[k] for k in sorted(by_run)) if len(by_run) > 1 else (one,)


def eval_variance(
    *positional: Any,
    runs: Any = None,
    level: float = CI_LEVEL,
    multiplier: float | None = None,
    min_reruns: int = MIN_RERUNS,
    dedupe: bool = False,
) -> EvalVariance:
    """Run-to-run noise band from re-runs of one eval: ``eval_variance(rows_run1, rows_run2, rows_run3)``.

    Each positional argument is one re-run's rows (row dicts, JSONL path, or an object with ``.rows``);
    ``runs=[rerun, ...]`` adds re-runs of the same eval (``eval_variance(before, runs=[again1, again2])``,
    or ``eval_variance(runs=[run1, run2, run3])``). The band is the t rule (see ``EvalVariance``) unless a
    flat ``multiplier`` is given.
    Each run's pass@1 is the mean per-task rate over the tasks graded in every run. Repeated rollouts within a
    run are an error unless ``dedupe=True``.

    Args:
        runs: more re-runs of the same eval, each a row source.
        level: the two-sided interval level. (``CI_LEVEL``)
        multiplier: a flat multiple of the run sd in place of the t rule.
        min_reruns: fewer runs than this draw a note. (``MIN_RERUNS``)
        dedupe: drop repeated rollouts instead of raising.

    Returns:
        an ``EvalVariance``: ``means``, ``run_sd`` with its interval, ``noise_band``, ``band(n_a, n_b)``; it
            prints one line.

    Raises:
        InvalidArgument: no runs, repeated rollouts without ``dedupe`` or an argument out of range (a
            ``ValueError``).

    Example:
        ```python
        noise = wai.eval_variance(run1, run2, run3)
        print(wai.delta_report(before, after, noise=noise))
        ```
    """
    runs = _gathered_runs(positional, runs)
    level = stats.check_level(level)
    if multiplier is not None and (isinstance(multiplier, bool) or not isinstance(multiplier, (int, float))
                                   or not multiplier > 0):
        raise InvalidArgument(f"multiplier= is a flat number of sds (> 0), or None for the t rule; got {multiplier!r}")
    min_reruns = stats.check_int(min_reruns, "min_reruns", 2)
    runs = _unwrapped_runs(runs)
    counts = [_one_run_counts(i, run, dedupe) for i, run in enumerate(runs)]
    shared = set(counts[0].keys)
    for tc in counts[1:]:
        shared &= set(tc.keys)
    notes = []
    if any(set(tc.keys) != shared for tc in counts):
        notes.append(f"runs do not cover the same tasks; measured on the {len(shared)} graded in every run")
    keys = [k for k in counts[0].keys if k in shared]
    if not keys:
        return EvalVariance(len(runs), [], None, None, None, None, multiplier, 0, level,
                            "; ".join(notes + ["no task is graded in every run"]))
    means, model_sd = _run_means(counts, keys)
    run_sd = run_sd_ci = None
    if len(runs) >= 2:
        run_sd = float(np.std(means, ddof=1))
        run_sd_ci = _sd_interval(run_sd, len(runs) - 1, level)
    notes.extend(_variance_notes(len(runs), min_reruns, model_sd, run_sd))
    return EvalVariance(len(runs), means, float(np.mean(means)), run_sd, run_sd_ci, model_sd, multiplier,
                        len(keys), level, "; ".join(notes) or None)


def _gathered_runs(positional: tuple[Any, ...], runs: Any) -> tuple[Any, ...]:
    """The positional re-runs and ``runs=``'s, as one tuple; one run that holds several (``eval_run``) split."""
    if runs is not None and (isinstance(runs, (str, bytes, Mapping)) or not isinstance(runs, (list, tuple))):
        raise InvalidArgumentType("runs= takes a list of re-runs, each one run's rows: eval_variance(runs=[run1, run2])")
    if runs is not None and runs and all(isinstance(item, Mapping) for item in runs):
        runs = [runs]  # runs= one re-run's rows
    gathered = tuple(positional) + tuple(runs or ())
    if not gathered:
        raise InvalidArgument("eval_variance() needs at least one run: eval_variance(rows_run1, rows_run2, ...)")
    return _split_eval_runs(gathered[0]) if len(gathered) == 1 else gathered


def _unwrapped_runs(runs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``eval_variance([run1, run2])``: a list of runs, not one run's rows; one empty run raises."""
    if len(runs) == 1 and isinstance(runs[0], (list, tuple)) and runs[0] and not any(
            isinstance(item, Mapping) for item in runs[0]):
        runs = tuple(runs[0])
    if len(runs) == 1 and isinstance(runs[0], (list, tuple)) and not runs[0]:
        raise InvalidArgument("eval_variance() got one empty run; pass each re-run's rows: eval_variance(run1, run2, ...)")
    return runs


def _one_run_counts(i: int, run: Any, dedupe: bool) -> TaskCounts:
    if isinstance(run, (str, bytes)) and not str(run).endswith(".jsonl") or isinstance(run, Mapping):
        raise InvalidArgumentType(f"runs[{i}]: each argument is one re-run's rows (a list of row dicts or a JSONL path)")
    return task_counts(run, name=f"runs[{i}]", dedupe=dedupe)


def _run_means(counts: list[TaskCounts], keys: list[str]) -> tuple[list[float], float | None]:
    """Each run's pass@1 over ``keys``, and the within-task model sd (None unless every task has 2+ rollouts)."""
    means, within = [], []
    for tc in counts:
        pos = {k: i for i, k in enumerate(tc.keys)}
        idx = np.array([pos[k] for k in keys])
        n, c = tc.n[idx], tc.c[idx]
        means.append(float(np.mean(c / n)))
        multi = n >= 2
        if multi.all():
            s2 = c * (n - c) / (n * (n - 1.0))
            within.append(float(np.sum(s2 / n)) / len(keys) ** 2)
    model_sd = math.sqrt(float(np.mean(within))) if len(within) == len(counts) else None
    return means, model_sd


def _variance_notes(n_runs: int, min_reruns: int, model_sd: float | None, run_sd: float | None) -> list[str]:
    notes = []
    if n_runs < min_reruns:
        if n_runs == 1:
            notes.append("1 run: the sd is the within-task model (Miller 2024); re-run the eval to measure it")
        else:
            notes.append(f"{n_runs} runs: two is a difference, not a distribution; {min_reruns} or more "
                         f"re-runs give a standard deviation worth reading")
    if model_sd is None and run_sd is None:
        notes.append("tasks need 2+ graded rollouts, or pass 2+ runs, for a noise estimate")
    return notes


# ------------------------------------------------------------------------------------------------
# paired delta
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DeltaReport(ReportMapping):
    """A paired change in pass@1 (after - before) over the tasks both sides graded.

    ``ci``: task-bootstrap interval of the delta; ``p_value``: paired sign-flip permutation test (exact when
    the non-zero per-task differences are few); ``se``: clustered standard error (each task one cluster).
    ``verdict``: "better" / "worse" only when the interval excludes 0, p <= alpha, and the change clears the
    noise band and ``min_effect``; otherwise "inconclusive" with ``reason``.
    """

    SDK_KEYS: ClassVar[dict[str, Any]] = {  # the SDK's delta_report keys over ours
        "ok": lambda r: r.verdict != "worse", "target_verdict": "verdict", "headline_verdict": "verdict",
        "target_delta": "delta", "target_ci95": "ci", "n_paired_tasks": "n_paired",
        "n_unpaired_tasks": lambda r: len(r.unpaired_before) + len(r.unpaired_after),
        "within_noise": lambda r: None if r.noise_band is None or r.delta is None else abs(r.delta) <= r.noise_band,
    }

    delta: float | None
    ci: Interval | None
    p_value: float | None
    n_paired: int
    before: float | None
    after: float | None
    before_ci: Interval | None
    after_ci: Interval | None
    se: float | None
    verdict: str
    reason: str | None
    unpaired_before: list[str]
    unpaired_after: list[str]
    level: float
    alpha: float
    p_exact: bool
    noise_band: float | None
    min_effect: float
    per_task: dict[str, float] = field(default_factory=dict)
    note: str | None = None
    noise_band_ci: Interval | None = None  # from the run sd's interval, when noise= came from re-runs
    sequential: Any = None  # a sequential.SequentialResult when delta_report(sequential=...) decided by rounds

    @property
    def better(self) -> bool:
        return self.verdict == "better"

    @property
    def worse(self) -> bool:
        return self.verdict == "worse"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("ci", "before_ci", "after_ci", "noise_band_ci"):
            d[key] = _ci_list(d[key])
        return d

    def __str__(self) -> str:
        head = self.verdict + (f" ({self.reason})" if self.reason else "")
        if self.delta is None:
            return f"{head}: pass@1 delta n/a (0 paired tasks" + (f"; {self.note})" if self.note else ")")
        p = "n/a" if self.p_value is None else (f"<{P_VALUE_PRINT_FLOOR:g}" if self.p_value < P_VALUE_PRINT_FLOOR else f"={self.p_value:.4g}")
        se = "n/a" if self.se is None else (f"{self.se:.3f}" if self.se >= 0.001 or self.se == 0 else f"{self.se:.1e}")
        line = (
            f"{head}: pass@1 {_est(self.before, self.before_ci, 3)} -> {_est(self.after, self.after_ci, 3)} | "
            f"delta {_est(self.delta, self.ci, 3, signed=True)} "
            f"p{p}{' (exact)' if self.p_exact else ''} se {se} ({self.n_paired} paired tasks, "
            f"{self.level:.0%} interval"
        )
        if self.noise_band is not None:
            band = _fmt_ci(self.noise_band_ci, 3) if self.noise_band_ci else " (no interval: sd given or modelled)"
            line += f", noise band {self.noise_band:.3f}{band}"
        if self.unpaired_before or self.unpaired_after:
            line += f"; {len(self.unpaired_before)} before-only and {len(self.unpaired_after)} after-only tasks left out"
        if self.note:
            line += f"; {self.note}"
        if self.sequential is not None:
            line += f"; {self.sequential}"
        return line + ")"


def _noise_sd(noise: Any) -> float | None:
    if noise is None:
        return None
    if isinstance(noise, (EvalVariance, RunVariance)):
        return noise.sd if isinstance(noise, EvalVariance) else noise.sd()
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not noise >= 0 or math.isnan(noise):
        raise InvalidArgument(f"noise= takes an eval_variance(...) result or a run-to-run sd >= 0; got {noise!r}")
    return float(noise)


def _refusal(ci: Interval | None, delta: float, p_value: float, *, n: int, min_tasks: int, band: float | None,
             min_effect: float, alpha: float) -> str | None:
    """Why delta_report refuses to call a direction (None when it calls one)."""
    if ci is None:
        return f"too few paired tasks ({n} < {min_tasks}) for an interval"
    if band is not None and abs(delta) < band:
        return f"inside noise: |delta| {abs(delta):.3f} < noise band {band:.3f}"
    if abs(delta) < min_effect:
        return f"|delta| {abs(delta):.3f} is below min_effect {min_effect:g}"
    excludes = ci[0] > 0 or ci[1] < 0
    significant = p_value <= alpha
    if not excludes and not significant:
        return f"interval covers 0 and p {p_value:.3g} > alpha {alpha:g}"
    if not excludes:
        return "interval covers 0 (the permutation test alone is below alpha)"
    if not significant:
        return f"p {p_value:.3g} > alpha {alpha:g} (the interval alone excludes 0)"
    return None


def _noise_from_run_std(noise: Any, run_std: Any, run_std_runs: Any, level: Any) -> Any:
    """The SDK's ``run_std=`` / ``run_std_runs=`` as this project's ``noise=``."""
    if run_std_runs is not None and run_std is None:
        raise InvalidArgument("run_std_runs= is the number of re-runs run_std= was measured on; pass run_std= too")
    if run_std is None:
        return noise
    if noise is not None:
        raise InvalidArgument("pass the run-to-run noise once: noise= (ours) or run_std= (the SDK's name), not both")
    sd = _noise_sd(run_std)
    if run_std_runs is None:
        return sd
    runs = stats.check_int(run_std_runs, "run_std_runs", 2)
    return EvalVariance(runs, [], None, sd, None, None, None, 0, stats.check_level(level))


def _noise_band(noise: Any, noise_multiplier: float | None, level: float, keys: list[str] | None = None
                ) -> tuple[float | None, Interval | None]:
    """delta_report's noise band for one run a side and its interval (None, None without ``noise``); a pooled
    baseline's ``RunVariance`` gives the band of the pooled runs against one run, over the paired ``keys``."""
    if isinstance(noise, RunVariance):
        if noise_multiplier is not None:
            return float(noise_multiplier) * noise.sd(keys), None
        return noise.band(keys, level=level), noise.band_ci(keys, level=level)
    sd = _noise_sd(noise)
    if sd is not None and not isinstance(noise, EvalVariance):
        noise = EvalVariance(1, [], None, None, None, sd, None, 0, level)  # a bare sd: df unknown, normal quantile
    if noise_multiplier is not None:
        if isinstance(noise_multiplier, bool) or not isinstance(noise_multiplier, (int, float)) \
                or not noise_multiplier > 0:
            raise InvalidArgument(f"noise_multiplier= is a flat number of sds (> 0); got {noise_multiplier!r}")
        noise = None if noise is None else replace(noise, multiplier=float(noise_multiplier))
    return (None, None) if noise is None else (noise.band(1, 1), noise.band_ci(1, 1))


def delta_report(
    before: Any,
    after: Any,
    *,
    level: float = CI_LEVEL,
    draws: int = BOOTSTRAP_DRAWS,
    permutations: int = PERMUTATIONS,
    seed: int | None = 0,
    alpha: float = ALPHA,
    noise: Any = None,
    min_effect: float = 0.0,
    method: str = "percentile",
    noise_multiplier: float | None = None,
    min_tasks: int = MIN_CI_TASKS,
    dedupe: bool = False,
    run_std: float | None = None,
    run_std_runs: int | None = None,
    sequential: Any = None,
) -> DeltaReport:
    """Paired change in pass@1 between two runs on the same tasks (alias ``compare``).

    Rows pair by ``rows.task_key``; each paired task contributes d_i = after rate - before rate. Tasks graded
    on one side only are listed in ``unpaired_before`` / ``unpaired_after`` and left out. ``noise``: a pooled
    baseline's ``History.noise`` (t on runs - 1 df x the runs' sd x sqrt(1/N_eff + 1), over the paired tasks), an
    ``eval_variance`` result (its band for one run a side, ``noise.band(1, 1)``: t quantile x run sd x sqrt 2)
    or a bare run-to-run sd (normal quantile x sd x sqrt 2, its df unknown); a |delta| under it is refused as
    "inside noise". ``noise_multiplier`` replaces the quantile x sqrt 2 by a flat multiplier. Repeated rollouts
    on either side are an error unless ``dedupe=True`` (dropped and counted in the note).
    ``run_std`` (the SDK's name) is a bare run-to-run sd, like ``noise=<number>``; with ``run_std_runs`` (the
    re-runs it was measured on, >= 2) its band uses the t quantile at df = runs - 1.

    ``sequential`` (a ``SequentialPlan`` or a round size): decide by rounds of ``rollout_index`` with
    ``measure.sequential`` (red side only, ``min_effect`` its max_drop); see ``_sequential_report``.

    Args:
        before: the first run's rows (row dicts, a JSONL path, or an object with ``.rows`` (``ScoredData``,
            ``SimulationData``)).
        after: the second run's rows, on the same tasks.
        level: the two-sided interval level. (``CI_LEVEL``)
        draws: bootstrap resamples of the paired tasks. (``BOOTSTRAP_DRAWS``)
        permutations: sign-flip permutations when the exact test is too large. (``PERMUTATIONS``)
        seed: the seed of the bootstrap and the permutations.
        alpha: the test's level for a ``better`` / ``worse`` verdict. (``ALPHA``)
        noise: an ``eval_variance`` result, a pooled baseline's ``History.noise`` (a ``RunVariance``: the band
            of the pooled runs against one run, over the paired tasks), or a run-to-run sd; a smaller |delta| is
            inconclusive.
        min_effect: the smallest |delta| that counts.
        method: the bootstrap interval: ``"percentile"``, ``"basic"`` or ``"BCa"``.
        noise_multiplier: a flat multiple of the run sd in place of the t quantile x sqrt 2.
        min_tasks: below this many paired tasks there is no interval. (``MIN_CI_TASKS``)
        dedupe: drop repeated rollouts instead of raising.
        run_std: the SDK's name for a bare run-to-run sd (``eval_variance(...).run_std``), used as ``noise=``;
            pass it or ``noise``, not both (default None: no noise band).
        run_std_runs: the re-runs (>= 2) ``run_std`` was measured on: its band then uses the t quantile at
            df = runs - 1 instead of the normal quantile; needs ``run_std`` (default None).
        sequential: a ``SequentialPlan`` or a round size: decide by rounds of ``rollout_index``
            (``measure.sequential``); None: the fixed design.

    Returns:
        a ``DeltaReport``: ``delta``, ``ci``, ``p_value``, ``se``, ``n_paired``, ``verdict`` and ``reason``; it
            prints one line.

    Raises:
        InvalidArgument: repeated rollouts without ``dedupe`` or an argument out of range (a ``ValueError``);
            both ``noise`` and ``run_std``, or ``run_std_runs`` without ``run_std``.
        NonFiniteReward: a NaN reward (a ``ValueError``).

    Example:
        ```python
        print(wai.delta_report(before_rows, after_rows))
        # better: pass@1 0.529 [...] -> 0.692 [...] | delta +0.163 [+0.083..+0.237] p=0.0002 (exact) ...
        ```
    """
    if sequential is not None:
        fixed = {k: v for k, v in locals().items() if k not in ("before", "after", "sequential")}
        return _sequential_report(delta_report(before, after, **fixed), before, after, sequential, dedupe=dedupe)
    noise = _noise_from_run_std(noise, run_std, run_std_runs, level)
    level = stats.check_level(level)
    alpha = stats.check_prob(alpha, "alpha")
    draws = stats.check_int(draws, "draws", 1)
    permutations = stats.check_int(permutations, "permutations", 1)
    method = stats.check_method(method)
    min_tasks = stats.check_int(min_tasks, "min_tasks", 1)
    seed = _check_seed(seed)
    if isinstance(min_effect, bool) or not isinstance(min_effect, (int, float)) or not min_effect >= 0:
        raise InvalidArgument(f"min_effect= must be a change in pass rate >= 0 (0.05 = 5 points); got {min_effect!r}")
    band, band_ci = _noise_band(noise, noise_multiplier, level)  # checks noise= before the rows are read
    b, a = task_counts(before, name="before", dedupe=dedupe), task_counts(after, name="after", dedupe=dedupe)
    a_pos = {k: i for i, k in enumerate(a.keys)}
    b_set = set(b.keys)
    paired = [k for k in b.keys if k in a_pos]
    unpaired_before = [k for k in b.keys if k not in a_pos]
    unpaired_after = [k for k in a.keys if k not in b_set]
    if isinstance(noise, RunVariance) and paired:
        band, band_ci = _noise_band(noise, noise_multiplier, level, paired)
    notes = _pairing_notes(b, a, len(paired), len(unpaired_before) + len(unpaired_after))
    common: dict[str, Any] = {"unpaired_before": unpaired_before, "unpaired_after": unpaired_after,
                              "level": level, "alpha": alpha, "noise_band": band, "min_effect": float(min_effect),
                              "noise_band_ci": band_ci}
    if not paired:
        return DeltaReport(None, None, None, 0, None, None, None, None, None, "inconclusive", "no paired tasks",
                           p_exact=False, note="; ".join(notes) or None, **common)
    b_pos = {k: i for i, k in enumerate(b.keys)}
    bi = np.array([b_pos[k] for k in paired])
    ai = np.array([a_pos[k] for k in paired])
    rb = b.c[bi] / b.n[bi]
    ra = a.c[ai] / a.n[ai]
    d = ra - rb
    n = len(paired)
    delta = float(d.mean())
    test = stats.paired_permutation_test(d, permutations=permutations, seed=seed)
    se = stats.mean_se(d)
    ci = b_ci = a_ci = None
    if n >= min_tasks:
        ci, b_ci, a_ci = _delta_intervals(d, rb, ra, level=level, draws=draws, seed=seed, method=method,
                                          min_tasks=min_tasks)
    if np.any(a.n[ai] != b.n[bi]):
        notes.append("rollouts per task differ between sides; each side uses its own per-task rate")
    reason = _refusal(ci, delta, test.p_value, n=n, min_tasks=min_tasks, band=band, min_effect=min_effect,
                      alpha=alpha)
    verdict = "inconclusive" if reason else ("better" if delta > 0 else "worse")
    per_task = {k: float(x) for k, x in zip(paired, d)}
    return DeltaReport(delta, ci, test.p_value, n, float(rb.mean()), float(ra.mean()), b_ci, a_ci, se, verdict,
                       reason, p_exact=test.exact, per_task=per_task, note="; ".join(notes) or None, **common)


def _pairing_notes(b: TaskCounts, a: TaskCounts, n_paired: int, n_unpaired: int) -> list[str]:
    """What the pairing left out: each side's skipped rows, and a warning when most tasks are unpaired."""
    notes = []
    for side, tc in (("before", b), ("after", a)):
        if tc.skipped_note():
            notes.append(f"{side}: {tc.skipped_note()}")
    if n_unpaired and n_paired / max(1, n_paired + n_unpaired) < 0.5:
        notes.append("most tasks unpaired: the two runs barely share situations")
    return notes


def _delta_intervals(d: Any, rb: Any, ra: Any, *, level: float, draws: int, seed: int | None, method: str,
                     min_tasks: int) -> tuple[Any, Any, Any]:
    """The delta's task-bootstrap interval, then each side's pass@1 interval on its own, as pass_at draws it: the
    same rows print the same interval (drawn jointly with the differences, A's pass@1 read [0.525..0.675] here
    and [0.525..0.669] in pass_at)."""
    ci = stats.bootstrap_mean_ci(np.stack([d, rb, ra], axis=1), level=level, draws=draws, seed=seed,
                                 method=method, min_n=min_tasks)[0]
    b_ci, a_ci = (stats.bootstrap_mean_ci(r, level=level, draws=draws, seed=seed, method=method,
                                          min_n=min_tasks) for r in (rb, ra))
    return ci, b_ci, a_ci


def _rollout_indices(rows: list[Any], plan: Any) -> list[int]:
    """Each after row's ``rollout_index``, checked against the plan: present, a whole number, 0-based and inside
    0..max_trials-1. A row the rounds cannot place is an error naming it, never dropped or put in round 1."""
    import numbers

    index = []
    for i, row in enumerate(rows):
        value = row.get("rollout_index")
        where = f"after[{i}] (task {task_key(row)!r})"
        if value is None:
            raise InvalidArgument(f"{where} has no rollout_index; sequential= cuts the after rows into rounds by it "
                                  "(the 0-based trial index simulate writes): add it, or drop sequential=")
        whole = cast(SupportsInt, value)  # a concrete Real has __int__ (typeshed's numbers.Real omits it)
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != int(whole):
            raise InvalidArgument(f"{where} has rollout_index {value!r}; it is a whole number, the 0-based trial index")
        index.append(int(whole))
    top = plan.max_trials - 1
    bad = [(i, x) for i, x in enumerate(index) if not 0 <= x <= top]
    if bad:
        i, x = bad[0]
        one_based = min(index) >= 1 and max(index) == plan.max_trials
        hint = ("; the indices run 1..max_trials, so they look 1-based: subtract 1 (the first trial is 0)" if one_based
                else f"; a plan of max_trials={plan.max_trials} has no trial {x}")
        raise InvalidArgument(f"after[{i}] (task {task_key(rows[i])!r}) has rollout_index {x}, outside the plan's "
                              f"0..{top} ({len(bad)} row(s) outside){hint}")
    return index


def _sequential_report(rep: DeltaReport, before: Any, after: Any, plan: Any, *, dedupe: bool) -> DeltaReport:
    """``rep`` with its verdict decided by the sequential rule over rounds of the after rows' rollout_index: an
    int plan is the round size, up to the most rows a task has after. Every after row needs a 0-based
    rollout_index inside the plan (``_rollout_indices``). "worse" when it stops red, else
    "inconclusive" with its reason; ``rep.sequential`` says the round it stopped at and why."""
    b = task_counts(before, name="before", dedupe=dedupe)
    rows = as_rows(after, name="after")
    a = task_counts(rows, name="after", dedupe=dedupe)
    if isinstance(plan, int) and not isinstance(plan, bool):
        plan = sequential_design.SequentialPlan(plan, max(max(a.rows_per_task.values(), default=1), plan))
    if not isinstance(plan, sequential_design.SequentialPlan):
        raise InvalidArgument(f"sequential= takes a SequentialPlan or a round size (int >= 1); got {plan!r}")
    before_counts = {k: (int(c), int(n)) for k, c, n in zip(b.keys, b.c, b.n)}
    index = _rollout_indices(rows, plan)
    last = min(plan.rounds, max(index, default=0) // plan.round_trials + 1)
    rounds = []
    for r in range(last):
        upto = (r + 1) * plan.round_trials
        tc = task_counts([row for row, i in zip(rows, index) if i < upto], name="after", dedupe=dedupe)
        rounds.append({k: (int(c), int(n)) for k, c, n in zip(tc.keys, tc.c, tc.n)})
    seq = sequential_design.sequential_test(before_counts, rounds, plan=plan, alpha=rep.alpha, max_drop=rep.min_effect)
    verdict = "worse" if seq.red else "inconclusive"
    reason = None if seq.red else f"sequential: {seq.decision} after round {seq.round} of {seq.rounds}: {seq.reason}"
    return replace(rep, verdict=verdict, reason=reason, sequential=seq)


compare = delta_report


# ------------------------------------------------------------------------------------------------
# holdout size (power)
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
    plan = power_sim.plan_tasks(
        float(effect), variance, base=float(base), k=k if source == "model" else None, omega2=float(omega2),
        alpha=alpha, power=power, level=level, runs=sim_runs, confidence=sim_confidence,
        max_lattice=sim_max_lattice, seed=stats.check_int(seed, "seed", 0), draws=stats.check_int(draws, "draws", 1),
        min_tasks=MIN_CI_TASKS)
    return HoldoutSize(plan.n_tasks, float(effect), float(base), k, power, alpha, variance, source, float(omega2),
                       n_paired, note, plan.method, plan.hits, plan.runs, sd_ci)
