"""``LocalModel``: a local transformers checkpoint as an agent (``agent(message) -> {"steps", "final_text"}``)
and as a text generator, so a trained model goes straight back into ``simulate`` and ``prove``.

torch and transformers are imported on first use, never at import time.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from whileai_core.arguments import integer
from whileai_core.defaults import (
    LOCAL_BATCH_SIZE,
    LOCAL_MAX_NEW_TOKENS,
    LOCAL_MAX_TOOL_TURNS,
    LOCAL_TEMPERATURE,
    LOCAL_TOP_P,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.redact import error_text

_TOOL_CALL_RE = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def parse_tool_calls(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Split generated text into visible content and OpenAI-form tool calls.

    Reads ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks (the Hermes / Qwen / ChatML
    convention). A block that is not JSON with a ``name`` stays in the visible text.
    """
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    pos = 0
    for match in _TOOL_CALL_RE.finditer(text):
        try:
            payload = json.loads(match.group(1))
        except json.JSONDecodeError:
            continue
        if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
            continue
        args = payload.get("arguments", payload.get("parameters", {}))
        kept.append(text[pos:match.start()])
        pos = match.end()
        calls.append({"id": f"call_{len(calls):04d}", "type": "function",
                      "function": {"name": payload["name"],
                                   "arguments": args if isinstance(args, str) else json.dumps(args)}})
    kept.append(text[pos:])
    return "".join(kept).strip(), calls


def reply_message(text: str) -> dict[str, Any]:
    """An assistant message from generated text: visible ``content`` plus parsed ``tool_calls``."""
    content, calls = parse_tool_calls(text)
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


class LocalModel:
    """A local causal-LM checkpoint (a directory, or a loaded model + tokenizer) as an agent.

    ``LocalModel(path)(message)`` answers one user message and returns the agent contract
    ``{"steps": [...], "final_text": str, "model": name}``. With ``tools=`` (``@wai.tool`` functions) the
    tool calls it writes are run and fed back, up to ``max_tool_turns`` rounds. ``generate(prompt)`` returns
    text; ``chat(messages)`` returns one assistant message; ``logprob(prompt, completion)`` scores a reply.
    ``temperature=0`` decodes greedily, so two models compared on a holdout differ only by their weights.

    Args:
        model: a checkpoint directory (``save_pretrained`` output) or a loaded transformers model.
        tokenizer: its tokenizer (needed with a loaded model).
        system_prompt: the system prompt of every conversation.
        tools: ``@wai.tool`` functions whose calls it runs and feeds back.
        max_new_tokens: the reply budget (``LOCAL_MAX_NEW_TOKENS`` 256). Default ``LOCAL_MAX_NEW_TOKENS`` (256) in
            defaults.py: reply budget for LocalModel generation.
        temperature: 0 decodes greedily (``LOCAL_TEMPERATURE``). Default ``LOCAL_TEMPERATURE`` (0.0) in
            defaults.py: greedy decoding, so before/after differ only by weights on a holdout.
        top_p: nucleus sampling (``LOCAL_TOP_P`` 1.0: off; Holtzman et al. 2020). Default ``LOCAL_TOP_P`` (1.0) in
            defaults.py: nucleus sampling off by default.
        max_tool_turns: tool-call rounds before the reply is final (``LOCAL_MAX_TOOL_TURNS`` 4). Default
            ``LOCAL_MAX_TOOL_TURNS`` (4) in defaults.py: tool-call rounds a LocalModel agent runs before its reply
            is final.
        device: the torch device (default: CUDA when visible).
        seed: the sampling seed.
        name: the model's name on rows.

    Example:
        ```python
        agent = wai.LocalModel("./checkpoint", tools=[get_order])
        print(agent("Where is order O1?")["final_text"])
        ```
    """

    def __init__(
        self,
        model: Any,
        *,
        tokenizer: Any = None,
        system_prompt: str | None = None,
        tools: Any = None,
        max_new_tokens: int = LOCAL_MAX_NEW_TOKENS,
        temperature: float = LOCAL_TEMPERATURE,
        top_p: float = LOCAL_TOP_P,
        max_tool_turns: int = LOCAL_MAX_TOOL_TURNS,
        device: str | None = None,
        seed: int = 0,
        name: str | None = None,
    ) -> None:
        max_new_tokens = integer("max_new_tokens", max_new_tokens, minimum=1)
        max_tool_turns = integer("max_tool_turns", max_tool_turns, minimum=0)
        if not 0.0 <= float(temperature):
            raise InvalidArgument(f"temperature= must be >= 0 (0 decodes greedily); got {temperature!r}")
        if not 0.0 < float(top_p) <= 1.0:
            raise InvalidArgument(f"top_p= must be in (0, 1]; got {top_p!r}")
        self._model: Any = None
        self._tokenizer: Any = tokenizer
        if isinstance(model, (str, os.PathLike)):
            path = Path(model)
            if not (path / "config.json").exists():
                raise FileNotFoundError(
                    f"LocalModel: {path} is not a saved checkpoint (no config.json); pass a directory written by "
                    "save_pretrained() or wai.train(), or a loaded model with tokenizer="
                )
            self.path: str | None = str(path)
        else:
            checkpoint = getattr(model, "checkpoint", None)  # a TrainResult
            if isinstance(checkpoint, (str, os.PathLike)) and not hasattr(model, "generate"):
                self.path = str(checkpoint)
            else:
                if not hasattr(model, "generate"):
                    raise InvalidArgumentType(f"model= must be a checkpoint path or a transformers model; got {type(model).__name__}")
                if tokenizer is None:
                    raise InvalidArgument("LocalModel(model_object) needs tokenizer=; only a path carries its own tokenizer")
                self._model = model
                self.path = getattr(getattr(model, "config", None), "_name_or_path", None) or None
        self.system_prompt = system_prompt
        from whileai_core.tools import as_tools

        self.tools = as_tools(tools)
        self.max_new_tokens = max_new_tokens
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.max_tool_turns = max_tool_turns
        self.device = device
        self.seed = seed
        self._calls = 0
        self._lock = threading.Lock()  # simulate() calls agents from worker threads; load once
        self.name = name or (f"local:{Path(self.path).name}" if self.path else "local:model")
        self.__name__ = self.name

    # ------------------------------------------------------------------------------------------ loading
    def load(self) -> LocalModel:
        """Load weights and tokenizer now (otherwise the first call does)."""
        with self._lock:
            return self._load()

    def _load(self) -> LocalModel:
        import torch

        if self._tokenizer is None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.path))
        if self._model is None:
            from transformers import AutoModelForCausalLM

            self._model = AutoModelForCausalLM.from_pretrained(str(self.path))
        if self.device is None:
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self._model.to(self.device)
        self._model.eval()
        if self._tokenizer.pad_token_id is None and self._tokenizer.eos_token_id is not None:
            self._tokenizer.pad_token = self._tokenizer.eos_token
        return self

    @property
    def model(self) -> Any:
        if self._model is None or self.device is None:
            self.load()
        return self._model

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            self.load()
        return self._tokenizer

    # ------------------------------------------------------------------------------------------ encoding
    def _messages(self, prompt: Any, system_prompt: str | None = None) -> list[dict[str, Any]]:
        if isinstance(prompt, str):
            messages = [{"role": "user", "content": prompt}]
        elif isinstance(prompt, Sequence) and all(isinstance(m, Mapping) for m in prompt):
            messages = [dict(m) for m in prompt]
        else:
            raise InvalidArgumentType(f"prompt must be a string or a list of chat messages; got {type(prompt).__name__}")
        system_prompt = self.system_prompt or system_prompt
        if system_prompt and not (messages and messages[0].get("role") == "system"):
            messages.insert(0, {"role": "system", "content": system_prompt})
        return messages

    def _encode(self, messages: list[dict[str, Any]], *, generation_prompt: bool, tools: Any = None) -> list[int]:
        tok = self.tokenizer
        if not getattr(tok, "chat_template", None):
            raise InvalidArgument(
                f"{self.name}: the tokenizer has no chat_template; save one with the checkpoint "
                "(tokenizer.chat_template = ...; tokenizer.save_pretrained(dir))"
            )
        from whileai_core.messages import normalize_messages

        schemas = [t.schema for t in (self.tools if tools is None else tools)] or None
        enc = tok.apply_chat_template(normalize_messages(messages), tools=schemas,
                                      add_generation_prompt=generation_prompt, tokenize=True, return_dict=True)
        return list(enc["input_ids"])

    # ------------------------------------------------------------------------------------------ generation
    def _generate_ids(self, ids: list[int], max_new_tokens: int, temperature: float) -> list[int]:
        import torch

        model = self.model
        tok = self.tokenizer
        input_ids = torch.tensor([ids], device=self.device)
        kwargs: dict[str, Any] = {"max_new_tokens": max_new_tokens, "pad_token_id": tok.pad_token_id}
        if temperature > 0:
            torch.manual_seed(self.seed + self._calls)
            kwargs.update(do_sample=True, temperature=temperature, top_p=self.top_p)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        self._calls += 1
        with torch.no_grad():
            out = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kwargs)
        return out[0, len(ids):].tolist()

    def generate(self, prompt: Any, *, max_new_tokens: int | None = None, temperature: float | None = None,
                 tools: Any = None) -> str:
        """The reply text to a prompt (a string is one user message; a list is a conversation)."""
        ids = self._encode(self._messages(prompt), generation_prompt=True, tools=tools)
        new = self._generate_ids(ids, max_new_tokens or self.max_new_tokens,
                                 self.temperature if temperature is None else float(temperature))
        return self.tokenizer.decode(new, skip_special_tokens=True)

    def generate_many(self, prompts: Sequence[Any], *, batch_size: int = LOCAL_BATCH_SIZE,
                      max_new_tokens: int | None = None, temperature: float | None = None) -> list[str]:
        """Replies to many prompts, decoded ``batch_size`` at a time (left-padded); same order as ``prompts``."""
        import torch

        batch_size = integer("batch_size", batch_size, minimum=1)
        temp = self.temperature if temperature is None else float(temperature)
        budget = max_new_tokens or self.max_new_tokens
        model, tok = self.model, self.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        encoded = [self._encode(self._messages(p), generation_prompt=True) for p in prompts]
        out: list[str] = []
        for start in range(0, len(encoded), batch_size):
            chunk = encoded[start:start + batch_size]
            width = max(len(ids) for ids in chunk)
            input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in chunk], device=self.device)
            mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in chunk], device=self.device)
            kwargs: dict[str, Any] = {"max_new_tokens": budget, "pad_token_id": pad}
            if temp > 0:
                torch.manual_seed(self.seed + self._calls)
                kwargs.update(do_sample=True, temperature=temp, top_p=self.top_p)
            else:
                kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
            self._calls += 1
            with torch.no_grad():
                gen = model.generate(input_ids=input_ids, attention_mask=mask, **kwargs)
            out.extend(tok.decode(row[width:].tolist(), skip_special_tokens=True) for row in gen)
        return out

    def chat(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        """One assistant message (``content`` plus parsed ``tool_calls``) continuing ``messages``."""
        return reply_message(self.generate(messages, **kwargs))

    def __call__(self, message: str) -> dict[str, Any]:
        """The agent contract: one user message in, ``{"steps", "final_text", "model"}`` out.

        Inside ``simulate`` the message is a ``Scenario``: its system prompt and tools are used when this model
        has none of its own, and tool calls go through its mock world, so scheduled faults fire.
        """
        if not isinstance(message, str):
            raise InvalidArgumentType(f"{self.name}: an agent takes the user's message as a string; got {type(message).__name__}")
        from whileai_core.tools import as_tools

        world = getattr(message, "world", None)
        tools = None
        if not self.tools:
            world_tools = getattr(world, "tools", None)
            if isinstance(world_tools, Mapping) and world_tools:
                tools = list(world_tools.values())
            elif (declared := getattr(message, "tools", None)) and not all(isinstance(t, str) for t in declared):
                tools = as_tools(declared)
        out = self.run(str(message), system_prompt=getattr(message, "system_prompt", None), tools=tools,
                       world=world, scenario=message)
        out.pop("messages")  # simulate rebuilds messages from steps; the contract is steps + final_text
        return out

    def run(self, prompt: Any, *, system_prompt: str | None = None, tools: Any = None, world: Any = None,
            scenario: Any = None) -> dict[str, Any]:
        """Play one rollout from a prompt (a string or messages), running tool calls through ``tools=``
        (or through ``world.call`` when a mock world is given)."""
        active = self.tools if tools is None else tools
        by_name = {t.name: t for t in active}
        messages = self._messages(prompt, system_prompt)
        steps: list[dict[str, Any]] = []
        reply: dict[str, Any] = {"role": "assistant", "content": ""}
        for turn in range(self.max_tool_turns + 1):
            reply = self.chat(messages, tools=active)
            calls = reply.get("tool_calls") or []
            if not calls or not by_name or turn == self.max_tool_turns:
                break
            messages.append(reply)
            for call in calls:
                fn = call["function"]
                try:
                    args = json.loads(fn["arguments"]) if isinstance(fn["arguments"], str) else fn["arguments"]
                except json.JSONDecodeError:
                    args = {}
                tool = by_name.get(fn["name"])
                try:
                    if world is not None:
                        result = world.call(fn["name"], args if isinstance(args, dict) else {}, scenario=scenario)
                    elif tool is None:
                        raise LookupError(f"no tool named {fn['name']!r}")
                    else:
                        result = tool(**args) if isinstance(args, dict) else tool(args)
                except Exception as exc:  # noqa: BLE001 - the agent sees the failure, as it would from a real tool
                    result = f"error: {error_text(exc)}"
                step = {"tool": fn["name"], "arguments": args, "result": result, "turn": turn}  # one reply: one turn
                if reply.get("content") and calls[0] is call:
                    step["text"] = reply["content"]
                steps.append(step)
                messages.append({"role": "tool", "tool_call_id": call["id"], "name": fn["name"],
                                 "content": result if isinstance(result, str) else json.dumps(result, default=str)})
        messages.append(reply)
        return {"steps": steps, "final_text": reply.get("content", ""), "model": self.name, "messages": messages}

    # ------------------------------------------------------------------------------------------ scoring
    def logprob(self, prompt: Any, completion: Any) -> float:
        """Sum of token log-probabilities of ``completion`` (a string or assistant messages) after ``prompt``."""
        import torch

        head = self._messages(prompt)
        tail = [{"role": "assistant", "content": completion}] if isinstance(completion, str) else list(completion)
        prefix = self._encode(head, generation_prompt=True)
        full = self._encode(head + tail, generation_prompt=False)
        if full[: len(prefix)] != prefix:
            raise InvalidArgument(f"{self.name}: the chat template is not prefix-preserving, so a reply cannot be scored")
        if len(full) == len(prefix):
            raise InvalidArgument("completion= is empty after templating; nothing to score")
        ids = torch.tensor([full], device=self.device if self._model is not None else None)
        model = self.model
        ids = ids.to(self.device)
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, :-1].float()
        logp = torch.log_softmax(logits, dim=-1)
        targets = ids[0, 1:]
        picked = logp.gather(1, targets[:, None])[:, 0]
        return float(picked[len(prefix) - 1:].sum())

    def __repr__(self) -> str:
        tools = f", tools={[t.name for t in self.tools]}" if self.tools else ""
        return (f"LocalModel({self.path or 'in-memory model'!s}, temperature={self.temperature:g}, "
                f"max_new_tokens={self.max_new_tokens}{tools})")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "temperature": self.temperature, "top_p": self.top_p,
                "max_new_tokens": self.max_new_tokens, "max_tool_turns": self.max_tool_turns,
                "tools": [t.name for t in self.tools], "device": self.device, "seed": self.seed}
