import re
import subprocess
import sys
from pathlib import Path

import whileai_core.quickstart as qs

ROOT = Path(__file__).resolve().parents[1]
SEED_DOC = ROOT.parent / "shared" / "reference" / "seed-whileai-docs.md"
LINE = re.compile(r"^pass@1 \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| pass\^4 \(pass_pow_k\) \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| "
                  r"pass@4 \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \| headroom \d\.\d\d \[\d\.\d\d\.\.\d\.\d\d\] \(16 groups, k=4(; .*)?\)$")


def test_example_file_is_the_shipped_program():
    assert (ROOT / "examples" / "quickstart.py").read_text() == qs.SOURCE


def test_example_matches_the_seed_document_when_present():
    if not SEED_DOC.exists():
        import pytest

        pytest.skip("seed document not beside the checkout")
    text = SEED_DOC.read_text()
    block = text.split("```python", 1)[1].split("```", 1)[0]
    block = block.split("\n", 1)[1]  # drop the fence's info string
    strip = lambda s: [line.strip() for line in s.strip().splitlines()]
    assert strip(block) == strip(qs.SOURCE)


def test_quickstart_runs_offline_and_prints_the_seed_line(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert LINE.match(lines[0]), lines[0]
    # pass^4: continuity-corrected Wilson over 16 tasks (issue 30 item 7); plain Wilson printed [0.07..0.43]
    assert lines[0].startswith("pass@1 0.67 [0.55..0.78] | pass^4 (pass_pow_k) 0.19 [0.05..0.46]")
    assert lines[1].startswith("rl selection: kept ")
    assert any("unanimous groups dropped" in line for line in lines)
    assert any("hack scan" in line for line in lines)
    assert (tmp_path / "train.jsonl").exists()
    # a second run replaces its own earlier export (with a warning) instead of failing
    again = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py")], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "earlier whileai training export" in again.stderr


def test_cli_quickstart(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "whileai_core.cli", "quickstart", "--dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert LINE.match(proc.stdout.splitlines()[0])
    assert (tmp_path / "train.jsonl").exists()
