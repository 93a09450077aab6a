"""The HTTP client every platform call goes through: base URL, the ``X-Api-Key`` header, timeouts, the retry
policy, and the service's errors turned into ``PlatformError`` with the key scrubbed out.

Routes are relative to the base URL (``WHILEAI_API_URL``, else the credentials file's ``api_url``, else
PLATFORM_API_URL). Presigned upload and download URLs are absolute and get no key header: they belong to another
host, and the key must never travel there.

Retry policy (the SDK reference names none for the platform, so this is ours): idempotent requests (GET, PUT,
DELETE) are tried up to ``max_attempts`` times on 429, 5xx and transport errors, with full-jitter backoff
(``backoff_ceiling``, Brooker 2015). POST is never retried: creating a dataset or a run twice is worse than
failing once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import time
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from whileai_core.arguments import integer, positive
from whileai_core.defaults import (
    PLATFORM_BACKOFF_BASE_S,
    PLATFORM_BACKOFF_CAP_S,
    PLATFORM_CONNECT_TIMEOUT_S,
    PLATFORM_ERROR_DETAIL_CHARS,
    PLATFORM_MAX_ATTEMPTS,
    PLATFORM_REQUEST_TIMEOUT_S,
)
from whileai_core.errors import InvalidArgument, PlatformError
from whileai_core.models.transport import backoff_ceiling
from whileai_core.platform.credentials import resolve_key, resolve_url

log = logging.getLogger("whileai.platform")

KEY_HEADER = "X-Api-Key"  # reference §5.5: authentication is this header
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_IDEMPOTENT = frozenset({"GET", "PUT", "DELETE", "HEAD"})
_NO_KEY = ("no While API key: run `whileai login` (or `whileai.platform.login()`), set WHILEAI_API_KEY, or pass "
           "api_key=")


def scrub(text: str, secret: str | None) -> str:
    """``text`` with every copy of ``secret`` replaced by ``<redacted>``."""
    if secret:
        return text.replace(secret, "<redacted>")
    return text


def _error_of(response: httpx.Response) -> tuple[str, str | None]:
    """(message, code) from an error response: ``{"error": code|{message}, "message": text}`` or plain text."""
    try:
        body: Any = response.json()
    except ValueError:
        return (response.text.strip() or response.reason_phrase or "no message"), None
    if not isinstance(body, Mapping):
        return json.dumps(body)[:PLATFORM_ERROR_DETAIL_CHARS], None
    error = body.get("error")
    code = error if isinstance(error, str) else None
    if isinstance(error, Mapping):
        code = error.get("code") if isinstance(error.get("code"), str) else None
        message = error.get("message")
    else:
        message = body.get("message") or body.get("error_description")
    return str(message or code or response.reason_phrase or "no message"), code


class Client:
    """One connection to the While service.

    Args:
        api_key: the account key; else WHILEAI_DELEGATED_CREDENTIAL, WHILEAI_API_KEY, then the credentials file
            (``credentials.resolve_key``). Never printed: the repr names only where it came from.
        api_url: the service; else WHILEAI_API_URL, the credentials file's ``api_url``, PLATFORM_API_URL.
        timeout: read timeout per request in seconds (PLATFORM_REQUEST_TIMEOUT_S).
        connect_timeout: TCP connect timeout (PLATFORM_CONNECT_TIMEOUT_S).
        max_attempts: tries of an idempotent request on 429/5xx/transport errors (PLATFORM_MAX_ATTEMPTS).
        backoff_s: the first backoff ceiling (PLATFORM_BACKOFF_BASE_S).
        backoff_cap_s: the cap on any backoff (PLATFORM_BACKOFF_CAP_S).

    Example::

        with Client() as c:
            c.request("GET", "/me")
    """

    def __init__(self, api_key: str | None = None, *, api_url: str | None = None,
                 timeout: float = PLATFORM_REQUEST_TIMEOUT_S, connect_timeout: float = PLATFORM_CONNECT_TIMEOUT_S,
                 max_attempts: int = PLATFORM_MAX_ATTEMPTS, backoff_s: float = PLATFORM_BACKOFF_BASE_S,
                 backoff_cap_s: float = PLATFORM_BACKOFF_CAP_S) -> None:
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            raise InvalidArgument("api_key= must be a non-empty string (a While key starts zp_) or None")
        positive("timeout", timeout)
        positive("connect_timeout", connect_timeout)
        integer("max_attempts", max_attempts, minimum=1)
        if backoff_s < 0 or backoff_cap_s < 0:
            raise InvalidArgument("backoff_s= and backoff_cap_s= must be >= 0 seconds")
        self._key, self.key_source = resolve_key(api_key)
        self.url = resolve_url(api_url).rstrip("/")
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.backoff_cap_s = backoff_cap_s
        self._http = httpx.Client(timeout=httpx.Timeout(timeout, connect=connect_timeout), follow_redirects=False)

    def __repr__(self) -> str:
        key = f"set ({self.key_source})" if self._key else "none"
        return f"Client(url={self.url!r}, key={key})"

    @property
    def has_key(self) -> bool:
        """Whether a key was found (the key itself is never exposed)."""
        return self._key is not None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- requests ----------------------------------------------------------------------------------
    def request(self, method: str, route: str, *, json_body: Any = None, params: Mapping[str, Any] | None = None,
                auth: bool = True) -> Any:
        """Call ``method route`` on the service and return its JSON (None for an empty body).

        Raises PlatformError with the status and the service's message (no key was found, the service refused,
        or it could not be reached after the retries an idempotent call gets)."""
        headers = {"Accept": "application/json"}
        if auth:
            if self._key is None:
                raise PlatformError(_NO_KEY, route=f"{method} {route}")
            headers[KEY_HEADER] = self._key
        response = self._send(method, self.url + route, route=f"{method} {route}", headers=headers,
                              json_body=json_body, params=params, timeout=None)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise PlatformError(f"the answer is not JSON: {self._cut(response.text)!r}", status=response.status_code,
                                route=f"{method} {route}") from None

    def put_presigned(self, url: str, data: bytes, *, content_type: str, timeout: float) -> None:
        """PUT ``data`` to a presigned URL (no key header: the URL carries its own signature)."""
        self._send("PUT", url, route="PUT <upload URL>", headers={"Content-Type": content_type}, content=data,
                   timeout=timeout)

    def get_presigned(self, url: str) -> bytes:
        """GET a presigned URL's body (no key header)."""
        return self._send("GET", url, route="GET <download URL>", headers={}, timeout=None).content

    def _cut(self, text: str) -> str:
        return scrub(text, self._key)[:PLATFORM_ERROR_DETAIL_CHARS]

    def _send(self, method: str, url: str, *, route: str, headers: dict[str, str], timeout: float | None,
              json_body: Any = None, params: Mapping[str, Any] | None = None, content: bytes | None = None,
              ) -> httpx.Response:
        tries = self.max_attempts if method in _IDEMPOTENT else 1
        for attempt in range(1, tries + 1):
            failure = None
            try:
                response = self._http.request(method, url, headers=headers, json=json_body, params=params,
                                              content=content, timeout=timeout if timeout is not None else
                                              httpx.USE_CLIENT_DEFAULT)
            except httpx.TransportError as exc:  # the message is built outside the except: no chained request
                failure = f"could not reach the service ({type(exc).__name__}: {self._cut(str(exc))})"
            if failure is None:
                log.debug("%s -> %s (try %d of %d)", route, response.status_code, attempt, tries)
                if response.status_code < 400:
                    return response
                if response.status_code not in _RETRY_STATUS or attempt == tries:
                    message, code = _error_of(response)
                    raise PlatformError(self._cut(message), status=response.status_code, code=code, route=route)
            else:
                log.debug("%s -> %s (try %d of %d)", route, failure, attempt, tries)
                if attempt == tries:
                    raise PlatformError(failure + (f" after {tries} tries" if tries > 1 else ""), route=route)
            time.sleep(random.uniform(0.0, backoff_ceiling(attempt, self.backoff_s, self.backoff_cap_s)))
        raise AssertionError("unreachable")  # pragma: no cover


@contextlib.contextmanager
def connect(client: Client | None = None, api_key: str | None = None, api_url: str | None = None,
            ) -> Iterator[Client]:
    """The given ``client``, or a new one from ``api_key``/``api_url`` that is closed afterwards."""
    if client is not None:
        yield client
        return
    own = Client(api_key, api_url=api_url)
    try:
        yield own
    finally:
        own.close()
