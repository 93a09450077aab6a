"""The rollout engine: async agents awaited, O(1) completion handling, output= streaming and resume, deadlines."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import shop

import whileai as wai
from whileai_core.models.aio import async_call
from whileai_core.simulate.engine import Engine
from whileai_core.simulate.situations import Scenario

ROOT = Path(__file__).resolve().parents[2]


def _lines(path):
    return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines()]


def test_async_agent_is_awaited_not_recorded_as_a_coroutine():
    seen = []

    async def agent(message):
        await asyncio.sleep(0)
        seen.append(message.rollout_index)
        return {"steps": [], "final_text": f"async {message.rollout_index}"}

    data = wai.simulate(agent, tools=[shop.ping], repeats=2, budget=8, concurrency=4, progress=False)
    assert [r["status"] for r in data.rows] == ["ok"] * 8
    assert [r["final_text"] for r in data.rows] == [f"async {i % 2}" for i in range(8)]
    assert sorted(seen) == [0] * 4 + [1] * 4


def test_async_agent_errors_are_rows():
    async def agent(message):
        raise RuntimeError("tool exploded with Authorization: Bearer sk-live-0123456789")

    data = wai.simulate(agent, tools=[shop.ping], repeats=1, budget=3, progress=False)
    assert {r["status"] for r in data.rows} == {"agent_error"}
    assert all("sk-live" not in r["error"] and "Bearer <redacted>" in r["error"] for r in data.rows)


def test_simulate_works_inside_a_running_event_loop():
    async def notebook_cell():  # what a Jupyter cell is: code running on a loop that calls simulate()
        return wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=2, budget=6, progress=False)

    data = asyncio.run(notebook_cell())
    plain = wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=2, budget=6, progress=False)
    assert [r["final_text"] for r in data.rows] == [r["final_text"] for r in plain.rows]


def test_async_call_detection():
    async def a(m):
        return "x"

    class Acall:
        def __call__(self, m):
            return "x"

        async def acall(self, m):
            return "x"

    assert async_call(a) is a
    assert async_call(lambda m: "x") is None
    obj = Acall()
    assert async_call(obj) == obj.acall


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_each_finished_rollout_is_handled_once_with_no_scan_over_pending_work(kind, monkeypatch):
    """O(1) per rollout: one hand-off per finished row, and no wait() over the set of pending futures."""
    import concurrent.futures

    calls = collections.Counter()
    real_wait = asyncio.wait

    def counting_wait(*a, **kw):
        calls["futures.wait"] += 1
        raise AssertionError("the engine must not scan pending futures")

    async def counting_async_wait(*a, **kw):
        calls["asyncio.wait"] += 1
        return await real_wait(*a, **kw)

    monkeypatch.setattr(concurrent.futures, "wait", counting_wait)
    monkeypatch.setattr(asyncio, "wait", counting_async_wait)

    def sync_agent(m):
        return "ok."

    async def async_agent(m):
        return "ok."

    scen = [Scenario(f"task {i}") for i in range(150)]
    engine = Engine(sync_agent if kind == "sync" else async_agent, scen, seed=0, concurrency=16, run_id="r")
    jobs = [(si, ri) for si in range(150) for ri in range(4)]
    rows = list(engine.rows(jobs))
    assert len(rows) == len(jobs) == engine.handed == engine.started == engine.finished
    assert sorted(r["row_id"] for r in rows) == sorted(f"{scen[si].task_id}#{ri}" for si, ri in jobs)
    seen = collections.Counter()
    engine.run(jobs, lambda si, ri, row: seen.update([(si, ri, row["row_id"] == f"{scen[si].task_id}#{ri}")]))
    assert seen == collections.Counter({(si, ri, True): 1 for si, ri in jobs})  # each once, with its own key
    assert calls == collections.Counter()


def test_output_streams_rows_and_reads_them_back_lazily(tmp_path):
    path = tmp_path / "rows.jsonl"
    data = wai.simulate(wai.seeded_agent(shop.TOOLS), tools=shop.TOOLS, repeats=2, budget=20, output=path,
                        progress=False)
    in_memory = wai.simulate(wai.seeded_agent(shop.TOOLS), tools=shop.TOOLS, repeats=2, budget=20, progress=False)
    assert data._store is not None and len(data) == 20  # nothing read back yet
    streamed = list(data)  # iterating streams from the file
    assert [r["row_id"] for r in streamed] == [r["row_id"] for r in in_memory.rows]
    strip = ("latency_s", "privileged")
    assert [{k: v for k, v in r.items() if k not in strip} for r in data.rows] == \
        [{k: v for k, v in r.items() if k not in strip} for r in in_memory.rows]
    assert len(_lines(path)) == 20 and all("privileged" not in r for r in _lines(path))


def test_output_and_checkpoint_are_one_argument(tmp_path):
    with pytest.raises(ValueError, match="output= or checkpoint="):
        wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=2,
                     output=tmp_path / "a.jsonl", checkpoint=tmp_path / "b.jsonl")


_KILLED_RUN = textwrap.dedent("""
    import itertools, sys, time
    sys.path.insert(0, {tests!r})
    import shop, whileai as wai

    started = itertools.count()

    def agent(message):
        if next(started) >= 60:  # the later rollouts hang: the kill lands mid-run however slow the box is
            time.sleep(600)
        time.sleep(0.01)
        return "ok."

    wai.simulate(agent, tools=shop.TOOLS, repeats=3, budget=120, concurrency=4, output={path!r}, progress=False)
    print("FINISHED")
""")


def test_resume_after_the_process_is_killed_mid_run(tmp_path):
    path = tmp_path / "rows.jsonl"
    script = _KILLED_RUN.format(tests=str(ROOT / "tests"), path=str(path))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not path.exists() or len(path.read_bytes().splitlines()) < 30):
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    written = _lines(path)
    assert 30 <= len(written) <= 60, "the run was killed mid-way"
    calls = []

    def agent(message):
        calls.append(message)
        return "ok."

    with pytest.warns(UserWarning, match=f"already holds {len(written)} rows of this run: resumed"):
        data = wai.simulate(agent, tools=shop.TOOLS, repeats=3, budget=120, concurrency=4, output=path,
                            progress=False)
    rows = _lines(path)
    assert len(calls) == 120 - len(written)  # only the missing rollouts ran
    assert len(rows) == len(data) == 120
    assert len({r["row_id"] for r in rows}) == 120  # no duplicate row ids
    per_task = collections.Counter(r["task_id"] for r in rows)
    assert set(per_task.values()) == {3} and len(per_task) == 40
    assert {r["lineage"]["run_id"] for r in rows} == {data.run_id}
    assert sum(bool(r["lineage"].get("resumed")) for r in rows) == 120 - len(written)


def test_a_torn_last_line_is_cut_off_and_rerun(tmp_path):
    path = tmp_path / "rows.jsonl"
    wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=4, output=path, progress=False)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) - 40], encoding="utf-8")  # the last row half-written
    with pytest.warns(UserWarning, match="torn line"), pytest.warns(UserWarning, match="resumed"):
        data = wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=4, output=path,
                            progress=False)
    assert len(data) == 4 and len(_lines(path)) == 4


def test_time_budget_stops_new_rollouts_keeps_rows_and_a_rerun_finishes(tmp_path):
    path = tmp_path / "rows.jsonl"

    def slow(message):
        time.sleep(0.05)
        return "ok."

    # 200 rollouts of >= 0.05 s on 2 lanes need >= 5 s: a 1 s budget always cuts them, and leaves a loaded box
    # time to start the first rollouts after the deadline is set (0.3 s could pass before any started)
    with pytest.warns(UserWarning, match="time budget ran out"):
        cut = wai.simulate(slow, tools=shop.TOOLS, repeats=2, budget=200, concurrency=2, time_budget=1.0,
                           output=path, progress=False)
    assert cut.stopped_because == "time_budget"
    assert 0 < len(cut) < 200 and len(_lines(path)) == len(cut)
    with pytest.warns(UserWarning, match=f"already holds {len(cut)} rows of this run: resumed"):
        rest = wai.simulate(lambda m: "ok.", tools=shop.TOOLS, repeats=2, budget=200, concurrency=8, output=path,
                            progress=False)
    assert len(rest) == 200 and len({r["row_id"] for r in _lines(path)}) == 200


def test_until_takes_a_datetime_or_the_sdk_rule_names():
    import datetime

    past = datetime.datetime.now() - datetime.timedelta(seconds=1)
    with pytest.warns(UserWarning, match="time budget ran out"):
        data = wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=5, until=past)
    assert len(data) == 0 and data.stopped_because == "time_budget"
    assert len(wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=5,
                            until="compute")) == 5
    with pytest.raises(ValueError, match="until= takes a datetime"):
        wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=5, until="tomorrow")
    with pytest.raises(TypeError, match="time_budget= takes seconds"):
        wai.simulate(wai.seeded_agent([shop.ping]), tools=[shop.ping], repeats=1, budget=5, time_budget="1m")


def test_gc_runs_less_often_during_a_run_and_is_put_back_after():
    import gc

    from whileai_core.simulate.engine import relaxed_gc

    seen = []

    def agent(scenario):
        seen.append(gc.get_threshold()[0])
        return "ok"

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        wai.simulate(agent, tools=[shop.get_order], asks=["Where is order A1001?"], repeats=2, budget=2,
                     concurrency=2, progress=False)
        assert seen == [20_000, 20_000] and gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(50_000, 10, 10)  # a process that already collects less often keeps its setting
        with relaxed_gc(20_000):
            assert gc.get_threshold() == (50_000, 10, 10)
        gc.disable()
        with relaxed_gc(20_000):
            assert gc.get_threshold() == (50_000, 10, 10) and not gc.isenabled()
    finally:
        gc.enable()
        gc.set_threshold(*before)


def test_the_same_seeded_run_gives_the_same_rows_on_either_event_loop(srv, monkeypatch):
    pytest.importorskip("uvloop")
    agent = wai.Endpoint("m", url=srv.openai_url, max_attempts=1)
    rows = {}
    for loop in ("uvloop", "asyncio"):
        monkeypatch.setenv("WHILEAI_EVENT_LOOP", loop)
        data = wai.simulate(agent, tools=[shop.get_order], asks=[f"Where is order A10{i:02d}?" for i in range(6)],
                            repeats=2, budget=12, concurrency=4, cache=False, progress=False, seed=3)
        rows[loop] = [{k: v for k, v in r.items() if k != "latency_s"} for r in data]
        for r in rows[loop]:  # the fake server counts input tokens from call ids that carry its request counter,
            r["agent_extra"]["usage"].pop("input_tokens")  # so they follow the order requests arrived in
    assert [r["status"] for r in rows["uvloop"]] == ["ok"] * 12
    assert len({r["lineage"]["run_id"] for r in rows["uvloop"]}) == 1
    assert rows["uvloop"] == rows["asyncio"]
