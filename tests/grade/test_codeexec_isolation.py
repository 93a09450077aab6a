"""Issue 28: when nothing on the host can isolate model-written code, CodeExec refuses, loudly, naming the fix;
it never runs the code unsandboxed. The host without bubblewrap and without namespaces is simulated with the
engine's own switches (``NO_BWRAP_ENV``, ``NO_NAMESPACES_ENV``), not by mocking the engine.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import whileai as wai
from whileai_core.grade.verify.code import CodeExec
from whileai_core.grade.verify.sandbox import NO_BWRAP_ENV, NO_NAMESPACES_ENV

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

TESTS = "def test_add():\n    assert add(2, 3) == 5\n"


def _row(code: str) -> dict:
    return {"task_id": "t", "final_text": f"```python\n{code}\n```"}


def test_no_bwrap_and_no_namespaces_refuses_with_the_fix_and_runs_nothing(tmp_path, monkeypatch):
    canary_dir = tmp_path / "canary"
    canary_dir.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(canary_dir, 0o777)
    canary = canary_dir / "ran"
    code = f"open({str(canary)!r}, 'w').write('ran')\ndef add(a, b):\n    return a + b\n"
    monkeypatch.setenv(NO_BWRAP_ENV, "1")
    monkeypatch.setenv(NO_NAMESPACES_ENV, "1")
    for mode in ("auto", "isolated"):
        with pytest.raises(wai.IsolationUnavailable) as err:
            CodeExec(tests=TESTS, timeout=10, mode=mode)(_row(code))
        msg = str(err.value)
        assert isinstance(err.value, wai.WaiError) and not isinstance(err.value, wai.VerifierError)
        assert "refusing to run model-written code unsandboxed" in msg
        assert "apt-get install bubblewrap" in msg and "isolation='none'" in msg and NO_NAMESPACES_ENV in msg
    assert not canary.exists()  # the candidate's import never ran
    with pytest.raises(wai.IsolationUnavailable, match=f"bubblewrap is switched off .{NO_BWRAP_ENV}"):
        CodeExec(tests=TESTS, timeout=10, isolation="bwrap")(_row(code))
    # the caller's explicit opt-out runs it, with the level on the row
    v = CodeExec(tests=TESTS, timeout=10, isolation="none")(_row("def add(a, b):\n    return a + b\n"))
    assert v["reward"] == 1 and v["isolation"]["level"] == "none", v["reason"]


def test_the_switches_only_lower_the_level(monkeypatch):
    # bubblewrap switched off: the built-in namespaces isolate (the switch is real, the fallback still grades)
    monkeypatch.setenv(NO_BWRAP_ENV, "1")
    v = CodeExec(tests=TESTS, timeout=10)(_row("def add(a, b):\n    return a + b\n"))
    assert v["reward"] == 1 and v["isolation"]["level"] == "namespaces", v


PROBE = r'''
import json, sys
from whileai_core.grade.verify.code import CodeExec
code = """
import os
def probe():
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    reachable = 0
    for pid in range(1, 400):
        try:
            os.kill(pid, 0)
            reachable += 1
        except OSError:
            pass
    return [len(pids), os.path.exists(%r), os.path.exists("/etc/passwd"), reachable]
""" % sys.argv[1]
tests = "def test_probe():\n    r = probe()\n    assert r[0] <= 3 and not r[1] and not r[2] and r[3] <= 3\n"
v = CodeExec(tests=tests, timeout=20, isolation="namespaces")({"final_text": "```python\n" + code + "\n```"})
print(json.dumps([v["reward"], v["reason"], v["isolation"]]))
'''


def _world_searchable(path: Path) -> bool:
    return all(p.stat().st_mode & 0o005 == 0o005 for p in [path, *path.parents])


def test_the_unprivileged_fallback_hides_the_host_and_shields_the_grader():
    # not root, no bubblewrap: the built-in namespaces in a user namespace of their own (mount and pid too), so
    # the candidate sees no host file and cannot signal the grader (same uid) or any process outside
    import shutil
    import subprocess

    root = Path(__file__).resolve().parents[2]
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None or not os.path.exists("/usr/bin/python3") or not _world_searchable(root):
        pytest.skip("needs root (to run a probe as nobody), setpriv, /usr/bin/python3 and a world-readable checkout")
    nobody = [setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    if subprocess.run([*nobody, "unshare", "-Urnmp", "--fork", "true"], capture_output=True, check=False).returncode:
        pytest.skip("this kernel gives unprivileged users no user namespace")
    res = subprocess.run([*nobody, "/usr/bin/python3", "-c", PROBE, str(root / "README.md")], capture_output=True,
                         text=True, timeout=120, cwd="/tmp", check=False,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": "/tmp"})
    assert res.returncode == 0, res.stderr[-2000:]
    reward, reason, iso = __import__("json").loads(res.stdout.strip().splitlines()[-1])
    assert iso["level"] == "namespaces" and iso["pid_namespace"] and iso["mount_namespace"], iso
    assert iso["host_fs_hidden"] and iso["uid"] == 65534 and not iso["user_dropped"], iso
    assert reward == 1, (reason, iso)
