"""What is served: a local checkpoint directory with full weights, or a LoRA adapter on its base.

A checkpoint is what ``save_pretrained`` or ``wai.train`` wrote (``config.json`` beside the weights), given as a
path, a ``TrainResult`` or a ``LocalModel`` loaded from a path. A PEFT adapter directory (``adapter_config.json``,
no ``config.json``) names its base in ``base_model_name_or_path``, which must be a local directory too (serving
is offline). vLLM serves the adapter on its base as it is; ``transformers serve`` loads one model directory
(its model manager calls ``AutoConfig.from_pretrained`` on the directory it was given), so for it the adapter
is merged into its base with peft (``merge_and_unload``) in a temp directory first, and a note says so.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai_core.errors import InvalidArgument, InvalidArgumentType, ServeError

_VLLM_LORA_RANKS = (16, 32, 64, 128, 256, 320, 512)  # vLLM's --max-lora-rank choices (its default is 16)


@dataclass
class Checkpoint:
    """The directory an engine loads, and the adapter served on it (vLLM) when there is one."""

    model_dir: str
    adapter: str | None = None
    adapter_rank: int | None = None
    notes: list[str] = field(default_factory=list)


def checkpoint_dir(checkpoint_or_model: Any) -> Path:
    """The local directory behind a path, a ``TrainResult`` (``.checkpoint``) or a path-loaded ``LocalModel``.

    Raises:
        InvalidArgumentType: an object that carries no checkpoint directory (an in-memory model).
        InvalidArgument: a path that is not a directory holding ``config.json`` or ``adapter_config.json``.
    """
    value = checkpoint_or_model
    if not isinstance(value, (str, os.PathLike)):
        value = getattr(value, "checkpoint", None) or getattr(value, "path", None)
        if not isinstance(value, (str, os.PathLike)):
            raise InvalidArgumentType(
                f"serve() takes a checkpoint directory, a TrainResult or a LocalModel loaded from a path; got "
                f"{type(checkpoint_or_model).__name__}. Save an in-memory model first: model.save_pretrained(dir) "
                "and tokenizer.save_pretrained(dir)")
    path = Path(value).expanduser()
    if not path.is_dir() or not ((path / "config.json").exists() or (path / "adapter_config.json").exists()):
        raise InvalidArgument(f"serve(): {str(path)!r} is not a local checkpoint directory (no config.json or "
                              "adapter_config.json in it); pass what save_pretrained() or wai.train() wrote. "
                              "Serving is offline: a hub id is not downloaded")
    return path.resolve()


def adapter_config(path: Path) -> dict[str, Any] | None:
    """The PEFT adapter config of ``path``, or None when ``path`` holds full weights."""
    if (path / "config.json").exists() or not (path / "adapter_config.json").exists():
        return None
    try:
        config = json.loads((path / "adapter_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"serve(): {path / 'adapter_config.json'} is not readable JSON ({exc})") from None
    base = config.get("base_model_name_or_path") if isinstance(config, dict) else None
    if not isinstance(base, str) or not (Path(base).expanduser() / "config.json").exists():
        raise InvalidArgument(f"serve(): the adapter {str(path)!r} names base_model_name_or_path={base!r}, which is "
                              "not a local checkpoint directory; set it to the base model's local directory in "
                              "adapter_config.json (serving is offline)")
    return config


def merge_adapter(adapter: Path, base: str, out: Path) -> Path:
    """Merge the LoRA ``adapter`` into ``base`` with peft and save the full model (and a tokenizer) to ``out``.

    Raises:
        ServeError: peft (or transformers) is not installed; the message names the install.
    """
    try:
        from peft import PeftModel
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ServeError(f"serving the LoRA adapter {str(adapter)!r} with transformers serve merges it into its "
                         f"base with peft, which is not installed ({exc.name}): pip install peft; or serve it "
                         "with engine='vllm', which loads adapters as they are", engine="transformers") from None
    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base), str(adapter)).merge_and_unload()
    model.save_pretrained(out)
    tokenizer_source = adapter if (adapter / "tokenizer_config.json").exists() else Path(base)
    AutoTokenizer.from_pretrained(str(tokenizer_source)).save_pretrained(out)
    return out


def prepare(checkpoint_or_model: Any, engine: str, scratch: Path) -> Checkpoint:
    """What ``engine`` loads for ``checkpoint_or_model``; a merged adapter goes under ``scratch``."""
    path = checkpoint_dir(checkpoint_or_model)
    config = adapter_config(path)
    if config is None:
        return Checkpoint(str(path))
    base = str(Path(config["base_model_name_or_path"]).expanduser().resolve())
    if engine == "vllm":
        rank = int(config.get("r") or 0)
        fit = next((r for r in _VLLM_LORA_RANKS if r >= rank), _VLLM_LORA_RANKS[-1])
        return Checkpoint(base, adapter=str(path), adapter_rank=fit if fit > _VLLM_LORA_RANKS[0] else None,
                          notes=[f"LoRA adapter {path.name} served on its base {base} (vLLM --enable-lora)"])
    merged = merge_adapter(path, base, scratch / "merged")
    note = (f"LoRA adapter {path} merged into its base {base} with peft for transformers serve (which loads one "
            f"model directory): {merged}")
    return Checkpoint(str(merged), notes=[note])


__all__ = ["Checkpoint", "adapter_config", "checkpoint_dir", "merge_adapter", "prepare"]
