"""``Stats``: the statistics settings that travel together (interval level, test alpha, bootstrap draws, seed).

``wai.compare(before, after, stats=wai.Stats(level=0.9, seed=3))`` is the same call as
``wai.compare(before, after, level=0.9, seed=3)``. A keyword given beside ``stats=`` must agree with it: a
keyword left at the function's default takes the ``Stats`` value, and one set to another value than the
``Stats`` holds is an error naming both (never a silent pick). Each function reads the fields it uses
(``pass_at`` runs no test, so it reads no ``alpha``): one ``Stats`` serves every call of a study.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from whileai_core.arguments import fraction, integer
from whileai_core.defaults import ALPHA, BOOTSTRAP_DRAWS, CI_LEVEL
from whileai_core.options.merge import with_option


@dataclass(frozen=True)
class Stats:
    """Interval level, test alpha, bootstrap draws and seed, validated once.

    Args:
        level: the two-sided interval level, in (0, 1). Default ``CI_LEVEL`` (0.95) in defaults.py.
        alpha: the level of each test, in (0, 1). Default ``ALPHA`` (0.05) in defaults.py.
        draws: bootstrap resamples, >= 1. Default ``BOOTSTRAP_DRAWS`` (2000) in defaults.py.
        seed: the seed of the bootstrap and permutations.

    Raises:
        InvalidArgument: a value out of range (a ``ValueError``); InvalidArgumentType: a value of the wrong type.

    Example:
        ```python
        stats = wai.Stats(level=0.9, seed=3)
        report = wai.compare(before, after, stats=stats)
        ```
    """

    level: float = CI_LEVEL
    alpha: float = ALPHA
    draws: int = BOOTSTRAP_DRAWS
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "level", fraction("level", self.level, closed=False))
        object.__setattr__(self, "alpha", fraction("alpha", self.alpha, closed=False))
        object.__setattr__(self, "draws", integer("draws", self.draws, minimum=1))
        object.__setattr__(self, "seed", integer("seed", self.seed, minimum=0))


def with_stats(stats: Stats | None, given: Mapping[str, Any], defaults: Mapping[str, Any], *,
               where: str) -> dict[str, Any]:
    """``with_option`` for ``stats=``: the settings a function runs with, ``stats``' values merged into
    ``given`` (its keywords, as called), a keyword set to another value than ``stats`` holds refused by name."""
    return with_option(stats, Stats, given, defaults, keyword="stats", where=where)
