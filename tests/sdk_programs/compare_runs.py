# Before and after, paired by task: the delta, its interval and a p-value.
import whileai as wai

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    ...

def run(rate):
    data = wai.simulate(wai.seeded_agent([get_order], rate=rate), tools=[get_order],
                        system_prompt="Help customers with orders.", simulator=False, repeats=4, budget=96)
    return data.grade(judge=lambda row: int(not row["seeded"]))

before, after = run(0.4), run(0.1)
print(wai.compare(before, after))
