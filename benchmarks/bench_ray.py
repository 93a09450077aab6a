"""Benchmark: simulate and grade on the local pool vs on a local Ray instance (executor="ray"), side by side.

Three workloads, each run locally and on Ray in this one process, same seed, rows checked identical (after
dropping ``latency_s``) before any number is printed:

* ``seeded``: the stand-in agent (``wai.seeded_agent``), microseconds of work a rollout: Ray's per-shard cost
  (shipping the shard, rebuilding the run's engine in a worker, sending rows back) dominates;
* ``cpu``: an agent that computes in pure Python for about ``--cpu-ms`` ms a rollout: the local pool is held to
  one core by the GIL, Ray's workers are separate processes;
* ``grade``: a pure-Python judge of about ``--cpu-ms`` ms a row over the seeded run's rows.

Ray is started once (``ray.init(num_cpus=--cpus)`` on 127.0.0.1; its start-up time is printed on its own) and
warmed with one small run, so the rows/s are the steady state a long run sees. It prints rows/s for both, the
ratio Ray/local, and the machine's load average (this box is shared: a loaded machine reads slow for both).
Usage: ``python benchmarks/bench_ray.py [--situations 200] [--k 4] [--cpu-ms 2] [--cpus 2]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from shop import TOOLS

import whileai as wai


def burn(ms: float) -> int:
    """About ``ms`` milliseconds of pure-Python work (holds the GIL the whole time)."""
    end, n = time.thread_time() + ms / 1000, 0
    while time.thread_time() < end:
        n += sum(range(200))
    return n


def make_cpu_agent(ms: float):
    seeded = wai.seeded_agent(TOOLS, seed=1)

    def cpu_agent(message):
        burn(ms)
        return seeded(message)
    return cpu_agent


def make_cpu_judge(ms: float):
    def cpu_judge(row):
        burn(ms)
        return 0 if row["seeded"] else 1
    return cpu_judge


def same(a, b) -> bool:
    strip = lambda rows: [{k: v for k, v in r.items() if k not in ("latency_s", "lineage")} for r in rows]
    return strip(a) == strip(b)


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--situations", type=int, default=200)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--cpu-ms", type=float, default=2.0)
    ap.add_argument("--cpus", type=int, default=2)
    a = ap.parse_args()
    import ray

    t = time.perf_counter()
    ray.init(num_cpus=a.cpus, address="local", include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")])}})
    start_s = time.perf_counter() - t
    seeded = wai.seeded_agent(TOOLS, seed=1)
    args = {"tools": TOOLS, "situations": a.situations, "repeats": a.k, "seed": 1, "progress": False}
    _, warm_s = timed(lambda: wai.simulate(seeded, executor="ray", tools=TOOLS, situations=8, repeats=2, seed=1))
    results = []
    for name, agent in (("seeded", seeded), ("cpu", make_cpu_agent(a.cpu_ms))):
        local, lt = timed(lambda agent=agent: wai.simulate(agent, **args))
        remote, rt = timed(lambda agent=agent: wai.simulate(agent, executor="ray", **args))
        assert same(local.rows, remote.rows), f"{name}: rows differ between local and Ray"
        results.append((f"simulate {name}", len(local.rows), lt, rt))
    judge = make_cpu_judge(a.cpu_ms)
    data = wai.simulate(seeded, **args)
    local, lt = timed(lambda: data.grade(judge))
    remote, rt = timed(lambda: data.grade(judge, executor="ray"))
    assert [r["reward"] for r in local.rows] == [r["reward"] for r in remote.rows], "grade: rewards differ"
    results.append(("grade cpu judge", len(local.rows), lt, rt))
    ray.shutdown()
    print(f"machine: {os.cpu_count()} cores, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"Ray: num_cpus={a.cpus}, start {start_s:.1f} s, first run (workers start, whileai imports) {warm_s:.1f} s")
    print(f"workload: {a.situations} situations x k={a.k}; cpu = {a.cpu_ms:g} ms of pure Python per rollout / row")
    print(f"{'workload':<20}{'rows':>6}{'local rows/s':>14}{'ray rows/s':>12}{'ray/local':>11}  rows identical")
    for name, n, lt, rt in results:
        print(f"{name:<20}{n:>6}{n / lt:>14.0f}{n / rt:>12.0f}{lt / rt:>10.2f}x  yes")


if __name__ == "__main__":
    main()
