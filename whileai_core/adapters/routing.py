"""Tool calls the agent's own code makes reach the rollout's world (issue 27 item 1).

While a rollout runs, ``tools.ROUTE`` holds its ``Route``: a ``@wai.tool`` function the agent calls directly
(sync or async, from the rollout's thread, an asyncio task it spawned, or a thread it started) is answered by
the rollout's world: the scheduled fault first, then the world_state axis (or ``execute=``'s real tools), and
the call is recorded as a step, so an agent need not return ``steps``. Outside a rollout (or once its rollout
has ended) a tool is a plain function.

Threads do not inherit context variables on their own, so the first rollout installs two small hooks:
``threading.Thread.start`` runs a thread started inside a rollout in a copy of the starter's context, and
``ThreadPoolExecutor.submit`` (hence ``loop.run_in_executor``) runs a job submitted inside a rollout in a copy
of the submitter's. Both do nothing outside a rollout. ``asyncio`` tasks, ``asyncio.to_thread`` and anyio's
worker threads copy the context themselves.

Each rollout's ``Route`` also counts what its world answered (``calls``, ``faults``): a row carries
``faults_scheduled`` (1 when its situation schedules a fault) and ``faults_delivered`` (the calls the fault
answered). ``undelivered`` finds the rollouts whose steps show a call of the faulted tool that never reached
the world (a plain, undecorated function, or a framework that copied the function).
"""

from __future__ import annotations

import concurrent.futures.thread as _pool_thread
import contextvars
import functools
import inspect
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from whileai_core.tools import ROUTE, Tool

#: the one-line fix the warnings name
ROUTE_FIX = ("decorate each tool with @wai.tool and call it (or message.world.call(name, arguments)), or pass "
             "the framework object itself: simulate(agent=wai.agent(obj))")
_EXECUTING: contextvars.ContextVar[bool] = contextvars.ContextVar("whileai_world_executing", default=False)


class Route:
    """One rollout's tool router and record (see the module docstring)."""

    def __init__(self, scenario: Any) -> None:
        self.scenario = scenario
        self.world: Any = getattr(scenario, "world", None)
        self.steps: list[dict[str, Any]] = []
        self.calls = 0  # calls the world answered in this rollout (any path: routed, world.call, a model agent)
        self.faults = 0  # calls the scheduled fault answered
        self.open = True
        self._lock = threading.Lock()

    def __call__(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not self.open or _EXECUTING.get():  # the rollout ended, or execute= runs the tool's own body
            return _plain(tool, args, kwargs)
        try:
            arguments = _bound(tool, args, kwargs)
        except TypeError:
            return _plain(tool, args, kwargs)  # the call's own TypeError, as outside a rollout
        if tool.fn is not None and inspect.iscoroutinefunction(tool.fn):
            return self._acall(tool, arguments, args, kwargs)
        if self.knows(tool):
            result = self.world.call(tool.name, arguments, scenario=self.scenario)
        else:
            result = _plain(tool, args, kwargs)
        self.record(tool.name, arguments, result)
        return result

    async def _acall(self, tool: Tool, arguments: dict[str, Any], args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> Any:
        if self.knows(tool):
            result = self.world.call(tool.name, arguments, scenario=self.scenario)
            if inspect.isawaitable(result):  # execute= ran an async tool's own body
                try:
                    result = await result
                except Exception as exc:  # noqa: BLE001 - a failing real tool is a tool result, as World gives
                    result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
        else:
            result = await _plain(tool, args, kwargs)
        self.record(tool.name, arguments, result)
        return result

    def knows(self, tool: Tool) -> bool:
        """Whether this rollout's world answers for ``tool`` (by its model-facing or original name)."""
        world = self.world
        return world is not None and any(n in world.tools or n in world._aliases for n in tool.names)

    def record(self, name: str, arguments: Mapping[str, Any], result: Any) -> None:
        with self._lock:
            self.steps.append({"tool": name, "arguments": dict(arguments), "result": result})

    def answered(self, fault: bool) -> None:
        """The world answered one call of this rollout (``fault``: the scheduled fault answered it)."""
        with self._lock:
            self.calls += 1
            self.faults += int(fault)


def _plain(tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if tool.fn is None:
        return {"status": "error", "error": f"tool {tool.name!r} has no function body and this rollout's world "
                                            "does not answer for it (pass it in tools=)"}
    return tool.fn(*args, **kwargs)


def _bound(tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by name, as a model's tool call carries them (defaults not filled in)."""
    if tool.fn is None:
        if args:
            raise TypeError(f"tool {tool.name!r} takes keyword arguments only")
        return dict(kwargs)
    return dict(inspect.signature(tool.fn).bind(*args, **kwargs).arguments)


def current() -> Route | None:
    """The running rollout's ``Route`` (None outside a rollout)."""
    route = ROUTE.get()
    return route if isinstance(route, Route) else None


def note_answer(fault: bool) -> None:
    """Called by ``World.call`` on every answer: counts it for the running rollout."""
    route = ROUTE.get()
    if isinstance(route, Route) and route.open:
        route.answered(fault)


def executing() -> contextvars.Token[bool]:
    """Mark that ``execute=`` runs a real tool body now (so a ``@wai.tool`` it calls is not routed again)."""
    return _EXECUTING.set(True)


def done_executing(token: contextvars.Token[bool]) -> None:
    _EXECUTING.reset(token)


def in_execute() -> bool:
    """Whether ``execute=`` runs a real tool body now (a framework's hook then lets the call through)."""
    return _EXECUTING.get()


# -- threads started inside a rollout see its context ------------------------------------------------
_installed = False
_install_lock = threading.Lock()


def install_thread_context() -> None:
    """Install the two thread hooks once per process (see the module docstring)."""
    global _installed
    if _installed:
        return
    with _install_lock:
        if _installed:
            return
        start, submit = threading.Thread.start, _pool_thread.ThreadPoolExecutor.submit

        @functools.wraps(start)
        def start_in_context(self: threading.Thread) -> None:
            # a pool's worker thread lives on after the rollout: its jobs get their context from submit instead
            if ROUTE.get() is not None and getattr(self, "_target", None) is not _pool_thread._worker:
                ctx, run = contextvars.copy_context(), self.run
                self.run = functools.partial(ctx.run, run)  # type: ignore[method-assign]
            start(self)

        @functools.wraps(submit)  # type: ignore[arg-type]
        def submit_in_context(self: Any, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
            if ROUTE.get() is not None:
                return submit(self, contextvars.copy_context().run, fn, *args, **kwargs)
            return submit(self, fn, *args, **kwargs)

        threading.Thread.start = start_in_context  # type: ignore[method-assign]
        _pool_thread.ThreadPoolExecutor.submit = submit_in_context  # type: ignore[method-assign]
        _installed = True


# -- rows ---------------------------------------------------------------------------------------------
def fault_fields(route: Route | None, faults: Mapping[str, Any]) -> dict[str, int]:
    """A row's ``faults_scheduled`` / ``faults_delivered``."""
    return {"faults_scheduled": int(bool(faults)), "faults_delivered": route.faults if route is not None else 0}


def missed(row: Mapping[str, Any]) -> bool:
    """Whether a row's steps show a call of its faulted tool that the scheduled fault never answered (the call
    went around the world). A rollout that made no such call is not counted: the agent may rightly not call."""
    faults = row.get("faults") or {}
    if not row.get("faults_scheduled") or row.get("faults_delivered") or not faults:
        return False
    wanted = faults.get("tool")
    return any("tool" in s and wanted in (None, s.get("tool")) for s in row.get("steps") or ())


def undelivered(rows: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(rollouts whose scheduled fault did not reach a call the agent made, rollouts with a scheduled fault)."""
    n = m = 0
    for row in rows:
        if row.get("faults_scheduled"):
            m += 1
            n += missed(row)
    return n, m


def undelivered_warning(n: int, m: int) -> str | None:
    """The warning line of a run or a gate where ``n`` of ``m`` scheduled faults missed the agent's calls."""
    if not n:
        return None
    return f"fault not delivered in {n} of {m} rollouts: route your tools through the world ({ROUTE_FIX})"


__all__ = ["ROUTE_FIX", "Route", "current", "install_thread_context", "missed", "note_answer", "undelivered",
           "undelivered_warning"]
