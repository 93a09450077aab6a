"""Record/replay cassettes: keyed on model, messages, tools, params and trial; loud diffs on a miss."""

from __future__ import annotations

import json

import pytest
from fakeserver import FakeServer, default_reply

from whileai_core.models import config
from whileai_core.models.cache import Cassette, CassetteMiss, request_key
from whileai_core.models.endpoint import Endpoint
from whileai_core.models.openai import OpenAI
from whileai_core.simulate.model_agent import as_agent
from whileai_core.simulate.run import simulate
from whileai_core.tools import tool

SECRET = "sk-cassette-SECRET-987654321"
FAST = dict(backoff_s=0.001, backoff_cap_s=0.002, timeout=2.0)


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by its id."""
    return {"status": "ok"}


TOOLS = [get_order]


pytestmark = pytest.mark.usefixtures("clean_config")  # tests/conftest.py: no configured model leaks in


def counting_responder():
    """A model whose every reply differs (so replaying trial 0 for trial 1 would be visible)."""
    n = {"i": 0}

    def reply(request, protocol):
        base = default_reply(request, protocol)
        n["i"] += 1
        if "text" in base:
            base["text"] += f" #{n['i']}"
        return base

    return reply


def run(spec_or_backend, cache, *, system_prompt="You help with orders.", repeats=2, budget=8, concurrency=4):
    return simulate(spec_or_backend, tools=TOOLS, system_prompt=system_prompt, simulator=False, budget=budget,
                    repeats=repeats, concurrency=concurrency, progress=False, cache=cache)


def view(data):
    return [(r["row_id"], r["steps"], r["final_text"]) for r in data.rows]


def test_record_then_replay_offline_gives_the_same_rows(tmp_path):
    path = tmp_path / "agent.jsonl"
    with FakeServer(responder=counting_responder()) as srv:
        backend = Endpoint("m", url=srv.openai_url, **FAST)
        with Cassette(path, mode="record") as cas:
            live = run(backend, cas)
        calls = srv.count
    assert cas.recorded == calls and len(cas) == calls
    # the server is gone: replay must not touch the network
    dead = Endpoint("m", url=srv.openai_url, max_attempts=1, **FAST)
    replay = Cassette(path, mode="replay")
    again = run(dead, replay)
    assert all(r["status"] == "ok" for r in again.rows)
    assert view(again) == view(live)
    assert replay.hits == calls and replay.misses == 0
    # repeats were recorded independently: k trials of one task have different replies
    by_task = {}
    for r in live.rows:
        by_task.setdefault(r["task_id"], set()).add(r["final_text"])
    assert all(len(texts) == 2 for texts in by_task.values() if any(texts))


def test_trial_index_is_part_of_the_key():
    req = {"model": "vllm:m", "messages": [{"role": "user", "content": "hi"}], "tools": [],
           "params": {"temperature": 0.7, "max_tokens": 10}, "trial": 0}
    assert request_key(req) != request_key({**req, "trial": 1})
    assert request_key(req) == request_key(json.loads(json.dumps(req)))  # stable through a file round trip
    assert request_key(req) != request_key({**req, "params": {"temperature": 0.0, "max_tokens": 10}})


def test_replay_miss_fails_loudly_with_a_diff(tmp_path):
    path = tmp_path / "c.jsonl"
    with FakeServer() as srv:
        backend = Endpoint("m", url=srv.openai_url, **FAST)
        with Cassette(path, mode="record") as cas:
            backend.complete([{"role": "system", "content": "Be terse."}, {"role": "user", "content": "hi"}],
                             cache=cas)
        replay = Cassette(path, mode="replay")
        with pytest.raises(CassetteMiss) as ei:
            backend.complete([{"role": "system", "content": "Be verbose."}, {"role": "user", "content": "hi"}],
                             cache=replay)
        assert srv.count == 1  # the miss never went live
    msg = str(ei.value)
    assert "cassette replay miss" in msg and "trial=0" in msg and str(path) in msg
    lines = msg.splitlines()
    assert any(line.startswith("-") and '"content": "Be terse."' in line for line in lines)
    assert any(line.startswith("+") and '"content": "Be verbose."' in line for line in lines)
    assert not any(line.startswith(("-", "+")) and '"role"' in line for line in lines)  # only what changed
    assert "mode='record'" in msg and "--wai-record" in msg


def test_auto_mode_replays_hits_and_records_misses(tmp_path):
    path = tmp_path / "auto.jsonl"
    with FakeServer() as srv:
        backend = Endpoint("m", url=srv.openai_url, **FAST)
        cas = Cassette(path, mode="auto")
        first = backend.complete([{"role": "user", "content": "a"}], cache=cas)
        assert srv.count == 1 and not first.cached
        again = backend.complete([{"role": "user", "content": "a"}], cache=cas)
        assert srv.count == 1 and again.cached and again.text == first.text
        backend.complete([{"role": "user", "content": "a"}], cache=cas, trial=1)
        assert srv.count == 2
        cas.close()
        cas2 = Cassette(path, mode="auto")
        assert len(cas2) == 2
        backend.complete([{"role": "user", "content": "a"}], cache=cas2, trial=1)
        assert srv.count == 2 and cas2.hits == 1


def test_record_mode_starts_over_and_file_is_sorted_plain_jsonl(tmp_path):
    path = tmp_path / "r.jsonl"
    with FakeServer() as srv:
        backend = Endpoint("m", url=srv.openai_url, **FAST)
        with Cassette(path, mode="record") as cas:
            for trial in (2, 0, 1):
                backend.complete([{"role": "user", "content": "x"}], cache=cas, trial=trial)
        lines = path.read_text().splitlines()
        assert [json.loads(line)["request"]["trial"] for line in lines] == [0, 1, 2]
        assert all(set(json.loads(line)) == {"key", "request", "response"} for line in lines)
        with Cassette(path, mode="record") as cas:
            backend.complete([{"role": "user", "content": "y"}], cache=cas)
        assert len(path.read_text().splitlines()) == 1


def test_keys_never_reach_the_cassette(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    path = tmp_path / "k.jsonl"
    with FakeServer() as srv:
        with Cassette(path, mode="record") as cas:
            agent = as_agent(OpenAI("gpt-x", url=srv.openai_url, **FAST), tools=TOOLS, system_prompt="s", cache=cas)
            agent("get order A1")
            OpenAI("gpt-x", api_key=SECRET + "2", url=srv.openai_url, **FAST).complete(
                [{"role": "user", "content": "z"}], cache=cas)
        assert srv.requests[-1]["headers"]["authorization"].endswith(SECRET + "2")
    text = path.read_text()
    assert SECRET not in text and "authorization" not in text.lower()
    assert json.loads(text.splitlines()[0])["request"]["model"] == "openai:gpt-x"
    assert SECRET not in repr(cas)


def test_configured_cassette_is_used_and_cache_false_turns_it_off(tmp_path):
    path = tmp_path / "cfg.jsonl"
    with FakeServer() as srv:
        backend = Endpoint("m", url=srv.openai_url, **FAST)
        cas = Cassette(path, mode="auto")
        config.configure(cache=cas)
        as_agent(backend, tools=TOOLS, system_prompt=None)("get order A1")
        as_agent(backend, tools=TOOLS, system_prompt=None)("get order A1")
        assert srv.count == 2 and cas.hits == 2  # the second rollout replayed both turns
        as_agent(backend, tools=TOOLS, system_prompt=None, cache=False)("get order A1")
        assert srv.count == 4


def test_url_change_keeps_recordings(tmp_path):
    path = tmp_path / "port.jsonl"
    with FakeServer() as a, Cassette(path, mode="record") as cas:
        Endpoint("m", url=a.openai_url, **FAST).complete([{"role": "user", "content": "p"}], cache=cas)
    with FakeServer() as b:
        hit = Endpoint("m", url=b.openai_url, **FAST).complete([{"role": "user", "content": "p"}],
                                                                cache=Cassette(path, mode="replay"))
        assert hit.cached and b.count == 0


def test_bad_cassette_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="--wai-record"):
        Cassette(tmp_path / "none.jsonl", mode="replay")
    with pytest.raises(ValueError, match=r"mode= must be one of \['record', 'replay', 'auto'\]"):
        Cassette(tmp_path / "x.jsonl", mode="play")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "a", "request": {}, "response": {}}\nnot json\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not a cassette entry"):
        Cassette(bad, mode="auto")
    with pytest.raises(TypeError, match="cache= takes a whileai Cassette"):
        config.configure(cache="path.jsonl")


def test_a_replay_miss_inside_simulate_stops_the_run_loudly(tmp_path):
    path = tmp_path / "sim.jsonl"
    with FakeServer() as srv:
        backend = Endpoint("m", url=srv.openai_url, **FAST)
        with Cassette(path, mode="record") as cas:
            run(backend, cas, system_prompt="Old policy.")
        recorded_calls = srv.count
        with pytest.raises(CassetteMiss, match="New policy."):
            run(backend, Cassette(path, mode="replay"), system_prompt="New policy.")
        assert srv.count == recorded_calls == 16  # 8 rollouts x 2 calls; the replay never went live

