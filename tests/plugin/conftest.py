"""Plugin tests drive real pytest runs with pytester (in-process; subprocess only for ``-n 2``)."""

from __future__ import annotations


import junitparser.xunit2  # noqa: F401

# Loaded here, before any in-process pytester run: pytester restores sys.modules after each inner run, and
# numpy/scipy cannot be imported twice in one process.
import numpy  # noqa: F401
import pytest
import scipy.stats  # noqa: F401

import pytest_whileai.collect
import pytest_whileai.gate.scenario
import pytest_whileai.report.junit
import pytest_whileai.report.markdown
import pytest_whileai.report.publish  # noqa: F401
import whileai_core.gate.compare
import whileai  # noqa: F401
import whileai_core.simulate.agents
import whileai_core.grade.run
import whileai_core.measure.delta
import whileai_core.measure.pass_at
import whileai_core.measure.power
import whileai_core.measure.between_runs
import whileai_core.simulate.run
import whileai_core.simulate.situations  # noqa: F401

# pytester is enabled for the whole suite with `-p pytester` in pyproject addopts (pytest_plugins is not allowed in a nested conftest)


@pytest.fixture(params=[[], ["-n", "2"]], ids=["inprocess", "xdist2"])
def run(request: pytest.FixtureRequest, example: pytest.Pytester):
    """Run pytest in the example project, in-process or under ``-n 2`` (a subprocess)."""
    extra = request.param

    def _run(*args: str) -> pytest.RunResult:
        if extra:
            return example.runpytest_subprocess(*extra, "-p", "no:cacheprovider", *args)
        return example.runpytest_inprocess("-p", "no:cacheprovider", *args)

    def _save(*args: str) -> pytest.RunResult:
        """Store the baseline in-process (fast); only the run under test uses -n 2."""
        return example.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main", *args)

    _run.save = _save  # type: ignore[attr-defined]
    _run.xdist = bool(extra)  # type: ignore[attr-defined]
    return _run


@pytest.fixture(autouse=True)
def _no_ci_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner runs must not annotate or write the outer CI job's summary (a test that wants it sets them)."""
    for var in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", "WAI_EXAMPLE_SHARE"):
        monkeypatch.delenv(var, raising=False)
