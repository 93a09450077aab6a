"""Model calls on one event loop, for callers that are not on one: ``async_call`` and ``as_finished``.

``async_call(obj)`` is the coroutine function that plays ``obj`` on a loop (its ``acall``, or ``obj`` itself when
it is ``async def``), or None for a synchronous callable. ``as_finished(call, items, concurrency=c)`` awaits
``call(item)`` for every item on one fresh event loop in a helper thread, ``c`` worker coroutines pulling the
next item from one shared iterator (O(1) per finished item, no future per item made up front), and yields
``(index, result)`` to the caller's thread as each finishes. The helper thread means it works the same from a
script, a worker thread, or inside a running event loop (Jupyter). The caller's context variables reach every
call, the HTTP session's connection limit is ``c`` (``models/http.py``), a call that must block
(``asyncio.to_thread``, e.g. a backend without ``acomplete``) gets at most ``c`` threads, and the loop's session
is closed when the run ends. The first call that raises stops the run: the calls in flight are cancelled and the error is
raised in the caller's thread after every result that finished before it. Closing the iterator (Ctrl-C in the
caller) cancels the calls in flight.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import queue
import threading
from collections.abc import Callable, Coroutine, Generator, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from whileai_core.defaults import STOP_GRACE_S
from whileai_core.models import http

_DONE = object()
_RAISED = -1  # the index that marks an error on the hand-off queue


def async_call(obj: Any) -> Callable[[Any], Any] | None:
    """The coroutine function that plays ``obj`` on a loop, or None when ``obj`` is synchronous.

    Args:
        obj: an agent or a judge: an object with an ``async def acall``, an ``async def`` function, or an object
            whose ``__call__`` is ``async def``.

    Returns:
        ``obj.acall``, or ``obj`` itself when it is a coroutine function; None for a plain callable.

    Example:
        ```python
        async def judge(row): return 1.0
        assert async_call(judge) is judge and async_call(lambda row: 1.0) is None
        ```
    """
    acall = getattr(obj, "acall", None)
    if callable(acall) and inspect.iscoroutinefunction(acall):
        return acall
    if inspect.iscoroutinefunction(obj) or (callable(obj) and inspect.iscoroutinefunction(type(obj).__call__)):
        return obj
    return None


async def _main(call: Callable[[Any], Coroutine[Any, Any, Any]], jobs: Iterator[tuple[int, Any]], workers: int,
                out: queue.SimpleQueue[Any], box: dict[str, Any]) -> None:
    async def worker() -> None:
        for k, item in jobs:  # one shared iterator: each worker takes the next item when it is free
            if box.get("stop"):
                return
            out.put((k, await call(item)))

    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await http.close_sessions()


def _serve(call: Callable[[Any], Coroutine[Any, Any, Any]], jobs: Iterator[tuple[int, Any]], workers: int,
           out: queue.SimpleQueue[Any], ctx: contextvars.Context, box: dict[str, Any]) -> None:
    loop = http.new_loop()
    # a call that must block (a backend without ``acomplete``: asyncio.to_thread) gets ``workers`` threads, made
    # only when one is first needed, named after the helper thread
    loop.set_default_executor(ThreadPoolExecutor(workers, thread_name_prefix=threading.current_thread().name))
    try:
        main = ctx.run(loop.create_task, _main(call, jobs, workers, out, box))
        box["loop"], box["main"] = loop, main
        loop.run_until_complete(main)
    except asyncio.CancelledError:
        pass
    except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread and raised there
        out.put((_RAISED, exc))
    finally:
        out.put(_DONE)
        loop.close()


def as_finished(call: Callable[[Any], Coroutine[Any, Any, Any]], items: Iterable[Any], *, concurrency: int,
                name: str = "whileai-loop", grace_s: float = STOP_GRACE_S) -> Generator[tuple[int, Any], None, None]:
    """``await call(item)`` for every item on one event loop in a helper thread; yields ``(index, result)``
    as each finishes (see the module docstring).

    Args:
        call: a coroutine function of one item (e.g. what ``async_call`` returned).
        items: what to call it on; read lazily, one item per free worker.
        concurrency: the worker coroutines, and the HTTP session's connection limit.
        name: the helper thread's name (default "whileai-loop").
        grace_s: how long closing the iterator waits for the helper thread to wind down (default
            ``defaults.STOP_GRACE_S``).

    Returns:
        An iterator of ``(index in items, result)`` in the order the calls finish. Close it
        (``contextlib.closing``) when the caller may stop early: an exception in the caller's loop body leaves a
        generator open until it is collected.

    Raises:
        Exception: the first error a call raised, after every result that finished before it was yielded.

    Example:
        ```python
        async def double(x): return 2 * x
        assert sorted(as_finished(double, [1, 2, 3], concurrency=2)) == [(0, 2), (1, 4), (2, 6)]
        ```
    """
    ctx = contextvars.copy_context()  # the caller's context variables (wai.context, the configured models)
    ctx.run(http.connection_limit.set, concurrency)
    out: queue.SimpleQueue[Any] = queue.SimpleQueue()
    box: dict[str, Any] = {}
    thread = threading.Thread(target=_serve, args=(call, enumerate(items), concurrency, out, ctx, box),
                              name=name, daemon=True)
    try:
        thread.start()  # in the try: a Ctrl-C that lands while the thread starts still stops it
        while (got := out.get()) is not _DONE:
            if got[0] == _RAISED:
                raise got[1]
            yield got
    finally:
        box["stop"] = True  # no new call starts, even before the loop's main task exists
        stop_helper(thread, box, grace_s)


def stop_helper(thread: threading.Thread, box: dict[str, Any], grace_s: float) -> None:
    """Cancel what a helper thread's loop runs (``box["loop"]`` and its ``box["main"]`` task, once they exist)
    and wait up to ``grace_s`` seconds for the thread to end (``as_finished`` and the rollout engine)."""
    loop, main = box.get("loop"), box.get("main")
    if thread.is_alive() and loop is not None and main is not None:
        try:
            loop.call_soon_threadsafe(main.cancel)
        except RuntimeError:  # the loop closed in between
            pass
    thread.join(grace_s)


__all__ = ["as_finished", "async_call", "stop_helper"]
