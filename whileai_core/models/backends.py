"""Model backends over aiohttp (``models/http.py``): OpenAI, Anthropic, any OpenAI-compatible Endpoint, Ollama.

A backend is a small frozen object that holds a model name and where its key comes from; ``complete()``
sends one chat request and returns a provider-neutral ``Completion``. Infrastructure failures (HTTP 429/5xx,
timeouts, refused connections, malformed bodies) are retried with exponential backoff and full jitter,
honouring ``Retry-After``, and then raised as ``BackendError``: never confused with a wrong answer.

Keys are read from the environment at call time (or given as ``api_key=``), go only into request headers,
and never appear in reprs, errors, cassettes or rows. aiohttp is imported on first use, not at import time.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import json
import logging
import random
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar

from whileai_core.arguments import integer
from whileai_core.defaults import (
    AGENT_MAX_TOKENS,
    AGENT_TEMPERATURE,
    ANTHROPIC_ADAPT_TRIES,
    ANTHROPIC_BASE_URL,
    ANTHROPIC_MAX_TEMPERATURE,
    ANTHROPIC_MIN_MAX_TOKENS,
    ANTHROPIC_VERSION,
    DEAD_HOST_PROBE_S,
    DEAD_HOST_STRIKES,
    DEFAULT_OLLAMA_MODEL,
    DEFAULT_OPENAI_MODEL,
    ERROR_BODY_CHARS,
    HTTP_CONNECT_TIMEOUT_S,
    HTTP_MAX_CONNECTIONS,
    HTTP_TIMEOUT_S,
    OLLAMA_BASE_URL,
    OPENAI_BASE_URL,
    RETRY_AFTER_CAP_S,
    RETRY_BACKOFF_BASE_S,
    RETRY_BACKOFF_CAP_S,
    RETRY_BUDGET_S,
    RETRY_MAX_ATTEMPTS,
)
from whileai_core.errors import BackendError, InvalidArgument, InvalidArgumentType
from whileai_core.models import http
from whileai_core.redact import remember_secret
from whileai_core.tools import function_spec, json_schema_types, model_name
from whileai_core.tools import tool as make_tool

#: every spec-string form resolve_model() accepts, for error messages.
SPEC_FORMS = (
    "openai:<model>",
    "anthropic:<model>",
    "vllm:<model>@<url>  (also sglang:, tgi:, endpoint:)",
    "ollama:<model>",
)
_ENDPOINT_PROVIDERS = ("vllm", "sglang", "tgi", "endpoint")
log = logging.getLogger("whileai.backends")
#: ``json.dumps(x, ensure_ascii=False)``, its encoder built once (each request body and tool call goes through it)
_to_json = json.JSONEncoder(ensure_ascii=False).encode
_PROVIDERS = ("openai", "anthropic", "ollama", *_ENDPOINT_PROVIDERS)


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


# --------------------------------------------------------------------------------------------------
# Spec strings
# --------------------------------------------------------------------------------------------------
def _forms() -> str:
    return "; ".join(SPEC_FORMS)


def spec_problem(value: Any, *, role: str = "agent") -> str | None:
    """Why ``value`` is not a usable model spec for ``role`` (None when it is). Imports no httpx."""
    if _is_backend(value):
        return None
    if not isinstance(value, str):
        return f"{role}= takes a model string ({_forms()}) or a backend object; got {type(value).__name__}"
    s = value.strip()
    if not s:
        return f"{role}='' is empty; leave it unset instead, or name a model such as {role}='openai:gpt-4.1-mini'"
    if s.startswith(("http://", "https://")):
        return f"{role}={s!r} is a bare URL; name the model too: {role}='vllm:<model>@{s}'"
    provider, sep, rest = s.partition(":")
    if not sep:
        head, slash, tail = s.partition("/")
        if slash and head.lower() in _PROVIDERS:
            fix = f"vllm:{tail}@<url>" if head.lower() in _ENDPOINT_PROVIDERS else f"{head.lower()}:{tail}"
            return f"{role}={s!r} uses a slash; whileai writes the provider with a colon: {role}={fix!r}"
        return f"{role}={s!r} names no provider; write {role}='openai:{s}' (forms: {_forms()})"
    p = provider.lower()
    if p not in _PROVIDERS:
        return f"{role}={s!r}: {provider!r} is not a provider whileai knows; forms: {_forms()}"
    if not rest.strip():
        return f"{role}={s!r} names no model after '{provider}:'; e.g. {role}='{p}:<model>'"
    if p in _ENDPOINT_PROVIDERS:
        at = rest.find("@http")
        if at <= 0:
            return f"{role}={s!r} needs the server URL: {role}='{p}:{rest.split('@')[0]}@http://host:port/v1'"
    return None


def _is_backend(value: Any) -> bool:
    return callable(getattr(value, "complete", None)) and isinstance(getattr(value, "spec", None), str)


def resolve_model(model: Any, *, role: str = "agent") -> Any:
    """A backend object from a spec string (``"openai:gpt-4.1-mini"``, ``"vllm:<model>@<url>"``, ...);
    a backend object is returned as it is. Bad specs raise ``ValueError`` naming ``role=`` and the fix."""
    problem = spec_problem(model, role=role)
    if problem:
        raise InvalidArgument(problem)
    if _is_backend(model):
        return model
    s = model.strip()
    provider, _, rest = s.partition(":")
    p = provider.lower()
    if p == "openai":
        return OpenAI(rest)
    if p == "anthropic":
        return Anthropic(rest)
    if p == "ollama":
        return Ollama(rest)
    at = rest.find("@http")
    return Endpoint(rest[:at], url=rest[at + 1:], provider=p)


# --------------------------------------------------------------------------------------------------
# Transport
# --------------------------------------------------------------------------------------------------
def _retry_after(headers: Mapping[str, str], cap: float) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), clipped to cap."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return min(cap, max(0.0, float(ms) / 1000.0))
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return min(cap, max(0.0, float(raw)))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return min(cap, max(0.0, when.timestamp() - time.time()))


def backoff_ceiling(attempt: int, base: float, cap: float) -> float:
    """The ceiling of the full-jitter sleep after failed try number ``attempt`` (1-based): base * 2^(attempt-1).

    The sleep is uniform(0, ceiling): "full jitter", Brooker 2015 (AWS Architecture Blog, "Exponential Backoff And
    Jitter")."""
    return min(cap, base * (2.0 ** (attempt - 1)))


class _Breaker:
    """Per-backend dead-host circuit breaker (whileai SDK #816: a dead host looked like a silent stall).

    A call that ends unable to reach the host (connection refused, DNS) or with 404/410 is a strike; 5xx,
    429 and timeouts are not (the host is there, just busy). After ``strikes`` in a row, calls fail fast
    with a ``BackendError`` saying so, except one probe call every ``probe_s`` seconds; a success closes it.
    """

    def __init__(self, strikes: int, probe_s: float) -> None:
        self.limit = strikes
        self.probe_s = probe_s
        self.strikes = 0
        self.last = ""
        self._next_probe = 0.0
        self._lock = threading.Lock()

    def allow(self) -> bool | None:
        """True: go ahead; None: go ahead as a single-attempt probe; False: fail fast."""
        if self.strikes < self.limit:  # the common case, read without the lock (an int read is atomic)
            return True
        with self._lock:
            if self.strikes < self.limit:
                return True
            now = time.monotonic()
            if now >= self._next_probe:
                self._next_probe = now + self.probe_s
                return None
            return False

    def record(self, *, dead: bool, what: str = "") -> None:
        if not dead and not self.strikes:  # a success on a healthy host: nothing to change
            return
        with self._lock:
            if dead:
                self.strikes += 1
                self.last = what
                if self.strikes == self.limit:
                    self._next_probe = time.monotonic() + self.probe_s
            else:
                self.strikes = 0


@dataclass(frozen=True, repr=False, eq=True)
class _Transport:
    """The HTTP settings every backend takes, keyword-only (each a named constant in defaults.py)."""

    _: KW_ONLY
    timeout: float = HTTP_TIMEOUT_S
    connect_timeout: float = HTTP_CONNECT_TIMEOUT_S
    max_attempts: int = RETRY_MAX_ATTEMPTS
    backoff_s: float = RETRY_BACKOFF_BASE_S
    backoff_cap_s: float = RETRY_BACKOFF_CAP_S
    retry_after_cap_s: float = RETRY_AFTER_CAP_S
    retry_budget_s: float = RETRY_BUDGET_S
    max_connections: int = HTTP_MAX_CONNECTIONS
    dead_host_strikes: int = DEAD_HOST_STRIKES
    dead_host_probe_s: float = DEAD_HOST_PROBE_S
    _lock: Any = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        """What travels (pickle, a Ray worker, a process pool): the settings, not this process's lock, breaker
        and memos, which the copy builds afresh (a ``wai.Endpoint`` can name the model of a run on Ray)."""
        return {k: v for k, v in self.__dict__.items() if k not in _PROCESS_LOCAL}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        object.__setattr__(self, "_lock", threading.Lock())


#: a backend's per-process state: its lock, dead-host breaker and memos (rebuilt on the other side of a pickle)
_PROCESS_LOCAL = frozenset({"_lock", "_dead_host", "_targets", "_spec"})


class _HTTPBackend(_Transport):
    """Shared machinery: the HTTP client (``models/http.py``), retries, key handling, cache hooks."""

    provider: ClassVar[str] = ""
    key_env: ClassVar[tuple[str, ...]] = ()

    # fields every subclass defines (the transport settings come from _Transport)
    model: str
    api_key: str | None

    # ---- identity ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def cache_name(self) -> str:
        """What a cassette keys on: provider and model, not the URL (so a port change keeps recordings)."""
        return f"{self.provider}:{self.model}"

    @property
    def __name__(self) -> str:
        return self.spec

    def _key(self) -> str | None:
        """The key this backend sends; remembered by ``whileai_core.redact`` so no error text carries it."""
        key = self.api_key or next((v for v in (http.getenv(var) for var in self.key_env) if v), None)
        if key:
            remember_secret(key)
        return key

    def key_source(self) -> str:
        if self.api_key:
            return "given"
        for var in self.key_env:
            if http.getenv(var):
                return var
        if self._key_optional():
            return "none needed"
        return f"unset (set {self.key_env[0]})" if self.key_env else "none needed"

    def _key_optional(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, key={self.key_source()})"

    __str__ = __repr__

    def _check(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise InvalidArgument(f"{type(self).__name__}(model=...) needs a model name; got {self.model!r}")
        for name in ("timeout", "connect_timeout", "backoff_s", "backoff_cap_s", "retry_after_cap_s",
                     "dead_host_probe_s", "retry_budget_s"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or v < 0:
                raise InvalidArgument(f"{name}= must be a number >= 0; got {v!r}")
        for name in ("max_attempts", "max_connections", "dead_host_strikes"):
            v = getattr(self, name)
            integer(name, v, minimum=1)

    # ---- http ----------------------------------------------------------------------------------
    def _breaker(self) -> _Breaker:
        found = self.__dict__.get("_dead_host")
        if found is not None:
            return found
        with self._lock:  # type: ignore[attr-defined]
            found = self.__dict__.get("_dead_host")
            if found is None:
                found = _Breaker(self.dead_host_strikes, self.dead_host_probe_s)
                object.__setattr__(self, "_dead_host", found)
        return found

    def close(self) -> None:
        """Kept for callers that close backends: connections belong to the event loop's session
        (``models/http.py``), which the rollout engine closes when its run ends."""

    def _headers(self) -> dict[str, str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _target(self, path: str) -> tuple[str, str, dict[str, str], list[str]]:
        """(URL to send, URL to show, headers, secrets to redact): ``user:password@`` goes as Basic auth.
        Worked out once per (path, base URL, key): the key and URL may come from the environment, so both are
        part of the memo's key."""
        memo = self.__dict__.get("_targets")
        if memo is None:
            memo = {}
            object.__setattr__(self, "_targets", memo)
        at = (path, self.base_url, self._key())
        found = memo.get(at)
        if found is None:
            found = memo[at] = self._target_of(path)
        return found  # the headers dict is shared: nothing downstream changes it

    def _target_of(self, path: str) -> tuple[str, str, dict[str, str], list[str]]:
        url = self.base_url.rstrip("/") + path
        headers = self._headers()
        headers["content-type"] = "application/json"
        secrets = [self._key() or ""]
        safe = _safe_url(url)
        if safe != url:  # user:password@ in the URL: send it as basic auth, show it nowhere
            from urllib.parse import unquote, urlsplit

            parts = urlsplit(url)
            pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            headers.setdefault("authorization", "Basic " + base64.b64encode(pair.encode()).decode())
            secrets += [pair, unquote(parts.password or ""), parts.password or ""]
        return safe, safe, headers, secrets

    def _post(self, path: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], int, tuple[float, ...]]:
        """POST JSON with retries from a synchronous caller (on the shared background loop)."""
        return http.run_sync(self._apost(path, body))

    async def _apost(self, path: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], int, tuple[float, ...]]:
        """POST JSON with retries; returns (parsed body, attempts, waits). Raises BackendError.

        Each try is capped by ``timeout`` in total (connect to the last body byte); the retries after the first
        try share ``retry_budget_s`` (their waits and their tries), so one call ends within
        ``timeout + retry_budget_s`` whatever the server does.
        """
        url, safe, headers, secrets = self._target(path)
        breaker = self._breaker()
        allowed = breaker.allow()
        if allowed is False:
            raise BackendError(
                f"{self.provider} host {safe} looks dead: {breaker.strikes} calls in a row could not reach it "
                f"({breaker.last}); stopped instead of retrying. Check that the server is up and the URL is "
                f"right (url=, or the model spec in wai.configure / WHILEAI_AGENT)", url=safe, attempts=0)
        max_attempts = 1 if allowed is None else self.max_attempts
        payload = http.dumps(body)
        waits: list[float] = []
        last, status, unreachable = "no attempt made", None, False
        retry_deadline = None
        attempt = 0
        for attempt in range(1, max_attempts + 1):
            wait, timeout = None, self.timeout
            if retry_deadline is not None:
                timeout = min(timeout, max(0.0, retry_deadline - time.monotonic()))
            try:
                status, resp_headers, raw = await http.post(url, payload, headers, timeout=timeout,
                                                            connect_timeout=self.connect_timeout)
            except asyncio.TimeoutError:
                last, status, unreachable = f"timed out: no complete reply within {timeout:g} s (timeout=)", None, False
            except Exception as exc:  # noqa: BLE001 - aiohttp's ClientError family, OSError: the transport broke
                import aiohttp

                if not isinstance(exc, (aiohttp.ClientError, OSError)):
                    raise
                last, status = f"{type(exc).__name__}: {http.redact(str(exc), secrets)}", None
                unreachable = isinstance(exc, aiohttp.ClientConnectorError)
            else:
                unreachable = False
                text = "" if status < 400 else raw[:ERROR_BODY_CHARS].decode("utf-8", "replace")
                if status == 429 or status >= 500:
                    wait = _retry_after(resp_headers, self.retry_after_cap_s)
                    last = f"HTTP {status}: {http.redact(text, secrets)}"
                elif status >= 400:
                    self._refused(status, safe, http.redact(text, secrets), attempt, breaker)
                else:
                    try:
                        data = http.loads(raw)
                    except ValueError:
                        text = raw[:ERROR_BODY_CHARS].decode("utf-8", "replace")
                        last = f"HTTP {status} with a body that is not JSON: {http.redact(text, secrets)!r}"
                    else:
                        if isinstance(data, dict):
                            breaker.record(dead=False)
                            return data, attempt, tuple(waits)
                        last = f"HTTP {status} with a JSON {type(data).__name__}, not an object"
            if retry_deadline is None:
                retry_deadline = time.monotonic() + self.retry_budget_s
            if attempt == max_attempts:
                break
            if wait is None:
                wait = random.uniform(0.0, backoff_ceiling(attempt, self.backoff_s, self.backoff_cap_s))
            if time.monotonic() + wait >= retry_deadline:
                last += f" (retry_budget_s={self.retry_budget_s:g} spent)"
                break
            waits.append(wait)
            log.info("%s call to %s: %s; retry %d of %d in %.2f s", self.provider, safe, last, attempt,
                     max_attempts - 1, wait)
            await asyncio.sleep(wait)
        breaker.record(dead=unreachable, what=last)
        raise BackendError(
            f"{self.provider} call to {safe} failed after {attempt} attempt(s): {last}. "
            f"This is an infrastructure error, not a wrong answer; raise max_attempts= or check the server.",
            status=status, url=safe, attempts=attempt, retryable=True)

    def _refused(self, status: int, safe: str, text: str, attempt: int, breaker: _Breaker) -> None:
        """Raise the BackendError of a 4xx (never retried); 404/410 count as a dead-host strike."""
        hint = ""
        if status in (401, 403):
            hint = (f"; check the key ({self.key_source()})"
                    + (f": export {self.key_env[0]}=..." if self.key_env else ""))
        breaker.record(dead=status in (404, 410), what=f"HTTP {status}")
        raise BackendError(f"{self.provider} call to {safe} was refused: HTTP {status}: {text}{hint}",
                           status=status, url=safe, attempts=attempt, retryable=False) from None

    # ---- the one call --------------------------------------------------------------------------
    def _prepare(self, messages: Sequence[Mapping[str, Any]], tools: Any, temperature: float, max_tokens: int,
                 trial: int, cache: Any, extra: Mapping[str, Any] | None) -> tuple[Any, ...]:
        """Checked (messages, schemas, params, cassette request or None, cassette hit or None)."""
        if type(messages) is not list and (not isinstance(messages, Sequence) or isinstance(messages, (str, bytes))):
            raise InvalidArgument("messages= must be a non-empty list of {'role', 'content'} dicts")
        if not messages:
            raise InvalidArgument("messages= must be a non-empty list of {'role', 'content'} dicts")
        trial = integer("trial", trial, minimum=0)
        max_tokens = integer("max_tokens", max_tokens, minimum=1)
        if type(tools) is list and all(type(t) is dict and "function" in t for t in tools):
            schemas = tools  # already OpenAI function dicts (the agent loop normalises once)
        else:
            schemas = tool_schemas(tools)
        params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if extra:
            params.update(extra)
        request = hit = None
        if cache:
            request = {"model": self.cache_name, "messages": list(messages), "tools": schemas,
                       "params": params, "trial": trial}
            found = cache.get(request)
            if found is not None:
                hit = Completion.from_dict(found, cached=True)
        return list(messages), schemas, params, request, hit

    def complete(self, messages: Sequence[Mapping[str, Any]], *, tools: Any = None,
                 temperature: float = AGENT_TEMPERATURE, max_tokens: int = AGENT_MAX_TOKENS,
                 trial: int = 0, cache: Any = None, extra: Mapping[str, Any] | None = None) -> Completion:
        """Send one chat request (OpenAI-style ``messages``) and return a ``Completion``.

        ``trial`` is the repeat index: it is part of the cassette key so k repeats stay independent.
        ``cache`` is a ``Cassette`` (or None): hits are returned without a call; live replies are recorded.
        From a thread; inside an event loop ``await backend.acomplete(...)`` (same arguments).
        """
        msgs, schemas, params, request, hit = self._prepare(messages, tools, temperature, max_tokens, trial,
                                                            cache, extra)
        if hit is not None:
            return hit
        completion = http.run_sync(self._acomplete_live(msgs, schemas, params))
        if request is not None:
            cache.put(request, completion.to_dict())
        return completion

    async def acomplete(self, messages: Sequence[Mapping[str, Any]], *, tools: Any = None,
                        temperature: float = AGENT_TEMPERATURE, max_tokens: int = AGENT_MAX_TOKENS,
                        trial: int = 0, cache: Any = None, extra: Mapping[str, Any] | None = None) -> Completion:
        """``complete`` for a caller on an event loop (the rollout engine): the call is awaited, not blocked on."""
        msgs, schemas, params, request, hit = self._prepare(messages, tools, temperature, max_tokens, trial,
                                                            cache, extra)
        if hit is not None:
            return hit
        completion = await self._acomplete_live(msgs, schemas, params)
        if request is not None:
            cache.put(request, completion.to_dict())
        return completion

    async def _acomplete_live(self, messages: list[Mapping[str, Any]], schemas: list[dict[str, Any]],
                              params: dict[str, Any]) -> Completion:  # pragma: no cover - overridden
        raise NotImplementedError


def _parse_arguments(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, str) and raw:  # what the chat API sends: the arguments as a JSON string
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            return raw, f"arguments are not valid JSON ({exc.msg})"
        if isinstance(value, dict):
            return value, None
        return raw, f"arguments are JSON {type(value).__name__}, not an object"
    if isinstance(raw, Mapping):
        return dict(raw), None
    if raw is None or raw == "":
        return {}, None
    return raw, f"arguments are {type(raw).__name__}, not a JSON object"


def _malformed(provider: str, what: str, attempts: int) -> BackendError:
    return BackendError(f"{provider} reply is malformed: {what}; the server did not follow the chat API",
                        attempts=attempts, retryable=False)


class _OpenAICompatible(_HTTPBackend):
    """POST {base}/chat/completions (OpenAI, vLLM, SGLang, TGI, Ollama)."""

    def _headers(self) -> dict[str, str]:
        key = self._key()
        return {"authorization": f"Bearer {key}"} if key else {}

    async def _acomplete_live(self, messages: list[Mapping[str, Any]], schemas: list[dict[str, Any]],
                              params: dict[str, Any]) -> Completion:
        body: dict[str, Any] = {"model": self.model, "messages": messages, **params}
        if schemas:
            body["tools"] = schemas
        data, attempts, waits = await self._apost("/chat/completions", body)
        try:
            return self._parse(data, attempts, waits)
        except BackendError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            # a 200 whose usage or tool_calls is not the chat API's shape: the server's fault, not the agent's
            raise _malformed(self.provider, f"{type(exc).__name__}: {exc}"[:ERROR_BODY_CHARS], attempts) from None

    def _parse(self, data: Mapping[str, Any], attempts: int, waits: tuple[float, ...]) -> Completion:
        try:
            choice = data["choices"][0]
            msg = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise _malformed(self.provider, f"no choices[0].message in keys {sorted(data)[:8]}", attempts) from None
        if type(msg) is not dict and not isinstance(msg, Mapping):
            raise _malformed(self.provider, f"choices[0].message is {type(msg).__name__}, not an object", attempts)
        raw_calls = msg.get("tool_calls") or []
        if not isinstance(raw_calls, list) or not all(type(tc) is dict or isinstance(tc, Mapping) for tc in raw_calls):
            raise _malformed(self.provider, f"tool_calls is not a list of objects: {raw_calls!r:.120}", attempts)
        calls = []
        for i, tc in enumerate(raw_calls):
            fn = tc.get("function") or {}
            if type(fn) is not dict and not isinstance(fn, Mapping):
                raise _malformed(self.provider, f"tool_calls[{i}].function is {type(fn).__name__}", attempts)
            args, err = _parse_arguments(fn.get("arguments"))
            calls.append(ToolCall(str(tc.get("id") or f"call_{i}"), str(fn.get("name") or ""), args, err))
        finish = str(choice.get("finish_reason") or ("tool_calls" if calls else "stop"))
        if finish == "function_call":
            finish = "tool_calls"
        usage = _usage(data.get("usage"), ("prompt_tokens", "completion_tokens"), self.provider, attempts)
        return Completion(text=str(msg.get("content") or ""), tool_calls=tuple(calls), finish_reason=finish,
                          usage=usage, model=str(data.get("model") or self.model), attempts=attempts, waits=waits)


def _usage(raw: Any, names: tuple[str, str], provider: str, attempts: int) -> dict[str, int]:
    """Token usage as {input_tokens, output_tokens}; a usage that is not an object of counts is malformed."""
    raw = raw or {}
    if type(raw) is not dict and not isinstance(raw, Mapping):
        raise _malformed(provider, f"usage is {type(raw).__name__}, not an object", attempts)
    out = {}
    for ours, theirs in zip(("input_tokens", "output_tokens"), names):
        value = raw.get(theirs) or 0
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise _malformed(provider, f"usage.{theirs} is {value!r:.40}, not a token count", attempts)
        out[ours] = int(value)
    return out


@dataclass(frozen=True, repr=False, eq=True)
class OpenAI(_OpenAICompatible):
    """OpenAI chat completions. Key from ``OPENAI_API_KEY`` (or ``api_key=``); ``OPENAI_BASE_URL`` moves it.

    Args:
        model: the model name.
        api_key: the key (default: ``OPENAI_API_KEY``).
        url: the base URL (default: ``OPENAI_BASE_URL`` or OpenAI's).
        timeout: total seconds one try of a request may take (connect, send, every read) (``HTTP_TIMEOUT_S`` 120).
        retry_budget_s: seconds every retry of one call may add after its first try, waits included
            (``RETRY_BUDGET_S`` 300; convention), so a call ends within ``timeout + retry_budget_s``.
        connect_timeout: TCP connect timeout in seconds (``HTTP_CONNECT_TIMEOUT_S`` 10).
        max_attempts: tries per call on 429/5xx/transport errors (``RETRY_MAX_ATTEMPTS`` 4).
        backoff_s: the first backoff ceiling, doubling per retry, full jitter (``RETRY_BACKOFF_BASE_S`` 0.4).
        backoff_cap_s: the ceiling on one backoff (``RETRY_BACKOFF_CAP_S`` 8).
        retry_after_cap_s: the longest Retry-After honoured (``RETRY_AFTER_CAP_S`` 60).
        max_connections: pooled connections (``HTTP_MAX_CONNECTIONS`` 64).
        dead_host_strikes: consecutive connection failures before the host is treated as down
            (``DEAD_HOST_STRIKES``).
        dead_host_probe_s: seconds before a down host is tried again (``DEAD_HOST_PROBE_S``).

    Example:
        ```python
        judge = wai.Judge("...", model=wai.OpenAI("gpt-4.1-mini"))
        ```
    """

    model: str = DEFAULT_OPENAI_MODEL
    api_key: str | None = field(default=None, repr=False, compare=False)
    url: str | None = None

    provider: ClassVar[str] = "openai"
    key_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)

    def __post_init__(self) -> None:
        self._check()

    @property
    def base_url(self) -> str:
        return self.url or http.getenv("OPENAI_BASE_URL") or OPENAI_BASE_URL


def _safe_url(url: str) -> str:
    """The URL without any ``user:password@`` part (what reprs, specs and rows may show)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _is_local(url: str) -> bool:
    from urllib.parse import urlparse

    host = (urlparse(url).hostname or "").lower()
    return host in ("localhost", "127.0.0.1", "::1") or host.endswith(".local")


@dataclass(frozen=True, repr=False, eq=True)
class Endpoint(_OpenAICompatible):
    """Any OpenAI-compatible server (vLLM, SGLang, TGI): ``Endpoint("Qwen/Qwen3-4B", url="http://host:8000/v1")``.

    Key from ``api_key=`` or ``WHILEAI_ENDPOINT_API_KEY`` / ``VLLM_API_KEY``; never ``OPENAI_API_KEY``
    (that would send your OpenAI key to a third-party host).

    Args:
        model: the served model's name.
        url: the server's base URL, e.g. ``http://host:8000/v1``.
        api_key: the key (default: ``WHILEAI_ENDPOINT_API_KEY`` / ``VLLM_API_KEY``; never ``OPENAI_API_KEY``).
        provider: a label for the server kind (``"vllm"``).
        timeout: total seconds one try of a request may take (connect, send, every read) (``HTTP_TIMEOUT_S`` 120). Default ``HTTP_TIMEOUT_S`` (120.0)
            in defaults.py: per-request read timeout.
        retry_budget_s: seconds every retry of one call may add after its first try, waits included
            (``RETRY_BUDGET_S`` 300; convention), so a call ends within ``timeout + retry_budget_s``.
        connect_timeout: TCP connect timeout in seconds (``HTTP_CONNECT_TIMEOUT_S`` 10). Default
            ``HTTP_CONNECT_TIMEOUT_S`` (10.0) in defaults.py: TCP connect timeout.
        max_attempts: tries per call on 429/5xx/transport errors (``RETRY_MAX_ATTEMPTS`` 4). Default
            ``RETRY_MAX_ATTEMPTS`` (4) in defaults.py: tries per call (1 + 3 retries).
        backoff_s: the first backoff ceiling, doubling per retry, full jitter (``RETRY_BACKOFF_BASE_S`` 0.4).
            Default ``RETRY_BACKOFF_BASE_S`` (0.4) in defaults.py: first backoff ceiling, doubling each retry.
        backoff_cap_s: the ceiling on one backoff (``RETRY_BACKOFF_CAP_S`` 8). Default ``RETRY_BACKOFF_CAP_S``
            (8.0) in defaults.py: ceiling on one backoff.
        retry_after_cap_s: the longest Retry-After honoured (``RETRY_AFTER_CAP_S`` 60). Default
            ``RETRY_AFTER_CAP_S`` (60.0) in defaults.py: longest Retry-After honoured before it is clipped.
        max_connections: pooled connections (``HTTP_MAX_CONNECTIONS`` 64). Default ``HTTP_MAX_CONNECTIONS`` (64)
            in defaults.py: pooled connections per backend, >= 2x DEFAULT_CONCURRENCY so workers never queue on
            the pool.
        dead_host_strikes: consecutive connection failures before the host is treated as down
            (``DEAD_HOST_STRIKES``). Default ``DEAD_HOST_STRIKES`` (3) in defaults.py: calls in a row that could
            not reach the host (or got 404/410) before later calls fail fast.
        dead_host_probe_s: seconds before a down host is tried again (``DEAD_HOST_PROBE_S``). Default
            ``DEAD_HOST_PROBE_S`` (5.0) in defaults.py: while the breaker is open, one call per this many seconds
            still tries the host.

    Example:
        ```python
        agent_model = wai.Endpoint("Qwen/Qwen3-4B", url="http://127.0.0.1:8000/v1")
        ```
    """

    model: str = ""
    url: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    provider_name: str = "vllm"

    key_env: ClassVar[tuple[str, ...]] = ("WHILEAI_ENDPOINT_API_KEY", "VLLM_API_KEY")

    def __init__(self, model: str = "", url: str | None = None, *, api_key: str | None = None,
                 provider: str = "vllm", timeout: float = HTTP_TIMEOUT_S,
                 connect_timeout: float = HTTP_CONNECT_TIMEOUT_S, max_attempts: int = RETRY_MAX_ATTEMPTS,
                 backoff_s: float = RETRY_BACKOFF_BASE_S, backoff_cap_s: float = RETRY_BACKOFF_CAP_S,
                 retry_after_cap_s: float = RETRY_AFTER_CAP_S, max_connections: int = HTTP_MAX_CONNECTIONS,
                 dead_host_strikes: int = DEAD_HOST_STRIKES, dead_host_probe_s: float = DEAD_HOST_PROBE_S,
                 retry_budget_s: float = RETRY_BUDGET_S) -> None:
        values = dict(model=model, url=url, api_key=api_key, provider_name=provider, timeout=timeout,
                      connect_timeout=connect_timeout, max_attempts=max_attempts, backoff_s=backoff_s,
                      backoff_cap_s=backoff_cap_s, retry_after_cap_s=retry_after_cap_s,
                      retry_budget_s=retry_budget_s,
                      max_connections=max_connections, dead_host_strikes=dead_host_strikes,
                      dead_host_probe_s=dead_host_probe_s, _lock=threading.Lock())
        for k, v in values.items():
            object.__setattr__(self, k, v)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise InvalidArgument(f"Endpoint({model!r}) needs url='http://host:port/v1' (the server's OpenAI-compatible "
                             f"base URL); got url={url!r}")
        if provider not in _ENDPOINT_PROVIDERS:
            raise InvalidArgument(f"provider= must be one of {list(_ENDPOINT_PROVIDERS)}; got {provider!r}")
        self._check()

    @property
    def provider(self) -> str:  # type: ignore[override]
        return self.provider_name

    @property
    def base_url(self) -> str:
        return str(self.url)

    @property
    def spec(self) -> str:
        found = self.__dict__.get("_spec")  # asked for on every rollout (the row names its agent)
        if found is None:
            found = f"{self.provider}:{self.model}@{_safe_url(str(self.url))}"
            object.__setattr__(self, "_spec", found)
        return found

    def _key_optional(self) -> bool:
        return True

    def key_source(self) -> str:
        src = super().key_source()
        if src == "none needed" and not _is_local(str(self.url)):
            return "none"
        return src

    def __repr__(self) -> str:
        return f"Endpoint(model={self.model!r}, url={_safe_url(str(self.url))!r}, key={self.key_source()})"


@dataclass(frozen=True, repr=False, eq=True)
class Ollama(_OpenAICompatible):
    """A local Ollama server through its OpenAI-compatible API (no key).

    Args:
        model: the Ollama model tag.
        url: the server's OpenAI-compatible URL.
        timeout: total seconds one try of a request may take (connect, send, every read) (``HTTP_TIMEOUT_S`` 120).
        retry_budget_s: seconds every retry of one call may add after its first try, waits included
            (``RETRY_BUDGET_S`` 300; convention), so a call ends within ``timeout + retry_budget_s``.
        connect_timeout: TCP connect timeout in seconds (``HTTP_CONNECT_TIMEOUT_S`` 10).
        max_attempts: tries per call on 429/5xx/transport errors (``RETRY_MAX_ATTEMPTS`` 4).
        backoff_s: the first backoff ceiling, doubling per retry, full jitter (``RETRY_BACKOFF_BASE_S`` 0.4).
        backoff_cap_s: the ceiling on one backoff (``RETRY_BACKOFF_CAP_S`` 8).
        retry_after_cap_s: the longest Retry-After honoured (``RETRY_AFTER_CAP_S`` 60).
        max_connections: pooled connections (``HTTP_MAX_CONNECTIONS`` 64).
        dead_host_strikes: consecutive connection failures before the host is treated as down
            (``DEAD_HOST_STRIKES``).
        dead_host_probe_s: seconds before a down host is tried again (``DEAD_HOST_PROBE_S``).

    Example:
        ```python
        judge = wai.Judge("...", model=wai.Ollama("llama3.1:8b"))
        ```
    """

    model: str = DEFAULT_OLLAMA_MODEL
    url: str = OLLAMA_BASE_URL
    api_key: None = field(default=None, init=False, repr=False, compare=False)  # Ollama needs no key

    provider: ClassVar[str] = "ollama"

    def __post_init__(self) -> None:
        self._check()

    @property
    def base_url(self) -> str:
        return self.url

    def _key_optional(self) -> bool:
        return True


# --------------------------------------------------------------------------------------------------
# Anthropic Messages API
# --------------------------------------------------------------------------------------------------
def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, str):
                parts.append(block)
        return "".join(parts)
    return str(content)


def to_anthropic(messages: Sequence[Mapping[str, Any]],
                 schemas: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """OpenAI-style history and tool schemas -> (system, Messages-API messages, Anthropic tools).

    System messages go to ``system``; assistant ``tool_calls`` become ``tool_use`` blocks; ``tool`` messages
    become user ``tool_result`` blocks; consecutive same-role messages are merged.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "system":
            system.append(_text_of(m.get("content")))
        elif role == "user":
            push("user", [{"type": "text", "text": _text_of(m.get("content"))}])
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            text = _text_of(m.get("content"))
            if text:
                blocks.append({"type": "text", "text": text})
            for tc in m.get("tool_calls") or ():
                fn = tc.get("function") or {}
                args, _ = _parse_arguments(fn.get("arguments"))
                blocks.append({"type": "tool_use", "id": tc.get("id"), "name": fn.get("name"),
                               "input": args if isinstance(args, dict) else {"_raw": args}})
            push("assistant", blocks or [{"type": "text", "text": ""}])
        elif role == "tool":
            push("user", [{"type": "tool_result", "tool_use_id": m.get("tool_call_id"),
                           "content": _text_of(m.get("content"))}])
        else:
            raise InvalidArgument(f"messages[{i}] has role {role!r}; use system, user, assistant or tool")
    tools = []
    for s in schemas:
        fn = s.get("function") or {}
        tools.append({"name": fn.get("name"), "description": fn.get("description", ""),
                      "input_schema": fn.get("parameters") or {"type": "object", "properties": {}}})
    return "\n\n".join(t for t in system if t), out, tools


def _mentions(text: str, *words: str) -> bool:
    low = text.lower()
    return any(w in low for w in words)


_ANTHROPIC_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


@dataclass(frozen=True, repr=False, eq=True)
class Anthropic(_HTTPBackend):
    """Anthropic's Messages API, translated to and from the OpenAI chat shape. Key from ``ANTHROPIC_API_KEY``.

    Args:
        model: the model name.
        api_key: the key (default: ``ANTHROPIC_API_KEY``).
        url: the base URL.
        max_temperature: temperatures above this are clipped (the API's ceiling).
        min_max_tokens: the smallest ``max_tokens`` sent.
        adapt_tries: retries that adapt a refused request (e.g. an unsupported parameter).
        version: the ``anthropic-version`` header.
        timeout: total seconds one try of a request may take (connect, send, every read) (``HTTP_TIMEOUT_S`` 120).
        retry_budget_s: seconds every retry of one call may add after its first try, waits included
            (``RETRY_BUDGET_S`` 300; convention), so a call ends within ``timeout + retry_budget_s``.
        connect_timeout: TCP connect timeout in seconds (``HTTP_CONNECT_TIMEOUT_S`` 10).
        max_attempts: tries per call on 429/5xx/transport errors (``RETRY_MAX_ATTEMPTS`` 4).
        backoff_s: the first backoff ceiling, doubling per retry, full jitter (``RETRY_BACKOFF_BASE_S`` 0.4).
        backoff_cap_s: the ceiling on one backoff (``RETRY_BACKOFF_CAP_S`` 8).
        retry_after_cap_s: the longest Retry-After honoured (``RETRY_AFTER_CAP_S`` 60).
        max_connections: pooled connections (``HTTP_MAX_CONNECTIONS`` 64).
        dead_host_strikes: consecutive connection failures before the host is treated as down
            (``DEAD_HOST_STRIKES``).
        dead_host_probe_s: seconds before a down host is tried again (``DEAD_HOST_PROBE_S``).

    Example:
        ```python
        judge = wai.Judge("...", model=wai.Anthropic("claude-sonnet-4-5"))
        ```
    """

    model: str = ""
    api_key: str | None = field(default=None, repr=False, compare=False)
    url: str | None = None
    max_temperature: float = ANTHROPIC_MAX_TEMPERATURE
    min_max_tokens: int = ANTHROPIC_MIN_MAX_TOKENS
    adapt_tries: int = ANTHROPIC_ADAPT_TRIES
    version: str = ANTHROPIC_VERSION

    provider: ClassVar[str] = "anthropic"
    key_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY", "WHILEAI_ANTHROPIC_API_KEY")

    def __post_init__(self) -> None:
        self._check()
        for name, lo in (("min_max_tokens", 1), ("adapt_tries", 0)):
            v = getattr(self, name)
            integer(name, v, minimum=lo)

    @property
    def base_url(self) -> str:
        return self.url or http.getenv("ANTHROPIC_BASE_URL") or ANTHROPIC_BASE_URL

    def _headers(self) -> dict[str, str]:
        h = {"anthropic-version": self.version}
        key = self._key()
        if key:
            h["x-api-key"] = key
        return h

    def _adapt(self, body: dict[str, Any], exc: BackendError) -> str | None:
        """Change the body after a 400 the Messages API explains: drop a refused temperature, halve an
        oversized max_tokens (not below ``min_max_tokens``). None when nothing applies."""
        text = str(exc)
        if "temperature" in body and _mentions(text, "temperature"):
            del body["temperature"]
            return "dropped temperature"
        if _mentions(text, "max_tokens", "too long", "context", "length") and body["max_tokens"] > self.min_max_tokens:
            body["max_tokens"] = max(self.min_max_tokens, body["max_tokens"] // 2)
            return f"max_tokens={body['max_tokens']}"
        return None

    async def _acomplete_live(self, messages: list[Mapping[str, Any]], schemas: list[dict[str, Any]],
                              params: dict[str, Any]) -> Completion:
        system, converted, tools = to_anthropic(messages, schemas)
        body: dict[str, Any] = {"model": self.model, "messages": converted}
        p = dict(params)
        temp = p.pop("temperature", None)
        if temp is not None:
            body["temperature"] = min(float(temp), self.max_temperature)
        body["max_tokens"] = p.pop("max_tokens")
        body.update(p)
        if system:
            body["system"] = system
        if tools:
            body["tools"] = tools
        adapted: list[str] = []
        for _ in range(self.adapt_tries + 1):
            try:
                data, attempts, waits = await self._apost("/messages", body)
                break
            except BackendError as exc:
                change = self._adapt(body, exc) if exc.status == 400 and len(adapted) < self.adapt_tries else None
                if change is None:
                    raise
                adapted.append(change)
        return self._parse(data, attempts, waits)

    def _parse(self, data: Mapping[str, Any], attempts: int, waits: tuple[float, ...]) -> Completion:
        content = data.get("content")
        if not isinstance(content, list):
            raise _malformed(self.provider, f"no content list in keys {sorted(data)[:8]}", attempts)
        texts, calls = [], []
        for i, block in enumerate(content):
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_use":
                args, err = _parse_arguments(block.get("input"))
                calls.append(ToolCall(str(block.get("id") or f"toolu_{i}"), str(block.get("name") or ""), args, err))
        usage = _usage(data.get("usage"), ("input_tokens", "output_tokens"), self.provider, attempts)
        finish = _ANTHROPIC_STOP.get(str(data.get("stop_reason")), "tool_calls" if calls else "stop")
        return Completion(text="".join(texts), tool_calls=tuple(calls), finish_reason=finish, usage=usage,
                          model=str(data.get("model") or self.model), attempts=attempts, waits=waits)


__all__ = [
    "SPEC_FORMS",
    "Anthropic",
    "BackendError",
    "Completion",
    "Endpoint",
    "Ollama",
    "OpenAI",
    "ToolCall",
    "backoff_ceiling",
    "resolve_model",
    "spec_problem",
    "to_anthropic",
    "tool_schemas",
]
