"""lm-evaluation-harness --log_samples output, written by lm-eval's own code offline (a local-file task, a
deterministic LM), read and gated: red on the worse run, green on A/A, paired counts equal to the docs lm-eval
evaluated."""

from __future__ import annotations

import json

from interop_runs import MISS_EVERY, N_SAMPLES

from whileai_core.cli import main
from whileai_core.gate.compare import compare_documents
from whileai_core.interop.load import detect, load_results


def test_reader_reads_samples_jsonl_with_the_metric(lm_eval_runs):
    got = load_results(lm_eval_runs["worse"])
    assert len(got.rows) == got.report.n_samples == N_SAMPLES
    assert got.report.scorer == "exact_match,none"
    assert {(r["task_id"], r["rollout_index"]) for r in got.rows} == {(f"arith/{i}", 0) for i in range(N_SAMPLES)}
    assert sum(r["reward"] for r in got.rows) == N_SAMPLES - len(range(0, N_SAMPLES, MISS_EVERY))
    assert got.rows[0]["scenario"]["doc.op"] in ("add", "double") and got.rows[0]["scenario"]["task"] == "arith"


def test_results_json_finds_its_samples_files(lm_eval_runs):
    results = next(lm_eval_runs["base"].rglob("results_*.json"))
    assert detect(results) == "lm_eval"
    samples = next(lm_eval_runs["base"].rglob("samples_*.jsonl"))
    assert detect(samples) == "lm_eval"
    assert len(load_results(results).rows) == len(load_results(samples).rows) == N_SAMPLES


def test_gate_red_on_worse_green_on_a_a(lm_eval_runs, capsys):
    base, twin, worse = (load_results(lm_eval_runs[k]).document() for k in ("base", "twin", "worse"))
    aa = compare_documents(base, twin)
    assert not aa.red and aa.n_paired == N_SAMPLES
    red = compare_documents(base, worse)
    assert red.red and red.status == "regression" and red.n_paired == N_SAMPLES
    assert main(["gate", str(lm_eval_runs["base"]), str(lm_eval_runs["worse"])]) == 1
    assert capsys.readouterr().out.startswith("REGRESSION")


def test_a_line_that_is_not_a_sample_is_named(lm_eval_runs, tmp_path):
    src = next(lm_eval_runs["base"].rglob("samples_*.jsonl"))
    bad = tmp_path / src.name
    bad.write_text(src.read_text(encoding="utf-8") + "{not json\n" + json.dumps({"x": 1}) + "\n", encoding="utf-8")
    got = load_results(bad)
    assert len(got.rows) == N_SAMPLES
    assert [s.sample for s in got.report.skipped] == [f"{src.name} line {N_SAMPLES + 1}",
                                                      f"{src.name} line {N_SAMPLES + 2}"]


def test_compare_by_doc_field(lm_eval_runs):
    from whileai_core.measure.compare import compare

    result = compare(load_results(lm_eval_runs["base"]).gate_rows(), load_results(lm_eval_runs["worse"]).gate_rows(),
                     by="doc.op")
    assert [s.name for s in result.slices] == ["add", "double"]
    assert sum(s.n_tasks for s in result.slices) == N_SAMPLES


def test_results_json_detected_from_streamed_top_level_keys(lm_eval_runs, monkeypatch):
    from whileai_core import defaults as D

    monkeypatch.setattr(D, "INTEROP_DETECT_FULL_BYTES", 0)
    assert detect(next(lm_eval_runs["base"].rglob("results_*.json"))) == "lm_eval"
