"""Lesson 5: is agent B better than agent A? Run both on the same tasks and compare task by task (paired)."""
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


def run(share):
    """One eval run of a stand-in agent that spoils `share` of its rollouts, on the same 40 situations x 4."""
    agent = wai.seeded_agent([get_order], share=share)
    data = wai.simulate(agent, tools=[get_order], system_prompt="Help customers with orders.", simulator=False,
                        repeats=4, budget=160)
    return data.grade(judge=lambda row: {"reward": int(not row["seeded"])})


a, b = run(share=0.40), run(share=0.25)

# Unpaired: two pass rates, each with its own interval, and Newcombe's interval for their difference.
pa, pb = wai.pass_at(a), wai.pass_at(b)
print(f"A: pass@1 {pa.pass_at_1:.3f} [{pa.ci95[0]:.3f}..{pa.ci95[1]:.3f}]  B: pass@1 {pb.pass_at_1:.3f} "
      f"[{pb.ci95[0]:.3f}..{pb.ci95[1]:.3f}]  (40 tasks x 4 each)")
passed_a, passed_b = sum(r["reward"] for r in a.rows), sum(r["reward"] for r in b.rows)
lo, hi = wai.newcombe_interval(passed_b, len(b.rows), passed_a, len(a.rows))
print(f"unpaired difference {passed_b / len(b.rows) - passed_a / len(a.rows):+.3f} [{lo:+.3f}..{hi:+.3f}] "
      f"(Newcombe, treats the 160 rollouts of each side as independent)")

# Paired: each task's B rate minus its A rate, then the mean of those differences, its bootstrap interval
# over tasks and a sign-flip permutation p-value. The tasks' own difficulty cancels out.
print(wai.delta_report(a, b))
