"""The executor choice: ``simulate(executor=...)``, ``grade(executor=...)`` or ``wai.configure(executor=...)``.

"local" (also called "threads") runs on this machine's pool; "ray" cuts the work into shards and runs them on a
Ray cluster (``ray_address=``: "ray://head:10001", "auto", or unset to join the one this process already uses,
else ``RAY_ADDRESS``, else a fresh local instance). Ray is imported only when "ray" is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass

from whileai_core import defaults as D
from whileai_core.arguments import choice
from whileai_core.errors import InvalidArgumentType
from whileai_core.models.config import lookup


@dataclass(frozen=True)
class Executor:
    """Where one call runs: ``name`` ("local" or "ray") and, for Ray, the cluster ``address`` (None: default)."""

    name: str
    address: str | None = None

    @property
    def remote(self) -> bool:
        return self.name == "ray"


def resolve(executor: str | None = None, ray_address: str | None = None) -> Executor:
    """The executor a call runs on: its own keyword, else ``wai.context``/``wai.configure``, else "local".

    Args:
        executor: "local", "threads" (the same local pool) or "ray"; None reads the settings (default
            ``defaults.EXECUTOR``).
        ray_address: the Ray cluster to join when the executor is "ray"; None reads the settings, else Ray's
            own default (``RAY_ADDRESS``, a running local instance, or a new one).

    Returns:
        An ``Executor``; "threads" comes back as "local".

    Raises:
        InvalidArgument: ``executor`` is not one of ``defaults.EXECUTORS``.
        InvalidArgumentType: ``ray_address`` is not a string.

    Example:
        >>> resolve("threads")
        Executor(name='local', address=None)
    """
    name = executor if executor is not None else (lookup("executor")[0] or D.EXECUTOR)
    name = choice("executor", name, D.EXECUTORS)
    address = ray_address if ray_address is not None else lookup("ray_address")[0]
    if address is not None and not isinstance(address, str):
        raise InvalidArgumentType(f"ray_address= takes a Ray address such as 'ray://head:10001'; got {address!r}")
    return Executor("local" if name == "threads" else name, address if name == "ray" else None)
