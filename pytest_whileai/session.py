"""``WaiSession``: all run state of the plugin in one object, kept in ``config.stash``.

It holds the resolved settings, the loaded baseline, the per-scenario results gathered from reports and xdist
workers (the controller alone aggregates), and the gate once it is computed.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

import pytest

from pytest_whileai.gate import store as S
from pytest_whileai.keys import ENTRY_SENT, WAI_KEY, WAI_RESULT, WAI_SESSION, WAI_THRESHOLDS
from pytest_whileai.options import Settings
from whileai_core.errors import CorruptBaseline, IncompatibleBaseline, MissingBaseline
from whileai_core.gate import document as rundoc


class WaiWarning(pytest.PytestWarning):
    """A whileai plugin warning (filter with ``-W ignore::pytest_whileai.session.WaiWarning``)."""


ENTRY_ATTR = "wai_entry"  # the TestReport attribute that carries a scenario's entry (xdist serializes __dict__)


NOT_RUN_ATTR = "wai_not_run"  # the TestReport attribute of a whileai item that failed before recording a result
_UNRECORDED = pytest.StashKey[bool]()


def _planned_trials(item: pytest.Item) -> int:
    """The trials this item was to run: its k, or under --wai-sequential its round's share of k."""
    settings = item.config.stash[WAI_SESSION].settings
    thresholds = item.stash.get(WAI_THRESHOLDS, None)
    k = (thresholds.trials if thresholds is not None else None) or settings.trials
    callspec = getattr(item, "callspec", None)
    r = callspec.params.get("wai_round") if callspec is not None else None
    if r is None:
        return int(k)
    from whileai_core.measure.sequential import SequentialPlan

    return len(SequentialPlan(settings.round_trials, k).trials(r))


def _note_unrecorded(item: pytest.Item, report: pytest.TestReport) -> None:
    """A whileai item whose test body failed without recording a result: its planned trials go in the ledger as
    ``not_run`` (on the teardown report, so they leave an xdist worker too). A setup error (a bad marker, a
    shared key) is already an error on the final line and is not counted again."""
    stash = item.stash
    if WAI_KEY not in stash:
        return
    if report.failed and report.when == "call":
        stash[_UNRECORDED] = True
    if report.when == "teardown" and _UNRECORDED in stash and stash[_UNRECORDED]:
        n = _planned_trials(item)
        setattr(report, NOT_RUN_ATTR, {"id": item.nodeid, "planned": n, "scored": 0, "unscored": {"not_run": n}})


def attach_entry(item: pytest.Item, report: pytest.TestReport) -> None:
    """Put the item's scenario entry on the first report made after ``wai_eval.run``/``record`` finished, so the
    result leaves an xdist worker as the test finishes (a worker that crashes later loses nothing finished)."""
    stash = item.stash  # ``in`` and [], not Stash.get (a method call and a caught KeyError): this runs per report
    if WAI_RESULT not in stash or stash[WAI_RESULT] is None:
        _note_unrecorded(item, report)
        return
    if ENTRY_SENT in stash and stash[ENTRY_SENT]:  # noqa: RUF019 (a Stash: its get() is the slow call avoided)
        return
    setattr(report, ENTRY_ATTR, stash[WAI_RESULT])  # the entry itself, not a copy: nothing edits it after
    # the test, an xdist worker serializes it, and the controller keeps this one object (one dict per item less)
    item.stash[ENTRY_SENT] = True


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


class WaiSession:
    """Run state: settings, baseline, results by key, the gate."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.worker = is_worker(config)
        self.baseline: rundoc.RunDocument | None = None
        self.baseline_path: str | None = None
        self.baseline_index: Mapping[str, Mapping[str, Any]] = {}
        self.baseline_note: str | None = None
        self.results: dict[str, dict[str, Any]] = {}
        self.failed_workers: list[str] = []
        self.n_compared = 0  # whileai items with a baseline entry in this session (the Bonferroni/Holm family)
        self.gate: Any = None
        self.saved: list[str] = []
        self.commit: dict[str, Any] | None = None
        self.run_info: dict[str, Any] = {}
        self.fingerprint: dict[str, Any] = {}
        self.cassette: Any = None
        self.write_errors: list[str] = []
        self.notes: list[str] = []
        self.budget: Any = None  # whileai_core.report.cost.Budget under --wai-budget
        self.budget_note: str | None = None  # why the run stopped early (the budget was spent)
        self.usage: dict[str, dict[str, int]] = {}  # tokens spent in this process, by model
        self.baseline_paths: list[str] = []
        self.baseline_requested: int | None = None
        self.history: Any = None  # a whileai_core.measure.history.History for --wai-baseline=BRANCH~N
        self.stale: str | None = None
        self.rounds: Any = None  # gate.rounds.Rounds on the controller under --wai-sequential
        self.round_results: dict[tuple[str, int], dict[str, Any]] = {}
        self.seq_dir: str | None = None
        self.not_run: dict[str, dict[str, Any]] = {}  # planned scenarios that never ran: key -> their ledger
        # issue 26 item 3: what may refuse a save (gate/saving.py reads them at session end)
        self.save_refusals: list[str] = []
        self.stopped: str | None = None  # why the run loop stopped early (-x, --maxfail), before the gate's reports
        self.deselected = 0
        self.collect_errors: list[str] = []  # files (node ids) that did not collect: the suite is not whole
        self.planned: list[str] = []  # whileai test ids collected in this process (empty on an xdist controller)
        self.ask_ids: dict[str, str] = {}  # plain str asks kept as str at collection -> their task ids
        self.marked: dict[int, pytest.Item] = {}  # the items the plugin marked whileai, by id(), until collected
        self.finished: set[str] = set()  # test ids whose teardown was reported
        self.exit_status: int | None = None
        self.strict: str | None = None  # why a baseline that cannot gate is red (Settings.strict_baseline)
        self.history_skipped: list[tuple[str, str]] = []  # BRANCH~N runs left out of the pool, with the reason

    def refuse_save(self, reason: str) -> None:
        """Keep this run from becoming a baseline (``--wai-save``/``--wai-autosave``), naming ``reason`` in the
        note; anything in the session that makes the run partial or untrustworthy calls it (INCOMPLETE, budget)."""
        if reason not in self.save_refusals:
            self.save_refusals.append(reason)

    # --- configuration -----------------------------------------------------------------------------------------
    def setup(self) -> None:
        """Gather run info and its fingerprint, and load the baseline (a bad one is a UsageError)."""
        hook = self.config.hook
        info = hook.pytest_whileai_generate_run_info(config=self.config)
        self.run_info = dict(info or {})
        hook.pytest_whileai_update_run_info(config=self.config, run_info=self.run_info)
        self.fingerprint = rundoc.fingerprint(self.run_info, self.settings.fingerprint)
        self._setup_budget()
        spec = self.settings.baseline
        self.strict = self.settings.strict_baseline()
        if not spec:
            if self.settings.require_baseline:
                raise pytest.UsageError("--wai-require-baseline needs --wai-baseline=NAME|PATH to say which one")
            return
        store = S.Store(self.storage_dir())
        try:
            paths, requested = self._baseline_paths(store, spec)
            docs = []
            for path in paths:
                docs.append(rundoc.load_document(path))
                rundoc.check_compatible(docs[-1], fingerprint_now=self.fingerprint, source=path)
        except MissingBaseline as exc:
            if self.settings.require_baseline:
                raise pytest.UsageError(f"whileai: {exc} (--wai-require-baseline is set)") from None
            if exc.names:  # the store holds runs, just not this one: a mistyped name is an error, never a green
                raise pytest.UsageError(f"whileai: {exc}") from None
            self.baseline_note = str(exc)  # an empty store (a first run): warn, the gate is off; red in CI
            if self.strict:
                self.baseline_note = (f"no baseline for {spec} yet: run the main job first (it saves one with "
                                      f"--wai-save={spec}); {exc}")
            if not self.worker:
                off = "the gate is red (" + self.strict + ")" if self.strict else "the regression gate is off"
                self.config.issue_config_time_warning(
                    WaiWarning(f"whileai: {exc}; {off} for this run"), stacklevel=2)
            return
        except (CorruptBaseline, IncompatibleBaseline) as exc:
            raise pytest.UsageError(f"whileai: {exc}") from None
        self.baseline = docs[-1]
        self.baseline_path = paths[-1]
        self.baseline_paths = paths
        self.baseline_requested = requested
        if requested is None:
            self.baseline_index = rundoc.baseline_index(self.baseline)
        else:  # BRANCH~N: the last N runs pooled per scenario (whileai_core.measure.history)
            from whileai_core.measure.history import pool_runs

            self.history = pool_runs(docs, names=[os.path.basename(p) for p in paths], alpha=self.settings.alpha,
                                     seed=self.settings.seed, requested=requested)
            self.baseline_index = self.history.index
        if not self.worker:
            from whileai_core.measure.history import stale_note

            commit = (self.baseline.get("commit_info") or {}).get("id")
            self.stale = stale_note(self.baseline.get("created"), S.commits_behind(commit, self.config.rootpath))

    def _baseline_paths(self, store: S.Store, spec: str) -> tuple[list[str], int | None]:
        """The baseline files (several for ``BRANCH~N``, oldest first) and N (None for one run). xdist workers
        take what the controller resolved."""
        given = getattr(self.config, "workerinput", {}) if self.worker else {}
        if given.get("wai_baseline_paths"):
            return list(given["wai_baseline_paths"]), given.get("wai_baseline_requested")
        if given.get("wai_baseline_path"):
            return [given["wai_baseline_path"]], None
        if given.get("wai_baseline_missing"):
            raise MissingBaseline(given["wai_baseline_missing"])
        head = (self.commit_info() or {}).get("id")
        history = store.resolve_history(spec, head=head)
        if history is not None:
            self.history_skipped = history[2]
            return [str(p) for p in history[0]], history[1]
        return [str(store.resolve(spec, head=head))], None

    def _setup_budget(self) -> None:
        """Read ``--wai-prices`` and ``--wai-budget`` (a bad table or a dollar budget without prices: UsageError)."""
        from whileai_core.errors import InvalidArgument
        from whileai_core.report.cost import Budget, load_prices

        try:
            load_prices(self.settings.prices)
            if self.settings.budget:
                self.budget = Budget(self.settings.budget, prices=self.settings.prices)
        except InvalidArgument as exc:
            raise pytest.UsageError(f"whileai: {exc}") from None

    def spend(self, spent: dict[str, dict[str, int]]) -> str | None:
        """Count the tokens one trial spent; the budget's message once it is exceeded (None otherwise)."""
        from whileai_core.report.cost import add_usage

        add_usage(self.usage, spent)
        if self.budget is None:
            return None
        self.budget.add(spent)
        return self.budget.exceeded()

    def storage_dir(self) -> str:
        root = self.settings.storage
        if not os.path.isabs(root):
            root = os.path.join(str(self.config.rootpath), root)
        return root

    def commit_info(self) -> dict[str, Any]:
        if self.commit is None:
            info = self.config.hook.pytest_whileai_generate_commit_info(config=self.config)
            self.commit = dict(info or {})
            self.config.hook.pytest_whileai_update_commit_info(config=self.config, commit_info=self.commit)
        return self.commit

    # --- results -----------------------------------------------------------------------------------------------
    def add_result(self, entry: dict[str, Any]) -> None:
        """Record one scenario's entry (the same key twice, from a report and a worker payload, is kept once);
        a ``--wai-sequential`` round's entry is kept by (key, round) and merged after the last round used."""
        key = entry["key"]
        if entry.get("round") is not None:
            self.round_results[(key, int(entry["round"]))] = entry
            if self.rounds is not None:
                self.rounds.add(entry)
            return
        old = self.results.get(key)
        if old is not None and old.get("nodeid") != entry.get("nodeid"):
            warnings.warn(WaiWarning(f"whileai: two tests share the baseline key {key!r} ({old.get('nodeid')} and "
                                     f"{entry.get('nodeid')}); give one a distinct @pytest.mark.wai_key"),
                          stacklevel=1)
        self.results[key] = entry

    def whole_run_over_budget(self) -> str | None:
        """The whole run's spend against ``--wai-budget`` when no trial was stopped by it: under xdist each worker
        counts only its own spend, so N workers together can pass the budget without one of them stopping; the
        controller sums every scenario's usage (each round's, under ``--wai-sequential``)."""
        from whileai_core.report.cost import Budget

        if not self.settings.budget:
            return None
        entries = list(self.round_results.values()) or list(self.results.values())
        if any(e.get("budget_stop") for e in entries):
            return None  # a worker (or this process) stopped on it: the gate says so already
        total = Budget(self.settings.budget, prices=self.settings.prices)
        for entry in entries:
            total.add(entry.get("usage") or {})
        over = total.exceeded()
        return None if over is None else (f"{over} by the xdist workers together (each stops on its own spend "
                                          "only), so this run is partial")

    def plan_not_run(self, item: pytest.Item, reason: str) -> None:
        """A planned scenario that will not run (e.g. the budget is spent): its k trials enter the ledger."""
        from pytest_whileai.keys import WAI_KEY, WAI_THRESHOLDS

        thresholds = item.stash.get(WAI_THRESHOLDS, None)
        k = (thresholds.trials if thresholds is not None else None) or self.settings.trials
        key = item.stash.get(WAI_KEY, item.nodeid)
        self.not_run[key] = {"planned": k, "scored": 0, "unscored": {reason: k}}

    def worker_payload(self) -> dict[str, Any]:
        return {"results": list(self.results.values()) + list(self.round_results.values()),
                "not_run": self.not_run}

    def merge_worker(self, node_id: str, payload: Any) -> None:
        """Cross-check a worker's end-of-session payload against the entries its reports already brought."""
        if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
            self.failed_workers.append(node_id)
            return
        if isinstance(payload.get("not_run"), dict):
            self.not_run.update(payload["not_run"])
        late = [e for e in payload["results"] if isinstance(e, dict) and "key" in e and e["key"] not in self.results
                and (e.get("round") is None or (e["key"], int(e["round"])) not in self.round_results)]
        for entry in late:
            self.add_result(entry)
        if late:
            self.notes.append(f"worker {node_id}: {len(late)} scenario result(s) arrived only at session end, "
                              "not with their test reports")

    def document(self, *, name: str | None = None) -> rundoc.RunDocument:
        gate = self.gate.to_dict() if self.gate is not None else None
        doc = rundoc.run_document(self.results.values(), settings=self.settings.gate_settings(),
                                  commit=self.commit_info(), machine=S.machine_info(), run_info=self.run_info,
                                  fingerprint_extra=self.settings.fingerprint, name=name, gate=gate,
                                  store=self.storage_dir())
        if self.rounds is not None:
            doc["sequential"] = self.rounds.summary()
        if self.history is not None or self.stale:
            doc["baseline_history"] = {**(self.history.to_dict() if self.history is not None else {}),
                                       "stale": self.stale,
                                       "skipped": [{"run": n, "why": w} for n, w in self.history_skipped]}
        if self.exit_status is not None:  # what BRANCH~N pools by (gate/store.py unpoolable)
            red = self.exit_status != 0 or (self.gate is not None and self.gate.red)
            doc["outcome"] = {"exit_status": self.exit_status, "green": not red,
                              "complete": not self.save_refusals, "refused": list(self.save_refusals)}
        return doc

    def start_rounds(self) -> None:
        """Under ``--wai-sequential`` on the controller: the round state and its decision directory."""
        import tempfile

        from pytest_whileai.gate.rounds import Rounds

        self.seq_dir = tempfile.mkdtemp(prefix="whileai-sequential-")
        self.rounds = Rounds(self.seq_dir, self.settings.round_trials, alpha=self.settings.alpha,
                             max_drop=self.settings.max_drop)

    def merge_rounds(self) -> None:
        """After the run loop: each scenario's rounds up to the stop become its one entry in ``results``."""
        if self.rounds is None:
            return
        for entry in self.round_results.values():  # late entries from worker payloads
            if int(entry["round"]) not in self.rounds.entries.get(entry["key"], {}):
                self.rounds.add(entry)
        self.results.update(self.rounds.merged())

    def rejudge_rounds(self) -> list[dict[str, Any]]:
        """Under ``--wai-sequential``: every merged scenario judged on its per-item rules; the entries that fail a
        rule their round items did not report (each with ``fresh_failures``)."""
        if self.rounds is None:
            return []  # (before the import: a run without whileai tests imports no numpy)
        from pytest_whileai.gate.scenario import rejudge_merged

        index = self.baseline_index if self.baseline is not None else {}
        family = max(1, sum(1 for key in self.results if key in index))
        failed = []
        for key, entry in sorted(self.results.items()):
            merged, fresh = rejudge_merged(entry, baseline=index.get(key), baseline_note=self.baseline_note,
                                           settings=self.settings, family=family)
            self.results[key] = merged
            if fresh:
                failed.append({**merged, "fresh_failures": fresh})
        return failed
