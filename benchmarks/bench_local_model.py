"""LocalModel decoding: one prompt at a time vs ``generate_many`` (left-padded batches), measured side by side.

Builds a small random Llama offline (tests/train_helpers.py), decodes the same prompts both ways greedily, checks
the replies are identical, and prints the wall-time ratio. Usage:

    python benchmarks/bench_local_model.py [--prompts 32] [--tokens 16] [--batch 16] [--hidden 64]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import train_helpers as th  # sets the HF offline environment before transformers loads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=64)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    import whileai as wai

    d = th.build_tiny_model(tempfile.mkdtemp(prefix="bench-llama-"), hidden=args.hidden, init_std=0.5)
    model = wai.LocalModel(str(d), max_new_tokens=args.tokens).load()
    prompts = [f"question {i}: is item {i * 13} ok" + " please" * (i % 4) for i in range(args.prompts)]
    model.generate(prompts[0])  # warm-up
    t = time.perf_counter()
    serial = [model.generate(p) for p in prompts]
    t_serial = time.perf_counter() - t
    t = time.perf_counter()
    batched = model.generate_many(prompts, batch_size=args.batch)
    t_batched = time.perf_counter() - t
    same = sum(a == b for a, b in zip(serial, batched))
    print(f"{args.prompts} prompts x {args.tokens} new tokens, device {model.device}, batch {args.batch}")
    print(f"one at a time {t_serial:.3f}s   generate_many {t_batched:.3f}s   ratio {t_serial / t_batched:.1f}x   "
          f"identical replies {same}/{len(prompts)}")


if __name__ == "__main__":
    main()
