"""The typed shapes of the run document (``whileai_core.gate.document``) against what the plugin writes."""

from __future__ import annotations

import dataclasses
import json
import typing

import pytest

from whileai_core.gate.compare import Gate, GateStatus
from whileai_core.gate.document import RunDocument, ScenarioEntry, load_document


def test_a_run_document_has_the_typed_shapes(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """The TypedDicts name every key the plugin writes: a saved baseline and a red run's document (through
    ``wai_eval.run``, so the trial extras are there) carry no key that ``RunDocument`` / ``ScenarioEntry`` lack,
    and the gate's status is a ``GateStatus``."""
    pytester.makepyfile("""
import os
import pytest

def agent(message):
    return {"steps": [], "final_text": "broken" if os.environ.get("BAD") and "two" in message else "fine"}

@pytest.mark.wai_scenarios(["case one", "case two", "case three", "case four"])
@pytest.mark.wai(trials=8)
def test_s(wai_eval, wai_scenario):
    wai_eval.run(agent, judge=lambda row: {"reward": float(row["final_text"] == "fine")})
""")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    monkeypatch.setenv("BAD", "1")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main", "--wai-json=r.json")
    assert res.ret == 1, res.stdout.str()
    for path in (pytester.path / ".whileai" / "baselines" / "main.json", pytester.path / "r.json"):
        doc = json.loads(path.read_text())
        assert set(doc) <= set(RunDocument.__annotations__), set(doc) - set(RunDocument.__annotations__)
        assert doc["scenarios"] and load_document(path)["scenarios"] == doc["scenarios"]
        for entry in doc["scenarios"]:
            assert set(entry) <= set(ScenarioEntry.__annotations__), set(entry) - set(ScenarioEntry.__annotations__)
    # the last one read is the red run's: its entries carry the trial extras and the baseline comparison
    assert all({"transcripts", "usage", "budget_stop", "p_threshold", "delta_ci"} <= set(e) for e in doc["scenarios"])
    gate = doc["gate"]
    assert set(gate) == {f.name for f in dataclasses.fields(Gate)}
    assert gate["status"] == "regression" and gate["status"] in typing.get_args(GateStatus)
