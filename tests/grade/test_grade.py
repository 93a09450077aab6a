import math

import numpy as np
import pytest
import shop

import whileai as wai
from whileai_core.grade.run import JudgeError, normalize_verdict


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@pytest.fixture(scope="module")
def data():
    return wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], repeats=4, budget=32)


@pytest.mark.parametrize("verdict, reward, reason", [
    (True, 1, None), (False, 0, None), (1, 1, None), (0.25, 0.25, None), (np.float64(0.5), 0.5, None),
    ({"reward": 1, "reason": "fine"}, 1, "fine"), ({"score": 0.0}, 0, None),
])
def test_verdict_shapes(verdict, reward, reason):
    r, why, markers, meta = normalize_verdict(verdict)
    assert r == reward and why == reason and markers == {}
    if reward in (0, 1):
        assert isinstance(r, int)


@pytest.mark.parametrize("verdict, match", [
    ("yes", "reward is str"), (1.5, "outside"), (-0.1, "outside"), (math.nan, "outside"),
    ({"verdict": 1}, "without 'reward'"), ({"reward": "1"}, "reward is str"), ({"reward": 1, "reason": 3}, "reason"),
    ({"reward": 1, "markers": {"x": "high"}}, "marker 'x'"), ({"reward": 1, "markers": [1]}, "markers"),
    (None, "NoneType"),
])
def test_contract_breaks(verdict, match):
    with pytest.raises(ValueError, match=match):
        normalize_verdict(verdict)


def test_grade_copies_rows_and_keeps_markers_and_meta(data):
    before = [dict(r) for r in data.rows]
    scored = data.grade(judge=lambda row: {"reward": int(not row["seeded"]), "reason": "r",
                                           "markers": {"called_tool": float(bool(row["steps"])), "na": None},
                                           "confidence": 0.9})
    assert [dict(r) for r in data.rows] == before  # originals untouched
    assert len(scored) == len(data) and scored.n_scored == len(data)
    row = scored.rows[0]
    assert row["judge_name"] == "lambda_judge" and row["judge_status"] == "ok"
    assert row["markers"] == {"called_tool": 1.0, "na": None} and row["judge_meta"] == {"confidence": 0.9}
    assert row["lineage"]["judge"] == "lambda_judge"
    assert sum(r["reward"] for r in scored.rows) == sum(1 for r in data.rows if not r["seeded"])
    assert "ScoredData(32 rows, 32 scored, judge='lambda_judge'" in repr(scored)
    assert len(scored.passes()) + len(scored.failures()) == 32


def test_judge_junk_names_the_row(data):
    def judge(row):
        return "yes" if row["rollout_index"] == 2 else 1

    with pytest.raises(JudgeError, match=r"judge 'judge' failed on row sc-[0-9a-f]+#2 \(task sc-[0-9a-f]+, "
                                          r"rollout 2\).*reward is str"):
        data.grade(judge=judge, on_error="raise")


def test_judge_exception_names_the_row_or_is_kept(data):
    def judge(row):
        if row["rollout_index"] == 1:
            raise KeyError("missing gold")
        return 1

    with pytest.raises(JudgeError, match=r"#1 .*raised KeyError"):
        data.grade(judge=judge, on_error="raise")
    kept = data.grade(judge=judge, on_error="keep", concurrency=4)
    bad = kept.unjudged()
    assert len(bad) == 8 and all(r["judge_status"] == "error" and "KeyError" in r["judge_error"] for r in bad)
    assert kept.n_scored == 24


def test_bad_judge_arguments(data):
    with pytest.raises(TypeError, match="judge="):
        data.grade(judge=None)
    with pytest.raises(ValueError, match="on_error="):
        data.grade(judge=lambda r: 1, on_error="ignore")
    with pytest.raises(AttributeError, match="grade"):
        data.pass_at


def test_hollow_run_warning_when_no_tool_called():
    data = wai.simulate(lambda m: {"steps": [], "final_text": "no."}, tools=[get_order], repeats=1, budget=4)
    scored = data.grade(judge=lambda r: 0)
    assert any("tool" in w for w in scored.warnings)


def test_abstention_is_unjudged_not_a_failure(data):
    scored = data.grade(judge=lambda row: {"reward": None, "reason": "no reference for this task"})
    assert scored.n_scored == 0 and all(r["judge_status"] == "abstained" for r in scored.rows)
    with pytest.raises(JudgeError, match="without a reason"):
        data.grade(judge=lambda row: {"reward": None}, on_error="raise")


def test_context_reaches_judge_worker_threads(data):
    import contextvars

    var = contextvars.ContextVar("probe", default="unset")
    var.set("set by caller")
    seen = set()
    data.grade(judge=lambda row: seen.add(var.get()) or 1, concurrency=4)
    assert seen == {"set by caller"}


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_make_rows_refuses_strings_and_non_string_items():
    with pytest.raises(TypeError, match="prompts= must be a list of strings; got str"):
        wai.rows("abc", "xyz")
    with pytest.raises(TypeError, match=r"prompts\[0\] is int"):
        wai.rows([1, 2], ["a", "b"])
    with pytest.raises(TypeError, match=r"completions\[0\] is NoneType"):
        wai.rows(["q"], [None])
    rows = wai.rows(("q1", "q2"), iter(["a", "b"]))  # any iterable of strings is fine
    assert [r["final_text"] for r in rows] == ["a", "b"]


def test_numpy_verdicts_and_counts_are_accepted():
    np = pytest.importorskip("numpy")
    assert wai.normalize_verdict(np.bool_(True))[0] == 1
    assert wai.normalize_verdict({"reward": np.bool_(False)})[0] == 0
    data = wai.simulate(wai.seeded_agent([shop.get_order]), tools=[shop.get_order], repeats=np.int64(2), budget=np.int64(4))
    assert len(data.rows) == 4 and data.repeats == 2


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_judge_failure_keeps_the_verdicts_already_paid_for(concurrency):
    rows = [{"task_id": f"t{i}", "rollout_index": 0, "final_text": f"reply {i}"} for i in range(30)]

    def judge(row):
        if row["task_id"] == "t20":
            raise RuntimeError("judge backend fell over")
        return 1

    with pytest.raises(JudgeError) as info:
        wai.run_judge(rows, judge, concurrency=concurrency, on_error="raise")
    err = info.value
    assert "t20" in str(err) and "20 row(s) graded before it are in err.partial" in str(err)
    assert [r["task_id"] for r in err.partial] == [f"t{i}" for i in range(20)]
    assert all(r["reward"] == 1 for r in err.partial)
