"""TRL dataset shapes: SFT conversations, DPO preference triples, GRPO prompts with a judge as reward.

Everything here is plain Python over row dicts (docs/rows.md); nothing imports torch, transformers or trl.
The ``*_dataset`` helpers import ``datasets`` lazily. Each ``to_*`` function returns JSON-serialisable
dicts that ``datasets.load_dataset("json", ...)`` reads back and TRL's trainers take unchanged:

* SFT: ``{"messages": [...], "tools": "<json>"}`` trained with ``assistant_only_loss=True``, which needs the
  chat template's ``{% generation %}`` markers. When a row's ``loss_mask`` leaves some assistant message
  untrained, the rows become ``{"prompt": [...], "completion": [...]}`` so the mask survives
  (the prompt is every message before the first trained one; tool output is never trained).
* DPO: ``{"prompt": [messages before the first assistant turn], "chosen": [...], "rejected": [...]}``.
* GRPO: ``{"prompt": [system, user], "task_id": ...}`` plus ``grpo_reward(judge, rows)``, a TRL reward
  function that rebuilds a row from each completion and grades it with the judge.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from whileai_core.arguments import choice
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.export.formats import SFT_MASKS, _row_messages, _tool_schemas, to_sft  # noqa: F401  (the SFT shapes)
from whileai_core.messages import normalize_messages
from whileai_core.rows import Row, as_rows, group_rows

# keys of a rollout that a GRPO reward row must not inherit from the task's first rollout
_ROLLOUT_KEYS = (
    "steps", "final_text", "messages", "loss_mask", "reward", "reason", "markers", "judge_name", "judge_status",
    "judge_meta", "seeded", "seeded_what", "status", "error", "finish_reason", "agent_extra", "row_id",
    "rollout_index", "failure_class",
)


# ----------------------------------------------------------------------------------------------------------
# messages
# ----------------------------------------------------------------------------------------------------------
# ----------------------------------------------------------------------------------------------------------
# DPO
# ----------------------------------------------------------------------------------------------------------
def _side_messages(value: Any, prompt: Any, system_prompt: str | None, what: str) -> list[dict[str, Any]]:
    """A pair side as a full message list: a row dict, a message list, or a plain completion string."""
    if isinstance(value, str):
        head = _prompt_messages(prompt, system_prompt, what)
        return head + [{"role": "assistant", "content": value}]
    if isinstance(value, Mapping):
        if "messages" in value or "final_text" in value:
            msgs = _row_messages(value, 0)
            return normalize_messages(msgs, system_prompt=value.get("system_prompt") or system_prompt)
        if value.get("role") == "assistant":
            return _prompt_messages(prompt, system_prompt, what) + [normalize_messages([value])[0]]
    if isinstance(value, Sequence) and value and all(isinstance(m, Mapping) for m in value):
        msgs = normalize_messages(value, system_prompt=system_prompt)
        if msgs and all(m["role"] == "assistant" for m in msgs):
            msgs = _prompt_messages(prompt, system_prompt, what) + msgs
        return msgs
    raise InvalidArgument(f"{what} must be a row dict, a list of messages or a completion string; got {type(value).__name__}")


def _prompt_messages(prompt: Any, system_prompt: str | None, what: str) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        msgs = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, Sequence) and all(isinstance(m, Mapping) for m in prompt):
        msgs = [dict(m) for m in prompt]
    else:
        raise InvalidArgument(f"{what}: the pair needs a 'prompt' (a string or a list of messages) for a bare completion")
    return normalize_messages(msgs, system_prompt=system_prompt)


def unwrap_pairs(pairs: Any) -> list[Any]:
    """The pair list from ``build_preference_pairs`` output: ``(pairs, report)``, an object with ``.pairs``,
    or a plain list."""
    if isinstance(pairs, tuple) and len(pairs) == 2 and isinstance(pairs[0], (list, tuple)) \
            and not isinstance(pairs[1], (list, tuple)):
        pairs = pairs[0]
    inner = getattr(pairs, "pairs", None)
    if inner is not None and not callable(inner) and not isinstance(pairs, (list, tuple)):
        pairs = inner
    if isinstance(pairs, (Mapping, str)):
        raise InvalidArgumentType("pairs= takes a list of preference pairs (or build_preference_pairs output); got a "
                        f"{type(pairs).__name__}")
    return list(pairs)


def to_dpo(
    pairs: Any, *, system_prompt: str | None = None, tools: Any = None, arguments: str = "dict"
) -> list[dict[str, Any]]:
    """DPO triples ``{"prompt", "chosen", "rejected"}`` (conversational) for TRL's ``DPOTrainer``.

    ``pairs`` is what ``build_preference_pairs`` returns (the pair list, or its ``(pairs, report)`` tuple),
    or plain dicts whose ``chosen``/``rejected`` are strings, message lists or rows. The prompt is the
    messages before the first assistant turn; both sides must share it.
    """
    items = unwrap_pairs(pairs)
    if not items:
        raise InvalidArgument("pairs= is empty; build pairs with build_preference_pairs(rows) from graded rows with contrast")
    tools_json = json.dumps(_tool_schemas(tools)) if tools else None
    out: list[dict[str, Any]] = []
    for i, pair in enumerate(items):
        if not isinstance(pair, Mapping) or "chosen" not in pair or "rejected" not in pair:
            raise InvalidArgument(f"pairs[{i}] must be a dict with 'chosen' and 'rejected'; got {type(pair).__name__}")
        sides = []
        for side in ("chosen", "rejected"):
            msgs = _side_messages(pair[side], pair.get("prompt"), system_prompt, f"pairs[{i}].{side}")
            cut = next((j for j, m in enumerate(msgs) if m["role"] == "assistant"), None)
            if cut is None:
                raise InvalidArgument(f"pairs[{i}].{side} has no assistant turn; a preference needs a completion")
            sides.append((msgs[:cut], msgs[cut:]))
        (p_chosen, chosen), (p_rejected, rejected) = sides
        if p_chosen != p_rejected:
            raise InvalidArgument(f"pairs[{i}]: chosen and rejected have different prompts; a DPO pair must share its prompt")
        if chosen == rejected:
            raise InvalidArgument(f"pairs[{i}]: chosen and rejected are identical; drop ties before training")
        ex: dict[str, Any] = {"prompt": p_chosen, "chosen": _set_arguments(chosen, arguments),
                              "rejected": _set_arguments(rejected, arguments)}
        if tools_json:
            ex["tools"] = tools_json
        out.append(ex)
    return out


def _set_arguments(messages: list[dict[str, Any]], arguments: str) -> list[dict[str, Any]]:
    return normalize_messages(messages, arguments=arguments)


# ----------------------------------------------------------------------------------------------------------
# GRPO
# ----------------------------------------------------------------------------------------------------------
def prompt_of(row: Mapping[str, Any], *, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """The messages a policy sees before it acts: the row's messages up to its first assistant turn."""
    if row.get("messages"):
        head: list[dict[str, Any]] = []
        for m in row["messages"]:
            if m.get("role") == "assistant":
                break
            head.append(m)
        if any(m.get("role") == "user" for m in head):
            return normalize_messages(head, system_prompt=row.get("system_prompt") or system_prompt)
    if row.get("prompt") in (None, ""):
        raise InvalidArgument("row has neither messages with a user turn nor a 'prompt'; it cannot be posed to a model")
    prompt = row["prompt"]
    if isinstance(prompt, list):
        return normalize_messages(prompt, system_prompt=row.get("system_prompt") or system_prompt)
    return normalize_messages([{"role": "user", "content": str(prompt)}],
                              system_prompt=row.get("system_prompt") or system_prompt)


def to_grpo(rows: Any, *, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """One GRPO prompt per task: ``{"prompt": [system, user], "task_id": key}`` (privileged fields never enter)."""
    data = as_rows(rows)
    if not data:
        raise InvalidArgument("rows= is empty; GRPO needs at least one task with a prompt")
    out = []
    for key, members in group_rows(data).items():
        out.append({"prompt": prompt_of(members[0], system_prompt=system_prompt), "task_id": key})
    return out


def verdict_reward(verdict: Any) -> float | None:
    """The reward in a judge verdict, read by the judge contract (``grade.normalize_verdict``); a verdict
    that breaks the contract gives ``None`` (never an invented 0)."""
    from whileai_core.grade.run import normalize_verdict

    try:
        value = normalize_verdict(verdict)[0]
    except ValueError:
        return None
    return None if value is None else float(value)


def completion_row(base: Mapping[str, Any], prompt: Any, completion: Any) -> Row:
    """A rollout row built from a task's first row and one generated completion (string or messages)."""
    row = {k: copy.deepcopy(v) for k, v in base.items() if k not in _ROLLOUT_KEYS}
    completion_msgs: list[dict[str, Any]]
    if isinstance(completion, str):
        completion_msgs = [{"role": "assistant", "content": completion}]
    else:
        completion_msgs = [dict(m) for m in completion]
    prompt_msgs = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [dict(m) for m in prompt or []]
    steps: list[dict[str, Any]] = []
    results = {m.get("tool_call_id"): m.get("content") for m in completion_msgs if m.get("role") == "tool"}
    tool_messages = [m for m in completion_msgs if m.get("role") == "tool"]
    assistants = [m for m in completion_msgs if m.get("role") == "assistant"]
    order = 0
    for turn, m in enumerate(assistants):
        for call in m.get("tool_calls") or []:
            fn = call.get("function", call)
            args = fn.get("arguments", {})
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    pass
            result = results.get(call.get("id"))
            if result is None and order < len(tool_messages):
                result = tool_messages[order].get("content")
            steps.append({"tool": fn.get("name"), "arguments": args, "result": result, "turn": turn})
            order += 1
    for m in assistants[:-1]:
        if m.get("content") and not m.get("tool_calls"):
            steps.append({"text": m["content"]})
    row["steps"] = steps
    row["final_text"] = str(assistants[-1].get("content") or "") if assistants else ""
    row["messages"] = prompt_msgs + completion_msgs
    return row


def grpo_reward(
    judge: Callable[[Row], Any], rows: Any, *, name: str | None = None
) -> Callable[..., list[float | None]]:
    """A TRL GRPO reward function that grades each completion with a whileai judge.

    The judge sees a row rebuilt from the task's first row (privileged fields included, as in grading) with the
    completion as ``final_text``/``steps``/``messages``. A judge error or an unusable verdict gives ``None``,
    which TRL skips rather than reading as 0.
    """
    if not callable(judge):
        raise InvalidArgumentType(f"judge= must be callable (row -> verdict); got {type(judge).__name__}")
    by_task = {key: members[0] for key, members in group_rows(as_rows(rows)).items()}

    def reward(prompts: Sequence[Any], completions: Sequence[Any], task_id: Sequence[str] | None = None,
               **_: Any) -> list[float | None]:
        if task_id is None:
            raise InvalidArgument("the GRPO dataset has no 'task_id' column; build it with to_grpo(rows)")
        scores: list[float | None] = []
        for prompt, completion, key in zip(prompts, completions, task_id):
            base = by_task.get(str(key))
            if base is None:
                raise KeyError(f"task_id {key!r} is not among the rows given to grpo_reward(); pass the same rows")
            try:
                scores.append(verdict_reward(judge(completion_row(base, prompt, completion))))
            except Exception:  # noqa: BLE001 - a judge failure is "no reward" (None), which TRL skips
                scores.append(None)
        return scores

    reward.__name__ = name or getattr(judge, "__name__", None) or getattr(judge, "name", None) or "judge"
    if reward.__name__ == "<lambda>":
        reward.__name__ = "lambda_judge"
    return reward


# ----------------------------------------------------------------------------------------------------------
# datasets
# ----------------------------------------------------------------------------------------------------------
def as_dataset(examples: Iterable[Mapping[str, Any]]) -> Any:
    """A ``datasets.Dataset`` from examples; mixed tool-argument shapes are kept as JSON, never null-filled."""
    from datasets import Dataset

    return Dataset.from_list(list(examples), on_mixed_types="use_json")


def export_trl(source: Any, path: str | Any, method: str = "sft", *, overwrite: bool = False,
               **kwargs: Any) -> dict[str, Any]:
    """Write the TRL shape for ``method`` ("sft": ``to_sft``, "dpo": ``to_dpo``, "grpo": ``to_grpo``) as JSONL
    for ``datasets.load_dataset("json", data_files=path)``; returns ``{"path", "n", "method", "columns"}``.

    For "dpo", ``source`` is pairs (or ``build_preference_pairs`` output), or graded rows it pairs itself.
    ``kwargs`` go to the ``to_*`` function.

    Args:
        source: rows, pairs, or a JSONL path written by ``wai.export``.
        path: the JSONL file to write.
        method: ``"sft"``, ``"dpo"`` or ``"grpo"``.
        overwrite: replace an existing file.
        **kwargs: passed to the ``to_sft`` / ``to_dpo`` / ``to_grpo`` function.

    Returns:
        ``{"path", "n", "method", "columns"}``.

    Raises:
        InvalidArgument: an unknown ``method`` (a ``ValueError``).
        FileExistsError: ``path`` exists and ``overwrite`` is False.

    Example:
        ```python
        wai.export_trl(scored.rows, "sft.jsonl", "sft")
        # datasets.load_dataset("json", data_files="sft.jsonl")
        ```
    """
    from whileai_core.defaults import TRAIN_METHODS
    from whileai_core.rows import write_jsonl

    choice("method", method, TRAIN_METHODS)
    if method == "sft":
        examples = to_sft(source, **kwargs)
    elif method == "grpo":
        examples = to_grpo(source, **kwargs)
    else:
        try:
            items = unwrap_pairs(source)
        except TypeError:
            items = []
        if not (items and all(isinstance(p, Mapping) and "chosen" in p and "rejected" in p for p in items)):
            from whileai_core.select.preferences import build_preference_pairs

            items = unwrap_pairs(build_preference_pairs(source))
        examples = to_dpo(items, **kwargs)
    written = write_jsonl(path, examples, overwrite=overwrite)
    columns = sorted({k for ex in examples for k in ex})
    return {"path": str(written), "n": len(examples), "method": method, "columns": columns}
