"""The gate keeps its statistical promises: every number it prints has its interval and n, a NaN reward in a
document is an error (never a failure), and two scenarios never share a baseline key."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from pytest_whileai import collect, markers
from pytest_whileai.gate import scenario as gate_scenario
from pytest_whileai.options import Settings
from pytest_whileai.report import markdown as report
from whileai_core import errors
from whileai_core.gate import compare
from whileai_core.measure.delta import delta_report
from whileai_core.measure.stats import newcombe_interval, wilson_interval


def settings(**kw) -> Settings:
    base = {"trials": 4, "seed": 0, "level": 0.95, "alpha": 0.05, "max_drop": 0.05, "draws": 2000,
            "permutations": 10000, "power": 0.8, "baseline": "main", "require_baseline": False, "storage": ".whileai",
            "save": None, "autosave": False, "json": None, "markdown": None, "junitxml": None, "github": "off",
            "regression_exit_code": 1, "fingerprint": "", "record": None, "replay": None, "trial_index": None}
    base.update(kw)
    return Settings(**base)


def scenario(key: str, rewards: list, baseline: dict | None = None) -> dict:
    return gate_scenario.judge_scenario(key=key, nodeid=f"test_x.py::test[{key}]", rewards=rewards, k=len(rewards), seed=0,
                               judge="j", errors=0, pass_reward=1.0, level=0.95, thresholds=markers.Thresholds(),
                               baseline=baseline, baseline_note=None, settings=settings(), family=1,
                               trial_index=None, scenario=None, location=None)


def document(rewards_by_key: dict) -> dict:
    return {"schema": "whileai.run/1", "fingerprint": {}, "scenarios": [
        {"key": key, "nodeid": key, "k": len(rs), "judge": "j", "rewards": rs, "pass_reward": 1.0,
         "n_scored": len([r for r in rs if r is not None]), "passes": sum(1 for r in rs if r == 1.0)}
        for key, rs in rewards_by_key.items()]}


# --- item 4: the gate's numbers ----------------------------------------------------------------------------------
def test_suite_line_prints_each_side_with_its_interval_and_n():
    rng = np.random.default_rng(3)
    keys = [f"t{i}" for i in range(40)]
    before = {k: [float(x) for x in rng.uniform(size=4) < 0.9] for k in keys}
    after = {k: [float(x) for x in rng.uniform(size=4) < 0.5] for k in keys}
    results = {k: scenario(k, after[k]) for k in keys}
    index = {k: {"key": k, "k": 4, "judge": "j", "rewards": before[k]} for k in keys}
    g = compare.compute_gate(results, index, baseline_name="main", settings=settings())
    def rows(side: dict) -> list[dict]:  # in the gate's order of keys
        return [{"task_id": k, "rollout_index": i, "reward": r} for k in sorted(keys) for i, r in enumerate(side[k])]

    rep = delta_report(rows(before), rows(after), draws=2000, permutations=10000, seed=0, min_effect=0.05)
    # each side's interval is the scenario bootstrap of delta_report, from the same draws as the delta's
    assert g.before_ci == pytest.approx(list(rep.before_ci)) and g.after_ci == pytest.approx(list(rep.after_ci))
    assert g.before_ci[0] < g.before < g.before_ci[1] and g.after_ci[0] < g.after < g.after_ci[1]
    head = (f"REGRESSION: pass@1 {g.before:.3f} [{g.before_ci[0]:.3f}, {g.before_ci[1]:.3f}] -> {g.after:.3f} "
            f"[{g.after_ci[0]:.3f}, {g.after_ci[1]:.3f}], delta {g.delta:+.3f} [{g.ci[0]:+.3f}, {g.ci[1]:+.3f}] "
            "(95% scenario bootstrap), permutation p=")
    assert g.message.startswith(head), g.message
    assert "n=40 paired scenarios (160 -> 160 scored trials)" in g.message
    assert g.to_dict()["before_ci"] == g.before_ci


def test_gate_line_never_prints_p_zero():
    """A large suite's exact sign-flip p underflows to (or near) 0: the gate line prints p<1e-12, never p=0; a
    Monte-Carlo p where no random flip reached the observed delta prints under its bound 2/(B+1), not as a value."""
    from pytest_whileai.gate.verdict import gate_details
    from whileai_core.gate.text import p_eq

    keys = [f"t{i:04d}" for i in range(1500)]
    results = {k: scenario(k, [0.0, 0.0, 0.0, 0.0]) for k in keys}
    index = {k: {"key": k, "k": 4, "judge": "j", "rewards": [1.0, 1.0, 1.0, 1.0]} for k in keys}
    g = compare.compute_gate(results, index, baseline_name="main", settings=settings())
    assert g.red and g.p_value is not None and g.p_value < 1e-12, (g.p_value, g.message)
    assert "permutation p<1e-12," in g.message and not re.search(r"(?<![a-z_])p=0(?![.\d])", g.message), g.message
    assert any(" p<1e-12 n=1500 " in line for line in gate_details(g)), gate_details(g)
    assert p_eq(0.0) == "<1e-12" and p_eq(None) == "=n/a" and p_eq(0.0123) == "=0.0123"
    assert p_eq(2 / 10001, exact=False, permutations=10000) == "<0.0002"  # (0 + 1)/(B + 1), two-sided
    assert p_eq(1 / 1001, exact=False, permutations=1000, sides=1) == "<0.001"
    assert p_eq(3 / 10001, exact=False, permutations=10000) == "=0.0003"  # a draw reached it: a value
    assert p_eq(2 / 10001, exact=True) == "=0.0002"  # an exact p is a value wherever it lies


def test_scenario_delta_carries_newcombes_interval():
    base = {"key": "a", "k": 10, "judge": "j", "rewards": [1.0] * 9 + [0.0]}
    e = scenario("a", [1.0] * 5 + [0.0] * 5, baseline=base)
    assert e["delta"] == pytest.approx(-0.4)
    # Newcombe's hybrid score interval of 5/10 - 9/10 (statsmodels 0.15.0, method="newcomb", to 1e-12)
    assert e["delta_ci"] == pytest.approx([-0.6759121533048664, 0.002356109392247785], abs=1e-12)
    assert e["delta_ci"] == pytest.approx(list(newcombe_interval(5, 10, 9, 10)))
    assert e["baseline"]["ci"] == pytest.approx(list(wilson_interval(9, 10)))
    line = gate_scenario.failure_message(e, baseline_name="main")
    assert "| baseline 0.90 [0.60, 0.98] (9/10) | delta -0.40 [-0.68, +0.00] (Newcombe), one-sided p=" in line

    g = compare.Gate("ok", False, "no regression", holm={"a": 0.2}, holm_reach={"possible": True})
    row = report.table_rows({"a": e}, g)[0]
    assert row[3:5] == ["9/10", "-0.40 [-0.68, +0.00]"]  # the baseline's counts; the delta with its interval
    table = report.format_table(report.table_rows({"a": e}, g), report.header(g))
    assert table[0].split() == ["scenario", "passed", "estimate", "[CI]", "baseline", "delta", "[CI]", "Holm", "p"]
    assert max(len(line) for line in table) < 100  # readable in a terminal
    wai = SimpleNamespace(settings=SimpleNamespace(level=0.95, baseline=None), results={"a": e}, gate=g)
    md = report.markdown(wai)
    assert "| -0.40 [-0.68, +0.00] |" in md
    assert "_Intervals are 95% Wilson per scenario, and Newcombe's hybrid score interval for a delta" in md


# --- item 2: NaN rewards in documents -----------------------------------------------------------------------------
def test_compare_documents_refuses_a_nan_reward_naming_key_and_index():
    good = {f"t{i}": [1.0, 1.0, 1.0, 0.0] for i in range(30)}
    nan = {k: list(v) for k, v in good.items()}
    nan["t3"][1] = float("nan")
    with pytest.raises(errors.NonFiniteReward, match=r"current: scenario 't3' \(scenarios\[3\]\) has reward nan at "
                                                    r"rewards\[1\]; NaN and infinity are not scores"):
        compare.compare_documents(document(good), document(nan))
    inf = {k: list(v) for k, v in good.items()}
    inf["t7"][3] = float("inf")
    with pytest.raises(errors.NonFiniteReward, match=r"main: scenario 't7' \(scenarios\[7\]\) has reward inf at "
                                                    r"rewards\[3\]"):
        compare.compare_documents(document(inf), document(good), baseline_name="main")
    assert issubclass(errors.NonFiniteReward, errors.CorruptBaseline)
    assert compare.compare_documents(document(good), document(good)).status == "ok"


def test_cli_gate_names_the_nan_reward_and_exits_2(tmp_path):
    good = {f"t{i}": [1.0, 1.0, 1.0, 0.0] for i in range(30)}
    bad = {k: list(v) for k, v in good.items()}
    bad["t12"][2] = float("nan")  # json.dumps writes it as NaN, which json.loads reads back as a float
    (tmp_path / "base.json").write_text(json.dumps(document(good)))
    (tmp_path / "cur.json").write_text(json.dumps(document(bad)))
    assert "NaN" in (tmp_path / "cur.json").read_text()
    done = subprocess.run([sys.executable, "-m", "whileai_core.cli", "gate", str(tmp_path / "base.json"),
                           str(tmp_path / "cur.json")], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert f"{tmp_path / 'cur.json'}: scenario 't12' (scenarios[12]) has reward nan at rewards[2]" in done.stderr
    assert "REGRESSION" not in done.stderr


# --- item 3: one key per scenario ---------------------------------------------------------------------------------
def test_scenario_ids_refuse_a_repeat():
    from whileai_core.simulate.situations import Scenario

    asks = [collect._scenario_from(a, "x") for a in ("Where is my order?", "Cancel it", "Where is my order?")]
    with pytest.raises(markers.WaiMarkerError, match=r"items 0 and 2 both give the scenario id "
                                                     r"'where-is-my-order-ask-[0-9a-f]+', so both would run as "
                                                     r"t.py::test\[where-is-my-order-ask-[0-9a-f]+\]"):
        collect.scenario_ids(asks, nodeid="t.py::test")
    with pytest.raises(markers.WaiMarkerError, match="items 0 and 1 both give the scenario id 'x'"):
        collect.scenario_ids(asks[:2], ["x", "x"])
    same_task = [Scenario("Refund order 1", task_id="T1"), Scenario("Refund order 1", task_id="T1")]
    with pytest.raises(markers.WaiMarkerError, match="distinct task_id"):
        collect.scenario_ids(same_task)
    assert collect.scenario_ids(asks[:2]) == [collect.scenario_ids([a])[0] for a in asks[:2]]


def test_repeated_asks_are_a_collection_error(pytester: pytest.Pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.wai_scenarios(["Where is my order?", "Cancel it", "Where is my order?"])
def test_asks(wai):
    wai.record([1.0] * 4)
""")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert res.ret == pytest.ExitCode.INTERRUPTED
    res.stdout.fnmatch_lines([("*test_asks: wai_scenarios: items 0 and 2 both give the scenario id "
                               "'where-is-my-order-ask-*', so both would run as "
                               "test_repeated_asks_are_a_collection_error.py::test_asks[[]where-is-my-order-ask-*[]]*")])


@pytest.mark.parametrize("fixture", ["wai_eval", "wai"])  # the documented name and its deprecated alias
def test_colliding_key_pins_fail_both_tests_naming_them(pytester: pytest.Pytester, fixture: str):
    pytester.makepyfile("""
import pytest

@pytest.mark.wai_key("refunds")
def test_one(FIXTURE):
    FIXTURE.record([1.0] * 4)

@pytest.mark.wai_key("refunds")
def test_two(FIXTURE):
    FIXTURE.record([0.0] * 4)

def test_other(FIXTURE):
    FIXTURE.record([1.0] * 4)
""".replace("FIXTURE", fixture))
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning",
                                       "--wai-json=run.json")
    res.assert_outcomes(passed=1, errors=2)
    name = "test_colliding_key_pins_fail_both_tests_naming_them.py"
    res.stdout.fnmatch_lines([(f"*whileai: 2 tests share the baseline key 'refunds' ({name}::test_one, "
                               f"{name}::test_two); their results would replace each other*")])
    doc = json.loads((pytester.path / "run.json").read_text())
    assert [s["key"] for s in doc["scenarios"]] == [f"{name}::test_other"]  # neither replaced the other
