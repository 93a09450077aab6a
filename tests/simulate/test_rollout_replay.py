"""Whole-rollout replay: a cassette keeps each model-agent rollout whole, and a replay rebuilds its row without
playing it; the row is the one a call-by-call replay of the same cassette gives (but its latency and the
``lineage.replayed`` mark), and anything that decides the rollout changing makes it miss."""

from __future__ import annotations

import json

import pytest
import shop
from fakeserver import FakeServer, default_reply

from whileai_core.errors import CassetteMiss
from whileai_core.models.cache import Cassette
from whileai_core.models.endpoint import Endpoint
from whileai_core.simulate.model_agent import as_agent, situation_key
from whileai_core.simulate.rollout import replayed, rollout
from whileai_core.simulate.run import simulate
from whileai_core.simulate.situations import Scenario
from whileai_core.simulate.world import World

FAST = {"backoff_s": 0.001, "backoff_cap_s": 0.002, "timeout": 2.0, "max_attempts": 1}
DEAD = "http://127.0.0.1:9/v1"  # nothing listens there: a replay that reached the network would fail
PROMPT = "You help with orders."


TOOLS = [shop.get_order, shop.cancel_order]

pytestmark = pytest.mark.usefixtures("clean_config")  # tests/conftest.py: no configured model leaks in


def asking_responder():
    """Every reply differs (a count in it), the agent's text replies end in a question (so the simulated
    user answers), and the user model ("u") answers in words."""
    n = {"i": 0}

    def reply(request, protocol):
        n["i"] += 1
        if request.get("model") == "u":
            return {"text": f"No, that is all #{n['i']}"}
        base = default_reply(request, protocol)
        if "text" in base:
            base["text"] += f" #{n['i']} Anything else?"
        return base

    return reply


def agent(url, cache, **kw):
    kw.setdefault("system_prompt", PROMPT)
    return as_agent(Endpoint("m", url=url, **FAST), tools=kw.pop("tools", TOOLS), cache=cache,
                    user_model=Endpoint("u", url=url, **FAST), **kw)


def run(url, cache, *, budget=12, **kw):
    return simulate(agent(url, cache, **kw), tools=kw.get("tools", TOOLS), system_prompt=PROMPT, simulator=False,
                    budget=budget, repeats=2, concurrency=4, progress=False, seed=7)


def calls_only(src, dst):
    """A copy of the cassette without its whole rollouts: what a cassette recorded before them holds."""
    dst.write_text("".join(line for line in src.read_text().splitlines(keepends=True)
                           if not line.startswith('{"rollout"')))
    return dst


def same(row):
    """A row without what may differ between two replays of one rollout: its latency and the replay mark."""
    row = {k: v for k, v in row.items() if k != "latency_s"}
    row["lineage"] = {k: v for k, v in row["lineage"].items() if k != "replayed"}
    return row


def as_replayed(row):
    """A live row as its replay gives it: every call cached, no retries."""
    row = same(row)
    usage = row["agent_extra"]["usage"]
    row["agent_extra"] = {**row["agent_extra"], "usage": {**usage, "cached_calls": usage["calls"], "retries": 0}}
    return row


@pytest.fixture
def recorded(tmp_path):
    """A cassette recorded live (rows, path): the server is stopped when the test starts."""
    path = tmp_path / "agent.jsonl"
    with FakeServer(responder=asking_responder()) as srv, Cassette(path, mode="record") as cas:
        live = run(srv.openai_url, cas)
    assert cas.rollouts_recorded == len(live) == 12 and cas.recorded > 2 * len(live)  # the user answered too
    return live.rows, path


def test_whole_rollout_rows_equal_call_by_call_replay_rows(recorded, tmp_path):
    live, path = recorded
    with Cassette(path, mode="replay") as whole:
        fast = run(DEAD, whole).rows
    with Cassette(calls_only(path, tmp_path / "calls.jsonl"), mode="replay") as calls:
        slow = run(DEAD, calls).rows
    assert whole.rollout_hits == len(fast) == 12 and calls.rollout_hits == 0
    assert whole.hits == calls.hits == calls.to_dict()["recordings"]  # a whole rollout counts its calls as hits
    assert [same(r) for r in fast] == [same(r) for r in slow]
    assert all(r["lineage"]["replayed"] == "rollout" for r in fast)
    assert not any("replayed" in r["lineage"] for r in slow)
    for r, was in zip(fast, live):  # the live rows, but every call cached and no retries
        usage = r["agent_extra"]["usage"]
        assert usage["cached_calls"] == usage["calls"] == was["agent_extra"]["usage"]["calls"] >= 2
        assert r["steps"] == was["steps"] and r["messages"] == was["messages"] and r["loss_mask"] == was["loss_mask"]
    assert any(s.get("user") for r in fast for s in r["steps"])  # the simulated user's turns came back too
    # the row names the replaying agent (its URL), as a call-by-call replay does
    assert all(r["agent_extra"]["model"].endswith(f"m@{DEAD}") for r in fast)
    assert not any(r["agent_extra"]["model"].endswith(f"m@{DEAD}") for r in live)


@pytest.mark.parametrize("change", [
    {"system_prompt": "You are terse."},
    {"temperature": 0.1},
    {"tools": [shop.get_order]},  # one tool schema fewer
])
def test_a_changed_setting_misses_the_whole_rollout_and_the_call_replay_fails_loudly(recorded, change):
    _, path = recorded
    with Cassette(path, mode="replay") as cas, pytest.raises(CassetteMiss, match="What changed against the nearest"):
        run(DEAD, cas, **change)
    assert cas.rollout_hits == 0


def test_a_changed_max_turns_misses_the_whole_rollout_and_plays_it(recorded):
    live, path = recorded
    with Cassette(path, mode="replay") as cas:
        short = run(DEAD, cas, max_turns=1).rows  # every call it makes is recorded, but the rollout ends sooner
    assert cas.rollout_hits == 0 and cas.hits == len(short)
    assert all(r["finish_reason"] == "tool" and len(r["messages"]) < len(w["messages"]) for r, w in zip(short, live))


def test_auto_mode_replays_whole_rollouts_and_records_the_rest(tmp_path):
    path = tmp_path / "auto.jsonl"
    with FakeServer(responder=asking_responder()) as srv:
        with Cassette(path, mode="auto") as first:
            small = run(srv.openai_url, first, budget=8).rows
        calls = srv.count
        assert first.rollouts_recorded == 8 and first.recorded == calls
        with Cassette(path, mode="auto") as second:
            big = run(srv.openai_url, second, budget=16).rows  # more situations: some of them played before
        before = {r["row_id"]: r for r in small}  # the same situation: same task, same fault plan (n moves it)
        again = [r for r in big if r["row_id"] in before and r["faults"] == before[r["row_id"]]["faults"]]
        assert 0 < second.rollout_hits == len(again) < 16 and second.rollouts_recorded == 16 - len(again)
        assert again == [r for r in big if r["lineage"].get("replayed")] and srv.count > calls
        assert [r["steps"] for r in again] == [before[r["row_id"]]["steps"] for r in again]
        url = srv.openai_url
    with Cassette(path, mode="replay") as reread:  # the file reloads cleanly: calls and rollouts, sorted
        assert reread.to_dict()["rollouts"] == 8 + second.rollouts_recorded
        assert len(reread) == first.recorded + second.recorded
        rows = run(url, reread, budget=16).rows  # the server is stopped: its URL reaches nothing now
    assert reread.rollout_hits == 16 and [same(r) for r in rows] == [as_replayed(r) for r in big]
    lines = path.read_text().splitlines()
    kinds = [next(iter(json.loads(line))) for line in lines]
    assert kinds == sorted(kinds, key=lambda k: k == "rollout")  # the calls first, then the rollouts
    tasks = [(json.loads(line)["row"]["task_id"], json.loads(line)["row"]["rollout_index"])
             for line in lines if line.startswith('{"rollout"')]
    assert tasks == sorted(tasks)
    assert f"{8 + second.rollouts_recorded} rollouts" in repr(reread) and "rollout_hits=16" in repr(reread)


def test_an_old_cassette_without_rollouts_gets_them_in_auto_mode(recorded, tmp_path):
    _, path = recorded
    old = calls_only(path, tmp_path / "old.jsonl")
    with Cassette(old, mode="auto") as cas:
        first = run(DEAD, cas).rows  # every call hits: nothing goes live, and the rollouts are kept
    assert cas.rollout_hits == 0 and cas.recorded == 0 and cas.rollouts_recorded == 12
    with Cassette(old, mode="replay") as cas:
        again = run(DEAD, cas).rows
    assert cas.rollout_hits == 12 and [same(r) for r in again] == [same(r) for r in first]


def test_a_call_recorded_again_retires_the_rollouts_that_used_it(tmp_path):
    """Two situations that differ only in the user's stance make the same agent calls until the user speaks:
    recording the second replaces the first's answers to those calls, so the first's whole rollout no longer
    matches a call-by-call replay (which misses) and must not be replayed whole."""
    path, world = tmp_path / "shared.jsonl", World(TOOLS, seed=0)
    a = Scenario("please get order A1001", task_id="t-1", stance="polite", entity_id="A1001")
    b = Scenario("please get order A1001", task_id="t-1", stance="curt", entity_id="A1001")
    with FakeServer(responder=asking_responder()) as srv, Cassette(path, mode="record") as cas:
        first = rollout(agent(srv.openai_url, cas), a, seed=0, world=world)
        second = rollout(agent(srv.openai_url, cas), b, seed=0, world=world)
        unclosed = Cassette(path, mode="replay")  # the file as appended so far (a run that died before close)
        assert unclosed.to_dict()["rollouts"] == 2
        assert unclosed.get_rollout(unclosed_key(unclosed, a, world)) is None  # its calls were written again
        assert unclosed.get_rollout(unclosed_key(unclosed, b, world)) is not None
    assert cas.rollouts_recorded == 2 and first["steps"][1]["text"] != second["steps"][1]["text"]
    with Cassette(path, mode="replay") as cas:
        replay = agent(DEAD, cas)
        assert cas.to_dict()["rollouts"] == 1  # close() kept only the rollout whose calls are all its own
        assert replayed(replay, a, rollout_index=0, seed=0, system_prompt=None, world=world,
                        situation=situation_key(a, None)) is None
        whole = replayed(replay, b, rollout_index=0, seed=0, system_prompt=None, world=world,
                         situation=situation_key(b, None))
        with pytest.raises(CassetteMiss, match=r"#2 Anything else"):  # call by call: b's answer to the
            rollout(replay, a, seed=0, world=world)  # shared call, then a's user has no recording for it
    assert whole is not None and same(whole)["steps"] == second["steps"]


def unclosed_key(cassette, scenario, world):
    return agent(DEAD, cassette).rollout_key(situation_key(scenario, None), 0, world)


def test_a_rollout_whose_call_another_rollout_recorded_meanwhile_is_not_kept(tmp_path):
    """Two rollouts in flight make the same call: the later recording replaces the earlier, so the rollout
    that used the earlier one is not kept (its row could not come back from a call-by-call replay)."""
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [], "params": {}, "trial": 0}
    with Cassette(tmp_path / "race.jsonl", mode="auto") as cas:
        early, late = cas.tap("a" * 64), cas.tap("b" * 64)
        early.put(request, {"text": "first"})
        late.put(request, {"text": "second"})
        assert late.keep({"final_text": "second"}) and not early.keep({"final_text": "first"})
        assert cas.get_rollout("b" * 64) == {"final_text": "second"} and cas.get_rollout("a" * 64) is None
        reused = cas.tap("c" * 64)  # a hit notes the recording's version too
        assert reused.get(request) == {"text": "second"} and reused.keep({"final_text": "again"})
    assert cas.rollouts_recorded == 2


def test_execute_and_a_plain_string_are_never_kept_whole(tmp_path):
    path = tmp_path / "real.jsonl"
    with FakeServer() as srv, Cassette(path, mode="record") as cas:
        simulate(agent(srv.openai_url, cas), tools=TOOLS, simulator=False, budget=4, repeats=2,
                 progress=False, execute=True)  # real tool code could change behind the recording
        agent(srv.openai_url, cas)("get order A1")  # no world: the tools' own bodies answer
    assert cas.rollouts_recorded == 0 and cas.recorded > 0
    assert World(TOOLS, execute=lambda name, args: {}).fingerprint() is None
    assert World(TOOLS, seed=1).fingerprint() != World(TOOLS, seed=2).fingerprint()


def test_the_sync_path_keeps_and_matches_whole_rollouts(recorded, tmp_path):
    live, path = recorded
    situations = {r["task_id"]: r for r in live}
    with Cassette(path, mode="replay") as whole, \
            Cassette(calls_only(path, tmp_path / "calls.jsonl"), mode="replay") as calls:
        fast, slow = agent(DEAD, whole), agent(DEAD, calls)
        world = World(TOOLS, seed=7)
        data = run(DEAD, whole)
        for scenario in data.scenarios:
            for ri in range(2):
                one = replayed(fast, scenario, rollout_index=ri, seed=7, system_prompt=PROMPT, world=world,
                               situation=situation_key(scenario, PROMPT), run_id="r")
                played = rollout(slow, scenario, rollout_index=ri, seed=7, system_prompt=PROMPT, world=world,
                                 run_id="r")  # the synchronous agent loop, call by call
                assert one is not None and same(one) == same(played)
    assert set(situations) == {s.task_id for s in data.scenarios}
    sync = tmp_path / "sync.jsonl"  # recording through the synchronous loop keeps the rollout too
    with FakeServer(responder=asking_responder()) as srv, Cassette(sync, mode="record") as cas:
        row = rollout(agent(srv.openai_url, cas), data.scenarios[0], rollout_index=1, seed=7, system_prompt=PROMPT,
                      world=world)
    assert cas.rollouts_recorded == 1 and row["status"] == "ok"


def test_a_bad_rollout_line_is_refused_by_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"rollout": "abc", "calls": [], "row": {}}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not a cassette rollout entry"):
        Cassette(path, mode="replay")
    with Cassette(tmp_path / "w.jsonl", mode="record") as cas, pytest.raises(ValueError, match="64 hex digits"):
        cas.tap("nope")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ValueError, match="replay mode keeps no rollouts"):
        Cassette(tmp_path / "empty.jsonl", mode="replay").tap("0" * 64)


def test_a_damaged_kept_row_is_refused_by_file(recorded):
    _, path = recorded
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith('{"rollout"'))
    lines[at] = lines[at].replace('"row": {', '"row": {{', 1)
    path.write_text("".join(lines))
    with Cassette(path, mode="replay") as cas, pytest.raises(ValueError, match=r"agent.jsonl: the rollout .* not JSON"):
        run(DEAD, cas)


@pytest.mark.parametrize("knobs", [{"runs": 2}, {"repeat_policy": "dynamic", "repeats": 3}])
def test_runs_and_the_dynamic_policy_replay_the_rows_a_call_by_call_replay_gives(tmp_path, knobs):
    path = tmp_path / "knobs.jsonl"

    def go(url, cas):
        return simulate(agent(url, cas), tools=TOOLS, system_prompt=PROMPT, simulator=False, budget=12,
                        concurrency=4, progress=False, seed=3, **{"repeats": 2, **knobs}).rows

    with FakeServer(responder=asking_responder()) as srv, Cassette(path, mode="record") as cas:
        go(srv.openai_url, cas)
    with Cassette(path, mode="replay") as whole:
        fast = go(DEAD, whole)
    with Cassette(calls_only(path, tmp_path / "calls.jsonl"), mode="replay") as calls:
        slow = go(DEAD, calls)
    assert whole.rollout_hits == len(fast) > 0 and calls.rollout_hits == 0
    assert [same(r) for r in fast] == [same(r) for r in slow]


def test_an_edit_of_the_code_that_builds_rollouts_retires_the_kept_rows(recorded, tmp_path, monkeypatch):
    from whileai_core.simulate import model_agent

    _, path = recorded
    with Cassette(calls_only(path, tmp_path / "calls.jsonl"), mode="replay") as calls:
        slow = run(DEAD, calls).rows
    model_agent._code_key.cache_clear()
    before = model_agent._code_key()
    monkeypatch.setattr(model_agent, "_ROLLOUT_CODE", (*model_agent._ROLLOUT_CODE, "whileai_core.simulate.engine"))
    model_agent._code_key.cache_clear()  # as a process started after the edit reads it
    try:
        assert model_agent._code_key() != before
        with Cassette(path, mode="replay") as cas:
            rows = run(DEAD, cas).rows
    finally:
        model_agent._code_key.cache_clear()
    assert cas.rollout_hits == 0 and cas.hits == cas.to_dict()["recordings"]  # replayed call by call
    assert [same(r) for r in rows] == [same(r) for r in slow]
    assert not any("replayed" in r["lineage"] for r in rows)
