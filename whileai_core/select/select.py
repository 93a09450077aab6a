"""Select: the rows worth training on, with a report of what each gate dropped and why.

RL (``mode="rl"``), in gate order: privileged leaks; truncation policy; rows that cannot vote (agent errors,
empty replies, labels that are not exactly 0 or 1); unanimous groups (no gradient: every GRPO advantage is
zero); the difficulty band DIFFICULTY_BAND of per-task pass rate (Lambert 2025; DAPO, Yu et al. 2025);
duplicate trajectories within a task, and groups that dedupe collapsed; then the reward-hack scan
(Gao et al. 2022), which warns and never prunes.

SFT (``mode="sft"``): rejection sampling, the best completion per prompt at or above ``min_reward``
(Touvron et al. 2023), with a seeded random-per-prompt control alongside so the gain of selecting can be
measured rather than assumed.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from whileai_core import defaults as D
from whileai_core.arguments import integer
from whileai_core.errors import InvalidArgument
from whileai_core.numbers import interval
from whileai_core.rowlist import RowList
from whileai_core.rows import (
    as_rows,
    binary_reward,
    group_rows,
    reward_field_hint,
    reward_of,
    stable_id,
    task_key,
    uniform,
)

TRUNCATION_POLICIES = ("drop", "keep", "penalize")
_TERMINAL = re.compile(r"[.!?)\]\"'`*:…。！？]\s*$|\b(thanks|regards|cheers)\W*$", re.I)


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        out = []
        for v in value.values():
            out.extend(_strings(v))
        if value:
            out.append(json.dumps(value, sort_keys=True, default=str))
        return out
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def visible_text(row: Mapping[str, Any]) -> str:
    """What the policy said where a user (or a trainer) can see it: asides and the final reply."""
    parts = [str(s.get("text")) for s in row.get("steps", []) if isinstance(s, Mapping) and s.get("text")]
    parts.append(str(row.get("final_text") or ""))
    return "\n".join(parts)


def find_leak(row: Mapping[str, Any], *, min_chars: int = D.LEAK_MIN_QUOTE_CHARS) -> str | None:
    """The first privileged quote of at least ``min_chars`` characters in the row's visible text, or None."""
    privileged = row.get("privileged")
    if not privileged:
        return None
    said = _norm(visible_text(row))
    if len(said) < min_chars:
        return None
    # what the policy was shown (the ask, the system prompt, the tools it called) is not a secret, even when
    # the privileged block repeats it: quoting a tool's name or the user's words is not a leak
    shown = _norm(" ".join([str(row.get("prompt") or ""), str(row.get("system_prompt") or ""),
                            *(str(s.get("tool")) for s in row.get("steps", []) if isinstance(s, Mapping))]))
    for secret in _strings(privileged):
        s = _norm(secret)
        if len(s) < min_chars:
            continue
        for start in range(0, max(0, len(s) - min_chars) + 1):
            needle = s[start:start + min_chars]
            if needle.strip() and needle in said and needle not in shown:
                return needle
    return None


def is_truncated(row: Mapping[str, Any], *, min_chars: int = D.TRUNCATION_MIN_CHARS) -> bool:
    """Cut by a token cap, marked truncated, or a long reply that stops mid-sentence."""
    if row.get("finish_reason") == "length":
        return True
    if any(isinstance(s, Mapping) and s.get("truncated") for s in row.get("steps", [])):
        return True
    reason = str(row.get("reason") or "").lower()
    if "truncat" in reason or "cut off" in reason:
        return True
    text = str(row.get("final_text") or "").strip()
    return len(text) >= min_chars and not _TERMINAL.search(text) and not _ends_in_symbol(text)


def _ends_in_symbol(text: str) -> bool:
    """A reply that ends in an emoji or other symbol (🙂, ✅) or a closing quote or bracket (», 」) is finished."""
    end = text.rstrip("\u200d\ufe0e\ufe0f")  # joiners and variation selectors trail many emoji
    return bool(end) and unicodedata.category(end[-1]) in ("So", "Sk", "Pe", "Pf")


_binary = binary_reward


def _trajectory_key(row: Mapping[str, Any]) -> str:
    calls = [(s.get("tool"), json.dumps(s.get("arguments"), sort_keys=True, default=str))
             for s in row.get("steps", []) if isinstance(s, Mapping) and "tool" in s]
    return stable_id(calls, _norm(row.get("final_text") or ""))


class Selection(RowList):
    """The selected rows (a list), with ``.report`` (a dict), ``.mode`` and, for SFT, ``.control``."""

    def __init__(self, rows: Sequence[dict[str, Any]], *, mode: str, report: dict[str, Any],
                 system_prompt: str | None = None, tools: Sequence[Any] = (),
                 control: Sequence[dict[str, Any]] | None = None) -> None:
        super().__init__(rows)
        self.mode = mode
        self.report = report
        self.system_prompt = system_prompt
        self.tools = list(tools)
        self.control = RowList(control) if control is not None else None

    def __str__(self) -> str:
        return format_report(self.report)

    def __repr__(self) -> str:
        return f"Selection({len(self)} rows, mode={self.mode!r})"

    def export(self, path: Any = None, **kwargs: Any) -> Any:
        if not len(self):
            raise InvalidArgument(f"nothing to export: this {self.mode} selection holds 0 rows; read selection.report "
                             "for what each gate dropped")
        kwargs.setdefault("mode", self.mode)
        return super().export(path, **kwargs)


def format_report(rep: Mapping[str, Any]) -> str:
    """The printed selection report (one line per gate)."""
    if rep["mode"] == "sft":
        lines = [f"sft selection: kept {rep['n_selected']} of {rep['n']} rows",
                 f"  privileged leaks dropped: {rep['privileged_leaks_dropped']}",
                 f"  eligible {rep['n_eligible']} (reward >= {rep['min_reward']:g}), not passing "
                 f"{rep['n_not_pass']}, agent errors/empty {rep['n_junk']}",
                 f"  rule {rep.get('selection', 'top_per_prompt')} over {rep['prompts']} prompts "
                 f"({rep['completions_per_prompt_mean']:.1f} completions each); control: random_per_prompt "
                 f"{rep['n_control']} rows"]
        if rep.get("note"):
            lines.append(f"  note: {rep['note']}")
        lines.extend(f"  warning: {w}" for w in rep.get("warnings", []))
        return "\n".join(lines)
    g = rep["gates"]
    lo, hi = rep["band"]
    lines = [
        f"rl selection: kept {rep['n_selected']} of {rep['n']} rows",
        f"  privileged leaks dropped: {rep['privileged_leaks_dropped']} ({rep['leak_rows_checked']} rows carried "
        "a privileged block)",
        f"  rows dropped before grouping: agent error {g['agent_error']}, infra error {g['infra_error']}, "
        f"empty reply {g['empty_reply']}, "
        f"unusable label {g['unusable_label']}, truncated {g['truncated']} (policy {rep['truncated_policy']})",
        f"  unanimous groups dropped: {rep['unanimous_groups_dropped']} ({rep['unanimous']['all_pass']} all pass, "
        f"{rep['unanimous']['all_fail']} all fail: no gradient); single-rollout groups dropped: "
        f"{rep['singleton_groups_dropped']}",
        f"  band {interval((lo, hi), 0, percent=True, brackets=False)} pass rate: {rep['band_groups_dropped']} groups dropped "
        f"({rep['band_dropped']['too_easy']} too easy, {rep['band_dropped']['too_hard']} too hard)",
        f"  duplicates dropped: {rep['duplicates']}; groups collapsed by dedupe: {rep['collapsed_groups_dropped']}",
        f"  groups kept: {rep['groups_selected']}",
        f"  hack scan: {rep['hack_scan_line']}",
    ]
    if rep.get("prior"):
        pr = rep["prior"]
        lines.insert(1, f"  prior round: {pr['too_easy']} tasks too easy and {pr['too_hard']} too hard last round "
                        f"dropped first ({pr['rows_dropped']} rows; {pr['n_prior_tasks']} tasks graded then)")
    lines.extend(f"  warning: {w}" for w in rep["warnings"])
    return "\n".join(lines)


def _check_band(band: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(band[0]), float(band[1]))
    except (TypeError, ValueError, IndexError):
        raise InvalidArgument(f"band= must be a (lo, hi) pair of pass rates; got {band!r}") from None
    if not (0.0 <= lo <= hi <= 1.0):
        raise InvalidArgument(f"band= must satisfy 0 <= lo <= hi <= 1; got {band!r}")
    return lo, hi


def select(source: Any, *, mode: str = "rl", band: tuple[float, float] = D.DIFFICULTY_BAND,
           truncated: str = "drop", endorsed: Sequence[str] = (), hack_threshold: float = D.HACK_THRESHOLD,
           leak_min_chars: int = D.LEAK_MIN_QUOTE_CHARS, truncation_min_chars: int = D.TRUNCATION_MIN_CHARS,
           min_reward: float = D.SFT_MIN_REWARD, min_k: int = D.REJECTION_SAMPLING_MIN_K,
           target: int | None = None, seed: int = 0, firm_band_rollouts: int = D.FIRM_BAND_ROLLOUTS,
           quiet: bool = False, rule: Any = None, prior: Any = None, output: Any = None) -> Selection:
    """Pick training rows and print what each gate dropped and why (``quiet=True`` to not print).

    ``rule`` (SFT): which passing completions to keep, a name from ``rules.SFT_RULES`` or a
    ``Rejection(select, min_reward, seed)`` (its min_reward and seed then apply); a bad name raises in any mode.
    ``prior`` (RL): the previous round's graded rows; tasks whose prior pass rate lies outside ``band`` are
    dropped first (``rounds.next_round``), counted in ``report["prior"]``.

    Args:
        source: graded rows: row dicts, a JSONL path, or an object with ``.rows``.
        mode: ``"rl"`` (difficulty band, unanimous groups dropped, hack scan) or ``"sft"`` (rejection sampling).
        band: the pass-rate band RL keeps (``DIFFICULTY_BAND``; DAPO, Yu et al. 2025). (``DIFFICULTY_BAND``)
        truncated: what to do with truncated rollouts: ``"drop"`` or another of ``TRUNCATION_POLICIES``.
        endorsed: features the reward is meant to follow, excluded from the hack scan.
        hack_threshold: the hack scan's |rho| threshold (``HACK_THRESHOLD``; Gao et al. 2022). (``HACK_THRESHOLD``)
        leak_min_chars: a quote of the privileged block this long is a leak (``LEAK_MIN_QUOTE_CHARS``).
            (``LEAK_MIN_QUOTE_CHARS``)
        truncation_min_chars: replies shorter than this are not read as truncated (``TRUNCATION_MIN_CHARS``).
            (``TRUNCATION_MIN_CHARS``)
        min_reward: SFT keeps rows with at least this reward (``SFT_MIN_REWARD``). (``SFT_MIN_REWARD``)
        min_k: SFT warns below this many completions per prompt (``REJECTION_SAMPLING_MIN_K``).
            (``REJECTION_SAMPLING_MIN_K``)
        target: keep at most this many rows (None: all).
        seed: the seed of every random choice.
        firm_band_rollouts: fewer rollouts per task draw the band-uncertainty warning (``FIRM_BAND_ROLLOUTS``).
            (``FIRM_BAND_ROLLOUTS``)
        quiet: do not print the report.
        rule: SFT only: which passing completions to keep, one of ``rules.SFT_RULES`` (``"top_per_prompt"``,
            ``"random_per_prompt"``, ``"top_k_overall"``, ``"random_k_overall"``) or a ``Rejection(...)``, whose
            ``min_reward`` and ``seed`` replace the arguments of those names (default None: "top_per_prompt").
            A bad name raises in either mode; under RL the rule is not used.
        prior: RL only: the previous round's graded rows (or a ScoredData); tasks whose prior pass rate lies
            outside ``band`` are dropped first and counted in ``report["prior"]`` (default None: no prior).
        output: a JSONL path the selection is also exported to (default None: not written).

    Returns:
        A ``Selection``: a list of the kept rows with ``.report`` (and, for SFT, ``.control``); it exports itself.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix. Also: an unknown ``rule`` name, or ``prior`` with ``mode="sft"``.
        InvalidArgumentType: a ``rule`` that is neither a name nor a ``Rejection``, or a ``source`` that is not
            rows (a ``TypeError``).

    Example:
        ```python
        rows = scored.select(mode="rl")   # prints what each gate dropped and why
        rows.export("train.jsonl")
        ```
    """
    from whileai_core.select.rules import Rejection, check_rule

    rule = check_rule(rule)
    if isinstance(rule, Rejection):  # a Rejection carries its own threshold and seed
        min_reward, seed, rule = rule.min_reward, rule.seed, rule.select
    if mode == "successive":
        mode = "rl"
    if mode not in ("rl", "sft"):
        raise InvalidArgument(f"mode= must be 'rl' or 'sft'; got {mode!r}")
    if truncated not in TRUNCATION_POLICIES:
        raise InvalidArgument(f"truncated= must be one of {TRUNCATION_POLICIES}; got {truncated!r}")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int) or target < 1):
        raise InvalidArgument(f"target= must be an int >= 1 or None; got {target!r}")
    lo, hi = _check_band(band)
    if isinstance(min_reward, bool) or not isinstance(min_reward, (int, float)) or not 0.0 <= min_reward <= 1.0:
        raise InvalidArgument(f"min_reward= must be a reward in [0, 1] (1.0 keeps only full passes); got {min_reward!r}")
    if isinstance(hack_threshold, bool) or not isinstance(hack_threshold, (int, float)) or \
            not 0.0 < hack_threshold < 1.0:
        raise InvalidArgument(f"hack_threshold= must be a number in (0, 1) (a within-task correlation); got "
                         f"{hack_threshold!r}")
    for name, value in (("leak_min_chars", leak_min_chars), ("truncation_min_chars", truncation_min_chars),
                        ("min_k", min_k)):
        integer(name, value, minimum=1)
    rows = [dict(r) for r in as_rows(source, name="source")]
    system_prompt = getattr(source, "system_prompt", None)
    tools = getattr(source, "tools", []) or []

    leaks = []
    kept = []
    leak_checked = sum(1 for r in rows if r.get("privileged"))
    for r in rows:
        needle = find_leak(r, min_chars=leak_min_chars)
        if needle is not None:
            leaks.append({"row_id": r.get("row_id"), "task_id": r.get("task_id"), "needle": needle})
        else:
            kept.append(r)

    if mode == "sft":
        if prior is not None:
            raise InvalidArgument("prior= carries the RL difficulty band into the next round; SFT keeps passing "
                                  "completions whatever their task's pass rate: drop prior= or use mode='rl'")
        sel = _select_sft(kept, n=len(rows), leaks=leaks, min_reward=min_reward, min_k=min_k, seed=seed,
                          target=target, system_prompt=system_prompt, tools=tools,
                          rule=rule or "top_per_prompt")
    else:
        prior_info = None
        if prior is not None:
            from whileai_core.select.rounds import apply_prior

            kept, prior_info = apply_prior(kept, prior, lo, hi)
        sel = _select_rl(kept, n=len(rows), leaks=leaks, leak_checked=leak_checked, band=(lo, hi),
                         truncated=truncated, truncation_min_chars=truncation_min_chars, endorsed=endorsed,
                         hack_threshold=hack_threshold, target=target, seed=seed, system_prompt=system_prompt,
                         tools=tools, firm_band_rollouts=firm_band_rollouts)
        sel.report["prior"] = prior_info
    hint = reward_field_hint(rows)
    if hint:
        sel.report.setdefault("warnings", []).append(hint)
    if not quiet:
        print(format_report(sel.report))
    if output is not None:
        sel.report["export"] = sel.export(output)
    return sel


def _gate_rows(rows: list[dict[str, Any]], truncated: str, truncation_min_chars: int,
               ) -> tuple[list[dict[str, Any]], dict[str, int], int]:
    """The rows an RL step can use: no agent/infra error, a reply, a 0/1 label, truncation handled by the
    ``truncated`` policy. Returns (usable rows, rows dropped per gate, truncated rows kept)."""
    gates = {"agent_error": 0, "infra_error": 0, "empty_reply": 0, "unusable_label": 0, "truncated": 0}
    truncated_kept = 0
    usable = []
    for r in rows:
        if r.get("status") in ("agent_error", "infra_error"):
            gates[r["status"]] += 1
            continue
        if not str(r.get("final_text") or "").strip():
            gates["empty_reply"] += 1
            continue
        if is_truncated(r, min_chars=truncation_min_chars):
            if truncated == "drop":
                gates["truncated"] += 1
                continue
            if truncated == "penalize" and r.get("reward") is not None:
                r["reward_before_penalty"] = r["reward"]
                r["reward"] = 0
            r["overlong"] = True
            truncated_kept += 1
        if _binary(r) is None:
            gates["unusable_label"] += 1
            continue
        usable.append(r)
    return usable, gates, truncated_kept


def _select_rl(rows: list[dict[str, Any]], *, n: int, leaks: list[dict[str, Any]], leak_checked: int,
               band: tuple[float, float], truncated: str, truncation_min_chars: int, endorsed: Sequence[str],
               hack_threshold: float, target: int | None, seed: int, system_prompt: str | None,
               tools: Sequence[Any], firm_band_rollouts: int) -> Selection:
    lo, hi = band
    usable, gates, truncated_kept = _gate_rows(rows, truncated, truncation_min_chars)
    groups = group_rows(usable)
    pass_rate, in_band, unanimous, band_dropped, singletons = _banded_groups(groups, truncated, lo, hi)
    selected, duplicates, conflicting, collapsed = _distinct_in_band(in_band, pass_rate, target)
    warnings = _rl_warnings(conflicting, groups if usable else {}, firm_band_rollouts, bool(selected))
    hack, hack_line = _hack_scan(selected, endorsed, hack_threshold, seed, warnings)
    report = {
        "mode": "rl", "n": n, "privileged_leaks_dropped": len(leaks), "privileged_leaks": leaks[:20],
        "leak_rows_checked": leak_checked, "gates": gates, "truncated_policy": truncated,
        "truncated_kept": truncated_kept, "n_after_gates": len(usable),
        "unanimous_groups_dropped": unanimous["all_pass"] + unanimous["all_fail"], "unanimous": unanimous,
        "singleton_groups_dropped": singletons, "band": [lo, hi], "band_groups_dropped": band_dropped["too_easy"] + band_dropped["too_hard"],
        "band_dropped": band_dropped, "duplicates": duplicates, "conflicting_rewards": conflicting,
        "collapsed_groups_dropped": collapsed, "n_selected": len(selected),
        "groups_selected": len({task_key(r) for r in selected}), "target": target,
        "hack_scan": hack.to_dict() if hack is not None and hasattr(hack, "to_dict") else None,
        "hack_scan_line": hack_line, "warnings": warnings,
    }
    return Selection(selected, mode="rl", report=report, system_prompt=system_prompt, tools=tools)


def _banded_groups(groups: dict[str, list[dict[str, Any]]], truncated: str, lo: float,
                   hi: float) -> tuple[dict[str, float], dict[str, list[dict[str, Any]]], dict[str, int],
                                       dict[str, int], int]:
    """Each group's pass rate, and the groups inside the band; counts of the unanimous, out-of-band and
    single-rollout groups left out."""
    unanimous = {"all_pass": 0, "all_fail": 0}
    band_dropped = {"too_easy": 0, "too_hard": 0}
    pass_rate: dict[str, float] = {}
    in_band: dict[str, list[dict[str, Any]]] = {}
    singletons = 0
    for key, members in groups.items():
        if len(members) < 2:  # one rollout has nothing to contrast with: no group-relative advantage
            singletons += 1
            continue
        chosen = [_binary(m) for m in members if not m.get("overlong") or truncated == "penalize"]
        votes = [v for v in chosen if v is not None] or [v for v in map(_binary, members) if v is not None]
        p = math.fsum(votes) / len(votes)
        pass_rate[key] = p
        if len(votes) >= 2 and p in (0.0, 1.0):
            unanimous["all_pass" if p == 1.0 else "all_fail"] += 1
            continue
        if len(votes) >= 2 and p > hi:
            band_dropped["too_easy"] += 1
            continue
        if len(votes) >= 2 and p < lo:
            band_dropped["too_hard"] += 1
            continue
        in_band[key] = members
    return pass_rate, in_band, unanimous, band_dropped, singletons


def _distinct_in_band(in_band: dict[str, list[dict[str, Any]]], pass_rate: dict[str, float],
                      target: int | None) -> tuple[list[dict[str, Any]], int, int, int]:
    """The in-band rows with repeated trajectories dropped (groups left with one trajectory or one label go),
    stamped with their group's calibration, up to ``target``; and the duplicate, conflicting, collapsed counts."""
    duplicates = collapsed = conflicting = 0
    selected: list[dict[str, Any]] = []
    for key, members in in_band.items():
        seen: dict[str, int | None] = {}
        unique = []
        for m in members:
            tk = _trajectory_key(m)
            if tk in seen:
                duplicates += 1
                if seen[tk] != _binary(m):
                    conflicting += 1
                continue
            seen[tk] = _binary(m)
            unique.append(m)
        labels = {_binary(m) for m in unique}
        if len(members) >= 2 and (len(unique) < 2 or len(labels) < 2):
            collapsed += 1
            continue
        for m in unique:
            m["calibration"] = {"task_id": key, "n": len(members), "pass_rate": round(pass_rate[key], 6)}
        selected.extend(unique)
        if target is not None and len(selected) >= target:
            break
    return selected, duplicates, conflicting, collapsed


def _rl_warnings(conflicting: int, groups: dict[str, list[dict[str, Any]]], firm_band_rollouts: int,
                 any_selected: bool) -> list[str]:
    """Judge noise, a band measured on too few rollouts (``groups``: empty when no row was usable), nothing kept."""
    warnings: list[str] = []
    if conflicting:
        warnings.append(f"{conflicting} identical trajectories got different rewards: that is judge noise; "
                        "check the judge (wai.judge_trust) before training on these labels")
    if groups:
        ns = sorted(len(v) for v in groups.values())
        median_n = ns[len(ns) // 2]
        if median_n < firm_band_rollouts:
            margin = 1 / math.sqrt(median_n) if median_n else 1.0
            warnings.append(f"difficulty was measured from {median_n} rollouts per task, so a task's band "
                            f"assignment can be off by about ±{margin / 2:.2f}; use repeats={firm_band_rollouts} for a firmer band")
    if not any_selected:
        warnings.append("nothing selected: every group was unanimous, out of band or dropped; raise repeats= or "
                        "widen band=")
    return warnings


def _hack_scan(selected: list[dict[str, Any]], endorsed: Sequence[str], hack_threshold: float, seed: int,
               warnings: list[str]) -> tuple[Any, str]:
    """The hack scan of the selected rows and its line; a flag adds a warning."""
    if not selected:
        return None, "not run (nothing selected)"
    from whileai_core.guard.hack import hack_scan

    hack = hack_scan(selected, endorsed=tuple(endorsed), threshold=hack_threshold, seed=seed)
    hack_line = str(hack)
    if hack_line.lower().startswith("hack scan:"):
        hack_line = hack_line[len("hack scan:"):].strip()
    if getattr(hack, "flagged", None):
        warnings.append(f"possible reward hack: {hack_line}")
    return hack, hack_line


def _select_sft(rows: list[dict[str, Any]], *, n: int, leaks: list[dict[str, Any]], min_reward: float,
                min_k: int, seed: int, target: int | None, system_prompt: str | None,
                tools: Sequence[Any], rule: str = "top_per_prompt") -> Selection:
    from whileai_core.select.rules import pick

    junk = [r for r in rows if r.get("status") in ("agent_error", "infra_error") or not str(r.get("final_text") or "").strip()]
    junk_ids = {id(r) for r in junk}
    clean = [r for r in rows if id(r) not in junk_ids]

    eligible = [r for r in clean if (reward_of(r) or 0.0) >= min_reward and reward_of(r) is not None]
    groups = group_rows(clean) if clean else {}
    control: list[dict[str, Any]] = []
    passing: dict[str, list[dict[str, Any]]] = {}
    for key, members in groups.items():
        passing[key] = [m for m in members if reward_of(m) is not None and reward_of(m) >= min_reward]  # type: ignore[operator]
        control.append(members[int(uniform(seed, "control", key) * len(members)) % len(members)])
    best = pick(passing, rule, seed=seed, target=target)
    if target is not None:
        control = control[:target]
    per_prompt = [len(v) for v in groups.values()] or [0]
    mean_k = sum(per_prompt) / len(per_prompt)
    note = None
    if mean_k < min_k:
        note = (f"{mean_k:.1f} completions per prompt is below {min_k}: best-of-n barely selects at this n; "
                "compare against the random_per_prompt control (selection.control) before crediting selection")
    report = {"mode": "sft", "n": n, "privileged_leaks_dropped": len(leaks), "privileged_leaks": leaks[:20],
              "n_eligible": len(eligible), "n_not_pass": len(clean) - len(eligible), "n_junk": len(junk),
              "n_selected": len(best), "n_control": len(control), "prompts": len(groups),
              "completions_per_prompt_mean": mean_k, "min_reward": min_reward, "note": note, "selection": rule}
    return Selection(best, mode="sft", report=report, system_prompt=system_prompt, tools=tools, control=control)
