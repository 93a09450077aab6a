"""Lesson 4: k tries of the same task. pass^k (all k pass) is reliability; pass@k (at least one passes) is reach."""
import whileai as wai

# One task the agent solves 3 times in 4: on four fresh tries, how likely are all four, or at least one, to pass?
p = 0.75
print(f"p={p}: pass^4 = p**4 = {p ** 4:.3f}; pass@4 = 1 - (1-p)**4 = {1 - (1 - p) ** 4:.3f}")


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


# 24 situations, 4 rollouts each: k=4 tries per task.
data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, repeat_policy="fixed", budget=96)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})

passes: dict[str, int] = {}
for row in scored.rows:
    passes[row["task_id"]] = passes.get(row["task_id"], 0) + row["reward"]
counts = sorted(passes.values())
print("passes out of 4, per task:", counts)
print(f"tasks with all 4 passing: {counts.count(4)} of {len(counts)}; with none: {counts.count(0)}")

# pass^4 and pass@4 estimated from each task's c of n (unbiased), with intervals over tasks.
print(wai.pass_at(scored))
