"""A branch's run history as a baseline: pooled per scenario, with the between-run variance measured on the runs
themselves, per-scenario flakiness, drift, and staleness.

* Pooled baseline: the last N runs of a scenario give one pass rate p = sum x_j / sum n_j. Runs vary beyond
  binomial noise in two ways, and both are measured (``measure.between_runs``): a run-level shift shared by
  every scenario, and a scenario's own run-to-run swing. The suite delta against the pooled runs must clear
  their noise band (``History.noise``, passed as ``delta_report(noise=)``): the prediction interval of one more
  run, t on N - 1 df, which holds its level whatever the split between the two. Per scenario, the intraclass
  correlation rho (one-way ANOVA estimator for binary data, Fleiss, Levin & Paik 2003, sec. 15.5) gives the
  pooled trials an effective count n_eff = sum n_j / (1 + (n0 - 1) rho) (Kish 1965 design effect) for the
  per-scenario tests, so pooling N runs never claims more certainty than N runs hold.
* Drift: when the suite pass rate trends over the runs (Mann-Kendall, exact under ties, at ``alpha``), pooling
  is refused: the baseline is the newest run alone (effective runs 1), while the band still carries the spread
  of every run. Per scenario, the Cochran-Armitage trend test over run order (Armitage 1955), Holm-adjusted.
* Flakiness: the between-run spread of one scenario beyond binomial noise, by the exact conditional test of
  homogeneity (``measure.exact``; Monte Carlo with enough draws where the exact lattice is too large),
  Holm-adjusted over the scenarios that can vary.
* Stale: the newest pooled run older than ``STALE_DAYS`` or more than ``STALE_COMMITS`` commits behind HEAD.

``pool_runs`` checks its documents strictly: a NaN reward, a key repeated in one document, or a key that is not
a string is an error naming the document and the field, never a silent drop or merge.
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
from whileai_core.errors import CorruptBaseline, InvalidArgument, InvalidArgumentType, NonFiniteReward
from whileai_core.measure.between_runs import RunVariance, between_run_variance, pooling_weights
from whileai_core.measure.exact import homogeneity_pvalues, mann_kendall_exact


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


def homogeneity_p(passes: Sequence[int], trials: Sequence[int], *, alpha: float = D.GATE_ALPHA,
                  seed: int = D.GATE_SEED) -> float:
    """Conditional p of "every run has one pass rate" for one scenario (``exact.homogeneity_pvalues``): exact
    where the lattice is small, else Monte Carlo with enough draws for ``alpha``. 1.0 when every trial agrees."""
    return float(homogeneity_pvalues([passes], [trials], alpha=alpha, seed=seed)[0][0])


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
    """(tau_b, two-sided p) of the Mann-Kendall trend test of ``values`` over their order: exact under ties up
    to ``MANN_KENDALL_EXACT_MAX`` values (``exact.mann_kendall_exact``). (None, None) below 3 values or for
    constant values."""
    tau, p, _ = mann_kendall_exact(values)
    return tau, p


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
    pooled entries (``index``, what the gate pairs with), the between-run variance and its noise band
    (``noise``), the flaky and drifting scenarios, the suite's drift, and staleness. ``lines()`` prints it,
    ``to_dict()`` is its JSON form (without ``index`` and ``noise``'s tables).

    Args:
        runs: a name per run given, oldest first.
        scenarios: each scenario's ``ScenarioHistory`` (passes and trials per run, pooled rate, rho, n_eff, the
            flakiness and trend p-values raw and Holm-adjusted) by scenario key.
        index: the pooled baseline entry per scenario key: the newest run's entry with the rewards of every run
            kept in the baseline and a ``pooled`` field (runs, passes, n_scored, rho, n_effective).
        noise: the between-run variance components and the band a suite delta must clear (``RunVariance``;
            pass it as ``delta_report(noise=)``), or ``None`` with fewer than 2 runs scoring a common scenario.
        kept: the names of the runs the baseline pools (every run, or the newest alone when pooling is refused).
        refused: why pooling was refused (the suite drifts), or ``None``.
        flaky: keys whose between-run spread exceeds binomial noise (Holm-adjusted p <= ``alpha``).
        drifting: keys whose pass rate trends over the runs (Cochran-Armitage, Holm-adjusted p <= ``alpha``).
        suite_rates: the suite pass@1 of each run (``None`` for a run with no scored trial).
        suite_tau: Kendall's tau of the suite pass rate over run order, on the scenarios every run scored
            (``None`` below 3 runs or for constant rates).
        suite_trend_p: its two-sided Mann-Kendall p, exact under ties (``None`` likewise).
        alpha: level of the flags and of the drift test (default ``defaults.GATE_ALPHA`` = 0.05).
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
    noise: RunVariance | None = None
    kept: list[str] = field(default_factory=list)
    refused: str | None = None
    flaky: list[str] = field(default_factory=list)
    drifting: list[str] = field(default_factory=list)
    suite_rates: list[float | None] = field(default_factory=list)
    suite_tau: float | None = None
    suite_trend_p: float | None = None
    alpha: float = D.GATE_ALPHA
    stale: str | None = None
    requested: int | None = None

    @property
    def n_effective_runs(self) -> float:
        """Effective number of runs behind the baseline (``RunVariance.n_effective``; the kept runs without one)."""
        return self.noise.n_effective if self.noise is not None else float(len(self.kept))

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k not in ("index", "noise")}
        d["n_effective_runs"] = self.n_effective_runs
        if self.noise is not None:
            d["noise"] = {"run_variance": self.noise.run, "scenario_variance": self.noise.scenario,
                          "binomial_variance": self.noise.binomial, "f_p": self.noise.f_p, "df": self.noise.df,
                          "run_sd": self.noise.sd(), "band": self.noise.band(), "band_ci": list(self.noise.band_ci()),
                          "n_scenarios": len(self.noise.keys), "level": self.noise.level}
        return d

    def lines(self) -> list[str]:
        """The summary lines: what was pooled (and the effective runs), the between-run variance and the band it
        puts on a suite delta, flaky and drifting scenarios (each with its p and n), staleness."""
        n = len(self.runs)
        asked = f" (asked for {self.requested}; the branch has {n})" if self.requested and self.requested > n else ""
        rates = ", ".join("n/a" if r is None else f"{r:.3f}" for r in self.suite_rates)
        out = [(f"pooled baseline: {n} run(s){asked}, suite pass@1 per run {rates}; {len(self.kept)} pooled, "
                f"effective runs {self.n_effective_runs:.1f}")]
        if self.refused:
            out.append(f"drift: pooling refused: {self.refused}")
        elif self.suite_trend_p is not None and self.suite_trend_p <= self.alpha:
            out.append(f"drift: the suite pass rate trends over the {n} runs (Mann-Kendall tau {self.suite_tau:+.2f}, "
                       f"p={self.suite_trend_p:.3g})")
        if self.noise is not None:
            out.append(str(self.noise))
        for key in self.flaky:
            h = self.scenarios[key]
            out.append(f"flaky: {key}: passes per run {'/'.join(map(str, h.passes))} of "
                       f"{'/'.join(map(str, h.trials))}, between-run variance beyond binomial noise "
                       f"(p={h.flaky_p:.3g}, Holm {h.flaky_p_holm:.3g}, rho {h.rho:.2f}, n={sum(h.trials)})")
        for key in self.drifting:
            h = self.scenarios[key]
            out.append(f"drift: {key}: pass rate trends over the runs {'/'.join(map(str, h.passes))} of "
                       f"{'/'.join(map(str, h.trials))} (Cochran-Armitage p={h.trend_p:.3g}, Holm {h.trend_p_holm:.3g})")
        if self.stale:
            out.append(f"stale baseline: {self.stale}")
        return out


def _holm(ps: list[float]) -> list[float]:
    from whileai_core.measure.stats import holm_adjust

    return [float(x) for x in holm_adjust(np.asarray(ps))] if ps else []


def _checked(docs: Any, names: Sequence[str] | None) -> tuple[list[list[Mapping[str, Any]]], list[str]]:
    """Each document's scenario entries, after checking every field ``pool_runs`` reads; anything off is an
    error naming the document (by its name) and the field."""
    if isinstance(docs, (str, bytes, Mapping)) or not isinstance(docs, Sequence):
        raise InvalidArgumentType(f"docs= is a list of run documents, oldest first; got {type(docs).__name__}")
    if not docs:
        raise InvalidArgument("docs= needs at least one run document to pool")
    names = list(names) if names is not None else [f"run {i + 1}" for i in range(len(docs))]
    if len(names) != len(docs):
        raise InvalidArgument(f"names= gives {len(names)} name(s) for {len(docs)} document(s); one per document")
    out = []
    for name, doc in zip(names, docs):
        if not isinstance(doc, Mapping):
            raise InvalidArgumentType(f"{name}: a run document is a dict; got {type(doc).__name__}")
        entries = doc.get("scenarios")
        if not isinstance(entries, list):
            raise CorruptBaseline(f"{name}: field 'scenarios' missing or not a list; pool only run documents")
        seen: dict[str, int] = {}
        for i, sc in enumerate(entries):
            where = f"{name}: scenarios[{i}]"
            if not isinstance(sc, Mapping):
                raise CorruptBaseline(f"{where} is not an object")
            key = sc.get("key")
            if not isinstance(key, str):
                raise CorruptBaseline(f"{where}.key is {key!r} ({type(key).__name__}); scenario keys are strings "
                                      "(1 and '1' would be one scenario or two by accident)")
            if key in seen:
                raise CorruptBaseline(f"{where}.key {key!r} repeats scenarios[{seen[key]}] of the same run; one run "
                                      "scores a scenario once (merge its rewards, or fix what wrote it)")
            seen[key] = i
            rewards = sc.get("rewards")
            if not isinstance(rewards, list):
                raise CorruptBaseline(f"{where}.rewards ({key!r}) missing or not a list")
            for j, r in enumerate(rewards):
                if isinstance(r, float) and not math.isfinite(r):
                    raise NonFiniteReward(f"{where} ({key!r}) has reward {r!r} at rewards[{j}]; NaN and infinity are "
                                          "not scores and are never counted as failures: write None for an unscored "
                                          "trial")
                if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r <= 1):
                    raise CorruptBaseline(f"{where} ({key!r}) has reward {r!r} at rewards[{j}], not a number in [0, 1]"
                                          " or None")
        out.append(entries)
    return out, names


def _table(per_key: dict[str, list[tuple[int, Mapping[str, Any]]]], n_runs: int) -> tuple[list[str], np.ndarray,
                                                                                        np.ndarray]:
    """The scenarios scored in every run (same k and judge as the newest entry): keys, passes and trials."""
    keys, passes, trials = [], [], []
    for key, entries in per_key.items():
        flags = {j: _flags(e) for j, e in entries}
        if len(entries) == n_runs and all(flags[j] for j in range(n_runs)):
            keys.append(key)
            passes.append([sum(flags[j]) for j in range(n_runs)])
            trials.append([len(flags[j]) for j in range(n_runs)])
    shape = (len(keys), n_runs)
    return keys, np.array(passes, dtype=float).reshape(shape), np.array(trials, dtype=float).reshape(shape)


def _between_runs(per_key: dict[str, list[tuple[int, Mapping[str, Any]]]], names: list[str], alpha: float
                  ) -> tuple[RunVariance | None, np.ndarray, float | None, float | None, str | None]:
    """The between-run variance of the runs on the scenarios they all scored, the runs' weights (the newest
    alone when the suite drifts), Mann-Kendall's tau and p on those scenarios, and why pooling was refused."""
    n = len(names)
    keys, passes, trials = _table(per_key, n)
    weights = np.ones(n)
    if not keys or n < 2:
        return None, weights, None, None, None
    rates = (passes / trials).mean(axis=0)
    tau, p = mann_kendall(rates.tolist())
    refused = None
    if n >= 3:
        weights = pooling_weights(rates, alpha=alpha)[0]
        if weights[0] == 0:
            refused = (f"the suite pass rate trends over the {n} runs on the {len(keys)} scenarios they all scored "
                       f"(Mann-Kendall tau {tau:+.2f}, exact p={p:.3g} <= alpha {alpha:g}); the baseline is the newest "
                       f"run, {names[-1]}, and the noise band still carries every run's spread")
    missing = len(per_key) - len(keys)
    note = f"{missing} scenario(s) not scored in every run are left out of it" if missing else None
    return between_run_variance(keys, passes, trials, weights=weights, note=note), weights, tau, p, refused


def pool_runs(docs: Sequence[Mapping[str, Any]], *, names: Sequence[str] | None = None,
              alpha: float = D.GATE_ALPHA, seed: int = D.GATE_SEED, requested: int | None = None) -> History:
    """Pool run documents (oldest first) into one baseline, per scenario, with the between-run variance it carries.

    The store decides which runs come in (complete green runs); this call pools what it is given, refuses to pool
    a drifting suite (the newest run alone is then the baseline), and measures the run-level and scenario-level
    variance behind the band a suite delta must clear (``History.noise``).

    Args:
        docs: run documents (``whileai_core.gate.document``), oldest first.
        names: a name per document for the summary and the error messages (default "run 1".."run N").
        alpha: level of the drift test (which refuses pooling) and of the flakiness and per-scenario drift flags,
            each Holm-adjusted over the scenarios (default ``defaults.GATE_ALPHA`` = 0.05, Fisher's convention).
        seed: seed of the Monte Carlo flakiness p where the exact one is too large (default ``defaults.GATE_SEED``).
        requested: how many runs were asked for (the summary says when the branch had fewer).

    Returns:
        a ``History``; ``index[key]`` is the newest run's entry with the rewards of the kept runs and a ``pooled``
        field (runs, passes, n_scored, rho, n_effective) the gate's per-scenario tests use; ``noise`` the band.

    Raises:
        InvalidArgument: no documents, ``names`` of another length, or ``alpha`` outside (0, 1).
        InvalidArgumentType: ``docs`` not a list of dicts (a ``TypeError``).
        CorruptBaseline: a document without a ``scenarios`` list, a scenario key that is not a string, a key
            repeated in one document, rewards that are not a list of numbers in [0, 1] or None (a ``ValueError``).
        NonFiniteReward: a NaN or infinite reward (a ``CorruptBaseline``): never counted as a pass or a failure.

    Example::

        hist = pool_runs([load_document(p) for p in paths])
        print("\\n".join(hist.lines()))
        gate = delta_report(before_rows, after_rows, noise=hist.noise)
    """
    alpha = arguments.fraction("alpha", alpha, closed=False)
    entries_by_doc, names = _checked(docs, names)
    per_key: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
    for j, entries in enumerate(entries_by_doc):
        for sc in entries:
            per_key.setdefault(sc["key"], []).append((j, sc))
    for key, seen in per_key.items():
        newest = seen[-1][1]
        per_key[key] = [(j, e) for j, e in seen if e.get("k") == newest.get("k") and
                        e.get("judge") == newest.get("judge")]
    per_key = dict(sorted(per_key.items()))
    noise, weights, tau, trend, refused = _between_runs(per_key, names, alpha)
    scen, index = _scenarios(per_key, weights > 0, alpha=alpha, seed=seed)
    rates = []
    for entries in entries_by_doc:
        flags = [f for sc in entries for f in _flags(sc)]
        rates.append(sum(flags) / len(flags) if flags else None)  # None, not NaN: the run document is strict JSON
    keys = list(scen)
    return History(names, scen, index, noise, [nm for nm, w in zip(names, weights) if w > 0], refused,
                   [k for k in keys if scen[k].flaky], [k for k in keys if scen[k].drifting], rates, tau, trend,
                   alpha, requested=requested)


def _scenarios(per_key: dict[str, list[tuple[int, Mapping[str, Any]]]], kept: np.ndarray, *, alpha: float,
               seed: int) -> tuple[dict[str, ScenarioHistory], dict[str, dict[str, Any]]]:
    """Each scenario's history over every run (flakiness and trend, Holm-adjusted) and its pooled entry over the
    kept runs."""
    scen: dict[str, ScenarioHistory] = {}
    index: dict[str, dict[str, Any]] = {}
    for key, entries in per_key.items():
        flags = [_flags(e) for _, e in entries]
        passes, trials = [sum(f) for f in flags], [len(f) for f in flags]
        pooled_entries = [e for j, e in entries if kept[j]] or [entries[-1][1]]
        kept_flags = [_flags(e) for e in pooled_entries]
        rho, n_eff = design_effect([sum(f) for f in kept_flags], [len(f) for f in kept_flags])
        total = sum(trials)
        scen[key] = ScenarioHistory(key, passes, trials, sum(passes) / total if total else None, rho, n_eff, 1.0,
                                    trend_p=trend_p(passes, trials))
        pooled = dict(entries[-1][1])
        pooled["rewards"] = [r for e in pooled_entries for r in e.get("rewards") or []]
        pooled["pooled"] = {"runs": len(pooled_entries), "passes": sum(map(sum, kept_flags)),
                            "n_scored": sum(map(len, kept_flags)), "rho": rho, "n_effective": n_eff}
        index[key] = pooled
    keys = list(scen)
    flaky_p, _ = homogeneity_pvalues([scen[k].passes for k in keys], [scen[k].trials for k in keys], alpha=alpha,
                                     seed=seed)
    can_vary = [k for k in keys if len(scen[k].trials) >= 2 and 0 < sum(scen[k].passes) < sum(scen[k].trials)]
    for key, p in zip(keys, flaky_p):
        scen[key].flaky_p = float(p)
    for key, adj in zip(can_vary, _holm([scen[k].flaky_p for k in can_vary])):
        scen[key].flaky_p_holm = adj
        scen[key].flaky = adj <= alpha
    for key, adj in zip(keys, _holm([scen[k].trend_p for k in keys])):
        scen[key].trend_p_holm = adj
        scen[key].drifting = adj <= alpha
    return scen, index


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
