"""LangGraph / LangChain: a compiled graph with a ``messages`` state (``create_react_agent(...)`` or your own
``StateGraph(...).compile()``) runs as a whileai agent.

LangChain tools reach the world through a hook on ``StructuredTool._run`` / ``_arun`` (what ``@tool`` and
``StructuredTool.from_function`` build, and what a ``ToolNode`` calls): inside a rollout the world answers a tool
it knows (fault first), as JSON text, the way LangChain hands a dict to the model; outside a rollout the tool
runs its own code. The graph is streamed on the adapters' loop (``astream(stream_mode="updates")``); the row's
steps are its messages, each tagged with the graph ``node`` that produced it: ``AIMessage.tool_calls`` paired
with their ``ToolMessage`` s by id (one ``turn`` per AI message; a ``ToolMessage`` with ``status="error"`` sets
``"error": true``), AI text before the last as text steps; ``usage`` sums the AI messages' ``usage_metadata``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from whileai_core.adapters.base import (
    NOT_ROUTED,
    AgentAdapter,
    as_text,
    decoded,
    require,
    schema_tool,
    world_answer,
)
from whileai_core.tools import Tool

_hooked = threading.Lock()
_installed = False


def detect(obj: Any) -> bool:
    return type(obj).__module__.startswith("langgraph.") and callable(getattr(obj, "astream", None))


def install_hooks() -> None:
    """Route ``StructuredTool`` calls through the rollout's world (once per process)."""
    global _installed
    with _hooked:
        if _installed:
            return
        tools_mod = require("langchain_core.tools", "langchain-core")
        structured = tools_mod.StructuredTool
        run, arun = structured._run, structured._arun

        def _run(self: Any, *args: Any, config: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            answer = world_answer(self.name, kwargs) if not args else NOT_ROUTED
            if answer is NOT_ROUTED:
                return run(self, *args, config=config, run_manager=run_manager, **kwargs)
            return as_text(answer)

        async def _arun(self: Any, *args: Any, config: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            answer = world_answer(self.name, kwargs) if not args else NOT_ROUTED
            if answer is NOT_ROUTED:
                return await arun(self, *args, config=config, run_manager=run_manager, **kwargs)
            return as_text(answer)

        structured._run, structured._arun = _run, _arun
        _installed = True


def _graph_tools(graph: Any) -> list[Any]:
    """The LangChain tools of the graph's ``ToolNode`` s."""
    out: list[Any] = []
    for node in getattr(graph, "nodes", {}).values():
        by_name = getattr(getattr(node, "bound", None), "tools_by_name", None)
        if isinstance(by_name, dict):
            out.extend(by_name.values())
    return out


class LangGraphAdapter(AgentAdapter):
    """A compiled LangGraph graph as a whileai agent (see the module docstring).

    Args:
        obj: the compiled graph.
        name: the agent's name in rows' lineage.
        tools: the LangChain tools it calls, when they are not in a ``ToolNode`` of the graph.
        recursion_limit: LangGraph's step limit per run.
    """

    framework = "langgraph"

    def __init__(self, obj: Any, *, name: str | None = None, tools: Sequence[Any] | None = None,
                 recursion_limit: int = 25) -> None:
        super().__init__(obj, name=name if name is not None else
                         (getattr(obj, "name", None) if getattr(obj, "name", "") != "LangGraph" else None))
        self.lc_tools = list(tools) if tools is not None else _graph_tools(obj)
        self.recursion_limit = recursion_limit

    def install(self) -> None:
        install_hooks()

    def tools(self) -> list[Tool]:
        out = []
        for t in self.lc_tools:
            schema = t.tool_call_schema.model_json_schema() if hasattr(t, "tool_call_schema") else t.args
            out.append(schema_tool(t.name, t.description, {"type": "object",
                                                           "properties": schema.get("properties", {}),
                                                           "required": schema.get("required", [])}))
        return out

    async def arun(self, message: str) -> dict[str, Any]:
        tagged: list[tuple[str, Any]] = []
        config = {"recursion_limit": self.recursion_limit}
        async for update in self.obj.astream({"messages": [("user", message)]}, config, stream_mode="updates"):
            for node, value in (update or {}).items():
                for m in (value or {}).get("messages", []) if isinstance(value, dict) else ():
                    tagged.append((node, m))
        return trajectory(tagged)


def trajectory(tagged: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """``{"steps", "final_text", "usage"}`` from (node, message) pairs in the order the graph produced them."""
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    usage = {"input_tokens": 0, "output_tokens": 0, "calls": 0}
    turn, final = -1, ""
    for node, m in tagged:
        kind = getattr(m, "type", "")
        if kind == "ai":
            meta = getattr(m, "usage_metadata", None) or {}
            usage["input_tokens"] += int(meta.get("input_tokens", 0))
            usage["output_tokens"] += int(meta.get("output_tokens", 0))
            usage["calls"] += 1
            text = m.content if isinstance(m.content, str) else "".join(
                b.get("text", "") for b in m.content if isinstance(b, dict))
            if m.tool_calls:
                turn += 1
                if text:
                    steps.append({"text": text, "node": node})
                for tc in m.tool_calls:
                    step = {"tool": tc["name"], "arguments": dict(tc.get("args") or {}), "result": None,
                            "turn": turn, "call_id": tc.get("id"), "node": node}
                    steps.append(step)
                    by_call[str(tc.get("id"))] = step
            elif text:
                if final:
                    steps.append({"text": final, "node": node})
                final = text
        elif kind == "tool":
            found = by_call.get(str(m.tool_call_id))
            if found is not None:
                found["result"] = decoded(m.content)
                found["tool_node"] = node
                if getattr(m, "status", "success") == "error":
                    found["error"] = True
    return {"steps": steps, "final_text": final, "usage": usage}
