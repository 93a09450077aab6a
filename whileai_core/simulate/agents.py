"""The stand-in agent: calls the tools sensibly and, on a labeled share of rollouts, does one wrong thing on
purpose, so the rest of the loop (grading, intervals, selection) has a known answer to find.

Every spoiled rollout is marked ``seeded=True`` with ``seeded_what`` naming the mistake.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from typing import Any

from whileai_core.defaults import SEEDED_SHARE
from whileai_core.errors import InvalidArgument

# CURRENT and RUN_PLAN are read through the module (world_vars.RUN_PLAN), so that an agent shipped to a Ray
# worker (cloudpickle: a closure's globals go by value, a module by name) names them instead of copying them
from whileai_core.simulate import world as world_vars
from whileai_core.simulate.world import (
    MALFORMED_PAYLOAD,
    World,
    is_write_tool,
    key_params,
    name_words,
    noun_of,
    uniform,
)
from whileai_core.tools import Tool, as_tools

#: the mistakes, in draw order; each needs something of the situation (see ``_applicable``)
SEEDED_BEHAVIORS = ("wrong_tool", "wrong_argument", "skipped_confirmation", "invented_fact")
_INVENTED = ("It will arrive tomorrow before noon.", "A 15% refund has already been applied to it.",
             "Our records show it was upgraded to express shipping for free.")
_ID_RE = re.compile(r"\b([A-Za-z]{1,4}[-_]?\d{3,})\b|\b(\d{3,})\b")


def _pick_tool(tools: Sequence[Tool], message: str, scenario: Any) -> Tool:
    wanted = getattr(scenario, "tool", None)
    for t in tools:
        if t.name == wanted:
            return t
    text = message.lower()
    for t in tools:
        words = [w for w in name_words(t.name) if len(w) > 2]
        if words and all(w in text for w in words):
            return t
    for t in tools:
        if any(w in text for w in name_words(t.name) if len(w) > 3):
            return t
    return tools[0]


def _identifier(message: str) -> str | None:
    m = _ID_RE.search(message)
    return (m.group(1) or m.group(2)) if m else None


#: what the honest agent sends for a parameter that is not a string (the id goes only into string parameters)
_TYPED_PLACEHOLDER = {"integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}


def _arguments(t: Tool, ident: str | None) -> dict[str, Any]:
    """The honest call: the id from the message in each string parameter, a value of the declared type in the
    rest (an int parameter never gets the text of an id)."""
    names = t.required or key_params(t) or list(t.properties)[:1]
    out: dict[str, Any] = {}
    for name in names:
        schema = t.properties.get(name) or {}
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            out[name] = schema["enum"][0]
        elif schema.get("type") in _TYPED_PLACEHOLDER:
            out[name] = copy.copy(_TYPED_PLACEHOLDER[schema["type"]])
        else:
            out[name] = ident if ident is not None else "the record"
    return out


def _reply(t: Tool, ident: str | None, result: Any) -> str:
    noun = noun_of(t)
    subject = f"{noun} {ident}" if ident else f"the {noun}"
    if result == MALFORMED_PAYLOAD or not isinstance(result, (dict, list, str, int, float, bool)):
        return f"The {t.name} tool sent back a garbled answer for {subject}, so I can't read it; please try again."
    if isinstance(result, dict):
        status = result.get("status", "ok")
        if status == "timeout":
            return f"Looking up {subject} timed out on our side. Nothing changed; I can try again in a moment."
        if status == "denied":
            return f"I'm not allowed to use {t.name} for {subject} from this session, so I can't help with that here."
        if status == "not_found":
            return f"I couldn't find {subject}. Could you double-check the number?"
        if status == "error":
            return f"The {t.name} tool failed with an internal error for {subject}; nothing was changed."
        fields = ", ".join(f"{k} {v}" for k, v in result.items() if k != "status" and v not in (None, ""))
        return f"{subject[0].upper() + subject[1:]}: {fields}." if fields else f"{subject} has no details on file."
    if isinstance(result, list):
        return f"I found {len(result)} result(s) for {subject}."
    return f"{t.name} for {subject}: {result}."


def seeded_agent(tools: Sequence[Any], share: float | None = None, seed: int = 0, *,
                 behaviors: Sequence[str] | None = None, rate: float | None = None,
                 world: World | None = None) -> Callable[[str], dict[str, Any]]:
    """A stand-in agent that misbehaves on a labeled share of rollouts.

    share: the share of rollouts to spoil (default ``SEEDED_SHARE``; ``rate=`` is the SDK's alias).
    The draw is a hash of (seed, task id, rollout index), so a row's fate never depends on run order.
    """
    if share is not None and rate is not None and share != rate:
        raise InvalidArgument("pass share= or rate= (its alias), not both")
    share = SEEDED_SHARE if share is None and rate is None else (share if share is not None else rate)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
        raise InvalidArgument(f"share= must be a number in [0, 1]; got {share!r}")
    tool_objs = as_tools(tools)
    if not tool_objs:
        raise InvalidArgument("seeded_agent needs tools=[...] (the same list you pass simulate)")
    names = tuple(SEEDED_BEHAVIORS if behaviors is None else
                  (behaviors,) if isinstance(behaviors, str) else behaviors)
    unknown = [b for b in names if b not in SEEDED_BEHAVIORS]
    if unknown or not names:
        raise InvalidArgument(f"unknown seeded behaviors {unknown or names}; choose from {list(SEEDED_BEHAVIORS)}")
    own_world = world or World(tool_objs, seed=seed)
    thresholds: dict[int, float] = {}

    def spoiled(task: str, index: int) -> bool:
        """Inside a run, exactly round(share * planned rollouts) are spoiled (those with the smallest hash
        draws); outside a run, a Bernoulli(share) draw. Either way a row's fate is a hash, not run order."""
        u = uniform(seed, "seeded", task, index)
        plan = world_vars.RUN_PLAN.get()
        if not plan:
            return u < share
        cut = thresholds.get(id(plan))
        if cut is None:
            draws = sorted(uniform(seed, "seeded", t, i) for t, i in plan)
            n_spoil = round(share * len(draws))
            cut = draws[n_spoil - 1] if n_spoil else -1.0
            thresholds.clear()
            thresholds[id(plan)] = cut
        return u <= cut

    def _applicable(behavior: str, chosen: Tool) -> bool:
        if behavior == "wrong_tool":
            return len(tool_objs) > 1
        if behavior == "wrong_argument":  # needs a string argument to get wrong
            return any(isinstance(v, str) for v in _arguments(chosen, None).values()) and not is_write_tool(chosen)
        if behavior == "skipped_confirmation":
            return is_write_tool(chosen)
        return True

    def agent(message: str) -> dict[str, Any]:
        scenario = message if hasattr(message, "task_id") else world_vars.CURRENT.get()
        text = str(message)
        task = getattr(scenario, "task_id", None) or text
        index = getattr(scenario, "rollout_index", 0)
        run_world = getattr(scenario, "world", None) or own_world
        chosen = _pick_tool(tool_objs, text, scenario)
        ident = _identifier(text)
        behavior = None
        if spoiled(task, index):
            start = int(uniform(seed, "which", task, index) * len(names)) % len(names)
            for step in range(len(names)):
                candidate = names[(start + step) % len(names)]
                if _applicable(candidate, chosen):
                    behavior = candidate
                    break
        call_tool, args = chosen, _arguments(chosen, ident)
        if behavior == "wrong_tool":
            call_tool = next(t for t in tool_objs if t.name != chosen.name)
            args = _arguments(call_tool, ident)
        elif behavior == "wrong_argument":
            wrong = (ident[:-1] + str((int(ident[-1]) + 1) % 10)) if ident and ident[-1].isdigit() else "A0000"
            args = {k: wrong if isinstance(v, str) else v for k, v in args.items()}
        if is_write_tool(call_tool) and behavior in (None, "invented_fact"):
            subject = f"{noun_of(call_tool)} {ident}" if ident else f"the {noun_of(call_tool)}"
            steps: list[dict[str, Any]] = []
            reply = f"Before I {name_words(call_tool.name)[0]} {subject}: this can't be undone. Shall I go ahead?"
        else:
            result = run_world.call(call_tool.name, args, scenario=scenario)
            steps = [{"tool": call_tool.name, "arguments": args, "result": result}]
            reply = _reply(call_tool, ident, result)
        if behavior == "invented_fact":
            reply = reply + " " + _INVENTED[int(uniform(seed, "fact", task, index) * len(_INVENTED))]
        return {"steps": steps, "final_text": reply, "seeded": behavior is not None, "seeded_what": behavior}

    agent.__name__ = "seeded_agent"
    agent.__qualname__ = "seeded_agent"
    agent.world = own_world  # type: ignore[attr-defined]
    agent.share = share  # type: ignore[attr-defined]
    return agent

