"""SDK parity for guards (reference §4.4, §4.5, §4.7): TRL-style reward calls, gold sampling on a holdout,
decontaminate with a user embedder and a bounded n, and hack_scan_diff before vs after training.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import whileai as wai


def test_wrap_calls_reward_functions_the_way_trl_does():
    seen = {}

    def rf(completions, **kwargs):  # the TRL docs' shape: no prompts parameter
        seen.update(kwargs)
        return [float("!" in c) for c in completions]

    mon = wai.HackMonitor(every=1000)
    wrapped = mon.wrap(rf)
    # TRL passes everything by keyword: prompts, completions, completion_ids and the dataset columns
    out = wrapped(prompts=["p0", "p1"], completions=["yes!", "no"], completion_ids=[[1], [2]], answer=["a", "b"])
    assert out == [1.0, 0.0] and seen["prompts"] == ["p0", "p1"] and seen["answer"] == ["a", "b"]
    assert mon.n_seen == 2 and mon._buffer[0]["answer"] == "a"
    assert wrapped(["p"], ["ok!"]) == [1.0]  # a direct positional call still works
    with pytest.raises(TypeError, match="completions="):
        wrapped(prompts=["p"])


def _holdout(n=20):
    return [{"task_id": f"h{i}", "prompt": f"question {i}", "privileged": {"reference": str(i)}} for i in range(n)]


def test_holdout_gold_sampling_raises_divergence_when_proxy_climbs_and_gold_does_not():
    def gold(row):  # the eval: the completion must state the reference
        return row["final_text"].startswith(row["privileged"]["reference"] + " ")

    def proxy(prompts, completions, **kw):  # the training reward: likes exclamation marks
        return [min(1.0, c.count("!") / 4) for c in completions]

    mon = wai.HackMonitor(holdout=_holdout(), gold=gold, proxy=proxy, n_prompts=8, k=2, window=2, seed=3,
                          stop_on=["divergence"])
    stage = {"bangs": 0}

    def generate(prompts):  # a policy that answers right half the time and learns to shout
        return [(p.split()[-1] if i % 2 else "x") + " answer" + "!" * stage["bangs"] for i, p in enumerate(prompts)]

    for bangs in (0, 1, 2, 3, 4):
        stage["bangs"] = bangs
        entry = mon.check_holdout(generate)
    assert entry["n"] == 16 and entry["n_prompts"] == 8 and entry["n_gold"] == 16
    assert entry["gold_mean"] == pytest.approx(0.5) and entry["proxy_mean"] == pytest.approx(1.0)
    assert [a["kind"] for a in mon.alarms][:1] == ["divergence"] and mon.should_stop
    assert "holdout proxy reward rose" in mon.alarms[0]["message"]
    assert len(mon.to_dict()["holdout_checks"]) == 5
    with pytest.raises(ValueError, match="holdout= is empty"):
        wai.HackMonitor(holdout=[], gold=gold)
    with pytest.raises(TypeError, match="gold="):
        wai.HackMonitor(holdout=_holdout())


def test_holdout_without_divergence_stays_quiet():
    mon = wai.HackMonitor(holdout=["q1", "q2", "q3"], gold=lambda r: "right" in r["final_text"],
                          proxy=lambda prompts, completions, **kw: [0.5] * len(completions), window=1)
    for _ in range(3):
        mon.check_holdout(lambda prompts: ["right"] * len(prompts))
    assert mon.alarms == [] and mon.holdout_history[-1]["gold_mean"] == 1.0


def test_decontaminate_bounds_n_with_a_clear_error():
    rows = [{"prompt": "what is two plus two"}]
    with pytest.raises(ValueError, match=r"n=1180591620717411303424 .* max_n=256"):
        wai.decontaminate(rows, [{"prompt": "x"}], n=2**70)
    rep = wai.decontaminate(rows, [{"prompt": "what is two plus two"}], n=300, max_n=300)
    assert rep.n_exact == 1


def _bag_embedder(texts):
    """A deterministic embedding: bag of words over a fixed vocabulary with synonyms folded together."""
    synonyms = {"purchase": "buy", "acquire": "buy", "automobile": "car", "vehicle": "car", "cheap": "inexpensive"}
    vocab = ["buy", "car", "inexpensive", "where", "can", "i", "an", "weather", "today", "sunny", "recipe", "bread"]
    out = np.zeros((len(texts), len(vocab)))
    for i, t in enumerate(texts):
        for w in t.lower().replace("?", "").split():
            w = synonyms.get(w, w)
            if w in vocab:
                out[i, vocab.index(w)] += 1
    return out


def test_decontaminate_with_an_embedder_catches_a_paraphrase():
    eval_rows = [{"task_id": "e1", "prompt": "Where can I buy an inexpensive car?"},
                 {"task_id": "e2", "prompt": "Is the weather sunny today?"},
                 {"task_id": "e3", "prompt": "A recipe for bread"}]
    train = [{"task_id": "t1", "prompt": "Where can I purchase a cheap automobile?"},  # a paraphrase of e1
             {"task_id": "t2", "prompt": "recipe for bread"},  # shorter than 8 words and not exact: no n-gram rule fires
             {"task_id": "t3", "prompt": "tell me a joke"}]
    clean, rep = wai.decontaminate(train, eval_rows)
    assert rep.n_semantic == 0 and len(clean) == 3 and any("embedder=" in n for n in rep.notes)
    clean, rep = wai.decontaminate(train, eval_rows, embedder=_bag_embedder, similarity=0.85)
    assert rep.n_semantic == 2 and [r["task_id"] for r in clean] == ["t3"]
    sem = [e for e in rep.examples if e["match"] == "semantic"]
    assert sem[0]["similarity"] >= 0.85 and "inexpensive car" in sem[0]["eval_text"]
    assert rep.calibration is not None and rep.calibration < 0.85
    assert "semantic cosine >= 0.85 2) against 3 eval texts" in str(rep)

    class Model:
        def embed(self, texts):
            return _bag_embedder(texts)

    assert wai.decontaminate(train, eval_rows, embedder=Model()).n_semantic == 2
    with pytest.raises(TypeError, match="embedder="):
        wai.decontaminate(train, eval_rows, embedder=42)
    with pytest.raises(ValueError, match="one vector per text"):
        wai.decontaminate(train, eval_rows, embedder=lambda texts: np.ones((1, 3)))
    with pytest.raises(ValueError, match="similarity="):
        wai.decontaminate(train, eval_rows, embedder=_bag_embedder, similarity=1.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = wai.decontaminate(train, [], embedder=_bag_embedder)
    assert rep.rules_skipped["semantic"] and any(issubclass(w.category, UserWarning) for w in caught)


def _rows(seed, *, shout_pays):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(30):
        for i in range(8):
            bang = rng.random() < 0.5
            text = "Here it is" + ("!!!" if bang else ".") + " " + "word " * int(rng.integers(3, 30))
            p = (0.85 if bang else 0.15) if shout_pays else 0.5
            rows.append({"task_id": f"t{t}", "rollout_index": i, "prompt": f"ask {t}", "final_text": text,
                         "reward": int(rng.random() < p)})
    return rows


def test_hack_scan_diff_names_what_training_taught():
    diff = wai.hack_scan_diff(_rows(0, shout_pays=False), _rows(1, shout_pays=True), permutations=100)
    assert diff["before"]["verdict"] != "reward hack" and diff["after"]["verdict"] == "reward hack"
    assert "exclamations" in diff["gained"]
    assert diff["moved"][0]["feature"] == "exclamations" and diff["moved"][0]["change"] > 0.4
    assert diff["learned"].startswith('the policy learned "exclamations"') and "not endorsed" in diff["learned"]
    assert diff["warnings"][0].startswith("REWARD HACK")
    text = str(diff)
    assert "before:" in text and "n=240 rows" in text
    endorsed = wai.hack_scan_diff(_rows(0, shout_pays=False), _rows(1, shout_pays=True), endorsed="exclamations",
                                  permutations=100)
    assert "which is endorsed" in endorsed["learned"] and not any(w.startswith("REWARD HACK") for w in endorsed["warnings"])


def test_holdout_checks_run_from_the_trainer_callback_and_stop_it():
    pytest.importorskip("transformers")
    from types import SimpleNamespace

    stage = {"bangs": 0}
    mon = wai.HackMonitor(holdout=_holdout(8), gold=lambda r: False, n_prompts=4, k=1, window=1, every=2,
                          proxy=lambda prompts, completions, **kw: [min(1.0, c.count("!") / 4) for c in completions],
                          stop_on="divergence")
    cb = mon.as_callback(generate=lambda prompts: ["ok" + "!" * stage["bangs"]] * len(prompts))
    control = SimpleNamespace(should_training_stop=False)
    for step in range(1, 5):  # checks at steps 2 and 4 (every=2)
        stage["bangs"] = step
        cb.on_step_end(None, SimpleNamespace(global_step=step), control)
    assert [h["step"] for h in mon.holdout_history] == [2, 4]
    assert mon.alarms and mon.alarms[0]["kind"] == "divergence" and control.should_training_stop is True
