"""One scenario (one test item) judged at run time, built on ``whileai_core.measure``.

The pass rate with a Wilson interval, a floor (``min_pass_rate``: the item fails only when the whole interval
lies below it), and a one-sided exact test (Fisher's, from the hypergeometric tail) of "fewer passes than the
baseline". Judging scenarios one by one is a family of tests, so drops are held to Holm (1979) at level alpha/2
one-sided: an item fails at run time only at Holm's first (Bonferroni) threshold alpha/(2m), and the session
gate (``whileai_core.gate.compare``) then applies the full Holm step-down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_whileai.gate.lines import summary_line, trouble_lines
from pytest_whileai.markers import Thresholds
from whileai_core import defaults as D
from whileai_core.gate.compare import binarize, scenario_delta
from whileai_core.gate.document import scenario_incompatibility
from whileai_core.gate.ledger import Ledger, entry_ledger, gate_rewards
from whileai_core.gate.text import fmt, fmt_ci
from whileai_core.measure import stats
from whileai_core.measure.stats import wilson_interval

_INTERVALS: dict[tuple[str, int, int, int, float], tuple[float | None, tuple[float, ...] | None]] = {}


def metric_interval(metric: str, passes: int, n: int, k: int, level: float, *,
                    memo: int = D.PLUGIN_INTERVAL_MEMO) -> tuple[float | None, list[float] | None]:
    """``_metric_interval``, remembered: the items of a suite share a few (passes, n, k) (issue 34: at 10k items it
    ran once per item). Each call gets its own interval list; ``memo`` bounds the entries kept."""
    key = (metric, passes, n, k, level)
    hit = _INTERVALS.get(key)
    if hit is None:
        value, ci = _metric_interval(metric, passes, n, k, level)
        hit = (value, None if ci is None else tuple(ci))
        if len(_INTERVALS) < memo:
            _INTERVALS[key] = hit
    return hit[0], None if hit[1] is None else list(hit[1])


def _metric_interval(metric: str, passes: int, n: int, k: int, level: float) -> tuple[float | None, list[float] | None]:
    """The per-scenario estimate and interval of ``metric`` from ``passes`` of ``n`` scored trials.

    The estimate is the one ``wai.pass_at`` reports: pass@1 is p = passes/n; pass^k and pass@k are the unbiased
    estimators C(c,k)/C(n,k) (Yao et al. 2024) and 1 - C(n-c,k)/C(n,k) (Chen et al. 2021) of
    ``whileai_core.stats`` (None when fewer than k trials were scored: they need n >= k).
    The interval is the Wilson interval of p mapped through p^k or 1-(1-p)^k: the map is monotone, so the image
    is an interval for pass^k / pass@k at the same level. The unbiased estimate can fall outside it (7/8 at k=8
    estimates pass^k = 0 while the interval is [0.006, 0.83]); the interval is then widened to contain the
    estimate, and a superset of a confidence interval keeps its coverage.
    """
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


def _all_scored(rewards: list[float | None], states: Sequence[str | None]
                ) -> tuple[list[float | None], dict[str, Any]] | None:
    """(gate rewards, ledger dict) when every trial was scored, as ``gate_rewards`` and ``Ledger.to_dict`` give
    them then (the rewards unchanged, nothing unscored); None when a trial was unscored (the general path)."""
    for state in states:
        if state is not None:
            return None
    n = len(states)
    if len(rewards) != n:
        return None  # gate_rewards would pair them up to the shorter: the general path says how
    return rewards, {"planned": n, "scored": n, "unscored": {}, "missing": 0, "share": 0.0}


def judge_scenario(*, key: str, nodeid: str, rewards: Sequence[float | None], k: int, seed: int,
                   judge: str | None, errors: int, pass_reward: float, level: float, thresholds: Thresholds,
                   baseline: Mapping[str, Any] | None, baseline_note: str | None, settings: Any, family: int,
                   trial_index: int | None, scenario: Any, location: list[Any], agent_error: str | None = None,
                   judge_errors: int = 0, judge_error: str | None = None, infra_errors: int = 0,
                   infra_error: str | None = None, states: Sequence[str | None] | None = None,
                   policy: str = D.GATE_UNSCORED_POLICY) -> dict[str, Any]:
    """The JSON entry of one scenario's run, with its failures (empty when it met every threshold).

    ``errors`` trials raised in the agent (scored as failed, reward 0), ``judge_errors`` raised in the judge and
    ``infra_errors`` met a failed backend (both unscored); each ``*_error`` is the first one's text. ``states`` is
    each trial's ledger state (None = scored; default: a None reward is an abstention) and ``policy`` what an
    unscored trial counts as (``whileai_core.gate.ledger``): ``rewards`` in the entry are the counted ones,
    ``trial_states`` and ``ledger`` what happened."""
    if states is None:
        states = [None if r is not None else "abstention" for r in rewards]
    measured = list(rewards)
    fast = _all_scored(measured, states)
    if fast is not None:  # every trial scored (the common case): the same ledger, without building one
        rewards, ledger_dict = fast
    else:
        rewards = gate_rewards(measured, states, policy)
        ledger_dict = Ledger().add_states(states).to_dict()  # entry_ledger of the entry's trial_states
    scored = [r for r in rewards if r is not None]
    flags = binarize(scored, pass_reward)
    passes, n_scored = sum(flags), len(flags)
    metric = thresholds.metric
    value, ci = metric_interval(metric, passes, n_scored, k, level)
    max_drop = thresholds.max_drop if thresholds.max_drop is not None else settings.max_drop
    missing = ledger_dict["missing"]
    entry: dict[str, Any] = {
        "key": key, "nodeid": nodeid, "k": k, "seed": seed, "judge": judge,
        "rewards": [None if r is None else float(r) for r in rewards],
        "trial_indices": [trial_index] if trial_index is not None else list(range(len(rewards))),
        "pass_reward": pass_reward, "passes": passes, "n_scored": n_scored, "unscored": missing,
        "trial_states": list(states), "ledger": ledger_dict, "unscored_policy": policy,
        "errors": errors, "agent_error": agent_error, "judge_errors": judge_errors, "judge_error": judge_error,
        "infra_errors": infra_errors, "infra_error": infra_error,
        "pass_rate": passes / n_scored if n_scored else None, "metric": metric, "value": value,
        "ci": ci, "level": level, "min_pass_rate": thresholds.min_pass_rate, "max_drop": max_drop,
        "baseline": None, "baseline_note": None, "delta": None, "delta_ci": None, "p_value": None, "failures": [],
        "scenario_id": getattr(scenario, "task_id", None), "scenario": dict(getattr(scenario, "scenario", {}) or {}),
        "prompt": None if scenario is None else str(scenario)[:300], "location": location,
    }
    failures: list[str] = entry["failures"]
    measured_n = ledger_dict["planned"] - missing  # judged trials and agent errors
    if measured_n == 0:
        failures.append(_no_scored_trial(measured, judge_errors, judge_error, infra_errors, infra_error))
    elif errors >= measured_n:
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
    from whileai_core.measure.history import effective_counts

    b_pass, b_n = effective_counts(baseline, pass_reward)  # a pooled baseline counts its effective trials
    b_ci = wilson_interval(b_pass, b_n, level=level)
    entry["baseline"] = {"passes": b_pass, "n_scored": b_n, "pass_rate": b_pass / b_n if b_n else None,
                         "ci": None if b_ci is None else list(b_ci)}
    if b_n and n_scored:
        compared = scenario_delta(passes, n_scored, b_pass, b_n, level=level)
        delta, p = compared["delta"], compared["p_value"]
        entry["delta_ci"], entry["delta"], entry["p_value"] = compared["delta_ci"], delta, p
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
    states = entry.get("trial_states") or [None] * len(rewards)
    shown = [None if s not in (None, "agent_error") else r for r, s in zip(rewards, states)]  # unscored: "-"
    lines.append("  trials: " + " ".join("-" if r is None else f"{r:g}" for r in shown))
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
    empty = [key for key, e in sorted(results.items())
             if not e.get("n_scored") or (isinstance(e.get("trial_states"), list)
                                          and entry_ledger(e).missing >= len(e["trial_states"]))]
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


JUDGED_FIELDS = ("passes", "n_scored", "unscored", "pass_rate", "value", "ci", "baseline", "baseline_note", "delta",
                 "delta_ci", "p_value", "p_threshold", "ledger")


def rejudge_merged(entry: Mapping[str, Any], *, baseline: Mapping[str, Any] | None, baseline_note: str | None,
                   settings: Any, family: int) -> tuple[dict[str, Any], list[str]]:
    """A ``--wai-sequential`` scenario's rounds, joined, judged again on every per-item rule (``min_pass_rate``,
    the marker's thresholds, the drop vs the baseline): early stopping decides the suite gate only. Returns the
    entry and the failures its round items did not already report."""
    thresholds = Thresholds(trials=int(entry["k"]), min_pass_rate=entry.get("min_pass_rate"),
                            max_drop=entry.get("max_drop"), metric=entry.get("metric") or "pass@1",
                            level=entry.get("level"))
    new = judge_scenario(
        key=str(entry["key"]), nodeid=str(entry["nodeid"]), rewards=list(entry.get("rewards") or []),
        k=int(entry["k"]), seed=int(entry.get("seed") or 0), judge=entry.get("judge"),
        errors=int(entry.get("errors") or 0), pass_reward=float(entry.get("pass_reward", D.GATE_PASS_REWARD)),
        level=float(entry["level"]), thresholds=thresholds, baseline=baseline, baseline_note=baseline_note,
        settings=settings, family=family, trial_index=None, scenario=None, location=entry.get("location") or [],
        agent_error=entry.get("agent_error"), judge_errors=int(entry.get("judge_errors") or 0),
        judge_error=entry.get("judge_error"), infra_errors=int(entry.get("infra_errors") or 0),
        infra_error=entry.get("infra_error"), states=entry.get("trial_states"),
        policy=getattr(settings, "unscored", D.GATE_UNSCORED_POLICY))
    old = list(entry.get("failures") or [])
    fresh = [f for f in new["failures"] if f not in old]
    merged = {**entry, **{k: new.get(k) for k in JUDGED_FIELDS}, "failures": old + fresh}
    return merged, fresh
