"""promptfoo's ``eval -o results.json``, written by its CLI offline (a JS provider), read and gated: red on the
worse run, green on A/A, paired counts equal to the test cases promptfoo ran, the errored test named."""

from __future__ import annotations

from interop_runs import ERRORED, MISS_EVERY, N_SAMPLES

from whileai_core.cli import main
from whileai_core.gate.compare import compare_documents
from whileai_core.interop.load import detect, load_results


def test_reader_keys_tests_by_their_vars(promptfoo_runs):
    assert detect(promptfoo_runs["base"]) == "promptfoo"
    got = load_results(promptfoo_runs["base"])
    assert len(got.rows) == got.report.n_samples == N_SAMPLES
    assert {r["sample_id"] for r in got.rows} == {f"n={i},op={['add', 'double'][i % 2]}" for i in range(N_SAMPLES)}
    assert {r["reward"] for r in got.rows} == {1.0}
    assert got.rows[0]["scenario"]["provider"] == "adder"


def test_errored_test_is_unscored_and_named(promptfoo_runs):
    got = load_results(promptfoo_runs["worse"])
    errored = [r for r in got.rows if r["scenario"]["n"] == ERRORED]
    assert [r["trial_state"] for r in errored] == ["infra_error"] and "tool crashed" in errored[0]["error"]
    assert [s.sample.split("/")[-1] for s in got.report.unscored] == [f"n={ERRORED},op=add repeat 1"]


def test_gate_red_on_worse_green_on_a_a(promptfoo_runs, capsys):
    base, twin, worse = (load_results(promptfoo_runs[k]).document() for k in ("base", "twin", "worse"))
    aa = compare_documents(base, twin)
    assert not aa.red and aa.n_paired == N_SAMPLES
    red = compare_documents(base, worse)
    assert red.red and red.n_paired == N_SAMPLES
    assert red.delta == -sum(1 for i in range(N_SAMPLES) if i % MISS_EVERY == 0 or i == ERRORED) / N_SAMPLES
    assert main(["gate", str(promptfoo_runs["base"]), str(promptfoo_runs["worse"])]) == 1
    assert capsys.readouterr().out.startswith("REGRESSION")


def test_compare_by_vars(promptfoo_runs):
    from whileai_core.measure.compare import compare

    after = load_results(promptfoo_runs["worse"]).gate_rows()
    result = compare(load_results(promptfoo_runs["base"]).rows, after, by="op")
    assert [s.name for s in result.slices] == ["add", "double"]


def test_detected_from_streamed_top_level_keys(promptfoo_runs, monkeypatch):
    from whileai_core import defaults as D

    monkeypatch.setattr(D, "INTEROP_DETECT_FULL_BYTES", 0)
    assert detect(promptfoo_runs["base"]) == "promptfoo"
