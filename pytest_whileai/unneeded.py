"""``--wai-sequential``: the items of rounds the gate no longer needs are reported skipped without running.

pytest's own protocol for a skipped item still costs a setup call, a teardown call, two ``CallInfo`` objects,
``pytest_runtest_makereport`` twice and the teardown of the collectors the next item does not share. For an item
of a round after the gate's stop none of that does anything, so ``skip_unneeded`` (called from the
``pytest_runtest_protocol`` hook in ``plugin.py``) logs the two reports that protocol would log (setup skipped
with the reason, teardown passed) and returns True. The skip shows at the test's own location, as a
``@pytest.mark.skip`` does, under ``-rs`` and in ``--junitxml``, with the same reason as before.

It steps aside (returns None; the normal protocol runs and ``SequentialHooks.pytest_runtest_setup`` skips the
item as before) whenever skipping the protocol would skip a teardown: collectors set up for earlier items that
the next item does not descend from (a module, class or package whose fixtures must be torn down now), the
last item (the session's teardown), or a session that is stopping (``-x``, ``--maxfail``: pytest tears
everything down then). A skip without the protocol never leaves the setup stack other than the next item
expects, so "previous item was not torn down properly" cannot happen (tests/plugin/test_sequential_skips.py).
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

_STOP = pytest.StashKey[Any]()  # item: the stop read for it (None: no stop yet), so setup does not read it again
SKIP_PREFIX = "Skipped: "  # what pytest's skip exception prints before its reason (``Skipped.__str__``)


def stop_for(item: pytest.Item, wai: Any, r: int) -> dict[str, Any] | None:
    """The gate's stop as item (of round ``r``) starts: on the controller the decision in memory; on an xdist
    worker, after waiting for round ``r - 1`` to be decided, the decision file. Read once per item."""
    if _STOP in item.stash:
        stop: dict[str, Any] | None = item.stash[_STOP]
        return stop
    if wai.rounds is not None:
        stop = wai.rounds.stop
    else:
        from pytest_whileai.gate.rounds import read_decision, wait_for_round

        seq_dir = getattr(item.config, "workerinput", {}).get("wai_seq_dir")
        if r:
            wait_for_round(seq_dir, r)  # an xdist worker starts round r only once round r-1 is decided
        stop = read_decision(seq_dir)
    item.stash[_STOP] = stop
    return stop


def unneeded_reason(item: pytest.Item, wai: Any) -> str | None:
    """Why ``item`` need not run (its round comes after the gate's stop), or None when it must run."""
    from pytest_whileai.collect import round_of

    r = round_of(item.nodeid)
    if r is None:
        return None
    stop = stop_for(item, wai, r)
    if stop is None or r <= stop["round"]:
        return None
    return (f"whileai --wai-sequential: the gate decided after round {stop['round'] + 1} "
            f"({stop['decision']}: {stop['reason']}); round {r + 1} is not needed")


def safe_to_skip(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    """True when leaving out item's setup and teardown tears down nothing that must go now: a next item, a
    session not stopping, and every collector on the setup stack an ancestor of the next item."""
    session = item.session
    if nextitem is None or session.shouldstop or session.shouldfail:
        return False
    stack = session._setupstate.stack
    if not stack:
        return True
    chain = nextitem.listchain()
    return all(node in chain for node in stack)


def skip_unneeded(item: pytest.Item, nextitem: pytest.Item | None, wai: Any) -> bool | None:
    """Report ``item`` skipped without its setup, call and teardown when its round is not needed and that is
    safe (``safe_to_skip``); True when reported, None to let pytest's protocol run (``pytest_runtest_protocol``
    is firstresult). ``wai``: the run's ``WaiSession``."""
    reason = unneeded_reason(item, wai)
    if reason is None or not safe_to_skip(item, nextitem):
        return None
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for report in skipped_reports(item, reason):
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def skipped_reports(item: pytest.Item, reason: str) -> tuple[pytest.TestReport, pytest.TestReport]:
    """The setup report (skipped, at the test's location, as ``pytest.skip`` with the item's location gives it)
    and the teardown report (passed) that pytest's protocol logs for an item skipped at setup."""
    path, line = item.reportinfo()[:2]
    lineno = (line or 0) + 1  # reportinfo is 0-based, a skip's longrepr 1-based (TestReport.from_item_and_call)
    keywords = {name: 1 for name in item.keywords}
    now = time.time()
    setup = pytest.TestReport(item.nodeid, item.location, keywords, "skipped",
                              (os.fspath(path), lineno, f"{SKIP_PREFIX}{reason}"), "setup", start=now, stop=now,
                              user_properties=item.user_properties)
    teardown = pytest.TestReport(item.nodeid, item.location, keywords, "passed", None, "teardown", start=now,
                                 stop=now, user_properties=item.user_properties)
    return setup, teardown
