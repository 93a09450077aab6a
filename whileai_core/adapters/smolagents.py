"""smolagents: a ``ToolCallingAgent`` or a ``CodeAgent`` runs as a whileai agent.

Its tools reach the world through a hook on ``smolagents.Tool.__call__`` (every ``@tool`` function and ``Tool``
subclass goes through it, also when a ``CodeAgent``'s code calls it, by keyword or by position): inside a rollout
the world answers a tool it knows (fault first; ``final_answer`` is never the world's); outside a rollout the
tool runs its own code. smolagents is synchronous, and one agent object keeps one run's memory, so each rollout
runs a shallow copy of the agent with a fresh memory (a ``CodeAgent`` with the local executor: a fresh Python
executor too, so concurrent runs share no variables) in a worker thread (``in_thread``, one per rollout in
flight: the rollout's context goes with it). The row's steps come from the copy's memory: for a ``ToolCallingAgent`` each
``ActionStep`` is one ``turn``, its ``tool_calls`` with their observation (python-literal text decoded; a step
that failed carries ``"error": true`` and smolagents' error text). A ``CodeAgent``'s ``ActionStep`` records one
``python_interpreter`` call (its code), so the hook keeps each tool call the code made with the step it ran in:
the calls of one code step share a ``turn`` and carry ``code_call_id`` (the code step's call id); a tool that
raised carries ``"error": true`` and its error text. The ``final_answer`` call is the row's ``final_text``;
``usage`` sums the steps' token usage.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import contextvars
import copy
import functools
import threading
from typing import Any

from whileai_core import defaults as D
from whileai_core.adapters.base import NOT_ROUTED, AgentAdapter, decoded, require, schema_tool, world_answer
from whileai_core.tools import Tool

_hooked = threading.Lock()
_installed = False
#: the running ``CodeAgent`` copy and the tool calls its code made: [(step number, tool, arguments, result, error)]
_CODE_RUN: contextvars.ContextVar[tuple[Any, list[tuple[int, str, dict[str, Any], Any, bool]]] | None] = \
    contextvars.ContextVar("whileai_smolagents_code_run", default=None)
_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "array": "array",
          "object": "object", "any": None}


def detect(obj: Any) -> bool:
    return type(obj).__module__.startswith("smolagents.") and hasattr(obj, "memory") and hasattr(obj, "tools")


def install_hooks() -> None:
    """Route smolagents tool calls through the rollout's world (once per process)."""
    global _installed
    with _hooked:
        if _installed:
            return
        base = require("smolagents", "smolagents").Tool
        call = base.__call__

        def routed(self: Any, *args: Any, sanitize_inputs_outputs: bool = False, **kwargs: Any) -> Any:
            if args and len(args) == 1 and isinstance(args[0], dict) and not kwargs:
                kwargs, args = dict(args[0]), ()
            inputs = list(getattr(self, "inputs", None) or ())
            if args and len(args) <= len(inputs) and not set(inputs[:len(args)]) & set(kwargs):
                kwargs, args = {**dict(zip(inputs, args)), **kwargs}, ()  # a CodeAgent's get_order("A1")
            answer = world_answer(self.name, kwargs) if not args and self.name != "final_answer" else NOT_ROUTED
            run = _CODE_RUN.get() if self.name != "final_answer" else None
            if answer is not NOT_ROUTED:
                if run is not None:
                    run[1].append((int(getattr(run[0], "step_number", 0)), self.name, dict(kwargs), answer, False))
                return answer
            if run is None:
                return call(self, *args, sanitize_inputs_outputs=sanitize_inputs_outputs, **kwargs)
            try:
                result = call(self, *args, sanitize_inputs_outputs=sanitize_inputs_outputs, **kwargs)
            except Exception as exc:
                run[1].append((int(getattr(run[0], "step_number", 0)), self.name, dict(kwargs),
                               f"{type(exc).__name__}: {exc}", True))
                raise
            run[1].append((int(getattr(run[0], "step_number", 0)), self.name, dict(kwargs), result, False))
            return result

        base.__call__ = routed
        _installed = True


def literal(text: Any) -> Any:
    """An observation as smolagents wrote it (``str()`` of the result), read back when it is a literal."""
    value = decoded(text)
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            return value
    return value


class SmolagentsAdapter(AgentAdapter):
    """A smolagents ``ToolCallingAgent`` or ``CodeAgent`` as a whileai agent (see the module docstring)."""

    framework = "smolagents"

    def install(self) -> None:
        install_hooks()

    def tools(self) -> list[Tool]:
        out = []
        for name, t in self.obj.tools.items():
            if name == "final_answer":
                continue
            props = {}
            for p, spec in (t.inputs or {}).items():
                kind = _TYPES.get(str(spec.get("type")), "string")
                props[p] = {"description": spec.get("description", ""), **({"type": kind} if kind else {})}
            required = [p for p, spec in (t.inputs or {}).items() if not spec.get("nullable")]
            out.append(schema_tool(name, t.description, {"type": "object", "properties": props,
                                                         "required": required}))
        return out

    def fresh(self) -> Any:
        """A copy of the agent with a memory of its own (one agent object keeps one run's memory; a
        ``CodeAgent`` on the local executor also gets an executor of its own: one holds one run's variables)."""
        memory_cls = require("smolagents.memory", "smolagents").AgentMemory
        clone = copy.copy(self.obj)
        # the prompt text the agent's memory holds (``agent.system_prompt`` renders its template again, ~2 ms, and
        # ``run`` renders it into the memory anyway)
        clone.memory = memory_cls(getattr(getattr(self.obj.memory, "system_prompt", None), "system_prompt", ""))
        clone.monitor = copy.copy(self.obj.monitor)
        clone.state = dict(getattr(self.obj, "state", {}) or {})
        if is_code_agent(self.obj) and getattr(self.obj, "executor_type", None) == "local":
            clone.python_executor = clone.create_python_executor()
        return clone

    async def arun(self, message: str) -> dict[str, Any]:
        agent = self.fresh()
        if not is_code_agent(agent):
            output = await in_thread(agent.run, message)
            return trajectory(agent.memory.steps, output)
        calls: list[tuple[int, str, dict[str, Any], Any, bool]] = []

        def run() -> Any:
            token = _CODE_RUN.set((agent, calls))
            try:
                return agent.run(message)
            finally:
                _CODE_RUN.reset(token)

        output = await in_thread(run)
        return code_trajectory(agent.memory.steps, calls, output)


_pool_lock = threading.Lock()
_pool: concurrent.futures.ThreadPoolExecutor | None = None


async def in_thread(fn: Any, *args: Any) -> Any:
    """``asyncio.to_thread`` on a pool of up to ``MAX_CONCURRENCY`` threads (started as rollouts need them and
    reused): the loop's default pool, ``min(32, cpus + 4)`` threads, would cap a run's concurrency (6 rollouts
    at a time on 2 cores); the engine's ``concurrency`` bounds the rollouts in flight."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(D.MAX_CONCURRENCY, "whileai-smolagents")
    ctx = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(_pool, functools.partial(ctx.run, fn, *args))


def is_code_agent(obj: Any) -> bool:
    """Whether ``obj`` is a smolagents ``CodeAgent`` (its tools are called from the code it writes)."""
    return any(c.__name__ == "CodeAgent" and c.__module__.startswith("smolagents.") for c in type(obj).__mro__)


def code_trajectory(memory_steps: Any, calls: list[tuple[int, str, dict[str, Any], Any, bool]],
                    output: Any) -> dict[str, Any]:
    """``{"steps", "final_text", "usage"}`` of a ``CodeAgent`` run: the tool calls its code made, by code step."""
    out = trajectory(memory_steps, output)
    steps: list[dict[str, Any]] = []
    turn = -1
    for s in memory_steps:
        if type(s).__name__ != "ActionStep":
            continue
        made = [c for c in calls if c[0] == s.step_number]
        if not made:
            continue
        turn += 1
        code_id = next((c.id for c in (s.tool_calls or ())), None)
        for i, (_, name, arguments, result, error) in enumerate(made):
            step = {"tool": name, "arguments": arguments, "result": result, "turn": turn,
                    "call_id": f"{code_id}.{i}", "code_call_id": code_id}
            if error:
                step["error"] = True
            steps.append(step)
    out["steps"] = steps
    return out


def trajectory(memory_steps: Any, output: Any) -> dict[str, Any]:
    """``{"steps", "final_text", "usage"}`` from a smolagents memory."""
    steps: list[dict[str, Any]] = []
    usage = {"input_tokens": 0, "output_tokens": 0, "calls": 0}
    turn = -1
    for s in memory_steps:
        if type(s).__name__ != "ActionStep":
            continue
        tokens = getattr(s, "token_usage", None)
        if tokens is not None:
            usage["input_tokens"] += int(tokens.input_tokens or 0)
            usage["output_tokens"] += int(tokens.output_tokens or 0)
            usage["calls"] += 1
        calls = [c for c in (s.tool_calls or ()) if c.name != "final_answer"]
        if not calls:
            continue
        turn += 1
        observations = str(s.observations or "")
        parts = observations.split("\n") if len(calls) > 1 else [observations]
        for i, c in enumerate(calls):
            step = {"tool": c.name, "arguments": c.arguments if isinstance(c.arguments, dict) else
                    decoded(c.arguments), "result": literal(parts[i] if len(parts) == len(calls) else observations),
                    "turn": turn, "call_id": c.id}
            if s.error is not None:
                step["result"], step["error"] = str(s.error), True
            steps.append(step)
    return {"steps": steps, "final_text": str(output if output is not None else ""), "usage": usage}
