"""End to end: the example project under the plugin (each key test in-process and under ``-n 2``)."""

from __future__ import annotations

import json

import pytest


def _doc(pytester: pytest.Pytester, name: str = "main") -> dict:
    return json.loads((pytester.path / ".whileai" / "baselines" / f"{name}.json").read_text())


def test_save_then_rerun_unchanged_is_green(run, example):
    first = run.save()
    assert first.ret == 0
    doc = _doc(example)
    assert doc["schema"] == "whileai.run/1" and doc["fingerprint"]["items"]["run_info"]["judge"] == "judge_v1"
    assert len(doc["scenarios"]) == 32 and all(len(s["rewards"]) == s["k"] for s in doc["scenarios"])
    assert {s["k"] for s in doc["scenarios"]} == {4, 8}
    again = run("--wai-baseline=main")
    assert again.ret == 0
    again.stdout.fnmatch_lines(["*suite gate: no regression: pass@1 * delta +0.000 *n=32 paired scenarios*"])
    again.assert_outcomes(passed=32)


def test_worse_agent_is_red_with_the_delta(run, example, monkeypatch):
    assert run.save().ret == 0
    monkeypatch.setenv("WAI_EXAMPLE_SHARE", "0.8")
    worse = run("--wai-baseline=main")
    assert worse.ret == 1
    worse.stdout.fnmatch_lines([
        ("*suite gate: REGRESSION: pass@1 0.* -> 0.*, delta -0.* [[]-0.*, -0.*[]] (95% scenario bootstrap), "
         "permutation p=*, n=32 paired scenarios*"),
    ])
    # the per-test floor of the pinned test fails with counts, interval, baseline, delta and a reproduce line
    worse.stdout.fnmatch_lines([
        "*whileai: tests/test_agent.py::test_refund_question did not meet its thresholds*",
        "*pass@1 0.* [[]0.*, 0.*[]] (*/8 trials passed, 95% Wilson) | baseline * | delta -0.*, one-sided p=*",
        "*reproduce: pytest \"tests/test_agent.py::test_refund_question\" --wai-seed=0 --wai-trial-index=*",
    ])


def test_custom_regression_exit_code(example, monkeypatch):
    assert example.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    monkeypatch.setenv("WAI_EXAMPLE_SHARE", "0.8")
    res = example.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main",
                                      "--wai-regression-exit-code=9", "-k", "order_desk")
    assert res.ret == 9


def test_corrupted_baseline_is_a_clear_error(run, example):
    assert run.save().ret == 0
    path = example.path / ".whileai" / "baselines" / "main.json"
    path.write_text(path.read_text()[:200])
    res = run("--wai-baseline=main")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*whileai: *main.json: not valid JSON (line *); the file is corrupted or truncated*"])


def test_incompatible_baselines_are_refused(run, example, monkeypatch):
    assert run.save().ret == 0
    # a different k: the scenarios cannot be paired; the run goes red, saying why
    res = run("--wai-baseline=main", "--wai-trials=6", "-k", "order_desk")
    assert res.ret == 1
    res.stdout.fnmatch_lines([("*suite gate: REFUSED: the baseline is not comparable for 31 scenario(s)*"
                               "k=6 trials now but k=4 in the baseline*")])
    # another configuration fingerprint: refused before any test runs
    res2 = run("--wai-baseline=main", "--wai-fingerprint=gpt-5")
    assert res2.ret == pytest.ExitCode.USAGE_ERROR
    res2.stderr.fnmatch_lines(["*measured under another configuration (fingerprint: baseline '', now 'gpt-5')*"])


def test_missing_baseline_warns_or_fails(example):
    res = example.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main")
    assert res.ret == 0
    res.stdout.fnmatch_lines(["*WaiWarning: whileai: --wai-baseline=main: no saved baseline*",
                              "*suite gate: gate not evaluated:*"])
    strict = example.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main", "--wai-require-baseline")
    assert strict.ret == pytest.ExitCode.USAGE_ERROR
    strict.stderr.fnmatch_lines(["*--wai-require-baseline is set*"])


def test_xdist_and_inprocess_give_identical_verdicts(example, monkeypatch):
    assert example.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    monkeypatch.setenv("WAI_EXAMPLE_SHARE", "0.6")
    a = example.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main", "--wai-json=a.json")
    b = example.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--wai-baseline=main", "--wai-json=b.json")
    assert a.ret == b.ret
    ga = json.loads((example.path / "a.json").read_text())
    gb = json.loads((example.path / "b.json").read_text())
    assert ga["scenarios"] == gb["scenarios"]
    for field in ("status", "red", "delta", "ci", "p_value", "n_paired", "holm", "scenario_regressions"):
        assert ga["gate"][field] == gb["gate"][field], field


def test_junit_xml_carries_the_properties(run, example, monkeypatch):
    from junitparser import JUnitXml
    from junitparser.xunit2 import TestCase

    assert run.save().ret == 0
    monkeypatch.setenv("WAI_EXAMPLE_SHARE", "0.8")
    res = run("--wai-baseline=main", "--wai-junitxml=out/wai.xml")
    assert res.ret == 1
    xml = JUnitXml.fromfile(str(example.path / "out" / "wai.xml"))
    suite = next(iter(xml))
    props = {p.name: p.value for p in suite.properties()}
    assert props["whileai.gate"] == "regression" and float(props["whileai.delta"]) < 0
    assert float(props["whileai.p"]) <= 0.05 and props["whileai.n_paired"] == "32"
    cases = {c.name: c for c in (TestCase.fromelem(e) for e in suite)}
    assert len(cases) == 32
    refund = cases["test_refund_question"]
    cp = {p.name: p.value for p in refund.properties()}
    assert cp["k"] == "8" and cp["baseline_n"] == "8" and float(cp["ci_low"]) <= float(cp["pass@1"])
    assert refund.result and refund.result[0].type == "WaiRegression"
    assert "baseline" in refund.result[0].message


def test_github_annotations_and_step_summary(example, monkeypatch):
    assert example.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    summary = example.path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(example.path))
    monkeypatch.setenv("WAI_EXAMPLE_SHARE", "0.8")
    res = example.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--wai-baseline=main")
    assert res.ret == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "## 🔴 whileai: regression" in text and "| scenario |" in text
    errors = [line for line in res.errlines if line.startswith("::error")]
    assert any("title=whileai gate%3A regression::REGRESSION" in e for e in errors)
    assert any(e.startswith("::error file=tests/test_agent.py,line=") for e in errors)
    assert len(errors) == len(set(errors))  # printed once, by the controller


def test_reordering_scenarios_keeps_keys_and_wai_key_pins_renames(pytester: pytest.Pytester):
    body = """
import pytest
ASKS = ["Where is order A1?", "Cancel order B2.", "What is my balance?"]

@pytest.mark.wai_scenarios({asks})
@pytest.mark.wai(trials=2)
def test_asks(wai_eval, wai_scenario):
    wai_eval.record([1.0, float(len(wai_scenario) % 2)])

@pytest.mark.wai_key("pinned")
@pytest.mark.wai(trials=2)
def {name}(wai_eval):
    wai_eval.record([1.0, 0.0])
"""
    pytester.makepyfile(test_a=body.format(asks="ASKS", name="test_old_name"))
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=b").ret == 0
    keys = {s["key"] for s in _doc(pytester, "b")["scenarios"]}
    assert "pinned" in keys and all(k.startswith(("test_a.py::test_asks[", "pinned")) for k in keys)
    pytester.makepyfile(test_a=body.format(asks="list(reversed(ASKS))", name="test_new_name"))
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=b", "--wai-json=now.json")
    assert res.ret == 0
    gate = json.loads((pytester.path / "now.json").read_text())["gate"]
    assert gate["n_paired"] == 4 and gate["new"] == [] and gate["not_run"] == []


def test_bad_marker_arguments_are_named(pytester: pytest.Pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.wai(trails=3)
def test_x(wai_eval):
    wai_eval.record([1.0] * 4)
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    res.assert_outcomes(errors=1)
    res.stdout.fnmatch_lines(["*test_x: unknown argument(s) trails; known: trials, min_pass_rate, *"])


def test_scenarios_marker_without_a_source_is_one_line(pytester: pytest.Pytester):
    """``wai_scenarios()`` with nothing to build scenarios from: the fix in one line, not pluggy's traceback."""
    pytester.makepyfile("""
import pytest

@pytest.mark.wai_scenarios()
def test_a(wai_eval, wai_scenario):
    pass
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    res.assert_outcomes(errors=1)
    one_line = ("WaiMarkerError: test_*.py::test_a: wai_scenarios: give a source (list of asks, JSONL path, "
                "callable) or tools=?...? for the covering array")
    res.stdout.fnmatch_lines([one_line])
    out = res.stdout.str()
    assert "pluggy/_hooks.py" not in out and "_hookexec" not in out and "Traceback" not in out, out


def test_a_pass_under_min_pass_rate_says_why(pytester: pytest.Pytester):
    """1/4 under min_pass_rate=0.5 passes (the whole interval must lie below the floor to fail); -v says so."""
    pytester.makepyfile("""
import pytest

@pytest.mark.wai(trials=4, min_pass_rate=0.5)
def test_low(wai_eval):
    wai_eval.record([1, 0, 0, 0])

@pytest.mark.wai(trials=4, min_pass_rate=0.5)
def test_at(wai_eval):
    wai_eval.record([1, 1, 0, 0])
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-v")
    res.assert_outcomes(passed=2)
    low = ("*::test_low PASSED (1/4 trials; pass@1 0.25 is under min_pass_rate=0.5, but its 95% interval "
           "?0.05, 0.70? still reaches it: not yet a failure, more trials decide)*")
    res.stdout.fnmatch_lines([low, "*::test_at PASSED (2/4 trials) *"])


def test_plugin_can_be_disabled_and_ini_twins_work(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\nwai_trials = 3\n")
    pytester.makepyfile("""
def test_k(wai_eval):
    r = wai_eval.record([1.0, 1.0, 0.0])
    assert r.k == 3 and r.passes == 2
""")
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    off = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:whileai")
    off.assert_outcomes(errors=1)
    off.stdout.fnmatch_lines(["*fixture 'wai_eval' not found*"])
    bad = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-trials=0")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--wai-trials: must be an int >= 1; got 0*"])


def test_reproduce_mode_runs_one_trial_and_never_saves(example):
    res = example.runpytest_inprocess("-p", "no:cacheprovider", "--wai-trial-index=2", "--wai-save=main",
                                      "-k", "refund")
    assert res.ret == 0
    res.stdout.fnmatch_lines(["*test_refund_question  1/1 *", "*gate off: reproduce mode*",
                              "*not saving a baseline in reproduce mode*"])
    assert not (example.path / ".whileai" / "baselines" / "main.json").exists()


def test_autosave_and_latest_branch_lookup(pytester: pytest.Pytester):
    pytester.makepyfile("""
def test_k(wai_eval):
    wai_eval.record([1.0, 1.0, 0.0, 1.0])
""")
    pytester.run("git", "init", "-q", "-b", "main")
    pytester.run("git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-autosave").ret == 0
    runs = sorted((pytester.path / ".whileai" / "runs").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith("0001_main_")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main", "--wai-autosave")
    assert res.ret == 0
    res.stdout.fnmatch_lines(["*baseline: main (*0001_main_*.json; commit * on main*"])
    assert len(list((pytester.path / ".whileai" / "runs").iterdir())) == 2


def test_the_old_wai_fixture_name_still_works_and_warns(pytester: pytest.Pytester):
    """``wai`` is ``wai_eval``'s deprecated name for one release: same handle, same scenario parametrization,
    a DeprecationWarning at the test's line naming wai_eval. The new name leaves ``import whileai as wai`` usable."""
    pytester.makepyfile(test_names="""
import pytest
import whileai as wai

@pytest.mark.wai_scenarios(["Where is order A1?", "Cancel order B2."])
@pytest.mark.wai(trials=2)
def test_old(wai):
    assert wai.scenario in ("Where is order A1?", "Cancel order B2.")
    wai.record([1.0, 1.0])

@pytest.mark.wai(trials=2)
def test_new(wai_eval):
    assert wai.__name__ == "whileai"  # the module, not the fixture
    wai_eval.record([1.0, 0.0])
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-json=r.json")
    res.assert_outcomes(passed=3, warnings=2)
    res.stdout.fnmatch_lines(["*test_names.py:4: DeprecationWarning: the wai fixture is now wai_eval*"])
    keys = sorted(s["key"] for s in json.loads((pytester.path / "r.json").read_text())["scenarios"])
    assert len(keys) == 3 and keys[0] == "test_names.py::test_new"
    strict = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-W", "error::DeprecationWarning")
    strict.assert_outcomes(passed=1, errors=2)
