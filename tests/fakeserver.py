"""A loopback model server for tests and benchmarks: OpenAI-compatible and Anthropic-shaped.

It listens on 127.0.0.1 on a free port (never anything else), speaks HTTP/1.1 with keep-alive on one asyncio
loop in a background thread, and answers

* ``POST /v1/chat/completions`` in the OpenAI chat-completions shape, and
* ``POST /v1/messages`` in the Anthropic Messages shape, and
* any other route through ``router(method, path, headers, raw_body) -> (status, payload)`` when one is given
  (a bytes payload is sent as it is)
  (the While platform fake in tests/platform/fake_platform.py uses it); queued faults apply to those too.

What it answers, in order: a queued fault (``fail(...)``), else a queued scripted reply (``script(...)``),
else ``responder(request) -> reply`` (by default a small deterministic tool-calling agent, see
``default_reply``). Replies are provider-neutral dicts ``{"text", "tool_calls": [{"name","arguments"}],
"finish_reason"}`` rendered into the right wire shape. Faults: ``status`` (429/500/..., with ``retry_after``),
``hang`` seconds (for client timeouts), ``malformed`` (a 200 whose body is not JSON), ``raw`` (a 200 with
these exact body bytes), ``drip`` (a 200 whose body arrives one byte every ``drip`` seconds), ``drop`` (close
the connection without answering). Every request is logged (bounded) with its headers and JSON body;
``peak_in_flight`` is the most model requests it was answering at once.

Run as a script for the benchmark: ``python tests/fakeserver.py --latency 0.02`` prints ``PORT <n>``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import re
import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any

from whileai_core.defaults import FAKE_SERVER_MAX_BODY, FAKE_SERVER_REQUEST_LOG

Reply = dict[str, Any]
Router = Callable[[str, str, Mapping[str, str], bytes], "tuple[int, Any]"]
_ID = re.compile(r"\b[A-Za-z]*-?\d{2,}\b")
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def default_reply(request: Mapping[str, Any], protocol: str) -> Reply:
    """A deterministic stand-in model.

    With tools and no tool result yet in the conversation, it calls the tool whose name words appear in the
    last user message (else the first tool), filling required parameters with the first id-like token.
    After a tool result it replies ``"Done: <tool> returned <status>."``; with no tools it echoes.
    """
    if protocol == "openai" and is_smolagents(request):
        return smolagents_reply(request, protocol)
    messages = request.get("messages") or []
    tools = request.get("tools") or []
    names, required = [], []
    for t in tools:
        if protocol == "anthropic":
            names.append(t.get("name", ""))
            required.append((t.get("input_schema") or {}).get("required") or [])
        else:
            fn = t.get("function") or {}
            names.append(fn.get("name", ""))
            required.append((fn.get("parameters") or {}).get("required") or [])
    last_user, results, last_tool = "", [], ""
    for m in messages:
        content = m.get("content")
        if m.get("role") == "user":
            if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
                results.extend(str(b.get("content", "")) for b in content if b.get("type") == "tool_result")
            else:
                last_user = _user_text(content)
        elif m.get("role") == "tool":
            results.append(str(content))
        elif m.get("role") == "assistant":
            for tc in m.get("tool_calls") or ():
                last_tool = (tc.get("function") or {}).get("name", "")
            if isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        last_tool = b.get("name", "")
    if results:
        status = "ok"
        try:
            value = json.loads(results[-1])
            if isinstance(value, dict):
                status = str(value.get("status", "ok"))
        except ValueError:
            status = "unreadable"
        return {"text": f"Done: {last_tool} returned {status}."}
    if not names:
        return {"text": f"echo: {last_user}"}
    low = last_user.lower()
    pick = 0
    for i, name in enumerate(names):
        words = [w for w in name.lower().split("_") if len(w) > 2]
        if words and all(w in low for w in words):
            pick = i
            break
    found = _ID.search(last_user)
    ident = found.group(0) if found else "the record"
    args = {p: ident for p in required[pick]}
    return {"tool_calls": [{"name": names[pick], "arguments": args}]}


_SMOL_STATUS = re.compile(r"'status': '(\w+)'")
_SMOL_DEF = re.compile(r"^def (\w+)\((.*?)\)", re.MULTILINE)


def message_texts(request: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of each message (content blocks joined)."""
    return [(str(m.get("role")), _user_text(m.get("content")) if not isinstance(m.get("content"), list) else
             "".join(str(b.get("text", "")) for b in m["content"] if isinstance(b, dict)))
            for m in request.get("messages") or []]


def is_smolagents(request: Mapping[str, Any]) -> bool:
    """Whether a chat-completions request comes from a smolagents agent: a ``ToolCallingAgent`` declares its
    ``final_answer`` tool; a ``CodeAgent`` sends no tools and stops at ``Calling tools:``."""
    names = {(t.get("function") or {}).get("name") for t in request.get("tools") or ()}
    return "final_answer" in names or "Calling tools:" in (request.get("stop") or ())


def smolagents_reply(request: Mapping[str, Any], protocol: str, *, worse: bool = False) -> Reply:
    """The stand-in model in smolagents' own text protocol (its memory comes back as ``Observation:`` user
    messages): call the tool the task names, then give the final answer ``Done: <tool> returned <status>.``
    (``worse``: always ``ok``). A ``ToolCallingAgent`` gets tool calls (``final_answer`` last); a
    ``CodeAgent`` gets ``<code>`` blocks that call the tool and print its result, then ``final_answer(...)``."""
    texts = message_texts(request)
    last = texts[-1][1] if texts else ""
    code = not any((t.get("function") or {}).get("name") == "final_answer" for t in request.get("tools") or ())
    if last.startswith("Observation:"):
        seen = _SMOL_STATUS.search(last)
        called = re.findall(r"'name': '(\w+)'", next((t for r, t in reversed(texts) if r == "assistant"), ""))
        tool = next((n for n in called if n not in ("final_answer", "python_interpreter")), None)
        if tool is None:  # a CodeAgent: the tool its code called
            found = re.search(r"(\w+)\(", next((t for r, t in reversed(texts) if r == "assistant"), ""))
            tool = found.group(1) if found else "tool"
        answer = f"Done: {tool} returned {'ok' if worse else (seen.group(1) if seen else 'unreadable')}."
        if code:
            return {"text": f"<code>\nfinal_answer({answer!r})\n</code>"}
        return {"tool_calls": [{"name": "final_answer", "arguments": {"answer": answer}}]}
    task = {**request, "stop": None, "messages": [{"role": "user", "content": last.removeprefix("New task:\n")}]}
    if not code:
        task["tools"] = [t for t in request.get("tools") or () if t["function"]["name"] != "final_answer"]
        return default_reply(task, protocol)
    system = next((t for r, t in texts if r == "system"), "")
    task["tools"] = [{"function": {"name": name, "parameters": {"required": [
        p.split(":")[0].strip() for p in params.split(",") if p.strip()]}}}
        for name, params in _SMOL_DEF.findall(system) if name != "final_answer"]
    call = (default_reply(task, protocol).get("tool_calls") or [{}])[0]
    if not call:
        return {"text": "<code>\nfinal_answer('no tool')\n</code>"}
    args = ", ".join(f"{k}={v!r}" for k, v in call["arguments"].items())
    return {"text": f"Thought: look it up.\n<code>\nresult = {call['name']}({args})\nprint(result)\n</code>"}


class FakeServer:
    """The loopback server. ``with FakeServer(latency_s=0.02) as srv: srv.openai_url`` ..."""

    def __init__(self, *, latency_s: float = 0.0,
                 responder: Callable[[Mapping[str, Any], str], Reply] = default_reply,
                 log_size: int = FAKE_SERVER_REQUEST_LOG, max_body: int = FAKE_SERVER_MAX_BODY,
                 router: Router | None = None) -> None:
        self.latency_s = latency_s
        self.responder = responder
        self.router = router
        self.max_body = max_body
        self.requests: collections.deque[dict[str, Any]] = collections.deque(maxlen=log_size)
        self.count = 0
        self.in_flight = 0  # model requests being answered now
        self.peak_in_flight = 0  # the most answered at once since start (or since reset_peak())
        self._faults: collections.deque[dict[str, Any]] = collections.deque()
        self._scripted: collections.deque[Reply] = collections.deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._ids = 0
        self.port = 0

    # ---- scripting -----------------------------------------------------------------------------
    def script(self, *replies: Reply) -> FakeServer:
        """Queue replies for the next requests (after any queued faults)."""
        with self._lock:
            self._scripted.extend(replies)
        return self

    def fail(self, times: int = 1, *, status: int | None = None, retry_after: str | None = None,
             hang: float | None = None, malformed: bool = False, drop: bool = False, body: str = "",
             raw: bytes | None = None, drip: float | None = None) -> FakeServer:
        """Queue ``times`` faults for the next requests."""
        with self._lock:
            for _ in range(times):
                self._faults.append({"status": status, "retry_after": retry_after, "hang": hang,
                                     "malformed": malformed, "drop": drop, "body": body, "raw": raw,
                                     "drip": drip})
        return self

    def reset_peak(self) -> None:
        """Start measuring ``peak_in_flight`` afresh (from the requests in flight now)."""
        with self._lock:
            self.peak_in_flight = self.in_flight

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    # ---- lifecycle -----------------------------------------------------------------------------
    def start(self) -> FakeServer:
        ready = threading.Event()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            self._server = loop.run_until_complete(asyncio.start_server(self._handle, sock=sock, backlog=512))
            ready.set()
            loop.run_forever()
            self._server.close()
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(self._server.wait_closed())
            loop.close()

        self._thread = threading.Thread(target=run, name="fakeserver", daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join()
        self._loop = self._thread = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- serving -------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                length = int(headers.get("content-length", "0"))
                if length > self.max_body:
                    await self._send(writer, 400, {"error": "body too large"})
                    break
                raw = await reader.readexactly(length) if length else b""
                keep = await self._respond(writer, method, path, headers, raw)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    async def _send(self, writer: asyncio.StreamWriter, status: int, payload: Any,
                    extra: Mapping[str, str] | None = None, raw: bytes | None = None) -> None:
        body = raw if raw is not None else json.dumps(payload).encode()
        hdrs = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", "content-type: application/json",
                f"content-length: {len(body)}", "connection: keep-alive"]
        for k, v in (extra or {}).items():
            hdrs.append(f"{k}: {v}")
        writer.write(("\r\n".join(hdrs) + "\r\n\r\n").encode() + body)
        await writer.drain()

    async def _fault(self, writer: asyncio.StreamWriter, fault: Mapping[str, Any]) -> bool | None:
        """Play a queued fault: None when it answered nothing (a hang then carries on), else keep-alive."""
        if fault["hang"]:
            await asyncio.sleep(fault["hang"])
            return None
        if fault["drop"]:
            return False
        if fault["malformed"]:
            await self._send(writer, 200, None, raw=b'{"choices": [ this is not json')
            return True
        if fault["raw"] is not None:
            await self._send(writer, 200, None, raw=fault["raw"])
            return True
        if fault["drip"]:
            body = json.dumps({"choices": [{"message": {"content": "x" * 200}}]}).encode()
            writer.write(f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}"
                         "\r\n\r\n".encode())
            for i in range(len(body)):
                writer.write(body[i:i + 1])
                await writer.drain()
                await asyncio.sleep(fault["drip"])
            return True
        if fault["status"]:
            extra = {"retry-after": fault["retry_after"]} if fault["retry_after"] is not None else None
            await self._send(writer, fault["status"], {"error": {"message": fault["body"] or "injected fault"}}, extra)
            return True
        return None

    async def _route(self, writer: asyncio.StreamWriter, method: str, path: str,
                     headers: dict[str, str], raw: bytes) -> bool:
        """Answer a non-model route through ``self.router`` (after any queued fault)."""
        assert self.router is not None
        try:
            body: Any = json.loads(raw) if raw else {}
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with self._lock:
            self.count += 1
            self.requests.append({"method": method, "path": path, "headers": headers, "body": body})
            fault = self._faults.popleft() if self._faults else None
        if fault is not None:
            kept = await self._fault(writer, fault)
            if kept is not None:
                return kept
        try:
            status, payload = self.router(method, path, headers, raw)
        except Exception as exc:  # a broken test router shows up as a 500 naming the error
            status, payload = 500, {"error": {"message": f"router raised {type(exc).__name__}: {exc}"}}
        await self._send(writer, status, payload, raw=payload if isinstance(payload, bytes) else None)
        return True

    async def _respond(self, writer: asyncio.StreamWriter, method: str, path: str,
                       headers: dict[str, str], raw: bytes) -> bool:
        if self.router is not None and not (path.endswith("/chat/completions") or path.endswith("/messages")):
            return await self._route(writer, method, path, headers, raw)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            await self._send(writer, 400, {"error": {"message": "request body is not JSON"}})
            return True
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._answer(writer, method, path, headers, body)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _answer(self, writer: asyncio.StreamWriter, method: str, path: str, headers: dict[str, str],
                      body: Any) -> bool:
        protocol = "anthropic" if path.rstrip("/").endswith("/messages") else "openai"
        with self._lock:
            self.count += 1
            self.requests.append({"method": method, "path": path, "headers": headers, "body": body})
            fault = self._faults.popleft() if self._faults else None
            scripted = self._scripted.popleft() if (fault is None and self._scripted) else None
            self._ids += 1
            rid = self._ids
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if method != "POST" or not (path.endswith("/chat/completions") or path.endswith("/messages")):
            await self._send(writer, 404, {"error": {"message": f"no route {method} {path}"}})
            return True
        if fault is not None:
            kept = await self._fault(writer, fault)
            if kept is not None:
                return kept
        try:
            reply = scripted if scripted is not None else self.responder(body, protocol)
            rendered = self._render(reply, body, protocol, rid)
        except Exception as exc:  # a broken test responder shows up as a 500 naming the error
            await self._send(writer, 500, {"error": {"message": f"responder raised {type(exc).__name__}: {exc}"}})
            return True
        await self._send(writer, 200, rendered)
        return True

    @staticmethod
    def _render(reply: Reply, request: Mapping[str, Any], protocol: str, rid: int) -> dict[str, Any]:
        calls = reply.get("tool_calls") or []
        text = reply.get("text") or ""
        model = request.get("model", "fake")
        usage_in = sum(len(json.dumps(m)) for m in request.get("messages") or []) // 4
        usage_out = len(text) // 4 + 1
        if protocol == "anthropic":
            blocks: list[dict[str, Any]] = []
            if text:
                blocks.append({"type": "text", "text": text})
            for j, c in enumerate(calls):
                blocks.append({"type": "tool_use", "id": f"toolu_{rid}_{j}", "name": c["name"],
                               "input": c.get("arguments") or {}})
            stop = reply.get("finish_reason") or ("tool_use" if calls else "end_turn")
            stop = {"length": "max_tokens", "stop": "end_turn", "tool_calls": "tool_use"}.get(stop, stop)
            return {"id": f"msg_{rid}", "type": "message", "role": "assistant", "model": model, "content": blocks,
                    "stop_reason": stop, "usage": {"input_tokens": usage_in, "output_tokens": usage_out}}
        msg: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            msg["tool_calls"] = [
                {"id": f"call_{rid}_{j}", "type": "function",
                 "function": {"name": c["name"],
                              "arguments": c["arguments"] if isinstance(c.get("arguments"), str)
                              else json.dumps(c.get("arguments") or {})}}
                for j, c in enumerate(calls)]
        finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
        return {"id": f"chatcmpl-{rid}", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out,
                          "total_tokens": usage_in + usage_out}}


def main() -> None:  # pragma: no cover - used by benchmarks
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    args = ap.parse_args()
    srv = FakeServer(latency_s=args.latency).start()
    print(f"PORT {srv.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":  # pragma: no cover
    main()
