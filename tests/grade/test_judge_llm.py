"""wai.Judge over real HTTP (structured verdicts, loud parse errors) and model-written situations."""

from __future__ import annotations

import json

import pytest
from fakeserver import FakeServer, default_reply

from whileai_core.grade.judge import CONDUCT_FLOOR, Judge, JudgeReplyError, evidence, parse_verdict
from whileai_core.grade.run import JudgeError, run_judge
from whileai_core.models import config
from whileai_core.models.anthropic import Anthropic
from whileai_core.models.endpoint import Endpoint
from whileai_core.simulate.run import simulate
from whileai_core.simulate.writer import write_situations
from whileai_core.tools import tool

FAST = dict(backoff_s=0.001, backoff_cap_s=0.002, timeout=2.0)
RUBRIC = "The reply must name the order status the tool returned."


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by its id."""
    return {"status": "ok"}


@tool
def refund_order(order_id: str, amount: float) -> dict:
    """Refund an order."""
    return {"status": "ok"}


TOOLS = [get_order, refund_order]


pytestmark = pytest.mark.usefixtures("clean_config")  # tests/conftest.py: no configured model leaks in


def grading_responder(request, protocol):
    """A judge model that reads the evidence: 1 when the reply names the last tool status, else 0."""
    messages = request["messages"]
    system = request.get("system") or messages[0].get("content", "")
    if "You grade one conversation" not in str(system):
        return default_reply(request, protocol)  # the agent under test shares this server
    user = messages[-1]["content"]
    if isinstance(user, list):
        user = user[0]["text"]
    ev = json.loads(user)
    steps = [s for s in ev["steps"] if "tool" in s]
    status = steps[-1]["result"].get("status") if steps and isinstance(steps[-1]["result"], dict) else None
    ok = status is not None and status in ev["final_reply"]
    return {"text": f'I checked.\n```json\n{{"reason": "status {status} named: {ok}", "score": {int(ok)}}}\n```'}


ROW = {"row_id": "t#0", "task_id": "t", "rollout_index": 1, "prompt": "where is order A1",
       "steps": [{"tool": "get_order", "arguments": {"order_id": "A1"}, "result": {"status": "shipped"}}],
       "final_text": "Your order has shipped.", "faults": {}, "world_state": "present",
       "privileged": {"reference": "SECRET-REFERENCE"}}


def test_judge_sends_rubric_and_evidence_and_parses_the_verdict():
    with FakeServer(responder=grading_responder) as srv:
        judge = Judge(RUBRIC, model=Endpoint("j", url=srv.openai_url, **FAST))
        good = judge(ROW)
        bad = judge({**ROW, "final_text": "All done!"})
        body = srv.requests[0]["body"]
    assert good["reward"] == 1 and good["reason"] == "status shipped named: True"
    assert good["judge_usage"]["output_tokens"] > 0 and good["judge_usage"]["cached"] is False
    assert bad["reward"] == 0
    assert RUBRIC in body["messages"][0]["content"] and body["temperature"] == 0.0 and body["max_tokens"] == 200
    ev = json.loads(body["messages"][1]["content"])
    assert ev["request"] == ROW["prompt"] and ev["steps"] == ROW["steps"] and ev["final_reply"] == ROW["final_text"]
    assert "SECRET-REFERENCE" not in body["messages"][1]["content"]  # privileged only when asked


def test_use_privileged_puts_the_reference_in_the_evidence():
    ev = json.loads(evidence(ROW, use_privileged=True))
    assert ev["judge_only"] == {"reference": "SECRET-REFERENCE"}


def test_judge_through_run_judge_and_simulate():
    with FakeServer(responder=grading_responder) as srv:
        spec = f"vllm:agent@{srv.openai_url}"
        data = simulate(spec, tools=TOOLS, system_prompt="Orders.", simulator=False, budget=8, repeats=2,
                        concurrency=4, progress=False)
        judge = Judge(RUBRIC, model=Endpoint("judge", url=srv.openai_url, **FAST))
        scored = run_judge(data, judge, concurrency=4)
    rows = scored.rows
    assert all(r["status"] == "ok" for r in rows) and sum(1 for r in rows if r["steps"]) >= 4
    assert all(r["judge_status"] == "ok" and r["reward"] in (0, 1) for r in rows)
    assert {r["judge_name"] for r in rows} == {f"judge:vllm:judge@{srv.openai_url}"}
    # the fake agent always names the status it got, so every row that called a tool passes
    assert all(r["reward"] == 1 for r in rows if any("tool" in s for s in r["steps"]))


def test_unparseable_reply_is_a_loud_error_not_a_zero():
    with FakeServer() as srv:
        srv.script({"text": "I think it is fine overall."}, {"text": "I think it is fine overall."})
        judge = Judge(RUBRIC, model=Endpoint("j", url=srv.openai_url, **FAST))
        with pytest.raises(JudgeReplyError, match="not a JSON object with a score: 'I think it is fine overall.'"):
            judge(ROW)
        kept = run_judge([ROW], judge, on_error="keep")
        assert kept.rows[0]["reward"] is None and kept.rows[0]["judge_status"] == "error"
        assert "JudgeReplyError" in kept.rows[0]["judge_error"]
        srv.script({"text": "nope"})
        with pytest.raises(JudgeError, match="JudgeReplyError"):
            run_judge([ROW], judge, on_error="raise")


@pytest.mark.parametrize("reply, reward, reason", [
    ('{"reason": "fine", "score": 1}', 1, "fine"),
    ('Sure! {"reason": "half", "score": 0.5} hope that helps', 0.5, "half"),
    ('```json\n{"score": true, "reason": "yes"}\n```', 1, "yes"),
    ('{"reward": "0", "reason": "no"}', 0, "no"),
    ('{"reason": "has {braces} and \\"quotes\\"", "score": 0}', 0, 'has {braces} and "quotes"'),
    ('{"meta": {"x": 1}}\n{"reason": "second object", "score": 1}', 1, "second object"),
])
def test_parse_verdict_forms(reply, reward, reason):
    v = parse_verdict(reply)
    assert v == {"reward": reward, "reason": reason} and type(v["reward"]) is type(reward)


@pytest.mark.parametrize("reply, words", [
    ('{"reason": "x", "score": 7}', "outside [0, 1]"),
    ('{"reason": "x", "score": "high"}', "not a number"),
    ('{"reason": "x"}', "not a JSON object with a score"),
    ("", "not a JSON object with a score"),
])
def test_parse_verdict_errors(reply, words):
    with pytest.raises(JudgeReplyError, match=words.replace("[", r"\[").replace("]", r"\]")):
        parse_verdict(reply)


def test_evidence_is_capped_by_shrinking_never_slicing():
    big = {**ROW, "steps": [{"tool": "get_order", "arguments": {"order_id": "A1"}, "result": {"blob": "x" * 5000}}
                            for _ in range(6)]}
    text = evidence(big, max_chars=3000)
    ev = json.loads(text)  # still valid JSON
    assert len(text) <= 3000 and ev["payload_reduced"] is True
    assert "chars omitted]" in ev["steps"][0]["result"]["blob"]
    tiny = evidence(big, max_chars=200)
    assert json.loads(tiny)["steps"] == "[6 steps omitted]"


def test_judge_names_model_resolution_and_errors():
    j = Judge(model="openai:gpt-4.1-mini")
    assert j.name == "judge:openai:gpt-4.1-mini:conduct-floor" and j.__name__ == j.name
    assert CONDUCT_FLOOR in j.system_prompt()
    assert repr(j) == "Judge(conduct floor, model='openai:gpt-4.1-mini')"
    with pytest.raises(ValueError, match="model='openai/gpt-4o' uses a slash"):
        Judge(RUBRIC, model="openai/gpt-4o")
    with pytest.raises(ValueError, match="rubric= must be a non-empty str"):
        Judge("  ")
    unset = Judge(RUBRIC)
    with pytest.raises(ValueError, match=r"Judge has no model: pass Judge\(model="):
        unset(ROW)
    config.configure(judge="anthropic:claude-j")
    assert Judge(RUBRIC).name == "judge:anthropic:claude-j"
    assert Judge(RUBRIC, model="openai:own").name == "judge:openai:own"  # its own model beats configure


def test_json_mode_asks_for_a_json_object():
    with FakeServer(responder=grading_responder) as srv:
        Judge(RUBRIC, model=Endpoint("j", url=srv.openai_url, **FAST), json_mode=True)(ROW)
        assert srv.requests[-1]["body"]["response_format"] == {"type": "json_object"}
        Judge(RUBRIC, model=Endpoint("j", url=srv.openai_url, **FAST))(ROW)
        assert "response_format" not in srv.requests[-1]["body"]


def test_judge_over_anthropic():
    with FakeServer(responder=grading_responder) as srv:
        judge = Judge(RUBRIC, model=Anthropic("claude-j", api_key="k-1", url=srv.openai_url, **FAST))
        assert judge(ROW)["reward"] == 1
        body = srv.requests[-1]["body"]
    assert RUBRIC in body["system"] and body["temperature"] == 0.0


# ---- model-written situations ------------------------------------------------------------------
def writer_responder(request, protocol):
    """A writer model: a fixed batch with a duplicate, a bad stance, an unknown tool and junk items."""
    user = request["messages"][-1]["content"]
    if "Do not repeat" in user:
        return {"text": json.dumps({"situations": [
            {"prompt": "Refund order R5512 by 20 dollars", "stance": "adversarial", "world_state": "edge",
             "tool": "refund_order"},
            {"prompt": "where is order A1001?", "stance": "ordinary", "world_state": "present", "tool": "get_order"},
        ]})}
    return {"text": "Here you go:\n" + json.dumps({"situations": [
        {"prompt": "Where is order A1001?", "stance": "ordinary", "world_state": "present", "tool": "get_order"},
        {"prompt": "WHERE is   order A1001?", "stance": "ordinary", "world_state": "present", "tool": "get_order"},
        {"prompt": "Need order B77 now", "stance": "furious", "world_state": "sideways", "tool": "get_order"},
        {"prompt": "Delete my account", "stance": "unsure", "world_state": "unspecified", "tool": "delete_user"},
        {"stance": "ordinary"},
        42,
    ]})}


def test_write_situations_validates_and_deduplicates():
    with FakeServer(responder=writer_responder) as srv:
        spec = f"vllm:writer@{srv.openai_url}"
        out = write_situations(spec, tools=TOOLS, system_prompt="You handle orders.", n=4, seed=3, batch=6)
        first = srv.requests[0]["body"]
        second = srv.requests[1]["body"]
    assert [s["prompt"] for s in out] == ["Where is order A1001?", "Need order B77 now", "Delete my account",
                                          "Refund order R5512 by 20 dollars"]
    assert out[1]["stance"] == "ordinary" and out[1]["world_state"] == "unspecified"  # unknown values coerced
    assert out[2]["tool"] is None and out[3] == {"prompt": "Refund order R5512 by 20 dollars",
                                                 "stance": "adversarial", "world_state": "edge",
                                                 "tool": "refund_order"}
    # the second batch stops once n is reached, before its own duplicate
    assert out.duplicates == 1 and out.dropped == 2 and out.calls == 2 and out.warnings == []
    assert "You handle orders." in first["messages"][0]["content"] and '"refund_order"' in first["messages"][0]["content"]
    assert first["seed"] == 3 and "Do not repeat" in second["messages"][1]["content"]


def test_writer_failures_become_warnings():
    with FakeServer() as srv:
        backend = Endpoint("w", url=srv.openai_url, max_attempts=1, **FAST)
        srv.script({"text": "I cannot write JSON today."}, {"text": "[not json either"})
        out = write_situations(backend, tools=TOOLS, system_prompt=None, n=3, max_calls=2)
        assert len(out) == 0 and out.calls == 2 and len(out.warnings) == 3
        assert "writer call 1: no JSON list of situations" in out.warnings[0]
        assert "fill the rest from the covering array" in out.warnings[-1]
        srv.fail(1, status=500)
        out = write_situations(backend, tools=TOOLS, system_prompt=None, n=3, max_calls=4)
        assert len(out) == 0 and out.calls == 1 and "writer call 1 failed" in out.warnings[0]
    with pytest.raises(ValueError, match="n= must be an int >= 1; got 0"):
        write_situations("openai:x", tools=TOOLS, system_prompt=None, n=0)


def test_simulate_with_a_model_writer_puts_written_situations_first():
    with FakeServer(responder=writer_responder) as srv:
        spec = f"vllm:writer@{srv.openai_url}"
        data = simulate(lambda m: {"steps": [], "final_text": "ok"}, tools=TOOLS, system_prompt="Orders.",
                        simulator=spec, budget=8, repeats=1, progress=False)
    prompts = [r["prompt"] for r in data.rows]
    assert len(prompts) == 8 and "Where is order A1001?" in prompts and "Refund order R5512 by 20 dollars" in prompts


def test_context_judge_reaches_worker_threads_and_one_backend_is_reused():
    with FakeServer(responder=grading_responder) as srv:
        with config.context(judge=f"vllm:ctx-judge@{srv.openai_url}"):
            judge = Judge(RUBRIC)
        rows = [{**ROW, "row_id": f"t#{i}", "rollout_index": i} for i in range(6)]
        scored = run_judge(rows, judge, concurrency=3)  # graded on worker threads, outside the context
        assert all(r["reward"] == 1 for r in scored.rows)
        assert {r["body"]["model"] for r in srv.requests} == {"ctx-judge"}
        assert judge.backend is judge.backend  # resolved once: one connection pool for every row
    late = Judge(RUBRIC)  # nothing configured yet: resolved at call time
    config.configure(judge="openai:late")
    assert late.name == "judge:openai:late"
