"""Simulate: run an agent through written situations, k times each, against a world that fails on purpose.

``simulate`` writes situations (the template writer's covering array with ``simulator=False``), plans the
rollouts (``fixed``: k each; ``dynamic``: probe 2, fill to k only where they disagree, DAPO), runs them on the
rollout engine (``engine.py``: one event loop; ``runner.py``: the run over it) and returns every conversation as
a row (docs/rows.md). An agent that raises gives an error row: counted, kept, never a crash of the run. Ctrl-C
keeps the rows finished so far.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.adapters.routing import undelivered, undelivered_warning
from whileai_core.arguments import integer
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.options import Execution, with_option
from whileai_core.rowlist import RowList
from whileai_core.rows import scrub, write_jsonl
from whileai_core.scale.executor import Executor
from whileai_core.scale.executor import resolve as resolve_executor
from whileai_core.simulate.engine import Engine
from whileai_core.simulate.harness import unpack as unpack_harness
from whileai_core.simulate.output import check_path
from whileai_core.simulate.rollout import rollout  # noqa: F401 - its old home: rollout() lived here
from whileai_core.simulate.runner import Rows, Runner
from whileai_core.simulate.situations import (
    AskedSituations,
    Scenario,
    coverage_report,
    from_asks,
    plain_asks,
    resolve_dimensions,
)
from whileai_core.simulate.situations import (
    situations as template_situations,
)
from whileai_core.simulate.world import World
from whileai_core.tools import Tool, as_tools
from whileai_core.traces.situations import trace_asks

log = logging.getLogger("whileai.simulate")

MODES = ("rl", "sft", "eval", "adaptive")
#: every repeat_policy= name, SDK names included; ``_POLICY_RUNS`` says which rule each one runs
REPEAT_POLICIES = ("fixed", "dynamic", "successive", "adaptive", "none", "unique")
_POLICY_RUNS = {"fixed": "fixed", "dynamic": "dynamic", "successive": "dynamic", "adaptive": "dynamic",
                "none": "fixed", "unique": "fixed"}
_POLICY_NOTES = {
    "adaptive": "repeat_policy='adaptive' ran the dynamic rule: every situation probed, extra rollouts deferred "
                "until the probes landed and spent only where they disagreed (the SDK's adaptive policy defers "
                "extra k so verification can react; see docs/sdk.md)",
    "none": "repeat_policy='none': a new situation every row (one rollout each, k=1)",
    "unique": "repeat_policy='unique': a new situation every row (one rollout each, k=1), as the SDK's 'none'",
}
UNTIL_RULES = ("compute", "budget", "budget_only", "time")  # the SDK's until= names that stop on budget/time
_MODE_ALIASES = {"explore": "eval"}
_KWARG_ALIASES = {"rollouts_per_request": "repeats", "rollouts_per_prompt": "repeats", "policy": "repeat_policy",
                  "fault_rate": "fault_share", "tasks": "asks", "unique_situations": "unique_situations",
                  "unique": "unique_situations"}
_SAMPLING = "sampling settings belong to the model: set them on the backend (wai.OpenAI(..., temperature=)) or in your agent"
# the SDK's simulate keywords not taken here, each with why (docs/sdk.md's table); reproducible=True is taken
SIMULATE_SDK_DIFFERENCES = {
    "sampling": _SAMPLING, "logprobs": _SAMPLING,
    "timeout": "a rollout's timeout belongs to the backend or your agent; simulate plays what they return",
    "reproducible": "a run here is always reproducible by seed= (same seed, same rows); only reproducible=True is taken",
    "advanced": "pass the keywords themselves (concurrency=, dimensions=, max_turns=, fault_rate=, ...)",
    "strategy": "the writer is the covering grid; real users' asks come from traces= (wai.traces.load)",
    "patience": "no coverage-plateau stop: budget= and time_budget= stop a run",
    "n": "one phrasing per situation here; more situations come from budget= or situations=",
    "requests_per_situation": "one phrasing per situation here; more situations come from budget= or situations=",
    "phrasings": "one phrasing per situation here; more situations come from budget= or situations=",
    "hard_share": "no difficulty tiers in the template writer; faults come from fault_rate= (fault_share=)",
    "avg_turns": "the turn count is max_turns= (a cap), not an average",
    "spec": "no agent spec files: pass the agent, tools= and system_prompt=",
    "scaffold": "no scaffolds: pass the agent callable or a model string",
    "llm_grade": "grade=judge grades inline with a judge you choose (no hosted judge)",
    "rubric": "grade=wai.Judge(rubric=...) grades inline with a rubric",
    "backend": "the agent argument takes a backend (wai.OpenAI(...)) or a model string",
}


# --------------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------------
_GRADED_ONLY = ("pass_at", "passes", "failures", "unjudged", "select", "export", "partials", "failed_traces", "traces",
                "select_by_reward")


class SimulationData:
    """The rows of one simulate() run, with the plan behind them. ``.grade(judge=...)`` scores them."""

    runs: int  # simulate's ``runs=``: how many times the situations ran (simulate sets it)

    def __init__(self, rows: list[dict[str, Any]] | Rows, *, scenarios: Sequence[Scenario], tools: list[Tool],
                 system_prompt: str | None, mode: str, repeat_policy: str, repeats: int, budget: int,
                 seed: int, run_id: str, coverage: dict[str, Any], warnings: list[str], notes: list[str],
                 stopped_because: str, elapsed_s: float, agent_name: str) -> None:
        self._store = rows if isinstance(rows, Rows) else None  # output= runs: rows stay in the file until read
        self._rows = None if self._store is not None else self._row_list(rows, system_prompt, tools)
        self.scenarios = scenarios
        self.tools = tools
        self.system_prompt = system_prompt
        self.mode = mode
        self.repeat_policy = repeat_policy
        self.repeats = repeats
        self.budget = budget
        self.seed = seed
        self.run_id = run_id
        self.coverage = coverage
        self.warnings = warnings
        self.notes = notes
        self.stopped_because = stopped_because
        self.elapsed_s = elapsed_s
        self.agent_name = agent_name

    @staticmethod
    def _row_list(rows: Any, system_prompt: str | None, tools: list[Tool]) -> RowList:
        out = RowList(rows)
        out.system_prompt = system_prompt
        out.tools = tools
        return out

    @property
    def rows(self) -> RowList:
        """Every row, in plan order (with ``output=``, read from the file on first use: iterate the data
        itself, ``for row in data``, to stream them without holding them all)."""
        if self._rows is None:
            self._rows = self._row_list(self._store, self.system_prompt, self.tools)
            self._store = None
        return self._rows

    @property
    def n_situations(self) -> int:
        if self._store is not None:
            return self._store.n_situations
        return len({r["task_id"] for r in self.rows})

    @property
    def n_errors(self) -> int:
        if self._store is not None:
            return self._store.counts["agent_error"]
        return sum(1 for r in self.rows if r.get("status") == "agent_error")

    @property
    def n_infra_errors(self) -> int:
        if self._store is not None:
            return self._store.counts["infra_error"]
        return sum(1 for r in self.rows if r.get("status") == "infra_error")

    @property
    def declared_tools(self) -> list[str]:
        return [t.name for t in self.tools]

    def __len__(self) -> int:
        return self._store.count if self._store is not None else len(self.rows)

    def __iter__(self):
        return iter(self._store) if self._store is not None else iter(self.rows)

    def __repr__(self) -> str:
        cov = self.coverage
        return (f"SimulationData({len(self)} rows, {self.n_situations} situations, k={self.repeats}, "
                f"mode={self.mode!r}, policy={self.repeat_policy!r}, {self.n_errors} agent error(s), "
                f"{self.n_infra_errors} infra error(s), "
                f"pairs {cov.get('pairs_covered')}/{cov.get('pairs_planned')}, stopped: {self.stopped_because})")

    def grade(self, judge: Callable[[dict[str, Any]], Any] | None = None, *, judge_name: str | None = None,
              on_error: str = "keep", concurrency: int = 1, scale: Any = None, trust: Any = "warn",
              quiet: bool = False, executor: str | None = None, ray_address: str | None = None,
              **kwargs: Any) -> Any:
        """Score every row with ``judge`` under the judge contract; returns ``ScoredData`` (rows copied).

        The arguments are ``run_judge``'s (``grade.run``): ``on_error="keep"`` (the SDK's default) records a
        judge fault on its row as unjudged, ``"raise"`` stops at the first; ``scale=(lo, hi)`` reads ratings;
        ``trust=`` checks the judge against gold labels after grading; ``executor="ray"`` grades the rows in shards on
        a Ray cluster at ``ray_address=`` (same rewards, same order; docs/scale.md). ``grader=`` (the SDK's
        spelling) also grades this run's rows in place, so ``wai.select(data)`` after it sees the rewards.
        """
        from whileai_core.grade.run import run_judge

        in_place = judge is None and kwargs.get("grader") is not None  # the SDK's grader= grades the run itself
        if judge is None:
            judge = kwargs.pop("grader", None)
        if kwargs:
            raise InvalidArgumentType(f"grade() got unexpected keyword argument(s) {sorted(kwargs)}")
        scored = run_judge(self, judge, judge_name=judge_name, on_error=on_error, concurrency=concurrency,
                           scale=scale, trust=trust, quiet=quiet, executor=executor, ray_address=ray_address)
        if in_place:
            rows = self.rows
            rows[:] = [dict(r) for r in scored.rows]
        return scored

    @property
    def trajectories(self) -> RowList:
        """Every row in memory, ``privileged`` included (``grade.views.trajectories``)."""
        from whileai_core.grade.views import trajectories

        return trajectories(self)

    def leak_report(self, **kwargs: Any) -> Any:
        """Rows that quote their own privileged block (``grade.views.leak_report``)."""
        from whileai_core.grade.views import leak_report

        return leak_report(self, **kwargs)

    def compare_judges(self, judges: Any, **kwargs: Any) -> Any:
        """How far several judges agree on these rows (``grade.ranking.compare_judges``)."""
        from whileai_core.grade.ranking import compare_judges

        return compare_judges(self, judges, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name in _GRADED_ONLY:  # what a ScoredData has and an ungraded run cannot
            raise AttributeError(f"SimulationData has no .{name}: this run is not graded yet; call "
                                 f"data.grade(judge=...) and read scored.{name}")
        raise AttributeError(f"'SimulationData' object has no attribute {name!r}")

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the rows as JSONL (privileged fields scrubbed), atomically."""
        return write_jsonl(path, (scrub(r) for r in self), overwrite=overwrite)

    def report(self) -> dict[str, Any]:
        return {"rows": len(self), "situations": self.n_situations, "k": self.repeats, "mode": self.mode,
                "repeat_policy": self.repeat_policy, "budget": self.budget, "agent_errors": self.n_errors,
                "coverage": dict(self.coverage), "warnings": list(self.warnings), "notes": list(self.notes),
                "stopped_because": self.stopped_because, "elapsed_s": round(self.elapsed_s, 3)}


def _framework_agent(agent: Any, tools: Any) -> tuple[Any, Any]:
    """A framework's agent object (OpenAI Agents SDK, LangGraph, pydantic-ai, smolagents) as its adapter, with its
    own tools as the world's when ``tools=`` is not given; anything else as it came."""
    if agent is None or isinstance(agent, str):
        return agent, tools
    from whileai_core.adapters import agent as adapt
    from whileai_core.adapters import is_framework_agent

    if not is_framework_agent(agent):
        return agent, tools
    adapter = adapt(agent)
    return adapter, tools if tools is not None else (adapter.tools() or None)


def _resolve_agent(agent: Any, tools: list[Tool], system_prompt: str | None, max_turns: int | None,
                   cache: Any, user_model: Any = None, warn_list: list[str] | None = None,
                   temperature: float | None = None) -> Callable[[Any], Any]:
    if agent is None:
        try:
            from whileai_core.models import config

            agent = config.resolve("agent")
        except (ImportError, AttributeError, KeyError, LookupError):
            agent = None
        if agent is None:
            raise InvalidArgument("simulate() needs an agent: a callable agent(message) -> {'steps', 'final_text'}, "
                             "wai.seeded_agent(tools), a model string like 'openai:gpt-4.1-mini', or "
                             "wai.configure(agent=...)")
    if callable(agent) and not isinstance(agent, str) and not callable(getattr(agent, "complete", None)):
        if user_model is not None:  # never silently ignored: a callable answers in one turn, no user to play
            _warn(warn_list if warn_list is not None else [], "user_model= plays the user for a model agent "
                  "(a spec or backend); a callable agent answers each message in one turn, so it was not used")
        if temperature is not None:  # the same: a callable samples (or not) as it likes
            _warn(warn_list if warn_list is not None else [], "temperature= sets a model agent's sampling (a "
                  "spec or backend); a callable agent samples as it likes, so it was not used")
        return agent  # a plain agent callable; backends (objects with .complete) go through the model loop
    try:
        from whileai_core.simulate.model_agent import as_agent
    except ImportError as exc:
        raise InvalidArgument(f"agent={agent!r} is a model, which needs the model backends (whileai_core.simulate.model_agent: "
                         f"{exc}); pass a callable agent, or wai.seeded_agent(tools) for the offline loop") from None
    kwargs: dict[str, Any] = {"tools": tools, "system_prompt": system_prompt, "cache": cache,
                              "user_model": user_model}
    if max_turns is not None:
        kwargs["max_turns"] = max_turns
    if temperature is not None:
        kwargs["temperature"] = temperature
    return as_agent(agent, **kwargs)


def _temperature(value: Any) -> float | None:
    """``simulate(temperature=)``: the model agent's sampling temperature, a number in [0, 2] (or None)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= D.SAMPLING_MAX_TEMPERATURE:
        raise InvalidArgument(f"temperature= is a number in [0, {D.SAMPLING_MAX_TEMPERATURE:g}] (the model agent's "
                              f"sampling temperature); got {value!r}")
    return float(value)


def _model_situations(simulator: Any, tools: list[Tool], system_prompt: str | None, n: int, seed: int,
                      fault_share: float) -> list[Scenario]:
    try:
        from whileai_core.simulate.writer import write_situations
    except ImportError:
        raise InvalidArgument(
            f"simulator={simulator!r} asks for model-written situations, which need the model writer "
            "(whileai_core.simulate.writer over the httpx backends: wai.OpenAI / wai.Endpoint / wai.Ollama); "
            "use simulator=False for the offline template writer") from None
    written = write_situations(simulator, tools=tools, system_prompt=system_prompt, n=n, seed=seed)
    model_made = from_asks(written, system_prompt=system_prompt, tools=tools)
    cover = template_situations(tools, system_prompt, seed=seed, fault_share=fault_share)
    seen = {" ".join(str(s).lower().split()) for s in model_made}
    merged = list(model_made)
    for s in cover:  # the covering array fills what the model did not write, for coverage
        key = " ".join(str(s).lower().split())
        if key not in seen:
            merged.append(s)
            seen.add(key)
    return merged[:n]


def simulate(agent: Any = None, *, tools: Sequence[Any] | None = None, system_prompt: str | None = None,
             simulator: Any = False, mode: str = "eval", repeats: int | None = None,
             repeat_policy: str | None = None, budget: int | None = None, situations: int | None = None,
             asks: Sequence[Any] | None = None, seed: int = 0, concurrency: int = D.DEFAULT_CONCURRENCY,
             fault_share: float | None = None, probe: int = D.DYNAMIC_PROBE,
             judge: Callable[[dict[str, Any]], Any] | None = None,
             grader: Callable[[dict[str, Any]], Any] | None = None, checkpoint: str | Path | None = None,
             progress: bool | None = None, on_progress: Callable[[dict[str, Any]], None] | None = None,
             max_turns: int | None = None, cache: Any = None, traces: Any = None, runs: int = 1,
             seeds: Sequence[Any] | None = None, execute: Any = None, user_model: Any = None,
             dimensions: Any = None, grade: Any = None, output: str | Path | None = None,
             until: Any = None, time_budget: float | None = None, executor: str | None = None,
             ray_address: str | None = None, execution: Execution | None = None, **aliases: Any) -> Any:
    """Write situations for ``tools`` and run ``agent`` through each ``repeats`` times.

    simulator=False uses the template writer: a pairwise covering array (Kuhn et al. 2004) over tool x world
    state x user stance x tool condition, no model, no network. repeat_policy="fixed" gives every situation
    k rollouts; "dynamic" ("successive" in the SDK) probes ``probe`` rollouts and fills to k only where they
    disagree (DAPO, Yu et al. 2025), compared on ``judge=``'s rewards (``grader=`` is its older name) when one
    is given. ``budget`` caps rows. Same seed, same rows. ``traces=`` (``wai.traces.load`` rows, or
    ``wai.traces.situations(rows, eval_rows=...)``) plays the users' real first messages as the asks.
    ``output=path`` writes rows as they finish and is the checkpoint: the same call again (same file, same seed)
    runs only the rollouts missing from it (``checkpoint=`` is its older name). ``time_budget=`` seconds (or
    ``until=`` a ``datetime``) stops starting rollouts at the deadline and keeps the finished rows.
    ``executor="ray"`` (or ``wai.configure(executor="ray")``) plays the rollouts in shards on a Ray cluster
    (``ray_address=``), with the same rows as the local run (docs/scale.md).

    The SDK's knobs: ``runs=N`` plays the same situations N times (rows carry ``lineage.eval_run`` and
    ``rollout_index`` continues across runs; ``wai.eval_variance(data)`` splits them into runs); ``seeds=``
    asks that each become a situation, the template writer filling the rest of the budget; ``execute=`` (a
    callable ``execute(name, arguments)``, or True for the tools' own bodies, ``wai.Tool.dispatch(tools)``)
    answers tool calls through the mock world's fault schedule with your real functions; ``user_model=`` a
    model that plays the user for a model agent; ``dimensions=`` adds coverage axes (``["rule", "history"]``,
    or your own ``{"language": ["en", "de"]}``); ``grade=judge`` grades inline (where the rollouts ran) and returns ``ScoredData``.

    Args:
        agent: a callable ``agent(message) -> {"steps", "final_text"}``, a model string or backend, or None
            (``wai.configure(agent=...)``).
        tools: the agent's tools (``@wai.tool`` functions or schemas).
        system_prompt: the agent's system prompt.
        simulator: False: the template writer (no model); a model string or backend: model-written situations.
        mode: ``"eval"`` or ``"rl"`` (more repeats and faults, for mixed groups).
        repeats: rollouts per situation, k (``DEFAULT_REPEATS`` 4; ``RL_REPEATS`` 8 under rl).
        repeat_policy: ``"fixed"`` or ``"dynamic"`` (DAPO dynamic sampling).
        budget: the most rows (``DEFAULT_BUDGET`` 64).
        situations: situations wanted (default: what the budget pays for).
        asks: your own user messages to play instead of written ones.
        seed: same seed, same rows.
        concurrency: rollouts in flight (``DEFAULT_CONCURRENCY``). (``DEFAULT_CONCURRENCY``)
        fault_share: the share of fault cells that keep their fault (``FAULT_SHARE`` 0.5; ``RL_FAULT_SHARE`` 0.8
            under rl).
        probe: rollouts probed per situation under the dynamic policy (``DYNAMIC_PROBE`` 2). (``DYNAMIC_PROBE``)
        judge: grades the dynamic policy's probes.
        grader: the older name of ``judge``.
        checkpoint: the older name of ``output``.
        progress: print progress lines (default: on for long runs).
        on_progress: a callback given a progress dict.
        max_turns: tool-call rounds a model agent may take.
        cache: a record/replay cassette for model calls.
        traces: ``wai.traces.load`` rows (or ``wai.traces.situations``): the users' real first messages as asks.
        runs: times the same situations are played (default 1); with more, rows carry ``lineage.eval_run`` and
            rollout indices continue across runs, so ``wai.eval_variance(data)`` can split them.
        seeds: asks (strings, or dicts with ``prompt``) that each become a situation, played first; without
            ``budget`` only the seeds play (k each), with one the template writer fills the rest (default None).
            Not together with ``asks``.
        execute: your real tools answering the calls the fault schedule lets through: a callable
            ``execute(name, arguments) -> result`` (``wai.dispatch(tools)``), or True for the tools' own bodies
            (default None: the mock world answers). Needs ``tools``.
        user_model: a model spec or backend that plays the user (in the situation's stance) when a model agent
            asks a follow-up, at most ``defaults.USER_MAX_TURNS`` = 2 replies (default None: the configured
            ``user_model``, if any). Not used with a callable agent, and a warning says so.
        dimensions: extra coverage axes, a list of names or a dict ``{axis: [values] or True}``: ``"rule"`` (the
            policy's clauses, ``rule_clauses``) and ``"history"`` are the SDK's axes; ``stance``,
            ``world_state``, ``tool_condition`` and ``tool`` take a subset of their values; any other name is
            an axis of your own (default None: the four default axes, so task ids never change).
        grade: a judge callable (``row -> reward or verdict dict``) that grades every row before returning, so
            the call returns ``ScoredData`` (default None: no grading). True and strings raise.
        output: a JSONL file the rows are written to as they finish; it is the checkpoint a rerun with
            the same seed resumes from (only missing rollouts run).
        until: a ``datetime`` (or one of the SDK's rule names) after which no rollout starts.
        time_budget: seconds after which no rollout starts; finished rows are kept.
        executor: where the rollouts run: "local" ("threads") or "ray" (default None: ``wai.configure``'s,
            else ``defaults.EXECUTOR``).
        ray_address: the Ray cluster for ``executor="ray"`` (default None: Ray's own default).
        execution: a ``wai.Execution`` holding ``concurrency``, ``executor``, ``ray_address``, ``output``,
            ``progress``, ``on_progress`` and ``time_budget`` together (default None: the keywords); a keyword set
            beside it to another value is an error naming both.
        **aliases: the SDK's names (``rollouts_per_prompt``, ``policy``, ``fault_rate``, ``tasks``), and
            ``temperature=``: the model agent's sampling temperature in [0, 2] (default None: the backend's
            call default, ``defaults.AGENT_TEMPERATURE``); not used with a callable agent, and a warning says so.

    Returns:
        ``SimulationData``: ``.rows``, ``.coverage``, ``.notes``, ``.warnings``; ``.grade(judge=...)`` chains on.
        With ``grade=``, the graded ``ScoredData`` instead.

    Raises:
        InvalidArgumentType: an argument of the wrong type (a ``TypeError``); the message names it. Also: an
            unknown keyword (with the closest known name), a non-callable ``execute`` or ``grade`` (True or a
            string included), ``dimensions`` that is neither a dict nor a list of names.
        InvalidArgument: an unknown ``mode`` or ``repeat_policy``, or a number out of range (a ``ValueError``).
            Also: ``seeds`` with ``asks``, empty ``seeds``, ``execute`` without ``tools``, ``runs`` < 1, an
            unknown value on a known ``dimensions`` axis, an own axis without values, no agent at all.
            Under ``executor="ray"``, an argument that cannot be sent to the workers.
        ScaleError: ``executor="ray"`` without Ray, an unreachable cluster, or a shard lost on every try.
        MissingKey: a model agent or writer whose provider key is not set (a ``LookupError``), before any call.

    Example:
        ```python
        data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order],
                            system_prompt="Help customers with orders.", simulator=False, repeats=4, budget=64)
        scored = data.grade(judge=my_judge)
        ```
    """
    run = with_option(execution, Execution, {"concurrency": concurrency, "executor": executor,
                                             "ray_address": ray_address, "output": output, "progress": progress,
                                             "on_progress": on_progress, "time_budget": time_budget},
                      keyword="execution", where="simulate")  # the keywords as given when execution is None
    concurrency, executor, ray_address = run["concurrency"], run["executor"], run["ray_address"]
    output, progress, on_progress, time_budget = run["output"], run["progress"], run["on_progress"], run["time_budget"]
    where = resolve_executor(executor, ray_address)
    temperature = _temperature(aliases.pop("temperature", None))
    given = _apply_aliases(aliases, {"repeats": repeats, "repeat_policy": repeat_policy,
                                     "fault_share": fault_share, "asks": asks, "unique_situations": None})
    if given.pop("unique_situations"):
        given["repeat_policy"] = _one_policy(given["repeat_policy"], "unique", "unique_situations=True")
    if seeds is not None and given["asks"] is not None:
        raise InvalidArgument("pass seeds= or asks= (tasks=), not both: seeds= are asks the writer adds to")
    if traces is not None:
        given["asks"] = trace_asks(traces, given["asks"])
    grade = _inline_grader(grade)
    s = _settings(mode=mode, situations=situations, budget=budget, seed=seed, concurrency=concurrency, probe=probe,
                  judge=_one_judge(judge, grader) or grade, on_progress=on_progress, runs=runs, seeds=seeds, **given)
    agent, tools, system_prompt, stamp = unpack_harness(agent, tools, system_prompt)
    s = dataclasses.replace(s, harness=stamp) if stamp is not None else s
    agent, tools = _framework_agent(agent, tools)
    tool_objs = as_tools(tools)
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise InvalidArgumentType(f"system_prompt= must be a string; got {type(system_prompt).__name__}")
    dims = resolve_dimensions(dimensions, system_prompt, tool_objs)
    warn_list: list[str] = []
    run_agent = _resolve_agent(agent, tool_objs, system_prompt, max_turns, cache, user_model, warn_list, temperature)
    if not callable(agent) or callable(getattr(agent, "complete", None)) or simulator not in (None, False):
        from whileai_core.simulate.model_agent import require_keys

        require_keys(run_agent, simulator, cache=cache)
    world = _world(tool_objs, s.seed, execute)
    n_sit = _situation_count(s, warn_list)
    scen, writer = _write(s, simulator, tool_objs, system_prompt, n_sit, warn_list, dims)
    coverage = coverage_report([x for x in scen if x.scenario], tool_objs, system_prompt=system_prompt,
                               dimensions=dims) if tool_objs and writer not in ("asks", "seeds") else {}
    notes = [_coverage_note(coverage, len(scen), s.k)] if coverage and coverage["fraction"] < 1.0 else []
    notes += [_POLICY_NOTES[s.policy_name]] if s.policy_name in _POLICY_NOTES else []
    ship = _shipping(where, agent, tool_objs, system_prompt, max_turns, cache, user_model, execute, temperature)
    started = time.perf_counter()  # elapsed_s spans every eval run of runs=, not only the last runner's
    runner, rows = _play(s, run_agent, scen, writer, system_prompt, progress, on_progress, warn_list,
                         world=world, path=_output_path(output, checkpoint),
                         name="output" if output is not None else "checkpoint",
                         deadline=_deadline(until, time_budget), notes=notes,
                         ship=ship)
    if ship is not None and ship.retried:
        _warn(warn_list, f"{ship.retried} shard(s) were played again after their worker died, each kept once "
                         f"({ship.failures[0][:160]})")
    warn_list.extend(_failure_warnings(rows))
    missed_faults = undelivered_warning(*(rows.faults if isinstance(rows, Rows) else undelivered(rows)))
    if missed_faults:
        log.warning(missed_faults)
        warn_list.append(missed_faults)
    if runner.show_progress:
        runner.progress_line(runner.rows.count, runner.rows.count)
        runner.close_progress()
    agent_name = getattr(run_agent, "__name__", None) or type(run_agent).__name__
    data = SimulationData(rows, scenarios=scen, tools=tool_objs, system_prompt=system_prompt, mode=s.mode,
                          repeat_policy=s.policy_name, repeats=s.k, budget=s.budget, seed=s.seed,
                          run_id=runner.run_id, coverage=coverage, warnings=warn_list, notes=notes,
                          stopped_because=runner.stopped, elapsed_s=time.perf_counter() - started,
                          agent_name=agent_name)
    data.runs = s.runs
    return data.grade(judge=grade, executor=where.name, ray_address=where.address) if grade is not None else data


# --------------------------------------------------------------------------------------------------
# simulate's steps: arguments, how many situations, writing them, running the rollouts, the summary
# --------------------------------------------------------------------------------------------------
_KNOWN_KEYWORDS = ("tools", "system_prompt", "simulator", "mode", "repeats", "repeat_policy", "budget", "situations",
                   "asks", "seed", "concurrency", "fault_share", "probe", "judge", "grader", "checkpoint", "progress",
                   "on_progress", "max_turns", "cache", "traces", "runs", "seeds", "execute", "user_model",
                   "dimensions", "grade", "output", "until", "time_budget", "executor", "ray_address", "temperature",
                   "execution")


def _apply_aliases(aliases: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """Fold the SDK's keyword aliases (``rollouts_per_prompt=``, ``policy=``, ...) into their targets."""
    given = dict(given)
    for name, value in aliases.items():
        target = _KWARG_ALIASES.get(name)
        if name == "reproducible" and value is True:
            continue
        if target is None and name in SIMULATE_SDK_DIFFERENCES:
            raise InvalidArgumentType(f"simulate({name}=...) is the whileai SDK's keyword; it is not taken here: "
                                      f"{SIMULATE_SDK_DIFFERENCES[name]} (docs/sdk.md, 'Where we deliberately differ')")
        if target is None:
            close = difflib.get_close_matches(name, [*_KWARG_ALIASES, *_KNOWN_KEYWORDS], n=1)
            hint = f"; did you mean {close[0]}=?" if close else ""
            raise InvalidArgumentType(f"simulate() got an unexpected keyword argument {name!r}{hint}")
        if target == "repeat_policy" and given["repeat_policy"] is not None and value != given["repeat_policy"]:
            raise InvalidArgument(f"pass repeat_policy= or {name}=, not both")
        if target != "repeat_policy" and given[target] is not None and given[target] != value:
            raise InvalidArgument(f"pass {target}= or {name}= (its alias), not both")
        given[target] = value
    return given


def _one_judge(judge: Any, grader: Any) -> Any:
    """``judge=`` (the name ``grade`` uses) or ``grader=`` (its older name here), not two different ones."""
    if judge is not None and grader is not None and judge is not grader:
        raise InvalidArgument("pass judge= or grader= (its older name), not both")
    name, chosen = ("judge", judge) if judge is not None else ("grader", grader)
    if chosen is not None and not callable(chosen):
        raise InvalidArgumentType(f"{name}= must be a callable or None; got {type(chosen).__name__}")
    return chosen


@dataclass(frozen=True)
class _Settings:
    """simulate's checked arguments."""

    mode: str
    policy: str
    k: int
    concurrency: int
    probe: int
    fault_share: float
    situations: int | None
    budget: int
    seed: int
    asks: Sequence[Any] | None
    judge: Callable[[dict[str, Any]], Any] | None
    policy_name: str = "fixed"  # the name asked for (policy is the rule it runs: fixed or dynamic)
    runs: int = 1
    seeds: Sequence[Any] | None = None
    harness: Mapping[str, Any] | None = None  # a Harness's row stamp {label, hash, model, kind}


def _policy(mode: str, repeat_policy: str | None, repeats: int | None) -> tuple[str, str, int]:
    """(the policy's name, the rule it runs, k): mode="adaptive" is the SDK's preset (k=1, adaptive);
    none/unique play each situation once and refuse a repeats= above 1."""
    name = repeat_policy if repeat_policy is not None else ("adaptive" if mode == "adaptive" else "fixed")
    if name not in REPEAT_POLICIES:
        raise InvalidArgument(f"repeat_policy= must be one of {', '.join(REPEAT_POLICIES)} ('successive' runs the "
                              f"dynamic rule; see docs/sdk.md); got {repeat_policy!r}")
    if name in ("none", "unique"):
        if repeats is not None and repeats != 1:
            raise InvalidArgument(f"repeat_policy={name!r} plays each situation once; drop repeats={repeats!r} or "
                                  "use repeat_policy='fixed' for k rollouts each")
        return name, _POLICY_RUNS[name], 1
    default_k = D.RL_REPEATS if mode == "rl" else D.ADAPTIVE_REPEATS if mode == "adaptive" else D.DEFAULT_REPEATS
    return name, _POLICY_RUNS[name], integer("repeats", repeats if repeats is not None else default_k, minimum=1)


def _one_policy(given: str | None, implied: str, by: str) -> str:
    if given is not None and given != implied:
        raise InvalidArgument(f"{by} means repeat_policy={implied!r}; it conflicts with repeat_policy={given!r}")
    return implied


def _inline_grader(grade: Any) -> Any:
    """``grade=``: a judge callable grades every row before simulate returns (None/False: no grading)."""
    if grade is None or grade is False:
        return None
    if grade is True or isinstance(grade, str) or not callable(grade):
        raise InvalidArgumentType(f"grade= takes a judge callable (row -> reward or verdict dict), e.g. "
                                  f"grade=wai.Judge(...) or grade=lambda row: ...; got {grade!r:.60}. The SDK's "
                                  "grade=True needs a hosted judge; pass one explicitly or call data.grade(judge=...)")
    return grade


def _world(tools: list[Tool], seed: int, execute: Any) -> World | None:
    """The world every rollout calls: the mock one, or ``execute=``'s real tools behind the fault schedule."""
    if execute is None or execute is False:
        return World(tools, seed=seed) if tools else None
    if not tools:
        raise InvalidArgument("execute= answers the calls of tools=[...]: pass the tools it runs")
    if execute is True:
        execute = Tool.dispatch(tools)
    if not callable(execute):
        raise InvalidArgumentType(f"execute= takes a callable execute(name, arguments) -> result (e.g. "
                                  f"wai.Tool.dispatch(tools)) or True; got {type(execute).__name__}")
    return World(tools, seed=seed, execute=execute)


def _play(s: _Settings, run_agent: Any, scen: Sequence[Scenario], writer: str,
          system_prompt: str | None, progress: Any, on_progress: Any, warn_list: list[str], *, world: World | None,
          path: Path | None, name: str, deadline: float | None, notes: list[str],
          ship: Any = None) -> tuple[Runner, Any]:
    """Run the rollouts, ``s.runs`` times over the same situations; returns the last runner and the rows (the
    output file's lazy ``Rows`` for one run, a list over several). Every eval run shares the first one's run id,
    so one output file resumes them all. ``ship`` (``_shipping``) plays the jobs on a Ray cluster instead."""
    rows: list[dict[str, Any]] = []
    run_id = None
    for eval_run in range(s.runs):
        played: Sequence[Scenario] = scen
        if eval_run:
            played = (scen.with_fields(eval_run=eval_run) if isinstance(scen, AskedSituations)
                      else [x.replace(eval_run=eval_run) for x in scen])
        runner = Runner(s, run_agent, played, writer, system_prompt, progress, on_progress, warn_list,
                        world=world, deadline=deadline, run_id=run_id)
        run_id = runner.run_id
        runner.engine.post = lambda row, _run=eval_run: _stamp(row, s, _run)  # stamped before it is written
        if path is not None:
            runner.use_output(path, name, rollout_offset=eval_run * s.k)
        if ship is not None:
            runner.play = ship.player(runner.engine, runner.scen)
        notes.extend(runner.run())
        if s.runs == 1:
            return runner, runner.rows if runner.rows.file is not None else list(runner.rows)
        rows.extend(runner.rows)
        if runner.stopped in ("interrupted", "time_budget"):
            break
    return runner, rows


def _shipping(where: Executor, agent: Any, tool_objs: list[Tool], system_prompt: str | None,
              max_turns: int | None, cache: Any, user_model: Any, execute: Any,
              temperature: float | None = None) -> Any:
    """Under ``executor="ray"``, the ``RayRollouts`` that plays the run's jobs on the cluster: each worker builds
    the agent (as given: a model string is resolved there) and the world itself, checked here to travel;
    None for the local run."""
    if not where.remote:
        return None
    from whileai_core.models import config
    from whileai_core.scale.rollouts import RayRollouts

    spec = {"agent": agent if agent is not None else config.get("agent"), "tools": tool_objs,
            "system_prompt": system_prompt, "max_turns": max_turns, "cache": cache, "user_model": user_model,
            "execute": execute, "temperature": temperature}
    return RayRollouts(where, functools.partial(_shard_engine, spec), check=spec)


def _shard_engine(spec: Mapping[str, Any], recipe: Mapping[str, Any], scenarios: list[Scenario]) -> Engine:
    """On a Ray worker: the run's engine (``Engine.recipe``) over one shard's situations, with the agent and the
    world built here as simulate builds them."""
    tools = spec["tools"]
    agent = _resolve_agent(spec["agent"], tools, spec["system_prompt"], spec["max_turns"], spec["cache"],
                           spec["user_model"], [], spec.get("temperature"))
    return Engine.rebuilt(agent, scenarios, _world(tools, recipe["seed"], spec["execute"]), recipe)


def _stamp(row: dict[str, Any], s: _Settings, eval_run: int) -> dict[str, Any]:
    """The policy's name and, under ``runs=``, the run index on a row; a repeat run's rollout indices continue
    after the earlier runs', so every row of the call is its own rollout of its task."""
    row["lineage"]["repeat_policy"] = s.policy_name
    if s.harness is not None:
        row["harness"] = dict(s.harness)
    if s.runs > 1:
        row["lineage"]["eval_run"] = eval_run
        if eval_run:
            row["rollout_index"] += eval_run * s.k
            row["row_id"] = f"{row['task_id']}#{row['rollout_index']}"
            row["lineage"]["replayed_from_run"] = 0
    return row


def _settings(*, mode: str, repeats: int | None, repeat_policy: str | None, situations: int | None,
              budget: int | None, seed: int, concurrency: int, probe: int, fault_share: float | None, asks: Any,
              judge: Any, on_progress: Any, runs: int = 1, seeds: Any = None) -> _Settings:
    mode = _MODE_ALIASES.get(mode, mode)
    if mode not in MODES:
        raise InvalidArgument(f"mode= must be one of {', '.join(MODES)}; got {mode!r}")
    policy_name, policy, k = _policy(mode, repeat_policy, repeats)
    runs = integer("runs", runs, minimum=1)
    if isinstance(seeds, (str, Mapping)):
        seeds = [seeds]
    concurrency = integer("concurrency", concurrency, minimum=1)
    if concurrency > D.MAX_CONCURRENCY:
        raise InvalidArgument(f"concurrency={concurrency} is above MAX_CONCURRENCY={D.MAX_CONCURRENCY}: each "
                              "in-flight rollout is a thread; use a value your backend's rate limit allows (default "
                              f"{D.DEFAULT_CONCURRENCY})")
    probe = integer("probe", probe, minimum=1)
    if fault_share is None:
        fault_share = D.RL_FAULT_SHARE if mode == "rl" else D.FAULT_SHARE
    if isinstance(fault_share, bool) or not isinstance(fault_share, (int, float)) or not 0 <= fault_share <= 1:
        raise InvalidArgument(f"fault_share= must be a number in [0, 1]; got {fault_share!r}")
    if situations is not None:
        situations = integer("situations", situations, minimum=1)
    if seeds is not None:  # every seed is a situation: situations= is raised to the number of seeds
        seeds = list(seeds)
        if not seeds:
            raise InvalidArgument("seeds= is empty; give at least one seed ask (a string or a dict with 'prompt')")
        if situations is not None:
            situations = max(situations, len(seeds))
        if budget is None:  # no budget: the seeds alone (a budget buys the writer's situations after them)
            budget = (situations or len(seeds)) * k
    if budget is None:
        budget = situations * k if situations is not None else D.DEFAULT_BUDGET
    budget = integer("budget", budget, minimum=1)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise InvalidArgument(f"seed= must be an int; got {seed!r}")
    if on_progress is not None and not callable(on_progress):
        raise InvalidArgumentType(f"on_progress= must be a callable or None; got {type(on_progress).__name__}")
    if isinstance(asks, (str, Mapping)):  # one ask, not a sequence of characters or dict keys
        asks = [asks]
    return _Settings(mode=mode, policy=policy, k=k, concurrency=concurrency, probe=probe, fault_share=fault_share,
                     situations=situations, budget=budget, seed=seed, asks=asks, judge=judge,
                     policy_name=policy_name, runs=runs, seeds=seeds)


def _situation_count(s: _Settings, warn_list: list[str]) -> int:
    """How many situations the budget buys at k rollouts each (warns when ``situations=`` asked for more)."""
    affordable = s.budget // s.k
    if affordable < 1:
        raise InvalidArgument(f"budget={s.budget} is smaller than repeats={s.k}: no situation can get its {s.k} "
                              f"rollouts; raise budget to at least {s.k}")
    if s.situations is not None and s.situations * s.k > s.budget and s.seeds is None:  # seeds warn in _write
        _warn(warn_list, f"budget={s.budget} covers {affordable} of {s.situations} situations at repeats={s.k}; "
                         f"raise budget to {s.situations * s.k}+ or lower situations=")
    return min(s.situations if s.situations is not None else affordable, affordable)


def _warn(warn_list: list[str], msg: str) -> None:
    """A warning kept on the result and raised at simulate()'s caller (this is called from simulate's steps)."""
    warn_list.append(msg)
    warnings.warn(msg, UserWarning, stacklevel=4)


def _write(s: _Settings, simulator: Any, tool_objs: list[Tool], system_prompt: str | None, n_sit: int,
           warn_list: list[str], dims: Mapping[str, Any] | None = None) -> tuple[Sequence[Scenario], str]:
    """The situations to play and the name of who wrote them: the caller's asks, the seeds (and the writer's
    situations after them), the template, or a model."""
    if s.seeds is not None:
        seeded = from_asks(list(s.seeds), system_prompt=system_prompt, tools=tool_objs)
        if len(seeded) > n_sit:
            _warn(warn_list, f"budget={s.budget} covers {n_sit} of {len(seeded)} seeds at repeats={s.k}; raise "
                             f"budget to {len(seeded) * s.k}+ or drop seeds")
            return seeded[:n_sit], "seeds"
        if n_sit == len(seeded) or not tool_objs:
            return seeded, "seeds"
        rest, writer = _write(dataclasses.replace(s, seeds=None), simulator, tool_objs, system_prompt,
                              n_sit - len(seeded), warn_list, dims)
        return [*seeded, *rest], f"seeds+{writer}"
    if s.asks is not None:
        scen = _asked(list(s.asks), system_prompt, tool_objs)
        if len(scen) > n_sit:
            _warn(warn_list, f"budget={s.budget} covers {n_sit} of {len(scen)} asks at repeats={s.k}; raise budget "
                             f"to {len(scen) * s.k}+ or drop asks")
        return scen.limited(n_sit) if isinstance(scen, AskedSituations) else scen[:n_sit], "asks"
    if simulator is False or simulator is None:
        if not tool_objs:
            raise InvalidArgument("simulator=False writes situations from tools: pass tools=[...] (or asks=[...])")
        return template_situations(tool_objs, system_prompt, n=n_sit, seed=s.seed, fault_share=s.fault_share,
                                   dimensions=dims or None), "template"
    return _model_situations(simulator, tool_objs, system_prompt, n_sit, s.seed, s.fault_share), f"model:{simulator}"


def _asked(asks: list[Any], system_prompt: str | None, tool_objs: list[Tool]) -> Sequence[Scenario]:
    """The situations of ``asks=``, one per task id. Plain strings become ``AskedSituations`` (built when played,
    so the run holds no ``Scenario`` per ask); dicts and ``Scenario`` objects a list of them."""
    if not asks:
        raise InvalidArgument("asks= is empty; give at least one ask (a string or a dict with 'prompt')")
    if plain_asks(asks):
        return AskedSituations.from_asks(asks, system_prompt=system_prompt, tools=tuple(t.name for t in tool_objs))
    scen = from_asks(asks, system_prompt=system_prompt, tools=tool_objs)
    # tasks= a run's rows (the SDK's replay): one situation per task, each at its last place, never repeated rows
    return list({sc.task_id: sc for sc in reversed(scen)}.values())[::-1]


def _coverage_note(coverage: Mapping[str, Any], n_situations: int, k: int) -> str:
    full = coverage["situations_for_full_cover"]
    return (f"pairwise coverage {coverage['pairs_covered']}/{coverage['pairs_planned']} pairs with {n_situations} "
            f"situations; a full pairwise cover needs {full} situations (budget {full * k} at repeats={k})")


def _failure_warnings(rows: Rows | list[dict[str, Any]]) -> list[str]:
    """One warning for infrastructure errors and one for agent errors, each quoting the first (one pass over
    the rows, only when there are errors: the run's counts say so; a list, from ``runs=``, is counted here)."""
    from collections import Counter

    counts = rows.counts if isinstance(rows, Rows) else Counter(r.get("status") for r in rows)
    count = rows.count if isinstance(rows, Rows) else len(rows)
    first: dict[str, str] = {}
    if counts["agent_error"] or counts["infra_error"]:
        for r in rows:
            status = r.get("status")
            if status in ("agent_error", "infra_error") and status not in first:
                first[status] = str(r.get("error"))
                if len(first) == 2:
                    break
    out = []
    if counts["infra_error"]:
        out.append(f"{counts['infra_error']} of {count} rollouts hit an infrastructure error (backend "
                   f"unreachable or failing after retries; status='infra_error', kept apart from wrong answers and "
                   f"never graded): {first.get('infra_error', '')[:160]}")
    if counts["agent_error"]:
        out.append(f"{counts['agent_error']} of {count} rollouts ended in an agent error (kept as rows, "
                   f"status='agent_error'): {first.get('agent_error', '')[:160]}")
    for msg in out:
        log.warning(msg)
    return out


def _output_path(output: Any, checkpoint: Any) -> Path | None:
    """``output=`` (or ``checkpoint=``, its older name), checked before the first rollout."""
    if output is not None and checkpoint is not None and output != checkpoint:
        raise InvalidArgument("pass output= or checkpoint= (its older name), not both")
    if output is None and checkpoint is None:
        return None
    return check_path(output if output is not None else checkpoint,
                      "output" if output is not None else "checkpoint")


def _deadline(until: Any, time_budget: Any) -> float | None:
    """The monotonic deadline from ``time_budget=`` seconds (<= 0 is off) and/or ``until=`` (a ``datetime``; or
    the SDK's stop-rule names, which all mean "stop on budget" here), the earlier of the two."""
    import datetime

    deadlines = []
    if time_budget is not None:
        if isinstance(time_budget, bool) or not isinstance(time_budget, (int, float)):
            raise InvalidArgumentType(f"time_budget= takes seconds (a number); got {type(time_budget).__name__}")
        if time_budget > 0:
            deadlines.append(time.monotonic() + float(time_budget))
    if isinstance(until, datetime.datetime):
        now = datetime.datetime.now(until.tzinfo)
        deadlines.append(time.monotonic() + (until - now).total_seconds())
    elif until is not None and until not in UNTIL_RULES:
        raise InvalidArgument(f"until= takes a datetime (a wall-clock deadline) or one of {', '.join(UNTIL_RULES)} "
                              f"(each stops on budget; time_budget= sets a deadline in seconds); got {until!r}")
    return min(deadlines) if deadlines else None
