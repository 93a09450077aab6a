"""Anthropic's Messages API, translated to and from the OpenAI chat shape: ``Anthropic``, ``to_anthropic``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from whileai_core.arguments import integer
from whileai_core.defaults import (
    ANTHROPIC_ADAPT_TRIES,
    ANTHROPIC_BASE_URL,
    ANTHROPIC_MAX_TEMPERATURE,
    ANTHROPIC_MIN_MAX_TOKENS,
    ANTHROPIC_VERSION,
)
from whileai_core.errors import BackendError, InvalidArgument
from whileai_core.models import http
from whileai_core.models.protocol import Completion, ToolCall
from whileai_core.models.transport import _HTTPBackend, _malformed, _parse_arguments, _usage


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


__all__ = ['Anthropic', 'to_anthropic']
