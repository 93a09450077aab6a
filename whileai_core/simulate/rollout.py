"""One rollout, one row: play the agent once on a situation and record what it did (docs/rows.md).

``rollout`` calls a synchronous agent (an ``async def`` agent handed to it is run to completion in a private
loop); ``arollout`` awaits an async one on the caller's loop (what the rollout engine does). Both check the
agent's return value against the agent contract and build the same row. An agent that raises gives an error
row (``agent_error``; ``infra_error`` when a backend could not be reached, never graded); error texts pass
through the credential redaction of ``models/http.py``. A cassette miss is not an agent error: it raises.

A model agent that keeps whole rollouts in its cassette (``model_agent.py``) returns a ``Played`` dict: once the
row is built, it is kept there as a replay would build it (every call cached, no retries; without its latency
and lineage, which belong to the run). ``replayed`` rebuilds such a row without playing the rollout.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import json
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from whileai_core import defaults as D
from whileai_core import distribution_version
from whileai_core.adapters.routing import Route, fault_fields, install_thread_context
from whileai_core.errors import BackendError, CassetteMiss, InvalidArgumentType
from whileai_core.messages import chat_messages, flat_steps, loss_mask
from whileai_core.redact import error_text
from whileai_core.rows import _LEAVES, Row, RowFields, RowStatus, Step, as_row, json_safe, opaque
from whileai_core.simulate.situations import Scenario
from whileai_core.simulate.world import CURRENT, World
from whileai_core.tools import ROUTE

_STEP_KEYS = frozenset({"tool", "text", "user", "tool_calls"})  # a step has at least one of these


def _check_output(out: Any) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
    """Validate an agent's return value against the contract; returns (steps, final_text, extra)."""
    if isinstance(out, str):
        return [], out, {}
    if not isinstance(out, (dict, Mapping)):  # a dict subclass (a model agent's Played) without the ABC check
        raise InvalidArgumentType(f"the agent returned {type(out).__name__}; the agent contract is a dict "
                        "{'steps': [{'tool', 'arguments', 'result'}, ...], 'final_text': str} (or a plain string)")
    if "final_text" not in out and "steps" not in out:
        raise InvalidArgumentType(_no_final_text(out))
    final_text = out.get("final_text", "")
    if not isinstance(final_text, str):
        raise InvalidArgumentType(f"the agent's final_text is {type(final_text).__name__}; it must be a string")
    steps = out.get("steps", [])
    if not isinstance(steps, (list, tuple)):
        raise InvalidArgumentType(f"the agent's steps is {type(steps).__name__}; it must be a list of step dicts")
    for i, step in enumerate(steps):
        if (type(step) is not dict and not isinstance(step, Mapping)) or not _STEP_KEYS.intersection(step):
            raise InvalidArgumentType(f"the agent's steps[{i}] must be a dict with 'tool' (+ 'arguments', 'result'), "
                                      "'tool_calls' (a list of those: one turn's parallel calls), 'text' or 'user'; "
                                      f"got {step!r:.120}")
    clean = []
    for i, step in enumerate(flat_steps(steps)):  # copies: decoding the arguments below changes only ours
        for key in ("text", "user"):
            if step.get(key) is not None and not isinstance(step[key], str):
                raise InvalidArgumentType(f"the agent's steps[{i}][{key!r}] is {type(step[key]).__name__}; it must be a string")
        if "tool" not in step and step.get("text") is None and step.get("user") is None:
            raise InvalidArgumentType(f"the agent's steps[{i}] has no tool and its text is None; drop the step or give it a "
                            "string (None would be trained on as the text 'None')")
        args = step.get("arguments")
        if isinstance(args, str):  # OpenAI-style tool calls carry arguments as a JSON string: decode it once
            try:
                decoded = json.loads(args) if args.strip() else {}
            except ValueError:
                decoded = None  # a model's broken JSON stays as it was sent: the judge should see the mistake
            if isinstance(decoded, dict):
                step["arguments"] = decoded
        odd = opaque(step.get("result"))
        if odd:
            warnings.warn(f"tool {step.get('tool')!r} returned a {odd}, which has no JSON form, so its row keeps "
                          f"the repr (e.g. '<{odd} object at 0x...>'); return dicts, lists, strings, numbers, bools or "
                          "None (datetime, date, Enum, UUID, Decimal, paths and dataclasses are converted: "
                          "docs/rows.md)", UserWarning, stacklevel=2)
        clean.append(json_safe(step))
    extra = {k: v if type(v) in _LEAVES else json_safe(v) for k, v in out.items() if k not in ("steps", "final_text")}
    return clean, final_text, extra


def _no_final_text(out: Mapping[str, Any]) -> str:
    """The error for a dict with neither ``final_text`` nor ``steps`` (``{"reply": ...}``): graded as it was, the
    reply would be empty and the judge blamed; the message names the key the text is read from."""
    keys = ", ".join(repr(k) for k in list(out)[:8]) or "no keys"
    texts = [k for k, v in out.items() if isinstance(v, str) and v.strip()]
    fix = (f"rename {texts[0]!r} to 'final_text' (return {{'final_text': ...}})" if texts
           else "return {'final_text': reply} (or a plain string)")
    return (f"the agent returned a dict with {keys} but no 'final_text': the reply that is graded is read from "
            f"'final_text' (and the tool calls from 'steps'); {fix}")


def _is_infra_error(exc: BaseException) -> bool:
    """A backend that could not be reached (after retries) is infrastructure, not a wrong answer (the class lives
    in ``errors``, so one raised by the agent's own code counts without the backends being imported)."""
    return isinstance(exc, BackendError)


def _trial(scenario: Scenario | str, rollout_index: int, seed: int, tools: Sequence[Any] | None,
           system_prompt: str | None, world: World | None) -> tuple[Scenario, str | None]:
    if not isinstance(scenario, Scenario):
        scenario = Scenario(str(scenario), system_prompt=system_prompt)
    if system_prompt is None:
        system_prompt = scenario.system_prompt
    if world is None and tools:
        world = World(tools, seed=seed)
    return scenario.replace(rollout_index=rollout_index, world=world, system_prompt=system_prompt), system_prompt


#: (steps, final_text, extra, status, error, finish_reason) of one agent call
Outcome = tuple[list[dict[str, Any]], str, dict[str, Any], RowStatus, str | None, str]


def _outcome(out: Any = None, exc: BaseException | None = None) -> Outcome:
    """(steps, final_text, extra, status, error, finish) of an agent's return value or of what it raised."""
    if exc is None:
        try:
            return (*_check_output(out), "ok", None, "stop")
        except InvalidArgumentType as bad:
            exc = bad
    if isinstance(exc, CassetteMiss):
        raise exc  # a cassette miss means the run is not the recorded one: fail loudly, with its diff
    status: RowStatus = "infra_error" if _is_infra_error(exc) else "agent_error"
    return [], "", {}, status, error_text(exc)[:D.ERROR_TEXT_MAX_CHARS], "error"


def _row(agent: Any, trial: Scenario, system_prompt: str | None, outcome: Outcome, started: float,
         rollout_index: int, seed: int, run_id: str | None, mode: str | None, repeat_policy: str | None) -> Row:
    """The rollout's row, built as ``RowFields`` (every documented key checked by a type checker)."""
    steps, final_text, extra, status, error, finish = outcome
    seeded = bool(extra.pop("seeded", False))
    seeded_what = extra.pop("seeded_what", None)
    finish = str(extra.pop("finish_reason", finish))
    messages = chat_messages(system_prompt, str(trial), steps, final_text)
    typed: RowFields = {
        "schema_version": D.ROW_SCHEMA_VERSION,
        "row_id": f"{trial.task_id}#{rollout_index}",
        "task_id": trial.task_id,
        "scenario_id": trial.task_id,
        "rollout_index": rollout_index,
        "prompt": str(trial),
        "system_prompt": system_prompt,
        "scenario": dict(trial.scenario),
        "world_state": trial.world_state,
        "stance": trial.stance,
        "faults": dict(trial.faults),
        "privileged": json_safe(trial.privileged),
        "steps": cast(list[Step], steps),
        "final_text": final_text,
        "messages": messages,
        "loss_mask": loss_mask(messages),
        "seeded": seeded,
        "seeded_what": seeded_what if seeded else None,
        "status": status,
        "error": error,
        "finish_reason": finish,
        "agent_extra": extra,
        "latency_s": round(time.perf_counter() - started, 6),
        "lineage": _lineage(getattr(agent, "__name__", None) or type(agent).__name__, system_prompt, seed, run_id,
                            mode, repeat_policy),
    }
    return as_row(typed)


def _lineage(agent_name: str, system_prompt: str | None, seed: int, run_id: str | None, mode: str | None,
             repeat_policy: str | None) -> dict[str, Any]:
    """A row's lineage: the run's, not the rollout's (so a replayed row gets the replaying run's). A new dict
    each call (a row's lineage is stamped further); the last one built is copied when the run's values repeat
    (every row of a run has the same), compared with their types (a seed of True is not a seed of 1)."""
    key = (agent_name, system_prompt, seed, run_id, mode, repeat_policy)
    last_key, last = _last_lineage[0]
    if last_key == key and type(last_key[2]) is type(seed):
        return dict(last)
    lineage = {"run_id": run_id, "seed": seed, "writer": "template", "agent": agent_name,
               "whileai_version": distribution_version(), "system_prompt_sha": _prompt_sha(system_prompt or ""),
               "mode": mode, "repeat_policy": repeat_policy}
    _last_lineage[0] = (key, lineage)  # one store of one tuple: a thread reads either the old pair or the new
    return dict(lineage)


#: (the values, the lineage) of the last ``_lineage`` call: one run's rows all have the same
_last_lineage: list[tuple[Any, dict[str, Any]]] = [((), {})]


def _keep(out: Any, row: dict[str, Any]) -> None:
    """Keep an ``ok`` row whole in the cassette of the model agent that returned ``out`` (a ``Played``), as a
    replay of its calls would build it: every call cached, no retries; no latency or lineage."""
    recording = getattr(out, "recording", None)
    if recording is None or row["status"] != "ok":
        return
    kept = {k: v for k, v in row.items() if k not in ("latency_s", "lineage")}
    extra = kept["agent_extra"] = dict(row["agent_extra"])
    usage = extra.get("usage")
    if isinstance(usage, dict) and "calls" in usage:
        extra["usage"] = {**usage, "cached_calls": usage["calls"], "retries": 0}
    recording.keep(kept)


def replayed(agent: Any, scenario: Scenario, *, rollout_index: int, seed: int, system_prompt: str | None,
             world: World | None, situation: str, run_id: str | None = None, mode: str | None = None,
             repeat_policy: str | None = None) -> dict[str, Any] | None:
    """The row of a rollout that ``agent``'s cassette keeps whole, rebuilt without playing it, or None (play it).

    The row is the one a replay of its calls gives, but for ``latency_s`` (the rebuild's) and ``lineage``
    (this run's, with ``replayed: "rollout"``).

    Args:
        agent: the run's agent (only a ``ModelAgent`` keeps rollouts: any other gives None).
        scenario: the situation, as the run holds it (not the trial).
        rollout_index: the rollout's index.
        seed: the run's seed.
        system_prompt: the run's system prompt (None: the situation's own).
        world: the world the rollout would be played against.
        situation: ``model_agent.situation_key(scenario, system prompt in effect)``, once per situation.
        run_id: the run's id, for the lineage.
        mode: the run's mode, for the lineage.
        repeat_policy: the run's policy, for the lineage.

    Returns:
        The row, or None when the cassette keeps no such rollout (or any other agent).

    Example:
        ```python
        row = replayed(agent, scenario, rollout_index=0, seed=0, system_prompt=None, world=world,
                       situation=situation_key(scenario, scenario.system_prompt))
        ```
    """
    started = time.perf_counter()
    key_of = getattr(agent, "rollout_key", None)
    key = key_of(situation, rollout_index, world) if key_of is not None else None
    row = agent.cache.get_rollout(key) if key is not None else None
    if row is None:
        return None
    name = agent.__name__
    extra = row.get("agent_extra")
    if isinstance(extra, dict) and "model" in extra:
        extra["model"] = name  # the replaying agent's name (its URL), as a call-by-call replay gives
    row["latency_s"] = round(time.perf_counter() - started, 6)
    lineage = row["lineage"] = _lineage(name, row.get("system_prompt"), seed, run_id, mode, repeat_policy)
    lineage["replayed"] = "rollout"
    return row


@functools.lru_cache(maxsize=256)
def _prompt_sha(system_prompt: str) -> str:
    """The lineage's system-prompt hash, once per prompt (every row of a run has the same one)."""
    return hashlib.sha256(system_prompt.encode()).hexdigest()[:16]


def _finish_awaitable(out: Awaitable[Any]) -> Any:
    """An agent that returned a coroutine (an ``async def`` agent called synchronously): run it to the end."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(out))
    box: dict[str, Any] = {}

    def run() -> None:  # a loop already runs in this thread (Jupyter): run it on a helper thread's loop
        try:
            box["value"] = asyncio.run(_awaited(out))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    helper = threading.Thread(target=run, name="whileai-agent")
    helper.start()
    helper.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


async def _awaited(out: Awaitable[Any]) -> Any:
    return await out


def _enter(trial: Scenario) -> tuple[Route, tuple[Any, Any]]:
    """Make ``trial`` the current situation and its ``Route`` the tool router of this context."""
    if trial.world is not None:
        install_thread_context()
    route = Route(trial)
    return route, (CURRENT.set(trial), ROUTE.set(route))


def _leave(route: Route, tokens: tuple[Any, Any]) -> None:
    route.open = False  # a thread the agent left running no longer reaches this rollout's world
    CURRENT.reset(tokens[0])
    ROUTE.reset(tokens[1])


def _with_route(outcome: Outcome, route: Route) -> Outcome:
    """The outcome with the calls the agent's own code routed through the world as its steps, when it
    returned none (an agent need not return ``steps``; returned steps win)."""
    if outcome[0] or not route.steps:
        return outcome
    steps, _, _ = _check_output({"steps": list(route.steps)})
    return (steps, *outcome[1:])


def rollout(agent: Callable[[Any], Any], scenario: Scenario | str, *, rollout_index: int = 0, seed: int = 0,
            tools: Sequence[Any] | None = None, system_prompt: str | None = None, world: World | None = None,
            run_id: str | None = None, mode: str | None = None, repeat_policy: str | None = None) -> dict[str, Any]:
    """Run one trial of ``agent`` on ``scenario`` and return its row. Never raises for an agent error."""
    trial, system_prompt = _trial(scenario, rollout_index, seed, tools, system_prompt, world)
    route, tokens = _enter(trial)
    started = time.perf_counter()
    try:
        try:
            out = agent(trial)
            if inspect.isawaitable(out):
                out = _finish_awaitable(out)
            outcome = _outcome(out)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # an agent error is data, not a crash
            out, outcome = None, _outcome(exc=exc)
    finally:
        _leave(route, tokens)
    outcome = _with_route(outcome, route)
    row = _row(agent, trial, system_prompt, outcome, started, rollout_index, seed, run_id, mode, repeat_policy)
    row.update(fault_fields(route, trial.faults))
    _keep(out, row)
    return row


async def arollout(agent: Any, call: Callable[[Any], Awaitable[Any]], scenario: Scenario | str, *,
                   rollout_index: int = 0, seed: int = 0, system_prompt: str | None = None,
                   world: World | None = None, run_id: str | None = None, mode: str | None = None,
                   repeat_policy: str | None = None) -> dict[str, Any]:
    """``rollout`` for an async agent: ``await call(trial)`` on the running loop (``agent`` names the row)."""
    trial, system_prompt = _trial(scenario, rollout_index, seed, None, system_prompt, world)
    route, tokens = _enter(trial)
    started = time.perf_counter()
    try:
        try:
            out = await call(trial)
            outcome = _outcome(out)
        except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
            raise
        except Exception as exc:  # an agent error is data, not a crash
            out, outcome = None, _outcome(exc=exc)
    finally:
        _leave(route, tokens)
    outcome = _with_route(outcome, route)
    row = _row(agent, trial, system_prompt, outcome, started, rollout_index, seed, run_id, mode, repeat_policy)
    row.update(fault_fields(route, trial.faults))
    _keep(out, row)
    return row


__all__ = ["arollout", "replayed", "rollout"]
