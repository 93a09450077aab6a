"""--wai-sequential and pooled baselines through real pytest runs (issue 21): early green on an unchanged agent,
early red on a broken one, the same verdict under -n 2 and on replay; BRANCH~N pools autosaved runs and flags a
flaky scenario."""

from __future__ import annotations

import json

import pytest

SUITE = '''
import os
import random

import pytest

ASKS = [f"please handle request number {{i}}" for i in range({n})]


def reward(key, i):
    """A trial's reward: each scenario has its own rate; RUN_SALT draws a new run, AGENT_RATE breaks the agent,
    FLAKY_KEY makes one scenario all-pass or all-fail by run. Called through the model cassette when one is on."""
    from whileai_core.models.config import settings

    salt = os.environ.get("RUN_SALT", "0")
    request = {{"model": "fake", "messages": [{{"role": "user", "content": f"{{key}}#{{i}}"}}], "salt": salt}}
    cache = getattr(settings, "cache", None)
    hit = cache.get(request) if cache is not None else None
    if hit is not None:
        return hit["reward"]
    if os.environ.get("FLAKY_KEY") and os.environ["FLAKY_KEY"] in key:
        value = float(int(salt) % 2 == 0)
    else:
        rate = random.Random(key).uniform(0.6, 1.0) * float(os.environ.get("AGENT_RATE", "1.0"))
        value = float(random.Random(f"{{salt}}-{{key}}-{{i}}").random() < rate)
    if cache is not None:
        cache.put(request, {{"reward": value}})
    return value


@pytest.mark.wai_scenarios(ASKS)
def test_agent(wai_eval):
    wai_eval.record([reward(wai_eval.key, i) for i in wai_eval.trial_indices()])
'''

SEQ = ("--wai-trials=8", "--wai-sequential", "--wai-max-drop=0.25", "--wai-baseline=main")


def _suite(pytester: pytest.Pytester, n: int = 40) -> None:
    pytester.makepyfile(test_agent=SUITE.format(n=n))


def _run(pytester: pytest.Pytester, *args: str, xdist: bool = False) -> pytest.RunResult:
    if xdist:
        return pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", *args)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def _doc(pytester: pytest.Pytester, name: str) -> dict:
    return json.loads((pytester.path / name).read_text())


def _verdict(doc: dict) -> tuple:
    gate = doc["gate"]
    seq = gate["sequential"]
    return (gate["status"], gate["red"], gate["delta"], seq["decision"], seq["round"], seq["trials_run"],
            [(s["key"], s["rewards"], s["trial_indices"]) for s in doc["scenarios"]])


def test_sequential_stops_early_green_and_red_the_same_under_xdist_and_on_replay(pytester: pytest.Pytester,
                                                                                 monkeypatch):
    _suite(pytester)
    assert _run(pytester, "--wai-trials=8", "--wai-save=main").ret == 0
    monkeypatch.setenv("RUN_SALT", "1")
    green = _run(pytester, *SEQ, "--wai-json=green.json", "--wai-record=cass.jsonl")
    assert green.ret == 0
    outcomes = green.parseoutcomes()
    assert outcomes["passed"] == 40 and outcomes["skipped"] == 120  # rounds 2-4 of 40 scenarios not needed
    green.stdout.fnmatch_lines(["*sequential: 1 of 4 round(s) of 2 trial(s) run; 80 of 320 trials of the fixed "
                                "design (75% saved); stopped early: no regression: the interval rules out a drop "
                                "larger than max_drop=0.25*"])
    doc = _doc(pytester, "green.json")
    assert doc["sequential"]["stopped_after_round"] == 1 and doc["gate"]["status"] == "ok"
    assert all(s["trial_indices"] == [0, 1] and s["k"] == 8 for s in doc["scenarios"])
    assert len((pytester.path / "cass.jsonl").read_text().splitlines()) == 80  # only the round that ran
    replay = _run(pytester, *SEQ, "--wai-json=replay.json", "--wai-replay=cass.jsonl")
    assert replay.ret == 0  # a round the recording never ran would be a CassetteMiss
    assert _verdict(_doc(pytester, "replay.json")) == _verdict(doc)
    par = _run(pytester, *SEQ, "--wai-json=green2.json", xdist=True)
    assert par.ret == 0
    assert _verdict(_doc(pytester, "green2.json")) == _verdict(doc)  # later rounds that ran are left out
    monkeypatch.setenv("AGENT_RATE", "0.3")
    red = _run(pytester, *SEQ, "--wai-json=red.json")
    assert red.ret == 1 and red.parseoutcomes()["skipped"] == 120
    red.stdout.fnmatch_lines(["*REGRESSION*sequential (obrien-fleming spending): regression after round 1 of 4*",
                              "*stopped early: regression*"])
    red2 = _run(pytester, *SEQ, "--wai-json=red2.json", xdist=True)
    assert red2.ret == 1
    assert _verdict(_doc(pytester, "red2.json")) == _verdict(_doc(pytester, "red.json"))


def test_branch_tilde_n_pools_three_autosaved_runs_and_flags_a_flaky_scenario(pytester: pytest.Pytester,
                                                                              monkeypatch):
    _suite(pytester, n=20)
    monkeypatch.setenv("GITHUB_REF_NAME", "main")  # the branch of the autosaved runs (no git checkout here)
    monkeypatch.setenv("FLAKY_KEY", "number-7-")
    for salt in ("0", "1", "2", "3"):
        monkeypatch.setenv("RUN_SALT", salt)
        assert _run(pytester, "--wai-trials=8", "--wai-autosave").ret == 0
    monkeypatch.setenv("RUN_SALT", "4")
    res = _run(pytester, "--wai-trials=8", "--wai-baseline=main~3", "--wai-json=run.json")
    assert res.ret == 0
    res.stdout.fnmatch_lines(["*pooled baseline: 3 run(s), suite pass@1 per run*",
                              "*flaky: test_agent.py::test_agent[[]please-handle-request-number-7-*passes per run "
                              "0/8/0 of 8/8/8, between-run variance beyond binomial noise*"])
    doc = _doc(pytester, "run.json")
    hist = doc["baseline_history"]
    assert hist["runs"] == ["0002_main_nocommit.json", "0003_main_nocommit.json", "0004_main_nocommit.json"]
    assert len(hist["flaky"]) == 1 and "number-7-" in hist["flaky"][0]
    flaky = next(s for s in doc["scenarios"] if "number-7-" in s["key"])
    assert flaky["baseline"]["n_scored"] == 3  # 24 pooled trials count as ~3: the runs disagree entirely
    steady = next(s for s in doc["scenarios"] if "number-3-" in s["key"])
    assert steady["baseline"]["n_scored"] >= 16
    missing = _run(pytester, "--wai-baseline=nosuch~3")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*no autosaved run of branch 'nosuch'*"])
