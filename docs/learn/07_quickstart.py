import whileai as wai
@wai.tool # the function is the tool; its signature is the schema
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    ...
data = wai.simulate(
    # a stand-in agent that misbehaves on a labeled share of rows
    wai.seeded_agent([get_order]),
    tools=[get_order],
    system_prompt="Help customers with orders.",
    simulator=False, # template situation writer: no model, no network
    mode="rl",
    repeats=4,
    repeat_policy="fixed",
    budget=64,
)
# any judge or verifier
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
print(scored.pass_at)
# leaked answer keys dropped, the 20 to 80% band (DIFFICULTY_BAND),
# unanimous groups dropped, reward-hack scan
rows = scored.select(mode="rl")
rows.export("train.jsonl")
# what a trainer reads: one JSON object per kept row, with its messages and loss mask
import json
with open("train.jsonl", encoding="utf-8") as exported:
    lines = exported.readlines()
print(f"train.jsonl: {len(lines)} rows; a row has {sorted(json.loads(lines[0]))[:6]} ...")
