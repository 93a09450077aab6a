"""``Optim`` and ``Generation``: ``train``'s knobs that travel together, named as TRL names them.

``Optim`` is the optimisation group of TRL's ``TrainingArguments`` (``learning_rate``, the per-device batch size,
``max_steps``, the epochs, ``logging_steps``, ``seed``); ``Generation`` is GRPO's "parameters that control
generation" (``GRPOConfig``'s ``num_generations``, ``max_completion_length``, ``temperature``). Each field keeps
``wai.train``'s keyword name, so ``wai.train(rows, "grpo", model, optim=wai.Optim(max_steps=10))`` is the same
call as ``wai.train(rows, "grpo", model, max_steps=10)``; a keyword set beside the object to another value than
it holds is an error naming both (``with_option``).
"""

from __future__ import annotations

from dataclasses import dataclass

from whileai_core.arguments import integer, positive
from whileai_core.defaults import (
    GRPO_MAX_COMPLETION_LENGTH,
    GRPO_NUM_GENERATIONS,
    GRPO_TEMPERATURE,
    TRAIN_BATCH_SIZE,
    TRAIN_EPOCHS,
    TRAIN_LOGGING_STEPS,
    TRAIN_SEED,
)
from whileai_core.options.merge import optional_number

__all__ = ["Generation", "Optim"]


@dataclass(frozen=True)
class Optim:
    """The optimisation settings of ``wai.train``, validated once (TRL's ``TrainingArguments`` group).

    Args:
        learning_rate: the peak learning rate, > 0; None: the method's (``SFT_LEARNING_RATE`` 2e-5,
            ``DPO_LEARNING_RATE`` / ``GRPO_LEARNING_RATE`` 1e-6 in defaults.py).
        batch_size: per-device batch size, >= 1 (TRL's ``per_device_train_batch_size``). Default
            ``TRAIN_BATCH_SIZE`` (8) in defaults.py.
        max_steps: optimizer steps, >= 1; overrides ``epochs``. None: ``epochs`` decide.
        epochs: passes over the data, > 0 (TRL's ``num_train_epochs``). Default ``TRAIN_EPOCHS`` (1.0).
        logging_steps: log every this many steps, >= 1. Default ``TRAIN_LOGGING_STEPS`` (1).
        seed: the trainer's seed, >= 0. Default ``TRAIN_SEED`` (0).

    Raises:
        InvalidArgument: a value of the wrong type or out of range, named (a ``ValueError``);
            InvalidArgumentType: a ``learning_rate`` that is not a number (a ``TypeError``).

    Example:
        ```python
        optim = wai.Optim(learning_rate=1e-5, batch_size=4, max_steps=100)
        result = wai.train(rows, "sft", model="./base-checkpoint", optim=optim)
        ```
    """

    learning_rate: float | None = None
    batch_size: int = TRAIN_BATCH_SIZE
    max_steps: int | None = None
    epochs: float = TRAIN_EPOCHS
    logging_steps: int = TRAIN_LOGGING_STEPS
    seed: int = TRAIN_SEED

    def __post_init__(self) -> None:
        if optional_number("Optim", "learning_rate", self.learning_rate) is not None:
            positive("learning_rate", self.learning_rate)
        object.__setattr__(self, "batch_size", integer("batch_size", self.batch_size, minimum=1))
        if self.max_steps is not None:
            object.__setattr__(self, "max_steps", integer("max_steps", self.max_steps, minimum=1))
        positive("epochs", self.epochs)
        object.__setattr__(self, "logging_steps", integer("logging_steps", self.logging_steps, minimum=1))
        object.__setattr__(self, "seed", integer("seed", self.seed, minimum=0))


@dataclass(frozen=True)
class Generation:
    """How GRPO samples its groups in ``wai.train``, validated once (TRL ``GRPOConfig``'s generation group).

    Args:
        num_generations: completions per prompt (the group), >= 2. Default ``GRPO_NUM_GENERATIONS`` (8).
        max_completion_length: tokens per completion, >= 1. Default ``GRPO_MAX_COMPLETION_LENGTH`` (256).
        temperature: the sampling temperature, > 0. Default ``GRPO_TEMPERATURE`` (1.0).

    Raises:
        InvalidArgument: a value of the wrong type or out of range, named (a ``ValueError``);
            InvalidArgumentType: a ``temperature`` that is not a number (a ``TypeError``).

    Example:
        ```python
        sampling = wai.Generation(num_generations=4, max_completion_length=64)
        result = wai.train(rows, "grpo", model="./base-checkpoint", judge=judge, generation=sampling)
        ```
    """

    num_generations: int = GRPO_NUM_GENERATIONS
    max_completion_length: int = GRPO_MAX_COMPLETION_LENGTH
    temperature: float = GRPO_TEMPERATURE

    def __post_init__(self) -> None:
        object.__setattr__(self, "num_generations", integer("num_generations", self.num_generations, minimum=2))
        object.__setattr__(self, "max_completion_length",
                           integer("max_completion_length", self.max_completion_length, minimum=1))
        optional_number("Generation", "temperature", self.temperature)
        positive("temperature", self.temperature)
