"""MCP adapter (issue 27 item 2): tools listed from an MCP server the test starts, over stdio or over
streamable HTTP on 127.0.0.1, become whileai tools; their calls pass through the world (faults first), the
server answering the rest under execute=."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the agents extra (mcp) is not installed: pip install 'pytest-whileai[agents]'")

import whileai as wai
from tests.adapters.harness import check_framework
from whileai_core.defaults import MCP_CALL_TIMEOUT_S
from whileai_core.errors import BackendError, InvalidArgument
from whileai_core.models.endpoint import Endpoint

SERVER = str(Path(__file__).with_name("mcp_shop_server.py"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int, proc: subprocess.Popen) -> None:
    """Wait (at most MCP_CALL_TIMEOUT_S) until the server accepts connections on 127.0.0.1:port."""
    deadline = time.monotonic() + MCP_CALL_TIMEOUT_S
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"the MCP server did not listen on 127.0.0.1:{port} (exit {proc.poll()})")


@pytest.fixture(scope="module")
def http_url():
    """An MCP server over streamable HTTP on 127.0.0.1 (a child process, killed at the end)."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, SERVER, "--http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        _listening(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(timeout=MCP_CALL_TIMEOUT_S)


@pytest.fixture(scope="module", params=["stdio", "http"])
def shop(request):
    if request.param == "stdio":
        with wai.mcp_tools(sys.executable, SERVER) as tools:
            yield tools
    else:
        with wai.mcp_tools(request.getfixturevalue("http_url")) as tools:
            yield tools


def test_mcp_tools_are_listed_and_called_outside_a_rollout(shop):
    (get_order,) = shop
    assert get_order.name == "get_order" and get_order.required == ["order_id"]
    assert get_order(order_id="A1") == {"status": "ok", "order_id": "A1", "state": "shipped", "source": "mcp"}


def test_a_model_agent_on_mcp_tools_meets_the_failing_world(shop):
    def make_agent(base_url: str):
        return Endpoint("fake", url=base_url, max_attempts=1)

    check_framework(make_agent, tools=list(shop))


def test_the_server_answers_what_the_faults_let_through(shop):
    def agent(message):
        result = shop[0](order_id="A100")  # the agent's own code calls the MCP tool directly
        return f"got {result.get('status') if isinstance(result, dict) else 'garbled'}"

    data = wai.simulate(agent, tools=list(shop), execute=shop.execute, simulator=False, budget=40, repeats=2)
    for r in data.rows:
        (step,) = r["steps"]
        if r["faults_scheduled"]:
            assert r["faults_delivered"] == 1 and step["result"] != {"status": "ok", "order_id": "A100",
                                                                     "state": "shipped", "source": "mcp"}
        else:
            assert step["result"]["source"] == "mcp"  # the real server's answer


def test_an_http_url_takes_no_arguments_and_a_closed_port_is_a_backend_error():
    with pytest.raises(InvalidArgument, match="no arguments"):
        wai.mcp_tools("http://127.0.0.1:9/mcp", "--flag")
    with pytest.raises(BackendError, match="did not start or list its tools: .*Connect"):
        wai.mcp_tools(f"http://127.0.0.1:{_free_port()}/mcp", timeout_s=10)


def test_an_agents_own_mcp_client_meets_the_failing_world(http_url):
    """An agent that talks to the MCP server through its own ``mcp`` client session (as the frameworks' MCP
    integrations do): inside a rollout the world answers its calls (fault first) and records them; outside, the
    server answers."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def ask(arguments):
        async with streamable_http_client(http_url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            answer = await session.call_tool("get_order", arguments)
        return json.loads(answer.content[0].text) if answer.content[0].text[:1] == "{" else answer.content[0].text

    async def agent(message):
        result = await ask({"order_id": "A100"})
        return f"got {result.get('status') if isinstance(result, dict) else 'garbled'}"

    with wai.mcp_tools(http_url) as tools:  # the world's tools: the server's own schemas (and the hook)
        data = wai.simulate(agent, tools=list(tools), simulator=False, budget=12, repeats=1, concurrency=8)
    rows = data.rows  # a session per rollout (connect, initialize, call): 12 keep it to seconds
    assert len(rows) == 12 and all(r["status"] == "ok" for r in rows)
    faulted = [r for r in rows if r["faults_scheduled"]]
    assert {r["faults"]["mode"] for r in faulted} >= {"error", "timeout", "denied", "malformed"}
    assert all(r["faults_delivered"] == 1 for r in faulted)
    for r in rows:
        (step,) = r["steps"]
        said = step["result"].get("status") if isinstance(step["result"], dict) else "garbled"
        assert step["tool"] == "get_order" and r["final_text"] == f"got {said}"
        assert "source" not in (step["result"] if isinstance(step["result"], dict) else {})  # the world's answer
    outside = asyncio.run(ask({"order_id": "A1"}))
    assert outside["source"] == "mcp"  # outside a rollout: the server's own


def test_an_agents_sdk_agent_with_an_mcp_server_meets_the_failing_world(http_url):
    """An OpenAI Agents SDK agent whose tools come from an MCP server (``mcp_servers=[...]``, passed
    unconnected: the adapter connects it on its loop): the SDK's own MCP client calls are answered by the world,
    and the row's steps are the SDK's record of them (its text content items)."""
    pytest.importorskip("agents", reason="the agents extra (openai-agents) is not installed")
    from agents import Agent, OpenAIChatCompletionsModel, set_tracing_disabled
    from agents.mcp import MCPServerStreamableHttp
    from openai import AsyncOpenAI

    from tests.fakeserver import FakeServer
    from whileai_core.adapters.base import adapters_loop

    set_tracing_disabled(True)
    server = MCPServerStreamableHttp(params={"url": http_url}, cache_tools_list=True)
    try:
        with wai.mcp_tools(http_url) as tools, FakeServer() as model_server:
            model = OpenAIChatCompletionsModel(model="fake", openai_client=AsyncOpenAI(
                base_url=model_server.openai_url, api_key="x"))
            desk = Agent(name="desk", instructions="Help customers with orders.", mcp_servers=[server], model=model)
            data = wai.simulate(desk, tools=list(tools), simulator=False, budget=12, repeats=1, concurrency=4)
    finally:
        asyncio.run_coroutine_threadsafe(server.cleanup(), adapters_loop()).result(MCP_CALL_TIMEOUT_S)
    faulted = [r for r in data.rows if r["faults_scheduled"]]
    assert all(r["status"] == "ok" for r in data.rows) and faulted
    assert all(r["faults_delivered"] == 1 for r in faulted)
    for r in data.rows:
        (step,) = r["steps"]
        text = step["result"]["text"]  # the SDK's record: the MCP result's text content
        if r["faults_scheduled"] and r["faults"]["mode"] != "malformed":
            assert json.loads(text)["status"] == r["faults"]["mode"]
        assert "mcp" not in text  # the world's answer, never the server's ("source": "mcp")
