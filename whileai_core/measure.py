"""Measurement on rows: pass@1 / pass^k / pass@k with task-bootstrap intervals, paired deltas, noise, power.

Rows are grouped by ``rows.task_key``; only rewards exactly 0 or 1 count (bools excluded). ``None`` and
partial rewards are skipped and counted in the note; a NaN reward is an error (a failed judge should write
None). Every interval is a bootstrap over tasks: rollouts of one task are not independent (Miller 2024).
The array-level work lives in ``whileai_core.stats``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from whileai_core import stats
from whileai_core.defaults import (
    ALPHA,
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    HOLDOUT_BASE,
    HOLDOUT_BETWEEN_VAR,
    MIN_CI_TASKS,
    MIN_RERUNS,
    NOISE_SD_MULTIPLIER,
    PERMUTATIONS,
    POWER,
    ROLLOUTS_PER_TASK,
)
from whileai_core.rows import as_rows, task_key

Interval = tuple[float, float]


# ------------------------------------------------------------------------------------------------
# rows -> per-task pass counts
# ------------------------------------------------------------------------------------------------
@dataclass
class TaskCounts:
    """Per-task graded rollouts ``n`` and passes ``c`` (tasks with >= 1 binary reward), plus what was skipped."""

    keys: list[str]
    n: np.ndarray
    c: np.ndarray
    n_rows: int  # rows with a binary reward
    n_total: int  # rows seen
    n_none: int  # reward None / missing
    n_partial: int  # a number strictly between 0 and 1, or another non-binary value
    n_bool: int  # a bool reward (excluded: True/False is not a graded 0/1)
    first_error: str | None = None

    @property
    def rates(self) -> np.ndarray:
        return self.c / self.n

    def skipped_note(self) -> str | None:
        parts = []
        if self.n_none:
            parts.append(f"{self.n_none} ungraded (reward None)")
        if self.n_partial:
            parts.append(f"{self.n_partial} partial/non-binary")
        if self.n_bool:
            parts.append(f"{self.n_bool} bool")
        if not parts:
            return None
        return f"skipped {' + '.join(parts)} of {self.n_total} rows; only rewards exactly 0 or 1 count"


def task_counts(rows: Any, *, name: str = "rows") -> TaskCounts:
    """Group rows by task key and count graded rollouts and passes per task."""
    data = as_rows(rows, name=name)
    order: dict[str, int] = {}
    n_list: list[int] = []
    c_list: list[int] = []
    n_none = n_partial = n_bool = 0
    first_error = None
    for i, row in enumerate(data):
        r = row.get("reward")
        if r is None:
            n_none += 1
            if first_error is None and row.get("judge_status") not in (None, "ok"):
                first_error = str(row.get("reason") or row.get("judge_status"))[:120]
            continue
        if isinstance(r, bool):
            n_bool += 1
            continue
        if isinstance(r, (int, float, np.integer, np.floating)):
            if isinstance(r, (float, np.floating)) and math.isnan(r):
                raise ValueError(
                    f"{name}[{i}] (task {task_key(row)!r}) has reward NaN; a judge that failed should write "
                    f"reward None (skipped and counted), a graded row 0 or 1; fix the judge or drop the row"
                )
            if r == 0 or r == 1:
                key = task_key(row)
                j = order.setdefault(key, len(order))
                if j == len(n_list):
                    n_list.append(0)
                    c_list.append(0)
                n_list[j] += 1
                c_list[j] += int(r == 1)
                continue
        n_partial += 1
    n = np.asarray(n_list, dtype=np.int64)
    c = np.asarray(c_list, dtype=np.int64)
    return TaskCounts(list(order), n, c, int(n.sum()), len(data), n_none, n_partial, n_bool, first_error)


def _fmt(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _fmt_ci(ci: Interval | None, digits: int = 2, signed: bool = False) -> str:
    if ci is None:
        return ""
    f = "+." if signed else "."
    return f" [{ci[0]:{f}{digits}f}..{ci[1]:{f}{digits}f}]"


def _ci_list(ci: Interval | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


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
        line = (
            f"pass@1 {_fmt(self.pass_at_1)}{_fmt_ci(self.ci95)} | "
            f"pass^{k} (pass_pow_k) {_fmt(self.pass_pow_k)}{_fmt_ci(self.pass_pow_k_ci95)} | "
            f"pass@{k} {_fmt(self.pass_at_k)}{_fmt_ci(self.pass_at_k_ci95)} | "
            f"headroom {_fmt(self.headroom)} ({self.n_groups} groups, k={k if self.k is not None else 'n/a'}"
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
) -> PassAt:
    """pass@1, pass^k (tau-bench) and pass@k (Chen et al. 2021) over tasks, with bootstrap-over-tasks intervals.

    ``rows``: row dicts, a JSONL path, or an object with ``.rows`` (ScoredData). ``k`` defaults to the smallest
    group size among tasks with two or more graded rollouts. Tasks with fewer than k graded rollouts are left
    out of pass^k / pass@k and counted (``n_excluded``); pass@1 is the mean per-task rate over all tasks.
    Below ``min_k`` pass^k and pass@k are not reported. ``method``: "percentile" (default), "basic", "BCa".
    """
    if k is not None:
        k = stats.check_int(k, "k", 1)
    level = stats.check_level(level)
    draws = stats.check_int(draws, "draws", 1)
    method = stats.check_method(method)
    min_k = stats.check_int(min_k, "min_k", 1)
    min_tasks = stats.check_int(min_tasks, "min_tasks", 1)
    seed = _check_seed(seed)
    tc = task_counts(rows)
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
    multi = n[n >= 2]
    if k is None:
        k = int(multi.min()) if multi.size else 1
    lo_n, hi_n = int(n.min()), int(n.max())
    rates = c / n
    eligible = n >= k
    n_at_k = int(eligible.sum())
    n_excluded = n_tasks - n_at_k
    p1 = float(rates.mean())
    ppk = pak = None
    if k < min_k:
        notes.append(f"set repeats>={min_k} for pass^k and pass@k (k={k}; or pass min_k={k})")
    elif n_at_k == 0:
        notes.append(f"no task has k={k} graded rollouts (largest has {hi_n}); lower k or finish the groups")
    else:
        per_pow = np.zeros(n_tasks)
        per_at = np.zeros(n_tasks)
        per_pow[eligible] = stats.pass_pow_k(n[eligible], c[eligible], k)
        per_at[eligible] = stats.pass_at_k(n[eligible], c[eligible], k)
        ppk = float(per_pow[eligible].mean())
        pak = float(per_at[eligible].mean())
        if n_excluded:
            notes.append(f"{n_excluded} task(s) with fewer than k={k} graded rollouts left out of pass^{k} and pass@{k}")
        elif lo_n != hi_n:
            notes.append(f"groups are uneven ({lo_n} to {hi_n} graded rollouts); each task uses its own n")
    ci1 = cik = ciak = cih = None
    if n_tasks < min_tasks:
        notes.append(
            f"no interval on pass@1: {n_tasks} task(s), and a bootstrap needs {min_tasks}; it resamples tasks, so "
            f"run more tasks, or give each row its own task_id when the rows are separate items"
        )
    else:
        if ppk is None:
            ci1 = stats.bootstrap_mean_ci(rates, level=level, draws=draws, seed=seed, method=method, min_n=min_tasks)
        else:
            ci1, cik, ciak, cih = _pass_intervals(rates, per_pow, per_at, eligible, level=level, draws=draws,
                                                  seed=seed, method=method, min_tasks=min_tasks)
            if cik is None:
                notes.append(f"no interval on pass^{k} / pass@{k}: {n_at_k} task(s) reached k={k}, "
                             f"a bootstrap needs {min_tasks}")
    if skipped:
        notes.append(skipped)
    per_task = {key: float(r) for key, r in zip(tc.keys, rates)}
    return PassAt(k, p1, ppk, pak, ci1, cik, ciak, cih, n_tasks, tc.n_rows, n_at_k, n_excluded, n_skipped,
                  per_task, level, method, draws, "; ".join(notes) or None)


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
