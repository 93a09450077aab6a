"""Holdout: split rows by task, never inside a group, and move holdout tasks that near-copy a training prompt
back into train (``contamination`` finds them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from whileai_core.arguments import integer
from whileai_core.defaults import (
    DECONTAM_NGRAM,
    DECONTAM_OVERLAP,
    HOLDOUT_FRACTION,
    TRAIN_SEED,
)
from whileai_core.errors import InvalidArgument
from whileai_core.rowlist import RowList
from whileai_core.rows import as_rows, group_rows, stable_id, task_key

# ----------------------------------------------------------------------------------------------------------
# holdout
# ----------------------------------------------------------------------------------------------------------
_WORD_RE = re.compile(r"[a-z0-9]+")


def _words(text: Any) -> list[str]:
    return _WORD_RE.findall(str(text or "").lower())


def _prompt_text(row: Mapping[str, Any]) -> str:
    prompt = row.get("prompt")
    if isinstance(prompt, list):
        return " ".join(str(m.get("content") or "") for m in prompt if m.get("role") == "user")
    if prompt in (None, ""):
        for m in row.get("messages") or []:
            if m.get("role") == "user":
                return str(m.get("content") or "")
    return str(prompt or "")


def contamination(
    rows: Any, against: Any, *, ngram: int = DECONTAM_NGRAM, overlap: float = DECONTAM_OVERLAP
) -> dict[str, str]:
    """Tasks of ``rows`` whose prompt repeats one in ``against``: ``{task_key: rule}``.

    Rules, first hit wins: ``same_task`` (the task key is in both), ``exact`` (same normalised words), ``near``
    (at least ``overlap`` of the prompt's words lie inside word ``ngram``-grams that occur in ``against``;
    the Llama 2 "dirty" rule). Prompts shorter than ``ngram`` words are checked for exact copies only. The check is
    ``wai.decontaminate`` (guards.py) run on one plain-text prompt per task.
    """
    integer("ngram", ngram, minimum=1)
    if isinstance(overlap, bool) or not isinstance(overlap, (int, float)) or not 0 < overlap <= 1:
        raise InvalidArgument(f"overlap= must be in (0, 1]; got {overlap!r}")
    from whileai_core.guard.contamination import decontaminate

    # one probe row per task, with the prompt as plain text, checked by the same rule as wai.decontaminate
    probes = [{"task_id": key, "prompt": _prompt_text(members[0])}
              for key, members in group_rows(as_rows(rows)).items()]
    others = [{"task_id": task_key(r), "prompt": _prompt_text(r)} for r in as_rows(against, name="against")]
    if not probes or not others:
        return {}
    report = decontaminate(probes, others, n=ngram, overlap=overlap, fields=("prompt",), examples=len(probes))
    found = {ex["index"]: ex["match"] for ex in report.examples}
    return {probes[i]["task_id"]: found[i] if found.get(i) in ("same_task", "exact") else "near"
            for i in report.contaminated}


@dataclass
class HoldoutSplit:
    """A train / holdout split by task; unpacks as ``train_rows, holdout_rows = wai.holdout(rows)``."""

    train: RowList
    holdout: RowList
    n_train_tasks: int
    n_holdout_tasks: int
    moved: dict[str, str]
    fraction: float
    seed: int

    def __iter__(self) -> Iterator[RowList]:
        return iter((self.train, self.holdout))

    def to_dict(self) -> dict[str, Any]:
        return {"n_train_rows": len(self.train), "n_holdout_rows": len(self.holdout),
                "n_train_tasks": self.n_train_tasks, "n_holdout_tasks": self.n_holdout_tasks,
                "moved_to_train": dict(self.moved), "fraction": self.fraction, "seed": self.seed}

    def __str__(self) -> str:
        moved = f"; {len(self.moved)} contaminated holdout task(s) moved to train" if self.moved else ""
        return (f"holdout: {self.n_holdout_tasks} tasks ({len(self.holdout)} rows) held out, "
                f"{self.n_train_tasks} tasks ({len(self.train)} rows) for training{moved}")


def holdout(
    rows: Any,
    fraction: float = HOLDOUT_FRACTION,
    *,
    seed: int = TRAIN_SEED,
    ngram: int = DECONTAM_NGRAM,
    overlap: float = DECONTAM_OVERLAP,
) -> HoldoutSplit:
    """Split rows into train and holdout by task (every rollout of a task lands on one side).

    ``round(fraction x tasks)`` tasks (at least one, and at least one left to train) are held out, chosen by a
    seeded hash of the task key, so the split is the same on every machine. Holdout tasks whose prompt copies
    or near-copies a training prompt (see ``contamination``) are moved to train and listed in ``moved``.

    Args:
        rows: row dicts, a JSONL path, or an object with ``.rows``.
        fraction: the share of tasks held out (``HOLDOUT_FRACTION``). (``HOLDOUT_FRACTION``)
        seed: the seed of the task hash. (``TRAIN_SEED``)
        ngram: the n-gram size of the contamination check (``DECONTAM_NGRAM``; Llama 2 A.6). (``DECONTAM_NGRAM``)
        overlap: its overlap share (``DECONTAM_OVERLAP``). (``DECONTAM_OVERLAP``)

    Returns:
        A ``HoldoutSplit`` that unpacks as ``train_rows, hold_rows``; ``.moved`` lists tasks moved to train.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix.

    Example:
        ```python
        train_rows, hold_rows = wai.holdout(scored.rows, fraction=0.2)
        ```
    """
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < 1:
        raise InvalidArgument(f"fraction= must be a number in (0, 1), the share of tasks held out; got {fraction!r}")
    data = as_rows(rows)
    groups = group_rows(data)
    if len(groups) < 2:
        raise InvalidArgument(f"holdout needs at least 2 tasks to split; got {len(groups)} (rows are grouped by task_id)")
    order = sorted(groups, key=lambda k: stable_id(seed, k, length=16))
    n_hold = min(max(1, round(fraction * len(groups))), len(groups) - 1)
    held = set(order[:n_hold])
    train_rows = [r for k in groups if k not in held for r in groups[k]]
    hold_rows = [r for k in groups if k in held for r in groups[k]]
    moved = contamination(hold_rows, train_rows, ngram=ngram, overlap=overlap) if train_rows else {}
    held -= set(moved)
    train_out = RowList(r for k in groups if k not in held for r in groups[k])
    hold_out = RowList(r for k in groups if k in held for r in groups[k])
    for part in (train_out, hold_out):
        part.system_prompt = getattr(rows, "system_prompt", None)
        part.tools = getattr(rows, "tools", ()) or ()
    return HoldoutSplit(train=train_out, holdout=hold_out, n_train_tasks=len(groups) - len(held),
                        n_holdout_tasks=len(held), moved=moved, fraction=float(fraction), seed=seed)


