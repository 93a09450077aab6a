"""Grade: a reward per rollout under one judge contract.

A judge is any callable ``judge(row) -> verdict``. A verdict is a bool, a number in [0, 1], or a dict with
``reward`` (alias ``score``) in [0, 1] and optional ``reason`` (str) and ``markers`` ({name: number or None};
1.0 is the good outcome, None means "does not apply"). Anything else is a contract error that names the row.
The originals are never mutated: graded rows are copies.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import functools
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from whileai_core.arguments import integer
from whileai_core.errors import InvalidArgument, InvalidArgumentType, JudgeError
from whileai_core.models.aio import as_finished, async_call
from whileai_core.progress import Progress
from whileai_core.redact import error_text
from whileai_core.rowlist import RowList
from whileai_core.rows import JudgeStatus, RowFields, as_rows, json_safe, scrub, write_jsonl
from whileai_core.rows import as_number as _number
from whileai_core.scale.executor import Executor
from whileai_core.scale.executor import resolve as resolve_executor

ON_ERROR = ("raise", "keep")
JUDGE_FAULTS = ("error", "invalid_result", "missing_reward")  # judge_status values of a row the judge failed on
CONTRACT = ("a judge returns a bool, a number in [0, 1], or a dict {'reward': number in [0, 1], "
            "'reason'?: str, 'markers'?: {name: number or None}}")


def normalize_verdict(result: Any) -> tuple[float | int | None, str | None, dict[str, Any], dict[str, Any]]:
    """(reward, reason, markers, meta) from a judge's return value; ``ValueError`` when it breaks the contract.

    ``{"reward": None, "reason": ...}`` is an abstention: reward None, the row stays unjudged.

    Args:
        result: what a judge returned: a number, a bool, ``(score, reason)`` or a verdict dict.

    Returns:
        ``(reward, reason, markers, meta)``.

    Raises:
        InvalidArgument: a verdict outside the contract (a ``ValueError``); the message says what was wrong.

    Example:
        ```python
        wai.normalize_verdict({"reward": 1, "reason": "ok"})   # (1, "ok", {}, {})
        ```
    """
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
        self.trust: Any = None  # the judge_trust report of grade(trust=...), when it ran

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

    @property
    def traces(self) -> RowList:
        """The SDK's name for ``failed_traces()``: the failures, to replay with ``simulate(traces=...)``."""
        return self.failures()

    @property
    def trajectories(self) -> RowList:
        """The graded rows in memory, ``privileged`` included (``grade.views.trajectories``)."""
        from whileai_core.grade.views import trajectories

        return trajectories(self)

    def partials(self) -> RowList:
        """Rows with 0 < reward < 1 (``grade.views.partials``)."""
        from whileai_core.grade.views import partials

        return partials(self)

    def unjudged(self) -> RowList:
        return RowList(r for r in self.rows if r.get("reward") is None)

    def select_by_reward(self, reward: float) -> RowList:
        """Rows whose reward equals ``reward`` (``grade.views.select_by_reward``)."""
        from whileai_core.grade.views import select_by_reward

        return select_by_reward(self, reward)

    def select_by_reward_range(self, lo: float, hi: float, *, inclusive: bool = True) -> RowList:
        """Rows with lo <= reward <= hi (``grade.views.select_by_reward_range``)."""
        from whileai_core.grade.views import select_by_reward_range

        return select_by_reward_range(self, lo, hi, inclusive=inclusive)

    def leak_report(self, **kwargs: Any) -> Any:
        """Rows that quote their own privileged block (``grade.views.leak_report``)."""
        from whileai_core.grade.views import leak_report

        return leak_report(self, **kwargs)

    def report(self, **kwargs: Any) -> Any:
        """Counts, mean reward with its interval and n, pass@k and warnings in one printable block."""
        from whileai_core.grade.views import report

        return report(self, **kwargs)

    def compare_judges(self, judges: Any, **kwargs: Any) -> Any:
        """Rank several judges by kappa against the gold labels these rows carry (``grade.views.compare_judges``)."""
        from whileai_core.grade.judge_trust import compare_judges

        return compare_judges(self, judges, **kwargs)

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


def _scaled(verdict: Any, scale: tuple[float, float]) -> Any:
    """A rating on ``scale=(lo, hi)`` read as the reward ``(v - lo) / (hi - lo)`` (6 places); the rating and scale
    stay in ``judge_meta``. A rating outside the scale is a contract break (recorded as ``invalid_result``)."""
    lo, hi = scale
    if isinstance(verdict, Mapping):
        key = next((k for k in ("rating", "score", "reward") if k in verdict), None)
        if key is None:
            return verdict  # missing_reward, reported as such by normalize_verdict
        raw, rest = verdict[key], {k: v for k, v in verdict.items() if k not in ("rating", "score", "reward")}
    else:
        raw, rest = verdict, {}
    v = _number(raw)
    if v is None:
        return verdict if isinstance(verdict, Mapping) else raw
    if not math.isfinite(v) or not lo <= v <= hi:
        raise InvalidArgument(f"the judge's rating {raw!r} is outside scale=({lo}, {hi}); return a rating on the "
                              "scale, or pass the scale the judge uses")
    return {**rest, "reward": round((v - lo) / (hi - lo), 6), "rating": raw, "scale": [lo, hi]}


def _check_scale(scale: Any) -> tuple[float, float] | None:
    if scale is None:
        return None
    try:
        lo, hi = (float(x) for x in scale)
    except (TypeError, ValueError):
        raise InvalidArgumentType(f"scale= is (lo, hi), two numbers, e.g. scale=(1, 5); got {scale!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        raise InvalidArgument(f"scale=({lo}, {hi}) needs hi > lo, both finite; e.g. scale=(1, 5)")
    return lo, hi


def _contract_meta(verdict: Any, scale: tuple[float, float] | None) -> tuple[JudgeStatus, dict[str, Any]]:
    """(judge_status, judge_meta) for a verdict that broke the contract, in the SDK's vocabulary."""
    if isinstance(verdict, Mapping):
        keys = ("reward", "score", "rating") if scale else ("reward", "score")
        present = [k for k in keys if k in verdict]
        if not present:
            return "missing_reward", {"returned_keys": sorted(map(str, verdict))}
        raw = verdict[present[-1] if scale else present[0]]
    else:
        raw = verdict
    value = _number(raw)
    if value is None:
        return "invalid_result", {"returned_type": type(raw).__name__}
    return "invalid_result", {"reward_out_of_range": json_safe(raw) if math.isfinite(value) else repr(raw)[:60]}


class _Scorer:
    """Grades one row at a time under one judge; the same for the thread pool and the plain loop."""

    def __init__(self, judge: Callable[[dict[str, Any]], Any], name: str, on_error: str,
                 scale: tuple[float, float] | None) -> None:
        self.judge, self.name, self.on_error, self.scale = judge, name, on_error, scale
        self.scoring_run_id = "score_" + uuid.uuid4().hex[:12]

    def __call__(self, item: tuple[int, dict[str, Any]]) -> dict[str, Any]:
        """The graded copy of one ``(index, row)``, the judge called here (the thread pool, Ray, the plain loop)."""
        row, shown = self._start(item)
        if shown is None:
            return row
        try:
            verdict = self.judge(shown)
        except Exception as exc:  # noqa: BLE001 - recorded on the row; KeyboardInterrupt/SystemExit stop the run
            return self._end(item, row, error=exc)
        return self._end(item, row, verdict)

    async def acall(self, item: tuple[int, dict[str, Any]], judge: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        """``self(item)`` on an event loop, awaiting ``judge`` (the judge's coroutine function, ``async_call``)."""
        row, shown = self._start(item)
        if shown is None:
            return row
        try:
            verdict = await judge(shown)
        except Exception as exc:  # noqa: BLE001 - recorded on the row; asyncio.CancelledError stops the run
            return self._end(item, row, error=exc)
        return self._end(item, row, verdict)

    def _start(self, item: tuple[int, dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """(the graded row to fill, the copy the judge is shown), or (the finished row, None) when the row is
        not judged."""
        original = item[1]
        row = copy.deepcopy(dict(original))
        if original.get("status") == "infra_error":  # the agent never answered: nothing to judge, not a failure
            skipped: RowFields = {"reward": None, "reason": None, "judge_name": self.name,
                                  "judge_status": "skipped_infra_error"}
            row.update(skipped)
            return row, None
        return row, copy.deepcopy(dict(original))

    def _end(self, item: tuple[int, dict[str, Any]], row: dict[str, Any], verdict: Any = None, *,
             error: Exception | None = None) -> dict[str, Any]:
        """``row`` graded by ``verdict``, or its failure (the judge raised ``error``, or broke the contract)
        recorded on it (``on_error="keep"``) or raised as a ``JudgeError`` (``"raise"``)."""
        i, original = item
        meta: dict[str, Any] = {}
        status: JudgeStatus
        if error is not None:
            problem, status = f"the judge raised {error_text(error)}", "error"
            meta = {"error": error_text(error)[:400]}
        else:
            try:
                reward, reason, markers, meta = normalize_verdict(
                    _scaled(verdict, self.scale) if self.scale else verdict)
            except ValueError as exc:
                problem = str(exc)
                status, meta = _contract_meta(verdict, self.scale)
            else:
                return self._scored(row, reward, reason, markers, meta)
        if self.on_error == "raise":
            contract = "" if CONTRACT in problem else f" {CONTRACT};"
            raise JudgeError(f"judge {self.name!r} failed on {_describe(original, i)}: {problem}.{contract} "
                             "pass on_error='keep' to record the failure on the row and go on")
        failed: RowFields = {"reward": None, "reason": None, "judge_name": self.name, "judge_status": status,
                             "judge_error": problem, "judge_meta": meta}
        row.update(failed)
        row.setdefault("lineage", {}).update(judge=self.name, scoring_run_id=self.scoring_run_id)
        return row

    def _scored(self, row: dict[str, Any], reward: Any, reason: Any, markers: dict[str, Any],
                meta: dict[str, Any]) -> dict[str, Any]:
        status: JudgeStatus = "ok" if reward is not None else "abstained"
        scored: RowFields = {"reward": reward, "reason": reason, "judge_name": self.name, "judge_status": status}
        row.update(scored)
        row["markers"] = {**(row.get("markers") or {}), **markers}
        if "failure_class" in meta:  # lifted onto the row, as the SDK does, so selectors and exports read it
            row["failure_class"] = meta.pop("failure_class")
        if meta:
            row["judge_meta"] = meta
        row.setdefault("lineage", {}).update(judge=self.name, scoring_run_id=self.scoring_run_id)
        return row


def _grade_all(items: list[tuple[int, dict[str, Any]]], scorer: _Scorer, concurrency: int, *,
               quiet: bool = False, where: Executor | None = None) -> list[dict[str, Any]]:
    graded: list[dict[str, Any]] = []
    bar = Progress(len(items), f"grade ({scorer.name})", quiet=quiet)
    try:
        if where is not None and where.remote:  # shards on a Ray cluster, joined in order (whileai_core.scale)
            from whileai_core.scale.grading import map_in_shards

            map_in_shards(scorer, items, executor=where, concurrency=concurrency, out=graded,
                          check={"judge": scorer.judge})
            bar.update(len(graded))
        elif async_call(scorer.judge) is not None:  # an LLM judge (``acall``) or an async def judge: one loop
            _grade_on_loop(items, scorer, concurrency, graded, bar)
        elif concurrency > 1 and len(items) > 1:
            with ThreadPoolExecutor(max_workers=concurrency) as pool:  # workers see the caller's wai.context
                contexts = [contextvars.copy_context() for _ in items]  # copied here, in the caller's thread
                futures = [pool.submit(ctx.run, scorer, it) for ctx, it in zip(contexts, items)]
                try:
                    for fut in futures:
                        graded.append(fut.result())
                        bar.update()
                except BaseException:
                    for fut in futures:
                        fut.cancel()
                    raise
        else:
            for item in items:
                graded.append(scorer(item))
                bar.update()
    except JudgeError as exc:  # the verdicts already paid for are kept on the error, never thrown away
        exc.partial = RowList(graded)
        exc.args = (f"{exc.args[0]} (the {len(graded)} row(s) graded before it are in err.partial)",)
        raise
    finally:
        bar.close()
    return graded


def _grade_on_loop(items: list[tuple[int, dict[str, Any]]], scorer: _Scorer, concurrency: int,
                   graded: list[dict[str, Any]], bar: Progress) -> None:
    """Grade ``items`` with the judge's coroutine function on one event loop (``models.aio.as_finished``:
    ``concurrency`` rows in flight, no thread per row); ``graded`` gets the rows in input order, and when the
    judge fails under ``on_error="raise"``, every row that finished before the failure."""
    judge = async_call(scorer.judge)
    assert judge is not None
    slots: list[dict[str, Any] | None] = [None] * len(items)
    finished = as_finished(functools.partial(scorer.acall, judge=judge), items, concurrency=concurrency,
                           name="whileai-grade")
    try:
        with contextlib.closing(finished):  # a Ctrl-C anywhere in this loop cancels the calls in flight at once
            for k, row in finished:
                slots[k] = row
                bar.update()
    finally:
        graded.extend(r for r in slots if r is not None)


def run_judge(source: Any, judge: Callable[[dict[str, Any]], Any] | None, *, judge_name: str | None = None,
              on_error: str = "keep", concurrency: int = 1, scale: Any = None, trust: Any = "warn",
              quiet: bool = False, executor: str | None = None, ray_address: str | None = None) -> ScoredData:
    """Score ``source`` (a run, a ScoredData or a row list) with ``judge``; returns a ScoredData of copies.

    Args:
        source: the rows to grade (a SimulationData, a ScoredData, or a list of row dicts).
        judge: ``judge(row) -> verdict`` under the judge contract (module docstring).
        judge_name: the name stamped on each row (default: the callable's ``__name__``, ``lambda_judge``).
        on_error: "keep" (default, as the SDK) records a judge that raised as ``judge_status="error"`` and a
            verdict that broke the contract as ``"invalid_result"`` (out of range, wrong type) or
            ``"missing_reward"`` (a dict without a reward), with the details in ``judge_meta``; the rows stay
            unjudged (never failures) and ``scored.warnings`` counts them. "raise" stops at the first with a
            ``JudgeError`` naming the row.
        concurrency: rows graded at once (default 1): an LLM judge (``wai.Judge``, anything with an
            ``async def acall``) or an ``async def`` judge is awaited on one event loop with this many rows in
            flight; a plain function runs on this many threads.
        scale: ``(lo, hi)``: the judge returns a rating on this scale (a number, or ``rating``/``score``/
            ``reward`` in a dict); the reward is ``(v - lo) / (hi - lo)`` rounded to 6 places.
        trust: after grading, check the judge against gold labels (``judge_trust``): a row list of gold
            labels (``gold_reward`` and ``gold_kind``, default human, matched by ``row_label_key`` and copied onto
            the graded rows) always runs it; "warn" (default) runs it when graded rows
            carry ``gold_reward`` and adds a warning when it fails; "require" raises when it fails or
            cannot be measured; "off" skips it. The summary is on ``scored.trust`` and each row's
            ``judge_meta["trust"]``.
        quiet: no progress bar (a long grading, an LLM judge or CodeExec, shows one: ``whileai_core.progress``).
        executor: where the rows are graded: "local" ("threads") or "ray", in shards on a Ray cluster with the
            same verdicts in the same order (default None: ``wai.configure``'s, else ``defaults.EXECUTOR``;
            docs/scale.md).
        ray_address: the Ray cluster for ``executor="ray"`` (default None: Ray's own default).

    Returns:
        ScoredData: graded copies; the originals are never mutated.

    Raises:
        InvalidArgumentType: ``judge`` is not callable, or ``scale`` is not two numbers; under ``executor="ray"``,
            a judge that cannot be sent to the workers, or an ``async def`` judge.
        InvalidArgument: a bad ``on_error``, ``scale`` or ``trust``; ``trust="require"`` and the judge fails.
        JudgeError: ``on_error="raise"`` and the judge raised or broke the contract (``err.partial`` holds
            the rows graded before it).
        ScaleError: ``executor="ray"`` without Ray, an unreachable cluster, or a shard lost on every try.

    Example:
        ```python
        scored = wai.run_judge([{"prompt": "2+2", "final_text": "4"}], lambda r: {"rating": 5}, scale=(1, 5))
        print(scored.rows[0]["reward"])   # 1
        ```
    """
    where = resolve_executor(executor, ray_address)
    if judge is None or not callable(judge):
        raise InvalidArgumentType("grade() needs judge=<callable>: judge(row) -> {'reward': 0..1, 'reason'?: str}; got "
                        f"{type(judge).__name__}")
    if where.remote and async_call(judge) is judge:  # the Ray workers call judge(row) (scale/grading.py)
        raise InvalidArgumentType(f"judge {judge_name_of(judge, judge_name)!r} is async def only; executor='ray' "
                                  "calls judge(row) on the workers: pass a sync judge there (wai.Judge has both), "
                                  "or grade locally")
    if on_error not in ON_ERROR:
        raise InvalidArgument(f"on_error= must be 'raise' or 'keep'; got {on_error!r}")
    concurrency = integer("concurrency", concurrency, minimum=1)
    from whileai_core.grade.views import check_trust, trust_after_grade

    check_trust(trust)
    rows = as_rows(source, name="source")
    name = judge_name_of(judge, judge_name)
    scorer = _Scorer(judge, name, on_error, _check_scale(scale))
    graded = _grade_all(list(enumerate(rows)), scorer, concurrency, quiet=quiet, where=where)
    declared = [getattr(t, "name", None) or (t.get("name") if isinstance(t, Mapping) else None)
                for t in getattr(source, "tools", []) or []]
    warnings = _hollow_warnings(graded, [d for d in declared if d]) + _unjudged_warnings(graded)
    scored = ScoredData(graded, judge_name=name, run_id=getattr(source, "run_id", None),
                        scoring_run_id=scorer.scoring_run_id, system_prompt=getattr(source, "system_prompt", None),
                        tools=getattr(source, "tools", []) or [], mode=getattr(source, "mode", None),
                        warnings=warnings)
    trust_after_grade(scored, trust)
    return scored


def _unjudged_warnings(rows: list[dict[str, Any]]) -> list[str]:
    """One line naming every judge fault kept on the rows: they are unjudged, never silently dropped."""
    from collections import Counter

    faults = Counter(r["judge_status"] for r in rows if r.get("judge_status") in JUDGE_FAULTS)
    if not faults:
        return []
    first = next(r for r in rows if r.get("judge_status") in JUDGE_FAULTS)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(faults.items()))
    return [(f"{sum(faults.values())} of {len(rows)} rows unjudged ({counts}); first: {first.get('judge_error')}; "
             "they are not failures and are left out of pass@k: fix the judge, or grade with on_error='raise' "
             "to stop at the first")]


def _hollow_warnings(rows: list[dict[str, Any]], declared_tools: list[str]) -> list[str]:
    """Warnings about a run that measured less than it seems (guards.hollow_run_warnings)."""
    from whileai_core.guard.hollow import hollow_run_warnings

    return list(hollow_run_warnings(rows, declared_tools))
