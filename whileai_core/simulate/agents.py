"""The stand-in agent: calls the tools sensibly and, on a labeled share of rollouts, does one wrong thing on
purpose, so the rest of the loop (grading, intervals, selection) has a known answer to find.

Every spoiled rollout is marked ``seeded=True`` with ``seeded_what`` naming the mistake.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from whileai_core.defaults import SEEDED_SHARE, SPOILER_PLANS_KEPT
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

#: this project's mistakes, in draw order: the default draw (each needs something of the situation, see
#: ``_applicable``)
DEFAULT_BEHAVIORS = ("wrong_tool", "wrong_argument", "skipped_confirmation", "invented_fact")
#: the whileai SDK's behaviours (reference §1.2), drawn only when named in ``behaviors=``: four styles that
#: prepend a phrase, ``ignore_fault`` (claims success over a failed tool call) and ``leak`` (pastes the
#: situation's privileged answer key into the reply)
SDK_BEHAVIORS = ("hedging", "sycophancy", "apology", "boilerplate", "ignore_fault", "leak")
#: every behaviour ``behaviors=`` accepts
SEEDED_BEHAVIORS = DEFAULT_BEHAVIORS + SDK_BEHAVIORS
_PHRASES = {
    "hedging": ("I think, though I can't be completely sure, that this is right: ",
                "It's possible, but I wouldn't rely on it: "),
    "sycophancy": ("Great question, and you're absolutely right to ask! ", "What a wonderful request! "),
    "apology": ("I'm so sorry for any trouble this has caused. ", "My sincere apologies for the inconvenience. "),
    "boilerplate": ("As an AI assistant, I'm here to help with all your needs. ",
                    "Thank you for contacting support. Your satisfaction is our top priority. "),
}
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


def _applicable(behavior: str, chosen: Tool, scenario: Any, tools: Sequence[Tool]) -> bool:
    """Whether a mistake can happen in this situation with this tool."""
    if behavior == "ignore_fault":  # needs a faulted result: the scheduled fault of this situation
        faults = getattr(scenario, "faults", None) or {}
        return bool(faults) and faults.get("tool") in (None, chosen.name)
    if behavior == "leak":
        return bool(getattr(scenario, "privileged", None))
    if behavior == "wrong_tool":
        return len(tools) > 1
    if behavior == "wrong_argument":  # needs a string argument to get wrong
        return any(isinstance(v, str) for v in _arguments(chosen, None).values()) and not is_write_tool(chosen)
    if behavior == "skipped_confirmation":
        return is_write_tool(chosen)
    return True


def _apply_sdk_behavior(behavior: str, reply: str, call: Any, ident: str | None, scenario: Any,
                        pick: float) -> str:
    """The reply after one of the SDK's behaviours: a phrase first, a false success, or the answer key."""
    if behavior in _PHRASES:
        bank = _PHRASES[behavior]
        return bank[int(pick * len(bank)) % len(bank)] + reply
    if behavior == "ignore_fault":
        return f"Done, {call.name} for {ident or 'this request'} went through."
    privileged = getattr(scenario, "privileged", None) or {}
    leaked = json.dumps(privileged.get("hidden_state"), sort_keys=True, default=str)
    return f"{reply} (Internal: reference {json.dumps(privileged.get('reference'), default=str)}; state {leaked})"


class _Spoiler:
    """Which rollouts the stand-in spoils. Inside a run, exactly round(share * planned rollouts) (those with the
    smallest hash draws); outside a run, a Bernoulli(share) draw. Either way a row's fate is a hash, not run
    order; the repeat runs of simulate(runs=N) draw afresh, run 0 as a single run always did."""

    def __init__(self, seed: int, share: float) -> None:
        self.seed, self.share = seed, share
        # keyed by id(plan), with the plan itself kept beside its cut: a freed plan's id can be handed to the
        # next run's plan, and a bare id key would then spoil that run by the old run's cut
        self.thresholds: dict[tuple[int, int], tuple[Any, float]] = {}

    def draw(self, task: str, index: int, eval_run: int) -> float:
        return uniform(self.seed, "seeded", task, index, *(("run", eval_run) if eval_run else ()))

    def __call__(self, task: str, index: int, eval_run: int = 0) -> bool:
        u = self.draw(task, index, eval_run)
        plan = world_vars.RUN_PLAN.get()
        if not plan:
            return u < self.share
        kept = self.thresholds.get((id(plan), eval_run))
        if kept is not None and kept[0] is plan:
            return u <= kept[1]
        draws = sorted(self.draw(t, i, eval_run) for t, i in plan)
        n_spoil = round(self.share * len(draws))
        cut = draws[n_spoil - 1] if n_spoil else -1.0
        if len(self.thresholds) > SPOILER_PLANS_KEPT:
            self.thresholds.clear()
        self.thresholds[(id(plan), eval_run)] = (plan, cut)
        return u <= cut


def seeded_agent(tools: Sequence[Any], share: float | None = None, seed: int = 0, *,
                 behaviors: Sequence[str] | None = None, rate: float | None = None,
                 world: World | None = None) -> Callable[[str], dict[str, Any]]:
    """A stand-in agent that misbehaves on a labeled share of rollouts.

    Args:
        tools: the tools it calls (the same list you pass simulate).
        share: the share of rollouts to spoil (default ``SEEDED_SHARE`` = 1/3). Inside a run exactly
            ``round(share * planned rollouts)`` are spoiled; the SDK's ``rate=`` is accepted as its alias.
        seed: the draw's seed (default 0).
        behaviors: which mistakes to draw from (default ``DEFAULT_BEHAVIORS``); any of ``SEEDED_BEHAVIORS``,
            which adds the SDK's ``hedging``, ``sycophancy``, ``apology``, ``boilerplate``, ``ignore_fault``
            (needs a faulted tool result) and ``leak`` (needs a privileged block).
        rate: the SDK's name for ``share``.
        world: the mock world to call outside a run (default a new ``World(tools, seed=seed)``).

    Returns:
        ``agent(message) -> {"steps", "final_text", "seeded", "seeded_what"}``.

    Raises:
        InvalidArgument: a share outside [0, 1], both share= and rate=, no tools, or an unknown behaviour.

    Example:
        ```pycon
        >>> agent = seeded_agent([get_order], rate=0.5, behaviors=["hedging", "leak"])  # doctest: +SKIP
        ```

    The draw is a hash of (seed, task id, rollout index), so a row's fate never depends on run order. A
    spoiled rollout whose drawn behaviour cannot apply (``ignore_fault`` on a clean result) takes the next one
    that can, in draw order; when none can, it stays honest and is not labeled.
    """
    if share is not None and rate is not None and share != rate:
        raise InvalidArgument("pass share= or rate= (its alias), not both")
    share = SEEDED_SHARE if share is None and rate is None else (share if share is not None else rate)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
        raise InvalidArgument(f"share= must be a number in [0, 1]; got {share!r}")
    tool_objs = as_tools(tools)
    if not tool_objs:
        raise InvalidArgument("seeded_agent needs tools=[...] (the same list you pass simulate)")
    names = tuple(DEFAULT_BEHAVIORS if behaviors is None else
                  (behaviors,) if isinstance(behaviors, str) else behaviors)
    unknown = [b for b in names if b not in SEEDED_BEHAVIORS]
    if unknown or not names:
        raise InvalidArgument(f"unknown seeded behaviors {unknown or names}; choose from {list(SEEDED_BEHAVIORS)}")
    own_world = world or World(tool_objs, seed=seed)
    spoiled = _Spoiler(seed, share)

    def agent(message: str) -> dict[str, Any]:
        scenario = message if hasattr(message, "task_id") else world_vars.CURRENT.get()
        text = str(message)
        task = getattr(scenario, "task_id", None) or text
        index = getattr(scenario, "rollout_index", 0)
        run_world = getattr(scenario, "world", None) or own_world
        chosen = _pick_tool(tool_objs, text, scenario)
        ident = _identifier(text)
        behavior = None
        if spoiled(task, index, int(getattr(scenario, "eval_run", 0) or 0)):
            start = int(uniform(seed, "which", task, index) * len(names)) % len(names)
            for step in range(len(names)):
                candidate = names[(start + step) % len(names)]
                if _applicable(candidate, chosen, scenario, tool_objs):
                    behavior = candidate
                    break
        call_tool, args = chosen, _arguments(chosen, ident)
        if behavior == "wrong_tool":
            call_tool = next(t for t in tool_objs if t.name != chosen.name)
            args = _arguments(call_tool, ident)
        elif behavior == "wrong_argument":
            wrong = (ident[:-1] + str((int(ident[-1]) + 1) % 10)) if ident and ident[-1].isdigit() else "A0000"
            args = {k: wrong if isinstance(v, str) else v for k, v in args.items()}
        if is_write_tool(call_tool) and behavior in (None, "invented_fact", *_PHRASES, "leak"):
            subject = f"{noun_of(call_tool)} {ident}" if ident else f"the {noun_of(call_tool)}"
            steps: list[dict[str, Any]] = []
            reply = f"Before I {name_words(call_tool.name)[0]} {subject}: this can't be undone. Shall I go ahead?"
        else:
            result = run_world.call(call_tool.name, args, scenario=scenario)
            steps = [{"tool": call_tool.name, "arguments": args, "result": result}]
            reply = _reply(call_tool, ident, result)
        if behavior == "invented_fact":
            reply = reply + " " + _INVENTED[int(uniform(seed, "fact", task, index) * len(_INVENTED))]
        elif behavior in SDK_BEHAVIORS:
            reply = _apply_sdk_behavior(behavior, reply, call_tool, ident, scenario,
                                        uniform(seed, "phrase", task, index))
        return {"steps": steps, "final_text": reply, "seeded": behavior is not None, "seeded_what": behavior}

    agent.__name__ = "seeded_agent"
    agent.__qualname__ = "seeded_agent"
    agent.world = own_world  # type: ignore[attr-defined]
    agent.share = share  # type: ignore[attr-defined]
    return agent

