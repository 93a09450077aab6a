"""CI's type check: mypy over the three packages, with the project's settings (pyproject.toml), finds nothing;
and the typed row shapes (``rows.RowFields``, the steps) say what docs/rows.md and a real run say.

The same command a contributor runs by hand; its cache is the default ``.mypy_cache`` at the project root
(a cold run takes about 15 s of CPU, a warm one 3 s).
"""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import whileai as wai
from whileai_core.rows import JudgeStatus, RowFields, RowStatus, TextStep, ToolStep, UserStep

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


def _documented_values(field: str) -> set[str]:
    """The backticked values in docs/rows.md's table row for ``field``."""
    line = next(x for x in (ROOT / "docs" / "rows.md").read_text().splitlines() if x.startswith(f"| `{field}` |"))
    return set(re.findall(r"`([a-z_]+)`", line.split("|")[3]))


def test_row_statuses_are_literals_that_docs_and_a_run_agree_on():
    """``RowStatus`` / ``JudgeStatus`` (the ``Literal``s of ``RowFields.status`` / ``judge_status``) hold exactly
    the values docs/rows.md names for them, and a run with agent and judge failures gives no other value."""
    assert set(typing.get_args(RowStatus)) == _documented_values("status") & {"ok", "agent_error", "infra_error"}
    assert set(typing.get_args(JudgeStatus)) <= _documented_values("judge_status")
    hints = typing.get_type_hints(RowFields)
    assert hints["status"] == RowStatus and hints["judge_status"] == JudgeStatus

    def agent(message):
        if len(message) % 5 == 0:
            raise ValueError("no")
        return {"steps": [{"text": "thinking"}], "final_text": message[::-1]}

    def judge(row):
        if len(row["prompt"]) % 3 == 0:
            raise KeyError("judge broke")
        return {"reward": None if len(row["prompt"]) % 4 == 0 else 1.0}

    asks = ["Where is my order?", "Cancel it please.", "Refund me now!", "Hello", "What can you do for me?",
            "Is A100 shipped yet?", "Help."]
    rows = list(wai.simulate(agent, asks=asks, simulator=False, repeats=2).grade(judge=judge).rows)
    assert {r["status"] for r in rows} == {"ok", "agent_error"}
    assert {r["judge_status"] for r in rows} <= set(typing.get_args(JudgeStatus))
    assert len({r["judge_status"] for r in rows}) >= 2


def test_mypy_checks_a_row_producer_against_the_typed_fields(tmp_path):
    """A producer that builds its row as ``RowFields`` (as the rollout and grade do) gets a misspelled key or a
    status outside ``RowStatus`` flagged by mypy; ``as_row`` then hands it on as the working dict."""
    pytest.importorskip("mypy")
    (tmp_path / "producer.py").write_text(
        "from whileai_core.rows import Row, RowFields, as_row\n\n"
        "def good() -> Row:\n"
        "    fields: RowFields = {'prompt': 'hi', 'status': 'agent_error', 'reward': 0.5}\n"
        "    return as_row(fields)\n\n"
        "def bad() -> Row:\n"
        "    fields: RowFields = {'prompt': 'hi', 'status': 'crashed', 'rewrd': 0.5}\n"
        "    return as_row(fields)\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
                           str(tmp_path / "producer.py")], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
    errors = [x for x in done.stdout.splitlines() if ": error:" in x]
    assert len(errors) == 2 and all(":8:" in x for x in errors), done.stdout
    assert any("rewrd" in x for x in errors) and any("crashed" in x for x in errors), done.stdout
