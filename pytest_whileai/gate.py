"""The statistics the plugin applies, built on ``whileai_core.measure`` and ``whileai_core.stats``.

* Per scenario (one test item): the pass rate with a Wilson interval, a floor (``min_pass_rate``: the item
  fails only when the whole interval lies below it), and a one-sided exact test (Fisher's, from the
  hypergeometric tail) of "fewer passes than the baseline". Judging scenarios one by one is a family of
  tests, so drops are held to Holm (1979) at level alpha/2 one-sided: an item fails at run time only at
  Holm's first (Bonferroni) threshold alpha/(2m), and the session gate then applies the full Holm step-down.
* The suite gate: ``measure.delta_report`` on the scenarios both runs share (paired by scenario key,
  scenario-bootstrap interval, sign-flip permutation p), ``min_effect=max_drop``. It is red only on a
  "worse" verdict (interval excludes 0, p <= alpha, drop >= max_drop) or a Holm-significant scenario drop,
  and on an incompatible baseline; noise stays green.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_whileai.markers import Thresholds
from pytest_whileai.store import scenario_incompatibility
from whileai_core import defaults as D
from whileai_core.measure.stats import fisher_drop_pvalues as drop_p_values, holm_adjust

RED_STATUSES = ("regression", "incompatible")


def binarize(rewards: Sequence[float | None], pass_reward: float = D.GATE_PASS_REWARD) -> list[int]:
    """Scored trials as 0|1 (reward >= pass_reward passes); unscored (None) trials are left out."""
    return [int(r >= pass_reward) for r in rewards if r is not None]


def metric_interval(metric: str, passes: int, n: int, k: int, level: float) -> tuple[float | None, list[float] | None]:
    """The per-scenario estimate and interval of ``metric`` from ``passes`` of ``n`` scored trials.

    pass@1 is p with its Wilson interval; pass^k = p^k and pass@k = 1 - (1-p)^k are monotone in p, so the
    Wilson bounds map through them (a monotone transform of an interval is an interval at the same level).
    """
    from whileai_core.measure.stats import wilson_interval

    if n == 0:
        return None, None
    p = passes / n
    lo, hi = wilson_interval(passes, n, level=level)  # type: ignore[misc]
    if metric == "pass^k":
        return p**k, [lo**k, hi**k]
    if metric == "pass@k":
        return 1 - (1 - p) ** k, [1 - (1 - lo) ** k, 1 - (1 - hi) ** k]
    return p, [lo, hi]


def judge_scenario(*, key: str, nodeid: str, rewards: Sequence[float | None], k: int, seed: int,
                   judge: str | None, errors: int, pass_reward: float, level: float, thresholds: Thresholds,
                   baseline: Mapping[str, Any] | None, baseline_note: str | None, settings: Any, family: int,
                   trial_index: int | None, scenario: Any, location: list[Any]) -> dict[str, Any]:
    """The JSON entry of one scenario's run, with its failures (empty when it met every threshold)."""
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
        "errors": errors, "pass_rate": passes / n_scored if n_scored else None, "metric": metric, "value": value,
        "ci": ci, "level": level, "min_pass_rate": thresholds.min_pass_rate, "max_drop": max_drop,
        "baseline": None, "baseline_note": None, "delta": None, "p_value": None, "failures": [],
        "scenario_id": getattr(scenario, "task_id", None), "scenario": dict(getattr(scenario, "scenario", {}) or {}),
        "prompt": None if scenario is None else str(scenario)[:300], "location": location,
    }
    failures: list[str] = entry["failures"]
    if n_scored == 0:
        failures.append(f"no trial was scored ({len(rewards)} unscored: judge errors, abstentions or infra errors)")
    if thresholds.min_pass_rate is not None and ci is not None and ci[1] < thresholds.min_pass_rate:
        failures.append(f"{metric} {value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]: the whole interval lies below "
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
    entry["baseline"] = {"passes": b_pass, "n_scored": b_n, "pass_rate": b_pass / b_n if b_n else None}
    if b_n and n_scored:
        delta = passes / n_scored - b_pass / b_n
        p = float(drop_p_values(b_pass, b_n, passes, n_scored))
        entry["delta"], entry["p_value"] = delta, p
        threshold = settings.alpha / 2 / max(1, family)
        entry["p_threshold"] = threshold
        if p <= threshold and -delta >= max_drop:
            failures.append(f"pass@1 dropped {delta:+.2f} vs the baseline (one-sided exact p={p:.3g} <= "
                            f"alpha/2/m = {settings.alpha:g}/2/{family}), beyond max_drop={max_drop:g}")
    return entry


def failure_message(entry: Mapping[str, Any], *, baseline_name: str | None) -> str:
    """The per-test failure text: counts, interval, baseline, delta, trials, and a reproduce line."""
    from pytest_whileai.fixtures import summary_line

    lines = [f"whileai: {entry['nodeid']} did not meet its thresholds", "  " + summary_line(dict(entry))]
    if baseline_name and entry.get("baseline"):
        lines.append(f"  baseline: {baseline_name}")
    rewards = entry.get("rewards", [])
    lines.append("  trials: " + " ".join("-" if r is None else f"{r:g}" for r in rewards))
    lines.extend(f"  - {f}" for f in entry.get("failures", []))
    first_bad = next((i for i, r in zip(entry.get("trial_indices", []), rewards)
                      if r is None or r < entry.get("pass_reward", D.GATE_PASS_REWARD)), None)
    repro = f"  reproduce: pytest \"{entry['nodeid']}\" --wai-seed={entry['seed']}"
    if first_bad is not None:
        repro += f" --wai-trial-index={first_bad}  (first failing trial)"
    lines.append(repro)
    return "\n".join(lines)


@dataclass
class Gate:
    """The suite verdict: paired delta vs the baseline plus the Holm-corrected scenario drops."""

    status: str  # regression | incompatible | ok | improved | not evaluated | off
    red: bool
    message: str
    baseline: str | None = None
    n_paired: int = 0
    delta: float | None = None
    ci: list[float] | None = None
    p_value: float | None = None
    before: float | None = None
    after: float | None = None
    verdict: str | None = None  # delta_report's
    reason: str | None = None
    scenario_regressions: list[str] = field(default_factory=list)
    holm: dict[str, float] = field(default_factory=dict)
    incompatible: dict[str, str] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    level: float = D.CI_LEVEL
    alpha: float = D.GATE_ALPHA
    max_drop: float = D.GATE_MAX_DROP
    trials_needed: dict[str, Any] | None = None
    report: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return self.message


def _delta_text(rep: Any) -> str:
    ci = "[n/a]" if rep.ci is None else f"[{rep.ci[0]:+.3f}, {rep.ci[1]:+.3f}]"
    p = "n/a" if rep.p_value is None else f"{rep.p_value:.3g}"
    return (f"pass@1 {rep.before:.3f} -> {rep.after:.3f}, delta {rep.delta:+.3f} {ci} "
            f"({round(rep.level * 100)}% scenario bootstrap), permutation p={p}, n={rep.n_paired} paired scenarios")


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


def compute_gate(results: Mapping[str, Mapping[str, Any]], baseline_index: Mapping[str, Mapping[str, Any]] | None,
                 *, baseline_name: str | None, settings: Any, baseline_note: str | None = None) -> Gate:
    """The suite gate over the results of this session (only the scenarios that ran are judged)."""
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
        return Gate("not evaluated", False, f"gate not evaluated: {why}", **common)
    keys = sorted(results)
    new = [k for k in keys if k not in baseline_index]
    not_run = sorted(k for k in baseline_index if k not in results)
    incompatible = {}
    for k in keys:
        if k in baseline_index:
            reason = scenario_incompatibility(baseline_index[k], results[k])
            if reason:
                incompatible[k] = reason
    common.update(new=new, not_run=not_run)
    if incompatible:
        first = next(iter(incompatible.items()))
        msg = (f"REFUSED: the baseline is not comparable for {len(incompatible)} scenario(s), e.g. {first[0]}: "
               f"{first[1]}")
        return Gate("incompatible", True, msg, incompatible=incompatible, **common)
    paired = [k for k in keys if k in baseline_index and results[k].get("n_scored") and
              binarize(baseline_index[k].get("rewards", []), results[k].get("pass_reward", D.GATE_PASS_REWARD))]
    if len(paired) < D.GATE_MIN_PAIRED:
        return Gate("not evaluated", False, f"gate not evaluated: {len(paired)} scenario(s) pair with the baseline "
                    f"(need >= {D.GATE_MIN_PAIRED})", n_paired=len(paired), **common)
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
    # scenario by scenario: one-sided exact drops, Holm at alpha/2
    import numpy as np

    bp = np.array([sum(binarize(baseline_index[k]["rewards"])) for k in paired])
    bn = np.array([len(binarize(baseline_index[k]["rewards"])) for k in paired])
    ap = np.array([results[k]["passes"] for k in paired])
    an = np.array([results[k]["n_scored"] for k in paired])
    adjusted = holm_adjust(drop_p_values(bp, bn, ap, an))
    holm = {k: float(v) for k, v in zip(paired, adjusted)}
    drops = ap / an - bp / bn
    scen_reg = [k for k, adj, d in zip(paired, adjusted, drops)
                if adj <= settings.alpha / 2 and -d >= float(results[k].get("max_drop", settings.max_drop))]
    suite_red = rep.verdict == "worse"
    fields: dict[str, Any] = dict(n_paired=rep.n_paired, delta=rep.delta, ci=None if rep.ci is None else [float(x) for x in rep.ci],
                  p_value=rep.p_value, before=rep.before, after=rep.after, verdict=rep.verdict, reason=rep.reason,
                  scenario_regressions=scen_reg, holm=holm, report=rep.to_dict())
    text = _delta_text(rep)
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
                      baseline_name: str | None = None) -> Gate:
    """The suite gate between two stored run documents, outside pytest (e.g. from a CLI or a notebook).

    Gives what the plugin computed at the end of the session that wrote ``current`` when the settings match.
    Raises ``store.IncompatibleBaseline`` for another schema major or config fingerprint.
    """
    from types import SimpleNamespace

    from pytest_whileai.store import check_compatible

    check_compatible(baseline, fingerprint_now=current.get("fingerprint") or {}, source=baseline_name or "baseline")
    settings = SimpleNamespace(level=level, alpha=alpha, max_drop=max_drop, draws=draws, permutations=permutations,
                               seed=seed, power=power, trial_index=None)
    results = {sc["key"]: sc for sc in current.get("scenarios", [])}
    index = {sc["key"]: sc for sc in baseline.get("scenarios", [])}
    return compute_gate(results, index, baseline_name=baseline_name, settings=settings)
