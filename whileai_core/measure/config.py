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
from whileai_core.rows import as_rows, mapping_field

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
    lineage = mapping_field(row, "lineage")
    if lineage.get("system_prompt_sha"):
        return lineage["system_prompt_sha"]
    pv = row.get("policy_version")
    return pv.split("@", 1)[1] if isinstance(pv, str) and "@" in pv else None


def _judge_version(row: Mapping[str, Any]) -> Any:
    meta = mapping_field(row, "judge_meta")
    lineage = mapping_field(row, "lineage")
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
    fields = [_fields(r) for r in data]
    try:
        distinct: Any = set(fields)  # runs agree on nearly everything: a handful of distinct tuples
    except TypeError:  # an unhashable value (a list as temperature): compare every row's
        distinct = fields
    out: dict[str, Any] = {}
    mixed = []
    for j, name in enumerate(_FIELDS):
        value, differ = _agreed([f[j] for f in distinct])
        out[name] = value
        if differ:
            mixed.append(name)
    n = len(data)
    answered = unclosed = truncated = graded = 0
    for r in data:
        text = reply_text(r)
        if "<think>" in text:
            text = _THINK.sub("", text)
            unclosed += "<think>" in text
        answered += bool(text.strip())
        truncated += r.get("finish_reason") == "length"
        graded += _finite(r.get("reward"))
    out.update(mixed=mixed, n_rows=n, truncated_share=_share(truncated, n), answered_share=_share(answered, n),
               unclosed_think_share=_share(unclosed, n), graded_share=_share(graded, n))
    return out


_FIELDS = ("temperature", "max_tokens", "policy_version", "judge_version", "prompt_hash", "user_model", "writer_model")


def _fields(r: Mapping[str, Any]) -> tuple[Any, ...]:
    """A row's values of ``_FIELDS`` (all None when its ``sampling`` is not a mapping)."""
    sampling = r.get("sampling") or {}
    if type(sampling) is not dict and not isinstance(sampling, Mapping):
        return (None,) * len(_FIELDS)
    writer = r.get("writer_model")
    lineage, meta = r.get("lineage"), r.get("judge_meta")
    if lineage is None and meta is None and "@" not in str(r.get("policy_version")):  # the common row: no lineage
        judge = prompt = None
    else:
        judge, prompt = _judge_version(r), _prompt_hash(r)
    return (sampling.get("temperature"), sampling.get("max_tokens"), r.get("policy_version"), judge, prompt,
            r.get("user_model"), None if writer in OFFLINE_WRITERS else writer)


def _finite(value: Any) -> bool:
    kind = type(value)
    if kind is int:
        return True
    if kind is float:
        finite: bool = value - value == 0  # neither NaN nor an infinity
        return finite
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
