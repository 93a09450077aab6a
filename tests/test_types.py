"""CI's type check: mypy over the three packages, with the project's settings (pyproject.toml), finds nothing.

The same command a contributor runs by hand; its cache is the default ``.mypy_cache`` at the project root (a cold
run takes about a minute of CPU, a warm one seconds).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("whileai_core", "whileai", "pytest_whileai")


def test_mypy_finds_no_error_in_the_three_packages():
    pytest.importorskip("mypy")
    done = subprocess.run([sys.executable, "-m", "mypy", *PACKAGES], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    report = done.stdout + done.stderr
    assert done.returncode == 0, f"mypy {' '.join(PACKAGES)} found errors:\n{report}"
    assert "no issues found in" in done.stdout, report
