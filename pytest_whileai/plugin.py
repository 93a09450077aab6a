"""pytest11 entry point ``whileai``: hook implementations only; the work lives in the sibling modules.

Disable with ``-p no:whileai``. Nothing heavy (numpy, scipy, httpx) is imported until a whileai test runs or
the gate is computed, so installing the plugin costs unrelated test runs nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_whileai import options
from pytest_whileai.keys import WAI_SESSION
from pytest_whileai.markers import MARKER_LINES
from pytest_whileai.session import attach_entry  # (pytest_configure imports it on every run the plugin is on)


def _wai(config: pytest.Config) -> Any:
    stash = config.stash  # ``in`` and [], not Stash.get: a method call and a caught KeyError, on every report
    return stash[WAI_SESSION] if WAI_SESSION in stash else None  # noqa: SIM401


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_whileai import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(trylast=True)
def pytest_whileai_generate_commit_info(config: pytest.Config) -> dict[str, Any]:
    from pytest_whileai.gate.store import commit_info

    return commit_info(config.rootpath)


@pytest.hookimpl(trylast=True)
def pytest_whileai_generate_run_info(config: pytest.Config) -> dict[str, Any]:
    return {}


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from pytest_whileai import fixtures
    from pytest_whileai.keys import WAI_SESSION
    from pytest_whileai.session import WaiSession, is_worker

    for line in MARKER_LINES:
        config.addinivalue_line("markers", line)
    settings = options.resolve(config)
    wai = WaiSession(config, settings)
    config.stash[WAI_SESSION] = wai
    config.pluginmanager.register(fixtures, "whileai-fixtures")
    if settings.record or settings.replay:
        if settings.record and not is_worker(config) and config.getoption("numprocesses", None):
            raise pytest.UsageError("--wai-record writes one cassette file and cannot run under xdist workers; "
                                    "record with -n 0, then replay with -n N")
        try:
            from whileai_core.models.cache import Cassette
            from whileai_core.models.config import configure
        except ImportError as exc:
            raise pytest.UsageError(f"--wai-record/--wai-replay need whileai_core.models.cache and whileai_core.models.config, "
                                    f"which this install lacks ({exc})") from None
        mode, path = ("record", settings.record) if settings.record else ("replay", str(settings.replay))
        try:
            wai.cassette = Cassette(path, mode=mode)
        except (OSError, ValueError) as exc:
            raise pytest.UsageError(f"--wai-{mode}={path}: {exc}") from None
        configure(cache=wai.cassette)
    wai.setup()
    if settings.sequential and not wai.worker:
        wai.start_rounds()
    # hooks that only act under --wai-sequential or -v are registered only then: each hook implementation is a
    # call on every item (or report) of the run, whileai test or not
    if settings.sequential:
        config.pluginmanager.register(SequentialHooks(wai), "whileai-sequential")
    if config.option.verbose > 0:
        config.pluginmanager.register(VerboseHooks(), "whileai-verbose")
    if not wai.worker:
        config.pluginmanager.register(ControllerHooks(wai), "whileai-controller")
    if config.pluginmanager.hasplugin("xdist") and not wai.worker:
        from pytest_whileai.xdist import XdistHooks

        config.pluginmanager.register(XdistHooks(wai), "whileai-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    wai = _wai(config)
    cassette = getattr(wai, "cassette", None)
    if cassette is not None:
        from whileai_core.models.config import configure

        cassette.close()
        configure(cache=None)
    if getattr(wai, "seq_dir", None):
        import shutil

        shutil.rmtree(wai.seq_dir, ignore_errors=True)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    wai = _wai(config)
    if wai is None or wai.worker:
        return None
    s = wai.settings
    if not (config.option.verbose > 0 or s.baseline or s.save or s.autosave):
        return None
    base = f"baseline={s.baseline} ({wai.baseline_path or 'not found'})" if s.baseline else "no baseline"
    return [f"whileai: k={s.trials} seed={s.seed} level={s.level} alpha={s.alpha} max_drop={s.max_drop}; {base}"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    wai = _wai(metafunc.config)
    if metafunc.definition.get_closest_marker("wai_scenarios") is not None:
        from pytest_whileai.collect import generate
        from whileai_core.errors import WaiError

        try:
            generate(metafunc)
        except WaiError as exc:  # a bad marker is the user's one line, not pluggy's traceback (--fulltrace has it)
            raise pytest.Collector.CollectError(f"{type(exc).__name__}: {exc}") from exc
    if wai is not None and wai.settings.sequential:
        from pytest_whileai.collect import add_rounds

        add_rounds(metafunc, wai.settings)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    from pytest_whileai.collect import baseline_key
    from pytest_whileai.keys import EVAL_FIXTURES, MARK_ERROR, WAI_KEY, WAI_THRESHOLDS
    from pytest_whileai.markers import (
        WaiMarkerError,
        closest_wai_marks,
        parse_key_marker,
        parse_scenarios_marker,
        parse_wai_marker,
    )

    marker = pytest.mark.whileai
    whileai_names = (*EVAL_FIXTURES, "wai_scenario")
    parsed: dict[tuple[int, ...], tuple[Any, Any, Any]] = {}  # marker ids -> (the markers, thresholds, pinned key)
    marked: dict[int, pytest.Item] = {}  # the items marked here by id() (pytest_collection_finish: planned ones)
    walks: dict[tuple[int, ...], tuple[Any, ...]] = {}  # closest_wai_marks' answers, shared by a test's items
    for item in items:
        names = getattr(item, "fixturenames", ())
        if not any(n in names for n in whileai_names):
            continue  # not a whileai test: nothing to do (keeps plain suites at plain speed)
        item.add_marker(marker)
        marked[id(item)] = item
        wai_mark, scen, key_mark = closest_wai_marks(item, walks)
        # the items of one parametrized test share these marker objects: parse them once (the cache holds the
        # markers, so an id cannot be reused); a bad marker is not cached, each item gets its own error
        ids = (id(wai_mark), id(scen), id(key_mark))
        try:
            if ids not in parsed:
                thresholds = parse_wai_marker(wai_mark, where=item.nodeid)
                repeats = parse_scenarios_marker(scen, where=item.nodeid)["repeats"] if scen is not None else None
                if repeats is not None and thresholds.trials is None:
                    thresholds = dataclasses.replace(thresholds, trials=repeats)
                parsed[ids] = ((wai_mark, scen, key_mark), thresholds, parse_key_marker(key_mark, where=item.nodeid))
            _, thresholds, pinned = parsed[ids]
            item.stash[WAI_THRESHOLDS] = thresholds
            item.stash[WAI_KEY] = baseline_key(item, pinned)
        except WaiMarkerError as exc:
            item.stash[MARK_ERROR] = str(exc)  # the wai_eval fixture fails the item with it at setup
    from pytest_whileai.collect import refuse_shared_keys

    wai = _wai(config)
    if wai is not None:
        wai.marked = marked  # holding the items keeps their ids from being reused until collection_finish
    if wai is not None and wai.settings.import_path:
        from pytest_whileai.imported import imported_items

        items.extend(imported_items(session, wai.settings))  # --wai-import: each imported sample is a scenario
    refuse_shared_keys(items, WAI_KEY, MARK_ERROR)  # two tests with one baseline key: both error, naming each
    if wai is not None and wai.settings.sequential:
        from pytest_whileai.collect import round_of

        items[:] = sorted(items, key=lambda item: round_of(item.nodeid) or 0)  # round-major, stable within a round


def pytest_collection_finish(session: pytest.Session) -> None:
    wai = _wai(session.config)
    if wai is not None and wai.rounds is not None:
        from pytest_whileai.collect import round_of

        wai.rounds.expect((item.nodeid for item in session.items), round_of)
    if wai is not None and not wai.worker:  # what a whole run finishes (gate/saving.py); none on an xdist controller
        marked = wai.marked  # marked by pytest_collection_modifyitems; any other item is looked up (--wai-import's)
        wai.planned = [item.nodeid for item in session.items
                       if id(item) in marked or item.get_closest_marker("whileai") is not None]
        wai.marked = {}
    if wai is None or not wai.baseline_index:
        return
    from pytest_whileai.keys import WAI_KEY

    wai.n_compared = sum(1 for item in session.items if item.stash.get(WAI_KEY, None) in wai.baseline_index)


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        wai = _wai(items[0].config)
        if wai is not None:
            wai.deselected += len(items)  # a narrowed run is never saved as a baseline


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if WAI_SESSION in item.config.stash:
        attach_entry(item, report)  # the scenario's entry leaves an xdist worker with its test's report
        if report.longrepr is not None and item.get_closest_marker("whileai") is not None:
            from whileai_core.redact import redact

            text = str(report.longrepr)  # an exception out of a whileai test: no key reaches the terminal or JUnit
            clean = redact(text)
            if clean != text:
                report.longrepr = clean
    return report


class SequentialHooks:
    """Under ``--wai-sequential`` (controller and xdist workers): items of rounds the gate no longer needs skip."""

    def __init__(self, wai: Any) -> None:
        self.wai = wai

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        """An item of a round the gate no longer needs: reported skipped without setup, call or teardown
        (``unneeded.skip_unneeded``), unless a teardown is due; then pytest's protocol and the setup hook below."""
        from pytest_whileai.unneeded import skip_unneeded

        return skip_unneeded(item, nextitem, self.wai)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        from pytest_whileai.unneeded import unneeded_reason

        reason = unneeded_reason(item, self.wai)
        if reason is not None:  # at the test's location, as the skip without the protocol reports it
            raise pytest.skip.Exception(reason, _use_item_location=True)


class VerboseHooks:
    """Under -v, a scenario's word carries its trials ("PASSED (3/4 trials)"); -q and xdist letters stay pytest's."""

    def pytest_report_teststatus(self, report: pytest.TestReport) -> Any:
        if report.when != "call":  # registered under -v only (pytest_configure)
            return None
        from pytest_whileai.session import ENTRY_ATTR

        entry = getattr(report, ENTRY_ATTR, None)
        if not isinstance(entry, dict) or "rewards" not in entry:
            return None
        trials = (f"({entry.get('passes', 0)}/{entry.get('n_scored', 0)} trials"
                  f"{_why_passed(entry) if report.passed else ''})")
        if report.passed:
            return "passed", ".", (f"PASSED {trials}", {"green": True})
        if report.failed:
            return "failed", "F", (f"FAILED {trials}", {"red": True})
        return None


def _why_passed(entry: dict[str, Any]) -> str:
    """What passed when the estimate sits under ``min_pass_rate``: the item fails only when the whole interval
    does, so "PASSED (1/4 trials)" under min_pass_rate=0.5 says so instead of reading like a contradiction."""
    floor, value, ci = entry.get("min_pass_rate"), entry.get("value"), entry.get("ci")
    if floor is None or value is None or not ci or value >= floor:
        return ""
    from whileai_core.gate.text import fmt, fmt_ci

    level = f"{float(entry.get('level') or 0.95) * 100:g}%"
    return (f"; {entry.get('metric', 'pass@1')} {fmt(value)} is under min_pass_rate={floor:g}, but its {level} "
            f"interval {fmt_ci(ci)} still reaches it: not yet a failure, more trials decide")


XDIST_CRASHED_WHEN = "???"  # the ``when`` of the report xdist makes for the item a crashed worker was running


class ControllerHooks:
    """Hooks bound to one session's ``WaiSession`` (a report carries no config), registered on the controller."""

    def __init__(self, wai: Any) -> None:
        from pytest_whileai.session import ENTRY_ATTR, NOT_RUN_ATTR

        self.wai = wai
        self._entry_attr, self._not_run_attr = ENTRY_ATTR, NOT_RUN_ATTR

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:  # a suite that did not collect whole is never saved as a baseline
            self.wai.refuse_save(f"collection error in {report.nodeid or 'the session'}")
            self.wai.collect_errors.append(report.nodeid or "the session")  # and the scenario JUnit says so

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Gather each scenario's entry as its report arrives (from this process or an xdist worker)."""
        entry = getattr(report, self._entry_attr, None)
        if isinstance(entry, dict) and "key" in entry:
            self.wai.add_result(entry)
        lost = getattr(report, self._not_run_attr, None)
        if isinstance(lost, dict) and "id" in lost:  # failed before recording: its trials are in the ledger
            self.wai.not_run.setdefault(str(lost["id"]), {k: v for k, v in lost.items() if k != "id"})
        if report.when == "teardown":
            self.wai.finished.add(report.nodeid)
        # an item is over at its teardown, or when its xdist worker crashed under it (xdist's report says "???"):
        # a round with a crashed item is still decided, or the other workers would wait for it (issue 26 fuzzer)
        over = report.when == "teardown" or report.when == XDIST_CRASHED_WHEN
        if self.wai.rounds is not None and over and report.nodeid in self.wai.rounds.items:
            self.wai.rounds.finish(report.nodeid, self.wai.baseline_index if self.wai.baseline is not None else None)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Any:
    wai = _wai(session.config)
    try:
        out = yield
    except BaseException:  # -x/--maxfail (session.Failed), a plugin's stop, Ctrl-C: the run is not whole
        if wai is not None and not wai.worker:
            from pytest_whileai.gate.saving import stop_reason

            wai.stopped = stop_reason(session)
        raise
    if session.config.option.collectonly:
        return out
    if wai is not None and not wai.worker:
        wai.merge_rounds()
        from pytest_whileai.gate.verdict import scenario_reports

        rule_reports = scenario_reports(wai.rejudge_rounds())  # sequential: per-item rules on the joined rounds
        session.testscollected += len(rule_reports) // 2
        for report in rule_reports:
            session.config.hook.pytest_runtest_logreport(report=report)
    if wai is not None and not wai.worker and (wai.results or wai.baseline is not None or wai.failed_workers
                                               or wai.not_run or wai.collect_errors):
        from pytest_whileai.gate import plans
        from pytest_whileai.gate.verdict import forget_gate_failure, gate_reports
        from whileai_core.gate.compare import GateSettings, compute_gate, mark_incomplete

        s = wai.settings
        known = plans.load(session.config)  # the power line's plans from earlier runs (pytest's cache)
        n_known = len(known or ())
        wai.gate = compute_gate(wai.results, wai.baseline_index if wai.baseline is not None else None,
                                baseline_name=s.baseline, settings=GateSettings.of(s), baseline_note=wai.baseline_note,
                                min_paired_share=s.min_paired_share, require_baseline=bool(wai.strict),
                                failed_workers=wai.failed_workers, strict_reason=wai.strict,
                                not_run=list(wai.not_run.values()),
                                noise=wai.history.noise if wai.history is not None else None, plan_cache=known)
        plans.store(session.config, known, n_known)
        over = wai.whole_run_over_budget()
        if over:  # over budget is red INCOMPLETE and saves nothing, however many workers shared the spending
            mark_incomplete(wai.gate, over)
            wai.refuse_save(f"--wai-budget: {over}")
        if wai.collect_errors:  # --continue-on-collection-errors: what did not collect was not measured
            mark_incomplete(wai.gate, f"collection error in {', '.join(wai.collect_errors)}: the suite did not "
                                      "collect whole")
        reports = gate_reports(wai.gate)  # a red gate is a failed test that pytest counts, lists and writes
        session.testscollected += bool(reports)  # one more test, so the progress counter ends at 100%
        for report in reports:
            session.config.hook.pytest_runtest_logreport(report=report)
        if not reports:
            forget_gate_failure(session.config)
    return out


@pytest.hookimpl(tryfirst=True)  # before pytest's --junitxml writes its file, so it counts a failed write too
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    wai = _wai(session.config)
    if wai is None:
        return
    if wai.worker:
        from pytest_whileai.xdist import publish

        publish(session.config, wai)
        return
    from pytest_whileai.gate.saving import refusals
    from pytest_whileai.report.publish import write_outputs

    wai.exit_status = int(exitstatus)
    for reason in refusals(wai, session, exitstatus):
        wai.refuse_save(reason)
    write_outputs(wai)
    if wai.write_errors:
        from pytest_whileai.gate.verdict import write_error_reports

        for report in write_error_reports(wai.write_errors):  # the final line counts it as an error (red)
            session.config.hook.pytest_runtest_logreport(report=report)
    if wai.write_errors and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    code = wai.settings.regression_exit_code
    if wai.gate is not None and wai.gate.red and code != int(pytest.ExitCode.TESTS_FAILED):
        session.exitstatus = code


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    wai = _wai(config)
    if wai is None or wai.worker or not (wai.results or wai.gate is not None or wai.write_errors or wai.notes):
        return
    from pytest_whileai.report.markdown import summary_lines

    terminalreporter.section("whileai")
    red = wai.gate is not None and wai.gate.red
    loud = wai.gate is not None and bool(wai.gate.warning or wai.gate.failed_workers)
    for line in summary_lines(wai):
        gate_line = line.startswith(("suite gate", "WARNING"))
        terminalreporter.write_line(line, red=red and gate_line, yellow=loud and not red and gate_line)
    for err in wai.write_errors:
        terminalreporter.write_line(f"ERROR: whileai: {err}", red=True)
