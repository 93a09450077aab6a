"""Hooks third parties (a ``conftest.py`` or a plugin) can implement to extend pytest-whileai.

Each ``generate_*`` hook is ``firstresult``: the first implementation that returns non-``None`` wins, and the
plugin's own default runs last. Each ``update_*`` hook runs every implementation, which edit the dict in place.
"""

from __future__ import annotations

from typing import Any

import pytest

hookspec = pytest.hookspec if hasattr(pytest, "hookspec") else None  # pytest >= 8 exposes it
if hookspec is None:  # pragma: no cover
    import pluggy

    hookspec = pluggy.HookspecMarker("pytest")


@hookspec(firstresult=True)
def pytest_whileai_generate_commit_info(config: pytest.Config) -> dict[str, Any] | None:
    """Commit info stored in the run document (default: from ``git``; never raises).

    Example, in conftest.py::

        def pytest_whileai_generate_commit_info(config):
            return {"id": os.environ["BUILD_SHA"], "branch": os.environ["BUILD_BRANCH"], "dirty": False}
    """


@hookspec
def pytest_whileai_update_commit_info(config: pytest.Config, commit_info: dict[str, Any]) -> None:
    """Edit the commit info in place. Example: ``commit_info["ticket"] = "OPS-12"``."""


@hookspec(firstresult=True)
def pytest_whileai_generate_run_info(config: pytest.Config) -> dict[str, Any] | None:
    """Model and configuration facts for the run document and the compatibility fingerprint.

    Every key here enters the config fingerprint: a baseline whose run info differs is refused. Example::

        def pytest_whileai_generate_run_info(config):
            return {"model": "gpt-4.1-mini", "temperature": 0.7, "judge": "exact_match_v2"}
    """


@hookspec
def pytest_whileai_update_run_info(config: pytest.Config, run_info: dict[str, Any]) -> None:
    """Edit the run info in place (before it is fingerprinted). Example: ``run_info["prompt_sha"] = sha``."""


@hookspec(firstresult=True)
def pytest_whileai_load_scenarios(config: pytest.Config, source: Any, spec: dict[str, Any]) -> list[Any] | None:
    """Turn a ``wai_scenarios`` source the plugin does not know into a list of scenarios (str or Scenario).

    Example: load tau-bench tasks::

        def pytest_whileai_load_scenarios(config, source, spec):
            if isinstance(source, str) and source.startswith("tau:"):
                return [task["instruction"] for task in load_tau(source[4:])]
    """


@hookspec
def pytest_whileai_trial_finished(item: pytest.Item, trial: dict[str, Any]) -> None:
    """Observe one finished trial (``{"key", "index", "seed", "reward", "row"}``) e.g. for tracing or logging."""


@hookspec
def pytest_whileai_update_json(config: pytest.Config, run_json: dict[str, Any]) -> None:
    """Edit the run document in place before it is written. Example: ``run_json["ci_job"] = os.environ["JOB"]``."""
