"""CI's type check: mypy over the three packages, with the project's settings (pyproject.toml), finds nothing;
and the typed row shapes (``rows.RowFields``, the steps) say what docs/rows.md and a real run say.

The same command a contributor runs by hand; its cache is the default ``.mypy_cache`` at the project root
(a cold run takes about 15 s of CPU, a warm one 3 s).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import whileai as wai
from whileai_core.rows import RowFields, TextStep, ToolStep, UserStep

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("whileai_core", "whileai", "pytest_whileai")


def test_mypy_finds_no_error_in_the_three_packages():
    pytest.importorskip("mypy")
    done = subprocess.run([sys.executable, "-m", "mypy", *PACKAGES], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    report = done.stdout + done.stderr
    assert done.returncode == 0, f"mypy {' '.join(PACKAGES)} found errors:\n{report}"
    assert "no issues found in" in done.stdout, report



def test_row_fields_name_the_documented_schema_and_a_graded_runs_rows():
    """``RowFields`` lists exactly the fields docs/rows.md's tables list (plus ``lineage``, described in prose),
    and a simulated, graded run's rows and steps carry no key the typed shapes lack."""
    tables = (ROOT / "docs" / "rows.md").read_text()
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", tables, flags=re.MULTILINE))
    assert documented | {"lineage"} == set(RowFields.__annotations__)

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        raise NotImplementedError("a declared tool: the mock world answers its calls")

    data = wai.simulate(wai.seeded_agent([get_order], share=0.3), tools=[get_order], system_prompt="Help.",
                        repeats=2, budget=12)
    rows = list(data.grade(judge=lambda row: {"reward": int(not row["seeded"])}).rows)
    step_keys = set(ToolStep.__annotations__) | set(TextStep.__annotations__) | set(UserStep.__annotations__)
    assert rows and any(row["steps"] for row in rows)
    for row in rows:
        assert set(row) <= set(RowFields.__annotations__), set(row) - set(RowFields.__annotations__)
        assert all(set(step) <= step_keys for step in row["steps"]), row["steps"]
