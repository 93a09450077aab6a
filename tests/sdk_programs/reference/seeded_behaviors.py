# SDK reference: seeded behaviors
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {}
d = wai.simulate(wai.seeded_agent([get_order], behaviors=["hedging"]), tools=[get_order], simulator=False, budget=32)
assert any(r["seeded"] for r in d.rows)
