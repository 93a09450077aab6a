"""Unit tests of the plugin's parts: statistics against scipy and closed forms, the store, markers, reports."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from whileai_core.measure import stats
from scipy import stats as sps

from pytest_whileai import markers
from pytest_whileai.gate import scenario, store
from pytest_whileai.report import junit, markdown
from pytest_whileai.options import Settings
from whileai_core import defaults as D
from whileai_core.gate import compare, document


def settings(**kw) -> Settings:
    base = dict(trials=4, seed=0, level=0.95, alpha=0.05, max_drop=0.05, draws=2000, permutations=10000, power=0.8,
                baseline="main", require_baseline=False, storage=".whileai", save=None, autosave=False, json=None,
                markdown=None, junitxml=None, github="off", regression_exit_code=1, fingerprint="", record=None, replay=None,
                trial_index=None)
    base.update(kw)
    return Settings(**base)


# --- statistics ---------------------------------------------------------------------------------------------
def test_drop_p_values_match_scipy_fisher_exact_one_sided():
    rng = np.random.default_rng(7)
    bn = rng.integers(1, 12, size=200)
    an = rng.integers(1, 12, size=200)
    b = rng.integers(0, bn + 1)
    a = rng.integers(0, an + 1)
    got = stats.fisher_drop_pvalues(b, bn, a, an)
    want = [sps.fisher_exact([[bi, bni - bi], [ai, ani - ai]], alternative="greater").pvalue
            for bi, bni, ai, ani in zip(b, bn, a, an)]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_drop_p_value_closed_form_all_vs_none():
    # 4/4 before, 0/4 after: P(X >= 4) for X ~ Hypergeom(8, 4, 4) = 1 / C(8, 4)
    assert stats.fisher_drop_pvalues(4, 4, 0, 4) == pytest.approx(1 / math.comb(8, 4))
    assert stats.fisher_drop_pvalues(0, 4, 4, 4) == pytest.approx(1.0)


def test_holm_adjust_closed_form_and_monotone():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, 2*0.03, 1*0.04 -> running max 0.02, 0.03, 0.06, 0.06
    np.testing.assert_allclose(stats.holm_adjust(p), [0.03, 0.06, 0.06, 0.02])
    rng = np.random.default_rng(1)
    q = rng.uniform(size=50)
    adj = stats.holm_adjust(q)
    order = np.argsort(q)
    assert np.all(np.diff(adj[order]) >= 0)
    assert np.all(adj >= q) and np.all(adj <= 1)
    # Holm rejects a superset of Bonferroni
    assert set(np.flatnonzero(q * 50 <= 0.05)) <= set(np.flatnonzero(adj <= 0.05))


def test_metric_interval_is_wilson_and_transforms_monotonically():
    value, ci = scenario.metric_interval("pass@1", 3, 4, 4, 0.95)
    z = sps.norm.ppf(0.975)
    p, n = 0.75, 4
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert value == 0.75 and ci == pytest.approx([center - half, center + half])
    # pass^k and pass@k: the unbiased estimators (C(3,4)/C(4,4) = 0, 1 - C(1,4)/C(4,4) = 1), the Wilson bounds
    # mapped through p^k and 1-(1-p)^k, widened to contain the estimate
    v2, ci2 = scenario.metric_interval("pass^k", 3, 4, 4, 0.95)
    assert v2 == 0.0 and ci2 == pytest.approx([0.0, ci[1] ** 4])
    v3, ci3 = scenario.metric_interval("pass@k", 3, 4, 4, 0.95)
    assert v3 == 1.0 and ci3 == pytest.approx([1 - (1 - ci[0]) ** 4, 1.0])


def _entry(key, rewards, **kw):
    e = scenario.judge_scenario(key=key, nodeid=key, rewards=rewards, k=len(rewards), seed=0, judge="j", errors=0,
                            pass_reward=1.0, level=0.95, thresholds=markers.Thresholds(**kw), baseline=None,
                            baseline_note=None, settings=settings(), family=1, trial_index=None, scenario=None,
                            location=["t.py", 1])
    return e


def test_judge_scenario_floor_uses_the_interval():
    assert _entry("a", [1, 0, 0, 0], min_pass_rate=0.8)["failures"]  # Wilson hi 0.70 < 0.8
    assert not _entry("b", [1, 1, 0, 0], min_pass_rate=0.8)["failures"]  # hi 0.85 >= 0.8: not confidently below


def test_judge_scenario_drop_needs_significance_at_bonferroni_level():
    base = {"key": "a", "k": 8, "judge": "j", "rewards": [1.0] * 8}
    kw = dict(key="a", nodeid="a", rewards=[0.0] * 8, k=8, seed=0, judge="j", errors=0, pass_reward=1.0,
              level=0.95, thresholds=markers.Thresholds(), baseline=base, baseline_note=None, settings=settings(),
              trial_index=None, scenario=None, location=["t.py", 1])
    p = 1 / math.comb(16, 8)
    one = scenario.judge_scenario(family=1, **kw)
    assert one["p_value"] == pytest.approx(p) and one["failures"]
    many = scenario.judge_scenario(family=int(0.025 / p) + 1, **kw)  # alpha/2/m below p: not significant
    assert not many["failures"]


def test_judge_scenario_refuses_another_k():
    base = {"key": "a", "k": 8, "judge": "j", "rewards": [1.0] * 8}
    e = scenario.judge_scenario(key="a", nodeid="a", rewards=[1.0] * 4, k=4, seed=0, judge="j", errors=0,
                            pass_reward=1.0, level=0.95, thresholds=markers.Thresholds(), baseline=base,
                            baseline_note=None, settings=settings(), family=1, trial_index=None, scenario=None,
                            location=None)
    assert "k=4 trials now but k=8 in the baseline" in e["failures"][0]


def _results(rates, k=4, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for i, p in enumerate(rates):
        rewards = [float(x) for x in (rng.uniform(size=k) < p)]
        out[f"t[{i}]"] = _entry(f"t[{i}]", rewards)
    return out


def test_compute_gate_unchanged_is_green_and_drop_is_red():
    rates = np.linspace(0.3, 0.9, 30)
    before = _results(rates, seed=1)
    index = {k: {"key": k, "k": 4, "judge": "j", "rewards": v["rewards"]} for k, v in before.items()}
    same = compare.compute_gate(before, index, baseline_name="main", settings=settings())
    assert same.status == "ok" and not same.red and same.delta == 0
    worse = _results(np.clip(rates - 0.5, 0, 1), seed=2)
    g = compare.compute_gate(worse, index, baseline_name="main", settings=settings())
    assert g.status == "regression" and g.red and g.delta < -0.3 and g.ci[1] < 0
    assert g.p_value <= 0.05 and "REGRESSION" in g.message and g.n_paired == 30


def test_compute_gate_refuses_incompatible_and_skips_without_baseline():
    cur = _results([0.5] * 5)
    index = {k: {"key": k, "k": 8, "judge": "j", "rewards": [1.0] * 8} for k in cur}
    g = compare.compute_gate(cur, index, baseline_name="main", settings=settings())
    assert g.status == "incompatible" and g.red and "k=4 trials now but k=8" in g.message
    g2 = compare.compute_gate(cur, None, baseline_name=None, settings=settings(baseline=None))
    assert g2.status == "not evaluated" and not g2.red


@pytest.mark.slow
def test_gate_false_alarm_rate_under_alpha_a_a():
    """A/A: two independent runs of one agent (pass rate 0.6 per scenario, 24 scenarios x k=4). Over 300 replicate
    pairs the gate's red rate must stay under alpha; its binomial 99% upper bound is checked too."""
    alarms = 0
    reps = 300
    rng = np.random.default_rng(11)
    for r in range(reps):
        rates = rng.uniform(0.2, 0.9, size=24)
        a = _results(rates, seed=1000 + r)
        b = _results(rates, seed=5000 + r)
        index = {k: {"key": k, "k": 4, "judge": "j", "rewards": v["rewards"]} for k, v in a.items()}
        g = compare.compute_gate(b, index, baseline_name="A", settings=settings(draws=500, permutations=2000, seed=r))
        alarms += g.red
    assert alarms / reps <= 0.05 + 1e-12
    assert sps.binomtest(alarms, reps, 0.05, alternative="greater").pvalue > 0.01


# --- store --------------------------------------------------------------------------------------------------
def _doc(**kw):
    results = [{"key": "t[a]", "k": 2, "rewards": [1.0, 0.0], "judge": "j"}]
    return document.run_document(results, settings={"trials": 2}, commit={"id": "abc", "branch": "main"},
                              machine=store.machine_info(), run_info=kw, name="main")


def test_store_save_autosave_and_resolve(tmp_path: Path):
    st = store.Store(tmp_path / ".whileai")
    saved = st.save(_doc(), "main")
    assert saved == tmp_path / ".whileai" / "baselines" / "main.json"
    assert (tmp_path / ".whileai" / ".gitignore").read_text().strip().endswith("runs/")
    assert st.resolve("main") == saved
    assert st.resolve(str(saved)) == saved
    first = st.autosave(_doc())
    doc2 = _doc()
    doc2["commit_info"] = {"id": "def", "branch": "feature"}
    second = st.autosave(doc2)
    assert first.name.startswith("0001_main_abc") and second.name.startswith("0002_feature_def")
    assert st.resolve("latest") == second
    assert st.resolve("feature") == second
    with pytest.raises(document.MissingBaseline, match="--wai-save=nope"):
        st.resolve("nope")
    loaded = document.load_document(saved)
    assert loaded["scenarios"][0]["rewards"] == [1.0, 0.0] and loaded["schema"] == D.RUN_SCHEMA


def test_store_branch_prefers_other_commit(tmp_path: Path):
    st = store.Store(tmp_path)
    a = _doc()
    a["commit_info"] = {"id": "c1", "branch": "main"}
    b = _doc()
    b["commit_info"] = {"id": "c2", "branch": "main"}
    p1, p2 = st.autosave(a), st.autosave(b)
    assert st.resolve("main", head="c2") == p1
    assert st.resolve("main", head="c9") == p2


@pytest.mark.parametrize("text, match", [
    ('{"schema": "whileai.run/1", "scen', "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"schema": "other/1", "scenarios": [], "fingerprint": {}}', "not a whileai run document"),
    ('{"schema": "whileai.run/1", "scenarios": [{"key": "a", "k": 2, "rewards": [2]}], "fingerprint": {}}',
     "not in \\[0, 1\\]"),
    ('{"schema": "whileai.run/1", "fingerprint": {}}', "'scenarios' missing"),
])
def test_corrupt_documents_are_clear_errors(tmp_path: Path, text: str, match: str):
    p = tmp_path / "b.json"
    p.write_text(text)
    with pytest.raises(document.CorruptBaseline, match=match):
        document.load_document(p)


def test_check_compatible_names_the_difference():
    doc = _doc(model="m1")
    document.check_compatible(doc, fingerprint_now=document.fingerprint({"model": "m1"}), source="b.json")
    with pytest.raises(document.IncompatibleBaseline, match="run_info.model: baseline 'm1', now 'm2'"):
        document.check_compatible(doc, fingerprint_now=document.fingerprint({"model": "m2"}), source="b.json")
    old = dict(doc, schema="whileai.run/9")
    with pytest.raises(document.IncompatibleBaseline, match="schema"):
        document.check_compatible(old, fingerprint_now=document.fingerprint({"model": "m1"}), source="b.json")


# --- markers ------------------------------------------------------------------------------------------------
def test_wai_marker_validation():
    t = markers.parse_wai_marker(pytest.mark.wai(trials=8, min_pass_rate=0.5, metric="pass^k").mark)
    assert (t.trials, t.min_pass_rate, t.metric) == (8, 0.5, "pass^k")
    with pytest.raises(markers.WaiMarkerError, match="unknown argument\\(s\\) bogus, tirals"):
        markers.parse_wai_marker(pytest.mark.wai(tirals=3, bogus=1).mark)
    with pytest.raises(markers.WaiMarkerError, match="trials= must be an int >= 1; got 0"):
        markers.parse_wai_marker(pytest.mark.wai(trials=0).mark)
    with pytest.raises(markers.WaiMarkerError, match="metric= must be one of"):
        markers.parse_wai_marker(pytest.mark.wai(metric="accuracy").mark)
    with pytest.raises(markers.WaiMarkerError, match="keyword arguments only"):
        markers.parse_wai_marker(pytest.mark.wai(3).mark)
    with pytest.raises(markers.WaiMarkerError, match="unknown argument\\(s\\) budgte"):
        markers.scenarios(["a"], budgte=3) if False else markers.parse_scenarios_marker(
            pytest.mark.wai_scenarios(["a"], budgte=3).mark)


# --- reports ------------------------------------------------------------------------------------------------
def test_annotation_escaping():
    line = markdown.annotation("error", "50% worse\nsee: a,b", file="t/x.py", line=3, title="a:b,c")
    assert line == "::error file=t/x.py,line=3,title=a%3Ab%2Cc::50%25 worse%0Asee: a,b"


def test_junit_build_parses_with_junitparser(tmp_path: Path):
    from junitparser import JUnitXml
    from junitparser.xunit2 import TestCase

    rates = [0.9] * 6
    before = _results(rates, seed=3)
    index = {k: {"key": k, "k": 4, "judge": "j", "rewards": [1.0] * 4} for k in before}
    cur = {k: _entry(k, [0.0] * 4, min_pass_rate=0.5) for k in before}
    g = compare.compute_gate(cur, index, baseline_name="main", settings=settings())
    path = junit.write(tmp_path / "w.xml", cur, g, baseline="main")
    xml = JUnitXml.fromfile(path)
    suite = next(iter(xml))
    props = {p.name: p.value for p in suite.properties()}
    assert props["whileai.gate"] == "regression" and props["whileai.baseline"] == "main"
    cases = [TestCase.fromelem(c) for c in suite]
    assert len(cases) == 6
    cprops = {p.name: p.value for p in cases[0].properties()}
    assert cprops["passes"] == "0" and cprops["k"] == "4" and "ci_low" in cprops
    assert cases[0].result and cases[0].result[0].type == "WaiRegression"
    assert json.loads(json.dumps(g.to_dict()))["status"] == "regression"


@pytest.mark.slow
def test_gate_false_alarm_rate_on_the_seeded_agent_a_a():
    """A/A on the real engine: the same seeded agent (share 1/3) under independent agent seeds, 31 covering-array
    scenarios x k=4 through ``simulate.rollout``; over 120 pairs the gate's red rate stays at or under alpha."""
    import whileai as wai
    from whileai_core.simulate.run import rollout

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {"order_id": order_id}

    @wai.tool
    def cancel_order(order_id: str) -> dict:
        """Cancel an order by id."""
        return {"order_id": order_id, "status": "cancelled"}

    tools = [get_order, cancel_order]
    scenarios = wai.situations(tools, "Help customers with orders.")

    def run(agent_seed: int) -> dict:
        agent = wai.seeded_agent(tools, seed=agent_seed)
        out = {}
        for sc in scenarios:
            rewards = [float(not rollout(agent, sc, rollout_index=i, tools=tools)["seeded"]) for i in range(4)]
            out[sc.task_id] = _entry(sc.task_id, rewards)
        return out

    reps, red = 120, 0
    for r in range(reps):
        a, b = run(10_000 + 2 * r), run(10_001 + 2 * r)
        index = {k: {"key": k, "k": 4, "judge": "j", "rewards": v["rewards"]} for k, v in a.items()}
        red += compare.compute_gate(b, index, baseline_name="A", settings=settings(draws=500, seed=r)).red
    assert red / reps <= 0.05
    assert sps.binomtest(red, reps, 0.05, alternative="greater").pvalue > 0.01


def test_cli_gate_between_two_run_documents(tmp_path):
    """`whileai gate BASE CUR` gives the plugin's suite verdict outside pytest, with exit 1 on a regression."""
    import json
    import subprocess
    import sys

    def doc(rewards_by_key):
        return {"schema": "whileai.run/1", "fingerprint": {}, "scenarios": [
            {"key": key, "nodeid": key, "k": len(rs), "judge": "j", "rewards": rs, "pass_reward": 1.0,
             "n_scored": len(rs), "passes": int(sum(rs))}
            for key, rs in rewards_by_key.items()]}

    good = {f"t{i}": [1.0, 1.0, 1.0, 0.0] for i in range(30)}
    bad = {f"t{i}": [0.0, 0.0, 1.0, 0.0] for i in range(30)}
    (tmp_path / "base.json").write_text(json.dumps(doc(good)))
    (tmp_path / "same.json").write_text(json.dumps(doc(good)))
    (tmp_path / "worse.json").write_text(json.dumps(doc(bad)))
    cli = [sys.executable, "-m", "whileai_core.cli", "gate"]
    same = subprocess.run([*cli, str(tmp_path / "base.json"), str(tmp_path / "same.json")], capture_output=True,
                          text=True)
    worse = subprocess.run([*cli, str(tmp_path / "base.json"), str(tmp_path / "worse.json")], capture_output=True,
                           text=True)
    missing = subprocess.run([*cli, str(tmp_path / "nope.json"), str(tmp_path / "same.json")], capture_output=True,
                             text=True)
    assert same.returncode == 0, same.stdout + same.stderr
    assert worse.returncode == 1 and "REGRESSION" in worse.stdout and "-0.50" in worse.stdout
    assert missing.returncode == 2 and "nope.json" in missing.stderr
    # the engine's gate needs neither pytest nor the plugin: the same verdict with both made unimportable
    blocked = ("import sys; sys.modules.update(pytest=None, _pytest=None, pytest_whileai=None); "
               "from whileai_core.cli import main; sys.exit(main(sys.argv[1:]))")
    alone = subprocess.run([sys.executable, "-c", blocked, "gate", str(tmp_path / "base.json"),
                            str(tmp_path / "worse.json")], capture_output=True, text=True)
    assert alone.returncode == 1 and alone.stdout == worse.stdout, alone.stderr
