"""A local Ollama server through its OpenAI-compatible API: ``Ollama`` (no key).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from whileai_core.defaults import (
    DEFAULT_OLLAMA_MODEL,
    OLLAMA_BASE_URL,
)
from whileai_core.models.openai import _OpenAICompatible


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


__all__ = ['Ollama']
