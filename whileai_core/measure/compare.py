"""compare: where the agent got worse. A paired headline, per-slice deltas with Holm, guard metrics, one verdict.

``compare(before, after, by="tool", must_not_regress=["hack_rate"], target=0.05)`` returns a ``Comparison``:

* the headline: ``measure.delta_report`` on pass@1 (its ``min_effect`` is ``target``);
* per slice of ``by`` (any row field, a dotted path, or a key of the row's ``scenario`` cell): the paired
  per-task delta of pass@1 with a task-bootstrap interval, an exact sign-flip p and its Holm (1979) adjustment
  over the slices;
* per guard metric: the paired per-task delta of that metric (a row field, a marker, or a ``<flag>_rate``),
  with its interval, p and Holm adjustment over the guards, in the metric's bad direction;
* per task, with ``task_drops=``: a one-sided exact (Fisher) test of each task's drop, Holm over the tasks at
  alpha/2 (the plugin gate's scenario family; the gate computes its verdict with this function);
* ``ok``: False when the headline is "worse", a slice is significantly worse after Holm (and by at least
  ``target``), a guard moved significantly in its bad direction, or a task dropped significantly after Holm.
  ``reasons`` says which.

A guard's name resolves, first match wins: ``<p>_rate`` -> the share of a task's rows whose ``trace_flags``
hold a flag ``p`` or ``p.*`` (``wai.trace_markers`` writes them), else whose ``markers`` built from such flags
are 0 (``guards.TRACE_MARKERS``), else whose field ``p`` is truthy; a ``markers`` name -> its value (1.0 good,
so a drop regresses); a numeric row field (``latency_s``, tokens) -> its value (a rise regresses). A dict
``{name: "up" | "down"}`` names the bad direction by hand. Sources: Holm 1979; Miller 2024 (paired, per task).
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from itertools import repeat
from typing import Any, ClassVar

import numpy as np

from whileai_core.arguments import refuse_sdk_keywords
from whileai_core.defaults import ALPHA, BOOTSTRAP_DRAWS, CI_LEVEL, MIN_CI_TASKS, PERMUTATIONS
from whileai_core.errors import InvalidArgument
from whileai_core.measure import columns, stats
from whileai_core.measure.columns import task_counts
from whileai_core.measure.delta import DeltaReport, delta_report
from whileai_core.measure.pass_at import _est
from whileai_core.options import Stats, with_stats
from whileai_core.rows import ReportMapping, task_key, unique_rows

Interval = tuple[float, float]
MISSING = "(none)"


@dataclass(frozen=True)
class PairedDelta:
    """One slice or guard: paired per-task means before and after, their delta, interval, p and Holm p."""

    name: str
    n_tasks: int
    before: float
    after: float
    delta: float
    ci: Interval | None
    before_ci: Interval | None
    after_ci: Interval | None
    p_value: float
    p_holm: float = 1.0
    flagged: bool = False  # worse (slice) or regressed (guard), after Holm
    bad: str = "down"  # the direction that is a regression

    def line(self, width: int, digits: int = 3) -> str:
        tag = ("REGRESSED" if self.bad == "up" else "worse") if self.flagged else ""
        return (f"  {self.name:<{width}} {_est(self.before, self.before_ci, digits)} -> "
                f"{_est(self.after, self.after_ci, digits)} | delta {_est(self.delta, self.ci, digits, signed=True)} "
                f"p={self.p_value:.3g} Holm p={self.p_holm:.3g} ({self.n_tasks} tasks) {tag}").rstrip()


@dataclass(frozen=True)
class TaskDrops:
    """Task by task: one-sided exact (Fisher) drop p's, Holm (1979) over the tasks, flagged at alpha/2.

    ``counts``: (before passes, before trials, after passes, after trials) by task; ``holm``: the adjusted p by
    task; ``flagged``: the tasks whose adjusted p <= alpha/2 and whose drop reaches their min drop.
    """

    counts: dict[str, tuple[int, int, int, int]]
    holm: dict[str, float]
    flagged: list[str]

    def line(self) -> str:
        head = (f"per task ({len(self.counts)} tasks, one-sided exact drops, Holm at alpha/2): "
                f"{len(self.flagged)} of {len(self.counts)} tasks dropped")
        return head + (": " + ", ".join(self.flagged[:10]) + (" ..." if len(self.flagged) > 10 else "")
                       if self.flagged else "")


@dataclass(frozen=True)
class Comparison(ReportMapping):
    """The headline delta, the per-slice table, the guards, and one verdict (``ok``) with its ``reasons``."""

    SDK_KEYS: ClassVar[dict[str, Any]] = {  # the SDK's delta_report keys: the headline's, then ours
        **DeltaReport.SDK_KEYS, "ok": "ok", "warnings": lambda c: [*c.reasons, *c.notes],
        "proxy_delta": lambda c: None if c.proxy_result is None else c.proxy_result.delta,
        "proxy_ci95": lambda c: None if c.proxy_result is None else c.proxy_result.ci,
        **{f.name: f.name for f in fields(DeltaReport)},  # read through to the headline
    }

    headline: DeltaReport
    by: str | None
    slices: list[PairedDelta]
    guards: list[PairedDelta]
    target: float
    alpha: float
    level: float
    ok: bool
    reasons: list[str] = field(default_factory=list)
    task_drops: TaskDrops | None = None  # compare(task_drops=...): the per-task family
    proxy: str | None = None  # compare(proxy=...): the training reward, checked for over-optimisation
    proxy_result: PairedDelta | None = None
    proxy_verdict: str | None = None  # moved | no_change_detected | moved_the_wrong_way | proxy_is_target | ...
    over_optimized: bool = False
    notes: list[str] = field(default_factory=list)  # warnings that do not fail the comparison

    def __getattr__(self, name: str) -> Any:  # the headline's fields (delta, ci, verdict, ...) read through
        if name.startswith("_") or name == "headline":
            raise AttributeError(name)
        return getattr(self.headline, name)

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "FAIL (" + "; ".join(self.reasons) + ")"
        lines = [f"{verdict}: {self.headline}"]
        if self.proxy is not None:
            r = self.proxy_result
            moved = "" if r is None else f" ({_est(r.delta, r.ci, 3, signed=True)}, {r.n_tasks} tasks)"
            lines.append(f"proxy {self.proxy}: {self.proxy_verdict}{moved}" + ("  OVER-OPTIMIZED" if
                                                                             self.over_optimized else ""))
        lines += [f"note: {n}" for n in self.notes]
        width = max([len(s.name) for s in self.slices + self.guards] + [8])
        if self.slices:
            lines.append(f"by {self.by} ({len(self.slices)} slice{'' if len(self.slices) == 1 else 's'}, pass@1, {self.level:.0%} intervals, "
                         f"Holm over slices):")
            lines += [s.line(width) for s in self.slices]
        if self.guards:
            n = len(self.guards)
            lines.append(f"must not regress ({n} guard{'' if n == 1 else 's'}, Holm over guards):")
            lines += [g.line(width) for g in self.guards]
        if self.task_drops is not None:
            lines.append(self.task_drops.line())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"ok": self.ok, "reasons": list(self.reasons), "by": self.by, "target": self.target,
                "alpha": self.alpha, "level": self.level, "headline": self.headline.to_dict(),
                "slices": [asdict(s) for s in self.slices], "guards": [asdict(g) for g in self.guards],
                **({} if self.task_drops is None else {"task_drops": asdict(self.task_drops)}),
                **({} if self.proxy is None else {
                    "proxy": self.proxy, "proxy_verdict": self.proxy_verdict, "over_optimized": self.over_optimized,
                    "proxy_result": None if self.proxy_result is None else asdict(self.proxy_result)}),
                "notes": list(self.notes)}


def compare(
    before: Any,
    after: Any,
    *,
    by: str | None = None,
    must_not_regress: Any = (),
    target: float = 0.0,
    level: float = CI_LEVEL,
    alpha: float = ALPHA,
    draws: int = BOOTSTRAP_DRAWS,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
    noise: Any = None,
    min_tasks: int = MIN_CI_TASKS,
    dedupe: bool = False,
    sequential: Any = None,
    run_std: float | None = None,
    run_std_runs: int | None = None,
    task_drops: Any = False,
    proxy: str | None = None,
    stats: Stats | None = None,
    **sdk: Any,
) -> Comparison:
    """Compare two runs of the same tasks: headline pass@1 delta, per-slice deltas, guard metrics, a verdict.

    ``sequential`` (a ``SequentialPlan`` or a round size) decides the headline by rounds, as in ``delta_report``.

    Args:
        before: the baseline run's rows.
        after: the candidate run's rows, same tasks.
        by: a row field (or dotted path, or a key of ``scenario``) to slice by.
        must_not_regress: guard metrics (``"hack_rate"``, a marker name, a numeric field, or ``{name:
            "up"|"down"}``).
        target: the smallest drop that makes the headline or a slice worse.
        level: the two-sided interval level. Default ``CI_LEVEL`` (0.95) in defaults.py: Miller 2024, "Adding
            Error Bars to Evals" (arXiv 2411.00640): report 95% intervals.
        alpha: the level of each Holm-adjusted test. Default ``ALPHA`` (0.05) in defaults.py: two-sided test level
            of delta_report and holdout_size.
        draws: bootstrap resamples. Default ``BOOTSTRAP_DRAWS`` (2000) in defaults.py: Efron & Tibshirani 1993 put
            the floor at 1000 for percentile intervals.
        permutations: sign-flip permutations. Default ``PERMUTATIONS`` (10000) in defaults.py: random sign flips
            behind a paired permutation p.
        seed: the seed of the bootstrap and permutations.
        noise: an ``eval_variance`` result for the headline.
        min_tasks: below this many paired tasks there is no interval. Default ``MIN_CI_TASKS`` (3) in defaults.py:
            a bootstrap over fewer than 3 tasks has no spread worth printing.
        dedupe: drop repeated rollouts instead of raising.
        sequential: a ``SequentialPlan`` or a round size for the headline (as in ``delta_report``); None: fixed.
        run_std: the SDK's bare run-to-run sd (as ``delta_report(run_std=)``).
        run_std_runs: the re-runs ``run_std`` was measured on (>= 2; its band then uses the t quantile).
        task_drops: the per-task family (the plugin gate's): ``True`` counts each paired task's passes from the
            rows; a mapping ``{task: (before_passes, before_n, after_passes, after_n[, min_drop])}`` gives the
            counts (a pooled baseline's effective trials) and each task's own min drop (default ``target``).
            A task is flagged when its Holm-adjusted one-sided exact p <= alpha/2 and its drop >= its min drop.
        proxy: the training reward, as ``"marker:<m>"`` or a metric name (the SDK's over-optimisation check,
            Gao et al. 2022): its paired delta is measured like a guard; when it rose significantly while pass@1
            did not, or its interval sits entirely above pass@1's, ``over_optimized`` is True and ``ok`` False.
            A proxy that is the target, or not measured on these rows, is a note (``proxy_is_target`` /
            ``proxy_not_measured``), not a failure.
        stats: a ``wai.Stats`` holding ``level``, ``alpha``, ``draws`` and ``seed`` together; a keyword set beside
            it to another value is an error naming both.
        **sdk: the SDK's ``delta_report`` spellings: ``target="pass_at_1"`` (the headline) or ``"marker:<m>"``
            (the marker joins ``must_not_regress``), ``min_effect=`` (our ``target=`` number), ``n_boot=``
            (``draws=``); its other keywords raise, naming the difference (``COMPARE_SDK_DIFFERENCES``).

    Returns:
        a ``Comparison``: ``headline`` (a ``DeltaReport``), ``slices``, ``guards``, ``ok`` and ``reasons``; it
            prints a table.

    Raises:
        InvalidArgument: an unknown guard name (the message lists the row's fields) or an argument out of range (a
            ``ValueError``).

    Example:
        ```python
        gate = wai.compare(before, after, by="tool", must_not_regress=["hack_rate"])
        if not gate.ok:
            print(gate.reasons)
        ```
    """
    if stats is not None:
        given = with_stats(stats, {"level": level, "alpha": alpha, "draws": draws, "seed": seed},
                           {"level": CI_LEVEL, "alpha": ALPHA, "draws": BOOTSTRAP_DRAWS, "seed": 0}, where="compare")
        level, alpha, draws, seed = given["level"], given["alpha"], given["draws"], given["seed"]
    named = target if isinstance(target, str) else None  # the SDK's metric name, for the errors
    target, must_not_regress, draws = _sdk_arguments(target, must_not_regress, draws, sdk)
    # each side's rows read once, as columns: the headline, the slices and the task drops share them
    before, after = columns.RowColumns(before, name="before"), columns.RowColumns(after, name="after")
    headline = delta_report(before, after, level=level, draws=draws, permutations=permutations, seed=seed,
                            alpha=alpha, noise=noise, min_effect=target, min_tasks=min_tasks, dedupe=dedupe,
                            sequential=sequential, run_std=run_std, run_std_runs=run_std_runs)
    if dedupe:
        b_rows, _ = unique_rows(before.rows, name="before", dedupe=True)
        a_rows, _ = unique_rows(after.rows, name="after", dedupe=True)
    else:  # delta_report has refused any repeated rollout already
        b_rows, a_rows = before.rows, after.rows
    b_cols, a_cols = (before, after) if not dedupe else (b_rows, a_rows)
    common: dict[str, Any] = {"level": level, "draws": draws, "permutations": permutations, "seed": seed,
                              "min_tasks": min_tasks}
    slices = _slices(b_cols, a_cols, by, **common) if by is not None else []
    guards = []
    for name, bad in _guard_names(must_not_regress):
        try:
            b_values, a_values, natural = _metric(b_rows, a_rows, name)
        except InvalidArgument as exc:
            if named is None or named != f"marker:{name}":
                raise
            raise InvalidArgument(f"compare(target={named!r}): {exc}") from None
        guards.append(_paired(name, b_values, a_values, bad=bad or natural, **common))
    slices = _holm(slices, alpha, lambda s: s.delta < 0 and abs(s.delta) >= target)
    guards = _holm(guards, alpha, lambda g: (g.delta > 0) == (g.bad == "up") and g.delta != 0)
    drops = None if task_drops is False else _task_drops(task_drops, b_cols, a_cols, alpha=alpha, target=target)
    reasons = []
    if headline.worse:
        reasons.append("pass@1 worse" + ("" if headline.delta is None else f" by {abs(headline.delta):.3f}"))
    reasons += [f"slice {by}={s.name} worse" for s in slices if s.flagged]
    reasons += [f"{g.name} regressed" for g in guards if g.flagged]
    if drops is not None and drops.flagged:
        reasons.append(f"{len(drops.flagged)} task(s) dropped significantly after Holm (alpha/2)")
    checked = _proxy(proxy, b_rows, a_rows, headline, alpha=alpha, **common) if proxy is not None else None
    result, proxy_verdict, over, notes = checked or (None, None, False, [])
    if over:
        reasons.append(notes.pop())
    return Comparison(headline, by, slices, guards, float(target), alpha, level, not reasons, reasons, drops,
                      proxy, result, proxy_verdict, over, notes)


def _proxy(name: Any, before: list, after: list, headline: DeltaReport, *, alpha: float, **common: Any
           ) -> tuple[PairedDelta | None, str, bool, list[str]]:
    """``compare(proxy=)``: the proxy's paired delta, its verdict word, whether it is over-optimised, notes (the
    over-optimisation text last). Over-optimised (Gao et al. 2022, arXiv:2210.10760): the proxy rose
    significantly while pass@1 did not, or the proxy's interval sits entirely above pass@1's."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument(f"proxy= names the training reward: 'marker:<name>' or a metric; got {name!r}")
    metric = name.removeprefix("marker:")
    if metric in ("pass_at_1", "reward"):
        return None, "proxy_is_target", False, [f"proxy={name!r} is the target (pass@1): no over-optimisation check"]
    try:
        b_values, a_values, _ = _metric(before, after, metric)
        result = _paired(metric, b_values, a_values, bad="down", **common)
    except InvalidArgument as exc:
        note = f"proxy={name!r} is not measured on both runs, so there is no over-optimisation check ({exc})"
        return None, "proxy_not_measured", False, [note]
    ci = result.ci
    up = ci is not None and result.p_value <= alpha and ci[0] > 0
    down = ci is not None and result.p_value <= alpha and ci[1] < 0
    verdict = "moved" if up else "moved_the_wrong_way" if down else "no_change_detected"
    above = ci is not None and headline.ci is not None and ci[0] > headline.ci[1]
    over = bool((up and headline.verdict != "better") or above)
    if not over:
        return result, verdict, False, []
    text = (f"OVER-OPTIMIZED: {name} up {_est(result.delta, result.ci, 3, signed=True)} while pass@1 "
            f"{_est(headline.delta, headline.ci, 3, signed=True)}: the policy learned something the target does "
            "not credit (Gao et al. 2022, arXiv:2210.10760)")
    return result, verdict, True, [text]


def _task_drops(spec: Any, before: Any, after: Any, *, alpha: float, target: float) -> TaskDrops:
    """``compare(task_drops=)``: the counts (from the rows, or given), their exact drop p's and Holm."""
    if spec is True:
        b, a = task_counts(before, name="before"), task_counts(after, name="after")
        a_counts = {k: (int(c), int(n)) for k, c, n in zip(a.keys, a.c, a.n)}
        spec = {k: (int(c), int(n), *a_counts[k]) for k, c, n in zip(b.keys, b.c, b.n) if k in a_counts}
    if not isinstance(spec, Mapping):
        raise InvalidArgument(f"task_drops= is True or a mapping {{task: (before_passes, before_n, after_passes, "
                              f"after_n[, min_drop])}}; got {type(spec).__name__}")
    keys = list(spec)
    for k in keys:
        if not isinstance(spec[k], (tuple, list)) or len(spec[k]) not in (4, 5):
            raise InvalidArgument(f"task_drops[{k!r}] is (before_passes, before_n, after_passes, after_n"
                                  f"[, min_drop]); got {spec[k]!r}")
    if not keys:
        return TaskDrops({}, {}, [])
    bp, bn, ap, an = (np.array([int(spec[k][i]) for k in keys]) for i in range(4))
    adjusted = stats.holm_adjust(stats.fisher_drop_pvalues(bp, bn, ap, an))
    drops = ap / an - bp / bn
    least = [float(spec[k][4]) if len(spec[k]) == 5 else target for k in keys]
    flagged = [k for k, adj, d, m in zip(keys, adjusted, drops, least) if adj <= alpha / 2 and -d >= m]
    counts = {k: (int(b1), int(b2), int(a1), int(a2)) for k, b1, b2, a1, a2 in zip(keys, bp, bn, ap, an)}
    return TaskDrops(counts, {k: float(v) for k, v in zip(keys, adjusted)}, flagged)


# the SDK's delta_report keywords compare does not take, each with why (docs/sdk.md's table)
COMPARE_SDK_DIFFERENCES = {
    "lower_is_better": "a guard's direction is given in must_not_regress={name: 'up'|'down'}",
    "markers": "markers are measured as guards: must_not_regress=['hedging', ...]",
    "train_runs": "the training-seed band is not built here; pass noise= (an eval_variance result or History.noise)",
    "balance_rollouts": "repeated rollouts raise unless dedupe=True (dropped and counted); no random trimming",
    "power": "power is planned before the run: wai.holdout_size(effect, power=) or wai.eval_power",
    "ceiling_pass_rate": "the ceiling is holdout_size's and eval_power's (saturated), not compare's",
    "answered_gap_points": "no answered-share check here",
    "answered_alpha": "no answered-share check here",
}


def _sdk_arguments(target: Any, guards: Any, draws: int, sdk: dict[str, Any]) -> tuple[float, Any, int]:
    """compare's arguments from the SDK's spellings: ``target=`` a metric name, ``min_effect=``, ``n_boot=``."""
    sdk = dict(sdk)
    if "n_boot" in sdk:
        draws = sdk.pop("n_boot")
    if "min_effect" in sdk:
        if not isinstance(target, str) and target != 0.0:
            raise InvalidArgument(f"pass target= (our number, {target!r}) or min_effect= (the SDK's), not both")
        target, effect = (target if isinstance(target, str) else "pass_at_1"), sdk.pop("min_effect")
    else:
        effect = 0.0 if isinstance(target, str) else target
    refuse_sdk_keywords("compare", sdk, COMPARE_SDK_DIFFERENCES)
    if isinstance(target, str):
        if target == "pass_at_1":
            pass
        elif target.startswith("marker:") and target[len("marker:"):]:
            names = [guards] if isinstance(guards, str) else guards
            marker = target[len("marker:"):]
            if isinstance(names, Mapping) and marker not in names:
                raise InvalidArgument(f"compare(target={target!r}) with must_not_regress as a dict: add "
                                      f"{marker!r} to the dict with its bad direction ('up' or 'down')")
            if not isinstance(names, Mapping) and marker not in list(names):
                guards = [*names, marker]
        else:
            raise InvalidArgument(f"compare(target={target!r}): target= is 'pass_at_1' (the headline), "
                                  "'marker:<name>' (a marker, measured as a guard), or a number (the smallest drop "
                                  "that counts, the SDK's min_effect=)")
    return effect, guards, draws


def _field(row: Mapping[str, Any], name: str) -> Any:
    """A row's value for ``name``: the key itself, a dotted path, or a key of the row's ``scenario`` cell."""
    if name in row:
        return row[name]
    value: Any = row
    for part in name.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if value is None and isinstance(row.get("scenario"), Mapping):
        value = row["scenario"].get(name)
    return value


def _slice_labels(before: columns.RowColumns, after: columns.RowColumns, by: str) -> dict[str, str]:
    """Each task's slice: ``by`` read off the task's first row, ``MISSING`` when absent. A task on both sides
    takes before's label, so after's rows are read only when before gives no label at all (whether any row
    carries the field then decides between an error and slices of after's tasks)."""
    label = _side_labels(before, by)
    if not label or set(label.values()) == {MISSING}:
        label = {**_side_labels(after, by), **label}
    return label


def _side_labels(cols: columns.RowColumns, by: str) -> dict[str, str]:
    """One side's ``{task: label}``, the label read off each task's first row."""
    keys = cols.task_keys()
    if keys is None:
        keys = [task_key(row) for row in cols.rows]
    index = cols.index(keys)
    first = index.first.tolist()  # one row per task, not every row
    values = _first_columns(cols, first, by)
    if values is None:
        values = _first_values([cols.rows[i] for i in first], by)
    return dict(zip(index.keys, _labels(values)))


def _first_columns(cols: columns.RowColumns, first: list[int], name: str) -> list[Any] | None:
    """``_field(row, name)`` for the rows at ``first``, from columns already read: the field's own column when
    every row has it, else (no row has it) the ``scenario`` column's dicts; None when neither is known."""
    if "." in name:
        return None
    if cols.complete(name):
        own = cols.column(name)
        return [own[i] for i in first]
    if cols.has(name) or not cols.has("scenario"):
        return None if cols.has(name) else [None] * len(first)
    everyone = cols.column("scenario")
    cells = [everyone[i] for i in first]
    if set(map(type, cells)) - {dict}:
        return None
    return list(map(dict.get, cells, repeat(name)))


def _first_values(rows: list[Any], name: str) -> list[Any]:
    """``_field(row, name)`` for each row, read as columns when every row is a dict: the key itself where the
    row has it, else (a name without a dot) the row's ``scenario`` dict's; row by row otherwise."""
    try:  # dict.__contains__ through map: a TypeError on a row that is not a dict
        own = list(map(dict.__contains__, rows, repeat(name))) if "." not in name else None
    except TypeError:
        own = None
    if own is None:
        return [_field(row, name) for row in rows]
    if all(own):
        return list(map(operator.itemgetter(name), rows))
    scenarios: list[Any] = list(map(dict.get, rows, repeat("scenario")))
    kinds = set(map(type, scenarios))
    if kinds - {dict, type(None)}:
        return [_field(row, name) for row in rows]
    if kinds <= {dict}:  # every cell a dict
        inner = list(map(dict.get, scenarios, repeat(name)))
    else:
        inner = [None if scenario is None else scenario.get(name) for scenario in scenarios]
    if not any(own):
        return inner
    return [row[name] if mine else value for row, mine, value in zip(rows, own, inner)]


def _labels(values: list[Any]) -> list[str]:
    """Each value as a slice name: ``MISSING`` for None or "", else ``str(value)``."""
    if set(map(type, values)) == {str} and "" not in values:
        return values
    return [MISSING if value is None or value == "" else str(value) for value in values]


def _slices(before: Any, after: Any, by: str, **common: Any) -> list[PairedDelta]:
    if not isinstance(by, str) or not by:
        raise InvalidArgument(f"by= names a row field to slice on (e.g. 'tool', 'world_state', 'stance'); got {by!r}")
    before, after = columns.of(before, "before"), columns.of(after, "after")
    label = _slice_labels(before, after, by)
    if set(label.values()) == {MISSING}:
        seen = sorted({str(k) for r in before.rows[:50] for k in r})[:15]
        raise InvalidArgument(f"by={by!r}: no row carries that field (nor scenario.{by}); row fields are {seen}")
    b, a = task_counts(before, name="before"), task_counts(after, name="after")
    if b.keys == a.keys:  # the same tasks in the same order (the usual pair of runs): no lookups
        paired, bi = b.keys, np.arange(len(b.keys))
        ai = bi
    else:
        a_pos = dict(zip(a.keys, range(len(a.keys))))
        paired = [k for k in b.keys if k in a_pos]  # in before's order, as each slice lists its tasks
        bi = np.fromiter(map(dict(zip(b.keys, range(len(b.keys)))).__getitem__, paired), np.int64, len(paired))
        ai = np.fromiter(map(a_pos.__getitem__, paired), np.int64, len(paired))
    b_rate, a_rate = (b.c / b.n)[bi], (a.c / a.n)[ai]
    labels = list(map(label.__getitem__, paired))
    values = sorted(set(labels))  # np.unique's order, without sorting every task's label
    which = np.fromiter(map(dict(zip(values, range(len(values)))).__getitem__, labels), np.intp, len(labels))
    return [_paired(str(value), b_rate[which == j], a_rate[which == j], bad="down", **common)
            for j, value in enumerate(values)]


def _guard_names(spec: Any) -> list[tuple[str, str | None]]:
    if isinstance(spec, str):
        spec = [spec]
    if isinstance(spec, Mapping):
        for name, bad in spec.items():
            if bad not in ("up", "down"):
                raise InvalidArgument(f"must_not_regress[{name!r}] is the bad direction, 'up' or 'down'; got {bad!r}")
        return [(str(name), bad) for name, bad in spec.items()]
    return [(str(name), None) for name in spec]


def _metric(before: list, after: list, name: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Per-task means of metric ``name`` on the tasks both sides have, and its bad direction."""
    getter, bad = _resolve(before + after, name)
    sides = []
    for rows in (before, after):
        sums: dict[str, list[float]] = {}
        for row in rows:
            value = getter(row)
            if value is not None:
                sums.setdefault(task_key(row), []).append(value)
        sides.append({k: float(np.mean(v)) for k, v in sums.items()})
    keys = [k for k in sides[0] if k in sides[1]]
    return np.array([sides[0][k] for k in keys]), np.array([sides[1][k] for k in keys]), bad


def _resolve(rows: list, name: str) -> tuple[Any, str]:
    """How to read metric ``name`` from a row (value or None), and which direction is a regression."""
    from whileai_core.guard.trace import TRACE_MARKERS

    def number(v: Any) -> float | None:
        ok = isinstance(v, (bool, numbers.Real)) and not (isinstance(v, float) and math.isnan(v))
        return float(v) if ok else None

    if name.endswith("_rate"):
        prefix = name[: -len("_rate")]

        def hit(flag: str) -> bool:
            return flag == prefix or flag.startswith(prefix + ".")

        if any(r.get("trace_flags") is not None for r in rows):
            return (lambda r: float(any(hit(str(f.get("flag", ""))) for f in r.get("trace_flags") or ()))
                    if r.get("trace_flags") is not None else None), "up"
        marks = [m for m, flags in TRACE_MARKERS.items() if any(hit(f) for f in flags)]
        if marks and any(m in (r.get("markers") or {}) for r in rows for m in marks):
            return (lambda r: float(any((r.get("markers") or {}).get(m) == 0 for m in marks))), "up"
        if any(prefix in r for r in rows):
            return (lambda r: float(bool(r.get(prefix)) and r.get(prefix) != "ok")), "up"
    if any(name in (r.get("markers") or {}) for r in rows):
        return (lambda r: number((r.get("markers") or {}).get(name))), "down"
    if any(number(_field(r, name)) is not None for r in rows):
        return (lambda r: number(_field(r, name))), "up"
    seen = sorted({str(k) for r in rows[:50] for k in r})[:15]
    raise InvalidArgument(f"must_not_regress: no row gives {name!r}: no numeric field, no marker of that name"
                     f"{', no trace_flags (run wai.trace_markers(rows) first)' if name.endswith('_rate') else ''}; "
                     f"row fields are {seen}")


def _paired(name: str, before: np.ndarray, after: np.ndarray, *, bad: str, level: float, draws: int,
            permutations: int, seed: int, min_tasks: int) -> PairedDelta:
    """Paired per-task delta of one slice or guard: bootstrap interval over tasks and exact sign-flip p."""
    n = len(before)
    if n == 0:
        raise InvalidArgument(f"{name}: no task has a value on both sides; pair the runs on the same tasks")
    d = after - before
    cis: list[Interval | None] = [None, None, None]
    if n >= min_tasks:
        cis = stats.bootstrap_mean_ci(np.stack([d, before, after], axis=1), level=level, draws=draws, seed=seed,
                                      min_n=min_tasks)
    p = stats.paired_permutation_test(d, permutations=permutations, seed=seed).p_value
    return PairedDelta(name, n, float(before.mean()), float(after.mean()), float(d.mean()), cis[0], cis[1],
                       cis[2], p, bad=bad)


def _holm(rows: list[PairedDelta], alpha: float, wrong_way: Any) -> list[PairedDelta]:
    """Holm-adjusted p over the family; flagged when adjusted p <= alpha, the interval excludes 0, and the
    delta goes the wrong way."""
    from dataclasses import replace

    if not rows:
        return rows
    adjusted = stats.holm_adjust([r.p_value for r in rows])
    out = []
    for r, p in zip(rows, adjusted):
        excludes = r.ci is not None and (r.ci[0] > 0 or r.ci[1] < 0)
        out.append(replace(r, p_holm=float(p), flagged=bool(p <= alpha and excludes and wrong_way(r))))
    return out
