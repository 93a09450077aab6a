"""``simulate(output=path)``: the rows file, written as rollouts finish, which is also the run's checkpoint.

Each row is one JSON line (privileged fields scrubbed) appended with a single ``write`` on a file opened for
appending, so a killed process leaves whole lines (a torn last line, after a disk fault, is cut off on the next
open). The file is fsynced at most every ``OUTPUT_FSYNC_S`` seconds and when the run ends.

Opening the file reads it once: the rows of the same run (same ``lineage.run_id``: same seed, situations,
k and policy) are *finished* and their (situation, rollout) pairs are skipped; only their byte offsets are
kept (by the runner, 8 bytes a rollout), so memory does not grow with the rows. Rows of other runs stay where they are and are counted.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from whileai_core.defaults import OUTPUT_FSYNC_S
from whileai_core.errors import InvalidArgumentType
from whileai_core.rows import scrub


def check_path(value: Any, name: str = "output") -> Path:
    """The rows file's path, checked before the first rollout (a bad path fails fast, not mid-run)."""
    if not isinstance(value, (str, os.PathLike)):
        raise InvalidArgumentType(f"{name}= must be a file path (str or Path); got {type(value).__name__}")
    path = Path(value)
    if path.is_dir():
        raise IsADirectoryError(f"{name}={str(path)!r} is a directory; pass a file path inside it, e.g. "
                                f"{str(path / 'rows.jsonl')!r}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise OSError(f"{name}={str(path)!r} cannot be written ({exc.strerror or exc}); pass a writable file "
                      "path") from None
    return path


class RowsFile:
    """The rows file of one run (see the module docstring)."""

    def __init__(self, path: Path, *, run_id: str, fsync_s: float = OUTPUT_FSYNC_S) -> None:
        self.path = path
        self.run_id = run_id
        self.fsync_s = fsync_s
        self.other_rows = 0  # rows of other runs found in the file
        self.torn = 0  # bytes of a torn last line cut off when opening
        self.broken = 0  # lines that were not JSON rows (kept, skipped)
        self.failed: str | None = None  # why writing stopped (the run goes on in memory)
        self._fd = -1
        self._end = 0
        self._synced = time.monotonic()

    def open(self, slot_of: Callable[[str, int], int | None], found: Callable[[int, int, str], bool]) -> int:
        """Open for appending, calling ``found(slot, byte offset, status)`` for each row of this run already in
        the file; returns how many ``found`` kept (it returns False for a slot it already holds: of duplicate
        lines, never written by us, the first counts).

        ``slot_of(task_id, rollout_index)`` is the slot the runner keeps that rollout in (None: not in this run's
        plan). Nothing per row is kept here: the file is read line by line.
        """
        done = 0
        with self.path.open("rb") as fh:
            offset = 0
            for line in fh:
                if not line.endswith(b"\n"):
                    self.torn = len(line)
                    break
                done += self._read_one(line, offset, slot_of, found)
                offset += len(line)
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        if self.torn:
            os.ftruncate(self._fd, offset)
        self._end = offset
        return done

    def _read_one(self, line: bytes, offset: int, slot_of: Callable[[str, int], int | None],
                  found: Callable[[int, int, str], bool]) -> bool:
        try:
            row = json.loads(line)
            run_id = row["lineage"]["run_id"]
            task_id, rollout_index = row["task_id"], int(row["rollout_index"])
        except (ValueError, KeyError, TypeError):
            if line.strip():
                self.broken += 1
            return False
        if run_id != self.run_id:
            self.other_rows += 1
            return False
        slot = slot_of(task_id, rollout_index)
        return slot is not None and found(slot, offset, str(row.get("status")))

    def append(self, row: Mapping[str, Any]) -> int | None:
        """Write ``row``; returns its byte offset, or None once writing failed (the file was removed or the
        disk refused): then ``failed`` says why, and the rows written so far stay readable until ``close``."""
        if self._fd < 0 or self.failed is not None:
            return None
        data = (json.dumps(scrub(row), ensure_ascii=False) + "\n").encode()
        offset = self._end
        try:
            if os.fstat(self._fd).st_nlink == 0:
                raise OSError("the file was removed while the run wrote it")
            written = os.write(self._fd, data)
            while written < len(data):  # a short write (disk nearly full): finish the line or fail
                written += os.write(self._fd, data[written:])
            now = time.monotonic()
            if now - self._synced >= self.fsync_s:
                os.fsync(self._fd)
                self._synced = now
        except OSError as exc:
            self.failed = str(exc)
            return None
        self._end += len(data)
        return offset

    def read_many(self, offsets: Iterable[int]) -> Iterator[dict[str, Any]]:
        """The rows at ``offsets``, in that order, one at a time as they are read (from the open file while it is
        open, even if removed)."""
        if self._fd >= 0:
            for offset in offsets:
                yield json.loads(self._line_at(offset))
            return
        with self.path.open("rb") as fh:
            for offset in offsets:
                fh.seek(offset)
                yield json.loads(fh.readline())

    def _line_at(self, offset: int) -> bytes:
        size, chunk = 1 << 16, b""
        while True:
            chunk = os.pread(self._fd, size, offset)
            end = chunk.find(b"\n")
            if end >= 0 or len(chunk) < size:
                return chunk[: end + 1] if end >= 0 else chunk
            size *= 4

    def close(self) -> None:
        """fsync and close (idempotent)."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            try:
                os.fsync(fd)
            except OSError:
                pass
            os.close(fd)


__all__ = ["RowsFile", "check_path"]
