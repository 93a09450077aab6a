import pytest

import whileai as wai
from whileai_core.guard.contamination import decontaminate
from whileai_core.guard.trace import trace_markers


def test_decontaminate_names_fields_no_row_has():
    rows = [{"task_id": "a", "prompt": "what is two plus two", "final_text": "4", "reward": 1}]
    with pytest.raises(ValueError, match=r"fields=\['nope'\] appear in no row"):
        decontaminate(rows, ["what is two plus two"], fields=("nope",))
    clean, report = decontaminate(rows, ["what is two plus two"], fields=("prompt",), overlap=0.0, n=2)
    assert len(clean) == 0


def test_trace_markers_checks_kinds():
    rows = [{"task_id": "a", "prompt": "p", "final_text": "done.", "steps": [], "reward": 1}]
    with pytest.raises(TypeError, match="kinds= maps tool names"):
        trace_markers(rows, kinds=5)
    with pytest.raises(ValueError, match="kinds= values must be one of"):
        trace_markers(rows, kinds={"rm": "destroy"})
    assert len(trace_markers(rows, kinds={"rm": "delete"})) == 1


def test_concurrency_has_an_upper_bound():
    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""

    with pytest.raises(ValueError, match="MAX_CONCURRENCY"):
        wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], concurrency=100_000)
