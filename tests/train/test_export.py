import json
import math

import pytest
import shop

import whileai as wai
from whileai_core.export.writer import export, mask_for, training_rows
from whileai_core.rows import read_jsonl, reward_field_hint, write_jsonl


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@pytest.fixture(scope="module")
def scored():
    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help.", repeats=4,
                        budget=32, mode="rl")
    return data.grade(judge=lambda r: int(not r["seeded"]))


def test_rl_export_round_trip(tmp_path, scored):
    path = tmp_path / "train.jsonl"
    report = scored.rows.export(path, mode="rl")
    back = read_jsonl(path)
    assert report["n_written"] == len(back) == 32 and report["groups"] == 8
    for item, row in zip(back, scored.rows):
        assert "privileged" not in json.dumps(item)
        assert item["messages"] == row["messages"]
        assert item["loss_mask"] == [1 if m["role"] == "assistant" else 0 for m in item["messages"]]
        assert item["prompt"] == row["messages"][:2]
        assert item["tools"][0]["function"]["name"] == "get_order"
        assert item["reward"] == row["reward"]
        for m in item["messages"]:
            for call in m.get("tool_calls") or []:
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
    groups = {}
    for item in back:
        groups.setdefault(item["group_id"], []).append(item)
    for members in groups.values():
        g = members[0]["group"]
        assert g["k"] == len(members) == 4
        assert g["n_pass"] == sum(m["reward"] for m in members)
        assert abs(g["reward_mean"] - g["n_pass"] / 4) < 1e-12


def test_sft_export_and_masks(tmp_path, scored):
    report = export(scored, tmp_path / "sft.jsonl", mode="sft", mask_mode="final")
    assert any("below reward 1" in w for w in report["warnings"])
    back = read_jsonl(tmp_path / "sft.jsonl")
    assert all(sum(i["loss_mask"]) == 1 and i["loss_mask"][-1] == 1 for i in back)
    assert "prompt" not in back[0] and "group" not in back[0]
    # tasks repeat, so SFT rows carry the SDK's flat group stamp too (group_id, k, n0, n1, reward mean and sd)
    assert {"group_id", "k", "n0", "n1", "reward_mean", "reward_std"} <= set(back[0])
    msgs = [{"role": "system"}, {"role": "user"}, {"role": "assistant"}, {"role": "tool"}, {"role": "assistant"}]
    assert mask_for(msgs) == [0, 0, 1, 0, 1] and mask_for(msgs, "final") == [0, 0, 0, 0, 1]
    with pytest.raises(ValueError, match="mask_mode="):
        mask_for(msgs, "all")


def test_refuses_to_overwrite_other_files_and_writes_atomically(tmp_path, scored):
    other = tmp_path / "notes.jsonl"
    other.write_text("my precious data\n")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        export(scored, other)
    assert other.read_text() == "my precious data\n"
    export(scored, other, overwrite=True)
    assert len(read_jsonl(other)) == 32
    with pytest.warns(UserWarning, match="earlier whileai training export"):
        export(scored, other)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_bad_tool_calls_are_refused():
    rows = [{"task_id": "a", "prompt": "p", "final_text": "x", "messages": [
        {"role": "user", "content": "p"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": "{not json"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"}, {"role": "assistant", "content": "x"}]}]
    with pytest.raises(ValueError, match="tool_call_roundtrip_invalid"):
        export(rows, None, tools=[get_order])
    assert export(rows, None, tools=[get_order], validate=False)["tool_call_roundtrip"]["invalid"] == 1
    with pytest.raises(ValueError, match="mode="):
        training_rows(rows, mode="dpo")


def test_make_rows_from_a_benchmark():
    rows = wai.rows(["2+2?", "2+2?", "capital of France?"], ["4", "5", "Paris"], task_ids=["a", "a", "b"],
                    references=["4", "4", "Paris"])
    assert [r["row_id"] for r in rows] == ["a#0", "a#1", "b#0"]
    scored = wai.rows(["2+2?", "2+2?"], ["4", "5"], task_ids=["a", "a"], references=["4", "4"],
                      reward=lambda r: int(r["final_text"] == r["privileged"]["reference"]))
    assert [r["reward"] for r in scored.rows] == [1, 0]
    given = wai.rows(["q1", "q2"], ["x", "y"], reward=[1, 0])
    assert [r["reward"] for r in given.rows] == [1, 0]
    with pytest.raises(ValueError, match="must match"):
        wai.rows(["q"], ["a", "b"])


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_eval_run_grades_then_selects_and_exports_as_rl(tmp_path):
    """simulate's default mode is 'eval'; select() and export() of its graded rows used to fail with
    "mode= must be 'rl' or 'sft'; got 'eval'" although the user never passed a mode."""
    data = wai.simulate(wai.seeded_agent(shop.TOOLS), tools=shop.TOOLS, repeats=4, budget=80, concurrency=4)
    assert data.mode == "eval"
    scored = data.grade(shop.not_seeded)
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
    data = wai.simulate(wai.seeded_agent(shop.TOOLS), tools=shop.TOOLS, mode="sft", repeats=4, budget=80)
    scored = data.grade(shop.not_seeded)
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


def test_directory_as_output_path_names_the_fix(tmp_path):
    rows = [{"task_id": "a", "reward": 1, "final_text": "x"}]
    with pytest.raises(IsADirectoryError, match="is a directory; pass a file path inside it"):
        wai.export(rows, tmp_path)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        write_jsonl(tmp_path, rows, overwrite=True)


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


def test_nan_reward_is_refused_by_export_not_written_as_bad_json(tmp_path):
    rows = [{"task_id": "a", "reward": float("nan"), "final_text": "x"}]
    with pytest.raises(ValueError, match=r"rows\[0\] \(task 'a'\) has reward nan"):
        wai.export(rows, tmp_path / "t.jsonl")
    assert not (tmp_path / "t.jsonl").exists()
    with pytest.raises(ValueError, match="NaN or infinity .*'score'"):
        write_jsonl(tmp_path / "r.jsonl", [{"score": math.inf}])
    assert not (tmp_path / "r.jsonl").exists()


def test_openai_style_json_string_arguments_round_trip_through_export():
    """An agent passing a model's raw tool call (arguments as a JSON string) used to be double-encoded, so the
    export refused every row as tool_call_roundtrip_invalid."""

    def agent(message):
        return {"steps": [{"tool": "get_order", "arguments": json.dumps({"order_id": "A1"}),
                           "result": {"status": "ok"}}], "final_text": "Order A1 is fine."}

    data = wai.simulate(agent, tools=[shop.get_order], repeats=1, budget=2)
    assert data.rows[0]["steps"][0]["arguments"] == {"order_id": "A1"}
    call = data.rows[0]["messages"][1]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"order_id": "A1"}
    rep = wai.export(data.grade(lambda r: 1), None)
    assert rep["tool_call_roundtrip"] == {"checked": 2, "invalid": 0, "rows": []}

    def bad(message):
        return {"steps": [{"tool": "get_order", "arguments": "order A1", "result": None}], "final_text": "x."}

    row = wai.simulate(bad, tools=[shop.get_order], repeats=1, budget=1).rows[0]
    assert row["status"] == "ok" and row["steps"][0]["arguments"] == "order A1"  # a model's broken JSON is kept
    with pytest.raises(ValueError, match="tool_call_roundtrip_invalid"):  # ... and never trained on as a call
        wai.export([dict(row, reward=1)], None, tools=[shop.get_order])


def test_huge_reward_is_a_clear_error_not_an_overflow(tmp_path):
    # issue 28 fuzz: reward=1e308 raised OverflowError computing the group's sd
    rows = [{"task_id": "t", "prompt": "q", "final_text": "a", "reward": 1e308},
            {"task_id": "t", "prompt": "q", "final_text": "b", "reward": 0.0}]
    with pytest.raises(ValueError, match="reward 1e\\+308"):
        training_rows(rows)
    with pytest.raises(ValueError, match="finite number"):
        export(rows, tmp_path / "x.jsonl")
    ok = training_rows([{**rows[0], "reward": 1e100}, rows[1]])
    assert ok[0]["reward_std"] == pytest.approx(5e99)
