"""What a report is made from, in one shape: the current run document, the baseline document (or None), the
gate between them (a ``Gate.to_dict()`` or None) and, from ``wai.compare``, the slices.

``wai.report`` takes a run document, a ``ScoredData`` (or any rows), a ``DeltaReport`` or a ``Comparison``;
rows become a run document here (one scenario per task, every trial's reward, the failing trials'
transcripts and the tokens spent), so the plugin's documents and the library's rows print alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgumentType
from whileai_core.messages import content_text, row_messages
from whileai_core.report.cost import add_usage, row_usage
from whileai_core.rows import reward_of, task_key


def _cut(text: Any, chars: int) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= chars else text[: chars - 1] + "…"


def trial_status(row: Mapping[str, Any], reward: float | None, pass_reward: float) -> str:
    """passed | failed | agent_error | infra_error | judge_error | unscored."""
    status = row.get("status")
    if status in ("agent_error", "infra_error"):
        return str(status)
    if row.get("judge_error"):
        return "judge_error"
    if reward is None:
        return "unscored"
    return "passed" if reward >= pass_reward else "failed"


def transcript(row: Mapping[str, Any], *, key: str, index: int, reward: float | None, pass_reward: float,
               chars: int = D.REPORT_MESSAGE_CHARS) -> dict[str, Any]:
    """One trial as the transcript viewer shows it: messages (tool calls with arguments, tool outputs), the
    judge's reason, the error; every text cut to ``chars`` characters."""
    shown = []
    for m in row_messages(row):
        calls = []
        for c in m.get("tool_calls") or []:
            fn = c.get("function") if isinstance(c, Mapping) else None
            if isinstance(fn, Mapping):
                args = fn.get("arguments")
                calls.append({"name": str(fn.get("name")), "arguments": _cut(
                    args if isinstance(args, str) else json.dumps(args, default=str), chars)})
        shown.append({"role": str(m.get("role")), "content": _cut(content_text(m.get("content")), chars),
                      "tool_calls": calls})
    return {"scenario": key, "index": index, "status": trial_status(row, reward, pass_reward), "reward": reward,
            "reason": _cut(row.get("reason"), chars) or None,
            "error": _cut(row.get("error") or row.get("judge_error"), chars) or None, "messages": shown}


def document_from_rows(rows: Sequence[Mapping[str, Any]], *, name: str | None = None,
                       pass_reward: float = D.GATE_PASS_REWARD,
                       keep: int = D.REPORT_TRANSCRIPTS_PER_SCENARIO) -> dict[str, Any]:
    """A run document (the fields a report reads) from graded rows: one scenario per task."""
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_task.setdefault(task_key(row), []).append(row)
    scenarios = []
    for key, group in sorted(by_task.items()):
        rewards = [reward_of(r) for r in group]
        spent: dict[str, dict[str, int]] = {}
        shown: list[dict[str, Any]] = []
        for i, (row, reward) in enumerate(zip(group, rewards)):
            add_usage(spent, row_usage(row))
            if len(shown) < keep and trial_status(row, reward, pass_reward) != "passed":
                shown.append(transcript(row, key=key, index=int(row.get("rollout_index", i)), reward=reward,
                                        pass_reward=pass_reward))
        judges = {str(r.get("judge_name")) for r in group if r.get("judge_name")}
        scenarios.append({"key": key, "nodeid": key, "k": len(group), "rewards": rewards, "pass_reward": pass_reward,
                          "judge": ", ".join(sorted(judges)) or None, "scenario": dict(group[0].get("scenario") or {}),
                          "errors": sum(r.get("status") == "agent_error" for r in group),
                          "infra_errors": sum(r.get("status") == "infra_error" for r in group),
                          "transcripts": shown, "usage": spent})
    models = sorted({str(r.get("model") or (r.get("agent_extra") or {}).get("model")) for r in rows
                     if r.get("model") or (r.get("agent_extra") or {}).get("model")})
    return {"schema": D.RUN_SCHEMA, "name": name, "created": None, "commit_info": {}, "run_info":
            {"model": ", ".join(models)} if models else {}, "fingerprint": {}, "gate": None, "scenarios": scenarios}


@dataclass
class Inputs:
    """The report's inputs in one shape."""

    current: dict[str, Any] | None
    baseline: dict[str, Any] | None = None
    gate: dict[str, Any] | None = None
    comparison: dict[str, Any] | None = None  # Comparison.to_dict() (headline + slices), from wai.compare
    notes: list[str] = field(default_factory=list)


def _document(obj: Any, *, name: str) -> dict[str, Any] | None:
    """A run document from a document, ``ScoredData``/``SimulationData``/``RowList`` or a list of rows."""
    if obj is None:
        return None
    if isinstance(obj, Mapping) and isinstance(obj.get("scenarios"), list):
        return dict(obj)
    rows = getattr(obj, "rows", obj)
    if isinstance(rows, Sequence) and not isinstance(rows, (str, bytes)) and all(isinstance(r, Mapping) for r in rows):
        return document_from_rows(list(rows), name=name)
    raise InvalidArgumentType(f"{name}: a report reads a run document (dict with 'scenarios'), ScoredData, rows, a "
                              f"DeltaReport or a Comparison; got {type(obj).__name__}")


def as_inputs(obj: Any, *, baseline: Any = None, gate: Any = None) -> Inputs:
    """Normalize what ``wai.report`` was given (see the module docstring)."""
    gate_dict = gate.to_dict() if hasattr(gate, "to_dict") else (dict(gate) if gate is not None else None)
    kind = type(obj).__name__
    if kind in ("Comparison", "DeltaReport") and hasattr(obj, "to_dict"):
        d = obj.to_dict()
        comparison = d if kind == "Comparison" else {"headline": d, "slices": [], "by": None}
        return Inputs(None, _document(baseline, name="baseline"), gate_dict, comparison)
    current = _document(obj, name="report input")
    base = _document(baseline, name="baseline")
    if gate_dict is None and isinstance(current, Mapping) and current.get("gate"):
        gate_dict = dict(current["gate"])
    return Inputs(current, base, gate_dict)
