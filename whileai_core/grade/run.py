"""Grade: a reward per rollout under one judge contract.

A judge is any callable ``judge(row) -> verdict``. A verdict is a bool, a number in [0, 1], or a dict with
``reward`` (alias ``score``) in [0, 1] and optional ``reason`` (str) and ``markers`` ({name: number or None};
1.0 is the good outcome, None means "does not apply"). Anything else is a contract error that names the row.
The originals are never mutated: graded rows are copies.
"""

from __future__ import annotations

import contextvars
import copy
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from whileai_core.arguments import integer
from whileai_core.errors import InvalidArgument, InvalidArgumentType, JudgeError
from whileai_core.rowlist import RowList
from whileai_core.rows import as_rows, json_safe, scrub, write_jsonl
from whileai_core.scale.executor import resolve as resolve_executor

ON_ERROR = ("raise", "keep")
CONTRACT = ("a judge returns a bool, a number in [0, 1], or a dict {'reward': number in [0, 1], "
            "'reason'?: str, 'markers'?: {name: number or None}}")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an int past float range (10**400): out of [0, 1], reported as such, never a crash
            return math.inf
    try:
        import numpy as np

        if isinstance(value, np.generic) and (np.issubdtype(type(value), np.number) or isinstance(value, np.bool_)):
            return float(value)  # np.bool_ too: a judge written with numpy comparisons returns one
    except ImportError:  # pragma: no cover
        pass
    return None


def normalize_verdict(result: Any) -> tuple[float | int | None, str | None, dict[str, Any], dict[str, Any]]:
    """(reward, reason, markers, meta) from a judge's return value; ``ValueError`` when it breaks the contract.

    ``{"reward": None, "reason": ...}`` is an abstention: reward None, the row stays unjudged."""
    meta: dict[str, Any] = {}
    reason = None
    markers: dict[str, Any] = {}
    if isinstance(result, Mapping):
        if "reward" in result and result["reward"] is None:
            # an explicit abstention (e.g. a verifier with no reference): unjudged, never counted as a failure
            why = result.get("reason")
            if not isinstance(why, str) or not why:
                raise InvalidArgument("the judge returned reward None without a reason; a judge that abstains must say "
                                 "why in 'reason'")
            return None, why, {}, {str(k): json_safe(v) for k, v in result.items() if k not in ("reward", "reason")}
        if "reward" in result:
            raw = result["reward"]
        elif "score" in result:
            raw = result["score"]
        else:
            raise InvalidArgument(f"the judge returned a dict without 'reward' (keys: {sorted(map(str, result))}); "
                             + CONTRACT)
        reason = result.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise InvalidArgument(f"the judge's 'reason' is {type(reason).__name__}; it must be a string")
        raw_markers = result.get("markers") or {}
        if not isinstance(raw_markers, Mapping):
            raise InvalidArgument(f"the judge's 'markers' is {type(raw_markers).__name__}; it must be a dict")
        for name, value in raw_markers.items():
            if value is None:
                markers[str(name)] = None
                continue
            v = _number(value)
            if v is None or not math.isfinite(v):
                shown = f"an integer of {value.bit_length()} bits" if isinstance(value, int) else repr(value)
                raise InvalidArgument(f"marker {name!r} is {shown}; a marker is a number (1.0 = good) or None")
            markers[str(name)] = v
        meta = {str(k): json_safe(v) for k, v in result.items() if k not in ("reward", "score", "reason", "markers")}
    else:
        raw = result
    value = _number(raw)
    if value is None:
        raise InvalidArgument(f"the judge's reward is {type(raw).__name__} ({raw!r:.60}); " + CONTRACT)
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        shown = f"an integer of {raw.bit_length()} bits" if isinstance(raw, int) and math.isinf(value) else repr(raw)
        raise InvalidArgument(f"the judge's reward is {shown}, outside [0, 1]; rescale it (e.g. (v - lo) / (hi - lo))")
    reward: float | int = int(value) if value in (0.0, 1.0) else value
    return reward, reason, markers, meta


def judge_name_of(judge: Any, explicit: str | None = None) -> str:
    if explicit:
        return explicit
    name = getattr(judge, "__name__", None) or getattr(judge, "name", None)
    if name == "<lambda>":
        return "lambda_judge"
    return str(name) if name else type(judge).__name__


class ScoredData:
    """Graded rows. ``.pass_at`` measures them; ``.select(mode=...)`` picks training rows."""

    def __init__(self, rows: Sequence[dict[str, Any]], *, judge_name: str, run_id: str | None = None,
                 scoring_run_id: str | None = None, system_prompt: str | None = None, tools: Sequence[Any] = (),
                 mode: str | None = None, warnings: Sequence[str] = ()) -> None:
        self.rows = RowList(rows)
        self.rows.system_prompt = system_prompt
        self.rows.tools = list(tools)
        self.judge_name = judge_name
        self.run_id = run_id
        self.scoring_run_id = scoring_run_id
        self.system_prompt = system_prompt
        self.tools = list(tools)
        self.mode = mode
        self.warnings = list(warnings)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    @property
    def n_scored(self) -> int:
        return sum(1 for r in self.rows if r.get("reward") is not None)

    @property
    def mean_reward(self) -> float | None:
        vals = [float(r["reward"]) for r in self.rows if r.get("reward") is not None]
        return math.fsum(vals) / len(vals) if vals else None

    def __repr__(self) -> str:
        mean = self.mean_reward
        mean_txt = "n/a" if mean is None else f"{mean:.3f}"
        warn = f", {len(self.warnings)} warning(s): scored.warnings" if self.warnings else ""
        return (f"ScoredData({len(self.rows)} rows, {self.n_scored} scored, judge={self.judge_name!r}, "
                f"mean_reward={mean_txt}{warn})")

    @property
    def pass_at(self) -> Any:
        """pass@1, pass^k, pass@k and headroom with task-bootstrap intervals (``measure.pass_at``)."""
        from whileai_core.measure.measure import pass_at

        return pass_at(self.rows)

    def passes(self) -> RowList:
        return RowList(r for r in self.rows if r.get("reward") == 1)

    def failures(self) -> RowList:
        return RowList(r for r in self.rows if r.get("reward") == 0)

    def failed_traces(self) -> RowList:
        """The failing rows (reward 0), e.g. the production traces a judge failed, for ``simulate(traces=...)``."""
        return self.failures()

    def unjudged(self) -> RowList:
        return RowList(r for r in self.rows if r.get("reward") is None)

    def select(self, mode: str | None = None, **kwargs: Any) -> Any:
        """Training rows for RL or SFT, with a report of what each gate dropped (``select.select``)."""
        from whileai_core.select.select import select

        if mode is None:  # an eval run (the simulate default) trains as RL unless told otherwise
            mode = self.mode if self.mode in ("rl", "sft") else "rl"
        return select(self, mode=mode, **kwargs)

    def export(self, path: Any = None, **kwargs: Any) -> Any:
        return self.rows.export(path, **kwargs)

    def save(self, path: Any, *, overwrite: bool = False) -> Any:
        """Write the graded rows as JSONL (privileged fields scrubbed), atomically."""
        return write_jsonl(path, (scrub(r) for r in self.rows), overwrite=overwrite)


def _describe(row: Mapping[str, Any], index: int) -> str:
    rid = row.get("row_id") or f"rows[{index}]"
    return f"row {rid} (task {row.get('task_id', '?')}, rollout {row.get('rollout_index', '?')})"


def run_judge(source: Any, judge: Callable[[dict[str, Any]], Any] | None, *, judge_name: str | None = None,
              on_error: str = "raise", concurrency: int = 1, executor: str | None = None,
              ray_address: str | None = None) -> ScoredData:
    """Score ``source`` (a run, a ScoredData or a row list) with ``judge``; returns a ScoredData of copies.

    on_error="raise" (default) stops at the first contract break with an error naming the row;
    "keep" stores ``reward=None`` with ``judge_status`` and the error on that row and goes on.
    executor="ray" (or ``wai.configure(executor="ray")``) grades the rows in shards on a Ray cluster at
    ``ray_address``: the same verdicts in the same order (docs/scale.md).
    """
    where = resolve_executor(executor, ray_address)
    if judge is None or not callable(judge):
        raise InvalidArgumentType("grade() needs judge=<callable>: judge(row) -> {'reward': 0..1, 'reason'?: str}; got "
                        f"{type(judge).__name__}")
    if on_error not in ON_ERROR:
        raise InvalidArgument(f"on_error= must be 'raise' or 'keep'; got {on_error!r}")
    concurrency = integer("concurrency", concurrency, minimum=1)
    rows = as_rows(source, name="source")
    name = judge_name_of(judge, judge_name)
    scoring_run_id = "score_" + uuid.uuid4().hex[:12]

    def score(item: tuple[int, dict[str, Any]]) -> dict[str, Any]:
        i, original = item
        row = copy.deepcopy(dict(original))
        if original.get("status") == "infra_error":  # the agent never answered: nothing to judge, not a failure
            row.update(reward=None, reason=None, judge_name=name, judge_status="skipped_infra_error")
            return row
        try:
            verdict = judge(copy.deepcopy(dict(original)))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            problem = f"the judge raised {type(exc).__name__}: {exc}"
            status = "error"
        else:
            try:
                reward, reason, markers, meta = normalize_verdict(verdict)
            except ValueError as exc:
                problem, status = str(exc), "invalid_result"
            else:
                status = "ok" if reward is not None else "abstained"
                row.update(reward=reward, reason=reason, judge_name=name, judge_status=status)
                row["markers"] = {**(row.get("markers") or {}), **markers}
                if meta:
                    row["judge_meta"] = meta
                row.setdefault("lineage", {}).update(judge=name, scoring_run_id=scoring_run_id)
                return row
        if on_error == "raise":
            contract = "" if CONTRACT in problem else f" {CONTRACT};"
            raise JudgeError(f"judge {name!r} failed on {_describe(original, i)}: {problem}.{contract} "
                             "pass on_error='keep' to record the failure on the row and go on")
        row.update(reward=None, reason=None, judge_name=name, judge_status=status, judge_error=problem)
        row.setdefault("lineage", {}).update(judge=name, scoring_run_id=scoring_run_id)
        return row

    items = list(enumerate(rows))
    graded: list[dict[str, Any]] = []
    try:
        if where.remote:  # shards on a Ray cluster, joined in order (whileai_core.scale)
            from whileai_core.scale.grading import map_in_shards

            map_in_shards(score, items, executor=where, concurrency=concurrency, out=graded,
                          check={"judge": judge})
        elif concurrency > 1 and len(items) > 1:
            with ThreadPoolExecutor(max_workers=concurrency) as pool:  # workers see the caller's wai.context
                contexts = [contextvars.copy_context() for _ in items]  # copied here, in the caller's thread
                futures = [pool.submit(ctx.run, score, it) for ctx, it in zip(contexts, items)]
                try:
                    for fut in futures:
                        graded.append(fut.result())
                except BaseException:
                    for fut in futures:
                        fut.cancel()
                    raise
        else:
            for item in items:
                graded.append(score(item))
    except JudgeError as exc:  # the verdicts already paid for are kept on the error, never thrown away
        exc.partial = RowList(graded)  # type: ignore[attr-defined]
        exc.args = (f"{exc.args[0]} (the {len(graded)} row(s) graded before it are in err.partial)",)
        raise
    declared = [getattr(t, "name", None) or (t.get("name") if isinstance(t, Mapping) else None)
                for t in getattr(source, "tools", []) or []]
    warnings = _hollow_warnings(graded, [d for d in declared if d])
    return ScoredData(graded, judge_name=name, run_id=getattr(source, "run_id", None),
                      scoring_run_id=scoring_run_id, system_prompt=getattr(source, "system_prompt", None),
                      tools=getattr(source, "tools", []) or [], mode=getattr(source, "mode", None),
                      warnings=warnings)


def _hollow_warnings(rows: list[dict[str, Any]], declared_tools: list[str]) -> list[str]:
    """Warnings about a run that measured less than it seems (guards.hollow_run_warnings)."""
    from whileai_core.guard.hollow import hollow_run_warnings

    return list(hollow_run_warnings(rows, declared_tools))
