"""The one redaction every error text passes through before it reaches a row, a run file, a report or the
terminal (issue 26 item 7): no secret in any artifact.

``redact(text)`` replaces with ``<redacted>``:

* the raw secrets it is given, the keys of the configured backends (``remember_secret``; ``wai.configure`` and
  every backend register theirs), and the values of the environment variables that hold keys
  (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``HF_TOKEN``, ``WHILEAI_*_KEY``, any ``*_API_KEY``,
  ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``), each with its base64 form (what ``Basic`` auth sends);
* URL userinfo (``scheme://user:pw@``), ``Basic``/``Bearer`` credentials, key-like query parameters
  (``?api_key=``, ``&token=``, ``sig=``...) and ``api_key=``/``password:``-style assignments.

Ground floor: imports only ``whileai_core.defaults``. ``whileai_core.models.http.redact`` is this function.
"""

from __future__ import annotations

import base64
import os
import re
import threading
from collections.abc import Iterable, Mapping

from whileai_core.defaults import REDACT_MIN_ENV_SECRET_CHARS
from whileai_core.defaults import REDACT_MIN_SECRET_CHARS as MIN_SECRET_CHARS

__all__ = ["REDACTED", "error_text", "redact", "remember_secret", "secret_env_values"]

REDACTED = "<redacted>"
_SECRET_VAR = re.compile(r"(?i)^(?:[A-Z0-9_]*_)?(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PAT)$")
_NOT_SECRET = {"true", "false", "none", "null", "on", "off", "yes", "no"}
_PATTERNS = (
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"]+@"), r"\1" + REDACTED + "@"),  # scheme://user:pw@
    (re.compile(r"(?i)\b(basic|bearer)(\s+)(?!<redacted>)[A-Za-z0-9._~+/=-]{4,}"), r"\1\2" + REDACTED),
    (re.compile(r"(?i)([?&;](?:api[_-]?key|key|token|access[_-]?token|auth|sig|signature|password|secret)=)"
                r"(?!<redacted>)[^&\s#'\"]+"), r"\1" + REDACTED),
    (re.compile(r"(?i)\b((?:x-)?api[_-]?key|access[_-]?token|password|secret)(['\"]?\s*[=:]\s*['\"]?)"
                r"(?!<redacted>)[^\s&'\",}]{4,}"), r"\1\2" + REDACTED),
)
_remembered: set[str] = set()
_lock = threading.Lock()


def remember_secret(*values: str | None) -> None:
    """Register secrets (a configured backend's key, a password) that ``redact`` removes from then on."""
    with _lock:
        for v in values:
            if isinstance(v, str) and len(v.strip()) >= MIN_SECRET_CHARS:
                _remembered.add(v.strip())


def secret_env_values(env: Mapping[str, str] | None = None) -> list[str]:
    """The values of the environment variables whose names say they hold a key, a token or a password."""
    env = os.environ if env is None else env
    out = []
    for name, value in env.items():
        if _SECRET_VAR.match(name) and value and len(value.strip()) >= REDACT_MIN_ENV_SECRET_CHARS \
                and value.strip().lower() not in _NOT_SECRET:
            out.append(value.strip())
    return out


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every credential form replaced by ``<redacted>`` (see the module docstring).

    Args:
        text: any message, log line, exception text or body excerpt (a non-str is turned into one).
        secrets: more raw secrets to remove (keys, passwords, ``user:password`` pairs); each one's base64 form
            is removed too. Secrets shorter than 4 characters are ignored.

    Returns:
        The redacted text.

    Example:
        >>> redact("GET http://bob:pw@host/v1?api_key=abc123 Authorization: Bearer sk-1234")
        'GET http://<redacted>@host/v1?api_key=<redacted> Authorization: Bearer <redacted>'
    """
    text = text if isinstance(text, str) else str(text)
    with _lock:
        known = set(_remembered)
    known.update(s for s in secrets if s and len(s) >= MIN_SECRET_CHARS)
    known.update(secret_env_values())
    for secret in sorted(known, key=len, reverse=True):  # longest first: a key inside a pair goes with the pair
        if secret in text:
            text = text.replace(secret, REDACTED)
        encoded = base64.b64encode(secret.encode()).decode()
        if encoded.rstrip("=") in text:
            text = text.replace(encoded, REDACTED).replace(encoded.rstrip("="), REDACTED)
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def error_text(exc: BaseException) -> str:
    """``"<Type>: <message>"`` of an exception, redacted: what an agent's, judge's, tool's or server's failure
    leaves on a row, in a run file, a report or the terminal."""
    return redact(f"{type(exc).__name__}: {exc}")
