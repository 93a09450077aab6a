"""Rejection-sampling SFT: sample several replies per prompt, keep the ones the judge passes, fine-tune on them,
and prove the result on held-out tasks with a paired delta (README.md beside this file)."""
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # the --tiny/--full switch and the tiny model (recipes/common.py)

import whileai as wai

args = common.arguments(__doc__)
clock = common.Clock()
out = common.workdir(args)
WORDS = ["red", "blue", "green", "file", "data", "tool", "json", "list", "search", "value", "name", "path"]
n_tasks, n_samples, steps = (48, 4, 30) if not args.full else (2000, 16, 500)
prompts = [f"question {i}: is the {WORDS[i % len(WORDS)]} ok" for i in range(n_tasks)]
controls = [f"what colour is item {i}" for i in range(n_tasks // 4)]  # a skill the recipe does not train


def says_yes(row):
    """The judge: the reply must open with "yes"."""
    return {"reward": int(row["final_text"].strip().lower().startswith("yes")), "reason": "opens with yes"}


def says_red(row):
    """The control's judge: the reply must open with "red"."""
    return {"reward": int(row["final_text"].strip().lower().startswith("red")), "reason": "opens with red"}


if args.full:  # the candidates come from the model itself, sampled at temperature 1
    base = args.model
    sampler = wai.LocalModel(base, temperature=1.0, max_new_tokens=32)
    completions = [sampler.generate(p) for p in prompts for _ in range(n_samples)]
else:  # tiny: the random model cannot answer yet, so a stand-in sampler proposes the candidates
    base = common.tiny_model(out / "base", prompts + controls + ["yes", "no", "maybe", "yes, it is ok", "red"])
    draw = random.Random(0)
    completions = [draw.choice(["yes", "no", "maybe", "yes, it is ok", "not sure"]) for _ in prompts
                   for _ in range(n_samples)]

task_ids = [f"q{i}" for i in range(n_tasks) for _ in range(n_samples)]
scored = wai.rows([p for p in prompts for _ in range(n_samples)], completions, task_ids=task_ids, reward=says_yes)
train_rows, hold_rows = wai.holdout(scored.rows, fraction=0.25, seed=0)
print(f"sampled {len(scored.rows)} replies for {n_tasks} prompts; judge pass rate {wai.pass_at(scored, min_k=2)}")
kept = wai.select(train_rows, mode="sft", quiet=True)  # rejection sampling: one passing reply per prompt
print(f"rejection sampling kept {len(kept)} passing replies from {len(train_rows)} training rows")

with common.quiet():
    result = wai.train(kept, "sft", base, output_dir=out / "sft", max_steps=steps, batch_size=4,
                       learning_rate=5e-3, max_length=128)
print(f"sft: {result.steps} steps on {result.n_examples} examples, loss {result.first_loss:.1f} -> {result.last_loss:.1f}")
print(f"trained at {clock}", file=sys.stderr)

hold_tasks = {r["task_id"]: r for r in hold_rows}  # one row per held-out task is enough to play it again
proof = wai.prove(base, result, list(hold_tasks.values()), says_yes, max_new_tokens=6)
print(f"moved   (held-out questions): {proof.delta}")
control_rows = wai.rows(controls, ["red"] * len(controls), task_ids=[f"c{i}" for i in range(len(controls))])
control = wai.prove(base, result, list(control_rows), says_red, max_new_tokens=6)
print(f"did not (colour questions):  {control.delta}")
print(f"done in {clock}", file=sys.stderr)
