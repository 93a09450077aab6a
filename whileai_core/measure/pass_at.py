"""pass@1 / pass^k / pass@k on rows, with task-bootstrap intervals, and how an estimate with its interval prints
(the helpers ``between_runs``, ``delta`` and ``power`` share).

Rows are grouped by ``rows.task_key`` (``measure.columns.task_counts``); only rewards exactly 0 or 1 count
(bools excluded). ``None`` and partial rewards are skipped and counted in the note; a NaN reward is an error (a
failed judge should write None). Every interval is a bootstrap over tasks: rollouts of one task are not
independent (Miller 2024). The array-level work lives in ``whileai_core.measure.stats``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from whileai_core.defaults import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_RELIABLE_TASKS,
    CI_LEVEL,
    MIN_CI_TASKS,
    PASS_K_INTERVAL,
    ROLLOUTS_PER_TASK,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.measure import stats
from whileai_core.measure import stats as st  # inside functions that take a stats= option
from whileai_core.measure.columns import RowColumns, TaskCounts, task_counts
from whileai_core.numbers import interval, number
from whileai_core.options import Stats, with_stats

Interval = tuple[float, float]


def _fmt_ci(ci: Interval | None, digits: int = 2, signed: bool = False) -> str:
    return "" if ci is None else " " + interval(ci, digits, signed=signed)


def _est(x: float | None, ci: Interval | None, digits: int = 2, signed: bool = False) -> str:
    """An estimate as printed: ``n/a``, ``0.64 [0.57..0.72]``, or ``0.64 (no interval)`` (the note says why)."""
    if x is None:
        return "n/a"
    return number(x, digits, signed=signed) + (_fmt_ci(ci, digits, signed) if ci is not None else " (no interval)")


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
    stats: Stats | None = None,
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
        stats: a ``wai.Stats`` holding ``level``, ``draws`` and ``seed`` together (its ``alpha`` is not used
            here); a keyword set beside it to another value is an error naming both.

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
    if stats is not None:  # one wai.Stats for level/draws/seed (and alpha): a keyword beside it must agree
        given = with_stats(stats, {"level": level, "draws": draws, "seed": seed},
                           {"level": CI_LEVEL, "draws": BOOTSTRAP_DRAWS, "seed": 0}, where="pass_at")
        level, draws, seed = given["level"], given["draws"], given["seed"]
    if not isinstance(unanimous_short, bool):
        raise InvalidArgumentType(f"unanimous_short= must be True or False; got {unanimous_short!r}")
    k_given = k is not None
    if k is not None:
        k = st.check_int(k, "k", 1)
    level = st.check_level(level)
    draws = st.check_int(draws, "draws", 1)
    method = st.check_method(method)
    min_k = st.check_int(min_k, "min_k", 1)
    min_tasks = st.check_int(min_tasks, "min_tasks", 1)
    reliable_tasks = st.check_int(reliable_tasks, "reliable_tasks", 1)
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
    cells = n * (int(c.max()) + 1) + c  # each task's (n, c): its rate, pass^k and pass@k follow from it
    ci1, cik, ciak, cih = _pass_cis(rates, per_pow, per_at, eligible, k, ppk=ppk, pak=pak, level=level,
                                    draws=draws, seed=seed, method=method, min_tasks=min_tasks,
                                    reliable_tasks=reliable_tasks, k_interval=k_interval, notes=notes, cells=cells)
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
              reliable_tasks: int, k_interval: str, notes: list[str], cells: np.ndarray | None = None
              ) -> tuple[Any, Any, Any, Any]:
    """The pass@1, pass^k, pass@k and headroom intervals (appending what limits them to ``notes``); ``cells``:
    one int per task, equal for tasks of equal (n, c) (groups the bootstrap's tasks without a sort)."""
    n_tasks, n_at_k = len(rates), int(eligible.sum())
    ci1 = cik = ciak = cih = None
    if n_tasks < min_tasks:
        notes.append(
            f"no bootstrap interval: {n_tasks} task(s), and a bootstrap needs {min_tasks}; it resamples tasks, so "
            f"run more tasks, or give each row its own task_id when the rows are separate items"
        )
    else:
        # pass@1 alone, as delta_report reads each side: the same rows print the same interval (exact where the
        # rates lie on a lattice); pass^k, pass@k and the headroom come from one set of resampled task sets
        ci1 = stats.bootstrap_mean_ci(rates, level=level, draws=draws, seed=seed, method=method, min_n=min_tasks)
        if ppk is not None:
            _, cik, ciak, cih = _pass_intervals(rates, per_pow, per_at, eligible, level=level, draws=draws,
                                                  seed=seed, method=method, min_tasks=min_tasks, cells=cells)
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
    cells: np.ndarray | None = None,
) -> list[Interval | None]:
    """pass@1, pass^k, pass@k and headroom intervals from one set of resampled task sets (``cells``: the tasks'
    (n, c) codes, ``bootstrap_means(tasks=)``)."""
    ew = eligible.astype(float)
    cols = np.stack([rates, per_pow, per_at], axis=1)
    wts = np.stack([np.ones(len(rates)), ew, ew], axis=1)
    dist = stats.bootstrap_means(cols, wts, draws=draws, seed=seed, tasks=cells)
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
