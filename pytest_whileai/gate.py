"""The statistics the plugin applies, built on ``whileai_core.measure.measure`` and ``whileai_core.measure.stats``.

* Per scenario (one test item): the pass rate with a Wilson interval, a floor (``min_pass_rate``: the item
  fails only when the whole interval lies below it), and a one-sided exact test (Fisher's, from the
  hypergeometric tail) of "fewer passes than the baseline". Judging scenarios one by one is a family of
  tests, so drops are held to Holm (1979) at level alpha/2 one-sided: an item fails at run time only at
  Holm's first (Bonferroni) threshold alpha/(2m), and the session gate then applies the full Holm step-down.
* Per scenario against its baseline: the delta of pass@1 with Newcombe's (1998) hybrid score interval for a
  difference of two independent proportions (the two runs' trials), the baseline's rate with its Wilson interval.
* The suite gate: ``measure.delta_report`` on the scenarios both runs share (paired by scenario key,
  scenario-bootstrap interval, sign-flip permutation p), ``min_effect=max_drop``; each side's pass@1 prints with
  its scenario-bootstrap interval (trials within a scenario are not independent, so not Wilson over trials). It is red only on a
  "worse" verdict (interval excludes 0, p <= alpha, drop >= max_drop) or a Holm-significant scenario drop,
  and on an incompatible baseline; noise stays green.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_whileai.lines import fmt, fmt_ci, fmt_p, summary_line, trouble_lines
from pytest_whileai.markers import Thresholds
from pytest_whileai.store import scenario_incompatibility
from whileai_core import defaults as D
from whileai_core.measure.stats import fisher_drop_pvalues as drop_p_values
from whileai_core.measure.stats import holm_adjust, newcombe_interval, wilson_interval

RED_STATUSES = ("regression", "incompatible", "incomplete")  # always red; "unpaired" is red under --wai-require-baseline


def binarize(rewards: Sequence[float | None], pass_reward: float = D.GATE_PASS_REWARD) -> list[int]:
    """Scored trials as 0|1 (reward >= pass_reward passes); unscored (None) trials are left out."""
    return [int(r >= pass_reward) for r in rewards if r is not None]


def metric_interval(metric: str, passes: int, n: int, k: int, level: float) -> tuple[float | None, list[float] | None]:
    """The per-scenario estimate and interval of ``metric`` from ``passes`` of ``n`` scored trials.

    The estimate is the one ``wai.pass_at`` reports: pass@1 is p = passes/n; pass^k and pass@k are the unbiased
    estimators C(c,k)/C(n,k) (Yao et al. 2024) and 1 - C(n-c,k)/C(n,k) (Chen et al. 2021) of
    ``whileai_core.measure.stats`` (None when fewer than k trials were scored: they need n >= k).
    The interval is the Wilson interval of p mapped through p^k or 1-(1-p)^k: the map is monotone, so the image
    is an interval for pass^k / pass@k at the same level. The unbiased estimate can fall outside it (7/8 at k=8
    estimates pass^k = 0 while the interval is [0.006, 0.83]); the interval is then widened to contain the
    estimate, and a superset of a confidence interval keeps its coverage.
    """
    from whileai_core.measure import stats

    if n == 0:
        return None, None
    lo, hi = stats.wilson_interval(passes, n, level=level)  # type: ignore[misc]
    if metric not in ("pass^k", "pass@k"):
        return passes / n, [lo, hi]
    if metric == "pass^k":
        ci = [lo**k, hi**k]
        value = float(stats.pass_pow_k([n], [passes], k)[0]) if n >= k else None
    else:
        ci = [1 - (1 - lo) ** k, 1 - (1 - hi) ** k]
        value = float(stats.pass_at_k([n], [passes], k)[0]) if n >= k else None
    if value is not None:
        ci = [min(ci[0], value), max(ci[1], value)]
    return value, ci


def _no_scored_trial(rewards: Sequence[float | None], judge_errors: int, judge_error: str | None,
                     infra_errors: int, infra_error: str | None) -> str:
    """Why no trial was scored, naming each cause with its count and first error text."""
    causes = []
    if infra_errors:
        causes.append(f"{infra_errors} infra error(s), the backend failed" + (f": {infra_error}" if infra_error else ""))
    if judge_errors:
        causes.append(f"{judge_errors} judge error(s), the judge raised" + (f": {judge_error}" if judge_error else ""))
    abstained = len(rewards) - infra_errors - judge_errors
    if abstained > 0:
        causes.append(f"{abstained} abstention(s), the judge returned no reward")
    return f"no trial was scored ({'; '.join(causes)}); a scenario with no scored trial is an error, not a pass"


def judge_scenario(*, key: str, nodeid: str, rewards: Sequence[float | None], k: int, seed: int,
                   judge: str | None, errors: int, pass_reward: float, level: float, thresholds: Thresholds,
                   baseline: Mapping[str, Any] | None, baseline_note: str | None, settings: Any, family: int,
                   trial_index: int | None, scenario: Any, location: list[Any], agent_error: str | None = None,
                   judge_errors: int = 0, judge_error: str | None = None, infra_errors: int = 0,
                   infra_error: str | None = None) -> dict[str, Any]:
    """The JSON entry of one scenario's run, with its failures (empty when it met every threshold).

    ``errors`` trials raised in the agent (scored as failed, reward 0), ``judge_errors`` raised in the judge and
    ``infra_errors`` met a failed backend (both unscored); each ``*_error`` is the first one's text."""
    scored = [r for r in rewards if r is not None]
    flags = binarize(scored, pass_reward)
    passes, n_scored = sum(flags), len(flags)
    metric = thresholds.metric
    value, ci = metric_interval(metric, passes, n_scored, k, level)
    max_drop = thresholds.max_drop if thresholds.max_drop is not None else settings.max_drop
    entry: dict[str, Any] = {
        "key": key, "nodeid": nodeid, "k": k, "seed": seed, "judge": judge,
        "rewards": [None if r is None else float(r) for r in rewards],
        "trial_indices": [trial_index] if trial_index is not None else list(range(len(rewards))),
        "pass_reward": pass_reward, "passes": passes, "n_scored": n_scored, "unscored": len(rewards) - n_scored,
        "errors": errors, "agent_error": agent_error, "judge_errors": judge_errors, "judge_error": judge_error,
        "infra_errors": infra_errors, "infra_error": infra_error,
        "pass_rate": passes / n_scored if n_scored else None, "metric": metric, "value": value,
        "ci": ci, "level": level, "min_pass_rate": thresholds.min_pass_rate, "max_drop": max_drop,
        "baseline": None, "baseline_note": None, "delta": None, "delta_ci": None, "p_value": None, "failures": [],
        "scenario_id": getattr(scenario, "task_id", None), "scenario": dict(getattr(scenario, "scenario", {}) or {}),
        "prompt": None if scenario is None else str(scenario)[:300], "location": location,
    }
    failures: list[str] = entry["failures"]
    if n_scored == 0:
        failures.append(_no_scored_trial(rewards, judge_errors, judge_error, infra_errors, infra_error))
    elif errors >= n_scored:
        failures.append(f"the agent raised on every scored trial ({errors} of {len(rewards)})"
                        + (f": {agent_error}" if agent_error else ""))
    if thresholds.min_pass_rate is not None and ci is not None and ci[1] < thresholds.min_pass_rate:
        failures.append(f"{metric} {fmt(value)} {fmt_ci(ci)}: the whole interval lies below "
                        f"min_pass_rate={thresholds.min_pass_rate:g}")
    if trial_index is not None:
        entry["baseline_note"] = "reproduce mode (--wai-trial-index): no baseline comparison"
        return entry
    if baseline is None:
        entry["baseline_note"] = "none stored for this key" if baseline_note is None else "no baseline run"
        return entry
    why = scenario_incompatibility(baseline, entry)
    if why is not None:
        entry["baseline_note"] = f"not comparable: {why}"
        failures.append(f"cannot compare with the baseline: {why}")
        return entry
    b_flags = binarize(baseline.get("rewards", []), pass_reward)
    b_pass, b_n = sum(b_flags), len(b_flags)
    b_ci = wilson_interval(b_pass, b_n, level=level)
    entry["baseline"] = {"passes": b_pass, "n_scored": b_n, "pass_rate": b_pass / b_n if b_n else None,
                         "ci": None if b_ci is None else list(b_ci)}
    if b_n and n_scored:
        delta = passes / n_scored - b_pass / b_n
        entry["delta_ci"] = list(newcombe_interval(passes, n_scored, b_pass, b_n, level=level))  # type: ignore[arg-type]
        p = float(drop_p_values(b_pass, b_n, passes, n_scored))
        entry["delta"], entry["p_value"] = delta, p
        threshold = settings.alpha / 2 / max(1, family)
        entry["p_threshold"] = threshold
        if p <= threshold and -delta >= max_drop:
            failures.append(f"pass@1 dropped {delta:+.2f} vs the baseline (one-sided exact p={p:.3g} <= "
                            f"alpha/2/m = {settings.alpha:g}/2/{family}), beyond max_drop={max_drop:g}")
    return entry


def failure_message(entry: Mapping[str, Any], *, baseline_name: str | None) -> str:
    """The per-test failure text: counts, interval, baseline, delta, trials, what raised, and a reproduce line."""
    lines = [f"whileai: {entry.get('nodeid')} did not meet its thresholds", "  " + summary_line(entry)]
    if baseline_name and entry.get("baseline"):
        lines.append(f"  baseline: {baseline_name}")
    rewards = entry.get("rewards") or []
    lines.append("  trials: " + " ".join("-" if r is None else f"{r:g}" for r in rewards))
    lines.extend(f"  - {f}" for f in entry.get("failures") or [])
    lines.extend(f"  - {t}" for t in trouble_lines(entry, skip=" ".join(entry.get("failures") or [])))
    first_bad = next((i for i, r in zip(entry.get("trial_indices") or [], rewards)
                      if r is None or r < entry.get("pass_reward", D.GATE_PASS_REWARD)), None)
    repro = f"  reproduce: pytest \"{entry.get('nodeid')}\" --wai-seed={entry.get('seed')}"
    if first_bad is not None:
        repro += f" --wai-trial-index={first_bad}  (first failing trial)"
    lines.append(repro)
    return "\n".join(lines)


def unsaveable(results: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Why these results must not be saved as a baseline (``None`` when they may): a scenario with no scored
    trial can never pair, so a later regression on it would be green."""
    empty = [key for key, e in sorted(results.items()) if not e.get("n_scored")]
    if not results:
        return "the run has no whileai result"
    if not empty:
        return None
    e = results[empty[0]]
    why = trouble_lines(e) or ["the judge returned no reward"]
    return (f"{len(empty)} of {len(results)} scenario(s) have no scored trial (e.g. {empty[0]}: {why[0]}); "
            "a baseline must score every scenario: fix the cause and run again")


def require_saveable(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` unchanged, or a ValueError naming why it cannot be a baseline (see ``unsaveable``)."""
    why = unsaveable({str(sc.get("key")): sc for sc in doc.get("scenarios") or []})
    if why is not None:
        raise ValueError(f"refusing to save this run as a baseline: {why}")
    return doc


@dataclass
class Gate:
    """The suite verdict: paired delta vs the baseline plus the Holm-corrected scenario drops."""

    status: str  # regression | incompatible | unpaired | incomplete | ok | improved | not evaluated | off
    red: bool
    message: str
    baseline: str | None = None
    n_paired: int = 0
    delta: float | None = None
    ci: list[float] | None = None
    p_value: float | None = None
    before: float | None = None
    after: float | None = None
    before_ci: list[float] | None = None  # each side's scenario-bootstrap interval (the delta's draws)
    after_ci: list[float] | None = None
    verdict: str | None = None  # delta_report's
    reason: str | None = None
    scenario_regressions: list[str] = field(default_factory=list)
    holm: dict[str, float] = field(default_factory=dict)
    holm_reach: dict[str, Any] | None = None  # can a scenario drop reach Holm significance at this k? (holm_reach())
    incompatible: dict[str, str] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    level: float = D.CI_LEVEL
    alpha: float = D.GATE_ALPHA
    max_drop: float = D.GATE_MAX_DROP
    trials_needed: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    warning: str | None = None  # too few scenarios paired with the baseline (loud; red under --wai-require-baseline)
    paired_share: float | None = None
    failed_workers: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return self.message


def _listed(ci: Any) -> list[float] | None:
    return None if ci is None else [float(x) for x in ci]


def _delta_text(rep: Any, trials: tuple[int, int]) -> str:
    """The suite line: each side's pass@1 and the delta, every one with its scenario-bootstrap interval, and n
    (paired scenarios, and the scored trials behind them on each side)."""
    def side(value: Any, ci: Any) -> str:
        flat = ci is not None and ci[0] == ci[1]
        return f"{fmt(value, 3)} {fmt_ci(ci, 3)}" + (" (zero width: every paired scenario has this rate)" if flat else "")

    return (f"pass@1 {side(rep.before, rep.before_ci)} -> {side(rep.after, rep.after_ci)}, "
            f"delta {fmt(rep.delta, 3, signed=True)} {fmt_ci(rep.ci, 3, signed=True)} "
            f"({round(rep.level * 100)}% scenario bootstrap), permutation p={fmt_p(rep.p_value)}, "
            f"n={rep.n_paired} paired scenarios ({trials[0]} -> {trials[1]} scored trials)")


def trials_needed(results: Mapping[str, Mapping[str, Any]], *, drop: float, power: float, alpha: float) -> dict[str, Any] | None:
    """How many scenarios (at this k) a suite needs to detect a pass@1 drop of ``drop`` (measure.holdout_size)."""
    from whileai_core.measure.measure import holdout_size

    rates = [e["pass_rate"] for e in results.values() if e.get("pass_rate") is not None]
    ks = [int(e["k"]) for e in results.values()]
    if not rates or not 0 < drop < 1:
        return None
    k = min(ks)
    p = sum(rates) / len(rates)
    base = min(max(p - drop, 0.0), 1.0 - drop)
    size = holdout_size(drop, base=base, k=k, power=power, alpha=alpha)
    return {"drop": drop, "k": k, "power": power, "alpha": alpha, "scenarios_needed": int(size),
            "scenarios_here": len(rates), "text": str(size)}


def pairing(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]]
            ) -> tuple[list[str], int]:
    """The keys that pair (in both runs, with scored trials on both sides) and how many could have paired.

    Could pair = the smaller of this run's and the baseline's scenario counts, so a ``-k`` subset or a shrunk
    suite is not "unpaired", while a baseline from another suite or re-keyed scenarios are.
    """
    paired = [k for k in sorted(results) if k in baseline_index and results[k].get("n_scored") and
              binarize(baseline_index[k].get("rewards", []), results[k].get("pass_reward", D.GATE_PASS_REWARD))]
    return paired, min(len(results), len(baseline_index))


def pairing_warning(n_paired: int, could: int, *, n_run: int, n_baseline: int, min_share: float) -> str | None:
    """The loud line when fewer than ``min_share`` of the scenarios that could pair did (None when enough did)."""
    share = n_paired / could if could else 0.0
    if could and share >= min_share:
        return None
    return (f"only {n_paired} of {could} scenario(s) that could pair with the baseline did ({share:.0%} < "
            f"{min_share:.0%}, --wai-min-paired-share; this run has {n_run} scenario(s), the baseline {n_baseline}): "
            f"is the baseline from another suite, or did the scenario keys change?")


def min_drop_p(before_n: int, after_n: int) -> float:
    """The smallest one-sided exact (Fisher) p a drop can reach with these scored trial counts: all before_n
    baseline trials passed and none of the after_n now, p = 1/C(before_n + after_n, before_n)."""
    return 1.0 / math.comb(before_n + after_n, before_n)


def holm_reach(counts: Sequence[tuple[int, int]], *, alpha: float) -> dict[str, Any]:
    """Whether any of the m scenario drops (``counts``: (before_n, after_n) each) can be flagged by Holm at
    alpha/2: only if the smallest attainable p clears Holm's first threshold alpha/(2m). With the text to print
    when it cannot, and ``k_needed``, the smallest k (trials on both sides) that would make it possible."""
    m = len(counts)
    threshold = alpha / 2 / max(1, m)
    best = min((min_drop_p(b, a) for b, a in counts), default=1.0)
    k_needed = 1
    while min_drop_p(k_needed, k_needed) > threshold:
        k_needed += 1
    b, a = min(counts, key=lambda c: min_drop_p(*c), default=(0, 0))
    text = (f"no single scenario can be flagged by Holm here: with {b} baseline vs {a} scored trials the smallest "
            f"one-sided exact p of a drop is 1/C({a + b},{b}) = {best:.3g}, above Holm's first threshold "
            f"alpha/2/m = {alpha:g}/2/{m} = {threshold:.3g}; k >= {k_needed} trials would make it possible "
            "(the suite delta still gates this run)")
    return {"possible": best <= threshold, "min_p": best, "threshold": threshold, "m": m, "k_needed": k_needed,
            "text": text}


def scenario_drops(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]],
                   paired: Sequence[str], *, alpha: float, max_drop: float
                   ) -> tuple[dict[str, float], list[str], dict[str, Any]]:
    """Scenario by scenario: one-sided exact drops, Holm at alpha/2, each scenario binarized at its own
    pass_reward on both sides. Returns the Holm-adjusted p by key, the keys flagged, and ``holm_reach``."""
    import numpy as np

    before = [binarize(baseline_index[k]["rewards"], results[k].get("pass_reward", D.GATE_PASS_REWARD))
              for k in paired]
    bp = np.array([sum(flags) for flags in before])
    bn = np.array([len(flags) for flags in before])
    ap = np.array([results[k]["passes"] for k in paired])
    an = np.array([results[k]["n_scored"] for k in paired])
    adjusted = holm_adjust(drop_p_values(bp, bn, ap, an))
    holm = {k: float(v) for k, v in zip(paired, adjusted)}
    drops = ap / an - bp / bn
    flagged = [k for k, adj, d in zip(paired, adjusted, drops)
               if adj <= alpha / 2 and -d >= float(results[k].get("max_drop", max_drop))]
    return holm, flagged, holm_reach(list(zip(bn.tolist(), an.tolist())), alpha=alpha)


def compute_gate(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]] | None,
                 *, baseline_name: str | None, settings: Any, baseline_note: str | None = None,
                 min_paired_share: float = D.GATE_MIN_PAIRED_SHARE, require_baseline: bool = False,
                 failed_workers: Sequence[str] = ()) -> Gate:
    """The suite gate over the results of this session (only the scenarios that ran are judged).

    ``require_baseline`` makes a gate that cannot be evaluated (too few pairs) red; ``failed_workers`` (xdist
    workers that crashed) makes it red as ``incomplete`` unless it is red already.
    """
    gate = _suite_gate(results, baseline_index, baseline_name=baseline_name, settings=settings,
                       baseline_note=baseline_note, min_paired_share=min_paired_share,
                       require_baseline=require_baseline)
    if failed_workers:
        crash = (f"xdist worker(s) {', '.join(failed_workers)} crashed; the {len(results)} scenario(s) that finished "
                 "are reported, and this partial run is not saved as a baseline")
        gate.failed_workers = list(failed_workers)
        if gate.red:
            gate.message += f"; INCOMPLETE: {crash}"
        else:
            gate.status, gate.red, gate.message = "incomplete", True, f"INCOMPLETE: {crash} ({gate.message})"
    return gate


def _suite_gate(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]] | None,
                *, baseline_name: str | None, settings: Any, baseline_note: str | None, min_paired_share: float,
                require_baseline: bool) -> Gate:
    common: dict[str, Any] = dict(baseline=baseline_name, level=settings.level, alpha=settings.alpha,
                                  max_drop=settings.max_drop)
    plan = None
    try:
        plan = trials_needed(results, drop=settings.max_drop, power=settings.power, alpha=settings.alpha)
    except ValueError:
        plan = None
    common["trials_needed"] = plan
    if settings.trial_index is not None:
        return Gate("off", False, "gate off: reproduce mode (--wai-trial-index runs one trial per scenario)", **common)
    if baseline_index is None:
        why = baseline_note or "no --wai-baseline given"
        return Gate("not evaluated", require_baseline, f"gate not evaluated: {why}", **common)
    keys = sorted(results)
    common.update(new=[k for k in keys if k not in baseline_index],
                  not_run=sorted(k for k in baseline_index if k not in results))
    incompatible = {}
    for k in keys:
        if k in baseline_index:
            reason = scenario_incompatibility(baseline_index[k], results[k])
            if reason:
                incompatible[k] = reason
    if incompatible:
        first = next(iter(incompatible.items()))
        msg = (f"REFUSED: the baseline is not comparable for {len(incompatible)} scenario(s), e.g. {first[0]}: "
               f"{first[1]}")
        return Gate("incompatible", True, msg, incompatible=incompatible, **common)
    paired, could = pairing(results, baseline_index)
    warning = pairing_warning(len(paired), could, n_run=len(results), n_baseline=len(baseline_index),
                              min_share=min_paired_share)
    common.update(warning=warning, paired_share=len(paired) / could if could else 0.0)
    strict = " (red: --wai-require-baseline)" if require_baseline else ""
    if len(paired) < D.GATE_MIN_PAIRED:
        status = "unpaired" if warning else "not evaluated"
        text = f"gate not evaluated: {len(paired)} scenario(s) pair with the baseline (need >= {D.GATE_MIN_PAIRED})"
        return Gate(status, require_baseline, (f"UNPAIRED: {warning}; " if warning else "") + text + strict,
                    n_paired=len(paired), **common)
    gate = _paired_gate(results, baseline_index, paired, settings=settings, common=common)
    if warning and not gate.red:
        gate.status, gate.red = "unpaired", require_baseline
        gate.message = f"UNPAIRED: {warning}; {gate.message}{strict}"
    return gate


def _paired_gate(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]],
                 paired: list[str], *, settings: Any, common: dict[str, Any]) -> Gate:
    """The suite delta and the Holm scenario drops over the paired scenarios."""
    from whileai_core.measure.measure import delta_report

    before_rows, after_rows = [], []
    for k in paired:
        pr = results[k].get("pass_reward", D.GATE_PASS_REWARD)
        for i, r in enumerate(binarize(baseline_index[k]["rewards"], pr)):
            before_rows.append({"task_id": k, "rollout_index": i, "reward": r})
        for i, r in enumerate(binarize(results[k]["rewards"], pr)):
            after_rows.append({"task_id": k, "rollout_index": i, "reward": r})
    rep = delta_report(before_rows, after_rows, level=settings.level, draws=settings.draws,
                       permutations=settings.permutations, seed=settings.seed, alpha=settings.alpha,
                       min_effect=settings.max_drop)
    holm, scen_reg, reach = scenario_drops(results, baseline_index, paired, alpha=settings.alpha,
                                           max_drop=settings.max_drop)
    suite_red = rep.verdict == "worse"
    fields: dict[str, Any] = dict(n_paired=rep.n_paired, delta=rep.delta, ci=_listed(rep.ci), p_value=rep.p_value,
                  before=rep.before, after=rep.after, before_ci=_listed(rep.before_ci),
                  after_ci=_listed(rep.after_ci), verdict=rep.verdict, reason=rep.reason,
                  scenario_regressions=scen_reg, holm=holm, holm_reach=reach, report=rep.to_dict())
    text = _delta_text(rep, (len(before_rows), len(after_rows)))
    if suite_red or scen_reg:
        parts = []
        if suite_red:
            parts.append(f"{text}; the drop clears the noise and max_drop={settings.max_drop:g}")
        if scen_reg:
            parts.append(f"{len(scen_reg)} scenario(s) dropped significantly after Holm correction "
                         f"(alpha/2={settings.alpha / 2:g}): {', '.join(scen_reg[:5])}"
                         + (" ..." if len(scen_reg) > 5 else ""))
        return Gate("regression", True, "REGRESSION: " + "; ".join(parts), **fields, **common)
    if rep.verdict == "better":
        return Gate("improved", False, f"improved: {text}", **fields, **common)
    why = rep.reason or "no significant change"
    return Gate("ok", False, f"no regression: {text} ({why})", **fields, **common)


def finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def compare_documents(baseline: Mapping[str, Any], current: Mapping[str, Any], *, level: float = D.CI_LEVEL,
                      alpha: float = D.GATE_ALPHA, max_drop: float = D.GATE_MAX_DROP,
                      draws: int = D.BOOTSTRAP_DRAWS, permutations: int = D.GATE_PERMUTATIONS,
                      seed: int = D.GATE_SEED, power: float = D.GATE_POWER,
                      baseline_name: str | None = None, min_paired_share: float = D.GATE_MIN_PAIRED_SHARE,
                      current_name: str | None = None) -> Gate:
    """The suite gate between two stored run documents, outside pytest (e.g. from a CLI or a notebook).

    Gives what the plugin computed at the end of the session that wrote ``current`` when the settings match.
    Raises ``store.CorruptBaseline`` for a document that is not a valid run document (``store.NonFiniteReward``
    for a NaN or infinite reward, naming the scenario key and the reward's index: never counted as a failure)
    and ``store.IncompatibleBaseline`` for another schema major or config fingerprint.
    """
    from types import SimpleNamespace

    from pytest_whileai.store import check_compatible, validate_document

    validate_document(baseline, source=baseline_name or "baseline")
    validate_document(current, source=current_name or "current")
    check_compatible(baseline, fingerprint_now=current.get("fingerprint") or {}, source=baseline_name or "baseline")
    settings = SimpleNamespace(level=level, alpha=alpha, max_drop=max_drop, draws=draws, permutations=permutations,
                               seed=seed, power=power, trial_index=None)
    results = {sc["key"]: sc for sc in current.get("scenarios", [])}
    index = {sc["key"]: sc for sc in baseline.get("scenarios", [])}
    return compute_gate(results, index, baseline_name=baseline_name, settings=settings,
                        min_paired_share=min_paired_share)
