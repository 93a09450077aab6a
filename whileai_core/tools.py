"""Tools: a Python function becomes an OpenAI function-calling schema (``@wai.tool``).

The signature is the schema: annotations give types, defaults make a parameter optional, the docstring's
first paragraph is the description and a Google-style ``Args:`` block describes each parameter.
Schema dicts in OpenAI (``{"type": "function", "function": {...}}``), bare (``{"name", "description",
"parameters"}``) and Anthropic (``{"name", "description", "input_schema"}``) shapes are accepted too.

Tool names: function-calling APIs take ``[A-Za-z0-9_-]{1,64}``. A name with dots (``math.factorial``, as
in BFCL's function docs) becomes the model-facing name ``math_factorial`` (``model_name``: every ``.`` →
``_``); the tool keeps the name it was given as ``Tool.original_name``. ``name=`` (on ``@tool``, ``tool(...)``
and ``as_tool``) sets the name outright. Python-flavoured type names in a schema dict (BFCL's ``"dict"``,
``"float"``, ``"tuple"``, ``"any"``) become JSON Schema's (``json_schema_types``).
"""

from __future__ import annotations

import contextvars
import dataclasses
import enum
import functools
import inspect
import json
import os
import re
import types
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin

from whileai_core.defaults import TOOL_DESCRIPTION_MAX_CHARS as DESCRIPTION_MAX_CHARS
from whileai_core.defaults import TOOL_NAME_MAX_CHARS
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.errors import UnsupportedAnnotation as _Unsupported
from whileai_core.redact import error_text

#: set by a rollout (``adapters/routing.py``) while it runs: ``route(tool, args, kwargs)`` answers a tool called
#: directly by the agent's own code through the rollout's world (its scheduled fault first) and records the call
ROUTE: contextvars.ContextVar[Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None] = \
    contextvars.ContextVar("whileai_tool_route", default=None)

_SIMPLE: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
_ARG_HEADERS = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$")
_OTHER_HEADERS = re.compile(r"^\s*(Returns|Return|Raises|Yields|Examples?|Notes?)\s*:\s*$")
_NAME_RE = re.compile(rf"^[A-Za-z_][A-Za-z0-9_-]{{0,{TOOL_NAME_MAX_CHARS - 1}}}$")


def model_name(name: str) -> str:
    """The name a model sees for a tool named ``name``: ``name`` itself when function-calling APIs accept it,
    else ``name`` with every ``.`` made ``_`` (``"math.factorial"`` → ``"math_factorial"``).

    Raises ``InvalidArgument`` when even that is not a valid name (pass ``name=`` to choose one).

    >>> model_name("math.factorial")
    'math_factorial'
    """
    if not isinstance(name, str):
        raise InvalidArgumentType(f"a tool name is a string; got {type(name).__name__}")
    if _NAME_RE.match(name):
        return name
    mapped = name.replace(".", "_")
    if not _NAME_RE.match(mapped):
        raise InvalidArgument(f"tool name {name!r} must be 1-{TOOL_NAME_MAX_CHARS} letters, digits, '_' or '-' "
                              "(dots become '_'), what function-calling APIs accept; pass name='...' to choose one")
    return mapped


def _named(name: str) -> tuple[str, str | None]:
    """(model-facing name, the original when it differs)."""
    mapped = model_name(name)
    return mapped, (name if mapped != name else None)


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
        return _enum_schema([m.value for m in annotation])
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is typing.Annotated:
        base = annotation_schema(args[0])
        notes = [a for a in args[1:] if isinstance(a, str)]
        if notes:
            base["description"] = notes[0]
        return base
    if origin is Literal:
        return _enum_schema(list(args))
    if origin is Union or (hasattr(types, "UnionType") and isinstance(annotation, types.UnionType)):
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            return annotation_schema(members[0])
        return {"anyOf": [annotation_schema(m) for m in members]}
    return _container_schema(annotation, origin, args)


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    """An ``enum`` of the values, typed when they share one JSON type."""
    out: dict[str, Any] = {"enum": values}
    kind = _json_type_of_values(values)
    if kind:
        out["type"] = kind
    return out


def _container_schema(annotation: Any, origin: Any, args: tuple[Any, ...]) -> dict[str, Any]:
    """Arrays (their item type), objects (mappings, dataclasses, TypedDicts, pydantic models); else unsupported."""
    if annotation in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, Sequence,
                                                                  typing.Sequence):
        out: dict[str, Any] = {"type": "array"}
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


def _source(fn: Callable[..., Any]) -> Any:
    """What names and documents a callable: the function under a ``functools.partial``, the ``__call__`` of a
    callable instance, else the callable itself."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if not isinstance(fn, (types.FunctionType, types.MethodType, types.BuiltinFunctionType, type)) \
            and not hasattr(fn, "__name__") and callable(getattr(type(fn), "__call__", None)):
        return type(fn).__call__
    return fn


def callable_name(fn: Callable[..., Any]) -> str | None:
    """A callable's own name: its ``__name__``; for a ``functools.partial``, the wrapped callable's; for a
    callable instance, its class's. None for a lambda (``<lambda>`` names nothing)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        name = type(fn).__name__
    return None if name == "<lambda>" else name


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotations of what documents ``fn`` (raw ones when they do not resolve)."""
    source = _source(fn)
    try:
        return typing.get_type_hints(source, include_extras=True)
    except Exception:  # noqa: BLE001 - an unresolvable annotation falls back to the raw ones
        return dict(getattr(source, "__annotations__", None) or {})


def function_schema(fn: Callable[..., Any], *, name: str | None = None,
                    description: str | None = None) -> dict[str, Any]:
    """The ``parameters`` JSON schema plus name and description for a Python function (a ``functools.partial``
    or a callable instance too: the parameters left to pass, the wrapped function's name and docstring)."""
    sig = inspect.signature(fn)
    hints = _hints(fn)
    label = name or callable_name(fn)
    if label is None:
        raise InvalidArgument(f"tool {fn!r} has no name of its own (a lambda); pass name='...', e.g. "
                              "wai.tool(fn, name='lookup')")
    own = None if isinstance(fn, functools.partial) else fn.__doc__  # a partial's own doc is functools'
    summary, param_docs = _parse_docstring(own or _source(fn).__doc__)
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
                f"tool {label!r}: parameter {pname!r} has annotation {annotation!r}, which has no "
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
        "name": label,
        "description": (description if description is not None else summary)[:DESCRIPTION_MAX_CHARS],
        "parameters": parameters,
    }


@dataclasses.dataclass(frozen=True)
class Tool:
    """A callable tool with its JSON schema. ``Tool.schema`` is the OpenAI function-calling dict.

    ``name`` is the model-facing name (what schemas, messages and exports carry); ``original_name`` is the
    name the tool was given when that had to be mapped (``"math.factorial"`` for ``"math_factorial"``), else
    None. ``wai.World.call`` answers to either.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any] | None = None
    returns: Any = None  # the return annotation (the mock world answers in this shape)
    original_name: str | None = None

    @property
    def schema(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    @property
    def names(self) -> tuple[str, ...]:
        """Every name this tool answers to: the model-facing one, then the original when it differs."""
        return (self.name, self.original_name) if self.original_name else (self.name,)

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))

    @property
    def properties(self) -> dict[str, Any]:
        return dict(self.parameters.get("properties", {}))

    @property
    def params_json_schema(self) -> dict[str, Any]:
        """The SDK's name for ``parameters``."""
        return self.parameters

    @staticmethod
    def dispatch(tools: Any) -> Callable[[str, Any], Any]:
        """``execute(name, arguments)`` over these tools' own bodies, for ``simulate(execute=...)``; see
        ``dispatch``."""
        return dispatch(tools)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        route = ROUTE.get()
        if route is not None:  # inside a rollout: the rollout's world answers (adapters/routing.py)
            return route(self, args, kwargs)
        if self.fn is None:
            raise InvalidArgumentType(f"tool {self.name!r} has no function body to call (it was built from a schema)")
        return self.fn(*args, **kwargs)


def _from_callable(f: Any, name: str | None, description: str | None) -> Tool:
    if not callable(f):
        raise InvalidArgumentType(f"@tool decorates a function (or takes a tool schema dict); got {type(f).__name__}")
    try:
        inspect.signature(f)
    except (TypeError, ValueError):
        raise InvalidArgumentType(f"@tool could not read a signature from {f!r}; decorate a def function (wrap a "
                                  "builtin or class in one)") from None
    spec = function_schema(f, name=name, description=description)
    _warn_undocumented(f, spec)
    tool_name, original = _named(spec["name"])
    returns = _hints(f).get("return")
    return Tool(tool_name, spec["description"], spec["parameters"], f, returns, original)


def _warn_undocumented(fn: Any, spec: Mapping[str, Any]) -> None:
    """A tool the model cannot read: no description (no docstring, no ``description=``) or parameters without
    an annotation (their schema is ``{}``: any value) is built as asked, with a warning naming the fix."""
    gaps = []
    if not spec["description"].strip():
        gaps.append("no description (the model sees an empty one): give it a docstring or description='...'")
    params = inspect.signature(fn).parameters
    bare = [p for p, schema in spec["parameters"]["properties"].items()
            if not schema.get("type") and not {"enum", "anyOf", "oneOf", "const", "$ref"} & set(schema)
            and params[p].annotation is inspect.Parameter.empty]
    if bare:
        gaps.append(f"parameter(s) {', '.join(bare)} without an annotation (their schema is {{}}, any value): "
                    "annotate them, e.g. order_id: str")
    if gaps:
        warnings.warn(f"tool {spec['name']!r}: " + "; ".join(gaps), UserWarning, stacklevel=_user_level())


def _user_level() -> int:
    """The ``stacklevel`` of the first frame outside this library, so a warning names the user's line."""
    import sys

    ours = (os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "whileai"))
    frame: types.FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)).startswith(ours):
        frame, level = frame.f_back, level + 1
    return level


def tool(fn: Any = None, *, name: str | None = None, description: str | None = None) -> Any:
    """Make a tool: ``@wai.tool``, ``@wai.tool(name="lookup")``, or ``wai.tool(obj)`` on a function, a
    ``functools.partial``, a callable instance or a function schema dict (any shape ``as_tool`` takes).

    Args:
        fn: what to make a tool of; omit it to get a decorator.
        name: the tool's name (default: the function's, or the schema's). Dots become underscores for the
            model (``model_name``), the given name is kept as ``original_name``.
        description: the description (default: the docstring's first paragraph, or the schema's).

    Returns:
        A ``Tool`` (or a decorator that makes one).

    Raises:
        InvalidArgumentType: ``fn`` is neither callable nor a schema dict, or a parameter has no JSON schema.
        InvalidArgument: the name is not one function-calling APIs accept, even with dots mapped.

    Example:
        ```pycon
        >>> @tool(name="math.factorial")
        ... def factorial(number: int) -> int:
        ...     "Factorial of a number."
        >>> factorial.name, factorial.original_name
        ('math_factorial', 'math.factorial')
        ```
    """
    if fn is not None:
        return as_tool(fn, name=name, description=description)
    return lambda f: as_tool(f, name=name, description=description)


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


#: type names that are not JSON Schema's, as BFCL's and other Python-flavoured tool docs write them, and the JSON
#: Schema type a function-calling API takes for each (BFCL maps them the same way before calling a model);
#: "any" drops the type (any value).
_TYPE_NAMES = {"dict": "object", "float": "number", "tuple": "array", "list": "array", "bool": "boolean",
               "int": "integer", "str": "string", "any": None}
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def json_schema_types(schema: Any) -> Any:
    """A copy of a parameters schema with Python-flavoured type names made JSON Schema's (``"dict"`` ->
    ``"object"``, ``"float"`` -> ``"number"``, ``"tuple"`` -> ``"array"``, ``"any"`` -> no type), at every depth."""
    if not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str) and kind.lower() in _TYPE_NAMES:
        mapped = _TYPE_NAMES[kind.lower()]
        if mapped is None:
            del out["type"]
        else:
            out["type"] = mapped
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), Mapping):
            out[key] = {k: json_schema_types(v) for k, v in out[key].items()}
    for key in _SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [json_schema_types(v) for v in out[key]]
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), Mapping):
            out[key] = json_schema_types(out[key])
    return out


def _from_schema(obj: Mapping[str, Any], name: str | None, description: str | None) -> Tool:
    spec = function_spec(obj)
    if spec is None:
        raise InvalidArgumentType(f"tool schema dict has no 'name' (keys: {sorted(obj)}); pass an OpenAI function "
                                  "schema {'type': 'function', 'function': {'name', 'description', 'parameters'}}")
    given = name if name is not None else spec["name"]
    if not isinstance(given, str) or not given:
        raise InvalidArgument(f"tool schema name {given!r} must be 1-{TOOL_NAME_MAX_CHARS} letters, digits, '_' or "
                              "'-' (what function-calling APIs accept)")
    try:
        tool_name, original = _named(given)
    except InvalidArgument:
        raise InvalidArgument(f"tool schema name {given!r} must be 1-{TOOL_NAME_MAX_CHARS} letters, digits, '_' or "
                              "'-' (what function-calling APIs accept; dots become '_'); pass name='...' to choose "
                              "one") from None
    params = spec["parameters"]
    if not isinstance(params, Mapping):
        raise InvalidArgumentType(f"tool {given!r}: 'parameters' must be a JSON-schema object")
    if not isinstance(params.get("properties", {}), Mapping):
        raise InvalidArgumentType(f"tool {given!r}: parameters['properties'] must be a dict {{name: schema}}; got "
                                  f"{type(params.get('properties')).__name__}")
    required = params.get("required", [])
    if isinstance(required, str) or not isinstance(required, Sequence) or \
            not all(isinstance(r, str) for r in required):
        raise InvalidArgumentType(f"tool {given!r}: parameters['required'] must be a list of names, e.g. "
                                  f"[{required!r}]; got {required!r}")
    text = description if description is not None else str(spec.get("description") or "")
    return Tool(tool_name, text[:DESCRIPTION_MAX_CHARS], json_schema_types(params), None, None, original)


def as_tool(obj: Any, *, name: str | None = None, description: str | None = None) -> Tool:
    """Normalise one entry of ``tools=``: a Tool, a plain function (or partial, or callable instance), or a
    schema dict in any accepted shape. ``name=``/``description=`` override the tool's own."""
    if isinstance(obj, Tool):
        if name is None and description is None:
            return obj
        tool_name, original = _named(name) if name is not None else (obj.name, obj.original_name)
        return dataclasses.replace(obj, name=tool_name, original_name=original,
                                   description=obj.description if description is None else description)
    if isinstance(obj, Mapping):
        return _from_schema(obj, name, description)
    if callable(obj):
        return _from_callable(obj, name, description)
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
    seen: dict[str, Tool] = {}
    for t in out:
        if t.name in seen:
            given = [x.original_name for x in (seen[t.name], t) if x.original_name]
            mapped = f" (from {' and '.join(map(repr, given))}: dots become '_')" if given else ""
            raise InvalidArgument(f"tools= has two tools named {t.name!r}{mapped}; tool names must be unique "
                                  "(pass name='...' to tell them apart)")
        seen[t.name] = t
    return out


def schemas(tools: Any) -> list[dict[str, Any]]:
    """OpenAI function schemas for a ``tools=`` list."""
    return [t.schema for t in as_tools(tools)]


def dispatch(tools: Any) -> Callable[[str, Any], Any]:
    """An ``execute(name, arguments) -> result`` that runs the real tool bodies (``simulate(execute=...)``).

    Args:
        tools: the tool list (anything ``as_tools`` takes); each tool answers to its model-facing and its
            original name.

    Returns:
        A callable that never raises: an unknown name gives ``{"status": "not_found", "error": "no tool named
        'x'"}``, an exception in the tool ``{"status": "error", "error": "<ExcType>: <msg>"}``, so a rollout
        goes on as it would in production.

    Raises:
        InvalidArgument: two tools with one name, a lambda without ``name=``, or a schema name that is not
            1-64 letters, digits, '_' or '-' (a ``ValueError``); raised here, never by the callable.
        InvalidArgumentType: an entry that is not a tool, a function or a schema dict, a schema without
            ``name`` or with malformed ``parameters``, or a parameter annotation with no JSON schema (a
            ``TypeError``).

    Example:
        ```pycon
        >>> execute = dispatch([get_order])  # doctest: +SKIP
        >>> execute("get_order", {"order_id": "A1"})  # doctest: +SKIP
        ```
    """
    by_name = {n: t for t in as_tools(tools) for n in t.names}

    def execute(name: str, arguments: Any = None) -> Any:
        t = by_name.get(name)
        if t is None:
            return {"status": "not_found", "error": f"no tool named {name!r}"}
        try:
            if isinstance(arguments, str):
                arguments = json.loads(arguments) if arguments.strip() else {}
            return t(**dict(arguments or {}))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - a failing tool is a result the agent must read, never a crash
            return {"status": "error", "error": error_text(exc)}

    execute.__name__ = "execute"
    return execute
