# Rejection sampling for SFT and a trainer-ready export.
import whileai as wai

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    ...

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, mode="sft", repeats=4, budget=48)
scored = data.grade(judge=lambda row: int(not row["seeded"]))
rows = scored.select(mode="sft")
report = rows.export("sft.jsonl")
print("exported", report["n_written"], "rows")
