"""``wai.traces.load``: production traces as rows (docs/rows.md) that grade, measure, select and export like
simulated ones, each passed through the ``redact=`` hook first, with a report naming every record skipped."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from whileai_core.errors import InvalidArgument, InvalidArgumentType, WaiError
from whileai_core.messages import loss_mask, row_from_messages, steps_from_messages
from whileai_core.rowlist import RowList
from whileai_core.rows import Row, scrub, stable_id, write_jsonl
from whileai_core.tools import as_tool
from whileai_core.traces import openai_log, otlp
from whileai_core.traces.conversation import Conversation
from whileai_core.traces.privacy import hook_name
from whileai_core.traces.records import LoadReport, check_format, read_records, sniff
from whileai_core.traces.situations import TraceSituations, situations

_PARSERS = {"otlp": otlp.conversations, "openai": openai_log.conversations, "chat": openai_log.chat_conversations}
_DERIVED = ("schema_version", "row_id", "task_id", "rollout_index", "prompt", "system_prompt", "steps",
            "final_text", "loss_mask")


class TraceRows(RowList):
    """Rows read from traces: a ``RowList`` (it exports, and every step that takes rows takes it) with the load
    ``report``; ``.grade(judge)`` scores it into a ``ScoredData`` like a simulated run."""

    report: LoadReport = LoadReport(source="no file", format="auto")  # load() gives each its own
    run_id: str | None = None
    mode: str | None = None

    def grade(self, judge: Callable[[dict[str, Any]], Any] | None = None, *, judge_name: str | None = None,
              on_error: str = "raise", concurrency: int = 1) -> Any:
        """Score every row with ``judge`` (the judge contract of ``SimulationData.grade``); returns ScoredData."""
        from whileai_core.grade.run import run_judge

        return run_judge(self, judge, judge_name=judge_name, on_error=on_error, concurrency=concurrency)

    def situations(self, eval_rows: Any = None) -> TraceSituations:
        """The users' first messages as situations for ``simulate(traces=...)`` (``wai.traces.situations``)."""
        return situations(self, eval_rows=eval_rows)

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Any:
        """Write the rows as JSONL (privileged fields scrubbed), atomically."""
        return write_jsonl(path, (scrub(r) for r in self), overwrite=overwrite)

    def __repr__(self) -> str:
        r = self.report
        redacted = f"redacted by {r.redacted}" if r.redacted else "not redacted"
        return (f"TraceRows({len(self)} rows from {r.n_records} records ({r.format}), {r.n_skipped} skipped "
                f"(report.skipped), {redacted})")

    __str__ = __repr__


def _source_label(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.path.basename(os.fspath(source))
    return f"{len(source)} records" if hasattr(source, "__len__") else type(source).__name__


def _draft(conv: Conversation, fmt: str, redacted: str | None) -> Row:
    """The row before the hook: the messages and what the log said about them."""
    parts = steps_from_messages(conv.messages)
    finish = conv.finish_reason or ("stop" if parts["final_text"] else "tool")
    return {"messages": conv.messages, "status": "agent_error" if conv.error else "ok", "error": conv.error,
            "finish_reason": "error" if conv.error else finish, "latency_s": conv.latency_s,
            "usage": conv.usage(), "model": conv.model, "trace_id": conv.trace_id,
            "conversation_id": conv.conversation_id, "response_ids": conv.response_ids, "seeded": False,
            "lineage": {"source": "traces", "format": fmt, "record": conv.record, "redact": redacted}}


def _final(row: Any, record: str, counts: dict[str, int]) -> Row | str:
    """The row after the hook: prompt, steps and final text read again from its (redacted) messages."""
    if not isinstance(row, Mapping):
        raise InvalidArgumentType(f"redact= returned {type(row).__name__} for {record}; it must return the row "
                                  "(a dict), or None to leave the row out")
    messages = row.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
        raise InvalidArgument(f"redact= returned a row without a 'messages' list for {record}; keep the messages "
                              "and rewrite their text")
    prompt = steps_from_messages(messages)["prompt"]
    if prompt is None:
        return "no user message left after redact="
    tid = "t-" + stable_id(prompt)
    index = counts.get(tid, 0)
    counts[tid] = index + 1
    fields = {k: v for k, v in row.items() if k not in _DERIVED and k != "messages"}
    out = row_from_messages(messages, task_id=tid, rollout_index=index, **fields)
    out["loss_mask"] = loss_mask(out["messages"])
    return out


def _tools(convs: list[Conversation], report: LoadReport) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for conv in convs:
        for schema in conv.tools:
            try:
                name = as_tool(schema).name
            except WaiError as exc:
                report.notes.append(f"{conv.record}: a logged tool schema was left out ({exc})")
                continue
            seen.setdefault(name, schema)
    return list(seen.values())


def load(path_or_records: Any, format: str = "auto", redact: Callable[[Row], Any] | None = None) -> TraceRows:
    """Read production traces into rows with the row schema (docs/rows.md, docs/traces.md).

    Args:
        path_or_records: a file (OTLP JSON as the OpenTelemetry Collector's file exporter writes it, one
            request per line or one document; an OpenAI chat-completions log, JSONL; or JSONL of
            ``{"messages": [...], "tools": [...]}``, the OpenAI chat / fine-tuning shape), or records in memory.
        format: ``"auto"`` (each record sniffed: ``resourceSpans`` is OTLP, a request/response pair is an
            OpenAI log, a bare ``messages`` list is chat), ``"otlp"``, ``"openai"`` or ``"chat"``.
        redact: ``row -> row`` run on every row before it is returned (so before anything can store it);
            return None to leave a row out. After it, prompt, steps and final text are read again from the
            row's messages. ``wai.traces.redact_strings(pattern)`` builds one.

    Returns:
        ``TraceRows``: the rows (one per trace or chain of calls; the same first user message is one task) and
        ``.report``, which counts the records and names each one skipped and what it lacked.

    Raises:
        InvalidArgument: ``format`` unknown, or no record is in a known format. FileNotFoundError: no such file.

    Example: ``rows = wai.traces.load("traces.jsonl"); scored = rows.grade(judge); scored.failed_traces()``.
    """
    check_format(format)
    redacted = hook_name(redact)
    report = LoadReport(source=_source_label(path_or_records), format=format, redacted=redacted)
    records = list(read_records(path_or_records, report))
    by_format: dict[str, list[tuple[str, Any]]] = {"otlp": [], "openai": [], "chat": []}
    for label, record in records:
        fmt = format if format != "auto" else sniff(record)
        if fmt is None:
            report.n_records += 1
            keys = sorted(map(str, record))[:8] if isinstance(record, Mapping) else type(record).__name__
            report.skip(label, f"unknown record: neither OTLP JSON (resourceSpans), an OpenAI log "
                               f"(request/response) nor chat messages ({{'messages': [...]}}); it has {keys}")
        else:
            by_format[fmt].append((label, record))
    if records and not any(by_format.values()):
        raise InvalidArgument(f"traces.load: no record is OTLP JSON, an OpenAI log or chat messages; "
                              f"{report.summary()}")
    used = [f for f, items in by_format.items() if items]
    report.format = "+".join(used) or format
    out = TraceRows()
    out.report = report
    counts: dict[str, int] = {}
    convs = []
    for fmt in used:
        for conv in _PARSERS[fmt](by_format[fmt], report):
            convs.append(conv)
            draft = _draft(conv, fmt, redacted)
            row = redact(draft) if redact is not None else draft
            final = None if row is None else _final(row, conv.record, counts)
            if final is None or isinstance(final, str):
                report.skip(conv.record, final or "redact= returned None (left out on purpose)")
                continue
            out.append(final)
    out.tools = _tools(convs, report)
    report.skipped.sort(key=lambda s: int(s.record.split()[1]))  # in file order: "line 3", "record 5 (trace ..)"
    report.n_rows = len(out)
    out.run_id = "traces-" + stable_id(report.source, [r["row_id"] for r in out])
    return out
