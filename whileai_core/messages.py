"""A row as chat messages: its tool calls, its reply, its messages with a loss mask, its tools as JSON schemas.

The one place the engine turns a row (docs/rows.md) into what a chat model sees and back; simulate, grade,
guard, select and train all read rows through it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

Row = Mapping[str, Any]


def tool_calls(row: Row) -> list[dict[str, Any]]:
    """The tool calls of a rollout as ``[{"tool", "arguments", "result"}]``.

    Reads ``steps`` (the row schema), else assistant ``tool_calls`` in ``messages`` (OpenAI wire shape,
    arguments a JSON string), so rows from logs work too.
    """
    steps = row.get("steps")
    if isinstance(steps, list) and steps:
        return [s for s in steps if isinstance(s, Mapping) and s.get("tool")]  # type: ignore[misc]
    out: list[dict[str, Any]] = []
    messages = row.get("messages")
    if not isinstance(messages, list):
        return out
    results: dict[str, Any] = {}
    for m in messages:
        if isinstance(m, Mapping) and m.get("role") == "tool" and m.get("tool_call_id"):
            results[str(m["tool_call_id"])] = m.get("content")
    for m in messages:
        if not (isinstance(m, Mapping) and m.get("role") == "assistant"):
            continue
        for call in m.get("tool_calls") or ():
            fn = call.get("function", call) if isinstance(call, Mapping) else {}
            name = fn.get("name")
            if not name:
                continue
            args: Any = fn.get("arguments", {})
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    pass
            out.append({"tool": name, "arguments": args, "result": results.get(str(call.get("id")))})
    return out


def reply_text(row: Row) -> str:
    """The reply of a row: ``final_text``, else the last assistant message with text content, else ``""``."""
    text = row.get("final_text")
    if isinstance(text, str):
        return text
    messages = row.get("messages")
    if isinstance(messages, list):
        for m in reversed(messages):
            if isinstance(m, Mapping) and m.get("role") == "assistant" and isinstance(m.get("content"), str):
                return m["content"]
    return ""


