"""``wai.Stats`` (issue 31 item 3): the statistics settings as one validated object, accepted as ``stats=`` beside
the keywords, with a conflicting keyword refused by name."""

from __future__ import annotations

import dataclasses

import pytest

import whileai as wai
from whileai_core.defaults import ALPHA, BOOTSTRAP_DRAWS, CI_LEVEL


def _rows(shift: int) -> list[dict]:
    return [{"task_id": f"t{t}", "rollout_index": i, "reward": float((t * 7 + i + shift) % 3 != 0),
             "scenario": {"tool": "a" if t % 2 else "b"}} for t in range(12) for i in range(4)]


def test_stats_is_frozen_validated_and_defaults_from_defaults_py():
    s = wai.Stats()
    assert (s.level, s.alpha, s.draws, s.seed) == (CI_LEVEL, ALPHA, BOOTSTRAP_DRAWS, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.level = 0.9  # type: ignore[misc]
    for bad in ({"level": 1.0}, {"alpha": 0}, {"draws": 0}, {"seed": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            wai.Stats(**bad)
    with pytest.raises(ValueError, match="draws= must be an int"):
        wai.Stats(draws=1.5)  # type: ignore[arg-type]


def test_compare_with_stats_is_compare_with_the_keywords():
    before, after = _rows(0), _rows(1)
    by_object = wai.compare(before, after, by="tool", stats=wai.Stats(level=0.9, draws=500, seed=3))
    by_keywords = wai.compare(before, after, by="tool", level=0.9, draws=500, seed=3)
    assert by_object.to_dict() == by_keywords.to_dict()
    assert str(by_object) == str(by_keywords)
    # a keyword that agrees with the object, or is left at its default, is fine
    same = wai.compare(before, after, by="tool", level=0.9, stats=wai.Stats(level=0.9, draws=500, seed=3))
    assert same.to_dict() == by_object.to_dict()


def test_a_keyword_that_conflicts_with_stats_names_both():
    with pytest.raises(ValueError, match=r"level=0\.8 conflicts with stats=Stats\(level=0\.9\)"):
        wai.compare(_rows(0), _rows(1), level=0.8, stats=wai.Stats(level=0.9))
    with pytest.raises(ValueError, match=r"hack_scan: seed=5 conflicts with stats=Stats\(seed=2\)"):
        wai.hack_scan(_rows(0), seed=5, stats=wai.Stats(seed=2))
    with pytest.raises(TypeError, match="takes a wai.Stats"):
        wai.compare(_rows(0), _rows(1), stats={"level": 0.9})


def test_hack_scan_reads_the_level_and_seed_of_stats():
    rows = [dict(r, final_text="ok " * (1 + int(r["reward"]) * 3)) for r in _rows(0)]
    by_object = wai.hack_scan(rows, permutations=200, stats=wai.Stats(level=0.9, seed=4))
    by_keywords = wai.hack_scan(rows, permutations=200, level=0.9, seed=4)
    assert str(by_object) == str(by_keywords)


@pytest.mark.parametrize("seq", [None, 2])
def test_pass_at_and_delta_report_take_stats_as_their_keywords(seq):
    before, after = _rows(0), _rows(1)
    opts = wai.Stats(level=0.8, alpha=0.1, draws=300, seed=5)
    assert str(wai.pass_at(after, stats=opts)) == str(wai.pass_at(after, level=0.8, draws=300, seed=5))
    assert wai.pass_at(after, stats=opts).ci95 == wai.pass_at(after, level=0.8, draws=300, seed=5).ci95
    by_object = wai.delta_report(before, after, stats=opts, sequential=seq)
    by_keywords = wai.delta_report(before, after, level=0.8, alpha=0.1, draws=300, seed=5, sequential=seq)
    assert str(by_object) == str(by_keywords) and by_object.ci == by_keywords.ci
    with pytest.raises(ValueError, match=r"pass_at: draws=100 conflicts with stats=Stats\(draws=300\)"):
        wai.pass_at(after, draws=100, stats=opts)
    with pytest.raises(ValueError, match=r"delta_report: alpha=0.2 conflicts with stats=Stats\(alpha=0.1\)"):
        wai.delta_report(before, after, alpha=0.2, stats=opts)


STATS_TAKERS = ("compare", "delta_report", "pass_at", "hack_scan", "judge_trust", "eval_variance")


def test_each_function_that_takes_stats_has_the_objects_defaults():
    import inspect

    for name in STATS_TAKERS:
        params = inspect.signature(getattr(wai, name)).parameters
        assert params["stats"].default is None and params["stats"].kind is inspect.Parameter.KEYWORD_ONLY
        for f in dataclasses.fields(wai.Stats):
            if f.name in params:
                assert params[f.name].default == f.default, (name, f.name)


def _labeled() -> list[dict]:
    return [{"task_id": f"t{i}", "rollout_index": 0, "final_text": "x" * (1 + i % 5), "reward": float(i % 3 != 0),
             "gold_reward": float(i % 4 != 0), "gold_kind": "human", "judge_name": "j"} for i in range(40)]


def _judge(row: dict) -> dict:
    return {"reward": float(len(row["final_text"]) % 2), "reason": "length parity"}


@pytest.mark.parametrize("field,value", [("level", 0.8), ("seed", 7)])
def test_judge_trust_takes_stats_as_its_keywords(field, value):
    by_object = wai.judge_trust(_labeled(), _judge, sample=10, stats=wai.Stats(**{field: value}))
    by_keyword = wai.judge_trust(_labeled(), _judge, sample=10, **{field: value})
    assert by_object.to_dict() == by_keyword.to_dict() and str(by_object) == str(by_keyword)
    both = wai.judge_trust(_labeled(), _judge, sample=10, stats=wai.Stats(**{field: value}), **{field: value})
    assert both.to_dict() == by_keyword.to_dict()
    other = {"level": 0.9, "seed": 8}[field]
    with pytest.raises(ValueError, match=rf"judge_trust: {field}={other!r} conflicts with "
                                         rf"stats=Stats\({field}={value!r}\)"):
        wai.judge_trust(_labeled(), _judge, stats=wai.Stats(**{field: value}), **{field: other})


def test_eval_variance_takes_the_level_of_stats():
    runs = [_rows(shift) for shift in range(3)]
    by_object = wai.eval_variance(*runs, stats=wai.Stats(level=0.8))
    by_keyword = wai.eval_variance(*runs, level=0.8)
    assert by_object.to_dict() == by_keyword.to_dict() and str(by_object) == str(by_keyword)
    assert wai.eval_variance(*runs, level=0.8, stats=wai.Stats(level=0.8)).to_dict() == by_keyword.to_dict()
    with pytest.raises(ValueError, match=r"eval_variance: level=0.9 conflicts with stats=Stats\(level=0.8\)"):
        wai.eval_variance(*runs, level=0.9, stats=wai.Stats(level=0.8))
    with pytest.raises(TypeError, match=r"eval_variance\(stats=...\) takes a wai.Stats, got float"):
        wai.eval_variance(*runs, stats=0.8)
