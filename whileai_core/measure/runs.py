"""The SDK's measurement calls over two runs and one eval set: ``compare_runs``, ``noise_band``, ``bootstrap_ci``
and ``eval_power``, built on this project's statistics (``stats``) and its planner (``holdout_size``).

``compare_runs`` is the one-metric paired comparison ``delta_report`` makes for pass@1, returned as the SDK's
dict (and for ``marker:<name>`` metrics too); ``eval_power`` says whether a held-out set can prove a gain at
all before anyone trains against it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from whileai_core.defaults import (
    ALPHA,
    BOOTSTRAP_DRAWS,
    CI_LEVEL,
    DIFFICULTY_BAND,
    EVAL_POWER_CEILING,
    EVAL_POWER_EFFECT,
    EVAL_POWER_FLOOR,
    MIN_CI_TASKS,
    MIN_PAIRED_TASKS,
    POWER,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.measure import stats
from whileai_core.rows import as_rows, binary_reward, mapping_field, task_key

VERDICTS = ("b_better", "a_better", "no_difference_detected", "insufficient_data")


# ------------------------------------------------------------------------------------------------
# noise_band, bootstrap_ci: array-level primitives under the SDK's names
# ------------------------------------------------------------------------------------------------
def noise_band(run_std: Any, n_a: int = 1, n_b: int = 1, df: float | None = None, *,
               level: float = CI_LEVEL) -> float:
    """The largest |delta| pure run-to-run noise reaches at ``level``: q x run_std x sqrt(1/n_a + 1/n_b).

    q is the two-sided t quantile at ``df``, the degrees of freedom of ``run_std`` (re-runs - 1). An sd measured
    on a few re-runs is itself noisy: with the normal quantile, the sd of 3 re-runs lets 0.175 of pure-noise
    deltas through, not 0.05. So ``df`` is required with a bare number, and read off an ``eval_variance`` result.

    Args:
        run_std: the sd between re-runs of one eval: a number (then ``df`` is required), or an
            ``eval_variance(...)`` result (its sd, and its df = runs - 1, or the normal quantile for its
            within-task model).
        n_a: runs averaged on side a (default 1).
        n_b: runs averaged on side b (default 1).
        df: degrees of freedom of ``run_std``, re-runs - 1 (>= 1); ``math.inf`` for an sd known without error
            (the normal quantile, 1.96 at 95%). Required when ``run_std`` is a number.
        level: two-sided level (default ``defaults.CI_LEVEL`` = 0.95).

    Returns:
        float: the band.

    Raises:
        InvalidArgument: run_std < 0, a number without ``df``, n_a or n_b < 1, df < 1, level outside (0, 1), an
            ``eval_variance`` result with no sd.

    Example:
        ```pycon
        >>> round(noise_band(0.03, df=2), 4)   # the sd of 3 re-runs
        0.1825
        ```
    """
    from whileai_core.measure.measure import EvalVariance

    if isinstance(run_std, EvalVariance):
        if run_std.sd is None:
            raise InvalidArgument("run_std= is an eval_variance result without an sd (one run of single rollouts); "
                                  "re-run the eval")
        df = (math.inf if run_std.df is None else run_std.df) if df is None else df
        run_std = run_std.sd
    if isinstance(run_std, bool) or not isinstance(run_std, (int, float)) or not run_std >= 0 \
            or not math.isfinite(run_std):
        raise InvalidArgument(f"run_std= is a run-to-run sd >= 0 (eval_variance(...).run_std); got {run_std!r}")
    if df is None:
        raise InvalidArgument("noise_band(run_std) needs df=, the re-runs behind the sd minus 1 (df=2 for 3 re-runs: "
                              "the t quantile 4.30, not 1.96), or pass the eval_variance(...) result itself; "
                              "df=math.inf only for an sd known without error")
    if isinstance(df, bool) or not isinstance(df, (int, float)) or not df >= 1 or (df != math.inf and df != int(df)):
        raise InvalidArgument(f"df= is the degrees of freedom of run_std, a whole number >= 1 (re-runs - 1) or "
                              f"math.inf; got {df!r}")
    n_a, n_b = stats.check_int(n_a, "n_a", 1), stats.check_int(n_b, "n_b", 1)
    level = stats.check_level(level)
    if df == math.inf:
        q = stats.z_value(level)
    else:
        from scipy.stats import t as student_t

        q = float(student_t.ppf((1 + level) / 2, int(df)))
    return q * float(run_std) * math.sqrt(1 / n_a + 1 / n_b)


def bootstrap_ci(values: Sequence[float], *, stat: Callable[..., float] | None = None, n_boot: int = BOOTSTRAP_DRAWS,
                 seed: int = 0, level: float = CI_LEVEL, min_n: int = MIN_CI_TASKS) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``stat`` over ``values`` (one value per independent unit: a task).

    Args:
        values: the per-unit values.
        stat: the statistic (default the mean, computed vectorised); any callable ``stat(array) -> float``
            (given ``axis=1`` when it accepts it, else called once per resample).
        n_boot: resamples (default ``defaults.BOOTSTRAP_DRAWS`` = 2000).
        seed: the resampling seed (default 0).
        level: two-sided level (default ``defaults.CI_LEVEL`` = 0.95).
        min_n: fewer values than this give None (default ``defaults.MIN_CI_TASKS`` = 3).

    Returns:
        (lo, hi), or None below ``min_n`` values.

    Raises:
        InvalidArgument: a non-finite value, level outside (0, 1), n_boot < 1.

    Example:
        ```pycon
        >>> bootstrap_ci([0.2, 0.4, 0.6, 0.8])  # doctest: +ELLIPSIS
        (0.3..., 0.7...)
        ```
    """
    level = stats.check_level(level)
    n_boot = stats.check_int(n_boot, "n_boot", 1)
    v = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(v)):
        raise InvalidArgument("bootstrap_ci(values) needs finite numbers; drop or fix the NaN/inf values")
    if len(v) < stats.check_int(min_n, "min_n", 1):
        return None
    if stat is None or stat is np.mean or stat is statistics.mean:
        ci: tuple[float, float] | None = stats.bootstrap_mean_ci(v, level=level, draws=n_boot, seed=seed, min_n=min_n)
        return ci
    rng = np.random.default_rng(seed)
    samples = v[rng.integers(0, len(v), size=(n_boot, len(v)))]
    try:
        dist = np.asarray(stat(samples, axis=1), dtype=float)
    except TypeError:
        dist = np.array([float(stat(row)) for row in samples])
    return stats.interval_from_distribution(dist, float(stat(v)), level=level)


# ------------------------------------------------------------------------------------------------
# compare_runs
# ------------------------------------------------------------------------------------------------
class RunComparison(dict):  # type: ignore[type-arg]
    """The SDK's ``compare_runs`` dict; prints the delta with its interval and n."""

    def __str__(self) -> str:
        if self["delta"] is None:
            return f"{self['metric']}: insufficient data ({self['note']})"
        ci = self["ci95"]
        ci_txt = f" [{ci[0]:+.3f}..{ci[1]:+.3f}]" if ci else " (no interval)"
        how = f"{self['n_paired']} paired tasks" if self["paired"] else \
            f"unpaired, {self['n_only_a'] + self['n_paired']} vs {self['n_only_b'] + self['n_paired']} tasks"
        p = f", p={self['p_value']:.3g}" if self["p_value"] is not None else ""
        return (f"{self['metric']}: {self['mean_a']:.3f} -> {self['mean_b']:.3f}  {self['delta']:+.3f}{ci_txt} "
                f"({how}{p}) {self['verdict']}" + (f"; {self['note']}" if self["note"] else ""))


def task_means(rows: Any, metric: str = "pass_at_1") -> dict[str, float]:
    """Per-task mean of the binary reward (``pass_at_1``) or of a marker (``marker:<name>``)."""
    if not isinstance(metric, str) or not (metric == "pass_at_1" or metric.startswith("marker:")):
        raise InvalidArgument(f"metric= is 'pass_at_1' or 'marker:<name>'; got {metric!r}")
    sums: dict[str, list[float]] = {}
    for row in as_rows(rows, name="rows"):
        if metric == "pass_at_1":
            v: Any = binary_reward(row)
        else:
            markers = mapping_field(row, "markers")
            v = markers.get(metric.split(":", 1)[1])
            v = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None
        if v is not None:
            sums.setdefault(task_key(row), []).append(float(v))
    return {k: math.fsum(vs) / len(vs) for k, vs in sums.items()}


def _verdict(ci: tuple[float, float] | None) -> str:
    if ci is None:
        return "insufficient_data"
    if ci[0] > 0:
        return "b_better"
    if ci[1] < 0:
        return "a_better"
    return "no_difference_detected"


def compare_runs(a: Any, b: Any, *, metric: str = "pass_at_1", n_boot: int = BOOTSTRAP_DRAWS, seed: int = 0,
                 min_paired: int = MIN_PAIRED_TASKS, level: float = CI_LEVEL) -> RunComparison:
    """Compare one metric between run ``a`` and run ``b`` (b - a), paired by task when enough tasks are shared.

    Args:
        a: the first run's graded rows (or a ScoredData).
        b: the second run's graded rows.
        metric: ``"pass_at_1"`` (default) or ``"marker:<name>"``.
        n_boot: bootstrap resamples and sign flips (default ``defaults.BOOTSTRAP_DRAWS`` = 2000).
        seed: the seed of both (default 0).
        min_paired: shared tasks needed for the paired test (default ``defaults.MIN_PAIRED_TASKS`` = 5);
            below it each side's task means are bootstrapped independently (at least 3 a side) and there is
            no p-value.
        level: interval level (default ``defaults.CI_LEVEL`` = 0.95).

    Returns:
        RunComparison: ``{metric, paired, n_paired, n_only_a, n_only_b, paired_share, n_used, mean_a, mean_b,
        delta, ci95, level, p_value, p_exact, verdict, note}``; the verdict (b_better, a_better,
        no_difference_detected, insufficient_data) comes from the interval, the p-value from a sign-flip
        permutation test on the paired differences: exact (``p_exact``) when they lie on a small lattice or at
        most ``EXACT_PERMUTATION_MAX`` (24) of them are non-zero, else ``n_boot`` random flips.

    Raises:
        InvalidArgument: a ``metric`` other than ``"pass_at_1"`` or ``"marker:<name>"``, ``level`` outside (0, 1),
            ``n_boot`` or ``min_paired`` < 1 (a ``ValueError``); a rows file that is not JSONL.
        InvalidArgumentType: ``a`` or ``b`` is not rows (a single dict, a non-iterable, a non-dict row; a
            ``TypeError``).
        FileNotFoundError: ``a`` or ``b`` is a path to no file.

    Example:
        ```pycon
        >>> r = compare_runs(before_rows, after_rows)  # doctest: +SKIP
        >>> r["verdict"], r["ci95"]  # doctest: +SKIP
        ```
    """
    level = stats.check_level(level)
    n_boot = stats.check_int(n_boot, "n_boot", 1)
    min_paired = stats.check_int(min_paired, "min_paired", 1)
    ma, mb = task_means(a, metric), task_means(b, metric)
    shared = [k for k in ma if k in mb]
    only_a, only_b = len(ma) - len(shared), len(mb) - len(shared)
    total = len(shared) + only_a + only_b
    out: dict[str, Any] = {"metric": metric, "n_paired": len(shared), "n_only_a": only_a, "n_only_b": only_b,
           "paired_share": len(shared) / total if total else 0.0, "level": level, "p_value": None, "p_exact": None}
    notes = []
    if len(shared) >= min_paired:
        d = np.array([mb[k] - ma[k] for k in shared])
        ci = stats.bootstrap_mean_ci(d, level=level, draws=n_boot, seed=seed)
        test = stats.paired_permutation_test(d, permutations=n_boot, seed=seed)  # exact at <= 24 non-zero d
        out.update(p_value=float(test.p_value), p_exact=test.exact)
        out.update(paired=True, n_used=len(shared), mean_a=float(np.mean([ma[k] for k in shared])),
                   mean_b=float(np.mean([mb[k] for k in shared])), delta=float(d.mean()))
        if only_a or only_b:
            notes.append(f"{only_a} tasks only in a and {only_b} only in b were dropped; the verdict rests on the "
                         f"{len(shared)} shared")
    else:
        va, vb = np.array(list(ma.values())), np.array(list(mb.values()))
        ci = _unpaired_ci(va, vb, n_boot=n_boot, seed=seed, level=level)
        out.update(paired=False, n_used=len(va) + len(vb), mean_a=float(va.mean()) if len(va) else None,
                   mean_b=float(vb.mean()) if len(vb) else None,
                   delta=float(vb.mean() - va.mean()) if len(va) and len(vb) else None)
        notes.append(f"fewer than {min_paired} shared tasks; unpaired task means, weaker test")
    if out["paired_share"] < 0.5 and (only_a or only_b):
        notes[-1] = "most tasks unpaired: " + notes[-1]
    out.update(ci95=[float(ci[0]), float(ci[1])] if ci else None, verdict=_verdict(ci), note="; ".join(notes) or None)
    return RunComparison(out)


def _unpaired_ci(va: np.ndarray, vb: np.ndarray, *, n_boot: int, seed: int, level: float
                 ) -> tuple[float, float] | None:
    if len(va) < MIN_CI_TASKS or len(vb) < MIN_CI_TASKS:
        return None
    rng = np.random.default_rng(seed)
    da = va[rng.integers(0, len(va), size=(n_boot, len(va)))].mean(axis=1)
    db = vb[rng.integers(0, len(vb), size=(n_boot, len(vb)))].mean(axis=1)
    return stats.interval_from_distribution(db - da, float(vb.mean() - va.mean()), level=level)


# ------------------------------------------------------------------------------------------------
# eval_power: can this held-out set prove a gain?
# ------------------------------------------------------------------------------------------------
class EvalPower(dict):  # type: ignore[type-arg]
    """The SDK's ``eval_power`` dict; prints the verdict with the counts behind it."""

    def __str__(self) -> str:
        if self["verdict"] == "empty":
            return "eval power: empty (no task carries a 0/1 reward)"
        lo, hi = self["band"]
        head = (f"eval power: {self['verdict']}: {self['n_tasks']} tasks (base pass@1 {self['base']:.3f}, k={self['k']}), "
                f"{self['in_band']} in band {lo:.0%}..{hi:.0%}, {self['tied_pass']} always pass, "
                f"{self['tied_fail']} always fail, {self['single_rollout']} single-rollout; "
                f"{self['n_needed']} tasks needed to prove +{self['effect']:.3f} at {self['power']:.0%} power")
        return "\n".join([head, *(f"! {w}" for w in self["warnings"])])


def eval_power(rows: Any, effect: float = EVAL_POWER_EFFECT, power: float = POWER, alpha: float = ALPHA,
               band: tuple[float, float] = DIFFICULTY_BAND, *, ceiling: float = EVAL_POWER_CEILING,
               floor: float = EVAL_POWER_FLOOR) -> EvalPower:
    """Whether a held-out set, graded on the base policy, can prove a gain of ``effect`` in pass@1 at all.

    Args:
        rows: the base policy's graded rows on the held-out tasks.
        effect: the gain to prove (default ``defaults.EVAL_POWER_EFFECT`` = 0.05).
        power: the power wanted (default ``defaults.POWER`` = 0.8).
        alpha: the two-sided test level (default ``defaults.ALPHA`` = 0.05).
        band: the pass-rate band of tasks that can still move (default ``defaults.DIFFICULTY_BAND``).
        ceiling: base pass@1 at or above which the set is ``saturated`` (default ``defaults.EVAL_POWER_CEILING``).
        floor: base pass@1 at or below which the set is ``floored`` (default ``defaults.EVAL_POWER_FLOOR``).

    Returns:
        EvalPower: ``{verdict (usable|underpowered|saturated|floored|empty), n_tasks, base, k, in_band,
        tied_pass, tied_fail, single_rollout, resolvable, n_needed, effect, power, alpha, band, notes,
        warnings}``. ``n_needed`` is ``holdout_size(effect, base=, k=)``; ``resolvable`` counts the tasks that
        can move (not always passing); ``underpowered`` means fewer resolvable tasks than needed.

    Raises:
        InvalidArgument: effect outside (0, 1), power or alpha outside (0, 1), an invalid band.

    Example:
        ```pycon
        >>> eval_power(base_rows, effect=0.10)["verdict"]  # doctest: +SKIP
        'underpowered'
        ```
    """
    from whileai_core.measure.columns import task_counts
    from whileai_core.measure.measure import holdout_size

    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not 0 < effect < 1:
        raise InvalidArgument(f"effect= is the gain in pass rate to prove, between 0 and 1 (0.05 = 5 points); got {effect!r}")
    power, alpha = stats.check_prob(power, "power"), stats.check_prob(alpha, "alpha")
    lo, hi = _check_band(band)
    tc = task_counts(rows)
    out: dict[str, Any] = {"effect": float(effect), "power": power, "alpha": alpha, "band": [lo, hi], "notes": [],
                           "warnings": []}
    if not tc.keys:
        out.update(verdict="empty", n_tasks=0, base=None, k=None, in_band=0, tied_pass=0, tied_fail=0,
                   single_rollout=0, resolvable=0, n_needed=None)
        return EvalPower(out)
    rates = tc.c / tc.n
    multi = tc.n >= 2
    base = float(rates.mean())
    k = int(np.median(tc.n))
    out.update(n_tasks=len(rates), base=base, k=k, in_band=int(np.sum((rates >= lo) & (rates <= hi))),
               tied_pass=int(np.sum(multi & (tc.c == tc.n))), tied_fail=int(np.sum(multi & (tc.c == 0))),
               single_rollout=int(np.sum(~multi)), resolvable=int(np.sum(rates < 1)))
    if base + effect > 1 or base >= ceiling:
        out.update(verdict="saturated", n_needed=None)
        why = f"base pass@1 {base:.3f} is at the ceiling ({ceiling:.0%}); use harder tasks"
    elif base <= floor:
        out.update(verdict="floored", n_needed=None)
        why = f"base pass@1 {base:.3f} is at the floor ({floor:.0%}): nothing passes, so nothing can be compared"
    else:
        n_needed = int(holdout_size(float(effect), base=min(base, 1 - effect), k=max(1, k), power=power,
                                    alpha=alpha).n_tasks)
        out["n_needed"] = n_needed
        usable = out["resolvable"] >= n_needed
        out["verdict"] = "usable" if usable else "underpowered"
        why = (f"{out['resolvable']} tasks can move, {n_needed} needed at k={k}; add tasks or rollouts")
    if out["verdict"] != "usable":
        out["warnings"].append(f"this held-out set cannot prove a {effect:.3f} gain: {why}")
    if out["single_rollout"]:
        out["notes"].append(f"{out['single_rollout']} task(s) have one rollout: their pass rate is 0 or 1 by "
                            "construction; roll each task k times")
    return EvalPower(out)


def _check_band(band: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(x) for x in band)
    except (TypeError, ValueError):
        raise InvalidArgumentType(f"band= is (lo, hi), two pass rates, e.g. (0.2, 0.8); got {band!r}") from None
    if not 0 <= lo <= hi <= 1:
        raise InvalidArgument(f"band=({lo}, {hi}) needs 0 <= lo <= hi <= 1, e.g. (0.2, 0.8)")
    return lo, hi
