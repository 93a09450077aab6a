"""Preference pairs written for DPO (the SDK's ``export_preference``): the OpenAI form (full message lists and
the pair's metadata), TRL's (prompt before the first assistant turn, completions with dict arguments) and
Fireworks' (the shared prefix as input, one preferred and one non-preferred assistant message).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any

from whileai_core.arguments import choice
from whileai_core.errors import InvalidArgument
from whileai_core.export.formats import EXPORT_FORMATS, drop_think
from whileai_core.rows import write_jsonl

_PAIR_META = ("chosen_score", "rejected_score", "margin", "length_delta", "first_turn_differs", "chosen_reason",
              "rejected_reason", "rejected_failure_class", "chosen_model", "rejected_model", "same_policy",
              "task_id", "lineage", "tie")


def _fireworks_pair(chosen: list[dict[str, Any]], rejected: list[dict[str, Any]], tools: list[Any]
                    ) -> tuple[dict[str, Any] | None, int]:
    """The shared prefix up to the first assistant turn where the sides differ, one assistant message each;
    (None, 0) when one side is a prefix of the other, they first differ off an assistant turn, or a side has
    no assistant turn. The int counts later turns cut."""
    j = 0
    while j < min(len(chosen), len(rejected)) and chosen[j] == rejected[j]:
        j += 1
    if j >= len(chosen) or j >= len(rejected):
        return None, 0
    if chosen[j].get("role") != "assistant" or rejected[j].get("role") != "assistant":
        return None, 0
    cut = (len(chosen) - j - 1) + (len(rejected) - j - 1)
    keep = ("role", "content", "tool_calls", "tool_call_id")
    clean = [[{k: m[k] for k in keep if m.get(k) is not None} for m in side] for side in (chosen, rejected)]
    return {"input": {"messages": clean[0][:j], "tools": tools}, "preferred_output": [clean[0][j]],
            "non_preferred_output": [clean[1][j]]}, int(cut > 0)


def export_preference(pairs: Any, output: str | PathLike[str] | None = None, *, system_prompt: str | None = None,
                      tools: Any = None, strip_think: bool = True, validate: bool = True, drop_ties: bool = True,
                      format: str = "openai", overwrite: bool = False) -> dict[str, Any]:
    """Write preference pairs (``build_preference_pairs`` output) for DPO in the OpenAI, TRL or Fireworks form.

    Args:
        pairs: the pairs, their ``(pairs, report)`` tuple, or dicts with ``prompt``, ``chosen``, ``rejected``.
        output: a JSONL path; None builds the lines in memory (``report["rows"]``).
        system_prompt: put first in every message list (default none).
        tools: the tool schemas or ``@wai.tool`` functions carried with each line.
        strip_think: remove ``<think>`` blocks from assistant content (default True).
        validate: zero surviving pairs raises (default True).
        drop_ties: drop pairs whose scores are equal, counted in ``ties_dropped`` (default True).
        format: "openai" (default: ``{prompt, chosen, rejected}`` full message lists plus the pair's metadata),
            "trl" (prompt messages before the first assistant turn, completions with dict arguments) or
            "fireworks" (``{input: {messages, tools}, preferred_output, non_preferred_output}``).
        overwrite: replace an existing ``output`` (default False).

    Returns:
        dict: ``{pairs, ties_dropped, no_completion_dropped, fireworks_turns_cut, chosen_longer_frac,
        mean_margin, first_turn_identical, format, warnings, path, n_written}``.

    Raises:
        InvalidArgument: an unknown format, an entry that is not a pair, or (validate) no pair survives.

    Example:
        ```pycon
        >>> rep = export_preference(build_preference_pairs(rows), "dpo.jsonl", format="trl")  # doctest: +SKIP
        ```
    """
    from whileai_core.tools import schemas
    from whileai_core.train.trl_formats import _side_messages, unwrap_pairs

    choice("format", format, EXPORT_FORMATS)
    items = unwrap_pairs(pairs)
    tool_schemas = schemas(tools) if tools else []
    kept, ties = _untied_pairs(items, drop_ties)
    lines, no_completion, turns_cut = [], 0, 0
    for i, p in enumerate(kept):
        sides = [_side_messages(p[s], p.get("prompt"), system_prompt, f"pairs[{i}].{s}") for s in ("chosen", "rejected")]
        if strip_think:
            for side in sides:
                drop_think(side)
        line, cut = _preference_line(format, p, sides, tools, tool_schemas)
        if line is None:
            no_completion += 1
            continue
        turns_cut += cut
        lines.append(line)
    if validate and not lines:
        raise InvalidArgument(f"no_preference_pairs: none of {len(items)} pair(s) survived ({ties} ties dropped, "
                              f"{no_completion} without a differing assistant turn); build pairs from rows with "
                              "contrast (raise repeats=)")
    margins = [float(p["margin"]) for p in kept if isinstance(p.get("margin"), (int, float))]
    deltas = [p["length_delta"] for p in kept if isinstance(p.get("length_delta"), (int, float))]
    report: dict[str, Any] = {
        "pairs": len(lines), "format": format, "ties_dropped": ties, "no_completion_dropped": no_completion,
        "fireworks_turns_cut": turns_cut, "mean_margin": sum(margins) / len(margins) if margins else None,
        "chosen_longer_frac": sum(1 for d in deltas if d > 0) / len(deltas) if deltas else None,
        "first_turn_identical": sum(1 for p in kept if p.get("first_turn_differs") is False), "warnings": [],
        "path": None, "n_written": 0}
    if output is not None:
        report.update(path=str(write_jsonl(output, lines, overwrite=overwrite)), n_written=len(lines))
    else:
        report["rows"] = lines
    return report


def _untied_pairs(items: Sequence[Any], drop_ties: bool) -> tuple[list[Mapping[str, Any]], int]:
    """The pairs to write, each checked to be a pair; with ``drop_ties``, equal-score pairs left out and counted."""
    kept, ties = [], 0
    for i, p in enumerate(items):
        if not isinstance(p, Mapping) or "chosen" not in p or "rejected" not in p:
            raise InvalidArgument(f"pairs[{i}] is not a preference pair (a dict with 'chosen' and 'rejected'); "
                                  "build them with build_preference_pairs(rows)")
        if drop_ties and (p.get("tie") or (p.get("chosen_score") is not None
                                           and p.get("chosen_score") == p.get("rejected_score"))):
            ties += 1
            continue
        kept.append(p)
    return kept, ties


def _preference_line(format: str, p: Mapping[str, Any], sides: list[Any], tools: Any,
                     tool_schemas: list[Any]) -> tuple[dict[str, Any] | None, int]:
    """One pair as a line of ``format``, and the turns cut (Fireworks); None when no assistant turn differs."""
    from whileai_core.train.trl_formats import to_dpo

    if format == "fireworks":
        chosen, rejected = (_string_args(s) for s in sides)
        return _fireworks_pair(chosen, rejected, tool_schemas)
    if format == "trl":
        return to_dpo([{"chosen": sides[0], "rejected": sides[1]}], tools=tools)[0], 0
    prompt = p.get("prompt")
    return {"prompt": prompt if isinstance(prompt, str) else json.dumps(prompt, default=str),
            "chosen": _string_args(sides[0]), "rejected": _string_args(sides[1]), "tools": tool_schemas,
            **{k: p[k] for k in _PAIR_META if k in p}}, 0


def _string_args(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    from whileai_core.messages import normalize_messages

    return normalize_messages(messages, arguments="string")


