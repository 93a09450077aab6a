import json
import warnings

import numpy as np
import pytest
import shop

import whileai as wai
from whileai_core.simulate.agents import SEEDED_BEHAVIORS
from whileai_core.simulate.situations import TOOL_CONDITIONS, situations
from whileai_core.simulate.world import FAULT_MODES, MALFORMED_PAYLOAD, World


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@wai.tool
def cancel_order(order_id: str, reason: str = "") -> dict:
    """Cancel an order."""


def run(agent=None, **kw):
    kw.setdefault("tools", [get_order])
    kw.setdefault("system_prompt", "Help customers with orders.")
    return wai.simulate(agent or wai.seeded_agent(kw["tools"]), **kw)


def test_same_seed_identical_rows_and_other_seed_differs():
    a = run(repeats=4, budget=64, seed=3)
    b = run(repeats=4, budget=64, seed=3, concurrency=7)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "latency_s"} for r in rows]
    assert strip(a.rows) == strip(b.rows)
    c = wai.simulate(wai.seeded_agent([get_order], seed=4), tools=[get_order], repeats=4, budget=64, seed=4)
    assert [r["seeded"] for r in c.rows] != [r["seeded"] for r in a.rows]


def test_rows_are_json_and_follow_the_schema():
    data = run(repeats=2, budget=12)
    assert len(data) == 12 and data.n_situations == 6
    for row in data.rows:
        json.dumps(row)
        assert row["schema_version"] == "1.1"
        assert row["row_id"] == f"{row['task_id']}#{row['rollout_index']}"
        assert row["messages"][0] == {"role": "system", "content": "Help customers with orders."}
        assert row["messages"][1]["role"] == "user" and row["messages"][1]["content"] == row["prompt"]
        assert row["messages"][-1] == {"role": "assistant", "content": row["final_text"]}
        assert row["loss_mask"] == [1 if m["role"] == "assistant" else 0 for m in row["messages"]]
        assert isinstance(row["seeded"], bool)
        assert set(row["scenario"]) == {"tool", "world_state", "stance", "tool_condition"}
        assert row["lineage"]["writer"] == "template"


def test_seeded_share_is_exact_and_labeled():
    data = run(repeats=4, budget=96)
    seeded = [r for r in data.rows if r["seeded"]]
    assert len(seeded) == round(len(data.rows) / 3)
    assert all(r["seeded_what"] in SEEDED_BEHAVIORS for r in seeded)
    assert all(r["seeded_what"] is None for r in data.rows if not r["seeded"])


def test_the_spoil_cut_of_a_freed_run_plan_is_never_read_for_the_next_plan():
    """A run's plan is freed when the run ends, and CPython hands its id to the next plan made (a list's
    freelist does so at once); the cut kept for the old plan must not be read for the new one. Keyed by id alone
    it was: a Ray worker that played a shard of one run and then a shard of another spoiled the second by the
    first's cut, and its rows differed from the local run's. Invariant, over 40 seeded plans: one spoiler used
    across all of them decides every rollout as a fresh spoiler does."""
    from whileai_core.simulate import world as world_vars
    from whileai_core.simulate.agents import _Spoiler

    reused, rng = _Spoiler(5, 0.3), np.random.default_rng(11)
    for _ in range(40):
        plan = [(f"t{int(t)}", i) for t in rng.choice(500, rng.integers(1, 30), replace=False) for i in range(2)]
        token = world_vars.RUN_PLAN.set(plan)
        try:
            fresh = _Spoiler(5, 0.3)
            assert [reused(t, i) for t, i in plan] == [fresh(t, i) for t, i in plan]
            assert sum(fresh(t, i) for t, i in plan) == round(0.3 * len(plan))
        finally:
            world_vars.RUN_PLAN.reset(token)
        del plan  # freed: with an id-keyed cut the next list took its id and this failed at plan 2


def test_seeded_behaviours_do_what_they_say():
    tools = [get_order, cancel_order]
    data = wai.simulate(wai.seeded_agent(tools, share=0.6), tools=tools, repeats=3, budget=150)
    by = {}
    for r in data.rows:
        by.setdefault(r["seeded_what"], []).append(r)
    assert set(by) - {None} <= set(SEEDED_BEHAVIORS) and len(set(by) - {None}) >= 3
    for r in by.get("wrong_tool", []):
        assert r["steps"] and r["steps"][0]["tool"] != r["scenario"]["tool"]
    for r in by.get("skipped_confirmation", []):
        assert r["steps"][0]["tool"] == "cancel_order"
    honest_cancel = [r for r in by[None] if r["scenario"]["tool"] == "cancel_order"]
    assert honest_cancel and all(not r["steps"] and "Shall I go ahead?" in r["final_text"] for r in honest_cancel)
    for r in by.get("wrong_argument", []):
        assert r["steps"][0]["arguments"]["order_id"] not in r["prompt"]


def test_fault_schedule_share_and_modes():
    scen = situations([get_order], n=50, fault_share=0.6)
    fault_cells = [s for s in scen if s.tool_condition != "success"]
    kept = [s for s in fault_cells if s.faults]
    assert len(kept) == round(0.6 * len(fault_cells))
    assert {s.faults["mode"] for s in kept} == set(FAULT_MODES)
    assert all(s.faults["mode"] == s.tool_condition for s in kept)
    assert not any(s.faults for s in scen if s.tool_condition == "success")
    world = World([get_order])
    for s in kept:
        result = world.call("get_order", {"order_id": s.entity_id}, scenario=s)
        if s.faults["mode"] == "malformed":
            assert result == MALFORMED_PAYLOAD
        else:
            assert result["status"] == {"error": "error", "timeout": "timeout", "not_found": "not_found",
                                        "denied": "denied"}[s.faults["mode"]]


def test_world_states():
    world = World([get_order])
    scen = {s.world_state: s for s in situations([get_order], fault_share=0.0)}
    assert world.call("get_order", {"order_id": scen["present"].entity_id}, scenario=scen["present"])["status"] == "ok"
    assert world.call("get_order", {"order_id": scen["missing"].entity_id},
                      scenario=scen["missing"])["status"] == "not_found"
    edge = world.call("get_order", {"order_id": scen["edge"].entity_id}, scenario=scen["edge"])
    assert edge["total"] == 0.0 and edge["items"] == 0
    assert world.call("nope", {})["status"] == "not_found"
    assert "missing required" in world.call("get_order", {})["error"]


def test_covering_array_axes_in_run():
    data = run(repeats=1, budget=200)
    assert data.coverage["fraction"] == 1.0
    conds = {r["scenario"]["tool_condition"] for r in data.rows}
    assert conds == set(TOOL_CONDITIONS)


def test_agent_errors_become_counted_rows():
    def flaky(message):
        if message.rollout_index == 1:
            raise RuntimeError("backend fell over")
        return {"steps": [], "final_text": "ok."}

    data = run(agent=flaky, repeats=3, budget=12)
    assert len(data.rows) == 12 and data.n_errors == 4
    err = [r for r in data.rows if r["status"] == "agent_error"]
    assert all(r["error"] == "RuntimeError: backend fell over" and r["finish_reason"] == "error" for r in err)
    assert any("4 of 12 rollouts ended in an agent error" in w for w in data.warnings)


def test_agent_contract_violations_are_error_rows():
    data = run(agent=lambda m: 42, repeats=1, budget=3)
    assert all(r["status"] == "agent_error" and "agent contract" in r["error"] for r in data.rows)
    data = run(agent=lambda m: {"steps": [{"bogus": 1}], "final_text": "x"}, repeats=1, budget=2)
    assert all("steps[0]" in r["error"] for r in data.rows)
    data = run(agent=lambda m: "just text", repeats=1, budget=2)
    assert all(r["status"] == "ok" and r["final_text"] == "just text" for r in data.rows)


def test_dynamic_probes_then_fills_disagreeing_groups():
    fixed = run(repeats=6, budget=60, repeat_policy="fixed")
    dyn = run(repeats=6, budget=60, repeat_policy="dynamic")
    alias = run(repeats=6, budget=60, repeat_policy="successive")
    assert [r["row_id"] for r in dyn.rows] == [r["row_id"] for r in alias.rows]
    sizes = {}
    for r in dyn.rows:
        sizes[r["task_id"]] = sizes.get(r["task_id"], 0) + 1
    assert set(sizes.values()) <= {2, 6} and 2 in sizes.values() and 6 in sizes.values()
    assert len(dyn.rows) < len(fixed.rows)
    # groups that were filled are exactly those whose two probes differed
    for task, n in sizes.items():
        probes = [r for r in dyn.rows if r["task_id"] == task and r["rollout_index"] < 2]
        differ = probes[0]["final_text"] != probes[1]["final_text"] or probes[0]["steps"] != probes[1]["steps"]
        assert (n == 6) == differ
    # with a grader, disagreement is on reward
    graded = run(repeats=6, budget=60, repeat_policy="dynamic", grader=lambda row: int(not row["seeded"]))
    for task in {r["task_id"] for r in graded.rows}:
        members = [r for r in graded.rows if r["task_id"] == task]
        probes = [r["seeded"] for r in members if r["rollout_index"] < 2]
        assert (len(members) == 6) == (probes[0] != probes[1])


def test_budget_and_situations_checks():
    with pytest.warns(UserWarning, match=r"budget=20 covers 5 of 10 situations at repeats=4; raise budget to 40\+"):
        data = run(repeats=4, budget=20, situations=10)
    assert data.n_situations == 5 and any("covers 5 of 10" in w for w in data.warnings)
    with pytest.raises(ValueError, match="budget=3 is smaller than repeats=4"):
        run(repeats=4, budget=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(run(repeats=2, situations=5)) == 10


@pytest.mark.parametrize("kw, match", [
    ({"mode": "train"}, "mode= must be one of"),
    ({"repeat_policy": "sometimes"}, "repeat_policy= must be"),
    ({"repeats": 0}, "repeats= must be an int >= 1"),
    ({"budget": -1}, "budget= must be an int >= 1"),
    ({"concurrency": 0}, "concurrency= must be an int >= 1"),
    ({"fault_share": 2}, "fault_share= must be a number in"),
    ({"seed": "x"}, "seed= must be an int"),
])
def test_bad_arguments_name_the_argument(kw, match):
    with pytest.raises(ValueError, match=match):
        run(**kw)


def test_unknown_keyword_is_a_typeerror_with_a_hint():
    with pytest.raises(TypeError, match=r"'repeets'.*repeats"):
        run(repeets=3)
    with pytest.raises(ValueError, match="not both"):
        run(repeats=3, rollouts_per_request=4)


def test_no_agent_is_a_clear_error():
    with pytest.raises(ValueError, match="needs an agent"):
        wai.simulate(None, tools=[get_order])


def test_interrupt_keeps_finished_rows():
    calls = {"n": 0}

    def agent(message):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return {"steps": [], "final_text": "fine."}

    data = run(agent=agent, repeats=2, budget=20, concurrency=1)
    assert data.stopped_because == "interrupted"
    assert 1 <= len(data.rows) < 20
    assert any("interrupted" in w for w in data.warnings)


def test_checkpoint_appends_scrubbed_rows(tmp_path):
    path = tmp_path / "ck.jsonl"
    data = run(repeats=2, budget=8, checkpoint=path)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == len(data.rows) == 8
    assert all("privileged" not in r for r in lines)


def test_user_agent_routes_calls_through_world_and_gets_faults():
    w = wai.world([get_order])

    def agent(message):
        result = w.call("get_order", {"order_id": message.entity_id})
        return {"steps": [{"tool": "get_order", "arguments": {"order_id": message.entity_id}, "result": result}],
                "final_text": "done."}

    data = run(agent=agent, repeats=1, budget=30, fault_share=1.0)
    for r in data.rows:
        if r["faults"]:
            res = r["steps"][0]["result"]
            assert res == MALFORMED_PAYLOAD or res["status"] == r["faults"]["mode"]


def test_context_reaches_rollout_worker_threads():
    import contextvars

    var = contextvars.ContextVar("probe_sim", default="unset")
    var.set("caller")
    seen = set()

    def agent(message):
        seen.add(var.get())
        return "ok."

    run(agent=agent, repeats=2, budget=8, concurrency=4)
    assert seen == {"caller"}


def test_simulate_takes_judge_like_grade_and_grader_as_its_alias():
    def not_seeded(row):
        return int(not row["seeded"])

    by_judge = run(repeats=6, budget=60, repeat_policy="dynamic", judge=not_seeded)
    by_grader = run(repeats=6, budget=60, repeat_policy="dynamic", grader=not_seeded)
    assert [r["row_id"] for r in by_judge.rows] == [r["row_id"] for r in by_grader.rows]
    assert run(repeats=2, budget=8, judge=not_seeded, grader=not_seeded).rows  # the same judge twice is fine
    with pytest.raises(ValueError, match="judge= or grader="):
        run(repeats=2, budget=8, judge=not_seeded, grader=lambda row: 1)
    with pytest.raises(TypeError, match="judge= must be a callable or None; got int"):
        run(repeats=2, budget=8, judge=3)


def test_an_ungraded_run_has_no_pass_at_and_says_how_to_get_one():
    data = run(repeats=1, budget=4)
    assert not hasattr(data, "pass_at") and not hasattr(data, "select")
    with pytest.raises(AttributeError, match=r"not graded yet; call data.grade\(judge=...\) and read scored.pass_at"):
        data.pass_at
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        data.nope
    assert data.grade(judge=lambda row: 1).pass_at is not None


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_write_tools_optional_only_tools_and_list_returns_run_clean():
    data = wai.simulate(wai.seeded_agent(shop.TOOLS), tools=shop.TOOLS, repeats=2, budget=120, concurrency=8)
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

    data = wai.simulate(Agent(), tools=[shop.ping], repeats=2, budget=4)
    row = data.rows[0]
    assert row["status"] == "ok" and row["lineage"]["agent"] == "Agent"
    assert row["agent_extra"] == {"confidence": "nan", "tags": ["a"]}
    json.dumps(row, allow_nan=False)  # the row stays strict JSON


def test_dynamic_policy_with_grader_fills_only_disagreeing_groups():
    data = wai.simulate(wai.seeded_agent(shop.TOOLS), tools=shop.TOOLS, repeats=4, budget=80, repeat_policy="dynamic",
                        grader=shop.not_seeded)
    sizes = {}
    for r in data.rows:
        sizes[r["task_id"]] = sizes.get(r["task_id"], 0) + 1
    assert set(sizes.values()) <= {2, 4}
    for tid, size in sizes.items():
        labels = {shop.not_seeded(r)["reward"] for r in data.rows if r["task_id"] == tid and r["rollout_index"] < 2}
        assert size == (4 if len(labels) > 1 else 2)


def test_asks_with_int_task_id_and_unicode():
    data = wai.simulate(lambda m: "ok 🐋.", asks=[{"prompt": "Zoë «order» 🐋", "task_id": 7}, "plain ask"],
                        repeats=2, budget=4)
    assert [r["task_id"] for r in data.rows][:2] == ["7", "7"]
    assert data.rows[0]["prompt"] == "Zoë «order» 🐋"


def test_empty_ask_is_named():
    with pytest.raises(ValueError, match=r"asks\[1\] is an empty message"):
        wai.simulate(lambda m: "ok.", asks=["fine", "  "], repeats=1, budget=2)


def test_checkpoint_in_a_missing_folder_is_created(tmp_path):
    """A checkpoint path whose folder did not exist used to crash the run after the first row."""
    path = tmp_path / "new" / "dir" / "rows.jsonl"
    data = wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=2, budget=10, checkpoint=path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(data.rows) == 10


def test_checkpoint_that_is_a_directory_fails_before_any_rollout(tmp_path):
    calls = []

    def agent(m):
        calls.append(m)
        return "ok."

    with pytest.raises(IsADirectoryError, match="checkpoint=.*is a directory; pass a file path"):
        wai.simulate(agent, tools=[shop.ping], repeats=1, budget=2, checkpoint=tmp_path)
    assert calls == []


def test_reused_checkpoint_resumes_and_another_run_appends(tmp_path):
    path = tmp_path / "c.jsonl"
    first = wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=3, checkpoint=path)
    with pytest.warns(UserWarning, match=r"checkpoint=.* already holds 3 rows of this run: resumed"):
        again = wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=3, checkpoint=path)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 3  # nothing ran twice
    assert [r["row_id"] for r in again.rows] == [r["row_id"] for r in first.rows]
    with pytest.warns(UserWarning, match="already holds 3 rows of another run"):
        other = wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=3, seed=1,
                             output=path)
    assert other.run_id != first.run_id and len(other) == 3
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

    data = wai.simulate(agent, tools=[shop.ping], repeats=1, budget=8, concurrency=1, checkpoint=path)
    assert len(data.rows) == 8
    assert any("stopped being written" in w for w in data.warnings)


def test_world_call_with_json_string_or_junk_arguments_never_raises():
    w = wai.world(shop.TOOLS)
    ok = w.call("get_order", '{"order_id": "A1234"}')
    assert ok["status"] == "ok" and ok["order_id"] == "A1234"
    junk = w.call("get_order", "A1234")
    assert junk["status"] == "error" and "not valid JSON" in junk["error"]
    wrong = w.call("get_order", ["A1234"])
    assert wrong["status"] == "error" and "must be a dict" in wrong["error"]
    assert w.call("ping", "").startswith("status: ok")  # empty JSON text means no arguments


def test_seeded_agent_takes_one_behavior_as_a_string():
    agent = wai.seeded_agent(shop.TOOLS, share=1.0, behaviors="invented_fact")
    data = wai.simulate(agent, tools=shop.TOOLS, repeats=1, budget=10)
    assert {r["seeded_what"] for r in data.rows} == {"invented_fact"}


def test_scenario_checks_its_fields():
    with pytest.raises(TypeError, match="Scenario\\(prompt\\) takes the user's message as a string"):
        wai.Scenario(None)
    with pytest.raises(ValueError, match="rollout_index= must be an int >= 0"):
        wai.Scenario("hi", rollout_index="x")
    assert wai.Scenario("hi", task_id=5).task_id == "5"


def test_a_broken_grader_or_progress_hook_costs_no_rows():
    agent = wai.seeded_agent([shop.get_order])
    data = wai.simulate(agent, tools=[shop.get_order], repeat_policy="dynamic", grader=lambda r: 1 / 0, repeats=4,
                        budget=8)
    assert len(data.rows) >= 4
    assert any("grader= failed on the probes of" in w and "ZeroDivisionError" in w for w in data.warnings)
    calls = []

    def hook(info):
        calls.append(info)
        raise RuntimeError("dashboard down")

    data = wai.simulate(agent, tools=[shop.get_order], repeats=1, budget=100, on_progress=hook, progress=False)
    assert len(data.rows) == 100 and len(calls) == 1
    assert any("on_progress raised RuntimeError" in w for w in data.warnings)
    for name in ("grader", "on_progress"):
        with pytest.raises(TypeError, match=f"{name}= must be a callable or None; got int"):
            wai.simulate(agent, tools=[shop.get_order], repeats=1, budget=2, **{name: 5})


def test_one_ask_is_one_situation_not_its_characters_or_keys():
    data = wai.simulate(lambda m: "ok.", asks="get order A1", repeats=1, budget=5)
    assert [r["prompt"] for r in data.rows] == ["get order A1"]
    data = wai.simulate(lambda m: "ok.", asks={"prompt": "hello there", "task_id": "t1"}, repeats=1, budget=5)
    assert [(r["prompt"], r["task_id"]) for r in data.rows] == [("hello there", "t1")]


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
        wai.simulate(lambda m: "ok.", tools=[shop.get_order], asks=[{"prompt": "hi", "faults": {"mode": "bogus"}}],
                     repeats=1, budget=1)
    with pytest.raises(TypeError, match=r"asks\[0\]: faults= is a dict"):
        wai.simulate(lambda m: "ok.", asks=[{"prompt": "hi", "faults": "timeout"}], repeats=1, budget=1)
    with pytest.raises(ValueError, match=r"asks\[0\]: world_state= is 'gone'"):
        wai.simulate(lambda m: "ok.", asks=[{"prompt": "hi", "world_state": "gone"}], repeats=1, budget=1)


def test_step_text_none_is_an_agent_error_not_the_text_none():
    def agent(message):
        return {"steps": [{"text": None}], "final_text": "done."}

    row = wai.simulate(agent, tools=[shop.ping], repeats=1, budget=1).rows[0]
    assert row["status"] == "agent_error" and "steps[0] has no tool and its text is None" in row["error"]
    assert all(m.get("content") != "None" for m in row["messages"])

    def agent2(message):
        return {"steps": [{"tool": "ping", "arguments": {}, "result": "pong", "text": None}, {"user": 5}],
                "final_text": "done."}

    row = wai.simulate(agent2, tools=[shop.ping], repeats=1, budget=1).rows[0]
    assert row["status"] == "agent_error" and "steps[1]['user'] is int" in row["error"]


def test_honest_stand_in_sends_arguments_of_the_declared_type():
    """The stand-in put the id text into every argument (refund_payment(amount='R1234'), list_orders(limit=
    'the record')), so an honest, unseeded row made a type-wrong call that an argument-checking judge fails."""
    py_type = {"string": str, "integer": int, "number": float, "boolean": bool}
    data = wai.simulate(wai.seeded_agent(shop.TOOLS, share=0.5), tools=shop.TOOLS, repeats=2, budget=200)
    by_name = {t.name: t for t in shop.TOOLS}
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
    tools = [shop.ping, shop.get_order]
    data = wai.simulate(wai.seeded_agent(tools, share=0), tools=tools, repeats=1, budget=60, fault_share=0)
    missing = [r for r in data.rows if r["world_state"] == "missing"]
    assert {r["scenario"]["tool"] for r in missing} == {"ping", "get_order"}
    for r in missing:
        answered = r["steps"][0]["result"]
        found = not (isinstance(answered, dict) and answered.get("status") == "not_found")
        assert r["privileged"]["reference"]["record_exists"] is found
        assert r["privileged"]["hidden_state"]["exists"] is found


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


def test_concurrency_has_an_upper_bound():
    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""

    with pytest.raises(ValueError, match="MAX_CONCURRENCY"):
        wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], concurrency=100_000)


def test_task_ids_come_from_the_cell_and_survive_a_new_tool():
    from whileai_core.simulate.situations import task_id

    @wai.tool
    def cancel_order(order_id: str) -> dict:
        """Cancel an order by id."""

    @wai.tool
    def refund_order(order_id: str) -> dict:
        """Refund an order by id."""

    old = situations([get_order])
    two = situations([get_order, cancel_order])
    three = situations([get_order, cancel_order, refund_order])
    assert {s.task_id for s in old} <= {s.task_id for s in two} <= {s.task_id for s in three}
    assert all(s.task_id == task_id(s.scenario) for s in two)  # all cells of one array are distinct
