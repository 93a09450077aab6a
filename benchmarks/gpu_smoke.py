"""GPU smoke for wai.train / wai.prove on a lent accelerator (also runs on CPU, smaller).

Builds a small Llama-style model offline (tests/train_helpers.py, no downloads), then runs SFT, DPO, GRPO and
prove through the public API on each available device and prints wall times side by side, with the CUDA/CPU
ratio measured in this one run. Usage:

    python benchmarks/gpu_smoke.py [--steps 20] [--hidden 256] [--layers 4] [--cpu-only]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import train_helpers as th  # sets the HF offline environment before transformers loads


def run_on(device: str, model_dir: str, steps: int) -> dict[str, float]:
    import whileai as wai

    use_cpu = device == "cpu"
    times: dict[str, float] = {}
    rows = [dict(th.tool_row(i % 4), task_id=f"t{i}", row_id=f"t{i}#0") for i in range(32)]
    t = time.perf_counter()
    sft = wai.train(rows, "sft", model_dir, max_steps=steps, batch_size=8, learning_rate=3e-3, max_length=512,
                    use_cpu=use_cpu)
    times["sft"] = time.perf_counter() - t
    pairs = [{"prompt": f"what colour is item {i}", "chosen": "red", "rejected": "blue"} for i in range(32)]
    t = time.perf_counter()
    wai.train(pairs, "dpo", model_dir, max_steps=steps, batch_size=8, learning_rate=1e-3, max_length=64,
              use_cpu=use_cpu)
    times["dpo"] = time.perf_counter() - t
    grows = [{"task_id": f"q{i}", "prompt": f"question {i}: say yes", "privileged": {"reference": "yes"},
              "messages": [{"role": "user", "content": f"question {i}: say yes"}]} for i in range(16)]
    t = time.perf_counter()
    wai.train(grows, "grpo", model_dir, judge=th.reference_judge, max_steps=max(2, steps // 4), batch_size=8,
              num_generations=4, max_completion_length=16, learning_rate=1e-3, use_cpu=use_cpu)
    times["grpo"] = time.perf_counter() - t
    hold = [dict(th.tool_row(i), task_id=f"h{i}") for i in range(8)]
    t = time.perf_counter()
    report = wai.prove(wai.LocalModel(model_dir, device=device, max_new_tokens=24),
                       wai.LocalModel(sft.checkpoint, device=device, max_new_tokens=24), hold, th.reference_judge)
    times["prove"] = time.perf_counter() - t
    print(f"[{device}] {sft}")
    print(f"[{device}] {report}")
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--cpu-only", action="store_true")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1 if args.cpu_only else min(4, torch.get_num_threads()))
    model_dir = str(th.build_tiny_model(tempfile.mkdtemp(prefix="smoke-llama-"), hidden=args.hidden,
                                        layers=args.layers))
    n_params = sum(p.numel() for p in __import__("transformers").AutoModelForCausalLM.from_pretrained(
        model_dir).parameters())
    devices = ["cpu"] + ([] if args.cpu_only or not torch.cuda.is_available() else ["cuda"])
    print(f"model: {n_params:,} params; torch {torch.__version__}; devices {devices}"
          + (f"; {torch.cuda.get_device_name(0)}" if "cuda" in devices else ""))
    results = {d: run_on(d, model_dir, args.steps) for d in devices}
    print(f"\n{'stage':<8}" + "".join(f"{d + ' s':>12}" for d in devices) + ("   cuda/cpu" if "cuda" in devices else ""))
    for stage in results["cpu"]:
        line = f"{stage:<8}" + "".join(f"{results[d][stage]:>12.2f}" for d in devices)
        if "cuda" in devices:
            line += f"   {results['cuda'][stage] / results['cpu'][stage]:>8.2f}x"
        print(line)


if __name__ == "__main__":
    main()
