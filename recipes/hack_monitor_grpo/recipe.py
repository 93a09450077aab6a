"""Reward-hack detection during GRPO: train on a reward model that secretly likes long replies, and let
wai.HackMonitor watch every scored completion and stop the run when length starts predicting the reward within a
prompt (README.md beside this file)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # the --tiny/--full switch and the tiny model (recipes/common.py)

import whileai as wai

args = common.arguments(__doc__)
clock = common.Clock()
out = common.workdir(args)
n_tasks, steps, every = (8, 12, 16) if not args.full else (500, 300, 256)
prompts = [f"question {i}: is the item ok" for i in range(n_tasks)]
rows = [{"task_id": f"q{i}", "prompt": p, "messages": [{"role": "user", "content": p}]} for i, p in enumerate(prompts)]


def length_loving_rm(prompts, completions, **kwargs):
    """The proxy reward (a stand-in for a learned reward model): it pays for length, not for being right."""
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    return [min(1.0, len(t) / 24) for t in texts]


monitor = wai.HackMonitor(every=every, buffer=2 * every, stop_on=["feature"])
base = args.model if args.full else common.tiny_model(out / "base", prompts + ["yes", "no", "it is ok"])
with common.quiet():
    result = wai.train(rows, "grpo", base, reward=monitor.wrap(length_loving_rm), output_dir=out / "grpo",
                       max_steps=steps, batch_size=4, num_generations=4, max_completion_length=12,
                       learning_rate=1e-3, trainer_kwargs={"callbacks": [monitor.as_callback()]})
print(f"grpo: stopped after {result.steps} of {steps} steps" if monitor.should_stop else
      f"grpo: ran all {result.steps} steps")
print(monitor.summary())
print(f"done in {clock}", file=sys.stderr)
