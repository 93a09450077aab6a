"""GRPO on the 20-80% difficulty band (DAPO's dynamic sampling): drop tasks whose tries all pass or all fail,
since their group-relative advantage is zero, then train GRPO on the rest (README.md beside this file)."""
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # the --tiny/--full switch and the tiny model (recipes/common.py)

import whileai as wai

args = common.arguments(__doc__)
clock = common.Clock()
out = common.workdir(args)
n_tasks, k, steps = (60, 8, 4) if not args.full else (2000, 16, 300)
WORDS = ["red", "blue", "green", "file", "data", "tool"]
prompts = [f"question {i}: is the {WORDS[i % len(WORDS)]} ok" for i in range(n_tasks)]


def says_yes(row):
    """The judge: the reply must open with "yes"."""
    return {"reward": int(row["final_text"].strip().lower().startswith("yes")), "reason": "opens with yes"}


# k tries per task. --tiny: a stand-in policy whose chance of "yes" differs by task (some always, some never);
# --full: sample the model itself (LocalModel at temperature 1) and grade with the same judge.
if args.full:
    policy = wai.LocalModel(args.model, temperature=1.0, max_new_tokens=64)
    completions = [policy.generate(p) for p in prompts for _ in range(k)]
else:
    draw = random.Random(0)
    skill = [draw.choice([0.0, 0.0, 0.5, 1.0, 1.0]) if i % 2 else draw.random() for i in range(n_tasks)]
    completions = ["yes" if draw.random() < skill[i] else "no" for i in range(n_tasks) for _ in range(k)]
scored = wai.rows([p for p in prompts for _ in range(k)], completions,
                  task_ids=[f"q{i}" for i in range(n_tasks) for _ in range(k)], reward=says_yes)


def zero_advantage(rows):
    """Tasks whose k rewards are all equal: GRPO's advantage (reward minus the group mean) is 0 for every try."""
    groups: dict[str, set] = {}
    for r in rows:
        groups.setdefault(r["task_id"], set()).add(r["reward"])
    flat = sum(len(v) == 1 for v in groups.values())
    lo, hi = wai.wilson_interval(flat, len(groups))
    return f"{flat} of {len(groups)} tasks ({flat / len(groups):.2f} [{lo:.2f}..{hi:.2f}])"


kept = wai.select(scored, mode="rl", quiet=True)  # the band, DIFFICULTY_BAND = (0.2, 0.8)
print(f"zero-advantage tasks, all sampled: {zero_advantage(scored.rows)}")
print(f"zero-advantage tasks, kept by the band: {zero_advantage(kept)}")

base = args.model if args.full else common.tiny_model(out / "base", prompts + ["yes", "no"])
with common.quiet():
    result = wai.train(kept, "grpo", base, judge=says_yes, output_dir=out / "grpo", max_steps=steps, batch_size=4,
                       num_generations=4, max_completion_length=4, learning_rate=1e-3)
rewards = [e["rewards/says_yes/mean"] for e in result.log if "rewards/says_yes/mean" in e]
print(f"grpo: {result.steps} steps, {len(rewards)} logged reward means")
print(f"trained at {clock}", file=sys.stderr)

hold = list({r["task_id"]: r for r in scored.rows if r["task_id"] not in {x["task_id"] for x in kept}}.values())
proof = wai.prove(base, result, hold[:16], says_yes, max_new_tokens=4)
print(f"did not (pass@1 on 16 tasks outside the band): {proof.delta}")
print(f"done in {clock}", file=sys.stderr)
