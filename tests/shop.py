"""A small shop of tools (get_order, cancel_order, refund_payment, ping, list_orders) and a judge, shared by
the edge-case tests of several packages."""

from __future__ import annotations

import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {}


@wai.tool
def cancel_order(order_id: str, reason: str = "") -> dict:
    """Cancel an order."""
    return {}


@wai.tool
def refund_payment(payment_id: str, amount: float) -> dict:
    """Refund a payment."""
    return {}


@wai.tool
def ping() -> str:
    """Check the service is up."""
    return "pong"


@wai.tool
def list_orders(limit: int = 10, status: str | None = None) -> list[dict]:
    """List recent orders."""
    return []


TOOLS = [get_order, cancel_order, refund_payment, ping, list_orders]


def not_seeded(row):
    return {"reward": 0 if row["seeded"] else 1}
