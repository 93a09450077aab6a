"""MLflow: a run logged to a temporary file store and read back (metrics, tags, the scenario table, the report)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import whileai as wai
from whileai_core.report.inputs import as_inputs
from whileai_core.report.view import build_view

mlflow = pytest.importorskip("mlflow")


def _doc(name: str, rewards: dict[str, list[float]]) -> dict:
    return {"schema": "whileai.run/1", "name": name, "created": "2026-12-01T00:00:00Z", "fingerprint": {},
            "commit_info": {"id": "abc123", "branch": "main"},
            "scenarios": [{"key": k, "k": len(r), "rewards": r, "judge": "j",
                           "usage": {"m": {"input_tokens": 100 * len(r), "output_tokens": 10 * len(r)}}}
                          for k, r in rewards.items()]}


def test_a_run_logged_to_a_file_store_reads_back(tmp_path):
    before = _doc("base", {f"s{i}": [1, 1, 1, 0] for i in range(6)})
    after = _doc("now", {f"s{i}": [1, 0, 0, 0] for i in range(6)})
    store = tmp_path / "mlruns"
    run_id = wai.log_mlflow(after, baseline=before, uri=store, run_name="pr-1",
                            prices={"m": {"input": 1.0, "output": 2.0}})
    client = mlflow.tracking.MlflowClient(store.resolve().as_uri())
    run = client.get_run(run_id)
    m = run.data.metrics
    assert m["pass_at_1"] == pytest.approx(0.25) and m["baseline.pass_at_1"] == pytest.approx(0.75)
    assert m["pass_at_1.ci_low"] <= 0.25 <= m["pass_at_1.ci_high"]
    view = build_view(as_inputs(after, baseline=before), repo=None)
    assert m["suite.delta"] == pytest.approx(-0.5) == pytest.approx(view["gate"]["delta"])
    assert [m["suite.delta.ci_low"], m["suite.delta.ci_high"]] == pytest.approx(view["gate"]["ci"])
    assert m["scenarios"] == 6 and m["tokens.input"] == 2400 and m["tokens.output"] == 240
    assert m["cost.dollars"] == pytest.approx(2400 * 1.0 / 1e6 + 240 * 2.0 / 1e6)
    assert run.data.tags["whileai.gate"] == "regression"
    files = {a.path for a in client.list_artifacts(run_id)}
    assert {"scenarios.json", "whileai-report.html"} <= files
    table = json.loads(Path(client.download_artifacts(run_id, "scenarios.json", str(tmp_path))).read_text())
    assert len(table["data"]) == 6 and {"value", "ci_low", "ci_high", "text"} <= set(table["columns"])


def test_training_curves_are_logged_with_their_steps(tmp_path):
    from whileai_core.train.curves import log_training

    history = [{"step": 1, "loss": 2.0, "learning_rate": 1e-4}, {"step": 2, "loss": 1.5}, {"step": 3, "loss": 1.2}]
    run_id = log_training(history, uri=tmp_path / "mlruns", params={"method": "sft"})
    client = mlflow.tracking.MlflowClient((tmp_path / "mlruns").resolve().as_uri())
    curve = client.get_metric_history(run_id, "loss")
    assert [(p.step, p.value) for p in sorted(curve, key=lambda p: p.step)] == [(1, 2.0), (2, 1.5), (3, 1.2)]
    assert client.get_run(run_id).data.params["method"] == "sft"
