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

import numpy as np

from whileai_core.measure import columns
from whileai_core.messages import reply_text
from whileai_core.rows import mapping_field

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
    cols = columns.of(rows, "rows")
    data = cols.rows
    agreed = _agreed_columns(cols)
    if agreed is None:  # a row whose sampling is not a dict, or a value that cannot be hashed: row by row
        agreed = _agreed_rows(data)
    out: dict[str, Any] = {}
    mixed = []
    for name, (value, differ) in zip(_FIELDS, agreed):
        out[name] = value
        if differ:
            mixed.append(name)
    n = len(data)
    answered, unclosed = _answered(cols)
    truncated = cols.column("finish_reason").count("length") if cols.has("finish_reason") else 0
    out.update(mixed=mixed, n_rows=n, truncated_share=_share(truncated, n), answered_share=_share(answered, n),
               unclosed_think_share=_share(unclosed, n), graded_share=_share(_graded(cols), n))
    return out


def _agreed_rows(data: list[Any]) -> list[tuple[Any, bool]]:
    """Each of ``_FIELDS``' (agreed value, differ) pairs, row by row (the definition ``_agreed_columns`` follows)."""
    fields = [_fields(r) for r in data]
    try:
        distinct: Any = set(fields)  # runs agree on nearly everything: a handful of distinct tuples
    except TypeError:  # an unhashable value (a list as temperature): compare every row's
        distinct = fields
    return [_agreed([f[j] for f in distinct]) for j in range(len(_FIELDS))]


def _distinct(cols: columns.RowColumns, name: str) -> set[Any]:
    """The distinct values of a field over the rows ({None} when no row has it)."""
    return set(cols.column(name)) if cols.has(name) else {None}


def _agreed_columns(cols: columns.RowColumns) -> list[tuple[Any, bool]] | None:
    """``_agreed_rows``' answer from the columns (each field's distinct values), or None when a row's ``sampling``
    is not a dict or None, or a value is not hashable (the caller then walks the rows)."""
    sampling = cols.column("sampling") if cols.has("sampling") else []
    if not set(map(type, sampling)) <= {dict, type(None)}:
        return None
    present = [s for s in sampling if s]
    try:
        policy = _distinct(cols, "policy_version")
        lineage, meta = cols.has("lineage"), cols.has("judge_meta")
        if (not lineage or cols.column("lineage").count(None) == len(cols)) and \
                (not meta or cols.column("judge_meta").count(None) == len(cols)) and \
                not any("@" in str(v) for v in policy):
            judge: set[Any] = {None}
            prompt: set[Any] = {None}
        else:  # some row has lineage: read those rows' judge version and prompt hash one by one
            some = [r for r, a, b, v in zip(cols.rows, cols.column("lineage"), cols.column("judge_meta"),
                                            cols.column("policy_version"))
                    if a is not None or b is not None or "@" in str(v)]
            judge, prompt = set(map(_judge_version, some)), set(map(_prompt_hash, some))
            if len(some) < len(cols.rows):
                judge.add(None)
                prompt.add(None)
        distinct = [{s.get("temperature") for s in present}, {s.get("max_tokens") for s in present}, policy,
                    judge, prompt, _distinct(cols, "user_model"), _distinct(cols, "writer_model") - {*OFFLINE_WRITERS}]
    except TypeError:  # an unhashable value
        return None
    return [_agreed(list(values)) for values in distinct]


def _answered(cols: columns.RowColumns) -> tuple[int, int]:
    """Rows with a non-empty reply once ``<think>`` blocks are stripped, and rows with a ``<think>`` never closed."""
    if not cols.has("final_text") and not cols.has("messages"):
        return 0, 0
    finals = cols.column("final_text")
    kinds = set(map(type, finals))
    if kinds <= {str}:
        texts = finals
    elif list not in set(map(type, cols.column("messages"))):  # no messages to read a reply from
        texts = finals if kinds <= {str, type(None)} and not finals.count(None) else \
            [t for t in finals if isinstance(t, str)] if kinds - {type(None)} else []
    else:  # a row without a final_text string replies with its last assistant message, if it has messages
        messages = cols.column("messages")
        texts = [t if type(t) is str else reply_text(r) for t, m, r in zip(finals, messages, cols.rows)
                 if isinstance(t, str) or isinstance(m, list)]
    if "<think>" not in "\n".join(texts):
        return len(texts) - list(map(str.strip, texts)).count(""), 0
    answered = unclosed = 0
    for text in texts:
        if "<think>" in text:
            text = _THINK.sub("", text)
            unclosed += "<think>" in text
        answered += bool(text.strip())
    return answered, unclosed


def _graded(cols: columns.RowColumns) -> int:
    """Rewards that are finite numbers (ints and floats, not bools)."""
    if not cols.has("reward"):
        return 0
    kinds, values = cols.floats("reward")
    if values is not None and bool not in kinds:
        return int(np.count_nonzero(np.isfinite(values)))  # None is NaN there; an int is finite
    return sum(map(_finite, cols.column("reward")))


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
