"""Whether this session may write a baseline (issue 26 item 3): a baseline is whole or it is not written.

A run is saved (``--wai-save``, ``--wai-autosave``) only when it ran every planned test to the end: no
interrupt (Ctrl-C), no ``-x``/``--maxfail`` stop, no narrowing (``-k``, ``-m``, ``--lf``, ``--deselect``, a
``FILE::TEST`` argument, any plugin's deselection), no collection error, and nothing else in the session
refused it (``WaiSession.refuse_save``: a crashed xdist worker, a budget stop, an INCOMPLETE gate). Each
reason is named; the store keeps the baseline it had.
"""

from __future__ import annotations

from typing import Any

import pytest


def narrowing(config: pytest.Config) -> list[str]:
    """The command-line selections that run part of the suite (each makes the run a partial baseline)."""
    out = []
    if config.getoption("keyword", None):
        out.append(f"-k {config.getoption('keyword')!r} selected part of the suite")
    if config.getoption("markexpr", None):
        out.append(f"-m {config.getoption('markexpr')!r} selected part of the suite")
    if config.getoption("lf", None):
        out.append("--lf ran only the last failures")
    if config.getoption("stepwise", None):
        out.append("--sw ran part of the suite")
    if config.getoption("deselect", None):
        out.append(f"--deselect left out {len(config.getoption('deselect'))} test id(s)")
    picked = [a for a in config.args if "::" in str(a)]
    if picked:
        out.append(f"a test id on the command line ({picked[0]}) selected part of a file")
    return out


def stop_reason(session: pytest.Session) -> str | None:
    """Why the run loop stopped before the end (``-x``/``--maxfail``, a plugin's stop), or None."""
    why = session.shouldfail or session.shouldstop
    if not why:
        return None
    return f"the run stopped early ({why})" if isinstance(why, str) else "the run stopped early"


def refusals(wai: Any, session: pytest.Session, exitstatus: int) -> list[str]:
    """Every reason this session must not be saved as a baseline, in the order a reader checks them."""
    reasons: list[str] = []
    if int(exitstatus) == int(pytest.ExitCode.INTERRUPTED):
        reasons.append("the run was interrupted (Ctrl-C, or an error that stopped pytest)")
    if wai.stopped:
        reasons.append(wai.stopped)
    reasons += narrowing(session.config)
    if wai.deselected:
        reasons.append(f"{wai.deselected} test(s) were deselected")
    missing = [n for n in wai.planned if n not in wai.finished]
    if missing and not reasons:
        reasons.append(f"{len(missing)} of {len(wai.planned)} planned whileai test(s) never finished "
                       f"(first: {missing[0]})")
    return reasons + [r for r in wai.save_refusals if r not in reasons]


def refusal_note(reasons: list[str], settings: Any, store: str) -> str:
    """The line that says the save was refused, why, and what the store still holds."""
    kept = (f"baselines/{settings.save}.json in {store} is left as it was" if settings.save
            else f"nothing was added to {store}/runs")
    return "not saving a baseline: " + "; ".join(reasons) + f"; {kept} (a baseline is whole or it is not written)"
