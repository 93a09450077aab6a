"""The suite gate between two runs: is the current run significantly worse than its baseline?

The verdict is ``measure.compare``'s (the object users call), with ``task_drops=`` the scenario counts:

* The suite delta: ``measure.delta_report`` on the scenarios both runs share (paired by scenario key,
  scenario-bootstrap interval, sign-flip permutation p), ``min_effect=max_drop``. Red only on a "worse" verdict
  (interval excludes 0, p <= alpha, drop >= max_drop); noise stays green.
* Scenario by scenario: one-sided exact (Fisher) drops, held to Holm (1979) at alpha/2, each scenario
  binarized at its own pass_reward on both sides.
* Refused (red) on an incompatible baseline; loud (red under ``require_baseline``) when too few scenarios pair.

``compute_gate`` judges per-scenario results (the plugin's entries); ``compare_documents`` judges two stored
run documents, outside pytest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from whileai_core import defaults as D
from whileai_core.gate import document
from whileai_core.gate.document import scenario_incompatibility
from whileai_core.gate.text import fmt, fmt_ci, p_eq
from whileai_core.measure.compare import compare  # the gate's verdict is compare's
from whileai_core.measure.stats import fisher_drop_pvalues, newcombe_interval


def binarize(rewards: Sequence[float | None], pass_reward: float = D.GATE_PASS_REWARD) -> list[int]:
    """Scored trials as 0|1 (reward >= pass_reward passes); unscored (None) trials are left out."""
    return [int(r >= pass_reward) for r in rewards if r is not None]


#: the gate's status: red ones (regression, incompatible, incomplete; unpaired and not evaluated under
#: --wai-require-baseline), failed (green gate, a scenario missed its own thresholds), and the rest green or grey
GateStatus = Literal["regression", "incompatible", "unpaired", "incomplete", "failed", "ok", "improved",
                     "not evaluated", "off"]


@dataclass(frozen=True)
class GateSettings:
    """What the suite gate reads of a run's settings. The plugin builds it from its ``Settings``
    (``GateSettings.of``), ``compare_documents`` from its keywords; the defaults are ``defaults.py``'s."""

    level: float = D.CI_LEVEL
    alpha: float = D.GATE_ALPHA
    max_drop: float = D.GATE_MAX_DROP
    draws: int = D.BOOTSTRAP_DRAWS
    permutations: int = D.GATE_PERMUTATIONS
    seed: int = D.GATE_SEED
    power: float = D.GATE_POWER
    trial_index: int | None = None  # reproduce mode (--wai-trial-index): the gate is off
    sequential: bool = False  # --wai-sequential: the suite delta is a group-sequential test
    round_trials: int = D.SEQ_ROUND_TRIALS
    unscored: str = D.GATE_UNSCORED_POLICY  # ledger.POLICIES
    max_unscored: float = D.GATE_MAX_UNSCORED

    @classmethod
    def of(cls, settings: Any) -> GateSettings:
        """``settings`` itself when it is one, else its attributes of these names (the plugin's ``Settings``);
        the sequential and unscored ones default when it lacks them."""
        if isinstance(settings, GateSettings):
            return settings
        optional = {name: getattr(settings, name) for name in ("sequential", "round_trials", "unscored",
                                                               "max_unscored") if hasattr(settings, name)}
        return cls(level=settings.level, alpha=settings.alpha, max_drop=settings.max_drop, draws=settings.draws,
                   permutations=settings.permutations, seed=settings.seed, power=settings.power,
                   trial_index=settings.trial_index, **optional)


@dataclass
class Gate:
    """The suite verdict: paired delta vs the baseline plus the Holm-corrected scenario drops."""

    status: GateStatus
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
    sequential: dict[str, Any] | None = None  # the sequential decision (measure.sequential) under --wai-sequential
    failed_items: int = 0  # scenarios that failed their own thresholds (status "failed" when the gate is not red)
    ledger: dict[str, Any] | None = None  # every planned trial's state, this run's and the baseline's (gate.ledger)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return self.message


def _listed(ci: Any) -> list[float] | None:
    return None if ci is None else [float(x) for x in ci]


def _delta_text(rep: Any, trials: tuple[int, int], permutations: int | None = None) -> str:
    """The suite line: each side's pass@1 and the delta, every one with its scenario-bootstrap interval, and n
    (paired scenarios, and the scored trials behind them on each side)."""
    def side(value: Any, ci: Any) -> str:
        flat = ci is not None and ci[0] == ci[1]
        return f"{fmt(value, 3)} {fmt_ci(ci, 3)}" + (" (zero width: every paired scenario has this rate)" if flat else "")

    return (f"pass@1 {side(rep.before, rep.before_ci)} -> {side(rep.after, rep.after_ci)}, "
            f"delta {fmt(rep.delta, 3, signed=True)} {fmt_ci(rep.ci, 3, signed=True)} "
            f"({round(rep.level * 100)}% scenario bootstrap), "
            f"permutation p{p_eq(rep.p_value, exact=getattr(rep, 'p_exact', None), permutations=permutations)}, "
            f"n={rep.n_paired} paired scenarios ({trials[0]} -> {trials[1]} scored trials)")


def trials_needed(results: Mapping[str, Mapping[str, Any]], *, drop: float, power: float, alpha: float,
                  cache: MutableMapping[str, Any] | None = None) -> dict[str, Any] | None:
    """How many scenarios (at this k) a suite needs to detect a pass@1 drop of ``drop`` (measure.holdout_size).

    ``cache``: plans already computed (the plugin keeps them in pytest's cache), keyed by every input of the
    plan and a digest of the code that computes it; a plan found there is the one ``holdout_size`` returns."""
    rates = [e["pass_rate"] for e in results.values() if e.get("pass_rate") is not None]
    ks = [int(e["k"]) for e in results.values()]
    if not rates or not 0 < drop < 1:
        return None
    k = min(ks)
    p = sum(rates) / len(rates)
    base = min(max(p - drop, 0.0), 1.0 - drop)
    key = _plan_key(drop=drop, base=base, k=k, power=power, alpha=alpha)
    plan = cache.get(key) if cache is not None else None
    if not (isinstance(plan, dict) and isinstance(plan.get("n"), int) and isinstance(plan.get("text"), str)):
        from whileai_core.measure.power import holdout_size

        size = holdout_size(drop, base=base, k=k, power=power, alpha=alpha)
        plan = {"n": int(size), "text": str(size)}
        if cache is not None:
            cache[key] = plan
    return {"drop": drop, "k": k, "power": power, "alpha": alpha, "scenarios_needed": plan["n"],
            "scenarios_here": len(rates), "text": plan["text"]}


def _plan_key(**inputs: Any) -> str:
    """A plan's cache key: its inputs (floats by repr, so exact), the simulation's defaults, and a digest of the
    modules that compute and print it (an edit to either is a new key, never a stale plan)."""
    import hashlib

    from whileai_core.measure import pass_at, power
    from whileai_core.measure.quantiles import student_t

    digest = hashlib.sha256()
    for module in (power, pass_at, student_t):
        digest.update(Path(str(module.__file__)).read_bytes())
    fixed = (D.HOLDOUT_SIM_RUNS, D.HOLDOUT_SIM_CONFIDENCE, D.HOLDOUT_SIM_MAX_LATTICE, D.HOLDOUT_SIM_SEED,
             D.HOLDOUT_BETWEEN_VAR, D.BOOTSTRAP_DRAWS, D.CI_LEVEL, D.MIN_CI_TASKS)
    return repr((sorted(inputs.items()), fixed, digest.hexdigest()[:16]))


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
    if n_run == 0:
        return (f"this run has no scenario (an empty run document, or every test deselected), so nothing can pair "
                f"with the baseline's {n_baseline}")
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


def scenario_delta(passes: int, n_scored: int, b_pass: int, b_n: int, *, level: float) -> dict[str, Any]:
    """One scenario's pass@1 against its baseline, as the run document stores it (``delta``, ``delta_ci`` and
    ``p_value`` of a ``ScenarioEntry``): the difference of pass rates, Newcombe's interval of it and the one-sided
    exact p of a drop. The plugin stores these; a report computes them here only for documents without them."""
    return {"delta": passes / n_scored - b_pass / b_n,
            "delta_ci": list(newcombe_interval(passes, n_scored, b_pass, b_n, level=level)),  # type: ignore[arg-type]
            "p_value": float(fisher_drop_pvalues(b_pass, b_n, passes, n_scored))}


def scenario_counts(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]],
                    paired: Sequence[str], *, max_drop: float) -> dict[str, tuple[int, int, int, int, float]]:
    """Each paired scenario's (before passes, before trials, after passes, after trials, min drop), binarized at
    its own pass_reward on both sides; a pooled baseline counts its effective trials (history.design_effect).
    These are ``compare(task_drops=)``'s counts: the gate's scenario family is compare's task family."""
    from whileai_core.measure.history import effective_counts

    out = {}
    for k in paired:
        bp, bn = effective_counts(baseline_index[k], results[k].get("pass_reward", D.GATE_PASS_REWARD))
        out[k] = (int(bp), int(bn), int(results[k]["passes"]), int(results[k]["n_scored"]),
                  float(results[k].get("max_drop", max_drop)))
    return out


def compute_gate(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]] | None,
                 *, baseline_name: str | None, settings: GateSettings, baseline_note: str | None = None,
                 min_paired_share: float = D.GATE_MIN_PAIRED_SHARE, require_baseline: bool = False,
                 failed_workers: Sequence[str] = (), not_run: Sequence[Mapping[str, Any]] = (),
                 noise: Any = None, strict_reason: str | None = None,
                 plan_cache: MutableMapping[str, Any] | None = None) -> Gate:
    """The suite gate over the results of this session (only the scenarios that ran are judged).

    ``require_baseline`` makes a gate that cannot be evaluated (too few pairs) red, saying ``strict_reason``
    (default "--wai-require-baseline"; the plugin names CI there); ``failed_workers`` (xdist workers that
    crashed) makes it red as ``incomplete`` unless it is red already. The ledger of every planned trial
    (``not_run``: the ledgers of planned scenarios that never ran) makes it red ``incomplete`` when its
    unscored share is above ``settings.max_unscored`` (``gate.ledger``). ``noise``: a pooled baseline's
    between-run variance (``History.noise``), passed to ``delta_report(noise=)`` so the suite delta must clear
    its band. ``settings``: a ``GateSettings`` (an object with its attribute names is read through
    ``GateSettings.of``: the plugin's ``Settings``). ``plan_cache``: power-line plans kept between runs
    (``trials_needed``'s ``cache``).
    """
    settings = GateSettings.of(settings)
    band_note = None
    runs = getattr(noise, "n_runs", None)
    if noise is not None and runs is not None and runs < D.POOLED_BAND_MIN_RUNS:
        band_note = (f"the between-run noise band is not applied: {runs} pooled run(s), fewer than "
                     f"{D.POOLED_BAND_MIN_RUNS} (its t quantile at df {runs - 1} would hide real drops); binomial "
                     "noise only")
        noise = None
    gate = _suite_gate(results, baseline_index, baseline_name=baseline_name, settings=settings,
                       baseline_note=baseline_note, min_paired_share=min_paired_share,
                       require_baseline=require_baseline, noise=noise, strict_reason=strict_reason,
                       plan_cache=plan_cache)
    if band_note:
        gate.message = f"{gate.message} ({band_note})"
    if failed_workers:
        crash = (f"xdist worker(s) {', '.join(failed_workers)} crashed; the {len(results)} scenario(s) that finished "
                 "are reported, and this partial run is not saved as a baseline")
        gate.failed_workers = list(failed_workers)
        mark_incomplete(gate, crash)
    stops = sorted({str(e["budget_stop"]) for e in results.values() if e.get("budget_stop")})
    if stops:
        mark_incomplete(gate, stops[0])
    _check_ledger(gate, results, baseline_index, settings=settings, not_run=not_run)
    _check_items(gate, results)
    return gate


def _check_items(gate: Gate, results: Mapping[str, Mapping[str, Any]]) -> None:
    """Scenarios that failed their own thresholds fail the run (exit 1) whatever the suite gate says: a gate that
    is not red says so in its status (``failed``), so no artifact is green or grey on a red exit code."""
    failed = sorted(k for k, e in results.items() if e.get("failures"))
    gate.failed_items = len(failed)
    if not failed or gate.red:
        return
    first = results[failed[0]]["failures"][0]
    gate.status = "failed"
    gate.message = (f"FAILED: {len(failed)} of {len(results)} scenario(s) missed their own thresholds (e.g. "
                    f"{failed[0]}: {first}); {gate.message}")


def _check_ledger(gate: Gate, results: Mapping[str, Mapping[str, Any]],
                  baseline_index: Mapping[str, Mapping[str, Any]] | None, *, settings: GateSettings,
                  not_run: Sequence[Mapping[str, Any]]) -> None:
    """Count every planned trial; red ``incomplete`` with the counts by reason when too many are unscored, and
    the unscored share named in the message whenever there is one (with what the policy did with it)."""
    from whileai_core.gate.ledger import suite_ledger, unscored_text, unscored_verdict

    policy = settings.unscored
    limit = float(settings.max_unscored)
    current = suite_ledger(results.values(), not_run)
    base = suite_ledger(baseline_index.values()) if baseline_index else None
    gate.ledger = {"policy": policy, "max_unscored": limit, "current": current.to_dict(),
                   "baseline": None if base is None else base.to_dict()}
    why = unscored_verdict(current, base, policy=policy, max_unscored=limit)
    if why is not None:
        mark_incomplete(gate, why)
    elif current.missing:
        what = {"fail": "counted as failed trials", "incomplete": "left out",
                "drop": f"--wai-unscored=drop left {current.share:.1%} of the planned trials out of the rates"}
        gate.message += f" [unscored: {unscored_text(current, base)}; {what[policy]}]"


def mark_incomplete(gate: Gate, why: str) -> Gate:
    """A gate over a partial run is never green: red as ``incomplete`` with ``why``, or ``why`` added to a red one."""
    if gate.red:
        gate.message += f"; INCOMPLETE: {why}"
    else:
        gate.status, gate.red, gate.message = "incomplete", True, f"INCOMPLETE: {why} ({gate.message})"
    return gate


def _suite_gate(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]] | None,
                *, baseline_name: str | None, settings: GateSettings, baseline_note: str | None, min_paired_share: float,
                require_baseline: bool, noise: Any = None, strict_reason: str | None = None,
                plan_cache: MutableMapping[str, Any] | None = None) -> Gate:
    common: dict[str, Any] = {"baseline": baseline_name, "level": settings.level, "alpha": settings.alpha,
                              "max_drop": settings.max_drop}
    plan = None
    try:
        plan = trials_needed(results, drop=settings.max_drop, power=settings.power, alpha=settings.alpha,
                             cache=plan_cache)
    except ValueError:
        plan = None
    common["trials_needed"] = plan
    if settings.trial_index is not None:
        return Gate("off", False, "gate off: reproduce mode (--wai-trial-index runs one trial per scenario)", **common)
    if baseline_index is None:
        why = baseline_note or "no --wai-baseline given"
        red = f" (red: {strict_reason or '--wai-require-baseline'})" if require_baseline and baseline_name else ""
        return Gate("not evaluated", require_baseline, f"gate not evaluated: {why}{red}", **common)
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
    strict = f" (red: {strict_reason or '--wai-require-baseline'})" if require_baseline else ""
    if len(paired) < D.GATE_MIN_PAIRED:
        status: GateStatus = "unpaired" if warning else "not evaluated"
        text = f"gate not evaluated: {len(paired)} scenario(s) pair with the baseline (need >= {D.GATE_MIN_PAIRED})"
        return Gate(status, require_baseline, (f"UNPAIRED: {warning}; " if warning else "") + text + strict,
                    n_paired=len(paired), **common)
    gate = _paired_gate(results, baseline_index, paired, settings=settings, common=common, noise=noise)
    if warning and not gate.red:
        gate.status, gate.red = "unpaired", require_baseline
        gate.message = f"UNPAIRED: {warning}; {gate.message}{strict}"
    return gate


def _paired_gate(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]],
                 paired: list[str], *, settings: GateSettings, common: dict[str, Any], noise: Any = None) -> Gate:
    """The suite delta and the Holm scenario drops over the paired scenarios."""
    from whileai_core.measure.sequential import SequentialPlan

    before_rows, after_rows = [], []
    for k in paired:
        pr = results[k].get("pass_reward", D.GATE_PASS_REWARD)
        for i, r in enumerate(binarize(baseline_index[k]["rewards"], pr)):
            before_rows.append({"task_id": k, "rollout_index": i, "reward": r})
        rewards = results[k]["rewards"]
        for i, r in zip(results[k].get("trial_indices") or range(len(rewards)), rewards):
            if r is not None:  # the trial index, so a sequential run's rounds are found again
                after_rows.append({"task_id": k, "rollout_index": int(i), "reward": int(r >= pr)})
    plan = None
    if settings.sequential:
        plan = SequentialPlan(settings.round_trials, max(int(results[k]["k"]) for k in paired))
    counts = scenario_counts(results, baseline_index, paired, max_drop=settings.max_drop)
    verdict = compare(before_rows, after_rows, target=settings.max_drop, level=settings.level,  # the user's call
                      draws=settings.draws, permutations=settings.permutations, seed=settings.seed,
                      alpha=settings.alpha, sequential=plan, noise=noise, task_drops=counts)
    rep, drops = verdict.headline, verdict.task_drops
    assert drops is not None  # task_drops= was given
    holm, scen_reg = drops.holm, drops.flagged
    reach = holm_reach([(c[1], c[3]) for c in counts.values()], alpha=settings.alpha)
    suite_red = rep.worse
    fields: dict[str, Any] = {
        "n_paired": rep.n_paired, "delta": rep.delta, "ci": _listed(rep.ci), "p_value": rep.p_value,
        "before": rep.before, "after": rep.after, "before_ci": _listed(rep.before_ci),
        "after_ci": _listed(rep.after_ci), "verdict": rep.verdict, "reason": rep.reason,
        "scenario_regressions": scen_reg, "holm": holm, "holm_reach": reach, "report": rep.to_dict(),
        "sequential": None if rep.sequential is None else rep.sequential.to_dict()}
    text = _delta_text(rep, (len(before_rows), len(after_rows)), settings.permutations)
    seq = rep.sequential
    if seq is not None:
        text += (f"; sequential ({seq.spending} spending): {seq.decision} after round {seq.round} of {seq.rounds}, "
                 f"{seq.reason} (repeated interval {fmt_ci(seq.looks[-1].ci, 3, signed=True)}); {seq.trials_run} of "
                 f"{seq.trials_fixed} trials of the fixed design run")
    if not verdict.ok:  # compare's verdict: the suite delta is worse, or a scenario dropped after Holm
        parts = []
        if suite_red:
            parts.append(text if seq is not None else f"{text}; the drop clears the noise and max_drop={settings.max_drop:g}")
        if scen_reg:
            parts.append(f"{len(scen_reg)} scenario(s) dropped significantly after Holm correction "
                         f"(alpha/2={settings.alpha / 2:g}): {', '.join(scen_reg[:D.GATE_MESSAGE_SCENARIOS])}"
                         + (" ..." if len(scen_reg) > D.GATE_MESSAGE_SCENARIOS else ""))
        return Gate("regression", True, "REGRESSION: " + "; ".join(parts), **fields, **common)
    if rep.verdict == "better":
        return Gate("improved", False, f"improved: {text}", **fields, **common)
    why = "" if seq is not None else f" ({rep.reason or 'no significant change'})"
    return Gate("ok", False, f"no regression: {text}{why}", **fields, **common)


def compare_documents(baseline: Mapping[str, Any], current: Mapping[str, Any], *, level: float = D.CI_LEVEL,
                      alpha: float = D.GATE_ALPHA, max_drop: float = D.GATE_MAX_DROP,
                      draws: int = D.BOOTSTRAP_DRAWS, permutations: int = D.GATE_PERMUTATIONS,
                      seed: int = D.GATE_SEED, power: float = D.GATE_POWER,
                      baseline_name: str | None = None, min_paired_share: float = D.GATE_MIN_PAIRED_SHARE,
                      current_name: str | None = None) -> Gate:
    """The suite gate between two stored run documents, outside pytest (e.g. from a CLI or a notebook).

    Gives what the plugin computed at the end of the session that wrote ``current`` when the settings match.
    Raises ``CorruptBaseline`` (a ``ValueError``) for a document that is not a valid run document
    (``NonFiniteReward`` for a NaN or infinite reward, naming the scenario key and the reward's index: never counted
    as a failure) and ``IncompatibleBaseline`` (a ``ValueError``) for another schema major or config fingerprint.

    Example::

        gate = compare_documents(load_document("base.json"), load_document("run.json"), baseline_name="main")
        print(gate)  # REGRESSION: pass@1 0.90 -> 0.60, delta -0.30 [-0.45, -0.15] (95% ...), p=..., n=12 ...
    """
    document.validate_document(baseline, source=baseline_name or "baseline")
    document.validate_document(current, source=current_name or "current")
    document.check_compatible(baseline, fingerprint_now=current.get("fingerprint") or {},
                              source=baseline_name or "baseline")
    recorded = current.get("settings") or {}  # what the current run counted unscored trials as (gate.ledger)
    settings = GateSettings(level=level, alpha=alpha, max_drop=max_drop, draws=draws, permutations=permutations,
                            seed=seed, power=power, unscored=recorded.get("unscored") or D.GATE_UNSCORED_POLICY,
                            max_unscored=float(D.GATE_MAX_UNSCORED if recorded.get("max_unscored") is None
                                               else recorded["max_unscored"]))
    return compute_gate(document.baseline_index(current), document.baseline_index(baseline),
                        baseline_name=baseline_name, settings=settings, min_paired_share=min_paired_share)
