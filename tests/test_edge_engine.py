"""Edge cases a careless user hits: bad input names the argument and the fix, nothing is lost on a fault.

Each test pins a problem found by calling the public facade the wrong way (see the report in the commit log).
"""

from __future__ import annotations

import json
import math

import pytest

import whileai as wai
from whileai_core.grade.run import JudgeError
from whileai_core.rows import reward_field_hint, write_jsonl


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {}


@wai.tool
def cancel_order(order_id: str, reason: str = "") -> dict:
    """Cancel an order."""
    return {}


@wai.tool
def refund_payment(payment_id: str, amount: float) -> dict:
    """Refund a payment."""
    return {}


@wai.tool
def ping() -> str:
    """Check the service is up."""
    return "pong"


@wai.tool
def list_orders(limit: int = 10, status: str | None = None) -> list[dict]:
    """List recent orders."""
    return []


TOOLS = [get_order, cancel_order, refund_payment, ping, list_orders]


def not_seeded(row):
    return {"reward": 0 if row["seeded"] else 1}


# ---------------------------------------------------------------- the loop in unusual shapes
def test_eval_run_grades_then_selects_and_exports_as_rl(tmp_path):
    """simulate's default mode is 'eval'; select() and export() of its graded rows used to fail with
    "mode= must be 'rl' or 'sft'; got 'eval'" although the user never passed a mode."""
    data = wai.simulate(wai.seeded_agent(TOOLS), tools=TOOLS, repeats=4, budget=80, concurrency=4)
    assert data.mode == "eval"
    scored = data.grade(not_seeded)
    sel = scored.select(quiet=True)
    assert sel.mode == "rl"
    assert sel.report["n"] == 80
    rep = wai.export(scored, tmp_path / "train.jsonl")
    assert rep["mode"] == "rl" and rep["n_written"] == 80
    first = json.loads((tmp_path / "train.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert "group_id" in first  # an RL row carries its group
    with pytest.raises(ValueError, match="mode= must be 'rl' or 'sft'"):
        scored.select(mode="eval", quiet=True)  # an explicit wrong mode is still an error


def test_sft_run_selects_sft_and_exports_final_mask(tmp_path):
    data = wai.simulate(wai.seeded_agent(TOOLS), tools=TOOLS, mode="sft", repeats=4, budget=80)
    scored = data.grade(not_seeded)
    sel = scored.select(quiet=True)
    assert sel.mode == "sft"
    assert all(r["reward"] == 1 for r in sel)
    assert len(sel) == len({r["task_id"] for r in sel})  # one best completion per prompt
    rep = sel.export(tmp_path / "sft.jsonl", mask_mode="final")
    lines = [json.loads(x) for x in (tmp_path / "sft.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rep["n_written"] == len(sel) == len(lines)
    for item in lines:
        assert sum(item["loss_mask"]) == 1
        last = max(i for i, m in enumerate(item["messages"]) if m["role"] == "assistant")
        assert item["loss_mask"][last] == 1


def test_write_tools_optional_only_tools_and_list_returns_run_clean():
    data = wai.simulate(wai.seeded_agent(TOOLS), tools=TOOLS, repeats=2, budget=120, concurrency=8)
    assert data.n_errors == 0
    called = {s["tool"] for r in data.rows for s in r["steps"]}
    assert {"get_order", "list_orders", "ping", "refund_payment"} <= called
    lists = [s["result"] for r in data.rows for s in r["steps"] if s["tool"] == "list_orders"
             and isinstance(s["result"], list)]
    assert lists and all(isinstance(x, dict) for x in lists[0])
    cancels = [r for r in data.rows if r["scenario"].get("tool") == "cancel_order" and not r["seeded"]]
    assert cancels and all(not r["steps"] for r in cancels)  # asked first, changed nothing


def test_class_agent_with_extra_keys_keeps_them_json_safe():
    class Agent:
        def __call__(self, message):
            return {"final_text": "done.", "steps": [], "confidence": float("nan"), "tags": {"a"}}

    data = wai.simulate(Agent(), tools=[ping], repeats=2, budget=4)
    row = data.rows[0]
    assert row["status"] == "ok" and row["lineage"]["agent"] == "Agent"
    assert row["agent_extra"] == {"confidence": "nan", "tags": ["a"]}
    json.dumps(row, allow_nan=False)  # the row stays strict JSON


def test_dynamic_policy_with_grader_fills_only_disagreeing_groups():
    data = wai.simulate(wai.seeded_agent(TOOLS), tools=TOOLS, repeats=4, budget=80, repeat_policy="dynamic",
                        grader=not_seeded)
    sizes = {}
    for r in data.rows:
        sizes[r["task_id"]] = sizes.get(r["task_id"], 0) + 1
    assert set(sizes.values()) <= {2, 4}
    for tid, size in sizes.items():
        labels = {not_seeded(r)["reward"] for r in data.rows if r["task_id"] == tid and r["rollout_index"] < 2}
        assert size == (4 if len(labels) > 1 else 2)


def test_asks_with_int_task_id_and_unicode():
    data = wai.simulate(lambda m: "ok 🐋.", asks=[{"prompt": "Zoë «order» 🐋", "task_id": 7}, "plain ask"],
                        repeats=2, budget=4)
    assert [r["task_id"] for r in data.rows][:2] == ["7", "7"]
    assert data.rows[0]["prompt"] == "Zoë «order» 🐋"


def test_empty_ask_is_named():
    with pytest.raises(ValueError, match=r"asks\[1\] is an empty message"):
        wai.simulate(lambda m: "ok.", asks=["fine", "  "], repeats=1, budget=2)


# ---------------------------------------------------------------- nothing lost on a fault
def test_checkpoint_in_a_missing_folder_is_created(tmp_path):
    """A checkpoint path whose folder did not exist used to crash the run after the first row."""
    path = tmp_path / "new" / "dir" / "rows.jsonl"
    data = wai.simulate(wai.seeded_agent([ping]), tools=[ping], repeats=2, budget=10, checkpoint=path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(data.rows) == 10


def test_checkpoint_that_is_a_directory_fails_before_any_rollout(tmp_path):
    calls = []

    def agent(m):
        calls.append(m)
        return "ok."

    with pytest.raises(IsADirectoryError, match="checkpoint=.*is a directory; pass a file path"):
        wai.simulate(agent, tools=[ping], repeats=1, budget=2, checkpoint=tmp_path)
    assert calls == []


def test_reused_checkpoint_warns_and_appends(tmp_path):
    path = tmp_path / "c.jsonl"
    wai.simulate(wai.seeded_agent([ping]), tools=[ping], repeats=1, budget=3, checkpoint=path)
    with pytest.warns(UserWarning, match="already holds rows"):
        data = wai.simulate(wai.seeded_agent([ping]), tools=[ping], repeats=1, budget=3, checkpoint=path)
    assert any("already holds rows" in w for w in data.warnings)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 6


def test_checkpoint_that_stops_being_writable_keeps_every_row(tmp_path):
    path = tmp_path / "c.jsonl"
    seen = []

    def agent(m):
        seen.append(m)
        while len(seen) == 3 and not path.is_dir():  # the checkpoint file is gone and cannot be reopened
            try:  # (the run may append a row between these two calls: try again)
                path.unlink(missing_ok=True)
                path.mkdir()
            except FileExistsError:
                continue
        return "ok."

    data = wai.simulate(agent, tools=[ping], repeats=1, budget=8, concurrency=1, checkpoint=path)
    assert len(data.rows) == 8
    assert any("stopped being written" in w for w in data.warnings)


def test_directory_as_output_path_names_the_fix(tmp_path):
    rows = [{"task_id": "a", "reward": 1, "final_text": "x"}]
    with pytest.raises(IsADirectoryError, match="is a directory; pass a file path inside it"):
        wai.export(rows, tmp_path)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        write_jsonl(tmp_path, rows, overwrite=True)


# ---------------------------------------------------------------- rows from another tool
def test_score_instead_of_reward_is_named_in_pass_at_select_and_export():
    rows = [{"task_id": f"t{i // 4}", "score": i % 2, "prompt": "q", "final_text": "a."} for i in range(40)]
    res = wai.pass_at(rows)
    assert res.pass_at_1 is None
    assert "'score'" in res.note and "reward" in res.note
    sel = wai.select(rows, quiet=True)
    assert any("'score'" in w for w in sel.report["warnings"])
    rep = wai.export(rows, None)
    assert any("'score'" in w for w in rep["warnings"])
    graded = [dict(r, reward=r["score"]) for r in rows]
    assert reward_field_hint(graded) is None
    assert wai.pass_at(graded).pass_at_1 == pytest.approx(0.5)


def test_missing_task_id_names_the_row_and_its_keys():
    rows = [{"id": 1, "reward": 1}, {"id": 2, "reward": 0}]
    with pytest.raises(ValueError, match=r"rows\[0\].*it has 'id': rename it task_id.*keys are \['id', 'reward'\]"):
        wai.export(rows, None)


def test_int_task_ids_group_as_strings():
    rows = [{"task_id": i // 2, "reward": i % 2} for i in range(20)]
    res = wai.pass_at(rows, k=2)
    assert res.n_groups == 10 and res.pass_at_1 == pytest.approx(0.5)
    assert sorted(res.per_task) == sorted(str(i) for i in range(10))


def test_nan_reward_is_refused_by_export_not_written_as_bad_json(tmp_path):
    rows = [{"task_id": "a", "reward": float("nan"), "final_text": "x"}]
    with pytest.raises(ValueError, match=r"rows\[0\] \(task 'a'\) has reward nan"):
        wai.export(rows, tmp_path / "t.jsonl")
    assert not (tmp_path / "t.jsonl").exists()
    with pytest.raises(ValueError, match="NaN or infinity .*'score'"):
        write_jsonl(tmp_path / "r.jsonl", [{"score": math.inf}])
    assert not (tmp_path / "r.jsonl").exists()


def test_make_rows_refuses_strings_and_non_string_items():
    with pytest.raises(TypeError, match="prompts= must be a list of strings; got str"):
        wai.rows("abc", "xyz")
    with pytest.raises(TypeError, match=r"prompts\[0\] is int"):
        wai.rows([1, 2], ["a", "b"])
    with pytest.raises(TypeError, match=r"completions\[0\] is NoneType"):
        wai.rows(["q"], [None])
    rows = wai.rows(("q1", "q2"), iter(["a", "b"]))  # any iterable of strings is fine
    assert [r["final_text"] for r in rows] == ["a", "b"]


# ---------------------------------------------------------------- small APIs
def test_world_call_with_json_string_or_junk_arguments_never_raises():
    w = wai.world(TOOLS)
    ok = w.call("get_order", '{"order_id": "A1234"}')
    assert ok["status"] == "ok" and ok["order_id"] == "A1234"
    junk = w.call("get_order", "A1234")
    assert junk["status"] == "error" and "not valid JSON" in junk["error"]
    wrong = w.call("get_order", ["A1234"])
    assert wrong["status"] == "error" and "must be a dict" in wrong["error"]
    assert w.call("ping", "").startswith("status: ok")  # empty JSON text means no arguments


def test_seeded_agent_takes_one_behavior_as_a_string():
    agent = wai.seeded_agent(TOOLS, share=1.0, behaviors="invented_fact")
    data = wai.simulate(agent, tools=TOOLS, repeats=1, budget=10)
    assert {r["seeded_what"] for r in data.rows} == {"invented_fact"}


def test_scenario_checks_its_fields():
    with pytest.raises(TypeError, match="Scenario\\(prompt\\) takes the user's message as a string"):
        wai.Scenario(None)
    with pytest.raises(ValueError, match="rollout_index= must be an int >= 0"):
        wai.Scenario("hi", rollout_index="x")
    assert wai.Scenario("hi", task_id=5).task_id == "5"


def test_cohen_kappa_refuses_strings_and_blanks():
    with pytest.raises(TypeError, match="rater_a= is a string"):
        wai.cohen_kappa("ab", "ab")
    with pytest.raises(ValueError, match=r"rater_a\[1\] is nan, not a label"):
        wai.cohen_kappa([1, float("nan")], [1, 0])
    with pytest.raises(ValueError, match=r"rater_b\[0\] is None"):
        wai.cohen_kappa([1, 0], [None, 0])
    # unchanged on good input: closed form (p_o - p_e) / (1 - p_e)
    a, b = [1, 0, 1, 1], [1, 0, 0, 1]
    p_o = 3 / 4
    p_e = (3 / 4) * (2 / 4) + (1 / 4) * (2 / 4)
    assert wai.cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))


def test_attach_labels_none_names_the_argument():
    rows = [{"task_id": "a", "reward": 1, "final_text": "x"}]
    with pytest.raises(TypeError, match="labels= takes"):
        wai.attach_labels(rows, None)


# ---------------------------------------------------------------- round two: more careless calls
def test_openai_style_json_string_arguments_round_trip_through_export():
    """An agent passing a model's raw tool call (arguments as a JSON string) used to be double-encoded, so the
    export refused every row as tool_call_roundtrip_invalid."""

    def agent(message):
        return {"steps": [{"tool": "get_order", "arguments": json.dumps({"order_id": "A1"}),
                           "result": {"status": "ok"}}], "final_text": "Order A1 is fine."}

    data = wai.simulate(agent, tools=[get_order], repeats=1, budget=2)
    assert data.rows[0]["steps"][0]["arguments"] == {"order_id": "A1"}
    call = data.rows[0]["messages"][1]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"order_id": "A1"}
    rep = wai.export(data.grade(lambda r: 1), None)
    assert rep["tool_call_roundtrip"] == {"checked": 2, "invalid": 0, "rows": []}

    def bad(message):
        return {"steps": [{"tool": "get_order", "arguments": "order A1", "result": None}], "final_text": "x."}

    row = wai.simulate(bad, tools=[get_order], repeats=1, budget=1).rows[0]
    assert row["status"] == "ok" and row["steps"][0]["arguments"] == "order A1"  # a model's broken JSON is kept
    with pytest.raises(ValueError, match="tool_call_roundtrip_invalid"):  # ... and never trained on as a call
        wai.export([dict(row, reward=1)], None, tools=[get_order])


def test_numpy_verdicts_and_counts_are_accepted():
    np = pytest.importorskip("numpy")
    assert wai.normalize_verdict(np.bool_(True))[0] == 1
    assert wai.normalize_verdict({"reward": np.bool_(False)})[0] == 0
    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], repeats=np.int64(2), budget=np.int64(4))
    assert len(data.rows) == 4 and data.repeats == 2


def test_a_broken_grader_or_progress_hook_costs_no_rows():
    agent = wai.seeded_agent([get_order])
    data = wai.simulate(agent, tools=[get_order], repeat_policy="dynamic", grader=lambda r: 1 / 0, repeats=4,
                        budget=8)
    assert len(data.rows) >= 4
    assert any("grader= failed on the probes of" in w and "ZeroDivisionError" in w for w in data.warnings)
    calls = []

    def hook(info):
        calls.append(info)
        raise RuntimeError("dashboard down")

    data = wai.simulate(agent, tools=[get_order], repeats=1, budget=100, on_progress=hook, progress=False)
    assert len(data.rows) == 100 and len(calls) == 1
    assert any("on_progress raised RuntimeError" in w for w in data.warnings)
    for name in ("grader", "on_progress"):
        with pytest.raises(TypeError, match=f"{name}= must be a callable or None; got int"):
            wai.simulate(agent, tools=[get_order], repeats=1, budget=2, **{name: 5})


def test_one_ask_is_one_situation_not_its_characters_or_keys():
    data = wai.simulate(lambda m: "ok.", asks="get order A1", repeats=1, budget=5)
    assert [r["prompt"] for r in data.rows] == ["get order A1"]
    data = wai.simulate(lambda m: "ok.", asks={"prompt": "hello there", "task_id": "t1"}, repeats=1, budget=5)
    assert [(r["prompt"], r["task_id"]) for r in data.rows] == [("hello there", "t1")]


def test_rows_files_with_a_bom_gzip_or_a_folder(tmp_path):
    bom = tmp_path / "bom.jsonl"
    bom.write_text('{"task_id": "a", "reward": 1}\n{"task_id": "a", "reward": 0}\n', encoding="utf-8-sig")
    assert wai.pass_at(bom).n_rows == 2
    import gzip

    gz = tmp_path / "rows.jsonl.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write('{"task_id": "a", "reward": 1}\n')
    with pytest.raises(ValueError, match="gzip-compressed; decompress it first"):
        wai.pass_at(gz)
    with pytest.raises(IsADirectoryError, match="is a directory; pass the JSONL file inside it"):
        wai.pass_at(tmp_path)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"task_id": "a", "reward": 1}\n{"task_id": "\xe9", "reward": 1}\n')
    with pytest.raises(ValueError, match=r"latin.jsonl:2: not UTF-8 text"):
        wai.pass_at(latin)


def test_select_and_export_knob_checks_name_the_argument():
    rows = [{"task_id": str(i // 4), "reward": i % 2, "final_text": f"answer {i}."} for i in range(40)]
    with pytest.raises(ValueError, match=r"min_reward= must be a reward in \[0, 1\]"):
        wai.select(rows, mode="sft", min_reward=2, quiet=True)
    with pytest.raises(ValueError, match="leak_min_chars= must be an int >= 1; got 0"):
        wai.select(rows, leak_min_chars=0, quiet=True)  # 0 used to switch the leak gate off silently
    with pytest.raises(ValueError, match=r"hack_threshold= must be a number in \(0, 1\)"):
        wai.select(rows, hack_threshold=5, quiet=True)
    with pytest.raises(TypeError, match="system_prompt= must be a string or None; got int"):
        wai.export(rows, None, system_prompt=5)
    with pytest.raises(TypeError, match="path= must be a file path"):
        wai.export(rows, 5)


# ---------------------------------------------------------------- guards on hostile or broken inputs
def test_json_verifier_fails_a_too_deep_reply_instead_of_crashing_the_grading_run():
    verifier = wai.verify.JSONSchema({"type": "array"})
    deep = "[" * 20000 + "]" * 20000
    out = verifier({"final_text": deep})
    assert out["reward"] == 0 and "nested deeper" in out["reason"]
    assert verifier({"final_text": "[" * 50 + "]" * 50})["reward"] == 1
    rows = [{"task_id": "a", "rollout_index": i, "final_text": text} for i, text in enumerate([deep, "[]"])]
    scored = wai.run_judge(rows, verifier)
    assert [r["reward"] for r in scored.rows] == [0, 1]


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


# ---------------------------------------------------------------- tool schemas and axes from elsewhere
def test_schema_dict_tools_are_checked_like_decorated_ones():
    with pytest.raises(ValueError, match="tool schema name 'get order' must be 1-64 letters"):
        wai.simulate(lambda m: "ok.", tools=[{"name": "get order"}], repeats=1, budget=2)
    with pytest.raises(ValueError, match="tool schema name '' must be"):
        wai.world([{"name": ""}])
    with pytest.raises(TypeError, match=r"parameters\['properties'\] must be a dict"):
        wai.world([{"name": "get_x", "parameters": {"type": "object", "properties": ["a"]}}])
    with pytest.raises(TypeError, match=r"parameters\['required'\] must be a list of names, e.g. \['order_id'\]"):
        wai.world([{"name": "get_x", "parameters": {"type": "object", "properties": {"order_id": {}},
                                                    "required": "order_id"}}])
    good = wai.world([{"type": "function", "function": {"name": "get_x", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}])
    assert good.call("get_x", {})["error"] == "get_x: missing required argument 'order_id'"


def test_tool_on_something_without_a_signature_is_named():
    with pytest.raises(TypeError, match="@tool could not read a signature from <class 'int'>"):
        wai.tool(int)


def test_covering_axis_values_as_a_string_or_unhashable():
    with pytest.raises(ValueError, match="axis 'a' must be a list of values"):
        wai.covering_array({"a": "xyz", "b": [1]})
    rows = wai.covering_array({"a": [{"x": 1}, {"y": 2}], "b": [1, 2]})  # any value works: cells hold text
    assert len(rows) == 4 and {r["a"] for r in rows} == {"{'x': 1}", "{'y': 2}"}
    with pytest.raises(ValueError, match="axis 'b' repeats a value"):
        wai.covering_array({"a": [1, 2], "b": [1, "1"]})


def test_numpy_rewards_count_everywhere_pass_at_does():
    """pass_at counted numpy-int rewards but select, curriculum, preferences and hack_scan dropped them as
    unusable labels, and export could not write them."""
    np = pytest.importorskip("numpy")
    rows = [{"task_id": str(i // 4), "reward": np.int64(i % 2), "final_text": f"answer {i}."} for i in range(40)]
    assert wai.pass_at(rows).n_rows == 40
    sel = wai.select(rows, quiet=True)
    assert sel.report["gates"]["unusable_label"] == 0 and sel.report["n_selected"] == 40
    assert wai.select(rows, mode="sft", quiet=True).report["n_selected"] == 10
    assert len(wai.curriculum(rows).tasks) == 10
    assert len(wai.build_preference_pairs(rows).pairs) == 10
    assert wai.hack_scan(rows).n_graded == 40
    rep = wai.export(rows, None)
    assert rep["rewards"] == {"n_pass": 20, "n_fail": 20, "n_ungraded": 0}
    assert all(type(item["reward"]) is int for item in rep["rows"])
    json.dumps(rep["rows"], allow_nan=False)


def test_lone_surrogates_are_saved_escaped_and_read_back_exactly(tmp_path):
    data = wai.simulate(lambda m: "bad \udcff byte.", tools=[get_order], repeats=1, budget=2)
    path = data.save(tmp_path / "rows.jsonl")
    back = wai.pass_at(path)  # the file reads back (as strict UTF-8 JSONL)
    assert back.n_rows == 0 and back.n_skipped == 2
    from whileai_core.rows import read_jsonl

    assert read_jsonl(path)[0]["final_text"] == "bad \udcff byte."
    rep = wai.export(data.grade(lambda r: 1), tmp_path / "train.jsonl")
    assert rep["n_written"] == 2


def test_eval_variance_takes_a_list_of_runs():
    def run(seed):
        return [{"task_id": f"t{i // 4}", "reward": (i * 7 + seed) % 3 == 0 and 1 or 0} for i in range(80)]

    runs = [run(0), run(1), run(2)]
    as_list = wai.eval_variance(runs)
    spread = wai.eval_variance(*runs)
    assert as_list.n_runs == spread.n_runs == 3
    assert as_list.means == spread.means and as_list.run_sd == spread.run_sd
    with pytest.raises(ValueError, match="got one empty run"):
        wai.eval_variance([])


def test_ask_dicts_keep_their_reference_and_check_their_fault_plan():
    """An ask's 'reference' (or 'answer') used to be dropped silently, so a verifier abstained on every row."""
    asks = [{"prompt": "What is 6 * 7?", "answer": "42", "topic": "arithmetic"},
            {"prompt": "What is 2 + 2?", "reference": "4"}]
    data = wai.simulate(lambda m: "It is 42." if "6 * 7" in m else "It is 5.", asks=asks, repeats=2, budget=4)
    assert data.rows[0]["privileged"] == {"reference": "42", "ask": {"topic": "arithmetic"}}
    scored = data.grade(wai.verify.MathEqual())
    assert [r["reward"] for r in scored.rows] == [1, 1, 0, 0]
    exported = wai.export(scored, None)["rows"]
    assert all("privileged" not in item and "42" not in json.dumps(item["prompt"]) for item in exported)
    with pytest.raises(ValueError, match=r"asks\[0\]: faults\['mode'\] is 'bogus'"):
        wai.simulate(lambda m: "ok.", tools=[get_order], asks=[{"prompt": "hi", "faults": {"mode": "bogus"}}],
                     repeats=1, budget=1)
    with pytest.raises(TypeError, match=r"asks\[0\]: faults= is a dict"):
        wai.simulate(lambda m: "ok.", asks=[{"prompt": "hi", "faults": "timeout"}], repeats=1, budget=1)
    with pytest.raises(ValueError, match=r"asks\[0\]: world_state= is 'gone'"):
        wai.simulate(lambda m: "ok.", asks=[{"prompt": "hi", "world_state": "gone"}], repeats=1, budget=1)


def test_hack_monitor_refuses_bad_rows_without_poisoning_later_scans():
    monitor = wai.HackMonitor(every=10)
    with pytest.raises(ValueError, match=r"observe\(\): rows\[0\]: row has no task_id.*nothing from this call"):
        monitor.observe([{"reward": 1, "final_text": "x"}] * 12)
    assert monitor.n_seen == 0
    good = [{"task_id": str(i // 4), "reward": i % 2, "final_text": f"reply {i}" + "!" * (i % 2)} for i in range(40)]
    monitor.observe(good)  # used to fail forever on the rows buffered before the error
    assert monitor.n_seen == 40 and len(monitor.history) == 4
    short = monitor.wrap(lambda prompts, completions, **kw: [1.0])
    with pytest.raises(ValueError, match="returned 1 rewards for 3 completions"):
        short(["p"] * 3, ["c"] * 3)
    nothing = monitor.wrap(lambda prompts, completions, **kw: None)
    with pytest.raises(TypeError, match="returned NoneType; a TRL reward function returns one reward per"):
        nothing(["p"], ["c"])


def test_step_text_none_is_an_agent_error_not_the_text_none():
    def agent(message):
        return {"steps": [{"text": None}], "final_text": "done."}

    row = wai.simulate(agent, tools=[ping], repeats=1, budget=1).rows[0]
    assert row["status"] == "agent_error" and "steps[0] has no tool and its text is None" in row["error"]
    assert all(m.get("content") != "None" for m in row["messages"])

    def agent2(message):
        return {"steps": [{"tool": "ping", "arguments": {}, "result": "pong", "text": None}, {"user": 5}],
                "final_text": "done."}

    row = wai.simulate(agent2, tools=[ping], repeats=1, budget=1).rows[0]
    assert row["status"] == "agent_error" and "steps[1]['user'] is int" in row["error"]


def test_honest_stand_in_sends_arguments_of_the_declared_type():
    """The stand-in put the id text into every argument (refund_payment(amount='R1234'), list_orders(limit=
    'the record')), so an honest, unseeded row made a type-wrong call that an argument-checking judge fails."""
    py_type = {"string": str, "integer": int, "number": float, "boolean": bool}
    data = wai.simulate(wai.seeded_agent(TOOLS, share=0.5), tools=TOOLS, repeats=2, budget=200)
    by_name = {t.name: t for t in TOOLS}
    checked = 0
    for row in data.rows:
        for step in row["steps"]:
            props = by_name[step["tool"]].properties
            for name, value in step["arguments"].items():
                kind = props[name].get("type")
                if kind in py_type:
                    assert isinstance(value, py_type[kind]), (row["seeded_what"], step)
                    checked += 1
    assert checked > 100
    wrong = [r for r in data.rows if r["seeded_what"] == "wrong_argument"]
    assert wrong and all(r["steps"][0]["tool"] == "get_order" for r in wrong)  # the only non-write, id-taking tool


def test_reference_record_exists_matches_what_the_world_answers():
    """A tool with no record key (ping) in a 'missing' cell was answered normally while its privileged reference
    said record_exists=False, so a judge reading the reference failed honest rows."""
    tools = [ping, get_order]
    data = wai.simulate(wai.seeded_agent(tools, share=0), tools=tools, repeats=1, budget=60, fault_share=0)
    missing = [r for r in data.rows if r["world_state"] == "missing"]
    assert {r["scenario"]["tool"] for r in missing} == {"ping", "get_order"}
    for r in missing:
        answered = r["steps"][0]["result"]
        found = not (isinstance(answered, dict) and answered.get("status") == "not_found")
        assert r["privileged"]["reference"]["record_exists"] is found
        assert r["privileged"]["hidden_state"]["exists"] is found


def test_a_finished_reply_ending_in_an_emoji_or_closing_quote_is_not_truncated():
    """Under the default truncated='drop', long finished replies ending in 🙂, ✅, » or 」 were dropped as cut off."""
    from whileai_core.select.select import is_truncated

    base = "Your order A1234 has shipped and should arrive on Thursday between nine and noon. " * 3
    for end in ("Have a good day 🙂", "Done ✅", "Thumbs up 👍🏽", "Love it ❤️", "«fini»", "「完了」", "“done”"):
        assert not is_truncated({"final_text": base + end}), end
    assert is_truncated({"final_text": base + "and then the courier will"})  # still cut mid-sentence
    assert is_truncated({"final_text": "short 🙂", "finish_reason": "length"})  # a token cap is always a cut
    rows = [{"task_id": "t", "rollout_index": i, "reward": i % 2, "final_text": base + f"Reply {i} 🙂"}
            for i in range(4)]
    sel = wai.select(rows, quiet=True)
    assert sel.report["gates"]["truncated"] == 0 and sel.report["n_selected"] == 4


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_judge_failure_keeps_the_verdicts_already_paid_for(concurrency):
    rows = [{"task_id": f"t{i}", "rollout_index": 0, "final_text": f"reply {i}"} for i in range(30)]

    def judge(row):
        if row["task_id"] == "t20":
            raise RuntimeError("judge backend fell over")
        return 1

    with pytest.raises(JudgeError) as info:
        wai.run_judge(rows, judge, concurrency=concurrency)
    err = info.value
    assert "t20" in str(err) and "20 row(s) graded before it are in err.partial" in str(err)
    assert [r["task_id"] for r in err.partial] == [f"t{i}" for i in range(20)]
    assert all(r["reward"] == 1 for r in err.partial)


def test_camel_case_tools_are_read_like_snake_case_ones():
    """cancelOrder(orderId) was not seen as a write tool and orderId not as a record key, so the honest stand-in
    cancelled without asking and the world_state axis never applied."""
    cancel = wai.Tool("cancelOrder", "Cancel an order.", {"type": "object", "properties": {
        "orderId": {"type": "string"}}, "required": ["orderId"]})
    get = wai.Tool("getOrder", "Look up an order.", {"type": "object", "properties": {
        "orderId": {"type": "string"}}, "required": ["orderId"]})
    scen = wai.situations([cancel, get])
    assert {s.world_state for s in scen} == {"present", "missing", "edge"}
    assert any(str(s).startswith("Hi, could you cancel order ") for s in scen)
    data = wai.simulate(wai.seeded_agent([cancel, get], share=0), tools=[cancel, get], repeats=1, budget=40)
    honest_cancels = [r for r in data.rows if r["scenario"]["tool"] == "cancelOrder"]
    assert honest_cancels and all(not r["steps"] and "Shall I go ahead?" in r["final_text"] for r in honest_cancels)
