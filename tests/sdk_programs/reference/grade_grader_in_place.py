# SDK reference: grade grader in place
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped"}

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=32)
data.grade(grader=lambda row: int(not row["seeded"]))
assert all(r["reward"] in (0, 1) for r in data.rows)
