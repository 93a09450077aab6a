"""simulate and grade on a Ray cluster (executor="ray") give the local run's rows; a killed shard is retried once.

One local Ray instance serves the whole module: started by the fixture on 127.0.0.1 with 2 CPUs, shut down
after. Rows are compared whole, after dropping only the wall-clock fields: ``latency_s`` (a rollout's time)
and, for CodeExec, ``judge_meta.wall_s`` (the sandbox's time) and ``judge_meta.isolation.uid`` (a uid the
sandbox draws for each program: it differs between two local runs too).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from shop import TOOLS, not_seeded

import whileai as wai
from whileai_core.grade.verify.code import CodeExec

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def processes_under(folder: str) -> list[int]:
    """The live processes whose command line names ``folder`` (Ray's own: GCS, raylet, workers)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and folder in (proc / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(proc.name))
        except OSError:  # gone while we looked
            continue
    return found


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """A local Ray on 127.0.0.1 whose workers import whileai from this checkout and this test module by name;
    after the module, no process of it is left."""
    path = os.pathsep.join([str(REPO), str(REPO / "tests"), str(HERE)])
    temp = tempfile.mkdtemp(prefix="wai-ray-")  # short: Ray's socket paths live under it
    ray.init(num_cpus=2, address="local", include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, _temp_dir=temp, runtime_env={"env_vars": {"PYTHONPATH": path}})
    assert processes_under(temp)
    yield
    ray.shutdown()
    wai.configure(executor=None)
    deadline = time.monotonic() + 60  # a wait, not a verdict on speed: a loaded box reaps slower
    while processes_under(temp) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_under(temp) == [], "ray.shutdown() left processes behind"
    shutil.rmtree(temp, ignore_errors=True)


def wall_free(rows):
    out = []
    for r in rows:
        r = {k: v for k, v in r.items() if k != "latency_s"}
        if isinstance(r.get("judge_meta"), dict):
            r["judge_meta"] = {k: v for k, v in r["judge_meta"].items() if k != "wall_s"}
            if isinstance(r["judge_meta"].get("isolation"), dict):
                r["judge_meta"]["isolation"] = {k: v for k, v in r["judge_meta"]["isolation"].items() if k != "uid"}
        out.append(r)
    return out


SEEDED = wai.seeded_agent(TOOLS, seed=5, share=0.3)


def module_agent(message):
    """A user's agent defined at module level: shipped to the workers by name."""
    return {"steps": [], "final_text": f"echo {message} / {getattr(message, 'rollout_index', '?')}"}


def test_simulate_on_ray_gives_the_rows_of_the_local_run():
    args = {"tools": TOOLS, "situations": 10, "repeats": 3, "seed": 5}
    local = wai.simulate(SEEDED, **args)
    remote = wai.simulate(SEEDED, executor="ray", **args)
    assert len(remote.rows) == 30
    assert wall_free(remote.rows) == wall_free(local.rows)
    assert remote.run_id == local.run_id and sum(r["seeded"] for r in remote.rows) == 9  # round(0.3 * 30)
    assert remote.coverage == local.coverage and remote.stopped_because == local.stopped_because


def test_closure_and_module_level_agents_and_the_dynamic_policy_ship_to_the_workers():
    suffix = "from a closure"

    def closure_agent(message):
        return {"steps": [], "final_text": f"{message} {suffix}", "seeded": False}

    for agent in (closure_agent, module_agent):
        args = {"tools": TOOLS, "situations": 6, "repeats": 2, "seed": 1}
        assert wall_free(wai.simulate(agent, executor="ray", **args).rows) == wall_free(wai.simulate(agent, **args).rows)
    args = {"tools": TOOLS, "situations": 8, "repeats": 4, "seed": 2, "repeat_policy": "dynamic", "judge": not_seeded}
    local, remote = wai.simulate(SEEDED, **args), wai.simulate(SEEDED, executor="ray", **args)
    assert wall_free(remote.rows) == wall_free(local.rows)
    assert remote.notes[-1] == local.notes[-1] and "dynamic sampling" in remote.notes[-1]


def test_configure_routes_to_ray_and_rows_stream_to_the_checkpoint(tmp_path):
    out = tmp_path / "rows.jsonl"
    wai.configure(executor="ray")
    try:
        remote = wai.simulate(SEEDED, tools=TOOLS, situations=5, repeats=2, seed=9, checkpoint=out)
    finally:
        wai.configure(executor=None)
    # the local run with its own output= file: rows read back from the file have their privileged block scrubbed
    local = wai.simulate(SEEDED, tools=TOOLS, situations=5, repeats=2, seed=9, output=tmp_path / "local.jsonl")
    assert wall_free(remote.rows) == wall_free(local.rows)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["row_id"] for r in written) == sorted(r["row_id"] for r in local.rows)


class DiesOnce:
    """An agent whose worker process dies (os._exit) on its first call anywhere, keyed by a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker
        self.__name__ = "dies_once"

    def __call__(self, message):
        if not self.marker.exists():
            self.marker.write_text("died")
            os._exit(1)
        return SEEDED(message)


def test_a_shard_whose_worker_dies_is_played_again_and_no_row_is_lost_or_doubled(tmp_path):
    out = tmp_path / "rows.jsonl"
    args = {"tools": TOOLS, "situations": 8, "repeats": 2, "seed": 4}
    with pytest.warns(UserWarning, match="played again after their worker died"):
        remote = wai.simulate(DiesOnce(tmp_path / "marker"), executor="ray", checkpoint=out, **args)
    assert (tmp_path / "marker").read_text() == "died"
    local = wai.simulate(SEEDED, output=tmp_path / "local.jsonl", **args)
    ids = [r["row_id"] for r in remote.rows]
    assert len(ids) == len(set(ids)) == 16
    strip = [{**r, "lineage": {**r["lineage"], "agent": None}} for r in wall_free(remote.rows)]
    assert strip == [{**r, "lineage": {**r["lineage"], "agent": None}} for r in wall_free(local.rows)]
    written = [json.loads(line)["row_id"] for line in out.read_text().splitlines()]
    assert sorted(written) == sorted(ids)  # the dead try wrote nothing; the retry wrote each row once


def test_grade_on_ray_gives_the_same_verdicts_in_the_same_order():
    data = wai.simulate(SEEDED, tools=TOOLS, situations=10, repeats=3, seed=5)
    local, remote = data.grade(not_seeded), data.grade(not_seeded, executor="ray", concurrency=2)
    assert [r["reward"] for r in remote.rows] == [r["reward"] for r in local.rows]
    assert wall_free(remote.rows) == [{**r, "lineage": {**r["lineage"], "scoring_run_id": remote.scoring_run_id}}
                                      for r in wall_free(local.rows)]  # a scoring run's id is new on every call


def test_codeexec_fans_out_through_ray_grading():
    answers = ["def add(a, b):\n    return a + b", "def add(a, b):\n    return a - b", "import sys\nsys.exit(0)"]
    rows = [{"row_id": f"r{i}", "task_id": f"t{i % 3}", "rollout_index": i // 3, "prompt": "add",
             "final_text": f"```python\n{answers[i % 3]}\n```", "status": "ok"} for i in range(6)]
    judge = CodeExec(tests="assert add(2, 3) == 5", timeout=10)
    local = wai.run_judge(rows, judge)
    remote = wai.run_judge(rows, judge, executor="ray")
    assert [r["reward"] for r in remote.rows] == [1, 0, 0, 1, 0, 0]
    strip = lambda s: [{k: v for k, v in r.items() if k != "lineage"} for r in wall_free(s.rows)]
    assert strip(remote) == strip(local)


def test_a_judge_error_on_ray_keeps_the_rows_graded_before_it():
    data = wai.simulate(SEEDED, tools=TOOLS, situations=6, repeats=2, seed=5)
    bad = data.rows[7]["row_id"]

    def judge(row):
        return 7 if row["row_id"] == bad else 1

    with pytest.raises(wai.JudgeError, match="outside") as local:
        data.grade(judge, on_error="raise")
    with pytest.raises(wai.JudgeError, match="outside") as remote:
        data.grade(judge, on_error="raise", executor="ray")
    assert [r["row_id"] for r in remote.value.partial] == [r["row_id"] for r in local.value.partial]
    assert len(remote.value.partial) == 7


def test_what_cannot_travel_to_the_workers_is_refused_by_name():
    lock = __import__("threading").Lock()
    with pytest.raises(TypeError, match="agent= cannot be sent to the Ray workers.*model string"):
        wai.simulate(lambda message, _lock=lock: "hi", tools=TOOLS, situations=2, repeats=1, executor="ray")
    data = wai.simulate(SEEDED, tools=TOOLS, situations=2, repeats=1)
    lock = __import__("threading").Lock()
    with pytest.raises(TypeError, match="judge= cannot be sent"):
        data.grade(lambda row, _lock=lock: 1, executor="ray")


def test_a_rerun_on_ray_resumes_the_output_file_and_plays_only_the_missing_rollouts(tmp_path):
    out = tmp_path / "rows.jsonl"
    args = {"tools": TOOLS, "situations": 6, "repeats": 2, "seed": 3}
    whole = wai.simulate(SEEDED, output=tmp_path / "whole.jsonl", **args)
    lines = (tmp_path / "whole.jsonl").read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:5]))  # a run cut short after 5 of its 12 rollouts
    calls = tmp_path / "calls"

    def counting(message):
        with calls.open("a") as fh:  # each worker appends one line per rollout it plays
            fh.write(f"{message.task_id}#{message.rollout_index}\n")
        return SEEDED(message)

    with pytest.warns(UserWarning, match="already holds 5 rows of this run: resumed"):
        resumed = wai.simulate(counting, executor="ray", output=out, **args)
    played = calls.read_text().split()
    assert len(played) == len(set(played)) == 7  # only the missing rollouts ran, each once
    assert not set(played) & {json.loads(line)["row_id"] for line in lines[:5]}
    strip = [{**r, "lineage": {**r["lineage"], "agent": None, "resumed": None}} for r in wall_free(resumed.rows)]
    assert strip == [{**r, "lineage": {**r["lineage"], "agent": None, "resumed": None}} for r in wall_free(whole.rows)]
    written = [json.loads(line)["row_id"] for line in out.read_text().splitlines()]
    assert sorted(written) == sorted(r["row_id"] for r in whole.rows)  # 12 rows, none doubled


def slow_agent(message):
    """0.3 s per rollout: a run of 16 cannot finish in a 1 s time budget on 2 CPUs."""
    time.sleep(0.3)
    return SEEDED(message)


def test_time_budget_reaches_the_workers_and_keeps_the_finished_rows():
    with pytest.warns(UserWarning, match="the time budget ran out"):
        data = wai.simulate(slow_agent, tools=TOOLS, situations=8, repeats=2, seed=6, concurrency=1,
                            executor="ray", time_budget=1.0)
    assert data.stopped_because == "time_budget"
    assert len(data.rows) < 16 and all(r["status"] == "ok" for r in data.rows)
    ids = [r["row_id"] for r in data.rows]
    assert len(ids) == len(set(ids))


def test_inline_grade_on_ray_gives_the_local_verdicts():
    args = {"tools": TOOLS, "situations": 4, "repeats": 2, "seed": 8, "grade": not_seeded}
    local, remote = wai.simulate(SEEDED, **args), wai.simulate(SEEDED, executor="ray", **args)
    assert [r["reward"] for r in remote.rows] == [r["reward"] for r in local.rows]
    assert sum(r["reward"] == 0 for r in remote.rows) == 2  # round(0.3 * 8) spoiled rollouts fail the judge


def test_runs_and_execute_on_ray_give_the_local_rows():
    args = {"tools": TOOLS, "situations": 3, "repeats": 2, "seed": 2, "runs": 2, "execute": True}
    local, remote = wai.simulate(SEEDED, **args), wai.simulate(SEEDED, executor="ray", **args)
    assert len(remote.rows) == 12 and {r["lineage"]["eval_run"] for r in remote.rows} == {0, 1}
    assert wall_free(remote.rows) == wall_free(local.rows)


def test_a_cassette_replays_whole_rollouts_on_the_caller_and_ships_only_the_rest(tmp_path):
    """Whole rollouts kept in the cassette become rows before the jobs are sharded; the misses are played on
    the workers (each opens the cassette path itself), and the rows are the local run's."""
    from fakeserver import FakeServer

    ray_file, local_file = tmp_path / "ray.jsonl", tmp_path / "local.jsonl"
    args = {"tools": TOOLS, "repeats": 2, "seed": 4, "system_prompt": "You help with orders."}
    with FakeServer() as srv:
        agent = f"vllm:m@{srv.openai_url}"  # a spec travels; a backend object would not
        wai.simulate(agent, cache=str(ray_file), budget=8, **args)  # a path is an auto-mode cassette: records
        shutil.copy(ray_file, local_file)
        remote = wai.simulate(agent, cache=str(ray_file), budget=16, executor="ray", **args)
        local = wai.simulate(agent, cache=str(local_file), budget=16, **args)
    whole = [r["row_id"] for r in remote.rows if r["lineage"].get("replayed") == "rollout"]
    assert 0 < len(whole) < 16 and whole == [r["row_id"] for r in local.rows if r["lineage"].get("replayed")]
    assert wall_free(remote.rows) == wall_free(local.rows)
    assert all(r["status"] == "ok" for r in remote.rows)


def test_the_runs_concurrency_caps_requests_in_flight_across_every_shard():
    """concurrency=8 on a 2-CPU cluster: the model server never answers more than 8 requests at once (each
    running shard plays with its slot of the 8, not with 8 of its own: issue 34 measured 64 for 32)."""
    from fakeserver import FakeServer

    with FakeServer(latency_s=0.05) as srv:
        data = wai.simulate(f"vllm:m@{srv.openai_url}", tools=TOOLS, situations=24, repeats=2, seed=3,
                            concurrency=8, executor="ray")
        peak = srv.peak_in_flight
    assert len(data.rows) == 48 and all(r["status"] == "ok" for r in data.rows)
    assert 2 <= peak <= 8, peak


def test_an_endpoint_object_names_the_model_of_a_run_on_ray():
    """A ``wai.Endpoint`` (a lock and a breaker inside) travels to the workers, which build their own; the rows
    are the local run's."""
    from fakeserver import FakeServer

    args = {"tools": TOOLS, "situations": 6, "repeats": 2, "seed": 4, "concurrency": 4}
    with FakeServer() as srv:
        model = wai.Endpoint("m", url=srv.openai_url)
        remote = wai.simulate(model, executor="ray", **args)
        local = wai.simulate(model, **args)
    assert len(remote.rows) == 12 and all(r["status"] == "ok" for r in remote.rows)
    assert order_free(remote.rows) == order_free(local.rows)


def order_free(rows):
    """The rows without wall times and without the fake server's input-token count: that count is the length of
    the request's JSON, which holds call ids numbered by the server's global request counter (``call_9_0`` vs
    ``call_10_0``), so it moves by a token with the order in which concurrent rollouts reach the server."""
    out = wall_free(rows)
    for r in out:
        usage = (r.get("agent_extra") or {}).get("usage")
        if isinstance(usage, dict):
            r["agent_extra"] = {**r["agent_extra"], "usage": {k: v for k, v in usage.items() if k != "input_tokens"}}
    return out
