"""SDK parity for grading (reference §2.1-2.2): fault statuses, scale=, failure_class, trust=, and the views.

Each test follows the SDK reference's description of the call, not this project's code.
"""

from __future__ import annotations

import pytest

import whileai as wai
from whileai_core.errors import JudgeError


def _rows(n: int = 6, k: int = 2) -> list[dict]:
    return [{"task_id": f"t{i}", "rollout_index": j, "prompt": f"ask {i}", "final_text": f"reply {i}.{j}"}
            for i in range(n) for j in range(k)]


def test_out_of_range_missing_and_raising_judges_are_recorded_not_raised():
    def judge(row):
        i = int(row["task_id"][1:])
        if i == 0:
            return 1.7  # out of [0, 1]
        if i == 1:
            return {"verdict": "pass"}  # no reward key
        if i == 2:
            raise RuntimeError("backend down")
        if i == 3:
            return "yes"  # not a number
        return {"reward": 1, "reason": "fine"}

    scored = wai.run_judge(_rows(), judge)
    by_task = {r["task_id"]: r for r in scored.rows}
    assert by_task["t0"]["judge_status"] == "invalid_result" and by_task["t0"]["reward"] is None
    assert by_task["t0"]["judge_meta"] == {"reward_out_of_range": 1.7}
    assert by_task["t1"]["judge_status"] == "missing_reward"
    assert by_task["t1"]["judge_meta"]["returned_keys"] == ["verdict"]
    assert by_task["t2"]["judge_status"] == "error" and "RuntimeError: backend down" in by_task["t2"]["judge_meta"]["error"]
    assert by_task["t3"]["judge_status"] == "invalid_result" and by_task["t3"]["judge_meta"] == {"returned_type": "str"}
    # unjudged, never failures, and said out loud
    assert len(scored.unjudged()) == 8 and len(scored.failures()) == 0 and len(scored.passes()) == 4
    assert any("8 of 12 rows unjudged" in w and "invalid_result 4" in w for w in scored.warnings)
    with pytest.raises(JudgeError, match="outside"):
        wai.run_judge(_rows(), judge, on_error="raise")


def test_scale_reads_a_rating_as_a_reward():
    ratings = {"t0": 1, "t1": 2, "t2": 3, "t3": 4, "t4": 5, "t5": 9}

    def judge(row):
        r = ratings[row["task_id"]]
        return {"rating": r, "reason": "rated"} if r % 2 else r

    scored = wai.run_judge(_rows(k=1), judge, scale=(1, 5))
    rewards = {r["task_id"]: r["reward"] for r in scored.rows}
    assert rewards == {"t0": 0, "t1": 0.25, "t2": 0.5, "t3": 0.75, "t4": 1, "t5": None}
    row = next(r for r in scored.rows if r["task_id"] == "t2")
    assert row["judge_meta"]["rating"] == 3 and row["judge_meta"]["scale"] == [1.0, 5.0]
    assert next(r for r in scored.rows if r["task_id"] == "t5")["judge_status"] == "invalid_result"
    assert wai.run_judge(_rows(k=1), lambda r: 7, scale=(0, 10)).rows[0]["reward"] == pytest.approx(0.7)
    with pytest.raises(ValueError, match="hi > lo"):
        wai.run_judge(_rows(), judge, scale=(5, 1))


def test_failure_class_is_lifted_onto_the_row():
    scored = wai.run_judge(_rows(k=1), lambda r: {"reward": 0, "failure_class": "invented_id", "note": "x"})
    row = scored.rows[0]
    assert row["failure_class"] == "invented_id" and row["judge_meta"] == {"note": "x"}


def _graded() -> wai.ScoredData:
    rewards = [1, 0, 0.5, 1, 0.25, None]
    rows = [{"task_id": f"t{i}", "rollout_index": 0, "prompt": f"ask {i}", "final_text": f"the reply {i}",
             "privileged": {"reference": "secret answer forty two"}} for i in range(6)]
    rows[4]["final_text"] = "I peeked: secret answer forty two"
    return wai.run_judge(rows, lambda r: {"reward": rewards[int(r["task_id"][1:])],
                                          "reason": "no reference"})


def test_views_pick_rows_by_reward():
    scored = _graded()
    assert [r["task_id"] for r in scored.partials()] == ["t2", "t4"]
    assert [r["task_id"] for r in scored.failed_traces()] == ["t1"] == [r["task_id"] for r in scored.traces]
    assert [r["task_id"] for r in scored.select_by_reward(0.5)] == ["t2"]
    assert [r["task_id"] for r in scored.select_by_reward_range(0.25, 0.5)] == ["t2", "t4"]
    assert [r["task_id"] for r in scored.select_by_reward_range(0.25, 0.5, inclusive=False)] == []
    assert all("privileged" in r for r in scored.trajectories)
    with pytest.raises(TypeError):
        scored.select_by_reward("1")


def test_leak_report_names_the_row_that_quotes_its_privileged_block():
    rep = _graded().leak_report()
    assert rep["checked"] and rep["n_checked"] == 6 and rep["n_leaked"] == 1
    assert rep["leaked"][0]["task_id"] == "t4" and len(rep["leaked"][0]["needle"]) >= 12
    assert "1 of 6 rows" in str(rep)
    assert not wai.run_judge(_rows(), lambda r: 1).leak_report()["checked"]
    assert wai.leak_report(_graded().rows)["n_leaked"] == 1  # the same view on plain rows, from the facade


def test_report_prints_counts_with_n_and_interval():
    rep = _graded().report()
    assert rep["n_rows"] == 6 and rep["n_scored"] == 5 and rep["partials"] == 2 and rep["unjudged"] == 1
    assert rep["mean_reward"] == pytest.approx((1 + 0 + 0.5 + 1 + 0.25) / 5)
    lo, hi = rep["mean_reward_ci95"]
    assert lo <= rep["mean_reward"] <= hi
    text = str(rep)
    assert "(n=5 tasks, 5 rows)" in text and "[" in text and "unjudged 1 (n=6 rows)" in text


def _labeled(n: int = 40) -> tuple[list[dict], list[dict]]:
    rows = [{"task_id": f"t{i}", "rollout_index": 0, "prompt": f"ask {i}",
             "final_text": "correct" if i % 2 else "wrong"} for i in range(n)]
    gold = [{"task_id": r["task_id"], "rollout_index": 0, "gold_reward": int(r["final_text"] == "correct"),
             "gold_kind": "human"} for r in rows]
    return rows, gold


def test_trust_with_gold_rows_runs_judge_trust_after_grading():
    rows, gold = _labeled()
    good = wai.run_judge(rows, lambda r: r["final_text"] == "correct", trust=gold)
    assert good.trust is not None and good.trust.ok and good.trust.n_labeled == 40
    assert good.rows[0]["judge_meta"]["trust"]["ok"] is True
    assert good.rows[0]["judge_meta"]["trust"]["n_gold"] == 40
    lenient = wai.run_judge(rows, lambda r: 1, trust=gold)
    assert not lenient.trust.ok and any("judge trust FAIL" in w for w in lenient.warnings)
    with pytest.raises(ValueError, match="trust='require'"):
        wai.run_judge(rows, lambda r: 1, trust="require")  # no gold on the rows: unmeasured
    with pytest.raises(ValueError, match="trust="):
        wai.run_judge(rows, lambda r: 1, trust="sometimes")
    assert wai.run_judge(rows, lambda r: 1, trust="off").trust is None


def test_compare_judges_ranks_by_kappa():
    rows, gold = _labeled()
    for r, g in zip(rows, gold):
        r.update(gold_reward=g["gold_reward"], gold_kind="human")
    scored = wai.run_judge(rows, lambda r: 1)

    def noisy(row):
        return (row["final_text"] == "correct") != (int(row["task_id"][1:]) % 5 == 0)

    ranking = scored.compare_judges({"exact": lambda r: r["final_text"] == "correct", "noisy": noisy,
                                     "always": lambda r: 1})
    assert [e["name"] for e in ranking] == ["exact", "noisy", "always"]
    assert ranking[0]["kappa"] == pytest.approx(1.0) and ranking[0]["ok"]
    assert ranking[1]["agreement"] == pytest.approx(32 / 40)
    assert "exact" in str(ranking) and "n=40" in str(ranking)
    assert [e["name"] for e in wai.compare_judges(rows, [noisy])] == ["noisy"]  # a list is named by __name__


def test_probe_report_never_prints_none_for_the_resolvable_rate():
    rows = [{"task_id": f"t{i}", "rollout_index": 0, "prompt": f"ask {i}", "final_text": "correct"}
            for i in range(6)]  # every reply passes: the additive probes have no failing row to work on (n=0)
    text = str(wai.judge_probes(rows, lambda r: r["final_text"] == "correct", sample=6))
    assert "None" not in text and "too few rows to resolve any exploit rate" in text
