"""Where the account key and service URL come from, and the credentials file that holds them.

Key lookup order (reference §5.5): ``api_key=``, then WHILEAI_DELEGATED_CREDENTIAL, then WHILEAI_API_KEY, then
``credentials.json`` in WHILEAI_HOME (default ``~/.whileai``). The SDK also reads ``configure(api_key=)`` between
the explicit key and the environment; this project's ``configure`` holds no keys by design (models/config.py),
so that step does not exist here. The file is written atomically and readable by its owner only (0600).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from whileai_core.defaults import PLATFORM_API_URL
from whileai_core.errors import InvalidArgument
from whileai_core.rows import atomic_write_text

KEY_ENV = ("WHILEAI_DELEGATED_CREDENTIAL", "WHILEAI_API_KEY")
URL_ENV = "WHILEAI_API_URL"
HOME_ENV = "WHILEAI_HOME"


def home() -> Path:
    """The directory of the credentials file: WHILEAI_HOME, else ``~/.whileai``."""
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".whileai")


def credentials_path() -> Path:
    """``<home>/credentials.json``."""
    return home() / "credentials.json"


def read_credentials() -> dict[str, Any]:
    """The saved credentials (``{}`` when there is no file). A file that is not a JSON object is an error
    naming the file, never its contents."""
    path = credentials_path()
    if not path.exists():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise InvalidArgument(f"{path} is not valid JSON; delete it and run `whileai login` again") from None
    if not isinstance(value, dict):
        raise InvalidArgument(f"{path} must hold a JSON object; delete it and run `whileai login` again")
    return value


def save_credentials(values: dict[str, Any]) -> Path:
    """Write the credentials file atomically, mode 0600, in a 0700 directory; returns its path."""
    path = credentials_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # atomic_write_text writes through tempfile.mkstemp, which creates the file 0600, then os.replace: the key is
    # never readable by others, not even for a moment; chmod again in case a umask or file system widened it
    atomic_write_text(path, json.dumps(values, indent=2) + "\n", overwrite=True)
    os.chmod(path, 0o600)
    return path


def delete_credentials() -> bool:
    """Remove the credentials file; True if there was one."""
    try:
        credentials_path().unlink()
    except FileNotFoundError:
        return False
    return True


def resolve_key(api_key: str | None = None) -> tuple[str | None, str]:
    """(key, where it came from) in the lookup order above; (None, "none") when nothing holds one."""
    if api_key:
        return api_key, "api_key="
    for name in KEY_ENV:
        value = os.environ.get(name)
        if value:
            return value, name
    saved = read_credentials().get("api_key")
    if isinstance(saved, str) and saved:
        return saved, str(credentials_path())
    return None, "none"


def resolve_url(api_url: str | None = None) -> str:
    """The service URL: ``api_url=``, WHILEAI_API_URL, the credentials file's ``api_url``, PLATFORM_API_URL."""
    if api_url:
        return api_url
    if os.environ.get(URL_ENV):
        return os.environ[URL_ENV]
    saved = read_credentials().get("api_url")
    return saved if isinstance(saved, str) and saved else PLATFORM_API_URL
