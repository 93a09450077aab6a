"""A baseline is whole or it is not written (issue 26 item 3): Ctrl-C, -x and -k during --wai-save leave the
baseline as it was and name the reason; a red autosaved run stays out of BRANCH~N; a corrupt run file in the
pool and a hand-edited baseline are errors that name the file."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from whileai_core.gate.document import load_document

SUITE = '''
import os
import random
import time

import pytest

ASKS = [f"please handle request number {{i}}" for i in range({n})]


@pytest.mark.wai_scenarios(ASKS)
def test_agent(wai_eval):
    started = os.environ.get("STARTED_FILE")
    if started:
        open(started, "a").close()
        time.sleep(float(os.environ.get("SLOW", "0")))
    salt = os.environ.get("RUN_SALT", "0")
    rate = random.Random(wai_eval.key).uniform(0.7, 1.0) * float(os.environ.get("AGENT_RATE", "1.0"))
    wai_eval.record([float(random.Random(f"{{salt}}-{{wai_eval.key}}-{{i}}").random() < rate)
                     for i in wai_eval.trial_indices()])
'''

N = 20


@pytest.fixture(autouse=True)
def _terminal_signals():
    """SIGINT and SIGTERM neither ignored nor blocked in this worker while its child pytest starts, so the child
    gets them as a terminal's pytest would: an ignored SIGINT is inherited across exec and the child would never
    see Ctrl-C (the signal tests here were flaky in full -n 2 runs)."""
    handlers = {s: signal.signal(s, signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
                for s in (signal.SIGINT, signal.SIGTERM)}
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, set(handlers))
    yield
    for s, handler in handlers.items():
        signal.signal(s, handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
SLOW = 0.1  # seconds each scenario sleeps in the signal tests: the signal lands within the first 3/4 of N * SLOW,
# never after the run (at SLOW=0.05 with a sleep up to N * SLOW, a quiet machine finished both runs first)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-trials=8", *args)


@pytest.fixture
def saved(pytester: pytest.Pytester) -> tuple[Path, bytes]:
    """A project with a whole baseline 'main' of 20 scenarios; its path and bytes."""
    pytester.makepyfile(test_agent=SUITE.format(n=N))
    assert _run(pytester, "--wai-save=main").ret == 0
    path = pytester.path / ".whileai" / "baselines" / "main.json"
    assert len(load_document(path)["scenarios"]) == N
    return path, path.read_bytes()


def test_k_and_x_and_a_test_id_never_replace_a_baseline_and_say_why(pytester: pytest.Pytester, saved, monkeypatch):
    path, before = saved
    res = _run(pytester, "--wai-save=main", "-k", "number-1")
    assert res.ret == 0 and path.read_bytes() == before
    res.stdout.fnmatch_lines(["*not saving a baseline*-k 'number-1' selected part of the suite*main.json*left*"])
    nodeid = load_document(path)["scenarios"][3]["nodeid"]
    res = _run(pytester, "--wai-save=main", nodeid)
    assert path.read_bytes() == before
    res.stdout.fnmatch_lines(["*not saving a baseline*a test id on the command line*"])
    monkeypatch.setenv("AGENT_RATE", "0.1")  # items now drop against the baseline, and -x stops at the first
    res = _run(pytester, "--wai-baseline=main", "--wai-save=main", "-x", "--wai-autosave", "--junitxml=x.xml")
    assert res.ret == 1 and path.read_bytes() == before
    assert "1 failed" in _final(res) and 'failures="1"' in (pytester.path / "x.xml").read_text()
    res.stdout.fnmatch_lines(["*not saving a baseline*the run stopped early (stopping after 1 failures)*"])
    assert not (pytester.path / ".whileai" / "runs").exists()  # nor autosaved
    # the next real regression, against the baseline those runs left whole, is red (it was green when a -k
    # save had replaced the baseline by 1 of 20 scenarios)
    res = _run(pytester, "--wai-baseline=main", "--wai-require-baseline", "--junitxml=next.xml")
    assert res.ret == 1 and "failed" in _final(res)
    assert "REGRESSION" in (pytester.path / "next.xml").read_text()


def _signal_during_save(pytester: pytest.Pytester, sig: int, rng: random.Random, attempt: int,
                        *extra: str) -> tuple[subprocess.Popen[str], str]:
    """A child ``pytest --wai-save=main`` of the 20 slow scenarios, sent ``sig`` at a random point inside its run;
    the finished process and its output."""
    started = pytester.path / "started"
    started.unlink(missing_ok=True)
    env = {**os.environ, "STARTED_FILE": str(started), "SLOW": str(SLOW), "RUN_SALT": str(attempt + 1)}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--wai-trials=8",
                             "--wai-save=main", *extra], cwd=pytester.path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 0.75 * N * SLOW))  # inside the first 3/4 of the 20 slow scenarios
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=120)
    return proc, out


def test_ctrl_c_at_a_random_point_during_save_leaves_the_baseline_whole(pytester: pytest.Pytester, saved):
    path, before = saved
    rng = random.Random(26)
    outcomes = []
    for attempt in range(2):
        proc, out = _signal_during_save(pytester, signal.SIGINT, rng, attempt)
        doc = load_document(path)  # never half a file, never a hand-edit mismatch
        assert len(doc["scenarios"]) == N
        if proc.returncode == pytest.ExitCode.INTERRUPTED:
            assert path.read_bytes() == before, out[-2000:]
            assert "the run was interrupted" in out, out[-2000:]
        outcomes.append(proc.returncode)
    assert pytest.ExitCode.INTERRUPTED in outcomes  # at least one signal landed inside the run



def test_sigterm_at_a_random_point_during_save_leaves_the_baseline_whole(pytester: pytest.Pytester, saved):
    """What a CI runner sends a cancelled job: a real SIGTERM to a child pytest during --wai-save. pytest dies by
    the signal before its session end, so nothing is written: the old baseline stays whole, byte for byte."""
    path, before = saved
    rng = random.Random(2626)
    codes = []
    for attempt in range(2):
        proc, out = _signal_during_save(pytester, signal.SIGTERM, rng, attempt, "--wai-json=run.json",
                                        "--junitxml=junit.xml")
        assert len(load_document(path)["scenarios"]) == N  # never half a file, never a hand-edit mismatch
        if proc.returncode == -signal.SIGTERM:
            assert path.read_bytes() == before, out[-2000:]
            assert not (pytester.path / "run.json").exists() and not (pytester.path / "junit.xml").exists()
        assert [p.name for p in path.parent.iterdir()] == ["main.json"]  # no temp file left beside it
        codes.append(proc.returncode)
    assert -signal.SIGTERM in codes  # at least one signal landed inside the run (a non-zero exit for CI)


BROKEN = "import this_module_does_not_exist  # a collection error\n"


def test_a_collection_error_refuses_the_save_and_names_the_file(pytester: pytest.Pytester, saved, monkeypatch):
    path, before = saved
    pytester.makepyfile(test_broken=BROKEN)
    monkeypatch.setenv("RUN_SALT", "9")  # a save would change the file
    res = _run(pytester, "--wai-save=main", "--junitxml=junit.xml")
    assert res.ret == pytest.ExitCode.INTERRUPTED and path.read_bytes() == before
    assert "1 error" in _final(res)
    res.stdout.fnmatch_lines(["*not saving a baseline*collection error in test_broken.py*main.json*left as it was*"])
    assert 'errors="1"' in (pytester.path / "junit.xml").read_text()
    # --continue-on-collection-errors runs the other 20 scenarios, and still refuses the save, naming the file
    # and the gate is red INCOMPLETE (what did not collect was not measured), in every artifact
    res = _run(pytester, "--wai-save=main", "--continue-on-collection-errors", "--junitxml=junit.xml",
               "--wai-junitxml=wai.xml", "--wai-markdown=summary.md", "--wai-json=run.json")
    assert res.ret == 1 and path.read_bytes() == before
    assert "1 failed, 20 passed, 1 error" in _final(res)
    res.stdout.fnmatch_lines(["*suite gate: INCOMPLETE: collection error in test_broken.py*",
                              "*not saving a baseline*collection error in test_broken.py*main.json*left as it was*"])
    junit = (pytester.path / "junit.xml").read_text()
    assert 'errors="1"' in junit and 'failures="1"' in junit and "INCOMPLETE: collection error" in junit
    wai = (pytester.path / "wai.xml").read_text()  # the scenario JUnit tells the exit code's story too
    assert '<testsuites tests="22" failures="1" errors="1"' in wai and "collection error in test_broken.py" in wai
    assert (pytester.path / "summary.md").read_text().count("## 🔴 whileai: incomplete") == 1
    assert json.loads((pytester.path / "run.json").read_text())["outcome"]["green"] is False


def _final(res: pytest.RunResult) -> str:
    return [line for line in res.outlines if line.startswith("=")][-1]


def _autosave(pytester: pytest.Pytester, salt: str, rate: str, monkeypatch, *args: str) -> pytest.RunResult:
    monkeypatch.setenv("RUN_SALT", salt)
    monkeypatch.setenv("AGENT_RATE", rate)
    return _run(pytester, "--wai-autosave", "--wai-json=auto.json", *args)


def test_a_red_autosaved_run_stays_out_of_branch_tilde_n_and_a_corrupt_one_is_an_error(pytester: pytest.Pytester,
                                                                                        monkeypatch):
    pytester.makepyfile(test_agent=SUITE.format(n=N))
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    for salt in ("1", "2", "3"):
        assert _autosave(pytester, salt, "1.0", monkeypatch).ret == 0
    red = _autosave(pytester, "4", "0.1", monkeypatch, "--wai-baseline=main~3")  # a red main run, autosaved
    assert red.ret == 1
    assert json.loads((pytester.path / "auto.json").read_text())["outcome"]["green"] is False
    monkeypatch.setenv("RUN_SALT", "5")
    monkeypatch.setenv("AGENT_RATE", "0.6")  # a real drop of about 0.34
    res = _run(pytester, "--wai-baseline=main~3", "--wai-json=run.json", "--junitxml=junit.xml")
    assert res.ret == 1 and "failed" in _final(res)
    assert "REGRESSION" in (pytester.path / "junit.xml").read_text()  # the suite gate failed in pytest's JUnit
    pooled = "0001_main_nocommit.json, 0002_main_nocommit.json, 0003_main_nocommit.json"
    res.stdout.fnmatch_lines([f"*pooled runs: {pooled}*",
                              "*skipped run 0004_main_nocommit.json: red (exit status 1*",
                              "*REGRESSION*"])
    doc = json.loads((pytester.path / "run.json").read_text())
    assert doc["baseline_history"]["skipped"][0]["run"] == "0004_main_nocommit.json"
    broken = pytester.path / ".whileai" / "runs" / "0002_main_nocommit.json"
    broken.write_text(broken.read_text()[:300])
    res = _run(pytester, "--wai-baseline=main~3")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*0002_main_nocommit.json: not valid JSON*"])


def test_a_hand_edited_baseline_is_named_and_refused(pytester: pytest.Pytester, saved):
    path, _ = saved
    doc = json.loads(path.read_text())
    doc["scenarios"][0]["rewards"] = [0.0] * len(doc["scenarios"][0]["rewards"])  # a worse past, by hand
    path.write_text(json.dumps(doc, indent=1))
    res = _run(pytester, "--wai-baseline=main")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines([f"*{path}: edited after it was written*re-save it with --wai-save=NAME*"])
