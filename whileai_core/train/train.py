"""Train: TRL SFT / DPO / GRPO on graded rows.

``train(rows, method=..., model=...)`` wraps TRL's trainers with the defaults in ``defaults.py`` and returns
the checkpoint path and the training log. torch, transformers, datasets and trl are imported inside the
functions that need them (the ``train`` extra), so importing this module is cheap.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai_core.arguments import integer, positive
from whileai_core.defaults import (
    DPO_BETA,
    DPO_LEARNING_RATE,
    GRPO_BETA,
    GRPO_LEARNING_RATE,
    GRPO_MAX_COMPLETION_LENGTH,
    GRPO_NUM_GENERATIONS,
    GRPO_TEMPERATURE,
    SFT_LEARNING_RATE,
    SFT_MIN_REWARD,
    TRAIN_BATCH_SIZE,
    TRAIN_EPOCHS,
    TRAIN_LOGGING_STEPS,
    TRAIN_MAX_LENGTH,
    TRAIN_METHODS,
    TRAIN_SEED,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.options import Generation, Optim, with_option
from whileai_core.rows import Row, as_rows

INSTALL_HINT = "pip install 'pytest-whileai[train]'  (pins torch==2.13.0, trl==1.16.0, transformers==5.24.0)"


def _require_train_extra() -> None:
    try:
        import torch  # noqa: F401
        import trl  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"wai.train needs the train extra ({exc.name} is missing): {INSTALL_HINT}") from None


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
        from whileai_core.models.local_model import LocalModel

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
        raise InvalidArgumentType(f"model= must be a checkpoint directory or a transformers model; got {type(model).__name__}")
    origin = getattr(model.config, "_name_or_path", "") or ""
    if tokenizer is None:
        if origin and (Path(origin) / "config.json").exists():
            tokenizer = AutoTokenizer.from_pretrained(origin)
        else:
            raise InvalidArgument("model= is an in-memory model with no saved directory; pass tokenizer= as well")
    if need_dir and not (origin and (Path(origin) / "config.json").exists()):
        base = output_dir / "base"
        model.save_pretrained(base)
        tokenizer.save_pretrained(base)
        model = AutoModelForCausalLM.from_pretrained(base)
    return model, tokenizer


def _check_train_arguments(method: str, model: Any, *, judge: Any, reward: Any, max_steps: Any, epochs: Any,
                           batch_size: Any, max_length: Any, logging_steps: Any, learning_rate: Any, beta: Any,
                           num_generations: Any, max_completion_length: Any) -> None:
    if method not in TRAIN_METHODS:
        raise InvalidArgument(f"method= must be one of {', '.join(map(repr, TRAIN_METHODS))}; got {method!r}")
    if model is None:
        raise InvalidArgument("model= is required: a local checkpoint directory or a transformers model")
    if max_steps is not None:
        integer("max_steps", max_steps, minimum=1)
    positive("epochs", epochs)
    integer("batch_size", batch_size, minimum=1)
    integer("max_length", max_length, minimum=8)
    integer("logging_steps", logging_steps, minimum=1)
    if learning_rate is not None:
        positive("learning_rate", learning_rate)
    if beta is not None and (isinstance(beta, bool) or not isinstance(beta, (int, float)) or beta < 0):
        raise InvalidArgument(f"beta= must be a number >= 0; got {beta!r}")
    if method == "grpo":
        integer("num_generations", num_generations, minimum=2)
        integer("max_completion_length", max_completion_length, minimum=1)
        if judge is None and reward is None:
            raise InvalidArgument("method='grpo' needs judge= (a whileai judge) or reward= (TRL reward functions)")
        if judge is not None and not callable(judge):
            raise InvalidArgumentType(f"judge= must be callable (row -> verdict); got {type(judge).__name__}")


def _examples(method: str, rows: Any, fmt: Any, *, system_prompt: str | None, tools: Any, mask: str,
              min_reward: float) -> tuple[list[dict[str, Any]], list[Row]]:
    """The TRL examples for ``method`` (and the rows they came from; none when DPO was given pairs)."""
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
            raise InvalidArgument("rows= is empty; pass graded rows (or preference pairs for method='dpo')")
        if method == "sft":
            low = [r for r in data if isinstance(r.get("reward"), (int, float)) and r["reward"] < min_reward]
            if low:
                warnings.warn(f"train(sft): {len(low)} of {len(data)} rows have reward < {min_reward}; SFT imitates "
                              "them. Keep passing rows only (wai.select(rows, mode='sft')) or lower min_reward=",
                              UserWarning, stacklevel=3)
            examples = fmt.to_sft(data, tools=tools, system_prompt=system_prompt, mask=mask)
        elif method == "dpo":
            from whileai_core.select.preferences import build_preference_pairs

            pairs = build_preference_pairs(data)
            examples = fmt.to_dpo(pairs, system_prompt=system_prompt, tools=tools)
        else:
            examples = fmt.to_grpo(data, system_prompt=system_prompt)
    return examples, data


def _run_config(method: str, args: Any, *, max_steps: int | None, cpu: bool, rewards: list[Callable[..., Any]],
                ) -> dict[str, Any]:
    """The settings the trainer actually ran with, for ``training_log.json``."""
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
    return config


def _trainer(method: str, common: dict[str, Any], dataset: Any, lm: Any, tok: Any, *, judge: Any, reward: Any,
             data: list[Row], learning_rate: float | None, beta: float | None, max_length: int, batch_size: int,
             num_generations: int, max_completion_length: int, temperature: float, peft_config: Any,
             trainer_args: Mapping[str, Any] | None, trainer_kwargs: Mapping[str, Any] | None,
             ) -> tuple[Any, Any, list[Callable[..., Any]]]:
    """The TRL config and trainer for ``method`` (and GRPO's reward functions)."""
    from trl import DPOConfig, DPOTrainer, GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer

    from whileai_core.train import trl_formats as fmt

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
    return args, trainer, rewards


def _grouped(optim: Optim | None, generation: Generation | None, **given: Any) -> dict[str, Any]:
    """``train``'s keywords with ``optim=`` and ``generation=`` merged in (``with_option``: a conflict names both)."""
    given = with_option(optim, Optim, given, keyword="optim", where="train")
    return with_option(generation, Generation, given, keyword="generation", where="train")


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
    mlflow: bool | str | os.PathLike[str] = False,
    optim: Optim | None = None,
    generation: Generation | None = None,
) -> TrainResult:
    """Train ``model`` on ``rows`` with TRL and save the result; returns a ``TrainResult``.

    ``method="sft"`` trains on the rows' conversations (assistant tokens only; tool output is never trained;
    rows below ``min_reward`` draw a warning). ``"dpo"`` takes preference pairs (``build_preference_pairs``
    output or ``{"prompt", "chosen", "rejected"}`` dicts), or graded rows it pairs itself. ``"grpo"`` takes
    one prompt per task and scores completions with ``judge`` (a whileai judge) and/or ``reward`` (TRL reward
    functions). ``model`` is a local checkpoint directory or a transformers model (then pass ``tokenizer``).
    Every number has a default in ``defaults.py``; ``trainer_args`` passes anything else to the TRL config
    (and wins over the defaults), ``trainer_kwargs`` to the trainer (e.g. GRPO ``tools=[...]``).
    The checkpoint is written to ``<output_dir>/final`` with ``training_log.json`` beside it. ``mlflow=True`` (or a
    tracking URI / folder) logs the training curves to MLflow (``MLFLOW_TRACKING_URI`` = ./mlruns by default).

    Args:
        rows: graded rows (SFT, GRPO), preference pairs or graded rows to pair (DPO).
        method: ``"sft"``, ``"dpo"`` or ``"grpo"`` (``TRAIN_METHODS``).
        model: a local checkpoint directory or a loaded transformers model; nothing is downloaded.
        tokenizer: its tokenizer (needed with a loaded model).
        output_dir: where ``final/`` and ``training_log.json`` go (default: a temp dir).
        judge: a whileai judge scoring GRPO completions.
        reward: TRL reward functions for GRPO.
        system_prompt: a system prompt for rows that lack one.
        tools: tool schemas for rows that lack them.
        mask: which assistant turns SFT trains: ``"row"`` (the row's loss mask), ``"assistant"`` or ``"final"``.
        max_steps: optimizer steps; overrides ``epochs``.
        epochs: passes over the data (``TRAIN_EPOCHS``). (``TRAIN_EPOCHS``)
        learning_rate: default per method: ``SFT_LEARNING_RATE`` 2e-5, ``DPO_LEARNING_RATE`` /
            ``GRPO_LEARNING_RATE`` 1e-6 (TRL's).
        batch_size: per-device batch size (``TRAIN_BATCH_SIZE``). (``TRAIN_BATCH_SIZE``)
        max_length: tokens per SFT / DPO example (``TRAIN_MAX_LENGTH``). (``TRAIN_MAX_LENGTH``)
        beta: DPO's KL strength (``DPO_BETA`` 0.1; Rafailov et al. 2023) or GRPO's (``GRPO_BETA`` 0; DAPO).
        num_generations: GRPO completions per prompt (``GRPO_NUM_GENERATIONS``). (``GRPO_NUM_GENERATIONS``)
        max_completion_length: GRPO tokens per completion (``GRPO_MAX_COMPLETION_LENGTH``).
            (``GRPO_MAX_COMPLETION_LENGTH``)
        temperature: GRPO sampling temperature (``GRPO_TEMPERATURE``). (``GRPO_TEMPERATURE``)
        min_reward: SFT rows below this reward draw a warning (``SFT_MIN_REWARD``). (``SFT_MIN_REWARD``)
        logging_steps: log every this many steps (``TRAIN_LOGGING_STEPS``). (``TRAIN_LOGGING_STEPS``)
        seed: the trainer's seed (``TRAIN_SEED``). (``TRAIN_SEED``)
        use_cpu: force CPU (default: CPU when no GPU is visible).
        peft_config: a LoRA (peft) config.
        trainer_args: anything else for the TRL config; wins over the defaults.
        trainer_kwargs: keyword arguments for the trainer itself (``callbacks``, GRPO ``tools``).
        mlflow: log the training curves to MLflow: True (``MLFLOW_TRACKING_URI``), a tracking URI or a folder.
        optim: a ``wai.Optim`` holding ``learning_rate``, ``batch_size``, ``max_steps``, ``epochs``,
            ``logging_steps`` and ``seed`` together (default None: the keywords); a keyword set beside it to
            another value is an error naming both.
        generation: a ``wai.Generation`` holding GRPO's ``num_generations``, ``max_completion_length`` and
            ``temperature`` together (default None: the keywords); a keyword set beside it the same way.

    Returns:
        A ``TrainResult``: ``.checkpoint``, ``.losses``, ``.steps``, ``.log``, ``.model()`` (a ``LocalModel``); it
            prints one line.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix.

    Example:
        ```python
        result = wai.train(scored.select(mode="sft"), "sft", model="./base-checkpoint", max_steps=100)
        print(result)   # train sft: 100 steps on ... examples ..., loss ... -> ...; checkpoint ...
        ```
    """
    if optim is not None or generation is not None:
        k = _grouped(optim, generation, learning_rate=learning_rate, batch_size=batch_size, max_steps=max_steps,
                     epochs=epochs, logging_steps=logging_steps, seed=seed, num_generations=num_generations,
                     max_completion_length=max_completion_length, temperature=temperature)
        learning_rate, batch_size, max_steps, epochs = k["learning_rate"], k["batch_size"], k["max_steps"], k["epochs"]
        logging_steps, seed, num_generations = k["logging_steps"], k["seed"], k["num_generations"]
        max_completion_length, temperature = k["max_completion_length"], k["temperature"]
    _check_train_arguments(method, model, judge=judge, reward=reward, max_steps=max_steps, epochs=epochs,
                           batch_size=batch_size, max_length=max_length, logging_steps=logging_steps,
                           learning_rate=learning_rate, beta=beta, num_generations=num_generations,
                           max_completion_length=max_completion_length)
    _require_train_extra()

    from whileai_core.train import trl_formats as fmt

    examples, data = _examples(method, rows, fmt, system_prompt=system_prompt, tools=tools, mask=mask,
                               min_reward=min_reward)

    import torch
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
    args, trainer, rewards = _trainer(
        method, common, dataset, lm, tok, judge=judge, reward=reward, data=data, learning_rate=learning_rate,
        beta=beta, max_length=max_length, batch_size=batch_size, num_generations=num_generations,
        max_completion_length=max_completion_length, temperature=temperature, peft_config=peft_config,
        trainer_args=trainer_args, trainer_kwargs=trainer_kwargs)
    if len(trainer.train_dataset) == 0:
        raise InvalidArgument(
            f"train({method}): every example was dropped after tokenization (longer than max_length={max_length} "
            "with nothing left to train, or no assistant tokens); raise max_length= or shorten the tool schemas"
        )
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    final = out / "final"
    trainer.save_model(str(final))
    tok.save_pretrained(str(final))
    config = _run_config(method, args, max_steps=max_steps, cpu=cpu, rewards=rewards)
    log = [dict(e) for e in trainer.state.log_history]
    result = TrainResult(method=method, checkpoint=str(final), log=log, n_examples=len(dataset),
                         steps=int(trainer.state.global_step), seconds=seconds, config=config, trainer=trainer)
    summary = result.to_dict()
    (out / "training_log.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    if mlflow:
        from whileai_core.train.curves import log_training

        log_training(log, uri=None if mlflow is True else mlflow, run_name=f"train-{method}", params=config)
    return result


