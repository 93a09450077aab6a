"""A scenario-level JUnit XML report (xunit2 flavour, via junitparser): one testcase per scenario.

Each testcase carries its numbers as properties (passes, k, pass@1, CI, baseline, delta, p) and a
``<failure type="WaiRegression">`` when it failed its thresholds or dropped after Holm correction; the suite
carries the gate verdict as properties, and a red gate adds a suite ``whileai.gate`` with one failed testcase
``suite_gate``. GitLab shows only names and failure text, so the numbers are in the failure message too. Built on
the xdist controller only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

SUITE_NAME = "whileai"


def _classname(nodeid: str) -> str:
    path = nodeid.split("::")[0]
    mod = path.removesuffix(".py")
    parts = [mod.replace("/", ".").replace("\\", ".")] + nodeid.split("::")[1:-1]
    return ".".join(p for p in parts if p)


def _num(x: Any) -> str:
    return "" if x is None else (f"{x:.6g}" if isinstance(x, float) else str(x))


def build(results: Mapping[str, Mapping[str, Any]], gate: Any, *, baseline: str | None,
          collect_errors: Sequence[str] = ()) -> Any:
    """The ``junitparser.JUnitXml`` document (call ``.write(path)``); each file in ``collect_errors`` is an
    error testcase in a suite ``whileai.collection`` (the run's exit code counts it; so does this file)."""
    from junitparser import Failure
    from junitparser.xunit2 import JUnitXml, TestCase, TestSuite

    from pytest_whileai.gate.lines import summary_line

    suite = TestSuite(SUITE_NAME)
    flagged = set(getattr(gate, "scenario_regressions", []) or [])
    for key in sorted(results):
        e = results[key]
        case = TestCase(e["nodeid"].split("::")[-1], _classname(e["nodeid"]), 0.0)
        b = e.get("baseline") or {}
        props = {"key": key, "passes": e["passes"], "k": e["k"], "n_scored": e["n_scored"],
                 "pass@1": e.get("pass_rate"), "metric": e["metric"], "estimate": e.get("value"),
                 "ci_low": (e.get("ci") or [None, None])[0], "ci_high": (e.get("ci") or [None, None])[1],
                 "level": e["level"], "baseline_passes": b.get("passes"), "baseline_n": b.get("n_scored"),
                 "baseline_pass@1": b.get("pass_rate"), "delta": e.get("delta"),
                 "delta_ci_low": (e.get("delta_ci") or [None, None])[0],
                 "delta_ci_high": (e.get("delta_ci") or [None, None])[1], "p": e.get("p_value"),
                 "holm_p": getattr(gate, "holm", {}).get(key) if gate is not None else None,
                 "seed": e["seed"], "judge": e.get("judge")}
        for name, value in props.items():
            if value is not None:
                case.add_property(name, _num(value))
        reasons = list(e.get("failures") or [])
        if key in flagged:
            reasons.append("dropped significantly vs the baseline after Holm correction")
        if reasons:
            fail = Failure(summary_line(dict(e)) + " :: " + "; ".join(reasons), "WaiRegression")
            fail.text = "\n".join(reasons)
            case.result = [fail]
        suite.add_testcase(case)
    if gate is not None:
        for name, value in (("whileai.gate", gate.status), ("whileai.red", str(bool(gate.red or gate.status == "failed")).lower()),
                            ("whileai.message", gate.message), ("whileai.baseline", baseline),
                            ("whileai.delta", gate.delta), ("whileai.ci_low", (gate.ci or [None, None])[0]),
                            ("whileai.ci_high", (gate.ci or [None, None])[1]), ("whileai.p", gate.p_value),
                            ("whileai.n_paired", gate.n_paired), ("whileai.level", gate.level),
                            ("whileai.alpha", gate.alpha), ("whileai.max_drop", gate.max_drop)):
            if value is not None:
                suite.add_property(name, _num(value))
    suite.update_statistics()
    xml = JUnitXml()
    xml.add_testsuite(suite)
    if gate is not None and gate.red:
        xml.add_testsuite(gate_suite(gate))
    if collect_errors:
        xml.add_testsuite(collection_suite(collect_errors))
    xml.update_statistics()
    return xml


def gate_suite(gate: Any) -> Any:
    """A red gate as its own suite ``whileai.gate`` with one failed testcase (``defaults.GATE_NODEID``), the same
    test pytest's ``--junitxml`` gets, so a CI reader counts the verdict; the message carries delta, interval,
    p and n."""
    from junitparser import Failure
    from junitparser.xunit2 import TestCase, TestSuite

    from pytest_whileai.gate.verdict import GATE_FILE, GATE_NAME, gate_details, gate_properties

    suite = TestSuite(f"{SUITE_NAME}.gate")
    case = TestCase(GATE_NAME, GATE_FILE, 0.0)
    for name, value in gate_properties(gate):
        case.add_property(name, _num(value))
    fail = Failure(gate.message, "WaiGate" + gate.status.title().replace(" ", ""))
    fail.text = "\n".join([gate.message, *gate_details(gate)])
    case.result = [fail]
    suite.add_testcase(case)
    suite.update_statistics()
    return suite


def collection_suite(files: Sequence[str]) -> Any:
    """The files that did not collect, one error testcase each: the suite is not whole, the run is not green."""
    from junitparser import Error
    from junitparser.xunit2 import TestCase, TestSuite

    suite = TestSuite(f"{SUITE_NAME}.collection")
    for name in files:
        case = TestCase(name, "whileai.collection", 0.0)
        case.result = [Error(f"collection error in {name}: the suite did not collect whole, so this run is not "
                             "green and is not saved as a baseline", "CollectionError")]
        suite.add_testcase(case)
    suite.update_statistics()
    return suite


def write(path: str | os.PathLike[str], results: Mapping[str, Mapping[str, Any]], gate: Any, *,
          baseline: str | None, collect_errors: Sequence[str] = ()) -> str:
    """Write the report atomically-enough (to a temp name, then rename) and return the path."""
    xml = build(results, gate, baseline=baseline, collect_errors=collect_errors)
    target = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(target))
    os.makedirs(parent, exist_ok=True)
    tmp = target + ".tmp"
    xml.write(tmp, pretty=True)
    os.replace(tmp, target)
    return target
