"""The SDK's import paths and shapes (issue 29): ``whileai.simulations``/``whileai.config`` over the same objects,
reports that index like the SDK's dicts, ``wai.verify``'s built-ins under the SDK's names."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import train_helpers as th

import whileai as wai

ROOT = Path(__file__).resolve().parents[1]


def test_simulations_namespace_runs_the_seed_quickstart(tmp_path):
    program = (ROOT / "examples" / "quickstart.py").read_text()
    assert "import whileai as wai\n" in program
    program = program.replace("import whileai as wai\n", "import whileai.simulations as wai\n", 1)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("pass@1 0.67 [0.55..0.78] | pass^4 (pass_pow_k) 0.19")
    assert (tmp_path / "train.jsonl").stat().st_size > 0


def test_simulations_and_config_are_the_same_objects():
    import whileai.simulations as sims
    import whileai.simulations.defaults as sdk_defaults
    import whileai_core.defaults
    from whileai import config

    assert sims.simulate is wai.simulate and sims.select is wai.select and sims.pass_at is wai.pass_at
    assert sdk_defaults is whileai_core.defaults and sims.defaults is whileai_core.defaults
    assert config.configure is wai.configure and config.context is wai.context and config.settings is wai.settings
    assert set(sims.__all__) >= set(wai.__all__) and "simulate" in dir(sims)
    with pytest.raises(AttributeError, match=r"whileai\.simulations.*no_such_name"):
        _ = sims.no_such_name


def _scored(rate, budget=64):
    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {}

    data = wai.simulate(wai.seeded_agent([get_order], rate=rate), tools=[get_order], system_prompt="Help.",
                        simulator=False, repeats=4, budget=budget)
    return data.grade(judge=lambda row: int(not row["seeded"]))


def _read_only_mapping(rep, keys):
    from collections.abc import Mapping

    assert isinstance(rep, Mapping)
    for key in keys:
        assert key in rep and key in list(rep.keys()) and rep.get(key, "absent") == rep[key]
    assert dict(rep).keys() == set(rep.keys()) and len(rep) == len(rep.keys())
    with pytest.raises(KeyError, match="not a key of"):
        rep["no_such_key"]
    with pytest.raises(TypeError, match="read-only"):
        rep[keys[0]] = 1


def test_every_report_is_a_read_only_mapping_with_the_sdks_keys(tmp_path):
    before, after = _scored(0.4), _scored(0.1)
    hack = wai.hack_scan(after.rows)
    _read_only_mapping(hack, ["regime", "tau", "n_rows", "n_graded", "n_groups", "top_feature", "warnings"])
    assert hack["regime"] in {"train", "reward_hack", "no_signal", "too_few_rows", "degenerate"}
    assert hack["tau"] == hack.floor and hack.verdict  # attribute access stays
    delta = wai.delta_report(before.rows, after.rows)
    _read_only_mapping(delta, ["ok", "target_verdict", "target_delta", "target_ci95", "n_paired_tasks"])
    assert delta["target_delta"] == delta.delta and delta["n_paired_tasks"] == delta.n_paired
    comparison = wai.compare(before, after)
    _read_only_mapping(comparison, ["ok", "target_delta", "n_paired_tasks", "warnings", "verdict"])
    assert comparison["ok"] is comparison.ok and comparison["target_delta"] == comparison.headline.delta
    variance = wai.eval_variance(before.rows, _scored(0.4).rows, _scored(0.4).rows)
    _read_only_mapping(variance, ["metric", "n_runs", "means", "mean", "run_std"])
    assert variance["means"]["run_1"] == variance.means[0] and variance["run_std"] == variance.run_sd
    size = wai.holdout_size(0.10, base=0.6, k=4, power=0.8, alpha=0.05)
    _read_only_mapping(size, ["n_tasks", "effect", "base", "k", "power", "alpha", "task_std", "sd_source", "notes"])
    assert size["n_tasks"] == int(size)
    prompt = "Where is order A1001 right now please tell me its status today"
    clean, report = wai.decontaminate(wai.rows([prompt], ["It shipped."]), wai.rows([prompt], ["x"]))
    _read_only_mapping(report, ["n", "n_kept", "n_contaminated", "contamination_rate", "examples"])
    assert report["n_contaminated"] == 1 and clean == []
    labels = [{"row_id": r["row_id"], "label": int(not r["seeded"])} for r in after.rows]
    trust = wai.judge_trust(wai.attach_labels(after.rows, labels, kind="human"), gold="gold_reward")
    _read_only_mapping(trust, ["ok", "n_rows", "n_labeled", "gold_kind", "floors", "skipped", "agreement"])
    assert trust["agreement"]["agreement"] == trust.agreement == 1.0
    plan = wai.curriculum(before.rows)
    _read_only_mapping(plan, ["n_tasks", "n_trainable", "n_solved", "schedule", "tiers", "thresholds"])
    assert plan["schedule"] == plan.schedule
    env = wai.export_environment(after.rows, tmp_path / "env", judge=th.reference_judge)
    _read_only_mapping(env, ["path", "name", "n_train", "n_holdout", "files"])
    assert env["n_train"] == env.n_train


def test_verify_has_the_sdks_builtins_and_combinators():
    v = wai.verify
    assert v.Numeric is wai.Numeric and v.ExactMatch is wai.ExactMatch and v.Regex is wai.Regex
    assert v.All is v.AllOf and v.Any is v.AnyOf and v.JSONValid is wai.JSONValid and v.verifier is wai.verifier
    row = {"final_text": "The answer is 42", "reference": "42"}
    assert v.Numeric()(row)["reward"] == 1 and v.Includes()(row)["reward"] == 1 and v.ExactMatch()(row)["reward"] == 0
    assert v.All([v.Numeric(), v.ExactMatch()])(row)["reward"] == 0 and v.Any([v.ExactMatch(), v.Numeric()])(row)["reward"] == 1
    assert v.Weighted([(v.ExactMatch(), 1), (v.Numeric(), 3)])(row)["reward"] == 0.75
    assert v.Weighted([(v.ExactMatch(), 1), (v.Numeric(), 1)])({"final_text": "x"})["reward"] is None  # no reference
    with pytest.raises(wai.InvalidArgument, match="pairs"):
        v.Weighted([v.Numeric()])
    reply = {"final_text": '{"order": {"status": " Shipped "}}'}
    assert v.JSONField("order.status", equals="shipped")(reply)["reward"] == 1
    assert v.JSONField("order.id")(reply)["reward"] == 0 and v.JSONField("order.status")(reply)["reward"] == 1
    assert v.as_verifier(lambda r: r["final_text"].endswith("42"))(row)["reward"] == 1
    assert v.as_verifier(lambda reply, ref: ref in reply)(row)["reward"] == 1
    exact = v.ExactMatch()
    assert v.as_verifier(exact) is exact
    with pytest.raises(TypeError, match="callable"):
        v.as_verifier(3)
    wire = {"messages": [{"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "A1"}'}}]}]}
    assert v.tool_calls(wire) == [{"name": "get_order", "arguments": {"order_id": "A1"}}]


def test_documented_keywords_work_or_name_the_difference(tmp_path):
    before, after = _scored(0.4), _scored(0.1)
    plain = wai.compare(before, after)
    named = wai.compare(before, after, target="pass_at_1", n_boot=2000, run_std=0.02, run_std_runs=3)
    assert named.delta == plain.delta and named.ok and named.headline.noise_band is not None
    assert wai.compare(before, after, target="pass_at_1", min_effect=0.05).target == 0.05
    with pytest.raises(wai.InvalidArgument, match=r"compare\(target='marker:hedging'\)"):
        wai.compare(before, after, target="marker:hedging")
    with pytest.raises(wai.InvalidArgument, match=r"compare\(target='accuracy'\)"):
        wai.compare(before, after, target="accuracy")
    assert wai.compare(before, after, proxy="marker:hedging")["proxy_verdict"] == "proxy_not_measured"
    for name in ("train_runs", "lower_is_better", "balance_rollouts"):
        with pytest.raises(TypeError, match=rf"compare\({name}=\.\.\.\) is the whileai SDK's keyword.*docs/sdk.md"):
            wai.compare(before, after, **{name: 1})
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        wai.compare(before, after, bogus=1)
    assert wai.wilson_interval(45, 50, z=1.96) == pytest.approx(wai.wilson_interval(45, 50), abs=1e-5)
    with pytest.raises(wai.InvalidArgument, match="not both"):
        wai.wilson_interval(45, 50, z=1.96, level=0.9)

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {}

    for name, value in (("sampling", {}), ("timeout", 5), ("advanced", {}), ("n", 2),
                        ("patience", 3), ("hard_share", 0.4), ("reproducible", False), ("strategy", "broad")):
        with pytest.raises(TypeError, match=rf"simulate\({name}=\.\.\.\) is the whileai SDK's keyword.*docs/sdk.md"):
            wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, budget=8, **{name: value})
    same = [wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, budget=8, **kw).rows
            for kw in ({}, {"reproducible": True})]
    assert [r["row_id"] for r in same[0]] == [r["row_id"] for r in same[1]]
    unique = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, budget=8, unique=True)
    assert len({r["task_id"] for r in unique.rows}) == len(unique.rows) == 8
    sel = after.select(mode="sft", output=tmp_path / "sft.jsonl", quiet=True)
    assert sel.report["export"]["n"] == len(sel) == len((tmp_path / "sft.jsonl").read_text().splitlines())
    think = [dict(r, messages=[*r["messages"][:-1], {"role": "assistant", "content": "<think>hm</think>Done."}],
                  final_text="<think>hm</think>Done.") for r in after.rows[:4]]
    kept = wai.export(think, tmp_path / "keep.jsonl")
    stripped = wai.export(think, tmp_path / "strip.jsonl", strip_think=True)
    assert kept["n"] == stripped["n"] == 4
    assert "<think>" in (tmp_path / "keep.jsonl").read_text() and "<think>" not in (tmp_path / "strip.jsonl").read_text()
    with pytest.raises(ValueError, match="push_to needs an output path"):  # the push itself: tests/test_hub.py
        wai.export(after.rows, None, push_to="me/data")


def test_tasks_replays_each_task_once_and_grader_grades_in_place():
    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {}

    base = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, budget=16, repeats=4)
    again = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, tasks=base.rows, repeats=4)
    keys = [(r["task_id"], r["rollout_index"]) for r in again.rows]
    assert len(keys) == len(set(keys)) == len(base.rows)  # no repeated rows
    order = list(dict.fromkeys(r["task_id"] for r in base.rows))
    assert list(dict.fromkeys(r["task_id"] for r in again.rows)) == order
    assert {r["task_id"]: r["prompt"] for r in again.rows} == {r["task_id"]: r["prompt"] for r in base.rows}
    assert all(r.get("reward") is None for r in base.rows)
    scored = base.grade(grader=lambda row: int(not row["seeded"]))  # the SDK's spelling grades the run itself
    assert [r["reward"] for r in base.rows] == [r["reward"] for r in scored.rows]
    assert len(wai.select(base, mode="rl", quiet=True)) == len(scored.select(mode="rl", quiet=True)) > 0
    untouched = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], simulator=False, budget=8)
    untouched.grade(judge=lambda row: 1)  # judge= returns graded copies and leaves the run as it was
    assert all(r.get("reward") is None for r in untouched.rows)
