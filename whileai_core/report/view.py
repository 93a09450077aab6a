"""The report's content as plain data: every number already printed (``whileai_core.gate.text``, the strings
the terminal prints) beside the floats the charts draw.

``build_view(inputs)`` returns the forest rows (suite first, then scenarios and slices, each sorted by effect),
the pass@1 / pass^k / pass@k table before and after, the power plan, the transcripts of failing trials (agent and
infra errors apart), the run metadata with a stale-baseline note, and the tokens and cost.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from whileai_core import defaults as D
from whileai_core.gate.compare import GateSettings, binarize, compute_gate, scenario_delta
from whileai_core.gate.document import baseline_index
from whileai_core.gate.text import fmt, fmt_ci, p_eq, power_text
from whileai_core.report.cost import usage
from whileai_core.report.inputs import Inputs

ERROR_STATUSES = ("agent_error", "infra_error")


def counted(sc: Mapping[str, Any]) -> dict[str, Any]:
    """A scenario entry with ``passes``, ``n_scored`` and ``pass_rate`` filled from its rewards when missing."""
    e = dict(sc)
    flags = binarize(e.get("rewards") or [], e.get("pass_reward", D.GATE_PASS_REWARD))
    e.setdefault("passes", sum(flags))
    e.setdefault("n_scored", len(flags))
    if e.get("pass_rate") is None:
        e["pass_rate"] = e["passes"] / e["n_scored"] if e["n_scored"] else None
    e.setdefault("nodeid", e["key"])
    return e


def _label(e: Mapping[str, Any]) -> str:
    return str(e.get("nodeid") or e["key"]).split("::")[-1]


def default_gate(current: Mapping[str, Any], baseline: Mapping[str, Any], *, level: float) -> dict[str, Any]:
    """The suite gate with the defaults, for two documents that came without one (library input)."""
    settings = GateSettings(level=level)  # every other setting its default
    results = {sc["key"]: counted(sc) for sc in current.get("scenarios") or []}
    return compute_gate(results, baseline_index(baseline), baseline_name=baseline.get("name") or "baseline",
                        settings=settings).to_dict()


def _scenario_rows(current: Mapping[str, Any], baseline: Mapping[str, Any] | None, gate: Mapping[str, Any] | None,
                   level: float) -> list[dict[str, Any]]:
    """One forest row per scenario: the delta vs the baseline with Newcombe's interval (the terminal table's
    delta column), or without a baseline the pass@1 with its Wilson interval; largest drop first."""
    from whileai_core.measure.stats import wilson_interval

    flagged = set((gate or {}).get("scenario_regressions") or [])
    base = baseline_index(baseline) if baseline else {}
    rows = []
    for sc in current.get("scenarios") or []:
        e = counted(sc)
        row = {"label": _label(e), "key": e["key"], "kind": "scenario", "n": f"{e['passes']}/{e['n_scored']}",
               "regressed": bool(e.get("failures")) or e["key"] in flagged}
        b = base.get(e["key"])
        if b is not None:
            bc = counted(b)
            delta, ci, p = e.get("delta"), e.get("delta_ci"), e.get("p_value")
            if delta is None and bc["n_scored"] and e["n_scored"]:  # not stored: the gate's own computation
                compared = scenario_delta(e["passes"], e["n_scored"], bc["passes"], bc["n_scored"], level=level)
                delta, ci, p = compared["delta"], compared["delta_ci"], compared["p_value"]
            row.update(value=delta, ci=ci, text=f"{fmt(delta, signed=True)} {fmt_ci(ci, signed=True)}",
                       n=f"{e['passes']}/{e['n_scored']} vs {bc['passes']}/{bc['n_scored']}"
                       + (f", one-sided p{p_eq(p)}" if p is not None else ""))
        else:
            ci = e.get("ci") if e.get("metric", "pass@1") == "pass@1" else None
            ci = ci or (list(wilson_interval(e["passes"], e["n_scored"], level=level) or []) or None)
            row.update(value=e["pass_rate"], ci=ci, text=f"{fmt(e['pass_rate'])} {fmt_ci(ci)}")
        rows.append(row)
    return sorted(rows, key=lambda r: (r["value"] is None, r["value"] if r["value"] is not None else 0.0, r["label"]))


def _rows_of(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Binarized trial rows of a document, with each scenario's cell (what ``compare`` slices by)."""
    out = []
    for sc in doc.get("scenarios") or []:
        for i, flag in enumerate(binarize(sc.get("rewards") or [], sc.get("pass_reward", D.GATE_PASS_REWARD))):
            out.append({"task_id": sc["key"], "rollout_index": i, "reward": flag, "scenario": sc.get("scenario") or {}})
    return out


def slice_fields(current: Mapping[str, Any], by: str | Sequence[str] | None) -> list[str]:
    """The scenario-cell fields to slice by: ``by``, else the first ``REPORT_SLICE_FIELDS`` fields that at least half
    the cells carry and that take more than one value."""
    if by is not None:
        return [by] if isinstance(by, str) else list(by)
    cells = [sc.get("scenario") or {} for sc in current.get("scenarios") or []]
    names = list(dict.fromkeys(k for c in cells for k in c))
    shared = [k for k in names if 2 * sum(k in c for c in cells) >= len(cells)]  # in at least half the cells
    return [k for k in shared if len({str(c.get(k)) for c in cells}) > 1][: D.REPORT_SLICE_FIELDS]


def _slice_rows(comparison: Mapping[str, Any] | None, current: Mapping[str, Any] | None,
                baseline: Mapping[str, Any] | None, by: Any, level: float) -> list[dict[str, Any]]:
    """Forest rows per slice: ``wai.compare``'s paired per-task delta within each value of each field."""
    found: list[tuple[str | None, list[Mapping[str, Any]]]] = []
    if comparison is not None:
        found.append((comparison.get("by"), comparison.get("slices") or []))
    elif current is not None and baseline is not None:
        from whileai_core.measure.compare import compare

        before, after = _rows_of(baseline), _rows_of(current)
        for field in slice_fields(current, by):
            found.append((field, compare(before, after, by=field, level=level).to_dict()["slices"]))
    rows = []
    for name, slices in found:
        for s in slices:
            ci = s.get("ci")
            rows.append({"label": f"{name}={s['name']}", "key": f"{name}={s['name']}", "kind": "slice",
                         "value": s["delta"], "ci": None if ci is None else list(ci), "regressed": bool(s["flagged"]),
                         "text": f"{fmt(s['delta'], 3, signed=True)} {fmt_ci(ci, 3, signed=True)}",
                         "n": f"{s['n_tasks']} scenarios, Holm p{p_eq(s.get('p_holm'))}"})
    return sorted(rows, key=lambda r: (r["value"], r["label"]))


def _suite_row(gate: Mapping[str, Any] | None, comparison: Mapping[str, Any] | None,
               current: Mapping[str, Any] | None, level: float) -> dict[str, Any] | None:
    """The suite row: the gate's paired delta (3 decimals, as the gate line prints it), the comparison's
    headline, or without a baseline the suite pass@1 with its scenario-bootstrap interval."""
    head = gate if gate is not None and gate.get("delta") is not None else (comparison or {}).get("headline")
    if head is not None and head.get("delta") is not None:
        n = head.get("n_paired")
        return {"label": "suite", "key": "suite", "kind": "suite", "value": head["delta"], "ci": head.get("ci"),
                "regressed": (gate or {}).get("status") == "regression" or head.get("verdict") == "worse",
                "text": f"{fmt(head['delta'], 3, signed=True)} {fmt_ci(head.get('ci'), 3, signed=True)}",
                "n": f"{n} paired scenarios, permutation p{p_eq(head.get('p_value'))}"}
    if current is None or not current.get("scenarios"):
        return None
    m = metric_table(current, None, level=level)[0]
    return {"label": "suite", "key": "suite", "kind": "suite", "value": m["after_value"], "ci": m["after_ci"],
            "regressed": False, "text": m["after"], "n": m["n_after"]}


def _pass_at(doc: Mapping[str, Any] | None, level: float) -> Any:
    if not doc or not doc.get("scenarios"):
        return None
    from whileai_core.measure.pass_at import pass_at

    rows = _rows_of(doc)
    k = min(int(sc.get("k") or len(sc.get("rewards") or [])) for sc in doc["scenarios"])
    return pass_at(rows, k=max(1, k), level=level) if rows else None


def metric_table(current: Mapping[str, Any] | None, baseline: Mapping[str, Any] | None, *,
                 level: float) -> list[dict[str, Any]]:
    """pass@1, pass^k and pass@k before and after, each ``value [lo, hi]`` with its task-bootstrap interval."""
    after, before = _pass_at(current, level), _pass_at(baseline, level)
    out = []
    for name, attr, ci_attr in (("pass@1", "pass_at_1", "ci95"), ("pass^k", "pass_pow_k", "pass_pow_k_ci95"),
                                ("pass@k", "pass_at_k", "pass_at_k_ci95")):
        row: dict[str, Any] = {"metric": name if after is None or after.k is None else name.replace("k", str(after.k))}
        for side, pa in (("after", after), ("before", before)):
            value = None if pa is None else getattr(pa, attr)
            ci = None if pa is None or getattr(pa, ci_attr) is None else list(getattr(pa, ci_attr))
            row.update({side: "-" if pa is None else f"{fmt(value)} {fmt_ci(ci)}", f"{side}_value": value,
                        f"{side}_ci": ci, f"n_{side}": "" if pa is None else f"{pa.n_groups} scenarios, {pa.n_rows} trials"})
        out.append(row)
    return out


def _age_days(created: Any, now: datetime) -> float | None:
    try:
        then = datetime.strptime(str(created), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return (now - then).total_seconds() / 86400


def commits_behind(base: str | None, head: str | None, repo: str | None) -> int | None:
    """``git rev-list --count base..head`` in ``repo`` (None when git cannot tell)."""
    if not base or not head or repo is None:
        return None
    try:
        out = subprocess.run(["git", "rev-list", "--count", f"{base}..{head}"], cwd=repo, capture_output=True,
                             text=True, timeout=10, check=True).stdout
        return int(out.strip())
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def stale_note(current: Mapping[str, Any] | None, baseline: Mapping[str, Any] | None, *, stale_days: float,
               stale_commits: int, repo: str | None, now: datetime | None = None) -> str | None:
    """Why the baseline is stale (older than ``stale_days`` or ``stale_commits`` behind), or None."""
    if not baseline:
        return None
    now = now or datetime.now(timezone.utc)
    notes = []
    age = _age_days(baseline.get("created"), now)
    if age is not None and age > stale_days:
        notes.append(f"saved {age:.0f} days ago (more than {stale_days:g})")
    behind = commits_behind((baseline.get("commit_info") or {}).get("id"),
                            ((current or {}).get("commit_info") or {}).get("id"), repo)
    if behind is not None and behind > stale_commits:
        notes.append(f"{behind} commits behind this run (more than {stale_commits})")
    return None if not notes else "stale baseline: " + " and ".join(notes) + "; re-save it (--wai-save=NAME)"


def metadata(current: Mapping[str, Any] | None, baseline: Mapping[str, Any] | None,
             gate: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(name, value) lines: commit, baseline commit and date, model, judge, fingerprint, version."""
    cur = current or {}
    info = cur.get("commit_info") or {}
    out = [("run", f"{cur.get('name') or '-'} created {cur.get('created') or '-'}"),
           ("commit", f"{(info.get('id') or '-')[:12]} on {info.get('branch') or '-'}"
                      + (" (dirty)" if info.get("dirty") else ""))]
    if baseline:
        out.append(("baseline", _baseline_line(baseline, gate)))
    return out + _agent_lines(cur)


def _baseline_line(baseline: Mapping[str, Any], gate: Mapping[str, Any] | None) -> str:
    """The baseline's name, commit, branch and save date."""
    b = baseline.get("commit_info") or {}
    name = (gate or {}).get("baseline") or baseline.get("name") or "-"
    saved = f"saved {baseline.get('created') or '-'}"
    return f"{name}: commit {(b.get('id') or '-')[:12]} on {b.get('branch') or '-'}, {saved}"


def _agent_lines(cur: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The run's model, judge, configuration fingerprint and whileai version."""
    judges = sorted({str(sc["judge"]) for sc in cur.get("scenarios") or [] if sc.get("judge")})
    models = sorted({str(m) for sc in cur.get("scenarios") or [] for m in (sc.get("usage") or {})})
    run_info = cur.get("run_info") or {}
    return [("model", str(run_info.get("model") or run_info.get("agent") or ", ".join(models) or "-")),
            ("judge", ", ".join(judges) or str(run_info.get("judge") or "-")),
            ("fingerprint", str((cur.get("fingerprint") or {}).get("config") or "-")),
            ("whileai", str(cur.get("whileai_version") or "-"))]


def transcripts(current: Mapping[str, Any] | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The kept trials of failing scenarios: (judged failures, agent/infra errors)."""
    shown = [dict(t, label=_label(counted(sc))) for sc in (current or {}).get("scenarios") or []
             for t in sc.get("transcripts") or []]
    return ([t for t in shown if t["status"] not in ERROR_STATUSES], [t for t in shown if t["status"] in ERROR_STATUSES])


def build_view(inputs: Inputs, *, by: str | Sequence[str] | None = None, level: float = D.CI_LEVEL,
               prices: Any = None, stale_days: float = D.REPORT_STALE_DAYS,
               stale_commits: int = D.REPORT_STALE_COMMITS, repo: str | None = ".", title: str | None = None
               ) -> dict[str, Any]:
    """Everything the template shows, as strings and floats (see the module docstring)."""
    cur, base, gate = inputs.current, inputs.baseline, inputs.gate
    if gate is None and cur is not None and base is not None:
        gate = default_gate(cur, base, level=level)
    scen = _scenario_rows(cur, base, gate, level) if cur is not None else []
    failures, errors = transcripts(cur)
    plan = (gate or {}).get("trials_needed")
    cost = usage(cur.get("scenarios") or [], prices=prices) if cur else None
    return {
        "title": title or f"whileai report: {(cur or {}).get('name') or 'run'}",
        "delta_mode": base is not None or inputs.comparison is not None,
        "gate": gate, "message": (gate or {}).get("message") or (str((inputs.comparison or {}).get("reasons") or "")),
        "suite": _suite_row(gate, inputs.comparison, cur, level), "scenarios": scen,
        "slices": _slice_rows(inputs.comparison, cur, base, by, level),
        "metrics": metric_table(cur, base, level=level) if cur is not None else [],
        "plan": plan, "power": power_text(plan), "failures": failures, "errors": errors,
        "scenario_keys": sorted({t["label"] for t in failures + errors}),
        "metadata": metadata(cur, base, gate),
        "stale": stale_note(cur, base, stale_days=stale_days, stale_commits=stale_commits, repo=repo),
        "cost": None if cost is None else str(cost), "cost_data": None if cost is None else cost.to_dict(),
        "level": level, "notes": list(inputs.notes),
    }
