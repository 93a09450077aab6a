# SDK reference: simulate seeds
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {}
d = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, seeds=["Where is order A1?"], repeats=4)
assert {r["prompt"] for r in d.rows} == {"Where is order A1?"}
