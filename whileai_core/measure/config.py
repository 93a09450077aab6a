"""The conditions a run was measured under, read off its rows (``PassAt.config``, the SDK's ``run_config``).

Two runs are comparable only when they were sampled and judged alike: the same temperature and token cap, the
same system prompt and judge, the same user and writer models. Each field is the one value every row agrees
on, or None with its name in ``mixed``; the shares say how many rows were cut, answered, or graded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from whileai_core.messages import reply_text
from whileai_core.rows import as_rows

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
#: writers that carry no model (a template, a pinned list): ignored when reading writer_model
OFFLINE_WRITERS = ("pinned",)


def _agreed(values: list[Any]) -> tuple[Any, bool]:
    """(the one value, True) when every present value is equal; (None, True) when they differ; absent -> None."""
    present = [v for v in values if v is not None]
    if not present:
        return None, False
    first = present[0]
    return (first, False) if all(v == first for v in present) else (None, True)


def _prompt_hash(row: Mapping[str, Any]) -> Any:
    lineage = row.get("lineage") if isinstance(row.get("lineage"), Mapping) else {}
    if lineage.get("system_prompt_sha"):
        return lineage["system_prompt_sha"]
    pv = row.get("policy_version")
    return pv.split("@", 1)[1] if isinstance(pv, str) and "@" in pv else None


def _judge_version(row: Mapping[str, Any]) -> Any:
    meta = row.get("judge_meta") if isinstance(row.get("judge_meta"), Mapping) else {}
    lineage = row.get("lineage") if isinstance(row.get("lineage"), Mapping) else {}
    return meta.get("version") or lineage.get("judge_version")


def _share(count: int, n: int) -> float | None:
    return round(count / n, 4) if n else None


def run_config(rows: Any) -> dict[str, Any]:
    """The sampling, prompt, judge and writer conditions every row agrees on, and the run's shares.

    Args:
        rows: row dicts, a JSONL path, or an object with ``.rows``.

    Returns:
        dict: ``temperature, max_tokens`` (from ``sampling``), ``policy_version``, ``judge_version``,
        ``prompt_hash`` (``lineage.system_prompt_sha`` or the part after ``@`` in ``policy_version``),
        ``user_model``, ``writer_model`` ("pinned" ignored): each the single agreed value or None;
        ``mixed``: the fields whose rows disagree; ``n_rows``; ``truncated_share`` (``finish_reason ==
        "length"``), ``answered_share`` (a non-empty reply once ``<think>`` blocks are stripped),
        ``unclosed_think_share`` (a ``<think>`` never closed), ``graded_share`` (a finite numeric reward).

    Raises:
        InvalidArgumentType: ``rows`` is not rows (a single dict, a non-iterable, a non-dict row; a
            ``TypeError``).
        InvalidArgument: a rows file that is not UTF-8 JSONL (a ``ValueError``).
        FileNotFoundError: ``rows`` is a path to no file.

    Example:
        ```pycon
        >>> run_config([{"sampling": {"temperature": 0.7}, "final_text": "ok", "reward": 1}])["temperature"]
        0.7
        ```
    """
    data = as_rows(rows, name="rows")
    readers = {
        "temperature": lambda r: (r.get("sampling") or {}).get("temperature"),
        "max_tokens": lambda r: (r.get("sampling") or {}).get("max_tokens"),
        "policy_version": lambda r: r.get("policy_version"),
        "judge_version": _judge_version,
        "prompt_hash": _prompt_hash,
        "user_model": lambda r: r.get("user_model"),
        "writer_model": lambda r: None if r.get("writer_model") in OFFLINE_WRITERS else r.get("writer_model"),
    }
    out: dict[str, Any] = {}
    mixed = []
    for name, read in readers.items():
        value, differ = _agreed([read(r) if isinstance(r.get("sampling") or {}, Mapping) else None for r in data])
        out[name] = value
        if differ:
            mixed.append(name)
    replies = [reply_text(r) for r in data]
    n = len(data)
    out.update(
        mixed=mixed, n_rows=n,
        truncated_share=_share(sum(1 for r in data if r.get("finish_reason") == "length"), n),
        answered_share=_share(sum(1 for t in replies if _THINK.sub("", t).strip()), n),
        unclosed_think_share=_share(sum(1 for t in replies if "<think>" in _THINK.sub("", t)), n),
        graded_share=_share(sum(1 for r in data if _finite(r.get("reward"))), n),
    )
    return out


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
