# SDK reference: simulate tasks replay
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped"}

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=32)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
after = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, tasks=data.rows, repeats=4)
keys = [(r["task_id"], r["rollout_index"]) for r in after.rows]
assert len(keys) == len(set(keys)) == len(data.rows)
