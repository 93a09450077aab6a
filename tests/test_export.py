import json

import pytest

import whileai as wai
from whileai_core.rows import read_jsonl
from whileai_core.train.export import export, mask_for, training_rows


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
    assert "prompt" not in back[0] and "group_id" not in back[0]
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
