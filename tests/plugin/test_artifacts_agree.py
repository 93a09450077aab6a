"""Issue 26 item 6: every artifact tells the exit code's story (both JUnit files, the HTML badge, the markdown
headline, the JSON, the final line): threshold failures with no baseline say so, and a store that cannot be
written makes the final line red."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

SUITE = '''
import pytest

@pytest.mark.wai_scenarios([f"ask {i}" for i in range(3)])
@pytest.mark.wai(trials=6, min_pass_rate=0.8)
def test_agent(wai_eval):
    wai_eval.record([0.0] * 6)
'''

GREEN = SUITE.replace("[0.0] * 6", "[1.0] * 6")


def _final(res: pytest.RunResult) -> str:
    return [line for line in res.outlines if line.startswith("=")][-1]


def test_threshold_failures_without_a_baseline_are_red_in_every_artifact(pytester: pytest.Pytester):
    pytester.makepyfile(test_agent=SUITE)
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--junitxml=junit.xml", "--wai-junitxml=wai.xml",
                                       "--wai-json=run.json", "--wai-markdown=summary.md", "--wai-html=report.html")
    assert res.ret == 1 and "3 failed" in _final(res)
    doc = json.loads((pytester.path / "run.json").read_text())
    assert doc["gate"]["status"] == "failed" and "no --wai-baseline given" in doc["gate"]["message"]
    md = (pytester.path / "summary.md").read_text()
    assert "## 🔴 whileai: failed" in md and "missed their own thresholds" in md
    html = (pytester.path / "report.html").read_text()
    assert re.search(r'class="status red" id="gate-status">failed<', html)
    suite = ET.parse(pytester.path / "wai.xml").getroot().find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["whileai.gate"] == "failed" and props["whileai.red"] == "true"
    assert int(ET.parse(pytester.path / "junit.xml").getroot().find("testsuite").get("failures")) == 3


def test_a_store_that_cannot_be_written_makes_the_final_line_red(pytester: pytest.Pytester):
    pytester.makepyfile(test_agent=GREEN)
    (pytester.path / "store").write_text("a file where the store directory should be\n")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-storage=store", "--wai-save=main",
                                       "--junitxml=junit.xml", "--wai-json=run.json")
    assert res.ret == 1
    assert "3 passed, 1 error" in _final(res)
    res.stdout.fnmatch_lines(["*ERROR: whileai: could not write the baseline file*"])
    junit = ET.parse(pytester.path / "junit.xml").getroot().find("testsuite")
    assert int(junit.get("errors")) == 1  # pytest's JUnit counts the failed write as the error it is
    outcome = json.loads((pytester.path / "run.json").read_text())["outcome"]  # written after the failed write
    assert outcome["exit_status"] == 1 and outcome["green"] is False
