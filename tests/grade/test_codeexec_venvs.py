"""Issue 28 item 2: CodeExec gives verdicts from an interpreter wherever it lives (a venv under /tmp, under /opt,
in the home directory), under bubblewrap and under the built-in namespaces, in split and in isolated mode, with
the caller's packages (numpy);
the sandbox's /tmp has a size cap in both modes.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_core.grade.verify.code import CodeExec
from whileai_core.grade.verify.sandbox import find_bwrap

pytestmark = pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0,
                                reason="the sandbox needs Linux; venvs under /opt need root")

ROOT = Path(__file__).resolve().parents[2]
MODES = (["bwrap"] if find_bwrap() else []) + ["namespaces"]

PROGRAM = r"""
import json, sys
from whileai_core.grade.verify.code import CodeExec
code = "import numpy, sys\ndef add(a, b):\n    return int(numpy.add(a, b))\ndef prefix():\n    return sys.prefix\n"
out = {}
for iso in sys.argv[1:]:
    for mode in ("auto", "isolated"):
        v = CodeExec(tests="assert add(2, 3) == 5\nassert prefix() == %r\n" % sys.prefix, timeout=30,
                     isolation=iso, mode=mode)({"final_text": "```python\n" + code + "\n```"})
        out[iso + "/" + mode] = [v["reward"], v["isolation"]["level"], v["decided_by"], v["reason"],
                                 v["isolation"]["host_fs_hidden"]]
print(json.dumps(out))
"""


@pytest.mark.parametrize("parent", ["/tmp", "/opt", str(Path.home())])
def test_codeexec_gives_verdicts_from_a_venv_anywhere(parent):
    venv = Path(parent) / f".whileai-venv-{secrets.token_hex(4)}"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
                       check=True, timeout=60)
        py = venv / "bin" / "python"
        res = subprocess.run([str(py), "-c", PROGRAM, *MODES], capture_output=True, text=True, timeout=240,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
        assert res.returncode == 0, res.stderr[-2000:]
        out = __import__("json").loads(res.stdout.strip().splitlines()[-1])
        for iso in MODES:
            for mode, decided in (("auto", "split"), ("isolated", "isolated")):
                reward, level, by, reason, hidden = out[f"{iso}/{mode}"]
                # the candidate ran on the venv's interpreter (its sys.prefix), with numpy from the base packages,
                # and the host's files stayed hidden (a venv under /tmp once made the fallback's new root fail)
                assert reward == 1 and level == iso and by == decided and hidden, (iso, mode, reason, hidden)
    finally:
        shutil.rmtree(venv, ignore_errors=True)


@pytest.mark.parametrize("isolation", MODES)
def test_tmp_in_the_sandbox_has_a_size_cap(isolation):
    code = ("def fill():\n    n = 0\n    try:\n        with open('/tmp/fill', 'wb') as fh:\n"
            "            for _ in range(64):\n                fh.write(b'x' * (1 << 20))\n                fh.flush()\n"
            "                n += 1\n    except OSError:\n        pass\n    return n\n")
    v = CodeExec(tests="assert fill() < 64\n", timeout=20, tmpfs_mb=8, fsize_mb=256, isolation=isolation)(
        {"final_text": f"```python\n{code}\n```"})
    assert v["reward"] == 1 and v["isolation"]["level"] == isolation, v["reason"]


def test_isolation_none_is_explicit_and_on_the_row():
    v = CodeExec(tests="assert add(2, 3) == 5\n", timeout=10, isolation="none")(
        {"final_text": "```python\ndef add(a, b):\n    return a + b\n```"})
    assert v["reward"] == 1 and v["isolation"]["level"] == "none" and v["decided_by"] == "split"
    with pytest.raises(ValueError, match="'none'"):
        CodeExec(isolation="nothing")
