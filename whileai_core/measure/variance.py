"""Run-to-run noise of pass@1 from re-runs of one eval: ``eval_variance`` and the band a delta must clear
(``EvalVariance``). Each run's pass@1 comes from ``pass_at.task_counts``; the array-level work lives in
``whileai_core.measure.stats``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from whileai_core.defaults import (
    CI_LEVEL,
    MIN_RERUNS,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.measure import stats
from whileai_core.measure.pass_at import (
    Interval,
    TaskCounts,
    _ci_list,
    _est,
    _fmt_ci,
    _sd_interval,
    task_counts,
)
from whileai_core.rows import (
    ReportMapping,
)


@dataclass(frozen=True)
class EvalVariance(ReportMapping):
    """Run-to-run noise of pass@1 on a fixed task set: the sd between re-runs and the band a delta must clear.

    ``run_sd`` is the sample sd (n-1) of the re-runs' pass@1 (None below 2 runs), with a chi-square interval.
    ``model_run_sd`` is the within-task prediction from one run, sqrt(mean_i s_i^2 / (K n)) with the unbiased
    per-task variance s_i^2 = c(K-c)/(K(K-1)) (Miller 2024 section 6); it needs K >= 2 rollouts per task.
    ``sd`` is ``run_sd`` when measured, else ``model_run_sd``.
    ``band(n_a, n_b)``: the largest |delta| between the mean of n_a runs and the mean of n_b runs that pure noise
    reaches with probability ``level``: t_{(1+level)/2, df} x sd x sqrt(1/n_a + 1/n_b), df = runs - 1 (the sd
    is estimated) or the normal quantile for the within-task model. ``noise_band`` is ``band(1, 1)``, the band
    for a delta between two single runs. A ``multiplier`` given by hand replaces the quantile x sqrt(...) by
    ``multiplier`` (the old flat rule, which at 2 x sd lets about one pure-noise delta in five through).
    """

    SDK_KEYS: ClassVar[dict[str, Any]] = {  # the SDK's eval_variance keys over ours
        "metric": lambda r: "pass_at_1", "means": lambda r: {f"run_{i}": m for i, m in enumerate(r.means, 1)},
        "run_std": "run_sd", "run_std_df": "df",
    }

    n_runs: int
    means: list[float]
    mean: float | None
    run_sd: float | None
    run_sd_ci: Interval | None
    model_run_sd: float | None
    multiplier: float | None  # None: the t rule
    n_tasks: int  # tasks graded in every run
    level: float
    note: str | None = None

    @property
    def df(self) -> int | None:
        """Degrees of freedom of the sd: runs - 1 when measured on re-runs, None (normal) for the model."""
        return self.n_runs - 1 if self.run_sd is not None else None

    def factor(self, n_a: int = 1, n_b: int = 1) -> float:
        """The band in units of sd: t quantile x sqrt(1/n_a + 1/n_b), or ``multiplier`` when given."""
        if self.multiplier is not None:
            return float(self.multiplier)
        q = (1 + self.level) / 2
        if self.df is None:
            quantile = stats.z_value(self.level)
        else:
            from scipy.stats import t as student_t

            quantile = float(student_t.ppf(q, self.df))
        return quantile * math.sqrt(1 / stats.check_int(n_a, "n_a", 1) + 1 / stats.check_int(n_b, "n_b", 1))

    def band(self, n_a: int = 1, n_b: int = 1) -> float | None:
        """Noise band for a delta between the mean of ``n_a`` runs and the mean of ``n_b`` runs."""
        return None if self.sd is None else self.factor(n_a, n_b) * self.sd

    def band_ci(self, n_a: int = 1, n_b: int = 1) -> Interval | None:
        """The band at the ends of the run sd's chi-square interval (None for the within-task model)."""
        if self.run_sd_ci is None:
            return None
        f = self.factor(n_a, n_b)
        return (f * self.run_sd_ci[0], f * self.run_sd_ci[1])

    def rule(self) -> str:
        if self.multiplier is not None:
            return f"{self.multiplier:g} x sd, flat rule"
        quantile = "normal quantile" if self.df is None else f"t quantile at df {self.df}"
        return f"{quantile} x sd x sqrt 2"

    @property
    def sd(self) -> float | None:
        return self.run_sd if self.run_sd is not None else self.model_run_sd

    @property
    def source(self) -> str | None:
        if self.run_sd is not None:
            return "reruns"
        return "within-task" if self.model_run_sd is not None else None

    @property
    def noise_band(self) -> float | None:
        return self.band(1, 1)

    @property
    def run_std(self) -> float | None:
        """The SDK's name for ``run_sd``: the sample sd of the re-runs' pass@1 (None below 2 runs)."""
        return self.run_sd

    @property
    def noise_band_ci(self) -> Interval | None:
        return self.band_ci(1, 1)

    @property
    def mean_ci(self) -> Interval | None:
        """t interval of the mean pass@1 over the re-runs (df = runs - 1), cut to [0, 1] (a pass rate cannot
        leave it, so the cut never lowers coverage); None below 2 runs."""
        if self.run_sd is None or self.mean is None:
            return None
        from scipy.stats import t as student_t

        half = float(student_t.ppf((1 + self.level) / 2, self.n_runs - 1)) * self.run_sd / math.sqrt(self.n_runs)
        return (max(0.0, self.mean - half), min(1.0, self.mean + half))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["run_sd_ci"] = _ci_list(self.run_sd_ci)
        d.update(sd=self.sd, source=self.source, noise_band=self.noise_band, noise_band_ci=_ci_list(self.noise_band_ci),
                 mean_ci=_ci_list(self.mean_ci), run_std=self.run_sd, noise_band_df=self.df)
        return d

    def __str__(self) -> str:
        if self.sd is None:
            body = "run-to-run sd n/a"
        elif self.run_sd is not None:
            body = f"run-to-run sd {_est(self.run_sd, self.run_sd_ci, 4)} ({self.n_runs} runs, {self.n_tasks} tasks)"
        else:
            body = (f"run-to-run sd {self.model_run_sd:.4f} (within-task model from 1 run of {self.n_tasks} tasks, "
                    f"no interval)")
        if self.noise_band is not None:
            band = _fmt_ci(self.noise_band_ci, 4) if self.noise_band_ci else " (no interval: model sd)"
            body += f"; noise band {self.noise_band:.4f}{band} ({self.rule()}): a delta under it is noise"
        if self.mean is not None:
            if self.n_runs >= 2:
                body = f"pass@1 mean {_est(self.mean, self.mean_ci, 3)} over {self.n_runs} runs | " + body
            else:
                body = f"pass@1 {self.mean:.3f} (1 run, no interval: pass_at gives one) | " + body
        return body + (f"; {self.note}" if self.note else "")


def _split_eval_runs(one: Any) -> tuple[Any, ...]:
    """One ``simulate(runs=N)`` result (or its rows) as its N runs, split on ``lineage.eval_run``; anything
    else is returned as the one run it is."""
    rows = getattr(one, "rows", one)
    if not isinstance(rows, (list, tuple)) or not rows or not all(isinstance(r, Mapping) for r in rows):
        return (one,)
    by_run: dict[int, list[Any]] = {}
    for r in rows:
        lineage = r.get("lineage")
        run = lineage.get("eval_run") if isinstance(lineage, Mapping) else None
        if run is None:
            return (one,)
        by_run.setdefault(int(run), []).append(r)
    return tuple(by_run[k] for k in sorted(by_run)) if len(by_run) > 1 else (one,)


def eval_variance(
    *positional: Any,
    runs: Any = None,
    level: float = CI_LEVEL,
    multiplier: float | None = None,
    min_reruns: int = MIN_RERUNS,
    dedupe: bool = False,
) -> EvalVariance:
    """Run-to-run noise band from re-runs of one eval: ``eval_variance(rows_run1, rows_run2, rows_run3)``.

    Each positional argument is one re-run's rows (row dicts, JSONL path, or an object with ``.rows``);
    ``runs=[rerun, ...]`` adds re-runs of the same eval (``eval_variance(before, runs=[again1, again2])``,
    or ``eval_variance(runs=[run1, run2, run3])``). The band is the t rule (see ``EvalVariance``) unless a
    flat ``multiplier`` is given.
    Each run's pass@1 is the mean per-task rate over the tasks graded in every run. Repeated rollouts within a
    run are an error unless ``dedupe=True``.

    Args:
        runs: more re-runs of the same eval, each a row source.
        level: the two-sided interval level. (``CI_LEVEL``)
        multiplier: a flat multiple of the run sd in place of the t rule.
        min_reruns: fewer runs than this draw a note. (``MIN_RERUNS``)
        dedupe: drop repeated rollouts instead of raising.

    Returns:
        an ``EvalVariance``: ``means``, ``run_sd`` with its interval, ``noise_band``, ``band(n_a, n_b)``; it
            prints one line.

    Raises:
        InvalidArgument: no runs, repeated rollouts without ``dedupe`` or an argument out of range (a
            ``ValueError``).

    Example:
        ```python
        noise = wai.eval_variance(run1, run2, run3)
        print(wai.delta_report(before, after, noise=noise))
        ```
    """
    runs = _gathered_runs(positional, runs)
    level = stats.check_level(level)
    if multiplier is not None and (isinstance(multiplier, bool) or not isinstance(multiplier, (int, float))
                                   or not multiplier > 0):
        raise InvalidArgument(f"multiplier= is a flat number of sds (> 0), or None for the t rule; got {multiplier!r}")
    min_reruns = stats.check_int(min_reruns, "min_reruns", 2)
    runs = _unwrapped_runs(runs)
    counts = [_one_run_counts(i, run, dedupe) for i, run in enumerate(runs)]
    shared = set(counts[0].keys)
    for tc in counts[1:]:
        shared &= set(tc.keys)
    notes = []
    if any(set(tc.keys) != shared for tc in counts):
        notes.append(f"runs do not cover the same tasks; measured on the {len(shared)} graded in every run")
    keys = [k for k in counts[0].keys if k in shared]
    if not keys:
        return EvalVariance(len(runs), [], None, None, None, None, multiplier, 0, level,
                            "; ".join(notes + ["no task is graded in every run"]))
    means, model_sd = _run_means(counts, keys)
    run_sd = run_sd_ci = None
    if len(runs) >= 2:
        run_sd = float(np.std(means, ddof=1))
        run_sd_ci = _sd_interval(run_sd, len(runs) - 1, level)
    notes.extend(_variance_notes(len(runs), min_reruns, model_sd, run_sd))
    return EvalVariance(len(runs), means, float(np.mean(means)), run_sd, run_sd_ci, model_sd, multiplier,
                        len(keys), level, "; ".join(notes) or None)


def _gathered_runs(positional: tuple[Any, ...], runs: Any) -> tuple[Any, ...]:
    """The positional re-runs and ``runs=``'s, as one tuple; one run that holds several (``eval_run``) split."""
    if runs is not None and (isinstance(runs, (str, bytes, Mapping)) or not isinstance(runs, (list, tuple))):
        raise InvalidArgumentType("runs= takes a list of re-runs, each one run's rows: eval_variance(runs=[run1, run2])")
    if runs is not None and runs and all(isinstance(item, Mapping) for item in runs):
        runs = [runs]  # runs= one re-run's rows
    gathered = tuple(positional) + tuple(runs or ())
    if not gathered:
        raise InvalidArgument("eval_variance() needs at least one run: eval_variance(rows_run1, rows_run2, ...)")
    return _split_eval_runs(gathered[0]) if len(gathered) == 1 else gathered


def _unwrapped_runs(runs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``eval_variance([run1, run2])``: a list of runs, not one run's rows; one empty run raises."""
    if len(runs) == 1 and isinstance(runs[0], (list, tuple)) and runs[0] and not any(
            isinstance(item, Mapping) for item in runs[0]):
        runs = tuple(runs[0])
    if len(runs) == 1 and isinstance(runs[0], (list, tuple)) and not runs[0]:
        raise InvalidArgument("eval_variance() got one empty run; pass each re-run's rows: eval_variance(run1, run2, ...)")
    return runs


def _one_run_counts(i: int, run: Any, dedupe: bool) -> TaskCounts:
    if isinstance(run, (str, bytes)) and not str(run).endswith(".jsonl") or isinstance(run, Mapping):
        raise InvalidArgumentType(f"runs[{i}]: each argument is one re-run's rows (a list of row dicts or a JSONL path)")
    return task_counts(run, name=f"runs[{i}]", dedupe=dedupe)


def _run_means(counts: list[TaskCounts], keys: list[str]) -> tuple[list[float], float | None]:
    """Each run's pass@1 over ``keys``, and the within-task model sd (None unless every task has 2+ rollouts)."""
    means, within = [], []
    for tc in counts:
        pos = {k: i for i, k in enumerate(tc.keys)}
        idx = np.array([pos[k] for k in keys])
        n, c = tc.n[idx], tc.c[idx]
        means.append(float(np.mean(c / n)))
        multi = n >= 2
        if multi.all():
            s2 = c * (n - c) / (n * (n - 1.0))
            within.append(float(np.sum(s2 / n)) / len(keys) ** 2)
    model_sd = math.sqrt(float(np.mean(within))) if len(within) == len(counts) else None
    return means, model_sd


def _variance_notes(n_runs: int, min_reruns: int, model_sd: float | None, run_sd: float | None) -> list[str]:
    notes = []
    if n_runs < min_reruns:
        if n_runs == 1:
            notes.append("1 run: the sd is the within-task model (Miller 2024); re-run the eval to measure it")
        else:
            notes.append(f"{n_runs} runs: two is a difference, not a distribution; {min_reruns} or more "
                         f"re-runs give a standard deviation worth reading")
    if model_sd is None and run_sd is None:
        notes.append("tasks need 2+ graded rollouts, or pass 2+ runs, for a noise estimate")
    return notes
