"""The program in a chat reply: which fenced blocks to grade, the names the tests call, and tampering marks.

Everything here reads text with ``ast``; nothing runs. ``extract_code`` never raises on any reply.
"""

from __future__ import annotations

import ast
import builtins
import re
import threading
import warnings
from collections.abc import Iterable

__all__ = ["entry_points", "extract_code", "fenced_blocks", "tamper_marks"]


# --------------------------------------------------------------------------------------------------
# Fenced blocks
# --------------------------------------------------------------------------------------------------

# a fence opens with ``` or ~~~ (3 or more), an optional info string, and closes with the same run
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)^[ \t]*(?P=fence)[ \t]*$",
                    re.DOTALL | re.MULTILINE)
# info strings read as Python (the first word, any case): "Python", "python3", "py", "py3", "ipython", none
_PYTHON_INFO = {"", "python", "python3", "python2", "py", "py3", "ipython", "ipython3", "pycon", "sage"}


def fenced_blocks(text: str) -> list[str]:
    """The bodies of the reply's fenced blocks whose info string reads as Python (or is empty), in order."""
    out = []
    for m in _FENCE.finditer(text or ""):
        info = m.group("info").strip().lower()
        word = re.split(r"[\s{,]", info, maxsplit=1)[0].lstrip(".")
        if word in _PYTHON_INFO:
            out.append(m.group("body"))
    return out


def _top_level_defs(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


#: CPython 3.11/3.12 count ast construction's recursion depth in interpreter-wide state: two threads building
#: trees at once (a collection's callback can hand the GIL over mid-tree) raise "SystemError: AST constructor
#: recursion depth mismatch" (python/cpython#106905). Judges parse on a thread pool, so every parse of ours
#: holds this lock (re-entrant: a callback on the same thread may parse too).
_PARSE_LOCK = threading.RLock()


def parse_module(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time (see ``_PARSE_LOCK``); raises what ``ast.parse`` raises."""
    with _PARSE_LOCK:
        return ast.parse(source)


def parse_expression(source: str) -> ast.Expression:
    """``ast.parse(source, mode="eval")``, one thread at a time (see ``_PARSE_LOCK``)."""
    with _PARSE_LOCK:
        return ast.parse(source, mode="eval")


def _parse(source: str) -> ast.Module | None:
    """The reply's syntax tree, or None; its SyntaxWarnings (``1_a``, ``"\\d"``) are the candidate's, not ours."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            return parse_module(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _defines(block: str, names: set[str]) -> bool:
    tree = _parse(block)
    if tree is not None:
        return bool(_top_level_defs(tree) & names)
    return any(re.search(rf"^(?:async\s+)?(?:def|class)\s+{re.escape(n)}\b", block, re.MULTILINE) for n in names)


def _helpers(block: str) -> str:
    """The imports, function and class definitions of a block (its top-level statements dropped)."""
    tree = _parse(block)
    if tree is None:
        return ""
    keep = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    lines = block.splitlines()
    parts = []
    for node in tree.body:
        if isinstance(node, keep):
            start = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
            parts.append("\n".join(lines[start - 1:node.end_lineno]))
    return "\n".join(parts)


def extract_code(text: str, entry_point: str | Iterable[str] | None = None) -> str:
    """The program to grade in a reply.

    Fenced blocks count when their info string reads as Python in any case (```` ```Python ````,
    ```` ```python3 ````, ```` ```py ````) or is empty; other languages (```` ```bash ````, ```` ```text ````)
    are skipped. With no such block the whole reply is the program. With one block, that block. With several:
    the blocks that define an ``entry_point`` name (a function, class or assignment at top level), in order,
    preceded by the imports and definitions of the other blocks (so a helper in its own block still counts);
    the other blocks' top-level statements (example usage, prints, ``input()``) are dropped. When no entry point
    is known or no block defines one, the last block. Never raises.

    >>> extract_code("Sure:\\n```Python\\ndef f():\\n    return 1\\n```\\n```py\\nprint(f())\\n```", "f")
    'def f():\\n    return 1\\n'
    """
    text = text if isinstance(text, str) else ""
    blocks = fenced_blocks(text)
    if not blocks:
        return text
    if len(blocks) == 1:
        return blocks[0]
    names = {entry_point} if isinstance(entry_point, str) else set(entry_point or ())
    chosen = [b for b in blocks if names and _defines(b, names)]
    if not chosen:
        return blocks[-1]
    helpers = [h for h in (_helpers(b) for b in blocks if b not in chosen) if h.strip()]
    return "\n\n".join(helpers + [c.rstrip("\n") for c in chosen]) + "\n"


# --------------------------------------------------------------------------------------------------
# The names the tests call
# --------------------------------------------------------------------------------------------------


def entry_points(tests: str) -> set[str]:
    """Names the tests read but never bind (the candidate's functions and classes they call); {} if unparseable."""
    tree = _parse(tests or "")
    if tree is None:
        return set()
    bound: set[str] = set(dir(builtins))
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return read - bound


# --------------------------------------------------------------------------------------------------
# Tampering marks: code that reaches for the interpreter the grader runs in
# --------------------------------------------------------------------------------------------------

# attribute or name -> what it touches. Reaching for these is how a candidate forges a verdict in-process.
_TOUCHES = {
    "exit": "sys.exit/exit", "_exit": "os._exit", "quit": "quit", "abort": "os.abort", "kill": "os.kill",
    "builtins": "builtins", "__builtins__": "builtins", "_getframe": "frames", "currentframe": "frames",
    "f_back": "frames", "f_locals": "frames", "f_globals": "frames", "f_code": "frames", "co_consts": "frames",
    "tb_frame": "frames", "stack": "frames", "settrace": "tracing", "setprofile": "tracing",
    "get_objects": "gc", "get_referrers": "gc", "get_referents": "gc", "atexit": "atexit",
    "excepthook": "sys hooks", "displayhook": "sys hooks", "modules": "sys.modules", "__main__": "the runner",
    "ctypes": "ctypes", "write": "os.write", "__closure__": "frames", "cell_contents": "frames",
}
_MODULE_ATTRS = {"write": {"os"}, "kill": {"os"}, "abort": {"os"}, "modules": {"sys"}, "stack": {"inspect"},
                 "exit": {"sys", "os"}}


def _is_main_guard(node: ast.AST) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    parts = [node.test.left, *node.test.comparators]
    return any(isinstance(p, ast.Name) and p.id == "__name__" for p in parts) and any(
        isinstance(p, ast.Constant) and p.value == "__main__" for p in parts)


def _walk_live(tree: ast.AST) -> Iterable[ast.AST]:
    """``ast.walk`` that skips ``if __name__ == "__main__":`` bodies (they never run when graded as a module)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not _is_main_guard(child):
                todo.append(child)


def tamper_marks(code: str) -> list[str]:
    """What the code touches that can forge a verdict: ``["sys.exit/exit: line 3", ...]`` (sorted, unique).

    Looks at names, attributes, imports and string literals naming them; ignores ``if __name__ == "__main__":``
    demo blocks, which never run when the candidate is graded as a module. Unparseable code gives [].
    """
    tree = _parse(code or "")
    if tree is None:
        return []
    marks: set[str] = set()
    for node in _walk_live(tree):
        name, owner = None, None
        if isinstance(node, ast.Attribute):
            name = node.attr
            owner = node.value.id if isinstance(node.value, ast.Name) else None
        elif isinstance(node, ast.Name) and node.id in ("exit", "quit", "__builtins__"):
            name = node.id
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                                                   else [])
            for mod in mods:
                root = mod.split(".")[0]
                if root in ("builtins", "ctypes", "atexit", "gc", "inspect"):
                    marks.add(f"{_TOUCHES.get(root) or root}: line {node.lineno}")
            continue
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ("__main__", "builtins"):
            name = node.value
        if name is None or name not in _TOUCHES:
            continue
        if isinstance(node, ast.Attribute) and name in _MODULE_ATTRS and owner not in _MODULE_ATTRS[name]:
            continue
        marks.add(f"{_TOUCHES[name]}: line {getattr(node, 'lineno', 0)}")
    return sorted(marks)
