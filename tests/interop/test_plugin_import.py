"""``pytest --wai-import=PATH``: an inspect_ai run's samples become the plugin's scenarios, so the store, the
suite gate and the JUnit report apply: a saved baseline, red on the worse run, green on A/A."""

from __future__ import annotations

import xml.etree.ElementTree as ET

# Loaded before the in-process pytester runs (pytester restores sys.modules after each, and numpy/scipy cannot
# be imported twice in one process), as tests/plugin/conftest.py does.
import numpy  # noqa: F401
import scipy.stats  # noqa: F401
from interop_runs import EPOCHS, ERRORED, N_SAMPLES

import pytest_whileai.gate.scenario
import pytest_whileai.imported
import pytest_whileai.report.junit
import pytest_whileai.report.markdown
import pytest_whileai.report.publish  # noqa: F401
import whileai_core.gate.compare
import whileai_core.interop.load
import whileai_core.measure.history  # noqa: F401


def test_imported_runs_gate_through_the_plugin(pytester, inspect_runs):
    store = f"--wai-storage={pytester.path / 'store'}"
    saved = pytester.runpytest_inprocess("--wai-import", str(inspect_runs["base"]), "--wai-save=main", store)
    saved.assert_outcomes(passed=N_SAMPLES)
    assert (pytester.path / "store" / "baselines" / "main.json").is_file()
    aa = pytester.runpytest_inprocess("--wai-import", str(inspect_runs["twin"]), "--wai-baseline=main", store)
    aa.assert_outcomes(passed=N_SAMPLES)
    assert any(line.startswith("suite gate") and "no regression" in line for line in aa.outlines)
    junit = pytester.path / "junit.xml"
    red = pytester.runpytest_inprocess("--wai-import", str(inspect_runs["worse"].parent), "--wai-baseline=main",
                                       f"--wai-junitxml={junit}", store)
    assert red.ret == 1
    text = "\n".join(red.outlines)
    assert "REGRESSION" in text and f"n={N_SAMPLES} paired scenarios" in text
    assert f"desk/s-{ERRORED} epoch 1: the framework recorded an error (infra_error)" in text  # the load report
    cases = ET.parse(junit).getroot().iter("testcase")
    names = {c.get("name") for c in cases}
    assert {f"desk/s-{i}" for i in range(N_SAMPLES)} <= {n.split("::")[-1] for n in names if n}


def test_import_refuses_sequential_and_a_missing_file(pytester, tmp_path):
    seq = pytester.runpytest_inprocess("--wai-import", str(tmp_path), "--wai-sequential")
    assert seq.ret == 4 and "exclude each other" in "\n".join(seq.errlines)
    missing = pytester.runpytest_inprocess("--wai-import", str(tmp_path / "nope.eval"))
    assert missing.ret == 4 and "no such result file" in "\n".join(missing.errlines)


def test_epochs_are_the_scenario_trials(pytester, inspect_runs):
    done = pytester.runpytest_inprocess("--wai-import", str(inspect_runs["base"]), "-v")
    assert f"PASSED ({EPOCHS}/{EPOCHS} trials)" in "\n".join(done.outlines)


def test_a_pooled_baseline_of_imported_runs(pytester, inspect_runs, monkeypatch):
    monkeypatch.setenv("GITHUB_REF_NAME", "main")  # the branch the autosaved runs are filed under
    for run in ("base", "twin", "base"):
        assert pytester.runpytest_inprocess("--wai-import", str(inspect_runs[run]), "--wai-autosave").ret == 0
    res = pytester.runpytest_inprocess("--wai-import", str(inspect_runs["worse"]), "--wai-baseline=main~3")
    assert res.ret == 1
    pooled = "0001_main_nocommit.json, 0002_main_nocommit.json, 0003_main_nocommit.json"
    res.stdout.fnmatch_lines([f"*pooled runs: {pooled}*", "*REGRESSION*"])
