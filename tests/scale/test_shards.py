"""The executor choice, the deterministic cut into shards and the ledger that keeps each shard's result once.
None of this needs Ray; what does is in test_scale_ray.py."""

from __future__ import annotations

import sys

import pytest

import whileai as wai
from whileai_core import defaults as D
from whileai_core.scale.executor import Executor, resolve
from whileai_core.scale.ray_backend import import_ray
from whileai_core.scale.shards import Ledger, shard_count, split


@pytest.mark.parametrize("n, k", [(0, 1), (1, 1), (5, 2), (7, 3), (10, 10), (3, 8), (1000, 8)])
def test_split_covers_every_item_once_in_order_with_sizes_one_apart(n, k):
    pieces = split(n, k)
    assert [i for p in pieces for i in p] == list(range(n))
    assert len(pieces) == max(1, min(n, k))
    sizes = [len(p) for p in pieces]
    assert max(sizes) - min(sizes) <= 1 and split(n, k) == pieces


def test_shard_count_is_shards_per_cpu_capped_by_the_items():
    assert shard_count(1000, 2) == 2 * D.SHARDS_PER_CPU
    assert shard_count(3, 16) == 3 and shard_count(0, 4) == 1
    with pytest.raises(wai.InvalidArgument, match="cpus"):
        shard_count(10, 0)


def test_the_ledger_keeps_the_first_result_and_stops_after_the_retries():
    ledger = Ledger(2, retries=1)
    assert ledger.start(0) == 1 and ledger.start(1) == 1
    assert ledger.start(0, "WorkerCrashedError: killed") == 2
    assert ledger.accept(0, ["a"]) and not ledger.accept(0, ["a", "again"])
    assert ledger.results[0] == ["a"] and ledger.retried == 1 and not ledger.done
    ledger.start(1, "node died")
    with pytest.raises(wai.ScaleError, match="shard 1 failed on all 2 tries.*1 of 2 shards finished"):
        ledger.start(1, "node died again")
    assert ledger.failures == ["shard 0, try 1: WorkerCrashedError: killed", "shard 1, try 1: node died",
                               "shard 1, try 2: node died again"]
    ledger.accept(1, ["b"])
    assert ledger.done and ledger.in_order() == [["a"], ["b"]]


def test_the_executor_comes_from_the_call_then_context_then_configure():
    assert resolve() == Executor("local") and resolve("threads") == Executor("local")
    assert resolve("ray", "ray://head:10001") == Executor("ray", "ray://head:10001")
    assert resolve("local", "ray://head:10001").address is None
    wai.configure(executor="ray", ray_address="ray://a:10001")
    try:
        assert resolve() == Executor("ray", "ray://a:10001") and wai.settings.source("executor") == "configure"
        with wai.context(executor="local"):
            assert not resolve().remote
        assert resolve(ray_address="auto").address == "auto"
    finally:
        wai.configure(executor=None, ray_address=None)
    assert resolve() == Executor("local")


def test_a_bad_executor_is_refused_before_anything_runs():
    with pytest.raises(wai.InvalidArgument, match="executor= must be one of 'local', 'threads', 'ray'; got 'dask'"):
        wai.simulate(lambda m: "x", asks=["hi"], repeats=1, executor="dask")
    with pytest.raises(wai.InvalidArgument, match="executor="):
        wai.configure(executor="gpu")
    with pytest.raises(TypeError, match="ray_address="):
        wai.configure(ray_address=10001)
    with pytest.raises(TypeError, match="did you mean executor="):
        wai.simulate(lambda m: "x", asks=["hi"], repeats=1, executors="ray")  # (executer= is closer to execute=)


def test_without_ray_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without the extra looks like
    with pytest.raises(wai.ScaleError, match=r"pip install 'pytest-whileai\[ray\]'"):
        import_ray()
    with pytest.raises(RuntimeError, match="needs Ray"):
        wai.run_judge([{"task_id": "a", "final_text": "x"}], lambda r: 1, executor="ray")


def test_in_plan_shows_the_whole_runs_plan_to_sync_and_async_agents():
    import asyncio

    from whileai_core.simulate.world import RUN_PLAN, in_plan

    plan = (("a", 0), ("b", 0))

    def sync_agent(message):
        return RUN_PLAN.get()

    class AsyncAgent:
        async def __call__(self, message):
            return RUN_PLAN.get()

    token = RUN_PLAN.set((("shard-only", 0),))
    try:
        wrapped = in_plan(sync_agent, plan)
        assert wrapped("hi") == plan and wrapped.__name__ == "sync_agent"
        awrapped = in_plan(AsyncAgent(), plan)
        assert asyncio.run(awrapped("hi")) == plan and awrapped.__name__ == "AsyncAgent"
        assert RUN_PLAN.get() == (("shard-only", 0),)  # put back after each call
    finally:
        RUN_PLAN.reset(token)
