"""Lesson 6: which rows to train on. RL learns from tasks the agent sometimes passes; SFT copies passing rollouts."""
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, mode="rl", repeats=8, budget=192)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})

# RL (GRPO-style): a task whose 8 tries all pass (or all fail) gives every try the same advantage, so no
# gradient; tasks outside the 20%..80% pass band teach little (DAPO). select prints each gate and its count.
rl = scored.select(mode="rl")
print()
# SFT (rejection sampling): keep only rollouts that passed, so the model imitates what worked.
sft = scored.select(mode="sft")
print()
rate: dict[str, list[int]] = {}
for row in scored.rows:
    rate.setdefault(row["task_id"], []).append(row["reward"])
kept_rates = sorted({round(sum(rate[r["task_id"]]) / 8, 3) for r in rl})
print(f"rl: {len(rl)} rows from {len({r['task_id'] for r in rl})} tasks; their pass rates: {kept_rates}")
print(f"sft: {len(sft)} rows, one per task, every one passed: {all(r['reward'] == 1 for r in sft)}")
