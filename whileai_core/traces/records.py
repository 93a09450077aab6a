"""Reading trace records (a file, or records in memory) and the load report that names every skipped one."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai_core.defaults import TRACE_REPORT_SKIPPED
from whileai_core.errors import InvalidArgument, InvalidArgumentType

FORMATS = ("auto", "otlp", "openai", "chat")


@dataclass(frozen=True)
class Skipped:
    """One record that gave no row: where it was (``record``: its index, or its trace id) and what was missing."""

    record: str
    missing: str

    def __str__(self) -> str:
        return f"{self.record}: {self.missing}"


@dataclass
class LoadReport:
    """What ``wai.traces.load`` read: records seen, rows made, and every record it skipped, by name."""

    source: str
    format: str
    n_records: int = 0
    n_rows: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    redacted: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_skipped(self) -> int:
        return len(self.skipped)

    def skip(self, record: str, missing: str) -> None:
        self.skipped.append(Skipped(record, missing))

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "format": self.format, "n_records": self.n_records, "n_rows": self.n_rows,
                "skipped": [{"record": s.record, "missing": s.missing} for s in self.skipped],
                "redacted": self.redacted, "notes": list(self.notes)}

    def __str__(self) -> str:
        return self.summary()

    def summary(self, limit: int = TRACE_REPORT_SKIPPED) -> str:
        """The report as text, naming at most ``limit`` skipped records."""
        redacted = f"redacted by {self.redacted}" if self.redacted else "not redacted (no redact= hook)"
        head = (f"traces.load({self.source}): {self.n_records} records ({self.format}) -> {self.n_rows} rows, "
                f"{self.n_skipped} skipped; {redacted}")
        lines = [head]
        lines += [f"  skipped {s}" for s in self.skipped[:limit]]
        if self.n_skipped > limit:
            lines.append(f"  ... and {self.n_skipped - limit} more (report.skipped)")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def read_records(source: Any, report: LoadReport) -> Iterator[tuple[str, Any]]:
    """``(label, record)`` for each record: a JSON document or each line of a JSONL file, or each item given in
    memory. A line that is not JSON is skipped into the report, never silently."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"no such traces file: {path}")
        text = path.read_text(encoding="utf-8-sig")
        try:  # one JSON document (a pretty-printed OTLP export, or a JSON array of records)
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if whole is not None:
            items = whole if isinstance(whole, list) else [whole]
            yield from ((f"record {i}", item) for i, item in enumerate(items))
            return
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                yield f"line {lineno}", json.loads(line)
            except json.JSONDecodeError as exc:
                report.n_records += 1
                report.skip(f"line {lineno}", f"not valid JSON ({exc.msg} at column {exc.colno})")
        return
    if isinstance(source, Mapping):
        yield "record 0", source
        return
    if isinstance(source, (bytes, bytearray)) or not hasattr(source, "__iter__"):
        raise InvalidArgumentType("traces.load() takes a path (str or Path) or a list of records (dicts); got "
                                  f"{type(source).__name__}")
    yield from ((f"record {i}", item) for i, item in enumerate(source))


def sniff(record: Any) -> str | None:
    """The format of one record: ``"otlp"`` (has ``resourceSpans``), ``"openai"`` (a request/response pair or
    its flattened form), ``"chat"`` (a bare ``{"messages": [...]}``, the chat / fine-tuning shape), else None."""
    if not isinstance(record, Mapping):
        return None
    if "resourceSpans" in record or "resource_spans" in record:
        return "otlp"
    if {"request", "response"} & set(record) or ("messages" in record and ({"choices", "response"} & set(record))):
        return "openai"
    if isinstance(record.get("messages"), list):  # the OpenAI chat / fine-tuning shape: {"messages": [...]}
        return "chat"
    return None


def check_format(format: str) -> str:
    if format not in FORMATS:
        raise InvalidArgument(f"format= must be one of {FORMATS}; got {format!r}")
    return format
