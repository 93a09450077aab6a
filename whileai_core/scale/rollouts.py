"""simulate on a Ray cluster: the situations cut into shards, each shard played by the normal local simulate.

The caller writes the situations once (deterministic from the seed) and plans the run; each worker calls the
public ``simulate`` on its shard's situations (``asks=``, the same seed, k, policy and judge), so a rollout
there is the same code as a rollout here. What a row would otherwise take from the shard instead of the whole
run is handed over: the run's id and writer (set on every row's lineage) and the run's plan (the agent sees
it through ``in_plan``, so a stand-in agent spoils the same rollouts). Sharding by situation keeps the dynamic
policy's per-situation decision whole. Shards stream back as they finish; a shard whose worker died is played
again and kept once.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai_core.scale.executor import Executor
from whileai_core.scale.ray_backend import check_shippable, cluster_cpus, connect, run_shards
from whileai_core.scale.shards import Ledger, shard_count, split


def plain_agent(agent: Any) -> bool:
    """A user's own callable (not a model string or a backend object, which each worker resolves itself)."""
    return callable(agent) and not isinstance(agent, str) and not callable(getattr(agent, "complete", None))


def play_shard(simulate: Callable[..., Any], call: Mapping[str, Any], plan: tuple[tuple[str, int], ...],
               run_id: str, writer: str, in_plan: Callable[[Any, Any], Any],
               scenarios: Sequence[Any]) -> list[dict[str, Any]]:
    """One shard, on a worker: ``simulate(**call, asks=scenarios)`` with the whole run's plan, id and writer."""
    agent = call["agent"]
    if plain_agent(agent):
        agent = in_plan(agent, plan)
    with warnings.catch_warnings():  # the caller warns once, for the whole run
        warnings.simplefilter("ignore")
        data = simulate(**{**call, "agent": agent}, asks=list(scenarios), budget=len(scenarios) * call["repeats"],
                        progress=False, executor="local")
    rows = list(data.rows)
    for row in rows:
        row["lineage"].update(run_id=run_id, writer=writer)
    return rows


def simulate_in_shards(simulate: Callable[..., Any], call: Mapping[str, Any], scenarios: Sequence[Any], *,
                       plan: tuple[tuple[str, int], ...], run_id: str, writer: str,
                       in_plan: Callable[[Any, Any], Any], executor: Executor,
                       on_rows: Callable[[list[dict[str, Any]]], None] | None = None) -> tuple[list[dict[str, Any]], Ledger]:
    """Every rollout of ``scenarios`` × k, played in shards on the cluster; rows in the local run's order.

    Args:
        simulate: the public ``simulate`` (each worker calls it on one shard).
        call: simulate's keywords for a shard (agent, tools, system_prompt, mode, repeats, repeat_policy,
            seed, concurrency, probe, judge, max_turns, cache); ``repeats`` is required.
        scenarios: the run's situations, written once by the caller.
        plan: the run's planned (task_id, rollout_index) pairs.
        run_id: the run's id, set on every row's lineage.
        writer: who wrote the situations ("template", "asks", "model:..."), set on every row's lineage.
        in_plan: wraps a user's agent so it sees ``plan`` as the run's plan.
        executor: the cluster (``Executor("ray", address)``).
        on_rows: called on the caller with each shard's rows as that shard finishes (e.g. to append them to a
            checkpoint file), once per shard whatever the retries.

    Returns:
        (rows, ledger): the rows ordered by situation then rollout index, and the shards' ledger.

    Raises:
        ScaleError: a shard failed on every try, or the cluster cannot be reached.
        InvalidArgumentType: an argument cannot be sent to the workers (e.g. a backend object as the agent).
    """
    ray = connect(executor.address)
    check_shippable(ray, {k: v for k, v in call.items() if v is not None})
    pieces = split(len(scenarios), shard_count(len(scenarios), cluster_cpus(ray)))
    fn = functools.partial(play_shard, simulate, dict(call), plan, run_id, writer, in_plan)
    payloads = [[scenarios[i] for i in piece] for piece in pieces]
    ledger = run_shards(fn, payloads, address=executor.address,
                        on_result=None if on_rows is None else lambda _i, rows: on_rows(rows))
    return [row for shard in ledger.in_order() for row in shard], ledger
