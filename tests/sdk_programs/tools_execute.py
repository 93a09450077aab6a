# Real tool bodies answer the agent's calls (execute=), the scheduled faults still fire first.
import whileai as wai

ORDERS = {"shipped": "on its way", "delivered": "at the door"}

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped", "note": ORDERS["shipped"]}

tools = [get_order]
data = wai.simulate(wai.seeded_agent(tools), tools=tools, system_prompt="Help customers with orders.",
                    simulator=False, execute=wai.Tool.dispatch(tools), repeats=2, budget=24)
real = [r for r in data.rows if r["steps"] and isinstance(r["steps"][0]["result"], dict)
        and r["steps"][0]["result"].get("note") == "on its way"]
faulted = [r for r in data.rows if r["faults"]]
print(f"{len(real)} rows answered by the real tool, {len(faulted)} by a scheduled fault")
