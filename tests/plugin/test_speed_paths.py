"""The plugin's fast paths (issue 34) give exactly what the general code gives: each is compared with the path it
short-cuts, on a grid of inputs, so a speed-up never changes a stored entry or a printed line."""

from __future__ import annotations

import itertools
import random

import pytest

from pytest_whileai.gate import scenario as S
from pytest_whileai.markers import Thresholds
from pytest_whileai.options import Settings
from whileai_core.gate.ledger import Ledger, gate_rewards


def _settings() -> Settings:
    return Settings(trials=3, seed=0, level=0.95, alpha=0.05, max_drop=0.05, draws=200, permutations=200, power=0.8,
                    baseline=None, require_baseline=False, storage=".whileai", save=None, autosave=False, json=None,
                    markdown=None, junitxml=None, github="off", regression_exit_code=1, fingerprint="", record=None,
                    replay=None, trial_index=None)


def test_all_scored_equals_the_ledger_path() -> None:
    rng = random.Random(7)
    for n in range(0, 9):
        rewards = [rng.choice([0.0, 0.5, 1.0, None]) for _ in range(n)]
        states = [None] * n
        fast = S._all_scored(list(rewards), states)
        assert fast is not None
        for policy in ("fail", "incomplete", "drop"):
            assert fast[0] == gate_rewards(rewards, states, policy)
        assert fast[1] == Ledger().add_states(states).to_dict()
        assert [type(v) for v in fast[1].values()] == [type(v) for v in Ledger().add_states(states).to_dict().values()]
    assert S._all_scored([1.0, None], [None, "abstention"]) is None  # an unscored trial: the general path
    assert S._all_scored([1.0], [None, None]) is None  # lengths differ: the general path


def _entries(rewards: list[float | None], states: list[str | None] | None, metric: str, k: int,
             baseline: dict | None) -> dict:
    return S.judge_scenario(
        key="t[a]", nodeid="t.py::t[a]", rewards=rewards, k=k, seed=0, judge="label", errors=0, pass_reward=1.0,
        level=0.9, thresholds=Thresholds(metric=metric, min_pass_rate=0.6), baseline=baseline, baseline_note=None,
        settings=_settings(), family=3, trial_index=None, scenario=None, location=["t.py", 1], states=states)


@pytest.mark.parametrize("metric", ["pass@1", "pass^k", "pass@k"])
def test_judge_scenario_fast_path_equals_general_path(metric: str, monkeypatch: pytest.MonkeyPatch) -> None:
    baseline = {"key": "t[a]", "k": 4, "judge": "label", "rewards": [1.0, 1.0, 1.0, 0.0], "pass_reward": 1.0}
    cases = [list(r) for n in (1, 2, 4) for r in itertools.product([0.0, 1.0], repeat=n)]
    fast = [_entries(r, None, metric, len(r), baseline if len(r) == 4 else None) for r in cases]
    monkeypatch.setattr(S, "_all_scored", lambda rewards, states: None)  # every entry through Ledger/gate_rewards
    S._INTERVALS.clear()
    slow = [_entries(r, None, metric, len(r), baseline if len(r) == 4 else None) for r in cases]
    assert fast == slow
    assert any(not e["failures"] for e in fast)
    assert metric != "pass@1" or any(e["failures"] for e in fast)  # both outcomes covered


def test_metric_interval_memo_equals_computation_and_is_bounded() -> None:
    S._INTERVALS.clear()
    grid = [(m, c, n, k, lv) for m in ("pass@1", "pass^k", "pass@k") for n in range(0, 6) for c in range(n + 1)
            for k in (1, 3) for lv in (0.9, 0.95)]
    for args in grid:
        first = S.metric_interval(*args)
        again = S.metric_interval(*args)
        assert first == again == S._metric_interval(*args)
        if first[1] is not None:
            assert first[1] is not again[1]  # each entry gets its own list: editing one never edits another
            first[1][0] = -1.0
            assert S.metric_interval(*args)[1] == S._metric_interval(*args)[1]
    assert len(S._INTERVALS) == len(grid)
    S._INTERVALS.clear()
    for args in grid:
        S.metric_interval(*args, memo=5)
    assert len(S._INTERVALS) == 5
    S._INTERVALS.clear()
