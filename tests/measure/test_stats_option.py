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
