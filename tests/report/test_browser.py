"""The HTML report of a regressed example run, opened in headless Chromium: it loads with no console error, the
forest plot has one mark per scenario, the suite delta and its interval are the strings the terminal printed,
the transcript filter works, and a screenshot is written (under tmp, and docs/report.png for the README)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

DOCS_PNG = Path(__file__).resolve().parents[2] / "docs" / "report.png"
RED = "#c0392b"


def _regressed_run(example: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[pytest.RunResult, Path]:
    """The example saved as baseline at its usual share, then run with a worse agent (share 0.8)."""
    example.runpytest("-q", "-p", "no:cacheprovider", "--wai-save=main").assert_outcomes(passed=32)
    monkeypatch.setenv("WAI_EXAMPLE_SHARE", "0.8")
    html = example.path / "out" / "report.html"
    result = example.runpytest("-q", "-p", "no:cacheprovider", "--wai-baseline=main", f"--wai-html={html}",
                               f"--wai-json={example.path / 'run.json'}")
    assert result.ret == 1
    return result, html


def test_regressed_report_in_chromium(example, monkeypatch, browser, tmp_path):
    result, html = _regressed_run(example, monkeypatch)
    text = html.read_text(encoding="utf-8")
    assert "<script src=" not in text and "<link " not in text  # self-contained: nothing fetched
    doc = json.loads((example.path / "run.json").read_text())
    shot = tmp_path / "report.png"
    page = browser.inspect(html, {
        "scenario_marks": "document.getElementById('forest').data.find(t => t.name === 'scenarios').x.length",
        "drawn_points": "document.querySelectorAll('#forest .scatterlayer .trace')[1].querySelectorAll('.point').length",
        "suite_colour": "document.getElementById('forest').data.find(t => t.name === 'suite').marker.color[0]",
        "suite_delta": "document.getElementById('suite-delta').textContent",
        "gate_message": "document.getElementById('gate-message').textContent",
        "status": "document.getElementById('gate-status').textContent",
        "scenario_texts": "[...document.querySelectorAll('#forest-table tr.scenario td.num')].map(td => td.textContent)",
        "trials": "document.querySelectorAll('.trial').length",
        "reasons": "document.querySelectorAll('.trial .reason').length",
    }, screenshot=shot)
    assert page["errors"] == []
    n = len(doc["scenarios"])
    assert page["scenario_marks"] == n and page["drawn_points"] == n  # one mark per scenario, in data and on screen
    assert page["status"] == "regression" and page["suite_colour"] == RED
    gate_line = next(line for line in result.outlines if line.startswith("suite gate: "))
    assert page["gate_message"] == gate_line  # the gate line, character for character
    assert f"delta {page['suite_delta']} (95% scenario bootstrap)" in gate_line
    terminal = "\n".join(result.outlines)
    assert all(t in terminal for t in page["scenario_texts"])  # each scenario's delta [CI] as the table printed it
    assert page["trials"] > 0 and page["reasons"] == page["trials"]  # every failing trial shows the judge's reason
    filtered = browser.inspect(html, {"shown": (
        "const s = document.getElementById('filter-status'); s.value = 'agent_error'; s.dispatchEvent(new Event('change'));"
        "[...document.querySelectorAll('.trial')].filter(el => el.style.display !== 'none').length")})
    assert filtered["shown"] == 0 and filtered["errors"] == []  # the seeded agent never raises: the filter hides all
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shutil.copyfile(shot, DOCS_PNG)  # the README's screenshot is this test's
