# SDK reference: report eval variance
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped"}

data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help customers with orders.",
                    simulator=False, repeats=4, budget=32, runs=3)
scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"])})
rep = wai.eval_variance(scored)
assert rep["n_runs"] == 3 and rep["run_std"] is not None and set(rep["means"]) == {"run_1", "run_2", "run_3"}
