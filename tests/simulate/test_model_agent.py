"""The model-backed agent loop over real HTTP: tool calls answered by the mock world, faults first."""

from __future__ import annotations

import json

import pytest
from fakeserver import FakeServer

from whileai_core.errors import BackendError
from whileai_core.models import config
from whileai_core.models.anthropic import Anthropic
from whileai_core.models.endpoint import Endpoint
from whileai_core.simulate.model_agent import ModelAgent, as_agent
from whileai_core.simulate.situations import Scenario
from whileai_core.simulate.world import MALFORMED_PAYLOAD, World
from whileai_core.tools import tool

FAST = dict(backoff_s=0.001, backoff_cap_s=0.002, timeout=2.0)


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by its id."""
    return {"status": "ok", "order_id": order_id}


@tool
def cancel_order(order_id: str, reason: str = "customer request") -> dict:
    """Cancel an order."""
    return {"status": "ok", "cancelled": order_id}


TOOLS = [get_order, cancel_order]


pytestmark = pytest.mark.usefixtures("clean_config")  # tests/conftest.py: no configured model leaks in


def scenario(text="please get order A1001", **fields):
    fields.setdefault("world", World(TOOLS, seed=0))
    fields.setdefault("task_id", "t-1")
    fields.setdefault("entity_id", "A1001")
    return Scenario(text, **fields)


def test_loop_calls_tool_through_world_and_feeds_result_back(srv):
    agent = as_agent(Endpoint("m", url=srv.openai_url, **FAST), tools=TOOLS, system_prompt="You help with orders.")
    out = agent(scenario())
    assert [s.get("tool") for s in out["steps"]] == ["get_order"]
    step = out["steps"][0]
    assert step["arguments"] == {"order_id": "A1001"} and step["result"]["status"] == "ok"
    assert out["final_text"] == "Done: get_order returned ok." and out["finish_reason"] == "stop"
    assert out["usage"]["calls"] == 2 and out["turns"] == 2
    first, second = (r["body"] for r in list(srv.requests)[-2:])
    assert first["messages"][0] == {"role": "system", "content": "You help with orders."}
    assert [t["function"]["name"] for t in first["tools"]] == ["get_order", "cancel_order"]
    call_id = second["messages"][2]["tool_calls"][0]["id"]
    assert second["messages"][3]["role"] == "tool" and second["messages"][3]["tool_call_id"] == call_id
    assert json.loads(second["messages"][3]["content"]) == step["result"]


@pytest.mark.parametrize("mode, status", [("timeout", "timeout"), ("denied", "denied"), ("error", "error")])
def test_scheduled_faults_answer_first(srv, mode, status):
    agent = as_agent(Endpoint("m", url=srv.openai_url, **FAST), tools=TOOLS, system_prompt=None)
    out = agent(scenario(faults={"tool": "get_order", "mode": mode}))
    assert out["steps"][0]["result"]["status"] == status
    assert out["final_text"] == f"Done: get_order returned {status}."


def test_malformed_fault_reaches_the_model_verbatim(srv):
    agent = as_agent(Endpoint("m", url=srv.openai_url, **FAST), tools=TOOLS, system_prompt=None)
    out = agent(scenario(faults={"tool": "get_order", "mode": "malformed"}))
    assert out["steps"][0]["result"] == MALFORMED_PAYLOAD
    assert srv.requests[-1]["body"]["messages"][-1]["content"] == MALFORMED_PAYLOAD
    assert out["final_text"] == "Done: get_order returned unreadable."


def test_max_turns_cuts_a_tool_loop(srv):
    srv.script(*[{"tool_calls": [{"name": "get_order", "arguments": {"order_id": "A1001"}}]}] * 3)
    agent = as_agent(Endpoint("m", url=srv.openai_url, **FAST), tools=TOOLS, system_prompt=None, max_turns=3)
    out = agent(scenario())
    assert out["finish_reason"] == "tool" and out["final_text"] == "" and out["turns"] == 3
    assert len(out["steps"]) == 3 and srv.count == 3


def test_bad_tool_arguments_go_back_to_the_model_as_an_error(srv):
    srv.script({"tool_calls": [{"name": "get_order", "arguments": "{order_id:"}]}, {"text": "sorry"})
    world = World(TOOLS, seed=0)
    out = as_agent(Endpoint("m", url=srv.openai_url, **FAST), tools=TOOLS, system_prompt=None)(scenario(world=world))
    assert out["steps"][0]["arguments"] == "{order_id:" and out["steps"][0]["result"]["status"] == "error"
    assert "not valid JSON" in out["steps"][0]["result"]["error"]
    assert world.calls == 0 and out["final_text"] == "sorry"


def test_text_beside_tool_calls_rides_on_the_call_and_unknown_tools_reach_the_world(srv):
    srv.script({"text": "Let me check.", "tool_calls": [{"name": "no_such_tool", "arguments": {}}]}, {"text": "ok"})
    out = as_agent(Endpoint("m", url=srv.openai_url, **FAST), tools=TOOLS, system_prompt=None)(scenario())
    assert len(out["steps"]) == 1 and out["steps"][0]["text"] == "Let me check." and out["steps"][0]["turn"] == 0
    assert out["steps"][0]["result"]["status"] == "not_found"


def test_parallel_calls_in_one_reply_are_one_turn_and_dotted_tools_reach_the_model_mapped(srv):
    from whileai_core.simulate.run import rollout

    docs = [{"name": "orders.get", "description": "Get an order.", "parameters": {  # BFCL-shaped: "dict"
        "type": "dict", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}]
    srv.script({"text": "Looking up both.", "tool_calls": [{"name": "orders_get", "arguments": {"order_id": "A1001"}},
                                                           {"name": "orders_get", "arguments": {"order_id": "B2"}}]},
               {"text": "Both found."})
    agent = as_agent(Endpoint("m", url=srv.openai_url, **FAST), tools=docs, system_prompt="S")
    row = rollout(agent, scenario(), tools=docs, system_prompt="S")
    first, second = (r["body"] for r in list(srv.requests)[-2:])
    assert [t["function"]["name"] for t in first["tools"]] == ["orders_get"]  # the model sees the mapped name
    assert first["tools"][0]["function"]["parameters"]["type"] == "object"  # and JSON Schema's type names
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool", "tool"]
    steps = row["steps"]
    assert [(s["tool"], s["arguments"]["order_id"], s["turn"]) for s in steps] == [("orders_get", "A1001", 0),
                                                                                    ("orders_get", "B2", 0)]
    assert steps[0]["text"] == "Looking up both." and steps[0]["result"]["status"] == "ok"  # the world knew it
    assert "no get with order_id 'B2'" in steps[1]["result"]["error"]  # an unknown record, not an unknown tool
    msgs = row["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert msgs[2]["content"] == "Looking up both." and len(msgs[2]["tool_calls"]) == 2
    assert [m["tool_call_id"] for m in msgs[3:5]] == [c["id"] for c in msgs[2]["tool_calls"]]
    assert row["loss_mask"] == [0, 0, 1, 0, 0, 1]


def test_without_a_world_the_tool_bodies_answer(srv):
    out = as_agent(Endpoint("m", url=srv.openai_url, **FAST), tools=TOOLS, system_prompt=None)("get order Z77")
    assert out["steps"][0]["result"] == {"status": "ok", "order_id": "Z77"}


def test_length_finish_reason(srv):
    srv.script({"text": "a long reply that got cu", "finish_reason": "length"})
    out = as_agent(Endpoint("m", url=srv.openai_url, **FAST), tools=TOOLS, system_prompt=None)(scenario())
    assert out["finish_reason"] == "length"


def test_simulated_user_answers_a_question_in_stance(srv):
    srv.script(
        {"text": "Which order do you mean?"},  # agent asks
        {"text": "Order A1001, hurry up."},  # user model answers
        {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "A1001"}}]},
        {"text": "It is on its way."},
    )
    backend = Endpoint("m", url=srv.openai_url, **FAST)
    agent = as_agent(backend, tools=TOOLS, system_prompt=None, user_model=Endpoint("u", url=srv.openai_url, **FAST))
    out = agent(scenario("where is my order", stance="hurried"))
    assert out["steps"][:2] == [{"text": "Which order do you mean?"}, {"user": "Order A1001, hurry up."}]
    assert out["steps"][2]["tool"] == "get_order" and out["final_text"] == "It is on its way."
    user_req = list(srv.requests)[1]["body"]
    assert user_req["model"] == "u" and "hurried" in user_req["messages"][0]["content"]
    assert user_req["messages"][-1] == {"role": "user", "content": "Which order do you mean?"}
    assert "tools" not in user_req


def test_anthropic_agent_loop(srv):
    agent = as_agent(Anthropic("claude-t", api_key="k-anthropic-1", url=srv.openai_url, **FAST), tools=TOOLS,
                     system_prompt="sys")
    out = agent(scenario())
    assert out["steps"][0]["tool"] == "get_order" and out["final_text"] == "Done: get_order returned ok."
    body = srv.requests[-1]["body"]
    assert body["system"] == "sys" and body["messages"][-1]["content"][0]["type"] == "tool_result"


def test_infra_errors_raise_backend_error(srv):
    srv.fail(2, status=500)
    agent = as_agent(Endpoint("m", url=srv.openai_url, max_attempts=2, **FAST), tools=TOOLS, system_prompt=None)
    with pytest.raises(BackendError):
        agent(scenario())


def test_resolution_and_argument_errors(srv):
    with pytest.raises(ValueError, match="no agent given"):
        as_agent(None, tools=TOOLS, system_prompt=None)
    config.configure(agent=f"vllm:m@{srv.openai_url}")
    a = as_agent(None, tools=TOOLS, system_prompt=None)
    assert isinstance(a, ModelAgent) and a.__name__ == f"vllm:m@{srv.openai_url}"

    def mine(message):
        return {"steps": [], "final_text": "hi"}

    assert as_agent(mine, tools=TOOLS, system_prompt=None) is mine
    with pytest.raises(ValueError, match="max_turns= must be an int >= 1; got 0"):
        as_agent("openai:x", tools=TOOLS, system_prompt=None, max_turns=0)
    with pytest.raises(ValueError, match="agent='gpt-4o' names no provider"):
        as_agent("gpt-4o", tools=TOOLS, system_prompt=None)


def test_simulate_end_to_end_with_a_model_string(srv):
    from whileai_core.simulate.run import simulate

    spec = f"vllm:m@{srv.openai_url}"
    data = simulate(spec, tools=TOOLS, system_prompt="You help with orders.", simulator=False, budget=16,
                    repeats=2, concurrency=8, progress=False)
    rows = data.rows
    assert len(rows) == 16 and all(r["status"] == "ok" for r in rows)
    assert all(r["lineage"]["agent"] == spec for r in rows)
    called = [r for r in rows if r["steps"]]
    assert called and all(r["final_text"].startswith("Done: ") for r in called)
    for r in called:  # the reply names the status the world really returned (faults included)
        res = r["steps"][-1]["result"]
        status = res.get("status", "ok") if isinstance(res, dict) else "unreadable"
        assert r["final_text"].endswith(f"returned {status}.")
    # same rows at concurrency 1: the agent is thread-safe and deterministic against a deterministic model
    again = simulate(spec, tools=TOOLS, system_prompt="You help with orders.", simulator=False, budget=16,
                     repeats=2, concurrency=1, progress=False)
    assert [(r["row_id"], r["steps"], r["final_text"]) for r in again.rows] == \
        [(r["row_id"], r["steps"], r["final_text"]) for r in rows]


def test_simulate_keeps_backend_errors_as_rows(srv):
    from whileai_core.simulate.run import simulate

    srv.fail(1000, status=503)
    data = simulate(Endpoint("m", url=srv.openai_url, max_attempts=1, **FAST), tools=TOOLS, system_prompt=None,
                    simulator=False, budget=4, repeats=2, concurrency=2, progress=False)
    assert all(r["status"] == "infra_error" and r["error"].startswith("BackendError") for r in data.rows)
    assert data.n_infra_errors == 4 and data.n_errors == 0
    assert any("infrastructure error" in w for w in data.warnings)
    scored = data.grade(judge=lambda row: 0)  # never asked: an unreachable backend is not a wrong answer
    assert all(r["reward"] is None and r["judge_status"] == "skipped_infra_error" for r in scored.rows)


def test_keys_never_reach_rows_logs_or_errors(monkeypatch, caplog, capsys):
    import logging

    from whileai_core.models.openai import OpenAI
    from whileai_core.simulate.run import simulate

    secret = "sk-rows-SECRET-55555555"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    caplog.set_level(logging.DEBUG)
    with FakeServer() as srv:
        backend = OpenAI("gpt-x", url=srv.openai_url, max_attempts=1, **FAST)
        good = simulate(backend, tools=TOOLS, system_prompt="s", simulator=False, budget=4, repeats=2,
                        concurrency=2, progress=True)
        srv.fail(100, status=401, body=f"bad key {secret}")
        bad = simulate(backend, tools=TOOLS, system_prompt="s", simulator=False, budget=4, repeats=2,
                       concurrency=2, progress=True)
        assert srv.requests[0]["headers"]["authorization"] == f"Bearer {secret}"  # it was sent, as a header
    assert all(r["status"] == "ok" for r in good.rows)
    assert all(r["status"] == "infra_error" and "<redacted>" in r["error"] for r in bad.rows)
    out = capsys.readouterr()
    blob = json.dumps([*good.rows, *bad.rows], default=str) + repr(good) + repr(bad) + caplog.text + out.out + out.err
    assert secret not in blob
