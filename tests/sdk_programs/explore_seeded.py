# The SDK's explore mode with its stand-in agent at a rate, one rollout per situation.
import whileai as wai

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    ...

@wai.tool
def cancel_order(order_id: str, reason: str = "") -> dict:
    """Cancel an order."""
    ...

tools = [get_order, cancel_order]
data = wai.simulate(wai.seeded_agent(tools, rate=0.35, seed=0), tools=tools,
                    system_prompt="Help customers with orders. Confirm before cancelling.",
                    simulator=False, mode="explore", budget=40)
print(len(data), "rows,", data.n_situations, "situations")
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
print(scored.pass_at)
