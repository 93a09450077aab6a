"""The one HTTP client every model backend posts through: aiohttp on an asyncio loop, with a total deadline.

Why aiohttp: ``python benchmarks/bench_simulate.py`` measures it side by side with httpx's ``AsyncClient``
against the same loopback server (same calls, same number in flight); aiohttp spends a fraction of the client
CPU per call, and the rollout engine (``simulate/engine.py``) is one event loop, so the client must be async.

* **One session per event loop.** The rollout engine's loop gets a session whose connection limit is the
  run's ``concurrency`` (``connection_limit``); it closes it when the run ends (``close_sessions``).
  Synchronous callers (``backend.complete`` from a thread) share one background loop in a daemon thread
  (``run_sync``), started on first use, so sync and async calls take the same code path.
* **One certificate-verifying SSL context per process**: aiohttp builds its default context once, when it is
  imported, and every ``https://`` request of every session reuses it (``ssl=True``); ``http://`` requests
  pass ``ssl=False`` and touch none. (httpx's transports each built their own, 18.5 ms CPU and 0.8 MB apiece.)
* **A total deadline per request**: ``timeout`` caps connect + send + headers + the whole body, so a server
  that drips one byte at a time is cut at the deadline (a per-read timeout never fires on a drip).
* **Redaction** (``redact``): every text a backend raises, logs or records passes through it: URL userinfo,
  ``Basic`` (and the base64 of any ``user:password`` it was given), ``Bearer`` tokens, key-like query
  parameters and ``api_key=``-style assignments, and the raw secrets themselves.

* **The event loop**: ``new_loop()`` builds the loops the engine and the background thread run: uvloop's
  (libuv; MagicStack) when it is installed and ``EVENT_LOOP`` is ``"uvloop"``, else asyncio's own.
  ``WHILEAI_EVENT_LOOP=asyncio`` picks asyncio's. ``dumps``/``loads`` code request and reply bodies with
  orjson when it is installed (the standard ``json`` module otherwise): the bytes differ only in spacing.

aiohttp is imported on the first call, never at import time.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import functools
import json
import os
import threading
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any

from whileai_core.defaults import EVENT_LOOP, HTTP_MAX_CONNECTIONS, HTTP_SHUTDOWN_S

#: the environment as it was when the current run started (the rollout engine sets it; None outside a run):
#: a backend reads its key and base URL from it, so a run's calls all use the same key and none pays a lookup
#: in ``os.environ`` per call (a missing variable costs a raised KeyError each time)
environment: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar("whileai_environment",
                                                                                        default=None)


def getenv(var: str) -> str | None:
    """``os.environ.get(var)``, or the variable as it was when the current run started (``environment``)."""
    frozen = environment.get()
    return os.environ.get(var) if frozen is None else frozen.get(var)


#: the connection limit of a session created in this context (the rollout engine sets it to ``concurrency``).
connection_limit: contextvars.ContextVar[int] = contextvars.ContextVar("whileai_connection_limit",
                                                                       default=HTTP_MAX_CONNECTIONS)


# --------------------------------------------------------------------------------------------------
# the loop and the body codec
# --------------------------------------------------------------------------------------------------
def new_loop(kind: str | None = None) -> asyncio.AbstractEventLoop:
    """A new event loop of ``kind`` (default ``WHILEAI_EVENT_LOOP`` or ``defaults.EVENT_LOOP``): ``"uvloop"``
    when uvloop is installed (asyncio's loop otherwise: uvloop is an optional speed-up, never required) or
    ``"asyncio"``."""
    kind = kind or os.environ.get("WHILEAI_EVENT_LOOP") or EVENT_LOOP
    if kind == "uvloop":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


_std_encode = json.JSONEncoder(ensure_ascii=False).encode


def _std_dumps(obj: Any) -> bytes:
    return _std_encode(obj).encode()


def _fast_codec() -> tuple[Any, Any]:
    try:
        import orjson
    except ImportError:
        return _std_dumps, json.loads

    def dumps(obj: Any) -> bytes:
        try:
            return orjson.dumps(obj)
        except TypeError:  # what orjson refuses (an int past 64 bits, a non-str key): json takes it or says why
            return _std_dumps(obj)

    return dumps, orjson.loads


#: ``dumps(obj) -> bytes`` (UTF-8 JSON; TypeError for what JSON cannot hold) and ``loads(bytes) -> obj``
dumps, loads = _fast_codec()


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``whileai_core.redact.redact`` (the one redaction), remembering ``secrets`` (a backend's key and password)
    so every later error text, from any layer, loses them too.

    Example:
        >>> redact("GET http://bob:pw@host/v1?api_key=abc123 Authorization: Bearer sk-1234")
        'GET http://<redacted>@host/v1?api_key=<redacted> Authorization: Bearer <redacted>'
    """
    from whileai_core.redact import redact as _redact
    from whileai_core.redact import remember_secret

    secrets = [s for s in secrets if s]
    remember_secret(*secrets)
    return _redact(text, secrets)


# --------------------------------------------------------------------------------------------------
# sessions: one per event loop
# --------------------------------------------------------------------------------------------------
_sessions: dict[Any, Any] = {}
_sessions_lock = threading.Lock()


def session() -> Any:
    """The aiohttp session of the running loop (created on first use with ``connection_limit``'s limit)."""
    loop = asyncio.get_running_loop()
    found = _sessions.get(loop)
    if found is not None and not found.closed:
        return found
    import aiohttp

    limit = connection_limit.get()
    connector = aiohttp.TCPConnector(limit=limit, limit_per_host=0, ssl=False, keepalive_timeout=30.0,
                                     enable_cleanup_closed=False)
    made = aiohttp.ClientSession(connector=connector, skip_auto_headers=("User-Agent",),
                                 auto_decompress=True, trust_env=False)
    with _sessions_lock:
        _sessions[loop] = made
    return made


def sessions_open() -> int:
    """How many sessions are open (one per loop that called a backend and has not closed it)."""
    return sum(1 for s in list(_sessions.values()) if not s.closed)


async def close_sessions() -> None:
    """Close the running loop's session (the rollout engine calls it when its run ends)."""
    loop = asyncio.get_running_loop()
    with _sessions_lock:
        found = _sessions.pop(loop, None)
    if found is not None and not found.closed:
        await found.close()


async def post(url: str, payload: bytes, headers: dict[str, str], *, timeout: float,
               connect_timeout: float) -> tuple[int, Mapping[str, str], bytes]:
    """POST ``payload`` and read the whole reply within ``timeout`` seconds in total.

    Returns:
        (status, headers (case-insensitive), body bytes).

    Raises:
        asyncio.TimeoutError: the deadline passed (connect included).
        aiohttp.ClientError: the connection failed or broke.
    """
    ssl = url.startswith("https:")  # True: aiohttp's one verified context of this process
    limits = _limits(timeout, connect_timeout)
    async with session().post(url, data=payload, headers=headers, timeout=limits, ssl=ssl,
                              allow_redirects=False) as resp:
        body = await resp.read()
        return resp.status, resp.headers, body


@functools.lru_cache(maxsize=64)
def _limits(timeout: float, connect_timeout: float) -> Any:
    """The aiohttp timeouts of one (timeout, connect_timeout) pair, built once (they are frozen, so shared)."""
    import aiohttp

    return aiohttp.ClientTimeout(total=timeout or None, sock_connect=connect_timeout or None)


# --------------------------------------------------------------------------------------------------
# the background loop synchronous callers share
# --------------------------------------------------------------------------------------------------
_bg: dict[str, Any] = {}
_bg_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    with _bg_lock:
        loop = _bg.get("loop")
        if loop is not None and _bg.get("pid") == os.getpid() and loop.is_running():
            return loop
        loop = new_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        threading.Thread(target=serve, name="whileai-http", daemon=True).start()
        ready.wait()
        _bg.update(loop=loop, pid=os.getpid())
        return loop


def run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` on the shared background loop and wait for its result (from any thread but that loop's)."""
    return asyncio.run_coroutine_threadsafe(coro, _background_loop()).result()


@atexit.register
def _close_background() -> None:  # pragma: no cover - interpreter exit
    loop = _bg.get("loop")
    if loop is None or not loop.is_running() or _bg.get("pid") != os.getpid():
        return
    try:
        asyncio.run_coroutine_threadsafe(close_sessions(), loop).result(HTTP_SHUTDOWN_S)
    except Exception:  # noqa: BLE001 - best effort at exit
        pass
    loop.call_soon_threadsafe(loop.stop)


__all__ = ["close_sessions", "connection_limit", "dumps", "environment", "getenv", "loads", "new_loop", "post", "redact", "run_sync", "session", "sessions_open"]
