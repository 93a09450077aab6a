"""OpenAI chat-completions request/response logs as conversations.

One record per call: ``{"request": {"messages", "tools", "model"}, "response": {"id", "choices", "usage"}}``
(also the Batch API's ``{"body": ...}`` on either side), or the flattened form with ``messages`` and
``choices``/``usage`` side by side. Calls chain into one conversation when a call's messages repeat an
earlier call's messages and reply (a multi-turn chat or a tool loop), or when they share a
``conversation_id``/``session_id``/``trace_id``; latency is read from ``latency_s``/``latency_ms``/
``duration_ms`` when the log has it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from whileai_core.traces.conversation import Conversation, is_prefix, merge
from whileai_core.traces.records import LoadReport

_GROUP_KEYS = ("conversation_id", "session_id", "thread_id", "trace_id")
_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def _side(record: Mapping[str, Any], names: tuple[str, ...]) -> Mapping[str, Any] | None:
    for name in names:
        value = record.get(name)
        if isinstance(value, Mapping):
            body = value.get("body")
            return body if isinstance(body, Mapping) and "choices" not in value and "messages" not in value else value
    return None


def _call(record: Any) -> tuple[Mapping[str, Any], Mapping[str, Any], dict[str, Any]] | str:
    """(request, response, reply message) of one logged call, or what it lacks."""
    if not isinstance(record, Mapping):
        return f"not a JSON object (a {type(record).__name__})"
    request = _side(record, ("request", "input")) or (record if "messages" in record else None)
    response = _side(record, ("response", "output")) or (record if "choices" in record else None)
    if request is None:
        return f"no request (keys {sorted(map(str, record))[:8]})"
    if not isinstance(request.get("messages"), list) or not request["messages"]:
        return "no request messages"
    if response is None:
        return "no response"
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return "no response choices"
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        return "response choice has no message"
    reply = {k: v for k, v in message.items() if k in _MESSAGE_KEYS}
    reply["role"] = "assistant"
    bad = next((i for i, m in enumerate(request["messages"]) if not isinstance(m, Mapping) or not m.get("role")), None)
    if bad is not None:
        return f"request message {bad} has no role"
    return request, response, reply


def _holders(record: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """Where a log keeps its extras: the record, then its ``metadata``."""
    metadata = record.get("metadata")
    return (record, metadata) if isinstance(metadata, Mapping) else (record,)


def _latency(record: Mapping[str, Any]) -> float | None:
    for holder in _holders(record):
        for key, scale in (("latency_s", 1.0), ("duration_s", 1.0), ("latency_ms", 1e-3), ("duration_ms", 1e-3)):
            value = holder.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value) * scale
    return None


def _group_id(record: Mapping[str, Any]) -> str | None:
    for holder in _holders(record):
        for key in _GROUP_KEYS:
            if holder.get(key):
                return str(holder[key])
    return None


def _find(open_: list[tuple[Conversation, str | None]], messages: list[Any], group: str | None) -> Conversation | None:
    if group is not None:
        return next((c for c, g in open_ if g == group), None)
    best = [c for c, g in open_ if g is None and is_prefix(c.messages, messages)]
    return max(best, key=lambda c: len(c.messages), default=None)


def conversations(records: Iterable[tuple[str, Any]], report: LoadReport) -> list[Conversation]:
    """Every chain of logged calls as a conversation; a record that is no call is named in the report."""
    open_: list[tuple[Conversation, str | None]] = []
    for label, record in records:
        report.n_records += 1
        call = _call(record)
        if isinstance(call, str):
            report.skip(label, call)
            continue
        request, response, reply = call
        messages = [{k: v for k, v in m.items() if k in _MESSAGE_KEYS} for m in request["messages"]]
        group = _group_id(record)
        conv = _find(open_, messages, group)
        if conv is None:
            conv = Conversation(record=label, trace_id=str(response.get("id") or "") or None, conversation_id=group)
            open_.append((conv, group))
        conv.messages = merge(conv.messages, messages, [reply])
        usage: Mapping[str, Any] = response["usage"] if isinstance(response.get("usage"), Mapping) else {}
        conv.add_usage(usage.get("prompt_tokens", usage.get("input_tokens")),
                       usage.get("completion_tokens", usage.get("output_tokens")))
        conv.add_latency(_latency(record))
        conv.model = str(response.get("model") or request.get("model") or "") or conv.model
        conv.set_finish(response["choices"][0].get("finish_reason"))
        conv.response_ids += [str(response["id"])] if response.get("id") else []
        names = {t["function"]["name"] for t in conv.tools}
        conv.tools += [dict(t) for t in request.get("tools") or () if isinstance(t, Mapping) and
                       isinstance(t.get("function"), Mapping) and t["function"].get("name") not in names]
    return [c for c, _ in open_]


def chat_conversations(records: Iterable[tuple[str, Any]], report: LoadReport) -> list[Conversation]:
    """The OpenAI chat / fine-tuning shape, one conversation per record: ``{"messages": [...], "tools": [...]}``
    (assistant ``tool_calls`` and ``tool`` replies included; ``tools`` optional; other keys kept as ids)."""
    out = []
    for label, record in records:
        report.n_records += 1
        messages = record.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
            report.skip(label, "'messages' is not a list of message objects")
            continue
        tools = record.get("tools")
        conv = Conversation(record=label, messages=[{k: v for k, v in m.items() if k in _MESSAGE_KEYS}
                                                    for m in messages],
                            tools=[dict(t) for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else [],
                            conversation_id=_group_id(record), model=record.get("model"))
        missing = conv.missing()
        if missing:
            report.skip(label, missing)
            continue
        out.append(conv)
    return out
