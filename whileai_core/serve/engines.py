"""Which engine serves a checkpoint, whether it is installed, and the command line that starts it.

Two engines, both made for the job and both OpenAI-compatible (``GET /v1/models``, ``POST /v1/chat/completions``):

- ``transformers``: ``transformers serve`` (the transformers CLI with its ``serving`` extra: fastapi, uvicorn),
  run as ``python -m transformers.cli.transformers serve <dir>``. Runs on CPU; the model id it lists is the
  directory it was given.
- ``vllm``: vLLM's OpenAI server, ``python -m vllm.entrypoints.openai.api_server``. Needs a GPU. A LoRA adapter
  is served on its base with ``--enable-lora --lora-modules name=dir``.

``engine="auto"`` picks vLLM when it is importable and a CUDA GPU is visible, else transformers. Nothing here
imports torch, vLLM or transformers at module level.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from whileai_core.arguments import choice
from whileai_core.errors import ServeError

ENGINES = ("transformers", "vllm")

_INSTALL = {
    "transformers": "pip install 'transformers[serving]' (transformers serve needs fastapi and uvicorn)",
    "vllm": "pip install vllm (vLLM's OpenAI server needs a CUDA GPU)",
}
_MODULES = {"transformers": ("transformers", "fastapi", "uvicorn"), "vllm": ("vllm",)}


@dataclass(frozen=True)
class Launch:
    """One server start: the engine, its argv, and the model id the server will list at ``/v1/models``."""

    engine: str
    argv: list[str]
    model: str
    notes: list[str] = field(default_factory=list)


def missing(engine: str) -> list[str]:
    """The modules ``engine`` needs that are not importable here (empty when it can run)."""
    return [name for name in _MODULES[engine] if importlib.util.find_spec(name) is None]


def gpu_present() -> bool:
    """True when torch is installed and sees a CUDA device (torch is imported only to ask)."""
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def choose(engine: str) -> str:
    """The engine to run for ``engine`` (``"auto"``, ``"transformers"`` or ``"vllm"``), checked installed.

    Raises:
        InvalidArgument: an unknown engine name.
        ServeError: the engine (or a package it needs) is not installed; the message names the install.
    """
    choice("engine", engine, ("auto", *ENGINES))
    if engine == "auto":
        engine = "vllm" if not missing("vllm") and gpu_present() else "transformers"
    absent = missing(engine)
    if absent:
        raise ServeError(f"engine={engine!r} cannot start: {', '.join(absent)} not installed; {_INSTALL[engine]}"
                         + ("; or engine='transformers' to serve on CPU" if engine == "vllm" else ""),
                         engine=engine)
    return engine


def command(engine: str, model_dir: str, *, host: str, port: int, adapter: str | None = None,
            adapter_rank: int | None = None, args: Sequence[str] = ()) -> Launch:
    """The argv that starts ``engine`` on ``model_dir`` at ``host:port`` (``adapter``: a LoRA dir, vLLM only)."""
    if engine == "transformers":
        if adapter is not None:
            raise ServeError("transformers serve loads one model directory (AutoConfig.from_pretrained needs "
                             "config.json, which an adapter directory lacks); merge the adapter first", engine=engine)
        argv = [sys.executable, "-m", "transformers.cli.transformers", "serve", model_dir, "--host", host,
                "--port", str(port), "--log-level", "info", *args]
        return Launch(engine, argv, model=model_dir)
    name = Path(adapter or model_dir).name or "model"
    argv = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model_dir, "--host", host,
            "--port", str(port)]
    if adapter is None:
        argv += ["--served-model-name", name]
    else:
        argv += ["--enable-lora", "--lora-modules", f"{name}={adapter}"]
        if adapter_rank is not None:
            argv += ["--max-lora-rank", str(adapter_rank)]
    return Launch(engine, [*argv, *args], model=name)


__all__ = ["ENGINES", "Launch", "choose", "command", "gpu_present", "missing"]
