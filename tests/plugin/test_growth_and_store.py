"""Scenario keys survive suite growth (issue 12 item 4), a mistyped baseline is an error (item 6), and
concurrent saves never lose a run (item 9)."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

SUITE = """
import os
import pytest
import whileai as wai


@wai.tool
def get_order(order_id: str) -> dict:
    \"\"\"Look up an order by id.\"\"\"
    return {{"order_id": order_id}}


@wai.tool
def cancel_order(order_id: str) -> dict:
    \"\"\"Cancel an order by id.\"\"\"
    return {{"order_id": order_id}}


@wai.tool
def refund_order(order_id: str) -> dict:
    \"\"\"Refund an order by id.\"\"\"
    return {{"order_id": order_id}}


TOOLS = [{tools}]
agent = wai.seeded_agent(TOOLS, share=float(os.environ.get("SHARE", "0.1")), seed=0)


@pytest.fixture
def wai_judge():
    return lambda row: {{"reward": 0 if row["seeded"] else 1}}


@pytest.mark.wai_scenarios(tools=TOOLS{budget})
def test_desk(wai):
    wai.run(agent)
"""


def _suite(pytester: pytest.Pytester, tools: str, budget: str = "") -> None:
    pytester.makepyfile(test_desk=SUITE.format(tools=tools, budget=budget))


def _keys(pytester: pytest.Pytester, path: str) -> set[str]:
    return {s["key"] for s in json.loads((pytester.path / path).read_text())["scenarios"]}


@pytest.mark.parametrize("xdist", [False, True], ids=["inprocess", "xdist2"])
def test_adding_a_tool_keeps_every_scenario_paired_and_a_regression_red(pytester: pytest.Pytester, monkeypatch,
                                                                        xdist: bool):
    _suite(pytester, "get_order, cancel_order")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    before = _keys(pytester, ".whileai/baselines/main.json")
    _suite(pytester, "get_order, cancel_order, refund_order")  # the suite grew by one tool
    monkeypatch.setenv("SHARE", "0.9")  # and the agent got much worse
    args = ("-p", "no:cacheprovider", "--wai-baseline=main", "--wai-json=run.json")
    res = pytester.runpytest_subprocess("-n", "2", *args) if xdist else pytester.runpytest_inprocess(*args)
    after = _keys(pytester, "run.json")
    assert before <= after and len(after) > len(before)  # every old scenario is still there, under its key
    assert res.ret == 1
    res.stdout.fnmatch_lines([f"*suite gate: REGRESSION: *n={len(before)} paired scenarios*"])


def test_raising_the_budget_keeps_every_scenario_paired(pytester: pytest.Pytester):
    _suite(pytester, "get_order, cancel_order", budget=", budget=12")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main").ret == 0
    _suite(pytester, "get_order, cancel_order", budget=", budget=40")
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-baseline=main")
    assert res.ret == 0
    res.stdout.fnmatch_lines(["*suite gate: no regression: *n=12 paired scenarios*"])
