"""``Progress``: one progress display for every long loop (grade, train, prove, simulate).

On a terminal it is a tqdm bar with rate and ETA; when stderr is not a terminal, or under CI (the ``CI``
environment variable every major CI service sets), it prints a plain line at most every
``PROGRESS_LINE_EVERY_S`` seconds, and one at the end when it printed any (a job shorter than that prints
nothing), so logs stay readable; under ``quiet=True`` it prints nothing. Jobs smaller than ``PROGRESS_MIN_TOTAL`` steps show nothing either.

Example::

    bar = Progress(len(rows), "grade", quiet=False)
    for row in rows:
        ...
        bar.update()
    bar.close()
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

from whileai_core import defaults as D


def _plain(stream: TextIO, env: Any) -> bool:
    """Plain lines instead of a bar: no terminal on the stream, or running under CI."""
    if str(env.get("CI", "")).strip().lower() not in ("", "0", "false", "no"):
        return True
    isatty = getattr(stream, "isatty", None)
    return not (callable(isatty) and isatty())


class Progress:
    """A bar with rate and ETA on a terminal, periodic plain lines elsewhere, nothing under ``quiet``.

    Args:
        total: the number of steps (``None`` or fewer than ``defaults.PROGRESS_MIN_TOTAL`` = 2 shows nothing).
        label: what is counted, e.g. ``"grade"`` (the prefix of every line).
        quiet: print nothing (default False).
        stream: where to print (default ``sys.stderr``).
        every_s: seconds between plain lines (default ``defaults.PROGRESS_LINE_EVERY_S`` = 10.0; convention).
        env: the environment read for ``CI`` (default ``os.environ``).

    Also a context manager: ``with Progress(n, "train") as bar: ... bar.update()``.

    Example::

        with Progress(len(rows), "grade") as bar:  # a bar on a terminal, a line every 10 s in CI logs
            for row in rows:
                ...
                bar.update()
    """

    def __init__(self, total: int | None, label: str, *, quiet: bool = False, stream: TextIO | None = None,
                 every_s: float = D.PROGRESS_LINE_EVERY_S, env: Any = None) -> None:
        self.total = None if total is None else int(total)
        self.label = str(label)
        self.n = 0
        self.stream = stream if stream is not None else sys.stderr
        self.every_s = float(every_s)
        self.started = time.monotonic()
        self._last_line = self.started
        self._closed = False
        self.lines = 0  # plain lines printed
        self._bar: Any = None
        self.mode = "off"
        if quiet or self.total is None or self.total < D.PROGRESS_MIN_TOTAL:
            return
        self.mode = "lines" if _plain(self.stream, os.environ if env is None else env) else "bar"
        if self.mode == "bar":
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=self.label, file=self.stream, leave=False, dynamic_ncols=True)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more steps done."""
        self.n += int(n)
        if self._bar is not None:
            self._bar.update(n)
        elif self.mode == "lines":
            now = time.monotonic()
            if now - self._last_line >= self.every_s and self.n < (self.total or 0):
                self._last_line = now
                self._line(now)

    def set(self, n: int, total: int | None = None) -> None:
        """Move to ``n`` steps done; a new ``total`` replaces the old one (a plan that grew or shrank, as
        simulate's dynamic sampling)."""
        if total is not None and int(total) != self.total:
            self.total = int(total)
            if self._bar is not None:
                self._bar.total = self.total
                self._bar.refresh()
        self.update(int(n) - self.n)

    def _line(self, now: float) -> None:
        self.lines += 1
        elapsed = max(now - self.started, 1e-9)
        rate = self.n / elapsed
        total = self.total or 0
        eta = (total - self.n) / rate if rate > 0 and self.n < total else 0.0
        self.stream.write(f"{self.label}: {self.n}/{total} ({self.n / total:.0%}) {rate:.2f}/s, "
                          f"{elapsed:.0f}s elapsed, ETA {eta:.0f}s\n")
        self.stream.flush()

    def close(self) -> None:
        """End the display: the bar is cleared, a plain run that printed lines prints its last one."""
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self.mode == "lines" and self.lines:
            self._line(time.monotonic())

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
