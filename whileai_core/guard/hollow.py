"""Hollow-run warnings: a run that declared tools but whose rows never called one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from whileai_core.errors import InvalidArgumentType
from whileai_core.messages import tool_calls
from whileai_core.rows import as_rows

__all__ = ["hollow_run_warnings"]


# --------------------------------------------------------------------------------------------------
# Hollow runs
# --------------------------------------------------------------------------------------------------


def _tool_name(tool: Any) -> str:
    if isinstance(tool, str):
        return tool
    if isinstance(tool, Mapping):
        fn = tool.get("function")
        if isinstance(fn, Mapping) and fn.get("name"):
            return str(fn["name"])
        if tool.get("name"):
            return str(tool["name"])
    name = getattr(tool, "name", None) or getattr(tool, "__name__", None)
    if isinstance(name, str) and name:
        return name
    raise InvalidArgumentType(f"declared_tools= entries must be tool names, Tool objects or tool schemas; got {tool!r}")


def hollow_run_warnings(rows: Any, declared_tools: Iterable[Any] | None = None) -> list[str]:
    """Warnings for a scored run that measured less than it seems.

    No rollout called a tool; a declared tool was never called; a marker never fired (None or absent on
    every row). ``declared_tools`` are names, Tool objects or OpenAI tool schemas; None means unknown (only the
    "no tool called" check runs), an empty list means the agent has no tools.
    """
    data = as_rows(rows, name="rows")
    if not data:
        return []
    declared = None if declared_tools is None else [_tool_name(t) for t in declared_tools]
    called: dict[str, int] = {}
    for row in data:
        for call in tool_calls(row):
            called[str(call["tool"])] = called.get(str(call["tool"]), 0) + 1
    out: list[str] = []
    n = len(data)
    if not called and (declared is None or declared):
        listed = f" (declared: {', '.join(declared)})" if declared else ""
        out.append(f"no rollout called a tool in {n} rows{listed}: the score measures replies alone; check that "
                   "the tools reach the agent")
    elif declared:
        for name in declared:
            if name not in called:
                out.append(f"declared tool {name!r} was never called in {n} rows: no rollout exercised it")
    marker_names: list[str] = []
    fired: set[str] = set()
    for row in data:
        markers = row.get("markers")
        if not isinstance(markers, Mapping):
            continue
        for name, value in markers.items():
            if name not in marker_names:
                marker_names.append(name)
            if value is not None:
                fired.add(name)
    for name in marker_names:
        if name not in fired:
            out.append(f"marker {name!r} never fired: it is None or absent on all {n} rows, so it measures nothing here")
    return out


