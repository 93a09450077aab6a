"""compare(): per-slice paired deltas with Holm, guard metrics, one verdict (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

import whileai as wai
from whileai_core.measure import stats
from whileai_core.measure.compare import Comparison, compare
from whileai_core.measure.measure import delta_report

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
