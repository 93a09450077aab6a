"""The agent under test: an offline stand-in (``wai.seeded_agent``) that spoils a known share of trials.

``WAI_EXAMPLE_SHARE`` sets that share, so the example can be made worse on purpose (0.8) to see the gate go red.
"""

from __future__ import annotations

import os

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped", "total": "42.00"}


@wai.tool
def cancel_order(order_id: str) -> dict:
    """Cancel an order by id."""
    return {"order_id": order_id, "status": "cancelled"}


TOOLS = [get_order, cancel_order]
SYSTEM_PROMPT = "Help customers with their orders. Confirm before cancelling anything."
SHARE = float(os.environ.get("WAI_EXAMPLE_SHARE", str(1 / 3)))
AGENT_SEED = int(os.environ.get("WAI_EXAMPLE_AGENT_SEED", "0"))

agent = wai.seeded_agent(TOOLS, share=SHARE, seed=AGENT_SEED)


def judge(row: dict) -> dict:
    """Reward 1 when the agent did the job; the seeded agent labels the trials it spoiled."""
    if row["seeded"]:
        return {"reward": 0, "reason": f"spoiled on purpose: {row['seeded_what']}"}
    return {"reward": 1, "reason": "followed the policy"}
