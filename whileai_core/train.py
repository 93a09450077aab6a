"""Train and prove: TRL SFT / DPO / GRPO on graded rows, a group-intact holdout, and the paired delta.

``train(rows, method=..., model=...)`` wraps TRL's trainers with the defaults in ``defaults.py`` and returns
the checkpoint path and the training log. ``holdout(rows)`` splits by task, never inside a group, and moves
holdout tasks that near-copy a training prompt back into train. ``prove(before, after, holdout_rows, judge)``
plays both models on the holdout, grades both with the same judge and reports ``measure.delta_report``.

torch, transformers, datasets and trl are imported inside the functions that need them (the ``train``
extra), so importing this module is cheap.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai_core.defaults import (
    DECONTAM_NGRAM,
    DECONTAM_OVERLAP,
    DPO_BETA,
    DPO_LEARNING_RATE,
    GRPO_BETA,
    GRPO_LEARNING_RATE,
    GRPO_MAX_COMPLETION_LENGTH,
    GRPO_NUM_GENERATIONS,
    GRPO_TEMPERATURE,
    HOLDOUT_FRACTION,
    LOCAL_BATCH_SIZE,
    LOCAL_MAX_NEW_TOKENS,
    LOCAL_TEMPERATURE,
    PROVE_ROLLOUTS,
    SFT_LEARNING_RATE,
    SFT_MIN_REWARD,
    TRAIN_BATCH_SIZE,
    TRAIN_EPOCHS,
    TRAIN_LOGGING_STEPS,
    TRAIN_MAX_LENGTH,
    TRAIN_METHODS,
    TRAIN_SEED,
)
from whileai_core.rows import Row, RowList, as_rows, group_rows, stable_id, task_key

INSTALL_HINT = "pip install 'pytest-whileai[train]'  (pins torch==2.13.0, trl==1.16.0, transformers==5.24.0)"


def _require_train_extra() -> None:
    try:
        import torch  # noqa: F401
        import trl  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"wai.train needs the train extra ({exc.name} is missing): {INSTALL_HINT}") from None


def _int_arg(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}= must be an int >= {minimum}; got {value!r}")
    return value


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or not math.isfinite(value):
        raise ValueError(f"{name}= must be a positive number; got {value!r}")
    return float(value)


# ----------------------------------------------------------------------------------------------------------
# train
# ----------------------------------------------------------------------------------------------------------
@dataclass
class TrainResult:
    """What ``train`` did: the checkpoint directory, the per-step log, and the settings it ran with."""

    method: str
    checkpoint: str
    log: list[dict[str, Any]]
    n_examples: int
    steps: int
    seconds: float
    config: dict[str, Any]
    trainer: Any = field(default=None, repr=False, compare=False)

    @property
    def losses(self) -> list[float]:
        """The logged training loss at each logging step, in order."""
        return [float(e["loss"]) for e in self.log if "loss" in e]

    @property
    def first_loss(self) -> float | None:
        return self.losses[0] if self.losses else None

    @property
    def last_loss(self) -> float | None:
        return self.losses[-1] if self.losses else None

    def model(self, **kwargs: Any) -> Any:
        """The trained checkpoint as a ``LocalModel`` (agent and generator)."""
        from whileai_core.local_model import LocalModel

        return LocalModel(self.checkpoint, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "checkpoint": self.checkpoint, "n_examples": self.n_examples,
                "steps": self.steps, "seconds": round(self.seconds, 3), "first_loss": self.first_loss,
                "last_loss": self.last_loss, "config": dict(self.config), "log": list(self.log)}

    def __str__(self) -> str:
        loss = ""
        if self.losses:
            loss = f", loss {self.first_loss:.3f} -> {self.last_loss:.3f} (first/last logged step)"
        return (f"train {self.method}: {self.steps} steps on {self.n_examples} examples in {self.seconds:.1f}s"
                f"{loss}; checkpoint {self.checkpoint}")


def _looks_like_pairs(items: Sequence[Any]) -> bool:
    return bool(items) and all(isinstance(p, Mapping) and "chosen" in p and "rejected" in p for p in items)


def _load_model(model: Any, tokenizer: Any, *, output_dir: Path, need_dir: bool) -> tuple[Any, Any]:
    """(model, tokenizer); a model object that lives nowhere on disk is saved first when ``need_dir``
    (TRL re-loads DPO's / KL-GRPO's reference model from ``config._name_or_path``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not (path / "config.json").exists():
            raise FileNotFoundError(
                f"model={str(model)!r} is not a local checkpoint directory (no config.json). wai.train never "
                "downloads: save the model first (model.save_pretrained(dir)) and pass the directory"
            )
        tok = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(path)
        return AutoModelForCausalLM.from_pretrained(path), tok
    checkpoint = getattr(model, "checkpoint", None)
    if isinstance(checkpoint, str) and not hasattr(model, "forward"):  # a TrainResult: keep training it
        return _load_model(checkpoint, tokenizer, output_dir=output_dir, need_dir=need_dir)
    if not hasattr(model, "forward") or not hasattr(model, "config"):
        raise TypeError(f"model= must be a checkpoint directory or a transformers model; got {type(model).__name__}")
    origin = getattr(model.config, "_name_or_path", "") or ""
    if tokenizer is None:
        if origin and (Path(origin) / "config.json").exists():
            tokenizer = AutoTokenizer.from_pretrained(origin)
        else:
            raise ValueError("model= is an in-memory model with no saved directory; pass tokenizer= as well")
    if need_dir and not (origin and (Path(origin) / "config.json").exists()):
        base = output_dir / "base"
        model.save_pretrained(base)
        tokenizer.save_pretrained(base)
        model = AutoModelForCausalLM.from_pretrained(base)
    return model, tokenizer


def train(
    rows: Any,
    method: str = "sft",
    model: Any = None,
    *,
    tokenizer: Any = None,
    output_dir: str | os.PathLike[str] | None = None,
    judge: Callable[[Row], Any] | None = None,
    reward: Callable[..., Any] | Sequence[Callable[..., Any]] | None = None,
    system_prompt: str | None = None,
    tools: Any = None,
    mask: str = "row",
    max_steps: int | None = None,
    epochs: float = TRAIN_EPOCHS,
    learning_rate: float | None = None,
    batch_size: int = TRAIN_BATCH_SIZE,
    max_length: int = TRAIN_MAX_LENGTH,
    beta: float | None = None,
    num_generations: int = GRPO_NUM_GENERATIONS,
    max_completion_length: int = GRPO_MAX_COMPLETION_LENGTH,
    temperature: float = GRPO_TEMPERATURE,
    min_reward: float = SFT_MIN_REWARD,
    logging_steps: int = TRAIN_LOGGING_STEPS,
    seed: int = TRAIN_SEED,
    use_cpu: bool | None = None,
    peft_config: Any = None,
    trainer_args: Mapping[str, Any] | None = None,
    trainer_kwargs: Mapping[str, Any] | None = None,
) -> TrainResult:
    """Train ``model`` on ``rows`` with TRL and save the result; returns a ``TrainResult``.

    ``method="sft"`` trains on the rows' conversations (assistant tokens only; tool output is never trained;
    rows below ``min_reward`` draw a warning). ``"dpo"`` takes preference pairs (``build_preference_pairs``
    output or ``{"prompt", "chosen", "rejected"}`` dicts), or graded rows it pairs itself. ``"grpo"`` takes
    one prompt per task and scores completions with ``judge`` (a whileai judge) and/or ``reward`` (TRL reward
    functions). ``model`` is a local checkpoint directory or a transformers model (then pass ``tokenizer``).
    Every number has a default in ``defaults.py``; ``trainer_args`` passes anything else to the TRL config
    (and wins over the defaults), ``trainer_kwargs`` to the trainer (e.g. GRPO ``tools=[...]``).
    The checkpoint is written to ``<output_dir>/final`` with ``training_log.json`` beside it.
    """
    if method not in TRAIN_METHODS:
        raise ValueError(f"method= must be one of {', '.join(map(repr, TRAIN_METHODS))}; got {method!r}")
    if model is None:
        raise ValueError("model= is required: a local checkpoint directory or a transformers model")
    if max_steps is not None:
        _int_arg("max_steps", max_steps, 1)
    _positive("epochs", epochs)
    _int_arg("batch_size", batch_size, 1)
    _int_arg("max_length", max_length, 8)
    _int_arg("logging_steps", logging_steps, 1)
    if learning_rate is not None:
        _positive("learning_rate", learning_rate)
    if beta is not None and (isinstance(beta, bool) or not isinstance(beta, (int, float)) or beta < 0):
        raise ValueError(f"beta= must be a number >= 0; got {beta!r}")
    if method == "grpo":
        _int_arg("num_generations", num_generations, 2)
        _int_arg("max_completion_length", max_completion_length, 1)
        if judge is None and reward is None:
            raise ValueError("method='grpo' needs judge= (a whileai judge) or reward= (TRL reward functions)")
        if judge is not None and not callable(judge):
            raise TypeError(f"judge= must be callable (row -> verdict); got {type(judge).__name__}")
    _require_train_extra()

    from whileai_core import trl_formats as fmt

    items: list[Any] | None = None
    if method == "dpo":
        try:
            items = fmt.unwrap_pairs(rows)  # (pairs, report), an object with .pairs, or a list
        except TypeError:
            items = None
    data: list[Row] = []
    if method == "dpo" and items is not None and _looks_like_pairs(items):
        examples = fmt.to_dpo(items, system_prompt=system_prompt, tools=tools)
    else:
        data = as_rows(rows)
        if not data:
            raise ValueError("rows= is empty; pass graded rows (or preference pairs for method='dpo')")
        if method == "sft":
            low = [r for r in data if isinstance(r.get("reward"), (int, float)) and r["reward"] < min_reward]
            if low:
                warnings.warn(f"train(sft): {len(low)} of {len(data)} rows have reward < {min_reward}; SFT imitates "
                              "them. Keep passing rows only (wai.select(rows, mode='sft')) or lower min_reward=",
                              UserWarning, stacklevel=2)
            examples = fmt.to_sft(data, tools=tools, system_prompt=system_prompt, mask=mask)
        elif method == "dpo":
            from whileai_core.preferences import build_preference_pairs

            pairs = build_preference_pairs(data)
            examples = fmt.to_dpo(pairs, system_prompt=system_prompt, tools=tools)
        else:
            examples = fmt.to_grpo(data, system_prompt=system_prompt)

    import torch
    from trl import DPOConfig, DPOTrainer, GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer

    out = Path(output_dir) if output_dir is not None else Path(tempfile.mkdtemp(prefix=f"whileai-{method}-"))
    out.mkdir(parents=True, exist_ok=True)
    lm, tok = _load_model(model, tokenizer, output_dir=out,
                          need_dir=method == "dpo" or (method == "grpo" and (GRPO_BETA if beta is None else beta) > 0))
    if tok.pad_token is None and tok.eos_token is not None:
        tok.pad_token = tok.eos_token

    cpu = (not torch.cuda.is_available()) if use_cpu is None else bool(use_cpu)
    bf16 = (not cpu) and torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    common: dict[str, Any] = {
        "output_dir": str(out / "trainer"), "use_cpu": cpu, "bf16": bf16, "fp16": False,
        "activation_checkpointing": False, "report_to": "none", "save_strategy": "no", "disable_tqdm": True,
        "logging_steps": logging_steps, "dataloader_num_workers": 0, "seed": seed,
        "per_device_train_batch_size": batch_size, "max_steps": max_steps if max_steps is not None else -1,
        "num_train_epochs": float(epochs),
    }
    dataset = fmt.as_dataset(examples)
    rewards: list[Callable[..., Any]] = []
    args: Any
    trainer: Any
    extra = dict(trainer_args or {})
    build = dict(trainer_kwargs or {})
    if method == "sft":
        args = SFTConfig(**{**common, "learning_rate": learning_rate or SFT_LEARNING_RATE, "max_length": max_length,
                            "assistant_only_loss": True, **extra})
        trainer = SFTTrainer(**{"model": lm, "args": args, "train_dataset": dataset, "processing_class": tok,
                                "peft_config": peft_config, **build})
    elif method == "dpo":
        args = DPOConfig(**{**common, "learning_rate": learning_rate or DPO_LEARNING_RATE,
                            "beta": DPO_BETA if beta is None else float(beta), "max_length": max_length, **extra})
        trainer = DPOTrainer(**{"model": lm, "args": args, "train_dataset": dataset, "processing_class": tok,
                                "peft_config": peft_config, **build})
    else:
        if judge is not None:
            rewards.append(fmt.grpo_reward(judge, data))
        if reward is not None:
            rewards.extend([reward] if callable(reward) else list(reward))
        generation_batch = math.lcm(batch_size, num_generations)
        args = GRPOConfig(**{**common, "learning_rate": learning_rate or GRPO_LEARNING_RATE,
                             "beta": GRPO_BETA if beta is None else float(beta), "num_generations": num_generations,
                             "generation_batch_size": generation_batch,
                             "max_completion_length": max_completion_length, "temperature": temperature, **extra})
        trainer = GRPOTrainer(**{"model": lm, "reward_funcs": rewards, "args": args, "train_dataset": dataset,
                                 "processing_class": tok, "peft_config": peft_config, **build})
    if len(trainer.train_dataset) == 0:
        raise ValueError(
            f"train({method}): every example was dropped after tokenization (longer than max_length={max_length} "
            "with nothing left to train, or no assistant tokens); raise max_length= or shorten the tool schemas"
        )
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    final = out / "final"
    trainer.save_model(str(final))
    tok.save_pretrained(str(final))
    config = {"method": method, "learning_rate": args.learning_rate, "batch_size": args.per_device_train_batch_size,
              "max_steps": max_steps, "epochs": float(args.num_train_epochs), "seed": args.seed, "use_cpu": cpu,
              "bf16": bool(args.bf16)}
    if method in ("sft", "dpo"):
        config["max_length"] = args.max_length
    if method in ("dpo", "grpo"):
        config["beta"] = args.beta
    if method == "grpo":
        config.update(num_generations=args.num_generations, max_completion_length=args.max_completion_length,
                      temperature=args.temperature, reward_funcs=[getattr(f, "__name__", "reward") for f in rewards])
    log = [dict(e) for e in trainer.state.log_history]
    result = TrainResult(method=method, checkpoint=str(final), log=log, n_examples=len(dataset),
                         steps=int(trainer.state.global_step), seconds=seconds, config=config, trainer=trainer)
    summary = result.to_dict()
    (out / "training_log.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    return result


# ----------------------------------------------------------------------------------------------------------
# holdout
# ----------------------------------------------------------------------------------------------------------
_WORD_RE = re.compile(r"[a-z0-9]+")


def _words(text: Any) -> list[str]:
    return _WORD_RE.findall(str(text or "").lower())


def _prompt_text(row: Mapping[str, Any]) -> str:
    prompt = row.get("prompt")
    if isinstance(prompt, list):
        return " ".join(str(m.get("content") or "") for m in prompt if m.get("role") == "user")
    if prompt in (None, ""):
        for m in row.get("messages") or []:
            if m.get("role") == "user":
                return str(m.get("content") or "")
    return str(prompt or "")


def contamination(
    rows: Any, against: Any, *, ngram: int = DECONTAM_NGRAM, overlap: float = DECONTAM_OVERLAP
) -> dict[str, str]:
    """Tasks of ``rows`` whose prompt repeats one in ``against``: ``{task_key: rule}``.

    Rules, first hit wins: ``same_task`` (the task key is in both), ``exact`` (same normalised words), ``near``
    (at least ``overlap`` of the prompt's words lie inside word ``ngram``-grams that occur in ``against``;
    the Llama 2 "dirty" rule). Prompts shorter than ``ngram`` words are checked for exact copies only. The check is
    ``wai.decontaminate`` (guards.py) run on one plain-text prompt per task.
    """
    _int_arg("ngram", ngram, 1)
    if isinstance(overlap, bool) or not isinstance(overlap, (int, float)) or not 0 < overlap <= 1:
        raise ValueError(f"overlap= must be in (0, 1]; got {overlap!r}")
    from whileai_core.guards import decontaminate

    # one probe row per task, with the prompt as plain text, checked by the same rule as wai.decontaminate
    probes = [{"task_id": key, "prompt": _prompt_text(members[0])}
              for key, members in group_rows(as_rows(rows)).items()]
    others = [{"task_id": task_key(r), "prompt": _prompt_text(r)} for r in as_rows(against, name="against")]
    if not probes or not others:
        return {}
    report = decontaminate(probes, others, n=ngram, overlap=overlap, fields=("prompt",), examples=len(probes))
    found = {ex["index"]: ex["match"] for ex in report.examples}
    return {probes[i]["task_id"]: found[i] if found.get(i) in ("same_task", "exact") else "near"
            for i in report.contaminated}


@dataclass
class HoldoutSplit:
    """A train / holdout split by task; unpacks as ``train_rows, holdout_rows = wai.holdout(rows)``."""

    train: RowList
    holdout: RowList
    n_train_tasks: int
    n_holdout_tasks: int
    moved: dict[str, str]
    fraction: float
    seed: int

    def __iter__(self) -> Iterator[RowList]:
        return iter((self.train, self.holdout))

    def to_dict(self) -> dict[str, Any]:
        return {"n_train_rows": len(self.train), "n_holdout_rows": len(self.holdout),
                "n_train_tasks": self.n_train_tasks, "n_holdout_tasks": self.n_holdout_tasks,
                "moved_to_train": dict(self.moved), "fraction": self.fraction, "seed": self.seed}

    def __str__(self) -> str:
        moved = f"; {len(self.moved)} contaminated holdout task(s) moved to train" if self.moved else ""
        return (f"holdout: {self.n_holdout_tasks} tasks ({len(self.holdout)} rows) held out, "
                f"{self.n_train_tasks} tasks ({len(self.train)} rows) for training{moved}")


def holdout(
    rows: Any,
    fraction: float = HOLDOUT_FRACTION,
    *,
    seed: int = TRAIN_SEED,
    ngram: int = DECONTAM_NGRAM,
    overlap: float = DECONTAM_OVERLAP,
) -> HoldoutSplit:
    """Split rows into train and holdout by task (every rollout of a task lands on one side).

    ``round(fraction x tasks)`` tasks (at least one, and at least one left to train) are held out, chosen by a
    seeded hash of the task key, so the split is the same on every machine. Holdout tasks whose prompt copies
    or near-copies a training prompt (see ``contamination``) are moved to train and listed in ``moved``.
    """
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < 1:
        raise ValueError(f"fraction= must be a number in (0, 1), the share of tasks held out; got {fraction!r}")
    data = as_rows(rows)
    groups = group_rows(data)
    if len(groups) < 2:
        raise ValueError(f"holdout needs at least 2 tasks to split; got {len(groups)} (rows are grouped by task_id)")
    order = sorted(groups, key=lambda k: stable_id(seed, k, length=16))
    n_hold = min(max(1, round(fraction * len(groups))), len(groups) - 1)
    held = set(order[:n_hold])
    train_rows = [r for k in groups if k not in held for r in groups[k]]
    hold_rows = [r for k in groups if k in held for r in groups[k]]
    moved = contamination(hold_rows, train_rows, ngram=ngram, overlap=overlap) if train_rows else {}
    held -= set(moved)
    train_out = RowList(r for k in groups if k not in held for r in groups[k])
    hold_out = RowList(r for k in groups if k in held for r in groups[k])
    for part in (train_out, hold_out):
        part.system_prompt = getattr(rows, "system_prompt", None)
        part.tools = getattr(rows, "tools", ()) or ()
    return HoldoutSplit(train=train_out, holdout=hold_out, n_train_tasks=len(groups) - len(held),
                        n_holdout_tasks=len(held), moved=moved, fraction=float(fraction), seed=seed)


# ----------------------------------------------------------------------------------------------------------
# prove
# ----------------------------------------------------------------------------------------------------------
@dataclass
class ProveReport:
    """Both models on the same holdout, graded by the same judge, and the paired delta between them."""

    delta: Any
    before: list[Row]
    after: list[Row]
    before_model: str
    after_model: str
    n_tasks: int
    rollouts: int
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        delta = self.delta.to_dict() if hasattr(self.delta, "to_dict") else self.delta
        return {"before_model": self.before_model, "after_model": self.after_model, "n_tasks": self.n_tasks,
                "rollouts": self.rollouts, "delta": delta, "warnings": list(self.warnings)}

    def __str__(self) -> str:
        head = (f"prove: {self.after_model} vs {self.before_model} on {self.n_tasks} holdout tasks "
                f"x {self.rollouts} rollout(s)")
        lines = [head, str(self.delta)]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _as_player(model: Any, *, system_prompt: str | None, tools: Any, max_new_tokens: int,
               temperature: float, seed: int) -> tuple[Any, str]:
    from whileai_core.local_model import LocalModel

    if isinstance(model, LocalModel):
        return model, model.name
    if isinstance(model, (str, os.PathLike)) or isinstance(getattr(model, "checkpoint", None), str):
        lm = LocalModel(model if isinstance(model, (str, os.PathLike)) else model.checkpoint,
                        system_prompt=system_prompt, tools=tools, max_new_tokens=max_new_tokens,
                        temperature=temperature, seed=seed)
        return lm, lm.name
    if callable(model):
        return model, getattr(model, "__name__", None) or getattr(model, "name", None) or type(model).__name__
    raise TypeError(f"a model for prove() must be a checkpoint path, a LocalModel, a TrainResult or an agent callable; "
                    f"got {type(model).__name__}")


def _prompt_for(player: Any, base: Mapping[str, Any], system_prompt: str | None) -> list[dict[str, Any]]:
    from whileai_core.local_model import LocalModel
    from whileai_core.trl_formats import prompt_of

    prompt = prompt_of(base, system_prompt=system_prompt)
    if isinstance(player, LocalModel) and player.system_prompt and prompt[0].get("role") == "system":
        prompt = prompt[1:]  # the model's own system prompt wins
    return prompt


def _rollout_row(base: Mapping[str, Any], prompt: list[dict[str, Any]], result: Mapping[str, Any], arm: str,
                 name: str, index: int) -> Row:
    from whileai_core.trl_formats import completion_row

    row = completion_row(base, prompt, [{"role": "assistant", "content": result.get("final_text", "")}])
    row["steps"] = list(result.get("steps") or [])
    if result.get("messages"):
        row["messages"] = list(result["messages"])
    key = task_key(base)
    row.update(task_id=key, rollout_index=index, row_id=f"{key}#{index}", status="ok", finish_reason="stop")
    row["lineage"] = {**(base.get("lineage") or {}), "source": "prove", "arm": arm, "agent": name}
    return row


def _play_all(player: Any, bases: Sequence[Mapping[str, Any]], rollouts: int, arm: str, name: str,
              system_prompt: str | None, batch_size: int) -> list[Row]:
    """Every (task, rollout) played by one model: batched decoding for a tool-less LocalModel, else one by one."""
    from whileai_core.local_model import LocalModel, reply_message

    jobs = [(base, i) for base in bases for i in range(rollouts)]
    prompts = [_prompt_for(player, base, system_prompt) for base, _ in jobs]
    if isinstance(player, LocalModel) and not player.tools:
        texts = player.generate_many(prompts, batch_size=batch_size)
        out = []
        for (base, i), prompt, text in zip(jobs, prompts, texts):
            reply = reply_message(text)
            result = {"steps": [], "final_text": reply["content"],
                      "messages": player._messages(prompt) + [reply]}
            out.append(_rollout_row(base, prompt, result, arm, name, i))
        return out
    out = []
    for (base, i), prompt in zip(jobs, prompts):
        if isinstance(player, LocalModel):
            result: Any = player.run(prompt)
        else:
            user = next((m["content"] for m in reversed(prompt) if m.get("role") == "user"), "")
            result = player(user)
            if isinstance(result, str):
                result = {"steps": [], "final_text": result}
            if not isinstance(result, Mapping) or "final_text" not in result:
                raise TypeError(f"agent {name!r} returned {type(result).__name__}; the agent contract is "
                                "agent(message) -> {'steps': [...], 'final_text': str}")
        out.append(_rollout_row(base, prompt, result, arm, name, i))
    return out


def prove(
    before_model: Any,
    after_model: Any,
    holdout_rows: Any,
    judge: Callable[[Row], Any],
    *,
    rollouts: int = PROVE_ROLLOUTS,
    max_new_tokens: int = LOCAL_MAX_NEW_TOKENS,
    temperature: float = LOCAL_TEMPERATURE,
    system_prompt: str | None = None,
    tools: Any = None,
    train_rows: Any = None,
    seed: int = TRAIN_SEED,
    batch_size: int = LOCAL_BATCH_SIZE,
    **delta_kwargs: Any,
) -> ProveReport:
    """Play ``before_model`` and ``after_model`` on every holdout task, grade both with ``judge``, and report
    the paired delta (``measure.delta_report``: delta, interval, p-value, n paired, verdict).

    A model is a checkpoint directory, a ``TrainResult``, a ``LocalModel`` or any agent callable.
    With ``train_rows=`` the holdout is checked against the training rows first; contaminated tasks are
    named in a warning. ``rollouts > 1`` needs ``temperature > 0`` (greedy replies would repeat). A ``LocalModel``
    without tools decodes ``batch_size`` prompts at a time; with tools (or an agent callable) rollouts run one by one.
    """
    _int_arg("rollouts", rollouts, 1)
    _int_arg("max_new_tokens", max_new_tokens, 1)
    _int_arg("batch_size", batch_size, 1)
    if rollouts > 1 and temperature <= 0:
        raise ValueError(f"rollouts={rollouts} with temperature={temperature} repeats one greedy reply; "
                         "pass temperature > 0 or rollouts=1")
    if not callable(judge):
        raise TypeError(f"judge= must be callable (row -> verdict); got {type(judge).__name__}")
    data = as_rows(holdout_rows, name="holdout_rows")
    if not data:
        raise ValueError("holdout_rows= is empty; split one off with wai.holdout(rows)")
    notes: list[str] = []
    if train_rows is not None:
        dirty = contamination(data, train_rows)
        if dirty:
            sample = ", ".join(f"{k} ({v})" for k, v in list(dirty.items())[:5])
            notes.append(f"{len(dirty)} holdout task(s) also appear in train_rows: {sample}; the delta is partly "
                         "measured on training data. Re-split with wai.holdout(rows)")
    from whileai_core.grade import run_judge
    from whileai_core.measure import delta_report

    bases = {key: members[0] for key, members in group_rows(data).items()}
    arms: dict[str, list[Row]] = {}
    names: dict[str, str] = {}
    for arm, model in (("before", before_model), ("after", after_model)):
        player, name = _as_player(model, system_prompt=system_prompt, tools=tools, max_new_tokens=max_new_tokens,
                                  temperature=temperature, seed=seed)
        names[arm] = name
        played = _play_all(player, list(bases.values()), rollouts, arm, name, system_prompt, batch_size)
        arms[arm] = list(run_judge(played, judge, on_error="keep"))
    for arm, graded in arms.items():
        failed = sum(1 for r in graded if r.get("reward") is None)
        if failed:
            notes.append(f"the judge failed on {failed} of {len(graded)} {arm} rows; they are left out of the delta")
    report = delta_report(arms["before"], arms["after"], **delta_kwargs)
    return ProveReport(delta=report, before=arms["before"], after=arms["after"], before_model=names["before"],
                       after_model=names["after"], n_tasks=len(bases), rollouts=rollouts, warnings=notes)
