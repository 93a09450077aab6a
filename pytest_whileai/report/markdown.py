"""Output formats: the terminal table, the markdown summary (``$GITHUB_STEP_SUMMARY``), GitHub annotations.

Every estimate printed carries its interval and n.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from whileai_core import defaults as D
from whileai_core.gate.text import fmt, fmt_ci, fmt_p, power_text

NAME_WIDTH = 58  # characters of a scenario name in the terminal table (layout, not statistics)


def _short(nodeid: str, width: int = NAME_WIDTH) -> str:
    name = nodeid.split("::")[-1]
    return name if len(name) <= width else name[: width - 3] + "..."


def _counts(b: Mapping[str, Any]) -> str:
    """The baseline's pass count of its scored trials (a count, not an estimate: the delta carries the interval)."""
    return "n/a" if not b.get("n_scored") or b.get("passes") is None else f"{b['passes']}/{b['n_scored']}"


def _delta(e: Mapping[str, Any]) -> str:
    """The delta with its Newcombe interval, e.g. ``-0.40 [-0.70, -0.04]``."""
    if e.get("delta") is None:
        return "-"
    return f"{fmt(e['delta'], signed=True)} {fmt_ci(e.get('delta_ci'), signed=True)}"


def _status(e: Mapping[str, Any], gate: Any) -> str:
    if e.get("failures"):
        return "FAIL"
    if gate is not None and e["key"] in getattr(gate, "scenario_regressions", []):
        return "DROP"
    return "ok"


def ordered_keys(results: Mapping[str, Mapping[str, Any]], gate: Any) -> list[str]:
    """Failed and dropped scenarios first, then by delta (largest drop first), then by key."""
    rank = {"FAIL": 0, "DROP": 1, "ok": 2}

    def sort_key(key: str) -> tuple[int, float, str]:
        e = results[key]
        delta = e.get("delta")
        return (rank[_status(e, gate)], delta if delta is not None else 0.0, key)

    return sorted(results, key=sort_key)


def holm_note(gate: Any) -> str | None:
    """The reason no scenario drop can reach Holm significance at this k and m (``gate.holm_reach``), or None."""
    reach = getattr(gate, "holm_reach", None) if gate is not None else None
    return None if not reach or reach.get("possible") else str(reach.get("text"))


def holm_can_move(gate: Any) -> bool:
    """Whether the table has a Holm column: only when the gate computed Holm p-values that can reach significance
    (no baseline, or a k too small for it (see ``holm_note``), leaves the column out)."""
    return bool(getattr(gate, "holm", None)) and holm_note(gate) is None


def table_rows(results: Mapping[str, Mapping[str, Any]], gate: Any, limit: int | None = None) -> list[list[str]]:
    """One row per scenario, in HEADER's columns (without "Holm p" when ``holm_can_move`` is False); only the
    first ``limit`` rows when given (the terminal shows no more)."""
    holm_column = holm_can_move(gate)
    rows = []
    for key in ordered_keys(results, gate)[:limit]:
        e = results[key]
        b = e.get("baseline")
        holm = getattr(gate, "holm", {}).get(key) if gate is not None else None
        row = [
            _short(e["nodeid"]),
            f"{e.get('passes', 0)}/{e.get('n_scored', 0)}",
            f"{fmt(e.get('value'))} {fmt_ci(e.get('ci'))}" if e.get("ci") else "n/a",
            _counts(b) if b else "-",
            _delta(e),
            fmt_p(holm) if holm is not None else "-",
            _status(e, gate),
        ]
        rows.append(row if holm_column else row[:HOLM_COLUMN] + row[HOLM_COLUMN + 1:])
    return rows


HEADER = ["scenario", "passed", "estimate [CI]", "baseline", "delta [CI]", "Holm p", ""]
HOLM_COLUMN = HEADER.index("Holm p")


def header(gate: Any) -> list[str]:
    return HEADER if holm_can_move(gate) else HEADER[:HOLM_COLUMN] + HEADER[HOLM_COLUMN + 1:]


def format_table(rows: list[list[str]], header: list[str] = HEADER, limit: int = D.PLUGIN_TABLE_ROWS,
                 total: int | None = None) -> list[str]:
    """The first ``limit`` rows, aligned under ``header``, and how many of the ``total`` rows (default: all of
    ``rows``) are left out."""
    total = len(rows) if total is None else total
    shown = rows[:limit]
    widths = [max(len(r[i]) for r in [header, *shown]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in shown]
    if total > limit:
        lines.append(f"... {total - limit} more scenario(s) (see --wai-json or --wai-junitxml)")
    return lines


def intervals_note(level: float) -> str:
    """Which interval each column of the table carries."""
    return (f"intervals are {round(level * 100)}% Wilson per scenario, and Newcombe's hybrid score interval for a "
            "delta vs the baseline")


def baseline_line(wai: Any) -> str:
    if wai.settings.baseline is None:
        return "baseline: none (pass --wai-baseline=NAME to gate this run)"
    if wai.baseline is None:
        return f"baseline: {wai.settings.baseline!r} not found ({wai.baseline_note})"
    hist = getattr(wai, "history", None)
    if hist is not None:
        branch = (wai.baseline.get("commit_info") or {}).get("branch") or "?"
        return f"baseline: {wai.settings.baseline} (pooled {len(hist.runs)} runs of branch {branch}: {', '.join(hist.runs)})"
    info = wai.baseline.get("commit_info") or {}
    commit = (info.get("id") or "?")[:12]
    return (f"baseline: {wai.settings.baseline} ({wai.baseline_path}; commit {commit} on {info.get('branch') or '?'},"
            f" saved {wai.baseline.get('created', '?')})")


def sequential_lines(wai: Any) -> list[str]:
    """Under --wai-sequential: rounds run of the design and why it stopped, trials run vs the fixed design."""
    rounds = getattr(wai, "rounds", None)
    if rounds is None:
        return []
    info = rounds.summary()
    seq = getattr(wai.gate, "sequential", None)
    if seq:
        stop = seq["round"]
        out = [f"sequential: {seq['round']} of {seq['rounds']} round(s) of {info['round_trials']} trial(s) run; "
               f"{seq['trials_run']} of {seq['trials_fixed']} trials of the fixed design "
               f"({seq['saved_share']:.0%} saved); {'stopped early: ' if seq['stopped_early'] else ''}"
               f"{seq['decision']}: {seq['reason']}"]
    else:
        stop = info["rounds"]
        out = [f"sequential: {info['rounds']} round(s) of {info['round_trials']} trial(s), no sequential decision "
               f"({info['note'] or wai.gate and wai.gate.message or 'no baseline'})"]
    if info["extra_trials"]:
        out.append(f"  {info['extra_trials']} trial(s) of rounds after round {stop} ran before the decision reached "
                   "their xdist worker; they are left out of the analysis")
    return out


def history_lines(wai: Any) -> list[str]:
    """The pooled baseline (runs, flaky scenarios, drift) and a stale baseline, each named."""
    out = list(wai.history.lines()) if getattr(wai, "history", None) is not None else []
    if out and getattr(wai, "baseline_paths", None):
        named = ["  pooled runs: " + ", ".join(os.path.basename(p) for p in wai.baseline_paths)]
        named += [f"  skipped run {name}: {why}" for name, why in getattr(wai, "history_skipped", [])]
        out[1:1] = named
    stale = getattr(wai, "stale", None)
    if stale and not any(line.startswith("stale baseline") for line in out):
        out.append(f"stale baseline: {stale}")
    return out


def summary_lines(wai: Any) -> list[str]:
    """The terminal section: baseline line, scenario table, suite verdict, power line, files written."""
    lines = [baseline_line(wai)]
    results = wai.results
    if results:
        m = len(results)
        k = sorted({int(e["k"]) for e in results.values()})
        lines.append(f"{m} scenario(s), k={','.join(map(str, k))} trial(s) each; {intervals_note(wai.settings.level)}")
        shown = table_rows(results, wai.gate, limit=D.PLUGIN_TABLE_ROWS)  # the rows the terminal prints
        lines += format_table(shown, header(wai.gate), total=m)
    gate = wai.gate
    if gate is not None:
        lines.append(f"suite gate: {gate.message}")
        if holm_note(gate):
            lines.append(f"  note: {holm_note(gate)}")
        if gate.not_run:
            lines.append(f"  {len(gate.not_run)} baseline scenario(s) not run in this session (not judged)")
        if gate.new:
            lines.append(f"  {len(gate.new)} scenario(s) new since the baseline (not judged)")
        if power_text(gate.trials_needed):
            lines.append(f"  {power_text(gate.trials_needed)}")
    missed_faults = fault_line(results.values())
    if missed_faults:
        lines.append(missed_faults)
    lines += sequential_lines(wai) + history_lines(wai)
    spent = cost_line(wai)
    if spent:
        lines.append(spent)
    if wai.failed_workers:
        lines.append(f"WARNING: xdist worker(s) {', '.join(wai.failed_workers)} crashed or sent no whileai data; "
                     "the scenarios they finished are listed above")
    for path in wai.saved:
        lines.append(f"wrote {path}")
    for note in wai.notes:
        lines.append(f"note: {note}")
    return lines


def fault_line(entries: Any) -> str | None:
    """``WARNING: fault not delivered in N of M rollouts: ...`` when scheduled faults missed the agent's tool
    calls (the calls went around the world), else None."""
    from whileai_core.adapters.routing import undelivered_warning

    n = sum(int(e.get("faults_undelivered") or 0) for e in entries)
    m = sum(int(e.get("faults_scheduled") or 0) for e in entries)
    msg = undelivered_warning(n, m)
    return f"WARNING: {msg}" if msg else None


def cost_line(wai: Any) -> str | None:
    """The tokens the scenarios spent and their estimated cost under --wai-prices (None when none was recorded)."""
    from whileai_core.report.cost import usage

    spent = usage(wai.results.values(), prices=wai.settings.prices)
    return str(spent) if spent.by_model else None


# --- markdown (job summary, PR comment) ----------------------------------------------------------------------
def markdown(wai: Any) -> str:
    gate = wai.gate
    icon = {"regression": "🔴", "incompatible": "🔴", "incomplete": "🔴", "failed": "🔴", "improved": "🟢",
            "ok": "🟢"}.get(getattr(gate, "status", ""), "⚪")
    if gate is not None and (gate.red or gate.warning) and gate.status != "failed":
        icon = "🔴" if gate.red else "🟠"
    out = ["<!-- whileai-summary:start -->", f"## {icon} whileai: {gate.status if gate else 'no gate'}", ""]
    if gate is not None:
        loud = gate.red or gate.warning or gate.status == "failed"
        out += [(f"**{gate.message}**" if loud else gate.message).replace("|", "\\|"), ""]
    out.append(baseline_line(wai).replace("|", "\\|"))
    out.append("")
    rows = table_rows(wai.results, gate, limit=D.PLUGIN_TABLE_ROWS)  # the rows shown; the rest are counted
    if rows:
        out.append("| " + " | ".join(h or "status" for h in header(gate)) + " |")
        out.append("|" + "---|" * len(header(gate)))
        for r in rows:
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
        if len(wai.results) > D.PLUGIN_TABLE_ROWS:
            out.append(f"\n_{len(wai.results) - D.PLUGIN_TABLE_ROWS} more scenario(s) in the JSON report._")
        note = intervals_note(wai.settings.level)
        out += ["", f"_{note[0].upper()}{note[1:]}._"]
    if holm_note(gate):
        out += ["", f"_Note: {holm_note(gate)}._"]
    extra = sequential_lines(wai) + history_lines(wai)
    if extra:
        out += [""] + [f"- {line.strip()}".replace("|", "\\|") for line in extra]
    plan = getattr(gate, "trials_needed", None)
    if plan:
        out += ["", (f"<details><summary>power</summary>\n\n{plan['text']}; this suite has "
                     f"{plan['scenarios_here']} scenarios.\n</details>")]
    out.append("<!-- whileai-summary:end -->")
    return "\n".join(out) + "\n"


def write_step_summary(wai: Any, env: Mapping[str, str] = os.environ) -> str | None:
    """Append the markdown summary to ``$GITHUB_STEP_SUMMARY`` (never truncate: other steps append too)."""
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(markdown(wai))
    return path


# --- GitHub annotations -------------------------------------------------------------------------------------
def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(kind: str, message: str, *, file: str | None = None, line: int | None = None,
               title: str | None = None) -> str:
    """A workflow command ``::error file=..,line=..,title=..::message`` with GitHub's escaping."""
    props = []
    if file:
        props.append(f"file={_escape_prop(file)}")
    if line:
        props.append(f"line={int(line)}")
    if title:
        props.append(f"title={_escape_prop(title)}")
    return f"::{kind} {','.join(props)}::{_escape_data(message)}" if props else f"::{kind}::{_escape_data(message)}"


def annotation_lines(wai: Any, *, workspace: str | None = None, limit: int = D.GITHUB_MAX_ANNOTATIONS) -> list[str]:
    """One ``::error`` per failed or regressed scenario (capped), plus one for a red suite gate."""
    gate = wai.gate
    out: list[str] = []
    flagged = set(getattr(gate, "scenario_regressions", []) or [])
    for key in sorted(wai.results):
        e = wai.results[key]
        if not (e.get("failures") or key in flagged):
            continue
        path, line = (e.get("location") or [None, None])[:2]
        if path and workspace:
            try:
                path = os.path.relpath(path, workspace)
            except ValueError:
                pass
        why = "; ".join(e.get("failures") or ["dropped significantly vs the baseline (Holm)"])
        out.append(annotation("error", f"{_short(e['nodeid'], 200)}: {why}", file=path, line=line,
                              title="whileai regression"))
    if len(out) > limit:
        extra = len(out) - (limit - 1)
        out = out[: limit - 1] + [annotation("error", f"... and {extra} more whileai scenario failures",
                                             title="whileai")]
    if gate is not None and gate.red:
        out.append(annotation("error", gate.message, title=f"whileai gate: {gate.status}"))
    elif gate is not None and gate.warning:
        out.append(annotation("warning", gate.message, title=f"whileai gate: {gate.status}"))
    return out


def emit_annotations(wai: Any, stream: TextIO = sys.stderr) -> int:
    lines = annotation_lines(wai, workspace=os.environ.get("GITHUB_WORKSPACE"))
    stream.writelines(line + "\n" for line in lines)
    stream.flush()
    return len(lines)


def github_enabled(mode: str, env: Mapping[str, str] = os.environ) -> bool:
    return mode == "on" or (mode == "auto" and env.get("GITHUB_ACTIONS") == "true")
