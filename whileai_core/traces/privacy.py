"""The privacy hook: ``redact=`` runs on every row read from traces before anything is stored or returned.

A row from traces reaches a cassette, an export, a baseline, a saved file or a simulated situation only
through ``wai.traces.load``, and ``load`` hands out no row that has not passed the hook. After the hook the
row's ``messages`` are the truth: its prompt, system prompt, steps and final text are read again from them,
so a hook that rewrites the messages has rewritten everything derived from them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from whileai_core.errors import InvalidArgumentType

Row = dict[str, Any]

#: fields that hold ids and labels, not user text: ``redact_strings`` leaves them alone so calls still link
STRUCTURAL_KEYS = frozenset({"role", "id", "tool_call_id", "type", "schema_version", "row_id", "task_id",
                             "status", "finish_reason", "lineage", "trace_id", "conversation_id", "response_ids",
                             "model", "name"})


def redact_strings(fn: Callable[[str], str] | str, replacement: str = "[redacted]") -> Callable[[Row], Row]:
    """A ``redact=`` hook that rewrites every string in a row (message text, tool arguments and results) with
    ``fn(text) -> text``, or, given a regular expression, replaces its matches with ``replacement``. Ids,
    roles and labels (``STRUCTURAL_KEYS``) are kept, so tool calls still link to their answers.

    Example: ``wai.traces.load(path, redact=wai.traces.redact_strings(r"[\\w.+-]+@[\\w-]+\\.[\\w.]+"))``.
    """
    if isinstance(fn, str):
        pattern = re.compile(fn)
        name = f"redact_strings({fn!r})"

        def fn(text: str) -> str:
            return pattern.sub(replacement, text)
    elif callable(fn):
        name = f"redact_strings({getattr(fn, '__name__', type(fn).__name__)})"
    else:
        raise InvalidArgumentType(f"redact_strings() takes a function str -> str or a regular expression; got "
                                  f"{type(fn).__name__}")

    def walk(value: Any, key: str | None = None) -> Any:
        if key in STRUCTURAL_KEYS:
            return value
        if isinstance(value, str):
            return fn(value)
        if isinstance(value, Mapping):
            return {k: walk(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    def hook(row: Row) -> Row:
        return walk(row)

    hook.__name__ = name
    return hook


def hook_name(redact: Callable[[Row], Any] | None) -> str | None:
    if redact is None:
        return None
    if not callable(redact):
        raise InvalidArgumentType(f"redact= takes a function row -> row (or None to keep rows as logged); got "
                                  f"{type(redact).__name__}")
    return getattr(redact, "__name__", None) or type(redact).__name__
