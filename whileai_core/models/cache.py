"""Record/replay cassettes for model calls: CI runs that cost nothing and never flake.

A ``Cassette`` is a plain JSONL file, one recorded call per line:
``{"key", "request": {"model", "messages", "tools", "params", "trial"}, "response": {...}}``.
A cassette is indexed when opened (each line's key is read, the line parsed on its first hit), so a replay
costs the calls it makes, not the file's size. The key is a hash of the whole request, **including the trial
index**, so k repeats of one situation are k independent recordings, not one answer replayed k times. Headers
(and so keys) are never part of it.

A cassette also keeps **whole rollouts** of simulate's model agent (``simulate/model_agent.py`` says when):
``{"rollout": key, "calls": [the keys of the calls it made, in order], "row": {...}}``, the key a hash of
everything that decides the rollout. A replay that finds a rollout, and every call it names, rebuilds its row
without playing it (``rollouts`` / ``rollout_hits`` count them). A rollout is kept only while every recording
it used is still the one it saw (``RolloutTap``): a call recorded again retires it. ``len(cassette)`` counts
recorded calls only.

Modes: ``"record"`` calls live and (re)writes every call; ``"replay"`` never calls live and fails loudly on a
miss with a diff against the nearest recording; ``"auto"`` replays hits and records misses.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai_core.arguments import integer
from whileai_core.defaults import CASSETTE_DIFF_CANDIDATES, CASSETTE_DIFF_LINES
from whileai_core.errors import CassetteMiss, InvalidArgument, InvalidArgumentType

MODES = ("record", "replay", "auto")
_PREFIX = b'{"key": "'  # how every line this class writes starts (sorted keys: key, request, response)
_ROLLOUT = '{"rollout": "'  # how a whole-rollout line starts: {"rollout": key, "calls": [...], "row": {...}}
_CALLS_AT = len(_ROLLOUT) + 64 + len('", "calls": ')  # where its calls list starts
_ROW = ', "row": '
_HEX = re.compile(rb"[0-9a-f]{64}")
_decode = json.JSONDecoder().raw_decode


def _canonical(request: Mapping[str, Any]) -> str:
    return json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def request_key(request: Mapping[str, Any]) -> str:
    """The recording key: sha256 over the canonical JSON of model, messages, tools, params and trial."""
    return hashlib.sha256(_canonical(request).encode()).hexdigest()


class Cassette:
    """Recorded model calls in one JSONL file (see module docstring). Thread-safe; usable as a context manager.

    ``Cassette("tests/cassettes/agent.jsonl", mode="replay")``; pass it as ``cache=`` or
    ``wai.configure(cache=...)`` (what ``pytest --wai-record/--wai-replay`` does).
    """

    def __init__(self, path: str | os.PathLike[str], mode: str = "auto", *,
                 diff_candidates: int = CASSETTE_DIFF_CANDIDATES, diff_lines: int = CASSETTE_DIFF_LINES) -> None:
        if mode not in MODES:
            raise InvalidArgument(f"mode= must be one of {list(MODES)}; got {mode!r}")
        for name, v in (("diff_candidates", diff_candidates), ("diff_lines", diff_lines)):
            integer(name, v, minimum=1)
        self.path = Path(path)
        self.mode = mode
        self.diff_candidates = diff_candidates
        self.diff_lines = diff_lines
        self._lock = threading.Lock()
        self._memo = threading.local()
        self._entries: dict[str, Any] = {}  # key -> parsed entry, or its raw line until first used
        self._rollouts: dict[str, tuple[str, int]] = {}  # rollout key -> (its line, the put count when kept)
        # a recording's version: the count of call lines read or recorded when it was last written (0: once, in
        # the file); a whole rollout is valid while each call it used keeps the version it saw
        self._put_at: dict[str, int] = {}
        self._puts = 0
        self._fh: Any = None
        self.hits = 0
        self.misses = 0
        self.recorded = 0
        self.rollout_hits = 0  # rollouts replayed whole (their calls count in hits too)
        self.rollouts_recorded = 0
        if mode == "replay" and not self.path.exists():
            raise FileNotFoundError(
                f"no cassette at {self.path} to replay; record one first with mode='record' (pytest --wai-record)")
        if mode != "record" and self.path.exists():
            self._load()

    # ---- file ----------------------------------------------------------------------------------
    def _load(self) -> None:
        """Index the file: a line this class wrote starts with its key, which is all that is read now; the line
        is parsed on its first hit (so a replay costs what it uses, not the whole file). Other lines are parsed
        and checked here."""
        data = self.path.read_bytes()
        entries = self._entries
        for lineno, line in enumerate(data.split(b"\n"), 1):
            if not line.strip():
                continue
            if line.startswith(_PREFIX) and line[73:75] == b'",' and _HEX.fullmatch(line, 9, 73):
                key, entry = line[9:73].decode(), line
            elif line.startswith(b'{"rollout": '):
                key, text = _rollout_line(line, f"{self.path}:{lineno}")
                self._rollouts[key] = (text, self._puts)  # valid while its calls are not written again below
                continue
            else:
                try:
                    entry = json.loads(line)
                    key = entry["key"]
                    entry["request"], entry["response"]
                except (ValueError, KeyError, TypeError):
                    raise InvalidArgument(f"{self.path}:{lineno}: not a cassette entry (want JSON with key, request, "
                                          f"response); re-record the cassette with mode='record'") from None
            self._puts += 1
            if key in entries:  # written again (an appended file that was never closed): a new version
                self._put_at[key] = self._puts
            entries[key] = entry

    def _entry(self, key: str) -> dict[str, Any] | None:
        """The recording under ``key``, parsed on first use (call with the lock held)."""
        found = self._entries.get(key)
        if isinstance(found, bytes):
            try:
                found = json.loads(found)
                found["request"], found["response"]
            except (ValueError, KeyError, TypeError):
                raise InvalidArgument(f"{self.path}: the recording {key[:12]}... is not a cassette entry; re-record "
                                      "the cassette with mode='record'") from None
            self._entries[key] = found
        return found

    def _all(self) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in (self._entry(k) for k in list(self._entries)) if e is not None]

    def _append(self, line: str) -> None:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # record mode starts the file over; auto mode appends to what it loaded
            self._fh = self.path.open("w" if self.mode == "record" else "a", encoding="utf-8")
        self._fh.write(line)
        self._fh.flush()

    def close(self) -> None:
        """Flush and rewrite the file: the calls sorted by (model, trial, key), so re-recordings diff cleanly,
        then the whole rollouts still valid (every call they name present and not recorded again since), sorted
        by (task, rollout index, key)."""
        with self._lock:
            if self._fh is None:
                return
            self._fh.close()
            self._fh = None
            entries = sorted((e for k in list(self._entries) if (e := self._entry(k)) is not None),
                             key=lambda e: (str(e["request"].get("model")), int(e["request"].get("trial", 0)), e["key"]))
            rollouts = sorted((_row_order(key, text), text) for key, (text, kept) in self._rollouts.items()
                              if self._calls_of(text, kept) is not None)
            tmp = self.path.with_name(f".{self.path.name}.tmp")
            tmp.write_text("".join(json.dumps(e, sort_keys=True, ensure_ascii=False, default=str) + "\n"
                                   for e in entries) + "".join(text for _, text in rollouts), encoding="utf-8")
            os.replace(tmp, self.path)

    def __enter__(self) -> Cassette:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        fh = getattr(self, "_fh", None)
        if fh is not None:
            try:
                fh.close()
            except Exception:
                pass

    def __len__(self) -> int:
        """The recorded calls (whole rollouts are counted apart: ``to_dict()["rollouts"]``)."""
        return len(self._entries)

    def __bool__(self) -> bool:  # a cassette is "on" even when empty
        return True

    # ---- the two calls a backend makes ---------------------------------------------------------
    def _key_of(self, request: Mapping[str, Any]) -> tuple[str, str]:
        """(canonical JSON, key), memoised per thread for the get-then-put of one call."""
        memo = getattr(self._memo, "last", None)
        if memo is not None and memo[0] is request:
            return memo[1], memo[2]
        canonical = _canonical(request)
        key = hashlib.sha256(canonical.encode()).hexdigest()
        self._memo.last = (request, canonical, key)
        return canonical, key

    def get(self, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """The recorded response for ``request``, or None when the call should go live.

        In replay mode a miss raises ``CassetteMiss`` with a diff against the nearest recording.
        """
        if self.mode == "record":
            return None
        return self._lookup(request)[1]

    def _lookup(self, request: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None, int]:
        """(key, the recorded response or None, the recording's version): ``get`` (never in record mode)."""
        _, key = self._key_of(request)
        with self._lock:
            entry = self._entry(key)
            if entry is not None:
                self.hits += 1
                return key, entry["response"], self._put_at.get(key, 0)
            self.misses += 1
        if self.mode == "replay":
            raise CassetteMiss(self._miss_message(request))
        return key, None, 0

    def put(self, request: Mapping[str, Any], response: Mapping[str, Any]) -> None:
        """Record a live call (never called in replay mode)."""
        self._put(request, response)

    def _put(self, request: Mapping[str, Any], response: Mapping[str, Any]) -> tuple[str, int] | None:
        """``put``; returns (key, the new recording's version), None in replay mode."""
        if self.mode == "replay":
            return None
        canonical, key = self._key_of(request)
        self._memo.last = None
        response = dict(response)
        # the file line is built from the canonical request text: one serialisation of the request per call
        line = ('{"key": "' + key + '", "request": ' + canonical + ', "response": '
                + json.dumps(response, sort_keys=True, ensure_ascii=False) + "}\n")
        entry = {"key": key, "request": request, "response": response}
        with self._lock:
            self._entries[key] = entry
            self._puts += 1
            self._put_at[key] = self._puts
            self.recorded += 1
            self._append(line)
            return key, self._puts

    # ---- whole rollouts --------------------------------------------------------------------------
    def tap(self, key: str) -> RolloutTap:
        """This cassette as the model calls of one rollout see it, to keep the rollout whole under ``key``
        (``RolloutTap``; what ``ModelAgent`` passes its backends as ``cache=``).

        Args:
            key: the rollout's key (64 hex digits, ``ModelAgent.rollout_key``).

        Returns:
            A ``RolloutTap``.

        Raises:
            InvalidArgument: ``key`` is not 64 hex digits, or the cassette is in replay mode (which keeps nothing).

        Example:
            ```python
            tap = cassette.tap(agent.rollout_key(situation, 0, world))
            ```
        """
        if not (isinstance(key, str) and _HEX.fullmatch(key.encode())):
            raise InvalidArgument(f"a rollout key is 64 hex digits (ModelAgent.rollout_key); got {key!r:.80}")
        if self.mode == "replay":
            raise InvalidArgument("a cassette in replay mode keeps no rollouts; open it with mode='record' or 'auto'")
        return RolloutTap(self, key)

    def _keep(self, key: str, calls: list[str], seen: list[int], row: Mapping[str, Any]) -> bool:
        """Keep a whole rollout (``RolloutTap.keep``) when every call it used still holds the version it saw."""
        text = _rollout_text(key, calls, row)
        with self._lock:
            put_at = self._put_at
            if any(put_at.get(k, 0) != v for k, v in zip(calls, seen)):
                return False  # another rollout recorded one of its calls again meanwhile
            self._rollouts[key] = (text, self._puts)
            self.rollouts_recorded += 1
            self._append(text)
        return True

    def get_rollout(self, key: str) -> dict[str, Any] | None:
        """The row kept whole under ``key`` (a fresh copy each time), or None. A hit counts in ``rollout_hits``
        and its calls in ``hits``.

        Args:
            key: the rollout's key (``ModelAgent.rollout_key``).

        Returns:
            The row, or None: record mode, no such rollout, or a call it made is missing or was recorded again
            since it was kept (then the rollout is played, call by call).

        Raises:
            InvalidArgument: the kept row is not JSON (a damaged file); the message names the file and the fix.
        """
        if self.mode == "record":
            return None
        with self._lock:
            found = self._rollouts.get(key)
            if found is None or (calls := self._calls_of(*found)) is None:
                return None
            self.rollout_hits += 1
            self.hits += len(calls)
        text = found[0]
        try:
            return _row_of(text)
        except ValueError:
            raise InvalidArgument(f"{self.path}: the rollout {key[:12]}... is not JSON (a damaged line); delete the "
                                  "line or re-record the cassette with mode='record'") from None

    def _calls_of(self, text: str, kept: int) -> list[str] | None:
        """The call keys of a rollout line when every one is recorded and none was recorded again after the
        rollout was kept (``kept``: the put count then), else None (call with the lock held)."""
        calls = _decode(text, _CALLS_AT)[0]
        put_at = self._put_at
        for k in calls:
            if k not in self._entries or put_at.get(k, 0) > kept:
                return None
        return calls

    # ---- loud misses ---------------------------------------------------------------------------
    def _miss_message(self, request: Mapping[str, Any]) -> str:
        want = json.loads(_canonical(request))
        entries = self._all()
        same_model = [e for e in entries if e["request"].get("model") == want.get("model")] or entries
        same_trial = [e for e in same_model if e["request"].get("trial") == want.get("trial")] or same_model
        pool = [json.loads(_canonical(e["request"])) for e in same_trial[: self.diff_candidates]]
        head = (f"cassette replay miss in {self.path}: no recording for model={want.get('model')!r}, "
                f"trial={want.get('trial')!r} ({len(entries)} recordings). ")
        fix = ("Re-record with mode='record' (pytest --wai-record) or use mode='auto' to record misses.")
        if not pool:
            return head + "The cassette is empty. " + fix
        want_lines = json.dumps(want, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        best, best_ratio = None, -1.0
        for recorded in pool:
            lines = json.dumps(recorded, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
            ratio = difflib.SequenceMatcher(None, lines, want_lines, autojunk=False).ratio()
            if ratio > best_ratio:
                best, best_ratio = lines, ratio
        diff = list(difflib.unified_diff(best or [], want_lines, "recorded (nearest)", "this request",
                                         lineterm="", n=1))
        shown = diff[: self.diff_lines]
        more = f"\n... {len(diff) - len(shown)} more diff lines" if len(diff) > len(shown) else ""
        return head + "What changed against the nearest recording:\n" + "\n".join(shown) + more + "\n" + fix

    def __repr__(self) -> str:
        return (f"Cassette({str(self.path)!r}, mode={self.mode!r}, {len(self._entries)} recordings, "
                f"{len(self._rollouts)} rollouts, hits={self.hits}, misses={self.misses}, recorded={self.recorded}, "
                f"rollout_hits={self.rollout_hits}, rollouts_recorded={self.rollouts_recorded})")

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "mode": self.mode, "recordings": len(self._entries),
                "rollouts": len(self._rollouts), "hits": self.hits, "misses": self.misses,
                "recorded": self.recorded, "rollout_hits": self.rollout_hits,
                "rollouts_recorded": self.rollouts_recorded}


class RolloutTap:
    """A cassette as the model calls of one rollout see it (``Cassette.tap``): every call goes to the cassette,
    and the recording each used is noted, in order; ``keep(row)`` then keeps the rollout whole, unless one of
    those recordings was written again since (by a concurrent rollout making the same call).

    Args:
        cassette: the cassette.
        key: the rollout's key.
    """

    __slots__ = ("calls", "cassette", "key", "seen")

    def __init__(self, cassette: Cassette, key: str) -> None:
        self.cassette, self.key = cassette, key
        self.calls: list[str] = []
        self.seen: list[int] = []  # the version of each call's recording when the rollout used it

    def __bool__(self) -> bool:  # "a cache is on", as a Cassette is
        return True

    @property
    def mode(self) -> str:
        return self.cassette.mode

    def get(self, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """``Cassette.get``, noting the recording on a hit."""
        if self.cassette.mode == "record":
            return None
        key, found, version = self.cassette._lookup(request)
        if found is not None:
            self.calls.append(key)
            self.seen.append(version)
        return found

    def put(self, request: Mapping[str, Any], response: Mapping[str, Any]) -> None:
        """``Cassette.put``, noting the new recording."""
        done = self.cassette._put(request, response)
        if done is not None:
            self.calls.append(done[0])
            self.seen.append(done[1])

    def keep(self, row: Mapping[str, Any]) -> bool:
        """Keep the rollout whole: ``row`` (JSON-safe, as a replay is to rebuild it; written at once, so the
        caller may change it afterwards) with the keys of the calls noted.

        Args:
            row: the rollout's row.

        Returns:
            Whether it was kept (not when a recording it used was written again since it used it).

        Example:
            ```python
            tap.keep(row)
            ```
        """
        return self.cassette._keep(self.key, list(self.calls), list(self.seen), row)


def _rollout_line(line: bytes, where: str) -> tuple[str, str]:
    """(key, the line as this class writes it) of a whole-rollout line read from a file (``where``: its path
    and line number, for the error)."""
    try:
        text = line.decode("utf-8").strip() + "\n"
        key = text[len(_ROLLOUT):len(_ROLLOUT) + 64]
        if (text.startswith(_ROLLOUT) and _HEX.fullmatch(key.encode())
                and text.startswith('", "calls": [', _CALLS_AT - 12)
                and text.startswith(_ROW, _decode(text, _CALLS_AT)[1])):
            return key, text  # this class's layout: read as it is
        entry = json.loads(text)  # written by hand or by another tool: checked, and kept in this class's layout
        key, calls, row = entry["rollout"], entry["calls"], entry["row"]
        if not (isinstance(key, str) and _HEX.fullmatch(key.encode()) and isinstance(calls, list)
                and all(isinstance(k, str) for k in calls) and isinstance(row, dict)):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise InvalidArgument(f"{where}: not a cassette rollout entry (want JSON with rollout, calls, row); "
                              "re-record the cassette with mode='record'") from None
    return key, _rollout_text(key, calls, row)


def _rollout_text(key: str, calls: list[str], row: Mapping[str, Any]) -> str:
    """A whole-rollout line as this class writes it (``_ROLLOUT``, ``_CALLS_AT`` and ``_ROW`` read it back)."""
    return _ROLLOUT + key + '", "calls": ' + json.dumps(calls) + _ROW + json.dumps(row, ensure_ascii=False) + "}\n"


def _row_of(text: str) -> dict[str, Any]:
    """The row of a whole-rollout line (ValueError when it is not JSON)."""
    return _decode(text, text.index(_ROW, _CALLS_AT) + len(_ROW))[0]


def _row_order(key: str, text: str) -> tuple[str, int, str]:
    """(task id, rollout index, key) of a rollout line: the order ``close`` writes them in."""
    row = _row_of(text)
    return str(row.get("task_id")), int(row.get("rollout_index") or 0), key


__all__ = ["MODES", "Cassette", "CassetteMiss", "RolloutTap", "request_key"]


def resolve_cache(cache: Any) -> Any:
    """The cache a model call uses: ``False`` none, ``None`` the configured one, a path a ``Cassette`` there."""
    if cache is False:
        return None
    if cache is None:
        from whileai_core.models import config

        found = config.get("cache")
        return found or None
    if isinstance(cache, str):
        return Cassette(cache, mode="auto")
    if not (callable(getattr(cache, "get", None)) and callable(getattr(cache, "put", None))):
        raise InvalidArgumentType(f"cache= takes a Cassette, a cassette path, False or None; got {type(cache).__name__}")
    return cache
