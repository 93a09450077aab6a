"""``CodeExec``: model-written code run against hidden tests in the sandbox.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any

from whileai_core.arguments import integer
from whileai_core.defaults import (
    CODE_CPU_S,
    CODE_FSIZE_MB,
    CODE_MEM_MB,
    CODE_NOFILE,
    CODE_NPROC,
    CODE_OUTPUT_CAP,
    CODE_TIMEOUT_S,
    CODE_TMPFS_MB,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.grade.verify.contract import Row, Verifier, VerifierError
from whileai_core.grade.verify.sandbox import run_sandboxed

__all__ = ["CodeExec", "extract_code"]


# --------------------------------------------------------------------------------------------------
# CodeExec
# --------------------------------------------------------------------------------------------------


def extract_code(text: str) -> str:
    """The last fenced ```python (or bare ```) block of a reply, else the whole text."""
    blocks = re.findall(r"```(?:python|py)?[ \t]*\n(.*?)```", text or "", re.DOTALL)
    return blocks[-1] if blocks else (text or "")


_RUNNER = '''

# ---- whileai CodeExec runner ----
def __whileai_run(_token):
    import sys as _sys
    _tests = [(_n, _f) for _n, _f in list(globals().items()) if _n.startswith("test_") and callable(_f)]
    _failed = []
    for _n, _f in _tests:
        try:
            _f()
        except BaseException as _e:  # noqa: BLE001 - a failing test in any form
            _failed.append((_n, type(_e).__name__))
    if _failed:
        print("\\n" + _token + " FAILED " + " ".join(n + ":" + e for n, e in _failed), flush=True)
        _sys.exit(1)
    print("\\n" + _token + " PASSED " + str(len(_tests)), flush=True)
__whileai_run(%r)
'''

_SIGNAL_REASON = {
    "SIGXCPU": "CPU limit hit (RLIMIT_CPU)",
    "SIGXFSZ": "file/output size limit hit (RLIMIT_FSIZE)",
    "SIGKILL": "killed",
    "SIGSEGV": "crashed (segfault, possibly out of memory)",
}


class CodeExec(Verifier):
    """Runs the reply's code against hidden tests in the sandbox (``run_sandboxed``); 1 when every test passes.

    Code is the last ```python block of the reply, else the whole reply. Tests come from ``tests=``, else
    ``row["privileged"]["tests"]``, else the reference. The program is ``setup`` + code + tests + a runner that
    calls each top-level ``test_*`` function; top-level asserts in the tests work too. A pass needs exit 0 and
    the runner's per-run token on stdout (so ``sys.exit(0)`` from the code is no pass). Timeouts, limits,
    crashes and output over ``output_cap`` score 0 with the reason. With hidden tests, a failure names only the
    exception class, never the test's text.
    """

    def __init__(self, tests: str | None = None, *, timeout: float = CODE_TIMEOUT_S, cpu_seconds: int = CODE_CPU_S,
                 mem_mb: int = CODE_MEM_MB, nproc: int = CODE_NPROC, fsize_mb: int = CODE_FSIZE_MB,
                 nofile: int = CODE_NOFILE, output_cap: int = CODE_OUTPUT_CAP, tmpfs_mb: int = CODE_TMPFS_MB,
                 setup: str = "", python: str | None = None, isolate: bool = True, require_isolation: bool = False,
                 field: str | None = None, name: str | None = None) -> None:
        super().__init__(field=field, name=name or "code_exec")
        if tests is not None and not isinstance(tests, str):
            raise InvalidArgumentType(f"tests= must be Python source text; got {type(tests).__name__}")
        if not isinstance(setup, str):
            raise InvalidArgumentType(f"setup= must be Python source text; got {type(setup).__name__}")
        self.tests = tests
        self.setup = setup
        self.limits: dict[str, Any] = {"timeout": timeout, "cpu_seconds": cpu_seconds, "mem_mb": mem_mb, "nproc": nproc,
                       "fsize_mb": fsize_mb, "nofile": nofile, "output_cap": output_cap, "tmpfs_mb": tmpfs_mb,
                       "python": python, "isolate": isolate, "require_isolation": require_isolation}
        # validate the limits now, not on the first row
        for arg in ("cpu_seconds", "mem_mb", "nproc", "fsize_mb", "nofile", "output_cap", "tmpfs_mb"):
            v = self.limits[arg]
            integer(arg, v, minimum=1)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise InvalidArgument(f"timeout= must be a number of seconds > 0; got {timeout!r}")

    def reference(self, row: Row) -> tuple[Any, bool]:
        if self.tests is not None:
            return self.tests, False
        priv = row.get("privileged")
        if isinstance(priv, Mapping) and isinstance(priv.get("tests"), str):
            return priv["tests"], True
        return super().reference(row)

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        if not isinstance(reference, str):
            raise VerifierError("the tests must be Python source text")
        hidden = self.tests is None
        token = "WHILEAI_" + secrets.token_hex(16)
        program = "\n".join([self.setup, extract_code(candidate), "", reference, _RUNNER % token])
        res = run_sandboxed(program, **self.limits)
        meta = {"wall_s": res.wall_s, "returncode": res.returncode, "signal": res.signal,
                "timed_out": res.timed_out, "stdout_bytes": res.stdout_bytes, "stderr_bytes": res.stderr_bytes,
                "isolation": {k: res.isolation.get(k) for k in ("uid", "net_namespace", "mount_namespace",
                                                               "private_tmp", "user_dropped", "notes")},
                "survivors_killed": res.survivors_killed}
        cap = self.limits["output_cap"]
        if res.timed_out:
            return {"reward": 0, "reason": f"timed out after {self.limits['timeout']:g} s (process group killed)", **meta}
        if res.signal:
            why = _SIGNAL_REASON.get(res.signal, "killed")
            return {"reward": 0, "reason": f"{why}: {res.signal}", **meta}
        if res.stdout_bytes > cap or res.stderr_bytes > cap:
            return {"reward": 0, "reason": f"output over the cap ({max(res.stdout_bytes, res.stderr_bytes)} bytes > "
                                           f"output_cap={cap})", **meta}
        lines = [ln for ln in res.stdout.splitlines() if ln.startswith(token)]
        verdict = lines[-1][len(token):].strip() if lines else ""
        if res.returncode == 0 and verdict.startswith("PASSED"):
            return {"reward": 1, "reason": f"all tests passed ({verdict.split()[-1]} test functions)", **meta}
        if verdict.startswith("FAILED"):
            failed = verdict.split()[1:]
            shown = [f.split(":")[-1] for f in failed] if hidden else failed
            return {"reward": 0, "reason": f"tests failed: {', '.join(shown)[:200]}", **meta}
        err_lines = [ln for ln in res.stderr.strip().splitlines() if ln.strip()]
        last = err_lines[-1] if err_lines else ""
        if hidden:
            m = re.match(r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)|MemoryError)\b", last)
            last = m.group(1) if m else ("no error text" if not last else "error")
        if res.returncode == 0:
            return {"reward": 0, "reason": "exited 0 before the tests ran (no runner token)", **meta}
        return {"reward": 0, "reason": f"tests failed: exit {res.returncode}: {last[:200]}", **meta}
