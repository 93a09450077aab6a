"""OpenAI Agents SDK (``openai-agents``): an ``Agent`` with ``function_tool`` s runs as a whileai agent.

Every ``FunctionTool`` of the agent (and of the agents it hands off to) is copied with its ``on_invoke_tool``
wrapped: inside a rollout the world answers it (fault first). ``Runner.run`` is awaited on the adapters' loop.
The row's steps come from ``RunResult.new_items``: tool calls and outputs paired by call id, the calls of one
model response sharing a ``turn``, a handoff as the SDK's ``transfer_to_<agent>`` call with
``{"handoff": {"from", "to"}}``, intermediate messages as text steps; ``usage`` from the run context. The
agent's ``mcp_servers`` that are not connected yet are connected on the adapters' loop on the first run; their
tool calls reach the world through the MCP client hook (``adapters.mcp``) once ``wai.mcp_tools`` listed them.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from whileai_core.adapters.base import (
    NOT_ROUTED,
    AgentAdapter,
    Turns,
    as_text,
    decoded,
    require,
    schema_tool,
    world_answer,
)
from whileai_core.tools import Tool


def detect(obj: Any) -> bool:
    return type(obj).__module__.startswith("agents.") and type(obj).__name__ == "Agent"


def _routed_tool(tool: Any) -> Any:
    """A copy of a ``FunctionTool`` whose calls the rollout's world answers (its own code outside a rollout)."""
    invoke = tool.on_invoke_tool
    if getattr(invoke, "_whileai_routed", False):
        return tool

    async def on_invoke_tool(ctx: Any, arguments: str) -> Any:
        answer = world_answer(tool.name, arguments)
        if answer is NOT_ROUTED:
            return await invoke(ctx, arguments)
        return as_text(answer)

    on_invoke_tool._whileai_routed = True  # type: ignore[attr-defined]
    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool)


def _routed_agent(agent: Any, seen: dict[int, Any]) -> Any:
    """The agent, its handoff agents and their tools, copied with every function tool routed."""
    if id(agent) in seen:
        return seen[id(agent)]
    fn_tool = require("agents", "openai-agents").FunctionTool
    copy = agent.clone()
    seen[id(agent)] = copy
    copy.tools = [_routed_tool(t) if isinstance(t, fn_tool) else t for t in agent.tools]
    handoffs = []
    for h in agent.handoffs:
        handoffs.append(_routed_agent(h, seen) if type(h).__name__ == "Agent" else h)
    copy.handoffs = handoffs
    return copy


def _agents(agent: Any, seen: set[int]) -> list[Any]:
    """The agent and every agent it can hand off to."""
    if id(agent) in seen:
        return []
    seen.add(id(agent))
    out = [agent]
    for h in agent.handoffs:
        if type(h).__name__ == "Agent":
            out += _agents(h, seen)
    return out


def _all_tools(agent: Any, seen: set[int]) -> list[Any]:
    return [t for a in _agents(agent, seen) for t in a.tools if hasattr(t, "params_json_schema")]


class OpenAIAgentsAdapter(AgentAdapter):
    """An OpenAI Agents SDK ``Agent`` as a whileai agent (see the module docstring)."""

    framework = "openai-agents"

    def __init__(self, obj: Any, *, name: str | None = None, run_config: Any = None, max_turns: int = 10) -> None:
        super().__init__(obj, name=name)
        self.run_config, self.max_turns = run_config, max_turns
        self.routed = _routed_agent(obj, {})
        self._connecting = asyncio.Lock()

    async def connect_mcp(self) -> None:
        """Connect the MCP servers of the agent (and of those it hands off to) that are not connected yet, on
        the adapters' loop, where the runs go (a client session binds to the loop it was opened on); their
        calls then pass through the world (``whileai_core.adapters.mcp.install_client_hook``)."""
        for agent in _agents(self.obj, set()):
            for server in getattr(agent, "mcp_servers", None) or ():
                if getattr(server, "session", "") is None:
                    async with self._connecting:
                        if server.session is None:
                            await server.connect()

    def tools(self) -> list[Tool]:
        out: dict[str, Tool] = {}
        for t in _all_tools(self.obj, set()):
            out.setdefault(t.name, schema_tool(t.name, t.description, t.params_json_schema))
        return list(out.values())

    def declared_tools(self) -> list[Tool]:
        """Every tool the SDK declares to the model: the function tools and each handoff's ``transfer_to_<agent>``
        (what ``wai.export(..., tools=adapter.declared_tools())`` needs for rows with handoffs; handoffs are not
        the world's tools, so no fault is scheduled on them)."""
        sdk = require("agents", "openai-agents")
        out = {t.name: t for t in self.tools()}
        for agent in _agents(self.obj, set()):
            for h in agent.handoffs:
                made = h if isinstance(h, sdk.Handoff) else sdk.handoff(h)
                out.setdefault(made.tool_name, schema_tool(made.tool_name, made.tool_description,
                                                           made.input_json_schema))
        return list(out.values())

    async def arun(self, message: str) -> dict[str, Any]:
        sdk = require("agents", "openai-agents")
        kwargs: dict[str, Any] = {"max_turns": self.max_turns}
        if self.run_config is not None:
            kwargs["run_config"] = self.run_config
        await self.connect_mcp()
        result = await sdk.Runner.run(self.routed, message, **kwargs)
        usage = result.context_wrapper.usage
        return {"steps": trajectory(result.new_items), "final_text": str(result.final_output or ""),
                "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                          "calls": usage.requests},
                "last_agent": getattr(result.last_agent, "name", None)}


def trajectory(items: Any) -> list[dict[str, Any]]:
    """Steps from ``RunResult.new_items`` (the SDK's own record of the run)."""
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    turns = Turns()
    for item in items:
        kind = type(item).__name__
        raw = item.raw_item
        if kind in ("ToolCallItem", "HandoffCallItem"):
            call_id = str(getattr(raw, "call_id", "") or "")
            step = {"tool": getattr(raw, "name", "?"), "arguments": decoded(getattr(raw, "arguments", "") or "{}"),
                    "result": None, "turn": turns.call(), "call_id": call_id}
            steps.append(step)
            by_call[call_id] = step
        elif kind in ("ToolCallOutputItem", "HandoffOutputItem"):
            turns.other()
            call_id = str(_get(raw, "call_id") or "")
            found = by_call.get(call_id)
            output = getattr(item, "output", None) if kind == "ToolCallOutputItem" else _get(raw, "output")
            if found is not None:
                found["result"] = decoded(output)
                if kind == "HandoffOutputItem":
                    found["handoff"] = {"from": getattr(item.source_agent, "name", None),
                                       "to": getattr(item.target_agent, "name", None)}
        elif kind == "MessageOutputItem":
            turns.other()
            text = "".join(getattr(c, "text", "") for c in getattr(raw, "content", ()) or ())
            if text:
                steps.append({"text": text})
    if steps and "text" in steps[-1] and "tool" not in steps[-1]:
        steps.pop()  # the last message is the final output, which the row keeps as final_text
    return steps


def _get(raw: Any, key: str) -> Any:
    return raw.get(key) if isinstance(raw, dict) else getattr(raw, key, None)
