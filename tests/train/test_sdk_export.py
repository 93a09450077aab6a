"""SDK parity for export (reference §5.1-5.3): format="openai"|"trl"|"fireworks", unroll=, max_tool_output_chars=,
the flat group stamp, export_preference, export_environment(runtime="openenv") with reset/step/state, the
judge= error, and load_environment on the facade.

openenv (``openenv-core``) is not installed here, so the generated OpenEnv package is imported through its
own fallback (plain dataclasses with OpenEnv's fields and a FastAPI app with OpenEnv's routes).
"""

from __future__ import annotations

import importlib
import json
import sys

import pytest
import train_helpers as th

import whileai as wai


def _rows():
    """Four tasks x two rollouts of a two-turn tool conversation (assistant, tool, assistant)."""
    return [dict(th.tool_row(i), row_id=f"t{i}#{k}", rollout_index=k, reward=k % 2) for i in range(4) for k in range(2)]


def test_openai_rows_carry_the_flat_group_stamp():
    rep = wai.export(_rows(), mode="sft")
    row = rep["rows"][0]
    assert rep["format"] == "openai" and {"group_id", "k", "n0", "n1", "reward_mean", "reward_std"} <= set(row)
    assert (row["k"], row["n0"], row["n1"], row["reward_mean"], row["reward_std"]) == (2, 1, 1, 0.5, 0.5)
    single = wai.export([_rows()[0]], mode="sft")["rows"][0]  # no task repeats: no group stamp
    assert "group_id" not in single and "k" not in single


def test_unroll_gives_one_sample_per_assistant_turn():
    rep = wai.export(_rows(), mode="sft", unroll=True)
    assert rep["n"] == 16 and rep["unrolled"] and rep["mask_mode"] == "assistant (unrolled)"
    first, second = rep["rows"][0], rep["rows"][1]
    assert first["unroll"] == {"turn": 1, "turns": 2} and second["unroll"] == {"turn": 2, "turns": 2}
    assert first["messages"][-1]["role"] == "assistant" and sum(first["loss_mask"]) == 1
    assert first["loss_mask"][-1] == 1 and len(second["messages"]) > len(first["messages"])
    assert second["lineage"]["unrolled_from"]["rollout_index"] == 0
    assert len(second["lineage"]["unrolled_from"]["prompt_sha1"]) == 12


def test_max_tool_output_chars_cuts_tool_messages():
    rep = wai.export(_rows(), mode="sft", max_tool_output_chars=5)
    tool = next(m for m in rep["rows"][0]["messages"] if m["role"] == "tool")
    full = next(m for m in th.tool_row(0)["messages"] if m["role"] == "tool")["content"]
    extra = len(full) - 5
    assert tool["content"] == full[:5] + f"[... {extra} chars of tool output truncated]"
    assert rep["tool_output_truncated"] == 8 and rep["tool_output_chars_cut"] == 8 * extra


def test_fireworks_and_trl_formats(tmp_path):
    rep = wai.export(_rows(), tmp_path / "fw.jsonl", mode="sft", format="fireworks", mask_mode="final")
    lines = [json.loads(x) for x in (tmp_path / "fw.jsonl").read_text().splitlines()]
    assert rep["format"] == "fireworks" and set(lines[0]) == {"messages", "tools"}
    msgs = lines[0]["messages"]
    assert msgs[0]["role"] == "system"
    assert [m.get("weight") for m in msgs if m["role"] == "assistant"] == [0, 1]
    assert all("weight" not in m for m in msgs if m["role"] != "assistant")
    call = next(m for m in msgs if m.get("tool_calls"))["tool_calls"][0]
    assert isinstance(call["function"]["arguments"], str)
    trl = wai.export(_rows(), mode="sft", format="trl")["rows"]
    assert "messages" in trl[0] and "loss_mask" not in trl[0]
    call = next(m for m in trl[0]["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert isinstance(call["function"]["arguments"], dict)
    final = wai.export(_rows(), mode="sft", format="trl", mask_mode="final")["rows"]
    assert {"prompt", "completion"} <= set(final[0])  # the mask survives as prompt/completion
    with pytest.raises(ValueError, match="format="):
        wai.export(_rows(), format="jsonl")


def _pairs():
    rows = _rows()
    for r in rows:
        r["prompt"] = r["messages"][1]["content"]
    return wai.build_preference_pairs(rows, min_margin=1.0)


def test_export_preference_in_three_forms(tmp_path):
    same = _pairs()
    assert len(same.pairs) == 4
    pairs = [dict(p, rejected=dict(p["rejected"], messages=p["rejected"]["messages"][:2]
                                   + [{"role": "assistant", "content": "I cannot read files."}]))
             for p in same.pairs]
    rep = wai.export_preference(pairs, tmp_path / "dpo.jsonl", tools=[th.READ_FILE_TOOL])
    lines = [json.loads(x) for x in (tmp_path / "dpo.jsonl").read_text().splitlines()]
    assert rep["pairs"] == 4 and rep["ties_dropped"] == 0 and rep["path"].endswith("dpo.jsonl")
    assert {"prompt", "chosen", "rejected", "chosen_score", "rejected_score", "margin"} <= set(lines[0])
    assert lines[0]["chosen"][0]["role"] == "system" and lines[0]["margin"] == 1
    assert lines[0]["rejected"][-1] == {"role": "assistant", "content": "I cannot read files."}
    trl = wai.export_preference(pairs, format="trl")["rows"]
    assert trl[0]["prompt"][-1]["role"] == "user" and trl[0]["chosen"][0]["role"] == "assistant"
    assert isinstance(trl[0]["chosen"][0]["tool_calls"][0]["function"]["arguments"], dict)
    fw = wai.export_preference(pairs, format="fireworks")
    line = fw["rows"][0]
    assert set(line) == {"input", "preferred_output", "non_preferred_output"}
    assert [m["role"] for m in line["input"]["messages"]] == ["system", "user"]
    assert line["non_preferred_output"] == [{"role": "assistant", "content": "I cannot read files."}]
    assert line["preferred_output"][0].get("tool_calls") and fw["fireworks_turns_cut"] == 4
    # the two sides of these pairs are one conversation: no differing assistant turn for Fireworks
    with pytest.raises(ValueError, match="no_preference_pairs"):
        wai.export_preference(same, format="fireworks")
    ties = [dict(p, rejected_score=p["chosen_score"]) for p in pairs]
    with pytest.raises(ValueError, match="4 ties dropped"):
        wai.export_preference(ties)
    assert wai.export_preference(ties, drop_ties=False)["pairs"] == 4


def test_export_environment_without_judge_names_the_argument(tmp_path):
    with pytest.raises(TypeError, match="needs judge="):
        wai.export_environment(_rows(), tmp_path)
    with pytest.raises(ValueError, match="runtime="):
        wai.export_environment(_rows(), tmp_path, judge=th.reference_judge, runtime="gym")
    exp = wai.export_environment(_rows(), tmp_path / "r", reward=th.reference_judge, holdout=0)  # the SDK's name
    assert exp.judge == "train_helpers:reference_judge"


def test_openenv_package_resets_steps_and_reports_state(tmp_path, monkeypatch):
    assert importlib.util.find_spec("openenv_core") is None  # the fallback path is what runs here
    rows = [dict(r, privileged={"reference": f"answer-{r['task_id']}"}) for r in _rows()]
    exp = wai.export_environment(rows, tmp_path / "oe", judge=th.reference_judge, name="shop_env",
                                 runtime="openenv", holdout=0)
    root = tmp_path / "oe"
    for f in ("openenv.yaml", "pyproject.toml", "README.md", "shop_env/models.py", "shop_env/server/app.py",
              "shop_env/server/environment.py", "shop_env/spec.json", "shop_env/data/train.jsonl"):
        assert (root / f).exists(), f
    assert "app: shop_env.server.app:app" in (root / "openenv.yaml").read_text()
    monkeypatch.syspath_prepend(str(root))
    pkg = importlib.import_module("shop_env")
    env = pkg.ShopEnvEnvironment()
    obs = env.reset(index=0)
    assert obs.done is False and obs.reward is None and obs.prompt[-1]["role"] == "user"
    assert env.state.step_count == 0 and env.state.example_id == obs.example_id
    answer = json.loads((root / "shop_env" / "data" / "train.jsonl").read_text().splitlines()[0])["answer"]
    done = env.step(pkg.ShopEnvAction(message=f"It is {answer}."))
    assert done.done is True and done.reward == 1.0 and env.state.step_count == 1
    with pytest.raises(ValueError, match="call reset"):
        env.step(pkg.ShopEnvAction(message="again"))
    env.reset(seed=3)
    assert env.step(pkg.ShopEnvAction(message="no idea")).reward == 0.0
    # the HTTP routes (FastAPI fallback), in process
    from fastapi.testclient import TestClient

    app = importlib.import_module("shop_env.server.app").app
    with TestClient(app) as client:
        assert client.get("/health").json() == {"status": "healthy"}
        first = client.post("/reset", json={"index": 0}).json()
        assert first["done"] is False and first["observation"]["prompt"]
        step = client.post("/step", json={"action": {"message": f"It is {answer}."}}).json()
        assert step["reward"] == 1.0 and step["done"] is True
        assert client.get("/state").json()["step_count"] == 1
    # the same package loads through the facade's load_environment (the rubric over its data)
    loaded = wai.load_environment(root / "shop_env")
    assert len(loaded.dataset) == 4 and loaded.score(loaded.dataset[0], f"It is {answer}.") == 1.0
    for mod in [m for m in sys.modules if m == "shop_env" or m.startswith("shop_env.")]:
        monkeypatch.delitem(sys.modules, mod)
    assert exp.to_dict()["n_train"] == 4
