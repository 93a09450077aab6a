"""Key stability under suite growth: the share of a suite's scenario keys (task ids) that still pair after it gains a
tool, a stance or a budget (issue 12 item 4). Run: ``python benchmarks/bench_key_stability.py``. Deterministic."""

import whileai as wai
from whileai_core.simulate.situations import STANCES, situations

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
@wai.tool
def cancel_order(order_id: str) -> dict:
    """Cancel an order by id."""
@wai.tool
def refund_order(order_id: str) -> dict:
    """Refund an order by id."""
@wai.tool
def list_stores(city: str) -> dict:
    """List stores."""

def keys(tools, **kw):
    return [s.task_id for s in situations(tools, **kw)]

def share(old, new):
    kept = len(set(old) & set(new))
    return f"{kept}/{len(set(old))} = {kept/len(set(old)):.2f} (sizes {len(old)} -> {len(new)})"

T2 = [get_order, cancel_order]
print("add a tool (append)          ", share(keys(T2), keys(T2 + [refund_order])))
print("add a tool (prepend)         ", share(keys(T2), keys([refund_order] + T2)))
print("add a tool to 1 tool         ", share(keys([get_order]), keys([get_order, cancel_order])))
print("add a stance                 ", share(keys(T2), keys(T2, stances=STANCES + ("angry",))))
print("add a stance, 1 tool         ", share(keys([get_order]), keys([get_order], stances=STANCES + ("angry",))))
full = len(keys(T2))
print("budget full -> full+20       ", share(keys(T2), keys(T2, n=full + 20)))
print("budget 16 -> 32              ", share(keys(T2, n=16), keys(T2, n=32)))
print("add a tool at fixed budget 16", share(keys(T2, n=16), keys(T2 + [refund_order], n=16)))
print("full-cover sizes: 1 tool", len(keys([get_order])), "2 tools", full, "3 tools",
      len(keys(T2 + [refund_order])))
