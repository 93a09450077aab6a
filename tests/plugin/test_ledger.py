"""Issue 26 item 1: every planned trial ends scored or unscored with a reason; unscored trials count as failures
by default, ``--wai-unscored=drop`` says what it dropped, and too many unscored trials make the run INCOMPLETE.

Each test builds a fresh project, runs pytest as CI would and reads the exit code, the final line and the JUnit
file pytest writes (``--junitxml``) and the scenario-level one (``--wai-junitxml``)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from fakeserver import FakeServer

from whileai_core.gate.ledger import Ledger, gate_rewards, unscored_verdict

# A half-bad agent (odd trials reply "bad") and a judge that breaks only on the bad replies, in the way FAULT says.
JUDGED = '''
import math
import os
import pytest

ASKS = [f"ask number {{i}}" for i in range({n})]

def agent(message):
    bad = os.environ.get("BAD") == "1" and message.rollout_index % 2
    return {{"steps": [], "final_text": "bad" if bad else "good"}}

def judge(row):
    if row["final_text"] == "good":
        return 1.0
    fault = os.environ.get("FAULT")
    if fault == "raise":
        raise RuntimeError("judge backend gave up")
    if fault == "nan":
        return {{"reward": math.nan}}
    if fault == "none":
        return None
    return 0.0

@pytest.mark.wai_scenarios(ASKS)
@pytest.mark.wai(trials=4)
def test_agent(wai_eval):
    wai_eval.run(agent, judge=judge)
'''


def _project(pytester: pytest.Pytester, n: int = 12) -> None:
    pytester.makepyfile(test_agent=JUDGED.format(n=n))


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "--junitxml=junit.xml",
                                        "--wai-junitxml=wai.xml", "--wai-json=run.json", *args)


def _junit_gate(pytester: pytest.Pytester, name: str) -> str | None:
    """The failure message of the suite gate's testcase in a JUnit file (None when it has none)."""
    root = ET.parse(pytester.path / name).getroot()
    for case in root.iter("testcase"):
        if case.get("name") == "suite_gate":
            fail = case.find("failure")
            return None if fail is None else fail.get("message")
    return None


def _final(res: pytest.RunResult) -> str:
    return [line for line in res.outlines if line.startswith("=")][-1]


@pytest.mark.parametrize("fault", ["raise", "nan", "none"])
def test_a_judge_that_breaks_on_the_bad_replies_is_incomplete_not_green(pytester: pytest.Pytester, monkeypatch,
                                                                        fault: str):
    _project(pytester)
    monkeypatch.setenv("BAD", "1")
    monkeypatch.setenv("FAULT", fault)
    res = _run(pytester)
    assert res.ret == 1
    assert "1 failed, 12 passed" in _final(res)
    reason = {"raise": "judge_error", "nan": "nan_verdict", "none": "none_verdict"}[fault]
    res.stdout.fnmatch_lines([(f"*INCOMPLETE: 24 of 48 planned trials unscored (50%: 24 {reason}), above "
                               "--wai-max-unscored=0.05*")])
    for name in ("junit.xml", "wai.xml"):
        message = _junit_gate(pytester, name)
        assert message is not None and "INCOMPLETE" in message and f"24 {reason}" in message
    doc = json.loads((pytester.path / "run.json").read_text())
    assert doc["gate"]["status"] == "incomplete" and doc["gate"]["red"]
    assert doc["gate"]["ledger"]["current"] == {"planned": 48, "scored": 24, "unscored": {reason: 24},
                                                "missing": 24, "share": 0.5}
    sc = doc["scenarios"][0]
    assert sc["trial_states"] == [None, reason, None, reason] and sc["pass_rate"] == 0.5  # counted as failed


def test_unscored_policy_fail_counts_them_as_failures_in_the_paired_delta(pytester: pytest.Pytester, monkeypatch):
    """The judge breaks only on the bad replies: counted as failures (default) the drop is red; dropped, it
    hides (the explicit choice is printed with the share it dropped)."""
    _project(pytester)
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0  # a good agent
    monkeypatch.setenv("BAD", "1")
    monkeypatch.setenv("FAULT", "raise")
    fail = _run(pytester, "--wai-baseline=main", "--wai-max-unscored=1")
    assert fail.ret == 1 and "1 failed, 12 passed" in _final(fail)
    assert "REGRESSION" in (_junit_gate(pytester, "junit.xml") or "")
    fail.stdout.fnmatch_lines([("*REGRESSION*24 of 48 planned trials unscored (50%: 24 judge_error); baseline 0 "
                                "of 48 (0%); counted as failed trials*")])
    drop = _run(pytester, "--wai-baseline=main", "--wai-max-unscored=1", "--wai-unscored=drop")
    assert drop.ret == 0 and "12 passed" in _final(drop) and "failed" not in _final(drop)
    drop.stdout.fnmatch_lines(["*--wai-unscored=drop left 50.0% of the planned trials out of the rates*"])
    assert _junit_gate(pytester, "junit.xml") is None
    strict = _run(pytester, "--wai-baseline=main", "--wai-max-unscored=1", "--wai-unscored=incomplete")
    assert strict.ret == 1 and "INCOMPLETE" in (_junit_gate(pytester, "junit.xml") or "")
    strict.stdout.fnmatch_lines(["*--wai-unscored=incomplete allows none*"])


HTTP = '''
import os
import pytest
from whileai_core.models.openai import OpenAI

ASKS = [f"ask number {i}" for i in range(8)]

def agent(message):
    words = "please " * (400 if message.rollout_index % 2 else 1)  # odd trials overflow the context: HTTP 400
    model = OpenAI("gpt-test", url=os.environ["FAKE_URL"], backoff_s=0.001, backoff_cap_s=0.002, timeout=5.0)
    reply = model.complete([{"role": "user", "content": words + str(message)}])
    return {"steps": [], "final_text": reply.text}

@pytest.mark.wai_scenarios(ASKS)
@pytest.mark.wai(trials=4)
def test_agent(wai_eval):
    wai_eval.run(agent, judge=lambda row: 1.0)
'''


def test_half_the_trials_get_http_400_is_incomplete(pytester: pytest.Pytester, monkeypatch):
    pytester.makepyfile(test_agent=HTTP)
    with FakeServer(max_body=1000) as srv:
        monkeypatch.setenv("FAKE_URL", srv.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        res = _run(pytester)
    assert res.ret == 1
    assert "1 failed, 8 passed" in _final(res)
    res.stdout.fnmatch_lines(["*INCOMPLETE: 16 of 32 planned trials unscored (50%: 16 infra_error)*"])
    for name in ("junit.xml", "wai.xml"):
        assert "16 infra_error" in (_junit_gate(pytester, name) or "")


def test_ledger_units():
    states = [None, "judge_error", "agent_error", "abstention", None]
    assert gate_rewards([1.0, None, 0.0, None, 0.0], states, "fail") == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert gate_rewards([1.0, None, 0.0, None, 0.0], states, "drop") == [1.0, None, 0.0, None, 0.0]
    led = Ledger().add_states(states)
    assert (led.planned, led.scored, led.missing) == (5, 2, 2) and led.unscored["agent_error"] == 1
    assert unscored_verdict(led, None, policy="fail", max_unscored=0.5) is None
    assert "above --wai-max-unscored=0.1" in unscored_verdict(led, None, policy="drop", max_unscored=0.1)
    assert "allows none" in unscored_verdict(led, None, policy="incomplete", max_unscored=0.5)
    with pytest.raises(ValueError, match="unknown trial state"):
        Ledger().add_states(["lost"])
