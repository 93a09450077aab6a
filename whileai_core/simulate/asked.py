"""The caller's asks as situations, built when they are played: ``AskedSituations``.

``simulate(asks=[...])`` with plain strings plays one situation per distinct ask. Holding a ``Scenario`` per ask
for the whole run costs ~730 bytes a situation (its attribute dict, task id and three dicts); this sequence
keeps only the caller's strings (and, when some asks repeat, the index of each kept one, 8 bytes) and builds
a situation's ``Scenario`` when it is read, the same object ``situations.from_asks`` makes. The few read last are
kept (``cache``), so the k rollouts of one situation, pulled one after another, build it once.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument
from whileai_core.rows import stable_id
from whileai_core.simulate.situations import Scenario


def plain_asks(asks: Sequence[Any]) -> bool:
    """Whether every ask is a plain ``str`` (no dicts, no ``Scenario``): those ``AskedSituations`` takes."""
    return all(type(a) is str for a in asks)


class AskedSituations(Sequence[Scenario]):
    """The situations of plain-string asks, one per distinct ask, in ``situations.from_asks``'s order after
    simulate's de-duplication (each ask at its last place), each built when read (see the module docstring)."""

    def __init__(self, asks: list[str], *, system_prompt: str | None, tools: tuple[str, ...],
                 order: array | None = None, n: int | None = None, fields: dict[str, Any] | None = None,
                 cache: int = D.ASKED_SITUATION_CACHE) -> None:
        self.asks, self.system_prompt, self.tools, self.order = asks, system_prompt, tools, order
        whole = len(order) if order is not None else len(asks)
        self.n = whole if n is None else min(n, whole)
        self.fields = dict(fields or {})
        self.cache_size = cache
        self._cache: dict[int, Scenario] = {}

    @classmethod
    def from_asks(cls, asks: list[str], *, system_prompt: str | None, tools: tuple[str, ...]) -> AskedSituations:
        """Check every ask (an empty one is an error, as ``from_asks`` says) and keep one per distinct text: a
        repeated ask is played once, at its last place (simulate's de-duplication by task id)."""
        for i, ask in enumerate(asks):
            if not ask.strip():
                raise InvalidArgument(f"asks[{i}] is an empty message; every ask needs the user's words")
        order = None
        if len(set(asks)) != len(asks):
            last = {ask: i for i, ask in enumerate(asks)}
            order = array("q", sorted(last.values()))
        return cls(asks, system_prompt=system_prompt, tools=tools, order=order)

    def prompt(self, i: int) -> str:
        """The user's message of situation ``i`` (no ``Scenario`` built)."""
        return self.asks[self.order[i] if self.order is not None else i]

    def prompts(self) -> Iterator[str]:
        return (self.prompt(i) for i in range(self.n))

    def task_ids(self) -> Iterator[str]:
        """Every situation's task id, in order (``Scenario``'s: ``"sc-"`` + the hash of its message)."""
        return ("sc-" + stable_id(p) for p in self.prompts())

    def limited(self, n: int) -> AskedSituations:
        """The first ``n`` situations."""
        return AskedSituations(self.asks, system_prompt=self.system_prompt, tools=self.tools, order=self.order,
                               n=n, fields=self.fields, cache=self.cache_size)

    def with_fields(self, **fields: Any) -> AskedSituations:
        """The same situations, each built with ``fields`` too (``Scenario.replace(**fields)`` of each)."""
        return AskedSituations(self.asks, system_prompt=self.system_prompt, tools=self.tools, order=self.order,
                               n=self.n, fields={**self.fields, **fields}, cache=self.cache_size)

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int) -> Scenario: ...

    @overload
    def __getitem__(self, i: slice) -> list[Scenario]: ...

    def __getitem__(self, i: int | slice) -> Scenario | list[Scenario]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(f"situation {i} of {self.n}")
        scenario = self._cache.get(i)
        if scenario is None:
            scenario = Scenario(self.prompt(i), system_prompt=self.system_prompt, tools=self.tools, **self.fields)
            if len(self._cache) >= self.cache_size:
                self._cache.clear()  # cheap and bounded; a read after it builds its situation again
            self._cache[i] = scenario
        return scenario

    def __iter__(self) -> Iterator[Scenario]:
        for i in range(self.n):
            yield self[i]

    def __repr__(self) -> str:
        return f"AskedSituations({self.n} situations from {len(self.asks)} asks)"

    def __getstate__(self) -> dict[str, Any]:  # travels (Ray) as its asks, without the scenarios built here
        return {**self.__dict__, "_cache": {}}


__all__ = ["AskedSituations", "plain_asks"]
