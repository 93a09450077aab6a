"""Train and prove: TRL formats, SFT / DPO / GRPO on a tiny local model, holdout, prove, LocalModel, environment.

The format, holdout and environment tests need no torch. Trainer tests skip without the train extra
(``pytest.importorskip("trl")``) and run on a ~0.16M-parameter Llama built in a temp dir (tests/train_helpers.py):
nothing is downloaded, one torch thread, a few optimizer steps each.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import train_helpers as th

from whileai_core.train import trl_formats as fmt
from whileai_core.train.holdout import contamination, holdout

pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


# ----------------------------------------------------------------------------------------------------------
# formats (no torch)
# ----------------------------------------------------------------------------------------------------------
def test_sft_conversational_rows_keep_tool_calls_and_drop_privileged():
    rows = [th.tool_row(i) for i in range(3)]
    examples = fmt.to_sft(rows)
    assert len(examples) == 3
    ex = examples[0]
    assert set(ex) == {"messages", "tools"}  # no string `prompt` beside messages, no privileged, no loss_mask
    assert [m["role"] for m in ex["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    call = ex["messages"][2]["tool_calls"][0]["function"]
    assert call == {"name": "read_file", "arguments": {"path": "/data/file0.txt"}}  # JSON string -> dict
    assert ex["messages"][3]["name"] == "read_file"  # linked to its call by tool_call_id
    assert json.loads(ex["tools"])[0]["function"]["name"] == "read_file"
    assert "privileged" not in json.dumps(examples) and "value 0\"" not in json.dumps(examples)
    string_form = fmt.to_sft(rows, arguments="string")[0]["messages"][2]["tool_calls"][0]["function"]
    assert string_form["arguments"] == '{"path": "/data/file0.txt"}'


def test_sft_mask_final_and_unrolled_turns():
    row = th.tool_row(1)
    final = fmt.to_sft([row], mask="final")
    assert set(final[0]) == {"prompt", "completion", "tools"}
    assert [m["role"] for m in final[0]["prompt"]] == ["system", "user", "assistant", "tool"]
    assert final[0]["completion"] == [{"role": "assistant", "content": "The file says value 1."}]
    # a mask that skips a later assistant turn is unrolled: one example per trained turn
    messages = row["messages"] + [{"role": "user", "content": "thanks"}, {"role": "assistant", "content": "ok"}]
    skip = dict(row, messages=messages, loss_mask=[0, 0, 1, 0, 0, 0, 1])
    unrolled = fmt.to_sft([skip])
    assert [len(e["prompt"]) for e in unrolled] == [2, 6]
    assert [e["completion"][0].get("content") for e in unrolled] == ["", "ok"]
    # the row's own loss_mask matching "all assistant" gives the conversational form
    assert set(fmt.to_sft([row])[0]) == {"messages", "tools"}


def test_sft_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="mask= must be one of"):
        fmt.to_sft([th.tool_row(0)], mask="everything")
    with pytest.raises(ValueError, match="loss_mask has 2 entries but messages has 5"):
        fmt.to_sft([dict(th.tool_row(0), loss_mask=[0, 1])])
    with pytest.raises(ValueError, match="non-assistant"):
        fmt.to_sft([dict(th.tool_row(0), loss_mask=[1, 0, 1, 0, 1])])
    with pytest.raises(ValueError, match="rows= is empty"):
        fmt.to_sft([])
    bad = th.tool_row(0)
    bad["messages"][2]["tool_calls"][0]["function"]["arguments"] = "{not json"
    with pytest.raises(ValueError, match="arguments='string'"):
        fmt.to_sft([bad])


def test_dpo_triples_from_strings_rows_and_message_lists():
    plain = fmt.to_dpo([{"prompt": "colour?", "chosen": "red", "rejected": "blue"}], system_prompt="Be brief.")
    assert plain == [{"prompt": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "colour?"}],
                      "chosen": [{"role": "assistant", "content": "red"}],
                      "rejected": [{"role": "assistant", "content": "blue"}]}]
    good, bad = th.tool_row(2), th.tool_row(2)
    bad["messages"] = bad["messages"][:2] + [{"role": "assistant", "content": "I cannot read files."}]
    pair = {"prompt": good["prompt"], "chosen": good, "rejected": bad, "margin": 1.0}
    (triple,) = fmt.to_dpo(([pair], {"pairs": 1}))  # the (pairs, report) tuple of build_preference_pairs
    assert [m["role"] for m in triple["prompt"]] == ["system", "user"]
    assert [m["role"] for m in triple["chosen"]] == ["assistant", "tool", "assistant"]
    assert triple["chosen"][0]["tool_calls"][0]["function"]["arguments"] == {"path": "/data/file2.txt"}
    assert triple["rejected"] == [{"role": "assistant", "content": "I cannot read files."}]
    with pytest.raises(ValueError, match="different prompts"):
        fmt.to_dpo([{"chosen": good, "rejected": th.tool_row(3)}])
    with pytest.raises(ValueError, match="identical"):
        fmt.to_dpo([{"prompt": "x", "chosen": "a", "rejected": "a"}])
    with pytest.raises(ValueError, match="pairs= is empty"):
        fmt.to_dpo([])

    class Report:  # build_preference_pairs may return a report object rather than a dict
        pairs = 1

    assert fmt.unwrap_pairs(([pair], Report())) == [pair]
    with pytest.raises(TypeError, match="list of preference pairs"):
        fmt.unwrap_pairs({"chosen": "a", "rejected": "b"})


def test_grpo_prompts_and_judge_reward():
    rows = [th.tool_row(i) for i in range(3)] + [dict(th.tool_row(0), row_id="t0#1", rollout_index=1)]
    prompts = fmt.to_grpo(rows)
    assert [p["task_id"] for p in prompts] == ["t0", "t1", "t2"]  # one per task, first-seen order
    assert prompts[1]["prompt"] == [{"role": "system", "content": "You are an agent."},
                                    {"role": "user", "content": "read /data/file1.txt"}]
    assert "privileged" not in json.dumps(prompts)
    seen = []

    def judge(row):
        seen.append(row)
        if row["final_text"] == "crash":
            raise RuntimeError("judge down")
        if row["final_text"] == "odd":
            return {"score": 7}  # out of [0, 1]: not a reward
        return {"reward": float(row["privileged"]["reference"] in row["final_text"]), "reason": "reference match"}

    reward = fmt.grpo_reward(judge, rows)
    assert reward.__name__ == "judge"
    completions = [[{"role": "assistant", "content": "It says value 1."}],
                   [{"role": "assistant", "content": "", "tool_calls": [
                       {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "/x"}'}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "value 2"},
                    {"role": "assistant", "content": "nothing"}],
                   [{"role": "assistant", "content": "crash"}],
                   [{"role": "assistant", "content": "odd"}]]
    scores = reward(prompts=[prompts[1]["prompt"], prompts[2]["prompt"], prompts[0]["prompt"], prompts[0]["prompt"]],
                    completions=completions, task_id=["t1", "t2", "t0", "t0"], trainer_state=None)
    assert scores == [1.0, 0.0, None, None]
    assert seen[1]["steps"] == [{"tool": "read_file", "arguments": {"path": "/x"}, "result": "value 2", "turn": 0}]
    assert seen[1]["final_text"] == "nothing" and seen[1]["task_id"] == "t2"
    assert "reward" not in seen[0] and seen[0]["prompt"] == "read /data/file1.txt"
    with pytest.raises(KeyError, match="not among the rows"):
        reward(prompts=["p"], completions=["c"], task_id=["nope"])


def test_sft_jsonl_round_trips_through_load_dataset_without_null_filled_arguments(tmp_path):
    datasets = pytest.importorskip("datasets")
    from whileai_core.rows import write_jsonl

    rows = [th.tool_row(i) for i in range(4)]
    other = rows[1]["messages"][2]["tool_calls"][0]["function"]
    other["name"], other["arguments"] = "search", '{"query": "q", "k": 3}'
    path = write_jsonl(tmp_path / "sft.jsonl", fmt.to_sft(rows))
    ds = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache"))
    assert len(ds) == 4
    assert ds[0]["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"path": "/data/file0.txt"}
    assert ds[1]["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"query": "q", "k": 3}
    mem = fmt.as_dataset(fmt.to_sft(rows))
    assert mem[0]["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"path": "/data/file0.txt"}

    # the DPO and GRPO shapes load too; DPO pairs graded rows itself when given rows
    graded = [dict(r, row_id=f"{r['task_id']}#{k}", rollout_index=k, reward=k, judge_status="ok",
                   messages=r["messages"] if k else r["messages"][:2] + [{"role": "assistant", "content": "no"}])
              for r in rows for k in (0, 1)]
    for method, columns in (("dpo", ["chosen", "prompt", "rejected"]), ("grpo", ["prompt", "task_id"])):
        info = fmt.export_trl(graded, tmp_path / f"{method}.jsonl", method)
        assert info["n"] == 4 and info["columns"] == columns
        loaded = datasets.load_dataset("json", data_files=info["path"], split="train",
                                       cache_dir=str(tmp_path / "cache"))
        assert sorted(loaded.column_names) == columns and len(loaded) == 4
    dpo = datasets.load_dataset("json", data_files=str(tmp_path / "dpo.jsonl"), split="train",
                                cache_dir=str(tmp_path / "cache"))
    assert dpo[0]["rejected"] == [{"role": "assistant", "content": "no"}]
    assert [m["role"] for m in dpo[0]["chosen"]] == ["assistant", "tool", "assistant"]
    with pytest.raises(ValueError, match="method= must be one of"):
        fmt.export_trl(graded, tmp_path / "x.jsonl", "ppo")


def test_rows_from_the_lead_export_feed_the_trl_shapes(tmp_path):
    from whileai_core.export.writer import export

    rows = [th.tool_row(i) for i in range(3)]
    report = export(rows, tmp_path / "sft.jsonl", mode="sft")
    from_file = fmt.to_sft(report["path"])
    assert [ex["messages"] for ex in from_file] == [ex["messages"] for ex in fmt.to_sft(rows)]
    rl = export(rows, tmp_path / "rl.jsonl", mode="rl")
    assert [p["prompt"] for p in fmt.to_grpo(rl["path"])] == [p["prompt"] for p in fmt.to_grpo(rows)]


def test_parse_tool_calls():
    from whileai_core.models.local_model import parse_tool_calls

    text = 'Let me look. <tool_call>{"name": "read_file", "arguments": {"path": "/a"}}</tool_call> <tool_call>oops</tool_call>'
    content, calls = parse_tool_calls(text)
    assert content == "Let me look.  <tool_call>oops</tool_call>"
    assert calls == [{"id": "call_0000", "type": "function",
                      "function": {"name": "read_file", "arguments": '{"path": "/a"}'}}]


def test_importing_train_modules_does_not_import_torch():
    code = ("import sys, whileai as wai, whileai_core.train.train, whileai_core.train.prove, whileai_core.train.holdout, whileai_core.models.local_model, whileai_core.train.trl_formats, "
            "whileai_core.train.environment; wai.train; wai.holdout; wai.LocalModel; wai.export_environment; "
            "print(sorted(m for m in ('torch', 'trl', 'transformers', 'datasets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_train_and_local_model_argument_errors(tmp_path):
    import whileai as wai

    with pytest.raises(ValueError, match="method= must be one of 'sft', 'dpo', 'grpo'"):
        wai.train([th.tool_row(0)], method="ppo", model=str(tmp_path))
    with pytest.raises(ValueError, match="model= is required"):
        wai.train([th.tool_row(0)])
    with pytest.raises(ValueError, match="max_steps= must be an int >= 1; got 0"):
        wai.train([th.tool_row(0)], model=str(tmp_path), max_steps=0)
    with pytest.raises(ValueError, match="needs judge="):
        wai.train([th.tool_row(0)], method="grpo", model=str(tmp_path))
    with pytest.raises(ValueError, match="num_generations= must be an int >= 2"):
        wai.train([th.tool_row(0)], method="grpo", model=str(tmp_path), judge=lambda r: 1, num_generations=1)
    with pytest.raises(FileNotFoundError, match="no config.json"):
        wai.LocalModel(tmp_path)
    with pytest.raises(ValueError, match="max_new_tokens= must be an int >= 1; got 0"):
        wai.LocalModel(tmp_path, max_new_tokens=0)


# ----------------------------------------------------------------------------------------------------------
# holdout and contamination (no torch)
# ----------------------------------------------------------------------------------------------------------
def _task_rows(n_tasks: int, k: int = 3) -> list[dict]:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike"]
    rows = []
    for t in range(n_tasks):
        prompt = f"task {t}: " + " ".join(words[(t + j) % len(words)] for j in range(4)) + f" number {t * 7}"
        for i in range(k):
            rows.append({"task_id": f"task{t}", "rollout_index": i, "prompt": prompt, "reward": i % 2})
    return rows


def test_holdout_keeps_groups_intact_and_is_deterministic():
    rows = _task_rows(20)
    split = holdout(rows, 0.25, seed=3)
    train_rows, hold_rows = split  # unpacks
    train_keys = {r["task_id"] for r in train_rows}
    hold_keys = {r["task_id"] for r in hold_rows}
    assert len(hold_keys) == 5 and len(train_keys) == 15 and not train_keys & hold_keys
    assert len(train_rows) == 45 and len(hold_rows) == 15  # every rollout of a task on one side
    assert split.moved == {}
    assert {r["task_id"] for r in holdout(rows, 0.25, seed=3).holdout} == hold_keys
    assert {r["task_id"] for r in holdout(rows, 0.25, seed=4).holdout} != hold_keys
    assert "5 tasks (15 rows) held out" in str(split) and split.to_dict()["n_train_tasks"] == 15
    with pytest.raises(ValueError, match=r"fraction= must be a number in \(0, 1\)"):
        holdout(rows, 1.0)
    with pytest.raises(ValueError, match="at least 2 tasks"):
        holdout(rows[:3])


def test_holdout_moves_contaminated_tasks_to_train():
    rows = _task_rows(10)
    first = holdout(rows, 0.3, seed=0)
    victim = first.holdout[0]
    # a training task that repeats the held-out prompt under another id: the held-out copy must leave the holdout
    copy_rows = [dict(r, task_id="copy", prompt=victim["prompt"].upper() + " !") for r in rows[:3]]
    split = holdout(rows + copy_rows, 0.3, seed=0)
    if "copy" in {r["task_id"] for r in split.holdout}:  # the copy itself was held out: its twin is in train
        assert split.moved.get("copy") == "exact"
    else:
        assert split.moved == {victim["task_id"]: "exact"}
    hold_prompts = {" ".join(r["prompt"].lower().split()) for r in split.holdout}
    train_prompts = {" ".join(r["prompt"].lower().split()) for r in split.train}
    assert not {p.rstrip(" !") for p in hold_prompts} & {p.rstrip(" !") for p in train_prompts}


def test_contamination_rules_match_their_closed_forms():
    train = [{"task_id": "a", "prompt": "one two three four five six seven eight nine ten"}]
    # 10 words, the first 8 are one shared 8-gram: coverage 8/10 = 0.8 -> near at overlap 0.8, clean at 0.81
    probe = [{"task_id": "b", "prompt": "one two three four five six seven eight zulu yankee"}]
    assert contamination(probe, train) == {"b": "near"}
    assert contamination(probe, train, overlap=0.81) == {}
    assert contamination([{"task_id": "a", "prompt": "different"}], train) == {"a": "same_task"}
    assert contamination([{"task_id": "c", "prompt": "One two, THREE four five six seven eight nine ten"}],
                         train) == {"c": "exact"}
    assert contamination([{"task_id": "d", "prompt": "one two three"}], train) == {}  # shorter than n: exact only
    with pytest.raises(ValueError, match="overlap= must be in"):
        contamination(probe, train, overlap=0)


# ----------------------------------------------------------------------------------------------------------
# trainers on a tiny local model
# ----------------------------------------------------------------------------------------------------------
def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: the file to read
    """
    return "value 3"


@pytest.mark.train
def test_sft_loss_falls_and_tool_output_is_never_trained(tiny_model, tmp_path):
    import whileai as wai
    from whileai_core.tools import schemas

    # the rows declare the same schema the agent will be given, so the prompt it sees is the one it memorised
    rows = [dict(th.tool_row(3), task_id=f"copy{i}", row_id=f"copy{i}#0", tools=schemas([read_file]))
            for i in range(8)]
    result = wai.train(rows, "sft", tiny_model, output_dir=tmp_path, max_steps=60, batch_size=4,
                       learning_rate=5e-3, max_length=512)
    assert result.steps == 60 and len(result.losses) == 60 and result.n_examples == 8
    assert result.last_loss < 0.5 * result.first_loss  # a memorisable set: loss falls by more than half
    ex = result.trainer.train_dataset[0]
    tok = result.trainer.processing_class
    trained = tok.decode([t for t, lab in zip(ex["input_ids"], ex["labels"]) if lab != -100])
    assert trained == ('<tool_call>{"name": "read_file", "arguments": {"path": "/data/file3.txt"}}</tool_call>'
                       '<|im_end|>The file says value 3.<|im_end|>')  # assistant turns only: no tool output, no prompt
    assert (Path(result.checkpoint) / "config.json").exists()
    log = json.loads((tmp_path / "training_log.json").read_text())
    assert log["steps"] == 60 and log["config"]["learning_rate"] == 5e-3
    assert "train sft: 60 steps on 8 examples" in str(result)

    # the trained checkpoint goes back in as an agent; it learned to call the tool, and the tool runs
    agent = result.model(tools=[read_file], system_prompt="You are an agent.", max_new_tokens=64)
    out = agent("read /data/file3.txt")
    assert set(out) == {"steps", "final_text", "model"}
    assert out["steps"][:1] == [{"tool": "read_file", "arguments": {"path": "/data/file3.txt"}, "result": "value 3",
                                 "turn": 0}]
    assert isinstance(agent.generate("hello"), str)


@pytest.mark.train
def test_dpo_prefers_chosen_after_training(tiny_model, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import whileai as wai

    pairs = [{"prompt": f"what colour is item {i}", "chosen": "red", "rejected": "blue"} for i in range(8)]
    before = wai.LocalModel(tiny_model)

    def margin(model):
        return sum(model.logprob(p["prompt"], p["chosen"]) - model.logprob(p["prompt"], p["rejected"])
                   for p in pairs) / len(pairs)

    m0 = margin(before)
    # an in-memory model with no directory: train() saves it so TRL can rebuild the reference model
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    model.config._name_or_path = ""
    result = wai.train(pairs, "dpo", model, tokenizer=AutoTokenizer.from_pretrained(tiny_model), output_dir=tmp_path,
                       max_steps=8, batch_size=4, learning_rate=1e-3, max_length=64)
    assert (tmp_path / "base" / "config.json").exists()
    m1 = margin(result.model())
    assert m1 > 0 and m1 > m0 + 1.0  # log p(chosen) - log p(rejected) rose by more than one nat
    last = [e for e in result.log if "rewards/margins" in e][-1]
    assert last["rewards/margins"] > 0 and result.config["beta"] == 0.1


@pytest.mark.train
def test_dpo_from_graded_rows_pairs_them_with_build_preference_pairs(tiny_model, tmp_path):
    pytest.importorskip("whileai_core.select.preferences")
    import whileai as wai

    rows = []
    for i in range(8):
        prompt = f"what colour is item {i}"
        for k, (reply, reward) in enumerate((("red", 1), ("blue", 0))):
            rows.append({"task_id": f"c{i}", "row_id": f"c{i}#{k}", "rollout_index": k, "prompt": prompt,
                         "final_text": reply, "reward": reward, "judge_status": "ok",
                         "messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": reply}]})
    before = wai.LocalModel(tiny_model)
    result = wai.train(rows, "dpo", tiny_model, output_dir=tmp_path, max_steps=8, batch_size=4, learning_rate=1e-3,
                       max_length=64)
    after = result.model()
    assert result.n_examples == 8  # one pair per prompt (PREF_MAX_PAIRS_PER_PROMPT)
    gain = [after.logprob(r["prompt"], "red") - after.logprob(r["prompt"], "blue")
            - before.logprob(r["prompt"], "red") + before.logprob(r["prompt"], "blue") for r in rows[::2]]
    assert min(gain) > 0  # every prompt moved toward its chosen reply


@pytest.mark.train
def test_grpo_runs_with_a_whileai_judge_and_a_python_reward(tiny_model, tmp_path):
    import whileai as wai

    rows = [{"task_id": f"q{i}", "prompt": f"question {i}: say yes", "privileged": {"reference": "yes"},
             "messages": [{"role": "user", "content": f"question {i}: say yes"}, {"role": "assistant", "content": "yes"}],
             "reward": 1} for i in range(6)]
    seen = []

    def judge(row):
        seen.append(row)
        return {"reward": float(row["privileged"]["reference"] in row["final_text"]), "reason": "reference match"}

    def brevity(completions, **kwargs):
        return [1.0 - min(1.0, len(c[0]["content"]) / 40) for c in completions]

    result = wai.train(rows, "grpo", tiny_model, judge=judge, reward=brevity, output_dir=tmp_path, max_steps=3,
                       batch_size=4, num_generations=2, max_completion_length=8, learning_rate=1e-3,
                       trainer_args={"temperature": 0.9})
    assert result.steps == 3 and result.trainer.args.temperature == 0.9 == result.config["temperature"]
    assert len(seen) == 3 * 4  # generation batch lcm(4, 2) = 4 completions per step, each graded once
    assert {r["task_id"] for r in seen} <= {r["task_id"] for r in rows}
    assert all(r["prompt"].startswith("question") and "final_text" in r for r in seen)
    logged = [e for e in result.log if "rewards/judge/mean" in e]
    assert len(logged) == 3 and all("rewards/brevity/mean" in e for e in logged)
    assert result.config["reward_funcs"] == ["judge", "brevity"]


@pytest.mark.train
def test_prove_reports_the_paired_delta_with_its_interval(tiny_model, tmp_path):
    import numpy as np

    import whileai as wai

    topics = ["red", "blue", "green", "file", "data", "tool", "json", "list", "search", "value", "name", "path"]
    rows = []
    for i, w in enumerate(topics * 2):
        p = f"question {i}: is the {w} ok"
        rows.append({"task_id": f"q{i}", "prompt": p, "reward": 1,
                     "messages": [{"role": "user", "content": p}, {"role": "assistant", "content": "yes"}]})
    train_rows, hold_rows = wai.holdout(rows, 0.5, seed=0)
    result = wai.train(train_rows, "sft", tiny_model, output_dir=tmp_path, max_steps=20, batch_size=4,
                       learning_rate=5e-3, max_length=128)

    def says_yes(row):
        return {"reward": int(row["final_text"].strip().lower().startswith("yes")), "reason": "starts with yes"}

    report = wai.prove(tiny_model, result, hold_rows, says_yes, max_new_tokens=6, train_rows=train_rows)
    d = report.delta
    n = len({r["task_id"] for r in hold_rows})
    assert report.n_tasks == n == d.n_paired == 12
    before = np.array([r["reward"] for r in report.before], dtype=float)
    after = np.array([r["reward"] for r in report.after], dtype=float)
    assert d.delta == pytest.approx(after.mean() - before.mean())  # one rollout per task: the mean paired difference
    assert d.delta > 0.5 and d.ci[0] <= d.delta <= d.ci[1] and 0 <= d.p_value <= 1
    assert report.warnings == []
    text = str(report)
    assert "12 holdout tasks" in text and "delta" in text and "paired tasks" in text
    assert {r["lineage"]["arm"] for r in report.after} == {"after"}
    assert report.to_dict()["delta"]["n_paired"] == 12
    # a holdout that overlaps training is named in a warning
    leaky = wai.prove(tiny_model, tiny_model, list(hold_rows) + list(train_rows)[:2], says_yes, max_new_tokens=2,
                      train_rows=train_rows)
    assert any("also appear in train_rows" in w for w in leaky.warnings)
    with pytest.raises(ValueError, match="rollouts=2 with temperature=0"):
        wai.prove(tiny_model, tiny_model, hold_rows, says_yes, rollouts=2)


# ----------------------------------------------------------------------------------------------------------
# environment export (no torch)
# ----------------------------------------------------------------------------------------------------------
def test_export_environment_writes_a_package_a_fresh_process_can_load(tmp_path):
    import os

    import whileai as wai
    from whileai_core.train.environment import Environment

    rows = [dict(th.tool_row(i), row_id=f"t{i}#{k}", rollout_index=k, reward=k % 2) for i in range(8) for k in range(2)]
    exp = wai.export_environment(rows, tmp_path / "pkg", judge=th.reference_judge, name="read_env", holdout=0.25)
    assert (exp.n_train, exp.n_holdout) == (6, 2) and exp.judge == "train_helpers:reference_judge"
    pkg = tmp_path / "pkg" / "read_env"
    for f in ("__init__.py", "spec.json", "data/train.jsonl", "data/holdout.jsonl"):
        assert (pkg / f).exists()
    assert (tmp_path / "pkg" / "pyproject.toml").exists() and (tmp_path / "pkg" / "README.md").exists()
    train_ex = [json.loads(line) for line in (pkg / "data" / "train.jsonl").read_text().splitlines()]
    assert len(train_ex) == 6 and set(train_ex[0]) == {"example_id", "prompt", "answer", "info"}
    assert [m["role"] for m in train_ex[0]["prompt"]] == ["system", "user"]  # the policy sees only this
    assert train_ex[0]["answer"] == train_ex[0]["info"]["privileged"]["reference"]
    assert "final_text" not in json.dumps(train_ex) and "SECRET-TOOL-OUTPUT" not in json.dumps(train_ex)

    env = exp.load("holdout")
    assert isinstance(env, Environment) and len(env.dataset) == 2  # verifiers is not installed here
    ex = env.dataset[0]
    assert env.score(ex, f"It says {ex['answer']}.") == 1.0
    assert env.score(ex, [{"role": "assistant", "content": "no idea"}]) == 0.0

    code = ("from read_env import load_environment; env = load_environment('train'); ex = env.dataset[1]; "
            "print(len(env.dataset), env.score(ex, 'it is ' + ex['answer']), env.score(ex, 'nope'))")
    path = os.pathsep.join([str(tmp_path / "pkg"), str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": path})
    assert out.stdout.split() == ["6", "1.0", "0.0"]


def test_export_environment_refuses_a_judge_a_fresh_process_cannot_import(tmp_path):
    import whileai as wai

    rows = [th.tool_row(i) for i in range(4)]
    with pytest.raises(ValueError, match="importable in a fresh process"):
        wai.export_environment(rows, tmp_path, judge=lambda row: 1)
    with pytest.raises(ValueError, match="does not import"):
        wai.export_environment(rows, tmp_path, judge="no_such_module_xyz:judge")
    with pytest.raises(ValueError, match="name= must be a Python identifier"):
        wai.export_environment(rows, tmp_path, judge=th.reference_judge, name="my-env")
    wai.export_environment(rows, tmp_path, judge="train_helpers:reference_judge")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        wai.export_environment(rows, tmp_path, judge=th.reference_judge)


@pytest.mark.train
def test_the_loop_closes_simulate_grade_train_simulate(tiny_model, tmp_path):
    import whileai as wai

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order.

        Args:
            order_id: the order id
        """
        return {"order_id": order_id, "status": "shipped"}

    system = "You help with orders."
    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt=system, budget=16)
    scored = data.grade(judge=lambda row: int(not row["seeded"]))
    passing = scored.passes()
    assert 0 < len(passing) < 16
    result = wai.train(passing, "sft", tiny_model, output_dir=tmp_path, max_steps=4, batch_size=4, max_length=512)
    assert result.n_examples == len(passing) and result.steps == 4
    # simulate's rows train as they are: assistant turns only, never the world's tool results
    tok = result.trainer.processing_class
    for ex, row in zip(result.trainer.train_dataset, passing):
        trained = tok.decode([t for t, lab in zip(ex["input_ids"], ex["labels"]) if lab != -100])
        assert row["final_text"] in trained and row["prompt"] not in trained
        for m in row["messages"]:
            if m["role"] == "tool" and len(m["content"]) > 20:
                assert m["content"] not in trained
    # the trained checkpoint plays simulate again through the same mock world
    again = wai.simulate(result.model(max_new_tokens=12), tools=[get_order], system_prompt=system, budget=4)
    rows = list(again.rows)
    assert len(rows) == 4 and {r["status"] for r in rows} == {"ok"}
    assert {r["agent_extra"]["model"] for r in rows} == {"local:final"}


def test_export_environment_is_a_verifiers_v1_taskset_when_verifiers_is_installed(tmp_path, monkeypatch):
    vf = pytest.importorskip("verifiers.v1")  # verifiers 0.4; not a dependency, so usually skipped
    import asyncio

    import whileai as wai

    wai.export_environment([th.tool_row(i) for i in range(6)], tmp_path, judge=th.reference_judge, name="vf_env")
    monkeypatch.syspath_prepend(str(tmp_path))
    tasks = list(vf.load_taskset(vf.TasksetConfig(id="vf_env")))
    assert len(tasks) == 5 and [f.__name__ for f in tasks[0].hooks("reward")] == ["judge_reward"]
    task = tasks[0]
    scores = []
    for reply in (f"It says {task.data.answer}.", "no idea"):
        trace = vf.Trace(task=vf.TraceTask(type="WhileaiTask", data=task.data),
                         agent=vf.AgentInfo(config=vf.AgentConfig()),
                         nodes=[vf.MessageNode(message=vf.UserMessage(content="q")),
                                vf.MessageNode(parent=0, sampled=True, message=vf.AssistantMessage(content=reply))])
        asyncio.run(task.score(trace))
        scores.append(trace.reward)
    assert scores == [1.0, 0.0]


@pytest.mark.train
def test_batched_decoding_matches_one_prompt_at_a_time(tiny_model, tmp_path):
    import whileai as wai

    # peaky random logits: greedy replies differ from prompt to prompt, so a padding bug would show
    varied = str(th.build_tiny_model(tmp_path / "varied", init_std=0.5))
    model = wai.LocalModel(varied, max_new_tokens=12)
    prompts = [f"question {i}: is item {i * 13} ok" + " please" * (i % 4) for i in range(10)]
    one_by_one = [model.generate(p) for p in prompts]
    assert len(set(one_by_one)) >= 5
    assert model.generate_many(prompts, batch_size=4) == one_by_one  # left padding changes nothing
    with pytest.raises(ValueError, match="batch_size= must be an int >= 1; got 0"):
        model.generate_many(prompts, batch_size=0)
    rows = [{"task_id": f"p{i}", "prompt": p, "reward": 1} for i, p in enumerate(prompts)]

    def has_digit(row):
        return int(any(ch.isdigit() for ch in row["final_text"]))

    batched = wai.prove(tiny_model, model, rows, has_digit, batch_size=16)
    serial = wai.prove(tiny_model, model, rows, has_digit, batch_size=1)
    assert [r["final_text"] for r in batched.after] == [r["final_text"] for r in serial.after] == one_by_one
    assert batched.delta.delta == serial.delta.delta


@pytest.mark.train
def test_train_says_when_max_length_drops_every_example(tiny_model, tmp_path):
    import whileai as wai

    with pytest.raises(ValueError, match=r"every example was dropped .* raise max_length="):
        wai.train([th.tool_row(i) for i in range(4)], "sft", tiny_model, output_dir=tmp_path, max_steps=1,
                  batch_size=2, max_length=16)


@pytest.mark.train
def test_local_model_from_a_loaded_model_object(tiny_model):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import whileai as wai

    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    tok = AutoTokenizer.from_pretrained(tiny_model)
    with pytest.raises(ValueError, match="needs tokenizer="):
        wai.LocalModel(model)
    with pytest.raises(TypeError, match="checkpoint path or a transformers model"):
        wai.LocalModel(object())
    in_memory = wai.LocalModel(model, tokenizer=tok, max_new_tokens=6)
    from_disk = wai.LocalModel(tiny_model, max_new_tokens=6)
    assert in_memory.generate("hello there") == from_disk.generate("hello there")
    assert in_memory.logprob("hello", "yes") == pytest.approx(from_disk.logprob("hello", "yes"), abs=1e-4)
    assert "temperature=0" in repr(in_memory) and in_memory.to_dict()["max_new_tokens"] == 6


def test_grpo_reward_takes_a_whileai_verifier():
    from whileai_core.grade.verify.math_equal import MathEqual

    rows = [{"task_id": f"m{i}", "prompt": f"what is {i} + {i}?", "privileged": {"reference": str(2 * i)}}
            for i in range(3)]
    reward = fmt.grpo_reward(MathEqual(), rows)
    assert reward.__name__ == "math_equal"
    prompts = [p["prompt"] for p in fmt.to_grpo(rows)]
    completions = [[{"role": "assistant", "content": "The answer is 0"}],
                   [{"role": "assistant", "content": "The answer is 3"}],
                   [{"role": "assistant", "content": "so \\boxed{4}"}]]
    assert reward(prompts=prompts, completions=completions, task_id=["m0", "m1", "m2"]) == [1.0, 0.0, 1.0]


def test_sft_of_a_row_without_messages_keeps_its_tool_steps_like_export():
    """One row -> messages implementation: TRL formats and export build the same turns from steps."""
    from whileai_core.export.writer import training_rows
    from whileai_core.messages import row_messages

    row = {"task_id": "t", "prompt": "find order 7", "final_text": "It shipped.", "reward": 1.0,
           "steps": [{"tool": "lookup", "arguments": {"id": 7}, "result": {"status": "shipped"}}]}
    sft = fmt.to_sft([row])[0]["messages"]
    assert [m["role"] for m in sft] == ["user", "assistant", "tool", "assistant"]
    assert sft[1]["tool_calls"][0]["function"] == {"name": "lookup", "arguments": {"id": 7}}
    assert [m["role"] for m in row_messages(row)] == [m["role"] for m in sft]
    exported = training_rows([row])[0]["messages"]
    assert [m["role"] for m in exported] == [m["role"] for m in sft]


def test_train_logs_its_loss_curve_to_mlflow(tiny_model, tmp_path, monkeypatch):
    import whileai as wai

    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    rows = [dict(th.tool_row(i), task_id=f"t{i}") for i in range(4)]
    result = wai.train(rows, "sft", tiny_model, output_dir=tmp_path / "out", max_steps=3, batch_size=2,
                       logging_steps=1, mlflow=tmp_path / "mlruns")
    client = mlflow.tracking.MlflowClient((tmp_path / "mlruns").resolve().as_uri())
    (exp,) = [e for e in client.search_experiments() if e.name == "whileai"]
    (run,) = client.search_runs([exp.experiment_id])
    curve = sorted(client.get_metric_history(run.info.run_id, "loss"), key=lambda p: p.step)
    logged = [(e["step"], e["loss"]) for e in result.log if "loss" in e]
    # steps exactly, losses approximately (pytest.approx takes flat sequences of numbers, not tuples, since 9.2)
    assert len(logged) == 3 and [p.step for p in curve] == [step for step, _ in logged]
    assert [p.value for p in curve] == pytest.approx([loss for _, loss in logged])
