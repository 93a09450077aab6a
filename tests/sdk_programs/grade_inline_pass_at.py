# Grade inside simulate (grade=) and read pass@k at a chosen k.
import whileai as wai

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    ...

def judge(row):
    return {"reward": 0 if row["seeded"] else 1, "reason": row["seeded_what"] or "ok"}

scored = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                      simulator=False, mode="rl", repeats=8, budget=64, grade=judge)
print(wai.pass_at(scored.rows, k=4))
