"""Benchmark: simulate() at the speed limit, side by side with a bare aiohttp client and the latency limit.

It starts the loopback OpenAI-compatible server itself (tests/fakeserver.py in its own process, 127.0.0.1 only,
20 ms added per reply), so its CPU is not the client's. Each rollout is two model calls (a tool call, then
the reply). Every measurement runs in a fresh child process (so peak RSS and CPU are that run's alone):

* whileai: ``simulate(wai.Endpoint(...), asks=..., repeats=4, concurrency=c, cache=False)``;
* bare aiohttp: the same number of rollouts, each two sequential POSTs, ``c`` workers on one session (ceiling);
* bare httpx.AsyncClient: the same, at c=32 (why the engine uses aiohttp: client CPU per call);
* the latency limit: c / (2 calls x 20 ms) rollouts/s.

The bare clients run on the event loop the engine runs on (uvloop's when it is installed, see
``whileai_core/models/http.py``), so the ceiling and whileai differ in the client code only.

At (1000 x 4, c=32), (4000 x 4, c=32), (1000 x 4, c=128); then peak RSS with ``output=`` at k=4 and k=16 over
the same 1000 tasks (4x the rows, the same situations) and at k=4 over 1000 and 4000 tasks (4x the rows, 4x the
situations), and replay (a recorded cassette, server unreachable) against the live run. Targets (issue 16): >= 90% of
the bare client at c=32, >= 50% of the limit at c=128, CPU per rollout at 4000 tasks <= 1.15x that at 1000,
peak RSS with output= flat in rows and in situations (<= 1.10x), replay <= 5% of live wall time. It prints each and met/missed.

``--memory`` measures only peak RSS with ``output=`` over 4x the situations (``--tasks`` then 4x that, k=4,
``--rounds`` interleaved pairs, the median of each; goal <= 1.10x, issue 34).

``--hot`` measures only the hot path's goals (issue 34), side by side in one run: at 1000 x 4, c=128, whileai
and bare aiohttp in interleaved rounds (``--rounds``, the median of each), as a fraction of the latency limit
(>= 0.50) and of bare aiohttp (>= 0.90); then replay wall / live wall at 1000 x 4, c=32 (<= 0.05).

Usage: ``python benchmarks/bench_simulate.py [--latency 0.02] [--quick | --hot [--rounds 3] |
--memory [--tasks 4000] [--rounds 3]]``
(``--quick``: 250/1000 tasks).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from harness import child, start_server

CALLS_PER_ROLLOUT = 2
K = 4


# --------------------------------------------------------------------------------------------------
# the children
# --------------------------------------------------------------------------------------------------
def _asks(tasks: int) -> list[str]:
    return [f"Please get order A{1000 + i} for me" for i in range(tasks)]


def _whileai(spec: dict) -> dict:
    import aiohttp  # noqa: F401 - imported before the clock starts, as the bare clients' are

    import whileai as wai
    from whileai_core.models.cache import Cassette

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {"status": "ok", "order_id": order_id}

    cache = Cassette(spec["cassette"], mode=spec["cache_mode"]) if spec.get("cassette") else False
    agent = wai.Endpoint("m", url=spec["url"], max_attempts=1)
    simulate = wai.simulate  # the facade is lazy: its modules load here, before the clock, as aiohttp's did above
    cpu0, t0 = time.process_time(), time.perf_counter()
    k = spec.get("k", K)
    data = simulate(agent, tools=[get_order], asks=_asks(spec["tasks"]), repeats=k, budget=spec["tasks"] * k,
                        concurrency=spec["c"], cache=cache, progress=False, output=spec.get("output"))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if cache:
        cache.close()
    n = len(data)
    ok = sum(1 for r in data if r["status"] == "ok")
    return {"wall": wall, "cpu": cpu, "n": n, "ok": ok, "rss_mb": _peak_rss_mb()}


def _bare_aiohttp(spec: dict) -> dict:
    import asyncio

    import aiohttp

    body, n = _bodies(), spec["tasks"] * K

    async def main() -> float:
        conn = aiohttp.TCPConnector(limit=spec["c"])
        async with aiohttp.ClientSession(connector=conn) as s:
            jobs = iter(range(n))

            async def worker() -> None:
                for _ in jobs:
                    for b in body:  # each request body encoded per call, as a real client must
                        async with s.post(spec["url"] + "/chat/completions", data=json.dumps(b).encode(),
                                          headers={"content-type": "application/json"}) as r:
                            json.loads(await r.read())

            await asyncio.gather(*(worker() for _ in range(spec["c"])))
        return 0.0

    cpu0, t0 = time.process_time(), time.perf_counter()
    _run_on_engine_loop(main())
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - cpu0, "n": n, "ok": n,
            "rss_mb": _peak_rss_mb()}


def _bare_httpx(spec: dict) -> dict:
    import asyncio

    import httpx

    body, n = _bodies(), spec["tasks"] * K

    async def main() -> None:
        limits = httpx.Limits(max_connections=spec["c"], max_keepalive_connections=spec["c"])
        async with httpx.AsyncClient(limits=limits) as s:
            jobs = iter(range(n))

            async def worker() -> None:
                for _ in jobs:
                    for b in body:
                        r = await s.post(spec["url"] + "/chat/completions", content=json.dumps(b).encode(),
                                         headers={"content-type": "application/json"})
                        r.json()

            await asyncio.gather(*(worker() for _ in range(spec["c"])))

    cpu0, t0 = time.process_time(), time.perf_counter()
    _run_on_engine_loop(main())
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - cpu0, "n": n, "ok": n,
            "rss_mb": _peak_rss_mb()}


def _run_on_engine_loop(coro: object) -> None:
    """Run a bare client on the kind of event loop the engine runs (uvloop's when installed), so the ceiling and
    whileai differ in the client code only."""
    import asyncio

    from whileai_core.models.http import new_loop

    with asyncio.Runner(loop_factory=new_loop) as runner:
        runner.run(coro)


def _bodies() -> list[dict]:
    tool = {"type": "function", "function": {"name": "get_order", "description": "Look up an order by id.",
                                             "parameters": {"type": "object", "required": ["order_id"],
                                                            "properties": {"order_id": {"type": "string"}}}}}
    first = [{"role": "user", "content": "Please get order A1000 for me"}]
    second = first + [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "A1000"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "ok", "order_id": "A1000"}'}]
    return [{"model": "m", "messages": m, "tools": [tool], "temperature": 0.7, "max_tokens": 1024}
            for m in (first, second)]


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_child(raw: str) -> None:
    spec = json.loads(raw)
    fn = {"whileai": _whileai, "aiohttp": _bare_aiohttp, "httpx": _bare_httpx}[spec["kind"]]
    print(json.dumps(fn(spec)))


# --------------------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------------------
def _line(name: str, r: dict, limit: float) -> str:
    rate = r["n"] / r["wall"]
    return (f"  {name:<22} {rate:8.0f}/s  {100 * rate / limit:5.1f}% of limit  {1000 * r['cpu'] / r['n']:6.2f} ms "
            f"CPU/rollout  wall {r['wall']:6.2f} s  peak RSS {r['rss_mb']:6.0f} MB  ok {r['ok']}/{r['n']}")


def _verdict(name: str, value: float, target: str, met: bool) -> str:
    return f"  {name:<58} {value:8.3f}  target {target:<8} {'met' if met else 'MISSED'}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--quick", action="store_true", help="250 and 1000 tasks instead of 1000 and 4000")
    ap.add_argument("--hot", action="store_true", help="only the c=128 and replay goals (issue 34), side by side")
    ap.add_argument("--rounds", type=int, default=3, help="--hot: interleaved rounds at c=128 (median of each)")
    ap.add_argument("--memory", action="store_true", help="only the peak RSS goal over 4x the situations (issue 34)")
    ap.add_argument("--tasks", type=int, default=4000, help="--memory: the smaller run's tasks (the larger has 4x)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run_child(args.child)
        return
    if args.hot:
        hot(args.latency, args.rounds)
        return
    if args.memory:
        memory(args.latency, args.rounds, args.tasks)
        return
    small, big = (250, 1000) if args.quick else (1000, 4000)
    proc, port = start_server(args.latency)
    url = f"http://127.0.0.1:{port}/v1"
    load = os.getloadavg()
    from whileai_core.models.http import new_loop

    probe = new_loop()
    kind = type(probe).__module__.split(".")[0]
    probe.close()
    print(f"bench_simulate: loopback server 127.0.0.1:{port}, {1000 * args.latency:.0f} ms/reply, "
          f"{CALLS_PER_ROLLOUT} calls/rollout, k={K}; {os.cpu_count()} CPUs, load average {load[0]:.1f} "
          f"{load[1]:.1f} {load[2]:.1f} at start; every client on the {kind} event loop")
    res: dict[tuple[str, int, int], dict] = {}
    try:
        for tasks, c in ((small, 32), (big, 32), (small, 128)):
            limit = c / (CALLS_PER_ROLLOUT * args.latency)
            print(f"\n{tasks} tasks x {K}, concurrency {c}: latency limit {limit:.0f} rollouts/s")
            res[("aiohttp", tasks, c)] = child(__file__, "aiohttp", url=url, tasks=tasks, c=c)
            res[("whileai", tasks, c)] = child(__file__, "whileai", url=url, tasks=tasks, c=c)
            print(_line("whileai", res[("whileai", tasks, c)], limit))
            print(_line("bare aiohttp (ceiling)", res[("aiohttp", tasks, c)], limit))
            if (tasks, c) == (small, 32):
                res[("httpx", tasks, c)] = child(__file__, "httpx", url=url, tasks=tasks, c=c)
                print(_line("bare httpx.AsyncClient", res[("httpx", tasks, c)], limit))
        with tempfile.TemporaryDirectory() as tmp:
            print(f"\npeak RSS with output= (rows streamed to a file), {small} tasks, concurrency 32, k={K} then "
                  f"k={4 * K} (4x the rows, the same situations):")
            for k in (K, 4 * K):
                res[("output", k, 32)] = child(__file__, "whileai", url=url, tasks=small, c=32, k=k,
                                              output=str(Path(tmp) / f"rows{k}.jsonl"))
                print(_line(f"whileai output= k={k}", res[("output", k, 32)], 32 / (2 * args.latency)))
            situations_rss(res, url, small, args.latency, tmp)
            cassette = str(Path(tmp) / "cassette.jsonl")
            rec = child(__file__, "whileai", url=url, tasks=small, c=32, cassette=cassette, cache_mode="record")
            size = Path(cassette).stat().st_size / 1e6
            dead = "http://127.0.0.1:9/v1"  # nothing listens there: a replay that touched the network would fail
            rep = child(__file__, "whileai", url=dead, tasks=small, c=32, cassette=cassette, cache_mode="replay")
            print(f"\nreplay of a {size:.1f} MB cassette ({small} tasks x {K}), server unreachable:")
            print(_line("recording run (live)", rec, 32 / (2 * args.latency)))
            print(_line("replay", rep, 32 / (2 * args.latency)))
    finally:
        proc.kill()
        proc.wait()
    _report(res, small, big, args.latency, rep)
    load = os.getloadavg()
    print(f"\nload average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (the machine is shared; other "
          "processes' CPU shows up as lower throughput for every client alike)")


def situations_rss(res: dict, url: str, tasks: int, latency: float, tmp: str, rounds: int = 1) -> None:
    """Peak RSS with ``output=`` at k=4 over ``tasks`` asks and over 4x the asks (4x the rows, 4x the situations),
    ``rounds`` interleaved pairs (the median of each is kept in ``res``)."""
    import statistics

    print(f"\npeak RSS with output= (rows streamed to a file), concurrency 32, k={K}: {tasks} tasks then {4 * tasks} "
          "tasks (4x the rows, 4x the situations):")
    peaks: dict[int, list[float]] = {tasks: [], 4 * tasks: []}
    for i in range(rounds):
        for n in (tasks, 4 * tasks) if i % 2 == 0 else (4 * tasks, tasks):
            r = child(__file__, "whileai", url=url, tasks=n, c=32, output=str(Path(tmp) / f"tasks{n}-{i}.jsonl"))
            peaks[n].append(r["rss_mb"])
            res[("situations", n, 32)] = r
            print(_line(f"output= {n} tasks r{i + 1}", r, 32 / (CALLS_PER_ROLLOUT * latency)))
    for n, values in peaks.items():
        res[("situations", n, 32)] = dict(res[("situations", n, 32)], rss_mb=statistics.median(values))


def memory(latency: float, rounds: int, tasks: int) -> None:
    """``--memory``: only the peak-RSS-in-situations goal (issue 34), ``rounds`` interleaved pairs."""
    proc, port = start_server(latency)
    res: dict = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            situations_rss(res, f"http://127.0.0.1:{port}/v1", tasks, latency, tmp, rounds)
    finally:
        proc.kill()
        proc.wait()
    _situations_verdict(res, tasks, rounds)


def _situations_verdict(res: dict, tasks: int, rounds: int = 1) -> None:
    small, big = res[("situations", tasks, 32)]["rss_mb"], res[("situations", 4 * tasks, 32)]["rss_mb"]
    print(_verdict(f"peak RSS with output=, {4 * tasks} x {K} / {tasks} x {K} ({small:.1f} -> {big:.1f} MB"
                   f"{f', median of {rounds}' if rounds > 1 else ''})", big / small, "<= 1.10", big / small <= 1.10))


def hot(latency: float, rounds: int, tasks: int = 1000) -> None:
    """The hot path's goals, measured side by side in one run (see the module docstring, ``--hot``)."""
    import statistics

    proc, port = start_server(latency)
    url = f"http://127.0.0.1:{port}/v1"
    load = os.getloadavg()
    limit = 128 / (CALLS_PER_ROLLOUT * latency)
    print(f"bench_simulate --hot: {tasks} tasks x {K}, {1000 * latency:.0f} ms/reply, {CALLS_PER_ROLLOUT} calls/rollout; "
          f"{os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at start")
    rates: dict[str, list[float]] = {"whileai": [], "aiohttp": []}
    try:
        for i in range(rounds):  # interleaved: a load change hits both clients alike
            for kind in ("aiohttp", "whileai") if i % 2 == 0 else ("whileai", "aiohttp"):
                r = child(__file__, kind, url=url, tasks=tasks, c=128)
                rates[kind].append(r["n"] / r["wall"])
                print(_line(f"{kind} c=128 round {i + 1}", r, limit))
        with tempfile.TemporaryDirectory() as tmp:
            live = child(__file__, "whileai", url=url, tasks=tasks, c=32)
            cassette = str(Path(tmp) / "cassette.jsonl")
            child(__file__, "whileai", url=url, tasks=tasks, c=32, cassette=cassette, cache_mode="record")
            dead = "http://127.0.0.1:9/v1"  # nothing listens there: a replay that touched the network would fail
            rep = child(__file__, "whileai", url=dead, tasks=tasks, c=32, cassette=cassette, cache_mode="replay")
            print(_line("live c=32", live, 32 / (CALLS_PER_ROLLOUT * latency)))
            print(_line("replay c=32", rep, 32 / (CALLS_PER_ROLLOUT * latency)))
    finally:
        proc.kill()
        proc.wait()
    ours, bare = statistics.median(rates["whileai"]), statistics.median(rates["aiohttp"])
    load = os.getloadavg()
    print(f"\nside by side (median of {rounds} rounds; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the end):")
    print(_verdict(f"c=128 whileai / latency limit ({ours:.0f} of {limit:.0f}/s)", ours / limit, ">= 0.50",
                   ours / limit >= 0.50))
    print(_verdict(f"c=128 whileai / bare aiohttp ({ours:.0f} of {bare:.0f}/s)", ours / bare, ">= 0.90",
                   ours / bare >= 0.90))
    r = rep["wall"] / live["wall"]
    print(_verdict(f"replay wall / live wall, {tasks} x {K} (c=32)", r, "<= 0.05", r <= 0.05 and rep["ok"] == rep["n"]))


def _report(res: dict, small: int, big: int, latency: float, rep: dict) -> None:
    def rate(key: tuple[str, int, int]) -> float:
        return res[key]["n"] / res[key]["wall"]

    def cpu(key: tuple[str, int, int]) -> float:
        return res[key]["cpu"] / res[key]["n"]

    print("\nratios and targets:")
    for tasks in (small, big):
        r = rate(("whileai", tasks, 32)) / rate(("aiohttp", tasks, 32))
        print(_verdict(f"whileai / bare aiohttp, {tasks} x {K}, c=32", r, ">= 0.90", r >= 0.90))
    r = rate(("whileai", small, 128)) / (128 / (CALLS_PER_ROLLOUT * latency))
    print(_verdict(f"whileai / latency limit, {small} x {K}, c=128", r, ">= 0.50", r >= 0.50))
    r = cpu(("whileai", big, 32)) / cpu(("whileai", small, 32))
    print(_verdict(f"CPU per rollout, {big} tasks / {small} tasks (c=32)", r, "<= 1.15", r <= 1.15))
    r = res[("output", 4 * K, 32)]["rss_mb"] / res[("output", K, 32)]["rss_mb"]
    print(_verdict(f"peak RSS with output=, {4 * K * small} rows / {K * small} rows", r, "<= 1.10", r <= 1.10))
    _situations_verdict(res, small)
    r = rep["wall"] / res[("whileai", small, 32)]["wall"]
    print(_verdict(f"replay wall / live wall, {small} x {K}", r, "<= 0.05", r <= 0.05 and rep["ok"] == rep["n"]))
    r = cpu(("httpx", small, 32)) / cpu(("aiohttp", small, 32))
    print(f"\nclient choice: bare httpx.AsyncClient spends {r:.2f}x the CPU per rollout of bare aiohttp on the same "
          f"calls at c=32 ({1000 * cpu(('httpx', small, 32)):.2f} vs {1000 * cpu(('aiohttp', small, 32)):.2f} ms), "
          f"so the engine's client is aiohttp.")


if __name__ == "__main__":
    main()
