"""The adapter protocol: how an agent built on a framework becomes a whileai agent (docs/agents.md).

An adapter provides two things:

* ``tools()``: the framework agent's tools as whileai ``Tool`` s (name, description, JSON schema), the world's
  tools when ``simulate`` gets no ``tools=``;
* ``async arun(message) -> {"steps", "final_text", ...}``: run one user message and give back the trajectory
  from the framework's own record of it (tool calls, tool results, text, usage).

``AgentAdapter`` supplies the rest: ``acall`` (what the engine awaits; the run itself goes on the adapters' one
long-lived loop, ``adapters_loop``, in a copy of the rollout's context, so async frameworks keep the run's
concurrency with no thread per rollout and their clients survive from one run to the next), ``__call__`` and
``__name__``. A framework's tool calls reach
the rollout's world because each adapter hooks the framework's tool-invocation point (``install()``) and,
inside a rollout, answers through ``world_answer``: the scheduled fault first, then the world (or
``execute=``'s real tools). Outside a rollout the hooks call the framework's own code.

Trajectory shape (every adapter): a tool call is ``{"tool", "arguments", "result", "turn", "call_id"}`` with
``turn`` shared by the calls one model response asked for together (parallel calls); a tool the framework
reported as failed carries ``"error": true`` and the framework's own error text as ``result``; a handoff
between agents (OpenAI Agents SDK) is the tool step the SDK records (``transfer_to_<agent>``) with
``"handoff": {"from", "to"}``; a LangGraph step adds ``"node"`` (the graph node that produced it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai_core.adapters.routing import current, in_execute
from whileai_core.errors import MissingExtra
from whileai_core.tools import Tool, as_tool

#: ``world_answer``'s answer when the call is not the world's to answer (no rollout, or a tool it does not know)
NOT_ROUTED: Any = object()


def world_answer(name: str, arguments: Any) -> Any:
    """The running rollout's world's answer to a framework's tool call, recorded on the rollout, or
    ``NOT_ROUTED`` (outside a rollout, a tool the world does not answer for, or a call made while ``execute=``
    runs a real tool: the framework runs it)."""
    route = current()
    if route is None or not route.open or route.world is None or in_execute():
        return NOT_ROUTED  # no rollout, or execute= runs the real tool (which may call the framework's own)
    world = route.world
    if name not in world.tools and name not in world._aliases:
        return NOT_ROUTED
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            pass  # the world answers a broken JSON string with its own error result
    result = world.call(name, arguments, scenario=route.scenario)
    route.record(name, arguments if isinstance(arguments, Mapping) else {}, result)
    return result


def as_text(result: Any) -> str:
    """A world answer as the text a framework hands back to its model (JSON for dicts and lists)."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def decoded(value: Any) -> Any:
    """A tool result as a framework recorded it, with JSON text decoded (so a fault reads as its dict)."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def schema_tool(name: str, description: str | None, parameters: Mapping[str, Any] | None) -> Tool:
    """A whileai tool from a framework's tool schema (no body: inside a rollout the world answers it)."""
    params = dict(parameters or {"type": "object", "properties": {}})
    params.setdefault("type", "object")
    params.setdefault("properties", {})
    return as_tool({"name": name, "description": description or "", "parameters": params})


def require(module: str, extra_package: str) -> Any:
    """Import a framework module, or raise ``MissingExtra`` naming the install line."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(f"this agent needs {extra_package} ({exc}); pip install 'pytest-whileai[agents]' or "
                           f"pip install {extra_package}") from None


class Turns:
    """Numbers tool steps by model response: calls asked for together share a ``turn``."""

    def __init__(self) -> None:
        self.turn = -1
        self.open = False

    def call(self) -> int:
        """The turn of the next tool call (a new one unless the previous item was a call of the same response)."""
        if not self.open:
            self.turn += 1
            self.open = True
        return self.turn

    def other(self) -> None:
        """Something other than a tool call came: the next call starts a new turn."""
        self.open = False


class AgentAdapter:
    """The base of every adapter (see the module docstring); a user writes one by overriding ``tools`` and
    ``arun``.

    Args:
        obj: the framework's agent object.
        name: the agent's name in rows' lineage (default the framework's agent name, else the class name).

    Example:
        ```python
        class MyAdapter(wai.AgentAdapter):
            def tools(self): return [get_order]
            async def arun(self, message): return {"steps": [], "final_text": await self.obj.ask(message)}
        ```
    """

    framework = "custom"

    def __init__(self, obj: Any, *, name: str | None = None) -> None:
        self.obj = obj
        self.__name__ = name or str(getattr(obj, "name", None) or type(obj).__name__)
        self.install()

    def install(self) -> None:
        """Hook the framework's tool-invocation point (once per process); the base has nothing to hook."""

    def tools(self) -> list[Tool]:
        """The agent's tools as whileai tools."""
        return []

    async def arun(self, message: str) -> dict[str, Any]:
        """Run one user message; ``{"steps", "final_text", ...}`` from the framework's own record."""
        raise NotImplementedError(f"{type(self).__name__}.arun(message) runs one message; override it")

    async def acall(self, message: Any) -> dict[str, Any]:
        """Run ``arun`` on the adapters' loop in a copy of the caller's context (the rollout's world goes with
        it); the caller awaits it without blocking its own loop."""
        loop = adapters_loop()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            return await self.arun(str(message))
        ctx = contextvars.copy_context()
        done: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()

        def start() -> None:
            task = ctx.run(loop.create_task, self.arun(str(message)))  # the task runs in (a copy of) ctx
            # the caller cancels ``done`` on its own thread: the task is cancelled on the adapters' loop's
            # (a task is not thread-safe)
            done.add_done_callback(lambda f: loop.call_soon_threadsafe(task.cancel) if f.cancelled()
                                   and not loop.is_closed() else None)
            task.add_done_callback(lambda t: _settle(t, done))

        loop.call_soon_threadsafe(start)
        return await asyncio.wrap_future(done)

    def __call__(self, message: Any) -> Any:
        return self.acall(message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__name__!r})"


_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def adapters_loop() -> asyncio.AbstractEventLoop:
    """The one event loop every adapter's runs are awaited on (started once, on a daemon thread).

    A framework's async client (an ``AsyncOpenAI``, an httpx pool) binds to the loop it first ran on; simulate
    starts a fresh loop per run and the plugin one per trial, so the framework's coroutines run here, on one
    loop that lives as long as the process: concurrency holds (one task per rollout, no thread per rollout) and
    the same agent object works across runs."""
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="whileai-adapters", daemon=True).start()
        return _loop


def _settle(task: asyncio.Task[Any], done: concurrent.futures.Future[Any]) -> None:
    """Hand the task's outcome to the caller's future (which the caller may cancel at any moment, on its own
    thread: a future settled meanwhile is left as it is)."""
    if done.done():
        return
    try:
        if task.cancelled():
            done.cancel()
        elif task.exception() is not None:
            done.set_exception(task.exception())
        else:
            done.set_result(task.result())
    except concurrent.futures.InvalidStateError:
        pass  # the caller cancelled it between the check and the hand-off


def tool_steps(calls: Sequence[Mapping[str, Any]], results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Steps from ``calls`` (``{"tool", "arguments", "call_id", "turn"}``) and ``results`` (call id -> result)."""
    out = []
    for c in calls:
        step = dict(c)
        step["result"] = decoded(results.get(str(c.get("call_id")), ""))
        out.append(step)
    return out


Detector = Callable[[Any], bool]
