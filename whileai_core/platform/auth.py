"""Signing in: the OAuth 2.0 device authorization grant (RFC 8628), the account, and signing out.

``login`` asks ``POST /device/code`` for a device code and a user code, prints the code and the verification
URI, then polls ``POST /device/token`` every ``interval`` seconds: ``authorization_pending`` keeps waiting,
``slow_down`` adds ``slow_down_s`` to the interval (RFC 8628 §3.5), ``expired_token`` and ``access_denied`` end it
with a LoginError. On success the key is saved to the credentials file (0600) and never printed.
"""

from __future__ import annotations

import time
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whileai_core.arguments import positive
from whileai_core.defaults import PLATFORM_LOGIN_INTERVAL_S, PLATFORM_LOGIN_TIMEOUT_S, PLATFORM_SLOW_DOWN_S
from whileai_core.errors import InvalidArgument, LoginError, PlatformError
from whileai_core.platform.client import Client, connect
from whileai_core.platform.credentials import delete_credentials, save_credentials

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code"  # RFC 8628 §3.4


@dataclass(frozen=True)
class Login:
    """A finished login: where the key was saved (never the key), the service, and how the polling went."""

    path: Path
    api_url: str
    user_code: str
    polls: int
    interval_s: float

    def __str__(self) -> str:
        return (f"signed in to {self.api_url}; key saved to {self.path} (mode 0600) after {self.polls} "
                f"poll(s), last interval {self.interval_s:g} s")


def _start(client: Client, name: str | None) -> dict[str, Any]:
    start = client.request("POST", "/device/code", json_body={"name": name}, auth=False)
    if not isinstance(start, dict) or not start.get("device_code") or not start.get("user_code"):
        raise LoginError("POST /device/code did not answer a device_code and a user_code", route="POST /device/code")
    return start


def _key_of(answer: Any) -> str | None:
    if isinstance(answer, dict):
        key = answer.get("api_key") or answer.get("access_token")
        return key if isinstance(key, str) and key else None
    return None


def login(name: str | None = None, *, api_url: str | None = None, open_browser: bool = False,
          slow_down_s: float = PLATFORM_SLOW_DOWN_S, timeout: float = PLATFORM_LOGIN_TIMEOUT_S,
          client: Client | None = None) -> Login:
    """Sign in with the device flow and save the key to the credentials file.

    Args:
        name: a name for this machine's key, shown in the account (None lets the service choose).
        api_url: the service (see ``Client``).
        open_browser: also open the verification URI in a browser (the CLI's default; off here).
        slow_down_s: seconds added to the poll interval on each ``slow_down`` (PLATFORM_SLOW_DOWN_S, RFC 8628).
        timeout: stop polling after this many seconds when the service names no ``expires_in``
            (PLATFORM_LOGIN_TIMEOUT_S); the shorter of the two wins.
        client: an existing ``Client`` (its key is not needed: the device routes are unauthenticated).

    Returns:
        a ``Login`` naming the credentials file.

    Raises:
        LoginError: the user denied the request, the code expired, or it was not approved in time.
        PlatformError: the service failed or could not be reached.

    Example::

        from whileai import platform
        platform.login()   # prints a code and a URL; approve it in the browser
    """
    positive("timeout", timeout)
    if isinstance(slow_down_s, bool) or not isinstance(slow_down_s, (int, float)) or slow_down_s < 0:
        raise InvalidArgument(f"slow_down_s= must be a number of seconds >= 0; got {slow_down_s!r}")
    with connect(client, None, api_url) as c:
        start = _start(c, name)
        given = start.get("interval")
        interval = float(given) if isinstance(given, (int, float)) and given >= 0 else PLATFORM_LOGIN_INTERVAL_S
        deadline = time.monotonic() + min(float(start.get("expires_in") or timeout), timeout)
        uri = start.get("verification_uri_complete") or start.get("verification_uri")
        print(f"To sign in to While, open {start.get('verification_uri') or uri} and enter the code "
              f"{start['user_code']}" + (f"\n  (or open {uri} directly)" if uri != start.get("verification_uri")
                                         else ""), flush=True)
        if open_browser and uri:
            webbrowser.open(uri)
        key, polls = _poll(c, start["device_code"], interval, slow_down_s, deadline)
        path = save_credentials({"api_key": key, "api_url": c.url, "name": name})
        return Login(path=path, api_url=c.url, user_code=start["user_code"], polls=polls[0], interval_s=polls[1])


def _poll(c: Client, device_code: str, interval: float, slow_down_s: float,
          deadline: float) -> tuple[str, tuple[int, float]]:
    """Poll the token route until a key comes back; returns (key, (polls, last interval))."""
    polls = 0
    while True:
        time.sleep(interval)
        if time.monotonic() > deadline:
            raise LoginError("the login code expired before it was approved; run login again", code="expired_token")
        polls += 1
        try:
            answer = c.request("POST", "/device/token", json_body={"device_code": device_code,
                                                                    "grant_type": GRANT_TYPE}, auth=False)
        except PlatformError as err:
            if err.code == "authorization_pending":
                continue
            if err.code == "slow_down":
                interval += slow_down_s
                continue
            if err.code == "expired_token":
                raise LoginError("the login code expired before it was approved; run login again",
                                 status=err.status, code=err.code) from None
            if err.code == "access_denied":
                raise LoginError("the login was denied in the browser", status=err.status, code=err.code) from None
            raise
        key = _key_of(answer)
        if key is None:
            raise LoginError("POST /device/token answered 200 without an api_key", route="POST /device/token")
        return key, (polls, interval)


def account(*, api_key: str | None = None, api_url: str | None = None, client: Client | None = None) -> dict[str, Any]:
    """The signed-in account (``GET /me``)."""
    with connect(client, api_key, api_url) as c:
        return c.request("GET", "/me")


def logout() -> bool:
    """Delete the credentials file (True if there was one). Keys held in the environment are untouched."""
    return delete_credentials()
