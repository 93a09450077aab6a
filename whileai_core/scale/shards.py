"""Shards: a run cut into contiguous pieces, and the ledger that takes each piece's result exactly once.

The cut is deterministic (the same items and shard count give the same pieces on every machine) and keeps
order, so joining the results shard by shard gives the items back in their original order. A shard whose
worker died is tried again; the ledger keeps its result once however many tries report, so no row is doubled.
"""

from __future__ import annotations

from typing import Any

from whileai_core import defaults as D
from whileai_core.arguments import integer
from whileai_core.errors import ScaleError


def shard_count(n_items: int, cpus: int, *, per_cpu: int = D.SHARDS_PER_CPU) -> int:
    """How many shards ``n_items`` are cut into on a cluster of ``cpus`` CPUs.

    Args:
        n_items: how many items (situations, rows) there are.
        cpus: the cluster's CPUs.
        per_cpu: shards per CPU (default ``defaults.SHARDS_PER_CPU``).

    Returns:
        ``min(n_items, cpus * per_cpu)``, at least 1.

    Example:
        >>> shard_count(1000, 2)
        8
    """
    integer("cpus", cpus, minimum=1)
    integer("per_cpu", per_cpu, minimum=1)
    return max(1, min(integer("n_items", n_items, minimum=0), cpus * per_cpu))


def concurrency_slots(concurrency: int, n_shards: int, cpus: int) -> list[int]:
    """The run's ``concurrency`` split into the slots shards run in: one slot per shard that can run at once
    (at most ``cpus``, ``n_shards`` and ``concurrency``), sizes differing by at most one and summing to
    ``concurrency``, so the shards running at any moment never play more rollouts at once than the run allows.

    Example:
        >>> concurrency_slots(32, 8, 2)
        [16, 16]
        >>> concurrency_slots(3, 8, 4)
        [1, 1, 1]
    """
    integer("concurrency", concurrency, minimum=1)
    n = min(integer("n_shards", n_shards, minimum=1), integer("cpus", cpus, minimum=1), concurrency)
    return [len(piece) for piece in split(concurrency, n)]


def split(n_items: int, n_shards: int) -> list[range]:
    """``range(n_items)`` cut into ``n_shards`` contiguous pieces whose sizes differ by at most one.

    Example:
        >>> split(5, 2)
        [range(0, 3), range(3, 5)]
    """
    integer("n_items", n_items, minimum=0)
    n_shards = min(integer("n_shards", n_shards, minimum=1), max(1, n_items))
    size, extra = divmod(n_items, n_shards)
    out, start = [], 0
    for i in range(n_shards):
        stop = start + size + (1 if i < extra else 0)
        out.append(range(start, stop))
        start = stop
    return out


class Ledger:
    """Which shards are done and how often each was tried.

    Args:
        n_shards: how many shards the run has.
        retries: how many times a shard may be tried again after its worker died (default
            ``defaults.SHARD_RETRIES``).
    """

    def __init__(self, n_shards: int, *, retries: int = D.SHARD_RETRIES) -> None:
        self.retries = integer("retries", retries, minimum=0)
        self.attempts = [0] * integer("n_shards", n_shards, minimum=0)
        self.results: dict[int, Any] = {}
        self.failures: list[str] = []

    def start(self, shard: int, why: str | None = None) -> int:
        """Count one more try of ``shard`` (``why``: what ended the last one); returns the try's number (1 first).

        Raises:
            ScaleError: the shard was already tried ``1 + retries`` times.
        """
        if why is not None:
            self.failures.append(f"shard {shard}, try {self.attempts[shard]}: {why}")
        if self.attempts[shard] > self.retries:
            raise ScaleError(f"shard {shard} failed on all {self.attempts[shard]} tries (last: {why}); "
                             f"{len(self.results)} of {len(self.attempts)} shards finished and were kept. A worker "
                             "that keeps dying is usually out of memory: give it more, or cut the run smaller")
        self.attempts[shard] += 1
        return self.attempts[shard]

    def accept(self, shard: int, result: Any) -> bool:
        """Keep ``result`` as the shard's if it is the first to arrive; False for a late duplicate."""
        if shard in self.results:
            return False
        self.results[shard] = result
        return True

    @property
    def retried(self) -> int:
        """How many tries went beyond each shard's first."""
        return sum(max(0, a - 1) for a in self.attempts)

    @property
    def done(self) -> bool:
        return len(self.results) == len(self.attempts)

    def in_order(self) -> list[Any]:
        """The shards' results, shard 0 first."""
        return [self.results[i] for i in range(len(self.attempts))]
