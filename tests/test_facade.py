import os
import subprocess
import sys
from pathlib import Path

import pytest

import whileai as wai

ROOT = Path(__file__).resolve().parents[1]


def test_import_is_light():
    code = ("import sys, whileai; heavy = [m for m in ('numpy', 'scipy', 'httpx', 'torch', 'trl', 'pytest') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_version_is_read_on_first_use_not_at_import():
    # importlib.metadata was ~20 ms of a 24 ms ``import whileai`` (issue 34): __version__ is resolved lazily
    code = ("import sys; had = 'importlib.metadata' in sys.modules; import whileai; "
            "print(had or 'importlib.metadata' not in sys.modules, whileai.__version__, "
            "'__version__' in dir(whileai))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "True" and out[2] == "True"
    from whileai_core import distribution_version

    assert out[1] == distribution_version() == wai.__version__


def test_every_public_name_resolves_or_names_its_missing_module():
    missing = []
    for name in wai.__all__:
        module, _ = wai._LAZY.get(name, ("whileai", None))
        try:
            getattr(wai, name)
        except ModuleNotFoundError as exc:
            missing.append((name, exc.name))
        except AttributeError:
            missing.append((name, module))
    # every name in the table must resolve once the project is complete
    assert missing == [], missing


def test_unknown_name():
    import pytest

    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        wai.nope


def test_core_never_imports_pytest():
    code = ("import sys, importlib, pkgutil, whileai_core; "
            "mods=[m.name for m in pkgutil.walk_packages(whileai_core.__path__, 'whileai_core.')]; "
            "[importlib.import_module(m) for m in mods if m.rsplit('.', 1)[-1] not in ('train', 'local_model', "
            "'environment', 'trl_formats')]; print('pytest' in sys.modules, '_pytest' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"


# ---- the facade a type checker reads (issue 31) ---------------------------------------------------------------
BEGIN = "if TYPE_CHECKING:  # generated from _LAZY (tests/test_facade.py checks it): each public name's real type\n"
END = "# end of the generated block\n"


def type_checking_block(lazy: dict) -> str:
    """The ``if TYPE_CHECKING:`` block whileai/__init__.py must hold for its ``_LAZY`` table: each entry as
    ``from m import attr as name`` (an explicit re-export; a namespace imported from its package)."""
    names: dict[str, list[str]] = {}
    for name, (module, attr) in lazy.items():
        if attr is None:  # a namespace: imported from its package
            module, attr = module.rsplit(".", 1)
        names.setdefault(module, []).append(f"{attr} as {name}")
    lines = []
    for module in sorted(names):
        parts = sorted(names[module], key=str.lower)
        line = f"    from {module} import {', '.join(parts)}\n"
        lines.append(line if len(line) <= 111 else
                     f"    from {module} import (\n" + "".join(f"        {p},\n" for p in parts) + "    )\n")
    return BEGIN + "".join(lines) + END


def test_the_type_checking_block_is_the_lazy_table():
    source = Path(wai.__file__).read_text(encoding="utf-8")
    expected = type_checking_block(wai._LAZY)
    assert expected in source, "whileai/__init__.py's TYPE_CHECKING block is out of step with _LAZY; replace it " \
                               "with:\n" + expected


def test_a_users_type_checker_sees_each_public_names_signature(tmp_path):
    pytest.importorskip("mypy")
    (tmp_path / "user.py").write_text("import whileai as wai\n\nreveal_type(wai.simulate)\nreveal_type(wai.pass_at)\n"
                                      "k: int | None = wai.pass_at(rows=[]).k\ns: str = wai.pass_at\n"
                                      # the option objects (issue 31 item 3): typed fields through the facade
                                      "reveal_type(wai.Execution(concurrency=4).concurrency)\n"
                                      "reveal_type(wai.Optim().learning_rate)\nreveal_type(wai.Generation)\n")
    # third-party packages are skipped (their stubs would take a minute to read); whileai's own modules are read
    heavy = ",".join(f"{m}.*" for m in ("numpy", "scipy", "torch", "transformers", "trl", "pytest", "_pytest",
                                          "httpx", "aiohttp", "pluggy", "ray", "mlflow", "jinja2", "plotly",
                                          "junitparser", "yaml", "jsonschema", "math_verify", "pandas"))
    (tmp_path / "mypy.ini").write_text(f"[mypy]\nignore_missing_imports = True\n[mypy-{heavy}]\nfollow_imports = skip\n"
                                       "[mypy-whileai.*,whileai_core.*,pytest_whileai.*]\nfollow_imports = silent\n")
    env = {**os.environ, "MYPYPATH": str(ROOT)}  # an editable install's import hook is invisible to mypy
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", ".cache",
                           "user.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert 'Revealed type is "def (agent: Any =, *, tools:' in out, out
    assert 'Revealed type is "def (rows: Any, k: int | None =' in out, out
    assert "user.py:6: error: Incompatible types in assignment" in out and "Found 1 error" in out, out
    assert 'user.py:7: note: Revealed type is "int"' in out, out
    assert 'user.py:8: note: Revealed type is "float | None"' in out, out
    assert 'Revealed type is "def (num_generations: int =, max_completion_length: int =, temperature: float =) ' \
           '-> whileai_core.options.training.Generation"' in out, out
