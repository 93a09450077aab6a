# SDK reference: select rl
from pathlib import Path

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped"}

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=32)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
rows = scored.select(mode="rl")
rows.export("rl.jsonl")
import json

assert all("group_id" in json.loads(line) for line in Path("rl.jsonl").read_text().splitlines())
