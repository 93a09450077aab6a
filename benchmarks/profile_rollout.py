"""Where the CPU of one model-agent rollout goes: the engine's loop thread profiled, per rollout.

It starts the loopback server (``tests/fakeserver.py``, its own process) and runs ``simulate`` on the workload of
``bench_simulate.py`` (an ``wai.Endpoint`` agent, one tool, two model calls a rollout) in this process:

* ``--cpu``: process CPU per rollout of two runs, ``--tasks`` and 3x ``--tasks`` (their difference over the extra
  rollouts: imports and start-up cancel out), ``--rounds`` interleaved pairs; prints each and the median;
* ``--cprofile``: the engine's loop thread under ``cProfile`` (``Engine._serve`` wrapped), the top functions by
  own time, in microseconds per rollout;
* ``--nonet``: ``--cpu`` and ``--cprofile`` (with it) without the network: ``models.http.post`` answers in
  process with the loopback server's replies (``tests/fakeserver.py``'s ``default_reply``, its wire shape), so
  what is measured is whileai's own CPU per rollout (the engine, the agent loop, the backend, rows), no aiohttp;
* ``--floors``: CPU per rollout of bench_simulate's bare aiohttp client, of whileai's backend alone on the same
  calls (``Endpoint.acomplete`` twice a rollout: no agent loop, world or rows) and of the whole simulate run,
  ``--rounds`` interleaved (where whileai's CPU goes beyond the bare client's: its transport or the rest);
* ``--callgrind``: meant to run under ``valgrind --tool=callgrind``: one run, nothing else (instruction counts do
  not move with the machine's load; run it at two sizes and take the difference per rollout); ``--bare`` runs
  ``bench_simulate.py``'s bare aiohttp client instead (the floor, the same way).

Usage: ``python benchmarks/profile_rollout.py --cpu [--tasks 500] [--rounds 3] [--c 128]``,
``python benchmarks/profile_rollout.py --cprofile [--tasks 1000] [--top 40]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from harness import start_server

K = 4


def _run(url: str, tasks: int, c: int) -> float:
    """One simulate run of ``tasks`` x K rollouts at concurrency ``c``; returns its process CPU seconds."""
    import whileai as wai

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {"status": "ok", "order_id": order_id}

    asks = [f"Please get order A{1000 + i} for me" for i in range(tasks)]
    agent = wai.Endpoint("m", url=url, max_attempts=1)
    cpu0 = time.process_time()
    data = wai.simulate(agent, tools=[get_order], asks=asks, repeats=K, budget=tasks * K, concurrency=c,
                        cache=False, progress=False)
    cpu = time.process_time() - cpu0
    assert sum(1 for r in data if r["status"] == "ok") == tasks * K, "a rollout failed"
    return cpu


def no_network() -> None:
    """``models.http.post`` answered in process, as the loopback server would answer (no socket, no aiohttp)."""
    import json
    import sys

    from harness import TESTS

    sys.path.insert(0, str(TESTS))
    from fakeserver import FakeServer, default_reply

    from whileai_core.models import http

    count = iter(range(1 << 62))

    replies: dict[bytes, bytes] = {}  # request body -> reply body: the measured runs ask what the warm-up asked

    async def post(url: str, payload: bytes, headers: dict[str, str], *, timeout: float,
                   connect_timeout: float) -> tuple[int, dict[str, str], bytes]:
        found = replies.get(payload)
        if found is None:
            request = json.loads(payload)
            reply = FakeServer._render(default_reply(request, "openai"), request, "openai", next(count))
            found = replies[payload] = json.dumps(reply).encode()
        return 200, {}, found

    http.post = post  # type: ignore[assignment]


def transport(url: str, tasks: int, c: int) -> float:
    """``bench_simulate.py``'s bare aiohttp client with whileai's backend in place of its session calls: each
    rollout two ``Endpoint.acomplete`` calls of the same bodies on ``c`` workers (whileai's transport, no agent
    loop, world or rows); returns the process CPU seconds."""
    import asyncio

    from bench_simulate import _bodies, _run_on_engine_loop

    import whileai as wai
    from whileai_core.models import http

    backend = wai.Endpoint("m", url=url, max_attempts=1)
    bodies, n = _bodies(), tasks * K

    async def main() -> None:
        token = http.connection_limit.set(c)
        jobs = iter(range(n))

        async def worker() -> None:
            for _ in jobs:
                for b in bodies:
                    await backend.acomplete(b["messages"], tools=b["tools"], temperature=b["temperature"],
                                            max_tokens=b["max_tokens"])

        try:
            await asyncio.gather(*(worker() for _ in range(c)))
        finally:
            await http.close_sessions()
            http.connection_limit.reset(token)

    cpu0 = time.process_time()
    _run_on_engine_loop(main())
    return time.process_time() - cpu0


def floors(url: str, tasks: int, rounds: int, c: int) -> None:
    """CPU per rollout of bare aiohttp, whileai's transport alone and the whole simulate run, interleaved."""
    from bench_simulate import _bare_aiohttp

    arms = {"bare aiohttp": lambda: _bare_aiohttp({"url": url, "tasks": tasks, "c": c})["cpu"],
            "whileai transport": lambda: transport(url, tasks, c), "whileai simulate": lambda: _run(url, tasks, c)}
    for fn in arms.values():
        fn()  # warm
    got: dict[str, list[float]] = {name: [] for name in arms}
    for i in range(rounds):
        for name in list(arms) if i % 2 == 0 else list(arms)[::-1]:
            got[name].append(arms[name]() / (tasks * K))
    for name, values in got.items():
        print(f"  {name:<18} {1e6 * statistics.median(values):7.1f} us CPU/rollout "
              f"[{1e6 * min(values):.1f}-{1e6 * max(values):.1f}] (median of {rounds})")


def cpu(url: str, tasks: int, rounds: int, c: int) -> None:
    """Marginal CPU per rollout: (CPU of 3x tasks - CPU of tasks) / (2 x tasks x K), ``rounds`` times."""
    _run(url, 3 * tasks, c)  # warm: imports, the session, the first-call memos (and --nonet's replies)
    per: list[float] = []
    for i in range(rounds):
        small, big = _run(url, tasks, c), _run(url, 3 * tasks, c)
        per.append((big - small) / (2 * tasks * K))
        print(f"  round {i + 1}: {1e6 * small / (tasks * K):6.1f} us/rollout at {tasks} tasks, "
              f"{1e6 * big / (3 * tasks * K):6.1f} at {3 * tasks}; marginal {1e6 * per[-1]:6.1f} us/rollout")
    print(f"marginal CPU per rollout (median of {rounds}): {1e6 * statistics.median(per):.1f} us "
          f"[{1e6 * min(per):.1f}-{1e6 * max(per):.1f}]")


def cprofile(url: str, tasks: int, c: int, top: int) -> None:
    """The engine thread's functions by own time, in us per rollout."""
    import cProfile
    import pstats

    from whileai_core.simulate.engine import Engine

    _run(url, tasks, c)
    prof = cProfile.Profile()
    serve = Engine._serve

    def profiled(self: Engine, *args: object) -> None:
        prof.enable()
        try:
            serve(self, *args)
        finally:
            prof.disable()

    Engine._serve = profiled  # type: ignore[method-assign]
    try:
        _run(url, tasks, c)
    finally:
        Engine._serve = serve  # type: ignore[method-assign]
    n = tasks * K
    stats = pstats.Stats(prof)
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
    total = sum(v[2] for _, v in rows)
    print(f"engine thread under cProfile: {1e6 * total / n:.1f} us/rollout own time in all (profiler inflated)")
    print(f"{'own us/r':>9} {'cum us/r':>9} {'calls/r':>8}  function")
    for (file, line, name), (_, ncalls, tt, ct, _) in rows[:top]:
        print(f"{1e6 * tt / n:9.2f} {1e6 * ct / n:9.2f} {ncalls / n:8.2f}  {name} ({file.split('/')[-1]}:{line})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--floors", action="store_true", help="CPU/rollout: bare aiohttp, whileai's transport, simulate")
    ap.add_argument("--nonet", action="store_true", help="http.post answered in process (whileai's CPU alone)")
    ap.add_argument("--bare", action="store_true", help="--callgrind's run with bench_simulate's bare aiohttp client")
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--c", type=int, default=128)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--latency", type=float, default=0.002, help="the server's seconds per reply")
    args = ap.parse_args()
    if args.nonet:
        no_network()
    proc, port = start_server(args.latency)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        if args.cprofile:
            cprofile(url, args.tasks, args.c, args.top)
        elif args.floors:
            floors(url, args.tasks, args.rounds, args.c)
        elif args.callgrind:
            _run(url, args.tasks, args.c)
        elif args.bare:
            from bench_simulate import _bare_aiohttp

            _bare_aiohttp({"url": url, "tasks": args.tasks, "c": args.c})
        else:
            cpu(url, args.tasks, args.rounds, args.c)
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
