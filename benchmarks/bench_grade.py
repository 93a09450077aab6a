"""Benchmark: grading with an LLM judge on one event loop against the thread pool it replaced, side by side.

It starts the loopback OpenAI-compatible server itself (tests/fakeserver.py in its own process, 127.0.0.1 only,
20 ms added per reply, answering every judge request with a verdict JSON), so its CPU is not the client's. Each
measurement runs in a fresh child process over the same rows:

* loop: ``run_judge(rows, wai.Judge(model=wai.Endpoint(...)), concurrency=c)``: the judge's ``acall`` awaited on
  one event loop, ``c`` rows in flight;
* threads: ``run_judge(rows, lambda row: judge(row), concurrency=c)``: the same judge as a plain function, so
  grade runs it on ``c`` threads, each blocking on the backends' shared background loop (the path every LLM
  judge took before);
* the latency limit: c / 20 ms rows/s.

It prints rows/s, the share of the limit, and client CPU per row (all threads of the child process).

Usage: ``python benchmarks/bench_grade.py [--rows 2000] [--concurrency 64] [--latency 0.02]``.
"""

from __future__ import annotations

import argparse
import json
import time

from harness import child, start_server

SERVER = """
import json, sys, threading
from fakeserver import FakeServer
def verdict(request, protocol):
    return {"text": json.dumps({"reason": "the reply names the status", "score": 1})}
srv = FakeServer(latency_s=float(sys.argv[1]), responder=verdict).start()
print(f"PORT {srv.port}", flush=True)
threading.Event().wait()
"""


def run_child(raw: str) -> None:
    spec = json.loads(raw)
    import aiohttp  # noqa: F401 - imported before the clock, as the first call would

    from whileai_core.grade.judge import Judge
    from whileai_core.grade.run import run_judge
    from whileai_core.models.endpoint import Endpoint

    judge = Judge("Pass when the reply names the order status.",
                  model=Endpoint("judge", url=f"http://127.0.0.1:{spec['port']}/v1", timeout=30.0))
    rows = [{"row_id": f"t{i}#0", "task_id": f"t{i}", "rollout_index": 0, "prompt": f"Where is order A{i}?",
             "steps": [{"tool": "get_order", "arguments": {"order_id": f"A{i}"}, "result": {"status": "shipped"}}],
             "final_text": f"Order A{i} has shipped.", "status": "ok"} for i in range(spec["rows"])]
    graded = judge if spec["kind"] == "loop" else (lambda row: judge(row))
    cpu0, t0 = time.process_time(), time.perf_counter()
    scored = run_judge(rows, graded, judge_name=judge.name, concurrency=spec["concurrency"], quiet=True)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    ok = sum(1 for r in scored.rows if r["judge_status"] == "ok")
    print(json.dumps({"wall": wall, "cpu": cpu, "n": len(rows), "ok": ok}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run_child(args.child)
        return
    proc, port = start_server(args.latency, SERVER)
    try:
        limit = args.concurrency / args.latency
        print(f"grading {args.rows} rows with an LLM judge, concurrency {args.concurrency}, "
              f"{args.latency * 1000:.0f} ms a reply (latency limit {limit:.0f} rows/s)")
        results = {}
        for kind in ("threads", "loop"):
            r = child(__file__, kind, port=port, rows=args.rows, concurrency=args.concurrency)
            results[kind] = r
            rate = r["n"] / r["wall"]
            print(f"  {kind:8s} {rate:8.0f} rows/s  {rate / limit:5.0%} of limit  "
                  f"{1000 * r['cpu'] / r['n']:6.2f} ms CPU/row  wall {r['wall']:.2f} s  ok {r['ok']}/{r['n']}")
        t, lo = results["threads"], results["loop"]
        print(f"  loop vs threads: {t['wall'] / lo['wall']:.2f}x the throughput, "
              f"{lo['cpu'] / t['cpu']:.2f}x the CPU per row")
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
