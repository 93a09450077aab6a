"""CodeExec's isolated mode: tests that need the candidate's objects, still decided where the candidate cannot
reach.

Split mode (``split.py``) sends only plain data across the wall. Some tests cannot be written that way: they pass
a lambda or an object of their own to the candidate, or use the candidate's classes (``s = Stack(); s.push(3);
assert s.pop() == 3``). Running such tests inside the candidate's process would hand it the verdict (it can
``os._exit(0)``, close or forge the result channel, fork a writer, walk frames to the runner). So here too the
tests run in the trusted parent (``run_isolated``), and:

* every candidate object that is not plain data stays in the sandbox; the tests see a ``Handle``: attribute reads
  and writes, calls and the operators (``len``, iteration, indexing, ``in``, arithmetic, ``str``, ``bool``) cross
  the wall as requests, and their results come back as plain data or as new handles;
* an object of the tests' own passed to the candidate (a lambda, a key function, an instance of a class the tests
  define) stays here: the sandbox gets a stand-in whose calls and operators run here; of its attributes only
  public data attributes and methods are reachable (no ``_`` names such as ``__globals__`` or ``__closure__``,
  no frames, code, modules or generator internals), so no path leads from a callback to the tests' expectations;
* a candidate object compared (``==``, ``<``, ...) with anything but another candidate object is decided here:
  never equal, never ordered, whatever its ``__eq__`` says. Two candidate objects compare with the candidate's
  own ``__eq__`` (that is what a test comparing two of them tests);
* an ``AssertionError`` raised in one of the tests' callbacks fails the test even when the candidate catches it;
* one fresh sandbox per ``test_*`` function; its exit status, what it prints and anything it writes outside the
  protocol decide nothing: a test passes only when it returned here.

The sandbox's program (``object_server_program``): the candidate as a module named ``solution``, then a server on
fd 3 (requests) and fd 4 (replies), one JSON line each; the first line is a manifest (import status, replaced
builtins, the candidate's top-level names as plain data or handles).
"""

from __future__ import annotations

import inspect
import os
import sys
import time
import types
from typing import Any

from whileai_core.grade.verify import plaindata
from whileai_core.grade.verify.plaindata import Unplain, decode, encode
from whileai_core.grade.verify.split import (
    REPLY_FD,
    REQUEST_FD,
    CandidateGone,
    SplitOutcome,
    Unsplittable,
    _copy_back,
    _Link,
    _raised,
    _run_tests,
    overlay_setup,
    shadows_builtin,
    with_solution_module,
)

__all__ = ["Handle", "object_server_program", "ops_table", "run_isolated"]


def ops_table() -> dict[str, Any]:
    """The operations either side may ask of the other's objects, by name (self-contained: shipped by source)."""
    import operator

    table: dict[str, Any] = {"call": lambda f, *a, **k: f(*a, **k), "getattr": getattr, "setattr": setattr,
                             "delattr": delattr, "len": len, "iter": iter, "next": next, "bool": bool, "str": str,
                             "repr": repr, "hash": hash, "int": int, "float": float, "abs": abs,
                             "index": operator.index, "neg": operator.neg, "pos": operator.pos,
                             "invert": operator.invert}
    for name in ("getitem", "setitem", "delitem", "contains", "eq", "ne", "lt", "le", "gt", "ge"):
        table[name] = getattr(operator, name)
    def reflected(f: Any) -> Any:
        return lambda a, b: f(b, a)

    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor",
                 "lshift", "rshift"):
        table[name] = getattr(operator, name)
        table["r" + name.rstrip("_")] = reflected(getattr(operator, name))
    return table


_SERVER = r'''
def __whileai_objects(code):
    Any = object
    import builtins, json, os, sys
    _write, _exit, _open, _BaseException, _type, _id, _len = os.write, os._exit, open, BaseException, type, id, len
    _loads, _dumps, _getattr, _isinstance, _issubclass, _str = json.loads, json.dumps, getattr, isinstance, issubclass, str
    _builtins_before = dict(builtins.__dict__)
    _watched = [(sys, "exit"), (os, "_exit"), (os, "write"), (os, "read")]
    _watched_before = [getattr(m, a) for m, a in _watched]
%(codec)s
%(ops)s
    OPS = ops_table()
    objs, ids = {}, {}

    def keep(v):
        if _type(v) is Theirs:
            return ["C", object.__getattribute__(v, "_n")]
        n = ids.get(_id(v))
        if n is None or objs[n] is not v:
            n = _len(objs) + 1
            objs[n] = v
            ids[_id(v)] = n
        return ["H", n]

    def resolve(tag, n):
        if tag == "H" and _type(n) is int and n in objs:
            return objs[n]
        if tag == "C" and _type(n) is int:
            return Theirs(n)
        raise Unplain("an unknown handle")

    def out(v):
        return encode(v, hook=keep)

    def inn(data):
        return decode(data, hook=resolve)

    def send(obj):
        data = (_dumps(obj) + "\n").encode()
        while data:
            data = data[_write(%(reply_fd)d, data):]

    requests = _open(%(request_fd)d, "rb")

    def serve(req):
        try:
            fn = OPS[req["do"]]
            args, kwargs = inn(req["args"]), inn(req["kwargs"])
        except _BaseException as exc:
            send({"re": "bad", "why": _type(exc).__name__})
            return
        try:
            result = fn(*args, **kwargs)
        except _BaseException as exc:
            send({"re": "raise", "name": _type(exc).__name__})
            return
        try:
            rep = {"re": "ok", "v": out(result)}
            if req.get("mutable"):
                rep["args"] = out(args)
        except _BaseException as exc:
            rep = {"re": "unplain", "why": _str(exc)[:200]}
        send(rep)

    def ask(op, *args, **kwargs):
        send({"do": op, "args": out(list(args)), "kwargs": out(kwargs)})
        while True:
            line = requests.readline()
            if not line:
                _exit(0)
            msg = _loads(line)
            if "do" in msg:
                serve(msg)
                continue
            if msg.get("re") == "ok":
                return inn(msg["v"])
            cls = _getattr(builtins, _str(msg.get("name")), None)
            if _isinstance(cls, _type) and _issubclass(cls, Exception):
                raise cls("raised by the tests' object")
            raise RuntimeError(_str(msg.get("name")))

    class Theirs:
        __slots__ = ("_n",)

        def __init__(self, n):
            object.__setattr__(self, "_n", n)

        def __call__(self, *a, **k):
            return ask("call", self, *a, **k)

        def __getattr__(self, name):
            return ask("getattr", self, name)

        def __setattr__(self, name, value):
            ask("setattr", self, name, value)

        def __iter__(self):
            return ask("iter", self)

    for _op in OPS:
        if _op not in ("call", "getattr", "setattr", "delattr", "iter"):
            setattr(Theirs, "__%%s__" %% _op.rstrip("_"), (lambda op: lambda self, *a: ask(op, self, *a))(_op))

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
            names[n] = ["module", _str(_getattr(v, "__name__", "")), keep(v)]
            continue
        try:
            names[n] = ["v", out(v)]
        except _BaseException:
            names[n] = ["v", keep(v)]
    send({"status": status, "tampered": tampered, "names": names})
    while True:
        line = requests.readline()
        if not line:
            break
        try:
            req = _loads(line)
        except _BaseException:
            send({"re": "bad", "why": "json"})
            continue
        serve(req)
    _exit(0)


__whileai_objects(%(code)r)
'''


def _indented(*objs: Any) -> str:
    text = "\n".join(inspect.getsource(o) for o in objs).replace("from typing import Any\n", "")
    return "\n".join("    " + ln if ln.strip() else "" for ln in text.splitlines()) + "\n"


def object_server_program(code: str) -> str:
    """The sandbox's program for isolated mode: the candidate plus the object server (no tests in it)."""
    return _SERVER % {"codec": _indented(plaindata.Unplain, plaindata.encode, plaindata.decode),
                      "ops": _indented(ops_table), "code": code, "request_fd": REQUEST_FD, "reply_fd": REPLY_FD}


# --------------------------------------------------------------------------------------------------
# the parent's side
# --------------------------------------------------------------------------------------------------

_UNREACHABLE_TYPES = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType, types.FunctionType,
                      types.MethodType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType,
                      types.BuiltinFunctionType, type)
_UNREACHABLE_PREFIXES = ("_", "gi_", "cr_", "ag_", "f_", "tb_", "co_")


def _attribute_allowed(obj: Any, name: Any) -> bool:
    """May the candidate read or write ``obj.name`` on one of the tests' objects? Public names of plain instances
    only: no ``_`` names, no frames, code, modules, functions' or generators' internals, no classes."""
    return isinstance(name, str) and not name.startswith(_UNREACHABLE_PREFIXES) \
        and not isinstance(obj, _UNREACHABLE_TYPES)


class Handle:
    """A candidate object as the trusted tests see it: it stays in the sandbox; every use crosses the wall."""

    __slots__ = ("_id", "_link")
    _id: int
    _link: ObjectLink

    def __init__(self, link: ObjectLink, n: int) -> None:
        object.__setattr__(self, "_link", link)
        object.__setattr__(self, "_id", n)

    def __getattr__(self, name: str) -> Any:
        return self._link.ask("getattr", self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._link.ask("setattr", self, name, value)

    def __delattr__(self, name: str) -> None:
        self._link.ask("delattr", self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._link.ask("call", self, *args, **kwargs)

    def __iter__(self) -> Any:
        return self._link.ask("iter", self)

    def __next__(self) -> Any:
        return self._link.ask("next", self)

    def __bool__(self) -> bool:
        return self._link.ask("bool", self)

    def __len__(self) -> int:
        return self._link.ask("len", self)

    def __hash__(self) -> int:
        return self._link.ask("hash", self)

    def __str__(self) -> str:
        return self._link.ask("str", self)

    def __repr__(self) -> str:
        return f"<candidate object #{self._id}>"

    def __eq__(self, other: object) -> Any:
        return self._link.ask("eq", self, other) if isinstance(other, Handle) else NotImplemented

    def __ne__(self, other: object) -> Any:
        return self._link.ask("ne", self, other) if isinstance(other, Handle) else NotImplemented


def _remote(op: str) -> Any:
    def method(self: Handle, *args: Any) -> Any:
        return self._link.ask(op, self, *args)
    method.__name__ = f"__{op.rstrip('_')}__"
    return method


def _ordered(op: str) -> Any:
    def method(self: Handle, other: Any) -> Any:
        return self._link.ask(op, self, other) if isinstance(other, Handle) else NotImplemented
    method.__name__ = f"__{op}__"
    return method


for _op in ops_table():
    if _op in ("lt", "le", "gt", "ge"):
        setattr(Handle, f"__{_op}__", _ordered(_op))
    elif _op not in ("call", "getattr", "setattr", "delattr", "iter", "next", "bool", "len", "hash", "str", "repr",
                     "eq", "ne"):
        setattr(Handle, f"__{_op.rstrip('_')}__", _remote(_op))


class ObjectLink:
    """Requests to the sandbox's objects, and the sandbox's requests to the tests' own objects while it works."""

    def __init__(self, req_fd: int, rep_fd: int, deadline: float) -> None:
        self.link = _Link(req_fd, rep_fd, deadline)
        self.handles: dict[int, Handle] = {}
        self.mine: dict[int, Any] = {}
        self.mine_ids: dict[int, int] = {}
        self.ops = ops_table()
        self.callback_failures: list[str] = []

    # encoding: the candidate's objects as handles, the tests' own as "C" references kept here
    def _keep(self, v: Any) -> Any:
        if type(v) is Handle and object.__getattribute__(v, "_link") is self:
            return ["H", object.__getattribute__(v, "_id")]
        n = self.mine_ids.get(id(v))
        if n is None or self.mine[n] is not v:
            n = len(self.mine) + 1
            self.mine[n], self.mine_ids[id(v)] = v, n
        return ["C", n]

    def _resolve(self, tag: str, n: Any) -> Any:
        if type(n) is not int:
            raise Unplain("a malformed handle")
        if tag == "H":
            if n not in self.handles:
                self.handles[n] = Handle(self, n)
            return self.handles[n]
        if n in self.mine:
            return self.mine[n]
        raise Unplain("an unknown reference to the tests' objects")

    def out(self, v: Any) -> Any:
        return encode(v, hook=self._keep)

    def inn(self, data: Any) -> Any:
        return decode(data, hook=self._resolve)

    def send(self, obj: Any) -> None:
        import json
        try:
            self.link.req.write((json.dumps(obj) + "\n").encode())
        except OSError:
            raise CandidateGone("the candidate's process ended before the request") from None

    def ask(self, op: str, *args: Any, **kwargs: Any) -> Any:
        """``op`` on the candidate's objects in the sandbox; serves its requests for the tests' objects meanwhile."""
        if time.monotonic() > self.link.deadline:
            raise CandidateGone("timed out")
        mutable = op == "call" and any(type(a) in (list, dict, set, bytearray) for a in (*args, *kwargs.values()))
        try:
            msg = {"do": op, "args": self.out(list(args)), "kwargs": self.out(dict(kwargs)), "mutable": mutable}
        except Unplain as exc:
            raise TypeError(f"cannot send {exc} to the candidate") from None
        self.link.calls += 1
        self.send(msg)
        while True:
            rep = self.link.read()
            if "do" in rep:
                self._serve(rep)
                continue
            return self._result(op, rep, args)

    def _result(self, op: str, rep: dict[str, Any], args: tuple[Any, ...]) -> Any:
        kind = rep.get("re")
        if kind == "raise":
            if op == "next" and rep.get("name") == "StopIteration":
                raise StopIteration  # the end of a candidate iterator the tests iterate (Handle.__next__)
            _raised(op, str(rep.get("name")))
        if kind == "unplain":
            raise TypeError(f"{op} returned {str(rep.get('why'))[:80]}, which cannot cross the wall")
        if kind != "ok":
            raise CandidateGone(f"a reply that is not the protocol's ({str(rep.get('why', kind))[:80]})")
        try:
            value = self.inn(rep.get("v"))
            after = self.inn(rep["args"]) if "args" in rep else None
        except (Unplain, ValueError, RecursionError) as exc:
            raise CandidateGone(f"a malformed result ({exc})") from None
        if isinstance(after, list) and len(after) == len(args):
            _copy_back(args, after)
        return value

    def _serve(self, req: dict[str, Any]) -> None:
        """The candidate asked for something of one of the tests' objects (its first argument): run it here, within
        what ``_attribute_allowed`` allows."""
        op, raw = req.get("do"), req.get("args")
        try:
            if not (isinstance(op, str) and op in self.ops and isinstance(raw, list) and len(raw) == 2
                    and raw[0] == "l" and isinstance(raw[1], list) and raw[1] and isinstance(raw[1][0], list)
                    and raw[1][0][:1] == ["C"]):
                raise PermissionError("the candidate may use only the tests' own objects it was given")
            args, kwargs = self.inn(raw), self.inn(req.get("kwargs"))
            if not isinstance(kwargs, dict) or op.endswith("attr") and not (
                    len(args) >= 2 and _attribute_allowed(args[0], args[1])):
                raise PermissionError("not an attribute the candidate may reach")
        except (Unplain, ValueError, RecursionError, PermissionError) as exc:
            self.send({"re": "raise", "name": "PermissionError" if isinstance(exc, PermissionError) else "TypeError"})
            return
        try:
            result = self.ops[op](*args, **kwargs)
            rep = {"re": "ok", "v": self.out(result)}
        except (CandidateGone, Unsplittable):
            raise
        except AssertionError:
            self.callback_failures.append(op)  # a failed check in the tests' callback fails the test, caught or not
            rep = {"re": "raise", "name": "AssertionError"}
        except Exception as exc:  # noqa: BLE001 - the tests' object raised: the candidate sees the class name
            rep = {"re": "raise", "name": type(exc).__name__}
        self.send(rep)

    def namespace(self, names: Any, out: SplitOutcome) -> dict[str, Any]:
        """The tests' namespace: the candidate's top-level names as plain values or handles."""
        import builtins
        ns: dict[str, Any] = {"__name__": "tests", "__builtins__": builtins}
        if not isinstance(names, dict):
            raise CandidateGone("a manifest that is not the protocol's")
        for n, spec in names.items():
            if not (isinstance(n, str) and n.isidentifier() and isinstance(spec, list) and len(spec) in (2, 3)):
                raise CandidateGone("a manifest that is not the protocol's")
            if shadows_builtin(n, out):
                continue
            try:
                if spec[0] == "module" and len(spec) == 3:
                    # a module the parent has already imported (no import runs here on the candidate's word)
                    mod = sys.modules.get(spec[1]) if isinstance(spec[1], str) else None
                    ns[n] = mod if isinstance(mod, types.ModuleType) else self.inn(spec[2])
                elif spec[0] == "v" and len(spec) == 2:
                    ns[n] = self.inn(spec[1])
                else:
                    raise CandidateGone("a manifest that is not the protocol's")
            except (Unplain, ValueError, RecursionError):
                raise CandidateGone("a manifest value that is not plain data or a handle") from None
        return ns


def run_isolated(tests: str, unit: str, req_fd: int, rep_fd: int, deadline: float, out: SplitOutcome) -> None:
    """The trusted side of one isolated run (a thread of the parent): read the manifest, run the tests' top level
    and then ``unit`` (a ``test_*`` function; "" for the top level alone) here, with the candidate's objects as
    handles; record the outcome in ``out``. Closes ``req_fd`` when done."""
    link = ObjectLink(req_fd, rep_fd, deadline)
    try:
        manifest = link.link.read()
        if "do" in manifest or "re" in manifest:
            raise CandidateGone("a request before the manifest")
        out.status = str(manifest.get("status", ""))[:100]
        tampered = manifest.get("tampered")
        out.tampered = [str(t)[:60] for t in tampered][:50] if isinstance(tampered, list) else []
        ns = link.namespace(manifest.get("names"), out)
        if out.status != "ok":
            return
        if not overlay_setup(ns, out):
            return
        with_solution_module(ns)
        _run_tests(tests, ns, out, [unit] if unit else [], deadline=deadline)
        if link.callback_failures:
            if unit and out.results.get(unit) == "ok":
                out.results[unit] = "AssertionError"
            elif not unit and out.status == "ok":
                out.status = "tests:AssertionError"
    except CandidateGone as exc:
        out.protocol = str(exc)
    except Unsplittable as exc:  # not raised by handles; kept so a stray one is a failure, not a crash
        out.unsplittable = str(exc)
    finally:
        out.calls = link.link.calls
        out.done = True
        try:
            os.close(req_fd)
        except OSError:
            pass
