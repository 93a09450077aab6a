"""The in-sandbox harness CodeExec used before issue 28 (now: ``split.py``; only ``Report`` is still used), and
the parent's cross-check of what it reports.

The harness is the sandbox's ``__main__``. Before any candidate code runs it takes its own references to the
functions it needs (``os.write``, ``os._exit``, ``BaseException``, ...), reads a per-run secret from fd 3 into
a closure and closes fd 3, so the secret is in no code constant, no global and no frame's locals. Then it runs
the candidate as a module named ``solution`` (not ``__main__``: demo blocks under ``if __name__ ==
"__main__":`` do not run; stdin is empty, so ``input()`` raises EOFError), the tests in the same namespace and
each top-level ``test_*`` function, and writes one report, prefixed by the secret, to fd 4 (a pipe the parent
holds). Nothing the candidate prints or its exit status can make a pass. It also reports whether the candidate
replaced builtins, ``sys.exit``, ``os._exit`` or ``os.write``. The parent (``read_report``) accepts exactly
one report with the secret, naming every test function the parent found in the tests itself.

What this does not stop: code in the same interpreter that digs the reporter's closure out with ``gc`` or
frames can still forge a report; ``tamper_marks`` flags such code on the row.
"""

from __future__ import annotations

import ast
import json
from typing import Any

__all__ = ["Report", "harness_program", "read_report", "test_functions"]

SECRET_FD = 3
REPORT_FD = 4
_SEP = "\x1f"

_HARNESS = r'''
def __whileai_harness(payload):
    import builtins, os, sys
    _write, _exit, _read, _close = os.write, os._exit, os.read, os.close
    _Base, _type, _list, _callable, _compile, _exec, _isinstance, _str = (
        BaseException, type, list, callable, compile, exec, isinstance, str)
    _builtins_before = dict(builtins.__dict__)
    _watched = [(sys, "exit"), (os, "_exit"), (os, "write"), (os, "read")]
    _watched_before = [getattr(m, a) for m, a in _watched]

    def _reporter():
        key = b""
        while len(key) < %(secret_len)d:
            chunk = _read(%(secret_fd)d, %(secret_len)d - len(key))
            if not chunk:
                break
            key += chunk
        _close(%(secret_fd)d)

        def send(text):
            data = key + b"\n" + text.encode("utf-8", "replace")
            while data:
                data = data[_write(%(report_fd)d, data):]
        return send

    send = _reporter()

    def _name(exc):
        try:
            n = _type(exc).__name__
            return n if _isinstance(n, _str) else "error"
        except _Base:
            return "error"

    ns = {"__name__": "solution", "__builtins__": builtins, "__file__": "solution.py"}
    status = "ok"
    try:
        _exec(_compile(payload[0], "solution.py", "exec"), ns)
    except _Base as exc:
        status = "candidate:" + _name(exc)
    if status == "ok":
        try:
            _exec(_compile(payload[1], "tests.py", "exec"), ns)
        except _Base as exc:
            status = "tests:" + _name(exc)
    results = []
    if status == "ok":
        tests = [(n, f) for n, f in _list(ns.items()) if _isinstance(n, _str) and n.startswith("test_")
                 and _callable(f)]
        for n, f in tests:
            try:
                f()
                results.append(n + ":ok")
            except _Base as exc:
                results.append(n + ":" + _name(exc))
    tampered = [k for k, v in _builtins_before.items() if builtins.__dict__.get(k, _Base) is not v]
    tampered += [m.__name__ + "." + a for (m, a), v in zip(_watched, _watched_before) if getattr(m, a, None) is not v]
    send("%(sep)s".join([status, ",".join(tampered)] + results))
    _exit(0)


__whileai_harness(%(payload)r)
'''


def harness_program(code: str, tests: str, *, secret_len: int) -> str:
    """The harness source with the candidate code and the tests embedded (the secret is not: it comes on fd 3)."""
    return _HARNESS % {"payload": (code, tests), "secret_len": secret_len, "secret_fd": SECRET_FD,
                       "report_fd": REPORT_FD, "sep": "\\x1f"}


def test_functions(tests: str) -> list[str]:
    """The top-level ``test_*`` functions the tests define, read by the parent from their source."""
    try:
        tree = ast.parse(tests)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test_")]


class Report:
    """The harness's report as the parent read it: ``valid`` False (with ``problem``) when it cannot be trusted."""

    def __init__(self, *, valid: bool, problem: str = "", status: str = "", tampered: list[str] | None = None,
                 results: dict[str, str] | None = None) -> None:
        self.valid = valid
        self.problem = problem
        self.status = status
        self.tampered = tampered or []
        self.results = results or {}

    @property
    def failed(self) -> dict[str, str]:
        return {n: r for n, r in self.results.items() if r != "ok"}

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "problem": self.problem, "status": self.status, "tampered": self.tampered,
                "results": self.results}

    def __str__(self) -> str:
        return json.dumps(self.to_dict())


def read_report(raw: bytes, secret: bytes, expected_tests: list[str]) -> Report:
    """Cross-check the bytes that came back on the report pipe: one message, our secret, every expected test."""
    if not raw:
        return Report(valid=False, problem="no report from the harness (the process ended before the tests ran)")
    head, _, body = raw.partition(b"\n")
    if head != secret:
        return Report(valid=False, problem="the report channel carried a message without this run's secret")
    if secret in body:
        return Report(valid=False, problem="more than one report on the report channel")
    fields = body.decode("utf-8", "replace").split(_SEP)
    if len(fields) < 2:
        return Report(valid=False, problem="a malformed report")
    status, tampered = fields[0], [t for t in fields[1].split(",") if t]
    results: dict[str, str] = {}
    for item in fields[2:]:
        name, _, outcome = item.rpartition(":")
        results[name] = outcome
    if status == "ok" and not set(expected_tests) <= set(results):
        missing = set(expected_tests) - set(results)
        return Report(valid=False, problem=f"the report leaves out {len(missing)} of the {len(expected_tests)} "
                                           "test functions the parent found",
                      status=status, tampered=tampered, results=results)
    return Report(valid=True, status=status, tampered=tampered, results=results)
