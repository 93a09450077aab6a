"""One conversation read from traces, whatever its format: OpenAI-form messages plus what the log said about
them (ids, usage, latency, model, finish reason, status), and the merge of calls into one conversation."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from whileai_core.messages import content_text

FINISH_REASONS = {"tool_calls": "tool", "tool_call": "tool", "function_call": "tool", "max_tokens": "length"}


@dataclass
class Conversation:
    """What one trace (or one chain of logged calls) holds, before it becomes a row."""

    record: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    trace_id: str | None = None
    conversation_id: str | None = None
    response_ids: list[str] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    model: str | None = None
    finish_reason: str | None = None
    error: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)

    def add_usage(self, input_tokens: Any, output_tokens: Any) -> None:
        if isinstance(input_tokens, (int, float)) and not isinstance(input_tokens, bool):
            self.input_tokens = (self.input_tokens or 0) + int(input_tokens)
        if isinstance(output_tokens, (int, float)) and not isinstance(output_tokens, bool):
            self.output_tokens = (self.output_tokens or 0) + int(output_tokens)

    def add_latency(self, seconds: Any) -> None:
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0:
            self.latency_s = (self.latency_s or 0.0) + float(seconds)

    def set_finish(self, reason: Any) -> None:
        if isinstance(reason, str) and reason:
            self.finish_reason = FINISH_REASONS.get(reason, reason)

    def missing(self) -> str | None:
        """What keeps this conversation from being a row, or None."""
        if not any(m.get("role") == "user" for m in self.messages):
            return "no user message"
        if not any(m.get("role") == "assistant" for m in self.messages):
            return "no assistant reply"
        return None

    def usage(self) -> dict[str, int] | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return {"input_tokens": self.input_tokens or 0, "output_tokens": self.output_tokens or 0}


def message_key(m: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two logged messages the same message (role, text, calls, the call answered)."""
    calls = []
    for call in m.get("tool_calls") or ():
        fn = call.get("function", call) if isinstance(call, Mapping) else {}
        args = fn.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                pass
        calls.append((fn.get("name"), json.dumps(args, sort_keys=True, default=str)))
    return m.get("role"), content_text(m.get("content")), tuple(calls), m.get("tool_call_id")


def is_prefix(head: Sequence[Mapping[str, Any]], messages: Sequence[Mapping[str, Any]]) -> bool:
    return len(head) <= len(messages) and all(message_key(a) == message_key(b) for a, b in zip(head, messages))


def merge(history: list[dict[str, Any]], call_input: Sequence[Mapping[str, Any]],
          call_output: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The conversation after one more model call: its input replaces the history when it repeats it (a call
    sent with the full history), else only the part of it the history has not seen yet is appended (a call
    logged with the new turn only); the call's output follows."""
    sent = [dict(m) for m in call_input]
    answer = [dict(m) for m in call_output]
    if is_prefix(history, sent):
        return sent + answer
    if history and history[0].get("role") == "system":
        sent = [m for m in sent if m.get("role") != "system"]
    overlap = next((j for j in range(min(len(history), len(sent)), 0, -1) if is_prefix(history[-j:], sent[:j])), 0)
    return history + sent[overlap:] + answer
