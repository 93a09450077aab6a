"""The gate's verdict as CI meets it: a red gate is a failed test in pytest's final line, in both JUnit files
(read with ElementTree, as a CI reader reads them), in the exit code; too few pairs is loud (red under
--wai-require-baseline); a crashed xdist worker loses no finished scenario, is red, and saves nothing."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from whileai_core.gate import compare
from pytest_whileai.options import Settings

SUITE = """
import os
import pytest

BAD = os.environ.get("WAI_T_BAD") == "1"


@pytest.mark.wai(trials=4)
@pytest.mark.parametrize("i", range(40))
def test_s(wai_eval, i):
    # 0.9 -> 0.5 pass@1: every item keeps passing (no floor; at k=4 one scenario cannot reach significance),
    # only the suite delta sees the drop
    wai_eval.record([1, 1, 0, 0] if BAD else ([1, 1, 1, 0] if i < 16 else [1, 1, 1, 1]))
"""

OTHER_SUITE = """
import pytest


@pytest.mark.wai(trials=4)
@pytest.mark.parametrize("j", range(10))
def test_other(wai_eval, j):
    wai_eval.record([1, 1, 1, 1])
"""


@pytest.fixture(params=[[], ["-n", "2"]], ids=["inprocess", "xdist2"])
def runner(request: pytest.FixtureRequest, pytester: pytest.Pytester):
    """Run pytest in the pytester project, in-process or under ``-n 2`` (a subprocess: slow, so a test runs only its
    key red run that way and the rest in-process)."""

    def _run(*args: str) -> pytest.RunResult:
        if request.param:
            return pytester.runpytest_subprocess(*request.param, "-p", "no:cacheprovider", *args)
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)

    _run.xdist = bool(request.param)  # type: ignore[attr-defined]
    return _run


def _gate_case(path: Path) -> ET.Element | None:
    """The ``suite_gate`` testcase of a JUnit file, or None (ElementTree, as a CI reader parses it)."""
    root = ET.parse(path).getroot()
    return next((c for c in root.iter("testcase") if c.get("name") == "suite_gate"), None)


def _failures(path: Path) -> int:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    return sum(int(s.get("failures", "0")) for s in suites)


def test_suite_regression_is_a_failed_test_everywhere(runner, pytester: pytest.Pytester, monkeypatch):
    pytester.makepyfile(SUITE)
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    if not runner.xdist:
        green = runner("--wai-baseline=main", "--junitxml=green.xml")
        assert green.ret == 0
        green.assert_outcomes(passed=40)  # a green gate adds nothing to the final line
        assert _gate_case(pytester.path / "green.xml") is None and _failures(pytester.path / "green.xml") == 0

    monkeypatch.setenv("WAI_T_BAD", "1")
    res = runner("--wai-baseline=main", "--junitxml=out/pytest.xml", "--wai-junitxml=out/wai.xml", "-rA")
    assert res.ret == 1
    res.assert_outcomes(passed=40, failed=1)
    res.stdout.fnmatch_lines(["FAILED whileai::suite_gate - REGRESSION: pass@1 0.900 [[]0.8*",
                              "*= 1 failed, 40 passed in *"])
    for name in ("pytest.xml", "wai.xml"):
        path = pytester.path / "out" / name
        assert _failures(path) == 1, name
        case = _gate_case(path)
        assert case is not None and case.get("classname") == "whileai", name
        failure = case.find("failure")
        assert failure is not None, name
        message = failure.get("message")
        assert "delta -0.400 [-0.4" in message and "permutation p=" in message, message
        assert "n=40 paired scenarios (160 -> 160 scored trials)" in message, message
        assert "pass@1 0.900 [0.8" in message and "-> 0.500 [0.500, 0.500] (zero width: every paired" in message
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert props["whileai.gate"] == "regression" and props["whileai.n_paired"] == "40", name
        assert float(props["whileai.ci_high"]) < 0 and float(props["whileai.p"]) <= 0.05, name
    if not runner.xdist:  # --wai-regression-exit-code still sets the status; the final line is the same
        coded = runner("--wai-baseline=main", "--wai-regression-exit-code=9")
        assert coded.ret == 9
        coded.assert_outcomes(passed=40, failed=1)


def test_baseline_from_another_suite_is_loud_and_red_when_required(runner, pytester: pytest.Pytester, monkeypatch):
    other = pytester.makepyfile(test_other=OTHER_SUITE)
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=other").ret == 0
    other.unlink()
    pytester.makepyfile(test_suite=SUITE)
    monkeypatch.setenv("WAI_T_BAD", "1")
    if not runner.xdist:
        loose = runner("--wai-baseline=other", "--wai-markdown=loose.md")
        assert loose.ret == 0  # without --wai-require-baseline: a loud warning, not red
        loose.assert_outcomes(passed=40)
        loose.stdout.fnmatch_lines(["suite gate: UNPAIRED: only 0 of 10 scenario(s) that could pair with the "
                                    "baseline did (0% < 50%, --wai-min-paired-share*"])
        assert "## 🟠 whileai: unpaired" in (pytester.path / "loose.md").read_text()

    strict = runner("--wai-baseline=other", "--wai-require-baseline", "--junitxml=strict.xml", "-rA")
    assert strict.ret == 1
    strict.assert_outcomes(passed=40, failed=1)
    strict.stdout.fnmatch_lines(["FAILED whileai::suite_gate - UNPAIRED: only 0 of 10*"])
    case = _gate_case(pytester.path / "strict.xml")
    assert case is not None and "gate not evaluated: 0 scenario(s) pair" in case.find("failure").get("message")

    if runner.xdist:
        return
    # the share is an option with an ini twin; 0 turns the warning off (the gate is still not evaluated)
    pytester.makeini("[pytest]\nwai_min_paired_share = 0\n")
    quiet = runner("--wai-baseline=other")
    assert quiet.ret == 0 and "UNPAIRED" not in quiet.stdout.str()
    bad = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-min-paired-share=1.5")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--wai-min-paired-share: must be a share in [[]0, 1[]]; got 1.5*"])


CRASH = """
import os
import pytest

DONE = []


@pytest.mark.wai(trials=4)
@pytest.mark.parametrize("i", range(12))
def test_c(wai_eval, i):
    flag = os.path.join(os.path.dirname(__file__), "crashed.flag")
    if len(DONE) >= 3 and not os.path.exists(flag):  # one of 2 workers runs >= 6 of 12: some worker gets here
        open(flag, "w").write(os.environ["PYTEST_XDIST_WORKER"])
        os._exit(3)  # the first worker to finish 3 scenarios dies (which one depends on scheduling)
    wai_eval.record([1, 1, 1, 0])
    DONE.append(i)
"""


def test_crashed_worker_loses_no_finished_scenario_is_red_and_saves_nothing(pytester: pytest.Pytester):
    pytester.makepyfile(test_crash=CRASH)
    res = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--wai-save=main", "--wai-autosave",
                                        "--wai-json=r.json", "--wai-junitxml=w.xml")
    assert (pytester.path / "crashed.flag").exists()
    assert res.ret == 1
    res.assert_outcomes(passed=11, failed=2)  # the crashed item (xdist) and the red gate
    worker = (pytester.path / "crashed.flag").read_text()
    res.stdout.fnmatch_lines([f"*suite gate: INCOMPLETE: xdist worker(s) {worker} crashed; the 11 scenario(s) that "
                              "finished are reported*",
                              f"*note: not saving a baseline: xdist worker(s) {worker} crashed*"])
    doc = json.loads((pytester.path / "r.json").read_text())
    assert len(doc["scenarios"]) == 11  # every finished scenario, the crashed worker's 3 included
    assert doc["gate"]["status"] == "incomplete" and doc["gate"]["red"] and doc["gate"]["failed_workers"] == [worker]
    assert not (pytester.path / ".whileai" / "baselines").exists() and not (pytester.path / ".whileai" / "runs").exists()
    cases = list(ET.parse(pytester.path / "w.xml").getroot().iter("testcase"))
    assert len(cases) == 12 and _failures(pytester.path / "w.xml") == 1


# --- the gate's pairing rule, without pytest ------------------------------------------------------------------
def _settings() -> Settings:
    return Settings(trials=4, seed=0, level=0.95, alpha=0.05, max_drop=0.05, draws=500, permutations=2000,
                    power=0.8, baseline="main", require_baseline=False, storage=".whileai", save=None,
                    autosave=False, json=None, markdown=None, junitxml=None, github="off", regression_exit_code=1,
                    fingerprint="", record=None, replay=None, trial_index=None)


def _entry(key: str) -> dict:
    return {"key": key, "nodeid": key, "k": 4, "judge": "j", "rewards": [1.0, 1.0, 1.0, 0.0], "passes": 3,
            "n_scored": 4, "pass_rate": 0.75, "pass_reward": 1.0, "max_drop": 0.05}


def test_paired_share_below_the_minimum_warns_and_is_red_only_when_required():
    results = {f"t[{i}]": _entry(f"t[{i}]") for i in range(40)}
    index = {f"t[{i}]": _entry(f"t[{i}]") for i in range(30, 70)}  # 10 of 40 pair
    loose = compare.compute_gate(results, index, baseline_name="main", settings=_settings())
    assert loose.status == "unpaired" and not loose.red and loose.n_paired == 10 and loose.paired_share == 0.25
    assert loose.message.startswith("UNPAIRED: only 10 of 40") and loose.delta == 0
    strict = compare.compute_gate(results, index, baseline_name="main", settings=_settings(), require_baseline=True)
    assert strict.status == "unpaired" and strict.red
    enough = compare.compute_gate(results, index, baseline_name="main", settings=_settings(), min_paired_share=0.25)
    assert enough.status == "ok" and enough.warning is None
    # a -k subset pairs fully: the share is over the scenarios that could pair
    subset = compare.compute_gate({k: results[k] for k in ("t[30]", "t[31]")}, index, baseline_name="main",
                               settings=_settings(), require_baseline=True)
    assert subset.status == "ok" and not subset.red and subset.paired_share == 1.0
    crashed = compare.compute_gate(results, index, baseline_name="main", settings=_settings(), failed_workers=["gw1"])
    assert crashed.status == "incomplete" and crashed.red and "gw1 crashed" in crashed.message
