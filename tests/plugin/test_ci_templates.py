"""The CI templates: well-formed, injection-safe, using only real options, and the action's run step works."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_whileai.options import OPTIONS

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "ci-templates" / "github" / "action.yml"
WORKFLOW = ROOT / "ci-templates" / "github" / "example-workflow.yml"
GITLAB = ROOT / "ci-templates" / "gitlab" / "whileai.gitlab-ci.yml"
KNOWN = {f"--wai-{o.name}" for o in OPTIONS}


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text())


def test_action_is_composite_and_injection_safe():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert {"baseline", "pytest-args", "comment", "upload-baseline"} <= set(action["inputs"])
    assert {"verdict", "regressions", "report", "summary"} <= set(action["outputs"])
    runs = [s for s in action["runs"]["steps"] if "run" in s]
    assert runs
    for step in runs:
        assert step.get("shell") == "bash", step["name"]
        assert "${{" not in step["run"], f"{step['name']}: pass inputs through env:, not into the script"
        check = subprocess.run(["bash", "-n"], input=step["run"], text=True, capture_output=True, check=False)
        assert check.returncode == 0, f"{step['name']}: {check.stderr}"


def test_templates_use_only_real_options():
    for path in (ACTION, WORKFLOW, GITLAB):
        used = set(re.findall(r"--wai-[a-z-]+", path.read_text()))
        assert used <= KNOWN, f"{path.name}: unknown options {sorted(used - KNOWN)}"
    gitlab = yaml.safe_load(GITLAB.read_text())
    assert gitlab[".whileai"]["artifacts"]["reports"]["junit"] == "whileai-report/junit.xml"
    assert gitlab[".whileai"]["artifacts"]["when"] == "always"
    assert gitlab["whileai:mr"]["cache"]["policy"] == "pull"
    assert gitlab["whileai:default-branch"]["cache"]["policy"] == "pull-push"
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert any(s.get("uses") == "./ci-templates/github" for s in workflow["jobs"]["evals"]["steps"])


def _run_step(workdir: Path, tmp: Path, **env: str) -> dict[str, str]:
    script = next(s for s in _action()["runs"]["steps"] if s.get("id") == "run")["run"]
    out = tmp / f"out-{len(list(tmp.iterdir()))}.txt"
    full = {**os.environ, "RUNNER_TEMP": str(tmp), "GITHUB_OUTPUT": str(out), "STORAGE": ".whileai",
            "BASELINE": "main", "PY": sys.executable, "PYTEST_ARGS": "-p no:cacheprovider -q", **env}
    full.pop("GITHUB_STEP_SUMMARY", None)
    res = subprocess.run(["bash", "-c", script], cwd=workdir, env=full, text=True, capture_output=True, timeout=300,
                         check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)


def test_action_run_step_saves_then_catches_a_regression(example, tmp_path: Path):
    first = _run_step(example.path, tmp_path, SAVE="true")
    assert first["exit_code"] == "0" and first["verdict"] == "not evaluated"
    assert (example.path / ".whileai" / "baselines" / "main.json").is_file()
    worse = _run_step(example.path, tmp_path, SAVE="false", WAI_EXAMPLE_SHARE="0.8")
    assert worse["exit_code"] == "1" and worse["verdict"] == "regression"
    assert int(worse["regressions"]) >= 1
    assert "whileai-summary:start" in Path(worse["summary"]).read_text()
