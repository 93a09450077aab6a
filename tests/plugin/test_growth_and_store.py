"""Scenario keys survive suite growth (issue 12 item 4), a mistyped baseline is an error (item 6), and
concurrent saves never lose a run (item 9)."""

from __future__ import annotations

import json
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
def test_desk(wai_eval):
    wai_eval.run(agent)
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


_RACER = """
import json, os, sys, time
from pathlib import Path
from pytest_whileai.gate.store import Store
from whileai_core.rows import atomic_write_text
root, go, me, what = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
doc = {"schema": "whileai.run/1", "fingerprint": {}, "scenarios": [], "who": me,
       "commit_info": {"branch": "pr-" + me, "id": "c" + me}}
while not go.exists():
    time.sleep(0.001)
if what == "autosave":
    print(Store(root).autosave(doc))
elif what == "save":
    print(Store(root).save(doc, "main"))
else:
    try:
        print(atomic_write_text(Path(root) / "claimed.txt", me))
    except FileExistsError:
        print("lost")
"""


def _race(tmp_path: Path, what: str, n: int = 12) -> list[str]:
    import subprocess
    import sys

    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _RACER, str(tmp_path / "store"), str(go), str(i), what],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(n)]
    go.touch()
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outs.append(out.strip())
    return outs


def _debris(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.name.endswith((".tmp", ".claim")))


def test_concurrent_autosaves_keep_every_run_with_unique_numbers(tmp_path: Path):
    from pytest_whileai.gate.store import Store

    paths = _race(tmp_path, "autosave")
    runs = Store(tmp_path / "store").run_files()
    assert sorted(str(p) for p in runs) == sorted(paths)
    assert sorted(json.loads(p.read_text())["who"] for p in runs) == sorted(str(i) for i in range(12))
    assert [int(p.name[:4]) for p in runs] == list(range(1, 13))
    assert _debris(tmp_path / "store") == []


def test_concurrent_saves_leave_one_whole_baseline(tmp_path: Path):
    _race(tmp_path, "save")
    doc = json.loads((tmp_path / "store" / "baselines" / "main.json").read_text())  # whole, one writer's
    assert doc["who"] in {str(i) for i in range(12)}
    assert _debris(tmp_path / "store") == []


def test_exclusive_write_has_exactly_one_winner(tmp_path: Path):
    outs = _race(tmp_path, "claim")
    assert outs.count("lost") == 11
    assert (tmp_path / "store" / "claimed.txt").read_text() in {str(i) for i in range(12)}
    assert _debris(tmp_path / "store") == []


RECORD = """
def test_k(wai_eval):
    wai_eval.record([1.0, 1.0, 0.0, 1.0])
"""


def _runner(pytester: pytest.Pytester, xdist: bool):
    def run(*args: str) -> pytest.RunResult:
        if xdist:
            return pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", *args)
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)

    return run


@pytest.mark.parametrize("xdist", [False, True], ids=["inprocess", "xdist2"])
def test_a_mistyped_baseline_is_an_error_naming_the_closest(pytester: pytest.Pytester, xdist: bool):
    pytester.makepyfile(RECORD)
    run = _runner(pytester, xdist)
    pytester.run("git", "init", "-q", "-b", "feature-x")
    pytester.run("git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-save=main", "--wai-autosave").ret == 0
    res = run("--wai-baseline=mian")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines([("*whileai: --wai-baseline=mian: no saved baseline *mian.json and no autosaved run of "
                               "branch 'mian'*did you mean --wai-baseline=main? *saved baselines: main; "
                               "branches with autosaved runs: feature-x; 'latest' (the newest autosaved run)*")])
    assert "passed" not in res.stdout.str()
    if not xdist:  # a branch with autosaved runs is a name that exists
        assert run("--wai-baseline=feature-x").ret == 0


@pytest.mark.parametrize("xdist", [False, True], ids=["inprocess", "xdist2"])
def test_an_empty_store_warns_stays_green_and_says_how_to_save(pytester: pytest.Pytester, xdist: bool):
    pytester.makepyfile(RECORD)
    res = _runner(pytester, xdist)("--wai-baseline=main")
    assert res.ret == 0
    res.stdout.fnmatch_lines([("*--wai-baseline=main: no saved baseline*is empty (a first run?): save a baseline "
                               "with --wai-save=main*"), "*suite gate: gate not evaluated*"])
