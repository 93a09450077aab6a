"""Issue 26 item 4, the table's row "a baseline that pairs with 0 scenarios, has ``scenarios: []``, one scenario,
or all-null rewards": green with a yellow line before, unless ``--wai-require-baseline``. In CI each is red now
(exit 1, ``1 failed`` on the final line, ``whileai::suite_gate`` failed in pytest's JUnit naming the reason),
and passes ungated only with ``--wai-allow-missing-baseline``; every baseline stays as it was.

Each baseline is what a real run (or whileai's own store writer, for the two shapes no run can save) wrote, so
its content hash holds; each run is pytest as CI runs it, in a fresh project."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pytest_whileai.gate.store import Store

SUITE = '''
import random

import pytest

ASKS = [f"please handle request number {{i}}" for i in range({n})]


@pytest.mark.wai_scenarios(ASKS)
def test_agent(wai_eval):
    wai_eval.record([float(random.Random(f"{{wai_eval.key}}-{{i}}").random() < 0.9) for i in wai_eval.trial_indices()])
'''

OTHER = '''
import pytest


@pytest.mark.parametrize("j", range(4))
def test_other(wai_eval, j):
    wai_eval.record([1.0, 1.0, 1.0, 0.0])
'''


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-trials=4", "--junitxml=junit.xml", *args)


def _final(res: pytest.RunResult) -> str:
    return [line for line in res.outlines if line.startswith("=")][-1]


def _gate_failure(pytester: pytest.Pytester) -> str | None:
    for case in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"):
        if case.get("name") == "suite_gate" and case.find("failure") is not None:
            return case.find("failure").get("message")
    return None


def _baselines(pytester: pytest.Pytester) -> dict[str, str]:
    """Save the four baselines that cannot gate an 8-scenario suite; leave the 8-scenario suite in place."""
    store = Store(pytester.path / ".whileai")
    other = pytester.makepyfile(test_other=OTHER)
    assert _run(pytester, "--wai-save=other").ret == 0  # another suite: pairs with 0 scenarios
    other.unlink()
    pytester.makepyfile(test_agent=SUITE.format(n=1))
    assert _run(pytester, "--wai-save=one").ret == 0  # one scenario
    pytester.makepyfile(test_agent=SUITE.format(n=8))
    assert _run(pytester, "--wai-save=main").ret == 0
    doc = json.loads((store.baselines / "main.json").read_text())
    store.save({**doc, "scenarios": []}, "empty")  # scenarios: [] (a hash that holds: whileai's own writer)
    nulls = [{**sc, "rewards": [None] * len(sc["rewards"]), "trial_states": ["abstention"] * len(sc["rewards"]),
              "passes": 0, "n_scored": 0, "pass_rate": None} for sc in doc["scenarios"]]
    store.save({**doc, "scenarios": nulls}, "nulls")  # every reward null: no scored scenario
    return {name: (store.baselines / f"{name}.json").read_text() for name in ("other", "one", "empty", "nulls")}


def test_a_baseline_that_cannot_gate_is_red_in_ci_unless_the_opt_out_is_set(pytester: pytest.Pytester, monkeypatch):
    saved = _baselines(pytester)
    for name in saved:
        monkeypatch.delenv("CI", raising=False)
        loose = _run(pytester, f"--wai-baseline={name}")  # outside CI: a warning, green (documented)
        assert loose.ret == 0, (name, loose.stdout.str()[-2000:])
        monkeypatch.setenv("CI", "true")
        red = _run(pytester, f"--wai-baseline={name}")
        assert red.ret == 1, (name, red.stdout.str()[-2000:])
        assert "1 failed, 8 passed" in _final(red), name
        message = _gate_failure(pytester)
        assert message is not None and "CI detected (CI is set)" in message, (name, message)
        allowed = _run(pytester, f"--wai-baseline={name}", "--wai-allow-missing-baseline")
        assert allowed.ret == 0 and "failed" not in _final(allowed) and _gate_failure(pytester) is None, name
    store = pytester.path / ".whileai" / "baselines"
    assert {n: (store / f"{n}.json").read_text() for n in saved} == saved  # each baseline as it was
