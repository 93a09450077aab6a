# Seed asks, the whole eval run three times, and the run-to-run noise band.
import random
import whileai as wai

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    ...

rng = random.Random(7)

def agent(message: str) -> dict:
    ok = rng.random() < 0.7  # a noisy agent: its runs differ
    return {"steps": [], "final_text": "Your order has shipped." if ok else "I don't know."}

seeds = ["Where is order A1001?", "Has order B2002 shipped?", "Track C3003 please", "Status of D4004?"]
data = wai.simulate(agent, tools=[get_order], system_prompt="Help customers with orders.", simulator=False,
                    seeds=seeds, repeats=4, runs=3, concurrency=1)
scored = data.grade(judge=lambda row: int("shipped" in row["final_text"]))
print(wai.eval_variance(scored.rows()))
