"""Issue 27 item 3: a framework agent (a LangGraph graph) gated in CI by the pytest plugin, against the loopback
model server: ``pytest --wai-save=main`` on the good server is green with every scheduled fault delivered;
``pytest --wai-baseline=main`` on the same server stays green, and on a worse one (it reports every tool call
as ``ok``) is red. The suite file is the one docs/agents.md shows ("In CI"), run as it stands, in-process."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("langgraph", reason="the agents extra (langgraph) is not installed: pip install 'pytest-whileai[agents]'")
pytest.importorskip("langchain_openai", reason="the agents extra (langchain-openai) is not installed")

import warnings

import langchain_core.tools  # noqa: F401 - imported once here, before the in-process runs (pytester restores
import langchain_openai  # noqa: F401 - sys.modules after each: the frameworks and the adapters' loop stay loaded)

import whileai_core.adapters.langgraph  # noqa: F401
from tests.adapters.harness import worse_reply
from tests.fakeserver import FakeServer

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import langgraph.prebuilt  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


def suite_file() -> str:
    """The ``tests/test_desk.py`` block of docs/agents.md's "In CI" section."""
    text = (ROOT / "docs/agents.md").read_text(encoding="utf-8")
    section = text[text.index("## In CI"):]
    found = re.search(r"```python\n(# tests/test_desk\.py\n.*?)```", section, re.DOTALL)
    assert found, "docs/agents.md's In CI section has no tests/test_desk.py block"
    return found.group(1)


def test_a_langgraph_agent_gated_by_the_plugin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    pytester.makepyfile(test_desk=suite_file())
    pytester.makeini("[pytest]\npythonpath = .\n")

    def pytest_run(server: FakeServer, *args: str) -> pytest.RunResult:
        monkeypatch.setenv("DESK_MODEL_URL", server.openai_url)
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-json=run.json", *args)

    with FakeServer() as good:
        saved = pytest_run(good, "--wai-save=main")
        assert saved.ret == 0, saved.stdout.str()[-3000:]
        again = pytest_run(good, "--wai-baseline=main")
        assert again.ret == 0 and "no regression" in again.stdout.str(), again.stdout.str()[-3000:]
    out = saved.stdout.str() + again.stdout.str()
    assert "fault not delivered" not in out and "Exception in thread" not in out
    doc = json.loads((pytester.path / "run.json").read_text())
    entries = [e for e in doc["scenarios"].values()] if isinstance(doc.get("scenarios"), dict) else doc["scenarios"]
    faulted = [e for e in entries if e.get("faults_scheduled")]
    assert len(entries) >= 20 and faulted and not any(e.get("faults_undelivered") for e in faulted)
    with FakeServer(responder=worse_reply) as bad:
        red = pytest_run(bad, "--wai-baseline=main")
    assert red.ret != 0, red.stdout.str()[-3000:]
    red.stdout.fnmatch_lines(["*whileai::suite_gate*"])
