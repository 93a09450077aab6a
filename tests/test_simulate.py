import json
import warnings

import pytest

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
        assert row["schema_version"] == "1"
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
