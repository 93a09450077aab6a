"""Scenario sources, judge and agent failures, hooks, cassette options, metrics and per-scenario drops."""

from __future__ import annotations

import json

import pytest


def _doc(pytester: pytest.Pytester, path: str) -> dict:
    return json.loads((pytester.path / path).read_text())


def test_jsonl_source_hook_loader_ids_and_budget(pytester: pytest.Pytester):
    pytester.makefile(".jsonl", asks='{"prompt": "Where is order A1?", "task_id": "t-a1"}\n'
                                     '{"prompt": "Cancel order B2."}\n{"prompt": "Refund C3."}\n')
    pytester.makeconftest("""
def pytest_whileai_load_scenarios(config, source, spec):
    if isinstance(source, str) and source.startswith("upper:"):
        return [w.upper() for w in source[6:].split(",")]
""")
    pytester.makepyfile("""
import pytest

@pytest.mark.wai_scenarios("asks.jsonl", budget=2)
@pytest.mark.wai(trials=2)
def test_file(wai_eval, wai_scenario):
    wai_eval.record([1.0, 1.0])

@pytest.mark.wai_scenarios("upper:ping,pong", ids=["first", "second"])
@pytest.mark.wai(trials=1)
def test_hooked(wai_eval, wai_scenario):
    assert wai_scenario.isupper()
    wai_eval.record([1.0])
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-v", "--wai-json=run.json")
    res.assert_outcomes(passed=4)
    res.stdout.fnmatch_lines(["*test_file?where-is-order-a1-t-a1? PASSED*", "*test_hooked?first? PASSED*"])
    doc = _doc(pytester, "run.json")
    keys = sorted(s["key"] for s in doc["scenarios"])
    assert len(keys) == 4 and any("t-a1" in k for k in keys)
    assert {s["prompt"] for s in doc["scenarios"] if "hooked" in s["key"]} == {"PING", "PONG"}


def test_judge_and_agent_failures_are_data(pytester: pytest.Pytester):
    pytester.makepyfile("""
import pytest

def flaky_judge(row):
    if row["rollout_index"] == 1:
        raise RuntimeError("judge backend down")
    return {"reward": 1.0 if row["status"] == "ok" else 0.0}

def agent(message):
    if message.rollout_index == 2:
        raise ValueError("tool blew up")
    if message.rollout_index == 4:
        from whileai_core.errors import BackendError
        raise BackendError("HTTP 503 after 4 tries")
    return {"steps": [], "final_text": "done"}

@pytest.mark.wai(trials=5)
def test_mixed(wai_eval):
    r = wai_eval.run(agent, "Hello", judge=flaky_judge)
    assert r.rewards == [1.0, 0.0, 0.0, 1.0, 0.0] and r.unscored == 2 and r.errors == 1  # unscored: failed
    assert r.trial_states == [None, "judge_error", "agent_error", None, "infra_error"]
    assert r.infra_errors == 1 and r.passes == 2 and r.n_scored == 5
    assert "2 unscored, 1 infra errors" in str(r)

@pytest.mark.wai(trials=2)
def test_all_unscored(wai_eval):
    wai_eval.run(agent, "Hello", judge=lambda row: {"no_reward": 1})
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1, failed=2)  # test_all_unscored, and the gate: INCOMPLETE (4 of 7 unscored)
    res.stdout.fnmatch_lines(["*INCOMPLETE: 4 of 7 planned trials unscored*"])
    res.stdout.fnmatch_lines(["*test_all_unscored did not meet its thresholds*",
                              "*trials: - -*", "*no trial was scored (2 judge error(s), the judge raised: InvalidArgument: "
                                                 "the judge returned a dict without 'reward'*(first at trial 0))*"])


def test_hooks_update_json_trial_finished_and_commit_info(pytester: pytest.Pytester):
    pytester.makeconftest("""
SEEN = []

def pytest_whileai_trial_finished(item, trial):
    SEEN.append((trial["key"], trial["index"], trial["reward"]))

def pytest_whileai_update_json(config, run_json):
    run_json["trials_seen"] = list(SEEN)

def pytest_whileai_generate_commit_info(config):
    return {"id": "f" * 40, "branch": "release", "dirty": False}

def pytest_whileai_update_run_info(config, run_info):
    run_info["model"] = "tiny-model"
""")
    pytester.makepyfile("""
import pytest

@pytest.mark.wai(trials=3)
def test_a(wai_eval):
    wai_eval.run(lambda m: {"steps": [], "final_text": "ok"}, "hi", judge=lambda row: 1.0)
""")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-json=r.json", "--wai-autosave").ret == 0
    doc = _doc(pytester, "r.json")
    assert doc["trials_seen"] == [["test_hooks_update_json_trial_finished_and_commit_info.py::test_a", i, 1.0]
                                  for i in range(3)]
    assert doc["commit_info"]["branch"] == "release" and doc["run_info"] == {"model": "tiny-model"}
    runs = list((pytester.path / ".whileai" / "runs").iterdir())
    assert [p.name for p in runs] == ["0001_release_ffffffffffff.json"]


def test_cassette_options_fail_clearly(pytester: pytest.Pytester):
    pytester.makepyfile("def test_x():\n    pass\n")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-replay=missing.jsonl")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--wai-replay=missing.jsonl: no cassette at missing.jsonl to replay*"])
    both = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-replay=a", "--wai-record=b")
    assert both.ret == pytest.ExitCode.USAGE_ERROR
    both.stderr.fnmatch_lines(["*--wai-record and --wai-replay exclude each other*"])
    rec = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-record=cass.jsonl")
    assert rec.ret == 0
    from whileai_core.models.config import settings

    assert getattr(settings, "cache", None) is None  # unconfigured again after the run


def test_pass_pow_k_metric_and_floor(pytester: pytest.Pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.wai(trials=4, metric="pass^k", min_pass_rate=0.9)
def test_reliable(wai_eval):
    r = wai_eval.record([1, 1, 1, 0])
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    res.assert_outcomes(failed=1)
    # the unbiased C(3,4)/C(4,4) = 0 (what wai.pass_at reports), the Wilson interval mapped by p^4 widened to hold it
    res.stdout.fnmatch_lines(["*pass^k 0.00 [[]0.00, 0.83[]] (3/4 trials passed*",
                              "*the whole interval lies below min_pass_rate=0.9*"])


def test_per_scenario_drop_fails_the_item_and_holm_flags_it(pytester: pytest.Pytester, monkeypatch):
    pytester.makepyfile("""
import os
import pytest

K = 20
BAD = os.environ.get("BAD") == "1"

@pytest.mark.wai_scenarios(["stable one", "stable two", "stable three", "the one that breaks"])
@pytest.mark.wai(trials=K)
def test_s(wai_eval, wai_scenario):
    breaks = BAD and "breaks" in wai_scenario
    wai_eval.record([0.0 if breaks else 1.0] * K)
""")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    monkeypatch.setenv("BAD", "1")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main", "--wai-json=r.json")
    assert res.ret == 1
    res.assert_outcomes(passed=3, failed=2)  # the dropped scenario's item, and the red gate (whileai::suite_gate)
    res.stdout.fnmatch_lines(["*pass@1 dropped -1.00 vs the baseline (one-sided exact p=* <= alpha/2/m = 0.05/2/4)*"])
    gate = _doc(pytester, "r.json")["gate"]
    assert len(gate["scenario_regressions"]) == 1 and "breaks" in gate["scenario_regressions"][0]
    assert gate["status"] == "regression"
    # the same verdict from the two stored documents, outside pytest
    from pytest_whileai import compare_documents

    again = compare_documents(_doc(pytester, ".whileai/baselines/main.json"), _doc(pytester, "r.json"),
                              baseline_name="main").to_dict()
    for field in ("status", "delta", "ci", "p_value", "n_paired", "holm", "scenario_regressions"):
        assert again[field] == gate[field], field


def test_scenarios_decorator_repeats_and_fixtures(pytester: pytest.Pytester):
    pytester.makepyfile("""
import pytest
from pytest_whileai import scenarios

@scenarios(["one ask", "two asks"], repeats=3)
def test_deco(wai_eval, wai_baseline, wai_session):
    assert wai_eval.trials == 3 and wai_eval.scenario in ("one ask", "two asks")
    assert wai_session.settings.trials == 4
    r = wai_eval.record([1.0, 1.0, 1.0])
    if wai_session.baseline is not None:
        assert wai_baseline["k"] == 3 and wai_baseline["rewards"] == [1.0, 1.0, 1.0]
        # at --wai-level=0.9: the baseline's Wilson interval, and Newcombe's for the delta of 3/3 vs 3/3
        assert r.baseline == {"passes": 3, "n_scored": 3, "pass_rate": 1.0, "ci": pytest.approx([0.5258044, 1.0])}
        assert r.delta == 0.0 and r.delta_ci == pytest.approx([-0.4741956, 0.4741956])

@scenarios(["x"], repeats=3)
@pytest.mark.wai(trials=2)
def test_marker_wins(wai_eval):
    assert wai_eval.trials == 2
    wai_eval.record([1.0, 0.0])
""")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main", "--wai-level=0.9")
    res.assert_outcomes(passed=3)
    res.stdout.fnmatch_lines(["*90% Wilson per scenario*"])
    with pytest.raises(ValueError, match="repeats= must be an int >= 1"):
        from pytest_whileai.markers import scenarios

        scenarios(["a"], repeats=0)
