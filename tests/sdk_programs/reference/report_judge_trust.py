# SDK reference: report judge trust
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped"}

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=32)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
labels = [{"row_id": r["row_id"], "label": r["reward"]} for r in scored.rows]
rep = wai.judge_trust(wai.attach_labels(scored.rows, labels, kind="human"), gold="gold_reward")
assert rep["ok"] and rep["agreement"]["agreement"] == 1.0
