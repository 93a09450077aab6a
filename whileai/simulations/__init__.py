"""``whileai.simulations``: the SDK's module path for the full namespace (``import whileai.simulations as wai``).

Not a second implementation: every name resolves through ``whileai``'s lazy table (the same objects, loaded on
first use).
``whileai.simulations.defaults`` is ``whileai_core.defaults`` itself.
"""

from __future__ import annotations

from typing import Any

import whileai as _wai

__all__ = list(_wai.__all__)  # the same names as whileai


def __getattr__(name: str) -> Any:
    try:
        value = getattr(_wai, name)
    except AttributeError:
        raise AttributeError(f"module 'whileai.simulations' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
