"""Preference pairs from graded rollouts: chosen beats rejected by a margin, matched on reply length.

``build_preference_pairs(rows)`` groups rows by prompt, pairs a higher-reward reply with a lower-reward one
(at least ``min_margin`` apart), and by default picks the rejected reply closest in length to the chosen
one, so the pair teaches the content difference rather than "longer wins" (Singhal et al. 2023, "A Long Way
to Go: Investigating Length Correlations in RLHF"). The report says when length still confounds the pairs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from whileai_core.arguments import integer
from whileai_core.defaults import (
    CI_LEVEL,
    NUMERIC_SLACK,
    PREF_LENGTH_CONFOUND,
    PREF_LENGTH_CONFOUND_MIN,
    PREF_MAX_PAIRS_PER_PROMPT,
    PREF_MIN_MARGIN,
)
from whileai_core.errors import InvalidArgument
from whileai_core.messages import reply_text
from whileai_core.numbers import interval
from whileai_core.rows import as_rows, reward_of, task_key

__all__ = ["PreferencePairs", "build_preference_pairs"]

Row = Mapping[str, Any]


def _norm_prompt(row: Row) -> str:
    prompt = row.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return "task:" + task_key(row)
    return re.sub(r"\s+", " ", prompt.strip().lower())


def _first_turn(row: Row) -> str:
    for step in row.get("steps") or []:
        if isinstance(step, Mapping) and step.get("tool"):
            return json.dumps({"name": step["tool"], "arguments": step.get("arguments")}, sort_keys=True, default=str)
    return reply_text(row)


def _score(row: Row) -> float | None:
    if row.get("judge_status") not in (None, "ok"):
        return None
    return reward_of(row)


@dataclass
class PreferencePairs:
    """The pairs and a report. Unpacks as ``pairs, report = build_preference_pairs(rows)``."""

    pairs: list[dict[str, Any]]
    report: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        yield self.pairs
        yield self.report

    def __len__(self) -> int:
        return len(self.pairs)

    def __str__(self) -> str:
        r = self.report
        if not self.pairs:
            return f"preference pairs: 0 from {r.get('prompts_seen', 0)} prompts ({r.get('note', '')})"
        lf = r["length"]
        ci = lf.get("chosen_longer_ci")
        ci_txt = f" ({round(CI_LEVEL * 100)}% CI {interval(ci, 0, percent=True, brackets=False)})" if ci else ""
        return (f"preference pairs: {len(self.pairs)} from {r['prompts_with_contrast']} of {r['prompts_seen']} "
                f"prompts, mean margin {r['mean_margin']:.2f}, chosen longer in "
                f"{lf['chosen_longer_frac']:.0%}{ci_txt} of n={len(self.pairs)} pairs, median length delta "
                f"{lf['median_delta']:+.0f} chars" + (f"; {len(r['warnings'])} warning(s)" if r["warnings"] else ""))

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": [{k: v for k, v in p.items() if k not in ("chosen", "rejected")} for p in self.pairs],
                "report": dict(self.report)}


def build_preference_pairs(
    rows: Any,
    *,
    max_pairs_per_prompt: int = PREF_MAX_PAIRS_PER_PROMPT,
    min_margin: float = PREF_MIN_MARGIN,
    length_match: bool = True,
    length_confound: float = PREF_LENGTH_CONFOUND,
    length_confound_min: int = PREF_LENGTH_CONFOUND_MIN,
) -> PreferencePairs:
    """Chosen/rejected pairs within each prompt (rows grouped by normalised prompt text).

    Only rows with a numeric reward in [0, 1] and an ok judge status are used. Rows are ranked by reward; each
    chosen row takes an unused row whose reward is lower by at least ``min_margin`` (with ``length_match``, the
    one closest in reply length, else the lowest-scored), up to ``max_pairs_per_prompt`` pairs per prompt. No row
    is used twice. A pair carries ``prompt, chosen, rejected`` (rows), scores, ``margin``, ``length_delta``
    and ``first_turn_differs``. The report warns when chosen is longer in at least ``length_confound`` of
    ``length_confound_min``+ pairs (or in every pair once there are 3), when first turns are identical, and
    when pairs come from eval-sourced rows.

    Args:
        rows: graded rows: row dicts, a JSONL path, or an object with ``.rows``.
        max_pairs_per_prompt: pairs per prompt (``PREF_MAX_PAIRS_PER_PROMPT``). (``PREF_MAX_PAIRS_PER_PROMPT``)
        min_margin: the smallest reward gap between chosen and rejected (``PREF_MIN_MARGIN``).
            (``PREF_MIN_MARGIN``)
        length_match: pair each chosen row with the rejected row closest in reply length (Park et al. 2024).
        length_confound: warn when chosen is longer in at least this share of pairs (``PREF_LENGTH_CONFOUND``).
            (``PREF_LENGTH_CONFOUND``)
        length_confound_min: the pair count from which that share is checked (``PREF_LENGTH_CONFOUND_MIN``).
            (``PREF_LENGTH_CONFOUND_MIN``)

    Returns:
        ``PreferencePairs``: ``.pairs`` (dicts with ``prompt``, ``chosen``, ``rejected``, ``margin``,
            ``length_delta``) and ``.warnings``.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix.

    Example:
        ```python
        pairs = wai.build_preference_pairs(scored.rows)
        result = wai.train(pairs.pairs, "dpo", model="./checkpoint")
        ```
    """
    max_pairs_per_prompt = integer("max_pairs_per_prompt", max_pairs_per_prompt, minimum=1)
    if isinstance(min_margin, bool) or not isinstance(min_margin, (int, float)) or not min_margin > 0:
        raise InvalidArgument(f"min_margin= must be a number > 0 (rewards live in [0, 1]; 1.0 pairs passes with "
                         f"fails); got {min_margin!r}")
    if isinstance(length_confound, bool) or not isinstance(length_confound, (int, float)) or not 0 < length_confound <= 1:
        raise InvalidArgument(f"length_confound= must be a share in (0, 1]; got {length_confound!r}")
    groups = _scored_groups(as_rows(rows, name="rows"))
    pairs: list[dict[str, Any]] = []
    with_contrast = 0
    for prompt, members in groups.items():
        made = _prompt_pairs(prompt, members, max_pairs_per_prompt, min_margin, length_match)
        pairs.extend(made)
        with_contrast += bool(made)
    report = {"pairs": len(pairs), "prompts_seen": len(groups), "prompts_with_contrast": with_contrast,
              "min_margin": min_margin, **_pairs_report(pairs, length_match, length_confound, length_confound_min)}
    return PreferencePairs(pairs=pairs, report=report)


def _scored_groups(data: Sequence[Row]) -> dict[str, list[tuple[float, int, Row]]]:
    """The rows that carry a usable score, as (score, index, row) grouped by normalised prompt."""
    groups: dict[str, list[tuple[float, int, Row]]] = {}
    for i, row in enumerate(data):
        s = _score(row)
        if s is not None:
            groups.setdefault(_norm_prompt(row), []).append((s, i, row))
    return groups


def _prompt_pairs(prompt: str, members: list[tuple[float, int, Row]], max_pairs: int, min_margin: float,
                  length_match: bool) -> list[dict[str, Any]]:
    """One prompt's pairs: best rows first, each with an unused row ``min_margin`` lower; no row used twice."""
    members.sort(key=lambda m: (-m[0], m[1]))
    used: set[int] = set()
    pairs: list[dict[str, Any]] = []
    for s_c, i_c, chosen in members:
        if len(pairs) >= max_pairs:
            break
        if i_c in used:
            continue
        options = [(s_r, i_r, r) for s_r, i_r, r in members
                   if i_r not in used and i_r != i_c and s_c - s_r >= min_margin - NUMERIC_SLACK]
        if not options:
            continue
        if length_match:
            n_c = len(reply_text(chosen))
            s_r, i_r, rejected = min(options, key=lambda o: (abs(len(reply_text(o[2])) - n_c), -o[0] + s_c, o[1]))
        else:
            s_r, i_r, rejected = min(options, key=lambda o: (o[0], o[1]))
        used.update((i_c, i_r))
        pairs.append(_pair(prompt, chosen, rejected, s_c, s_r))
    return pairs


def _pair(prompt: str, chosen: Row, rejected: Row, s_c: float, s_r: float) -> dict[str, Any]:
    return {
        "prompt": chosen.get("prompt", prompt), "task_id": task_key(chosen), "chosen": dict(chosen),
        "rejected": dict(rejected), "chosen_score": s_c, "rejected_score": s_r,
        "margin": round(s_c - s_r, 6), "length_delta": len(reply_text(chosen)) - len(reply_text(rejected)),
        "first_turn_differs": _first_turn(chosen) != _first_turn(rejected),
        "chosen_reason": chosen.get("reason"), "rejected_reason": rejected.get("reason"),
        "eval_sourced": any((r.get("lineage") or {}).get("source") == "eval" for r in (chosen, rejected)),
        "lineage": {"chosen": chosen.get("row_id"), "rejected": rejected.get("row_id")},
    }


def _pairs_report(pairs: list[dict[str, Any]], length_match: bool, length_confound: float,
                  length_confound_min: int) -> dict[str, Any]:
    """The report's figures after the counts: margins, the length confound, identical first turns, eval rows."""
    warnings: list[str] = []
    deltas = np.array([p["length_delta"] for p in pairs], dtype=float)
    longer = int(np.sum(deltas > 0))
    n = len(pairs)
    frac = longer / n if n else 0.0
    ci = None
    if n:
        from whileai_core.measure.stats import wilson_interval

        ci = wilson_interval(longer, n)
    if (n >= length_confound_min and frac >= length_confound) or (n >= 3 and longer == n):
        warnings.append(f"length confound: chosen is longer in {longer} of {n} pairs; the pairs may teach 'longer "
                        "wins' (keep length_match=True, or add shorter passing replies)")
    identical = sum(1 for p in pairs if not p["first_turn_differs"])
    if identical:
        warnings.append(f"{identical} of {n} pairs have identical first turns; a first-turn DPO trainer sees no "
                        "difference there")
    evals = sum(1 for p in pairs if p["eval_sourced"])
    if evals:
        warnings.append(f"{evals} pairs come from eval-sourced rows: training on them turns the held-out scorer "
                        "into the reward")
    return {
        "mean_margin": float(np.mean([p["margin"] for p in pairs])) if pairs else None,
        "partial_score_pairs": sum(1 for p in pairs if p["chosen_score"] not in (0.0, 1.0)
                                   or p["rejected_score"] not in (0.0, 1.0)),
        "first_turn_identical": identical, "eval_sourced": evals,
        "length": {"median_delta": float(np.median(deltas)) if n else 0.0, "chosen_longer": longer,
                   "chosen_longer_frac": frac, "chosen_longer_ci": list(ci) if ci else None},
        "length_match": length_match, "warnings": warnings,
        "note": "" if pairs else "no prompt has rollouts whose rewards differ by min_margin; raise repeats= to "
                                 "create contrast",
    }
