# SDK reference: top level preflight
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {}
rep = wai.preflight([get_order], "Help.\n\n1. Never refund without a receipt.\n2. Confirm before cancelling.", rule_cap=1)
assert rep["cells"] > 0 and rep["n_rules_total"] == 2 and rep["rules_truncated"] and rep["warnings"] == []
