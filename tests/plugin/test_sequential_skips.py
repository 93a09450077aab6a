"""--wai-sequential skips the items of unneeded rounds without their protocol (issue 34): a seeded generator of
suites with session-, module- and class-scoped fixtures that log every setup and teardown to a file, run with
the gate stopping early, on the new path and on the old one (``skip_unneeded`` patched to step aside always, so
every item goes through pytest's protocol and the setup-hook skip). Invariants on every seed:

* every fixture setup has its teardown, in order, in every process (none left up, none torn down twice);
* the outcome counts, the ``-rs`` lines, the ``--junitxml`` skip messages and the sequential summary line
  equal the old path's; each skipped item shows the gate's reason under ``-rs`` and in the JUnit file;
* the new path did skip items (rounds after the stop), so no seed passes vacuously.

Seeds vary the modules, scenarios and plain tests, and add adversarial neighbours: a ``trylast``
``pytest_collection_modifyitems`` that shuffles the items within each round, moves plain tests after the
skipped rounds, or puts each module's plain tests just before its last round (so needed items come before and
after skipped ones, in other modules and classes), and a later-registered ``tryfirst``
``pytest_runtest_protocol`` that runs pytest's protocol itself for half the items. Two seeds run under
``-n 2``. Without the step-aside guard (``safe_to_skip`` patched to True) a seed breaks an invariant:
``test_without_the_guard_fixtures_leak``.
"""

from __future__ import annotations

import collections
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

CONFTEST = '''
import os
import random

import pytest


def log(event):
    folder = os.environ.get("EVENTS_DIR")
    if folder:
        with open(os.path.join(folder, f"events-{{os.getpid()}}.txt"), "a", encoding="utf-8") as fh:
            fh.write(event + "\\n")


@pytest.fixture(scope="session")
def sess_fix():
    log("setup session")
    yield
    log("teardown session")


_PATCH = pytest.MonkeyPatch()


def pytest_configure(config):
    import pytest_whileai.unneeded as unneeded

    mode = os.environ.get("SKIP_PATCH", "")
    if mode == "old":  # every item through pytest's protocol: the path before issue 34
        _PATCH.setattr(unneeded, "skip_unneeded", lambda *args, **kwargs: None)
    elif mode == "unguarded":  # the new path without its step-aside guard
        _PATCH.setattr(unneeded, "safe_to_skip", lambda item, nextitem: True)


def pytest_unconfigure(config):
    _PATCH.undo()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    mode = {reorder!r}
    if mode == "shuffle":  # a random order within each round (modules and classes interleave)
        from pytest_whileai.collect import round_of

        random.Random({seed}).shuffle(items)
        items.sort(key=lambda item: round_of(item.nodeid) or 0)
    elif mode == "plain_last":  # needed items after the skipped rounds, in other modules and classes
        items.sort(key=lambda item: "wai_eval" not in getattr(item, "fixturenames", ()))
    elif mode == "plain_between":  # each module's plain tests just before its last round: needed, then skipped
        from pytest_whileai.collect import round_of

        def key(item):
            r = round_of(item.nodeid)
            return (r, "", 0) if r is not None and r < 3 else (3, item.path.name, 0 if r is None else 1)

        items.sort(key=key)
'''

FOREIGN_PROTOCOL = '''
import zlib

import pytest
from _pytest.runner import runtestprotocol


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """Registered after whileai's hooks (collection time), so pluggy calls it first: it runs pytest's protocol
    itself for half the items."""
    if zlib.crc32(item.nodeid.encode()) % 2:
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    runtestprotocol(item, nextitem=nextitem)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
'''

MODULE = '''
import os

import pytest



def log(event):
    folder = os.environ.get("EVENTS_DIR")
    if folder:
        with open(os.path.join(folder, f"events-{{os.getpid()}}.txt"), "a", encoding="utf-8") as fh:
            fh.write(event + "\\n")

ASKS = [f"ask {m} {{i}}" for i in range({n})]
MORE = [f"more {m} {{i}}" for i in range({n2})]


@pytest.fixture(scope="module")
def mod_fix():
    log("setup module {m}")
    yield
    log("teardown module {m}")


@pytest.mark.wai_scenarios(ASKS)
def test_agent(wai_eval, mod_fix, sess_fix):
    wai_eval.record([1.0 for _ in wai_eval.trial_indices()])


def test_plain_first(mod_fix):
    pass


class TestGroup:
    @pytest.fixture(scope="class")
    def cls_fix(self):
        log("setup class {m}")
        yield
        log("teardown class {m}")

    @pytest.mark.wai_scenarios(MORE)
    def test_cls_agent(self, wai_eval, cls_fix, mod_fix):
        wai_eval.record([1.0 for _ in wai_eval.trial_indices()])

    def test_cls_plain(self, cls_fix, sess_fix):
        pass


def test_plain_last(mod_fix, sess_fix):
    pass
'''

SEQ = ("--wai-trials=8", "--wai-sequential", "--wai-max-drop=0.3", "--wai-baseline=main", "-rs")


def make_suite(pytester: pytest.Pytester, seed: int, reorder: str, foreign: bool) -> None:
    """A seeded suite: 2-3 modules, each with a module-level and a class-level scenario test and plain tests."""
    rng = random.Random(seed)
    pytester.makeconftest(CONFTEST.format(reorder=reorder, seed=seed))
    folder = pytester.path / "suite"
    folder.mkdir()
    if foreign:
        (folder / "conftest.py").write_text(FOREIGN_PROTOCOL)
    for m in range(rng.randint(2, 3)):
        text = MODULE.format(m=m, n=rng.randint(4, 8), n2=rng.randint(2, 6))
        (folder / f"test_mod{m}.py").write_text(text)


def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tag: str, patch: str,
        xdist: bool) -> tuple[pytest.RunResult, Path, Path]:
    """One sequential run with its own events folder and JUnit file."""
    events = pytester.mkdir(f"events-{tag}")
    junit = pytester.path / f"junit-{tag}.xml"
    monkeypatch.setenv("EVENTS_DIR", str(events))
    monkeypatch.setenv("SKIP_PATCH", patch)
    args = ("-p", "no:cacheprovider", *SEQ, f"--junitxml={junit}")
    res = (pytester.runpytest_subprocess("-n", "2", *args) if xdist else pytester.runpytest_inprocess(*args))
    return res, events, junit


def fixture_problems(events: Path) -> list[str]:
    """Each process's log must open and close every fixture in order: no setup without its teardown, none
    torn down that was not up, none set up twice at once."""
    problems: list[str] = []
    files = sorted(events.glob("events-*.txt"))
    if not files:
        return ["no fixture events were logged"]
    for path in files:
        up: collections.Counter[str] = collections.Counter()
        for line in path.read_text().splitlines():
            kind, name = line.split(" ", 1)
            up[name] += 1 if kind == "setup" else -1
            if up[name] not in (0, 1):
                problems.append(f"{path.name}: {line} leaves {name} up {up[name]} times")
        problems += [f"{path.name}: {name} set up but never torn down" for name, n in up.items() if n]
    return problems


def skip_lines(res: pytest.RunResult) -> list[str]:
    return sorted(line for line in res.outlines if line.startswith("SKIPPED ["))


def junit_skips(junit: Path) -> dict[str, str]:
    """testcase -> its skip message, from pytest's JUnit file."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if skipped is not None:
            out[f"{case.get('classname')}::{case.get('name')}"] = skipped.get("message", "")
    return out


def summary_line(res: pytest.RunResult) -> str:
    return next((line for line in res.outlines if line.startswith("sequential:")), "")


REASON = re.compile(r"^whileai --wai-sequential: the gate decided after round \d+ \(.+\); round \d+ is not needed$")

# (seed, reorder by a trylast plugin, a foreign tryfirst protocol, -n 2)
CASES = [
    (0, "none", False, False),
    (1, "shuffle", False, False),
    (2, "plain_last", False, False),
    (3, "plain_between", False, False),
    (4, "none", True, False),
    (5, "shuffle", True, False),
    (6, "plain_between", True, False),
    (7, "none", False, True),
    (8, "plain_last", True, True),
]


@pytest.mark.parametrize(("seed", "reorder", "foreign", "xdist"), CASES,
                         ids=[f"seed{c[0]}-{c[1]}{'-foreign' if c[2] else ''}{'-n2' if c[3] else ''}"
                              for c in CASES])
def test_skips_without_protocol_equal_the_old_path(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                   seed: int, reorder: str, foreign: bool, xdist: bool) -> None:
    make_suite(pytester, seed, reorder, foreign)
    monkeypatch.setenv("SKIP_PATCH", "")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-trials=8", "--wai-save=main").ret == 0
    new, new_events, new_junit = run(pytester, monkeypatch, "new", "", xdist)
    old, old_events, old_junit = run(pytester, monkeypatch, "old", "old", xdist)
    assert new.ret == old.ret == 0, new.stdout.str()
    assert fixture_problems(new_events) == [] and fixture_problems(old_events) == []
    outcomes = new.parseoutcomes()
    assert outcomes == old.parseoutcomes()
    assert outcomes.get("skipped", 0) > 0 and set(outcomes) <= {"passed", "skipped"}, outcomes
    assert summary_line(new) and summary_line(new) == summary_line(old)
    lines = skip_lines(new)
    assert lines == skip_lines(old)
    assert sum(int(line.split("[", 1)[1].split("]", 1)[0]) for line in lines) == outcomes["skipped"]
    skips = junit_skips(new_junit)
    assert skips == junit_skips(old_junit) and len(skips) == outcomes["skipped"]
    assert all(REASON.match(message) for message in skips.values()), sorted(set(skips.values()))
    for line in lines:  # -rs shows the test's own location and the same reason
        assert re.match(r"^SKIPPED \[\d+\] suite[/\\]test_mod\d\.py:\d+: whileai --wai-sequential: ", line), line


@pytest.mark.parametrize("seed", [8, 9])
def test_without_the_guard_fixtures_leak(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                         seed: int) -> None:
    """The step-aside guard is what keeps the fixtures whole: with it patched away, a suite where a needed item
    of one module is followed by skipped items of that module and then by an item of another module (each
    module's plain tests just before its last round) breaks an invariant: the module stays set up when the other
    module's item starts (pytest's "previous item was not torn down properly"). Round-major order with nothing
    after the skipped rounds would not show it: each needed item's teardown already tears down to what the next
    (skipped) item shares, and pytest's ``pytest_sessionfinish`` tears down what the last item left up."""
    make_suite(pytester, seed, "plain_between", False)
    monkeypatch.setenv("SKIP_PATCH", "")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider", "--wai-trials=8", "--wai-save=main").ret == 0
    res, events, _ = run(pytester, monkeypatch, "unguarded", "unguarded", False)
    outcomes = res.parseoutcomes()
    assert fixture_problems(events) or res.ret != 0 or "errors" in outcomes or "error" in outcomes
