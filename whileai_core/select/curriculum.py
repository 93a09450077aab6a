"""Curriculum: order tasks into tiers by pass rate, retire the solved ones, hold back the hopeless ones.

Tasks whose pass rate sits inside [floor, solved] are where a group-relative trainer gets gradient (DAPO,
Yu et al. 2025: all-pass and all-fail groups give zero advantage); they are sorted easy to hard and split
into equal-count tiers. Each task's pass rate is printed with its Wilson interval and n, because with a
handful of rollouts the tier a task lands in is itself an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from whileai_core.arguments import integer
from whileai_core.defaults import (
    CI_LEVEL,
    CURRICULUM_FIRM_ROLLOUTS,
    CURRICULUM_FLOOR,
    CURRICULUM_MIN_ROLLOUTS,
    CURRICULUM_SOLVED,
    CURRICULUM_TIERS,
)
from whileai_core.errors import InvalidArgument
from whileai_core.measure.stats import wilson_interval
from whileai_core.numbers import interval
from whileai_core.rowlist import RowList
from whileai_core.rows import ReportMapping, as_rows, reward_of, task_key

__all__ = ["Curriculum", "curriculum", "retire_solved"]


_reward = reward_of


@dataclass
class Curriculum(ReportMapping):
    """Tasks by status (``trainable``, ``retired``, ``not_ready``, ``thin``) and ``tiers`` of trainable task ids."""

    tasks: dict[str, dict[str, Any]]
    trainable: list[str]
    retired: list[str]
    not_ready: list[str]
    thin: list[str]
    tiers: list[list[str]]
    thresholds: dict[str, Any]
    level: float = CI_LEVEL
    notes: list[str] = field(default_factory=list)

    @property
    def schedule(self) -> list[str]:
        """Trainable task ids in training order (easy to hard)."""
        return [t for tier in self.tiers for t in tier]

    def __str__(self) -> str:
        lines = [(f"curriculum: tasks {len(self.tasks)}  trainable {len(self.trainable)}  "
                  f"retired {len(self.retired)}  not ready {len(self.not_ready)}  thin {len(self.thin)}")]
        for i, tier in enumerate(self.tiers, 1):
            if not tier:
                continue
            first, last = self.tasks[tier[0]], self.tasks[tier[-1]]
            lines.append(f"  tier {i}: {len(tier)} tasks, pass {first['pass_rate']:.2f} "
                         f"({round(self.level * 100)}% CI {interval(first['ci'], brackets=False)}, "
                         f"n={first['n']}) -> {last['pass_rate']:.2f} "
                         f"(CI {interval(last['ci'], brackets=False)}, n={last['n']})")
        lines.extend(f"  ! {n}" for n in self.notes)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"n_tasks": len(self.tasks), "n_trainable": len(self.trainable), "n_solved": len(self.retired),
                "n_not_ready": len(self.not_ready), "n_thin": len(self.thin), "thresholds": dict(self.thresholds),
                "schedule": self.schedule, "trainable": list(self.trainable), "retired": list(self.retired),
                "not_ready": list(self.not_ready), "thin": list(self.thin), "tiers": [list(t) for t in self.tiers],
                "tasks": {k: dict(v) for k, v in self.tasks.items()}, "notes": list(self.notes)}


def curriculum(
    rows: Any,
    *,
    solved: float = CURRICULUM_SOLVED,
    floor: float = CURRICULUM_FLOOR,
    tiers: int = CURRICULUM_TIERS,
    min_rollouts: int = CURRICULUM_MIN_ROLLOUTS,
    level: float = CI_LEVEL,
    firm_rollouts: int = CURRICULUM_FIRM_ROLLOUTS,
) -> Curriculum:
    """Classify tasks by pass rate: ``thin`` (fewer than ``min_rollouts`` graded rollouts), ``retired``
    (pass rate > ``solved``), ``not_ready`` (< ``floor``) and ``trainable`` (in between, inclusive), the last
    sorted easy to hard (pass rate descending, then id) and split into ``tiers`` equal-count tiers.

    The pass rate is the mean reward (the pass rate for 0/1 rewards); rows without a numeric reward are skipped.

    Args:
        rows: graded rows: row dicts, a JSONL path, or an object with ``.rows``.
        solved: tasks above this pass rate are retired (``CURRICULUM_SOLVED``). (``CURRICULUM_SOLVED``)
        floor: tasks below this pass rate are not ready (``CURRICULUM_FLOOR``). (``CURRICULUM_FLOOR``)
        tiers: equal-count tiers of the trainable tasks, easy to hard. (``CURRICULUM_TIERS``)
        min_rollouts: tasks with fewer graded rollouts are ``thin``. (``CURRICULUM_MIN_ROLLOUTS``)
        level: the interval level of each task's pass rate (``CI_LEVEL``). (``CI_LEVEL``)
        firm_rollouts: fewer rollouts per task draw a warning that the classes are uncertain.
            (``CURRICULUM_FIRM_ROLLOUTS``)

    Returns:
        A ``Curriculum`` with the tasks of each class and the tiers; it prints itself.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix.

    Example:
        ```python
        plan = wai.curriculum(scored)
        print(plan)
        ```
    """
    for name, v in (("solved", solved), ("floor", floor)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise InvalidArgument(f"{name}= must be a pass rate in [0, 1]; got {v!r}")
    if floor > solved:
        raise InvalidArgument(f"floor= ({floor}) must be <= solved= ({solved})")
    tiers = integer("tiers", tiers, minimum=1)
    min_rollouts = integer("min_rollouts", min_rollouts, minimum=1)
    data = as_rows(rows, name="rows")
    rewards: dict[str, list[float]] = {}
    for row in data:
        r = _reward(row)
        if r is not None:
            rewards.setdefault(task_key(row), []).append(r)
    tasks: dict[str, dict[str, Any]] = {}
    trainable: list[str] = []
    retired: list[str] = []
    not_ready: list[str] = []
    thin: list[str] = []
    fractional = False
    for tid, rs in rewards.items():
        n = len(rs)
        p = float(np.mean(rs))
        binary = all(r in (0.0, 1.0) for r in rs)
        fractional |= not binary
        ci = wilson_interval(round(p * n), n, level=level) if binary else None
        if ci is None:
            ci = (p, p)
        status = ("thin" if n < min_rollouts else "retired" if p > solved else "not_ready" if p < floor
                  else "trainable")
        tasks[tid] = {"n": n, "pass_rate": p, "ci": [round(ci[0], 6), round(ci[1], 6)], "status": status}
        {"thin": thin, "retired": retired, "not_ready": not_ready, "trainable": trainable}[status].append(tid)
    trainable.sort(key=lambda t: (-tasks[t]["pass_rate"], t))
    # equal-count tiers, the first ones one task larger when the count does not divide (as np.array_split)
    base, extra = divmod(len(trainable), tiers)
    split: list[list[str]] = []
    start = 0
    for i in range(tiers):
        size = base + (1 if i < extra else 0)
        split.append(trainable[start:start + size])
        start += size
    for i, tier in enumerate(split, 1):
        for t in tier:
            tasks[t]["tier"] = i
    notes = []
    if fractional:
        notes.append("some rewards are fractional: the pass rate is the mean reward and no interval is given there")
    ns = [v["n"] for v in tasks.values()]
    if ns and float(np.median(ns)) < firm_rollouts:
        notes.append(f"median {int(np.median(ns))} rollouts per task: a task's tier is uncertain (see the intervals); "
                     "raise repeats= for firmer tiers")
    return Curriculum(tasks=tasks, trainable=trainable, retired=retired, not_ready=not_ready, thin=thin, tiers=split,
                      thresholds={"solved": solved, "floor": floor, "tiers": tiers, "min_rollouts": min_rollouts},
                      level=level, notes=notes)


def retire_solved(rows: Any, *, solved: float = CURRICULUM_SOLVED,
                  min_rollouts: int = CURRICULUM_MIN_ROLLOUTS) -> RowList:
    """The rows minus those of solved tasks (pass rate > ``solved`` over at least ``min_rollouts`` rollouts).

    The SDK's ``retire_solved``: ``curriculum``'s ``retired`` class with no floor. Rows of thin tasks (fewer
    graded rollouts than ``min_rollouts``) and rows without a numeric reward are kept.

    Args:
        rows: graded rows: row dicts, a JSONL path, or an object with ``.rows``.
        solved: tasks above this pass rate (the mean reward) are retired (default ``defaults.CURRICULUM_SOLVED``
            = 0.8, the whileai SDK's and the DAPO band's upper edge).
        min_rollouts: tasks with fewer graded rollouts are never retired (default
            ``defaults.CURRICULUM_MIN_ROLLOUTS`` = 2).

    Returns:
        RowList: the rows kept, in their original order.

    Raises:
        InvalidArgument: ``solved`` outside [0, 1] or ``min_rollouts`` not an int >= 1 (a ``ValueError``).
        InvalidArgumentType: ``rows`` that are not rows (a single dict, a non-iterable, a non-dict row; a
            ``TypeError``).

    Example:
        ```python
        rows = [{"task_id": "easy", "reward": 1}] * 4 + [{"task_id": "hard", "reward": r} for r in (0, 1, 0, 0)]
        kept = wai.retire_solved(rows)   # the 4 rows of "hard"; "easy" (pass rate 1.0 > 0.8) is retired
        ```
    """
    data = as_rows(rows, name="rows")
    plan = curriculum(data, solved=solved, floor=0.0, min_rollouts=min_rollouts)
    gone = set(plan.retired)
    return RowList([r for r in data if task_key(r) not in gone])
