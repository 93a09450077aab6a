"""Any OpenAI-compatible server (vLLM, SGLang, TGI) at a URL the user names: ``Endpoint``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import ClassVar

from whileai_core.defaults import (
    DEAD_HOST_PROBE_S,
    DEAD_HOST_STRIKES,
    HTTP_CONNECT_TIMEOUT_S,
    HTTP_MAX_CONNECTIONS,
    HTTP_TIMEOUT_S,
    RETRY_AFTER_CAP_S,
    RETRY_BACKOFF_BASE_S,
    RETRY_BACKOFF_CAP_S,
    RETRY_BUDGET_S,
    RETRY_MAX_ATTEMPTS,
)
from whileai_core.errors import InvalidArgument
from whileai_core.models.openai import _OpenAICompatible
from whileai_core.models.transport import _safe_url

#: the provider labels an Endpoint takes (``vllm:<model>@<url>`` and its siblings)
_ENDPOINT_PROVIDERS = ("vllm", "sglang", "tgi", "endpoint")


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
        values = {"model": model, "url": url, "api_key": api_key, "provider_name": provider, "timeout": timeout,
                  "connect_timeout": connect_timeout, "max_attempts": max_attempts, "backoff_s": backoff_s,
                  "backoff_cap_s": backoff_cap_s, "retry_after_cap_s": retry_after_cap_s,
                  "retry_budget_s": retry_budget_s, "max_connections": max_connections,
                  "dead_host_strikes": dead_host_strikes, "dead_host_probe_s": dead_host_probe_s,
                  "_lock": threading.Lock()}
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


__all__ = ['Endpoint']
