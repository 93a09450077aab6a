"""Rounds of training: carry a selection into the next round (``next_round``, ``select(prior=)``) and read how
much group signal a set of rollouts holds (``group_signal``).

Between rounds a policy solves some tasks and still fails others. A task whose pass rate in the previous
round (``prior``) lies outside the band gives no GRPO gradient next round either, so it is dropped before
sampling; ``prompt_set_sha`` names the task set a round trained on.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument
from whileai_core.rows import as_rows, binary_reward, group_rows, task_key


def _band(lo: Any, hi: Any) -> tuple[float, float]:
    if any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in (lo, hi)) or not 0 <= lo <= hi <= 1:
        raise InvalidArgument(f"lo= and hi= are pass rates with 0 <= lo <= hi <= 1; got lo={lo!r}, hi={hi!r}")
    return float(lo), float(hi)


def prior_rates(prior: Any) -> dict[str, tuple[float, int]]:
    """Per task of the previous round: (pass rate over its 0/1 rewards, rollouts counted)."""
    out: dict[str, tuple[float, int]] = {}
    for key, members in group_rows(as_rows(prior, name="prior")).items():
        votes = [v for m in members if (v := binary_reward(m)) is not None]
        if votes:
            out[key] = (math.fsum(votes) / len(votes), len(votes))
    return out


def apply_prior(rows: list[dict[str, Any]], prior: Any, lo: float, hi: float
                ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Drop the rows of tasks whose pass rate in the previous round (``prior``) lies outside [lo, hi]."""
    nr = next_round(prior, [task_key(r) for r in rows], lo, hi)
    keep = set(nr["tasks"])
    kept = [r for r in rows if task_key(r) in keep]
    return kept, {"n_prior_tasks": nr["n_prior_tasks"], "too_easy": nr["n_too_easy"], "too_hard": nr["n_too_hard"],
                  "rows_dropped": len(rows) - len(kept), "prompt_set_sha": nr["prompt_set_sha"]}


class NextRound(dict):
    """The next round's task set; prints what was carried and what was retired."""

    def __str__(self) -> str:
        lo, hi = self["band"]
        return (f"next round: {len(self['tasks'])} tasks ({self['n_in_band']} in band {lo:.0%}..{hi:.0%} last "
                f"round, {self['n_unseen']} not seen), dropped {self['n_too_easy']} too easy and "
                f"{self['n_too_hard']} too hard (of {self['n_prior_tasks']} tasks graded last round); "
                f"prompt_set_sha {self['prompt_set_sha']}")


def next_round(prior: Any, tasks: Any = None, lo: float = D.DIFFICULTY_BAND[0], hi: float = D.DIFFICULTY_BAND[1]
               ) -> NextRound:
    """The task set for the next round: the tasks whose pass rate last round was inside [lo, hi].

    Args:
        prior: the previous round's graded rows (or a ScoredData).
        tasks: the candidate tasks (rows, or task keys); default the prior's own tasks. A candidate the prior
            never graded is kept (nothing says it is solved).
        lo: lowest pass rate kept (default ``defaults.DIFFICULTY_BAND[0]`` = 0.2).
        hi: highest pass rate kept (default ``defaults.DIFFICULTY_BAND[1]`` = 0.8).

    Returns:
        NextRound: ``{tasks (task keys), rows (the candidate rows kept, when tasks= were rows), n_in_band,
        n_unseen, n_too_easy, n_too_hard, n_prior_tasks, band, prompt_set_sha}``; ``prompt_set_sha`` is the
        first 16 hex of sha256 over the sorted task keys.

    Raises:
        InvalidArgument: ``lo``/``hi`` not numbers with 0 <= lo <= hi <= 1 (a ``ValueError``); a rows file that
            is not UTF-8 JSONL.
        InvalidArgumentType: ``prior`` or ``tasks`` is neither rows nor (for ``tasks``) a list of task keys (a
            ``TypeError``).
        FileNotFoundError: ``prior`` or ``tasks`` is a path to no file.

    Example:
        ```python
        nr = wai.next_round([{"task_id": "a", "reward": 1}, {"task_id": "a", "reward": 0}])
        print(nr["tasks"])   # ['a']: pass rate 0.5 is inside the band
        ```
    """
    lo, hi = _band(lo, hi)
    rates = prior_rates(prior)
    rows: list[dict[str, Any]] | None = None
    if tasks is None:
        keys = list(rates)
    elif isinstance(tasks, Sequence) and not isinstance(tasks, str) and all(isinstance(t, str) for t in tasks):
        keys = list(dict.fromkeys(tasks))
    else:
        rows = [dict(r) for r in as_rows(tasks, name="tasks")]
        keys = list(dict.fromkeys(task_key(r) for r in rows))
    easy = [k for k in keys if k in rates and rates[k][0] > hi]
    hard = [k for k in keys if k in rates and rates[k][0] < lo]
    dropped = set(easy) | set(hard)
    kept = [k for k in keys if k not in dropped]
    sha = hashlib.sha256("\n".join(sorted(kept)).encode()).hexdigest()[:16]
    return NextRound(tasks=kept, rows=[r for r in rows if task_key(r) not in dropped] if rows is not None else None,
                     n_in_band=sum(1 for k in kept if k in rates), n_unseen=sum(1 for k in kept if k not in rates),
                     n_too_easy=len(easy), n_too_hard=len(hard), n_prior_tasks=len(rates), band=[lo, hi],
                     prompt_set_sha=sha)


class GroupSignal(dict):
    """How many GRPO groups carry a gradient; prints counts with the mixed rate's interval and n."""

    def __str__(self) -> str:
        ci = self["mixed_rate_ci95"]
        ci_txt = f" [{ci[0]:.2f}..{ci[1]:.2f}]" if ci else ""
        return (f"group signal: {self['n_mixed']} of {self['n_groups']} groups mixed (rate {self['mixed_rate']:.2f}"
                f"{ci_txt}, n={self['n_groups'] - self['n_single']} groups of 2+), {self['n_all_zero']} all fail, "
                f"{self['n_all_one']} all pass, {self['n_single']} single, {self['n_in_band']} in band; "
                f"{self['pass_at']}")


def group_signal(rows: Any, lo: float = D.DIFFICULTY_BAND[0], hi: float = D.DIFFICULTY_BAND[1]) -> GroupSignal:
    """Count the groups that give GRPO a gradient (mixed rewards) and the pass rates they sit at.

    Args:
        rows: graded rollouts, several per task.
        lo: band floor on a group's pass rate (default ``defaults.DIFFICULTY_BAND[0]`` = 0.2).
        hi: band ceiling (default ``defaults.DIFFICULTY_BAND[1]`` = 0.8).

    Returns:
        GroupSignal: ``{n_groups, n_single, n_mixed, n_all_zero, n_all_one, n_in_band, mixed_rate (mixed over
        groups of 2+), mixed_rate_ci95 (Wilson), k, pass_at_1, pass_pow_k, pass_at_k, headroom, pass_at}``.

    Raises:
        InvalidArgument: ``lo``/``hi`` not numbers with 0 <= lo <= hi <= 1, or rows ``pass_at`` refuses
            (repeated rollouts of one task, a task id seen as two types; a ``ValueError``).
        NonFiniteReward: a NaN reward (a ``ValueError``), as in ``pass_at``.
        InvalidArgumentType: ``rows`` is not rows (a single dict, a non-iterable, a non-dict row; a
            ``TypeError``).

    Example:
        ```pycon
        >>> group_signal([{"task_id": "a", "reward": r} for r in (0, 1)])["n_mixed"]
        1
        ```
    """
    from whileai_core.measure.measure import pass_at
    from whileai_core.measure.stats import wilson_interval

    lo, hi = _band(lo, hi)
    data = as_rows(rows, name="rows")
    rates = prior_rates(data)
    sizes = {k: n for k, (_, n) in rates.items()}
    multi = [k for k in rates if sizes[k] >= 2]
    mixed = [k for k in multi if 0 < rates[k][0] < 1]
    pa = pass_at(data)
    ci = wilson_interval(len(mixed), len(multi)) if multi else None
    return GroupSignal(
        n_groups=len(rates), n_single=len(rates) - len(multi), n_mixed=len(mixed),
        n_all_zero=sum(1 for k in multi if rates[k][0] == 0), n_all_one=sum(1 for k in multi if rates[k][0] == 1),
        n_in_band=sum(1 for k in multi if lo <= rates[k][0] <= hi),
        mixed_rate=len(mixed) / len(multi) if multi else 0.0, mixed_rate_ci95=list(ci) if ci else None,
        k=pa.k, pass_at_1=pa.pass_at_1, pass_pow_k=pa.pass_pow_k, pass_at_k=pa.pass_at_k, headroom=pa.headroom,
        pass_at=str(pa))
