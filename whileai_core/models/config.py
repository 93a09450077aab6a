"""Where models come from: ``wai.configure``, ``with wai.context(...)``, ``wai.settings``.

Precedence, highest first: the call's own keyword (``simulate(agent=...)``, ``Judge(model=...)``), the
innermost active ``context(...)``, ``configure(...)``, the environment (``WHILEAI_AGENT``, ``WHILEAI_JUDGE``,
``WHILEAI_SIMULATOR``, ``WHILEAI_USER_MODEL``), then nothing (the caller decides its default).

Values are validated by the call that took them, and atomically: one bad value changes nothing.
Keys are never stored here; a backend reads its key from the environment or its own ``api_key=``.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from whileai_core.arguments import choice
from whileai_core.defaults import EXECUTORS
from whileai_core.errors import InvalidArgument, InvalidArgumentType

#: model roles, and the environment variable read for each when nothing else is set.
ROLES = ("agent", "judge", "simulator", "user_model")
ENV_VARS = {"agent": "WHILEAI_AGENT", "judge": "WHILEAI_JUDGE", "simulator": "WHILEAI_SIMULATOR",
            "user_model": "WHILEAI_USER_MODEL"}
#: where rollouts and grading run (``whileai_core.scale``): the executor and, for Ray, the cluster address
SCALE_OPTIONS = ("executor", "ray_address")
OPTIONS = (*ROLES, "cache", *SCALE_OPTIONS)

_UNSET: Any = object()
_lock = threading.Lock()
_configured: dict[str, Any] = {}
_overlays: contextvars.ContextVar[tuple[dict[str, Any], ...]] = contextvars.ContextVar("whileai_overlays", default=())


def _validate(values: Mapping[str, Any], *, call: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name not in OPTIONS:
            raise InvalidArgumentType(f"{call}() got unexpected keyword argument {name!r}; it takes {', '.join(OPTIONS)}")
        if value is None:
            out[name] = None
            continue
        if name == "cache":
            if value is False or (callable(getattr(value, "get", None)) and callable(getattr(value, "put", None))):
                out[name] = value
                continue
            raise InvalidArgumentType(f"cache= takes a whileai Cassette (wai cache.Cassette(path, mode=...)), False or None; "
                            f"got {type(value).__name__}")
        if name == "executor":
            out[name] = choice("executor", value, EXECUTORS)
            continue
        if name == "ray_address":
            if not isinstance(value, str) or not value.strip():
                raise InvalidArgumentType(f"ray_address= takes a Ray address such as 'ray://head:10001' or 'auto'; "
                                          f"got {value!r}")
            out[name] = value.strip()
            continue
        if name == "simulator" and value is False:
            out[name] = False  # the offline template writer
            continue
        if isinstance(value, str):
            from whileai_core.models.specs import spec_problem

            problem = spec_problem(value, role=name)
            if problem:
                raise InvalidArgument(problem)
            out[name] = value.strip()
            continue
        if callable(value) or callable(getattr(value, "complete", None)):
            out[name] = value
            continue
        raise InvalidArgumentType(f"{name}= takes a model string such as 'openai:gpt-4.1-mini', a backend object "
                        f"(wai.OpenAI(...)) or a callable; got {type(value).__name__}")
    return out


def configure(**options: Any) -> Settings:
    """Set process-wide defaults: ``agent=, judge=, simulator=, user_model=`` (model strings, backends or
    callables; None unsets), ``cache=`` (a ``Cassette``), ``executor=`` ("local", "threads" or "ray": where
    ``simulate`` and ``grade`` run, docs/scale.md) and ``ray_address=`` (e.g. "ray://head:10001").

    Returns:
        The process-wide ``settings``.

    Raises:
        InvalidArgumentType: an unknown option name (a ``TypeError``); the message lists the known ones.

    Example:
        ```python
        wai.configure(judge="openai:gpt-4.1-mini")   # every Judge() without a model uses it
        ```
    """
    checked = _validate(options, call="configure")
    with _lock:
        for k, v in checked.items():
            if v is None:
                _configured.pop(k, None)
            else:
                _configured[k] = v
    return settings


@contextlib.contextmanager
def context(**options: Any) -> Iterator[Settings]:
    """Override settings inside a ``with`` block (this thread / task only); same names as ``configure``.

    A value of None inside a context hides an outer value for that block.

    Returns:
        A context manager yielding the settings in force inside the block.

    Raises:
        InvalidArgumentType: an unknown option name (a ``TypeError``); the message lists the known ones.

    Example:
        ```python
        with wai.context(judge=None):
            scored = data.grade(judge=my_judge)
        ```
    """
    checked = _validate(options, call="context")
    token = _overlays.set((*_overlays.get(), checked))
    try:
        yield settings
    finally:
        _overlays.reset(token)


def reset() -> None:
    """Forget everything ``configure`` set (tests use this)."""
    with _lock:
        _configured.clear()


def lookup(name: str, explicit: Any = _UNSET) -> tuple[Any, str]:
    """(value, source) for option ``name``: source is call, context, configure, env:<VAR> or unset."""
    if name not in OPTIONS:
        raise KeyError(f"unknown setting {name!r}; settings are {', '.join(OPTIONS)}")
    if explicit is not _UNSET and explicit is not None:
        return explicit, "call"
    for overlay in reversed(_overlays.get()):
        if name in overlay:
            value = overlay[name]
            return (value, "context") if value is not None else (None, "unset")
    with _lock:
        if name in _configured:
            return _configured[name], "configure"
    var = ENV_VARS.get(name)
    if var:
        raw = os.environ.get(var, "").strip()
        if raw:
            if name == "simulator" and raw.lower() in ("false", "0", "offline", "template"):
                return False, f"env:{var}"
            from whileai_core.models.specs import spec_problem

            problem = spec_problem(raw, role=name)
            if problem:
                raise InvalidArgument(f"environment variable {var}={raw!r} is not a model spec: {problem}")
            return raw, f"env:{var}"
    return None, "unset"


def get(name: str, explicit: Any = _UNSET) -> Any:
    """The effective value of option ``name`` (see ``lookup``)."""
    return lookup(name, explicit)[0]


resolve = get  # the name simulate() asks for


def _describe(value: Any) -> str:
    if value is None:
        return "unset"
    if value is False:
        return "False"
    if isinstance(value, str):
        return value
    spec = getattr(value, "spec", None)
    if isinstance(spec, str):
        return repr(value)  # backend reprs name the key source, never the key
    if hasattr(value, "mode") and hasattr(value, "path"):
        return f"Cassette({str(value.path)!r}, mode={value.mode!r})"
    return getattr(value, "__name__", type(value).__name__)


class Settings:
    """A live, read-only view of the effective settings: ``wai.settings.agent``, ``repr(wai.settings)``."""

    def __getattr__(self, name: str) -> Any:
        if name in OPTIONS:
            return get(name)
        raise AttributeError(f"settings has no {name!r}; settings are {', '.join(OPTIONS)}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"settings is read-only; use wai.configure({name}=...) or wai.context({name}=...)")

    def source(self, name: str) -> str:
        """Where the value of ``name`` comes from: call, context, configure, env:<VAR> or unset."""
        return lookup(name)[1]

    def to_dict(self) -> dict[str, dict[str, str]]:
        out = {}
        for name in OPTIONS:
            value, src = lookup(name)
            out[name] = {"value": _describe(value), "source": src}
        return out

    def __repr__(self) -> str:
        parts = []
        for name, d in self.to_dict().items():
            parts.append(f"{name}={d['value']}" + (f" ({d['source']})" if d["source"] != "unset" else ""))
        return "Settings(" + ", ".join(parts) + ")"

    __str__ = __repr__


settings = Settings()

__all__ = ["ENV_VARS", "OPTIONS", "ROLES", "Settings", "configure", "context", "get", "lookup", "reset", "resolve", "settings"]
