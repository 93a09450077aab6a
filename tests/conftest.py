"""Fixtures shared across the suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fakeserver import FakeServer

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "plugin_project"
# Third-party pytest plugins the environment registers that no pytest run started by a test uses: langsmith's
# (via langchain-core) and hypothesis' took 3.2 of a child pytest's 4.3 CPU seconds to import (python -X
# importtime, examples/plugin_project); blocked by name, none is imported. whileai's own plugin and xdist load.
CHILD_PYTEST_BLOCKED = ("langsmith_plugin", "hypothesispytest", "benchmark", "anyio", "platformdirs")


@pytest.fixture(autouse=True)
def _lean_child_pytest(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pytest a test starts (pytester, a subprocess, a CI template's script) skips the unused plugins."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")  # first: setting up, pytester clears PYTEST_ADDOPTS for its runs
    blocked = " ".join(f"-p no:{name}" for name in CHILD_PYTEST_BLOCKED)
    monkeypatch.setenv("PYTEST_ADDOPTS", f"{os.environ.get('PYTEST_ADDOPTS', '')} {blocked}".strip())


@pytest.fixture()
def clean_config(monkeypatch):
    """No configured model from the environment or an earlier test: the WHILEAI_* model variables unset and
    ``wai.configure`` reset, before and after (files that need it name it in ``pytestmark``)."""
    from whileai_core.models import config

    for var in ("WHILEAI_AGENT", "WHILEAI_JUDGE", "WHILEAI_SIMULATOR", "WHILEAI_USER_MODEL"):
        monkeypatch.delenv(var, raising=False)
    config.reset()
    yield
    config.reset()


@pytest.fixture()
def srv():
    """A loopback OpenAI-compatible / Anthropic-shaped server on 127.0.0.1 (tests/fakeserver.py), stopped after."""
    with FakeServer() as s:
        yield s


@pytest.fixture
def example(pytester: pytest.Pytester) -> pytest.Pytester:
    """A copy of examples/plugin_project in the pytester directory (tests/plugin, tests/report)."""
    for src in EXAMPLE.rglob("*"):
        if src.is_file() and ".whileai" not in src.parts and "__pycache__" not in src.parts:
            dst = pytester.path / src.relative_to(EXAMPLE)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
    return pytester


@pytest.fixture(autouse=True)
def _no_ci_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite behaves the same on a laptop and in CI: the variables that make the plugin's inner runs detect
    CI (a missing named baseline is red there) are unset; a test that wants CI sets one."""
    from pytest_whileai.options import CI_ENV

    for var in CI_ENV:
        monkeypatch.delenv(var, raising=False)
