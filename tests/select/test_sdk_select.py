"""SDK parity for selection (reference §4.1): rule= / Rejection for SFT, prior= / next_round, group_signal,
recommend, and retire_solved kept.
"""

from __future__ import annotations

import hashlib
import math

import pytest
from scipy import stats as sps

import whileai as wai
from tests.shop import TOOLS


def _sft_rows():
    """Three prompts, four completions each, rewards known; task p2 has no full pass."""
    rewards = {"p0": [1, 0.5, 1, 0], "p1": [0, 1, 0.75, 1], "p2": [0.5, 0, 0.25, 0]}
    return [{"task_id": t, "rollout_index": i, "prompt": f"ask {t}", "final_text": f"answer {t} {i}.",
             "reward": r} for t, rs in rewards.items() for i, r in enumerate(rs)]


def test_rule_names_pick_as_the_sdk_describes():
    rows = _sft_rows()
    top = wai.select(rows, mode="sft", rule="top_per_prompt", quiet=True)
    assert sorted(r["task_id"] for r in top) == ["p0", "p1"] and all(r["reward"] == 1 for r in top)
    rand = wai.select(rows, mode="sft", rule="random_per_prompt", quiet=True)
    assert sorted(r["task_id"] for r in rand) == ["p0", "p1"] and rand.report["selection"] == "random_per_prompt"
    k_all = wai.select(rows, mode="sft", rule="top_k_overall", target=3, quiet=True)
    assert len(k_all) == 3 and all(r["reward"] == 1 for r in k_all)
    rk = wai.select(rows, mode="sft", rule=wai.Rejection("random_k_overall", min_reward=0.0, seed=4), target=5,
                    quiet=True)
    assert len(rk) == 5 and rk.report["min_reward"] == 0.0
    assert [(r["task_id"], r["rollout_index"]) for r in rk] == [
        (r["task_id"], r["rollout_index"]) for r in wai.select(rows, mode="sft", target=5, quiet=True,
                                                               rule=wai.Rejection("random_k_overall", 0.0, 4))]
    partial = wai.select(rows, mode="sft", rule=wai.Rejection(min_reward=0.5), quiet=True)
    assert sorted(r["task_id"] for r in partial) == ["p0", "p1", "p2"]
    assert "rule random_per_prompt" in str(rand)


def test_a_bad_rule_raises_in_any_mode():
    with pytest.raises(ValueError, match="rule= must be one of"):
        wai.select(_sft_rows(), mode="rl", rule="best_of_all", quiet=True)
    with pytest.raises(ValueError, match="rule= must be one of"):
        wai.Rejection("nope")
    with pytest.raises(ValueError, match="min_reward"):
        wai.Rejection(min_reward=2)


def _rl_rows(rates, k=8, prefix="t"):
    return [{"task_id": f"{prefix}{t}", "rollout_index": i, "prompt": f"ask {t}", "final_text": f"reply {t} {i}.",
             "reward": int(i < round(p * k))} for t, p in enumerate(rates) for i in range(k)]


def test_next_round_keeps_the_tasks_still_in_band():
    prior = _rl_rows([0.0, 0.125, 0.5, 0.625, 0.875, 1.0])  # t0 t1 too hard, t4 t5 too easy
    nr = wai.next_round(prior)
    assert nr["tasks"] == ["t2", "t3"] and nr["n_too_hard"] == 2 and nr["n_too_easy"] == 2
    assert nr["prompt_set_sha"] == hashlib.sha256(b"t2\nt3").hexdigest()[:16]
    candidates = _rl_rows([0.5] * 8)  # t6, t7 never graded before: kept
    nr2 = wai.next_round(prior, candidates, lo=0.1, hi=0.9)
    assert nr2["tasks"] == ["t1", "t2", "t3", "t4", "t6", "t7"] and nr2["n_unseen"] == 2
    assert {r["task_id"] for r in nr2["rows"]} == set(nr2["tasks"])
    assert "dropped 1 too easy and 1 too hard" in str(nr2)


def test_select_prior_drops_tasks_out_of_band_last_round():
    prior = _rl_rows([0.0, 0.5, 1.0, 0.5])
    now = _rl_rows([0.5, 0.5, 0.5, 0.5])  # every task mixed now
    sel = wai.select(now, mode="rl", prior=prior, quiet=True)
    assert {r["task_id"] for r in sel} == {"t1", "t3"}
    assert sel.report["prior"]["too_hard"] == 1 and sel.report["prior"]["too_easy"] == 1
    assert sel.report["prior"]["rows_dropped"] == 16 and "prior round" in str(sel)
    with pytest.raises(ValueError, match="prior="):
        wai.select(now, mode="sft", prior=prior, quiet=True)


def test_group_signal_counts_mixed_groups():
    rows = _rl_rows([0.0, 1.0, 0.5, 0.25, 0.875]) + [{"task_id": "solo", "reward": 1, "final_text": "x"}]
    gs = wai.group_signal(rows)
    assert (gs["n_groups"], gs["n_single"], gs["n_mixed"], gs["n_all_zero"], gs["n_all_one"]) == (6, 1, 3, 1, 1)
    assert gs["n_in_band"] == 2 and gs["mixed_rate"] == pytest.approx(3 / 5) and gs["k"] == 8
    lo, hi = gs["mixed_rate_ci95"]
    z = sps.norm.ppf(0.975)
    centre = (3 + z * z / 2) / (5 + z * z)
    half = z * math.sqrt(3 * 2 / 5 + z * z / 4) / (5 + z * z)
    assert (lo, hi) == pytest.approx((centre - half, centre + half))
    assert gs["pass_at_1"] == pytest.approx((0 + 1 + 0.5 + 0.25 + 0.875 + 1) / 6)  # macro over tasks, solo too
    assert "3 of 6 groups mixed" in str(gs)


def test_recommend_plans_the_budget():
    cells = len(wai.situations(TOOLS, "Refund only paid orders."))
    sft = wai.recommend(TOOLS, "Refund only paid orders.")
    assert sft["cells"] == cells
    assert sft["simulate_kwargs"] == {"mode": "sft", "budget": math.ceil(max(cells * 5, 2400) / 100) * 100}
    rl = wai.recommend(TOOLS, "Refund only paid orders.", mode="rl", target=1000, mixed_rate=0.25)
    n_sit = max(2 * cells, math.ceil(1000 / (8 * 0.25)))
    assert rl["simulate_kwargs"] == {"mode": "rl", "situations": n_sit, "repeats": 8, "budget": n_sit * 8}
    floor = wai.recommend(TOOLS, mode="rl", target=100, mixed_rate=0.0)
    assert floor["simulate_kwargs"]["situations"] == max(2 * floor["cells"], math.ceil(100 / (8 * 0.02)))
    assert "covering grid" in str(rl)
    with pytest.raises(ValueError, match="mode="):
        wai.recommend(TOOLS, mode="dpo")


def test_retire_solved_is_still_there():
    rows = _rl_rows([1.0, 0.5])
    kept = wai.retire_solved(rows)
    assert {r["task_id"] for r in kept} == {"t1"}
