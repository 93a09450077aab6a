# SDK reference: pass at fields
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped"}

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=32)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
p = wai.pass_at(scored.rows)
assert 0 <= p.pass_at_1 <= 1 and p.k == 4
