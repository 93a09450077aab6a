# SDK reference: simulate unique
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {}
d = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, unique=True, budget=8)
assert len({r["task_id"] for r in d.rows}) == 8
