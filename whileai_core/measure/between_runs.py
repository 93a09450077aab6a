"""Between-run variance of pooled runs, and the noise band it puts on a paired suite delta.

The pooled runs form a table of pass rates y_sj (scenario s, run j). Model: y_sj = mu_s + u_j + e_sj, with u_j
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument

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
