"""What every recipe shares: the --tiny / --full switch and, for --tiny, a small random model built from code.

Nothing is downloaded. ``tiny_model(dir, corpus)`` trains a byte-level BPE tokenizer on the recipe's own text,
gives it a ChatML chat template whose assistant turns sit inside ``{% generation %}`` (so SFT trains on the
assistant's tokens only, end-of-turn included), and saves a randomly initialised two-layer Llama beside it.
``--full`` takes a real checkpoint directory you already have (``--model``); nothing here fetches one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

for _key in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_key, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("WANDB_DISABLED", "true")

TEMPLATE = (
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}{{- '<|im_start|>assistant\\n' }}"
    "{%- generation %}{{- m.content }}{{- '<|im_end|>' }}{%- endgeneration %}{{- '\\n' }}"
    "{%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def arguments(description: str, *, trains: bool = True) -> argparse.Namespace:
    """``--tiny`` (the default: CPU, seconds) or ``--full --model DIR`` (one GPU), plus ``--out``.

    ``trains=False`` (judge validation, the CI gate) never imports torch, so those recipes run on ``[dev]``
    alone; a training recipe pins torch to one thread for ``--tiny``.
    """
    parser = argparse.ArgumentParser(description=description)
    scale = parser.add_mutually_exclusive_group()
    scale.add_argument("--tiny", action="store_true", help="tiny scale on CPU (the default)")
    scale.add_argument("--full", action="store_true", help="full scale on one GPU; needs --model")
    parser.add_argument("--model", help="a local checkpoint directory (--full); never downloaded")
    parser.add_argument("--out", default=None, help="where checkpoints go (a temp dir when not given)")
    args = parser.parse_args()
    if args.full and not args.model:
        parser.error("--full needs --model DIR: a checkpoint you already have (save_pretrained output)")
    if trains and not args.full:
        import torch

        torch.set_num_threads(1)  # a shared CPU: a second OpenMP thread spin-waits (trl-offline-training.md P1)
    return args


def tiny_model(out_dir: str | os.PathLike[str], corpus: list[str], *, seed: int = 0) -> str:
    """Save a ~0.2M-parameter random Llama and a BPE tokenizer trained on ``corpus`` into ``out_dir``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=384, special_tokens=special, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(corpus + ["system user assistant"], trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  model_max_length=256)
    tok.chat_template = TEMPLATE
    config = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         tie_word_embeddings=True, bos_token_id=None, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    return str(out_dir)


@contextlib.contextmanager
def quiet():
    """Send what the trainer prints (its per-step log dicts) to stderr, so stdout is the recipe's result."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


class Clock:
    """Wall time since the recipe started, printed on stderr so stdout stays the recipe's result."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def __str__(self) -> str:
        return f"{time.perf_counter() - self.start:.1f} s"


def workdir(args: argparse.Namespace) -> Path:
    """``--out`` or a fresh temp dir."""
    import tempfile

    path = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="whileai-recipe-"))
    path.mkdir(parents=True, exist_ok=True)
    return path
