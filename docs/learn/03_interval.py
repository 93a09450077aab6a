"""Lesson 3: a pass rate is a count over a count, and it only means something with its interval and its n."""
import whileai as wai

# The same 70% pass rate, measured on more and more tries: the 95% Wilson interval narrows like 1/sqrt(n).
for passed, n in [(7, 10), (70, 100), (700, 1000)]:
    lo, hi = wai.wilson_interval(passed, n)
    print(f"{passed} of {n} passed: {passed / n:.2f} [{lo:.2f}..{hi:.2f}]")


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


# An agent run: 40 situations, one rollout each. The stand-in agent spoils a third of its rollouts on purpose,
# so the true pass rate is 0.67; the judge below reads that label (with your agent, it is your judge).
data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=1, budget=40)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
result = wai.pass_at(scored)
print(f"pass@1 {result.pass_at_1:.2f} [{result.ci95[0]:.2f}..{result.ci95[1]:.2f}] over {result.n_groups} tasks")
print(result)
