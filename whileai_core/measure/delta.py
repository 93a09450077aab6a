"""The paired change in pass@1 between two runs on the same tasks: ``delta_report`` (alias ``compare``) and its
``DeltaReport``, with the noise band of ``eval_variance`` or a pooled history (``measure.between_runs``), and
the sequential design (``measure.sequential``) when asked. Every interval is a bootstrap over tasks (Miller 2024).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from itertools import filterfalse
from typing import Any, ClassVar, SupportsInt, cast

import numpy as np

from whileai_core.defaults import (
    ALPHA,
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    MIN_CI_TASKS,
    P_VALUE_PRINT_FLOOR,
    PERMUTATIONS,
)
from whileai_core.errors import InvalidArgument
from whileai_core.measure import sequential as sequential_design
from whileai_core.measure import stats
from whileai_core.measure import stats as st  # inside functions that take a stats= option
from whileai_core.measure.between_runs import EvalVariance, RunVariance
from whileai_core.measure.columns import TaskCounts, task_counts
from whileai_core.measure.columns import of as columns_of
from whileai_core.measure.columns import round_counts as columns_round_counts
from whileai_core.measure.pass_at import Interval, _check_seed, _ci_list, _est, _fmt_ci
from whileai_core.options import Stats, with_stats
from whileai_core.rows import (
    ReportMapping,
    task_key,
)


# ------------------------------------------------------------------------------------------------
# paired delta
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DeltaReport(ReportMapping):
    """A paired change in pass@1 (after - before) over the tasks both sides graded.

    ``ci``: task-bootstrap interval of the delta; ``p_value``: paired sign-flip permutation test (exact when
    the non-zero per-task differences are few); ``se``: clustered standard error (each task one cluster).
    ``verdict``: "better" / "worse" only when the interval excludes 0, p <= alpha, and the change clears the
    noise band and ``min_effect``; otherwise "inconclusive" with ``reason``.
    """

    SDK_KEYS: ClassVar[dict[str, Any]] = {  # the SDK's delta_report keys over ours
        "ok": lambda r: r.verdict != "worse", "target_verdict": "verdict", "headline_verdict": "verdict",
        "target_delta": "delta", "target_ci95": "ci", "n_paired_tasks": "n_paired",
        "n_unpaired_tasks": lambda r: len(r.unpaired_before) + len(r.unpaired_after),
        "within_noise": lambda r: None if r.noise_band is None or r.delta is None else abs(r.delta) <= r.noise_band,
    }

    delta: float | None
    ci: Interval | None
    p_value: float | None
    n_paired: int
    before: float | None
    after: float | None
    before_ci: Interval | None
    after_ci: Interval | None
    se: float | None
    verdict: str
    reason: str | None
    unpaired_before: list[str]
    unpaired_after: list[str]
    level: float
    alpha: float
    p_exact: bool
    noise_band: float | None
    min_effect: float
    per_task: dict[str, float] = field(default_factory=dict)
    note: str | None = None
    noise_band_ci: Interval | None = None  # from the run sd's interval, when noise= came from re-runs
    sequential: Any = None  # a sequential.SequentialResult when delta_report(sequential=...) decided by rounds

    @property
    def better(self) -> bool:
        return self.verdict == "better"

    @property
    def worse(self) -> bool:
        return self.verdict == "worse"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("ci", "before_ci", "after_ci", "noise_band_ci"):
            d[key] = _ci_list(d[key])
        return d

    def __str__(self) -> str:
        head = self.verdict + (f" ({self.reason})" if self.reason else "")
        if self.delta is None:
            return f"{head}: pass@1 delta n/a (0 paired tasks" + (f"; {self.note})" if self.note else ")")
        p = "n/a" if self.p_value is None else (f"<{P_VALUE_PRINT_FLOOR:g}" if self.p_value < P_VALUE_PRINT_FLOOR else f"={self.p_value:.4g}")
        se = "n/a" if self.se is None else (f"{self.se:.3f}" if self.se >= 0.001 or self.se == 0 else f"{self.se:.1e}")
        line = (
            f"{head}: pass@1 {_est(self.before, self.before_ci, 3)} -> {_est(self.after, self.after_ci, 3)} | "
            f"delta {_est(self.delta, self.ci, 3, signed=True)} "
            f"p{p}{' (exact)' if self.p_exact else ''} se {se} ({self.n_paired} paired tasks, "
            f"{self.level:.0%} interval"
        )
        if self.noise_band is not None:
            band = _fmt_ci(self.noise_band_ci, 3) if self.noise_band_ci else " (no interval: sd given or modelled)"
            line += f", noise band {self.noise_band:.3f}{band}"
        if self.unpaired_before or self.unpaired_after:
            line += f"; {len(self.unpaired_before)} before-only and {len(self.unpaired_after)} after-only tasks left out"
        if self.note:
            line += f"; {self.note}"
        if self.sequential is not None:
            line += f"; {self.sequential}"
        return line + ")"


def _noise_sd(noise: Any) -> float | None:
    if noise is None:
        return None
    if isinstance(noise, (EvalVariance, RunVariance)):
        return noise.sd if isinstance(noise, EvalVariance) else noise.sd()
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not noise >= 0 or math.isnan(noise):
        raise InvalidArgument(f"noise= takes an eval_variance(...) result or a run-to-run sd >= 0; got {noise!r}")
    return float(noise)


def _refusal(ci: Interval | None, delta: float, p_value: float, *, n: int, min_tasks: int, band: float | None,
             min_effect: float, alpha: float) -> str | None:
    """Why delta_report refuses to call a direction (None when it calls one)."""
    if ci is None:
        return f"too few paired tasks ({n} < {min_tasks}) for an interval"
    if band is not None and abs(delta) < band:
        return f"inside noise: |delta| {abs(delta):.3f} < noise band {band:.3f}"
    if abs(delta) < min_effect:
        return f"|delta| {abs(delta):.3f} is below min_effect {min_effect:g}"
    excludes = ci[0] > 0 or ci[1] < 0
    significant = p_value <= alpha
    if not excludes and not significant:
        return f"interval covers 0 and p {p_value:.3g} > alpha {alpha:g}"
    if not excludes:
        return "interval covers 0 (the permutation test alone is below alpha)"
    if not significant:
        return f"p {p_value:.3g} > alpha {alpha:g} (the interval alone excludes 0)"
    return None


def _noise_from_run_std(noise: Any, run_std: Any, run_std_runs: Any, level: Any) -> Any:
    """The SDK's ``run_std=`` / ``run_std_runs=`` as this project's ``noise=``."""
    if run_std_runs is not None and run_std is None:
        raise InvalidArgument("run_std_runs= is the number of re-runs run_std= was measured on; pass run_std= too")
    if run_std is None:
        return noise
    if noise is not None:
        raise InvalidArgument("pass the run-to-run noise once: noise= (ours) or run_std= (the SDK's name), not both")
    sd = _noise_sd(run_std)
    if run_std_runs is None:
        return sd
    runs = stats.check_int(run_std_runs, "run_std_runs", 2)
    return EvalVariance(runs, [], None, sd, None, None, None, 0, stats.check_level(level))


def _noise_band(noise: Any, noise_multiplier: float | None, level: float, keys: list[str] | None = None
                ) -> tuple[float | None, Interval | None]:
    """delta_report's noise band for one run a side and its interval (None, None without ``noise``); a pooled
    baseline's ``RunVariance`` gives the band of the pooled runs against one run, over the paired ``keys``."""
    if isinstance(noise, RunVariance):
        if noise_multiplier is not None:
            return float(noise_multiplier) * noise.sd(keys), None
        return noise.band(keys, level=level), noise.band_ci(keys, level=level)
    sd = _noise_sd(noise)
    if sd is not None and not isinstance(noise, EvalVariance):
        noise = EvalVariance(1, [], None, None, None, sd, None, 0, level)  # a bare sd: df unknown, normal quantile
    if noise_multiplier is not None:
        if isinstance(noise_multiplier, bool) or not isinstance(noise_multiplier, (int, float)) \
                or not noise_multiplier > 0:
            raise InvalidArgument(f"noise_multiplier= is a flat number of sds (> 0); got {noise_multiplier!r}")
        noise = None if noise is None else replace(noise, multiplier=float(noise_multiplier))
    return (None, None) if noise is None else (noise.band(1, 1), noise.band_ci(1, 1))


def delta_report(
    before: Any,
    after: Any,
    *,
    level: float = CI_LEVEL,
    draws: int = BOOTSTRAP_DRAWS,
    permutations: int = PERMUTATIONS,
    seed: int | None = 0,
    alpha: float = ALPHA,
    noise: Any = None,
    min_effect: float = 0.0,
    method: str = "percentile",
    noise_multiplier: float | None = None,
    min_tasks: int = MIN_CI_TASKS,
    dedupe: bool = False,
    run_std: float | None = None,
    run_std_runs: int | None = None,
    sequential: Any = None,
    stats: Stats | None = None,
) -> DeltaReport:
    """Paired change in pass@1 between two runs on the same tasks (alias ``compare``).

    Rows pair by ``rows.task_key``; each paired task contributes d_i = after rate - before rate. Tasks graded
    on one side only are listed in ``unpaired_before`` / ``unpaired_after`` and left out. ``noise``: a pooled
    baseline's ``History.noise`` (t on runs - 1 df x the runs' sd x sqrt(1/N_eff + 1), over the paired tasks), an
    ``eval_variance`` result (its band for one run a side, ``noise.band(1, 1)``: t quantile x run sd x sqrt 2)
    or a bare run-to-run sd (normal quantile x sd x sqrt 2, its df unknown); a |delta| under it is refused as
    "inside noise". ``noise_multiplier`` replaces the quantile x sqrt 2 by a flat multiplier. Repeated rollouts
    on either side are an error unless ``dedupe=True`` (dropped and counted in the note).
    ``run_std`` (the SDK's name) is a bare run-to-run sd, like ``noise=<number>``; with ``run_std_runs`` (the
    re-runs it was measured on, >= 2) its band uses the t quantile at df = runs - 1.

    ``sequential`` (a ``SequentialPlan`` or a round size): decide by rounds of ``rollout_index`` with
    ``measure.sequential`` (red side only, ``min_effect`` its max_drop); see ``_sequential_report``.

    Args:
        before: the first run's rows (row dicts, a JSONL path, or an object with ``.rows`` (``ScoredData``,
            ``SimulationData``)).
        after: the second run's rows, on the same tasks.
        level: the two-sided interval level. (``CI_LEVEL``)
        draws: bootstrap resamples of the paired tasks. (``BOOTSTRAP_DRAWS``)
        permutations: sign-flip permutations when the exact test is too large. (``PERMUTATIONS``)
        seed: the seed of the bootstrap and the permutations.
        alpha: the test's level for a ``better`` / ``worse`` verdict. (``ALPHA``)
        noise: an ``eval_variance`` result, a pooled baseline's ``History.noise`` (a ``RunVariance``: the band
            of the pooled runs against one run, over the paired tasks), or a run-to-run sd; a smaller |delta| is
            inconclusive.
        min_effect: the smallest |delta| that counts.
        method: the bootstrap interval: ``"percentile"``, ``"basic"`` or ``"BCa"``.
        noise_multiplier: a flat multiple of the run sd in place of the t quantile x sqrt 2.
        min_tasks: below this many paired tasks there is no interval. (``MIN_CI_TASKS``)
        dedupe: drop repeated rollouts instead of raising.
        run_std: the SDK's name for a bare run-to-run sd (``eval_variance(...).run_std``), used as ``noise=``;
            pass it or ``noise``, not both (default None: no noise band).
        run_std_runs: the re-runs (>= 2) ``run_std`` was measured on: its band then uses the t quantile at
            df = runs - 1 instead of the normal quantile; needs ``run_std`` (default None).
        sequential: a ``SequentialPlan`` or a round size: decide by rounds of ``rollout_index``
            (``measure.sequential``); None: the fixed design.
        stats: a ``wai.Stats`` holding ``level``, ``alpha``, ``draws`` and ``seed`` together; a keyword set
            beside it to another value is an error naming both.

    Returns:
        a ``DeltaReport``: ``delta``, ``ci``, ``p_value``, ``se``, ``n_paired``, ``verdict`` and ``reason``; it
            prints one line.

    Raises:
        InvalidArgument: repeated rollouts without ``dedupe`` or an argument out of range (a ``ValueError``);
            both ``noise`` and ``run_std``, or ``run_std_runs`` without ``run_std``.
        NonFiniteReward: a NaN reward (a ``ValueError``).

    Example:
        ```python
        print(wai.delta_report(before_rows, after_rows))
        # better: pass@1 0.529 [...] -> 0.692 [...] | delta +0.163 [+0.083..+0.237] p=0.0002 (exact) ...
        ```
    """
    if stats is not None:  # one wai.Stats for level/draws/seed (and alpha): a keyword beside it must agree
        given = with_stats(stats, {"level": level, "alpha": alpha, "draws": draws, "seed": seed},
                           {"level": CI_LEVEL, "alpha": ALPHA, "draws": BOOTSTRAP_DRAWS, "seed": 0}, where="delta_report")
        level, alpha, draws, seed = given["level"], given["alpha"], given["draws"], given["seed"]
    if sequential is not None:
        before, after = columns_of(before, "before"), columns_of(after, "after")  # each side read once
        fixed = {k: v for k, v in locals().items() if k not in ("before", "after", "sequential", "given")}
        return _sequential_report(delta_report(before, after, **fixed), before, after, sequential, dedupe=dedupe)
    noise = _noise_from_run_std(noise, run_std, run_std_runs, level)
    level = st.check_level(level)
    alpha = st.check_prob(alpha, "alpha")
    draws = st.check_int(draws, "draws", 1)
    permutations = st.check_int(permutations, "permutations", 1)
    method = st.check_method(method)
    min_tasks = st.check_int(min_tasks, "min_tasks", 1)
    seed = _check_seed(seed)
    if isinstance(min_effect, bool) or not isinstance(min_effect, (int, float)) or not min_effect >= 0:
        raise InvalidArgument(f"min_effect= must be a change in pass rate >= 0 (0.05 = 5 points); got {min_effect!r}")
    band, band_ci = _noise_band(noise, noise_multiplier, level)  # checks noise= before the rows are read
    b, a = task_counts(before, name="before", dedupe=dedupe), task_counts(after, name="after", dedupe=dedupe)
    a_pos = dict(zip(a.keys, range(len(a.keys))))  # (C-level passes over the tasks: zip, filter, map)
    b_pos = dict(zip(b.keys, range(len(b.keys))))
    paired = list(filter(a_pos.__contains__, b.keys))
    unpaired_before = list(filterfalse(a_pos.__contains__, b.keys))
    unpaired_after = list(filterfalse(b_pos.__contains__, a.keys))
    if isinstance(noise, RunVariance) and paired:
        band, band_ci = _noise_band(noise, noise_multiplier, level, paired)
    notes = _pairing_notes(b, a, len(paired), len(unpaired_before) + len(unpaired_after))
    common: dict[str, Any] = {"unpaired_before": unpaired_before, "unpaired_after": unpaired_after,
                              "level": level, "alpha": alpha, "noise_band": band, "min_effect": float(min_effect),
                              "noise_band_ci": band_ci}
    if not paired:
        return DeltaReport(None, None, None, 0, None, None, None, None, None, "inconclusive", "no paired tasks",
                           p_exact=False, note="; ".join(notes) or None, **common)
    bi = np.fromiter(map(b_pos.__getitem__, paired), np.int64, len(paired))
    ai = np.fromiter(map(a_pos.__getitem__, paired), np.int64, len(paired))
    rb = b.c[bi] / b.n[bi]
    ra = a.c[ai] / a.n[ai]
    d = ra - rb
    n = len(paired)
    delta = float(d.mean())
    test = st.paired_permutation_test(d, permutations=permutations, seed=seed)
    se = st.mean_se(d)
    ci = b_ci = a_ci = None
    if n >= min_tasks:
        ci, b_ci, a_ci = _delta_intervals(d, rb, ra, level=level, draws=draws, seed=seed, method=method,
                                          min_tasks=min_tasks)
    if np.any(a.n[ai] != b.n[bi]):
        notes.append("rollouts per task differ between sides; each side uses its own per-task rate")
    reason = _refusal(ci, delta, test.p_value, n=n, min_tasks=min_tasks, band=band, min_effect=min_effect,
                      alpha=alpha)
    verdict = "inconclusive" if reason else ("better" if delta > 0 else "worse")
    per_task = dict(zip(paired, d.tolist()))  # tolist: the floats float(x) gives, without a numpy scalar each
    return DeltaReport(delta, ci, test.p_value, n, float(rb.mean()), float(ra.mean()), b_ci, a_ci, se, verdict,
                       reason, p_exact=test.exact, per_task=per_task, note="; ".join(notes) or None, **common)


def _pairing_notes(b: TaskCounts, a: TaskCounts, n_paired: int, n_unpaired: int) -> list[str]:
    """What the pairing left out: each side's skipped rows, and a warning when most tasks are unpaired."""
    notes = []
    for side, tc in (("before", b), ("after", a)):
        if tc.skipped_note():
            notes.append(f"{side}: {tc.skipped_note()}")
    if n_unpaired and n_paired / max(1, n_paired + n_unpaired) < 0.5:
        notes.append("most tasks unpaired: the two runs barely share situations")
    return notes


def _delta_intervals(d: Any, rb: Any, ra: Any, *, level: float, draws: int, seed: int | None, method: str,
                     min_tasks: int) -> tuple[Any, Any, Any]:
    """The delta's task-bootstrap interval, then each side's pass@1 interval on its own, as pass_at draws it: the
    same rows print the same interval (drawn jointly with the differences, A's pass@1 read [0.525..0.675] here
    and [0.525..0.669] in pass_at)."""
    ci = stats.bootstrap_mean_ci(np.stack([d, rb, ra], axis=1), level=level, draws=draws, seed=seed,
                                 method=method, min_n=min_tasks)[0]
    b_ci, a_ci = (stats.bootstrap_mean_ci(r, level=level, draws=draws, seed=seed, method=method,
                                          min_n=min_tasks) for r in (rb, ra))
    return ci, b_ci, a_ci


def _rollout_indices(rows: list[Any], plan: Any, column: list[Any] | None = None) -> list[int]:
    """Each after row's ``rollout_index``, checked against the plan: present, a whole number, 0-based and inside
    0..max_trials-1. A row the rounds cannot place is an error naming it, never dropped or put in round 1."""
    import numbers

    col = column if column is not None else [row.get("rollout_index") for row in rows]
    if set(map(type, col)) == {int} and 0 <= min(col) and max(col) < plan.max_trials:
        return list(col)  # every index a whole number inside the plan (read as a column): nothing to name
    index = []
    for i, row in enumerate(rows):
        value = row.get("rollout_index")
        where = f"after[{i}] (task {task_key(row)!r})"
        if value is None:
            raise InvalidArgument(f"{where} has no rollout_index; sequential= cuts the after rows into rounds by it "
                                  "(the 0-based trial index simulate writes): add it, or drop sequential=")
        whole = cast(SupportsInt, value)  # a concrete Real has __int__ (typeshed's numbers.Real omits it)
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != int(whole):
            raise InvalidArgument(f"{where} has rollout_index {value!r}; it is a whole number, the 0-based trial index")
        index.append(int(whole))
    top = plan.max_trials - 1
    bad = [(i, x) for i, x in enumerate(index) if not 0 <= x <= top]
    if bad:
        i, x = bad[0]
        one_based = min(index) >= 1 and max(index) == plan.max_trials
        hint = ("; the indices run 1..max_trials, so they look 1-based: subtract 1 (the first trial is 0)" if one_based
                else f"; a plan of max_trials={plan.max_trials} has no trial {x}")
        raise InvalidArgument(f"after[{i}] (task {task_key(rows[i])!r}) has rollout_index {x}, outside the plan's "
                              f"0..{top} ({len(bad)} row(s) outside){hint}")
    return index


def _sequential_report(rep: DeltaReport, before: Any, after: Any, plan: Any, *, dedupe: bool) -> DeltaReport:
    """``rep`` with its verdict decided by the sequential rule over rounds of the after rows' rollout_index: an
    int plan is the round size, up to the most rows a task has after. Every after row needs a 0-based
    rollout_index inside the plan (``_rollout_indices``). "worse" when it stops red, else
    "inconclusive" with its reason; ``rep.sequential`` says the round it stopped at and why."""
    b = task_counts(before, name="before", dedupe=dedupe)
    cols = columns_of(after, "after")
    rows = cols.rows
    a = task_counts(cols, name="after", dedupe=dedupe)
    if isinstance(plan, int) and not isinstance(plan, bool):
        plan = sequential_design.SequentialPlan(plan, max(a.most_rows(), plan))
    if not isinstance(plan, sequential_design.SequentialPlan):
        raise InvalidArgument(f"sequential= takes a SequentialPlan or a round size (int >= 1); got {plan!r}")
    before_counts = dict(zip(b.keys, zip(b.c.tolist(), b.n.tolist())))  # Python ints, without a numpy scalar each
    index = _rollout_indices(rows, plan, cols.column("rollout_index"))
    last = min(plan.rounds, max(index, default=0) // plan.round_trials + 1)
    cuts = [(r + 1) * plan.round_trials for r in range(last)]
    counted = columns_round_counts(cols, index, cuts, name="after", dedupe=dedupe)  # one read, every round
    rounds = counted if counted is not None else []
    for r in range(last if counted is None else 0):
        upto = (r + 1) * plan.round_trials
        tc = task_counts([row for row, i in zip(rows, index) if i < upto], name="after", dedupe=dedupe)
        rounds.append({k: (int(c), int(n)) for k, c, n in zip(tc.keys, tc.c, tc.n)})
    seq = sequential_design.sequential_test(before_counts, rounds, plan=plan, alpha=rep.alpha, max_drop=rep.min_effect)
    verdict = "worse" if seq.red else "inconclusive"
    reason = None if seq.red else f"sequential: {seq.decision} after round {seq.round} of {seq.rounds}: {seq.reason}"
    return replace(rep, verdict=verdict, reason=reason, sequential=seq)


compare = delta_report
