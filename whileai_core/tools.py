"""Tools: a Python function becomes an OpenAI function-calling schema (``@wai.tool``).

The signature is the schema: annotations give types, defaults make a parameter optional, the docstring's
first paragraph is the description and a Google-style ``Args:`` block describes each parameter.
Schema dicts in OpenAI (``{"type": "function", "function": {...}}``), bare (``{"name", "description",
"parameters"}``) and Anthropic (``{"name", "description", "input_schema"}``) shapes are accepted too.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin

from whileai_core.defaults import TOOL_DESCRIPTION_MAX_CHARS as DESCRIPTION_MAX_CHARS
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.errors import UnsupportedAnnotation as _Unsupported

_SIMPLE: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
_ARG_HEADERS = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$")
_OTHER_HEADERS = re.compile(r"^\s*(Returns|Return|Raises|Yields|Examples?|Notes?)\s*:\s*$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def _json_type_of_values(values: Sequence[Any]) -> str | None:
    kinds = {_SIMPLE.get(type(v)) for v in values}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None


def annotation_schema(annotation: Any) -> dict[str, Any]:
    """JSON schema for one annotation; raises ``_Unsupported`` for a type it cannot describe."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    if annotation in _SIMPLE:
        return {"type": _SIMPLE[annotation]}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = [m.value for m in annotation]
        out: dict[str, Any] = {"enum": values}
        kind = _json_type_of_values(values)
        if kind:
            out["type"] = kind
        return out
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is typing.Annotated:
        base = annotation_schema(args[0])
        notes = [a for a in args[1:] if isinstance(a, str)]
        if notes:
            base["description"] = notes[0]
        return base
    if origin is Literal:
        values = list(args)
        out = {"enum": values}
        kind = _json_type_of_values(values)
        if kind:
            out["type"] = kind
        return out
    if origin is Union or (hasattr(types, "UnionType") and isinstance(annotation, types.UnionType)):
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            return annotation_schema(members[0])
        return {"anyOf": [annotation_schema(m) for m in members]}
    if annotation in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, Sequence,
                                                                  typing.Sequence):
        out = {"type": "array"}
        item_args = [a for a in args if a is not Ellipsis]
        if item_args:
            out["items"] = annotation_schema(item_args[0])
        return out
    if annotation in (dict, Mapping) or origin in (dict, Mapping, typing.Mapping):
        return {"type": "object"}
    if dataclasses.is_dataclass(annotation) or _is_typeddict(annotation):
        return {"type": "object"}
    model_schema = getattr(annotation, "model_json_schema", None)
    if callable(model_schema):
        try:
            return dict(model_schema())
        except Exception:
            return {"type": "object"}
    raise _Unsupported(repr(annotation))


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__annotations__") and hasattr(
        tp, "__total__")


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines) and lines[i].strip() and not _ARG_HEADERS.match(lines[i]):
        summary.append(lines[i].strip())
        i += 1
    in_args = False
    current: str | None = None
    for line in lines[i:]:
        if _ARG_HEADERS.match(line):
            in_args, current = True, None
            continue
        if _OTHER_HEADERS.match(line):
            in_args, current = False, None
            continue
        if not in_args or not line.strip():
            continue
        m = re.match(r"^\s*\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(.*)$", line)
        if m and (len(line) - len(line.lstrip())) <= 4:
            current = m.group(1)
            params[current] = m.group(3).strip()
        elif current:
            params[current] = (params[current] + " " + line.strip()).strip()
    return " ".join(summary)[:DESCRIPTION_MAX_CHARS], params


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return list(value)
    return None


def function_schema(fn: Callable[..., Any], *, name: str | None = None,
                    description: str | None = None) -> dict[str, Any]:
    """The ``parameters`` JSON schema plus name and description for a Python function."""
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        hints = dict(getattr(fn, "__annotations__", {}))
    summary, param_docs = _parse_docstring(fn.__doc__)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in sig.parameters.items():
        if pname in ("self", "cls") or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, param.annotation)
        try:
            schema = annotation_schema(annotation)
        except _Unsupported:
            raise InvalidArgumentType(
                f"tool {name or fn.__name__!r}: parameter {pname!r} has annotation {annotation!r}, which has no "
                "JSON schema; use str, int, float, bool, list[...], dict, Optional[...], Literal[...], an Enum, "
                "or Annotated[T, 'description']"
            ) from None
        if "description" not in schema and pname in param_docs:
            schema["description"] = param_docs[pname]
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        elif param.default is not None:
            default = _json_default(param.default)
            if default is not None:
                schema["default"] = default
        properties[pname] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return {
        "name": name or fn.__name__,
        "description": (description if description is not None else summary)[:DESCRIPTION_MAX_CHARS],
        "parameters": parameters,
    }


@dataclasses.dataclass(frozen=True)
class Tool:
    """A callable tool with its JSON schema. ``Tool.schema`` is the OpenAI function-calling dict."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any] | None = None
    returns: Any = None  # the return annotation (the mock world answers in this shape)

    @property
    def schema(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))

    @property
    def properties(self) -> dict[str, Any]:
        return dict(self.parameters.get("properties", {}))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fn is None:
            raise InvalidArgumentType(f"tool {self.name!r} has no function body to call (it was built from a schema)")
        return self.fn(*args, **kwargs)


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None,
         description: str | None = None) -> Any:
    """Make a function a tool: ``@wai.tool`` or ``@wai.tool(name="lookup")``."""

    def wrap(f: Callable[..., Any]) -> Tool:
        if not callable(f):
            raise InvalidArgumentType(f"@tool decorates a function; got {type(f).__name__}")
        try:
            inspect.signature(f)
        except (TypeError, ValueError):
            raise InvalidArgumentType(f"@tool could not read a signature from {f!r}; decorate a def function (wrap a builtin "
                            "or class in one)") from None
        spec = function_schema(f, name=name, description=description)
        if not _NAME_RE.match(spec["name"]):
            raise InvalidArgument(f"tool name {spec['name']!r} must be 1-64 letters, digits, '_' or '-'")
        try:
            returns = typing.get_type_hints(f).get("return")
        except Exception:
            returns = getattr(f, "__annotations__", {}).get("return")
        tool_obj = Tool(spec["name"], spec["description"], spec["parameters"], f, returns)
        return tool_obj

    if fn is not None:
        return wrap(fn)
    return wrap


def function_spec(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``{"name", "description", "parameters"}`` of a tool schema dict in any accepted shape: OpenAI
    ``{"type": "function", "function": {...}}``, bare ``{"name", "parameters"}`` or Anthropic
    ``{"name", "input_schema"}``; None when it names no tool. Nothing is validated here (``as_tool`` does)."""
    spec: Mapping[str, Any] = schema
    if spec.get("type") == "function" and isinstance(spec.get("function"), Mapping):
        spec = spec["function"]
    if "name" not in spec:
        return None
    return {"name": spec["name"], "description": spec.get("description", ""),
            "parameters": spec.get("parameters", spec.get("input_schema", {"type": "object", "properties": {}}))}


def as_tool(obj: Any) -> Tool:
    """Normalise one entry of ``tools=``: a Tool, a plain function, or a schema dict in any accepted shape."""
    if isinstance(obj, Tool):
        return obj
    if isinstance(obj, Mapping):
        spec = function_spec(obj)
        if spec is None:
            raise InvalidArgumentType(f"tool schema dict has no 'name' (keys: {sorted(obj)}); pass an OpenAI function schema "
                            "{'type': 'function', 'function': {'name', 'description', 'parameters'}}")
        if not isinstance(spec["name"], str) or not _NAME_RE.match(spec["name"]):
            raise InvalidArgument(f"tool schema name {spec['name']!r} must be 1-64 letters, digits, '_' or '-' (what "
                             "function-calling APIs accept)")
        params = spec["parameters"]
        if not isinstance(params, Mapping):
            raise InvalidArgumentType(f"tool {spec['name']!r}: 'parameters' must be a JSON-schema object")
        if not isinstance(params.get("properties", {}), Mapping):
            raise InvalidArgumentType(f"tool {spec['name']!r}: parameters['properties'] must be a dict {{name: schema}}; got "
                            f"{type(params.get('properties')).__name__}")
        required = params.get("required", [])
        if isinstance(required, str) or not isinstance(required, Sequence) or \
                not all(isinstance(r, str) for r in required):
            raise InvalidArgumentType(f"tool {spec['name']!r}: parameters['required'] must be a list of names, e.g. "
                            f"[{required!r}]; got {required!r}")
        return Tool(str(spec["name"]), str(spec.get("description", "")), dict(params), None, None)
    if callable(obj):
        return tool(obj)
    raise InvalidArgumentType(
        f"tools= takes @wai.tool functions, plain functions or function schema dicts; got {type(obj).__name__}"
    )


def as_tools(tools: Any) -> list[Tool]:
    """Normalise a ``tools=`` list; names must be unique."""
    if tools is None:
        return []
    if isinstance(tools, (Tool, Mapping)) or (callable(tools) and not isinstance(tools, (list, tuple))):
        tools = [tools]
    out = [as_tool(t) for t in tools]
    seen: set[str] = set()
    for t in out:
        if t.name in seen:
            raise InvalidArgument(f"tools= has two tools named {t.name!r}; tool names must be unique")
        seen.add(t.name)
    return out


def schemas(tools: Any) -> list[dict[str, Any]]:
    """OpenAI function schemas for a ``tools=`` list."""
    return [t.schema for t in as_tools(tools)]
