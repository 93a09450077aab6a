"""The engine's shape, checked from its source with ``ast`` (nothing is imported or run).

- no import cycle among the modules of a root;
- ``whileai_core`` never imports pytest or the plugin;
- no folder holds more than ``MAX_MODULES`` modules flat;
- no function longer than ``MAX_FUNCTION_LINES`` lines;
- the plugin's hook implementations live in ``plugin.py`` (``hookspecs.py`` declares the plugin's own hooks).

An edge of the import graph is every ``import``/``from ... import`` statement anywhere in a module: at module
level *and* inside functions and methods (a late import still ties the two modules together; it only hides
the cycle until run time). ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to
``pkg``. Running a package's ``__init__`` on the way to one of its modules is not counted as an edge (every
``__init__`` here only names its package, except ``grade/verify``'s and ``traces``', which re-export their own modules).

The roots are parameters (``ROOTS``/``LENGTH_ROOTS``): the engine, the facade and the plugin. In the plugin,
pytest hook implementations live only in ``plugin.py`` (the ``pytest11`` entry point), plus the methods of
the plugin objects ``plugin.py`` registers itself (``HOOK_CLASSES``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("whileai_core", "whileai", "pytest_whileai")  # import-graph roots checked for cycles and folder size
LENGTH_ROOTS = ("whileai_core", "whileai", "pytest_whileai")  # roots checked for long functions
MAX_MODULES = 12
MAX_FUNCTION_LINES = 100
FORBIDDEN_IN_ENGINE = ("pytest", "_pytest", "pytest_whileai")
HOOK_MODULES = ("pytest_whileai.plugin", "pytest_whileai.hookspecs")  # implementations | the plugin's own specs
# Plugin objects whose methods are hooks, each registered by plugin.py only when its condition holds
# (``config.pluginmanager.register(...)``), so pytest never sees their hooks otherwise.
HOOK_CLASSES = {"pytest_whileai.xdist.XdistHooks": "registered by plugin.py when pytest-xdist is active"}
def modules(root: str) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``root`` (packages by their ``__init__``)."""
    out = {}
    for path in sorted((REPO / root).rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, known: Iterable[str]) -> set[str]:
    """Every module ``module`` imports, at module level or inside a function."""
    known = set(known)
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node, path.name == "__init__.py")
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.add(sub if sub in known else target)
    return out


def graph(root: str) -> dict[str, set[str]]:
    mods = modules(root)
    return {m: {t for t in imports_of(m, p, mods) if t in mods and t != m} for m, p in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize("root", ROOTS)
def test_no_import_cycle(root):
    found = cycles(graph(root))
    assert found == [], f"import cycles in {root} (module-level and function-level imports both count): {found}"


def folder(module: str) -> str:
    """The folder a module lives in: ``root.package`` for a subpackage's module, the module itself at the top."""
    return ".".join(module.split(".")[:2])


def folder_graph(root: str) -> dict[str, set[str]]:
    """Folder -> the folders its modules import (module-level and function-level)."""
    out: dict[str, set[str]] = {}
    for m, targets in graph(root).items():
        out.setdefault(folder(m), set()).update(folder(t) for t in targets if folder(t) != folder(m))
    return out


@pytest.mark.parametrize("root", ROOTS)
def test_no_import_loop_between_folders(root):
    """Two modules need not import each other for their folders to: ``rowlist`` -> ``train.export`` and
    ``train.holdout`` -> ``rowlist`` (as it was before issue 31) is no module cycle, but tied the ground floor and
    ``train`` together; no such loop is allowed."""
    found = cycles(folder_graph(root))
    assert found == [], f"folders of {root} in an import loop (function-level imports count): {found}"


def test_rowlist_exports_through_a_folder_below_every_step():
    """``RowList.export`` (issue 31 item 5) reaches the writer in ``export/``, which imports only the ground floor
    and ``hub``: no step folder (``train`` above all) is reachable from ``rowlist``."""
    g = folder_graph("whileai_core")
    seen, todo = set(), ["whileai_core.rowlist"]
    while todo:
        for t in g.get(todo.pop(), set()) - seen:
            seen.add(t)
            todo.append(t)
    assert "whileai_core.export" in seen
    steps = {"whileai_core." + s for s in ("simulate", "grade", "select", "measure", "guard", "train", "traces")}
    assert not seen & steps, sorted(seen & steps)


def test_cycle_finder_sees_a_function_level_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_engine_never_imports_pytest_or_the_plugin():
    mods = modules("whileai_core")
    known = set(mods) | set(modules("pytest_whileai"))
    seen = set()
    for m, p in mods.items():
        for target in imports_of(m, p, known):
            if target.split(".")[0] in FORBIDDEN_IN_ENGINE:
                seen.add((m, target))
    assert sorted(seen) == [], f"whileai_core imports pytest or the plugin: {sorted(seen)}"


@pytest.mark.parametrize("root", ROOTS)
def test_no_folder_holds_more_than_twelve_modules(root):
    folders: dict[Path, int] = {}
    for path in (REPO / root).rglob("*.py"):
        if path.name != "__init__.py":
            folders[path.parent] = folders.get(path.parent, 0) + 1
    crowded = {str(f.relative_to(REPO)): n for f, n in folders.items() if n > MAX_MODULES}
    assert crowded == {}, f"folders with more than {MAX_MODULES} modules: {crowded}"


def docstring_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of the function's docstring: a public call documents every argument (tests/test_docstrings.py), and
    that text should not count against the size of the code."""
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.end_lineno - first.lineno + 1
    return 0


def long_functions(root: str, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    out = {}
    for m, path in modules(root).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1 - docstring_lines(node)  # decorators, docstring excluded
                if lines > limit:
                    out[f"{m}.{node.name}"] = lines
    return out


@pytest.mark.parametrize("root", LENGTH_ROOTS)
def test_no_function_longer_than_a_hundred_lines(root):
    assert long_functions(root) == {}, f"functions over {MAX_FUNCTION_LINES} lines in {root}"


def test_every_engine_constant_is_read_somewhere():
    """A constant nobody reads is a promise the code does not keep (RETRY_JITTER, SELECT_TARGET were).

    The tree is split into words once (a word is what ``\\b...\\b`` delimits, so the counts are a per-name
    regex's): 1.6 s, where a regex per constant over the whole text took 35-96 s on 2 shared cores."""
    import re
    from collections import Counter

    readers = [p for root in ("whileai_core", "whileai", "pytest_whileai", "tests", "benchmarks")
               for p in (REPO / root).rglob("*.py")]
    words = Counter(w for p in readers for w in re.findall(r"\w+", p.read_text(encoding="utf-8")))
    dead = []
    for m, path in modules("whileai_core").items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
            if isinstance(target, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]+", target.id):
                if words[target.id] < 2:  # the definition itself is one
                    dead.append(f"{m}.{target.id}")
    assert dead == [], f"constants defined but never read: {dead}"


def hook_functions(root: str) -> set[tuple[str, str]]:
    """Every function named ``pytest_*`` in ``root``: (module, ``function`` or ``Class.method``)."""
    out = set()
    for m, path in modules(root).items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            scopes = [(f"{node.name}.", node.body)] if isinstance(node, ast.ClassDef) else [("", [node])]
            for prefix, body in scopes:
                for fn in body:
                    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("pytest_"):
                        out.add((m, prefix + fn.name))
    return out


def test_the_plugin_implements_hooks_only_in_plugin_py():
    found = hook_functions("pytest_whileai")
    elsewhere = sorted(f"{m}.{name}" for m, name in found
                       if m not in HOOK_MODULES and f"{m}.{name.split('.')[0]}" not in HOOK_CLASSES)
    assert elsewhere == [], f"pytest hooks outside pytest_whileai/plugin.py: {elsewhere}"
    registered = (REPO / "pytest_whileai" / "plugin.py").read_text(encoding="utf-8")
    for cls in HOOK_CLASSES:
        assert f"{cls.rsplit('.', 1)[1]}(" in registered and "pluginmanager.register" in registered, cls
    assert any(m == "pytest_whileai.plugin" for m, _ in found)
