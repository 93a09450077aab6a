"""Benchmark: each framework adapter against the same framework agent run on its own (issue 27), like for like.

For each installed framework (OpenAI Agents SDK, LangGraph, pydantic-ai, smolagents) the same N user messages
run against one loopback fake model server (tests/fakeserver.py in its own process, ``--latency`` seconds a
reply), at the same concurrency, with the same tool work:

* alone: the framework's own run (``Runner.run`` / ``graph.ainvoke`` / ``agent.run``) under an
  ``asyncio.Semaphore(concurrency)`` on the long-lived loop the adapters use too (as a service keeps one; an async
  client binds to the loop it first ran on); smolagents, which is synchronous: a thread pool of ``concurrency``,
  one agent per pool thread (its memory reset by each ``run``) around the one shared model client;
* adapter: ``wai.simulate(obj, asks=messages, repeats=1, concurrency=..., execute=...)``: the rollout engine, the
  adapter's tool hook sending every call through the world, which (the asks schedule no fault) runs the same
  tool function through ``execute=``; each row built from the framework's record.

Both sides run every message once per round; each side's tool function counts its calls and the benchmark
checks that both made the same number of calls in every round (the same tool work: N, one call a run) and that
every adapter row is ``ok`` with the function's own result in its step. Rounds alternate (alone, adapter, alone, adapter, ...) after one warm-up
of each, and both sides run under the same garbage-collector threshold (the engine's ``relaxed_gc``), so the
ratio is the adapter's own cost. It prints the median rollouts/s of each side, their ratio (adapter / alone;
the issue's goal: >= 0.90), each round's ratio (a round's two sides run back to back, so their ratio shares the
machine's load of the moment) and their median, and the median CPU milliseconds this process spent per rollout
on each side (the loopback server runs in its own process; on a shared, loaded machine the CPU time is the
steadier figure: where the run is CPU-bound, throughput is its inverse). First it prints the engine's floor: the
CPU time per rollout of a no-op adapter through the same ``simulate`` call. Usage:
``python benchmarks/bench_frameworks.py [--n 200] [--concurrency 16] [--latency 0.01] [--rounds 3]
[--only langgraph,...]`` (``--only ""``: the floor alone).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness import ROOT, start_server

sys.path.insert(0, str(ROOT))

_lock = threading.Lock()
CALLS = [0]  # the tool function's calls (both sides: the same function, counted)


def _get_order(order_id: str) -> dict:
    """Look up an order by id."""
    with _lock:
        CALLS[0] += 1
    return {"status": "shipped", "order_id": order_id}


def execute(name: str, arguments: Any) -> Any:
    """``simulate(execute=...)``: the world hands the calls no fault answers to the same function."""
    return _get_order(**dict(arguments))


def openai_agents(url: str) -> tuple[Any, Callable[[str], Any]]:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    model = OpenAIChatCompletionsModel(model="m", openai_client=AsyncOpenAI(base_url=url, api_key="-"))
    agent = Agent(name="desk", instructions="Help.", tools=[function_tool(_get_order, name_override="get_order")],
                  model=model)
    return agent, lambda message: Runner.run(agent, message)


def langgraph(url: str) -> tuple[Any, Callable[[str], Any]]:
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

        graph = create_react_agent(ChatOpenAI(model="m", base_url=url, api_key="-"),
                                   [StructuredTool.from_function(_get_order, name="get_order")])
    return graph, lambda message: graph.ainvoke({"messages": [("user", message)]})


def pydantic_ai(url: str) -> tuple[Any, Callable[[str], Any]]:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("m", provider=OpenAIProvider(base_url=url, api_key="-"))
    agent = Agent(model, tools=[Tool(_get_order, name="get_order")], instructions="Help.")
    return agent, agent.run


def smolagents(url: str) -> tuple[Any, Callable[[str], Any]]:
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    @tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id.

        Args:
            order_id: the order's id.
        """
        return _get_order(order_id)

    model = OpenAIServerModel(model_id="m", api_base=url, api_key="-")  # one client, as the adapter's copies share
    mine = threading.local()

    def make() -> Any:
        return ToolCallingAgent(tools=[get_order], model=model, verbosity_level=0, max_steps=2)

    def run(message: str) -> Any:  # one agent per pool thread, its memory reset by each run (smolagents' default)
        if not hasattr(mine, "agent"):
            mine.agent = make()
        return mine.agent.run(message)

    return make(), run


#: name -> (module that must be importable, builder, synchronous)
FRAMEWORKS = {"openai-agents": ("agents", openai_agents, False), "langgraph": ("langgraph", langgraph, False),
              "pydantic-ai": ("pydantic_ai", pydantic_ai, False), "smolagents": ("smolagents", smolagents, True)}


def alone(run: Callable[[str], Any], messages: list[str], concurrency: int, sync: bool) -> float:
    """Seconds the framework takes on its own for every message."""
    from whileai_core.adapters.base import adapters_loop
    from whileai_core.simulate.engine import relaxed_gc

    with relaxed_gc():
        started = time.perf_counter()
        if sync:
            with ThreadPoolExecutor(concurrency) as pool:
                list(pool.map(run, messages))
            return time.perf_counter() - started

        async def main() -> None:
            gate = asyncio.Semaphore(concurrency)

            async def one(message: str) -> None:
                async with gate:
                    await run(message)

            await asyncio.gather(*(one(m) for m in messages))

        asyncio.run_coroutine_threadsafe(main(), adapters_loop()).result()
        return time.perf_counter() - started


def adapted(obj: Any, messages: list[str], concurrency: int) -> float:
    """Seconds ``wai.simulate`` takes on the adapter for every message (rows checked: every one ``ok``, its one
    tool step the function's own result)."""
    import whileai as wai

    started = time.perf_counter()
    data = wai.simulate(obj, asks=messages, repeats=1, budget=len(messages), concurrency=concurrency,
                        simulator=False, progress=False, execute=execute)
    took = time.perf_counter() - started
    bad = [r.get("error") or r["steps"] for r in data.rows if r["status"] != "ok" or not r["steps"]
           or any(s["result"].get("status") != "shipped" for s in r["steps"] if "tool" in s)]
    if bad or len(data.rows) != len(messages):
        raise RuntimeError(f"{len(bad)} of {len(data.rows)} rollouts not as alone's: {bad[:1]}")
    return took


def measure(name: str, url: str, messages: list[str], concurrency: int, rounds: int) -> dict[str, Any]:
    """Warm both sides up, then ``rounds`` alternating rounds; the per-round seconds of each side."""
    _, build, sync = FRAMEWORKS[name]
    obj, run = build(url)
    warm = messages[: max(1, concurrency)]
    alone(run, warm, concurrency, sync)
    adapted(obj, warm, concurrency)
    own: list[float] = []
    ours: list[float] = []
    cpu_own: list[float] = []
    cpu_ours: list[float] = []
    work: set[int] = set()
    for _ in range(rounds):
        for side, out in ((lambda: alone(run, messages, concurrency, sync), own),
                          (lambda: adapted(obj, messages, concurrency), ours)):
            before, cpu = CALLS[0], time.process_time()
            out.append(side())
            work.add(CALLS[0] - before)
            (cpu_own if out is own else cpu_ours).append(time.process_time() - cpu)
    if len(work) != 1 or work == {0}:
        raise RuntimeError(f"{name}: the sides' tool calls per round differ: {sorted(work)}")
    return {"alone": own, "adapter": ours, "calls": work.pop(), "cpu_alone": cpu_own, "cpu_adapter": cpu_ours}


def floor(messages: list[str], concurrency: int) -> float:
    """CPU milliseconds per rollout of ``simulate`` on a no-op adapter (one tool call through the world, the
    same ``execute=``): what the engine and the adapter protocol cost with no framework under them."""
    import whileai as wai
    from whileai_core.adapters.base import schema_tool, world_answer

    class Null(wai.AgentAdapter):
        def tools(self) -> list[Any]:
            return [schema_tool("get_order", "Look up an order by id.", {
                "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]})]

        async def arun(self, message: str) -> dict[str, Any]:
            result = world_answer("get_order", {"order_id": "A1000"})
            return {"steps": [{"tool": "get_order", "arguments": {"order_id": "A1000"}, "result": result,
                               "turn": 0, "call_id": "c0"}], "final_text": "ok"}

    null = Null(object(), name="null")
    adapted(null, messages[:concurrency], concurrency)
    started = time.process_time()
    adapted(null, messages, concurrency)
    return (time.process_time() - started) * 1000 / len(messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.01)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default=None, help="comma-separated frameworks (default: every installed one; "
                                                     "an empty string: the engine's floor alone)")
    args = parser.parse_args()
    proc, port = start_server(args.latency)
    url = f"http://127.0.0.1:{port}/v1"
    messages = [f"Where is order A{1000 + i}?" for i in range(args.n)]
    names = list(FRAMEWORKS) if args.only is None else [n for n in args.only.split(",") if n]
    if set(names) - set(FRAMEWORKS):
        parser.error(f"--only takes {', '.join(FRAMEWORKS)}; got {args.only}")
    print(f"{args.n} rollouts per side per round, {args.rounds} rounds, concurrency {args.concurrency}, "
          f"{args.latency * 1000:.0f} ms per model reply; median rollouts/s")
    try:
        many = [f"Where is order B{1000 + i}?" for i in range(5 * args.n)]
        print(f"{'engine floor':14s} CPU ms/rollout {floor(many, args.concurrency):.2f} (a no-op adapter, "
              f"{len(many)} rollouts)", flush=True)
        for name in names:
            if importlib.util.find_spec(FRAMEWORKS[name][0]) is None:
                print(f"{name:14s} skipped: not installed (pip install 'pytest-whileai[agents]')")
                continue
            got = measure(name, url, messages, args.concurrency, args.rounds)
            own, ours = statistics.median(got["alone"]), statistics.median(got["adapter"])
            rounds = [a / b for a, b in zip(got["alone"], got["adapter"])]
            cpu = [statistics.median(got[k]) * 1000 / args.n for k in ("cpu_alone", "cpu_adapter")]
            print(f"{name:14s} alone {args.n / own:7.1f}   adapter {args.n / ours:7.1f} rollouts/s   "
                  f"ratio {own / ours:.2f}, median of rounds {statistics.median(rounds):.2f} (goal >= 0.90; rounds "
                  f"{' '.join(f'{r:.2f}' for r in rounds)})   CPU ms/rollout alone {cpu[0]:.2f} adapter {cpu[1]:.2f} "
                  f"(ratio {cpu[0] / cpu[1]:.2f})   {got['calls']} tool calls a side a round", flush=True)
    finally:
        proc.kill()


if __name__ == "__main__":
    main()
