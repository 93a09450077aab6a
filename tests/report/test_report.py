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


def test_the_forest_plot_says_why_a_larger_drop_can_stay_grey(runs, tmp_path):
    """Red is Holm-significant, not the largest drop (issue 32): the page says so beside the plot, and each
    scenario row's p is in its hover and the table."""
    before, after = runs
    html = wai.report(after, tmp_path / "r.html", baseline=before, repo=None).read_text(encoding="utf-8")
    assert "Red means significant after correcting for the many rows tested (Holm" in html.replace("&#39;", "'")
    assert "a larger drop measured on fewer trials (a wider interval, a larger p) can stay grey" in html
    view = build_view(as_inputs(after, baseline=before), repo=None)
    assert all(", one-sided p=" in r["n"] for r in view["scenarios"] if r["value"] is not None)
    alone = wai.report(after, tmp_path / "alone.html", repo=None).read_text(encoding="utf-8")
    assert 'id="holm-note"' not in alone  # no deltas, nothing to correct


def test_long_labels_are_cut_and_kept_unique():
    """Scenario labels took 40% of the plot's width: each is cut to REPORT_LABEL_MAX_CHARS on the axis."""
    from whileai_core.report.html import _short_labels

    cap = wai.defaults.REPORT_LABEL_MAX_CHARS
    long = [f"test_order_desk[stance=polite-tool=get_order-fault=timeout-{i}]" for i in range(3)]
    short = _short_labels(long + ["suite"])
    assert all(len(s) <= cap for s in short[:3]) and short[3] == "suite"
    assert len(set(short)) == 4 and all(s.endswith(f"{i}]") for i, s in enumerate(short[:3]))
    same = _short_labels(["x" * 80, "x" * 80])
    assert same[0] != same[1] and same[1].endswith(" #2")


def test_plotly_bundle_inline_cdn_directory_or_hosted(runs, tmp_path):
    """The page was 4.89 MB, 4.82 MB of it Plotly: plotlyjs= links it instead (CDN, one shared copy beside the
    pages, or a URL you host); inline stays the default (opens with no network)."""
    before, after = runs
    inline = wai.report(after, tmp_path / "inline.html", baseline=before, repo=None)
    cdn = wai.report(after, tmp_path / "cdn.html", baseline=before, repo=None, plotlyjs="cdn")
    assert inline.stat().st_size > 3_000_000 and cdn.stat().st_size < 300_000
    assert '<script src="https://cdn.plot.ly/plotly-' in cdn.read_text(encoding="utf-8")
    shared = wai.report(after, tmp_path / "site" / "a.html", baseline=before, repo=None, plotlyjs="directory")
    assert '<script src="plotly.min.js"' in shared.read_text(encoding="utf-8")
    assert (tmp_path / "site" / "plotly.min.js").stat().st_size > 3_000_000
    hosted = wai.report(after, tmp_path / "h.html", repo=None, plotlyjs="/static/plotly-2.35.min.js")
    assert '<script src="/static/plotly-2.35.min.js"' in hosted.read_text(encoding="utf-8")
    with pytest.raises(wai.InvalidArgument, match="plotlyjs= is"):
        wai.report(after, tmp_path / "x.html", repo=None, plotlyjs="small")
