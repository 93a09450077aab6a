"""The plugin's report outputs in one real run (a subprocess: MLflow is imported there, not in this process):
--wai-html, --wai-mlflow to a temp file store, -v trials per scenario, transcripts in --wai-json but not in
the saved baseline."""

from __future__ import annotations

import json

import pytest

SUITE = '''
import pytest

def agent(message):
    return {"steps": [{"tool": "lookup", "arguments": {"id": message}, "result": {"ok": True}}],
            "final_text": "done " + message, "model": "m", "usage": {"input_tokens": 40, "output_tokens": 10}}

def judge(row):
    bad = row["rollout_index"] % 2 == 1
    return {"reward": 0 if bad else 1, "reason": "odd trial" if bad else "fine"}

@pytest.mark.wai(trials=4)
@pytest.mark.parametrize("n", range(3))
def test_scenario(wai_eval, n):
    wai_eval.run(agent, f"case {n}", judge=judge)
'''


def test_html_mlflow_and_lean_baseline(pytester, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # reading the file store back from this process
    pytester.makepyfile(test_suite=SUITE)
    html, run, store = pytester.path / "r.html", pytester.path / "run.json", pytester.path / "mlruns"
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider", "--wai-save=main", f"--wai-html={html}",
                                           f"--wai-json={run}", "--wai-mlflow", f"--wai-mlflow-uri={store}")
    result.assert_outcomes(passed=3)
    opened = f"wrote MLflow run * at * (to see it: MLFLOW_ALLOW_FILE_STORE=true mlflow ui --backend-store-uri {store})"
    result.stdout.fnmatch_lines(["*test_scenario?0? PASSED (2/4 trials)*", f"wrote {html}", opened])
    # MLflow's own chatter stays out of the run's output: its "Creating a new experiment" INFO line (which landed
    # on pytest's progress line) and pandas' Pandas4Warning raised inside MLflow's log_table
    out = result.stdout.str() + result.stderr.str()
    assert "INFO mlflow" not in out and "Pandas4Warning" not in out and "warnings summary" not in out, out
    doc = json.loads(run.read_text())
    kept = doc["scenarios"][0]["transcripts"]
    assert [t["index"] for t in kept] == [1, 3] and kept[0]["reason"] == "odd trial"
    calls = [c for m in kept[0]["messages"] for c in m["tool_calls"]]
    assert calls == [{"name": "lookup", "arguments": '{"id": "case 0"}'}]
    assert [m["role"] for m in kept[0]["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert doc["scenarios"][0]["usage"] == {"m": {"input_tokens": 160, "output_tokens": 40}}
    saved = json.loads((pytester.path / ".whileai" / "baselines" / "main.json").read_text())
    assert all("transcripts" not in sc for sc in saved["scenarios"]) and saved["scenarios"][0]["usage"]
    page = html.read_text(encoding="utf-8")
    assert "odd trial" in page and "lookup" in page
    client = mlflow.tracking.MlflowClient(store.resolve().as_uri())
    (exp,) = [e for e in client.search_experiments() if e.name == "whileai"]
    (found,) = client.search_runs([exp.experiment_id])
    assert found.data.metrics["pass_at_1"] == pytest.approx(0.5) and found.data.metrics["tokens.input"] == 480
    assert {a.path for a in client.list_artifacts(found.info.run_id)} == {"r.html", "scenarios.json"}
