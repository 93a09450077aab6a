"""One function mapped over many items in shards on a Ray cluster: how ``grade(executor="ray")`` runs.

Each shard maps the function over its items in order (on ``concurrency`` threads when asked, as the local
grade does), stops at the first item that raises and hands back what it finished with the error; the caller
joins the shards in order, so the results, and what was finished before an error, are those of the local run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from whileai_core.scale.executor import Executor
from whileai_core.scale.ray_backend import check_shippable, cluster_cpus, connect, run_shards
from whileai_core.scale.shards import shard_count, split


def map_shard(fn: Callable[[Any], Any], concurrency: int, items: Sequence[Any]) -> tuple[list[Any], Exception | None]:
    """``fn`` over ``items`` in order, on a worker: (the results up to the first error, that error or None)."""
    out: list[Any] = []
    try:
        if concurrency > 1 and len(items) > 1:
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                futures = [pool.submit(fn, item) for item in items]
                try:
                    for fut in futures:
                        out.append(fut.result())
                except Exception:
                    pool.shutdown(cancel_futures=True)
                    raise
        else:
            for item in items:
                out.append(fn(item))
    except Exception as exc:  # noqa: BLE001 - handed back to the caller, who raises it after the shards before
        return out, exc
    return out, None


def map_in_shards(fn: Callable[[Any], Any], items: Sequence[Any], *, executor: Executor, concurrency: int = 1,
                  out: list[Any] | None = None, check: Mapping[str, Any] | None = None) -> list[Any]:
    """``[fn(x) for x in items]``, computed in shards on the cluster, in the items' order.

    Args:
        fn: a function of one item (shipped once; a closure goes by value).
        items: what to map over (each shard gets a contiguous run of them).
        executor: the cluster (``Executor("ray", address)``).
        concurrency: threads per shard (default 1: one item at a time).
        out: the list the results are appended to, in order (default a new one); when an item raises, every
            result before it is already in ``out``.
        check: the caller's arguments ``fn`` carries, by name, checked first so an error names the one that
            cannot travel to the workers (default: ``fn`` itself).

    Returns:
        ``out``.

    Raises:
        Exception: the first error ``fn`` raised, in item order.
        ScaleError: a shard failed on every try, or the cluster cannot be reached.
        InvalidArgumentType: what ``fn`` carries cannot be sent to the workers.

    Example:
        >>> map_in_shards(abs, [-1, 2], executor=Executor("ray"))  # doctest: +SKIP
        [1, 2]
    """
    out = [] if out is None else out
    if not items:
        return out
    ray = connect(executor.address)
    check_shippable(ray, check if check is not None else {"fn": fn})
    pieces = split(len(items), shard_count(len(items), cluster_cpus(ray)))
    ledger = run_shards(functools.partial(map_shard, fn, concurrency), [[items[i] for i in p] for p in pieces],
                        address=executor.address)
    for results, error in ledger.in_order():
        out.extend(results)
        if error is not None:
            raise error
    return out
