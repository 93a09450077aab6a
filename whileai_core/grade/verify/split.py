"""CodeExec's verdict where the candidate cannot reach it: the tests run in the trusted parent, the candidate in
the sandbox, and only plain data crosses between them.

``split`` mode. The sandbox's program (``server_program``) runs the candidate as a module named ``solution``,
then answers requests on fd 3 with replies on fd 4, one JSON line each: first a manifest (the import status,
which built-ins or exits the code replaced, and what each top-level name is: a function, a class, a module, a
plain value), then for each ``call`` the result as tagged plain data (``plaindata.encode``) or the name of the
exception raised. The hidden tests never enter the sandbox: they run here (``run_split``) in a namespace where
each candidate function is a ``Remote`` that sends its arguments and decodes the result into built-in values,
so an always-true ``__eq__``, a shadowed builtin, a replaced ``sys.modules['math']``, frames, ``settrace``,
``/proc/self/mem`` or ``gc`` in the sandbox have no verdict, no expectation and no secret to reach: the
comparison, tolerance and aggregation happen in this process.

What cannot be split raises ``Unsplittable`` (an argument that is not plain data, a candidate class or opaque
object used by the tests): CodeExec then runs in isolated mode (``objects.py``): the tests still run here, the
candidate's objects stay in a fresh sandbox per test as handles, and the row says which mode decided.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import os
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

from whileai_core.grade.verify import plaindata
from whileai_core.grade.verify.codetext import parse_module
from whileai_core.grade.verify.plaindata import Unplain, decode, encode

__all__ = ["CandidateGone", "Report", "SplitOutcome", "Unsplittable", "overlay_setup", "run_split", "server_program",
           "shadows_builtin", "test_units", "with_solution_module"]

REQUEST_FD = 3
REPLY_FD = 4
_MAX_LINE = 64 << 20  # bytes of one reply line (a returned value); convention


class Unsplittable(BaseException):
    """The tests need something that cannot cross as plain data. ``by_candidate``: because of what the candidate
    defined (a class or an object where a function was expected), which must not let a candidate choose the
    weaker isolated mode; else because of what the tests pass (an argument that is not plain data)."""

    def __init__(self, why: str, by_candidate: bool = False) -> None:
        super().__init__(why)
        self.by_candidate = by_candidate


class Report:
    """What the trusted side found, as CodeExec reads it: ``valid`` False (with ``problem``) when there is no
    verdict (the tests did not finish, the protocol broke); else the import ``status`` ("ok", "candidate:<Exc>",
    "tests:<Exc>"), the built-ins the code replaced (``tampered``) and each test function's result."""

    def __init__(self, *, valid: bool, problem: str = "", status: str = "", tampered: list[str] | None = None,
                 results: dict[str, str] | None = None, shadowed: list[str] | None = None) -> None:
        self.shadowed = shadowed or []  # candidate names shadowing a builtin, kept from the tests
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


class CandidateGone(BaseException):
    """The candidate's process ended, timed out or broke the protocol while a test waited on it."""


class CandidateRaised(Exception):
    """The candidate raised an exception that is not a built-in one (its class name is the message)."""


_SERVER = r'''
def __whileai_server(code):
    Any = object
    import builtins, json, os, sys
    _write, _exit, _open, _BaseException, _type = os.write, os._exit, open, BaseException, type
    _builtins_before = dict(builtins.__dict__)
    _watched = [(sys, "exit"), (os, "_exit"), (os, "write"), (os, "read")]
    _watched_before = [getattr(m, a) for m, a in _watched]
%(codec)s
    def reply(obj):
        data = (json.dumps(obj) + "\n").encode()
        while data:
            data = data[_write(%(reply_fd)d, data):]

    ns = {"__name__": "solution", "__builtins__": builtins, "__file__": "solution.py"}
    status = "ok"
    try:
        exec(compile(code, "solution.py", "exec"), ns)
    except _BaseException as exc:
        status = "candidate:" + _type(exc).__name__
    tampered = [k for k, v in _builtins_before.items() if builtins.__dict__.get(k, _BaseException) is not v]
    tampered += [m.__name__ + "." + a for (m, a), v in zip(_watched, _watched_before) if getattr(m, a, None) is not v]
    names = {}
    for n, v in list(ns.items()):
        if n.startswith("__"):
            continue
        if _type(v).__name__ == "module":
            names[n] = ["module", v.__name__]
        elif isinstance(v, _type):
            names[n] = ["class", 0]
        elif callable(v):
            names[n] = ["function", 0]
        else:
            try:
                names[n] = ["value", encode(v)]
            except Unplain:
                names[n] = ["opaque", 0]
    reply({"status": status, "tampered": tampered, "names": names})
    requests = _open(%(request_fd)d, "rb")
    for line in requests:
        try:
            req = json.loads(line)
            args, kwargs = decode(req["args"]), decode(req["kwargs"])
            fn = ns[req["call"]]
        except _BaseException as exc:
            reply({"error": "bad request: " + _type(exc).__name__})
            continue
        try:
            result = fn(*args, **kwargs)
        except _BaseException as exc:
            reply({"raise": _type(exc).__name__})
            continue
        try:
            out = {"ok": encode(result)}
            if req.get("mutable"):
                out["args"] = encode(args)
        except _BaseException as exc:
            out = {"unplain": str(exc)[:200]}
        reply(out)
    _exit(0)


__whileai_server(%(code)r)
'''


def _codec_source() -> str:
    """``Unplain``, ``encode`` and ``decode`` as source, indented into the server function."""
    parts = [inspect.getsource(plaindata.Unplain), inspect.getsource(plaindata.encode),
             inspect.getsource(plaindata.decode)]
    text = "\n".join(parts).replace("from typing import Any\n", "")
    return "\n".join("    " + ln if ln.strip() else "" for ln in text.splitlines()) + "\n"


def server_program(code: str) -> str:
    """The sandbox's program for split mode: the candidate plus the plain-data server (no tests in it)."""
    return _SERVER % {"codec": _codec_source(), "code": code, "request_fd": REQUEST_FD, "reply_fd": REPLY_FD}


# --------------------------------------------------------------------------------------------------
# the parent's side
# --------------------------------------------------------------------------------------------------


class _Link:
    """One request/reply exchange at a time with the sandbox, each bounded by the run's deadline."""

    def __init__(self, req_fd: int, rep_fd: int, deadline: float) -> None:
        self.req = os.fdopen(req_fd, "wb", buffering=0, closefd=False)
        self.rep = os.fdopen(rep_fd, "rb", closefd=False)
        self.deadline = deadline
        self.lock = threading.Lock()
        self.calls = 0

    def read(self) -> dict[str, Any]:
        line = self.rep.readline(_MAX_LINE)
        if not line:
            raise CandidateGone("the candidate's process ended (or timed out) before replying")
        if not line.endswith(b"\n"):
            raise CandidateGone("a reply over the size limit")
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: a line of "[[[[..." deeper than the parser's stack
            raise CandidateGone("a reply that is not the protocol's JSON") from None
        if not isinstance(obj, dict):
            raise CandidateGone("a reply that is not the protocol's JSON object")
        return obj

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if time.monotonic() > self.deadline:
            raise CandidateGone("timed out")
        try:
            enc_args, enc_kwargs = encode(list(args)), encode(dict(kwargs))
        except Unplain as exc:
            raise Unsplittable(f"an argument to {name}() is {exc}") from None
        mutable = any(type(a) in (list, dict, set, bytearray) for a in (*args, *kwargs.values()))
        with self.lock:
            self.calls += 1
            try:
                self.req.write((json.dumps({"call": name, "args": enc_args, "kwargs": enc_kwargs,
                                            "mutable": mutable}) + "\n").encode())
            except OSError:
                raise CandidateGone("the candidate's process ended before the call") from None
            rep = self.read()
        return _result(name, rep, args)


def _raised(name: str, exc_name: str) -> None:
    """Re-raise here what the candidate's ``name`` raised: a built-in exception class as itself, an exit as the
    candidate gone, anything else as ``CandidateRaised``."""
    if exc_name in ("StopIteration", "StopAsyncIteration"):
        # as PEP 479 does for generators: re-raised as itself it would end the tests' map()/iterator early, so
        # `all(map(check, cases))` would pass on a candidate that raises it at once
        raise RuntimeError(f"the candidate's {name}() raised {exc_name}")
    cls = getattr(builtins, exc_name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, Unsplittable):
        raise cls(f"raised by the candidate's {name}()")
    if exc_name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        raise CandidateGone(f"the candidate's {name}() raised {exc_name}")
    raise CandidateRaised(exc_name[:80])


def _result(name: str, rep: dict[str, Any], args: tuple[Any, ...]) -> Any:
    if "raise" in rep:
        _raised(name, str(rep["raise"]))
    if "unplain" in rep:
        raise TypeError(f"{name}() returned {str(rep['unplain'])[:80]}, not plain data (scored as a failure)")
    if "ok" not in rep:
        raise CandidateGone(f"a reply that is not the protocol's ({str(rep.get('error', 'no result'))[:80]})")
    try:
        value = decode(rep["ok"])
        after = decode(rep["args"]) if "args" in rep else None
    except (Unplain, ValueError, RecursionError) as exc:
        raise CandidateGone(f"a malformed result ({exc})") from None
    if isinstance(after, list) and len(after) == len(args):
        _copy_back(args, after)
    return value


def _copy_back(args: tuple[Any, ...], after: list[Any]) -> None:
    """Mutations the candidate made to list/dict/set arguments, applied to the tests' own objects."""
    for orig, new in zip(args, after):
        if type(orig) is list and type(new) is list:
            orig[:] = new
        elif type(orig) is dict and type(new) is dict or type(orig) is set and type(new) is set:
            orig.clear()
            orig.update(new)


class Remote:
    """A candidate function as the trusted tests see it: calls cross the wall as plain data."""

    def __init__(self, link: _Link, name: str) -> None:
        self._link, self.__name__ = link, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._link.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<candidate function {self.__name__}>"


class _Opaque:
    """A candidate class or object the tests would need in-process: using it makes the task unsplittable."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        raise Unsplittable(f"the tests use the candidate's {self._name}.{attr}", by_candidate=True)

    def __call__(self, *a: Any, **k: Any) -> Any:
        raise Unsplittable(f"the tests call the candidate's class or object {self._name}", by_candidate=True)


def test_units(tests: str) -> list[str]:
    """The top-level ``test_*`` functions the tests define, read from their source."""
    try:
        tree = parse_module(tests)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test_")]


class SplitOutcome:
    """What the trusted side found: the import status, replaced names, per-test results, and the calls made."""

    def __init__(self, entry: str | None = None, setup: str = "") -> None:
        self.entry = entry  # CodeExec's explicit entry_point=: the one name that may shadow a builtin
        self.setup = setup  # CodeExec's setup=: the task's own code, trusted, whose helpers the tests keep
        self.shadowed: list[str] = []  # candidate names that shadow a builtin, kept from the tests
        self.status = "ok"
        self.tampered: list[str] = []
        self.results: dict[str, str] = {}
        self.protocol: str = ""
        self.unsplittable: str = ""
        self.by_candidate = False
        self.done = False  # set when the trusted side finished (a test still running is never a pass)
        self.calls = 0


_BUILTIN_NAMES = frozenset(dir(builtins))


def shadows_builtin(name: str, out: SplitOutcome) -> bool:
    """A candidate's top-level ``abs``/``len``/``sorted``... is never handed to the tests (they would compare with
    the candidate's own ``abs``); recorded in ``out.shadowed``. Only an explicit ``entry_point=`` may. Dunder names
    (``__builtins__``, ``__name__``: only a forged manifest sends them) are dropped silently."""
    if name.startswith("__"):
        return True
    if name in _BUILTIN_NAMES and name != out.entry:
        out.shadowed.append(name)
        return True
    return False


def _stubs(setup: str) -> set[str]:
    """Functions in ``setup`` with no body of their own (a docstring, ``pass`` or ``...``): the candidate's to write."""
    try:
        tree = parse_module(setup)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and all(isinstance(b, ast.Pass) or isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
                    for b in n.body)}


def overlay_setup(ns: dict[str, Any], out: SplitOutcome) -> bool:
    """The task's ``setup`` code run here, trusted: the names it defines (a prompt's helper, such as HumanEval/32's
    ``poly``, that the tests call) replace the candidate's versions in the tests' namespace, so redefining a helper
    the tests check with is no pass. Stubs and the explicit entry point stay the candidate's."""
    if not out.setup.strip():
        return True
    trusted: dict[str, Any] = {"__name__": "tests", "__builtins__": builtins}
    try:
        exec(compile(out.setup, "setup.py", "exec"), trusted)  # noqa: S102 - the task's own code, like its tests
    except Exception as exc:  # noqa: BLE001 - the task's setup failing here fails the row, named
        out.status = "tests:" + _name(exc)
        return False
    keep = _stubs(out.setup) | {out.entry}
    for n, v in trusted.items():
        if not n.startswith("__") and n not in keep:
            ns[n] = v
    return True


def with_solution_module(ns: dict[str, Any]) -> None:
    """Give the tests ``import solution`` / ``from solution import f``: the candidate's module as the tests see it
    (its names from ``ns``: stand-ins, handles, plain values), through the tests' own ``__import__``. Never a
    ``solution`` module on the grader's path (a reference solution there would pass every candidate), and no
    change to this process's ``sys.modules``."""
    mod = types.ModuleType("solution")
    mod.__dict__.update({n: v for n, v in ns.items() if not n.startswith("__")})
    real_import = builtins.__import__

    def tests_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level == 0 and (name == "solution" or name.startswith("solution.")):
            if name != "solution":
                raise ModuleNotFoundError(f"No module named {name!r}")
            return mod
        return real_import(name, globals, locals, fromlist, level)

    ns["__builtins__"] = {**builtins.__dict__, "__import__": tests_import}


def _namespace(link: _Link, names: Any, out: SplitOutcome) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "tests", "__builtins__": builtins}
    if not isinstance(names, dict):
        raise CandidateGone("a manifest that is not the protocol's")
    for n, spec in names.items():
        if not (isinstance(n, str) and n.isidentifier() and isinstance(spec, list) and len(spec) == 2):
            raise CandidateGone("a manifest that is not the protocol's")
        if shadows_builtin(n, out):
            continue
        kind, payload = spec
        if kind == "function":
            ns[n] = Remote(link, n)
        elif kind == "value":
            try:
                ns[n] = decode(payload)
            except (Unplain, ValueError, RecursionError):
                raise CandidateGone("a manifest value that is not plain data") from None
        elif kind == "module" and isinstance(payload, str) and (payload in sys.modules or (
                payload in sys.stdlib_module_names and payload not in _IMPORT_SIDE_EFFECTS)):
            try:
                ns[n] = importlib.import_module(payload)  # trusted stdlib; the candidate only named it
            except ImportError:
                ns[n] = _Opaque(n)
        else:
            ns[n] = _Opaque(n)
    return ns


# standard modules whose import acts (opens a browser or a window, prints): never imported here on the
# candidate's word (a manifest naming ``antigravity`` would open a browser on the grader's host)
_IMPORT_SIDE_EFFECTS = frozenset({"antigravity", "this", "__hello__", "__phello__", "turtle", "turtledemo",
                                  "tkinter", "idlelib", "webbrowser", "pydoc", "pdb", "code", "site", "ensurepip",
                                  "venv", "pip"})


def _name(exc: BaseException) -> str:
    return type(exc).__name__


def run_split(tests: str, req_fd: int, rep_fd: int, deadline: float, out: SplitOutcome) -> None:
    """The trusted side of a split run (a thread of the parent): read the manifest, run the tests here with
    ``Remote`` candidate functions, record each test's outcome in ``out``. Closes ``req_fd`` when done."""
    link = _Link(req_fd, rep_fd, deadline)
    try:
        manifest = link.read()
        out.status = str(manifest.get("status", ""))[:100]
        out.tampered = [str(t)[:60] for t in manifest.get("tampered", [])][:50] \
            if isinstance(manifest.get("tampered"), list) else []
        ns = _namespace(link, manifest.get("names"), out)
        if out.status != "ok":
            return
        if overlay_setup(ns, out):
            with_solution_module(ns)
            _run_tests(tests, ns, out, deadline=deadline)
    except CandidateGone as exc:
        out.protocol = str(exc)
    except Unsplittable as exc:
        out.unsplittable, out.by_candidate = str(exc), exc.by_candidate
    finally:
        out.calls = link.calls
        out.done = True
        try:
            os.close(req_fd)
        except OSError:
            pass


def _deadline_tracer(deadline: float) -> Any:
    """A trace function for the tests' own frames (``tests.py``) that ends them at the run's deadline, so a test
    looping on what the candidate returned (``for _ in range(n)``, n = 10**15) cannot keep a thread of the grader
    busy after the sandbox is gone. Other frames are not traced."""
    def local(frame: Any, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise CandidateGone("timed out (the tests were still running at the deadline)")
        return local

    def start(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == "tests.py" else None
    return start


def _run_tests(tests: str, ns: dict[str, Any], out: SplitOutcome, units: list[str] | None = None,
               deadline: float | None = None) -> None:
    """Run the tests' top level in ``ns``, then each of ``units`` (default: every top-level ``test_*``); past
    ``deadline`` the tests' own code stops (``CandidateGone``)."""
    if deadline is not None:
        sys.settrace(_deadline_tracer(deadline))  # this thread only: the run's channel thread
    try:
        _run_units(tests, ns, out, units)
    finally:
        if deadline is not None:
            sys.settrace(None)


def _run_units(tests: str, ns: dict[str, Any], out: SplitOutcome, units: list[str] | None) -> None:
    try:
        exec(compile(tests, "tests.py", "exec"), ns)  # noqa: S102 - the task's own trusted tests, in the parent
    except (CandidateGone, Unsplittable):
        raise
    except BaseException as exc:  # noqa: BLE001 - a failing top-level assert is a result
        out.status = "tests:" + _name(exc)
        return
    for name in test_units(tests) if units is None else units:
        fn = ns.get(name)
        if not callable(fn):
            out.results[name] = "missing"
            continue
        try:
            fn()
            out.results[name] = "ok"
        except (CandidateGone, Unsplittable):
            raise
        except BaseException as exc:  # noqa: BLE001
            out.results[name] = _name(exc)


ChannelFn = Callable[[int, int], None]
