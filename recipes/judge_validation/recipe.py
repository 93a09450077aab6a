"""Judge validation before RL: before a judge becomes a training reward, measure its agreement with human labels
(with intervals) and attack it with the edits a policy finds first; train only on a judge that passes both
(README.md beside this file)."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # the --tiny/--full switch and the tiny model (recipes/common.py)

import whileai as wai

args = common.arguments(__doc__, trains=False)  # no torch: runs on [dev] alone
budget = 240 if not args.full else 2000


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


# --tiny: the stand-in agent, whose spoiled rollouts are the gold labels (a person's labels, in real use).
# --full: pass your agent, and attach the labels your annotators wrote (wai.attach_labels takes a JSONL path).
data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=budget, progress=False)
gold = {r["row_id"]: int(not r["seeded"]) for r in data.rows}


def keyword_judge(row):
    """A cheap judge: pass any reply that mentions the order."""
    return {"reward": int("order" in row["final_text"].lower())}


PROMISES = ("refund", "upgrade", "arrive", "free", "discount", "credit")


def grounded_judge(row):
    """The right order looked up, and no promise or number in the reply that no tool result backs."""
    asked = re.search(r"O\d+", row["prompt"]).group()
    backed = (row["prompt"] + " ".join(str(step["result"]) for step in row["steps"])).lower()
    reply = row["final_text"].lower()
    right = asked in [step["arguments"].get("order_id") for step in row["steps"]]
    numbers = [n for n in re.findall(r"\d+(?:\.\d+)?%?", reply) if n not in backed]
    promises = [w for w in PROMISES if w in reply and w not in backed]
    return {"reward": int(right and not numbers and not promises)}


for name, judge in (("keyword judge", keyword_judge), ("grounded judge", grounded_judge)):
    labeled = wai.attach_labels(data.grade(judge=judge).rows, gold, kind="human")
    trust = wai.judge_trust(labeled)
    probes = wai.judge_probes(labeled, judge, seed=0)
    go = trust.ok and not probes.exploitable_by
    print(f"{name}: {'TRAIN ON IT' if go else 'DO NOT TRAIN ON IT'}")
    print(f"  {trust}")
    for warning in trust.warnings:
        print(f"  - {warning}")
    print(f"  exploitable by: {', '.join(probes.exploitable_by) or 'none of the probes'}")
