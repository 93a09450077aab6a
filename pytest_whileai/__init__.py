"""pytest plugin for whileai: agent scenarios as tests, and a paired regression gate against a stored baseline.

``from pytest_whileai import scenarios`` is the decorator form of ``@pytest.mark.wai_scenarios``;
``compare_documents`` is the gate between two stored run documents, outside pytest. Both load lazily.
"""

from __future__ import annotations

from typing import Any

_LAZY = {"scenarios": ("pytest_whileai.markers", "scenarios"),
         "compare_documents": ("whileai_core.gate.compare", "compare_documents")}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'pytest_whileai' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
