# SDK reference: compare marker target
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped"}

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=32)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
try:  # the reference: a metric not measured on both sides raises ValueError naming it
    wai.compare(scored, scored, target="marker:hedging")
except ValueError as exc:
    assert "marker:hedging" in str(exc) and "hedging" in str(exc)
else:
    raise AssertionError("an unmeasured marker target must raise")
