import subprocess
import sys

import whileai as wai


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
