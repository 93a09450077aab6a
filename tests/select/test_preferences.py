"""build_preference_pairs (margin, length matching, confound warnings) and curriculum (tiers by pass rate)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import whileai as wai
from whileai_core.select.curriculum import curriculum, retire_solved
from whileai_core.select.preferences import build_preference_pairs


def _row(prompt, i, text, reward, **kw):
    return {"task_id": prompt, "rollout_index": i, "row_id": f"{prompt}#{i}", "prompt": prompt,
            "final_text": text, "reward": reward, **kw}


def test_pairs_respect_margin_and_never_reuse_rows():
    rows = [_row("p1", 0, "good answer", 1), _row("p1", 1, "bad", 0), _row("p1", 2, "meh", 0.5),
            _row("p2", 0, "x", 1), _row("p2", 1, "y", 1),  # no contrast
            _row("p3", 0, "a", 0.9), _row("p3", 1, "b", 0.2)]
    pairs, report = build_preference_pairs(rows)
    assert [(p["task_id"], p["chosen"]["row_id"], p["rejected"]["row_id"]) for p in pairs] == [("p1", "p1#0", "p1#1")]
    assert report["prompts_seen"] == 3 and report["prompts_with_contrast"] == 1
    res = build_preference_pairs(rows, min_margin=0.5, max_pairs_per_prompt=2)
    got = {(p["chosen"]["row_id"], p["rejected"]["row_id"]) for p in res.pairs}
    assert ("p3#0", "p3#1") in got and len(res) == 2  # p1 has 3 rows: only one pair can be made without reuse
    used = [p[s]["row_id"] for p in res.pairs for s in ("chosen", "rejected")]
    assert len(used) == len(set(used))
    assert all(p["margin"] >= 0.5 for p in res.pairs)
    with pytest.raises(ValueError, match="min_margin= must be a number > 0"):
        build_preference_pairs(rows, min_margin=0)


def test_length_matching_picks_the_closest_rejected_and_reduces_the_confound():
    rng = np.random.default_rng(0)
    rows = []
    for t in range(40):
        p = f"task {t}"
        rows.append(_row(p, 0, "w " * int(rng.integers(40, 60)), 1))  # long passing reply
        rows.append(_row(p, 1, "w " * 5, 0))  # short failing reply
        rows.append(_row(p, 2, "w " * int(rng.integers(40, 60)), 0))  # long failing reply
    matched = build_preference_pairs(rows)
    unmatched = build_preference_pairs(rows, length_match=False)
    assert len(matched) == len(unmatched) == 40
    assert all(p["rejected"]["rollout_index"] == 2 for p in matched.pairs)
    lm, lu = matched.report["length"], unmatched.report["length"]
    assert abs(lm["median_delta"]) < 40 < abs(lu["median_delta"])
    assert any("length confound" in w for w in unmatched.report["warnings"])
    # the chosen-longer share carries a Wilson interval equal to scipy's
    k = lu["chosen_longer"]
    ci = stats.binomtest(k, 40).proportion_ci(method="wilson")
    assert lu["chosen_longer_ci"] == pytest.approx([ci.low, ci.high], abs=1e-12)
    assert "CI" in str(unmatched) and "n=40" in str(unmatched)


def test_pair_fields_filters_and_warnings():
    steps = [{"tool": "lookup", "arguments": {"id": 1}, "result": "ok"}]
    rows = [_row("Where is my order?", 0, "It ships today.", 1, steps=steps, reason="right"),
            _row("  where is MY order? ", 1, "No idea.", 0, steps=steps, reason="wrong",
                 lineage={"source": "eval"}),
            _row("q", 0, "a", 1, judge_status="error"), _row("q", 1, "b", 0), _row("q", 2, "c", None)]
    pairs, report = build_preference_pairs(rows)
    assert len(pairs) == 1  # prompts are normalised; the errored judge row is not used
    p = pairs[0]
    assert p["first_turn_differs"] is False and p["chosen_reason"] == "right"
    assert p["length_delta"] == len("It ships today.") - len("No idea.")
    assert report["first_turn_identical"] == 1 and report["eval_sourced"] == 1
    assert any("identical first turns" in w for w in report["warnings"])
    assert any("eval-sourced" in w for w in report["warnings"])
    empty = build_preference_pairs([_row("z", 0, "x", 1)])
    assert len(empty) == 0 and "raise repeats=" in empty.report["note"] and "0 from 1 prompts" in str(empty)
    assert wai.build_preference_pairs is build_preference_pairs


def test_pairs_feed_the_dpo_formatter():
    from whileai_core.train.trl_formats import to_dpo

    rows = [_row("p", 0, "yes", 1), _row("p", 1, "no", 0)]
    result = build_preference_pairs(rows)
    triples = to_dpo(result)
    assert triples[0]["chosen"][-1]["content"] == "yes" and triples[0]["rejected"][-1]["content"] == "no"


# --------------------------------------------------------------------------------------------------
# curriculum
# --------------------------------------------------------------------------------------------------


def _task_rows(tid, passes, n):
    return [_row(tid, i, "x", int(i < passes)) for i in range(n)]


def test_curriculum_classifies_and_tiers_easy_to_hard():
    rows = (_task_rows("solved", 8, 8) + _task_rows("hopeless", 0, 8) + _task_rows("thin", 1, 1)
            + _task_rows("a", 6, 8) + _task_rows("b", 5, 8) + _task_rows("c", 4, 8) + _task_rows("d", 3, 8)
            + _task_rows("e", 2, 8) + _task_rows("f", 6, 8))
    plan = curriculum(rows)
    assert plan.retired == ["solved"] and plan.not_ready == ["hopeless"] and plan.thin == ["thin"]
    assert plan.schedule == ["a", "f", "b", "c", "d", "e"]  # pass rate descending, ties by id
    assert plan.tiers == [["a", "f"], ["b", "c"], ["d", "e"]]
    t = plan.tasks["c"]
    ci = stats.binomtest(4, 8).proportion_ci(method="wilson")
    assert t["pass_rate"] == 0.5 and t["ci"] == pytest.approx([ci.low, ci.high], abs=1e-6) and t["tier"] == 2
    text = str(plan)
    assert "trainable 6" in text and "tier 1: 2 tasks" in text and "n=8" in text
    d = plan.to_dict()
    assert d["n_trainable"] == 6 and d["schedule"] == plan.schedule
    # thresholds are inclusive at the band edges
    edge = curriculum(_task_rows("lo", 2, 10) + _task_rows("hi", 8, 10))
    assert sorted(edge.trainable) == ["hi", "lo"]
    assert wai.curriculum is curriculum


def test_curriculum_errors_notes_and_retire_solved():
    rows = _task_rows("s", 4, 4) + _task_rows("m", 2, 4)
    assert any("uncertain" in n for n in curriculum(rows).notes)
    kept = retire_solved(rows)
    assert {r["task_id"] for r in kept} == {"m"} and len(kept) == 4
    frac = [_row("f", i, "x", 0.5) for i in range(4)]
    assert curriculum(frac).tasks["f"]["pass_rate"] == 0.5
    with pytest.raises(ValueError, match="floor= .* must be <= solved="):
        curriculum(rows, floor=0.9, solved=0.5)
    with pytest.raises(ValueError, match="tiers= must be an int >= 1"):
        curriculum(rows, tiers=0)
