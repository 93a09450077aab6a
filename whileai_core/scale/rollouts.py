"""simulate on a Ray cluster: each batch of the run's rollout jobs cut into shards, each shard played by the
run's own rollout engine rebuilt on a worker.

simulate writes the situations and plans the run here, and its ``Runner`` decides which jobs to play (all of
them under the fixed policy; the probes, then the fills, under the dynamic one) and keeps every row (in memory
or in the ``output=`` file, which a rerun resumes from). ``RayRollouts`` only replaces how a batch is played:
the jobs are cut into contiguous shards, and each worker rebuilds the engine from the caller's
``Engine.recipe()`` (the same run id, plan, lineage and stamps; the agent and the world built there as simulate
builds them) and plays its jobs, so a row played there is the row the local run plays. Shards stream back as
they finish; a shard whose worker died is played again and its rows are kept once. The run's ``concurrency``
is one cap over the whole cluster: it is split into slots (``shards.concurrency_slots``), each running shard
holds one and plays with that many rollouts at once, so a model server never sees more requests in flight
than a local run would send (a user's rate limit holds when the run scales out).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai_core.scale.executor import Executor
from whileai_core.scale.ray_backend import check_shippable, cluster_cpus, connect, run_shards
from whileai_core.scale.shards import Ledger, concurrency_slots, shard_count, split

OnRow = Callable[[int, int, dict[str, Any]], None]


def play_shard(build: Callable[[Mapping[str, Any], list[Any]], Any], recipe: Mapping[str, Any],
               payload: tuple[list[Any], list[tuple[int, int]]],
               concurrency: int | None = None) -> tuple[list[tuple[int, int, dict[str, Any]]], bool]:
    """One shard, on a worker: ``build(recipe, situations)`` gives the run's engine over the shard's situations,
    which plays the shard's (situation index, rollout index) jobs with ``concurrency`` (the shard's slot of the
    run's; None: the recipe's). Returns (every (situation, rollout, row), whether the run's deadline cut the
    shard short)."""
    scenarios, jobs = payload
    engine = build(recipe if concurrency is None else {**recipe, "concurrency": concurrency}, scenarios)
    with warnings.catch_warnings():  # the caller warns once, for the whole run
        warnings.simplefilter("ignore")
        rows = list(engine.keyed(jobs))
    return rows, bool(engine.cut)


class RayRollouts:
    """Plays simulate's batches of rollout jobs in shards on a Ray cluster (``Runner.play``).

    Args:
        executor: the cluster (``Executor("ray", address)``).
        build: ``build(recipe, situations) -> engine``, run on each worker (shipped with every batch).
        check: what ``build`` carries, by name (the agent, the tools...), checked here so that an argument that
            cannot travel to the workers is refused by name before any rollout.

    Raises:
        ScaleError: Ray is not installed, or the cluster cannot be reached.
        InvalidArgumentType: an argument in ``check`` cannot be sent to the workers.
    """

    def __init__(self, executor: Executor, build: Callable[[Mapping[str, Any], list[Any]], Any],
                 check: Mapping[str, Any]) -> None:
        self.executor, self.build = executor, build
        check_shippable(connect(executor.address), {k: v for k, v in check.items() if v is not None})
        self.ledgers: list[Ledger] = []

    def player(self, engine: Any, scenarios: Sequence[Any]) -> Callable[[list[tuple[int, int]], OnRow], None]:
        """``Runner.play`` for a run over ``scenarios`` whose engine (here, on the caller) is ``engine``."""
        return functools.partial(self.play, engine, scenarios)

    def play(self, engine: Any, scenarios: Sequence[Any], jobs: list[tuple[int, int]], on_row: OnRow) -> None:
        """Play ``jobs`` in shards and call ``on_row(situation index, rollout index, row)`` on the caller for
        every row, shard by shard as each finishes (once per shard, whatever the retries); a shard cut short by
        the deadline marks ``engine.cut``, as a local run would.

        Raises:
            ScaleError: a shard failed on every try.
            Exception: whatever a rollout's engine raised on a worker (Ctrl-C cancels the shards still running).
        """
        if not jobs:
            return
        ray = connect(self.executor.address)
        payloads, where = [], []
        for piece in split(len(jobs), shard_count(len(jobs), cluster_cpus(ray))):
            part = [jobs[i] for i in piece]
            used = sorted({si for si, _ in part})
            local = {si: n for n, si in enumerate(used)}
            payloads.append(([scenarios[si] for si in used], [(local[si], ri) for si, ri in part]))
            where.append(used)

        def on_result(shard: int, result: tuple[list[tuple[int, int, dict[str, Any]]], bool]) -> None:
            rows, cut = result
            for si, ri, row in rows:
                on_row(where[shard][si], ri, row)
            if cut:
                engine.cut = True

        fn = functools.partial(play_shard, self.build, engine.recipe())
        slots = concurrency_slots(engine.concurrency, len(payloads), cluster_cpus(ray))
        self.ledgers.append(run_shards(fn, payloads, address=self.executor.address, on_result=on_result,
                                       slots=slots))

    @property
    def retried(self) -> int:
        """Shard tries beyond each shard's first, over every batch of the run."""
        return sum(ledger.retried for ledger in self.ledgers)

    @property
    def failures(self) -> list[str]:
        """What ended each try that was played again."""
        return [f for ledger in self.ledgers for f in ledger.failures]
