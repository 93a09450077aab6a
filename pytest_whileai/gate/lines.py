"""One-line texts of a scenario's result: the summary line, and the lines that name what went wrong in its trials.

Pure formatting of the JSON entry ``gate.scenario.judge_scenario`` builds, so the fixture, the scenario
verdict and the JUnit writer share it without importing each other. Every formatter accepts a missing or
``None`` field (no scored trial, no baseline, no delta) and prints ``n/a`` for it (``whileai_core.gate.text``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai_core.gate.text import fmt, fmt_ci, p_eq


def first_line(text: Any, limit: int) -> str:
    """The first line of an error text, cut to ``limit`` characters."""
    line = (str(text).strip().splitlines() or [""])[0]
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _count(e: Mapping[str, Any], field: str, words: str) -> str:
    n = e.get(field) or 0
    return f", {n} {words}" if n else ""


def summary_line(e: Mapping[str, Any]) -> str:
    """One line: estimate, interval, pass counts (with errors and unscored trials), baseline and delta (each with
    its interval: Wilson, and Newcombe's hybrid score interval of the difference), p."""
    level = e.get("level")
    head = (f"{e.get('metric', 'pass@1')} {fmt(e.get('value'))} {fmt_ci(e.get('ci'))} "
            f"({e.get('passes', 0)}/{e.get('n_scored', 0)} trials passed"
            f"{_count(e, 'errors', 'agent errors')}{_count(e, 'unscored', 'unscored')}"
            f"{_count(e, 'infra_errors', 'infra errors')}{_count(e, 'judge_errors', 'judge errors')}"
            f"{', ' + str(round(level * 100)) + '% Wilson' if isinstance(level, (int, float)) else ''})")
    b = e.get("baseline")
    if b:
        delta = fmt(e.get("delta"), signed=True)
        if e.get("delta") is not None:
            delta += f" {fmt_ci(e.get('delta_ci'), signed=True)} (Newcombe)"
        head += (f" | baseline {fmt(b.get('pass_rate'))} {fmt_ci(b.get('ci'))} ({b.get('passes', 0)}/"
                 f"{b.get('n_scored', 0)}) | delta {delta}, one-sided p{p_eq(e.get('p_value'))}")
    elif e.get("baseline_note"):
        head += f" | baseline: {e['baseline_note']}"
    return head


def trouble_lines(e: Mapping[str, Any], *, skip: str = "") -> list[str]:
    """What went wrong in the trials, one line per kind (agent raised, judge raised, backend failed); a kind
    whose first error text already appears in ``skip`` (e.g. the failures shown above it) is left out."""
    total = len(e.get("rewards") or [])
    out = []
    for count, first, what, then in (
            ("errors", "agent_error", "the agent raised", "counted as failed trials, never graded"),
            ("judge_errors", "judge_error", "the judge raised", "unscored"),
            ("infra_errors", "infra_error", "the backend failed", "infra errors: unscored, never graded")):
        n = e.get(count) or 0
        if n and not (e.get(first) and e[first] in skip):
            detail = f": {e[first]}" if e.get(first) else ""
            out.append(f"{what} on {n} of {total} trial(s) ({then}){detail}")
    return out
