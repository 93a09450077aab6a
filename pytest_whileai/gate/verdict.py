"""The gate's verdict as a pytest test outcome: a red gate becomes a failed report for the pseudo test
``whileai::suite_gate`` (``defaults.GATE_NODEID``).

The controller sends it through ``pytest_runtest_logreport`` at the end of the run loop, so pytest counts it
in its final line (``1 failed, 40 passed``), ``-rA`` lists it, ``Session.testsfailed`` makes the exit status 1,
and pytest's own ``--junitxml`` writes it as a ``<testcase>`` with a ``<failure>`` whose message is the gate's
message (delta, interval, p and n). A green gate sends nothing, so a plain run's final line is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pytest import TestReport

from whileai_core import defaults as D
from whileai_core.gate.text import fmt_ci, p_eq

GATE_FILE, GATE_NAME = D.GATE_NODEID.split("::", 1)


@dataclass
class Crash:
    """What pytest reads from ``longrepr.reprcrash`` (the shape of its ``ReprFileLocation``)."""

    path: str
    lineno: int
    message: str


class GateRepr:
    """The longrepr of the gate report (pytest's ``TerminalRepr`` protocol: ``toterminal`` and ``str``), with
    ``reprcrash`` so the short summary (``-rA``) and JUnit's ``<failure message=...>`` carry the message."""

    def __init__(self, message: str, details: list[str]) -> None:
        self.message = message
        self.details = details
        self.reprcrash = Crash(GATE_FILE, 0, message)

    def toterminal(self, tw: Any) -> None:
        tw.line(f"whileai suite gate: {self.message}", red=True, bold=True)
        for line in self.details:
            tw.line(f"  {line}")

    def __str__(self) -> str:
        return "\n".join([f"whileai suite gate: {self.message}", *(f"  {line}" for line in self.details)])


def gate_details(gate: Any) -> list[str]:
    """The lines below the message: the numbers a CI reader needs, each with its interval and n."""
    out = []
    if gate.delta is not None:
        out.append(f"delta={gate.delta:+.3f} interval={fmt_ci(gate.ci, 3, signed=True)} ({round(gate.level * 100)}%) "
                   f"p{p_eq(gate.p_value)} n={gate.n_paired} paired scenarios; alpha={gate.alpha:g} "
                   f"max_drop={gate.max_drop:g}")
    if gate.baseline:
        out.append(f"baseline: {gate.baseline}")
    if gate.warning:
        out.append(f"pairing: {gate.warning}")
    out.extend(f"scenario dropped (Holm): {key}" for key in gate.scenario_regressions)
    out.extend(f"not comparable: {key}: {why}" for key, why in list(gate.incompatible.items())[:10])
    if gate.failed_workers:
        out.append(f"crashed xdist worker(s): {', '.join(gate.failed_workers)}")
    return out


def gate_properties(gate: Any) -> list[tuple[str, object]]:
    """The gate's numbers as JUnit properties (pytest writes a report's user_properties on its testcase)."""
    props = [("whileai.gate", gate.status), ("whileai.delta", gate.delta),
             ("whileai.ci_low", (gate.ci or [None, None])[0]), ("whileai.ci_high", (gate.ci or [None, None])[1]),
             ("whileai.p", gate.p_value), ("whileai.n_paired", gate.n_paired), ("whileai.baseline", gate.baseline)]
    return [(name, value) for name, value in props if value is not None]


def gate_reports(gate: Any) -> list[TestReport]:
    """The call (failed) and teardown (passed) reports of the pseudo test, as a real test item produces them;
    empty for a green gate."""
    if gate is None or not gate.red:
        return []
    location = (GATE_FILE, None, GATE_NAME)
    keywords: dict[str, Literal[1]] = {GATE_NAME: 1, "whileai": 1}
    # pytest types longrepr as its private TerminalRepr class; GateRepr has that class's protocol (toterminal, str)
    longrepr: Any = GateRepr(gate.message, gate_details(gate))
    call = TestReport(D.GATE_NODEID, location, keywords, "failed", longrepr, "call",
                      user_properties=gate_properties(gate))
    teardown = TestReport(D.GATE_NODEID, location, keywords, "passed", None, "teardown",
                          user_properties=gate_properties(gate))
    return [call, teardown]


def forget_gate_failure(config: Any) -> None:
    """After a gate that is not red, drop a red gate of an earlier run from pytest's ``--lf`` cache (no report of
    the pseudo test passes to clear it, because a green gate sends none)."""
    lf = config.pluginmanager.get_plugin("lfplugin")
    if lf is not None and isinstance(getattr(lf, "lastfailed", None), dict):
        lf.lastfailed.pop(D.GATE_NODEID, None)


def scenario_reports(entries: list[dict[str, Any]]) -> list[TestReport]:
    """``--wai-sequential``: one failed test per scenario that fails a per-item rule once its rounds are joined
    (its node id without the round part), with the failure message a single item would have had."""
    if not entries:
        return []  # (before the imports: a run without whileai tests imports no numpy)
    from pytest_whileai.collect import strip_round
    from pytest_whileai.gate.scenario import failure_message

    out = []
    for e in entries:
        nodeid = strip_round(str(e["nodeid"]))
        path, _, name = nodeid.rpartition("::")
        location = (path.split("::")[0], None, name)
        keywords: dict[str, Any] = {name: 1, "whileai": 1}
        message = failure_message({**e, "nodeid": nodeid, "failures": e["fresh_failures"]}, baseline_name=None)
        repr_: Any = GateRepr(f"{nodeid}: " + "; ".join(e["fresh_failures"]), message.splitlines()[1:])
        out.append(TestReport(nodeid, location, keywords, "failed", repr_, "call"))
        out.append(TestReport(nodeid, location, keywords, "passed", None, "teardown"))
    return out


def write_error_reports(errors: list[str]) -> list[TestReport]:
    """A failed write (baseline store, JSON, JUnit...) as an error of the pseudo test ``whileai::outputs``, so
    pytest's final line is red and counts it (the exit status is already 1)."""
    if not errors:
        return []
    nodeid = f"{GATE_FILE}::outputs"
    keywords: dict[str, Any] = {"outputs": 1, "whileai": 1}
    longrepr: Any = GateRepr("; ".join(errors), errors)
    return [TestReport(nodeid, (GATE_FILE, None, "outputs"), keywords, "failed", longrepr, "teardown")]
