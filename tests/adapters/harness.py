"""What every framework's test checks (issue 27 item 2), against the loopback fake model server.

* >= 20 situations x k=2 run, every row ``ok``;
* every scheduled fault reached a tool call (``faults_delivered`` >= 1 on every fault row);
* the row's steps equal the framework's own record of the calls: the conversation it sent the model (the
  assistant ``tool_calls`` and the ``tool`` messages of its last request), read from the server's log;
* a suite-level regression (the model server made worse: it reports every tool call as ``ok``) turns the gate
  (``wai.compare``) red, while the same server twice stays green.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import whileai as wai
from tests.fakeserver import FakeServer, default_reply
from whileai_core.adapters.base import decoded

SITUATIONS = 20
K = 2


def worse_reply(request: Mapping[str, Any], protocol: str) -> dict[str, Any]:
    """The regressed model: after a tool result it always says the call went fine."""
    reply = default_reply(request, protocol)
    text = reply.get("text") or ""
    if text.startswith("Done: "):
        return {"text": text.split(" returned ")[0] + " returned ok."}
    return reply


def judge(row: Mapping[str, Any]) -> float:
    """1 when the reply reports what the world did to the call: the fault, a missing record, or ok."""
    mode = (row.get("faults") or {}).get("mode")
    expected = {"malformed": "unreadable"}.get(mode, mode) if mode else (
        "not_found" if row.get("world_state") == "missing" else "ok")
    return float(str(row.get("final_text", "")).strip().endswith(f"returned {expected}."))


def recorded_calls(server: FakeServer) -> dict[str, list[tuple[str, Any, Any]]]:
    """prompt -> [(tool, arguments, result)] from the last request of each conversation the framework sent."""
    out: dict[str, list[tuple[str, Any, Any]]] = {}
    for req in server.requests:
        messages = (req.get("body") or {}).get("messages") or []
        prompt = next((m.get("content") for m in messages if m.get("role") == "user"), None)
        if isinstance(prompt, list):
            prompt = "".join(b.get("text", "") for b in prompt if isinstance(b, dict))
        results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
        calls = [(tc["function"]["name"], json.loads(tc["function"]["arguments"] or "{}"),
                  decoded(_text(results.get(tc.get("id")))))
                 for m in messages if m.get("role") == "assistant" for tc in m.get("tool_calls") or ()]
        if calls and len(calls) >= len(out.get(str(prompt), [])):
            out[str(prompt)] = calls
    return out


def _text(content: Any) -> Any:
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content


def check_framework(make_agent: Callable[[str], Any], *, tools: Any = None, concurrency: int = 8,
                    responder: Callable[..., Any] = default_reply, worse: Callable[..., Any] = worse_reply,
                    record_of: Callable[[FakeServer], dict[str, list[Any]]] = recorded_calls) -> Any:
    """Run the framework agent ``make_agent(base_url)`` against a good and a worse server; check the rows
    (``record_of(server)``: prompt -> the framework's own record of the calls, as it sent them to the model)."""
    with FakeServer(responder=responder) as good:
        before = wai.simulate(make_agent(good.openai_url), tools=tools, simulator=False, budget=SITUATIONS * K,
                              repeats=K, seed=0, concurrency=concurrency)
        record = record_of(good)
    rows = list(before.rows)
    assert len({r["task_id"] for r in rows}) >= SITUATIONS and len(rows) >= SITUATIONS * K
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows if r["status"] != "ok"][:3]
    faulted = [r for r in rows if r["faults_scheduled"]]
    assert faulted and all(r["faults_delivered"] >= 1 for r in faulted)
    assert not any("fault not delivered" in w for w in before.warnings)
    for r in rows:
        steps = [(s["tool"], s["arguments"], s["result"]) for s in r["steps"] if "tool" in s]
        assert steps, r
        assert steps == record[r["prompt"]], (r["prompt"], steps, record.get(r["prompt"]))
    scored = before.grade(judge=judge)
    with FakeServer(responder=worse) as bad:
        after = wai.simulate(make_agent(bad.openai_url), tools=tools, simulator=False, budget=SITUATIONS * K,
                             repeats=K, seed=0, concurrency=concurrency).grade(judge=judge)
    assert wai.compare(scored, scored).ok
    gate = wai.compare(scored, after)
    assert not gate.ok, str(gate)
    return before
