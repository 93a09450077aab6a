"""Run-to-run variance and the noise band it puts on a paired delta: from re-runs of one eval (``eval_variance``,
``EvalVariance``) and from pooled runs (``between_run_variance``, ``RunVariance``).

Re-runs of one eval. Each run's pass@1 is the mean per-task rate over the tasks graded in every run; the sd
between the runs' pass@1 (with its chi-square interval) gives the band a delta of one run a side must clear,
t_{(1+level)/2, runs-1} x run sd x sqrt 2 (see ``EvalVariance``).

Pooled runs. They form a table of pass rates y_sj (scenario s, run j). Model: y_sj = mu_s + u_j + e_sj, with u_j
a run-level shift shared by every scenario (a new API version, a sampling seed, load on the judge) and e_sj the
scenario-level part (a scenario's own run-to-run swing beyond binomial noise, plus binomial noise). The
variance components come from the two-way analysis of variance without replication, by the method of moments
(Searle, Casella & McCulloch 1992, ch. 4): with S scenarios, N runs and run means m_j,

* MS_R = S sum_j (m_j - m)^2 / (N - 1), E[MS_R] = sigma_e^2 + S sigma_u^2;
* MS_E = the residual mean square on (S - 1)(N - 1) df, E[MS_E] = sigma_e^2;
* run-level sigma_u^2 = max(0, (MS_R - MS_E) / S); scenario-level = max(0, MS_E - binomial), binomial the mean
  unbiased within-run variance of a rate, x(n - x) / (n^2 (n - 1)). ``F = MS_R / MS_E`` tests whether the runs
  differ as a whole.

The band. A suite delta against a pooled baseline is D = m_c - sum_j w_j m_j over the paired scenarios (the
current run's rate minus the runs' weighted rate). When nothing changed, the current run is one more draw of
the same runs, so Var(D) = Var(m_j) (1 + sum_j w_j^2), and Var(m_j) = sigma_u^2 + sigma_e^2 / S is estimated
by the sample variance of the runs' suite rates, s_m^2 = MS_R / S, on N - 1 df. D / (s_m sqrt(1 + 1/N_eff)),
N_eff = 1 / sum w_j^2 the effective number of runs, is then Student t on N - 1 df: the prediction interval of
one new run (Hahn & Meeker 1991, sec. 4.2), exact under normal run rates whatever the split between the two
components, and the bound the task bootstrap cannot give (it resamples scenarios, never runs). A delta under
t_{(1+level)/2, N-1} s_m sqrt(1/N_eff + 1/n_b) is noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np

from whileai_core import defaults as D
from whileai_core.defaults import CI_LEVEL, MIN_RERUNS
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.measure import stats
from whileai_core.measure import stats as st  # inside functions that take a stats= option
from whileai_core.measure.columns import TaskCounts, task_counts
from whileai_core.measure.pass_at import _ci_list, _est, _fmt_ci, _sd_interval
from whileai_core.options import Stats, with_stats
from whileai_core.rows import ReportMapping

Interval = tuple[float, float]


def prediction_band(rates: Any, weights: Any, *, level: float = D.CI_LEVEL, n_b: int = 1
                    ) -> tuple[np.ndarray, np.ndarray, int]:
    """The noise band of a suite delta against pooled runs, for many suites at once (vectorized).

    ``rates``: (..., runs, scenarios) pass rates of the pooled runs on the paired scenarios; ``weights``:
    (..., runs), the runs' weights in the baseline (they are normalized). Returns (band, s_m, df): the band
    t_{(1+level)/2, N-1} s_m sqrt(sum w^2 + 1/n_b), the sd of the runs' suite rates, and its df N - 1.
    """
    from scipy.stats import t as student_t

    y = np.asarray(rates, dtype=float)
    w = np.asarray(weights, dtype=float)
    runs = y.shape[-2]
    if runs < 2:
        raise InvalidArgument(f"a between-run band needs >= 2 runs; got {runs}")
    w = w / w.sum(axis=-1, keepdims=True)
    sd = y.mean(axis=-1).std(axis=-1, ddof=1)
    q = float(student_t.ppf((1 + level) / 2, runs - 1))
    return q * sd * np.sqrt(np.sum(w**2, axis=-1) + 1.0 / n_b), sd, runs - 1


def pooling_weights(suite_rates: Any, *, alpha: float = D.GATE_ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """Each pooled run's weight in the baseline, and the drift p, for many histories at once (vectorized).

    ``suite_rates``: (..., runs) the suite rate of each pooled run, oldest first. When the Mann-Kendall test
    (exact under ties, ``exact.mann_kendall_pvalues``) finds a trend at ``alpha``, pooling is refused: the
    newest run gets weight 1 and the rest 0. Otherwise every run weighs 1. The drift p is NaN below 3 runs or
    for constant rates (no test, no refusal).
    """
    from whileai_core.measure.exact import mann_kendall_pvalues

    r = np.asarray(suite_rates, dtype=float)
    flat = r.reshape(-1, r.shape[-1])
    p = mann_kendall_pvalues(flat).reshape(r.shape[:-1])
    w = np.ones_like(r)
    refused = np.nan_to_num(p, nan=1.0) <= alpha
    w[..., :-1] = np.where(refused[..., None], 0.0, 1.0)
    return w, p


@dataclass(frozen=True)
class RunVariance:
    """Between-run variance of pooled runs (``between_run_variance`` builds it; ``History.noise`` holds it) and
    the band it puts on a suite delta. Pass it as ``delta_report(..., noise=)``.

    Args:
        keys: the scenarios scored in every pooled run (the table's rows).
        rates: (scenarios, runs) pass rates.
        weights: (runs,) each run's weight in the baseline (0: left out; the newest alone when pooling is refused).
        run: the run-level variance component sigma_u^2 (a shift shared by every scenario).
        scenario: the scenario-level component beyond binomial noise.
        binomial: the mean binomial variance of one scenario's rate within a run.
        f_p: p of the F test that the runs differ as a whole (``None`` with fewer than 2 scenarios).
        level: the band's two-sided level (``defaults.CI_LEVEL``).
        note: what limits it (missing scenarios), or ``None``.

    Example::

        rv = pool_runs(docs).noise
        print(rv)            # between runs: run-level sd 0.031, scenario-level sd ...; effective runs 5.0 of 5
        rv.band()            # the band a suite delta must clear, over every scenario of the table
    """

    keys: tuple[str, ...]
    rates: np.ndarray
    weights: np.ndarray
    run: float
    scenario: float
    binomial: float
    f_p: float | None
    level: float = D.CI_LEVEL
    note: str | None = field(default=None)

    @property
    def n_runs(self) -> int:
        return int(self.rates.shape[1])

    @property
    def df(self) -> int:
        """Degrees of freedom of the runs' spread: runs - 1."""
        return self.n_runs - 1

    @property
    def n_effective(self) -> float:
        """Effective number of runs behind the baseline, (sum w)^2 / sum w^2."""
        w = self.weights / self.weights.sum()
        return float(1.0 / np.sum(w**2))

    def _rows(self, keys: Sequence[str] | None) -> np.ndarray:
        if keys is None:
            return self.rates
        pos = {k: i for i, k in enumerate(self.keys)}
        idx = [pos[k] for k in keys if k in pos]
        return self.rates[idx] if len(idx) >= 2 else self.rates

    def sd(self, keys: Sequence[str] | None = None) -> float:
        """The sd of one run's suite rate over ``keys`` (default every scenario of the table): s_m."""
        return float(self._rows(keys).mean(axis=0).std(ddof=1))

    def band(self, keys: Sequence[str] | None = None, *, n_b: int = 1, level: float | None = None) -> float:
        """The band a suite delta over ``keys`` must clear: t_{(1+level)/2, N-1} s_m sqrt(1/N_eff + 1/n_b)."""
        band, _, _ = prediction_band(self._rows(keys).T, self.weights, level=self.level if level is None else level,
                                     n_b=n_b)
        return float(band)

    def band_ci(self, keys: Sequence[str] | None = None, *, n_b: int = 1, level: float | None = None) -> Interval:
        """The band at the ends of s_m's chi-square interval (df N - 1)."""
        from scipy.stats import chi2

        lv = self.level if level is None else level
        lo_q, hi_q = chi2.ppf([(1 + lv) / 2, (1 - lv) / 2], self.df)
        band = self.band(keys, n_b=n_b, level=lv)
        return (band * math.sqrt(self.df / lo_q), band * math.sqrt(self.df / hi_q))

    def __str__(self) -> str:
        f = "" if self.f_p is None else f"; F test that the runs differ as a whole: p={self.f_p:.3g}"
        text = (f"between runs: run-level sd {math.sqrt(self.run):.3f}, scenario-level sd {math.sqrt(self.scenario):.3f}"
                f" (binomial sd {math.sqrt(self.binomial):.3f}) over {len(self.keys)} scenarios x {self.n_runs} runs"
                f"{f}; effective runs {self.n_effective:.1f} of {self.n_runs}; suite delta noise band "
                f"{self.band():.3f} [{self.band_ci()[0]:.3f}..{self.band_ci()[1]:.3f}] (t quantile at df {self.df} x "
                f"run sd {self.sd():.4f} x sqrt(1/{self.n_effective:.1f} + 1))")
        return text + (f"; {self.note}" if self.note else "")


def between_run_variance(keys: Sequence[str], passes: Any, trials: Any, *, weights: Any = None,
                         level: float = D.CI_LEVEL, note: str | None = None) -> RunVariance:
    """Variance components of a (scenarios x runs) table of passes and trials, and the band they give.

    Args:
        keys: one key per scenario (row).
        passes: (scenarios, runs) passes.
        trials: (scenarios, runs) scored trials, each >= 1.
        weights: (runs,) weights of the runs in the baseline (default: equal).
        level: the band's two-sided level (default ``defaults.CI_LEVEL`` = 0.95).
        note: carried onto the result.

    Returns:
        a ``RunVariance``.

    Raises:
        InvalidArgument: fewer than 2 runs, a trial count below 1, or shapes that do not match.

    Example::

        rv = between_run_variance(["a", "b", "c"], [[3, 4], [2, 2], [4, 3]], [[4, 4]] * 3)
        rv.band()
    """
    from scipy.stats import f as f_dist

    x, n = np.asarray(passes, dtype=float), np.asarray(trials, dtype=float)
    if x.ndim != 2 or x.shape != n.shape or x.shape[0] != len(keys):
        raise InvalidArgument(f"passes= and trials= must be (scenarios, runs) tables with one row per key; got "
                              f"{x.shape}, {n.shape} and {len(keys)} keys")
    if x.shape[1] < 2 or np.any(n < 1):
        raise InvalidArgument("a between-run variance needs >= 2 runs and >= 1 scored trial per cell")
    y = x / n
    s, runs = y.shape
    w = np.ones(runs) if weights is None else np.asarray(weights, dtype=float)
    m = y.mean(axis=0)
    ms_r = s * float(np.sum((m - m.mean()) ** 2)) / (runs - 1)
    f_p = None
    ms_e = 0.0
    if s >= 2:
        resid = y - y.mean(axis=1, keepdims=True) - m[None, :] + m.mean()
        ms_e = float(np.sum(resid**2)) / ((s - 1) * (runs - 1))
        f_p = float(f_dist.sf(ms_r / ms_e, runs - 1, (s - 1) * (runs - 1))) if ms_e > 0 else (
            0.0 if ms_r > 0 else 1.0)
    multi = n >= 2
    binomial = float(np.mean((x * (n - x) / (n**2 * np.maximum(n - 1, 1)))[multi])) if multi.any() else 0.0
    return RunVariance(tuple(keys), y, w, max(0.0, (ms_r - ms_e) / s), max(0.0, ms_e - binomial), binomial, f_p,
                       level, note)


# ------------------------------------------------------------------------------------------------
# run-to-run noise
# ------------------------------------------------------------------------------------------------
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
    stats: Stats | None = None,
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
        stats: a ``wai.Stats``; its ``level`` is used (the other fields have nothing to set here). A ``level=``
            set beside it to another value is an error naming both.

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
    level = with_stats(stats, {"level": level}, {"level": CI_LEVEL}, where="eval_variance")["level"]
    runs = _gathered_runs(positional, runs)
    level = st.check_level(level)
    if multiplier is not None and (isinstance(multiplier, bool) or not isinstance(multiplier, (int, float))
                                   or not multiplier > 0):
        raise InvalidArgument(f"multiplier= is a flat number of sds (> 0), or None for the t rule; got {multiplier!r}")
    min_reruns = st.check_int(min_reruns, "min_reruns", 2)
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
