"""The power line's plan is kept in pytest's cache between runs (issue 34): the same inputs print the same line
without simulating again; ``--cache-clear`` and ``-p no:cacheprovider`` compute it afresh."""

from __future__ import annotations

import json
import re

import pytest

from whileai_core.gate import compare

SUITE = """
import pytest

@pytest.mark.wai_scenarios([f"ask {i}" for i in range(12)])
@pytest.mark.wai(trials=1)
def test_item(wai_eval):
    wai_eval.record([1.0])
"""


def _power_line(result: pytest.RunResult) -> str:
    return next(line.strip() for line in result.outlines if line.strip().startswith("power:"))


def test_trials_needed_reads_and_fills_its_cache():
    """The first call computes the plan and stores it under a key naming every input; the second call returns
    what the cache holds (a planted plan comes back), and other inputs are another key."""
    results = {f"s{i}": {"pass_rate": 1.0, "k": 1} for i in range(12)}
    cache: dict = {}
    plan = compare.trials_needed(results, drop=0.05, power=0.8, alpha=0.05, cache=cache)
    assert plan == compare.trials_needed(results, drop=0.05, power=0.8, alpha=0.05)  # the uncached plan
    [(key, stored)] = cache.items()
    assert stored == {"n": plan["scenarios_needed"], "text": plan["text"]} and "('k', 1)" in key
    cache[key] = {"n": 7, "text": "planted"}
    again = compare.trials_needed(results, drop=0.05, power=0.8, alpha=0.05, cache=cache)
    assert (again["scenarios_needed"], again["text"]) == (7, "planted")
    compare.trials_needed(results, drop=0.05, power=0.9, alpha=0.05, cache=cache)
    assert len(cache) == 2


def test_plugin_keeps_the_plan_in_pytest_cache(pytester: pytest.Pytester):
    """Run 1 writes the plan to .pytest_cache; run 2 prints the line from it (a planted number shows, so it
    was read, not recomputed); --cache-clear computes the true plan again."""
    pytester.makepyfile(test_suite=SUITE)
    first = _power_line(pytester.runpytest_inprocess())
    n = int(re.match(r"power: (\d+) scenarios", first).group(1))
    path = pytester.path / ".pytest_cache" / "v" / "whileai" / "power_plans"
    plans = json.loads(path.read_text())
    assert [p["n"] for p in plans.values()] == [n]
    assert _power_line(pytester.runpytest_inprocess()) == first
    path.write_text(json.dumps({key: {"n": 3, "text": "planted"} for key in plans}))
    assert _power_line(pytester.runpytest_inprocess()).startswith("power: 3 scenarios x k=1")
    assert _power_line(pytester.runpytest_inprocess("--cache-clear")) == first
