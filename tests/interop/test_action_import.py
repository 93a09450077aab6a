"""The GitHub Action's ``import:`` input: the default branch saves an imported inspect_ai run as the baseline,
and a pull request whose imported run is worse goes red (the action's steps run as GitHub runs them, with
tests/plugin/test_ci_templates.py's runner)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "plugin"))
from test_ci_templates import _run_action


def test_action_import_input_saves_then_gates(tmp_path: Path, inspect_runs):
    inputs = {"package": "", "python": sys.executable, "html": "false", "import": "logs"}
    repo = {"default_branch": "main"}
    push = {"event_name": "push", "ref": "refs/heads/main", "sha": "a" * 40, "token": "t", "run_id": "1",
            "run_attempt": "1", "repository": "o/r", "event": {"repository": repo}}
    cache: dict[str, Path] = {}
    for name, run in (("main", "base"), ("pr", "worse")):
        (tmp_path / name / "logs").mkdir(parents=True)
        shutil.copy(inspect_runs[run], tmp_path / name / "logs")
    first = _run_action(tmp_path / "main", tmp_path / "job1" / "temp", cache, inputs, push, {})
    assert first["failed"] is None, first["logs"]
    assert first["steps"]["stage"]["outputs"]["staged"] == "true" and len(cache) == 1
    pr = {**push, "event_name": "pull_request", "ref": "refs/pull/7/merge", "sha": "b" * 40,
          "event": {"repository": repo, "pull_request": {"number": 7}}}
    second = _run_action(tmp_path / "pr", tmp_path / "job2" / "temp", cache, inputs, pr, {})
    assert second["steps"]["run"]["outputs"]["verdict"] == "regression", second["logs"]["run"][-3000:]
    assert "--wai-import=logs" in second["logs"]["run"]
    assert second["failed"] == ("fail", 1)
