"""The shared HTTP base of the model backends (over ``models/http.py``'s aiohttp client): retries, keys, the
dead-host breaker, the one chat call with its cassette hooks, and the reply-parsing helpers every provider uses.

Infrastructure failures (HTTP 429/5xx, timeouts, refused connections, malformed bodies) are retried with
exponential backoff and full jitter, honouring ``Retry-After``, and then raised as ``BackendError``: never
confused with a wrong answer. Keys are read from the environment at call time (or given as ``api_key=``), go only
into request headers, and never appear in reprs, errors, cassettes or rows. aiohttp is imported on first use.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import json
import logging
import random
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar

from whileai_core.arguments import integer
from whileai_core.defaults import (
    AGENT_MAX_TOKENS,
    AGENT_TEMPERATURE,
    DEAD_HOST_PROBE_S,
    DEAD_HOST_STRIKES,
    ERROR_BODY_CHARS,
    HTTP_CONNECT_TIMEOUT_S,
    HTTP_MAX_CONNECTIONS,
    HTTP_TIMEOUT_S,
    RETRY_AFTER_CAP_S,
    RETRY_BACKOFF_BASE_S,
    RETRY_BACKOFF_CAP_S,
    RETRY_BUDGET_S,
    RETRY_MAX_ATTEMPTS,
)
from whileai_core.errors import BackendError, InvalidArgument
from whileai_core.models import http
from whileai_core.models.protocol import Completion, tool_schemas
from whileai_core.redact import remember_secret

log = logging.getLogger("whileai.backends")


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
_PROCESS_LOCAL = frozenset({"_lock", "_dead_host", "_targets", "_spec", "_run_target"})


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
        with self._lock:
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
        part of the memo's key. Inside a run the environment is frozen (``http.environment``), so the run's
        target is kept beside the memo and returned without reading the key or the URL again on each call."""
        frozen = http.environment.get()
        hot = self.__dict__.get("_run_target")
        if frozen is not None and hot is not None and hot[0] is frozen and hot[1] == path:
            return hot[2]
        memo = self.__dict__.get("_targets")
        if memo is None:
            memo = {}
            object.__setattr__(self, "_targets", memo)
        at = (path, self.base_url, self._key())
        found = memo.get(at)
        if found is None:
            found = memo[at] = self._target_of(path)
        if frozen is not None:
            object.__setattr__(self, "_run_target", (frozen, path, found))
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
            except Exception as exc:  # aiohttp's ClientError family, OSError: the transport broke (checked below)
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
                        if type(data) is dict:
                            if breaker.strikes:  # a success on a healthy host changes nothing
                                breaker.record(dead=False)
                            return data, attempt, tuple(waits) if waits else ()
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
    """(the decoded arguments of a tool call, None) or (what was sent, why it is not a JSON object)."""
    if isinstance(raw, str) and raw:  # what the chat API sends: the arguments as a JSON string
        try:
            value = decode_arguments(raw)
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


#: 19 digits in a row: an integer that may not fit 64 bits (2**63 has 19), which orjson would read as a float
_LONG_DIGITS = re.compile(r"[0-9]{19}")


def decode_arguments(raw: str) -> Any:
    """``json.loads(raw)``, the same value: orjson's decoder when it is installed (``http.loads``) and takes the
    text; what it refuses (NaN and Infinity, a lone surrogate, broken JSON) goes to ``json.loads``, which decodes
    it as before or raises its own ``JSONDecodeError`` with its message. A text with a run of 19 digits or more
    goes to ``json.loads`` too: orjson reads an integer past 64 bits as a float, ``json.loads`` as an int."""
    if http.loads is not json.loads and _LONG_DIGITS.search(raw) is None:
        try:
            return http.loads(raw)
        except ValueError:  # orjson.JSONDecodeError is a ValueError: json.loads decides, with its own message
            pass
    return json.loads(raw)


def _malformed(provider: str, what: str, attempts: int) -> BackendError:
    return BackendError(f"{provider} reply is malformed: {what}; the server did not follow the chat API",
                        attempts=attempts, retryable=False)


def _usage(raw: Any, names: tuple[str, str], provider: str, attempts: int) -> dict[str, int]:
    """Token usage as {input_tokens, output_tokens}; a usage that is not an object of counts is malformed."""
    if type(raw) is dict:  # the common case: two int counts, taken as they are
        a, b = raw.get(names[0]) or 0, raw.get(names[1]) or 0
        if type(a) is int and type(b) is int and a >= 0 and b >= 0:
            return {"input_tokens": a, "output_tokens": b}
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


def _safe_url(url: str) -> str:
    """The URL without any ``user:password@`` part (what reprs, specs and rows may show)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


__all__ = ['backoff_ceiling']
