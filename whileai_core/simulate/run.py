"""Simulate: run an agent through written situations, k times each, against a world that fails on purpose.

``simulate`` writes situations (the template writer's covering array with ``simulator=False``), plans the
rollouts (``fixed``: k each; ``dynamic``: probe 2, fill to k only where they disagree, DAPO), runs them on a
thread pool and returns every conversation as a row (docs/rows.md). An agent that raises gives an error row:
counted, kept, never a crash of the run. Ctrl-C keeps the rows finished so far.
"""

from __future__ import annotations

import contextvars
import difflib
import hashlib
import json
import logging
import sys
import time
import uuid
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core import distribution_version
from whileai_core.arguments import integer
from whileai_core.errors import BackendError, CassetteMiss, InvalidArgument, InvalidArgumentType
from whileai_core.messages import chat_messages, flat_steps, loss_mask
from whileai_core.rowlist import RowList
from whileai_core.rows import json_safe, scrub, stable_id, write_jsonl
from whileai_core.scale.executor import Executor
from whileai_core.scale.executor import resolve as resolve_executor
from whileai_core.simulate.situations import (
    Scenario,
    coverage_report,
    from_asks,
)
from whileai_core.simulate.situations import (
    situations as template_situations,
)
from whileai_core.simulate.world import CURRENT, RUN_PLAN, World, in_plan
from whileai_core.tools import Tool, as_tools
from whileai_core.traces.situations import trace_asks

log = logging.getLogger("whileai.simulate")

MODES = ("rl", "sft", "eval")
REPEAT_POLICIES = ("fixed", "dynamic")
_POLICY_ALIASES = {"successive": "dynamic", "adaptive": "dynamic"}
_MODE_ALIASES = {"explore": "eval"}
_KWARG_ALIASES = {"rollouts_per_request": "repeats", "rollouts_per_prompt": "repeats", "policy": "repeat_policy",
                  "fault_rate": "fault_share", "tasks": "asks"}


# --------------------------------------------------------------------------------------------------
# one rollout
# --------------------------------------------------------------------------------------------------
def _check_output(out: Any) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
    """Validate an agent's return value against the contract; returns (steps, final_text, extra)."""
    if isinstance(out, str):
        return [], out, {}
    if not isinstance(out, Mapping):
        raise InvalidArgumentType(f"the agent returned {type(out).__name__}; the agent contract is a dict "
                        "{'steps': [{'tool', 'arguments', 'result'}, ...], 'final_text': str} (or a plain string)")
    final_text = out.get("final_text", "")
    if not isinstance(final_text, str):
        raise InvalidArgumentType(f"the agent's final_text is {type(final_text).__name__}; it must be a string")
    steps = out.get("steps", [])
    if not isinstance(steps, (list, tuple)):
        raise InvalidArgumentType(f"the agent's steps is {type(steps).__name__}; it must be a list of step dicts")
    for i, step in enumerate(steps):
        if not isinstance(step, Mapping) or not ({"tool", "text", "user", "tool_calls"} & set(step)):
            raise InvalidArgumentType(f"the agent's steps[{i}] must be a dict with 'tool' (+ 'arguments', 'result'), "
                                      "'tool_calls' (a list of those: one turn's parallel calls), 'text' or 'user'; "
                                      f"got {step!r:.120}")
    clean = []
    for i, step in enumerate(flat_steps(steps)):
        step = dict(step)
        for key in ("text", "user"):
            if step.get(key) is not None and not isinstance(step[key], str):
                raise InvalidArgumentType(f"the agent's steps[{i}][{key!r}] is {type(step[key]).__name__}; it must be a string")
        if "tool" not in step and step.get("text") is None and step.get("user") is None:
            raise InvalidArgumentType(f"the agent's steps[{i}] has no tool and its text is None; drop the step or give it a "
                            "string (None would be trained on as the text 'None')")
        args = step.get("arguments")
        if isinstance(args, str):  # OpenAI-style tool calls carry arguments as a JSON string: decode it once
            try:
                decoded = json.loads(args) if args.strip() else {}
            except ValueError:
                decoded = None  # a model's broken JSON stays as it was sent: the judge should see the mistake
            if isinstance(decoded, dict):
                step["arguments"] = decoded
        clean.append(json_safe(step))
    extra = {k: json_safe(v) for k, v in out.items() if k not in ("steps", "final_text")}
    return clean, final_text, extra


def _is_infra_error(exc: BaseException) -> bool:
    """A backend that could not be reached (after retries) is infrastructure, not a wrong answer (the class lives
    in ``errors``, so one raised by the agent's own code counts without the backends being imported)."""
    return isinstance(exc, BackendError)


def _is_replay_miss(exc: BaseException) -> bool:
    return isinstance(exc, CassetteMiss)


def rollout(agent: Callable[[Any], Any], scenario: Scenario | str, *, rollout_index: int = 0, seed: int = 0,
            tools: Sequence[Any] | None = None, system_prompt: str | None = None, world: World | None = None,
            run_id: str | None = None, mode: str | None = None, repeat_policy: str | None = None) -> dict[str, Any]:
    """Run one trial of ``agent`` on ``scenario`` and return its row. Never raises for an agent error."""
    if not isinstance(scenario, Scenario):
        scenario = Scenario(str(scenario), system_prompt=system_prompt)
    if system_prompt is None:
        system_prompt = scenario.system_prompt
    if world is None and tools:
        world = World(tools, seed=seed)
    trial = scenario.replace(rollout_index=rollout_index, world=world, system_prompt=system_prompt)
    token = CURRENT.set(trial)
    started = time.perf_counter()
    status, error, finish = "ok", None, "stop"
    try:
        try:
            out = agent(trial)
            steps, final_text, extra = _check_output(out)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # an agent error is data, not a crash
            if _is_replay_miss(exc):
                raise  # a cassette miss means the run is not the recorded one: fail loudly, with its diff
            steps, final_text, extra = [], "", {}
            status = "infra_error" if _is_infra_error(exc) else "agent_error"
            error, finish = f"{type(exc).__name__}: {exc}"[:D.ERROR_TEXT_MAX_CHARS], "error"
    finally:
        CURRENT.reset(token)
    seeded = bool(extra.pop("seeded", False))
    seeded_what = extra.pop("seeded_what", None)
    finish = str(extra.pop("finish_reason", finish))
    messages = chat_messages(system_prompt, str(trial), steps, final_text)
    agent_name = getattr(agent, "__name__", None) or type(agent).__name__
    row: dict[str, Any] = {
        "schema_version": D.ROW_SCHEMA_VERSION,
        "row_id": f"{trial.task_id}#{rollout_index}",
        "task_id": trial.task_id,
        "scenario_id": trial.task_id,
        "rollout_index": rollout_index,
        "prompt": str(trial),
        "system_prompt": system_prompt,
        "scenario": dict(trial.scenario),
        "world_state": trial.world_state,
        "stance": trial.stance,
        "faults": dict(trial.faults),
        "privileged": json_safe(trial.privileged),
        "steps": steps,
        "final_text": final_text,
        "messages": messages,
        "loss_mask": loss_mask(messages),
        "seeded": seeded,
        "seeded_what": seeded_what if seeded else None,
        "status": status,
        "error": error,
        "finish_reason": finish,
        "agent_extra": extra,
        "latency_s": round(time.perf_counter() - started, 6),
        "lineage": {
            "run_id": run_id, "seed": seed, "writer": "template", "agent": agent_name,
            "whileai_version": distribution_version(),
            "system_prompt_sha": hashlib.sha256((system_prompt or "").encode()).hexdigest()[:16],
            "mode": mode, "repeat_policy": repeat_policy,
        },
    }
    return row


def _signature(row: Mapping[str, Any]) -> str:
    """What a rollout did, for telling apart agreeing and disagreeing probes when there is no grader."""
    calls = [(s.get("tool"), json.dumps(s.get("arguments"), sort_keys=True), str(s.get("result"))[:200])
             for s in row.get("steps", []) if "tool" in s]
    return stable_id(row.get("status"), calls, " ".join(str(row.get("final_text", "")).lower().split()))


# --------------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------------
_GRADED_ONLY = ("pass_at", "passes", "failures", "unjudged", "select", "export")


class SimulationData:
    """The rows of one simulate() run, with the plan behind them. ``.grade(judge=...)`` scores them."""

    def __init__(self, rows: list[dict[str, Any]], *, scenarios: list[Scenario], tools: list[Tool],
                 system_prompt: str | None, mode: str, repeat_policy: str, repeats: int, budget: int,
                 seed: int, run_id: str, coverage: dict[str, Any], warnings: list[str], notes: list[str],
                 stopped_because: str, elapsed_s: float, agent_name: str) -> None:
        self.rows = RowList(rows)
        self.rows.system_prompt = system_prompt
        self.rows.tools = tools
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

    @property
    def n_situations(self) -> int:
        return len({r["task_id"] for r in self.rows})

    @property
    def n_errors(self) -> int:
        return sum(1 for r in self.rows if r.get("status") == "agent_error")

    @property
    def n_infra_errors(self) -> int:
        return sum(1 for r in self.rows if r.get("status") == "infra_error")

    @property
    def declared_tools(self) -> list[str]:
        return [t.name for t in self.tools]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __repr__(self) -> str:
        cov = self.coverage
        return (f"SimulationData({len(self.rows)} rows, {self.n_situations} situations, k={self.repeats}, "
                f"mode={self.mode!r}, policy={self.repeat_policy!r}, {self.n_errors} agent error(s), "
                f"{self.n_infra_errors} infra error(s), "
                f"pairs {cov.get('pairs_covered')}/{cov.get('pairs_planned')}, stopped: {self.stopped_because})")

    def grade(self, judge: Callable[[dict[str, Any]], Any] | None = None, *, judge_name: str | None = None,
              on_error: str = "raise", concurrency: int = 1, executor: str | None = None,
              ray_address: str | None = None, **kwargs: Any) -> Any:
        """Score every row with ``judge`` under the judge contract; returns ``ScoredData`` (rows copied).
        ``executor="ray"`` grades the rows in shards on a Ray cluster (same rewards, same order)."""
        from whileai_core.grade.run import run_judge

        if judge is None:
            judge = kwargs.pop("grader", None)
        if kwargs:
            raise InvalidArgumentType(f"grade() got unexpected keyword argument(s) {sorted(kwargs)}")
        return run_judge(self, judge, judge_name=judge_name, on_error=on_error, concurrency=concurrency,
                         executor=executor, ray_address=ray_address)

    def __getattr__(self, name: str) -> Any:
        if name in _GRADED_ONLY:  # what a ScoredData has and an ungraded run cannot
            raise AttributeError(f"SimulationData has no .{name}: this run is not graded yet; call "
                                 f"data.grade(judge=...) and read scored.{name}")
        raise AttributeError(f"'SimulationData' object has no attribute {name!r}")

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the rows as JSONL (privileged fields scrubbed), atomically."""
        return write_jsonl(path, (scrub(r) for r in self.rows), overwrite=overwrite)

    def report(self) -> dict[str, Any]:
        return {"rows": len(self.rows), "situations": self.n_situations, "k": self.repeats, "mode": self.mode,
                "repeat_policy": self.repeat_policy, "budget": self.budget, "agent_errors": self.n_errors,
                "coverage": dict(self.coverage), "warnings": list(self.warnings), "notes": list(self.notes),
                "stopped_because": self.stopped_because, "elapsed_s": round(self.elapsed_s, 3)}


def _probe_votes(probes: list[dict[str, Any]], grader: Any, failures: list[str]) -> set[Any]:
    """What the dynamic policy compares: the grader's rewards, or what the agent did when there is no grader
    (or the grader raised / broke the judge contract on one of these probes, which is noted, never a crash)."""
    if grader is not None:
        from whileai_core.grade.run import normalize_verdict

        try:
            return {normalize_verdict(grader(dict(r)))[0] for r in probes}
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - any grader failure falls back, and is noted
            failures.append(f"{probes[0].get('task_id')}: {type(exc).__name__}: {exc}")
    return {_signature(r) for r in probes}


def _open_checkpoint(checkpoint: Any, warn_list: list[str]) -> Path:
    """Check the checkpoint path before the first rollout, so a bad path fails fast instead of mid-run."""
    if not isinstance(checkpoint, (str, Path)):
        raise InvalidArgumentType(f"checkpoint= must be a file path (str or Path); got {type(checkpoint).__name__}")
    path = Path(checkpoint)
    if path.is_dir():
        raise IsADirectoryError(f"checkpoint={str(path)!r} is a directory; pass a file path inside it, e.g. "
                                f"{str(path / 'rows.jsonl')!r}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        had_rows = path.is_file() and path.stat().st_size > 0
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise OSError(f"checkpoint={str(path)!r} cannot be written ({exc.strerror or exc}); pass a writable file "
                      "path") from None
    if had_rows:
        msg = (f"checkpoint={str(path)!r} already holds rows; this run appends after them (each row's "
               "lineage.run_id tells the runs apart); pass a fresh path to keep runs in separate files")
        warn_list.append(msg)
        warnings.warn(msg, UserWarning, stacklevel=3)
    return path


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
             max_turns: int | None = None, cache: Any = None, traces: Any = None, executor: str | None = None,
             ray_address: str | None = None, **aliases: Any) -> SimulationData:
    """Write situations for ``tools`` and run ``agent`` through each ``repeats`` times.

    simulator=False uses the template writer: a pairwise covering array (Kuhn et al. 2004) over tool x world
    state x user stance x tool condition, no model, no network. repeat_policy="fixed" gives every situation
    k rollouts; "dynamic" ("successive" in the SDK) probes ``probe`` rollouts and fills to k only where they
    disagree (DAPO, Yu et al. 2025), compared on ``judge=``'s rewards (``grader=`` is its older name) when one
    is given. ``budget`` caps rows. Same seed, same rows. ``traces=`` (``wai.traces.load`` rows, or
    ``wai.traces.situations(rows, eval_rows=...)``) plays the users' real first messages as the asks.
    ``executor="ray"`` (or ``wai.configure(executor="ray")``) plays the situations in shards on a Ray cluster
    (``ray_address=``), with the same rows as the local run (docs/scale.md).
    """
    where = resolve_executor(executor, ray_address)
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
    if where.remote:  # the rollouts in shards on a Ray cluster (whileai_core.scale)
        return _sharded(where, s, agent, run_agent, scen, writer, tool_objs, system_prompt, max_turns, cache,
                        checkpoint, coverage, notes, warn_list)
    runner = _Runner(s, run_agent, scen, writer, tool_objs, system_prompt, progress, on_progress, warn_list)
    if checkpoint is not None:
        runner.checkpoint = _open_checkpoint(checkpoint, warn_list)
    notes.extend(runner.run())
    rows = [runner.results[key] for key in sorted(runner.results)]
    warn_list.extend(_failure_warnings(rows))
    if runner.show_progress:
        runner.progress_line(len(rows), len(rows))
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
                   "on_progress", "max_turns", "cache", "traces", "executor", "ray_address")


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


class _Runner:
    """Runs the rollouts on a thread pool: checkpointing, progress lines, the fixed and dynamic policies."""

    def __init__(self, s: _Settings, run_agent: Callable[[Any], Any], scen: list[Scenario], writer: str,
                 tool_objs: list[Tool], system_prompt: str | None, progress: bool | None,
                 on_progress: Callable[[dict[str, Any]], None] | None, warn_list: list[str]) -> None:
        self.s, self.run_agent, self.scen, self.writer = s, run_agent, scen, writer
        self.system_prompt, self.warn_list = system_prompt, warn_list
        self.world = World(tool_objs, seed=s.seed) if tool_objs else None
        self.run_id = "run-" + uuid.UUID(int=int(stable_id(s.seed, [str(x) for x in scen], s.k, s.policy,
                                                            length=32), 16)).hex[:12]
        self.started = time.perf_counter()
        self.results: dict[tuple[int, int], dict[str, Any]] = {}
        self.show_progress = progress if progress is not None else s.budget >= D.PROGRESS_MIN_ROWS
        self.checkpoint: Path | None = None
        self.callback = on_progress
        self.stopped = "budget" if s.situations is None and s.asks is None else "situations_done"
        self.plan = tuple((x.task_id, ri) for x in scen for ri in range(s.k))

    def run(self) -> list[str]:
        """Every rollout the policy asks for; returns the notes it leaves (dynamic sampling's savings)."""
        s, n = self.s, len(self.scen)
        notes: list[str] = []
        with ThreadPoolExecutor(max_workers=s.concurrency, thread_name_prefix="whileai-rollout") as pool:
            try:
                if s.policy == "fixed":
                    self.run_batch(pool, [(si, ri) for si in range(n) for ri in range(s.k)], n * s.k)
                else:
                    notes.append(self.run_dynamic(pool))
            except KeyboardInterrupt:
                self.stopped = "interrupted"
                msg = f"interrupted: kept the {len(self.results)} rows finished so far"
                self.warn_list.append(msg)
                print(f"whileai: {msg}", file=sys.stderr)
        return notes

    def run_dynamic(self, pool: ThreadPoolExecutor) -> str:
        """Probe every situation, then fill to k only the ones whose probes disagree."""
        s, n = self.s, len(self.scen)
        first = min(s.probe, s.k)
        self.run_batch(pool, [(si, ri) for si in range(n) for ri in range(first)], n * s.k)
        fill = []
        grader_failures: list[str] = []
        for si in range(n):
            votes = _probe_votes([self.results[(si, ri)] for ri in range(first)], s.judge, grader_failures)
            if len(votes) > 1:
                fill.extend((si, ri) for ri in range(first, s.k))
        if grader_failures:
            self._log(f"grader= failed on the probes of {len(grader_failures)} situation(s), so they were "
                      f"compared on what the agent did instead (first: {grader_failures[0][:160]})")
        self.run_batch(pool, fill, len(self.results) + len(fill))
        saved = n * s.k - len(self.results)
        return (f"dynamic sampling: {len(fill) // max(1, s.k - first)} of {n} situations disagreed on {first} "
                f"probes and were filled to k={s.k}; {saved} rollouts saved")

    def job(self, si: int, ri: int) -> dict[str, Any]:
        RUN_PLAN.set(self.plan)  # each worker thread has its own context
        row = rollout(self.run_agent, self.scen[si], rollout_index=ri, seed=self.s.seed,
                      system_prompt=self.system_prompt, world=self.world, run_id=self.run_id, mode=self.s.mode,
                      repeat_policy=self.s.policy)
        row["lineage"]["writer"] = self.writer
        return row

    def run_batch(self, pool: ThreadPoolExecutor, keys: list[tuple[int, int]], total: int) -> None:
        # each job runs in a copy of the caller's context, so `with wai.context(...)` reaches the workers
        pending: dict[Future, tuple[int, int]] = {
            pool.submit(contextvars.copy_context().run, self.job, si, ri): (si, ri) for si, ri in keys}
        try:
            while pending:
                finished, _ = wait(list(pending), timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in finished:
                    key = pending.pop(fut)
                    self.results[key] = fut.result()
                    self.save(self.results[key])
                    if len(self.results) % D.PROGRESS_EVERY_ROWS == 0:
                        self.progress_line(len(self.results), total)
        except KeyboardInterrupt:
            for fut in pending:
                fut.cancel()
            raise

    def save(self, row: Mapping[str, Any]) -> None:
        """Append the row to the checkpoint; a failing disk stops the checkpoint, never the run."""
        if self.checkpoint is None:
            return
        try:
            with self.checkpoint.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(scrub(row)) + "\n")
        except OSError as exc:  # the rows stay in memory: a failing disk must not end the run
            self._log(f"checkpoint {str(self.checkpoint)!r} stopped being written after {len(self.results) - 1} "
                      f"rows ({exc}); the run went on and every row is in the returned data (data.save(path) to "
                      "write them)")
            self.checkpoint = None

    def progress_line(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else float("nan")
        errors = sum(1 for r in self.results.values() if r.get("status") == "agent_error")
        info = {"rows": done, "cap": total, "elapsed_s": round(elapsed, 2), "rate": round(rate, 2),
                "eta_s": round(eta, 1) if eta == eta else None, "agent_errors": errors}
        if self.callback is not None:
            try:
                self.callback(info)
            except Exception as exc:  # noqa: BLE001 - a broken progress hook must not cost the run its rows
                self._log(f"on_progress raised {type(exc).__name__}: {exc}; it is not called again in this run")
                self.callback = None
        if self.show_progress:
            print(f"whileai: {done}/{total} rollouts, {rate:.1f}/s, ~{eta:.0f}s left, {errors} agent error(s)",
                  file=sys.stderr, flush=True)

    def _log(self, msg: str) -> None:
        self.warn_list.append(msg)
        log.warning(msg)


def _failure_warnings(rows: list[dict[str, Any]]) -> list[str]:
    """One warning for infrastructure errors and one for agent errors, each quoting the first."""
    out = []
    infra = [r for r in rows if r.get("status") == "infra_error"]
    if infra:
        out.append(f"{len(infra)} of {len(rows)} rollouts hit an infrastructure error (backend unreachable or "
                   f"failing after retries; status='infra_error', kept apart from wrong answers and never graded): "
                   f"{infra[0]['error'][:160]}")
    errors = [r for r in rows if r.get("status") == "agent_error"]
    if errors:
        out.append(f"{len(errors)} of {len(rows)} rollouts ended in an agent error (kept as rows, "
                   f"status='agent_error'): {errors[0]['error'][:160]}")
    for msg in out:
        log.warning(msg)
    return out


def _sharded(where: Executor, s: _Settings, agent: Any, run_agent: Callable[[Any], Any], scen: list[Scenario],
             writer: str, tool_objs: list[Tool], system_prompt: str | None, max_turns: int | None, cache: Any,
             checkpoint: Any, coverage: dict[str, Any], notes: list[str], warn_list: list[str]) -> SimulationData:
    """simulate(executor="ray"): the situations written here, their rollouts played in shards on the cluster,
    each shard's rows appended to ``checkpoint`` as it finishes (docs/scale.md)."""
    from whileai_core.models import config
    from whileai_core.scale.rollouts import simulate_in_shards

    started = time.perf_counter()
    run_id = "run-" + uuid.UUID(int=int(stable_id(s.seed, [str(x) for x in scen], s.k, s.policy, length=32),
                                        16)).hex[:12]  # the local runner's run id, for the whole run
    plan = tuple((x.task_id, ri) for x in scen for ri in range(s.k))
    path = _open_checkpoint(checkpoint, warn_list) if checkpoint is not None else None
    kept: list[dict[str, Any]] = []

    def on_rows(rows: list[dict[str, Any]]) -> None:
        nonlocal path
        kept.extend(rows)
        if path is None:
            return
        try:
            with path.open("a", encoding="utf-8") as fh:
                fh.writelines(json.dumps(scrub(r)) + "\n" for r in rows)
        except OSError as exc:  # the rows stay in memory: a failing disk must not end the run
            _warn(warn_list, f"checkpoint {str(path)!r} stopped being written after {len(kept) - len(rows)} rows "
                             f"({exc}); every row is in the returned data (data.save(path) to write them)")
            path = None

    call = {"agent": agent if agent is not None else config.resolve("agent"), "tools": tool_objs,
            "system_prompt": system_prompt, "mode": s.mode, "repeats": s.k, "repeat_policy": s.policy,
            "seed": s.seed, "concurrency": s.concurrency, "probe": s.probe, "judge": s.judge,
            "max_turns": max_turns, "cache": cache}
    stopped = "budget" if s.situations is None and s.asks is None else "situations_done"
    try:
        rows, ledger = simulate_in_shards(simulate, call, scen, plan=plan, run_id=run_id, writer=writer,
                                          in_plan=in_plan, executor=where, on_rows=on_rows)
    except KeyboardInterrupt:
        stopped, order = "interrupted", {key: i for i, key in enumerate(plan)}
        rows = sorted(kept, key=lambda r: order[(r["task_id"], r["rollout_index"])])
        msg = f"interrupted: kept the {len(rows)} rows of the shards finished so far"
        warn_list.append(msg)
        print(f"whileai: {msg}", file=sys.stderr)
    else:
        if ledger.retried:
            _warn(warn_list, f"{ledger.retried} shard(s) were played again after their worker died, each kept "
                             f"once ({ledger.failures[0][:160]})")
    if s.policy == "dynamic" and stopped != "interrupted":
        first = min(s.probe, s.k)
        played = Counter(r["task_id"] for r in rows)
        filled = sum(1 for x in scen if played[x.task_id] > first)
        notes.append(f"dynamic sampling: {filled} of {len(scen)} situations disagreed on {first} probes and were "
                     f"filled to k={s.k}; {len(scen) * s.k - len(rows)} rollouts saved")
    warn_list.extend(_failure_warnings(rows))
    agent_name = getattr(run_agent, "__name__", None) or type(run_agent).__name__
    return SimulationData(rows, scenarios=scen, tools=tool_objs, system_prompt=system_prompt, mode=s.mode,
                          repeat_policy=s.policy, repeats=s.k, budget=s.budget, seed=s.seed, run_id=run_id,
                          coverage=coverage, warnings=warn_list, notes=notes, stopped_because=stopped,
                          elapsed_s=time.perf_counter() - started, agent_name=agent_name)
