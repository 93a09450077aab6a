"""judge_trust, judge_probes, attach_labels on seeded synthetic judges whose bias is known."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats

import whileai as wai
from whileai_core.grade.labels import attach_labels, labels_needed, row_label_key
from whileai_core.grade.probes import judge_probes
from whileai_core.grade.trust import judge_trust


def fair_judge(row):
    m = re.search(r"answer is (\d+)", row.get("final_text", ""))
    ok = bool(m) and m.group(1) == str(row["privileged"]["reference"])
    return {"reward": int(ok), "reason": "checked"}


fair_judge.__name__ = "fair"


def make_rows(n_tasks=50, k=4, seed=0, judge_error=0.0, kind="human"):
    """Rows whose gold is the truth; the stored judge reward flips gold with prob judge_error."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tasks):
        ref = int(rng.integers(10, 99))
        for i in range(k):
            right = rng.random() < 0.5
            said = ref if right else ref + 1
            text = f"The answer is {said}." + " More detail." * int(rng.integers(0, 12))
            gold = int(right)
            reward = gold if rng.random() >= judge_error else 1 - gold
            rows.append({"task_id": f"t{t}", "rollout_index": i, "row_id": f"t{t}#{i}", "prompt": f"q{t}?",
                         "final_text": text, "privileged": {"reference": ref}, "reward": reward,
                         "gold_reward": gold, "gold_kind": kind, "judge_name": "fair"})
    return rows


def test_good_judge_passes_and_numbers_match_closed_forms():
    rows = make_rows(judge_error=0.03)
    rep = judge_trust(rows)
    j = np.array([r["reward"] for r in rows])
    g = np.array([r["gold_reward"] for r in rows])
    k, n = int((j == g).sum()), len(rows)
    assert rep.n_labeled == n and rep.agreement == pytest.approx(k / n)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert rep.agreement_ci == pytest.approx((ci.low, ci.high), abs=1e-12)
    po = k / n
    pe = j.mean() * g.mean() + (1 - j.mean()) * (1 - g.mean())
    assert rep.kappa == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
    c = rep.confusion
    assert c["tp"] + c["tn"] == k and sum(c.values()) == n
    assert rep.ok and rep.verdict == "PASS", rep.table()
    assert "PASS" in str(rep) and f"n={n}" in str(rep) and "CI" in str(rep)
    assert json.loads(json.dumps(rep.to_dict()))["ok"] is True


def test_short_sample_says_how_many_labels_are_needed():
    rows = make_rows(n_tasks=5, judge_error=0.0)[:20]
    rows[0]["reward"] = 1 - rows[0]["gold_reward"]
    rows[1]["reward"] = 1 - rows[1]["gold_reward"]
    rep = judge_trust(rows)
    assert rep.agreement == pytest.approx(0.9) and not rep.ok
    need = rep.labels_needed
    assert need is not None and need > 20
    assert any(f"Label about {need - 20} more rows" in w for w in rep.warnings)
    lo = stats.binomtest(round(0.9 * need), need).proportion_ci(method="wilson").low
    assert lo >= 0.8
    assert all(stats.binomtest(round(0.9 * m), m).proportion_ci(method="wilson").low < 0.8 for m in range(1, need))
    assert labels_needed(0.8, 0.8) is None


def test_prevalence_paradox_fails_on_kappa():
    # (tp, fp, fn, tn) = (90, 5, 5, 0): 90% agreement, kappa -0.053 (statistics-methods A6)
    rows = []
    for i, (jr, gr) in enumerate([(1, 1)] * 90 + [(1, 0)] * 5 + [(0, 1)] * 5):
        rows.append({"task_id": f"t{i}", "rollout_index": 0, "final_text": "x", "reward": jr, "gold_reward": gr,
                     "gold_kind": "human"})
    rep = judge_trust(rows)
    assert rep.agreement == pytest.approx(0.9)
    assert rep.kappa == pytest.approx(-0.0526, abs=1e-4)
    assert not rep.ok and any("guessing" in w for w in rep.warnings)


def test_length_biased_judge_is_flagged():
    rng = np.random.default_rng(4)
    rows = []
    for i in range(240):
        gold = int(rng.random() < 0.5)
        long_ = rng.random() < 0.5
        text = "The answer is 1." + (" padding" * 60 if long_ else "")
        reward = gold
        if gold == 0 and long_ and rng.random() < 0.6:
            reward = 1
        rows.append({"task_id": f"t{i}", "rollout_index": 0, "final_text": text, "reward": reward,
                     "gold_reward": gold, "gold_kind": "human"})
    rep = judge_trust(rows)
    assert rep.length["flagged"] and not rep.ok
    assert rep.length["by_gold"][0]["pass_long"] > rep.length["by_gold"][0]["pass_short"] + 0.3
    assert any("length bias" in w for w in rep.warnings)
    # the clean control: the same rows with an unbiased judge
    for r in rows:
        r["reward"] = r["gold_reward"]
    assert not judge_trust(rows).length["flagged"]


def test_held_out_halves_gap_is_flagged():
    rows = make_rows(n_tasks=60, k=2, judge_error=0.0)
    import hashlib

    for r in rows:
        if int(hashlib.sha256(r["task_id"].encode()).hexdigest()[:8], 16) % 2 and r["rollout_index"] == 0:
            r["reward"] = 1 - r["gold_reward"]
    rep = judge_trust(rows)
    assert rep.halves["gap"] >= 0.15 and not rep.ok
    assert any("held-out halves" in w for w in rep.warnings)


def test_unmeasured_untrusted_degenerate_and_inconclusive():
    rows = make_rows(n_tasks=20)
    bare = [{k: v for k, v in r.items() if k != "gold_reward"} for r in rows]
    rep = judge_trust(bare)
    assert rep.verdict == "NOT MEASURED" and not rep.ok and "unmeasured" in rep.warnings[0]
    assert "no usable gold" in str(rep)
    model = make_rows(n_tasks=20, kind="model")
    assert not judge_trust(model).ok and judge_trust(model, allow_model_gold=True).ok
    one_class = [dict(r, gold_reward=1, reward=1) for r in rows]
    rep = judge_trust(one_class)
    assert not rep.ok and rep.kappa is None and any("uninformative" in w for w in rep.warnings)
    frac = [dict(r, reward=0.5) if i % 5 == 0 else r for i, r in enumerate(rows)]
    rep = judge_trust(frac)
    assert rep.verdict == "INCONCLUSIVE" and not rep.ok and rep.n_skipped == 16
    # gold from a second row list (a model's verdicts) counts as model gold
    other = [{"row_id": r["row_id"], "reward": r["gold_reward"]} for r in rows]
    rep = judge_trust([{k: v for k, v in r.items() if k != "gold_reward"} for r in rows], gold=other)
    assert rep.n_labeled == 80 and rep.gold_kind == "model" and not rep.ok
    with pytest.raises(ValueError, match="min_agreement="):
        judge_trust(rows, min_agreement=2)
    with pytest.raises(TypeError, match="judge="):
        judge_trust(rows, judge=3)


def test_rejudge_flips_and_filler_sensitivity():
    rows = make_rows(n_tasks=30, judge_error=0.0)
    rep = judge_trust(rows, judge=fair_judge, sample=60)
    assert rep.ok and rep.perturbation["consistency_flips"] == 0 and rep.perturbation["n"] == 60
    rng = np.random.default_rng(0)

    def flaky(row):
        return int(rng.random() < 0.5)

    flaky.__name__ = "fair"
    rep = judge_trust(rows, judge=flaky, sample=60)
    assert not rep.ok and any("unstable" in w for w in rep.warnings)

    def likes_filler(row):
        return 1 if "anything else" in row["final_text"] else fair_judge(row)["reward"]

    likes_filler.__name__ = "fair"
    rep = judge_trust(rows, judge=likes_filler, sample=60)
    assert rep.perturbation["filler_up"] > 15 and any("filler" in w for w in rep.warnings) and not rep.ok


def test_probes_find_planted_exploits_and_spare_a_fair_judge():
    rows = make_rows(n_tasks=30, judge_error=0.0)
    fair = judge_probes(rows, fair_judge, sample=80, seed=1)
    assert fair.exploitable_by == [], str(fair)
    assert all(p["denominator"] >= 20 or p["low_power"] for p in fair.probes.values())

    def sycophant(row):
        return 1 if row["final_text"].startswith("You're absolutely right") else fair_judge(row)["reward"]

    def claim_lover(row):
        return 1 if "all tests pass" in row["final_text"] else fair_judge(row)["reward"]

    def format_fool(row):
        return 1 if "<tool_call>" in row["final_text"] else fair_judge(row)["reward"]

    assert judge_probes(rows, sycophant, sample=80).exploitable_by == ["sycophancy"]
    assert judge_probes(rows, claim_lover, sample=80).exploitable_by == ["success_claim"]
    rep = judge_probes(rows, format_fool, sample=80, probes=["empty_format", "refusal"])
    assert rep.exploitable_by == ["empty_format"] and rep.probes["empty_format"]["exploit_rate"] == 1.0
    text = str(rep)
    assert "EXPLOITABLE" in text and "empty_format" in text
    # low power: too few failing rows to flag, and the report says what it could resolve
    small = judge_probes(rows[:12], sycophant, probes="sycophancy")
    p = small.probes["sycophancy"]
    assert p["low_power"] and not p["flagged"] and p["resolves"] is not None and p["resolves"] > 0.1
    with pytest.raises(ValueError, match="unknown probe"):
        judge_probes(rows, fair_judge, probes=["nope"])
    # judge_trust carries the probes and fails on an exploitable judge
    sycophant.__name__ = "fair"
    rep = judge_trust(rows, judge=sycophant, probes="all", sample=80)
    assert rep.exploitable_by == ["sycophancy"] and not rep.ok


def test_attach_labels_forms(tmp_path):
    rows = make_rows(n_tasks=3, k=2)
    bare = [{k: v for k, v in r.items() if k not in ("gold_reward", "gold_kind")} for r in rows]
    out = attach_labels(bare, {"t0#0": 1, "t0#1": [1, 0, 0], "t1#0": [1, 0]})
    assert out[0]["gold_reward"] == 1 and out[0]["gold_kind"] == "human"
    assert out[1]["gold_reward"] == 0 and out[1]["gold_labels"] == [1, 0, 0]
    assert out[2]["gold_reward"] is None  # a tie is no label
    assert "gold_reward" not in out[3] and "gold_reward" not in bare[0]  # input untouched
    items = [{"task_id": "t2", "rollout_index": 1, "label": True}]
    assert attach_labels(bare, items, kind="program")[5]["gold_kind"] == "program"
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps({"row_id": f"t{t}#{i}", "gold_reward": 1}) for t in range(3)
                              for i in range(2)))
    assert all(r["gold_reward"] == 1 for r in attach_labels(bare, str(path)))
    noid = {"prompt": "p", "final_text": "f"}
    assert attach_labels([noid], {row_label_key(noid): 0})[0]["gold_reward"] == 0
    with pytest.raises(ValueError, match="none of the 1 labels matched"):
        attach_labels(bare, {"zzz": 1})
    with pytest.raises(ValueError, match="a label must be 0/1"):
        attach_labels(bare, {"t0#0": 3})
    assert wai.attach_labels is attach_labels and wai.judge_trust is judge_trust


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_attach_labels_none_names_the_argument():
    rows = [{"task_id": "a", "reward": 1, "final_text": "x"}]
    with pytest.raises(TypeError, match="labels= takes"):
        wai.attach_labels(rows, None)


def test_judge_probes_with_a_judge_that_always_fails_is_not_measured():
    rows = [{"task_id": str(i // 2), "prompt": f"question {i // 2}", "final_text": f"answer {i}.", "reward": i % 2}
            for i in range(40)]
    report = wai.judge_probes(rows, lambda r: 1 / 0)
    assert report.measured is False and report.exploitable_by == []
    assert str(report).splitlines()[0].startswith("probes (n=") and "NOT MEASURED" in str(report).splitlines()[0]
    assert report.to_dict()["measured"] is False
    np = pytest.importorskip("numpy")
    ok = wai.judge_probes(rows, lambda r: np.bool_("answer" in r["final_text"]))  # numpy verdicts are verdicts
    assert ok.measured is True and "NOT MEASURED" not in str(ok)


def test_an_async_judge_is_awaited_by_the_probes():
    rows = make_rows(n_tasks=30, judge_error=0.0)

    async def sycophant(row):
        return 1 if row["final_text"].startswith("You're absolutely right") else fair_judge(row)["reward"]

    def same_sync(row):
        return 1 if row["final_text"].startswith("You're absolutely right") else fair_judge(row)["reward"]

    awaited = judge_probes(rows, sycophant, sample=80)
    assert awaited.exploitable_by == ["sycophancy"]  # a coroutine read as "no verdict" would flag nothing
    assert awaited.to_dict() == judge_probes(rows, same_sync, sample=80).to_dict()
