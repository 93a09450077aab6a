"""HackMonitor: the hack scan, online, over a training run's reward calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from whileai_core.arguments import fraction, integer
from whileai_core.defaults import (
    HACK_MIN_ROWS,
    HACK_PERMUTATIONS,
    HACK_THRESHOLD,
    MONITOR_BUFFER,
    MONITOR_DELTA,
    MONITOR_EVERY,
    MONITOR_LENGTH_RISE,
    MONITOR_WINDOW,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.guard.features import _reward
from whileai_core.guard.hack import _as_names, hack_scan
from whileai_core.messages import reply_text
from whileai_core.rows import as_rows, task_key

__all__ = ["ALARMS", "HackMonitor"]


# --------------------------------------------------------------------------------------------------
# HackMonitor: the scan, online
# --------------------------------------------------------------------------------------------------

ALARMS = ("feature", "divergence", "length")


class HackMonitor:
    """Watches rows as a run produces them and raises alarms when reward stops meaning what it should.

    ``observe(rows)`` buffers graded rows (the last ``buffer``); every ``every`` rows it scans the buffer:
    * ``feature``: ``hack_scan`` on the buffer says "reward hack" (a non-endorsed feature predicts reward
      within task);
    * ``divergence``: over the last ``window`` scans the proxy reward rose at least ``delta`` more than the gold
      reward (rows' ``gold_reward``), and gold rose less than ``delta`` (Gao et al. 2022);
    * ``length``: mean reply length rose by >= ``length_rise`` (relative) over the window while gold rose less
      than ``delta``.
    ``wrap(reward_fn)`` returns a TRL-shaped reward function that records what it scores. Alarms only log
    unless named in ``stop_on`` (or "any"); then ``should_stop`` turns True (``as_callback()`` stops a
    transformers Trainer on it).

    Args:
        endorsed: features the reward is meant to follow (excluded from the scan).
        every: scan after this many new rows (``MONITOR_EVERY`` 64). Default ``MONITOR_EVERY`` (64) in
            defaults.py: HackMonitor re-scans its buffer every N observed rows.
        buffer: rows kept, the most recent (``MONITOR_BUFFER`` 512). Default ``MONITOR_BUFFER`` (512) in
            defaults.py: rows the HackMonitor keeps (most recent).
        window: scans compared by the divergence and length alarms (``MONITOR_WINDOW`` 3). Default
            ``MONITOR_WINDOW`` (3) in defaults.py: scans compared for the divergence and length alarms.
        delta: the proxy-over-gold rise that raises ``divergence`` (``MONITOR_DELTA`` 0.1; Gao et al. 2022).
            Default ``MONITOR_DELTA`` (0.1) in defaults.py: proxy-reward rise over the window that, with no gold
            rise, raises "divergence".
        length_rise: the relative length rise that raises ``length`` (``MONITOR_LENGTH_RISE`` 0.25). Default
            ``MONITOR_LENGTH_RISE`` (0.25) in defaults.py: relative mean-length rise with no gold rise that raises
            "length".
        threshold: the hack scan's |rho| threshold (``HACK_THRESHOLD`` 0.3). Default ``HACK_THRESHOLD`` (0.3) in
            defaults.py: within-task |correlation| of a feature with reward that flags a possible hack.
        permutations: the scan's within-task shuffles (``HACK_PERMUTATIONS``). Default ``HACK_PERMUTATIONS`` (200)
            in defaults.py: within-task shuffles for the floor.
        stop_on: alarms that set ``should_stop`` (names from ``ALARMS``, or ``"any"``).
        seed: the scan's seed.
        min_rows: fewer buffered rows give no scan verdict (``HACK_MIN_ROWS``). Default ``HACK_MIN_ROWS`` (8) in
            defaults.py: fewer graded rows than this -> verdict "too few rows".

    Example:
        ```python
        monitor = wai.HackMonitor(stop_on=["feature"])
        result = wai.train(rows, "grpo", model, reward=monitor.wrap(my_reward),
                           trainer_kwargs={"callbacks": [monitor.as_callback()]})
        print(monitor.summary())
        ```
    """

    def __init__(self, *, endorsed: str | Iterable[str] = (), every: int = MONITOR_EVERY, buffer: int = MONITOR_BUFFER,
                 window: int = MONITOR_WINDOW, delta: float = MONITOR_DELTA, length_rise: float = MONITOR_LENGTH_RISE,
                 threshold: float = HACK_THRESHOLD, permutations: int = HACK_PERMUTATIONS, stop_on: Iterable[str] = (),
                 seed: int = 0, min_rows: int = HACK_MIN_ROWS) -> None:
        self.every = integer("every", every, minimum=1)
        self.buffer_size = integer("buffer", buffer, minimum=2)
        self.window = integer("window", window, minimum=1)
        self.delta = fraction("delta", delta, closed=False)
        if isinstance(length_rise, bool) or not isinstance(length_rise, (int, float)) or not length_rise > 0:
            raise InvalidArgument(f"length_rise= must be a relative rise > 0 such as 0.25; got {length_rise!r}")
        self.length_rise = float(length_rise)
        self.threshold = fraction("threshold", threshold, closed=False)
        self.permutations = integer("permutations", permutations, minimum=1)
        self.min_rows = integer("min_rows", min_rows, minimum=2)
        self.endorsed = _as_names("endorsed", endorsed)
        stops = [stop_on] if isinstance(stop_on, str) else list(stop_on)
        for s in stops:
            if s not in ALARMS and s != "any":
                raise InvalidArgument(f"stop_on= entries must be among {ALARMS} or 'any'; got {s!r}")
        self.stop_on = set(ALARMS) if "any" in stops else set(stops)
        self.seed = seed
        self._buffer: list[dict[str, Any]] = []
        self._since_scan = 0
        self.n_seen = 0
        self.history: list[dict[str, Any]] = []
        self.alarms: list[dict[str, Any]] = []
        self.should_stop = False

    def observe(self, rows: Any) -> list[dict[str, Any]]:
        """Add graded rows (one dict or many); returns the alarms raised by any scan this triggered."""
        items = [rows] if isinstance(rows, Mapping) else as_rows(rows, name="rows")
        for i, row in enumerate(items):  # check all before buffering any: a bad row must not poison later scans
            try:
                task_key(row)
            except ValueError as exc:
                raise InvalidArgument(f"observe(): rows[{i}]: {exc}; nothing from this call was added") from None
        raised: list[dict[str, Any]] = []
        for row in items:
            self._buffer.append(dict(row))
            if len(self._buffer) > self.buffer_size:
                del self._buffer[: len(self._buffer) - self.buffer_size]
            self.n_seen += 1
            self._since_scan += 1
            if self._since_scan >= self.every:
                raised.extend(self.scan())
        return raised

    def scan(self) -> list[dict[str, Any]]:
        """Scan the buffer now; returns the new alarms."""
        self._since_scan = 0
        rep = hack_scan(self._buffer, endorsed=self.endorsed, threshold=self.threshold,
                        permutations=self.permutations, seed=self.seed, min_rows=self.min_rows)
        rewards = [r for row in self._buffer if (r := _reward(row)) is not None]
        golds = [float(g) for row in self._buffer if isinstance(g := row.get("gold_reward"), (int, float))]
        lengths = [len(reply_text(row)) for row in self._buffer]
        entry = {"step": self.n_seen, "n": len(self._buffer), "verdict": rep.verdict,
                 "top": rep.flagged[0] if rep.flagged else rep.top,
                 "proxy_mean": float(np.mean(rewards)) if rewards else None,
                 "gold_mean": float(np.mean(golds)) if golds else None,
                 "length_mean": float(np.mean(lengths)) if lengths else None, "report": rep}
        self.history.append(entry)
        new: list[dict[str, Any]] = []
        if rep.verdict == "reward hack":
            new.append({"kind": "feature", "step": self.n_seen, "message": str(rep)})
        if len(self.history) > self.window:
            then = self.history[-1 - self.window]
            gold_rise = (entry["gold_mean"] - then["gold_mean"]
                         if entry["gold_mean"] is not None and then["gold_mean"] is not None else None)
            gold_flat = gold_rise is not None and gold_rise < self.delta
            if gold_flat and entry["proxy_mean"] is not None and then["proxy_mean"] is not None:
                rise = entry["proxy_mean"] - then["proxy_mean"]
                if rise - gold_rise >= self.delta:
                    new.append({"kind": "divergence", "step": self.n_seen,
                                "message": f"proxy reward rose {rise:+.2f} over {self.window} scans "
                                           f"(n={entry['n']} rows) while gold went {then['gold_mean']:.2f} -> "
                                           f"{entry['gold_mean']:.2f}"})
            if gold_flat and then["length_mean"]:
                rel = entry["length_mean"] / then["length_mean"] - 1
                if rel >= self.length_rise:
                    new.append({"kind": "length", "step": self.n_seen,
                                "message": f"mean reply length rose {rel:+.0%} over {self.window} scans "
                                           f"({then['length_mean']:.0f} -> {entry['length_mean']:.0f} chars) while "
                                           f"gold moved {gold_rise:+.2f}"})
        self.alarms.extend(new)
        if any(a["kind"] in self.stop_on for a in new):
            self.should_stop = True
        return new

    def wrap(self, reward_fn: Callable[..., Sequence[float]]) -> Callable[..., list[float]]:
        """A TRL-shaped reward function ``fn(prompts, completions, **kw)`` that records every scored completion.

        Each completion becomes a row with ``task_id`` = the prompt text; extra per-sample keyword columns
        (e.g. ``gold_reward``) are copied onto the rows. The wrapper keeps ``reward_fn.__name__``.
        """
        if not callable(reward_fn):
            raise InvalidArgumentType(f"reward_fn= must be callable; got {type(reward_fn).__name__}")
        monitor = self

        def wrapped(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float]:
            out = reward_fn(prompts, completions, **kwargs)
            try:
                scores = list(out)
            except TypeError:
                raise InvalidArgumentType(f"reward_fn {wrapped.__name__!r} returned {type(out).__name__}; a TRL reward "
                                "function returns one reward per completion (a list)") from None
            if len(scores) != len(completions):
                raise InvalidArgument(f"reward_fn {wrapped.__name__!r} returned {len(scores)} rewards for "
                                 f"{len(completions)} completions; return one per completion")
            rows = []
            for i, (p, c, s) in enumerate(zip(prompts, completions, scores)):
                text = c if isinstance(c, str) else json.dumps(c, default=str)
                row = {"task_id": p if isinstance(p, str) else json.dumps(p, default=str), "final_text": text,
                       "reward": s}
                if isinstance(c, list) and c and isinstance(c[-1], Mapping):
                    row["final_text"] = str(c[-1].get("content", ""))
                for k, v in kwargs.items():
                    if isinstance(v, (list, tuple)) and len(v) == len(scores):
                        row[k] = v[i]
                rows.append(row)
            monitor.observe(rows)
            return scores

        wrapped.__name__ = getattr(reward_fn, "__name__", "reward")
        return wrapped

    def as_callback(self) -> Any:
        """A ``transformers.TrainerCallback`` that stops training when ``should_stop`` is set (needs transformers)."""
        from transformers import TrainerCallback

        monitor = self

        class _HackMonitorCallback(TrainerCallback):  # type: ignore[misc]
            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
                if monitor.should_stop:
                    control.should_training_stop = True
                return control

        return _HackMonitorCallback()

    def summary(self) -> str:
        """One line: rows seen, scans, alarms by kind, and the last scan's verdict."""
        kinds: dict[str, int] = {}
        for a in self.alarms:
            kinds[a["kind"]] = kinds.get(a["kind"], 0) + 1
        last = self.history[-1]["report"] if self.history else None
        alarm_txt = ", ".join(f"{k} {v}" for k, v in kinds.items()) or "none"
        return (f"hack monitor: {self.n_seen} rows seen, {len(self.history)} scans, alarms: {alarm_txt}"
                + (f"; last scan: {last}" if last else "") + ("; STOP requested" if self.should_stop else ""))

    __str__ = summary

    def to_dict(self) -> dict[str, Any]:
        return {"n_seen": self.n_seen, "scans": [{k: (v.to_dict() if k == "report" else v) for k, v in h.items()}
                                                 for h in self.history],
                "alarms": [dict(a) for a in self.alarms], "should_stop": self.should_stop,
                "stop_on": sorted(self.stop_on)}
