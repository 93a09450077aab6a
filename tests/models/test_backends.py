"""Backends over real HTTP against the loopback fake server (tests/fakeserver.py), plus config precedence."""

from __future__ import annotations

import email.utils
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from fakeserver import FakeServer

from whileai_core.errors import BackendError
from whileai_core.models import config
from whileai_core.models.anthropic import Anthropic, to_anthropic
from whileai_core.models.endpoint import Endpoint
from whileai_core.models.ollama import Ollama
from whileai_core.models.openai import OpenAI
from whileai_core.models.protocol import tool_schemas
from whileai_core.models.specs import resolve_model, spec_problem
from whileai_core.models.transport import _retry_after, backoff_ceiling

SECRET = "sk-test-DO-NOT-LEAK-0123456789"
LOOKUP = {"type": "function", "function": {
    "name": "lookup_order", "description": "Look up an order.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}
FAST = {"backoff_s": 0.001, "backoff_cap_s": 0.002, "timeout": 2.0}


pytestmark = pytest.mark.usefixtures("clean_config")  # tests/conftest.py: no configured model leaks in


def user(text):
    return [{"role": "user", "content": text}]


# ---- OpenAI-compatible -------------------------------------------------------------------------
def test_openai_round_trip_sends_key_tools_and_params(srv, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    b = OpenAI("gpt-test", url=srv.openai_url, **FAST)
    c = b.complete(user("please lookup order A1001"), tools=[LOOKUP], temperature=0.3, max_tokens=50)
    assert [t.name for t in c.tool_calls] == ["lookup_order"]
    assert c.tool_calls[0].arguments == {"order_id": "A1001"}
    assert c.finish_reason == "tool_calls" and c.attempts == 1
    req = srv.requests[-1]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["authorization"] == f"Bearer {SECRET}"
    assert req["body"]["model"] == "gpt-test" and req["body"]["tools"] == [LOOKUP]
    assert req["body"]["temperature"] == 0.3 and req["body"]["max_tokens"] == 50
    # the assistant message carries wire-form (string) arguments
    msg = c.message()
    assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == {"order_id": "A1001"}


def test_a_run_sends_the_key_of_its_own_frozen_environment(srv):
    """Inside a run (``http.environment`` frozen) a backend works out its URL and headers once and reuses them;
    the next run, with another environment, reads the key afresh."""
    import asyncio
    import contextvars

    from whileai_core.models import http

    b = OpenAI("gpt-test", url=srv.openai_url, **FAST)

    def run(key):
        async def calls():
            for _ in range(3):
                await b.acomplete(user("hello"))
            await http.close_sessions()

        ctx = contextvars.copy_context()
        ctx.run(http.environment.set, {"OPENAI_API_KEY": key})
        ctx.run(asyncio.run, calls())
        return [r["headers"]["authorization"] for r in list(srv.requests)[-3:]]

    assert run("sk-first-run-0123456789") == ["Bearer sk-first-run-0123456789"] * 3
    assert run("sk-second-run-0123456789") == ["Bearer sk-second-run-0123456789"] * 3


def test_openai_base_url_env_and_text_reply(srv, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", srv.openai_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    c = OpenAI("m", **FAST).complete(user("hello there"))
    assert c.text == "echo: hello there" and c.finish_reason == "stop" and not c.tool_calls
    assert "authorization" not in srv.requests[-1]["headers"]


def test_malformed_tool_arguments_are_kept_as_a_model_error_not_infra(srv):
    srv.script({"tool_calls": [{"name": "lookup_order", "arguments": "{order_id: A1"}]})
    c = Endpoint("m", url=srv.openai_url, **FAST).complete(user("x"), tools=[LOOKUP])
    call = c.tool_calls[0]
    assert call.arguments == "{order_id: A1" and "not valid JSON" in call.arguments_error


def test_length_finish_reason(srv):
    srv.script({"text": "cut of", "finish_reason": "length"})
    assert Endpoint("m", url=srv.openai_url, **FAST).complete(user("x")).finish_reason == "length"


def test_ollama_defaults_spec_and_round_trip(srv):
    o = Ollama("llama3")
    assert o.spec == "ollama:llama3" and o.base_url == "http://localhost:11434/v1"
    assert repr(o) == "Ollama(model='llama3', key=none needed)"
    local = Ollama("llama3", url=srv.openai_url, **FAST)
    assert local.complete(user("hi")).text == "echo: hi"
    assert "authorization" not in srv.requests[-1]["headers"] and srv.requests[-1]["body"]["model"] == "llama3"


# ---- retries and infra errors ------------------------------------------------------------------
def test_429_honours_retry_after_then_succeeds(srv):
    srv.fail(2, status=429, retry_after="0.05")
    c = Endpoint("m", url=srv.openai_url, **FAST).complete(user("x"))
    assert c.text == "echo: x" and c.attempts == 3
    assert c.waits == (0.05, 0.05)  # the server's Retry-After, not the (tiny) backoff
    assert srv.count == 3


def test_5xx_retried_with_jittered_backoff_within_ceiling(srv):
    srv.fail(3, status=500)
    b = Endpoint("m", url=srv.openai_url, max_attempts=4, backoff_s=0.004, backoff_cap_s=0.006, timeout=2.0)
    c = b.complete(user("x"))
    assert c.attempts == 4 and len(c.waits) == 3
    ceilings = [backoff_ceiling(i, 0.004, 0.006) for i in (1, 2, 3)]
    assert ceilings == [0.004, 0.006, 0.006]  # 0.004 * 2^(i-1), capped
    assert all(0.0 <= w <= cap for w, cap in zip(c.waits, ceilings))


def test_exhausted_retries_raise_backend_error_with_status(srv):
    srv.fail(3, status=503, body="overloaded")
    b = Endpoint("m", url=srv.openai_url, max_attempts=3, **FAST)
    with pytest.raises(BackendError) as ei:
        b.complete(user("x"))
    err = ei.value
    assert err.status == 503 and err.attempts == 3 and err.retryable
    assert "failed after 3 attempt(s)" in str(err) and "overloaded" in str(err) and "not a wrong answer" in str(err)
    assert srv.count == 3


def test_4xx_is_not_retried(srv):
    srv.fail(1, status=400, body="bad model name")
    with pytest.raises(BackendError) as ei:
        Endpoint("m", url=srv.openai_url, **FAST).complete(user("x"))
    assert ei.value.status == 400 and not ei.value.retryable and srv.count == 1


@pytest.mark.parametrize("fault", [{"malformed": True}, {"drop": True}])
def test_malformed_body_and_dropped_connection_are_retried(srv, fault):
    srv.fail(1, **fault)
    c = Endpoint("m", url=srv.openai_url, **FAST).complete(user("x"))
    assert c.text == "echo: x" and c.attempts == 2


def test_timeout_is_retried_then_raised(srv):
    srv.fail(2, hang=1.0)
    b = Endpoint("m", url=srv.openai_url, max_attempts=2, backoff_s=0.001, backoff_cap_s=0.001, timeout=0.1)
    with pytest.raises(BackendError) as ei:
        b.complete(user("x"))
    assert ei.value.status is None and "timed out" in str(ei.value)


def test_connection_refused_is_backend_error():
    with FakeServer() as s:
        url = s.openai_url
    b = Endpoint("m", url=url, max_attempts=2, **{k: v for k, v in FAST.items()})
    with pytest.raises(BackendError, match="Cannot connect to host"):
        b.complete(user("x"))


def test_retry_after_forms():
    assert _retry_after({"retry-after": "2"}, 60.0) == 2.0
    assert _retry_after({"retry-after": "999"}, 60.0) == 60.0  # clipped to the cap
    assert _retry_after({"retry-after-ms": "250", "retry-after": "9"}, 60.0) == 0.25
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25.0 <= _retry_after({"retry-after": when}, 60.0) <= 30.0
    assert _retry_after({"retry-after": "soon"}, 60.0) is None and _retry_after({}, 60.0) is None


def test_concurrent_calls_share_one_pooled_client(srv):
    b = Endpoint("m", url=srv.openai_url, **FAST)
    with ThreadPoolExecutor(16) as pool:
        texts = list(pool.map(lambda i: b.complete(user(f"q{i}")).text, range(64)))
    assert texts == [f"echo: q{i}" for i in range(64)]
    assert srv.count == 64
    b.close()
    assert b.complete(user("after close")).text == "echo: after close"


# ---- Anthropic ---------------------------------------------------------------------------------
def test_anthropic_translation_of_history_and_tools():
    history = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "lookup A1"},
        {"role": "assistant", "content": "checking", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order_id": "A1"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "ok"}'},
        {"role": "user", "content": "and?"},
    ]
    system, msgs, tools = to_anthropic(history, [LOOKUP])
    assert system == "be brief"
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]  # tool result + next user merged
    assert msgs[1]["content"] == [{"type": "text", "text": "checking"},
                                  {"type": "tool_use", "id": "c1", "name": "lookup_order", "input": {"order_id": "A1"}}]
    assert msgs[2]["content"][0] == {"type": "tool_result", "tool_use_id": "c1", "content": '{"status": "ok"}'}
    assert msgs[2]["content"][1] == {"type": "text", "text": "and?"}
    assert tools == [{"name": "lookup_order", "description": "Look up an order.",
                      "input_schema": LOOKUP["function"]["parameters"]}]


def test_anthropic_round_trip_headers_and_clamped_temperature(srv):
    a = Anthropic("claude-test", api_key=SECRET, url=srv.openai_url, **FAST)
    c = a.complete([{"role": "system", "content": "sys"}, *user("lookup order B22")], tools=[LOOKUP],
                   temperature=1.7, max_tokens=64)
    assert c.tool_calls[0].name == "lookup_order" and c.tool_calls[0].arguments == {"order_id": "B22"}
    assert c.finish_reason == "tool_calls"
    req = srv.requests[-1]
    assert req["path"] == "/v1/messages"
    assert req["headers"]["x-api-key"] == SECRET and req["headers"]["anthropic-version"] == "2023-06-01"
    assert req["body"]["temperature"] == 1.0 and req["body"]["system"] == "sys" and req["body"]["max_tokens"] == 64
    srv.script({"text": "partial", "finish_reason": "length"})
    assert a.complete(user("x")).finish_reason == "length"


# ---- keys never leak ---------------------------------------------------------------------------
def test_key_never_in_repr_errors_or_logs(srv, monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    b = OpenAI("m", url=srv.openai_url, max_attempts=2, **FAST)
    given = OpenAI("m", api_key=SECRET, url=srv.openai_url, **FAST)
    assert repr(b) == "OpenAI(model='m', key=OPENAI_API_KEY)" and repr(given) == "OpenAI(model='m', key=given)"
    assert SECRET not in repr(given) + str(given)
    # a server that echoes the key back in its error body
    srv.fail(1, status=401, body=f"invalid key {SECRET}")
    with pytest.raises(BackendError) as ei:
        b.complete(user("x"))
    assert SECRET not in str(ei.value) and "<redacted>" in str(ei.value) and "OPENAI_API_KEY" in str(ei.value)
    assert ei.value.__cause__ is None and ei.value.__suppress_context__
    srv.fail(2, status=500, body=f"oops {SECRET}")
    with caplog.at_level(logging.INFO, logger="whileai.backends"), pytest.raises(BackendError) as ei:
        b.complete(user("x"))
    assert SECRET not in str(ei.value)
    assert "retry 1 of 1" in caplog.text and "<redacted>" in caplog.text and SECRET not in caplog.text
    config.configure(agent=given)
    assert SECRET not in repr(config.settings)


def test_endpoint_never_sends_the_openai_key(srv, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    monkeypatch.delenv("WHILEAI_ENDPOINT_API_KEY", raising=False)
    Endpoint("m", url=srv.openai_url, **FAST).complete(user("x"))
    assert "authorization" not in srv.requests[-1]["headers"]
    monkeypatch.setenv("VLLM_API_KEY", "vllm-key-1")
    e = Endpoint("m", url=srv.openai_url, **FAST)
    e.complete(user("x"))
    assert srv.requests[-1]["headers"]["authorization"] == "Bearer vllm-key-1"
    assert repr(e) == f"Endpoint(model='m', url='{srv.openai_url}', key=VLLM_API_KEY)"


# ---- specs and arguments -----------------------------------------------------------------------
def test_resolve_model_forms():
    assert resolve_model("openai:gpt-4.1-mini") == OpenAI("gpt-4.1-mini")
    assert resolve_model("anthropic:claude-x").spec == "anthropic:claude-x"
    e = resolve_model("vllm:Qwen/Qwen3-4B@http://10.0.0.2:8000/v1")
    assert isinstance(e, Endpoint) and e.model == "Qwen/Qwen3-4B" and e.url == "http://10.0.0.2:8000/v1"
    assert e.spec == "vllm:Qwen/Qwen3-4B@http://10.0.0.2:8000/v1" and e.cache_name == "vllm:Qwen/Qwen3-4B"
    assert resolve_model("sglang:m@https://h/v1").provider == "sglang"
    assert resolve_model("ollama:llama3.1:8b").model == "llama3.1:8b"
    backend = OpenAI("x")
    assert resolve_model(backend) is backend


@pytest.mark.parametrize("spec, words", [
    ("openai/gpt-4.1-mini", "agent='openai:gpt-4.1-mini'"),
    ("gpt-4.1-mini", "agent='openai:gpt-4.1-mini'"),
    ("together:llama", "'together' is not a provider"),
    ("vllm:qwen", "needs the server URL"),
    ("openai:", "names no model"),
    ("", "leave it unset"),
    ("http://h:8000/v1", "vllm:<model>@http://h:8000/v1"),
])
def test_bad_specs_name_the_fix(spec, words):
    with pytest.raises(ValueError) as ei:
        resolve_model(spec)
    assert words in str(ei.value)
    assert spec_problem(spec, role="judge").startswith("judge=")


def test_bad_arguments_name_the_argument(srv):
    with pytest.raises(ValueError, match=r"url="):
        Endpoint("m")
    with pytest.raises(ValueError, match=r"max_attempts= must be an int >= 1; got 0"):
        OpenAI("m", max_attempts=0)
    with pytest.raises(ValueError, match=r"timeout= must be a number >= 0"):
        OpenAI("m", timeout=-1)
    b = Endpoint("m", url=srv.openai_url)
    with pytest.raises(ValueError, match=r"trial= must be an int >= 0"):
        b.complete(user("x"), trial=-1)
    with pytest.raises(ValueError, match=r"messages="):
        b.complete([])
    with pytest.raises(TypeError, match=r"tools\[0\]"):
        tool_schemas([42])


def test_tool_schema_normalisation():
    bare = {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}}}
    anth = {"name": "g", "input_schema": {"type": "object", "properties": {"a": {"type": "string"}}}}

    class T:  # duck-typed like whileai_core.tools.Tool
        schema = LOOKUP

    out = tool_schemas([LOOKUP, bare, anth, T()])
    assert [s["function"]["name"] for s in out] == ["lookup_order", "f", "g", "lookup_order"]
    assert out[2]["function"]["parameters"] == anth["input_schema"]


# ---- configuration -----------------------------------------------------------------------------
def test_precedence_call_context_configure_env(monkeypatch):
    monkeypatch.setenv("WHILEAI_AGENT", "openai:from-env")
    assert config.lookup("agent") == ("openai:from-env", "env:WHILEAI_AGENT")
    config.configure(agent="openai:from-configure")
    assert config.lookup("agent") == ("openai:from-configure", "configure")
    with config.context(agent="openai:from-context"):
        assert config.lookup("agent") == ("openai:from-context", "context")
        with config.context(agent="openai:inner"):
            assert config.get("agent") == "openai:inner"
        assert config.get("agent") == "openai:from-context"
        assert config.lookup("agent", "openai:from-call") == ("openai:from-call", "call")
    assert config.get("agent") == "openai:from-configure"
    config.configure(agent=None)
    assert config.get("agent") == "openai:from-env"


def test_configure_is_atomic_and_names_the_role():
    config.configure(judge="openai:j1")
    with pytest.raises(ValueError, match=r"simulator='openai/x'"):
        config.configure(agent="openai:a1", judge="openai:j2", simulator="openai/x")
    assert config.get("agent") is None and config.get("judge") == "openai:j1"
    with pytest.raises(TypeError, match="unexpected keyword argument 'agnet'"):
        config.configure(agnet="openai:a")
    with pytest.raises(ValueError, match="judge='nope'"):
        config.configure(judge="nope")


def test_bad_env_value_is_named(monkeypatch):
    monkeypatch.setenv("WHILEAI_JUDGE", "gpt-4o")
    with pytest.raises(ValueError, match="WHILEAI_JUDGE='gpt-4o'"):
        config.get("judge")


def test_settings_repr_and_read_only(tmp_path):
    from whileai_core.models.cache import Cassette

    config.configure(agent="openai:gpt-4.1-mini", simulator=False, cache=Cassette(tmp_path / "c.jsonl"))
    text = repr(config.settings)
    assert text.startswith("Settings(agent=openai:gpt-4.1-mini (configure), judge=unset")
    assert "simulator=False (configure)" in text and "mode='auto'" in text
    assert config.settings.agent == "openai:gpt-4.1-mini" and config.settings.source("judge") == "unset"
    assert config.settings.to_dict()["agent"] == {"value": "openai:gpt-4.1-mini", "source": "configure"}
    with pytest.raises(AttributeError, match="read-only"):
        config.settings.agent = "x"  # type: ignore[misc]


def test_facade_names_resolve():
    import whileai as wai

    assert wai.OpenAI is OpenAI and wai.Endpoint is Endpoint and wai.Anthropic is Anthropic
    assert wai.configure is config.configure and wai.settings is config.settings
    from whileai_core.grade.judge import Judge

    assert wai.Judge is Judge


def test_anthropic_adapts_to_a_400_about_temperature_or_length(srv):
    a = Anthropic("claude-test", api_key="k-1", url=srv.openai_url, **FAST)
    srv.fail(1, status=400, body="temperature is not supported with this model")
    srv.fail(2, status=400, body="max_tokens: 4096 > 1024, which is the maximum allowed")
    c = a.complete(user("x"), temperature=0.5, max_tokens=4096)
    assert c.text == "echo: x"
    bodies = [r["body"] for r in srv.requests]
    assert "temperature" in bodies[0] and "temperature" not in bodies[1]
    assert [b["max_tokens"] for b in bodies] == [4096, 4096, 2048, 1024]
    srv.fail(1, status=400, body="messages: roles must alternate")  # nothing to adapt: raised as it came
    with pytest.raises(BackendError, match="roles must alternate"):
        a.complete(user("x"))
    srv.fail(5, status=400, body="prompt is too long")
    with pytest.raises(BackendError, match="too long"):
        Anthropic("c", api_key="k", url=srv.openai_url, min_max_tokens=256, **FAST).complete(user("x"), max_tokens=512)
    assert [r["body"]["max_tokens"] for r in list(srv.requests)[-2:]] == [512, 256]


def test_url_credentials_never_shown(srv):
    e = Endpoint("m", url=f"http://bob:pa55word@127.0.0.1:{srv.port}/v1", max_attempts=1, **FAST)
    assert "pa55word" not in repr(e) + e.spec and e.spec == f"vllm:m@http://127.0.0.1:{srv.port}/v1"
    srv.fail(1, status=500)
    with pytest.raises(BackendError) as ei:
        e.complete(user("x"))
    assert "pa55word" not in str(ei.value) + str(ei.value.url)
    assert srv.requests[-1]["headers"]["authorization"].startswith("Basic ")  # httpx sent them as basic auth


def test_importing_the_model_side_loads_no_httpx():
    import subprocess
    import sys

    code = ("import sys, whileai as wai\n"
            "import whileai_core.models.specs, whileai_core.models.anthropic, whileai_core.models.endpoint, "
            "whileai_core.models.config, whileai_core.models.cache, whileai_core.grade.judge\n"
            "import whileai_core.simulate.model_agent, whileai_core.simulate.writer\n"
            "wai.configure(agent='openai:gpt-4.1-mini'); wai.OpenAI('x'); repr(wai.settings)\n"
            "print(sorted(m for m in ('httpx', 'httpcore', 'numpy', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_dead_host_breaker_fails_fast_after_strikes():
    with FakeServer() as s:
        url = s.openai_url  # the port is closed once the server stops
    b = Endpoint("m", url=url, max_attempts=2, dead_host_strikes=3, dead_host_probe_s=3600.0, **FAST)
    for _ in range(3):
        with pytest.raises(BackendError, match="failed after 2 attempt"):
            b.complete(user("x"))
    with pytest.raises(BackendError, match="looks dead: 3 calls in a row could not reach it") as ei:
        b.complete(user("x"))
    assert ei.value.attempts == 0 and "stopped instead of retrying" in str(ei.value)


def test_breaker_counts_404_not_5xx_and_a_probe_success_closes_it(srv):
    b = Endpoint("m", url=srv.openai_url, max_attempts=1, dead_host_strikes=2, dead_host_probe_s=3600.0, **FAST)
    srv.fail(3, status=503)
    for _ in range(3):  # busy, not dead: never trips
        with pytest.raises(BackendError, match="HTTP 503"):
            b.complete(user("x"))
    srv.fail(2, status=404, body="model not deployed")
    for _ in range(2):
        with pytest.raises(BackendError, match="HTTP 404"):
            b.complete(user("x"))
    with pytest.raises(BackendError, match="looks dead"):
        b.complete(user("x"))
    assert srv.count == 5
    probing = Endpoint("m", url=srv.openai_url, max_attempts=3, dead_host_strikes=1, dead_host_probe_s=0.0, **FAST)
    srv.fail(1, status=410)
    with pytest.raises(BackendError, match="HTTP 410"):
        probing.complete(user("x"))
    assert probing.complete(user("probe")).text == "echo: probe"  # the probe gets through and closes it
    assert probing._breaker().strikes == 0
