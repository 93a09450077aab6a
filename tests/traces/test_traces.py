"""Feed traces back: OTLP JSON and OpenAI logs written here load into rows that grade, export and seed simulate."""

from __future__ import annotations

import json

import pytest

import whileai as wai


def attr(key, value):
    if isinstance(value, bool):
        v = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}  # int64 is a string in OTLP JSON
    elif isinstance(value, float):
        v = {"doubleValue": value}
    elif isinstance(value, list):
        v = {"arrayValue": {"values": [{"stringValue": x} for x in value]}}
    else:
        v = {"stringValue": value}
    return {"key": key, "value": v}


def span(trace, sid, name, start, end, attrs, events=(), error=None):
    out = {"traceId": trace, "spanId": sid, "name": name, "kind": 3, "startTimeUnixNano": str(start),
           "endTimeUnixNano": str(end), "attributes": [attr(k, v) for k, v in attrs.items()],
           "events": [{"timeUnixNano": str(start), "name": n, "attributes": [attr(k, v) for k, v in a.items()]}
                      for n, a in events]}
    if error:
        out["status"] = {"code": 2, "message": error}
    return out


def export_line(*spans):
    """One OTLP ExportTraceServiceRequest, as the Collector's file exporter writes one per line."""
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [attr("service.name", "shop-agent")]},
                                          "scopeSpans": [{"scope": {"name": "genai"}, "spans": list(spans)}]}]})


def parts(role, *items, finish=None):
    m = {"role": role, "parts": list(items)}
    if finish:
        m["finish_reason"] = finish
    return m


def text(s):
    return {"type": "text", "content": s}


A, B, C, D, E = "a" * 32, "b" * 32, "c" * 32, "d" * 32, "e" * 32
S = 1_700_000_000_000_000_000


@pytest.fixture()
def otlp_file(tmp_path):
    user = parts("user", text("Where is order 42?"))
    call = parts("assistant", {"type": "tool_call", "id": "call_1", "name": "get_order",
                               "arguments": {"order_id": "42"}}, finish="tool_call")
    answer = parts("tool", {"type": "tool_call_response", "id": "call_1", "response": {"status": "shipped"}})
    lines = [
        export_line(  # trace A: the newer JSON attributes, two model calls around a tool span
            span(A, "a1", "chat gpt-4o", S, S + 400_000_000, {
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                "gen_ai.system_instructions": json.dumps([text("You are the shop's agent.")]),
                "gen_ai.input.messages": json.dumps([user]), "gen_ai.output.messages": json.dumps([call]),
                "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 8}),
            span(A, "a2", "execute_tool get_order", S + 400_000_000, S + 500_000_000, {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order",
                "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": '{"order_id": "42"}',
                "gen_ai.tool.call.result": '{"status": "shipped"}'})),
        export_line(  # the second model call of trace A arrives in a later batch
            span(A, "a3", "chat gpt-4o", S + 500_000_000, S + 1_500_000_000, {
                "gen_ai.operation.name": "chat", "gen_ai.response.model": "gpt-4o-2024-08-06",
                "gen_ai.input.messages": json.dumps([user, call, answer]),
                "gen_ai.output.messages": json.dumps([parts("assistant", text("Order 42 has shipped."),
                                                            finish="stop")]),
                "gen_ai.response.finish_reasons": ["stop"],
                "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 6}),
            # trace B: the older per-message events
            span(B, "b1", "chat gpt-4o", S, S + 250_000_000, {"gen_ai.operation.name": "chat"}, events=[
                ("gen_ai.user.message", {"content": "Cancel order 7 please"}),
                ("gen_ai.choice", {"message": json.dumps({"content": "Order 7 is cancelled."}),
                                   "finish_reason": "stop"})])),
        "{not json",
        export_line(  # trace C: a tool span the model's messages do not show; trace D: not GenAI
            span(C, "c1", "chat gpt-4o", S, S + 300_000_000, {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([parts("user", text("Refund order 9"))]),
                "gen_ai.output.messages": json.dumps([parts("assistant", text("Refund issued."))])}),
            span(C, "c2", "execute_tool refund", S + 100_000_000, S + 200_000_000, {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund",
                "gen_ai.tool.call.arguments": '{"order_id": "9"}', "gen_ai.tool.call.result": "ok"}),
            span(D, "d1", "GET /health", S, S + 1000, {"http.request.method": "GET"})),
        export_line(  # trace E: a tool span alone, no conversation
            span(E, "e1", "execute_tool get_order", S, S + 1000, {"gen_ai.operation.name": "execute_tool",
                                                                  "gen_ai.tool.name": "get_order"})),
    ]
    path = tmp_path / "otel.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GET_ORDER = {"type": "function", "function": {"name": "get_order", "description": "Look up an order by id.",
                                              "parameters": {"type": "object",
                                                             "properties": {"order_id": {"type": "string"}},
                                                             "required": ["order_id"]}}}


@pytest.fixture()
def openai_file(tmp_path):
    system = {"role": "system", "content": "You are the shop's agent."}
    user = {"role": "user", "content": "What's the status of order 42? I'm ann@example.com"}
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "42"}'}}]}
    result = {"role": "tool", "tool_call_id": "call_a", "content": '{"status": "shipped"}'}
    reply1 = {"role": "assistant", "content": "Order 42 shipped."}
    user2 = {"role": "user", "content": "Thanks, and order 43?"}

    def logged(messages, reply, rid, finish="stop", **extra):
        return {"request": {"model": "gpt-4o-mini", "messages": messages, "tools": [GET_ORDER]},
                "response": {"id": rid, "model": "gpt-4o-mini", "choices": [
                    {"index": 0, "message": reply, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}, **extra}

    lines = [
        json.dumps(logged([system, user], call, "chatcmpl-1", "tool_calls", latency_ms=300)),
        json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}],  # flattened
                    "choices": [{"message": {"role": "assistant", "content": "Hello! How can I help?"},
                                 "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 6}}),
        json.dumps(logged([system, user, call, result], reply1, "chatcmpl-2", latency_ms=200)),
        json.dumps({"request": {"messages": []}, "response": {}}),  # malformed: nothing was asked
        json.dumps(logged([system, user, call, result, reply1, user2],
                          {"role": "assistant", "content": "Order 43 is pending."}, "chatcmpl-3", latency_ms=100)),
    ]
    path = tmp_path / "openai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_otlp_spans_load_as_rows_grouped_by_trace(otlp_file):
    rows = wai.traces.load(otlp_file)
    assert [r["trace_id"] for r in rows] == [A, B, C]
    a, b, c = rows
    assert a["prompt"] == "Where is order 42?"
    assert a["system_prompt"] == "You are the shop's agent."
    assert a["steps"] == [{"tool": "get_order", "arguments": {"order_id": "42"}, "result": {"status": "shipped"}}]
    assert a["final_text"] == "Order 42 has shipped."
    assert [m["role"] for m in a["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert a["loss_mask"] == [0, 0, 1, 0, 1]
    assert a["usage"] == {"input_tokens": 80, "output_tokens": 14}
    assert a["latency_s"] == pytest.approx(1.5)
    assert a["model"] == "gpt-4o-2024-08-06" and a["finish_reason"] == "stop" and a["status"] == "ok"
    assert a["lineage"] == {"source": "traces", "format": "otlp", "record": f"line 1 (trace {A})", "redact": None}
    assert (b["prompt"], b["final_text"], b["steps"]) == ("Cancel order 7 please", "Order 7 is cancelled.", [])
    assert c["steps"] == [{"tool": "refund", "arguments": {"order_id": "9"}, "result": "ok"}]
    assert c["final_text"] == "Refund issued."
    report = rows.report
    assert (report.n_records, report.n_rows, report.format) == (4 + 1, 3, "otlp")
    assert [(s.record, s.missing) for s in report.skipped] == [
        ("line 3", "not valid JSON (Expecting property name enclosed in double quotes at column 2)"),
        (f"line 4 (trace {D})", "no gen_ai span (not a GenAI trace)"),
        (f"line 5 (trace {E})", "no user message"),
    ]
    assert "3 skipped" in repr(rows) and "line 3: not valid JSON" in str(report)


def test_openai_log_chains_calls_into_multi_turn_rows(openai_file):
    rows = wai.traces.load(openai_file)
    assert rows.report.format == "openai" and len(rows) == 2
    chat, hello = rows
    assert chat["steps"] == [
        {"tool": "get_order", "arguments": {"order_id": "42"}, "result": {"status": "shipped"}},
        {"text": "Order 42 shipped."},
        {"user": "Thanks, and order 43?"},
    ]
    assert chat["final_text"] == "Order 43 is pending."
    assert chat["usage"] == {"input_tokens": 60, "output_tokens": 15}
    assert chat["latency_s"] == pytest.approx(0.6)
    assert chat["response_ids"] == ["chatcmpl-1", "chatcmpl-2", "chatcmpl-3"]
    assert hello["prompt"] == "Hi" and hello["final_text"] == "Hello! How can I help?"
    assert [(s.record, s.missing) for s in rows.report.skipped] == [("line 4", "no request messages")]
    assert [t["function"]["name"] for t in rows.tools] == ["get_order"]


def shipped_judge(row):
    return {"reward": 0.0 if row["final_text"].startswith("Hello") else 1.0}


def test_trace_rows_grade_measure_select_and_export(openai_file, otlp_file, tmp_path):
    rows = wai.traces.load(openai_file)
    scored = rows.grade(shipped_judge)
    assert [r["prompt"] for r in scored.failed_traces()] == ["Hi"]
    assert scored.pass_at.n_rows == 2
    out = tmp_path / "train.jsonl"
    scored.export(out, mode="sft")
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2 and lines[0]["tools"] == [GET_ORDER]
    assert lines[0]["messages"][2]["tool_calls"][0]["function"]["name"] == "get_order"
    otel = wai.traces.load(otlp_file).grade(lambda r: {"reward": 1.0})
    assert len(otel.select(mode="sft")) == 3  # every passing trace is an SFT row
    saved = wai.traces.load(otlp_file).save(tmp_path / "otel_rows.jsonl")
    assert len(saved.read_text(encoding="utf-8").splitlines()) == 3


def test_simulate_plays_the_users_first_messages(openai_file, otlp_file):
    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {"order_id": order_id, "status": "shipped"}

    failing = wai.traces.load(openai_file).grade(shipped_judge).failed_traces()
    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], traces=failing, repeats=1)
    assert [r["prompt"] for r in data.rows] == ["Hi"]
    both = [*wai.traces.load(otlp_file), *wai.traces.load(otlp_file)]  # every first message twice
    sits = wai.traces.situations(both)
    assert len(sits) == 3 and sits.n_duplicates == 3
    eval_rows = wai.rows(["where is ORDER 42?"], ["It shipped."])
    clean = wai.traces.situations(both, eval_rows=eval_rows)
    assert [a["prompt"] for a in clean] == ["Cancel order 7 please", "Refund order 9"]
    assert clean.decontamination.n_contaminated == 1
    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], traces=clean, repeats=2)
    assert sorted({r["prompt"] for r in data.rows}) == ["Cancel order 7 please", "Refund order 9"]
    assert all(r["privileged"]["ask"]["trace_ids"] for r in data.rows)
    with pytest.raises(wai.InvalidArgument, match="asks= or traces="):
        wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], traces=clean, asks=["x"])


def test_redact_runs_on_every_row_before_anything_sees_it(openai_file, tmp_path):
    hook = wai.traces.redact_strings(r"[\w.+-]+@[\w-]+\.[\w.]+", "<email>")
    rows = wai.traces.load(openai_file, redact=hook)
    assert "example.com" not in json.dumps(list(rows))
    assert rows[0]["prompt"] == "What's the status of order 42? I'm <email>"
    assert rows[0]["lineage"]["redact"].startswith("redact_strings(")
    rows.export(tmp_path / "out.jsonl")
    assert "example.com" not in (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    sits = wai.traces.situations(rows)
    assert "example.com" not in json.dumps(sits.asks)

    def only_messages(row):  # a hook that rewrites only the messages: prompt and steps follow them
        row["messages"] = [dict(m, content="[gone]") if m["role"] == "user" else m for m in row["messages"]]
        return row

    assert {r["prompt"] for r in wai.traces.load(openai_file, redact=only_messages)} == {"[gone]"}
    dropped = wai.traces.load(openai_file, redact=lambda r: None if r["messages"][-1]["content"].startswith("Hello")
                              else r)
    assert len(dropped) == 1
    assert [(s.record, s.missing) for s in dropped.report.skipped] == [
        ("line 2", "redact= returned None (left out on purpose)"), ("line 4", "no request messages")]
    with pytest.raises(wai.InvalidArgumentType, match="redact= returned str"):
        wai.traces.load(openai_file, redact=lambda r: "nope")


def test_records_in_memory_formats_and_unknown_records(openai_file):
    records = [json.loads(x) for x in openai_file.read_text(encoding="utf-8").splitlines()]
    mixed = wai.traces.load([*records, {"event": "page_view"}])
    assert len(mixed) == 2 and mixed.report.skipped[-1].record == "record 5"
    assert "unknown record" in mixed.report.skipped[-1].missing
    assert len(wai.traces.load(records, format="openai")) == 2
    with pytest.raises(wai.InvalidArgument, match="format= must be one of"):
        wai.traces.load(records, format="langsmith")
    with pytest.raises(wai.InvalidArgument, match="no record is OTLP JSON, an OpenAI log or chat messages"):
        wai.traces.load([{"event": "page_view"}])
    assert wai.traces.load(records, format="otlp").report.n_skipped == 5  # told the wrong format: all named


def test_calls_logged_with_only_the_new_turn_merge_into_one_history():
    user = parts("user", text("Where is order 5?"))
    call = parts("assistant", {"type": "tool_call", "id": "t1", "name": "get_order", "arguments": {"order_id": "5"}})
    answer = parts("tool", {"type": "tool_call_response", "id": "t1", "response": "pending"})
    record = json.loads(export_line(
        span(A, "1", "chat m", S, S + 10, {"gen_ai.operation.name": "chat",
                                           "gen_ai.input.messages": json.dumps([user]),
                                           "gen_ai.output.messages": json.dumps([call])}),
        span(A, "2", "chat m", S + 20, S + 30, {"gen_ai.operation.name": "chat",  # the new turn only
                                                "gen_ai.input.messages": json.dumps([answer]),
                                                "gen_ai.output.messages": json.dumps([parts("assistant",
                                                                                            text("Pending."))])},
             error="upstream 500")))
    (row,) = wai.traces.load([record])
    assert [m["role"] for m in row["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert row["steps"] == [{"tool": "get_order", "arguments": {"order_id": "5"}, "result": "pending"}]
    assert (row["status"], row["error"], row["finish_reason"]) == ("agent_error", "chat m: upstream 500", "error")


def test_a_holdout_split_is_an_eval_set(otlp_file):
    rows = wai.traces.load(otlp_file)
    split = wai.holdout(wai.rows(["Refund order 9", "Cancel order 7 please", "Reset my password"],
                                 ["done", "done", "done"]), fraction=0.34, seed=2)
    held = {r["prompt"] for r in split.holdout}
    assert held == {"Refund order 9"}  # seed 2 holds out one of the traces' own questions
    kept = {a["prompt"] for a in wai.traces.situations(rows, eval_rows=split)}
    assert held and kept == {r["prompt"] for r in rows} - held  # what the split holds out is not played


def test_chat_messages_jsonl_loads_with_tool_calls(tmp_path):
    # the OpenAI chat / fine-tuning shape (issue 29): one conversation per line, tool calls included
    call = {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "A1"}'}}
    schema = {"type": "function", "function": {"name": "get_order", "description": "Look up an order.",
              "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}
    lines = [{"messages": [{"role": "system", "content": "Help."}, {"role": "user", "content": "Where is A1?"},
                           {"role": "assistant", "content": None, "tool_calls": [call]},
                           {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'},
                           {"role": "assistant", "content": "It shipped."}], "tools": [schema]},
             {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]},
             {"messages": [{"role": "user", "content": "no reply"}]}]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rows = wai.traces.load(path)
    assert len(rows) == 2 and rows.report.format == "chat" and rows.report.n_records == 3
    assert len(rows.report.skipped) == 1 and rows.report.skipped[0].missing == "no assistant reply"
    first = rows[0]
    assert first["prompt"] == "Where is A1?" and first["final_text"] == "It shipped."
    assert first["steps"] == [{"tool": "get_order", "arguments": {"order_id": "A1"}, "result": {"status": "shipped"}}]
    assert first["system_prompt"] == "Help." and rows.tools == [schema]
    assert rows[1]["final_text"] == "Hello!" and first["lineage"]["format"] == "chat"
