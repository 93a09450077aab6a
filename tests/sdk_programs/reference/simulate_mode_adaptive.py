# SDK reference: simulate mode adaptive
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {}
d = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, mode="adaptive", budget=8)
assert d.repeats == 1
