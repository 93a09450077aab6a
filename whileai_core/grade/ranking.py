"""Several judges ranked on the same rows against gold: ``compare_judges`` and its ``JudgeRanking``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai_core.errors import InvalidArgument
from whileai_core.grade.labels import (
    Row,
    _judge_reward,
)
from whileai_core.grade.trust import judge_trust
from whileai_core.rows import as_rows

__all__ = ["JudgeRanking", "compare_judges"]

class JudgeRanking(list):  # type: ignore[type-arg]
    """Judges ranked by Cohen's kappa against gold; prints one line per judge with intervals and n."""

    def __str__(self) -> str:
        lines = [f"{len(self)} judge(s) ranked by kappa against gold (floors: agreement and kappa lower bounds)"]
        for e in self:
            lines.append(f"  {e['name']:<24} {e['verdict']:<13} {e['line']}")
        return "\n".join(lines)


def compare_judges(source: Any, judges: Mapping[str, Callable[[Row], Any]] | Sequence[Callable[[Row], Any]], *,
                   gold: Any = "gold_reward") -> JudgeRanking:
    """Grade the same labelled rows with several judges and rank them by kappa against gold.

    A judge that raises or breaks the contract on a row leaves that row unlabeled for it (as ``judge_probes``).

    Args:
        source: rows that carry gold labels (``gold_reward``), or any rows with ``gold=`` a gold row list.
        judges: ``{name: judge}`` or a list of judges (named by ``__name__``).
        gold: the gold field or gold rows, as in ``judge_trust(gold=)`` (default ``"gold_reward"``).

    Returns:
        JudgeRanking: a list of ``{name, ok, verdict, kappa, agreement, n_labeled, report, line}``, best first
        (an unmeasured kappa ranks last).

    Raises:
        InvalidArgument: no judges given.

    Example:
        ```pycon
        >>> rows = [{"task_id": str(i), "final_text": "yes" if i % 2 else "no", "gold_reward": i % 2,
        ...          "gold_kind": "human"} for i in range(6)]
        >>> compare_judges(rows, {"says_yes": lambda r: r["final_text"] == "yes", "always": lambda r: 1})[0]["name"]
        'says_yes'
        ```
    """
    named = dict(judges) if isinstance(judges, Mapping) else {
        getattr(j, "__name__", None) or getattr(j, "name", None) or type(j).__name__: j for j in judges}
    if not named:
        raise InvalidArgument("compare_judges needs at least one judge: {name: judge(row) -> verdict}")
    rows = as_rows(source, name="source")
    ranking = JudgeRanking()
    for name, judge in named.items():
        graded = [{**r, "reward": _judge_reward(judge, dict(r)), "judge_name": name} for r in rows]
        rep = judge_trust(graded, gold=gold)
        ranking.append({"name": name, "ok": rep.ok, "verdict": rep.verdict, "kappa": rep.kappa,
                        "agreement": rep.agreement, "n_labeled": rep.n_labeled, "report": rep,
                        "line": str(rep).split(": ", 2)[-1]})
    ranking.sort(key=lambda e: (e["kappa"] is None, -(e["kappa"] or 0.0), e["name"]))
    return ranking
