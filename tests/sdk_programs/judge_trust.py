# Check a judge against human gold labels before trusting its rewards.
import whileai as wai

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    ...

def judge(row):
    return {"reward": int(not row["seeded"])}

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=64)
scored = data.grade(judge=judge)
# people labelled every row (here the stand-in's own labels play the people; one of them disagrees)
labels = [{"row_id": r["row_id"], "label": int(not r["seeded"]) if i else 1 - int(not r["seeded"])}
          for i, r in enumerate(scored.rows)]
report = wai.judge_trust(wai.attach_labels(scored.rows, labels, kind="human"), gold="gold_reward")
print(report)
