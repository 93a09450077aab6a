# The policy's rules and the user's history as coverage axes.
import whileai as wai

@wai.tool
def cancel_order(order_id: str) -> dict:
    """Cancel an order."""
    ...

POLICY = """You are the Acme order desk.
- Always confirm before cancelling an order.
- Never cancel an order that has already shipped.
"""
data = wai.simulate(wai.seeded_agent([cancel_order], behaviors=["hedging", "ignore_fault", "leak"]),
                    tools=[cancel_order], system_prompt=POLICY, simulator=False,
                    dimensions=["rule", "history"], repeat_policy="none", budget=60)
print(data.coverage)
print(sorted({r["scenario"]["history"] for r in data.rows}))
print(sorted({r["seeded_what"] for r in data.rows if r["seeded"]}))
