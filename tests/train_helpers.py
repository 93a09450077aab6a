"""Test helpers for the train tests: a tiny Llama-style causal LM and a byte-level BPE tokenizer built offline.

Nothing is downloaded. ``build_tiny_model(dir)`` trains a tokenizer on a generated corpus with ``tokenizers``,
wraps it for transformers with a ChatML-like chat template that marks assistant output with
``{% generation %}`` (so TRL's assistant-only loss works) and renders tool calls, then saves a randomly
initialised ~1M-parameter Llama model beside it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# set before transformers / datasets / huggingface_hub are imported anywhere in the test process
for _key, _value in (
    ("HF_HUB_OFFLINE", "1"),
    ("HF_DATASETS_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("TOKENIZERS_PARALLELISM", "false"),
    ("HF_DATASETS_DISABLE_PROGRESS_BARS", "1"),
    ("WANDB_DISABLED", "true"),
):
    os.environ.setdefault(_key, _value)

# The end-of-turn token sits inside the generation block, so the model is trained to stop.
CHAT_TEMPLATE = r"""{%- if tools %}
{{- '<|im_start|>system\n' }}{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}{%- endif %}
{{- '\n<tools>' }}{%- for tool in tools %}{{- '\n' }}{{- tool | tojson }}{%- endfor %}{{- '\n</tools><|im_end|>\n' }}
{%- elif messages[0]['role'] == 'system' %}
{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' }}
{%- generation %}
{%- if message.content %}{{- message.content }}{%- endif %}
{%- if message.tool_calls %}{%- for call in message.tool_calls %}
{%- if call.function is defined %}{%- set call = call.function %}{%- endif %}
{{- '<tool_call>{"name": "' + call.name + '", "arguments": ' }}
{{- call.arguments if call.arguments is string else (call.arguments | tojson) }}{{- '}</tool_call>' }}
{%- endfor %}{%- endif %}
{{- '<|im_end|>' }}
{%- endgeneration %}
{{- '\n' }}
{%- elif message.role == 'tool' %}
{{- '<|im_start|>tool\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}"""

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

READ_FILE_TOOL = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}


def _corpus() -> list[str]:
    words = ["the", "a", "agent", "tool", "call", "result", "user", "assistant", "system", "answer", "question", "file", "read", "write", "list", "search", "json", "error", "ok", "done", "yes", "no", "true", "false", "value", "name", "path", "arguments", "function", "return", "number", "add", "sum", "hello", "world", "test", "data", "export", "capital", "city", "colour", "red", "blue", "green"]
    lines = [" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(8)) + f" {i % 97}." for i in range(300)]
    lines.append('<tool_call>{"name": "read_file", "arguments": {"path": "/data/notes.txt"}}</tool_call>')
    return lines


def build_tiny_tokenizer() -> Any:
    """The tiny byte-level BPE tokenizer with ``CHAT_TEMPLATE`` (no model; trained in well under a second)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        _corpus(),
        trainer=trainers.BpeTrainer(
            vocab_size=512,
            special_tokens=SPECIAL_TOKENS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte is a token: no UNK, ever
            show_progress=False,
        ),
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token=None, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        unk_token=None, model_max_length=512,
    )
    tok.chat_template = CHAT_TEMPLATE
    return tok


def build_tiny_model(out_dir: str | os.PathLike[str], *, hidden: int = 64, layers: int = 2, seed: int = 0,
                     init_std: float = 0.02) -> Path:
    """Build and save a tiny random-init Llama + tokenizer + chat template into ``out_dir``; return the path.

    A larger ``init_std`` gives peakier random logits, so greedy replies vary from prompt to prompt."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    tok = build_tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tok), hidden_size=hidden, intermediate_size=hidden * 4, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, tie_word_embeddings=True,
        bos_token_id=None, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, initializer_range=init_std,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None
    )
    out = Path(out_dir)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def tool_conversation(i: int) -> list[dict]:
    """A rows-schema conversation: user -> assistant tool call (JSON-string arguments) -> tool -> assistant."""
    path = f"/data/file{i}.txt"
    return [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": f"read {path}"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_0000", "type": "function",
             "function": {"name": "read_file", "arguments": f'{{"path": "{path}"}}'}}]},
        {"role": "tool", "tool_call_id": "call_0000", "content": f"SECRET-TOOL-OUTPUT {i}"},
        {"role": "assistant", "content": f"The file says value {i}."},
    ]


def tool_row(i: int, *, reward: float = 1.0) -> dict:
    """A graded rollout row (docs/rows.md) carrying ``tool_conversation(i)``."""
    messages = tool_conversation(i)
    return {
        "schema_version": "1",
        "row_id": f"t{i}#0",
        "task_id": f"t{i}",
        "rollout_index": 0,
        "prompt": messages[1]["content"],
        "system_prompt": messages[0]["content"],
        "messages": messages,
        "loss_mask": [0, 0, 1, 0, 1],
        "tools": [READ_FILE_TOOL],
        "final_text": messages[-1]["content"],
        "reward": reward,
        "privileged": {"reference": f"value {i}"},
    }


def reference_judge(row: dict) -> dict:
    """An importable judge for environment tests: 1 when the privileged reference is in the reply."""
    reference = str((row.get("privileged") or {}).get("reference", ""))
    hit = bool(reference) and reference in str(row.get("final_text", ""))
    return {"reward": int(hit), "reason": "reference in reply" if hit else "reference missing"}
