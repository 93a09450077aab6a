"""Fixtures: ``wai_eval`` (run k trials on the current scenario), ``wai_scenario``, ``wai_baseline``,
``wai_judge``, ``wai_session``, and the ``WaiResult`` a run returns. ``wai`` is the deprecated name of
``wai_eval`` (it shadowed ``import whileai as wai`` inside a test); it warns and goes in the next release.

One test item is one scenario run k times; its verdict is statistical (the item fails on its thresholds, with
pass counts, the interval, the baseline and the delta), never one pytest failure per trial.
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from pytest_whileai.collect import ask_scenario
from pytest_whileai.gate.lines import first_line, summary_line
from pytest_whileai.keys import MARK_ERROR, WAI_KEY, WAI_RESULT, WAI_SESSION, WAI_THRESHOLDS
from pytest_whileai.markers import Thresholds, parse_scenarios_marker
from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument
from whileai_core.redact import error_text

NO_THRESHOLDS = Thresholds()  # an item without parsed thresholds (frozen: one shared instance)


class WaiResult:
    """The k trials of one scenario: rewards, pass counts, the interval, and the comparison to the baseline.

    Fields are attributes; ``to_dict()`` is the JSON entry stored in the run document.
    """

    def __init__(self, entry: dict[str, Any]) -> None:
        self._entry = entry

    def __getattr__(self, name: str) -> Any:
        try:
            return self._entry[name]
        except KeyError:
            raise AttributeError(f"WaiResult has no field {name!r}; fields: {', '.join(sorted(self._entry))}") from None

    @property
    def passed(self) -> bool:
        """True when the scenario met its thresholds (no failures)."""
        return not self._entry.get("failures")

    def to_dict(self) -> dict[str, Any]:
        return dict(self._entry)

    def __str__(self) -> str:
        return summary_line(self._entry)

    def __repr__(self) -> str:
        return f"WaiResult({summary_line(self._entry)})"


class WaiHandle:
    """The ``wai_eval`` fixture: ``wai_eval.run(agent, judge=...)`` or ``wai_eval.record(rewards)``, once per test.

    Either call fails the test (with counts, interval, baseline, delta and a reproduce line) when the scenario
    misses its thresholds, so code after it runs only for a scenario that met them."""

    def __init__(self, request: pytest.FixtureRequest, session: Any, scenario: Any) -> None:
        self._request = request
        self._item = request.node
        self._session = session
        self.scenario = scenario
        stash = self._item.stash  # ``in`` and [], not Stash.get: a method call, and a caught KeyError when absent
        self.thresholds: Thresholds = stash[WAI_THRESHOLDS] if WAI_THRESHOLDS in stash else NO_THRESHOLDS  # noqa: SIM401
        self.key: str = stash[WAI_KEY] if WAI_KEY in stash else self._item.nodeid  # noqa: SIM401
        self.seed: int = session.settings.seed
        self.level: float = self.thresholds.level or session.settings.level
        self.trials: int = self.thresholds.trials or session.settings.trials
        callspec = getattr(self._item, "callspec", None)
        self.round: int | None = callspec.params.get("wai_round") if callspec is not None else None

    @property
    def baseline(self) -> dict[str, Any] | None:
        """This scenario's entry in the baseline run, or ``None``."""
        return self._session.baseline_index.get(self.key)

    def trial_indices(self) -> list[int]:
        """The trial indices this run executes (all k, or only ``--wai-trial-index``)."""
        only = self._session.settings.trial_index
        if only is not None:
            if only >= self.trials:
                raise InvalidArgument(f"--wai-trial-index={only} but this test runs k={self.trials} trials "
                                      f"(0..{self.trials - 1})")
            return [only]
        if self.round is not None:  # --wai-sequential: this item runs one round of the scenario's trials
            from whileai_core.measure.sequential import SequentialPlan

            return list(SequentialPlan(self._session.settings.round_trials, self.trials).trials(self.round))
        return list(range(self.trials))

    def run(self, agent: Callable[[Any], Any], scenario: Any = None, *, judge: Callable[[Any], Any] | None = None,
            tools: Sequence[Any] | None = None, system_prompt: str | None = None,
            pass_reward: float = D.GATE_PASS_REWARD) -> WaiResult:
        """Run ``agent`` k times on the scenario (``scenario=`` or the parametrized one), grade each trial with
        ``judge`` (default: the ``wai_judge`` fixture) and judge the result against the thresholds and baseline.
        """
        from whileai_core.grade.run import normalize_verdict
        from whileai_core.simulate.run import rollout

        scenario = self.scenario if scenario is None else scenario
        if scenario is None:
            raise InvalidArgument("wai_eval.run() needs a scenario: parametrize the test with "
                                  "@pytest.mark.wai_scenarios(...) or pass scenario='the user message'")
        if judge is None:
            judge = self._request.getfixturevalue("wai_judge")
        if judge is None or not callable(judge):
            raise InvalidArgument("wai_eval.run() needs judge=: a callable row -> reward in [0, 1] (or {'reward': "
                                  "...}), or define a wai_judge fixture in conftest.py")
        mark = self._item.get_closest_marker("wai_scenarios")
        spec = parse_scenarios_marker(mark) if mark is not None else {}
        tools = tools if tools is not None else spec.get("tools")
        agent, tools = _framework_agent(agent, tools)
        system_prompt = system_prompt if system_prompt is not None else spec.get("system_prompt")
        judge_name = getattr(judge, "name", None) or getattr(judge, "__name__", None) or type(judge).__name__
        rewards: list[float | None] = []
        states: list[str | None] = []  # the ledger: None (scored) or why the trial is unscored
        trouble = _Trouble()
        kept = _Kept(self.key, pass_reward)
        planned = self.trial_indices()
        for i in planned:
            row = rollout(agent, scenario, rollout_index=i, seed=self.seed, tools=tools, system_prompt=system_prompt)
            reward, state = trouble.grade(row, judge, normalize_verdict, index=i)
            row["reward"] = reward
            rewards.append(reward)
            states.append(state)
            self._item.config.hook.pytest_whileai_trial_finished(
                item=self._item, trial={"key": self.key, "index": i, "seed": self.seed, "reward": reward, "row": row})
            if kept.add(row, i, reward, self._session):
                break  # the budget is spent: this scenario stops here, and the next ones skip (wai_eval)
        left = len(planned) - len(rewards)  # planned trials the budget stopped: in the ledger, never dropped
        rewards += [None] * left
        states += ["budget_stop"] * left
        return self._finish(rewards, judge=str(judge_name), pass_reward=pass_reward, scenario=scenario,
                            extra=kept.fields(), states=states, **trouble.fields())

    def record(self, rewards: Sequence[float | int | bool | None], *, judge: str | None = None,
               pass_reward: float = D.GATE_PASS_REWARD) -> WaiResult:
        """Record k rewards your own loop computed (one per trial index, None = unscored) and judge them."""
        values = list(rewards)
        expected = len(self.trial_indices())
        if len(values) != expected:
            raise InvalidArgument(f"wai_eval.record() got {len(values)} rewards; this test runs k={expected} "
                                  "trial(s) (set @pytest.mark.wai(trials=...) or --wai-trials)")
        clean: list[float | None] = []
        for i, r in enumerate(values):
            if r is None:
                clean.append(None)
                continue
            v = float(r)
            if not 0.0 <= v <= 1.0:
                raise InvalidArgument(f"wai_eval.record(): rewards[{i}] = {r!r}; a reward is a number in [0, 1] "
                                      "or None")
            clean.append(v)
        return self._finish(clean, judge=judge, errors=0, pass_reward=pass_reward, scenario=self.scenario,
                            states=[None if r is not None else "abstention" for r in clean])

    def _finish(self, rewards: list[float | None], *, judge: str | None, errors: int, pass_reward: float,
                scenario: Any, states: list[str | None], extra: dict[str, Any] | None = None,
                **trouble: Any) -> WaiResult:
        judge_scenario = _gate_scenario().judge_scenario
        if WAI_RESULT in self._item.stash:
            raise RuntimeError("wai_eval.run()/wai_eval.record() was already called in this test; one test is one "
                               "scenario (parametrize with @pytest.mark.wai_scenarios for more)")
        rounds = self.round is not None  # a round is judged with the suite after it, not alone against the baseline
        entry = judge_scenario(
            key=self.key, nodeid=self._item.nodeid, rewards=rewards, k=self.trials, seed=self.seed, judge=judge,
            errors=errors, pass_reward=pass_reward, level=self.level, thresholds=self.thresholds,
            baseline=None if rounds else self.baseline, baseline_note=self._session.baseline_note,
            settings=self._session.settings, family=max(1, self._session.n_compared),
            trial_index=self._session.settings.trial_index, scenario=scenario, location=_location(self._item),
            states=states, policy=self._session.settings.unscored, **trouble)
        entry.update(extra or {})
        if entry.get("budget_stop"):
            entry["failures"].append(entry["budget_stop"])
        if rounds:
            entry.update(round=self.round, trial_indices=self.trial_indices(),
                         baseline_note="sequential: each round is judged with the whole suite after it")
        result = WaiResult(entry)
        self._item.stash[WAI_RESULT] = entry  # the entry, not the WaiResult: one object less kept per item
        self._session.add_result(entry)  # xdist workers send these to the controller in workeroutput
        if entry["failures"]:
            from pytest_whileai.gate.scenario import failure_message

            __tracebackhide__ = True
            pytest.fail(failure_message(entry, baseline_name=self._session.settings.baseline), pytrace=False)
        return result


@functools.cache
def _gate_scenario() -> Any:
    """``pytest_whileai.gate.scenario`` (it imports numpy: not before a result), imported at the first result and
    kept: an import statement in the function that runs once per item costs microseconds even for a loaded
    module (issue 34)."""
    from pytest_whileai.gate import scenario

    return scenario


def _framework_agent(agent: Any, tools: Any) -> tuple[Any, Any]:
    """A framework's agent object as its adapter (``wai.agent``), its own tools the world's when none are given."""
    from whileai_core.adapters import agent as adapt
    from whileai_core.adapters import is_framework_agent

    if isinstance(agent, str) or not is_framework_agent(agent):
        return agent, tools
    adapter = adapt(agent)
    return adapter, tools if tools is not None else (adapter.tools() or None)


class _Kept:
    """What a report needs beyond the rewards: the failing trials' transcripts (up to
    ``REPORT_TRANSCRIPTS_PER_SCENARIO``), the tokens spent by model, and why the budget stopped the trials."""

    def __init__(self, key: str, pass_reward: float) -> None:
        self.key, self.pass_reward = key, pass_reward
        self.transcripts: list[dict[str, Any]] = []
        self.usage: dict[str, dict[str, int]] = {}
        self.stop: str | None = None
        self.faults = [0, 0]  # trials whose scheduled fault missed the agent's tool calls, trials with one

    def add(self, row: dict[str, Any], index: int, reward: float | None, session: Any) -> str | None:
        """Keep one trial; returns the budget's message when this trial spent the budget."""
        from whileai_core.adapters.routing import missed
        from whileai_core.report.cost import add_usage, row_usage
        from whileai_core.report.inputs import transcript, trial_status

        spent = row_usage(row)
        add_usage(self.usage, spent)
        if row.get("faults_scheduled"):
            self.faults[0] += missed(row)
            self.faults[1] += 1
        if (len(self.transcripts) < D.REPORT_TRANSCRIPTS_PER_SCENARIO
                and trial_status(row, reward, self.pass_reward) != "passed"):
            self.transcripts.append(transcript(row, key=self.key, index=index, reward=reward,
                                               pass_reward=self.pass_reward))
        over = session.spend(spent)
        if over:
            self.stop = (f"{over}: the run stopped after trial {index} of this scenario; the trials so far are kept "
                         "and the gate is incomplete")
            session.budget_note = self.stop
        return self.stop

    def fields(self) -> dict[str, Any]:
        return {"transcripts": self.transcripts, "usage": self.usage, "budget_stop": self.stop,
                "faults_undelivered": self.faults[0], "faults_scheduled": self.faults[1]}


class _Trouble:
    """Grades the trials of one ``wai_eval.run`` and counts what went wrong, keeping the first text of each kind.

    Each trial ends in one ledger state (``whileai_core.gate.ledger``): scored (None), or unscored with a reason.
    An agent that raised (``agent_error``) fails its trial (reward 0) and a failed backend (``infra_error``)
    leaves it unscored; neither row is sent to the judge. A judge that raises (``judge_error``), returns NaN
    (``nan_verdict``) or a bare None (``none_verdict``) leaves its trial unscored and counts as a judge error; a
    verdict ``{"reward": None, "reason": ...}`` is an ``abstention``."""

    def __init__(self) -> None:
        self.counts = {"agent_error": 0, "judge_error": 0, "infra_error": 0}
        self.first: dict[str, str] = {}

    def _note(self, kind: str, text: Any, index: int) -> None:
        self.counts[kind] += 1
        if kind not in self.first:
            self.first[kind] = f"{first_line(text, D.PLUGIN_ERROR_LINE_CHARS)} (first at trial {index})"

    def grade(self, row: dict[str, Any], judge: Callable[[Any], Any], normalize: Callable[[Any], Any], *,
              index: int) -> tuple[float | None, str | None]:
        """(reward, ledger state) of one trial."""
        status = row.get("status")
        if status in ("agent_error", "infra_error"):
            self._note(status, row.get("error") or status, index)
            row["judge_status"] = f"skipped_{status}"
            return (0.0, "agent_error") if status == "agent_error" else (None, "infra_error")
        try:
            verdict = judge(row)
        except Exception as exc:  # noqa: BLE001  # a judge failure is an unscored trial, never a pass
            return self._judge_fault(row, error_text(exc), "judge_error", index)
        if verdict is None:
            return self._judge_fault(row, "the judge returned None (no verdict)", "none_verdict", index)
        raw = verdict.get("reward", verdict.get("score")) if isinstance(verdict, dict) else verdict
        if isinstance(raw, float) and math.isnan(raw):
            return self._judge_fault(row, "the judge returned NaN", "nan_verdict", index)
        try:
            value, reason = normalize(verdict)[:2]
        except Exception as exc:  # noqa: BLE001
            return self._judge_fault(row, error_text(exc), "judge_error", index)
        row["reason"] = reason  # the judge's words, for the report's transcript viewer
        return (None, "abstention") if value is None else (float(value), None)

    def _judge_fault(self, row: dict[str, Any], text: str, state: str, index: int) -> tuple[None, str]:
        row["judge_error"] = text
        self._note("judge_error", text, index)
        return None, state

    def fields(self) -> dict[str, Any]:
        """The keyword arguments ``gate.judge_scenario`` takes for them."""
        return {"errors": self.counts["agent_error"], "agent_error": self.first.get("agent_error"),
                "judge_errors": self.counts["judge_error"], "judge_error": self.first.get("judge_error"),
                "infra_errors": self.counts["infra_error"], "infra_error": self.first.get("infra_error")}


def _location(item: pytest.Item) -> list[Any]:
    """[absolute path, 1-based line] of the test definition (from item.location, computed at collection)."""
    path, line, _ = item.location
    return [os.path.join(str(item.config.rootpath), path), (line or 0) + 1]


@pytest.fixture
def wai_scenario(request: pytest.FixtureRequest) -> Any:
    """The current scenario (a ``Scenario`` str) when the test is expanded by ``wai_scenarios``; else None.

    (``wai_scenarios`` parametrizes this name directly, which replaces this fixture on those items.)"""
    return None


@pytest.fixture
def wai_round() -> int | None:
    """The round (0-based) of this item under ``--wai-sequential`` (parametrized there); else None."""
    return None


@pytest.fixture
def wai_judge() -> Callable[[Any], Any] | None:
    """The default judge for ``wai_eval.run``; override this fixture in conftest.py to set one for a suite."""
    return None


@pytest.fixture(scope="session")
def wai_session(request: pytest.FixtureRequest) -> Any:
    """The plugin's run state (settings, baseline, results so far)."""
    return request.config.stash[WAI_SESSION]


@pytest.fixture
def wai_baseline(request: pytest.FixtureRequest, wai_session: Any) -> dict[str, Any] | None:
    """This test's entry in the baseline run (pass counts and per-trial rewards), or None."""
    return wai_session.baseline_index.get(request.node.stash.get(WAI_KEY, request.node.nodeid))


@pytest.fixture
def wai_eval(request: pytest.FixtureRequest) -> WaiHandle:
    """Run k trials of an agent on the current scenario: ``result = wai_eval.run(agent, judge=...)``.

    Example::

        @pytest.mark.wai_scenarios(tools=[get_order], system_prompt="Help customers with orders.")
        def test_order_desk(wai_eval):
            wai_eval.run(agent, judge=lambda row: {"reward": int("order" in row["final_text"].lower())})
    """
    if MARK_ERROR in request.node.stash:
        pytest.fail(request.node.stash[MARK_ERROR], pytrace=False)
    session = request.config.stash[WAI_SESSION]
    if session.budget_note:
        session.plan_not_run(request.node, "budget_stop")  # in the ledger: k trials the budget stopped
        pytest.skip(f"whileai: not run, {session.budget_note}")
    scenario = getattr(request, "param", None)  # wai_scenarios parametrized wai_eval itself
    if type(scenario) is str:  # a plain ask, kept as str at collection (collect.ask_scenario)
        scenario = ask_scenario(scenario, session.ask_ids)
    elif scenario is None:
        callspec = getattr(request.node, "callspec", None)
        scenario = callspec.params.get("wai_scenario") if callspec is not None else None
    return WaiHandle(request, session, scenario)


WAI_RENAMED = ("the wai fixture is now wai_eval: it shadowed `import whileai as wai` inside the test. Rename the "
               "argument (def test_x(wai_eval): wai_eval.run(...)); wai goes in the next release")


@pytest.fixture
def wai(request: pytest.FixtureRequest, wai_eval: WaiHandle) -> WaiHandle:
    """Deprecated name of ``wai_eval``: the same handle, with a ``DeprecationWarning`` at the test's line."""
    path, line = _location(request.node)
    warnings.warn_explicit(WAI_RENAMED, DeprecationWarning, path, line)
    return wai_eval
