"""``Execution``: where and how ``simulate``'s rollouts run (pool size, executor, output file, progress, deadline).

``wai.simulate(agent, tools=tools, execution=wai.Execution(concurrency=8, output="rows.jsonl"))`` is the same
call as ``wai.simulate(agent, tools=tools, concurrency=8, output="rows.jsonl")``: these knobs change how the
rollouts are scheduled and kept, never which rows come back (same seed, same rows). A keyword set beside
``execution=`` to another value than the object holds is an error naming both (``with_option``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from whileai_core.arguments import choice, integer
from whileai_core.defaults import DEFAULT_CONCURRENCY, EXECUTORS
from whileai_core.errors import InvalidArgumentType
from whileai_core.options.merge import optional_number, optional_text

__all__ = ["Execution"]


@dataclass(frozen=True)
class Execution:
    """How ``simulate`` runs its rollouts, validated once; the rows are the same whatever these say.

    Args:
        concurrency: rollouts in flight, >= 1. Default ``DEFAULT_CONCURRENCY`` (32) in defaults.py.
        executor: ``"local"`` (``"threads"``) or ``"ray"`` (``defaults.EXECUTORS``); None: ``wai.configure``'s,
            else ``defaults.EXECUTOR``.
        ray_address: the Ray cluster for ``executor="ray"``; None: Ray's own default.
        output: a JSONL file the rows are written to as they finish, the checkpoint a rerun resumes from.
        progress: print progress lines (None: on for long runs).
        on_progress: a callback given each progress dict.
        time_budget: seconds after which no rollout starts (finished rows are kept); None or <= 0: no deadline.

    Raises:
        InvalidArgumentType: a field of the wrong type, named (a ``TypeError``); InvalidArgument: a value out of
            range or an unknown executor (a ``ValueError``).

    Example:
        ```python
        run = wai.Execution(concurrency=8, output="rows.jsonl", time_budget=600)
        data = wai.simulate(agent, tools=tools, execution=run)
        ```
    """

    concurrency: int = DEFAULT_CONCURRENCY
    executor: str | None = None
    ray_address: str | None = None
    output: str | os.PathLike[str] | None = None
    progress: bool | None = None
    on_progress: Callable[[dict[str, Any]], None] | None = None
    time_budget: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "concurrency", integer("concurrency", self.concurrency, minimum=1))
        executor = optional_text("Execution", "executor", self.executor)
        object.__setattr__(self, "executor", None if executor is None else choice("executor", executor, EXECUTORS))
        optional_text("Execution", "ray_address", self.ray_address)
        optional_text("Execution", "output", self.output, path=True)
        if self.progress is not None and not isinstance(self.progress, bool):
            raise InvalidArgumentType(f"Execution(progress=...) takes True, False or None; got "
                                      f"{type(self.progress).__name__}")
        if self.on_progress is not None and not callable(self.on_progress):
            raise InvalidArgumentType(f"Execution(on_progress=...) takes a callable or None; got "
                                      f"{type(self.on_progress).__name__}")
        optional_number("Execution", "time_budget", self.time_budget)
