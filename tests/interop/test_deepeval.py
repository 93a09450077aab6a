"""deepeval test runs, written by ``deepeval.evaluate`` offline (a custom metric), read and gated: red on the
worse run, green on A/A, paired counts equal to the test cases deepeval ran, the metric that raised named."""

from __future__ import annotations

from interop_runs import ERRORED, MISS_EVERY, N_SAMPLES

from whileai_core.cli import main
from whileai_core.gate.compare import compare_documents
from whileai_core.interop.load import detect, load_results


def test_reader_keys_test_cases_by_name(deepeval_runs):
    assert detect(deepeval_runs["base"]) == "deepeval"
    got = load_results(deepeval_runs["base"])
    assert len(got.rows) == got.report.n_samples == N_SAMPLES
    assert {r["task_id"] for r in got.rows} == {f"deepeval/case-{i}" for i in range(N_SAMPLES)}
    assert {r["reward"] for r in got.rows} == {1.0} and got.report.scorer == "Refund:success"
    assert got.rows[0]["scenario"]["channel"] in ("email", "chat")


def test_metric_error_is_an_unscored_judge_error(deepeval_runs):
    got = load_results(deepeval_runs["worse"])
    errored = [r for r in got.rows if r["sample_id"] == f"case-{ERRORED}"]
    assert [r["trial_state"] for r in errored] == ["judge_error"] and "judge crashed" in errored[0]["error"]
    assert [s.sample for s in got.report.unscored] == [f"deepeval/case-{ERRORED} trial 1"]


def test_gate_red_on_worse_green_on_a_a(deepeval_runs, capsys):
    base, twin, worse = (load_results(deepeval_runs[k]).document() for k in ("base", "twin", "worse"))
    aa = compare_documents(base, twin)
    assert not aa.red and aa.n_paired == N_SAMPLES
    red = compare_documents(base, worse)
    assert red.red and red.n_paired == N_SAMPLES
    assert red.delta == -sum(1 for i in range(N_SAMPLES) if i % MISS_EVERY == 0 or i == ERRORED) / N_SAMPLES
    assert main(["gate", str(deepeval_runs["base"].parent), str(deepeval_runs["worse"].parent)]) == 1
    assert capsys.readouterr().out.startswith("REGRESSION")


def test_detected_from_streamed_top_level_keys(deepeval_runs, monkeypatch):
    from whileai_core import defaults as D

    monkeypatch.setattr(D, "INTEROP_DETECT_FULL_BYTES", 0)
    assert detect(deepeval_runs["base"]) == "deepeval"
