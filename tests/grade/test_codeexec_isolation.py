"""Issue 28: when nothing on the host can isolate model-written code, CodeExec refuses, loudly, naming the fix;
it never runs the code unsandboxed. The host without bubblewrap and without namespaces is simulated with the
engine's own switches (``NO_BWRAP_ENV``, ``NO_NAMESPACES_ENV``), not by mocking the engine.
"""

from __future__ import annotations

import os
import sys

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
