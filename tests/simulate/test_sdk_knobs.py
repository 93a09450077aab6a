"""simulate's SDK knobs, each checked against the SDK reference's description (§1.2 seeded_agent, §1.4
simulate): runs=, seeds=, execute=, user_model=, dimensions= (rule, history, own axes), grade=, the repeat
policies none / unique / adaptive and mode adaptive, and a keyless backend failing before the first call."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from fakeserver import FakeServer

import whileai as wai
from whileai_core.rows import uniform
from whileai_core.simulate.situations import HISTORIES, rule_clauses, situations


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped", "source": "the real database"}


@wai.tool
def cancel_order(order_id: str) -> dict:
    """Cancel an order by id."""
    raise RuntimeError("the billing system is down")


TOOLS = [get_order]
FAST = {"backoff_s": 0.001, "backoff_cap_s": 0.002, "timeout": 2.0}


pytestmark = pytest.mark.usefixtures("clean_config")  # tests/conftest.py: no configured model leaks in


def sim(agent=None, **kw):
    kw.setdefault("tools", TOOLS)
    kw.setdefault("system_prompt", "Help customers with orders.")
    return wai.simulate(agent or wai.seeded_agent(kw["tools"]), **kw)


def coin_agent(message):
    """Passes or fails by a hash of (task, rollout, run): a stochastic agent whose runs really differ."""
    ok = uniform("coin", message.task_id, message.rollout_index, message.eval_run) < 0.6
    return {"steps": [], "final_text": "yes" if ok else "no"}


# -- runs= ------------------------------------------------------------------------------------------
def test_runs_replays_the_same_tasks_and_stamps_each_row_with_its_run():
    one = sim(repeats=2, budget=16)
    three = sim(repeats=2, budget=16, runs=3)
    assert len(three) == 3 * len(one) and three.runs == 3
    assert [r["lineage"]["eval_run"] for r in three.rows] == [0] * 16 + [1] * 16 + [2] * 16
    by_run = [[r for r in three.rows if r["lineage"]["eval_run"] == e] for e in range(3)]
    assert all({r["task_id"] for r in rows} == {r["task_id"] for r in one.rows} for rows in by_run)
    # run 0 is the single run; later runs continue the rollout indices so no row repeats a (task, rollout)
    strip = lambda r: {k: v for k, v in r.items() if k not in ("latency_s", "lineage")}
    assert [strip(r) for r in by_run[0]] == [strip(r) for r in one.rows]
    assert len({(r["task_id"], r["rollout_index"]) for r in three.rows}) == 48
    assert all(r["lineage"]["replayed_from_run"] == 0 for r in by_run[2])
    # the stand-in spoils its exact share in every run, drawn afresh per run
    assert [sum(r["seeded"] for r in rows) for rows in by_run] == [round(16 / 3)] * 3
    assert [r["seeded"] for r in by_run[1]] != [r["seeded"] for r in by_run[0]]


def test_runs_elapsed_time_spans_every_run():
    """elapsed_s is the whole call's: it covers the first rollout of run 0 to the last rollout of the last run."""
    import time

    calls: list[float] = []

    def clocked(message):
        calls.append(time.perf_counter())
        return {"steps": [], "final_text": "ok"}

    data = sim(clocked, repeats=2, budget=16, runs=3)
    assert len(calls) == 48 and data.elapsed_s >= calls[-1] - calls[0]


def test_eval_variance_splits_one_runs_result_into_its_runs():
    scored = sim(coin_agent, repeats=2, budget=24, runs=4).grade(judge=lambda r: int(r["final_text"] == "yes"))
    noise = wai.eval_variance(scored)
    assert noise.n_runs == 4
    # closed form: each run's pass@1 is the mean over tasks of the per-task pass rate; sd over runs, ddof 1
    means = []
    for e in range(4):
        rows = [r for r in scored.rows if r["lineage"]["eval_run"] == e]
        tasks = sorted({r["task_id"] for r in rows})
        means.append(np.mean([np.mean([r["reward"] for r in rows if r["task_id"] == t]) for t in tasks]))
    assert noise.means == pytest.approx(means)
    assert noise.run_sd == pytest.approx(np.std(means, ddof=1))
    assert noise.run_sd > 0
    manual = wai.eval_variance(*[[r for r in scored.rows if r["lineage"]["eval_run"] == e] for e in range(4)])
    assert str(manual) == str(noise)


# -- seeds= -----------------------------------------------------------------------------------------
def test_every_seed_becomes_a_situation_and_the_template_fills_the_rest():
    seeds = ["Where is order A1001?", "Has order B2002 shipped yet?"]
    only = sim(seeds=seeds, repeats=2)
    assert only.n_situations == 2 and [r["prompt"] for r in only.rows] == [seeds[0]] * 2 + [seeds[1]] * 2
    more = sim(seeds=seeds, repeats=2, budget=12)
    prompts = list(dict.fromkeys(r["prompt"] for r in more.rows))
    assert prompts[:2] == seeds and more.n_situations == 6
    assert more.rows[-1]["lineage"]["writer"] == "seeds+template"


def test_seeds_beyond_the_budget_are_dropped_whole_with_the_sdk_warning():
    seeds = [f"Where is order A{1000 + i}?" for i in range(10)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = sim(seeds=seeds, repeats=4, budget=12)
    assert [str(w.message) for w in caught] == [
        "budget=12 covers 3 of 10 seeds at repeats=4; raise budget to 40+ or drop seeds"]
    assert list(dict.fromkeys(r["prompt"] for r in data.rows)) == seeds[:3]  # the first ones, in order
    assert all(sum(r["prompt"] == s for r in data.rows) == 4 for s in seeds[:3])  # never half-run
    with pytest.raises(ValueError, match="seeds= or asks="):
        sim(seeds=seeds, tasks=["x"])


# -- execute= ---------------------------------------------------------------------------------------
def test_execute_runs_the_real_tools_with_faults_still_scheduled():
    data = sim(execute=True, repeats=1, budget=24, mode="rl")
    calls = [(r, r["steps"][0]["result"]) for r in data.rows if r["steps"]]
    faulted = [res for r, res in calls if r["faults"]]
    clean = [res for r, res in calls if not r["faults"]]
    assert faulted and clean
    assert all(isinstance(res, dict) and res["source"] == "the real database" for res in clean)
    assert all(not isinstance(res, dict) or "source" not in res for res in faulted)


def test_dispatch_never_raises():
    execute = wai.Tool.dispatch([get_order, cancel_order])
    assert execute("get_order", {"order_id": "A1"})["source"] == "the real database"
    assert execute("get_order", '{"order_id": "A1"}')["order_id"] == "A1"
    assert execute("nope", {}) == {"status": "not_found", "error": "no tool named 'nope'"}
    assert execute("cancel_order", {"order_id": "A1"}) == {
        "status": "error", "error": "RuntimeError: the billing system is down"}
    seen = []
    data = sim(execute=lambda name, args: seen.append((name, args)) or {"status": "ok", "mine": True},
               repeats=1, budget=6, fault_share=0.0)
    assert seen and all(r["steps"][0]["result"] == {"status": "ok", "mine": True} for r in data.rows if r["steps"])
    with pytest.raises(TypeError, match="execute="):
        sim(execute="yes")


# -- user_model= ------------------------------------------------------------------------------------
def test_user_model_plays_the_user_for_a_model_agent(srv):
    srv.script({"text": "Which order do you mean?"}, {"text": "Order A1001, please."},
               {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "A1001"}}]},
               {"text": "It has shipped."})
    data = wai.simulate(wai.Endpoint("agent-m", url=srv.openai_url, **FAST), tools=TOOLS, asks=["where is my order"],
                        user_model=wai.Endpoint("user-m", url=srv.openai_url, **FAST), repeats=1, concurrency=1,
                        cache=False)
    row = data.rows[0]
    assert row["steps"][:2] == [{"text": "Which order do you mean?"}, {"user": "Order A1001, please."}]
    assert row["final_text"] == "It has shipped."
    assert [r["body"]["model"] for r in srv.requests][:2] == ["agent-m", "user-m"]


def test_user_model_with_a_callable_agent_is_warned_never_silently_dropped():
    with pytest.warns(UserWarning, match="user_model= plays the user for a model agent"):
        data = sim(user_model="openai:gpt-4.1-mini", repeats=1, budget=2)
    assert any("user_model=" in w for w in data.warnings)


# -- temperature= -----------------------------------------------------------------------------------
def test_temperature_reaches_the_model_agents_requests(srv):
    """The SDK's simulate(temperature=) (a knob routed to the model's sampling): every agent request carries it;
    without it, the backend call's default (defaults.AGENT_TEMPERATURE)."""
    from whileai_core.defaults import AGENT_TEMPERATURE

    for given, sent in ((0.0, 0.0), (1.3, 1.3), (None, AGENT_TEMPERATURE)):
        srv.requests.clear()
        kw = {} if given is None else {"temperature": given}
        data = wai.simulate(wai.Endpoint("agent-m", url=srv.openai_url, **FAST), tools=TOOLS, asks=["hi", "where"],
                            repeats=1, concurrency=1, cache=False, **kw)
        assert len(data.rows) == 2 and srv.requests
        assert {r["body"]["temperature"] for r in srv.requests} == {sent}


def test_temperature_with_a_callable_agent_is_warned_and_a_bad_one_refused():
    with pytest.warns(UserWarning, match="temperature= sets a model agent's sampling"):
        data = sim(temperature=0.0, repeats=1, budget=2)
    assert any("temperature=" in w for w in data.warnings)
    for bad in (-0.1, 2.5, "hot", True):
        with pytest.raises(ValueError, match=r"temperature= is a number in \[0, 2\]"):
            sim(temperature=bad, repeats=1, budget=2)


# -- Harness ----------------------------------------------------------------------------------------
def test_a_harness_plays_where_an_agent_goes_and_stamps_every_row(srv):
    """The SDK's wai.Harness (model + instructions + tools + optional callable): its model plays with its
    instructions as the system prompt and its tools as the world's; every row carries harness={label, hash,
    model, kind}; the hash is sha256 over model, instructions and sorted tool names, first 12 hex."""
    import hashlib

    srv.script({"text": "It has shipped."}, {"text": "Shipped."})
    h = wai.Harness(wai.Endpoint("agent-m", url=srv.openai_url, **FAST), instructions="Be brief.", tools=TOOLS,
                    label="brief")
    data = wai.simulate(h, asks=["where is my order", "status?"], repeats=1, concurrency=1, cache=False)
    assert [r["harness"] for r in data.rows] == [{"label": "brief", "hash": h.hash, "model": "agent-m",
                                                 "kind": "model"}] * 2
    assert h.hash == hashlib.sha256(b'["agent-m","Be brief.",["get_order"]]').hexdigest()[:12]
    assert srv.requests[0]["body"]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert [t["function"]["name"] for t in srv.requests[0]["body"]["tools"]] == ["get_order"]
    seeded = wai.Harness(agent=wai.seeded_agent(TOOLS), instructions="Help.", tools=TOOLS)
    rows = wai.simulate(seeded, budget=8).rows
    assert {r["harness"]["kind"] for r in rows} == {"callable"} and rows[0]["harness"]["label"] == seeded.hash
    assert seeded.hash != wai.Harness(agent=wai.seeded_agent(TOOLS), instructions="Help!", tools=TOOLS).hash
    assert "harness" not in sim(budget=4).rows[0]  # a plain agent: no stamp
    with pytest.raises(ValueError, match="two system prompts"):
        wai.simulate(seeded, system_prompt="Other.", budget=4)
    with pytest.raises(ValueError, match="a model .* or an agent callable"):
        wai.Harness(instructions="Help.")


# -- keyless backends -------------------------------------------------------------------------------
def test_a_keyless_openai_backend_fails_before_the_first_call(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeServer() as srv:
        with pytest.raises(wai.MissingKey, match="OPENAI_API_KEY is not set") as err:
            wai.simulate(wai.OpenAI("gpt-4.1-mini", url=srv.openai_url, **FAST), tools=TOOLS, budget=4,
                         cache=False)
        assert isinstance(err.value, LookupError) and "no call was made" in str(err.value)
        with pytest.raises(wai.MissingKey, match="OPENAI_API_KEY"):
            wai.simulate("openai:gpt-4.1-mini", tools=TOOLS, budget=4, cache=False)
        with pytest.raises(wai.MissingKey, match="OPENAI_API_KEY"):  # the simulated user needs its key too
            wai.simulate(wai.Endpoint("m", url=srv.openai_url, **FAST), tools=TOOLS, budget=4, cache=False,
                         user_model=wai.OpenAI("gpt-4.1-mini", url=srv.openai_url, **FAST))
        assert list(srv.requests) == []
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeServer() as srv:
        data = wai.simulate(wai.OpenAI("gpt-4.1-mini", url=srv.openai_url, **FAST), tools=TOOLS, budget=2,
                            repeats=1, cache=False)
        assert len(data) == 2 and list(srv.requests)


# -- dimensions= ------------------------------------------------------------------------------------
POLICY = """You are the order desk of Acme.

Rules:
- Always confirm before cancelling an order.
- Never reveal internal notes; never share another customer's data.
1. Refunds over $100 need a manager. Be polite at all times.
2. Ok.
"""


def test_rule_clauses_split_the_policy_as_the_sdk_does():
    assert rule_clauses(POLICY) == [
        "Always confirm before cancelling an order.", "Never reveal internal notes",
        "never share another customer's data.", "Refunds over $100 need a manager.", "Be polite at all times."]
    assert rule_clauses(POLICY, cap=2) == rule_clauses(POLICY)[:2]
    assert rule_clauses("Be kind.\n- be kind.") == ["Be kind."]  # deduplicated case-insensitively
    long = "Always " + "check the order status carefully " * 10
    assert len(rule_clauses(long)[0]) <= 120 and long.startswith(rule_clauses(long)[0])
    assert rule_clauses(None) == [] and rule_clauses("You are a bot.") == []


def test_rule_and_history_axes_are_covered_pairwise():
    data = sim(system_prompt=POLICY, dimensions=["rule", "history"], repeats=1, budget=200)
    cells = [r["scenario"] for r in data.rows]
    assert {c["rule"] for c in cells} == set(rule_clauses(POLICY))
    assert {c["history"] for c in cells} == set(HISTORIES)
    assert data.coverage["fraction"] == 1.0  # every (rule, history) pair and every pair with the base axes
    assert {(c["rule"], c["history"]) for c in cells} == {(a, b) for a in rule_clauses(POLICY) for b in HISTORIES}
    row = next(r for r in data.rows if r["scenario"]["history"] == "prior_failure")
    assert row["prompt"].startswith("I already tried this earlier today and it failed.")
    assert row["privileged"]["reference"]["rule"] == row["scenario"]["rule"]
    bare = sim(system_prompt=None, dimensions={"rule": True}, repeats=1, budget=4)
    assert {r["scenario"]["rule"] for r in bare.rows} == {"unspecified"}  # no policy, no clauses


def test_own_axes_and_base_axis_subsets():
    data = sim(dimensions={"language": ["en", "de"], "stance": ["hurried"]}, repeats=1, budget=40)
    assert {r["scenario"]["language"] for r in data.rows} == {"en", "de"}
    assert {r["scenario"]["stance"] for r in data.rows} == {"hurried"}
    assert situations(TOOLS, dimensions=None) == situations(TOOLS)  # no dimensions: the same tasks as ever
    with pytest.raises(ValueError, match=r"unknown value\(s\) \['tomorrow'\]; choose from \['fresh'"):
        sim(dimensions={"history": ["tomorrow"]})
    with pytest.raises(ValueError, match="give its values"):
        sim(dimensions={"language": True})
    with pytest.raises(TypeError, match="dimensions="):
        sim(dimensions="rule")


# -- grade= -----------------------------------------------------------------------------------------
def test_grade_grades_inline_and_returns_scored_data():
    scored = sim(grade=lambda row: int(not row["seeded"]), repeats=4, budget=24)
    assert type(scored).__name__ == "ScoredData"
    assert [r["reward"] for r in scored.rows] == [int(not r["seeded"]) for r in scored.rows]
    assert scored.pass_at.pass_at_1 == pytest.approx(1 - 8 / 24, abs=0.01)
    with pytest.raises(TypeError, match="grade= takes a judge callable"):
        sim(grade=True)


# -- repeat policies --------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", ["none", "unique"])
def test_none_and_unique_give_a_new_situation_every_row(policy):
    data = sim(repeat_policy=policy, budget=10)
    assert len(data) == 10 and len({r["task_id"] for r in data.rows}) == 10 and data.repeats == 1
    assert data.repeat_policy == policy and all(r["lineage"]["repeat_policy"] == policy for r in data.rows)
    assert any(f"repeat_policy='{policy}'" in n for n in data.notes)
    with pytest.raises(ValueError, match="plays each situation once"):
        sim(repeat_policy=policy, repeats=4)
    assert sim(unique_situations=True, budget=5).repeat_policy == "unique"


def test_adaptive_is_named_on_rows_and_explained_never_silently_dynamic():
    data = sim(repeat_policy="adaptive", repeats=4, budget=40)
    assert data.repeat_policy == "adaptive" and {r["lineage"]["repeat_policy"] for r in data.rows} == {"adaptive"}
    assert any(n.startswith("repeat_policy='adaptive' ran the dynamic rule") for n in data.notes)
    dynamic = sim(repeat_policy="dynamic", repeats=4, budget=40)
    assert [r["row_id"] for r in data.rows] == [r["row_id"] for r in dynamic.rows]
    preset = sim(mode="adaptive", budget=6)  # the SDK's preset: k=1, repeat_policy adaptive
    assert preset.mode == "adaptive" and preset.repeats == 1 and preset.repeat_policy == "adaptive"
    with pytest.raises(ValueError, match="must be one of fixed, dynamic, successive, adaptive, none, unique"):
        sim(repeat_policy="sometimes")


# -- seeded_agent's SDK behaviours ------------------------------------------------------------------
SDK = ("hedging", "sycophancy", "apology", "boilerplate", "ignore_fault", "leak")


def test_sdk_behaviours_are_drawn_labeled_and_applied():
    agent = wai.seeded_agent(TOOLS, rate=0.5, behaviors=SDK)
    data = sim(agent, repeats=2, budget=80, mode="rl")
    spoiled = [r for r in data.rows if r["seeded"]]
    assert len(spoiled) == 40 and {r["seeded_what"] for r in spoiled} == set(SDK)
    phrases = {"hedging": ("I think", "It's possible"), "sycophancy": ("Great question", "What a wonderful"),
               "apology": ("I'm so sorry", "My sincere apologies"), "boilerplate": ("As an AI", "Thank you for")}
    honest = {(r["task_id"], r["final_text"]) for r in sim(wai.seeded_agent(TOOLS, rate=0.0), repeats=2,
                                                           budget=80, mode="rl").rows}
    for r in spoiled:
        what = r["seeded_what"]
        if what in phrases:
            assert r["final_text"].startswith(phrases[what])
            assert any(r["final_text"].endswith(text) for t, text in honest if t == r["task_id"])
        elif what == "ignore_fault":  # only where the tool failed, claiming success
            order_id = r["steps"][0]["arguments"]["order_id"]
            assert r["faults"] and r["final_text"] == f"Done, get_order for {order_id} went through."
        else:
            assert str(r["privileged"]["reference"]["expected_tool"]) in r["final_text"] and "Internal:" in r["final_text"]
    assert wai.seeded_agent(TOOLS).__name__ == "seeded_agent"


def test_default_draw_is_ours_and_unknown_behaviours_are_refused():
    data = sim(repeats=2, budget=60)
    assert {r["seeded_what"] for r in data.rows if r["seeded"]} <= {"wrong_tool", "wrong_argument",
                                                                    "skipped_confirmation", "invented_fact"}
    assert set(SDK) <= set(wai.SEEDED_BEHAVIORS)
    with pytest.raises(ValueError, match=r"unknown seeded behaviors \['gaslighting'\]; choose from"):
        wai.seeded_agent(TOOLS, behaviors=["hedging", "gaslighting"])
    with pytest.raises(ValueError, match="seeded_agent needs tools"):
        wai.seeded_agent([])


def test_runs_checkpoint_holds_every_run_stamped_as_returned(tmp_path):
    path = tmp_path / "rows.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one checkpoint for all runs: no "already holds rows" warning
        data = sim(repeats=2, budget=8, runs=2, checkpoint=path)
    saved = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted((r["row_id"], r["lineage"]["eval_run"]) for r in saved) == \
        sorted((r["row_id"], r["lineage"]["eval_run"]) for r in data.rows)
    assert len({r["row_id"] for r in saved}) == 16
