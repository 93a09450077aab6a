"""Views over graded (or simulated) rows: the SDK's names for picking rows out of a run and for reading it,
and the judge check that runs after grading (``run_judge(trust=)``).

``ScoredData`` exposes each as a method or property, and ``SimulationData`` delegates to the same functions, so
one definition serves both containers. A view never mutates the rows it reads; the row lists it returns hold
the same dicts (take ``copy.deepcopy`` before editing them).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from whileai_core.defaults import CI_LEVEL, LEAK_MIN_QUOTE_CHARS
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.rowlist import RowList
from whileai_core.rows import Row, as_rows

TRUST_MODES = ("warn", "require", "off")


def _rows(source: Any) -> list[Row]:
    return as_rows(source, name="source")


def trajectories(source: Any) -> RowList:
    """Every row as recorded in memory, ``privileged`` block included (``save()`` and exports scrub it)."""
    return RowList(_rows(source))


def partials(source: Any) -> RowList:
    """Rows with a partial reward, 0 < reward < 1 (neither a pass nor a failure)."""
    return RowList(r for r in _rows(source) if _reward(r) is not None and 0 < _reward(r) < 1)  # type: ignore[operator]


def failed_traces(source: Any) -> RowList:
    """The failing rows (reward 0), for ``simulate(traces=...)``; the SDK's ``traces`` is the same list."""
    return RowList(r for r in _rows(source) if _reward(r) == 0)


def _reward(row: Mapping[str, Any]) -> float | None:
    v = row.get("reward")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def select_by_reward(source: Any, reward: float) -> RowList:
    """Rows whose reward equals ``reward`` exactly (e.g. 1 for passes, 0.5 for half credit)."""
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
        raise InvalidArgumentType(f"select_by_reward(reward) takes a number in [0, 1]; got {reward!r}")
    return RowList(r for r in _rows(source) if _reward(r) == float(reward))


def select_by_reward_range(source: Any, lo: float, hi: float, *, inclusive: bool = True) -> RowList:
    """Rows with ``lo <= reward <= hi`` (strict bounds with ``inclusive=False``); unjudged rows are left out."""
    if not (isinstance(lo, (int, float)) and isinstance(hi, (int, float))) or not lo <= hi:
        raise InvalidArgument(f"select_by_reward_range needs numbers lo <= hi; got lo={lo!r}, hi={hi!r}")

    def inside(v: float | None) -> bool:
        return v is not None and ((lo <= v <= hi) if inclusive else (lo < v < hi))

    return RowList(r for r in _rows(source) if inside(_reward(r)))


class LeakReport(dict):
    """Rows whose visible reply quotes their own privileged block; prints itself."""

    def __str__(self) -> str:
        if not self["checked"]:
            return "leak report: not checked (no row carries a privileged block, so zero leaks means nothing)"
        head = (f"leak report: {self['n_leaked']} of {self['n_checked']} rows with a privileged block quote it "
                f"(a quote of {self['min_chars']}+ characters)")
        return "\n".join([head, *(f"  {x['task_id']} rollout {x['rollout_index']}: {x['needle']!r}"
                                  for x in self["leaked"][:20])])


def leak_report(source: Any, *, min_chars: int = LEAK_MIN_QUOTE_CHARS) -> LeakReport:
    """Which rows quote their own ``privileged`` context (reference answer, hidden state) where a trainer sees it.

    Args:
        source: rows, a SimulationData or a ScoredData.
        min_chars: the shortest quote that counts (default ``defaults.LEAK_MIN_QUOTE_CHARS`` = 12).

    Returns:
        LeakReport: ``{checked, n_checked, n_leaked, min_chars, leaked: [{task_id, rollout_index, needle}]}``;
        ``checked`` is False when no row carries a privileged block.

    Raises:
        InvalidArgumentType: ``source`` is not rows, a run object or a path, or one of its rows is not a dict.
        FileNotFoundError: ``source`` is a path to no file (``IsADirectoryError``: a path to a folder).
        InvalidArgument: ``source`` is a rows file that is gzip-compressed, not UTF-8, or has a line that is not
            a JSON object.

    Example:
        ```pycon
        >>> leak_report([{"prompt": "q", "final_text": "the key is open sesame now",
        ...               "privileged": {"reference": "open sesame now"}}])["n_leaked"]
        1
        ```
    """
    from whileai_core.select.select import find_leak

    rows = _rows(source)
    with_block = [r for r in rows if r.get("privileged")]
    leaked = []
    for r in with_block:
        needle = find_leak(r, min_chars=min_chars)
        if needle is not None:
            leaked.append({"task_id": r.get("task_id"), "rollout_index": r.get("rollout_index"), "needle": needle})
    return LeakReport(checked=bool(with_block), n_checked=len(with_block), n_leaked=len(leaked),
                      min_chars=min_chars, leaked=leaked)


class GradeReport(dict):
    """What a grading run holds, in one printable block; every number beside its n and interval."""

    def __str__(self) -> str:
        lines = [f"graded by {self['judge']!r}: {self['n_scored']} of {self['n_rows']} rows scored"]
        mr, ci = self["mean_reward"], self["mean_reward_ci95"]
        if mr is not None:
            iv = f" [{ci[0]:.3f}..{ci[1]:.3f}]" if ci else " (no interval under 3 tasks)"
            lines.append(f"mean reward {mr:.3f}{iv} (n={self['n_tasks']} tasks, {self['n_scored']} rows)")
        lines.append(f"passes {self['passes']}, failures {self['failures']}, partials {self['partials']}, "
                     f"unjudged {self['unjudged']} (n={self['n_rows']} rows)")
        if self["judge_status"]:
            lines.append("judge status: " + ", ".join(f"{k} {v}" for k, v in sorted(self["judge_status"].items())))
        if self["pass_at"]:
            lines.append(self["pass_at"])
        lines.extend(f"! {w}" for w in self["warnings"])
        return "\n".join(lines)


def report(scored: Any, *, level: float = CI_LEVEL) -> GradeReport:
    """A printable summary of graded rows: counts, mean reward with a task-bootstrap interval, pass@k, warnings.

    Args:
        scored: a ScoredData (or rows with ``reward``).
        level: interval level (default ``defaults.CI_LEVEL`` = 0.95).

    Returns:
        GradeReport: a dict that prints itself.

    Example:
        ```pycon
        >>> print(report([{"task_id": "a", "reward": 1}]))  # doctest: +ELLIPSIS
        graded by None: 1 of 1 rows scored...
        ```
    """
    import numpy as np

    from whileai_core.measure.measure import pass_at
    from whileai_core.measure.stats import bootstrap_mean_ci
    from whileai_core.rows import task_key

    rows = _rows(scored)
    rewards = [(task_key(r), _reward(r)) for r in rows]
    by_task: dict[str, list[float]] = {}
    for key, v in rewards:
        if v is not None:
            by_task.setdefault(key, []).append(v)
    means = np.array([np.mean(v) for v in by_task.values()], dtype=float)
    ci = bootstrap_mean_ci(means, level=level) if len(means) else None
    interval = getattr(ci, "ci", ci)
    n_scored = sum(1 for _, v in rewards if v is not None)
    warnings = list(getattr(scored, "warnings", []) or [])
    try:
        pa = pass_at(rows)
        pa_text = str(pa) if pa.n_groups else None
    except ValueError as exc:  # e.g. repeated rollouts: say why there is no pass@k line, keep the rest
        pa_text = None
        warnings.append(f"no pass@k: {exc}")
    return GradeReport(
        judge=getattr(scored, "judge_name", None), n_rows=len(rows), n_scored=n_scored, n_tasks=len(means),
        mean_reward=float(means.mean()) if len(means) else None,
        mean_reward_ci95=[float(interval[0]), float(interval[1])] if interval is not None else None,
        passes=sum(1 for _, v in rewards if v == 1), failures=sum(1 for _, v in rewards if v == 0),
        partials=sum(1 for _, v in rewards if v is not None and 0 < v < 1),
        unjudged=sum(1 for _, v in rewards if v is None),
        judge_status=dict(Counter(str(r["judge_status"]) for r in rows if r.get("judge_status"))),
        pass_at=pa_text, warnings=warnings)


# --------------------------------------------------------------------------------------------------
# judges against gold: trust after grading, and several judges ranked
# --------------------------------------------------------------------------------------------------


def check_trust(trust: Any) -> None:
    if isinstance(trust, str):
        if trust not in TRUST_MODES:
            raise InvalidArgument(f"trust= is 'warn', 'require', 'off', or a list of gold-label rows; got {trust!r}")
    elif trust is not None and not isinstance(trust, Sequence) and not hasattr(trust, "rows"):
        raise InvalidArgumentType(f"trust= is 'warn', 'require', 'off', or a list of gold-label rows; got "
                                  f"{type(trust).__name__}")


def _copy_gold(rows: list[Row], gold_rows: list[Row]) -> None:
    """Stamp each gold row's label (``gold_reward``, else ``reward``) and kind (``gold_kind``, default human) onto
    the graded row with the same label key (``judge_trust.row_label_key``)."""
    from whileai_core.grade.judge_trust import row_label_key

    by_key = {row_label_key(g): g for g in gold_rows}
    for r in rows:
        g = by_key.get(row_label_key(r))
        if g is not None:
            r["gold_reward"] = g.get("gold_reward", g.get("reward"))
            r["gold_kind"] = g.get("gold_kind") or "human"


def trust_after_grade(scored: Any, trust: Any) -> Any:
    """Run ``judge_trust`` on freshly graded rows (see ``run_judge(trust=)``); stamps and returns the report."""
    from whileai_core.grade.judge_trust import judge_trust

    scored.trust = None
    if trust is None or trust == "off":
        return None
    if isinstance(trust, str):
        if not any(r.get("gold_reward") is not None for r in scored.rows):
            if trust == "require":
                raise InvalidArgument("grade(trust='require'): no graded row carries gold_reward, so the judge is "
                                      "unmeasured; attach labels (wai.attach_labels) or pass trust=<gold rows>")
            return None
        rep = judge_trust(scored.rows)
    else:
        _copy_gold(scored.rows, as_rows(trust, name="trust"))
        rep = judge_trust(scored.rows)
    summary = {"agreement": rep.agreement, "agreement_low": rep.agreement_ci[0] if rep.agreement_ci else None,
               "kappa": rep.kappa, "n_gold": rep.n_labeled, "ok": rep.ok}
    for r in scored.rows:
        r.setdefault("judge_meta", {})["trust"] = dict(summary)
    scored.trust = rep
    if not rep.ok:
        if trust == "require":
            raise InvalidArgument(f"grade(trust='require'): the judge did not clear its floors: {rep}")
        scored.warnings.append(f"judge trust {rep.verdict}: {rep}")
    return rep
