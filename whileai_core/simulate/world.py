"""The mock world: answers tool calls from each tool's return shape, with scheduled faults applied first.

Inside a rollout the world reads the current situation (its world state, entity and fault plan) from a
context variable that ``simulate`` sets, so a user's own agent gets the same faults when it routes its tool
calls through ``World.call``. Outside a run there are no faults and every record exists.
Answers are deterministic: the same situation and arguments give the same result on every machine.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import json
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai_core.adapters.routing import done_executing, executing, note_answer
from whileai_core.errors import InvalidArgument
from whileai_core.redact import error_text
from whileai_core.rows import uniform
from whileai_core.tools import Tool, as_tools

FAULT_MODES = ("error", "timeout", "not_found", "denied", "malformed")
MALFORMED_PAYLOAD = "<<garbled resp0nse"
#: words in a tool name that mark it as one that changes the world (a confirmation is owed first)
WRITE_VERBS = ("cancel", "refund", "delete", "remove", "update", "create", "send", "pay", "charge", "book",
               "transfer", "issue", "close", "reset", "change", "set", "add", "submit", "approve")
#: parameter names that look like a reference to a record (the world_state axis applies to them)
KEY_HINTS = ("id", "key", "sku", "name", "email", "path", "number", "code", "ref")

CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("whileai_current_rollout", default=None)
#: the planned rollouts of the current run, a tuple of (task_id, rollout_index); lets a stand-in agent spoil
#: an exact share of the run instead of a binomial one
RUN_PLAN: contextvars.ContextVar[Any] = contextvars.ContextVar("whileai_run_plan", default=None)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def name_words(name: str) -> list[str]:
    """``get_order``, ``get-order``, ``getOrder`` and ``GetOrder`` all give ``["get", "order"]``."""
    return list(_name_words(name))


@functools.lru_cache(maxsize=4096)
def _name_words(name: str) -> tuple[str, ...]:
    """name_words, split once per name (the world asks it several times on every tool call)."""
    return tuple(w for w in _CAMEL.sub("_", name).replace("-", "_").lower().split("_") if w)


def is_write_tool(t: Tool) -> bool:
    return _is_write(t.name)


def key_params(t: Tool) -> list[str]:
    """Parameters that look like a record reference (``order_id``, ``sku``, ``path`` ...)."""
    return list(_key_params(tuple(t.parameters.get("properties", ()))))


def noun_of(t: Tool) -> str:
    """The object a tool acts on: ``get_order`` -> ``order``; one-word names act on a ``record``."""
    return _noun(t.name)


# the three above answer from a tool's name and parameter names only: worked out once per name (the world
# asks them on every tool call of every rollout)
@functools.lru_cache(maxsize=4096)
def _is_write(name: str) -> bool:
    return any(w in WRITE_VERBS for w in _name_words(name)[:1])


@functools.lru_cache(maxsize=4096)
def _key_params(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(p for p in names if any(w in KEY_HINTS for w in _name_words(p)))


@functools.lru_cache(maxsize=4096)
def _noun(name: str) -> str:
    rest = [w for w in _name_words(name)[1:] if w not in ("by", "for", "the", "a", "info", "details")]
    return " ".join(rest) if rest else "record"


class World:
    """A deterministic mock world for a set of tools.

    ``execute=`` (a callable ``execute(name, arguments) -> result``, e.g. ``Tool.dispatch(tools)``) answers
    the calls with your real functions instead of made-up records; the scheduled faults still fire first.

    Args:
        tools: the tools it answers for.
        seed: the seed of its deterministic records.
        execute: your real tool functions, ``execute(name, arguments) -> result`` (None: made-up records).

    Example:
        ```python
        world = wai.World([get_order])
        world.call("get_order", {"order_id": "O1"})
        ```
    """

    def __init__(self, tools: Sequence[Any], *, seed: int = 0, execute: Callable[..., Any] | None = None) -> None:
        self.tools = {t.name: t for t in as_tools(tools)}
        if not self.tools:
            raise InvalidArgument("World needs tools=[...] (the same list you pass simulate)")
        # a tool mapped for the model (math.factorial -> math_factorial) answers to its original name too
        self._aliases = {t.original_name: t.name for t in self.tools.values() if t.original_name}
        self.seed = seed
        self.calls = 0
        self.execute = execute

    def __repr__(self) -> str:
        return f"World(tools={list(self.tools)}, seed={self.seed})"

    def fingerprint(self) -> str | None:
        """A hash of what decides this world's answers: its seed and each tool's name, parameters and return
        annotation (the rollout key of a cassette's whole rollouts covers it). None under ``execute=``: real
        tool code can change behind a recording's back, so such a rollout is always played.

        Returns:
            64 hex digits, or None when ``execute=`` answers the calls.

        Example:
            ```python
            wai.World([get_order]).fingerprint() == wai.World([get_order]).fingerprint()  # True
            ```
        """
        if self.execute is not None:
            return None
        memo = self.__dict__.get("_fingerprint")
        if memo is not None and memo[0] == self.seed:
            return memo[1]
        tools = [[t.name, t.original_name, t.parameters, repr(t.returns)] for t in self.tools.values()]
        text = json.dumps([self.seed, tools], sort_keys=True, ensure_ascii=False, default=str)
        found = hashlib.sha256(text.encode()).hexdigest()
        self._fingerprint = (self.seed, found)
        return found

    def call(self, tool_name: str, arguments: Mapping[str, Any] | None = None, *, scenario: Any = None) -> Any:
        """Answer one tool call. Never raises: problems come back as ``{"status": ..., "error": ...}``.

        Inside a rollout the answer is counted for it (``faults_delivered`` on its row, ``routing.py``)."""
        self.calls += 1
        scenario = scenario if scenario is not None else CURRENT.get()
        result, fault = self._call(tool_name, arguments, scenario)
        note_answer(fault)
        return result

    def _call(self, tool_name: str, arguments: Any, scenario: Any) -> tuple[Any, bool]:
        """(the answer, whether the scheduled fault gave it)."""
        if isinstance(arguments, str):  # a model's tool call carries its arguments as a JSON string
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                return {"status": "error", "error": f"{tool_name}: arguments are not valid JSON ({arguments!r:.80}); "
                                                    "pass a dict of argument name -> value"}, False
        if arguments is not None and not isinstance(arguments, Mapping):
            return {"status": "error", "error": f"{tool_name}: arguments must be a dict of argument name -> value; "
                                                f"got {type(arguments).__name__}"}, False
        arguments = dict(arguments or {})
        tool_name = self._aliases.get(tool_name, tool_name)
        t = self.tools.get(tool_name)
        if t is None:
            return {"status": "not_found", "error": f"no tool named {tool_name!r}; tools are {sorted(self.tools)}"}, False
        missing = [p for p in t.required if p not in arguments]
        if missing:
            return {"status": "error", "error": f"{tool_name}: missing required argument {missing[0]!r}"}, False
        faults = getattr(scenario, "faults", None) or {}
        if faults and faults.get("tool") in (None, tool_name):
            return fault_result(faults.get("mode", "error"), t, arguments), True
        if self.execute is not None:
            return self._execute(self.execute, t, arguments), False
        return self._answer(t, arguments, scenario), False

    def _execute(self, execute: Callable[..., Any], t: Tool, arguments: Mapping[str, Any]) -> Any:
        """The real tool's answer; an exception comes back as an error result, so the rollout continues."""
        token = executing()  # a @wai.tool the execute callable calls runs its own body, not the world again
        try:
            return execute(t.name, dict(arguments))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - a failing real tool is a tool result, as in production
            return {"status": "error", "error": error_text(exc)}
        finally:
            done_executing(token)

    # -- answers -------------------------------------------------------------------------------------
    def _answer(self, t: Tool, arguments: Mapping[str, Any], scenario: Any) -> Any:
        keys = key_params(t)
        ref = str(arguments[keys[0]]) if keys and keys[0] in arguments else None
        world_state = getattr(scenario, "world_state", "present") if scenario is not None else "present"
        entity = getattr(scenario, "entity_id", None) if scenario is not None else None
        noun = noun_of(t)
        if ref is not None and scenario is not None:
            if world_state == "missing" or (entity is not None and ref.strip().upper() != str(entity).upper()):
                return {"status": "not_found", "error": f"no {noun} with {keys[0]} {ref!r}"}
        edge = world_state == "edge"
        salt = (self.seed, t.name, ref, getattr(scenario, "task_id", None))
        return shape_value(t.returns, t, ref, edge=edge, salt=salt)


def fault_result(mode: str, t: Tool, arguments: Mapping[str, Any]) -> Any:
    """The answer a scheduled fault gives."""
    if mode == "malformed":
        return MALFORMED_PAYLOAD
    noun = noun_of(t)
    messages = {
        "error": {"status": "error", "error": f"{t.name}: internal error (HTTP 500), try again later"},
        "timeout": {"status": "timeout", "error": f"{t.name} timed out after 30 s"},
        "not_found": {"status": "not_found", "error": f"no {noun} matches {json.dumps(dict(arguments))}"},
        "denied": {"status": "denied", "error": f"permission denied: this session may not call {t.name}"},
    }
    if mode not in messages:
        raise InvalidArgument(f"fault mode {mode!r} is not one of {FAULT_MODES}")
    return messages[mode]


_STATUSES = ("processing", "shipped", "delivered", "on hold")


def record(t: Tool, ref: str | None, *, edge: bool, salt: Any) -> dict[str, Any]:
    """A plausible record for the object the tool acts on."""
    noun = noun_of(t).replace(" ", "_")
    key = key_params(t)
    rec: dict[str, Any] = {"status": "ok"}
    if is_write_tool(t):
        rec[key[0] if key else f"{noun}_id"] = ref
        rec["result"] = f"{name_words(t.name)[0]} done"
        return rec
    u = uniform(*salt)
    rec[key[0] if key else f"{noun}_id"] = ref if ref is not None else f"{noun[:3].upper()}{int(1000 + u * 89000)}"
    if edge:
        rec.update({"state": "", "total": 0.0, "items": 0, "note": "Zoë O’Brien — 🐋 «edge» record, empty fields",
                    "updated_at": None})
    else:
        rec.update({"state": _STATUSES[int(u * len(_STATUSES))], "total": round(10 + u * 490, 2),
                    "items": 1 + int(u * 5), "updated_at": f"2026-11-{10 + int(u * 18):02d}"})
    return rec


def shape_value(annotation: Any, t: Tool, ref: str | None, *, edge: bool, salt: Any) -> Any:
    """A value in the shape of the tool's return annotation (a record for dict / None / unannotated)."""
    if annotation is dict or annotation is None:  # the common tool (-> dict), without the typing lookups below
        return record(t, ref, edge=edge, salt=salt)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is str:
        rec = record(t, ref, edge=edge, salt=salt)
        return "; ".join(f"{k}: {v}" for k, v in rec.items())
    if annotation is bool:
        return not edge
    if annotation in (int, float):
        return 0 if edge else annotation(1 + int(uniform(*salt) * 99))
    if annotation in (list, tuple) or origin in (list, tuple, typing.Sequence):
        n = 0 if edge else 1 + int(uniform(*salt, "n") * 3)
        inner = args[0] if args else dict
        return [shape_value(inner, t, ref, edge=edge, salt=(*salt, i)) for i in range(n)]
    return record(t, ref, edge=edge, salt=salt)


def world(tools: Sequence[Any], seed: int = 0) -> World:
    """The mock world a user's own agent can route its tool calls through (faults fire inside a run).

    Args:
        tools: the tools the world answers for.
        seed: the seed of its deterministic records.

    Returns:
        A ``World``; ``world.call(name, arguments)`` answers in the shape of the tool's return annotation.

    Raises:
        InvalidArgumentType: ``tools`` holds something that is not a tool (a ``TypeError``).

    Example:
        ```python
        w = wai.world([get_order])
        w.call("get_order", {"order_id": "O1"})
        ```
    """
    return World(tools, seed=seed)
