"""Export: trainer-ready JSONL from rows (schema in docs/rows.md, "Training rows").

SFT rows carry OpenAI chat ``messages`` with tool calls and a per-message ``loss_mask``; RL rows carry the
``prompt`` messages plus the whole group (``group_id``, k, pass counts, reward mean and sd) so a GRPO-style
trainer can compute advantages. Privileged fields never leave: every row is scrubbed. Writes are atomic and
never replace an existing file unless ``overwrite=True``.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, SupportsInt, cast

from whileai_core.arguments import refuse_sdk_keywords
from whileai_core.defaults import EXPORT_MAX_ABS_REWARD, TRAINING_SCHEMA_VERSION
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.export import formats
from whileai_core.hub import push as hub_push
from whileai_core.messages import loss_mask, row_messages
from whileai_core.rows import as_rows, group_rows, reward_field_hint, scrub, task_key, write_jsonl
from whileai_core.tools import as_tools

EXPORT_MODES = ("rl", "sft")


def mask_for(messages: Sequence[Mapping[str, Any]], mask_mode: str = "assistant") -> list[int]:
    """The loss mask: every assistant message (``assistant``) or only the last one (``final``)."""
    return loss_mask(messages, mask_mode)


def tool_call_roundtrip(rows: Sequence[Mapping[str, Any]], declared: Sequence[str] | None) -> dict[str, Any]:
    """Every tool call parses back, names a declared tool (when tools are known) and has its tool message."""
    bad: list[int] = []
    checked = 0
    for i, row in enumerate(rows):
        msgs = row.get("messages") or []
        answered = {m.get("tool_call_id") for m in msgs if m.get("role") == "tool"}
        for m in msgs:
            for call in m.get("tool_calls") or []:
                checked += 1
                fn = call.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments", "{}"))
                    ok = isinstance(args, dict)
                except (TypeError, json.JSONDecodeError):
                    ok = False
                if declared and fn.get("name") not in declared:
                    ok = False
                if call.get("id") not in answered:
                    ok = False
                if not ok:
                    bad.append(i)
    return {"checked": checked, "invalid": len(bad), "rows": sorted(set(bad))[:20]}


def _check_reward(i: int, row: Mapping[str, Any]) -> None:
    """A row's reward is None (ungraded) or a finite number no larger than ``EXPORT_MAX_ABS_REWARD`` in size
    (the group's mean and sd are computed in floats: 1e308 would overflow them)."""
    reward = row.get("reward")
    if reward is None or isinstance(reward, bool):
        return
    if not isinstance(reward, numbers.Real) or not math.isfinite(reward) or abs(float(reward)) > EXPORT_MAX_ABS_REWARD:
        raise InvalidArgument(f"rows[{i}] (task {task_key(row)!r}) has reward {reward!r}; a reward is a finite "
                              f"number (|reward| <= {EXPORT_MAX_ABS_REWARD:g}; usually in [0, 1]), or None for an "
                              "ungraded row; fix the judge or drop the row")


def _real_rewards(members: Sequence[Mapping[str, Any]]) -> list[float]:
    return [float(m["reward"]) for m in members
            if isinstance(m.get("reward"), numbers.Real) and not isinstance(m.get("reward"), bool)]


def _group_stamp(key: str, members: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The stamp every row of one task's group carries: its id, size, passes, reward mean and sd."""
    rewards = _real_rewards(members)
    mean = math.fsum(rewards) / len(rewards) if rewards else None
    sd = math.sqrt(math.fsum((r - mean) ** 2 for r in rewards) / len(rewards)) if mean is not None else None
    return {"group_id": hashlib.sha1(key.encode()).hexdigest()[:12],
            "group": {"k": len(members), "n_pass": sum(1 for r in rewards if r > 0.5),
                      "reward_mean": mean, "reward_std": sd},
            # the SDK's flat stamp: n0 counts rewards < 0.5, n1 > 0.5 (exactly 0.5 is neither)
            "k": len(members), "n0": sum(1 for r in rewards if r < 0.5),
            "n1": sum(1 for r in rewards if r > 0.5), "reward_mean": mean, "reward_std": sd}


def _plain_reward(reward: Any) -> Any:
    """numpy numbers as plain JSON numbers (SupportsInt: a concrete Real has __int__; typeshed's Real omits it)."""
    if isinstance(reward, numbers.Real) and not isinstance(reward, (bool, int, float)):
        return int(cast(SupportsInt, reward)) if reward in (0, 1) else float(reward)
    return reward


def _training_item(row: Mapping[str, Any], tool_schemas: list[Any], system_prompt: str | None,
                   mask_mode: str) -> dict[str, Any]:
    """One row as a training row, before its mode's fields (prompt, group stamp)."""
    msgs = row_messages(row, system_prompt=system_prompt)
    return {"schema_version": TRAINING_SCHEMA_VERSION, "task_id": task_key(row),
            "rollout_index": row.get("rollout_index"), "messages": msgs,
            "loss_mask": mask_for(msgs, mask_mode), "tools": tool_schemas,
            "reward": _plain_reward(row.get("reward"))}


def training_rows(source: Any, *, mode: str = "rl", system_prompt: str | None = None, tools: Any = None,
                  mask_mode: str = "assistant") -> list[dict[str, Any]]:
    """The trainer-ready rows, in memory (what ``export`` writes)."""
    if mode not in EXPORT_MODES:
        raise InvalidArgument(f"mode= must be 'rl' or 'sft'; got {mode!r}")
    rows = [scrub(r) for r in as_rows(source, name="source")]
    tool_schemas = [t.schema for t in as_tools(tools)] if tools else []
    for i, row in enumerate(rows):
        _check_reward(i, row)
    groups = group_rows(rows) if rows else {}
    stamps = {key: _group_stamp(key, members) for key, members in groups.items()}
    grouped = any(len(members) > 1 for members in groups.values())
    out = []
    for row in rows:
        item = _training_item(row, tool_schemas, system_prompt, mask_mode)
        msgs, key = item["messages"], item["task_id"]
        if mode == "rl":
            first_user = next((i for i, m in enumerate(msgs) if m.get("role") == "user"), 0)
            item["prompt"] = msgs[: first_user + 1]
            item.update(stamps[key])
        elif grouped:  # SFT rows carry the flat group stamp once a task repeats, as the SDK's do
            item.update({k: v for k, v in stamps[key].items() if k != "group"})
        out.append(item)
    return out


def _is_earlier_export(path: Path) -> bool:
    """True when ``path`` exists and its first line is a whileai training row (safe to replace, with a warning)."""
    if not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as fh:
            first = json.loads(fh.readline())
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and {"schema_version", "messages", "loss_mask", "task_id"} <= set(first)


# the SDK's export keywords not taken here, each with why (docs/sdk.md's table)
EXPORT_SDK_DIFFERENCES: dict[str, str] = {}


def export(source: Any, path: str | PathLike[str] | None = None, *, mode: str | None = None,
           system_prompt: str | None = None, tools: Any = None, mask_mode: str = "assistant",
           overwrite: bool = False, validate: bool = True, format: str = "openai", unroll: bool = False,
           max_tool_output_chars: int | None = None, strip_think: bool = False, push_to: str | None = None,
           **sdk: Any) -> dict[str, Any]:
    """Write trainer-ready JSONL to ``path`` (or only build it, with ``path=None``); returns a report dict.

    ``format``: "openai" (default; messages, loss_mask, tools, reward, group stamp), "trl" (TRL's SFT rows,
    ``export.formats.reshape``) or "fireworks" (messages with the mask as assistant ``weight``, and tools).
    ``unroll=True``: one sample per assistant turn, the loss on that turn alone (``export.formats.unroll``).
    ``max_tool_output_chars``: cut each tool message to this many characters, noting the cut.

    Args:
        source: rows, a ``Selection``, a ``ScoredData`` or a JSONL path.
        path: the JSONL file to write (None: only build the rows).
        mode: ``"rl"`` or ``"sft"`` (default: the source's).
        system_prompt: a system prompt for rows that lack one.
        tools: tool schemas for rows that lack them.
        mask_mode: which assistant turns train: ``"assistant"`` (all) or another of the mask modes.
        overwrite: replace a file that is not an earlier whileai export.
        validate: check every row against the schema first.
        format: the file's row shape: ``"openai"`` (default), ``"trl"`` or ``"fireworks"`` (see above).
        unroll: one sample per assistant turn, the loss on that turn alone (default False); the report's
            ``mask_mode`` then reads ``"<mask_mode> (unrolled)"``.
        strip_think: remove ``<think>...</think>`` blocks from assistant turns (default False here; the SDK's is
            True: docs/sdk.md).
        push_to: ``"namespace/name"``: push the written file to that Hugging Face Hub dataset repo
            (``hub.push``); needs ``path``. The report's ``hub`` is the push report.
        **sdk: another SDK keyword raises, naming the difference (``EXPORT_SDK_DIFFERENCES``).
        max_tool_output_chars: cut each tool message to this many characters (>= 1), marking the cut in the
            text and counting it in the report (default None: no cut).

    Returns:
        A report dict: the path, the row count and what was written.

    Raises:
        InvalidArgumentType: an argument of the wrong type (a ``TypeError``); the message names it.
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix.

    Example:
        ```python
        report = wai.export(scored.select(mode="sft"), "train.jsonl")
        ```
    """

    formats.check_export_options(format, unroll, max_tool_output_chars)
    mode = _export_mode(source, mode)
    system_prompt = system_prompt if system_prompt is not None else getattr(source, "system_prompt", None)
    _check_export_arguments(system_prompt, path, push_to, sdk)
    tools = tools if tools is not None else getattr(source, "tools", None)
    source_rows = as_rows(source, name="source")  # read once (a JSONL path is not read twice)
    items = training_rows(source_rows, mode=mode, system_prompt=system_prompt, tools=tools, mask_mode=mask_mode)
    for item in items if strip_think else ():
        item["messages"] = [dict(m) for m in item["messages"]]
        formats.drop_think(item["messages"])
    if not items:
        raise InvalidArgument("nothing to export: the source holds 0 rows")
    declared = [t["function"]["name"] for t in items[0]["tools"]] if items[0]["tools"] else None
    roundtrip = _checked_roundtrip(items, declared, validate)  # on whole conversations, before unrolling cuts them
    if unroll:
        items = [sample for item in items for sample in formats.unroll(item)]
    cut = [formats.cut_tool_output(i, max_tool_output_chars) for i in items] if max_tool_output_chars else []
    report: dict[str, Any] = {
        "n": len(items), "mode": mode, "format": format,
        "mask_mode": f"{mask_mode} (unrolled)" if unroll else mask_mode, "unrolled": unroll,
        "max_tool_output_chars": max_tool_output_chars, "tool_output_truncated": sum(c[0] for c in cut),
        "tool_output_chars_cut": sum(c[1] for c in cut),
        "with_system": bool(system_prompt), "with_tools": bool(declared),
        "groups": len({i["task_id"] for i in items}), "tool_call_roundtrip": roundtrip,
        **_mask_and_reward_counts(items),
        "warnings": _export_warnings(items, source_rows, mode, roundtrip, declared), "path": None, "n_written": 0,
    }
    if path is not None:
        report.update(_write_export(items, path, format, overwrite, report["warnings"]))
    else:
        report["rows"] = formats.reshape(items, format)
    if push_to is not None:
        report["hub"] = hub_push(report["path"], push_to)
    return report


def _export_mode(source: Any, mode: str | None) -> str:
    """A run's own mode carries over; an eval run (simulate's default) exports as RL."""
    if mode is not None:
        return mode
    source_mode = getattr(source, "mode", None)
    return source_mode if source_mode in EXPORT_MODES else "rl"


def _check_export_arguments(system_prompt: Any, path: Any, push_to: str | None, sdk: dict[str, Any]) -> None:
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise InvalidArgumentType(f"system_prompt= must be a string or None; got {type(system_prompt).__name__}")
    if path is not None and not isinstance(path, (str, PathLike)):
        raise InvalidArgumentType(f"path= must be a file path (str or Path), or None to only build the rows; got "
                        f"{type(path).__name__}")
    refuse_sdk_keywords("export", sdk, EXPORT_SDK_DIFFERENCES)
    if push_to is not None and path is None:
        raise InvalidArgument(f"push_to needs an output path: export(rows, 'train.jsonl', push_to={push_to!r})")


def _checked_roundtrip(items: list[dict[str, Any]], declared: list[str] | None, validate: bool) -> dict[str, Any]:
    """``tool_call_roundtrip``'s report; with ``validate``, a tool call that does not parse back raises."""
    roundtrip = tool_call_roundtrip(items, declared)
    if validate and roundtrip["invalid"]:
        raise InvalidArgument(f"tool_call_roundtrip_invalid: {roundtrip['invalid']} tool call(s) do not parse back, name "
                         f"an undeclared tool, or have no tool message (rows {roundtrip['rows']}); fix the agent's "
                         "steps or pass validate=False")
    return roundtrip


def _mask_and_reward_counts(items: list[dict[str, Any]]) -> dict[str, Any]:
    rewards = [i["reward"] for i in items]
    return {"trained_messages": sum(sum(i["loss_mask"]) for i in items),
            "masked_messages": sum(len(i["loss_mask"]) - sum(i["loss_mask"]) for i in items),
            "rewards": {"n_pass": sum(1 for r in rewards if r == 1), "n_fail": sum(1 for r in rewards if r == 0),
                        "n_ungraded": sum(1 for r in rewards if r is None)}}


def _export_warnings(items: list[dict[str, Any]], source_rows: list[Any], mode: str, roundtrip: dict[str, Any],
                     declared: list[str] | None) -> list[str]:
    warnings = []
    if roundtrip["checked"] and not declared:
        warnings.append("rows call tools but the file carries no tool schema; pass tools=[...]")
    hint = reward_field_hint(source_rows)
    if hint:
        warnings.append(hint)
    rewards = [i["reward"] for i in items]
    if mode == "sft" and any(r is not None and r < 1 for r in rewards):
        warnings.append(f"{sum(1 for r in rewards if r is not None and r < 1)} row(s) below reward 1 exported as "
                        "SFT targets; select(mode='sft') first")
    return warnings


def _write_export(items: list[dict[str, Any]], path: str | PathLike[str], format: str, overwrite: bool,
                  warnings: list[str]) -> dict[str, Any]:
    """Write the rows in ``format``; an earlier whileai export is replaced with a warning (appended to ``warnings``)."""

    replace = overwrite or _is_earlier_export(Path(path))
    if replace and not overwrite:
        import warnings as _w

        _w.warn(f"replaced {path}: it held an earlier whileai training export (pass overwrite=True to say so)",
                UserWarning, stacklevel=3)  # export's caller
        warnings.append(f"replaced {path}, an earlier whileai training export")
    lines = formats.reshape(items, format)
    written = write_jsonl(path, lines, overwrite=replace)
    return {"path": str(written), "n_written": len(lines)}
