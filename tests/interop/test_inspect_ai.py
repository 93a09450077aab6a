"""inspect_ai logs, written by inspect running offline (mockllm), read and gated: red on the worse run, green
on the A/A twin, paired counts equal to the samples inspect ran, the errored sample named and unscored."""

from __future__ import annotations

import json

from interop_runs import EPOCHS, ERRORED, MISS_EVERY, N_SAMPLES

from whileai_core.cli import main
from whileai_core.gate.compare import compare_documents
from whileai_core.interop.load import detect, load_results


def test_reader_keys_trials_by_task_sample_and_epoch(inspect_runs):
    got = load_results(inspect_runs["base"])
    assert got.report.n_samples == N_SAMPLES * EPOCHS == len(got.rows)
    keys = {(r["task_id"], r["rollout_index"]) for r in got.rows}
    assert keys == {(f"desk/s-{i}", e) for i in range(N_SAMPLES) for e in range(EPOCHS)}
    assert {r["reward"] for r in got.rows} == {1.0}
    assert got.report.scorer == "says_target"
    row = next(r for r in got.rows if r["task_id"] == "desk/s-7")
    assert row["scenario"] == {"task": "desk", "topic": "orders", "hard": False}


def test_errored_sample_is_an_unscored_trial_named_in_the_report(inspect_runs):
    got = load_results(inspect_runs["worse"])
    errored = [r for r in got.rows if r["task_id"] == f"desk/s-{ERRORED}"]
    assert [r["trial_state"] for r in errored] == ["infra_error"] * EPOCHS
    assert all(r["reward"] is None and "tool crashed" in r["error"] for r in errored)
    assert len(got.report.unscored) == EPOCHS
    assert f"desk/s-{ERRORED} epoch 1" in got.report.summary() and "infra_error" in got.report.summary()
    doc = got.document()
    entry = next(e for e in doc["scenarios"] if e["key"] == f"desk/s-{ERRORED}")
    assert entry["trial_states"] == ["infra_error"] * EPOCHS and entry["rewards"] == [0.0] * EPOCHS  # policy fail


def test_gate_is_red_on_the_worse_run_and_green_on_a_a(inspect_runs):
    base, twin, worse = (load_results(inspect_runs[k]).document() for k in ("base", "twin", "worse"))
    aa = compare_documents(base, twin, baseline_name="base")
    assert not aa.red and aa.status == "ok" and aa.n_paired == N_SAMPLES
    red = compare_documents(base, worse, baseline_name="base")
    assert red.red and red.status == "regression" and red.n_paired == N_SAMPLES
    missed = sum(1 for i in range(N_SAMPLES) if i % MISS_EVERY == 0 or i == ERRORED)
    assert red.delta == -missed / N_SAMPLES


def test_cli_gate_reads_logs_and_folders(inspect_runs, capsys):
    assert detect(inspect_runs["base"]) == "inspect_ai"
    assert main(["gate", str(inspect_runs["base"]), str(inspect_runs["twin"].parent)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("no regression") and f"n={N_SAMPLES} paired scenarios" in out.out
    assert f"{N_SAMPLES * EPOCHS} samples -> {N_SAMPLES * EPOCHS} trials" in out.err
    assert main(["gate", str(inspect_runs["base"]), str(inspect_runs["worse"])]) == 1
    out = capsys.readouterr()
    assert out.out.startswith("REGRESSION") and f"desk/s-{ERRORED} epoch 1" in out.err


def test_compare_by_sample_metadata(inspect_runs):
    from whileai_core.measure.compare import compare

    before = load_results(inspect_runs["base"]).rows
    after = load_results(inspect_runs["worse"]).gate_rows()  # the errored sample counts as failed, as in the gate
    result = compare(before, after, by="topic")
    assert [s.name for s in result.slices] == ["billing", "orders", "returns"]
    by_name = {s.name: s for s in result.slices}
    assert by_name["billing"].delta == -1.0  # i % 3 == 0: every billing sample missed
    assert by_name["orders"].n_tasks == N_SAMPLES // 3


def test_a_json_log_streams_to_the_same_trials(inspect_runs, tmp_path):
    from inspect_ai.log import read_eval_log, write_eval_log

    json_log = tmp_path / "worse.json"
    write_eval_log(read_eval_log(str(inspect_runs["worse"])), str(json_log), format="json")
    assert detect(json_log) == "inspect_ai"
    from_eval, from_json = load_results(inspect_runs["worse"]), load_results(json_log)
    def trials(rows):
        return sorted(json.dumps({k: v for k, v in r.items() if k != "source"}, sort_keys=True) for r in rows)

    assert trials(from_json.rows) == trials(from_eval.rows)
    assert sorted(map(str, from_json.report.unscored)) == sorted(map(str, from_eval.report.unscored))


def test_a_large_json_log_is_detected_from_its_top_level_keys(inspect_runs, tmp_path, monkeypatch):
    from inspect_ai.log import read_eval_log, write_eval_log

    from whileai_core import defaults as D

    json_log = tmp_path / "base.json"
    write_eval_log(read_eval_log(str(inspect_runs["base"])), str(json_log), format="json")
    monkeypatch.setattr(D, "INTEROP_DETECT_FULL_BYTES", 0)  # every file counts as large: streamed keys only
    assert detect(json_log) == "inspect_ai"
