# SDK reference: simulate default repeats 1
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {}
d = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, budget=2)
assert len(d.rows) == 2
