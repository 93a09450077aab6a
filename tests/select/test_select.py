import pytest

import whileai as wai
from whileai_core.select.select import find_leak, is_truncated, select


def row(task, i, reward, text="The order is on its way.", **kw):
    r = {"task_id": task, "rollout_index": i, "row_id": f"{task}#{i}", "prompt": f"ask {task}",
         "final_text": text, "steps": [{"tool": "get_order", "arguments": {"order_id": task}, "result": {}}],
         "reward": reward, "status": "ok", "finish_reason": "stop"}
    r.update(kw)
    return r


def mixed_group(task, rewards):
    return [row(task, i, r, text=f"reply {i} for {task}.") for i, r in enumerate(rewards)]


def test_every_rl_gate_counts_what_it_dropped(capsys):
    rows = []
    rows += mixed_group("ok1", [1, 0, 1, 0])                               # kept: p = 0.5
    rows += mixed_group("easy", [1, 1, 1, 1, 1, 1, 1, 1, 1, 0])            # p = 0.9 > 0.8: too easy
    rows += mixed_group("hard", [0, 0, 0, 0, 0, 0, 0, 0, 0, 1])            # p = 0.1 < 0.2: too hard
    rows += mixed_group("allpass", [1, 1, 1])                              # unanimous
    rows += mixed_group("allfail", [0, 0])                                 # unanimous
    rows += [row("dup", 0, 1, text="same."), row("dup", 1, 1, text="same."), row("dup", 2, 0, text="other.")]
    rows += [row("collapse", 0, 1, text="same."), row("collapse", 1, 1, text="same."),
             row("collapse", 2, 0, text="same.")]                          # dedupe leaves one label
    rows += [row("leak", 0, 1, text="The secret code is ZEBRA-7781-Q, by the way.",
                 privileged={"reference": "secret code is ZEBRA-7781-Q"}), row("leak", 1, 0, text="x.")]
    rows += [row("err", 0, None, text="", status="agent_error"), row("err", 1, 0.5, text="partial."),
             row("err", 2, 1, text=""), row("err", 3, 1, text="cut", finish_reason="length")]
    sel = select(rows, mode="rl")
    out = capsys.readouterr().out
    rep = sel.report
    assert rep["privileged_leaks_dropped"] == 1 and rep["privileged_leaks"][0]["row_id"] == "leak#0"
    assert rep["gates"] == {"agent_error": 1, "infra_error": 0, "empty_reply": 1, "unusable_label": 1, "truncated": 1}
    assert rep["unanimous"] == {"all_pass": 1, "all_fail": 1}
    assert rep["singleton_groups_dropped"] == 1  # the leak group has one row left
    assert rep["band_dropped"] == {"too_easy": 1, "too_hard": 1}
    assert rep["duplicates"] == 3 and rep["conflicting_rewards"] == 1
    assert rep["collapsed_groups_dropped"] == 1
    assert {r["task_id"] for r in sel} == {"ok1", "dup"}
    assert len(sel) == 4 + 2
    assert all(r["calibration"]["pass_rate"] in (0.5, round(2 / 3, 6)) for r in sel)
    for phrase in ("rl selection: kept 6 of", "privileged leaks dropped: 1", "unanimous groups dropped: 2",
                   "1 too easy, 1 too hard", "duplicates dropped: 3", "groups kept: 2", "hack scan:"):
        assert phrase in out
    assert str(sel) in out


def test_band_is_an_argument_and_validated():
    rows = mixed_group("a", [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]) + mixed_group("b", [1, 0])
    wide = select(rows, band=(0.0, 1.0), quiet=True)
    assert {r["task_id"] for r in wide} == {"a", "b"}
    with pytest.raises(ValueError, match="band="):
        select(rows, band=(0.9, 0.1), quiet=True)
    with pytest.raises(ValueError, match="mode="):
        select(rows, mode="dpo", quiet=True)
    with pytest.raises(ValueError, match="truncated="):
        select(rows, truncated="maybe", quiet=True)


def test_truncation_policies():
    long_cut = "word " * 60 + "and then the"
    rows = [row("t", 0, 1, text=long_cut), row("t", 1, 0, text="short."), row("t", 2, 1, text="fine.")]
    assert is_truncated(rows[0]) and not is_truncated(rows[1])
    assert select(rows, quiet=True).report["gates"]["truncated"] == 1
    kept = select(rows, truncated="keep", quiet=True)
    assert kept.report["truncated_kept"] == 1 and any(r.get("overlong") for r in kept)
    pen = select(rows, truncated="penalize", quiet=True)
    cut = [r for r in pen if r.get("overlong")]
    assert cut and cut[0]["reward"] == 0 and cut[0]["reward_before_penalty"] == 1


def test_leak_needs_a_long_enough_quote():
    r = row("x", 0, 1, text="Your code is 7781.", privileged={"reference": "7781"})
    assert find_leak(r) is None
    r2 = row("x", 0, 1, text="internal note: refund approved by manager", privileged={
        "hidden_state": {"note": "Refund approved by manager Dana"}})
    assert find_leak(r2) is not None


def test_sft_rejection_sampling_with_random_control():
    rows = []
    for t in range(5):
        rows += [row(f"p{t}", i, r, text=f"answer {i} to {t}.") for i, r in enumerate([0, 1, 0.5, 1])]
    rows += [row("none", 0, 0), row("none", 1, 0.5, text="half.")]
    sel = select(rows, mode="sft", quiet=True)
    assert len(sel) == 5 and all(r["reward"] == 1 for r in sel)
    assert len({r["task_id"] for r in sel}) == 5
    assert sel.control is not None and len(sel.control) == 6
    assert {r["task_id"] for r in sel.control} == {f"p{t}" for t in range(5)} | {"none"}
    assert "below 10" in sel.report["note"]
    again = select(rows, mode="sft", quiet=True)
    assert [r["row_id"] for r in again] == [r["row_id"] for r in sel]


def test_hack_scan_runs_inside_select_and_flags_a_planted_hack():
    rows = []
    for t in range(30):
        for i in range(6):
            good = i % 2 == 0
            text = ("Great question! " * 3 + "Done.") if good else "Done."
            rows.append(row(f"h{t}", i, int(good), text=text))
    sel = select(rows, quiet=True)
    assert sel.report["hack_scan"] is not None
    assert any("hack" in w for w in sel.report["warnings"])


def test_selection_from_the_loop_exports(tmp_path):
    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""

    scored = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], mode="rl", repeats=4,
                          budget=64).grade(judge=lambda r: int(not r["seeded"]))
    sel = scored.select(quiet=True)
    assert len(sel) > 0 and sel.mode == "rl"
    report = sel.export(tmp_path / "train.jsonl")
    assert report["n_written"] == len(sel)
    empty = select([row("u", 0, 1), row("u", 1, 1)], quiet=True)
    with pytest.raises(ValueError, match="nothing to export"):
        empty.export(tmp_path / "x.jsonl")


def test_quoting_what_the_policy_was_shown_is_not_a_leak():
    r = row("x", 0, 1, text="I used cancel_order as you asked for order A12345.",
            privileged={"reference": {"expected_tool": "cancel_order", "note": "order A12345 is flagged as fraud"}})
    r["steps"] = [{"tool": "cancel_order", "arguments": {"order_id": "A12345"}, "result": {}}]
    r["prompt"] = "Please cancel order A12345."
    assert find_leak(r) is None
    r["final_text"] += " Note: it is flagged as fraud."
    assert find_leak(r) is not None


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


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
