"""Lesson 2: a judge is a program (or a model) that gives the reward, and a judge can be wrong."""
import re

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=96)


def lookup_judge(row):
    """Lesson 1's judge: did the agent look up the order the user asked about?"""
    asked = re.search(r"O\d+", row["prompt"]).group()
    return {"reward": int(asked in [step["arguments"].get("order_id") for step in row["steps"]])}


scored = data.grade(judge=lookup_judge)

# Gold labels: what a careful person says about each rollout. Here the stand-in agent knows which rollouts it
# spoiled (row["seeded"]), so the labels are exact; with a real agent, people label a sample by hand.
gold = {r["row_id"]: int(not r["seeded"]) for r in scored.rows}
labeled = wai.attach_labels(scored.rows, gold, kind="human")
report = wai.judge_trust(labeled)
print(report)
for warning in report.warnings:
    print("  -", warning)


def grounded_judge(row):
    """Stricter: the right lookup, and every number in the reply came from the user or a tool result."""
    seen = row["prompt"] + " ".join(str(step["result"]) for step in row["steps"])
    invented = [n for n in re.findall(r"\d+(?:\.\d+)?", row["final_text"]) if n not in seen]
    return {"reward": int(lookup_judge(row)["reward"] == 1 and not invented)}


rescored = data.grade(judge=grounded_judge)
again = wai.judge_trust(wai.attach_labels(rescored.rows, gold, kind="human"))
print(again)
for warning in again.warnings:
    print("  -", warning)
