"""Benchmark: each framework adapter against the framework run on its own (issue 27).

For each installed framework (OpenAI Agents SDK, LangGraph, pydantic-ai, smolagents) the same N user messages
run twice against one loopback fake server (tests/fakeserver.py in its own process, ``--latency`` seconds a
reply), at the same concurrency:

* alone: the framework's own run (``Runner.run`` / ``graph.ainvoke`` / ``agent.run``) on an asyncio loop with a
  semaphore of ``--concurrency`` (smolagents, which is synchronous: a thread pool of that size, a fresh agent
  per run);
* adapter: ``wai.simulate(obj, asks=messages, repeats=1, concurrency=...)``: the rollout engine, the world
  answering every tool call (faults included), rows built from the framework's record.

It prints rollouts/s of both and their ratio; the issue's goal is adapter >= 0.9 x alone. Each side runs once
first to warm up (imports, connection pools). Usage:
``python benchmarks/bench_frameworks.py [--n 200] [--concurrency 16] [--latency 0.01]``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness import ROOT, start_server

sys.path.insert(0, str(ROOT))


def _get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped", "order_id": order_id}


def openai_agents(url: str) -> tuple[Any, Any]:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    model = OpenAIChatCompletionsModel(model="m", openai_client=AsyncOpenAI(base_url=url, api_key="-"))
    agent = Agent(name="desk", instructions="Help.", tools=[function_tool(_get_order, name_override="get_order")],
                  model=model)
    return agent, lambda message: Runner.run(agent, message)


def langgraph(url: str) -> tuple[Any, Any]:
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

        graph = create_react_agent(ChatOpenAI(model="m", base_url=url, api_key="-"),
                                   [StructuredTool.from_function(_get_order, name="get_order")])
    return graph, lambda message: graph.ainvoke({"messages": [("user", message)]})


def pydantic_ai(url: str) -> tuple[Any, Any]:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("m", provider=OpenAIProvider(base_url=url, api_key="-"))
    agent = Agent(model, tools=[Tool(_get_order, name="get_order")], instructions="Help.")
    return agent, agent.run


def smolagents(url: str) -> tuple[Any, Any]:
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    @tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id.

        Args:
            order_id: the order's id.
        """
        return {"status": "shipped", "order_id": order_id}

    def make() -> Any:
        model = OpenAIServerModel(model_id="m", api_base=url, api_key="-")
        return ToolCallingAgent(tools=[get_order], model=model, verbosity_level=0, max_steps=2)

    return make(), lambda message: make().run(message)


FRAMEWORKS = {"openai-agents": ("agents", openai_agents), "langgraph": ("langgraph", langgraph),
              "pydantic-ai": ("pydantic_ai", pydantic_ai), "smolagents": ("smolagents", smolagents)}


def alone(run: Any, messages: list[str], concurrency: int, sync: bool) -> float:
    """Seconds the framework takes on its own for every message (async: on the one long-lived loop the adapters
    use too, as a service would keep one; a framework's cached async client binds to the loop it first ran on)."""
    from whileai_core.adapters.base import adapters_loop

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
    """Seconds ``wai.simulate`` takes on the adapter for every message (rows checked: every one ok)."""
    import whileai as wai

    started = time.perf_counter()
    data = wai.simulate(obj, asks=messages, repeats=1, budget=len(messages), concurrency=concurrency,
                        simulator=False, progress=False)
    took = time.perf_counter() - started
    bad = [r["error"] for r in data.rows if r["status"] != "ok"]
    if bad:
        raise RuntimeError(f"{len(bad)} rollouts failed: {bad[0]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.01)
    args = parser.parse_args()
    proc, port = start_server(args.latency)
    url = f"http://127.0.0.1:{port}/v1"
    messages = [f"Where is order A{1000 + i}?" for i in range(args.n)]
    warm = messages[: max(1, args.concurrency)]
    print(f"{args.n} rollouts per side, concurrency {args.concurrency}, {args.latency * 1000:.0f} ms per model reply")
    try:
        for name, (module, build) in FRAMEWORKS.items():
            if importlib.util.find_spec(module) is None:
                print(f"{name:14s} skipped: not installed (pip install 'pytest-whileai[agents]')")
                continue
            obj, run = build(url)
            sync = name == "smolagents"
            alone(run, warm, args.concurrency, sync)
            adapted(obj, warm, args.concurrency)
            own = alone(run, messages, args.concurrency, sync)
            ours = adapted(obj, messages, args.concurrency)
            print(f"{name:14s} alone {args.n / own:7.1f} rollouts/s   adapter {args.n / ours:7.1f} rollouts/s   "
                  f"ratio {own / ours:.2f} (goal >= 0.90)")
    finally:
        proc.kill()


if __name__ == "__main__":
    main()
