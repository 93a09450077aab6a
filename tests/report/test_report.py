"""The report's content without a browser: library inputs (ScoredData, a Comparison), the numbers it prints
against closed forms, the stale-baseline note, tokens and cost, and the self-contained file."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

import whileai as wai
from whileai_core.gate.text import fmt, fmt_ci
from whileai_core.measure.stats import newcombe_interval
from whileai_core.report.inputs import as_inputs, document_from_rows
from whileai_core.report.view import build_view, stale_note


def _scored(share: float, seed: int = 0):
    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {"order_id": order_id}

    data = wai.simulate(wai.seeded_agent([get_order], share=share, seed=seed), tools=[get_order],
                        system_prompt="Help customers with orders.", simulator=False, repeats=4,
                        repeat_policy="fixed", budget=48)
    return data.grade(judge=lambda row: {"reward": int(not row["seeded"]), "reason": "seeded" if row["seeded"] else "ok"})


@pytest.fixture(scope="module")
def runs():
    return _scored(1 / 3), _scored(0.8)


def test_rows_become_a_document_with_counts_and_transcripts(runs):
    _, after = runs
    doc = document_from_rows(after.rows)
    assert sum(len(sc["rewards"]) for sc in doc["scenarios"]) == len(after.rows)
    for sc in doc["scenarios"]:
        failing = sum(1 for r in sc["rewards"] if r is not None and r < 1)
        assert len(sc["transcripts"]) == min(failing, wai.defaults.REPORT_TRANSCRIPTS_PER_SCENARIO)
        for t in sc["transcripts"]:
            assert t["status"] == "failed" and t["reason"] == "seeded" and t["messages"][0]["role"] in ("system", "user")


def test_scenario_deltas_are_newcombe_intervals_of_the_counts(runs):
    before, after = runs
    view = build_view(as_inputs(after, baseline=before), repo=None)
    b = {sc["key"]: sc for sc in document_from_rows(before.rows)["scenarios"]}
    a = {sc["key"]: sc for sc in document_from_rows(after.rows)["scenarios"]}
    assert len(view["scenarios"]) == len(a)
    for row in view["scenarios"]:
        ap, an = sum(a[row["key"]]["rewards"]), len(a[row["key"]]["rewards"])
        bp, bn = sum(b[row["key"]]["rewards"]), len(b[row["key"]]["rewards"])
        assert row["value"] == pytest.approx(ap / an - bp / bn)
        ci = newcombe_interval(int(ap), an, int(bp), bn)
        assert row["text"] == f"{fmt(ap / an - bp / bn, signed=True)} {fmt_ci(ci, signed=True)}"
    values = [r["value"] for r in view["scenarios"]]
    assert values == sorted(values)  # sorted by effect, largest drop first
    assert view["gate"]["status"] == "regression" and view["suite"]["regressed"]
    assert view["suite"]["text"] in view["gate"]["message"]
    after_p1 = view["metrics"][0]
    assert after_p1["after_value"] == pytest.approx(sum(sum(sc["rewards"]) / len(sc["rewards"]) for sc in a.values()) / len(a))


def test_a_comparison_gives_the_headline_and_its_slices(runs, tmp_path):
    before, after = runs
    cmp = wai.compare(before, after, by="stance")
    html = wai.report(cmp, tmp_path / "cmp.html").read_text(encoding="utf-8")
    view = build_view(as_inputs(cmp), repo=None)
    assert view["suite"]["text"] == f"{fmt(cmp.delta, 3, signed=True)} {fmt_ci(cmp.ci, 3, signed=True)}"
    assert {r["label"] for r in view["slices"]} == {f"stance={s.name}" for s in cmp.slices}
    assert view["suite"]["text"] in html and "<script src=" not in html


def test_stale_note_by_age():
    now = datetime(2026, 12, 3, tzinfo=timezone.utc)
    base = {"created": "2026-10-01T00:00:00Z", "commit_info": {}}
    assert "63 days ago (more than 30)" in stale_note({}, base, stale_days=30, stale_commits=50, repo=None, now=now)
    assert stale_note({}, base, stale_days=90, stale_commits=50, repo=None, now=now) is None


def test_tokens_and_cost_closed_form():
    rows = [{"task_id": "a", "reward": 1, "agent_extra": {"model": "m", "usage": {"input_tokens": 1000, "output_tokens": 500}},
             "judge_meta": {"judge_usage": {"input_tokens": 200, "output_tokens": 10}}},
            {"task_id": "a", "reward": 0, "usage": {"prompt_tokens": 3000, "completion_tokens": 0}, "model": "m"}]
    cost = wai.usage(rows, prices={"m": {"input": 0.4, "output": 1.6}})
    assert cost.by_model == {"m": {"input_tokens": 4000, "output_tokens": 500},
                             "judge": {"input_tokens": 200, "output_tokens": 10}}
    assert cost.dollars == pytest.approx(4000 * 0.4 / 1e6 + 500 * 1.6 / 1e6)
    assert str(cost) == ("tokens: 4,200 in / 510 out over 2 model(s); estimated cost $0.0024 (no price for judge: "
                         "pass a price table to estimate it)")
    with pytest.raises(wai.InvalidArgument, match="prices\\['m'\\]\\['input'\\]"):
        wai.usage(rows, prices={"m": {"input": -1}})
