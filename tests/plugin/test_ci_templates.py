"""The CI templates: well-formed, injection-safe, using only real options, installing pytest-whileai, and
working: the action's shell steps (and the GitLab job's script) run for the example workflow's layout, a suite
in a subfolder, first saving a baseline on the default branch, then catching a regression on a PR."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_whileai.options import OPTIONS

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "ci-templates" / "github" / "action.yml"
WORKFLOW = ROOT / "ci-templates" / "github" / "example-workflow.yml"
GITLAB = ROOT / "ci-templates" / "gitlab" / "whileai.gitlab-ci.yml"
EXAMPLE = ROOT / "examples" / "plugin_project"
KNOWN = {f"--wai-{o.name}" for o in OPTIONS}


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text())


def test_action_is_composite_and_injection_safe():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert {"baseline", "pytest-args", "comment", "upload-baseline"} <= set(action["inputs"])
    assert {"package", "baseline", "pytest-args", "comment", "upload-baseline"} <= set(action["inputs"])
    assert action["inputs"]["package"]["default"] == "pytest-whileai"
    assert {"verdict", "regressions", "report", "summary", "store"} <= set(action["outputs"])
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


def test_every_install_line_names_the_pytest_whileai_distribution():
    pyproject = (ROOT / "pyproject.toml").read_text()  # read as text: tomllib is 3.11+, the project is 3.10+
    assert re.search(r'^name = "pytest-whileai"$', pyproject, re.MULTILINE)
    assert re.search(r'\[project.entry-points.pytest11\]\nwhileai = "pytest_whileai.plugin"', pyproject)
    dev = pyproject.split("dev = [", 1)[1].split("]", 1)[0]
    assert '"pyyaml' in dev  # these tests need it; README's install line is .[dev]
    texts = {p: p.read_text() for p in [*ROOT.glob("*.md"), *ROOT.glob("docs/*.md"), *ROOT.glob("ci-templates/**/*"),
                                         *EXAMPLE.rglob("*.md")] if p.is_file()}
    for path, text in texts.items():
        for line in re.findall(r"pip install[^\n]*", text):
            assert not re.search(r"pip install\s+['\"]?whileai\b", line), f"{path}: {line}"
    workflow = yaml.safe_load(WORKFLOW.read_text())
    gate_step = next(s for s in workflow["jobs"]["evals"]["steps"] if s.get("uses") == "./ci-templates/github")
    assert gate_step["with"]["package"] == "."  # this repository gates its own checkout
    gitlab = yaml.safe_load(GITLAB.read_text())
    assert gitlab["variables"]["WAI_PACKAGE"] == "pytest-whileai"


def test_version_lookup_uses_the_new_name_and_never_an_unrelated_former_one():
    from whileai_core import DISTRIBUTION, distribution_version

    assert DISTRIBUTION == "pytest-whileai"
    assert distribution_version(("no-such-distribution-xyz",)) == "0.0.0"
    # installed here either as pytest-whileai or (an editable install from before the rename) as whileai
    assert distribution_version() in ("0.1.0", "0.0.0")
    assert distribution_version(("pytest",)) == "0.0.0"  # a former name counts only if it registers our plugin


# --- a small runner for the composite action: the way GitHub runs it, minus the network ----------------------
_CONTEXT = re.compile(r"\b(inputs|github|steps|runner)((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)")


def _lookup(ctx: dict[str, Any], root: str, dotted: str) -> Any:
    value: Any = ctx[root]
    for part in dotted.strip(".").split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    return value


def _expr(ctx: dict[str, Any], text: str) -> Any:
    """A GitHub expression of the forms the action uses: context paths, 'strings', ==, !=, &&, ||, always()."""
    py = _CONTEXT.sub(lambda m: repr(_lookup(ctx, m.group(1), m.group(2))), text)
    py = py.replace("always()", "True").replace("&&", " and ").replace("||", " or ")
    return eval(py, {"__builtins__": {}}, {})  # our own template's expressions only


def _subst(ctx: dict[str, Any], text: Any) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(_expr(ctx, m.group(1))), str(text))


def _run_action(workspace: Path, temp: Path, cache: dict[str, Path], inputs: dict[str, str], github: dict[str, Any],
                env: dict[str, str]) -> dict[str, Any]:
    """Run action.yml's steps in order: `run:` steps with bash as a composite action does (env from `env:`,
    GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files), actions/cache restore/save against ``cache``, uploads
    recorded. Returns the step outputs, the logs, the uploads and the failing step's exit status."""
    action = _action()
    temp.mkdir(parents=True, exist_ok=True)
    summary = temp / "step_summary.md"
    ins = {name: _subst({"github": github}, spec.get("default", "")) for name, spec in action["inputs"].items()}
    ins.update(inputs)
    ctx: dict[str, Any] = {"inputs": ins, "github": github, "runner": {"temp": str(temp)}, "steps": {}}
    logs, uploads, failed = {}, [], None
    for i, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", f"step{i}")
        if "if" in step and not _expr(ctx, step["if"]):
            continue
        if "uses" in step:
            with_ = {k: _subst(ctx, v) for k, v in (step.get("with") or {}).items()}
            if step["uses"].startswith("actions/cache/restore"):
                hit = cache.get(with_["key"]) or next((cache[k] for k in reversed(list(cache))
                                                       if k.startswith(with_["restore-keys"])), None)
                if hit is not None:
                    shutil.copytree(hit, with_["path"], dirs_exist_ok=True)
            elif step["uses"].startswith("actions/cache/save"):
                cache[with_["key"]] = Path(shutil.copytree(with_["path"], temp.parent / f"cache-{len(cache)}"))
            elif step["uses"].startswith("actions/upload-artifact"):
                uploads.append(with_)
            continue
        out = temp / f"output-{sid}.txt"
        out.write_text("")
        full = {**os.environ, **env, **{k: _subst(ctx, v) for k, v in (step.get("env") or {}).items()},
                "GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(temp),
                "GITHUB_ACTIONS": "true"}
        cwd = workspace / _subst(ctx, step.get("working-directory", "."))
        res = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                             env=full, text=True, capture_output=True, timeout=300, check=False)
        logs[sid] = res.stdout + res.stderr
        ctx["steps"][sid] = {"outputs": dict(line.split("=", 1) for line in out.read_text().splitlines()
                                             if "=" in line)}
        if res.returncode != 0:
            failed = (sid, res.returncode)
            break
    return {"steps": ctx["steps"], "logs": logs, "uploads": uploads, "failed": failed, "summary": summary}


def _checkout(tmp: Path, name: str) -> Path:
    """A fresh checkout of a repository whose agent suite sits in a subfolder, as in the example workflow."""
    ws = tmp / name
    shutil.copytree(EXAMPLE, ws / "examples" / "plugin_project",
                    ignore=shutil.ignore_patterns(".whileai", "__pycache__", ".pytest_cache"))
    return ws


def test_action_saves_on_the_default_branch_then_a_pr_regression_goes_red(tmp_path: Path, monkeypatch):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    with_ = dict(next(s for s in workflow["jobs"]["evals"]["steps"] if s.get("uses") == "./ci-templates/github")["with"])
    # the package step would pip install the checkout into this environment; the plugin under test is already
    # importable (PYTHONPATH), so it is skipped the way a workflow that installs it itself would skip it
    inputs = {**{k: str(v) for k, v in with_.items()}, "package": "", "python": sys.executable}
    repo = {"default_branch": "main"}
    cache: dict[str, Path] = {}
    push = {"event_name": "push", "ref": "refs/heads/main", "sha": "a" * 40, "token": "t", "run_id": "1",
            "run_attempt": "1", "repository": "o/r", "event": {"repository": repo}}
    first = _run_action(_checkout(tmp_path, "main"), tmp_path / "job1" / "temp", cache, inputs, push, {})
    assert first["failed"] is None, first["logs"]
    run = first["steps"]["run"]["outputs"]
    assert run["exit_code"] == "0" and run["verdict"] == "not evaluated", first["logs"]["run"][-3000:]
    assert run["store"] == str(tmp_path / "main" / "examples" / "plugin_project" / ".whileai")  # from the plugin
    assert first["steps"]["stage"]["outputs"]["staged"] == "true"
    assert len(cache) == 1 and any(u["name"] == "whileai-baseline-main" for u in first["uploads"])

    monkeypatch.setenv("WAI_EXAMPLE_SHARE", "0.8")  # the PR made the agent worse
    pr = {**push, "event_name": "pull_request", "ref": "refs/pull/7/merge", "sha": "b" * 40,
          "event": {"repository": repo, "pull_request": {"number": 7}}}
    second = _run_action(_checkout(tmp_path, "pr"), tmp_path / "job2" / "temp", cache, {**inputs, "comment": "off"},
                         pr, {})
    run = second["steps"]["run"]["outputs"]
    assert run["verdict"] == "regression" and int(run["regressions"]) >= 1, second["logs"]["run"][-3000:]
    assert str(tmp_path / "job2" / "temp" / "whileai-baseline" / "main.json") in second["logs"]["run"]
    assert second["failed"] == ("fail", 1)  # "Fail on a regression" turns the job red with pytest's status
    assert "stage" not in second["steps"] and len(cache) == 1  # a PR never replaces the baseline
    assert "whileai-summary:start" in second["summary"].read_text()


def test_gitlab_jobs_save_then_catch_a_regression_in_a_subfolder_suite(tmp_path: Path, monkeypatch):
    gitlab = yaml.safe_load(GITLAB.read_text())
    script = "\n".join(gitlab[".whileai"]["script"])
    variables = {**{k: str(v) for k, v in gitlab["variables"].items()},
                 "WAI_PYTEST_ARGS": "examples/plugin_project -p no:cacheprovider"}

    def job(name: str, cache: Path | None, **extra: str) -> tuple[subprocess.CompletedProcess, Path]:
        ws = _checkout(tmp_path, name)
        if cache is not None:  # GitLab restores the cache paths into the project directory
            shutil.copytree(cache, ws / variables["WAI_BASELINE_DIR"])
        env = {**os.environ, **variables, **gitlab[f"whileai:{extra.pop('kind')}"].get("variables", {}), **extra,
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "GITLAB_CI": "true",
               "CI": "true"}
        res = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=ws, env=env, text=True,
                             capture_output=True, timeout=300, check=False)
        return res, ws

    first, ws = job("main", None, kind="default-branch")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    cached = ws / "whileai-baseline"
    assert (cached / "main.json").is_file()  # copied from examples/plugin_project/.whileai, found via run.json
    monkeypatch.setenv("WAI_EXAMPLE_SHARE", "0.8")
    second, ws2 = job("mr", cached, kind="mr")
    assert second.returncode == 1, second.stdout[-3000:]
    assert "REGRESSION" in second.stdout
    assert 'failures="0"' not in (ws2 / "whileai-report" / "junit.xml").read_text()


def test_a_pr_with_no_baseline_for_main_yet_fails_unless_the_opt_out_is_set(tmp_path: Path):
    """Issue 26 item 4: the cache holds no baseline (evicted, or main never ran): the PR job is red with the
    reason, and passes ungated only with allow-missing-baseline: true."""
    inputs = {"package": "", "python": sys.executable, "pytest-args": "examples/plugin_project -p no:cacheprovider",
              "html": "false"}
    repo = {"default_branch": "main"}
    pr = {"event_name": "pull_request", "ref": "refs/pull/7/merge", "sha": "b" * 40, "token": "t", "run_id": "2",
          "run_attempt": "1", "repository": "o/r", "event": {"repository": repo, "pull_request": {"number": 7}}}
    red = _run_action(_checkout(tmp_path, "pr"), tmp_path / "job1" / "temp", {}, inputs, pr, {})
    assert red["failed"] == ("fail", 1), red["logs"]
    assert "no baseline for main yet: run the main job first" in red["logs"]["run"]
    assert red["steps"]["run"]["outputs"]["verdict"] == "not evaluated"
    allowed = _run_action(_checkout(tmp_path, "pr2"), tmp_path / "job2" / "temp", {},
                          {**inputs, "allow-missing-baseline": "true"}, pr, {})
    assert allowed["failed"] is None, allowed["logs"]["run"][-3000:]
    assert "allow-missing-baseline is set" in allowed["logs"]["run"]


def test_gitlab_mr_with_no_cached_baseline_fails_with_the_reason(tmp_path: Path):
    gitlab = yaml.safe_load(GITLAB.read_text())
    script = "\n".join(gitlab[".whileai"]["script"])
    ws = _checkout(tmp_path, "mr")
    env = {**os.environ, **{k: str(v) for k, v in gitlab["variables"].items()}, "GITLAB_CI": "true", "CI": "true",
           "WAI_PYTEST_ARGS": "examples/plugin_project -p no:cacheprovider",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    res = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=ws, env=env, text=True,
                         capture_output=True, timeout=300, check=False)
    assert res.returncode == 1, res.stdout[-3000:]
    assert "no baseline for main yet: run the main job first" in res.stdout
    assert "CI detected (CI is set)" in res.stdout
