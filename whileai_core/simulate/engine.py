"""Scheduling rollouts: one asyncio event loop runs every rollout in flight; rows come back as they finish.

``Engine.rows(jobs)`` takes (situation index, rollout index) jobs and yields each one's row as it finishes.
``concurrency`` workers on one event loop pull the next job from a shared iterator, so handling a finished
rollout costs O(1) whatever the run's size (no scan over pending futures). How a job runs depends on the agent:

* a model-backed agent (``ModelAgent``: it has ``acall``) and an ``async def`` agent are awaited on the loop:
  their model calls (``backend.acomplete``, aiohttp) interleave on it, with the HTTP session's connection
  limit set to ``concurrency`` (``models/http.py``);
* a synchronous agent runs in a thread pool of ``concurrency`` threads that the loop feeds.

The loop always runs in a helper thread, so ``simulate`` works the same from a script, a thread, or inside a
running event loop (Jupyter); the caller's context variables reach every rollout. It is uvloop's loop when
uvloop is installed (``http.new_loop``; ``WHILEAI_EVENT_LOOP=asyncio`` for asyncio's); the run reads the
environment (API keys) once when it starts, and collects garbage less often while it lasts (``relaxed_gc``). A ``deadline`` stops new
rollouts from starting; those in flight get ``STOP_GRACE_S`` to finish. Closing the iterator (Ctrl-C in the
caller) cancels what is in flight.

simulate's run on top of it (policies, the rows store, progress) is ``runner.Runner``; the Ray executor
(``scale/rollouts.py``) plays a run's batches of jobs in shards, each on an ``Engine`` rebuilt on the worker from
this one's ``recipe()``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from whileai_core import defaults as D
from whileai_core.models import http
from whileai_core.models.aio import async_call, stop_helper
from whileai_core.simulate.rollout import arollout, rollout
from whileai_core.simulate.situations import Scenario
from whileai_core.simulate.world import RUN_PLAN, World

log = logging.getLogger("whileai.simulate")
_DONE = object()


class _Handoff:
    """Rows from the loop thread to the caller's thread, in batches: the loop appends and wakes the caller only
    when it is not already awake, and the caller takes everything there is at each wake (under load, many rows
    per wake-up instead of a lock hand-off per row)."""

    def __init__(self) -> None:
        self.items: collections.deque[Any] = collections.deque()
        self.ready = threading.Event()
        self.wakes = 0

    def put(self, item: Any) -> None:
        self.items.append(item)
        if not self.ready.is_set():
            self.ready.set()

    def take(self) -> Iterator[Any]:
        """Every item, in order, as they come (blocks between batches)."""
        while True:
            self.ready.wait()
            self.ready.clear()
            self.wakes += 1
            while self.items:
                yield self.items.popleft()


@contextlib.contextmanager
def relaxed_gc(threshold: int = D.ENGINE_GC_THRESHOLD) -> Iterator[None]:
    """Collect generation 0 every ``threshold`` allocations instead of CPython's 700 while the block runs (a run
    allocates a few hundred short-lived objects per rollout), then put the thresholds back. A higher threshold
    the process already set, or a disabled collector, is left as it is."""
    before = gc.get_threshold()
    if not gc.isenabled() or before[0] >= threshold:
        yield
        return
    gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


class Engine:
    """Runs rollout jobs on one event loop (see the module docstring)."""

    def __init__(self, agent: Any, scenarios: Sequence[Scenario], *, seed: int, concurrency: int, run_id: str,
                 mode: str | None = None, policy: str | None = None, system_prompt: str | None = None,
                 world: World | None = None, writer: str = "template", plan: Iterable[tuple[str, int]] = (),
                 deadline: float | None = None, grace_s: float = D.STOP_GRACE_S,
                 gc_threshold: int = D.ENGINE_GC_THRESHOLD) -> None:
        self.agent, self.scenarios, self.seed = agent, scenarios, seed
        self.concurrency, self.run_id, self.mode, self.policy = concurrency, run_id, mode, policy
        self.system_prompt, self.world, self.writer, self.plan = system_prompt, world, writer, plan
        self.deadline, self.grace_s, self.gc_threshold = deadline, grace_s, gc_threshold
        self.acall = async_call(agent)
        self.started = 0  # rollouts started
        self.handed = 0  # rows handed to the caller by rows()/keyed(): one append per finished rollout (O(1))
        self.finished = 0  # rollouts finished (handed out or given to on_row)
        self.cut = False  # the deadline stopped new rollouts from starting
        self.lineage: dict[str, Any] = {}  # extra lineage stamped on every row (e.g. resumed)
        self.post: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # a last stamp (simulate's runs=)

    def recipe(self) -> dict[str, Any]:
        """What another process needs, besides the agent, the world and the situations, to build this engine
        again (``Engine.rebuilt``): the same run id, plan, lineage and stamps, so a job gives the same row there.
        The deadline travels as a wall-clock time (``time.time()``; ``time.monotonic()`` means nothing in another
        process), so a shard that starts late on a worker gets only what is left of the run's budget."""
        return {"seed": self.seed, "concurrency": self.concurrency, "run_id": self.run_id, "mode": self.mode,
                "policy": self.policy, "system_prompt": self.system_prompt, "writer": self.writer,
                "plan": self.plan, "grace_s": self.grace_s, "gc_threshold": self.gc_threshold,
                "lineage": dict(self.lineage), "post": self.post,
                "deadline_at": None if self.deadline is None else time.time() + self.deadline - time.monotonic()}

    @classmethod
    def rebuilt(cls, agent: Any, scenarios: list[Scenario], world: World | None,
                recipe: Mapping[str, Any]) -> Engine:
        """The engine of ``recipe`` (``Engine.recipe``) over ``scenarios``, with ``agent`` and ``world`` built
        where it runs (a Ray worker: the executor plays a shard's jobs on it)."""
        fields = dict(recipe)
        lineage, post, at = fields.pop("lineage"), fields.pop("post"), fields.pop("deadline_at")
        engine = cls(agent, list(scenarios), world=world, **fields,
                     deadline=None if at is None else time.monotonic() + at - time.time())
        engine.lineage.update(lineage)
        engine.post = post
        return engine

    # ---- one job -------------------------------------------------------------------------------
    def _sync_job(self, si: int, ri: int) -> dict[str, Any]:
        return self.stamp(rollout(self.agent, self.scenarios[si], rollout_index=ri, seed=self.seed,
                                   system_prompt=self.system_prompt, world=self.world, run_id=self.run_id,
                                   mode=self.mode, repeat_policy=self.policy))

    async def _async_job(self, si: int, ri: int) -> dict[str, Any]:
        assert self.acall is not None
        return self.stamp(await arollout(self.agent, self.acall, self.scenarios[si], rollout_index=ri,
                                          seed=self.seed, system_prompt=self.system_prompt, world=self.world,
                                          run_id=self.run_id, mode=self.mode, repeat_policy=self.policy))

    def stamp(self, row: dict[str, Any]) -> dict[str, Any]:
        """``row`` with this run's writer, lineage and last stamp (``post``), as every job's row gets them; a row
        rebuilt elsewhere (the Runner's cassette replays) goes through it too."""
        row["lineage"]["writer"] = self.writer
        row["lineage"].update(self.lineage)
        return row if self.post is None else self.post(row)

    # ---- the loop ------------------------------------------------------------------------------
    def _past_deadline(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.cut = True
        return self.cut

    async def _main(self, jobs: Iterator[tuple[int, int]], out: _Handoff, ctx: contextvars.Context,
                    on_row: Callable[[int, int, dict[str, Any]], None] | None) -> None:
        loop = asyncio.get_running_loop()
        pool = None if self.acall is not None else ThreadPoolExecutor(self.concurrency, "whileai-rollout")

        async def worker() -> None:
            for si, ri in jobs:  # one shared iterator: each worker takes the next job when it is free
                if self._past_deadline():
                    return
                self.started += 1
                try:
                    if pool is None:
                        row = await self._async_job(si, ri)
                    else:
                        row = await loop.run_in_executor(pool, ctx.copy().run, self._sync_job, si, ri)
                except (KeyboardInterrupt, SystemExit) as exc:  # raised by an agent: the caller stops the run
                    out.put(exc)
                    return
                self.finished += 1
                if on_row is None:
                    out.put((si, ri, row))
                else:
                    on_row(si, ri, row)

        tasks = [ctx.run(loop.create_task, worker()) for _ in range(self.concurrency)]
        try:
            if self.deadline is None:
                await asyncio.gather(*tasks)
            else:
                await self._until_deadline(tasks)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await http.close_sessions()
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)

    async def _until_deadline(self, tasks: list[asyncio.Task[None]]) -> None:
        """Wait for the workers; past the deadline, give those in flight ``grace_s`` more, then cancel them."""
        assert self.deadline is not None
        pending = set(tasks)
        while pending:
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.cut = True
                done, pending = await asyncio.wait(pending, timeout=self.grace_s)
                break
            done, pending = await asyncio.wait(pending, timeout=left)
            for t in done:
                t.result()  # a worker's unexpected error surfaces here
        for t in pending:
            t.cancel()

    def _serve(self, jobs: Iterator[tuple[int, int]], out: _Handoff, ctx: contextvars.Context,
               box: dict[str, Any], on_row: Callable[[int, int, dict[str, Any]], None] | None) -> None:
        loop = http.new_loop()
        box["loop"] = loop
        try:
            main = ctx.run(loop.create_task, self._main(jobs, out, ctx, on_row))
            box["main"] = main
            loop.run_until_complete(main)
        except asyncio.CancelledError:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread and raised there
            out.put(exc)
        finally:
            out.put(_DONE)
            loop.close()

    def rows(self, jobs: Iterable[tuple[int, int]]) -> Iterator[dict[str, Any]]:
        """Run ``jobs`` ((situation index, rollout index) pairs) and yield each row as it finishes.

        Closing the iterator early (or an exception in the caller, such as Ctrl-C) cancels the rollouts in
        flight; rows already yielded are the caller's.
        """
        for _, _, row in self.keyed(jobs):
            yield row

    def run(self, jobs: Iterable[tuple[int, int]], on_row: Callable[[int, int, dict[str, Any]], None]) -> None:
        """Run ``jobs`` and call ``on_row(situation index, rollout index, row)`` as each finishes, on the
        engine's thread (no hand-off to the caller's thread per row); returns when all are done or stopped."""
        for _ in self.keyed(jobs, on_row):  # yields nothing: on_row takes every row
            pass

    def keyed(self, jobs: Iterable[tuple[int, int]], on_row: Callable[[int, int, dict[str, Any]], None] | None = None,
              ) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """``rows``, each as (situation index, rollout index, row)."""
        ctx = contextvars.copy_context()
        ctx.run(RUN_PLAN.set, self.plan)
        ctx.run(http.connection_limit.set, self.concurrency)
        ctx.run(http.environment.set, dict(os.environ))  # keys and base URLs as they are when the run starts
        out = _Handoff()
        box: dict[str, Any] = {}
        thread = threading.Thread(target=self._serve, args=(iter(jobs), out, ctx, box, on_row),
                                  name="whileai-engine", daemon=True)
        with relaxed_gc(self.gc_threshold):  # a run allocates fast: collect less often while it lasts
            try:
                thread.start()  # inside: a Ctrl-C that lands while it starts still cancels the run below
                for item in out.take():
                    if item is _DONE:
                        break
                    if isinstance(item, BaseException):
                        raise item
                    self.handed += 1
                    yield item
            finally:
                stop_helper(thread, box, self.grace_s)


__all__ = ["Engine"]
