"""The model-backed agent loop: a chat model calls your ``@wai.tool`` tools and the mock world answers.

``as_agent("openai:gpt-4.1-mini", tools=..., system_prompt=...)`` returns a callable under the agent
contract: it takes a ``Scenario`` (a ``str`` subclass carrying ``.world``, ``.rollout_index``, ``.stance``,
...) and returns ``{"steps", "final_text", "finish_reason"}``. Each model turn may ask for tool calls; each is
answered by ``scenario.world.call(name, arguments)`` (scheduled faults first), fed back as a ``tool``
message, and the loop continues until the model answers in text or ``max_turns`` runs out. The calls of one
reply are recorded as one turn: their steps share ``turn`` (the reply's index), the reply's text rides on the
first, so the row's messages show one assistant message with every call, as the model sent it.

When a ``user_model`` is given, a simulated user playing the scenario's stance answers the agent's follow-up
questions (at most ``user_max_turns`` times). The callable is thread-safe; ``await agent.acall(scenario)`` plays
the same rollout on an event loop (what the rollout engine does).

With a ``Cassette`` as ``cache`` and the mock world answering (no ``execute=``: real tools could change behind
a recording's back), a rollout played in record or auto mode is also kept whole in the cassette, under
``rollout_key``: a hash of this agent's settings, the world, the situation and the rollout index. A replay of
the same rollout then rebuilds its row without playing it (``rollout.replayed``; docs/models.md).
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Generator, Mapping
from typing import Any

from whileai_core import distribution_version
from whileai_core.arguments import integer
from whileai_core.defaults import (
    AGENT_MAX_TOKENS,
    AGENT_TEMPERATURE,
    MAX_TURNS,
    ROLLOUT_REPLAY_FORMAT,
    ROW_SCHEMA_VERSION,
    USER_MAX_TURNS,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.models.cache import Cassette, RolloutTap, request_key
from whileai_core.models.cache import resolve_cache as _resolve_cache
from whileai_core.redact import error_text
from whileai_core.rows import json_encoder
from whileai_core.simulate.situations import Scenario
from whileai_core.simulate.world import World

USER_SYSTEM_PROMPT = (
    "You are role-playing the user of an AI assistant. Your original request was:\n{prompt}\n"
    "Your manner is: {stance}. The assistant has just replied to you. Answer its question briefly, in the "
    "first person, as that user would, in one or two sentences. Never act as the assistant."
)

_TAKES_SCENARIO: dict[Any, bool] = {}
#: ``json.dumps(x, ensure_ascii=False, default=str)``, its C encoder built once (a tool result per call)
_to_json = json_encoder(ensure_ascii=False, default=str)


def _takes_scenario(call: Any) -> bool:
    """Whether a world's ``call`` accepts ``scenario=`` (the lead's World does; duck-typed worlds may not)."""
    key = getattr(call, "__func__", call)
    found = _TAKES_SCENARIO.get(key)
    if found is None:
        import inspect

        try:
            params = inspect.signature(call).parameters
            found = "scenario" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
        except (TypeError, ValueError):
            found = False
        _TAKES_SCENARIO[key] = found
    return found


#: the fields of a situation a rollout key covers, besides its message and the system prompt in effect (not its
#: rollout index, world or eval run: the key takes the first two apart, and nothing in a rollout reads the last)
_SITUATION_FIELDS = ("task_id", "scenario", "tool", "world_state", "stance", "tool_condition", "faults",
                     "entity_id", "tools", "privileged")


def situation_key(scenario: Scenario, system_prompt: str | None) -> str:
    """A hash of the situation a rollout plays: its message, cell, fault plan and privileged block, and
    ``system_prompt`` (the one in effect for it); the same for every rollout of the situation, so a run
    computes it once per situation (``ModelAgent.rollout_key`` takes it).

    Args:
        scenario: the situation.
        system_prompt: the system prompt in effect (the run's, else the situation's own).

    Returns:
        64 hex digits.

    Example:
        ```python
        situation_key(wai.Scenario("Where is order A1?"), None)
        ```
    """
    fields = {f: getattr(scenario, f, None) for f in _SITUATION_FIELDS}
    fields["prompt"], fields["system_prompt"] = str(scenario), system_prompt
    return request_key(fields)


#: the modules whose code decides what a rollout does and what its row holds: their source is part of every
#: rollout key, so a whole rollout recorded before an edit of any of them (an editable install, where the version
#: stays the same) misses and plays again call by call, as strictly as a call-by-call replay would
_ROLLOUT_CODE = ("whileai_core.simulate.model_agent", "whileai_core.simulate.world", "whileai_core.simulate.rollout",
                 "whileai_core.messages", "whileai_core.rows", "whileai_core.tools", "whileai_core.models.protocol",
                 "whileai_core.models.transport", "whileai_core.models.openai", "whileai_core.models.endpoint",
                 "whileai_core.models.ollama", "whileai_core.models.anthropic", "whileai_core.models.specs")


@functools.lru_cache(maxsize=1)
def _code_key() -> str:
    """A hash of the source of ``_ROLLOUT_CODE`` (read once per process)."""
    import importlib.util

    digest = hashlib.sha256()
    for name in _ROLLOUT_CODE:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None)
        digest.update(name.encode())
        if origin and os.path.isfile(origin):
            with open(origin, "rb") as fh:
                digest.update(fh.read())
    return digest.hexdigest()


class Played(dict[str, Any]):
    """A model agent's return value (a plain dict to every reader) that also carries what keeps the rollout
    whole in the cassette once its row is built: ``recording``, the rollout's ``RolloutTap``."""

    __slots__ = ("recording",)
    recording: RolloutTap


def _played(out: dict[str, Any], tap: RolloutTap | None, made: int) -> dict[str, Any]:
    """``out``, as a ``Played`` with its tap when every one of the ``made`` model calls went through the
    cassette (a backend that keeps no recordings leaves nothing to replay the rollout from)."""
    if tap is None or len(tap.calls) != made:
        return out
    played = Played(out)
    played.recording = tap
    return played


def _json_result(result: Any) -> str:
    if isinstance(result, str):
        return result
    try:
        return _to_json(result)
    except (TypeError, ValueError):
        return str(result)


class ModelAgent:
    """A chat model played multi-turn against the mock world (see module docstring)."""

    def __init__(self, backend: Any, *, tools: Any, system_prompt: str | None, max_turns: int = MAX_TURNS,
                 cache: Any = None, temperature: float = AGENT_TEMPERATURE, max_tokens: int = AGENT_MAX_TOKENS,
                 user_model: Any = None, user_max_turns: int = USER_MAX_TURNS) -> None:
        from whileai_core.models.protocol import tool_schemas

        max_turns = integer("max_turns", max_turns, minimum=1)
        user_max_turns = integer("user_max_turns", user_max_turns, minimum=0)
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise InvalidArgumentType(f"system_prompt= must be a str or None; got {type(system_prompt).__name__}")
        self.backend = backend
        self.tools = list(tools or [])
        self.schemas = tool_schemas(self.tools)
        self.system_prompt = system_prompt
        self.max_turns = max_turns
        self.cache = _resolve_cache(cache)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.user_model = user_model
        self.user_max_turns = user_max_turns
        self._bodies = {getattr(t, "name", None): t for t in self.tools
                        if getattr(t, "name", None) and callable(getattr(t, "fn", None) or t)}
        self._config: tuple[Any, str | None] = ((), None)  # (the settings rollout_key hashed, their hash)

    @property
    def __name__(self) -> str:
        return str(getattr(self.backend, "spec", type(self.backend).__name__))

    @property
    def spec(self) -> str:
        return self.__name__

    def __repr__(self) -> str:
        return (f"ModelAgent({self.backend!r}, {len(self.schemas)} tools, max_turns={self.max_turns}, "
                f"cache={'on' if self.cache else 'off'})")

    # ---- whole rollouts in the cassette ----------------------------------------------------------
    def _config_key(self) -> str | None:
        """A hash of this agent's settings that decide a rollout (recomputed only when one of them changed), or
        None when a model has no ``cache_name`` (a cassette cannot key its calls)."""
        names = [getattr(m, "cache_name", None) for m in (self.backend, self.user_model) if m is not None]
        settings = (*names, self.system_prompt, self.schemas, self.temperature, self.max_tokens, self.max_turns,
                    self.user_max_turns, self.user_model is None)
        if self._config[0] == settings:
            return self._config[1]
        found = None
        if all(isinstance(n, str) for n in names):
            found = request_key({"format": ROLLOUT_REPLAY_FORMAT, "whileai": distribution_version(), "code": _code_key(),
                                 "row_schema": ROW_SCHEMA_VERSION, "models": names, "settings": settings[len(names):],
                                 "user_prompt": USER_SYSTEM_PROMPT})
        self._config = (settings, found)
        return found

    def rollout_key(self, situation: str, rollout_index: int, world: Any) -> str | None:
        """The key a whole rollout is kept under in this agent's cassette: a hash of the agent's settings (its
        models' cache names, system prompt, tool schemas, temperature, max_tokens, max_turns, the simulated
        user's cache name and user_max_turns), the world's fingerprint, the situation and the rollout index,
        with whileai's version, the source of the modules that build a rollout and
        ``defaults.ROLLOUT_REPLAY_FORMAT``. The run's seed enters through the world.

        Args:
            situation: ``situation_key(scenario, system_prompt)`` of the situation played.
            rollout_index: the rollout's index (also each call's trial).
            world: the world answering its tool calls.

        Returns:
            64 hex digits, or None when the rollout cannot be kept whole: no ``Cassette`` as ``cache``, a world
            other than the mock one (``World.fingerprint`` is None under ``execute=``), or a model without a
            ``cache_name``.

        Example:
            ```python
            agent.rollout_key(situation_key(scenario, None), 0, wai.World([get_order]))
            ```
        """
        if not isinstance(self.cache, Cassette) or type(world) is not World:
            return None
        config, where = self._config_key(), world.fingerprint()
        if config is None or where is None:
            return None
        return hashlib.sha256(f"{config}|{where}|{situation}|{rollout_index}".encode()).hexdigest()

    def _tap(self, scenario: Any) -> RolloutTap | None:
        """The cassette wrapped to note the calls of this rollout, when it is to be kept whole (a Scenario, a
        Cassette in record or auto mode, the mock world), else None."""
        if not isinstance(self.cache, Cassette) or self.cache.mode == "replay" or not isinstance(scenario, Scenario):
            return None
        key = self.rollout_key(situation_key(scenario, scenario.system_prompt), scenario.rollout_index,
                               scenario.world)
        return None if key is None else self.cache.tap(key)

    # ---- tools ---------------------------------------------------------------------------------
    def _call_tool(self, scenario: Any, name: str, arguments: Any) -> Any:
        world = getattr(scenario, "world", None)
        try:
            if world is not None and callable(getattr(world, "call", None)):
                if _takes_scenario(world.call):
                    return world.call(name, arguments, scenario=scenario)
                return world.call(name, arguments)
            tool = self._bodies.get(name)
            if tool is None:
                return {"status": "not_found", "error": f"no tool named {name!r}"}
            fn = getattr(tool, "fn", None) or tool
            return fn(**arguments) if isinstance(arguments, Mapping) else fn(arguments)
        except Exception as exc:  # a tool failure is the model's problem to handle, not a crash
            return {"status": "error", "error": error_text(exc)}

    def _tool_turn(self, scenario: Any, c: Any, turn: int, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answer one reply's tool calls (several when the model called in parallel): one step per call, all
        with this ``turn``, the reply's text on the first; a ``tool`` message per call goes onto ``messages``."""
        steps: list[dict[str, Any]] = []
        for call in c.tool_calls:
            if call.arguments_error:
                result: Any = {"status": "error",
                               "error": f"{call.arguments_error}; send the arguments as a JSON object"}
            else:
                result = self._call_tool(scenario, call.name, call.arguments)
            step: dict[str, Any] = {"tool": call.name, "arguments": call.arguments, "result": result, "turn": turn}
            if c.text and not steps:
                step["text"] = c.text
            steps.append(step)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": _json_result(result)})
        return steps

    # ---- simulated user ------------------------------------------------------------------------
    def _user_messages(self, scenario: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The conversation as the simulated user sees it (roles flipped, its stance as the system prompt)."""
        stance = str(getattr(scenario, "stance", None) or "ordinary")
        flipped: list[dict[str, Any]] = [{"role": "system",
                                          "content": USER_SYSTEM_PROMPT.format(prompt=str(scenario), stance=stance)}]
        for m in messages:
            if m["role"] == "assistant" and m.get("content"):
                flipped.append({"role": "user", "content": m["content"]})
            elif m["role"] == "user":
                flipped.append({"role": "assistant", "content": m["content"]})
        if flipped[1:] and flipped[1]["role"] == "assistant":
            flipped.pop(1)  # the original request is already in the system prompt
        return flipped

    # ---- the loop ------------------------------------------------------------------------------
    def _play(self, scenario: Any) -> Generator[tuple[Any, list[dict[str, Any]], list[Any] | None], Any,
                                                dict[str, Any]]:
        """One rollout as a generator: it yields (backend, messages, schemas) for each model call and is sent
        the ``Completion``; the sync (``__call__``) and async (``acall``) drivers make the calls."""
        if not isinstance(scenario, str):
            raise InvalidArgumentType(f"a model agent takes a Scenario (a str); got {type(scenario).__name__}")
        system = self.system_prompt
        if system is None:
            system = getattr(scenario, "system_prompt", None)
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": str(system)})
        messages.append({"role": "user", "content": str(scenario)})
        steps: list[dict[str, Any]] = []
        usage = {"input_tokens": 0, "output_tokens": 0, "calls": 0, "cached_calls": 0, "retries": 0}
        finish, final_text, user_turns, turn = "stop", "", 0, 0
        while turn < self.max_turns:
            turn += 1
            c = yield self.backend, messages, self.schemas
            usage["calls"] += 1
            usage["cached_calls"] += int(c.cached)
            usage["retries"] += max(0, c.attempts - 1)
            for k in ("input_tokens", "output_tokens"):
                usage[k] += int(c.usage.get(k, 0))
            messages.append(c.message())
            if c.tool_calls:
                steps.extend(self._tool_turn(scenario, c, turn - 1, messages))
                finish = "tool"  # stays "tool" if the turn budget runs out here
                continue
            final_text = c.text
            finish = "length" if c.finish_reason == "length" else "stop"
            wants_user = (self.user_model is not None and user_turns < self.user_max_turns
                          and turn < self.max_turns and final_text.rstrip().endswith("?"))
            if not wants_user:
                break
            reply = (yield self.user_model, self._user_messages(scenario, messages), None).text.strip()
            if not reply:
                break
            user_turns += 1
            steps.append({"text": final_text})
            steps.append({"user": reply})
            messages.append({"role": "user", "content": reply})
            final_text = ""
        return {"steps": steps, "final_text": final_text, "finish_reason": finish,
                "model": self.__name__, "turns": turn, "usage": usage}

    def _kwargs(self, scenario: Any, cache: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The keyword arguments of this rollout's model calls: (with the tools, without them: the user model)."""
        trial = int(getattr(scenario, "rollout_index", 0) or 0)
        bare: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens, "trial": trial,
                                "cache": cache}
        return {**bare, "tools": self.schemas}, bare

    def _start(self, scenario: Any) -> tuple[Any, RolloutTap | None, dict[str, Any], dict[str, Any]]:
        """What both drivers begin a rollout with: (the ``_play`` generator, the rollout's tap or None, the call
        keywords with the tools, without them), the calls going to the tap when the rollout is kept whole."""
        tap = self._tap(scenario)
        tooled, bare = self._kwargs(scenario, self.cache if tap is None else tap)
        return self._play(scenario), tap, tooled, bare

    def __call__(self, scenario: Any) -> dict[str, Any]:
        """Play one rollout. Raises ``BackendError`` on infrastructure failure (never a wrong answer)."""
        play, tap, tooled, bare = self._start(scenario)
        made = 0
        try:
            backend, messages, schemas = next(play)
            while True:
                made += 1
                c = backend.complete(messages, **(bare if schemas is None else tooled))
                backend, messages, schemas = play.send(c)
        except StopIteration as done:
            return _played(done.value, tap, made)

    async def acall(self, scenario: Any) -> dict[str, Any]:
        """``__call__`` on an event loop: each model call is awaited (``backend.acomplete``), so one loop
        drives every rollout in flight (what ``simulate``'s engine does); a backend without ``acomplete``
        runs in a worker thread."""
        import asyncio

        play, tap, tooled, bare = self._start(scenario)
        made = 0
        try:
            backend, messages, schemas = next(play)
            while True:
                made += 1
                kwargs = bare if schemas is None else tooled
                acomplete = getattr(backend, "acomplete", None)
                if acomplete is not None:
                    c = await acomplete(messages, **kwargs)
                else:
                    c = await asyncio.to_thread(backend.complete, messages, **kwargs)
                backend, messages, schemas = play.send(c)
        except StopIteration as done:
            return _played(done.value, tap, made)


def as_agent(agent: Any, *, tools: Any, system_prompt: str | None, max_turns: int = MAX_TURNS,
             cache: Any = None, temperature: float = AGENT_TEMPERATURE, max_tokens: int = AGENT_MAX_TOKENS,
             user_model: Any = None, user_max_turns: int = USER_MAX_TURNS) -> Any:
    """An agent-contract callable from a model string or backend object (a plain callable is returned as it is).

    ``agent=None`` uses ``wai.configure(agent=...)`` / ``WHILEAI_AGENT``. ``cache=None`` uses the configured
    cassette; ``cache=False`` turns it off. ``user_model`` (a spec or backend, default the configured one)
    plays the user when the agent asks a question.
    """
    from whileai_core.models import config
    from whileai_core.models.protocol import _is_backend
    from whileai_core.models.specs import resolve_model

    if agent is None:
        agent = config.get("agent")
        if agent is None:
            raise InvalidArgument("no agent given: pass agent='openai:gpt-4.1-mini' (or a backend / callable), "
                             "or set wai.configure(agent=...) or WHILEAI_AGENT")
    if callable(agent) and not _is_backend(agent):
        return agent
    backend = resolve_model(agent, role="agent")
    user = user_model if user_model is not None else config.get("user_model")
    if user is not None and not callable(getattr(user, "complete", None)):
        user = resolve_model(user, role="user_model")
    return ModelAgent(backend, tools=tools, system_prompt=system_prompt, max_turns=max_turns, cache=cache,
                      temperature=temperature, max_tokens=max_tokens, user_model=user,
                      user_max_turns=user_max_turns)


def require_keys(agent: Any, *models: Any, cache: Any = None) -> None:
    """Fail before the first call when a model that will be called has no key (the agent's backend, its
    simulated user, and ``models`` such as the situation writer): the error names the variable to set. With a
    cassette in effect (other than mode="record") the check is left to the call, which may be a replay.

    Raises:
        MissingKey: a backend whose key is unset (``key_source()`` says ``unset (set OPENAI_API_KEY)``).
    """
    from whileai_core.errors import MissingKey
    from whileai_core.models.protocol import _is_backend
    from whileai_core.models.specs import resolve_model

    cassette = _resolve_cache(cache)
    if cassette is not None and getattr(cassette, "mode", None) != "record":
        return
    candidates: list[Any] = [getattr(agent, "backend", None), getattr(agent, "user_model", None)]
    for model in models:  # a spec string is resolved only to read where its key comes from
        if isinstance(model, str) and ":" in model:
            try:
                model = resolve_model(model, role="simulator")
            except ValueError:
                continue  # a bad spec is refused, with its fix, where it is used
        candidates.append(model if _is_backend(model) else None)
    for backend in candidates:
        source = backend.key_source() if callable(getattr(backend, "key_source", None)) else ""
        if str(source).startswith("unset"):
            var = (getattr(backend, "key_env", None) or ("the provider's key variable",))[0]
            raise MissingKey(f"{backend!r} has no API key: {var} is not set. Export {var}=... (or pass "
                             f"api_key= to the backend) before simulate(); no call was made")


__all__ = ["USER_SYSTEM_PROMPT", "ModelAgent", "Played", "as_agent", "require_keys", "situation_key"]
