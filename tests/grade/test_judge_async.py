"""LLM judges graded on one event loop: the same rows as the sync path, in order, bounded, no thread per row."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import json
import os
import signal
import threading

import pytest

from whileai_core.grade.judge import Judge
from whileai_core.grade.run import JudgeError, run_judge
from whileai_core.models import config
from whileai_core.models.endpoint import Endpoint

FAST = {"backoff_s": 0.001, "backoff_cap_s": 0.002, "timeout": 5.0}
RUBRIC = "Pass when the reply names the order status."

pytestmark = pytest.mark.usefixtures("clean_config")  # tests/conftest.py: no configured model leaks in


def verdicts(request, protocol):
    """A judge model whose score is read off the evidence: the digits of the reply over 100; "BAD" gets prose."""
    reply = json.loads(request["messages"][-1]["content"])["final_reply"]
    if "BAD" in reply:
        return {"text": "I would rather not say."}
    score = int("".join(ch for ch in reply if ch.isdigit()) or 0) % 101 / 100
    return {"text": json.dumps({"reason": f"read {reply}", "score": score})}


def rows(n, *, infra=(), bad=()):
    return [{"row_id": f"t{i}#0", "task_id": f"t{i}", "rollout_index": 0, "prompt": f"order A{i}?",
             "steps": [], "final_text": "BAD" if i in bad else f"status {i * 7}",
             "status": "infra_error" if i in infra else "ok"} for i in range(n)]


def served_judge(srv, latency=0.0):
    srv.responder, srv.latency_s = verdicts, latency
    return Judge(RUBRIC, model=Endpoint("j", url=srv.openai_url, **FAST))


def without_run_id(row):
    lineage = {k: v for k, v in row.get("lineage", {}).items() if k != "scoring_run_id"}
    return {**row, "lineage": lineage}


def test_async_grading_gives_the_rows_the_sync_judge_gives_in_input_order(srv):
    judge = served_judge(srv, latency=0.005)
    data = rows(40, infra=(5, 17))
    on_loop = run_judge(data, judge, concurrency=8, quiet=True)
    one_by_one = run_judge(data, lambda row: judge(row), judge_name=judge.name, concurrency=1, quiet=True)
    assert [r["row_id"] for r in on_loop.rows] == [r["row_id"] for r in data]
    assert [without_run_id(r) for r in on_loop.rows] == [without_run_id(r) for r in one_by_one.rows]
    for row, graded in zip(data, on_loop.rows):
        if row["status"] == "infra_error":
            assert graded["judge_status"] == "skipped_infra_error" and graded["reward"] is None
            continue
        own = judge(row)  # the judge called by hand on the same row
        assert (graded["reward"], graded["reason"]) == (own["reward"], own["reason"])
        assert graded["judge_meta"]["judge_usage"] == own["judge_usage"]
    assert on_loop.rows[3]["reward"] == 0.21 and on_loop.rows[3]["judge_status"] == "ok"
    assert srv.count == 2 * 38 + 38  # infra_error rows are never sent to the judge (twice graded, once by hand)


def test_concurrency_bounds_the_requests_in_flight(srv):
    judge = served_judge(srv, latency=0.02)
    scored = run_judge(rows(40), judge, concurrency=8, quiet=True)
    assert all(r["judge_status"] == "ok" for r in scored.rows) and srv.count == 40
    assert 1 < srv.peak_in_flight <= 8  # concurrent, never past concurrency=
    srv.reset_peak()
    run_judge(rows(6), judge, concurrency=2, quiet=True)
    assert srv.peak_in_flight <= 2


def test_an_llm_judge_uses_no_thread_pool(srv, monkeypatch):
    judge = served_judge(srv)

    def refuse(*args, **kwargs):
        raise AssertionError("a thread pool was used to grade with an LLM judge")

    monkeypatch.setattr(concurrent.futures.ThreadPoolExecutor, "submit", refuse)
    scored = run_judge(rows(12), judge, concurrency=4, quiet=True)
    assert [r["judge_status"] for r in scored.rows] == ["ok"] * 12 and srv.count == 12


def test_a_plain_function_judge_keeps_the_thread_pool():
    seen = []
    run_judge(rows(6), lambda row: seen.append(threading.current_thread().name) or 1, concurrency=3, quiet=True)
    assert len(seen) == 6 and all(name.startswith("ThreadPoolExecutor") for name in seen)


def test_an_async_def_judge_runs_on_the_loop_in_order_with_the_callers_context():
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")
    threads = set()

    async def judge(row):  # later rows finish first
        threads.add(threading.current_thread().name)
        await asyncio.sleep(0.002 * (20 - int(row["task_id"][1:])))
        return {"reward": 1, "reason": marker.get()}

    token = marker.set("the caller's")
    try:
        scored = run_judge(rows(20), judge, concurrency=20, quiet=True)
    finally:
        marker.reset(token)
    assert [r["row_id"] for r in scored.rows] == [r["row_id"] for r in rows(20)]
    assert {r["reason"] for r in scored.rows} == {"the caller's"} and threads == {"whileai-grade"}
    assert scored.judge_name == "judge"


def test_a_judge_configured_in_a_context_is_seen_on_the_loop(srv):
    srv.responder = verdicts
    judge = Judge(RUBRIC)  # no model: the configured judge is looked up at call time, on the loop
    with config.context(judge=Endpoint("ctx", url=srv.openai_url, **FAST)):
        scored = run_judge(rows(4), judge, concurrency=4, quiet=True)
    assert [r["judge_status"] for r in scored.rows] == ["ok"] * 4
    assert scored.rows[0]["judge_meta"]["judge_model"] == f"vllm:ctx@{srv.openai_url}"


def test_on_error_raise_stops_the_run_and_keeps_the_rows_graded_so_far(srv):
    judge = served_judge(srv, latency=0.005)
    data = rows(40, bad=(3,))
    with pytest.raises(JudgeError, match=r"t3#0.*JudgeReplyError.*err\.partial") as err:
        run_judge(data, judge, concurrency=2, on_error="raise", quiet=True)
    partial = err.value.partial
    ids = [r["row_id"] for r in partial]
    assert {"t0#0", "t1#0", "t2#0"} <= set(ids) and "t3#0" not in ids
    assert ids == sorted(ids, key=lambda rid: int(rid[1:-2]))  # input order
    assert all(r["judge_status"] == "ok" for r in partial)
    assert srv.count < 40  # the rows after the failure were never sent
    kept = run_judge(data, judge, concurrency=4, quiet=True)  # on_error="keep": recorded, the run goes on
    assert kept.rows[3]["judge_status"] == "error" and "JudgeReplyError" in kept.rows[3]["judge_error"]
    assert sum(r["judge_status"] == "ok" for r in kept.rows) == 39 and "1 of 40 rows unjudged" in kept.warnings[0]


def hanging_judge(started, cancelled, finished, all_in, *, in_flight=4):
    async def judge(row):
        started.append(row["row_id"])
        if len(started) == in_flight:
            all_in.set()
        try:
            await asyncio.sleep(20)
        except asyncio.CancelledError:
            cancelled.append(row["row_id"])
            raise
        finished.append(row["row_id"])
        return 1
    return judge


def test_closing_the_rows_cancels_the_calls_in_flight():
    from whileai_core.models.aio import as_finished

    started, cancelled, finished, all_in = [], [], [], threading.Event()
    hang = hanging_judge(started, cancelled, finished, all_in)

    async def judge(x):
        return "first" if x == 0 else await hang({"row_id": x})

    rows_out = as_finished(judge, range(12), concurrency=4)
    assert next(rows_out) == (0, "first")
    assert all_in.wait(10)  # the next four are in flight
    rows_out.close()
    assert sorted(cancelled) == [1, 2, 3, 4] and finished == []
    assert not [t.name for t in threading.enumerate() if t.name == "whileai-loop"]


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="SIGINT reaches the main thread")
def test_ctrl_c_cancels_the_calls_in_flight():
    started, cancelled, finished, all_in = [], [], [], threading.Event()

    def interrupt():
        if all_in.wait(30):
            os.kill(os.getpid(), signal.SIGINT)

    # Ctrl-C as a terminal delivers it, whatever the worker process inherited (a SIGINT ignored or blocked by
    # whoever started it made this test flaky in full -n 2 runs on a quiet machine)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            run_judge(rows(12), hanging_judge(started, cancelled, finished, all_in), concurrency=4, quiet=True)
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    # every call in flight when Ctrl-C landed is cancelled (on a machine too loaded to deliver the signal at once,
    # the first four may finish their 20 s first)
    assert cancelled and sorted(cancelled) == sorted(set(started) - set(finished)) and len(started) <= 8
    assert not [t.name for t in threading.enumerate() if t.name == "whileai-grade"]


class BlockingBackend:
    """A duck-typed backend with only a blocking ``complete`` (no ``acomplete``)."""

    spec = "fake:blocking"

    def __init__(self):
        self.threads = set()

    def complete(self, messages, **kwargs):
        from whileai_core.models.protocol import Completion

        self.threads.add(threading.current_thread().name)
        reply = json.loads(messages[-1]["content"])["final_reply"]
        return Completion(text=json.dumps({"reason": reply, "score": 1}), usage={"output_tokens": 1})


def test_a_backend_without_acomplete_blocks_only_the_runs_own_bounded_threads():
    backend = BlockingBackend()
    scored = run_judge(rows(10), Judge(RUBRIC, model=backend), concurrency=3, quiet=True)
    assert [r["reason"] for r in scored.rows] == [r["final_text"] for r in rows(10)]
    assert backend.threads and all(name.startswith("whileai-grade_") for name in backend.threads)
    assert len(backend.threads) <= 3


def test_an_async_def_judge_under_ray_is_refused_before_any_call():
    from whileai_core.errors import InvalidArgumentType

    async def judge(row):
        raise AssertionError("never called")

    with pytest.raises(InvalidArgumentType, match="'judge' is async def only; executor='ray'"):
        run_judge(rows(2), judge, executor="ray", quiet=True)


def test_which_judges_are_awaited():
    from whileai_core.models.aio import async_call

    class AsyncCallable:
        async def __call__(self, row):
            return 1

    async def judge(row):
        return 1

    instance, llm = AsyncCallable(), Judge(RUBRIC, model="openai:gpt-4.1-mini")
    assert async_call(judge) is judge and async_call(instance) is instance
    assert async_call(llm) == llm.acall
    assert async_call(lambda row: 1) is None and async_call(len) is None and async_call(AsyncCallable) is None
