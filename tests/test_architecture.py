"""The engine's shape, checked from its source with ``ast`` (nothing is imported or run).

- no import cycle among the modules of a root;
- ``whileai_core`` never imports pytest or the plugin;
- no folder holds more than ``MAX_MODULES`` modules flat;
- no function longer than ``MAX_FUNCTION_LINES`` lines.

An edge of the import graph is every ``import``/``from ... import`` statement anywhere in a module: at module
level *and* inside functions and methods (a late import still ties the two modules together; it only hides
the cycle until run time). ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to
``pkg``. Running a package's ``__init__`` on the way to one of its modules is not counted as an edge (every
``__init__`` here only names its package, except ``grade/verify``'s and ``traces``', which re-export their own modules).

The roots are parameters: the lead extends ``ROOTS``/``LENGTH_ROOTS`` with ``pytest_whileai`` once the plugin
follows the same rules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("whileai_core", "whileai")  # import-graph roots checked for cycles and folder size
LENGTH_ROOTS = ("whileai_core", "whileai")  # roots checked for long functions
MAX_MODULES = 12
MAX_FUNCTION_LINES = 100
FORBIDDEN_IN_ENGINE = ("pytest", "_pytest", "pytest_whileai")

# Imports of the plugin the engine still makes, each with the issue that removes it. The test fails when an
# entry is no longer needed, so the list can only shrink.
PENDING_PLUGIN_IMPORTS = {
    ("whileai_core.cli", "pytest_whileai.store"): "issue 13: the lead moves the baseline store out of the plugin",
    ("whileai_core.cli", "pytest_whileai.gate"): "issue 13: the lead moves the gate comparison out of the plugin",
}


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
    unexpected = sorted(seen - set(PENDING_PLUGIN_IMPORTS))
    stale = sorted(set(PENDING_PLUGIN_IMPORTS) - seen)
    assert unexpected == [], f"whileai_core imports pytest or the plugin: {unexpected}"
    assert stale == [], f"these imports are gone: delete them from PENDING_PLUGIN_IMPORTS: {stale}"


@pytest.mark.parametrize("root", ROOTS)
def test_no_folder_holds_more_than_twelve_modules(root):
    folders: dict[Path, int] = {}
    for path in (REPO / root).rglob("*.py"):
        if path.name != "__init__.py":
            folders[path.parent] = folders.get(path.parent, 0) + 1
    crowded = {str(f.relative_to(REPO)): n for f, n in folders.items() if n > MAX_MODULES}
    assert crowded == {}, f"folders with more than {MAX_MODULES} modules: {crowded}"


def long_functions(root: str, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    out = {}
    for m, path in modules(root).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1  # decorators excluded, docstring included
                if lines > limit:
                    out[f"{m}.{node.name}"] = lines
    return out


@pytest.mark.parametrize("root", LENGTH_ROOTS)
def test_no_function_longer_than_a_hundred_lines(root):
    assert long_functions(root) == {}, f"functions over {MAX_FUNCTION_LINES} lines in {root}"


def test_every_engine_constant_is_read_somewhere():
    """A constant nobody reads is a promise the code does not keep (RETRY_JITTER, SELECT_TARGET were)."""
    import re

    readers = [p for root in ("whileai_core", "whileai", "pytest_whileai", "tests", "benchmarks")
               for p in (REPO / root).rglob("*.py")]
    text = "\n".join(p.read_text(encoding="utf-8") for p in readers)
    dead = []
    for m, path in modules("whileai_core").items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
            if isinstance(target, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]+", target.id):
                if len(re.findall(rf"\b{target.id}\b", text)) < 2:  # the definition itself is one
                    dead.append(f"{m}.{target.id}")
    assert dead == [], f"constants defined but never read: {dead}"
