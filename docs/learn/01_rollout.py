"""Lesson 1: a rollout is one conversation of the agent with a user; a reward is one number that grades it."""
import re

import whileai as wai


@wai.tool  # the function is the tool; its signature is the schema the agent sees
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


# Three situations, each played three times: nine rollouts. No model and no network: a stand-in agent
# (seeded_agent) plays, the world answers its tool calls, and sometimes the world fails on purpose.
data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=3, budget=9)

row = data.rows[0]  # one rollout is one row: what the user asked, what the agent did, what it said
print("user asked:  ", row["prompt"])
print("agent called:", [(step["tool"], step["arguments"]) for step in row["steps"]])
print("agent said:  ", row["final_text"])


def judge(row):
    """The reward: 1 when the agent looked up the order the user asked about, else 0."""
    asked = re.search(r"O\d+", row["prompt"]).group()
    looked_up = [step["arguments"].get("order_id") for step in row["steps"]]
    return {"reward": int(asked in looked_up)}


scored = data.grade(judge=judge)
print()
print("task           try  reward  (what the stand-in spoiled)")
for r in scored.rows:
    print(f"{r['task_id']}  {r['rollout_index']}    {r['reward']}       {r['seeded_what'] or '-'}")
