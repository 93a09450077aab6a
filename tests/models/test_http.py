"""The HTTP client under backends: total deadline, malformed 200s as infra errors, redaction, one SSL context."""

from __future__ import annotations

import base64
import json
import logging
import subprocess
import sys
import time

import pytest
import shop

import whileai as wai
from whileai_core.errors import BackendError
from whileai_core.models.cache import Cassette
from whileai_core.models.endpoint import Endpoint
from whileai_core.models.http import redact

FAST = dict(backoff_s=0.001, backoff_cap_s=0.002)


def user(text):
    return [{"role": "user", "content": text}]


def test_a_dripping_server_is_cut_at_the_total_deadline(srv):
    srv.fail(1, drip=0.5)  # one byte every 0.5 s: a per-read timeout would never fire
    b = Endpoint("m", url=srv.openai_url, timeout=1.0, max_attempts=1, **FAST)
    t0 = time.monotonic()
    with pytest.raises(BackendError, match=r"timed out: no complete reply within 1 s") as ei:
        b.complete(user("x"))
    # the whole call is capped, not each read: uncapped, the ~240-byte body drips for ~120 s; the bound is wide
    # so a loaded machine cannot fail it (the cap answers in ~1 s)
    assert time.monotonic() - t0 < 30.0
    assert ei.value.retryable


def test_retries_share_a_separate_budget(srv):
    srv.fail(40, hang=0.6)
    b = Endpoint("m", url=srv.openai_url, timeout=0.3, max_attempts=40, retry_budget_s=0.5, **FAST)
    t0 = time.monotonic()
    with pytest.raises(BackendError, match=r"retry_budget_s=0.5 spent|failed after"):
        b.complete(user("x"))
    # without the budget the 40 attempts take >= 12 s; with it ~0.8 s. The verdict is the attempt count (a
    # loaded machine makes fewer attempts, never more); the time bound only has to sit below the 12 s
    assert time.monotonic() - t0 < 8.0
    assert srv.count < 10


@pytest.mark.parametrize("body, what", [
    (b'{"choices": [{"message": {"content": "hi"}}], "usage": "lots"}', "usage is str"),
    (b'{"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": "many"}}', "usage.prompt_tokens"),
    (b'{"choices": [{"message": {"content": null, "tool_calls": {"id": 1}}}]}', "tool_calls is not a list"),
    (b'{"choices": [{"message": {"tool_calls": [{"function": "lookup"}]}}]}', "function is str"),
    (b'{"choices": [{"message": "hi"}]}', "message is str"),
    (b'<html>bad gateway</html>', "not JSON"),
])
def test_malformed_200_bodies_are_backend_errors(srv, body, what):
    srv.fail(1, raw=body)
    with pytest.raises(BackendError, match=what):
        Endpoint("m", url=srv.openai_url, max_attempts=1, **FAST).complete(user("x"))


def test_malformed_200_bodies_make_infra_error_rows_not_agent_errors(srv):
    srv.fail(3, raw=b'{"choices": [{"message": {"content": "hi"}}], "usage": {"completion_tokens": [1]}}')
    agent = Endpoint("m", url=srv.openai_url, max_attempts=1, **FAST)
    data = wai.simulate(agent, tools=[shop.ping], repeats=1, budget=3, concurrency=1, progress=False, cache=False)
    assert [r["status"] for r in data.rows] == ["infra_error"] * 3
    assert all("malformed" in r["error"] for r in data.rows)


def test_redact_covers_every_credential_form():
    pair = base64.b64encode(b"bob:pa55word").decode()
    text = (f"url http://bob:pa55word@10.0.0.1:8000/v1 header Authorization: Basic {pair} and Bearer sk-abcdef123 "
            "query https://h/v1?key=AIzaSecret123&x=1 and ?api_key=q-SECRET-9 body {\"api_key\": \"sk-json-777\"} "
            "x-api-key: ant-secret-55")
    out = redact(text, ["pa55word"])
    for secret in ("pa55word", pair, "sk-abcdef123", "AIzaSecret123", "q-SECRET-9", "sk-json-777", "ant-secret-55",
                   "bob:"):
        assert secret not in out, (secret, out)
    assert "x=1" in out and "10.0.0.1:8000/v1" in out  # only the secrets go
    assert redact(base64.b64encode(b"raw-secret-key").decode(), ["raw-secret-key"]) == "<redacted>"


def test_no_credential_survives_in_error_log_row_or_cassette(srv, tmp_path, caplog):
    key = "sk-live-DO-NOT-LEAK-42"
    pair = base64.b64encode(b"bob:pa55word").decode()
    leaky = (f"echo: Authorization: Basic {pair} / Bearer {key} / http://bob:pa55word@host/?api_key={key} / "
             f"raw {key} / password=pa55word")
    url = f"http://bob:pa55word@127.0.0.1:{srv.port}/v1"
    agent = Endpoint("m", url=url, api_key=key, max_attempts=2, **FAST)
    cassette = Cassette(tmp_path / "c.jsonl", mode="record")
    srv.fail(4, status=500, body=leaky)
    with caplog.at_level(logging.DEBUG):
        data = wai.simulate(agent, tools=[shop.ping], repeats=1, budget=2, concurrency=1, progress=False,
                            cache=cassette, output=tmp_path / "rows.jsonl")
    assert len(data.rows) == 2  # read back from the file
    srv_reply_ok = wai.simulate(agent, tools=[shop.ping], repeats=1, budget=1, seed=5, progress=False, cache=cassette)
    cassette.close()
    assert [r["status"] for r in data.rows] == ["infra_error"] * 2 and srv_reply_ok.rows[0]["status"] == "ok"
    assert srv.requests[-1]["headers"]["authorization"] == f"Bearer {key}"  # the key did go where it belongs
    everything = "\n".join([caplog.text, json.dumps(data.rows), (tmp_path / "rows.jsonl").read_text(),
                            (tmp_path / "c.jsonl").read_text(), repr(agent), agent.spec, *data.warnings])
    for secret in (key, "pa55word", pair, "bob:"):
        assert secret not in everything, secret


def test_http_calls_build_no_ssl_context_and_load_nothing_at_import():
    code = ("import sys, ssl, whileai as wai\n"
            "import whileai_core.models.specs, whileai_core.models.anthropic, whileai_core.models.endpoint, "
            "whileai_core.simulate.run, whileai_core.simulate.engine\n"
            "print(sorted(m for m in ('aiohttp', 'httpx') if m in sys.modules))\n"
            "import aiohttp  # aiohttp builds its one verified context here, once per process\n"
            "built = []\n"
            "real = ssl.SSLContext.load_verify_locations\n"
            "ssl.SSLContext.load_verify_locations = lambda self, *a, **k: built.append(1) or real(self, *a, **k)\n"
            "ssl.SSLContext.set_default_verify_paths = lambda self: built.append(1)\n"
            "sys.path.insert(0, 'tests')\n"
            "from fakeserver import FakeServer\n"
            "with FakeServer() as s:\n"
            "    for i in range(3):\n"
            "        b = wai.Endpoint('m', url=s.openai_url, timeout=5 + i)  # a new backend each time\n"
            "        b.complete([{'role': 'user', 'content': 'x'}])\n"
            "print(len(built))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "0"]


def test_sync_and_async_calls_share_one_code_path(srv):
    import asyncio

    b = Endpoint("m", url=srv.openai_url, **FAST)

    async def many():
        from whileai_core.models import http

        try:
            return await asyncio.gather(*(b.acomplete(user(f"q{i}")) for i in range(20)))
        finally:
            await http.close_sessions()

    got = asyncio.run(many())
    assert [c.text for c in got] == [f"echo: q{i}" for i in range(20)]
    assert b.complete(user("sync")).text == "echo: sync"


# -- the loop, the body codec and the run's environment -------------------------------------------------------
def test_new_loop_is_uvloop_when_installed_and_asyncio_when_asked(monkeypatch):
    import asyncio

    from whileai_core.models import http

    uvloop = pytest.importorskip("uvloop")
    loop = http.new_loop()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()
    monkeypatch.setenv("WHILEAI_EVENT_LOOP", "asyncio")
    loop = http.new_loop()
    try:
        assert not isinstance(loop, uvloop.Loop) and isinstance(loop, asyncio.AbstractEventLoop)
    finally:
        loop.close()


@pytest.mark.parametrize("fast", [True, False], ids=["orjson", "json"])
def test_body_codec_round_trips_and_refuses_what_json_cannot_hold(fast, monkeypatch):
    from whileai_core.models import http

    if fast:
        pytest.importorskip("orjson")
        dumps, loads = http._fast_codec()
    else:
        monkeypatch.setitem(sys.modules, "orjson", None)  # as if it were not installed
        dumps, loads = http._fast_codec()
        assert (dumps, loads) == (http._std_dumps, json.loads)
    body = {"model": "m", "messages": [{"role": "user", "content": "Zoë 🐋 «x»"}], "n": 2**70, "t": 0.7}
    raw = dumps(body)
    assert isinstance(raw, bytes) and json.loads(raw) == body == loads(raw)  # 2**70: orjson hands it to json
    assert "Zoë".encode() in raw  # UTF-8, not \u escapes
    with pytest.raises(TypeError):
        dumps({"s": {1, 2}})  # a set is no JSON: refused, never stringified into the request


def test_a_run_reads_the_key_once_when_it_starts(srv, monkeypatch):
    monkeypatch.setenv("WHILEAI_ENDPOINT_API_KEY", "key-at-start")

    @wai.tool
    def rotate(order_id: str) -> dict:
        """Look up an order by id (and rotate the key mid-run)."""
        import os

        os.environ["WHILEAI_ENDPOINT_API_KEY"] = "key-rotated-mid-run"
        return {"status": "ok"}

    agent = wai.Endpoint("m", url=srv.openai_url, max_attempts=1)
    data = wai.simulate(agent, tools=[rotate], asks=["Please rotate order A1001"], repeats=1, budget=1,
                        concurrency=1, cache=False, progress=False, execute=True)
    rows = list(data)
    assert rows[0]["status"] == "ok" and rows[0]["steps"][0]["tool"] == "rotate"
    auth = [r["headers"].get("authorization") for r in srv.requests if r["path"].endswith("/chat/completions")]
    assert auth == ["Bearer key-at-start"] * 2  # the call after the rotation still carries the run's key
    assert agent._key() == "key-rotated-mid-run"  # outside a run, each call reads the environment
