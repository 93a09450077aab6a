"""The documentation site builds: ``mkdocs build --strict`` (warnings are failures) and the API pages list
every public name of the ``whileai`` facade, so a new or renamed public call breaks the build until documented.

Measured on the shared 2-core dev box: the strict build takes about 3-4 s (one run, ``time mkdocs build --strict``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import whileai

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
BUILD_TIMEOUT_S = 180  # a hung build fails instead of hanging the suite; convention, untested

pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
pytest.importorskip("mkdocstrings_handlers.python", reason="the docs extra is not installed: pip install -e '.[docs]'")


def api_directives() -> dict[str, str]:
    """Every ``::: target`` line of the API pages, target -> page name."""
    found: dict[str, str] = {}
    for page in sorted(API.glob("*.md")):
        for line in page.read_text(encoding="utf-8").splitlines():
            hit = re.match(r"^:::\s+(\S+)\s*$", line)
            if hit:
                found[hit.group(1)] = page.name
    return found


def test_every_facade_name_has_an_api_entry():
    directives = api_directives()
    missing = []
    for name in whileai.__all__:
        if name == "__version__":
            continue
        module, attr = whileai._LAZY[name]
        target = module if attr is None else f"{module}.{attr}"
        if target not in directives:
            missing.append(f"wai.{name} (add '::: {target}' under a '## `wai.{name}`' heading in docs/api/)")
    assert not missing, "public names without an API entry:\n" + "\n".join(missing)


def test_api_pages_document_only_facade_names():
    """A name removed from the facade leaves no stale API entry behind."""
    targets = {m if a is None else f"{m}.{a}" for m, a in whileai._LAZY.values()}
    stale = sorted(t for t in api_directives() if t not in targets)
    assert not stale, f"API entries for names no longer on the facade: {stale}"


def test_mkdocs_build_strict(tmp_path: Path):
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                          check=False)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-6000:]}"
    assert (tmp_path / "site" / "index.html").exists()
    # the API reference really was generated from the package: a signature rendered for wai.pass_at
    measure = (tmp_path / "site" / "api" / "measure" / "index.html").read_text(encoding="utf-8")
    assert "pass_at" in measure and "min_tasks" in measure
    # the defaults page carries every constant's source, read from the comments in defaults.py by mkdocs_hooks.py
    defaults = (tmp_path / "site" / "api" / "defaults" / "index.html").read_text(encoding="utf-8")
    import whileai_core.defaults as d

    names = [n for n in vars(d) if n.isupper()]
    missing = [n for n in names if f"<code>{n}</code>" not in defaults]
    assert not missing, f"constants missing from the defaults table: {missing}"
    assert "Miller 2024" in defaults and "DAPO" in defaults
