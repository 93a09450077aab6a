"""Adapters: agents built on frameworks run as whileai agents (``wai.agent(obj)``; docs/agents.md).

``agent(obj)`` picks the adapter by the object's type (its module, so no framework is imported to find out):
an OpenAI Agents SDK ``Agent``, a LangGraph compiled graph, a pydantic-ai ``Agent``, a smolagents
``ToolCallingAgent`` / ``CodeAgent``, or an ``AgentAdapter`` already. ``register_adapter`` adds one for a
framework not listed. MCP servers' tools: ``adapters.mcp``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from whileai_core.adapters.base import AgentAdapter
from whileai_core.errors import InvalidArgumentType

#: (detector module, adapter class name) per framework, in the order they are tried
_BUILTIN = (("whileai_core.adapters.openai_agents", "OpenAIAgentsAdapter"),
            ("whileai_core.adapters.langgraph", "LangGraphAdapter"),
            ("whileai_core.adapters.pydantic_ai", "PydanticAIAdapter"),
            ("whileai_core.adapters.smolagents", "SmolagentsAdapter"))
_FRAMEWORK_MODULES = ("agents.", "langgraph.", "langchain", "pydantic_ai.", "smolagents.")
_registered: list[tuple[Callable[[Any], bool], Callable[..., AgentAdapter]]] = []


def register_adapter(detect: Callable[[Any], bool], adapter: Callable[..., AgentAdapter]) -> None:
    """Make ``wai.agent(obj)`` use ``adapter(obj)`` for every object ``detect(obj)`` is true of (tried first).

    Args:
        detect: ``detect(obj) -> bool``: whether the adapter takes this object.
        adapter: ``adapter(obj, **options) -> AgentAdapter`` (an ``AgentAdapter`` subclass).

    Returns:
        None; ``simulate(obj)``, ``wai_eval.run(obj)`` and ``wai.agent(obj)`` use it from now on in this process.

    Raises:
        InvalidArgumentType: ``detect`` or ``adapter`` is not callable (a ``TypeError``).

    Example:
        ```python
        wai.register_adapter(lambda obj: isinstance(obj, MyAgent), MyAdapter)
        ```
    """
    if not callable(detect) or not callable(adapter):
        raise InvalidArgumentType("register_adapter(detect, adapter) takes two callables: detect(obj) -> bool and "
                                  "an AgentAdapter subclass")
    _registered.insert(0, (detect, adapter))


def is_framework_agent(obj: Any) -> bool:
    """Whether ``obj`` is an adapter or an object of a framework ``agent`` knows (without importing any)."""
    if isinstance(obj, AgentAdapter) or any(detect(obj) for detect, _ in _registered):
        return True
    module = type(obj).__module__ or ""
    if not any(module.startswith(m) for m in _FRAMEWORK_MODULES) or callable(getattr(obj, "complete", None)):
        return False  # the cheap test first: most agents are plain functions
    return any(importlib.import_module(m).detect(obj) for m, _ in _BUILTIN)


def agent(obj: Any, **options: Any) -> AgentAdapter:
    """The whileai agent of a framework's agent object.

    Args:
        obj: an OpenAI Agents SDK ``Agent``, a LangGraph compiled graph (``create_react_agent(...)`` or your own
            ``StateGraph(...).compile()`` with a ``messages`` state), a pydantic-ai ``Agent``, a smolagents
            ``ToolCallingAgent``, or an ``AgentAdapter``.
        **options: the adapter's own keywords (``max_turns=`` for the Agents SDK, ``tools=`` for a graph, ...).

    Returns:
        An ``AgentAdapter``: pass it (or ``obj`` itself) to ``simulate`` or ``wai_eval.run``.

    Raises:
        InvalidArgumentType: no adapter knows ``obj`` (a ``TypeError``).
        MissingExtra: the framework's package is not installed.

    Example:
        ```python
        data = wai.simulate(wai.agent(my_openai_agents_agent), simulator=False, budget=40)
        ```
    """
    if isinstance(obj, AgentAdapter):
        return obj
    for detect, adapter in _registered:
        if detect(obj):
            return adapter(obj, **options)
    for module, cls in _BUILTIN:
        mod = importlib.import_module(module)
        if mod.detect(obj):
            return getattr(mod, cls)(obj, **options)
    raise InvalidArgumentType(f"no adapter knows {type(obj).__module__}.{type(obj).__name__}; whileai adapts OpenAI "
                              "Agents SDK, LangGraph, pydantic-ai and smolagents agents; write one with "
                              "wai.AgentAdapter and wai.register_adapter (docs/agents.md)")


__all__ = ["AgentAdapter", "agent", "is_framework_agent", "register_adapter"]
