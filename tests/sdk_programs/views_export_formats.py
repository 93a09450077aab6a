# SDK views and export formats (issue 18's sdk-views part): trajectories, failed traces, TRL export.
import whileai as wai

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    ...

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, mode="rl", repeats=4, budget=32)
print(len(data.trajectories), "trajectories")
scored = data.grade(judge=lambda row: int(not row["seeded"]))
print(len(scored.failed_traces()), "failed traces")
rows = scored.select(mode="rl")
rows.export("train_trl.jsonl", format="trl")
print("exported")
