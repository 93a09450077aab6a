"""OpenAI's chat completions API: the request and reply shape every OpenAI-compatible server shares
(``_OpenAICompatible``: OpenAI, vLLM/SGLang/TGI endpoints, Ollama) and the ``OpenAI`` backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from whileai_core.defaults import (
    DEFAULT_OPENAI_MODEL,
    ERROR_BODY_CHARS,
    OPENAI_BASE_URL,
)
from whileai_core.errors import BackendError
from whileai_core.models import http
from whileai_core.models.protocol import Completion, ToolCall, built
from whileai_core.models.transport import _HTTPBackend, _malformed, _parse_arguments, _usage


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
            calls.append(built(ToolCall, id=str(tc.get("id") or f"call_{i}"), name=str(fn.get("name") or ""),
                               arguments=args, arguments_error=err))
        finish = str(choice.get("finish_reason") or ("tool_calls" if calls else "stop"))
        if finish == "function_call":
            finish = "tool_calls"
        usage = _usage(data.get("usage"), ("prompt_tokens", "completion_tokens"), self.provider, attempts)
        return built(Completion, text=str(msg.get("content") or ""), tool_calls=tuple(calls), finish_reason=finish,
                     usage=usage, model=str(data.get("model") or self.model), cached=False, attempts=attempts,
                     waits=waits)


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


__all__ = ['OpenAI']
