"""A CI gate on a prompt change: run the agent with the old and the new system prompt on the same situations,
and go red only on a paired drop that clears its interval and the Holm-adjusted test; a re-run of the old prompt
must stay green (README.md beside this file)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # the --tiny/--full switch and the tiny model (recipes/common.py)

import whileai as wai

args = common.arguments(__doc__, trains=False)  # no torch: runs on [dev] alone
budget = 480 if not args.full else 4000
OLD = "Help customers with orders. Confirm before any change."
NEW = "Help customers with orders. Be fast."


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}


@wai.tool
def cancel_order(order_id: str) -> dict:
    """Cancel an order by id."""
    return {"order_id": order_id, "status": "cancelled"}


def agent_for(system_prompt, seed):
    """--tiny: a stand-in whose slips depend on the prompt (the new one skips confirmations more often).
    --full: your agent, built with this system prompt."""
    share = 0.15 if system_prompt == OLD else 0.35
    behaviors = None if system_prompt == OLD else ["skipped_confirmation"]
    return wai.seeded_agent([get_order, cancel_order], share=share, seed=seed, behaviors=behaviors)


def run(system_prompt, seed=0):
    """One eval run: the same situations (simulate's seed is fixed) with the agent under this prompt."""
    data = wai.simulate(agent_for(system_prompt, seed), tools=[get_order, cancel_order], system_prompt=system_prompt,
                        simulator=False, repeats=4, budget=budget, progress=False)
    return data.grade(judge=lambda row: {"reward": int(not row["seeded"])})


baseline = run(OLD)  # stored on main (the plugin: pytest --wai-save=main)
for label, candidate in (("re-run of the old prompt", run(OLD, seed=1)), ("the new prompt", run(NEW))):
    gate = wai.compare(baseline, candidate, by="tool")
    print(f"{label}: {'GREEN' if gate.ok else 'RED'}")
    print(gate)
