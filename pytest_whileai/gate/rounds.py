"""``--wai-sequential`` on the controller: which round items there are, which have finished, and the decision
after each complete round (``whileai_core.measure.sequential``).

Items are ordered round-major. Once every item of round r has reported (its teardown), the controller decides
from rounds 1..r only: stop red, stop green, or run round r+1. A stop is written to ``decision.json`` in a
session temp dir (xdist workers read it before each item) and later rounds' items are skipped with the reason.
An item of a later round that ran before the decision reached its worker is left out of the analysis, so the
verdict depends only on completed rounds and is identical under ``-n 2``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument
from whileai_core.gate.compare import binarize

DECISION_FILE = "decision.json"
DECIDED_FILE = "decided.json"  # {"through": r}: rounds 1..r+1 are decided (continue or stop); workers wait on it
RELEASED_FILE = "released.json"  # {"reason": ...}: workers wait for no round any more (a worker crashed)
_GAVE_UP: set[str | None] = set()  # this worker's decision directories whose wait ran out once (waits no more)


def decided_through(directory: str | os.PathLike[str] | None) -> int:
    """The last round (0-based) the controller decided, -1 before the first decision."""
    if not directory:
        return -1
    try:
        return int(json.loads((Path(directory) / DECIDED_FILE).read_text(encoding="utf-8"))["through"])
    except (OSError, ValueError, KeyError, TypeError):
        return -1


def wait_for_round(directory: str | None, r: int, *, timeout_s: float = D.SEQ_WAIT_S,
                   poll_s: float = D.SEQ_WAIT_POLL_S) -> None:
    """On an xdist worker, before an item of round ``r``: wait until round ``r - 1`` is decided (or a stop was
    written), so a worker starts no later-round item the decision makes useless; at most ``timeout_s``, once per
    worker: after one wait ran out this worker waits no more (a controller that never decides costs one
    ``timeout_s``, never one per item)."""
    import time

    end = time.monotonic() + timeout_s
    while r > 0 and decided_through(directory) < r - 1 and read_decision(directory) is None:
        if directory in _GAVE_UP or (directory and (Path(directory) / RELEASED_FILE).exists()):
            return
        if time.monotonic() > end:
            _GAVE_UP.add(directory)
            return
        time.sleep(poll_s)



def read_decision(directory: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """The stop a controller wrote (``{"round": r, "decision": ..., "reason": ...}``, r 0-based), or None."""
    if not directory:
        return None
    try:
        return json.loads((Path(directory) / DECISION_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class Rounds:
    """The round state of one sequential session (controller only)."""

    def __init__(self, directory: str, round_trials: int, *, alpha: float, max_drop: float) -> None:
        self.directory = directory
        self.round_trials = round_trials
        self.alpha = alpha
        self.max_drop = max_drop
        self.expected: dict[int, set[str]] = {}
        self.items: set[str] = set()  # every round item's node id
        self.finished: set[str] = set()
        self.entries: dict[str, dict[int, dict[str, Any]]] = {}
        self.decided_through = -1  # the last round decided "continue"
        self.stop: dict[str, Any] | None = None
        self.result: Any = None  # the SequentialResult of the last decision
        self.note: str | None = None
        self.extra_trials = 0  # trials of rounds after the stop that ran before the decision reached a worker

    def expect(self, nodeids: Iterable[str], round_of: Any) -> None:
        for nodeid in nodeids:
            r = round_of(nodeid)
            if r is not None:
                self.expected.setdefault(r, set()).add(nodeid)
                self.items.add(nodeid)


    @property
    def rounds(self) -> int:
        return max(self.expected, default=-1) + 1

    def add(self, entry: Mapping[str, Any]) -> None:
        self.entries.setdefault(str(entry["key"]), {})[int(entry["round"])] = dict(entry)

    def finish(self, nodeid: str, baseline_index: Mapping[str, Mapping[str, Any]] | None) -> None:
        """An item's teardown arrived: decide every round that is now complete."""
        self.finished.add(nodeid)
        while self.stop is None and self.decided_through + 1 < self.rounds:
            r = self.decided_through + 1
            if not self.expected.get(r, set()) <= self.finished:
                return
            self._decide(r, baseline_index)

    def release(self, reason: str) -> None:
        """Tell the workers to wait for no round any more. After a worker crashed, xdist queues the items it had
        pending behind the later rounds' items, so a worker would wait on a round whose last items sit behind
        it (fuzz seed 4 of issue 26: a hang); the run is INCOMPLETE anyway, so every item just runs."""
        from whileai_core.rows import atomic_write_text

        atomic_write_text(Path(self.directory) / RELEASED_FILE, json.dumps({"reason": reason}), overwrite=True)

    def _decide(self, r: int, baseline_index: Mapping[str, Mapping[str, Any]] | None) -> None:
        from whileai_core.rows import atomic_write_text

        try:
            self._decide_round(r, baseline_index)
        finally:
            atomic_write_text(Path(self.directory) / DECIDED_FILE, json.dumps({"through": r}), overwrite=True)

    def _decide_round(self, r: int, baseline_index: Mapping[str, Mapping[str, Any]] | None) -> None:
        from whileai_core.measure.sequential import SequentialPlan, sequential_test

        self.decided_through = r
        if not baseline_index:
            self.note = "sequential: no baseline to decide against, so every round runs"
            return
        before, rounds, k = self.counts(r, baseline_index)
        try:
            res = sequential_test(before, rounds, plan=SequentialPlan(self.round_trials, k), alpha=self.alpha,
                                  max_drop=self.max_drop)
        except InvalidArgument as exc:
            self.note = f"sequential: cannot decide after round {r + 1} ({exc}); every round runs"
            return
        self.result = res
        if res.decision != "continue" and r + 1 < self.rounds:
            self.stop = {"round": r, "decision": res.decision, "reason": res.reason}
            from whileai_core.rows import atomic_write_text

            atomic_write_text(Path(self.directory) / DECISION_FILE, json.dumps(self.stop), overwrite=True)

    def counts(self, r: int, baseline_index: Mapping[str, Mapping[str, Any]]
               ) -> tuple[dict[str, tuple[int, int]], list[dict[str, tuple[int, int]]], int]:
        """Baseline counts and this run's cumulative counts after rounds 1..r+1, each binarized at the
        scenario's pass_reward, and the largest k (the design's maximum)."""
        before: dict[str, tuple[int, int]] = {}
        rounds: list[dict[str, tuple[int, int]]] = [{} for _ in range(r + 1)]
        k = 1
        for key, by_round in self.entries.items():
            if key not in baseline_index or any(i not in by_round for i in range(r + 1)):
                continue
            pr = by_round[0].get("pass_reward", D.GATE_PASS_REWARD)
            flags = binarize(baseline_index[key].get("rewards", []), pr)
            before[key] = (sum(flags), len(flags))
            passes = n = 0
            for i in range(r + 1):
                passes += int(by_round[i]["passes"])
                n += int(by_round[i]["n_scored"])
                rounds[i][key] = (passes, n)
            k = max(k, int(by_round[0]["k"]))
        return before, rounds, k

    def merged(self) -> dict[str, dict[str, Any]]:
        """One entry per scenario from its rounds up to the stop (all rounds without one): rewards and trial
        indices joined, counts and intervals recomputed."""
        from pytest_whileai.gate.scenario import metric_interval

        last = self.stop["round"] if self.stop else self.rounds - 1
        out: dict[str, dict[str, Any]] = {}
        self.extra_trials = 0
        for key, by_round in sorted(self.entries.items()):
            used = [by_round[i] for i in sorted(by_round) if i <= last]
            self.extra_trials += sum(len(by_round[i]["rewards"]) for i in by_round if i > last)
            if not used:
                continue
            entry = dict(used[0])
            entry.pop("round", None)
            entry["rounds"] = len(used)
            entry["rewards"] = [x for e in used for x in e["rewards"]]
            entry["trial_indices"] = [x for e in used for x in e["trial_indices"]]
            if all(isinstance(e.get("trial_states"), list) for e in used):
                from whileai_core.gate.ledger import entry_ledger

                entry["trial_states"] = [x for e in used for x in e["trial_states"]]
                entry["ledger"] = entry_ledger(entry).to_dict()
            for field in ("passes", "n_scored", "unscored", "errors", "judge_errors", "infra_errors"):
                entry[field] = sum(int(e.get(field) or 0) for e in used)
            entry["failures"] = [f for e in used for f in e.get("failures") or []]
            n = entry["n_scored"]
            entry["pass_rate"] = entry["passes"] / n if n else None
            entry["value"], entry["ci"] = metric_interval(entry["metric"], entry["passes"], n, int(entry["k"]),
                                                          float(entry["level"]))
            out[key] = entry
        return out

    def summary(self) -> dict[str, Any]:
        """What the JSON document, the terminal and the report say: rounds run of the design, why it stopped."""
        res = self.result
        return {"rounds": self.rounds, "round_trials": self.round_trials,
                "stopped_after_round": None if self.stop is None else self.stop["round"] + 1,
                "decision": None if res is None else res.decision, "text": None if res is None else str(res),
                "trials_run": None if res is None else res.trials_run,
                "trials_fixed": None if res is None else res.trials_fixed,
                "extra_trials": self.extra_trials, "note": self.note}
