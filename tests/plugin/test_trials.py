"""What a scenario's trials can go through (issue 12, items 2, 7, 8, 11): an agent that raises, a backend that
fails, a judge that raises; None-safe one-line texts; the per-scenario estimator and the Holm check."""

from __future__ import annotations

import json
import math

import pytest
import scipy.stats as sps

from pytest_whileai.gate import lines, scenario
from pytest_whileai.report import markdown
from whileai_core.gate import compare, text
from whileai_core.measure.pass_at import pass_at

MODES = [[], ["-n", "2"]]
MODE_IDS = ["inprocess", "xdist2"]
FAST = ("--wai-draws=200", "--wai-permutations=200")  # the suite delta is not what these tests check


def _run(pytester: pytest.Pytester, extra: list[str], *args: str) -> pytest.RunResult:
    if extra:
        return pytester.runpytest_subprocess(*extra, "-p", "no:cacheprovider", *args)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def _json(pytester: pytest.Pytester, name: str) -> dict:
    return json.loads((pytester.path / name).read_text())


# --- item 2: an agent that raises ---------------------------------------------------------------------------
@pytest.mark.parametrize("extra", MODES, ids=MODE_IDS)
def test_an_agent_that_always_raises_is_red_and_named(pytester: pytest.Pytester, extra: list[str]):
    pytester.makepyfile("""
import pytest

def agent(message):
    return 1 / 0

@pytest.mark.wai(trials=4)
def test_raises(wai_eval):
    wai_eval.run(agent, "Hello", judge=lambda row: {"reward": 1})
""")
    res = _run(pytester, extra, "--wai-json=r.json")
    assert res.ret == 1
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines([
        "*pass@1 0.00 [[]0.00, 0.*[]] (0/4 trials passed, 4 agent errors, 95% Wilson)*",
        "*the agent raised on every scored trial (4 of 4): ZeroDivisionError: division by zero (first at trial 0)*",
    ])
    entry = _json(pytester, "r.json")["scenarios"][0]
    assert entry["rewards"] == [0.0] * 4 and entry["errors"] == 4 and entry["n_scored"] == 4
    assert entry["agent_error"] == "ZeroDivisionError: division by zero (first at trial 0)"


def test_agent_errors_are_failed_trials_never_judged(pytester: pytest.Pytester):
    pytester.makepyfile("""
import pytest

SEEN = []

def judge(row):
    SEEN.append(row["status"])
    return 1.0

def agent(message):
    if message.rollout_index % 2:
        raise ValueError("tool blew up\\nsecond line")
    return {"steps": [], "final_text": "done"}

@pytest.mark.wai(trials=4, min_pass_rate=0.9)
def test_half(wai_eval):
    wai_eval.run(agent, "Hello", judge=judge)

def test_judge_never_saw_an_error_row():
    assert SEEN == ["ok", "ok"]
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    res.assert_outcomes(failed=1, passed=1)
    res.stdout.fnmatch_lines([
        "*(2/4 trials passed, 2 agent errors, 95% Wilson)*",
        "*trials: 1 0 1 0*",
        "*the whole interval lies below min_pass_rate=0.9*",
        ("*the agent raised on 2 of 4 trial(s) (counted as failed trials, never graded): "
        "ValueError: tool blew up (first at trial 1)*"),
    ])
    assert "second line" not in res.stdout.str()


# --- items 2 and 7: every trial hits a failed backend, against a baseline -------------------------------------
@pytest.mark.parametrize("extra", MODES, ids=MODE_IDS)
def test_all_infra_errors_against_a_baseline(pytester: pytest.Pytester, monkeypatch, extra: list[str]):
    pytester.makepyfile("""
import os
import pytest

def agent(message):
    if os.environ.get("DOWN") == "1":
        from whileai_core.errors import BackendError
        raise BackendError("HTTP 503 after 4 tries")
    return {"steps": [], "final_text": "done"}

@pytest.mark.wai_scenarios(["one ask", "two asks"])
@pytest.mark.wai(trials=4)
def test_s(wai_eval):
    wai_eval.run(agent, judge=lambda row: 1.0)
""")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    monkeypatch.setenv("DOWN", "1")
    res = _run(pytester, extra, "--wai-baseline=main", "--wai-save=broken", "--wai-json=r.json", *FAST)
    assert res.ret == 1
    res.assert_outcomes(failed=3)  # both scenarios and the gate: INCOMPLETE (issue 26: every trial unscored)
    res.stdout.fnmatch_lines(["*not saving a baseline*the gate is INCOMPLETE*"])  # the save is refused, named
    res.stdout.fnmatch_lines(["*INCOMPLETE: 8 of 8 planned trials unscored (100%: 8 infra_error)*"])
    out = res.stdout.str()
    assert "TypeError" not in out and "Traceback" not in out
    res.stdout.fnmatch_lines([
        ("*pass@1 0.00 [[]0.00, 0.49[]] (0/4 trials passed, 4 unscored, 4 infra errors, 95% Wilson) | baseline 1.00 "
         "[[]0.51, 1.00[]] (4/4)"
        " | delta -1.00 *"),
        ("*no trial was scored (4 infra error(s), the backend failed: BackendError: HTTP 503 after 4 tries "
        "(first at trial 0)); a scenario with no scored trial is an error, not a pass*"),
    ])
    assert not (pytester.path / ".whileai" / "baselines" / "broken.json").exists()
    entries = _json(pytester, "r.json")["scenarios"]
    assert all(e["infra_errors"] == 4 and e["n_scored"] == 4 and e["passes"] == 0  # unscored counts as failed
               and e["trial_states"] == ["infra_error"] * 4 and "BackendError" in e["infra_error"] for e in entries)


# --- item 8: a judge that raises ------------------------------------------------------------------------------
def test_judge_errors_are_shown_with_their_text_and_count(pytester: pytest.Pytester):
    pytester.makepyfile("""
import pytest

def agent(message):
    return {"steps": [], "final_text": "done"}

def judge(row):
    return {"reward": row["no_such_field"]}

def half_judge(row):
    if row["rollout_index"] >= 2:
        raise RuntimeError("grader quota exceeded")
    return 0.0

@pytest.mark.wai(trials=4)
def test_all(wai_eval):
    wai_eval.run(agent, "Hello", judge=judge)

@pytest.mark.wai(trials=4, min_pass_rate=0.9)
def test_some(wai_eval):
    wai_eval.run(agent, "Hello", judge=half_judge)
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-json=r.json")
    res.assert_outcomes(failed=3)  # and the gate: INCOMPLETE, 6 of 8 trials unscored
    res.stdout.fnmatch_lines(["*INCOMPLETE: 6 of 8 planned trials unscored (75%: 6 judge_error)*"])
    res.stdout.fnmatch_lines([
        "*no trial was scored (4 judge error(s), the judge raised: KeyError: 'no_such_field' (first at trial 0))*",
    ])
    res.stdout.fnmatch_lines([
        "*the judge raised on 2 of 4 trial(s) (unscored): RuntimeError: grader quota exceeded (first at trial 2)*",
    ])
    by_name = {e["nodeid"].split("::")[-1]: e for e in _json(pytester, "r.json")["scenarios"]}
    assert by_name["test_all"]["judge_errors"] == 4
    assert by_name["test_all"]["judge_error"] == "KeyError: 'no_such_field' (first at trial 0)"
    assert by_name["test_some"]["judge_errors"] == 2 and by_name["test_some"]["unscored"] == 2


# --- item 7: None-safe texts -----------------------------------------------------------------------------------
def _entry(**over):
    e = {"key": "t::a", "nodeid": "t::a", "k": 4, "seed": 0, "metric": "pass@1", "value": None, "ci": None,
         "passes": 0, "n_scored": 0, "unscored": 4, "errors": 0, "infra_errors": 4, "level": 0.95,
         "rewards": [None] * 4, "trial_indices": [0, 1, 2, 3], "baseline": None, "delta": None, "p_value": None,
         "failures": ["no trial was scored"], "pass_reward": 1.0}
    e.update(over)
    return e


@pytest.mark.parametrize("over", [
    {},
    {"baseline": {"passes": 4, "n_scored": 4, "pass_rate": 1.0}},
    {"baseline": {"passes": 0, "n_scored": 0, "pass_rate": None}, "baseline_note": "x"},
    {"baseline_note": "none stored for this key", "level": None, "metric": "pass^k"},
    {"value": 0.5, "ci": [0.1, 0.9], "passes": 2, "n_scored": 4, "delta": None,
     "baseline": {"passes": 3, "n_scored": 4, "pass_rate": 0.75}},
    {"value": float("nan"), "ci": [None, None], "p_value": float("nan")},
], ids=["bare", "baseline", "empty-baseline", "note", "delta-none", "nan"])
def test_every_formatter_is_none_safe(over):
    e = _entry(**over)
    line = lines.summary_line(e)
    assert "n/a" in line and "None" not in line
    msg = scenario.failure_message(e, baseline_name="main")
    assert "reproduce: pytest" in msg and "None" not in msg
    g = compare.Gate("not evaluated", False, "m")
    row = markdown.table_rows({"t::a": e}, g)[0]
    assert "None" not in " ".join(row)


def test_formatters_on_numbers():
    assert text.fmt(None) == text.fmt(float("nan")) == text.fmt("x") == "n/a"
    assert text.fmt(0.125, 3, signed=True) == "+0.125" and text.fmt_p(2e-7) == "2e-07"
    assert text.fmt_ci([0.1, None]) == "[0.10, n/a]" and text.fmt_ci(None) == "[n/a]"
    assert lines.first_line("A: b\nc", 300) == "A: b" and lines.first_line("x" * 50, 10) == "xxxxxxx..."


def test_gate_and_junit_no_longer_import_the_fixture_module():
    import pathlib

    for mod in (scenario, __import__("pytest_whileai.report.junit", fromlist=["x"])):
        assert "pytest_whileai.fixtures" not in pathlib.Path(mod.__file__).read_text()


def test_unsaveable_names_the_empty_scenario():
    ok = {"a": _entry(n_scored=2, infra_errors=0)}
    assert scenario.unsaveable(ok) is None
    bad = {"a": ok["a"], "b": _entry(key="b", infra_error="BackendError: 503 (first at trial 0)")}
    why = scenario.unsaveable(bad)
    assert why is not None and why.startswith("1 of 2 scenario(s) have no scored trial (e.g. b: the backend failed")
    with pytest.raises(ValueError, match="refusing to save this run as a baseline"):
        scenario.require_saveable({"scenarios": list(bad.values())})


# --- item 11: one estimator, the Holm check at pass_reward, and when Holm cannot fire -------------------------
def test_pass_pow_k_is_the_unbiased_estimator_wai_pass_at_uses(pytester: pytest.Pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.wai(trials=8, metric="pass^k")
def test_seven_of_eight(wai_eval):
    wai_eval.record([1] * 7 + [0])
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-json=r.json")
    res.assert_outcomes(passed=1)
    res.stdout.fnmatch_lines(["*test_seven_of_eight  7/8     0.00 [[]0.00, 0.83[]]  -  *"])
    entry = _json(pytester, "r.json")["scenarios"][0]
    rows = [{"task_id": "t", "rollout_index": i, "reward": float(r)} for i, r in enumerate([1] * 7 + [0])]
    assert entry["value"] == pass_at(rows, k=8).pass_pow_k == 0.0
    assert entry["ci"][0] == 0.0 and 0.8 < entry["ci"][1] < 0.9  # holds the estimate; the plug-in 0.34 is gone
    assert "Holm p" not in res.stdout.str()  # no baseline: no Holm column
    # with n > k the unbiased estimate is inside the mapped Wilson interval: C(6,4)/C(8,4) = 3/14
    value, ci = scenario.metric_interval("pass^k", 6, 8, 4, 0.95)
    assert value == pytest.approx(3 / 14) and ci[0] < value < ci[1]


def test_holm_binarizes_both_sides_at_the_scenarios_pass_reward(pytester: pytest.Pytester, monkeypatch):
    pytester.makepyfile("""
import os
import pytest

@pytest.mark.wai_scenarios(["first ask", "second ask"])
@pytest.mark.wai(trials=8)
def test_s(wai_eval):
    reward = 0.0 if os.environ.get("BAD") == "1" else 0.7
    wai_eval.record([reward] * 8, pass_reward=0.5)
""")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    monkeypatch.setenv("BAD", "1")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main", "--wai-json=r.json", *FAST)
    assert res.ret == 1
    g = _json(pytester, "r.json")["gate"]
    assert g["status"] == "regression" and len(g["scenario_regressions"]) == 2
    p = 1 / math.comb(16, 8)  # 8/8 at reward 0.7 >= 0.5 before, 0/8 now
    assert sorted(g["holm"].values()) == pytest.approx([2 * p, 2 * p])
    assert g["holm_reach"]["possible"] is True
    res.stdout.fnmatch_lines(["*scenario*passed*Holm p*", "*0/8*0.000155*FAIL*"])
    assert "no single scenario can be flagged" not in res.stdout.str()  # at k=8, m=2 Holm can fire: no note


@pytest.mark.parametrize("bn,an", [(4, 4), (8, 8), (4, 8), (3, 5), (1, 1), (20, 20)])
def test_min_drop_p_is_fishers_most_extreme_table(bn: int, an: int):
    p = compare.min_drop_p(bn, an)
    assert p == pytest.approx(sps.fisher_exact([[bn, 0], [0, an]], alternative="greater").pvalue, rel=1e-12)
    assert p == pytest.approx(sps.hypergeom.sf(bn - 1, bn + an, bn, bn), rel=1e-12)
    # no other table with these margins goes lower
    others = [sps.hypergeom.sf(b - 1, bn + an, b + a, bn) for b in range(bn + 1) for a in range(an + 1) if b + a]
    assert min(others) == pytest.approx(p, rel=1e-12)


def test_holm_reach_at_k4():
    two = compare.holm_reach([(4, 4), (4, 4)], alpha=0.05)
    assert two["possible"] is False and two["min_p"] == pytest.approx(1 / 70) and two["k_needed"] == 5
    assert "1/C(8,4) = 0.0143" in two["text"] and "k >= 5" in two["text"]
    assert compare.holm_reach([(4, 4)], alpha=0.05)["possible"] is True  # m=1: 1/70 <= 0.025
    assert compare.holm_reach([(4, 4)] * 20, alpha=0.05)["k_needed"] == 6  # 1/C(12,6) = 1.1e-3 <= 0.025/20


def test_holm_note_once_and_no_dead_column_at_k4(pytester: pytest.Pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.wai_scenarios(["first ask", "second ask", "third ask"])
@pytest.mark.wai(trials=4)
def test_s(wai_eval):
    wai_eval.record([1, 0, 1, 0])
""")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main",
                                       "--wai-markdown=summary.md", *FAST)
    assert res.ret == 0
    out = res.stdout.str()
    md = (pytester.path / "summary.md").read_text()
    assert out.count("no single scenario can be flagged by Holm here") == 1
    res.stdout.fnmatch_lines([("*note: no single scenario can be flagged by Holm here: with 4 baseline vs 4 "
                              "scored trials the smallest one-sided exact p of a drop is 1/C(8,4) = 0.0143, "
                              "above Holm's first threshold alpha/2/m = 0.05/2/3 = 0.00833; k >= 5 trials "
                              "would make it possible*")])
    assert "Holm p" not in out and "Holm p" not in md and md.count("no single scenario can be flagged") == 1
