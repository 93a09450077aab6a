# SDK reference: compare target pass at 1
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped"}

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=32)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
print(wai.compare(scored, scored, target="pass_at_1", n_boot=500))
