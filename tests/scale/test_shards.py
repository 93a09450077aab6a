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


def test_an_engine_rebuilt_from_its_recipe_plays_a_shard_with_the_whole_runs_rows():
    """What each Ray worker does, without Ray: the run's Engine rebuilt (Engine.recipe / Engine.rebuilt) over
    one shard's situations gives, job for job, the rows of the whole local run (the stand-in agent still spoils
    by the whole run's plan: round(0.3 * 24) = 7 rows)."""
    from shop import TOOLS

    from whileai_core.simulate.engine import Engine
    from whileai_core.simulate.world import World

    agent = wai.seeded_agent(TOOLS, seed=5, share=0.3)
    whole = wai.simulate(agent, tools=TOOLS, situations=8, repeats=3, seed=5)
    assert sum(r["seeded"] for r in whole.rows) == 7
    engine = Engine(agent, list(whole.scenarios), seed=5, concurrency=2, run_id=whole.run_id, mode="eval",
                    policy="fixed", world=World(TOOLS, seed=5), writer="template",
                    plan=tuple((x.task_id, ri) for x in whole.scenarios for ri in range(3)))
    engine.post = lambda row: {**row, "lineage": {**row["lineage"], "repeat_policy": "fixed"}}
    shard = list(whole.scenarios[3:6])  # situations 3, 4, 5 of the run, as a worker receives them
    rebuilt = Engine.rebuilt(agent, shard, World(TOOLS, seed=5), engine.recipe())
    played = {(si + 3, ri): row for si, ri, row in rebuilt.keyed([(si, ri) for si in range(3) for ri in range(3)])}
    expected = {(r["task_id"], r["rollout_index"]): r for r in whole.rows}
    assert len(played) == 9
    for (si, ri), row in played.items():
        want = expected[(whole.scenarios[si].task_id, ri)]
        assert {**row, "latency_s": None} == {**want, "latency_s": None}
