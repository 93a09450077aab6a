"""simulate's run on top of the rollout ``Engine`` (``engine.py``): the fixed and dynamic policies, the rows
store (in memory, or the ``output=`` file, which is also the checkpoint a rerun resumes from), progress lines and
the stop reason.

Before a batch of jobs is played, the Runner asks the agent's cassette for each rollout kept whole there
(``rollout.replayed``): a hit becomes its row on the caller's thread, with no event loop and no agent loop, and
gets the engine's stamps (``Engine.stamp``); only the misses are played. ``Runner.play`` plays a batch on the
engine, or (simulate's ``executor="ray"``) in shards on a cluster (``scale/rollouts.py``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import sys
import time
import uuid
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.adapters.routing import missed
from whileai_core.progress import Progress
from whileai_core.rows import stable_id
from whileai_core.simulate.engine import Engine
from whileai_core.simulate.model_agent import situation_key
from whileai_core.simulate.output import RowsFile
from whileai_core.simulate.rollout import replayed
from whileai_core.simulate.situations import AskedSituations, Scenario
from whileai_core.simulate.world import World

log = logging.getLogger("whileai.simulate")


def task_ids(scen: Sequence[Scenario]) -> Iterator[str]:
    """Every situation's task id, in order (``AskedSituations`` computes them without building its scenarios)."""
    return scen.task_ids() if isinstance(scen, AskedSituations) else (x.task_id for x in scen)


def prompts(scen: Sequence[Scenario]) -> Iterator[str]:
    """Every situation's user message, in order, as a plain ``str``."""
    return scen.prompts() if isinstance(scen, AskedSituations) else (str(x) for x in scen)


def run_key(seed: int, scen: Sequence[Scenario], k: int, policy: str) -> str:
    """``stable_id(seed, [str(x) for x in scen], k, policy, length=32)``, hashed as the messages are read (no list
    of them is made: a run of many situations holds none of its messages twice)."""
    encode = json.JSONEncoder(sort_keys=True, default=str).encode  # rows.stable_id's encoder
    digest = hashlib.sha256(f"[{encode(seed)}, [".encode())
    for i, prompt in enumerate(prompts(scen)):
        digest.update(f"{', ' if i else ''}{encode(prompt)}".encode())
    digest.update(f"], {encode(k)}, {encode(policy)}]".encode())
    return digest.hexdigest()[:32]


class RunPlan:
    """A run's planned rollouts, (task_id, rollout_index) for each situation and ``0 <= rollout_index < k``, in
    plan order (``world.RUN_PLAN``), computed as it is read: it holds a task id per situation (none for the
    situations of ``asks=``, read from its asks), never a pair per rollout (so it does not grow with ``k``)."""

    def __init__(self, scen: Sequence[Scenario], k: int) -> None:
        self.scen: Sequence[Scenario] | list[str] = scen if isinstance(scen, AskedSituations) else list(task_ids(scen))
        self.k = k

    def __len__(self) -> int:
        return len(self.scen) * self.k

    def __iter__(self) -> Iterator[tuple[str, int]]:
        ids = self.scen.task_ids() if isinstance(self.scen, AskedSituations) else self.scen
        for task_id in ids:
            for ri in range(self.k):
                yield task_id, ri

    def __repr__(self) -> str:
        return f"RunPlan({len(self.scen)} situations x k={self.k})"


class Rows:
    """Where a run keeps its rows: one slot per (situation, rollout). In memory, the row itself; with
    ``output=``, only its byte offset in the file (8 bytes a rollout, in an ``array``) beside the running counts,
    so memory stays flat in the number of rows; iterating reads the rows back from the file one at a time."""

    def __init__(self, n: int, k: int, file: RowsFile | None) -> None:
        self.k = k
        self.file = file
        self.slots: list[dict[str, Any] | None] = [] if file is not None else [None] * (n * k)
        self.offsets = array("q", [-1]) * (n * k) if file is not None else None  # -1: not finished yet
        self.count = 0
        self.counts = {"agent_error": 0, "infra_error": 0}
        self.seen = bytearray(n)  # 1 for a situation with at least one row
        self.n_situations = 0
        self.faults = [0, 0]  # rollouts whose scheduled fault missed the agent's calls, rollouts with one

    def put(self, si: int, ri: int, row: dict[str, Any] | int, status: str | None = None) -> None:
        """Keep ``row`` (or, in the file, its byte offset) in its slot; the counts follow."""
        slot = si * self.k + ri
        if not self.has(si, ri):
            self.count += 1
            if not self.seen[si]:
                self.seen[si] = 1
                self.n_situations += 1
        if status in self.counts:
            self.counts[status] += 1
        if isinstance(row, int):
            assert self.offsets is not None
            self.offsets[slot] = row
        else:
            self.slots[slot] = row

    def has(self, si: int, ri: int) -> bool:
        slot = si * self.k + ri
        return self.offsets[slot] >= 0 if self.offsets is not None else self.slots[slot] is not None

    def get(self, si: int, ri: int) -> dict[str, Any]:
        slot = si * self.k + ri
        if self.offsets is not None:
            assert self.file is not None
            return next(self.file.read_many([self.offsets[slot]]))
        row = self.slots[slot]
        assert row is not None
        return row

    def in_memory(self) -> None:
        """Read every row written to the file back into memory (the file failed; the run goes on)."""
        if self.file is None or self.offsets is None:
            return
        at = [i for i, offset in enumerate(self.offsets) if offset >= 0]
        self.slots = [None] * len(self.offsets)
        for i, row in zip(at, self.file.read_many([self.offsets[i] for i in at])):
            self.slots[i] = row
        self.file.close()
        self.file, self.offsets = None, None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Every row in plan order (situation, then rollout); with the file, read back one at a time."""
        if self.offsets is not None:
            assert self.file is not None
            yield from self.file.read_many(offset for offset in self.offsets if offset >= 0)
            return
        for row in self.slots:
            if row is not None:
                yield row


def _signature(row: Mapping[str, Any]) -> str:
    """What a rollout did, for telling apart agreeing and disagreeing probes when there is no grader."""
    calls = [(s.get("tool"), json.dumps(s.get("arguments"), sort_keys=True), str(s.get("result"))[:200])
             for s in row.get("steps", []) if "tool" in s]
    return stable_id(row.get("status"), calls, " ".join(str(row.get("final_text", "")).lower().split()))


def _probe_votes(probes: list[dict[str, Any]], grader: Any, failures: list[str]) -> set[Any]:
    """What the dynamic policy compares: the grader's rewards, or what the agent did when there is no grader
    (or the grader raised / broke the judge contract on one of these probes, which is noted, never a crash)."""
    if grader is not None:
        from whileai_core.grade.run import normalize_verdict

        try:
            return {normalize_verdict(grader(dict(r)))[0] for r in probes}
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - any grader failure falls back, and is noted
            failures.append(f"{probes[0].get('task_id')}: {type(exc).__name__}: {exc}")
    return {_signature(r) for r in probes}


class Runner:
    """simulate's run: fixed or dynamic policy over an ``Engine``, rows to memory or to ``output=``."""

    def __init__(self, s: Any, run_agent: Callable[[Any], Any], scen: Sequence[Scenario], writer: str,
                 system_prompt: str | None, progress: bool | None,
                 on_progress: Callable[[dict[str, Any]], None] | None, warn_list: list[str], *,
                 world: World | None, deadline: float | None = None, run_id: str | None = None) -> None:
        self.s, self.scen, self.warn_list = s, scen, warn_list
        self.run_id = run_id or "run-" + uuid.UUID(int=int(run_key(s.seed, scen, s.k, s.policy), 16)).hex[:12]
        self.engine = Engine(run_agent, scen, seed=s.seed, concurrency=s.concurrency, run_id=self.run_id,
                             mode=s.mode, policy=s.policy, system_prompt=system_prompt,
                             world=world, writer=writer,
                             plan=RunPlan(scen, s.k), deadline=deadline)
        self.started = time.perf_counter()
        self.rows = Rows(len(scen), s.k, None)
        self.show_progress = progress if progress is not None else s.budget >= D.PROGRESS_MIN_ROWS
        self.callback = on_progress
        self.bar: Progress | None = None  # a tqdm bar when stderr is a terminal (whileai_core.progress)
        self.stopped = "budget" if s.situations is None and s.asks is None else "situations_done"
        self.resumed = 0
        #: how a batch of jobs is played: on this engine, or (simulate's executor="ray") in shards on a cluster
        self.play: Callable[[Any, Callable[[int, int, dict[str, Any]], None]], None] = self.engine.run

    def use_output(self, path: Path, name: str = "output", rollout_offset: int = 0) -> None:
        """Write rows to ``path`` as they finish and skip the rollouts of this run already in it (``name`` is
        the argument the caller used, for the warnings; ``rollout_offset``: the rows' rollout indices start
        there, as under simulate's ``runs=``)."""
        file = RowsFile(path, run_id=self.run_id)
        k, index = self.s.k, dict[str, int]()
        self.rows = rows = Rows(len(self.scen), k, file)

        def slot_of(task_id: str, rollout_index: int) -> int | None:  # only a file with rows of this run asks
            if not index:
                index.update((tid, si) for si, tid in enumerate(task_ids(self.scen)))
            si, ri = index.get(task_id), rollout_index - rollout_offset
            return si * k + ri if si is not None and 0 <= ri < k else None

        def found(slot: int, offset: int, status: str) -> bool:
            if rows.has(slot // k, slot % k):
                return False  # a duplicate line (never written by us) keeps the first
            rows.put(slot // k, slot % k, offset, status)
            return True

        done = file.open(slot_of, found)
        self.resumed = done
        if file.other_rows:
            self._warn(f"{name}={str(path)!r} already holds {file.other_rows} rows of another run (another seed, "
                       "situations, k or policy); this run appends after them (each row's lineage.run_id tells "
                       "the runs apart); pass a fresh path to keep runs in separate files")
        if done:
            self.engine.lineage["resumed"] = True
            self._warn(f"{name}={str(path)!r} already holds {done} rows of this run: resumed, the finished "
                       "(situation, rollout) pairs are skipped and only the missing rollouts run")
        if file.torn:
            self._warn(f"{name}={str(path)!r} ended in a torn line ({file.torn} bytes, a write cut short); it was "
                       "cut off and that rollout runs again")

    def run(self) -> list[str]:
        """Every rollout the policy asks for; returns the notes it leaves (dynamic sampling's savings)."""
        s, n = self.s, len(self.scen)
        notes: list[str] = []
        try:
            if s.policy == "fixed":
                self.run_batch(((si, ri) for si in range(n) for ri in range(s.k)), n * s.k)
            else:
                notes.append(self.run_dynamic())
        except KeyboardInterrupt:
            self.stopped = "interrupted"
            msg = f"interrupted: kept the {self.rows.count} rows finished so far"
            self.warn_list.append(msg)
            print(f"whileai: {msg}", file=sys.stderr)
        finally:
            if self.rows.file is not None:
                self.rows.file.close()
        if self.engine.cut and self.stopped != "interrupted":
            self.stopped = "time_budget"
            self._warn(f"the time budget ran out: kept the {self.rows.count} rows finished; no new rollout started "
                       "after the deadline (rerun with the same output= and seed to finish the rest)")
        if self.resumed:
            notes.append(f"resumed: {self.resumed} rollouts were already in the output file")
        return notes

    def run_dynamic(self) -> str:
        """Probe every situation, then fill to k only the ones whose probes disagree."""
        s, n = self.s, len(self.scen)
        first = min(s.probe, s.k)
        self.run_batch(((si, ri) for si in range(n) for ri in range(first)), n * s.k)
        disagreed: list[int] = []  # situations whose probes disagree: filled to k
        grader_failures: list[str] = []
        for si in range(n):
            if not all(self.rows.has(si, ri) for ri in range(first)):
                continue  # cut by the deadline: this situation's probes are not all in
            votes = _probe_votes([self.rows.get(si, ri) for ri in range(first)], s.judge, grader_failures)
            if len(votes) > 1:
                disagreed.append(si)
        if grader_failures:
            self._log(f"grader= failed on the probes of {len(grader_failures)} situation(s), so they were "
                      f"compared on what the agent did instead (first: {grader_failures[0][:160]})")

        def fill() -> Iterator[tuple[int, int]]:
            return ((si, ri) for si in disagreed for ri in range(first, s.k))

        self.run_batch(fill(), self.rows.count + sum(1 for si, ri in fill() if not self.rows.has(si, ri)))
        saved = n * s.k - self.rows.count
        filled = len(disagreed) if s.k > first else 0
        return (f"dynamic sampling: {filled} of {n} situations disagreed on {first} "
                f"probes and were filled to k={s.k}; {saved} rollouts saved")

    def run_batch(self, keys: Iterable[tuple[int, int]], total: int) -> None:
        """Play the jobs of ``keys`` not finished yet. On this engine they stream (the engine pulls each job as a
        worker frees up, so no list of the run's jobs is held); a cassette's replays and ``executor="ray"`` take
        them as a list."""
        todo: Iterable[tuple[int, int]] = ((si, ri) for si, ri in keys if not self.rows.has(si, ri))
        head = next(iter(todo), None)
        if head is None or self.engine.cut:
            return
        todo = itertools.chain((head,), todo)

        def on_row(si: int, ri: int, row: dict[str, Any]) -> None:  # on the engine's thread
            self.keep(si, ri, row)
            if self.rows.count % D.PROGRESS_EVERY_ROWS == 0:
                self.progress_line(self.rows.count, total)

        todo = self.replay(todo, on_row)
        if self.play != self.engine.run:
            todo = list(todo)
        if isinstance(todo, list) and not todo:
            return  # every job replayed from the cassette
        self.play(todo, on_row)

    def replay(self, todo: Iterable[tuple[int, int]], on_row: Callable[[int, int, dict[str, Any]], None],
               ) -> Iterable[tuple[int, int]]:
        """Give ``on_row`` the row of every job whose rollout the agent's cassette keeps whole (replay or auto
        mode), rebuilt here on the caller's thread; returns the jobs left to play."""
        agent, engine = self.engine.agent, self.engine
        cassette = getattr(agent, "cache", None)
        if getattr(agent, "rollout_key", None) is None or getattr(cassette, "mode", "record") == "record":
            return todo
        left: list[tuple[int, int]] = []
        situations: dict[int, str] = {}
        for si, ri in todo:
            scenario = self.scen[si]
            situation = situations.get(si)
            if situation is None:
                prompt = engine.system_prompt if engine.system_prompt is not None else scenario.system_prompt
                situation = situations[si] = situation_key(scenario, prompt)
            row = replayed(agent, scenario, rollout_index=ri, seed=engine.seed, system_prompt=engine.system_prompt,
                           world=engine.world, situation=situation, run_id=self.run_id, mode=engine.mode,
                           repeat_policy=engine.policy)
            if row is None:
                left.append((si, ri))
            else:
                on_row(si, ri, engine.stamp(row))
        return left

    def keep(self, si: int, ri: int, row: dict[str, Any]) -> None:
        """Store one finished row: to the file when there is one (a failing disk moves the run to memory)."""
        if row.get("faults_scheduled"):
            self.rows.faults[0] += missed(row)
            self.rows.faults[1] += 1
        file = self.rows.file
        if file is not None:
            offset = file.append(row)
            if offset is not None:
                self.rows.put(si, ri, offset, row.get("status"))
                return
            self._log(f"output {str(file.path)!r} stopped being written after {self.rows.count} rows "
                      f"({file.failed}); the run went on and every row is in the returned data (data.save(path) "
                      "to write them)")
            self.rows.in_memory()
        self.rows.put(si, ri, row, row.get("status"))

    def progress_line(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else float("nan")
        errors = self.rows.counts["agent_error"]
        info = {"rows": done, "cap": total, "elapsed_s": round(elapsed, 2), "rate": round(rate, 2),
                "eta_s": None if math.isnan(eta) else round(eta, 1), "agent_errors": errors, "resumed": self.resumed}
        if self.callback is not None:
            try:
                self.callback(info)
            except Exception as exc:  # noqa: BLE001 - a broken progress hook must not cost the run its rows
                self._log(f"on_progress raised {type(exc).__name__}: {exc}; it is not called again in this run")
                self.callback = None
        if not self.show_progress:
            return
        if self.bar is None:
            self.bar = Progress(total, "whileai simulate (rollouts)")
        if self.bar.mode == "bar":  # a terminal: one bar with rate and ETA, redrawn in place
            self.bar.set(done, total)
        else:  # a log (CI, a file): one plain line every PROGRESS_EVERY_ROWS rows
            print(f"whileai: {done}/{total} rollouts, {rate:.1f}/s, ~{eta:.0f}s left, {errors} agent error(s)",
                  file=sys.stderr, flush=True)

    def close_progress(self) -> None:
        """Clear the terminal bar (plain lines need nothing)."""
        if self.bar is not None:
            self.bar.close()

    def _log(self, msg: str) -> None:
        self.warn_list.append(msg)
        log.warning(msg)

    def _warn(self, msg: str) -> None:
        import warnings

        self.warn_list.append(msg)
        warnings.warn(msg, UserWarning, stacklevel=4)


__all__ = ["Rows", "RunPlan", "Runner"]
