"""Rows from plain prompt/completion lists (a public benchmark, a log), graded when a reward is given."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.grade.run import run_judge
from whileai_core.rowlist import RowList
from whileai_core.rows import Row, rollout_row, stable_id


def make_rows(
    prompts: Sequence[str],
    completions: Sequence[str],
    *,
    task_ids: Sequence[str] | None = None,
    references: Sequence[Any] | None = None,
    reward: Sequence[float] | Callable[[Row], Any] | None = None,
) -> Any:
    """Rows from plain prompt/completion lists (a public benchmark, a log), in the same schema as simulate's.

    ``reward`` may be a list of numbers or a judge; with a judge the result is graded (``ScoredData``).

    Args:
        prompts: the prompts, one string per row.
        completions: the replies, one per prompt.
        task_ids: task ids (default: one task per distinct prompt).
        references: a reference answer per row (stored as privileged).
        reward: a list of rewards, or a judge that grades the rows.

    Returns:
        A ``RowList``, or a ``ScoredData`` when ``reward`` is a judge.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix.
        InvalidArgumentType: an argument of the wrong type (a ``TypeError``); the message names it.

    Example:
        ```python
        scored = wai.rows(["2+2?"], ["4"], references=["4"], reward=wai.ExactMatch())
        ```
    """
    checked = []
    for name, seq in (("prompts", prompts), ("completions", completions)):
        if isinstance(seq, (str, bytes, Mapping)) or not isinstance(seq, Iterable):
            raise InvalidArgumentType(f"{name}= must be a list of strings; got {type(seq).__name__} (wrap one item as [item])")
        items = list(seq)
        bad = next((i for i, item in enumerate(items) if not isinstance(item, str)), None)
        if bad is not None:
            raise InvalidArgumentType(f"{name}[{bad}] is {type(items[bad]).__name__}; every item of {name}= must be a string")
        checked.append(items)
    prompts, completions = checked
    if len(prompts) != len(completions):
        raise InvalidArgument(f"prompts has {len(prompts)} items and completions {len(completions)}; they must match")
    for name, given in (("task_ids", task_ids), ("references", references)):
        if given is not None and len(given) != len(prompts):
            raise InvalidArgument(f"{name} has {len(given)} items, prompts {len(prompts)}; they must match")
    counts: dict[str, int] = {}
    out = RowList()
    for i, (prompt, completion) in enumerate(zip(prompts, completions)):
        tid = str(task_ids[i]) if task_ids is not None else "t-" + stable_id(prompt)
        idx = counts.get(tid, 0)
        counts[tid] = idx + 1
        row = rollout_row(prompt, completion, task_id=tid, rollout_index=idx, lineage={"source": "rows"},
                          messages=[{"role": "user", "content": prompt}, {"role": "assistant", "content": completion}])
        if references is not None:
            row["privileged"] = {"reference": references[i]}
        out.append(row)
    if reward is None:
        return out
    if callable(reward):
        return run_judge(out, reward)
    values = list(reward)
    if len(values) != len(out):
        raise InvalidArgument(f"reward has {len(values)} items, prompts {len(out)}; they must match")
    by_id: dict[str, Any] = dict(zip((r["row_id"] for r in out), values))
    return run_judge(out, lambda row: by_id[row["row_id"]], judge_name="given")
