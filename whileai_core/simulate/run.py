"""Simulate: run an agent through written situations, k times each, against a world that fails on purpose.

``simulate`` writes situations (the template writer's covering array with ``simulator=False``), plans the
rollouts (``fixed``: k each; ``dynamic``: probe 2, fill to k only where they disagree, DAPO), runs them on the
rollout engine (``engine.py``: one event loop) and returns every conversation as a row (docs/rows.md). An agent that raises gives an error row:
counted, kept, never a crash of the run. Ctrl-C keeps the rows finished so far.
"""

from __future__ import annotations

import difflib
import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.arguments import integer
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.rowlist import RowList
from whileai_core.rows import scrub, write_jsonl
from whileai_core.simulate.engine import Rows, Runner
from whileai_core.simulate.output import check_path
from whileai_core.simulate.rollout import rollout  # noqa: F401 - its old home: rollout() lived here
from whileai_core.simulate.situations import (
    Scenario,
    coverage_report,
    from_asks,
)
from whileai_core.simulate.situations import (
    situations as template_situations,
)
from whileai_core.tools import Tool, as_tools
from whileai_core.traces.situations import trace_asks

log = logging.getLogger("whileai.simulate")

MODES = ("rl", "sft", "eval")
UNTIL_RULES = ("compute", "budget", "budget_only", "time")  # the SDK's until= names that stop on budget/time
REPEAT_POLICIES = ("fixed", "dynamic")
_POLICY_ALIASES = {"successive": "dynamic", "adaptive": "dynamic"}
_MODE_ALIASES = {"explore": "eval"}
_KWARG_ALIASES = {"rollouts_per_request": "repeats", "rollouts_per_prompt": "repeats", "policy": "repeat_policy",
                  "fault_rate": "fault_share", "tasks": "asks"}


# --------------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------------
_GRADED_ONLY = ("pass_at", "passes", "failures", "unjudged", "select", "export")


class SimulationData:
    """The rows of one simulate() run, with the plan behind them. ``.grade(judge=...)`` scores them."""

    def __init__(self, rows: list[dict[str, Any]] | Rows, *, scenarios: list[Scenario], tools: list[Tool],
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
            return len(self._store.situations)
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
              on_error: str = "raise", concurrency: int = 1, **kwargs: Any) -> Any:
        """Score every row with ``judge`` under the judge contract; returns ``ScoredData`` (rows copied)."""
        from whileai_core.grade.run import run_judge

        if judge is None:
            judge = kwargs.pop("grader", None)
        if kwargs:
            raise InvalidArgumentType(f"grade() got unexpected keyword argument(s) {sorted(kwargs)}")
        return run_judge(self, judge, judge_name=judge_name, on_error=on_error, concurrency=concurrency)

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


def _resolve_agent(agent: Any, tools: list[Tool], system_prompt: str | None, max_turns: int | None,
                   cache: Any) -> Callable[[Any], Any]:
    if agent is None:
        try:
            from whileai_core.models import config

            agent = config.resolve("agent")  # type: ignore[attr-defined]
        except (ImportError, AttributeError, KeyError, LookupError):
            agent = None
        if agent is None:
            raise InvalidArgument("simulate() needs an agent: a callable agent(message) -> {'steps', 'final_text'}, "
                             "wai.seeded_agent(tools), a model string like 'openai:gpt-4.1-mini', or "
                             "wai.configure(agent=...)")
    if callable(agent) and not isinstance(agent, str) and not callable(getattr(agent, "complete", None)):
        return agent  # a plain agent callable; backends (objects with .complete) go through the model loop
    try:
        from whileai_core.simulate.model_agent import as_agent
    except ImportError as exc:
        raise InvalidArgument(f"agent={agent!r} is a model, which needs the model backends (whileai_core.simulate.model_agent: "
                         f"{exc}); pass a callable agent, or wai.seeded_agent(tools) for the offline loop") from None
    kwargs: dict[str, Any] = {"tools": tools, "system_prompt": system_prompt, "cache": cache}
    if max_turns is not None:
        kwargs["max_turns"] = max_turns
    return as_agent(agent, **kwargs)


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
             repeat_policy: str = "fixed", budget: int | None = None, situations: int | None = None,
             asks: Sequence[Any] | None = None, seed: int = 0, concurrency: int = D.DEFAULT_CONCURRENCY,
             fault_share: float | None = None, probe: int = D.DYNAMIC_PROBE,
             judge: Callable[[dict[str, Any]], Any] | None = None,
             grader: Callable[[dict[str, Any]], Any] | None = None, checkpoint: str | Path | None = None,
             progress: bool | None = None, on_progress: Callable[[dict[str, Any]], None] | None = None,
             max_turns: int | None = None, cache: Any = None, traces: Any = None, output: str | Path | None = None,
             until: Any = None, time_budget: float | None = None, **aliases: Any) -> SimulationData:
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
    """
    given = _apply_aliases(aliases, {"repeats": repeats, "repeat_policy": repeat_policy,
                                     "fault_share": fault_share, "asks": asks})
    if traces is not None:
        given["asks"] = trace_asks(traces, given["asks"])
    s = _settings(mode=mode, situations=situations, budget=budget, seed=seed, concurrency=concurrency, probe=probe,
                  judge=_one_judge(judge, grader), on_progress=on_progress, **given)
    tool_objs = as_tools(tools)
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise InvalidArgumentType(f"system_prompt= must be a string; got {type(system_prompt).__name__}")
    run_agent = _resolve_agent(agent, tool_objs, system_prompt, max_turns, cache)
    warn_list: list[str] = []
    n_sit = _situation_count(s, warn_list)
    scen, writer = _write(s, simulator, tool_objs, system_prompt, n_sit, warn_list)
    coverage = coverage_report([x for x in scen if x.scenario], tool_objs) if tool_objs and writer != "asks" else {}
    notes = [_coverage_note(coverage, len(scen), s.k)] if coverage and coverage["fraction"] < 1.0 else []
    path = _output_path(output, checkpoint)
    runner = Runner(s, run_agent, scen, writer, tool_objs, system_prompt, progress, on_progress, warn_list,
                    deadline=_deadline(until, time_budget))
    if path is not None:
        runner.use_output(path, "output" if output is not None else "checkpoint")
    notes.extend(runner.run())
    rows = runner.rows if runner.rows.file is not None else list(runner.rows)
    warn_list.extend(_failure_warnings(runner.rows))
    if runner.show_progress:
        runner.progress_line(runner.rows.count, runner.rows.count)
    agent_name = getattr(run_agent, "__name__", None) or type(run_agent).__name__
    return SimulationData(rows, scenarios=scen, tools=tool_objs, system_prompt=system_prompt, mode=s.mode,
                          repeat_policy=s.policy, repeats=s.k, budget=s.budget, seed=s.seed, run_id=runner.run_id,
                          coverage=coverage, warnings=warn_list, notes=notes, stopped_because=runner.stopped,
                          elapsed_s=time.perf_counter() - runner.started, agent_name=agent_name)


# --------------------------------------------------------------------------------------------------
# simulate's steps: arguments, how many situations, writing them, running the rollouts, the summary
# --------------------------------------------------------------------------------------------------
_KNOWN_KEYWORDS = ("tools", "system_prompt", "simulator", "mode", "repeats", "repeat_policy", "budget", "situations",
                   "asks", "seed", "concurrency", "fault_share", "probe", "judge", "grader", "checkpoint", "progress",
                   "on_progress", "max_turns", "cache", "traces", "output", "until", "time_budget")


def _apply_aliases(aliases: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """Fold the SDK's keyword aliases (``rollouts_per_prompt=``, ``policy=``, ...) into their targets."""
    given = dict(given)
    for name, value in aliases.items():
        target = _KWARG_ALIASES.get(name)
        if target is None:
            close = difflib.get_close_matches(name, [*_KWARG_ALIASES, *_KNOWN_KEYWORDS], n=1)
            hint = f"; did you mean {close[0]}=?" if close else ""
            raise InvalidArgumentType(f"simulate() got an unexpected keyword argument {name!r}{hint}")
        if target == "repeat_policy" and given["repeat_policy"] != "fixed" and value != given["repeat_policy"]:
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


def _settings(*, mode: str, repeats: int | None, repeat_policy: str, situations: int | None, budget: int | None,
              seed: int, concurrency: int, probe: int, fault_share: float | None, asks: Any, judge: Any,
              on_progress: Any) -> _Settings:
    mode = _MODE_ALIASES.get(mode, mode)
    if mode not in MODES:
        raise InvalidArgument(f"mode= must be one of {', '.join(MODES)}; got {mode!r}")
    policy = _POLICY_ALIASES.get(repeat_policy, repeat_policy)
    if policy not in REPEAT_POLICIES:
        raise InvalidArgument(f"repeat_policy= must be 'fixed' or 'dynamic' ('successive' is accepted as an alias "
                              f"of 'dynamic'); got {repeat_policy!r}")
    k = integer("repeats", repeats if repeats is not None else
                (D.RL_REPEATS if mode == "rl" else D.DEFAULT_REPEATS), minimum=1)
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
                     situations=situations, budget=budget, seed=seed, asks=asks, judge=judge)


def _situation_count(s: _Settings, warn_list: list[str]) -> int:
    """How many situations the budget buys at k rollouts each (warns when ``situations=`` asked for more)."""
    affordable = s.budget // s.k
    if affordable < 1:
        raise InvalidArgument(f"budget={s.budget} is smaller than repeats={s.k}: no situation can get its {s.k} "
                              f"rollouts; raise budget to at least {s.k}")
    if s.situations is not None and s.situations * s.k > s.budget:
        _warn(warn_list, f"budget={s.budget} covers {affordable} of {s.situations} situations at repeats={s.k}; "
                         f"raise budget to {s.situations * s.k}+ or lower situations=")
    return min(s.situations if s.situations is not None else affordable, affordable)


def _warn(warn_list: list[str], msg: str) -> None:
    """A warning kept on the result and raised at simulate()'s caller (this is called from simulate's steps)."""
    warn_list.append(msg)
    warnings.warn(msg, UserWarning, stacklevel=4)


def _write(s: _Settings, simulator: Any, tool_objs: list[Tool], system_prompt: str | None, n_sit: int,
           warn_list: list[str]) -> tuple[list[Scenario], str]:
    """The situations to play and the name of who wrote them: the caller's asks, the template, or a model."""
    if s.asks is not None:
        scen = from_asks(list(s.asks), system_prompt=system_prompt, tools=tool_objs)
        if not scen:
            raise InvalidArgument("asks= is empty; give at least one ask (a string or a dict with 'prompt')")
        if len(scen) > n_sit:
            _warn(warn_list, f"budget={s.budget} covers {n_sit} of {len(scen)} asks at repeats={s.k}; raise budget "
                             f"to {len(scen) * s.k}+ or drop asks")
        return scen[:n_sit], "asks"
    if simulator is False or simulator is None:
        if not tool_objs:
            raise InvalidArgument("simulator=False writes situations from tools: pass tools=[...] (or asks=[...])")
        return template_situations(tool_objs, system_prompt, n=n_sit, seed=s.seed, fault_share=s.fault_share), \
            "template"
    return _model_situations(simulator, tool_objs, system_prompt, n_sit, s.seed, s.fault_share), f"model:{simulator}"


def _coverage_note(coverage: Mapping[str, Any], n_situations: int, k: int) -> str:
    full = coverage["situations_for_full_cover"]
    return (f"pairwise coverage {coverage['pairs_covered']}/{coverage['pairs_planned']} pairs with {n_situations} "
            f"situations; a full pairwise cover needs {full} situations (budget {full * k} at repeats={k})")


def _failure_warnings(rows: Rows) -> list[str]:
    """One warning for infrastructure errors and one for agent errors, each quoting the first (one pass over
    the rows, only when there are errors: the run's counts say so)."""
    first: dict[str, str] = {}
    if rows.counts["agent_error"] or rows.counts["infra_error"]:
        for r in rows:
            status = r.get("status")
            if status in rows.counts and status not in first:
                first[status] = str(r.get("error"))
                if len(first) == 2:
                    break
    out = []
    if rows.counts["infra_error"]:
        out.append(f"{rows.counts['infra_error']} of {rows.count} rollouts hit an infrastructure error (backend "
                   f"unreachable or failing after retries; status='infra_error', kept apart from wrong answers and "
                   f"never graded): {first.get('infra_error', '')[:160]}")
    if rows.counts["agent_error"]:
        out.append(f"{rows.counts['agent_error']} of {rows.count} rollouts ended in an agent error (kept as rows, "
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
