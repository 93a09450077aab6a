"""OpenTelemetry GenAI spans, as the OpenTelemetry Collector's file exporter writes them (OTLP JSON), as
conversations: spans grouped by trace id, model-call spans merged into one message history, ``execute_tool``
spans as tool steps.

Read: ``resourceSpans[].scopeSpans[].spans[]`` with attributes ``[{key, value: {stringValue|intValue|...}}]``;
the GenAI semantic conventions' ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
``gen_ai.system_instructions`` JSON attributes (parts ``text``, ``tool_call``, ``tool_call_response``) and the
older per-message events (``gen_ai.user.message``, ``gen_ai.choice``, ...); ``gen_ai.usage.*``,
``gen_ai.request.model`` / ``gen_ai.response.model``, ``gen_ai.response.finish_reasons``,
``gen_ai.conversation.id``, ``gen_ai.tool.definitions``; tool spans' ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from whileai_core.traces.conversation import Conversation, merge
from whileai_core.traces.records import LoadReport

MODEL_OPERATIONS = ("chat", "text_completion", "generate_content")  # a span without an operation name counts too
AGENT_OPERATIONS = ("invoke_agent", "create_agent")
TOOL_OPERATION = "execute_tool"
_EVENT_ROLES = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
_NANOS = 1e9


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": ...}``, ``{"intValue": "3"}``, arrays, key-value lists) as Python."""
    if not isinstance(value, Mapping):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values", []))
    return None


def attributes(items: Any) -> dict[str, Any]:
    return {str(a["key"]): any_value(a.get("value")) for a in items or () if isinstance(a, Mapping) and "key" in a}


def _json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _spans(record: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    for resource in record.get("resourceSpans") or record.get("resource_spans") or ():
        for scope in (resource or {}).get("scopeSpans") or (resource or {}).get("scope_spans") or ():
            yield from (s for s in (scope or {}).get("spans") or () if isinstance(s, Mapping))


def _span(raw: Mapping[str, Any]) -> dict[str, Any]:
    attrs = attributes(raw.get("attributes"))
    status = raw.get("status") or {}
    return {"name": str(raw.get("name", "")), "attrs": attrs, "op": attrs.get("gen_ai.operation.name"),
            "start": int(raw.get("startTimeUnixNano") or 0), "end": int(raw.get("endTimeUnixNano") or 0),
            "error": status.get("message") or "error" if status.get("code") in (2, "STATUS_CODE_ERROR") else None,
            "events": [(str(e.get("name", "")), attributes(e.get("attributes"))) for e in raw.get("events") or ()
                       if isinstance(e, Mapping)]}


def _from_parts(role: str, parts: Any, finish: Any = None) -> list[dict[str, Any]]:
    """One semantic-convention message (role + parts) as OpenAI-form messages (tool responses become tool
    messages)."""
    texts, calls, answers = [], [], []
    for part in parts if isinstance(parts, list) else [{"type": "text", "content": parts}]:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("content", "")))
        elif kind == "tool_call":
            args = part.get("arguments")
            calls.append({"id": part.get("id"), "type": "function", "function": {
                "name": part.get("name"), "arguments": args if isinstance(args, str) else json.dumps(args or {})}})
        elif kind == "tool_call_response":
            response = part.get("response", part.get("result"))
            answers.append({"role": "tool", "tool_call_id": part.get("id"),
                            "content": response if isinstance(response, str) else json.dumps(response)})
    out: list[dict[str, Any]] = list(answers)
    if texts or calls or (role != "tool" and not answers):
        m: dict[str, Any] = {"role": role, "content": "\n".join(texts) if texts else None}
        if calls:
            m["tool_calls"] = calls
        if finish:
            m["finish_reason"] = finish
        out.append(m)
    return out


def _messages(value: Any, report_missing: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in _json(value) if isinstance(_json(value), list) else ():
        if not isinstance(m, Mapping) or not m.get("role"):
            report_missing.append("a message without a role")
            continue
        if "parts" in m:
            out.extend(_from_parts(str(m["role"]), m["parts"], m.get("finish_reason")))
        else:  # an OpenAI-form message (older instrumentations)
            out.append({k: v for k, v in m.items() if k in ("role", "content", "tool_calls", "tool_call_id", "name")})
    return out


def _event_messages(events: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The older per-message span events as (input messages, output messages)."""
    inp: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for name, attrs in events:
        if name in _EVENT_ROLES:
            m: dict[str, Any] = {"role": _EVENT_ROLES[name], "content": _json(attrs.get("content"))}
            if attrs.get("tool_calls"):
                m["tool_calls"] = _json(attrs["tool_calls"])
            if name == "gen_ai.tool.message":
                m["tool_call_id"] = attrs.get("id")
            inp.append(m)
        elif name == "gen_ai.choice":
            message = _json(attrs.get("message")) or {"content": attrs.get("content")}
            if isinstance(message, Mapping):
                out.append({"role": "assistant", **{k: v for k, v in message.items() if k != "role"}})
        elif name == "gen_ai.content.prompt":
            inp.extend(_messages(attrs.get("gen_ai.prompt"), []))
        elif name == "gen_ai.content.completion":
            out.extend(_messages(attrs.get("gen_ai.completion"), []))
    return inp, out


def _call_messages(span: dict[str, Any], problems: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    a = span["attrs"]
    inp = _messages(a.get("gen_ai.input.messages"), problems)
    out = _messages(a.get("gen_ai.output.messages"), problems)
    system = _json(a.get("gen_ai.system_instructions"))
    if system and not any(m.get("role") == "system" for m in inp):
        inp = _from_parts("system", system) + inp
    if not inp and not out:
        inp, out = _event_messages(span["events"])
    return inp, out


def _tool_definitions(value: Any) -> list[dict[str, Any]]:
    out = []
    for d in _json(value) if isinstance(_json(value), list) else ():
        if isinstance(d, Mapping) and (d.get("name") or isinstance(d.get("function"), Mapping)):
            fn: Mapping[str, Any] = d["function"] if isinstance(d.get("function"), Mapping) else d
            out.append({"type": "function", "function": {"name": fn.get("name"),
                                                         "description": fn.get("description", ""),
                                                         "parameters": fn.get("parameters") or {"type": "object"}}})
    return out


def _add_tool_span(messages: list[dict[str, Any]], span: dict[str, Any]) -> None:
    """Put an ``execute_tool`` span into the history: its result answers the call with its id when the model's
    messages hold that call; a call the messages do not show becomes a call + answer before the final reply."""
    a = span["attrs"]
    call_id = a.get("gen_ai.tool.call.id")
    result = a.get("gen_ai.tool.call.result")
    if result is None and span["error"]:
        result = {"error": span["error"]}
    content = result if isinstance(result, str) else json.dumps(result)
    if any(m.get("role") == "tool" and call_id and m.get("tool_call_id") == call_id for m in messages):
        return
    for i, m in enumerate(messages):
        if call_id and any(isinstance(c, Mapping) and c.get("id") == call_id for c in m.get("tool_calls") or ()):
            j = i + 1
            while j < len(messages) and messages[j].get("role") == "tool":
                j += 1
            messages.insert(j, {"role": "tool", "tool_call_id": call_id, "content": content})
            return
    call_id = call_id or f"call_{span['start']}"
    args = a.get("gen_ai.tool.call.arguments")
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {
        "name": a.get("gen_ai.tool.name") or span["name"].removeprefix("execute_tool").strip() or "tool",
        "arguments": args if isinstance(args, str) else json.dumps(args or {})}}]}
    at = len(messages) - 1 if messages and messages[-1].get("role") == "assistant" and \
        not messages[-1].get("tool_calls") else len(messages)
    messages[at:at] = [call, {"role": "tool", "tool_call_id": call_id, "content": content}]


def _conversation(trace_id: str, label: str, spans: list[dict[str, Any]]) -> Conversation | str:
    """One trace as a conversation, or what it lacks."""
    spans = sorted(spans, key=lambda s: s["start"])
    genai = [s for s in spans if s["op"] or any(k.startswith("gen_ai.") for k in s["attrs"])]
    if not genai:
        return "no gen_ai span (not a GenAI trace)"
    conv = Conversation(record=label, trace_id=trace_id)
    problems: list[str] = []
    for span, inp, out in _model_calls(genai, problems):
        _add_model_call(conv, span, inp, out)
    for span in genai:
        _add_span_facts(conv, span)
    for m in conv.messages:
        m.pop("finish_reason", None)
    ends = [s["end"] for s in spans if s["end"]]
    starts = [s["start"] for s in spans if s["start"]]
    if ends and starts:
        conv.add_latency((max(ends) - min(starts)) / _NANOS)
    if problems:
        return f"{problems[0]} in gen_ai.input/output.messages"
    return conv.missing() or conv


def _model_calls(genai: list[dict[str, Any]], problems: list[str]) -> list[tuple[dict[str, Any], Any, Any]]:
    """The model-call spans that carry messages, as (span, input, output); else the agent spans that do."""
    calls = [(s, *_call_messages(s, problems)) for s in genai if s["op"] in MODEL_OPERATIONS or s["op"] is None]
    return [c for c in calls if c[1] or c[2]] or \
        [c for c in ((s, *_call_messages(s, problems)) for s in genai if s["op"] in AGENT_OPERATIONS) if c[1] or c[2]]


def _add_span_facts(conv: Conversation, span: dict[str, Any]) -> None:
    """Any span's conversation id and tool definitions; a tool span's call and result as messages."""
    a = span["attrs"]
    conv.conversation_id = conv.conversation_id or a.get("gen_ai.conversation.id")
    conv.tools += _tool_definitions(a.get("gen_ai.tool.definitions"))
    if span["op"] == TOOL_OPERATION or span["name"].startswith(TOOL_OPERATION):
        _add_tool_span(conv.messages, span)


def _add_model_call(conv: Conversation, span: dict[str, Any], inp: list[dict[str, Any]],
                    out: list[dict[str, Any]]) -> None:
    """One model call's messages merged into the conversation, with its usage, model, finish reason and error."""
    conv.messages = merge(conv.messages, inp, out)
    a = span["attrs"]
    conv.add_usage(a.get("gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens")),
                   a.get("gen_ai.usage.output_tokens", a.get("gen_ai.usage.completion_tokens")))
    conv.model = a.get("gen_ai.response.model") or a.get("gen_ai.request.model") or conv.model
    reasons = a.get("gen_ai.response.finish_reasons")
    conv.set_finish(reasons[0] if isinstance(reasons, list) and reasons else
                    next((m.get("finish_reason") for m in reversed(out) if m.get("finish_reason")), None))
    conv.response_ids += [str(a["gen_ai.response.id"])] if a.get("gen_ai.response.id") else []
    if span["error"]:
        conv.error = f"{span['name']}: {span['error']}"


def conversations(records: Iterable[tuple[str, Any]], report: LoadReport) -> list[Conversation]:
    """Every trace in the records as a conversation; records and traces that give none are named in the report."""
    traces: dict[str, list[dict[str, Any]]] = {}
    first_seen: dict[str, str] = {}
    for label, record in records:
        report.n_records += 1
        if not isinstance(record, Mapping) or not ("resourceSpans" in record or "resource_spans" in record):
            keys = sorted(map(str, record))[:8] if isinstance(record, Mapping) else type(record).__name__
            report.skip(label, f"not an OTLP JSON traces record (no resourceSpans; it has {keys})")
            continue
        n = 0
        for raw in _spans(record):
            tid = str(raw.get("traceId") or raw.get("trace_id") or "")
            if not tid:
                report.skip(label, f"span {raw.get('name')!r} has no traceId")
                continue
            traces.setdefault(tid, []).append(_span(raw))
            first_seen.setdefault(tid, label)
            n += 1
        if not n:
            report.skip(label, "no spans (resourceSpans[].scopeSpans[].spans[] is empty)")
    out = []
    for tid, spans in traces.items():
        result = _conversation(tid, f"{first_seen[tid]} (trace {tid})", spans)
        if isinstance(result, str):
            report.skip(f"{first_seen[tid]} (trace {tid})", result)
        else:
            out.append(result)
    return out
