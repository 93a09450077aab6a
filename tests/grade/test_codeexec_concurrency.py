"""CodeExec under a threaded judge pool: concurrent sandbox runs never disturb each other, and a loaded host's slow
start-up is never charged to the code (nor hidden behind "the sandbox did not start").

Generated rows of several kinds run concurrently; the invariants: every row is scored, each reward is exactly what
its code deserves, and no run's processes are killed by another run (a candidate that forks a helper at import
returns the right answer only while its helper is alive). Nothing here asserts a duration.
"""

from __future__ import annotations

import os
import random
import sys
import threading

import pytest

from whileai_core.grade.run import run_judge
from whileai_core.grade.verify import sandbox
from whileai_core.grade.verify.code import CodeExec
from whileai_core.grade.verify.sandbox import NO_BWRAP_ENV, _pids_of_uid, find_bwrap, run_sandboxed

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

TESTS = "def test_add():\n    assert add(2, 3) == 5\n\ndef test_neg():\n    assert add(-1, 1) == 0\n"
TIMEOUT_S = 20  # the failing scenario's timeout: far above the code's run, so only load could reach it
CONCURRENCY = 8  # twice the original scenario's judge threads
ROWS = 24

# (code, the reward it deserves)
KINDS = {
    "right": ("def add(a, b):\n    return a + b\n", 1),
    "wrong": ("def add(a, b):\n    return a - b\n", 0),
    "raises": ("def add(a, b):\n    raise ValueError('no')\n", 0),
    # a helper process of the run's own uid, alive until the run ends: another run's cleanup killing it (two runs
    # sharing a uid) turns this right answer wrong
    "helper": (("import os, signal\n_helper = os.fork()\nif _helper == 0:\n    while True:\n        signal.pause()\n"
                "def add(a, b):\n    if os.waitpid(_helper, os.WNOHANG)[0] != 0:\n        return None\n"
                "    return a + b\n"), 1),
}


def _rows(seed: int, n: int) -> tuple[list[dict], list[int]]:
    """``n`` rows of kinds drawn with ``seed`` (every kind at least once), and the reward each deserves."""
    rng = random.Random(seed)
    kinds = list(KINDS) + [rng.choice(list(KINDS)) for _ in range(n - len(KINDS))]
    rng.shuffle(kinds)
    rows = [{"task_id": f"t{i}", "rollout_index": 0, "final_text": f"```python\n{KINDS[k][0]}```\n",
             "privileged": {"tests": TESTS}} for i, k in enumerate(kinds)]
    return rows, [KINDS[k][1] for k in kinds]


def _level_or_skip(isolation: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if isolation == "bwrap" and find_bwrap() is None:
        pytest.skip("bubblewrap does not start a sandbox here")
    if isolation == "namespaces":
        monkeypatch.setenv(NO_BWRAP_ENV, "1")
        level = run_sandboxed("pass", timeout=TIMEOUT_S, isolation="auto").isolation.get("level")
        if level != "namespaces":
            pytest.skip(f"the built-in namespaces do not isolate here (level {level})")


def _explicit_load_verdict(row: dict) -> bool:
    """A row the host's load (not the code) decided, and whose verdict says so in words."""
    reason = str(row.get("reason") or "")
    return reason.startswith("timed out after") or "did not start within start_timeout=" in reason


@pytest.mark.parametrize("isolation", ["bwrap", "namespaces"])
@pytest.mark.parametrize("uid_span", [None, CONCURRENCY])
def test_concurrent_runs_each_get_what_their_code_deserves(isolation, uid_span, monkeypatch):
    _level_or_skip(isolation, monkeypatch)
    if uid_span is not None:
        # as many uids as judge threads: runs overlap on a uid unless each holds its own until it ends
        monkeypatch.setattr(sandbox, "CODE_UID_SPAN", uid_span)
    rows, deserved = _rows(seed=ROWS + (uid_span or 0), n=ROWS)
    scored = run_judge(rows, CodeExec(timeout=TIMEOUT_S, isolation=isolation), concurrency=CONCURRENCY).rows
    wrong = [(i, deserved[i], r["reward"], r.get("judge_status"), r.get("reason"), r.get("judge_error"))
             for i, r in enumerate(scored) if r["reward"] != deserved[i] and not _explicit_load_verdict(r)]
    assert wrong == []
    assert any(r["reward"] == deserved[i] for i, r in enumerate(scored))
    assert {r["judge_meta"]["isolation"]["level"] for r in scored if "isolation" in r["judge_meta"]} == {isolation}
    if os.geteuid() == 0:
        uids = {r["judge_meta"]["isolation"]["uid"] for r in scored if "isolation" in r["judge_meta"]}
        assert 0 not in uids and all(_pids_of_uid(u) == [] for u in uids)
        assert sandbox._UIDS_IN_USE == set()  # every run handed its uid back


def test_a_slow_start_is_not_charged_to_the_code(monkeypatch):
    # the launcher takes longer to start than the code's whole timeout (a loaded host): the code still gets its time
    timeout = 3
    monkeypatch.setattr(sandbox, "_LAUNCHER", f"import time; time.sleep({timeout + 1})\n" + sandbox._LAUNCHER)
    row = {"task_id": "t", "final_text": f"```python\n{KINDS['right'][0]}```\n"}
    v = CodeExec(tests=TESTS, timeout=timeout)(row)
    assert v["reward"] == 1 and not v["timed_out"], v["reason"]


def test_a_start_past_start_timeout_says_so_and_leaves_nothing(monkeypatch):
    # a launcher that never reports (it waits on the stdin that is written only once it has): the run is abandoned
    # at start_timeout with a verdict naming it, not scored 0 and not "the sandbox did not start: no output"
    monkeypatch.setattr(sandbox, "_LAUNCHER", "import os; os.read(0, 1)\n" + sandbox._LAUNCHER)
    with pytest.raises(sandbox.VerifierError, match=r"did not start within start_timeout=0.5 s \(the host is overloaded"):
        run_sandboxed("print(1)", timeout=TIMEOUT_S, start_timeout=0.5)
    judge = CodeExec(tests=TESTS, timeout=TIMEOUT_S, start_timeout=0.5)
    v = judge({"task_id": "t", "final_text": KINDS["right"][0]})
    assert v["reward"] is None and "did not start within start_timeout=" in v["reason"]
    assert sandbox._UIDS_IN_USE == set()


def test_parses_on_many_threads_never_trip_cpythons_shared_ast_depth():
    """python/cpython#106905: a collection's callback hands the GIL over mid-tree and another thread's ast.parse
    corrupts the shared depth count (SystemError). Every parse of the judges goes through one lock."""
    import ast
    import gc
    import time

    from whileai_core.grade.verify.codetext import parse_expression, parse_module

    rng = random.Random(3)
    sources = ["\n".join(f"def f{i}(a):\n    return [x * a for x in range({rng.randrange(9)})] + [{{'k': (1, [2])}}]"
                         for i in range(rng.randrange(5, 30))) for _ in range(6)]
    expected = [ast.dump(ast.parse(s)) for s in sources]
    raised: list[BaseException] = []

    def hand_over(phase: str, info: dict) -> None:
        time.sleep(0)

    def work(seed: int) -> None:
        r = random.Random(seed)
        try:
            for _ in range(25):
                i = r.randrange(len(sources))
                assert ast.dump(parse_module(sources[i])) == expected[i]
                assert isinstance(parse_expression(f"{i} + 2 * 3").body, ast.BinOp)
        except BaseException as e:  # noqa: BLE001 - reported below, with its thread's seed
            raised.append(e)

    old = gc.get_threshold()
    gc.callbacks.append(hand_over)  # the list the collector reads (not a module attribute to replace)
    gc.set_threshold(50, 1, 1)
    try:
        threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.set_threshold(*old)
        gc.callbacks.remove(hand_over)
    assert raised == []
