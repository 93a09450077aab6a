"""What every model backend takes and returns, provider-neutral: the ``Backend`` protocol the engine, the judges
and the writer depend on, the ``Completion`` and ``ToolCall`` a call returns, and ``tool_schemas`` (``tools=``
normalised to OpenAI function dicts). The providers live one per module (``openai``, ``endpoint``, ``ollama``,
``anthropic``) over the shared HTTP base (``transport``); ``specs`` turns a model string into one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from whileai_core.errors import InvalidArgumentType
from whileai_core.rows import json_encoder
from whileai_core.tools import function_spec, json_schema_types, model_name
from whileai_core.tools import tool as make_tool

#: ``json.dumps(x, ensure_ascii=False)``, its C encoder built once (each tool call's arguments go through it)
_to_json = json_encoder(ensure_ascii=False)


# --------------------------------------------------------------------------------------------------
# Provider-neutral results
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asked for. ``arguments`` is a dict, or the raw string when it was not JSON."""

    id: str
    name: str
    arguments: Any
    arguments_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments,
                "arguments_error": self.arguments_error}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolCall:
        return cls(str(d["id"]), str(d["name"]), d.get("arguments"), d.get("arguments_error"))


@dataclass(frozen=True)
class Completion:
    """One model reply: text, tool calls, why it stopped (stop|length|tool_calls), token usage."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Mapping[str, int] = field(default_factory=dict)
    model: str = ""
    cached: bool = False
    attempts: int = 1
    waits: tuple[float, ...] = ()  # seconds slept before each retry (Retry-After or backoff)

    def message(self) -> dict[str, Any]:
        """The reply as an OpenAI assistant message (tool-call arguments as JSON strings)."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.text or ""}
        if self.tool_calls:
            msg["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name,
                              "arguments": c.arguments if isinstance(c.arguments, str)
                              else _to_json(c.arguments)}}
                for c in self.tool_calls
            ]
        return msg

    def to_dict(self) -> dict[str, Any]:
        """The replayable part (what a cassette stores): no timing, no retry history."""
        return {"text": self.text, "tool_calls": [c.to_dict() for c in self.tool_calls],
                "finish_reason": self.finish_reason, "usage": dict(self.usage), "model": self.model}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, cached: bool = False) -> Completion:
        return cls(text=str(d.get("text") or ""),
                   tool_calls=tuple(ToolCall.from_dict(c) for c in d.get("tool_calls") or ()),
                   finish_reason=str(d.get("finish_reason") or "stop"), usage=dict(d.get("usage") or {}),
                   model=str(d.get("model") or ""), cached=cached, attempts=0 if cached else 1)

    def __str__(self) -> str:
        calls = ", ".join(c.name for c in self.tool_calls) or "none"
        head = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        return (f"Completion({self.finish_reason}, tool_calls={calls}, text={head!r}, "
                f"attempts={self.attempts}{', cached' if self.cached else ''})")


_new = object.__new__


def built(cls: type[Any], **values: Any) -> Any:
    """``cls(**values)`` for a frozen dataclass (``Completion``, ``ToolCall``) given every field in order, without
    its ``__init__``'s ``object.__setattr__`` per field (a reply parsed per model call, two a rollout): the same
    object, compared, printed and pickled the same (tests/simulate/test_fast_paths.py)."""
    made = _new(cls)
    made.__dict__.update(values)
    return made


@runtime_checkable
class Backend(Protocol):
    """What the rest of whileai asks of a model backend: a spec string naming it, the name a cassette keys on,
    and one chat call, from a thread (``complete``) or on an event loop (``acomplete``)."""

    @property
    def spec(self) -> str: ...

    @property
    def cache_name(self) -> str: ...

    def complete(self, messages: Sequence[Mapping[str, Any]], *, tools: Any = None,
                 temperature: float = ..., max_tokens: int = ..., trial: int = 0, cache: Any = None,
                 extra: Mapping[str, Any] | None = None) -> Completion: ...

    async def acomplete(self, messages: Sequence[Mapping[str, Any]], *, tools: Any = None,
                        temperature: float = ..., max_tokens: int = ..., trial: int = 0, cache: Any = None,
                        extra: Mapping[str, Any] | None = None) -> Completion: ...


def _is_backend(value: Any) -> bool:
    """A backend object (``complete`` and a ``spec`` string), a user's own included (no subclassing needed)."""
    return callable(getattr(value, "complete", None)) and isinstance(getattr(value, "spec", None), str)


# --------------------------------------------------------------------------------------------------
# Tool schemas
# --------------------------------------------------------------------------------------------------
def tool_schemas(tools: Any) -> list[dict[str, Any]]:
    """Normalise ``tools=`` to OpenAI function dicts: ``Tool`` objects (``.schema``), OpenAI dicts,
    bare ``{"name","parameters"}`` dicts, Anthropic ``{"name","input_schema"}`` dicts, or plain functions.
    Names are the model-facing ones (``tools.model_name``: ``math.factorial`` -> ``math_factorial``) and type
    names JSON Schema's (``tools.json_schema_types``: BFCL's ``"dict"`` -> ``"object"``)."""
    if tools is None:
        return []
    if isinstance(tools, (Mapping, str)) or not isinstance(tools, Sequence):
        raise InvalidArgumentType(f"tools= takes a list of @wai.tool functions or OpenAI function schemas; got {type(tools).__name__}")
    out: list[dict[str, Any]] = []
    for i, t in enumerate(tools):
        schema = getattr(t, "schema", None)
        if isinstance(schema, Mapping):
            out.append(dict(schema))
        elif isinstance(t, Mapping):
            if isinstance(t.get("function"), Mapping) and "name" in t["function"]:
                fn = dict(t["function"])
                fn["name"] = model_name(fn["name"])
                if "parameters" in fn:
                    fn["parameters"] = json_schema_types(fn["parameters"])
                out.append({**t, "function": fn})
            elif "name" in t and (spec := function_spec(t)) is not None:
                spec["name"] = model_name(spec["name"])
                spec["parameters"] = json_schema_types(spec["parameters"]) or {"type": "object", "properties": {}}
                out.append({"type": "function", "function": spec})
            else:
                raise InvalidArgumentType(f"tools[{i}] is a dict without 'function' or 'name'; pass an OpenAI function schema")
        elif callable(t):
            out.append(dict(make_tool(t).schema))
        else:
            raise InvalidArgumentType(
                f"tools[{i}] is {type(t).__name__}; tools= takes @wai.tool functions or OpenAI function schemas (dicts)")
    return out


def _schema_name(schema: Mapping[str, Any]) -> str:
    return str((schema.get("function") or {}).get("name", ""))


__all__ = ['Backend', 'Completion', 'ToolCall', 'tool_schemas']
