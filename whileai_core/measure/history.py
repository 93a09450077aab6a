"""A branch's run history as a baseline: pooled per scenario with a between-run random effect, per-scenario
flakiness, drift, and staleness.

* Pooled baseline: the last N runs of a scenario give one pass rate p = sum x_j / sum n_j. Runs of one
  scenario vary beyond binomial noise (a scenario-level random effect); its intraclass correlation rho comes
  from the one-way ANOVA estimator for binary data (Fleiss, Levin & Paik 2003, sec. 15.5), and the pooled
  trials count as n_eff = sum n_j / (1 + (n0 - 1) rho) (Kish 1965 design effect), so pooling N runs never
  claims more certainty than N runs hold. The suite delta pairs on scenario rates, so its scenario bootstrap
  already carries each scenario's run-to-run spread.
* Flakiness: the between-run spread of one scenario beyond binomial noise, tested by a Monte Carlo
  conditional test of homogeneity (reshuffle the scenario's trials among its runs; the statistic is the
  chi-square numerator sum n_j (p_j - p)^2; Agresti 2002 sec. 3.5.3), Holm-adjusted over the scenarios.
* Drift: per scenario, the Cochran-Armitage trend test over run order (Armitage 1955); for the suite, the
  Mann-Kendall test (Kendall's tau between run order and the suite pass rate; Mann 1945), exact for few runs.
* Stale: the newest pooled run older than ``STALE_DAYS`` or more than ``STALE_COMMITS`` commits behind HEAD.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from whileai_core import arguments
from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument


def _flags(entry: Mapping[str, Any]) -> list[int]:
    pr = float(entry.get("pass_reward", D.GATE_PASS_REWARD))
    return [int(r >= pr) for r in entry.get("rewards") or [] if r is not None]


def design_effect(passes: Sequence[int], trials: Sequence[int]) -> tuple[float, float]:
    """(rho, n_eff): the ANOVA intraclass correlation of binary trials grouped by run (floored at 0) and the
    effective number of pooled trials sum n / (1 + (n0 - 1) rho). One run: rho 0, n_eff = n."""
    x, n = np.asarray(passes, dtype=float), np.asarray(trials, dtype=float)
    keep = n > 0
    x, n = x[keep], n[keep]
    total, groups = n.sum(), len(n)
    if groups < 2 or total <= groups:
        return 0.0, float(total)
    p = x.sum() / total
    msb = np.sum(n * (x / n - p) ** 2) / (groups - 1)
    msw = np.sum(x - x**2 / n) / (total - groups)
    n0 = (total - np.sum(n**2) / total) / (groups - 1)
    denom = msb + (n0 - 1) * msw
    rho = max(0.0, float((msb - msw) / denom)) if denom > 0 else 0.0
    return rho, float(total / (1 + (n0 - 1) * rho))


def homogeneity_p(passes: Sequence[int], trials: Sequence[int], *, permutations: int = D.HISTORY_PERMUTATIONS,
                  seed: int = D.GATE_SEED) -> float:
    """Monte Carlo conditional p of "every run has one pass rate": the scenario's trials reshuffled among its
    runs ``permutations`` times; statistic sum n_j (p_j - p)^2. 1.0 when every trial agrees."""
    x, n = np.asarray(passes, dtype=int), np.asarray(trials, dtype=int)
    keep = n > 0
    x, n = x[keep], n[keep]
    total, hits = int(n.sum()), int(x.sum())
    if len(n) < 2 or hits in (0, total):
        return 1.0
    p = hits / total

    def stat(counts: np.ndarray) -> np.ndarray:
        return np.sum(n * (counts / n - p) ** 2, axis=-1)

    flags = np.zeros(total, dtype=np.int32)
    flags[:hits] = 1
    rng = np.random.default_rng(seed)
    shuffled = rng.permuted(np.broadcast_to(flags, (permutations, total)), axis=1)
    edges = np.concatenate([[0], np.cumsum(n)])
    sums = np.add.reduceat(shuffled, edges[:-1], axis=1)
    observed = stat(x.astype(float))
    ge = int(np.sum(stat(sums.astype(float)) >= observed - 1e-12))
    return (1 + ge) / (1 + permutations)


def trend_p(passes: Sequence[int], trials: Sequence[int]) -> float:
    """Two-sided Cochran-Armitage trend p of pass rate over run order (scores 0..N-1); 1.0 without variance."""
    from scipy.special import ndtr

    x, n = np.asarray(passes, dtype=float), np.asarray(trials, dtype=float)
    keep = n > 0
    x, n = x[keep], n[keep]
    s = np.arange(len(n), dtype=float)
    total = n.sum()
    if len(n) < 2 or total == 0:
        return 1.0
    p = x.sum() / total
    var = p * (1 - p) * (np.sum(n * s**2) - np.sum(n * s) ** 2 / total)
    if var <= 0:
        return 1.0
    t = np.sum(s * (x - n * p))
    return float(2 * ndtr(-abs(t) / math.sqrt(var)))


def mann_kendall(values: Sequence[float]) -> tuple[float | None, float | None]:
    """(tau, two-sided p) of the Mann-Kendall trend test: Kendall's tau between order and value (scipy's
    exact null for few values without ties). (None, None) below 3 values or for constant values."""
    from scipy.stats import kendalltau

    v = [float(x) for x in values]
    if len(v) < 3 or len(set(v)) < 2:
        return None, None
    res = kendalltau(np.arange(len(v)), v)
    return float(res.statistic), float(res.pvalue)


@dataclass
class ScenarioHistory:
    """One scenario over the pooled runs: counts per run, pooled rate, rho and n_eff, flakiness and drift."""

    key: str
    passes: list[int]
    trials: list[int]
    rate: float | None
    rho: float
    n_effective: float
    flaky_p: float
    flaky_p_holm: float = 1.0
    trend_p: float = 1.0
    trend_p_holm: float = 1.0
    flaky: bool = False
    drifting: bool = False


@dataclass
class History:
    """A pooled baseline (what ``pool_runs`` returns): the runs pooled (oldest first), each scenario's history, the
    pooled entries (``index``, what the gate pairs with), the flaky and drifting scenarios, the suite's drift, and
    staleness. ``lines()`` prints it, ``to_dict()`` is its JSON form (without ``index``).

    Args:
        runs: a name per pooled run, oldest first.
        scenarios: each scenario's ``ScenarioHistory`` (passes and trials per run, pooled rate, rho, n_eff, the
            flakiness and trend p-values raw and Holm-adjusted) by scenario key.
        index: the pooled baseline entry per scenario key: the newest run's entry with every pooled run's
            rewards and a ``pooled`` field (runs, passes, n_scored, rho, n_effective).
        flaky: keys whose between-run spread exceeds binomial noise (Holm-adjusted p <= ``alpha``).
        drifting: keys whose pass rate trends over the runs (Cochran-Armitage, Holm-adjusted p <= ``alpha``).
        suite_rates: the suite pass@1 of each run (``None`` for a run with no scored trial).
        suite_tau: Kendall's tau of the suite pass rate over run order (``None`` below 3 runs or for constant rates).
        suite_trend_p: its two-sided Mann-Kendall p (``None`` likewise).
        alpha: level of the flags (default ``defaults.GATE_ALPHA`` = 0.05, Fisher's convention).
        stale: why the baseline is stale (``stale_note``), or ``None`` (default).
        requested: how many runs were asked for, when more than were pooled (default ``None``).

    Example::

        docs = [{"scenarios": [{"key": "a", "rewards": [1, 1, 0, 1]}, {"key": "b", "rewards": [1, 1, 1, 1]}]},
                {"scenarios": [{"key": "a", "rewards": [0, 0, 0, 1]}, {"key": "b", "rewards": [1, 1, 1, 0]}]}]
        hist = pool_runs(docs)
        hist.runs, hist.flaky, hist.index["a"]["pooled"]["n_effective"]  # (['run 1', 'run 2'], [], 5.0)
        print("\\n".join(hist.lines()))  # pooled baseline: 2 run(s), suite pass@1 per run 0.875, 0.500; ...
    """

    runs: list[str]
    scenarios: dict[str, ScenarioHistory]
    index: dict[str, dict[str, Any]]
    flaky: list[str] = field(default_factory=list)
    drifting: list[str] = field(default_factory=list)
    suite_rates: list[float | None] = field(default_factory=list)
    suite_tau: float | None = None
    suite_trend_p: float | None = None
    alpha: float = D.GATE_ALPHA
    stale: str | None = None
    requested: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("index")
        return d

    def lines(self) -> list[str]:
        """The summary lines: what was pooled, flaky and drifting scenarios (each with its p and n), staleness."""
        n = len(self.runs)
        asked = f" (asked for {self.requested}; the branch has {n})" if self.requested and self.requested > n else ""
        rates = ", ".join("n/a" if r is None else f"{r:.3f}" for r in self.suite_rates)
        out = [f"pooled baseline: {n} run(s){asked}, suite pass@1 per run {rates}; between-run variance per "
               "scenario as a random effect (effective trials shrink by the design effect)"]
        for key in self.flaky:
            h = self.scenarios[key]
            out.append(f"flaky: {key}: passes per run {'/'.join(map(str, h.passes))} of "
                       f"{'/'.join(map(str, h.trials))}, between-run variance beyond binomial noise "
                       f"(p={h.flaky_p:.3g}, Holm {h.flaky_p_holm:.3g}, rho {h.rho:.2f}, n={sum(h.trials)})")
        for key in self.drifting:
            h = self.scenarios[key]
            out.append(f"drift: {key}: pass rate trends over the runs {'/'.join(map(str, h.passes))} of "
                       f"{'/'.join(map(str, h.trials))} (Cochran-Armitage p={h.trend_p:.3g}, Holm {h.trend_p_holm:.3g})")
        if self.suite_trend_p is not None and self.suite_trend_p <= self.alpha:
            out.append(f"drift: the suite pass rate trends over the {n} runs (Mann-Kendall tau {self.suite_tau:+.2f}, "
                       f"p={self.suite_trend_p:.3g})")
        if self.stale:
            out.append(f"stale baseline: {self.stale}")
        return out


def _holm(ps: list[float]) -> list[float]:
    from whileai_core.measure.stats import holm_adjust

    return [float(x) for x in holm_adjust(np.asarray(ps))] if ps else []


def pool_runs(docs: Sequence[Mapping[str, Any]], *, names: Sequence[str] | None = None,
              alpha: float = D.GATE_ALPHA, permutations: int = D.HISTORY_PERMUTATIONS, seed: int = D.GATE_SEED,
              requested: int | None = None) -> History:
    """Pool run documents (oldest first) into one baseline, per scenario.

    Args:
        docs: run documents (``whileai_core.gate.document``), oldest first.
        names: a name per document for the summary (default "run 1".."run N").
        alpha: level of the flakiness and drift flags, each Holm-adjusted over the scenarios (default
            ``defaults.GATE_ALPHA`` = 0.05, Fisher's convention).
        permutations: reshuffles behind each flakiness p (default ``defaults.HISTORY_PERMUTATIONS`` = 2000;
            Monte Carlo conditional test of homogeneity, Agresti 2002 sec. 3.5.3).
        seed: seed of those reshuffles, so the same documents give the same p (default ``defaults.GATE_SEED`` = 0).
        requested: how many runs were asked for (the summary says when the branch had fewer).

    Returns:
        a ``History``; ``index[key]`` is the newest run's entry with the rewards of every pooled run and a
        ``pooled`` field (runs, passes, n_scored, rho, n_effective) the gate's per-scenario tests use.

    Raises:
        InvalidArgument: no documents, or ``alpha`` outside (0, 1).

    Example::

        hist = pool_runs([load_document(p) for p in paths])
        print("\\n".join(hist.lines()))
    """
    if not docs:
        raise InvalidArgument("docs= needs at least one run document to pool")
    alpha = arguments.fraction("alpha", alpha, closed=False)
    names = list(names) if names is not None else [f"run {i + 1}" for i in range(len(docs))]
    by_key: dict[str, list[Mapping[str, Any]]] = {}
    for doc in docs:
        for sc in doc.get("scenarios") or []:
            by_key.setdefault(str(sc["key"]), []).append(sc)
    scen: dict[str, ScenarioHistory] = {}
    index: dict[str, dict[str, Any]] = {}
    for key, entries in sorted(by_key.items()):
        newest = entries[-1]
        same = [e for e in entries if e.get("k") == newest.get("k") and e.get("judge") == newest.get("judge")]
        flags = [_flags(e) for e in same]
        passes, trials = [sum(f) for f in flags], [len(f) for f in flags]
        rho, n_eff = design_effect(passes, trials)
        total = sum(trials)
        rate = sum(passes) / total if total else None
        scen[key] = ScenarioHistory(key, passes, trials, rate, rho, n_eff,
                                    homogeneity_p(passes, trials, permutations=permutations, seed=seed),
                                    trend_p=trend_p(passes, trials))
        pooled = dict(newest)
        pooled["rewards"] = [r for e in same for r in e.get("rewards") or []]
        pooled["pooled"] = {"runs": len(same), "passes": sum(passes), "n_scored": total, "rho": rho,
                            "n_effective": n_eff}
        index[key] = pooled
    keys = list(scen)
    for name, attr, flag in (("flaky_p", "flaky_p_holm", "flaky"), ("trend_p", "trend_p_holm", "drifting")):
        for key, adj in zip(keys, _holm([getattr(scen[k], name) for k in keys])):
            setattr(scen[key], attr, adj)
            setattr(scen[key], flag, adj <= alpha)
    rates = []
    for doc in docs:
        flags = [f for sc in doc.get("scenarios") or [] for f in _flags(sc)]
        rates.append(sum(flags) / len(flags) if flags else None)  # None, not NaN: the run document is strict JSON
    tau, p = mann_kendall([r for r in rates if r is not None])
    return History(names, scen, index, [k for k in keys if scen[k].flaky], [k for k in keys if scen[k].drifting],
                   rates, tau, p, alpha, requested=requested)


def effective_counts(entry: Mapping[str, Any], pass_reward: float | None = None) -> tuple[int, int]:
    """(passes, trials) a per-scenario test may use for a baseline entry: its own counts, or for a pooled entry
    the pooled rate at the effective number of trials (rounded), so a flaky scenario's pooled runs count less."""
    pooled = entry.get("pooled")
    pr = float(entry.get("pass_reward", D.GATE_PASS_REWARD) if pass_reward is None else pass_reward)
    flags = [int(r >= pr) for r in entry.get("rewards") or [] if r is not None]
    if not isinstance(pooled, Mapping) or not flags:
        return sum(flags), len(flags)
    n = max(1, min(len(flags), int(round(float(pooled.get("n_effective", len(flags)))))))
    return int(round(sum(flags) / len(flags) * n)), n


def stale_note(created: str | None, commits_behind: int | None, *, now: datetime | None = None,
               max_days: float = D.STALE_DAYS, max_commits: int = D.STALE_COMMITS) -> str | None:
    """Why a baseline is stale (its newest run older than ``max_days``, or more than ``max_commits`` commits
    behind HEAD), or None. ``created``: the run document's UTC time ("2026-01-31T12:00:00Z")."""
    why = []
    if created:
        try:
            then = datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        except ValueError:
            then = None
        if then is not None:
            days = ((now or datetime.now(timezone.utc)) - then).total_seconds() / 86400
            if days > max_days:
                why.append(f"its newest run is {days:.1f} days old (> {max_days:g}, STALE_DAYS)")
    if commits_behind is not None and commits_behind > max_commits:
        why.append(f"it is {commits_behind} commits behind HEAD (> {max_commits}, STALE_COMMITS)")
    return "; ".join(why) + "; refresh it (autosave a run of the branch)" if why else None
