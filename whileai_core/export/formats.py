"""Export formats: one training row as an OpenAI, TRL or Fireworks line; unrolled per assistant turn; tool output
cut to a length. TRL's SFT rows (``to_sft``) are built here too, since ``export`` (reached from
``RowList.export``) may import only this module and the ground floor; preference pairs are ``train.preferences``.

The canonical row is ``export.training_rows``'s ("openai": messages with tool calls as JSON strings, a 0/1
``loss_mask`` per message, tools). ``trl`` reshapes it for TRL's SFTTrainer (``trl_formats.to_sft``: dict
arguments; prompt/completion rows when the mask skips an assistant turn, so the mask survives). ``fireworks``
keeps only ``messages`` and ``tools`` and moves the mask onto each assistant message as ``weight``
(docs.fireworks.ai/fine-tuning).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from whileai_core.arguments import choice, integer
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.messages import MASK_MODES, loss_mask, normalize_messages, row_messages
from whileai_core.rows import as_rows

EXPORT_FORMATS = ("openai", "trl", "fireworks")
_THINK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)
_FIREWORKS_KEYS = ("role", "content", "tool_calls", "tool_call_id")


def cut_tool_output(item: dict[str, Any], max_chars: int) -> tuple[int, int]:
    """Cut each tool message's content to ``max_chars`` (in place), noting how much was cut; returns (messages
    cut, characters cut)."""
    n_cut = chars = 0
    for m in item["messages"]:
        content = m.get("content")
        if m.get("role") == "tool" and isinstance(content, str) and len(content) > max_chars:
            extra = len(content) - max_chars
            m["content"] = content[:max_chars] + f"[... {extra} chars of tool output truncated]"
            n_cut, chars = n_cut + 1, chars + extra
    return n_cut, chars


def unroll(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One sample per assistant turn: the history up to and including that turn, the loss on that turn only."""
    msgs = item["messages"]
    turns = [j for j, m in enumerate(msgs) if m.get("role") == "assistant"]
    prompt_text = next((str(m.get("content")) for m in msgs if m.get("role") == "user"), "")
    origin = {"prompt_sha1": hashlib.sha1(prompt_text.encode()).hexdigest()[:12],
              "rollout_index": item.get("rollout_index"), "task_id": item.get("task_id")}
    out = []
    for t, j in enumerate(turns):
        sample = copy.deepcopy(dict(item))
        sample["messages"] = copy.deepcopy(msgs[: j + 1])
        sample["loss_mask"] = [1 if i == j else 0 for i in range(j + 1)]
        sample["unroll"] = {"turn": t + 1, "turns": len(turns)}
        sample["lineage"] = {**(item.get("lineage") or {}), "unrolled_from": origin}
        out.append(sample)
    return out


def drop_think(messages: list[dict[str, Any]]) -> None:
    """Remove ``<think>...</think>`` blocks from assistant content (in place)."""
    for m in messages:
        if m.get("role") == "assistant" and isinstance(m.get("content"), str):
            m["content"] = _THINK.sub("", m["content"])


def fireworks_row(item: Mapping[str, Any]) -> dict[str, Any]:
    """``{"messages", "tools"}`` with the loss mask as ``weight`` on assistant messages (arguments stay JSON
    strings)."""
    msgs = []
    for m, w in zip(item["messages"], item["loss_mask"]):
        out = {k: m[k] for k in _FIREWORKS_KEYS if m.get(k) is not None}
        out.setdefault("content", "")
        if m.get("role") == "assistant":
            out["weight"] = int(w)
        msgs.append(out)
    return {"messages": msgs, "tools": list(item.get("tools") or [])}


def reshape(items: list[dict[str, Any]], fmt: str) -> list[dict[str, Any]]:
    """The canonical rows in ``fmt``."""
    if fmt == "openai":
        return items
    if fmt == "fireworks":
        return [fireworks_row(i) for i in items]
    rows = [{"messages": i["messages"], "loss_mask": i["loss_mask"], "tools": i.get("tools") or []} for i in items]
    return to_sft(rows, mask="row")


def check_export_options(fmt: Any, unroll_: Any, max_tool_output_chars: Any) -> None:
    choice("format", fmt, EXPORT_FORMATS)
    if not isinstance(unroll_, bool):
        raise InvalidArgumentType(f"unroll= must be True or False; got {unroll_!r}")
    if max_tool_output_chars is not None:
        integer("max_tool_output_chars", max_tool_output_chars, minimum=1)


# --------------------------------------------------------------------------------------------------
# TRL SFT rows (``trl_formats`` re-exports these; they are here so ``export`` reaches only the ground floor)
# --------------------------------------------------------------------------------------------------
SFT_MASKS = ("row", "assistant", "final")


def _tool_schemas(tools: Any) -> list[dict[str, Any]]:
    if not tools:
        return []
    if isinstance(tools, str):
        try:
            tools = json.loads(tools)
        except json.JSONDecodeError:
            raise InvalidArgument("tools= is a string but not JSON; pass a list of tool schemas or @wai.tool functions")
    from whileai_core.tools import schemas

    return schemas(tools)

def _row_messages(row: Mapping[str, Any], index: int) -> list[dict[str, Any]]:
    """The row's messages (tool steps included, built by ``messages.row_messages`` when the row has none)."""
    if not row.get("messages") and (row.get("prompt") is None or row.get("final_text") is None):
        raise InvalidArgument(f"rows[{index}] has no 'messages' (and no prompt + final_text to build them from)")
    return row_messages(row)


def _row_mask(row: Mapping[str, Any], raw: Sequence[Mapping[str, Any]], mask: str, index: int) -> list[int]:
    """One 0/1 per message of ``raw`` (the row's own messages, before a system prompt is added)."""
    roles = [m.get("role") for m in raw]
    if mask in MASK_MODES or row.get("loss_mask") is None:
        return loss_mask(raw, mask if mask in MASK_MODES else "assistant")
    given = list(row["loss_mask"])
    if len(given) != len(raw):
        raise InvalidArgument(
            f"rows[{index}]: loss_mask has {len(given)} entries but messages has {len(raw)}; "
            "they must match one to one (docs/rows.md)"
        )
    bad = [i for i, (g, r) in enumerate(zip(given, roles)) if g and r != "assistant"]
    if bad:
        raise InvalidArgument(
            f"rows[{index}]: loss_mask is 1 on non-assistant message(s) {bad}; only assistant messages can be trained"
        )
    return [int(bool(g)) for g in given]


# ----------------------------------------------------------------------------------------------------------
# SFT
# ----------------------------------------------------------------------------------------------------------
def to_sft(
    rows: Any,
    *,
    tools: Any = None,
    system_prompt: str | None = None,
    mask: str = "row",
    arguments: str = "dict",
) -> list[dict[str, Any]]:
    """SFT examples for TRL's ``SFTTrainer`` (train with ``assistant_only_loss=True``).

    ``mask="row"`` follows each row's ``loss_mask`` (all assistant messages when absent); ``"assistant"``
    trains every assistant message, ``"final"`` only the last. When every example trains all its assistant
    messages the output is conversational ``{"messages", "tools"}``; otherwise it is ``{"prompt",
    "completion", "tools"}``, split before the first trained message, and a row whose mask skips an
    assistant message after a trained one is unrolled into one example per trained turn.
    ``tools`` (a row's own ``tools`` win) is stored as a JSON string so Arrow never unifies schemas.
    """
    choice("mask", mask, SFT_MASKS)
    data = as_rows(rows)
    if not data:
        raise InvalidArgument("rows= is empty; pass at least one graded row with messages")
    default_tools = _tool_schemas(tools)
    plans: list[tuple[list[dict[str, Any]], list[int], str]] = []
    for i, row in enumerate(data):
        raw = _row_messages(row, i)
        keep = _row_mask(row, raw, mask, i)
        if not any(keep):
            raise InvalidArgument(f"rows[{i}] has no trained assistant message; drop it or fix its loss_mask")
        messages = normalize_messages(raw, arguments=arguments,
                                      system_prompt=row.get("system_prompt") or system_prompt)
        if len(messages) == len(raw) + 1:
            keep = [0, *keep]
        row_tools = _tool_schemas(row.get("tools")) or default_tools
        plans.append((messages, keep, json.dumps(row_tools, ensure_ascii=False) if row_tools else ""))

    def full_assistant(messages: list[dict[str, Any]], keep: list[int]) -> bool:
        return all(k == (m["role"] == "assistant") for m, k in zip(messages, keep))

    examples: list[dict[str, Any]] = []
    if all(full_assistant(m, k) for m, k, _ in plans):
        for messages, _, tools_json in plans:
            examples.append({"messages": messages, "tools": tools_json or None})
        return _drop_empty_tools(examples)
    for messages, keep, tools_json in plans:
        trained = [j for j, k in enumerate(keep) if k]
        first = trained[0]
        later_assistant = [j for j in range(first, len(messages)) if messages[j]["role"] == "assistant"]
        if all(keep[j] for j in later_assistant):
            examples.append({"prompt": messages[:first], "completion": messages[first:], "tools": tools_json or None})
        else:  # unroll: one example per trained turn, history as prompt, that turn alone as completion
            for j in trained:
                examples.append({"prompt": messages[:j], "completion": [messages[j]], "tools": tools_json or None})
    return _drop_empty_tools(examples)


def _drop_empty_tools(examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop the ``tools`` column when no example has tools (a column of nulls confuses templates)."""
    if all(ex.get("tools") is None for ex in examples):
        for ex in examples:
            ex.pop("tools", None)
    else:
        for ex in examples:
            if ex.get("tools") is None:
                ex["tools"] = "[]"
    return examples
