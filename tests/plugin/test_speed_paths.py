"""The plugin's fast paths (issue 34) give exactly what the general code gives: each is compared with the path it
short-cuts, on a grid of inputs, so a speed-up never changes a stored entry or a printed line."""

from __future__ import annotations

import itertools
import json
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
    for n in range(9):
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
    grid = [(m, c, n, k, lv) for m in ("pass@1", "pass^k", "pass@k") for n in range(6) for c in range(n + 1)
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


MARKS_SUITE = '''
import pytest

pytestmark = pytest.mark.wai(trials=2)
SEEN = {}


@pytest.mark.wai_scenarios(["ask one", "ask two", "ask three"])
def test_module_mark(wai_eval):
    SEEN[wai_eval.key] = wai_eval.trials
    wai_eval.record([1.0] * wai_eval.trials)


@pytest.mark.wai(trials=4)
class TestClass:
    @pytest.mark.wai_scenarios(["ask four", "ask five"])
    def test_class_mark(self, wai_eval):
        SEEN[wai_eval.key] = wai_eval.trials
        wai_eval.record([1.0] * wai_eval.trials)

    @pytest.mark.wai_scenarios(["ask six"])
    @pytest.mark.wai(trials=1)
    @pytest.mark.wai_key("pinned")
    def test_own_mark(self, wai_eval):
        SEEN[wai_eval.key] = wai_eval.trials
        wai_eval.record([1.0])


def test_zz_report():
    import json
    with open("seen.json", "w") as f:
        json.dump(SEEN, f)
'''

# a conftest that gives one item its own wai marker before the plugin parses them: that item alone differs
MARKS_CONFTEST = '''
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if "ask-two" in item.nodeid or "ask-five" in item.nodeid:
            item.add_marker(pytest.mark.wai(trials=5 if "ask-two" in item.nodeid else 3))
'''


def test_marker_walks_shared_by_a_tests_items_give_each_items_closest_marker(pytester: pytest.Pytester) -> None:
    """closest_wai_marks walks once per (parent, own markers): module, class and function markers and the ones a
    conftest added to single items each reach the right items, as get_closest_marker says."""
    pytester.makeconftest(MARKS_CONFTEST)
    pytester.makepyfile(test_marks=MARKS_SUITE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=7)
    seen = json.loads((pytester.path / "seen.json").read_text())
    by_ask = {key.split("[")[1].split("-ask-")[0]: trials for key, trials in seen.items()}
    assert by_ask == {"ask-one": 2, "ask-two": 5, "ask-three": 2, "ask-four": 4, "ask-five": 3, "ask-six": 1}
    assert any(key.startswith("pinned[") for key in seen)


def test_closest_wai_marks_equals_get_closest_marker(pytester: pytest.Pytester) -> None:
    from pytest_whileai.markers import WAI_MARK_NAMES, closest_wai_marks

    pytester.makeconftest(MARKS_CONFTEST)
    pytester.makepyfile(test_marks=MARKS_SUITE)
    items, _ = pytester.inline_genitems("-p", "no:cacheprovider")
    seen: dict = {}
    for item in items:
        assert closest_wai_marks(item, seen) == tuple(item.get_closest_marker(n) for n in WAI_MARK_NAMES)
    assert len(seen) < len(items)  # items of one test (and one parent) shared a walk


ASKS_SUITE = '''
import pytest
from whileai_core.simulate.situations import Scenario
from whileai_core.rows import stable_id

ASKS = ["ask number 1", "ask number 2", Scenario("a built one", task_id="t-built")]

@pytest.mark.wai_scenarios(ASKS)
def test_handle(wai_eval, request):
    sc = wai_eval.scenario
    assert type(sc) is Scenario
    expected = "t-built" if str(sc) == "a built one" else "ask-" + stable_id(str(sc))
    assert sc.task_id == expected and sc.rollout_index == 0 and sc.scenario == {} and sc.world_state == "present"
    with open("params.txt", "a") as f:
        f.write(f"PARAM {type(request.node.callspec.params['wai_eval']).__name__} {request.node.callspec.id}\\n")
    wai_eval.record([1.0] * wai_eval.trials)

@pytest.mark.wai_scenarios(["ask number 1"])
def test_fixture(wai_eval, wai_scenario):
    assert type(wai_scenario) is Scenario and wai_scenario.task_id == "ask-" + stable_id("ask number 1")
    wai_eval.record([1.0] * wai_eval.trials)

@pytest.mark.wai_scenarios(["ask number 1"], ids=lambda sc: "cb-" + sc.task_id)
def test_callable_ids(wai_eval):
    assert type(wai_eval.scenario) is Scenario
    wai_eval.record([1.0] * wai_eval.trials)
'''


def test_plain_asks_stay_str_until_the_test_runs(pytester: pytest.Pytester) -> None:
    """A wai_eval-only wai_scenarios test keeps its plain str asks as str parameters (ids unchanged) and its
    wai_eval.scenario is the Scenario collection would have made; wai_scenario and an ids= callable still get
    Scenarios; the stored entries name the same scenario ids as before."""
    from whileai_core.rows import stable_id

    pytester.makepyfile(test_asks=ASKS_SUITE)
    out = pytester.path / "run.json"
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--wai-json={out}")
    result.assert_outcomes(passed=5)
    params = sorted((pytester.path / "params.txt").read_text().splitlines())
    tid1, tid2 = "ask-" + stable_id("ask number 1"), "ask-" + stable_id("ask number 2")
    assert params == sorted([f"PARAM str ask-number-1-{tid1}", f"PARAM str ask-number-2-{tid2}",
                             "PARAM Scenario a-built-one-t-built"])
    doc = json.loads(out.read_text())
    ids = {sc["key"].split("::")[-1]: sc["scenario_id"] for sc in doc["scenarios"]}
    assert ids == {f"test_handle[ask-number-1-{tid1}]": tid1, f"test_handle[ask-number-2-{tid2}]": tid2,
                   "test_handle[a-built-one-t-built]": "t-built", f"test_fixture[ask-number-1-{tid1}]": tid1,
                   f"test_callable_ids[cb-{tid1}]": tid1}


def test_scenario_ask_equals_the_checked_constructor() -> None:
    """Scenario.ask (the fast constructor ask_scenario uses) makes what Scenario(prompt, task_id=) makes: equal
    attributes in the same order, its own dicts, and the same pickle round trip."""
    import pickle

    from whileai_core.simulate.situations import Scenario

    for prompt, tid in [("ask number 1", "ask-0123456789"), ("", "t"), ("é ✓", "x-1")]:
        fast, checked = Scenario.ask(prompt, tid), Scenario(prompt, task_id=tid)
        assert type(fast) is Scenario and str(fast) == str(checked)
        assert list(vars(fast).items()) == list(vars(checked).items())
        assert fast.scenario is not Scenario.ask(prompt, tid).scenario
        fast.faults["mode"] = "timeout"
        assert Scenario.ask(prompt, tid).faults == {}
        assert list(vars(pickle.loads(pickle.dumps(checked))).items()) == list(vars(checked).items())
        assert fast.replace(rollout_index=2).rollout_index == 2
    from whileai_core.errors import InvalidArgumentType

    with pytest.raises(InvalidArgumentType):
        Scenario.ask(123, "t")  # type: ignore[arg-type]  # not a str: the checked constructor's error


PLANNED_SUITE = '''
import pytest

PLANNED = []

@pytest.mark.wai_scenarios(["ask one", "ask two"])
def test_scen(wai_eval):
    wai_eval.record([1.0] * wai_eval.trials)

def test_plain():
    pass

@pytest.mark.whileai
def test_marked_by_hand():
    pass

def test_zz_planned(request):
    from pytest_whileai.keys import WAI_SESSION
    import json
    with open("planned.json", "w") as f:
        json.dump(request.config.stash[WAI_SESSION].planned, f)
'''


def test_planned_lists_marked_items_and_hand_marked_ones(pytester: pytest.Pytester) -> None:
    """pytest_collection_finish's planned list: the items the plugin marked (found by id) and, through the marker
    lookup, one a user marked whileai by hand; never a plain test."""
    pytester.makepyfile(test_planned=PLANNED_SUITE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=5)
    planned = json.loads((pytester.path / "planned.json").read_text())
    names = [p.split("::")[-1].split("[")[0] for p in planned]
    assert names == ["test_scen", "test_scen", "test_marked_by_hand"]


SHARED_SUITE = '''
import pytest

@pytest.mark.wai_key("same")
def test_a(wai_eval):
    wai_eval.record([1.0] * wai_eval.trials)

@pytest.mark.wai_key("same")
def test_b(wai_eval):
    wai_eval.record([1.0] * wai_eval.trials)

@pytest.mark.wai_key("same")
def test_c(wai_eval):
    wai_eval.record([1.0] * wai_eval.trials)

@pytest.mark.wai_key("other")
def test_d(wai_eval):
    wai_eval.record([1.0] * wai_eval.trials)

def test_e(wai_scenario):
    pass
'''


def test_refuse_shared_keys_names_every_test_of_a_shared_key(pytester: pytest.Pytester) -> None:
    """Three tests pinned to one key each get the error naming all three, in collection order; a test alone on
    its key and a test without wai_eval are left alone; the count is the refused tests."""
    from pytest_whileai.collect import refuse_shared_keys
    from pytest_whileai.keys import MARK_ERROR, WAI_KEY

    pytester.makepyfile(test_shared=SHARED_SUITE)
    items, _ = pytester.inline_genitems("-p", "no:cacheprovider", "-p", "no:randomly")
    by_name = {item.name: item for item in items}
    names = "test_shared.py::test_a, test_shared.py::test_b, test_shared.py::test_c"
    for name in ("test_a", "test_b", "test_c"):
        assert names in by_name[name].stash[MARK_ERROR]
        assert "3 tests share the baseline key 'same'" in by_name[name].stash[MARK_ERROR]
    assert MARK_ERROR not in by_name["test_d"].stash and MARK_ERROR not in by_name["test_e"].stash
    for item in items:  # run again on the marked items: already refused, none counted twice
        assert WAI_KEY in item.stash or item.name == "test_e"
    assert refuse_shared_keys(items, WAI_KEY, MARK_ERROR) == 0
    fresh = [by_name[n] for n in ("test_a", "test_b", "test_d")]
    for item in fresh:
        if MARK_ERROR in item.stash:
            del item.stash[MARK_ERROR]
    assert refuse_shared_keys(fresh, WAI_KEY, MARK_ERROR) == 2
