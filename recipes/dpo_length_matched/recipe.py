"""DPO on length-matched preference pairs: pair each passing reply with a failing one of about its length, so
the pairs cannot teach "longer wins"; train DPO and check what moved (README.md beside this file)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # the --tiny/--full switch and the tiny model (recipes/common.py)

import whileai as wai

args = common.arguments(__doc__)
clock = common.Clock()
out = common.workdir(args)
n_tasks, steps = (32, 12) if not args.full else (2000, 400)
prompts = [f"what colour is item {i}" for i in range(n_tasks)]
SHORT_OK, LONG_OK = "red", "red, the colour of this item is red"
SHORT_BAD, LONG_BAD = "blue", "blue, the colour of this item is blue"


def says_red(row):
    """The judge: the reply must open with "red"."""
    return {"reward": int(row["final_text"].strip().lower().startswith("red")), "reason": "opens with red"}


# four graded replies per prompt: a short and a long pass, a short and a long fail (in --full, your samples)
replies = [LONG_OK, SHORT_OK, SHORT_BAD, LONG_BAD]
scored = wai.rows([p for p in prompts for _ in replies], replies * n_tasks,
                  task_ids=[f"c{i}" for i in range(n_tasks) for _ in replies], reward=says_red)
train_rows, hold_rows = wai.holdout(scored.rows, fraction=0.25, seed=0)


def chosen_longer(pairs):
    """How many pairs have a chosen reply longer than the rejected one, with its Wilson interval."""
    longer = sum(len(p["chosen"]["final_text"]) > len(p["rejected"]["final_text"]) for p in pairs)
    lo, hi = wai.wilson_interval(longer, len(pairs))
    return f"chosen longer in {longer} of {len(pairs)} pairs ({longer / len(pairs):.2f} [{lo:.2f}..{hi:.2f}])"


matched = wai.build_preference_pairs(train_rows, max_pairs_per_prompt=2)
unmatched = wai.build_preference_pairs(train_rows, max_pairs_per_prompt=1, length_match=False)
print(f"length-matched pairs: {chosen_longer(matched.pairs)}")
print(f"unmatched pairs:      {chosen_longer(unmatched.pairs)}")

base = args.model if args.full else common.tiny_model(out / "base", prompts + replies)
with common.quiet():
    result = wai.train(matched.pairs, "dpo", base, output_dir=out / "dpo", max_steps=steps, batch_size=4,
                       learning_rate=1e-3, max_length=64)
print(f"dpo: {result.steps} steps on {result.n_examples} pairs")
print(f"trained at {clock}", file=sys.stderr)

hold = list({r["task_id"]: r for r in hold_rows}.values())
proof = wai.prove(base, result, hold, says_red, max_new_tokens=4)
print(f"moved   (held-out colour questions): {proof.delta}")


def prefers_long(model):
    """Held-out prompts where the model gives the long correct reply more log-probability than the short one."""
    model = wai.LocalModel(model) if isinstance(model, str) else model.model()
    return sum(model.logprob(r["prompt"], LONG_OK) > model.logprob(r["prompt"], SHORT_OK) for r in hold)


for name, model in (("before", base), ("after", result)):
    k = prefers_long(model)
    lo, hi = wai.wilson_interval(k, len(hold))
    print(f"did not (prefers the long reply, {name}): {k} of {len(hold)} prompts ({k / len(hold):.2f} [{lo:.2f}..{hi:.2f}])")
print(f"done in {clock}", file=sys.stderr)
