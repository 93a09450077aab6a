"""The ``whileai`` / ``wai`` command, written from the SDK reference (§5.6 CLI, §6.2 init-evals)."""

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from whileai_core import cli

ROOT = Path(__file__).resolve().parents[1]

AGENT_MODULE = '''
import re
import whileai as wai

@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id, "status": "shipped"}

TOOLS = [get_order]
SYSTEM_PROMPT = "Help customers with orders."

def agent(message):
    found = re.search(r"[A-Z]\\d{3,}", str(message))
    order_id = found.group(0) if found else "unknown"
    result = get_order(order_id)  # inside a trial the scenario's world answers, its faults included
    status = result.get("status") if isinstance(result, dict) else "unreadable (the service sent garbage)"
    return {"steps": [{"tool": "get_order", "arguments": {"order_id": order_id}, "result": result}],
            "final_text": f"Order {order_id}: {status}."}

def chatty(message):
    return "I cannot look that up, sorry."
'''


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _wai(*args, cwd, timeout=120):
    return subprocess.run([sys.executable, "-m", "whileai_core.cli", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=timeout)


def test_wai_and_whileai_are_both_console_scripts_of_one_main():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["wai"] == scripts["whileai"] == "whileai_core.cli:main"


def test_defaults_piped_into_head_ends_quietly(tmp_path):
    proc = subprocess.run(f"{sys.executable} -m whileai_core.cli defaults | head -1", shell=True, cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=180)  # a hang guard
    assert proc.stdout.count("\n") == 1 and "=" in proc.stdout
    assert "BrokenPipeError" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_self_check_runs_the_offline_loop_and_says_ok_per_step(tmp_path):
    proc = _wai("self-check", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    steps = [line for line in lines if line.startswith("ok ")]
    assert len(steps) == 5 and any("simulate" in s for s in steps) and any("export" in s for s in steps)
    assert "[" in next(s for s in steps if "pass@1" in s) and "n=32" in proc.stdout
    assert lines[-1] == "self-check: the offline loop works"


def test_self_check_names_a_failed_step_and_exits_1(monkeypatch, capsys):
    real = cli._check_steps

    def broken(directory):
        steps = real(directory)
        def grade(state):
            raise RuntimeError("judge exploded")
        return [(n, grade if n == "grade" else f) for n, f in steps]

    monkeypatch.setattr(cli, "_check_steps", broken)
    assert cli.main(["self-check"]) == 1
    out = capsys.readouterr().out
    assert "FAILED   grade: RuntimeError: judge exploded" in out
    assert "skipped  measure pass@k with intervals (an earlier step failed)" in out
    assert out.splitlines()[-1] == "self-check: FAILED (see above)"


def _project(tmp_path):
    (tmp_path / "my_agent.py").write_text(textwrap.dedent(AGENT_MODULE))
    return tmp_path


def _pytest(cwd, *args):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=cwd,
                          env=_env(), capture_output=True, text=True, timeout=300)


def test_init_evals_writes_a_suite_that_runs_green_at_once_in_a_fresh_project(tmp_path):
    project = _project(tmp_path)
    proc = _wai("init-evals", "--agent", "my_agent:agent", "--tools", "my_agent:TOOLS", "--system-prompt",
                "my_agent:SYSTEM_PROMPT", cwd=project)
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in (project / "evals").iterdir())
    assert written == ["README.md", "conftest.py", "test_agent_evals.py", "test_judge.py", "whileai_judge.py"]
    run = _pytest(project, "evals")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout.splitlines()[-1] and "failed" not in run.stdout.splitlines()[-1]
    assert "test_agent[" in run.stdout  # the scenario items ran, not only the judge's fast lane


def test_init_evals_green_for_an_agent_that_answers_with_a_string(tmp_path):
    project = _project(tmp_path)
    assert _wai("init-evals", "--agent", "my_agent:chatty", "--tools", "my_agent:get_order", "--dir", "checks",
                "--trials", "2", cwd=project).returncode == 0
    run = _pytest(project, "checks")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


def test_init_evals_keeps_existing_files_and_refuses_bad_references(tmp_path):
    project = _project(tmp_path)
    assert _wai("init-evals", "--agent", "my_agent:agent", "--tools", "my_agent:TOOLS", cwd=project).returncode == 0
    again = _wai("init-evals", "--agent", "my_agent:agent", "--tools", "my_agent:TOOLS", cwd=project)
    assert again.returncode == 2 and "--force" in again.stderr
    forced = _wai("init-evals", "--agent", "my_agent:agent", "--tools", "my_agent:TOOLS", "--force", cwd=project)
    assert forced.returncode == 0
    bad = _wai("init-evals", "--agent", "my_agent.agent", "--tools", "my_agent:TOOLS", cwd=project)
    assert bad.returncode == 2 and "module:NAME" in bad.stderr
    missing = _wai("init-evals", "--agent", "nowhere:agent", "--tools", "my_agent:TOOLS", cwd=project)
    assert missing.returncode == 2 and "'nowhere'" in missing.stderr


def test_compare_demo_compares_two_saved_runs(tmp_path):
    proc = _wai("compare", "--demo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: better: pass@1 ") and "paired tasks" in proc.stdout
    assert "before.jsonl" in proc.stderr and "after.jsonl" in proc.stderr


def test_compare_of_saved_runs_exits_1_when_the_second_is_worse(tmp_path):
    before, after = cli._demo_runs(str(tmp_path))
    worse = _wai("compare", after, before, cwd=tmp_path)
    assert worse.returncode == 1 and worse.stdout.startswith("FAIL"), worse.stdout
    same = _wai("compare", before, before, cwd=tmp_path)
    assert same.returncode == 0
    none = _wai("compare", cwd=tmp_path)
    assert none.returncode == 2 and "--demo" in none.stderr


FRAMEWORK_AGENT_MODULE = '''
"""A pydantic-ai agent on the loopback stand-in model (tests/fakeserver.py), started when imported; WORSE=1 gives
a regressed model that answers without calling a tool."""
import os, sys
sys.path.insert(0, os.environ["WAI_TESTS_DIR"])
from fakeserver import FakeServer
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

_worse = os.environ.get("WORSE") == "1"
_server = FakeServer(**({"responder": lambda request, protocol: {"text": "It is on its way."}} if _worse else {}))
_server.start()


def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"status": "shipped", "order_id": order_id}


desk = Agent(OpenAIChatModel("m", provider=OpenAIProvider(base_url=_server.openai_url, api_key="-")),
             tools=[get_order], instructions="Help customers with orders.")
'''


def test_init_evals_for_a_framework_agent_gates_it_in_ci(tmp_path):
    """Issue 27 item 3: `wai init-evals --agent my_agent:desk` (no --tools) for a pydantic-ai agent: green at
    once with its scenarios' faults delivered, then red against the baseline when the model gets worse."""
    pytest.importorskip("pydantic_ai", reason="the agents extra is not installed: pip install 'pytest-whileai[agents]'")
    (tmp_path / "my_agent.py").write_text(FRAMEWORK_AGENT_MODULE)
    proc = _wai("init-evals", "--agent", "my_agent:desk", "--trials", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    env = {**_env(), "WAI_TESTS_DIR": str(ROOT / "tests")}

    def run(*args, worse=False):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "evals", *args],
                              cwd=tmp_path, env={**env, "WORSE": "1" if worse else "0"}, capture_output=True,
                              text=True, timeout=300)

    saved = run("--wai-save=main")
    assert saved.returncode == 0, saved.stdout[-3000:] + saved.stderr[-2000:]
    assert "test_agent[" in saved.stdout and "fault not delivered" not in saved.stdout
    red = run("--wai-baseline=main", worse=True)
    assert red.returncode != 0 and "suite gate" in red.stdout, red.stdout[-3000:]
