"""Real user messages as situations: the first user message of each trace, deduplicated, and decontaminated
against an eval set with the existing guard (``guard.contamination.decontaminate``), for ``simulate(traces=...)``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from whileai_core.errors import InvalidArgument
from whileai_core.rows import as_rows, stable_id

if TYPE_CHECKING:
    from whileai_core.guard.contamination import DecontaminationReport


@dataclass
class TraceSituations:
    """The asks ``simulate(traces=...)`` plays: one per distinct first user message, eval copies dropped."""

    asks: list[dict[str, Any]]
    n_rows: int
    n_duplicates: int
    decontamination: DecontaminationReport | None = None
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.asks)

    def __iter__(self):
        return iter(self.asks)

    def __str__(self) -> str:
        dropped = (f", {self.decontamination.n_contaminated} dropped as copies of the eval set"
                   if self.decontamination is not None else ", not checked against an eval set (eval_rows=None)")
        return (f"trace situations: {len(self.asks)} from {self.n_rows} rows ({self.n_duplicates} duplicates"
                f"{dropped})")

    __repr__ = __str__


def _eval_source(eval_rows: Any) -> Any:
    """A holdout split (``wai.holdout(...)``) gives its held-out rows; anything else is the eval set itself."""
    held = getattr(eval_rows, "holdout", None)
    return held if isinstance(held, (list, tuple)) else eval_rows


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def situations(rows: Any, eval_rows: Any = None) -> TraceSituations:
    """The first user message of each row as an ask, deduplicated (case and whitespace do not count), and,
    with ``eval_rows`` (rows, a JSONL path, a list of strings, or a ``wai.holdout`` split), without the asks
    that copy an eval prompt or answer (``wai.decontaminate``: same task, exact text or 8-gram overlap).

    Each ask carries the trace ids it came from (``privileged.ask.trace_ids`` on simulated rows: scrubbed from
    every export). Example: ``simulate(agent, traces=wai.traces.situations(rows, eval_rows=holdout))``.
    """
    data = as_rows(rows, name="traces")
    firsts: dict[str, dict[str, Any]] = {}
    n_duplicates = 0
    for row in data:
        prompt = row.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            continue
        key = _norm(prompt)
        ids = [str(row.get("trace_id") or row.get("row_id") or "")]
        if key in firsts:
            n_duplicates += 1
            firsts[key]["trace_ids"] += ids
            continue
        firsts[key] = {"prompt": prompt.strip(), "task_id": "t-" + stable_id(prompt.strip()), "trace_ids": ids}
    asks = list(firsts.values())
    notes = []
    if len(asks) < len(data) - n_duplicates:
        notes.append(f"{len(data) - n_duplicates - len(asks)} rows had no user message")
    report = None
    if eval_rows is not None and asks:
        # late: numpy only when an eval set is given
        from whileai_core.guard.contamination import decontaminate

        report = decontaminate([{"prompt": a["prompt"], "task_id": a["task_id"]} for a in asks],
                               _eval_source(eval_rows))
        kept = {r["task_id"] for r in report.clean}
        asks = [a for a in asks if a["task_id"] in kept]
    for a in asks:  # the trace's task id names the trace task; simulate gives each situation its own
        a.pop("task_id")
    return TraceSituations(asks, n_rows=len(data), n_duplicates=n_duplicates, decontamination=report, notes=notes)


def trace_asks(traces: Any, asks: Sequence[Any] | None = None) -> list[dict[str, Any]]:
    """What ``simulate(traces=...)`` plays: the asks of ``situations`` (or of a ``TraceSituations`` given)."""
    if asks is not None:
        raise InvalidArgument("pass asks= or traces=, not both (traces= turns the users' first messages into asks)")
    chosen = traces if isinstance(traces, TraceSituations) else situations(traces)
    if not chosen.asks:
        raise InvalidArgument(f"traces= gave no situation to play: {chosen}")
    return [dict(a) for a in chosen.asks if isinstance(a, Mapping)]
