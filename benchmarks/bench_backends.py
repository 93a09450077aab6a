"""Benchmark: model-backed rollouts against the loopback fake server.

1000 tasks x k=4 (4000 rollouts, each two model calls: a tool call, then the reply) against
tests/fakeserver.py with 20 ms added latency per call, at concurrency 32, driven by
``whileai_core.simulate.run.simulate``. It prints, measured side by side in this one run:

* throughput vs the latency-bound limit (concurrency / (calls per rollout x latency));
* client-process CPU per rollout (all threads; the server runs in its own process and is not counted),
  and the same for the replay run, which is the engine alone with no HTTP;
* replay wall time vs live (a second live run records a cassette; the replay runs with the server stopped);
* the transport floor: the same number of bare httpx POSTs from the same number of threads, so a slow or
  loaded machine shows up as a low floor rather than as engine overhead.

Goals from issue 6: >= 80% of the limit, < 1 ms engine CPU per rollout, replay <= 5% of live.
Usage: ``python benchmarks/bench_backends.py [--tasks 1000] [--k 4] [--latency 0.02] [--concurrency 32]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness import ROOT, start_server

sys.path.insert(0, str(ROOT))


def compare_transports(args: argparse.Namespace) -> None:
    """The same POSTs, the same number in flight, three ways (benchmarks/bench_simulate.py compares the async clients)."""
    import asyncio
    import json

    import httpx

    from whileai_core.models.endpoint import Endpoint

    n_calls = args.tasks * args.k * 2
    proc, port = start_server(args.latency)
    url = f"http://127.0.0.1:{port}/v1"
    messages = [{"role": "system", "content": "You look up orders."},
                {"role": "user", "content": "Please get order A1000 for me"}]
    body = json.dumps({"model": "m", "messages": messages}).encode()
    headers = {"content-type": "application/json"}
    results = []
    try:
        shared = httpx.Client(limits=httpx.Limits(max_connections=args.concurrency * 2,
                                                  max_keepalive_connections=args.concurrency * 2))
        backend = Endpoint("m", url=url)

        def time_threads(name: str, fn: object) -> None:
            with ThreadPoolExecutor(args.concurrency) as ex:
                list(ex.map(fn, range(args.concurrency)))  # warm connections
                cpu0, t0 = time.process_time(), time.perf_counter()
                list(ex.map(fn, range(n_calls)))
                results.append((name, time.perf_counter() - t0, time.process_time() - cpu0))

        time_threads("shared httpx.Client, threads",
                     lambda _: shared.post(url + "/chat/completions", content=body, headers=headers).json())
        time_threads("backend.complete (shared aiohttp loop), threads", lambda _: backend.complete(messages))

        async def run_async() -> None:
            async with httpx.AsyncClient(limits=httpx.Limits(max_connections=args.concurrency * 2,
                                                             max_keepalive_connections=args.concurrency * 2)) as ac:
                sem = asyncio.Semaphore(args.concurrency)

                async def one() -> None:
                    async with sem:
                        (await ac.post(url + "/chat/completions", content=body, headers=headers)).json()

                await asyncio.gather(*[one() for _ in range(args.concurrency)])
                cpu0, t0 = time.process_time(), time.perf_counter()
                await asyncio.gather(*[one() for _ in range(n_calls)])
                results.append(("httpx.AsyncClient, one event loop", time.perf_counter() - t0,
                                time.process_time() - cpu0))

        asyncio.run(run_async())
    finally:
        proc.terminate()
        proc.wait()
    limit = args.concurrency / args.latency if args.latency else float("inf")
    base_cpu = results[0][2]
    print(f"{n_calls} POSTs, {args.concurrency} in flight, latency {args.latency * 1000:.0f} ms "
          f"(latency-bound limit {limit:.0f} calls/s), cpus {os.cpu_count()}")
    for name, wall, cpu in results:
        print(f"  {name:38s} {n_calls / wall:6.0f} calls/s  {cpu / n_calls * 1000:5.2f} ms CPU/call  "
              f"CPU x{cpu / base_cpu:.2f} of the shared client")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--transports", action="store_true",
                    help="only compare HTTP transports (shared httpx.Client, the backend's pool, AsyncClient)")
    args = ap.parse_args()
    if args.transports:
        compare_transports(args)
        return

    from whileai_core.models.cache import Cassette
    from whileai_core.models.endpoint import Endpoint
    from whileai_core.simulate.run import simulate
    from whileai_core.tools import tool

    @tool
    def get_order(order_id: str) -> dict:
        """Look up an order by its id."""
        return {"status": "ok"}

    tools = [get_order]
    asks = [f"Please get order A{1000 + i} for me" for i in range(args.tasks)]
    n_rollouts = args.tasks * args.k
    calls_per_rollout = 2  # the fake model calls the tool once, then replies
    limit = args.concurrency / (calls_per_rollout * args.latency)

    proc, port = start_server(args.latency)
    url = f"http://127.0.0.1:{port}/v1"
    tmp = Path(tempfile.mkdtemp(prefix="wai-bench-"))
    cassette_path = tmp / "bench.jsonl"
    n_calls = n_rollouts * calls_per_rollout
    try:
        backend = Endpoint("bench-model", url=url)
        # warm the pool and the imports so neither counts against a timed run
        backend.complete([{"role": "user", "content": "warm up"}])

        # 1. the transport floor: the same number of bare httpx POSTs from the same number of threads
        import json

        import httpx

        body = json.dumps({"model": "bench-model", "messages": [
            {"role": "system", "content": "You look up orders."},
            {"role": "user", "content": "Please get order A1000 for me"}]}).encode()
        bare = httpx.Client(limits=httpx.Limits(max_connections=args.concurrency * 2,
                                                max_keepalive_connections=args.concurrency * 2))
        bare_url = url + "/chat/completions"

        def bare_call(_: int) -> None:
            bare.post(bare_url, content=body, headers={"content-type": "application/json"}).json()

        with ThreadPoolExecutor(args.concurrency) as ex:
            list(ex.map(bare_call, range(args.concurrency)))
            cpu0, t0 = time.process_time(), time.perf_counter()
            list(ex.map(bare_call, range(n_calls)))
            bare_wall, bare_cpu = time.perf_counter() - t0, time.process_time() - cpu0
        bare.close()

        def run(cache: object) -> tuple[float, float, object]:
            cpu0, t0 = time.process_time(), time.perf_counter()
            data = simulate(backend, tools=tools, system_prompt="You look up orders.", asks=asks,
                            repeats=args.k, budget=n_rollouts, concurrency=args.concurrency, progress=False,
                            cache=cache)
            return time.perf_counter() - t0, time.process_time() - cpu0, data

        live_wall, live_cpu, live = run(False)  # 2. live, no cassette
        with Cassette(cassette_path, mode="record") as cas:  # 3. live, recording
            rec_wall, rec_cpu, recorded = run(cas)
    finally:
        proc.terminate()
        proc.wait()
    replay_cas = Cassette(cassette_path, mode="replay")  # 4. replay with the server stopped
    replay_wall, replay_cpu, replay = run(replay_cas)

    n = len(live.rows)
    ok = sum(r["status"] == "ok" for r in live.rows)
    same = [(r["row_id"], r["steps"], r["final_text"]) for r in recorded.rows] == \
           [(r["row_id"], r["steps"], r["final_text"]) for r in replay.rows]
    rate = n / live_wall
    bare_rate = n_calls / bare_wall / calls_per_rollout
    ms = 1000.0
    print(f"rollouts: {n} ({args.tasks} tasks x k={args.k}), {ok} ok, {calls_per_rollout} model calls each, "
          f"latency {args.latency * ms:.0f} ms, concurrency {args.concurrency}, cpus {os.cpu_count()}")
    print(f"limit:   latency-bound {limit:.0f} rollouts/s; bare httpx from {args.concurrency} threads reaches "
          f"{bare_rate:.0f} rollouts/s ({bare_rate / limit:.1%} of the limit) at "
          f"{bare_cpu / n_calls * ms:.2f} ms CPU per call")
    print(f"live:    {live_wall:.2f} s, {rate:.0f} rollouts/s = {rate / limit:.1%} of the limit (goal >= 80%), "
          f"{rate / bare_rate:.1%} of bare httpx")
    print(f"cpu:     live {live_cpu / n * ms:.2f} ms/rollout (bare httpx for the same calls "
          f"{bare_cpu / n * ms:.2f}); engine alone (replay, no HTTP) {replay_cpu / n * ms:.2f} ms/rollout "
          f"(goal < 1 ms)")
    print(f"record:  {rec_wall:.2f} s, {rec_cpu / n * ms:.2f} ms CPU/rollout ({len(replay_cas)} recordings, "
          f"{cassette_path.stat().st_size / 1e6:.1f} MB)")
    print(f"replay:  {replay_wall:.2f} s = {replay_wall / live_wall:.1%} of live (goal <= 5%); "
          f"{replay_cas.hits} hits, {replay_cas.misses} misses; rows identical to the recorded run: {same}")


if __name__ == "__main__":
    main()
