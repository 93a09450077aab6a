"""What the benchmarks that measure against the loopback server share: starting it in its own process, and
running one measurement in a fresh child process (so its CPU time and peak RSS are that measurement's alone).

Imported by the scripts beside it (``python benchmarks/bench_x.py`` puts this folder on ``sys.path``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def start_server(latency: float, script: str | None = None) -> tuple[subprocess.Popen, int]:
    """Start the loopback server (``tests/fakeserver.py``, 127.0.0.1 only, ``latency`` seconds a reply), or
    ``script`` (Python source run with ``tests`` importable; it gets the latency as ``sys.argv[1]`` and must
    print ``PORT <n>``). Returns (the process, the port); the caller kills the process."""
    command = [str(TESTS / "fakeserver.py"), "--latency"] if script is None else ["-c", script]
    proc = subprocess.Popen([sys.executable, *command, str(latency)], stdout=subprocess.PIPE, text=True,
                            cwd=str(TESTS if script else ROOT),
                            env=dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{TESTS}"))
    line = proc.stdout.readline().strip() if proc.stdout else ""
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, int(line.split()[1])


def child(script: str, kind: str, **kw: object) -> dict:
    """Run ``script --child '{"kind": kind, ...}'`` in a fresh process; returns the JSON of its last line."""
    out = subprocess.run([sys.executable, script, "--child", json.dumps({"kind": kind, **kw})],
                         capture_output=True, text=True, check=False, cwd=str(ROOT),
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if out.returncode != 0:
        raise RuntimeError(f"{kind} child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])
