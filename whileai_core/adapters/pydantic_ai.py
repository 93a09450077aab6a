"""pydantic-ai: an ``Agent`` with tools runs as a whileai agent.

Its function tools reach the world through a hook on ``FunctionToolset.call_tool`` (every ``tools=[...]``,
``@agent.tool`` and ``@agent.tool_plain`` tool goes through it): inside a rollout the world answers a tool it
knows (fault first), and the answer is what the tool returned (a dict stays a dict); outside a rollout the tool
runs its own code. ``Agent.run`` is awaited on the adapters' loop. The row's steps come from the run's message
history (``result.all_messages()``): the ``ToolCallPart`` s of one ``ModelResponse`` share a ``turn``, paired
with their ``ToolReturnPart`` (or ``RetryPromptPart``: ``"error": true`` with pydantic-ai's retry text) by call
id; ``usage`` from ``result.usage``.
"""

from __future__ import annotations

import threading
from typing import Any

from whileai_core.adapters.base import NOT_ROUTED, AgentAdapter, decoded, require, schema_tool, world_answer
from whileai_core.tools import Tool

_hooked = threading.Lock()
_installed = False


def detect(obj: Any) -> bool:
    return type(obj).__module__.startswith("pydantic_ai.") and type(obj).__name__ == "Agent"


def install_hooks() -> None:
    """Route pydantic-ai function tool calls through the rollout's world (once per process)."""
    global _installed
    with _hooked:
        if _installed:
            return
        toolset = require("pydantic_ai.toolsets.function", "pydantic-ai-slim").FunctionToolset
        call_tool = toolset.call_tool

        async def routed(self: Any, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
            answer = world_answer(name, tool_args)
            if answer is NOT_ROUTED:
                return await call_tool(self, name, tool_args, ctx, tool)
            return answer

        toolset.call_tool = routed
        _installed = True


class PydanticAIAdapter(AgentAdapter):
    """A pydantic-ai ``Agent`` as a whileai agent (see the module docstring)."""

    framework = "pydantic-ai"

    def install(self) -> None:
        install_hooks()

    def tools(self) -> list[Tool]:
        toolset = getattr(self.obj, "_function_toolset", None)
        out = []
        for t in getattr(toolset, "tools", {}).values():
            d = t.tool_def
            out.append(schema_tool(d.name, d.description, d.parameters_json_schema))
        return out

    async def arun(self, message: str) -> dict[str, Any]:
        result = await self.obj.run(message)
        usage = result.usage
        return {"steps": trajectory(result.all_messages()), "final_text": str(result.output),
                "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                          "calls": usage.requests}}


def trajectory(messages: Any) -> list[dict[str, Any]]:
    """Steps from a pydantic-ai message history (the last response's text is the row's final_text)."""
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    turn = -1
    for m in messages:
        parts = getattr(m, "parts", ())
        if type(m).__name__ == "ModelResponse":
            calls = [p for p in parts if type(p).__name__ == "ToolCallPart"]
            if calls:
                turn += 1
                text = "".join(p.content for p in parts if type(p).__name__ == "TextPart")
                if text:
                    steps.append({"text": text})
            for p in calls:
                step = {"tool": p.tool_name, "arguments": p.args_as_dict(), "result": None, "turn": turn,
                        "call_id": p.tool_call_id}
                steps.append(step)
                by_call[p.tool_call_id] = step
            continue
        for p in parts:
            kind = type(p).__name__
            found = by_call.get(getattr(p, "tool_call_id", None) or "")
            if found is None:
                continue
            if kind == "ToolReturnPart":
                found["result"] = decoded(p.content)
            elif kind == "RetryPromptPart":
                found["result"], found["error"] = p.model_response(), True
    return steps
