"""compare(): per-slice paired deltas with Holm, guard metrics, one verdict (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

import whileai as wai
from whileai_core.measure import stats
from whileai_core.measure.compare import Comparison, compare
from whileai_core.measure.delta import delta_report

TOOLS = ("get_order", "refund", "cancel")
SKILL = np.random.default_rng(0).uniform(0.3, 0.9, size=60)


def run(seed, refund_drop=0.0, hack=0.0, markers=False):
    """60 tasks x 4 rollouts, a tool per task; ``refund_drop`` lowers the refund tasks, ``hack`` the share of
    rollouts with a hack flag (as trace_flags, or as the trace marker when ``markers``)."""
    draw = np.random.default_rng(seed)
    rows = []
    for t, p in enumerate(SKILL):
        tool = TOOLS[t % 3]
        for i in range(4):
            hacked = bool(draw.random() < hack)
            row = {"row_id": f"t{t}#{i}", "task_id": f"t{t}", "rollout_index": i, "scenario": {"tool": tool},
                   "reward": int(draw.random() < p - (refund_drop if tool == "refund" else 0.0)),
                   "latency_s": 1.0 + draw.random()}
            if markers:
                row["markers"] = {"no_test_tampering": 0.0 if hacked else 1.0}
            else:
                row["trace_flags"] = [{"flag": "hack.test_edited"}] if hacked else []
            rows.append(row)
    return rows


def test_by_slices_pass1_with_holm_and_the_headline():
    before, after = run(1), run(2, refund_drop=0.4)
    cmp = compare(before, after, by="tool")
    assert isinstance(cmp, Comparison) and [s.name for s in cmp.slices] == sorted(TOOLS)
    for s in cmp.slices:  # each slice is delta_report on that slice's tasks
        keep = {f"t{t}" for t in range(60) if TOOLS[t % 3] == s.name}
        rep = delta_report([r for r in before if r["task_id"] in keep], [r for r in after if r["task_id"] in keep])
        assert s.n_tasks == rep.n_paired == 20 and s.delta == pytest.approx(rep.delta)
        assert s.p_value == pytest.approx(rep.p_value) and s.ci == pytest.approx(rep.ci)
    assert [s.p_holm for s in cmp.slices] == pytest.approx(list(stats.holm_adjust([s.p_value for s in cmp.slices])))
    refund = next(s for s in cmp.slices if s.name == "refund")
    assert refund.flagged and not cmp.ok and "slice tool=refund worse" in cmp.reasons
    assert cmp.headline.delta == pytest.approx(delta_report(before, after).delta) and cmp.delta == cmp.headline.delta
    text = str(cmp)
    assert text.startswith("FAIL (slice tool=refund worse): ") and "by tool (3 slices, pass@1" in text
    assert "  refund " in text and text.splitlines()[-1].endswith("(20 tasks) worse")
    # a target larger than the drop: the slice is not called
    assert compare(before, after, by="tool", target=0.6).ok


def test_a_hack_increase_fails_the_verdict():
    before = run(1)
    clean = compare(before, run(2), must_not_regress=["hack_rate"])
    assert clean.ok and clean.guards[0].delta == 0 and clean.guards[0].n_tasks == 60
    hacked = compare(before, run(2, hack=0.15), must_not_regress=["hack_rate", "latency_s"])
    hack, latency = hacked.guards
    assert hack.flagged and hack.bad == "up" and hack.delta > 0.05 and not hacked.ok
    assert hacked.reasons == ["hack_rate regressed"] and not latency.flagged
    assert "REGRESSED" in str(hacked) and "must not regress (2 guards" in str(hacked)
    # the same hack read from trace markers (1.0 clean, 0.0 flagged) instead of trace_flags
    marked = compare(run(1, markers=True), run(2, hack=0.15, markers=True), must_not_regress=["hack_rate"])
    assert marked.guards[0].flagged and not marked.ok
    # a marker named directly: 1.0 is good, so a drop regresses
    direct = compare(run(1, markers=True), run(2, hack=0.15, markers=True), must_not_regress=["no_test_tampering"])
    assert direct.guards[0].bad == "down" and direct.guards[0].flagged
    # the bad direction by hand: lower latency is not a regression when "up" is bad
    assert compare(before, run(2), must_not_regress={"latency_s": "up"}).ok


def test_compare_errors_name_the_field():
    before, after = run(1), run(2)
    with pytest.raises(ValueError, match=r"by='stage': no row carries that field"):
        compare(before, after, by="stage")
    with pytest.raises(ValueError, match=r"no row gives 'tokens'"):
        compare(before, after, must_not_regress=["tokens"])
    with pytest.raises(ValueError, match=r"must_not_regress\['latency_s'\] is the bad direction"):
        compare(before, after, must_not_regress={"latency_s": "higher"})


def test_the_facade_compare_is_this_compare():
    assert wai.compare is compare and wai.Comparison is Comparison
    cmp = wai.compare(run(1), run(2))
    assert cmp.ok and cmp.slices == [] and cmp.verdict == cmp.headline.verdict
    assert cmp.to_dict()["headline"]["n_paired"] == 60


# ------------------------------------------------------------------------------------------------
# issue 30 item 9: the plugin gate's verdict is compare's
# ------------------------------------------------------------------------------------------------
def _gate_doc(passes, k):
    return {"schema": "whileai.run/1", "fingerprint": {}, "scenarios": [
        {"key": f"s{i:02d}", "k": k, "judge": "j", "pass_reward": 1.0, "n_scored": k, "passes": int(c),
         "rewards": [float(t < c) for t in range(k)]} for i, c in enumerate(passes)]}


def _gate_rows(doc):
    return [{"task_id": sc["key"], "rollout_index": t, "reward": int(r)} for sc in doc["scenarios"]
            for t, r in enumerate(sc["rewards"])]


@pytest.mark.parametrize("case", ["same", "suite drop", "one scenario collapses", "small drop", "better"])
def test_the_gate_verdict_is_compares_on_the_same_rows(case):
    """compare_documents (the plugin gate's engine) against wai.compare(before, after, target=max_drop,
    task_drops=True) on the same scenarios: one verdict, the same headline, Holm p's and flagged scenarios."""
    from whileai_core.gate.compare import compare_documents

    rng = np.random.default_rng(["same", "suite drop", "one scenario collapses", "small drop", "better"].index(case))
    k, rate = 20, rng.uniform(0.5, 0.95, size=40)
    shift = {"same": 0.0, "suite drop": -0.25, "one scenario collapses": 0.0, "small drop": -0.04,
             "better": 0.2}[case]
    before = rng.binomial(k, rate)
    after = rng.binomial(k, np.clip(rate + shift, 0, 1))
    if case == "one scenario collapses":
        before[7], after[7] = k, 0
    base, cur = _gate_doc(before, k), _gate_doc(after, k)
    gate = compare_documents(base, cur, max_drop=0.05)
    cmp = wai.compare(_gate_rows(base), _gate_rows(cur), target=0.05, seed=0, permutations=2000,
                      task_drops=True)
    assert gate.red == (not cmp.ok)
    assert (gate.delta, gate.ci, gate.p_value, gate.verdict) == (cmp.delta, list(cmp.ci), cmp.p_value, cmp.verdict)
    assert gate.holm == pytest.approx(cmp.task_drops.holm) and gate.scenario_regressions == cmp.task_drops.flagged
    expected = {"same": ("ok", []), "suite drop": ("regression", None), "small drop": ("ok", []),
                "one scenario collapses": ("regression", ["s07"]), "better": ("improved", [])}[case]
    assert gate.status == expected[0] and (expected[1] is None or cmp.task_drops.flagged == expected[1])
    if case == "one scenario collapses":  # the scenario family alone turns both red, with the same reason
        assert not cmp.headline.worse and cmp.reasons == ["1 task(s) dropped significantly after Holm (alpha/2)"]
        assert "1 of 40 tasks dropped: s07" in str(cmp)


def test_task_drops_counts_given_and_refused():
    given = {"t0": (8, 8, 0, 8), "t1": (4, 8, 4, 8), "t2": (8, 8, 0, 8, 1.5)}  # t2's own min drop is out of reach
    cmp = compare(run(1), run(2), task_drops=given)
    assert list(cmp.task_drops.holm) == ["t0", "t1", "t2"] and cmp.task_drops.flagged == ["t0"]
    assert cmp.task_drops.holm["t0"] == pytest.approx(3 * stats.fisher_drop_pvalues(8, 8, 0, 8))  # Holm: 3 x 1/C(16,8)
    assert not cmp.ok and "1 task(s) dropped significantly after Holm (alpha/2)" in cmp.reasons
    assert "task_drops" in cmp.to_dict() and "task_drops" not in compare(run(1), run(2)).to_dict()
    with pytest.raises(ValueError, match=r"task_drops\['t0'\] is \(before_passes"):
        compare(run(1), run(2), task_drops={"t0": (8, 8)})
    with pytest.raises(ValueError, match="task_drops= is True or a mapping"):
        compare(run(1), run(2), task_drops=[(8, 8, 0, 8)])


def _with_marker(rows, share, seed):
    """Each row gets marker 'polite' = 1 with probability ``share`` (the training reward a proxy would be)."""
    draw = np.random.default_rng(seed)
    return [dict(r, markers={"polite": float(draw.random() < share)}) for r in rows]


def test_proxy_that_climbs_while_pass_at_1_does_not_is_over_optimized():
    """The SDK's compare(proxy=) (Gao et al. 2022): a proxy up significantly while the target is flat fails
    ``ok``; a flat proxy does not; a proxy that is the target or is not measured is a note, never a failure."""
    before, after = _with_marker(run(1), 0.3, 1), _with_marker(run(2), 0.8, 2)
    cmp = compare(before, after, proxy="marker:polite")
    assert cmp.proxy_verdict == "moved" and cmp.over_optimized and not cmp.ok
    assert cmp["over_optimized"] and cmp["proxy_delta"] == pytest.approx(cmp.proxy_result.delta)
    assert cmp.proxy_result.delta == pytest.approx(np.mean([r["markers"]["polite"] for r in after])
                                                   - np.mean([r["markers"]["polite"] for r in before]))
    assert cmp.reasons[-1].startswith("OVER-OPTIMIZED: marker:polite up +0.")
    assert "Gao et al. 2022" in cmp.reasons[-1] and "  OVER-OPTIMIZED" in str(cmp).splitlines()[1]
    flat = compare(before, _with_marker(run(2), 0.3, 3), proxy="polite")
    assert flat.proxy_verdict == "no_change_detected" and not flat.over_optimized and flat.ok
    missing = compare(run(1), run(2), proxy="marker:hedging")
    assert missing.proxy_verdict == "proxy_not_measured" and missing.ok and missing.proxy_result is None
    assert "no over-optimisation check" in missing["warnings"][0] and "note: proxy=" in str(missing)
    same = compare(run(1), run(2), proxy="pass_at_1")
    assert same.proxy_verdict == "proxy_is_target" and same.ok
    with pytest.raises(ValueError, match="proxy= names the training reward"):
        compare(run(1), run(2), proxy=3)
