"""The report reads the per-scenario numbers the gate stored in the run document (issue 31); for a document
without them it computes them with the gate's own function (``gate.compare.scenario_delta``), so both agree."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from whileai_core.gate.compare import scenario_delta
from whileai_core.report.inputs import as_inputs
from whileai_core.report.view import build_view

RUN = Path(__file__).resolve().parents[1] / "golden" / "run-whileai.run-1.json"  # a red run with its baseline


def _baseline_of(doc: dict) -> dict:
    """The baseline document the run was gated against, rebuilt from each entry's stored baseline counts."""
    scenarios = [{"key": e["key"], "nodeid": e["nodeid"], "k": e["k"], "judge": e["judge"],
                  "rewards": [1.0] * e["baseline"]["passes"] + [0.0] * (e["baseline"]["n_scored"] - e["baseline"]["passes"])}
                 for e in doc["scenarios"]]
    return {"schema": doc["schema"], "name": "main", "scenarios": scenarios, "gate": None}


def test_a_document_without_the_stored_deltas_reports_the_gates_numbers():
    doc = json.loads(RUN.read_text())
    doc["commit_info"] = doc["machine_info"] = {}  # blanked in the golden file
    stored = [e for e in doc["scenarios"] if e["delta"] is not None]
    assert stored and any(e["delta"] < 0 for e in stored)
    for e in stored:  # the plugin stored exactly what scenario_delta gives
        b = e["baseline"]
        assert scenario_delta(e["passes"], e["n_scored"], b["passes"], b["n_scored"], level=e["level"]) == {
            "delta": e["delta"], "delta_ci": e["delta_ci"], "p_value": e["p_value"]}
    bare = copy.deepcopy(doc)
    for e in bare["scenarios"]:
        e["delta"] = e["delta_ci"] = e["p_value"] = None
    base = _baseline_of(doc)
    read = build_view(as_inputs(doc, baseline=base, gate=doc["gate"]), repo=None)["scenarios"]
    computed = build_view(as_inputs(bare, baseline=base, gate=doc["gate"]), repo=None)["scenarios"]
    assert read == computed
    assert any("[" in r["text"] and r["value"] < 0 for r in read)
