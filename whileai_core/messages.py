"""A row as chat messages: its tool calls, its reply, its messages with a loss mask, its tools as JSON schemas.

The one place the engine turns a row (docs/rows.md) into what a chat model sees and back; simulate, grade,
guard, select and train all read rows through it.

Parallel calls: tool steps that share a ``turn`` (consecutive, equal, not None) were asked for in one
assistant message; they become ONE assistant message with several ``tool_calls``, followed by one ``tool``
message per call (OpenAI's shape), so exports teach parallel calls as parallel. A step ``{"tool_calls":
[{"tool", "arguments", "result"}, ...]}`` (the grouped form an agent may return) is read the same way.
Tool names reach messages model-facing (``tools.model_name``: ``math.factorial`` -> ``math_factorial``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from whileai_core.arguments import choice
from whileai_core.defaults import WIRE_NAME_MEMO
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.rows import json_encoder, rollout_row
from whileai_core.tools import model_name

Row = Mapping[str, Any]
#: ``json.dumps(x)`` (its defaults: ASCII, no sorting), its C encoder built once: two calls a tool step, per row
_dumps = json_encoder()
ARGUMENT_FORMS = ("dict", "string")  # tool-call arguments as dicts (what stock chat templates render) or JSON strings


def wire_name(name: Any, memo: int = WIRE_NAME_MEMO) -> Any:
    """The model-facing name of a tool a step or message names (``model_name``); a name no API takes is
    returned as it is (the export's round-trip check names it), so reading a row never raises. A ``str``'s
    answer is remembered (up to ``memo`` names, then the memo starts again): every tool step of every row asks."""
    if type(name) is str:
        found = _wire_names.get(name)
        if found is not None:
            return found
    try:
        wired = model_name(name) if isinstance(name, str) and name else name
    except InvalidArgument:
        wired = name
    if type(name) is str and memo > 0:
        if len(_wire_names) >= memo:
            _wire_names.clear()
        _wire_names[name] = wired
    return wired


_wire_names: dict[str, Any] = {}


def flat_steps(steps: Sequence[Any]) -> list[dict[str, Any]]:
    """Steps in the row's flat shape: a grouped step ``{"tool_calls": [{"tool", "arguments", "result"}, ...],
    "text"?}`` becomes one tool step per call, all carrying the same ``turn`` (its ``text`` goes on the first);
    other steps are kept as they are (copies). Raises ``InvalidArgumentType`` on a malformed grouped step."""
    out: list[dict[str, Any]] = []
    for i, step in enumerate(steps):
        if type(step) is dict and "tool_calls" not in step:  # the common step, without the Mapping checks
            out.append(dict(step))
            continue
        if not (isinstance(step, Mapping) and "tool_calls" in step and "tool" not in step):
            out.append(dict(step) if isinstance(step, Mapping) else step)
            continue
        calls = step["tool_calls"]
        if not isinstance(calls, (list, tuple)) or not calls or \
                not all(isinstance(c, Mapping) and isinstance(c.get("tool"), str) for c in calls):
            raise InvalidArgumentType(f"steps[{i}]['tool_calls'] must be a non-empty list of {{'tool', 'arguments', "
                                      f"'result'}} dicts (one assistant turn's parallel calls); got {calls!r:.120}")
        previous = out[-1].get("turn") if out and isinstance(out[-1], Mapping) and "tool" in out[-1] else None
        turn = step.get("turn", i)
        if turn == previous:  # never merge with the turn before
            turn = (previous if isinstance(previous, int) else i) + 1
        for j, call in enumerate(calls):
            flat = {k: v for k, v in call.items() if k != "turn"}
            if j == 0 and step.get("text") and not flat.get("text"):
                flat["text"] = step["text"]
            flat["turn"] = turn
            out.append(flat)
    return out


def tool_turns(steps: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]] | Mapping[str, Any]]:
    """The steps as assistant turns: a list of tool steps for each tool turn (consecutive tool steps sharing
    a non-None ``turn`` are one turn; a step without ``turn`` is a turn of its own), other steps as they are."""
    out: list[list[Mapping[str, Any]] | Mapping[str, Any]] = []
    for step in flat_steps(steps):
        if not isinstance(step, Mapping):
            continue
        if "tool" not in step:
            out.append(step)
            continue
        last = out[-1] if out else None
        if isinstance(last, list) and step.get("turn") is not None and last[-1].get("turn") == step.get("turn"):
            last.append(step)
        else:
            out.append([step])
    return out


def _read_turns(steps: Sequence[Any]) -> list[list[Mapping[str, Any]] | Mapping[str, Any]]:
    """``tool_turns(steps)`` for a caller that only reads them (``chat_messages``): flat plain dicts (every row
    the engine builds) are grouped as they are, without ``flat_steps``'s copy of each; any other step (a grouped
    one, a mapping of another type) takes ``tool_turns``."""
    for step in steps:
        if type(step) is not dict or "tool_calls" in step:
            return tool_turns(steps)
    out: list[list[Mapping[str, Any]] | Mapping[str, Any]] = []
    for step in steps:
        if "tool" not in step:
            out.append(step)
            continue
        last = out[-1] if out else None
        turn = step.get("turn")
        if isinstance(last, list) and turn is not None and last[-1].get("turn") == turn:
            last.append(step)
        else:
            out.append([step])
    return out


def tool_calls(row: Row) -> list[dict[str, Any]]:
    """The tool calls of a rollout as ``[{"tool", "arguments", "result"}]`` (plus ``turn`` where known).

    Reads ``steps`` (the row schema; grouped steps flattened), else assistant ``tool_calls`` in ``messages``
    (OpenAI wire shape, arguments a JSON string; calls of one assistant message share a ``turn``), so rows
    from logs work too.
    """
    steps = row.get("steps")
    if isinstance(steps, list) and steps:
        return [s for s in flat_steps(steps) if isinstance(s, Mapping) and s.get("tool")]
    out: list[dict[str, Any]] = []
    messages = row.get("messages")
    if not isinstance(messages, list):
        return out
    results: dict[str, Any] = {}
    for m in messages:
        if isinstance(m, Mapping) and m.get("role") == "tool" and m.get("tool_call_id"):
            results[str(m["tool_call_id"])] = m.get("content")
    turn = -1
    for m in messages:
        if not (isinstance(m, Mapping) and m.get("role") == "assistant"):
            continue
        turn += 1
        for call in m.get("tool_calls") or ():
            fn = call.get("function", call) if isinstance(call, Mapping) else {}
            name = fn.get("name")
            if not name:
                continue
            args: Any = fn.get("arguments", {})
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    pass
            out.append({"tool": name, "arguments": args, "result": results.get(str(call.get("id"))), "turn": turn})
    return out


def reply_text(row: Row) -> str:
    """The reply of a row: ``final_text``, else the last assistant message with text content, else ``""``."""
    text = row.get("final_text")
    if isinstance(text, str):
        return text
    messages = row.get("messages")
    if isinstance(messages, list):
        for m in reversed(messages):
            if isinstance(m, Mapping) and m.get("role") == "assistant" and isinstance(content := m.get("content"), str):
                return content
    return ""


def content_text(content: Any) -> str:
    """A message's text: a string as is, OpenAI content parts (``[{"type": "text", "text"}]``) joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [str(p.get("text", p.get("content", ""))) for p in content
                 if isinstance(p, Mapping) and p.get("type") in ("text", "input_text", "output_text")]
        return "\n".join(t for t in texts if t)
    return json.dumps(content, ensure_ascii=False, default=str)


def parse_arguments(arguments: Any) -> Any:
    """Tool-call arguments as sent, decoded: a JSON string becomes its value, ``""`` and None become ``{}``, and
    broken JSON stays the string the model sent (it will match no expected argument dict)."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return arguments
    return arguments if arguments is not None else {}


def steps_from_messages(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The inverse of ``chat_messages``: OpenAI-form messages as ``{"system_prompt", "prompt", "steps",
    "final_text"}`` (docs/rows.md). The first user message is the prompt; later user messages are ``{"user"}``
    steps; each assistant tool call is a ``{"tool", "arguments", "result"}`` step (its result from the tool
    message with its ``tool_call_id``, else the next unanswered tool message; the calls of one message share a
    ``turn``); the last assistant message
    without tool calls is the final text and earlier ones are ``{"text"}`` asides. ``prompt`` is None when
    there is no user message."""
    systems = [content_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")]
    results: dict[str, Any] = {}
    loose: list[Any] = []  # tool messages without a call id, answered in order
    for m in messages:
        if m.get("role") == "tool":
            if m.get("tool_call_id"):
                results[str(m["tool_call_id"])] = m.get("content")
            else:
                loose.append(m.get("content"))
    last_reply = max((i for i, m in enumerate(messages) if m.get("role") == "assistant" and not m.get("tool_calls")),
                     default=None)
    if last_reply is not None and any(m.get("role") == "assistant" for m in messages[last_reply + 1:]):
        last_reply = None  # the conversation ends on a tool call: no final reply
    prompt: str | None = None
    steps: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "user":
            if prompt is None:
                prompt = content_text(m.get("content"))
            else:
                steps.append({"user": content_text(m.get("content"))})
        elif role == "assistant" and m.get("tool_calls"):
            text = content_text(m.get("content"))
            for n, call in enumerate(m["tool_calls"]):
                fn = call.get("function", call) if isinstance(call, Mapping) else {}
                cid = str(call.get("id")) if isinstance(call, Mapping) and call.get("id") else None
                result = results[cid] if cid in results else (loose.pop(0) if loose else None)
                step = {"tool": fn.get("name"), "arguments": parse_arguments(fn.get("arguments")),
                        "result": parse_arguments(result)}
                if text and n == 0:
                    step["text"] = text
                if len(m["tool_calls"]) > 1:
                    step["turn"] = i  # one assistant message's parallel calls stay one turn (docs/rows.md)
                steps.append(step)
        elif role == "assistant" and i != last_reply:
            steps.append({"text": content_text(m.get("content"))})
    final = content_text(messages[last_reply].get("content")) if last_reply is not None else ""
    return {"system_prompt": "\n".join(systems) or None, "prompt": prompt, "steps": steps, "final_text": final}


def row_from_messages(messages: Sequence[Mapping[str, Any]], *, task_id: str | None = None,
                      rollout_index: int = 0, **fields: Any) -> dict[str, Any]:
    """A row (docs/rows.md) from a real conversation: the messages kept as they are, prompt, system prompt,
    steps and final text read from them (``steps_from_messages``), ``fields`` added last."""
    parts = steps_from_messages(messages)
    if parts["prompt"] is None:
        raise InvalidArgument("the messages hold no user message; a row needs the user's words")
    row = rollout_row(parts["prompt"], parts["final_text"], messages=[dict(m) for m in messages],
                      steps=parts["steps"], task_id=task_id, rollout_index=rollout_index)
    if parts["system_prompt"] is not None:
        row["system_prompt"] = parts["system_prompt"]
    row.update(fields)
    return row


def chat_messages(system_prompt: str | None, prompt: str, steps: Sequence[Mapping[str, Any]],
                  final_text: str) -> list[dict[str, Any]]:
    """A rollout as OpenAI-form chat messages: system, user, then per tool turn one assistant message with
    its ``tool_calls`` (several for parallel calls) and one ``tool`` message per call, user and assistant text
    steps in order, and the final assistant reply. Call ids are ``call_0000``, ``call_0001``, ... per row."""
    msgs: list[dict[str, Any]] = []
    if system_prompt:
        msgs.append({"role": "system", "content": system_prompt})
    msgs.append({"role": "user", "content": prompt})
    n_call = 0
    for turn in _read_turns(steps):
        if isinstance(turn, list):
            text = next((str(s["text"]) for s in turn if s.get("text")), None)
            calls, answers = [], []
            for step in turn:
                call_id = f"call_{n_call:04d}"
                n_call += 1
                calls.append({"id": call_id, "type": "function",
                              "function": {"name": wire_name(str(step["tool"])),
                                           "arguments": _dumps(step.get("arguments") or {})}})
                result = step.get("result")
                answers.append({"role": "tool", "tool_call_id": call_id,
                                "content": result if isinstance(result, str) else _dumps(result)})
            msgs.append({"role": "assistant", "content": text, "tool_calls": calls})
            msgs.extend(answers)
        elif "user" in turn:
            msgs.append({"role": "user", "content": str(turn["user"])})
        elif "text" in turn:
            msgs.append({"role": "assistant", "content": str(turn["text"])})
    msgs.append({"role": "assistant", "content": final_text})
    return msgs


def _wire_call(call: Any) -> Any:
    """A copy of one OpenAI tool call with its name model-facing (anything else is returned as it is)."""
    if not (isinstance(call, Mapping) and isinstance(call.get("function"), Mapping)):
        return call
    name = call["function"].get("name")
    return {**call, "function": {**call["function"], "name": wire_name(name)}}


def row_messages(row: Row, *, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """The row's chat messages (copies): its own ``messages``, else built from ``prompt``, ``steps`` and
    ``final_text`` with ``chat_messages`` (tool steps included); ``system_prompt`` goes first when the row's
    messages have no system message."""
    msgs = [dict(m) for m in row.get("messages") or []]
    for m in msgs:  # tool names as the model sees them (math.factorial -> math_factorial)
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            m["tool_calls"] = [_wire_call(c) for c in m["tool_calls"]]
    if not msgs:
        msgs = chat_messages(row.get("system_prompt") or system_prompt, str(row.get("prompt", "")),
                             row.get("steps") or [], str(row.get("final_text") or ""))
    if system_prompt and msgs[0].get("role") != "system":
        msgs.insert(0, {"role": "system", "content": system_prompt})
    return msgs


MASK_MODES = ("assistant", "final")


def loss_mask(messages: Sequence[Mapping[str, Any]], mode: str = "assistant") -> list[int]:
    """The loss mask, one 0/1 per message: 1 on every assistant message (``"assistant"``, what a trainer
    learns) or only on the last one (``"final"``); 0 on system, user and tool messages."""
    if mode not in MASK_MODES:
        raise InvalidArgument(f"mask_mode= must be one of {MASK_MODES}; got {mode!r}")
    mask = [1 if m.get("role") == "assistant" else 0 for m in messages]
    if mode == "final" and any(mask):
        last = max(i for i, v in enumerate(mask) if v)
        mask = [1 if i == last else 0 for i in range(len(mask))]
    return mask


def normalize_messages(
    messages: Sequence[Mapping[str, Any]], *, arguments: str = "dict", system_prompt: str | None = None
) -> list[dict[str, Any]]:
    """OpenAI-form messages made ready for a chat template.

    Tool-call ``arguments`` become dicts (``arguments="dict"``, what stock templates render with ``tojson``) or
    JSON strings (``"string"``); tool messages get the ``name`` of the call they answer; non-string tool output
    is JSON-encoded; ``system_prompt`` is put first when the messages have no system message.
    """
    choice("arguments", arguments, ARGUMENT_FORMS)
    out: list[dict[str, Any]] = []
    call_names: dict[str, str] = {}
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message:
            raise InvalidArgument(f"messages[{i}] must be a dict with a 'role'; got {message!r:.80}")
        m = copy.deepcopy(dict(message))
        if m["role"] == "assistant" and m.get("tool_calls"):
            calls = []
            for call in m["tool_calls"]:
                call = dict(call)
                fn = dict(call.get("function", call))
                args = fn.get("arguments", {})
                if arguments == "dict" and isinstance(args, str):
                    try:
                        args = json.loads(args) if args.strip() else {}
                    except json.JSONDecodeError:
                        raise InvalidArgument(
                            f"messages[{i}]: tool call {fn.get('name')!r} has arguments that are not JSON "
                            f"({args[:60]!r}); fix the row or export with arguments='string'"
                        ) from None
                elif arguments == "string" and not isinstance(args, str):
                    args = json.dumps(args, ensure_ascii=False)
                fn["arguments"] = args
                name = wire_name(fn.get("name"))
                if call.get("id"):
                    call_names[str(call["id"])] = str(name or "")
                calls.append({"id": call.get("id"), "type": "function",
                              "function": {"name": name, "arguments": args}})
            m["tool_calls"] = calls
            if m.get("content") is None:
                m["content"] = ""
        elif m["role"] == "tool":
            if not isinstance(m.get("content"), str):
                m["content"] = json.dumps(m.get("content"), ensure_ascii=False, default=str)
            if "name" not in m and m.get("tool_call_id") in call_names:
                m["name"] = call_names[m["tool_call_id"]]
        elif m.get("content") is None:
            m["content"] = ""
        out.append(m)
    if system_prompt and not (out and out[0]["role"] == "system"):
        out.insert(0, {"role": "system", "content": system_prompt})
    return out
