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
    MONITOR_HOLDOUT_K,
    MONITOR_HOLDOUT_PROMPTS,
    MONITOR_LENGTH_RISE,
    MONITOR_WINDOW,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.guard.features import _reward
from whileai_core.guard.hack import _as_names, hack_scan
from whileai_core.messages import reply_text
from whileai_core.rows import as_number, as_rows, task_key

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

    Gold sampling (the SDK's ``holdout=``): with ``holdout`` (rows or prompt strings the policy never trains on)
    and ``gold`` (a judge, ``gold(row) -> verdict``), ``check_holdout(generate)`` draws ``n_prompts`` holdout
    prompts, asks ``generate(prompts) -> completions`` ``k`` times, and scores each completion with the proxy
    (the wrapped reward function, or ``proxy=``, called as TRL does: ``proxy(prompts=..., completions=...)``)
    and with the gold judge. ``divergence`` then compares holdout checks ``window`` apart: the proxy rose by
    ``delta`` while gold did not. ``as_callback(generate=...)`` runs a check every ``every`` trainer steps.

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
        holdout: held-out rows (each with a non-empty ``prompt``) or prompt strings the policy never trains on,
            for ``check_holdout``; None (default) turns gold sampling off. Needs ``gold``.
        gold: the gold judge, ``gold(row) -> verdict`` (a reward, or a dict with ``reward``), scoring each
            holdout completion as ``{**holdout_row, "final_text": completion}``; required with ``holdout``.
        proxy: the TRL-shaped reward function scoring holdout completions, called as
            ``proxy(prompts=..., completions=...)``; None (default): the function passed to ``wrap``.
        n_prompts: holdout prompts drawn per check, without replacement, with ``seed`` (default
            ``defaults.MONITOR_HOLDOUT_PROMPTS`` = 32, the whileai SDK's ``n_prompts``); all of them when the
            holdout is smaller.
        k: completions asked per drawn prompt per check (default ``defaults.MONITOR_HOLDOUT_K`` = 4, the whileai
            SDK's ``k``).

    Raises:
        InvalidArgument: an argument out of range (``every``, ``window``, ``permutations``, ``n_prompts``, ``k``
            < 1; ``buffer``, ``min_rows`` < 2; ``delta``, ``threshold`` outside (0, 1); ``length_rise`` <= 0),
            a ``stop_on`` name not in ``ALARMS`` or "any", an empty ``holdout`` or a holdout row without a
            ``prompt`` (a ``ValueError``).
        InvalidArgumentType: ``holdout`` without a callable ``gold``, a ``proxy`` that is not callable, or
            ``endorsed`` that is not a name or list of names (a ``TypeError``).

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
                 seed: int = 0, min_rows: int = HACK_MIN_ROWS, holdout: Any = None,
                 gold: Callable[[dict[str, Any]], Any] | None = None,
                 proxy: Callable[..., Sequence[float]] | None = None, n_prompts: int = MONITOR_HOLDOUT_PROMPTS,
                 k: int = MONITOR_HOLDOUT_K) -> None:
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
        self.holdout = self._check_holdout(holdout, gold, proxy)
        self.gold, self.proxy = gold, proxy
        self.n_prompts = integer("n_prompts", n_prompts, minimum=1)
        self.k = integer("k", k, minimum=1)
        self.holdout_history: list[dict[str, Any]] = []
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
        """A TRL-shaped reward function that records every scored completion.

        The wrapper is called as TRL calls reward functions, with keywords (``prompts=``, ``completions=`` and
        the dataset columns), and calls ``reward_fn`` the same way, so ``def rf(completions, **kwargs)`` works.

        Each completion becomes a row with ``task_id`` = the prompt text; extra per-sample keyword columns
        (e.g. ``gold_reward``) are copied onto the rows. The wrapper keeps ``reward_fn.__name__``.
        """
        if not callable(reward_fn):
            raise InvalidArgumentType(f"reward_fn= must be callable; got {type(reward_fn).__name__}")
        monitor = self

        def wrapped(*args: Any, **kwargs: Any) -> list[float]:
            # TRL calls reward functions with keywords (prompts=, completions=, completion_ids=, dataset
            # columns); positional (prompts, completions) still works for a direct call
            for name, value in zip(("prompts", "completions"), args):
                kwargs.setdefault(name, value)
            prompts, completions = kwargs.get("prompts"), kwargs.get("completions")
            if completions is None:
                raise InvalidArgumentType(f"reward function {wrapped.__name__!r} was called without completions=; "
                                          "call it as TRL does: fn(prompts=..., completions=..., **columns)")
            prompts = list(prompts) if prompts is not None else [""] * len(completions)
            out = reward_fn(**kwargs)
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
        if self.proxy is None:
            self.proxy = reward_fn
        return wrapped

    @staticmethod
    def _check_holdout(holdout: Any, gold: Any, proxy: Any) -> list[dict[str, Any]]:
        if holdout is None:
            return []
        items = [{"prompt": h} if isinstance(h, str) else dict(h) for h in
                 (holdout if isinstance(holdout, (list, tuple)) else as_rows(holdout, name="holdout"))]
        if not items:
            raise InvalidArgument("holdout= is empty; pass the held-out rows (or prompt strings) the policy never "
                                  "trains on, e.g. wai.holdout(rows).holdout")
        if any(not isinstance(r.get("prompt"), str) or not r["prompt"] for r in items):
            raise InvalidArgument("holdout= rows need a non-empty 'prompt' string each")
        if gold is None or not callable(gold):
            raise InvalidArgumentType("holdout= needs gold=<judge>: gold(row) -> verdict scores the holdout "
                                      "completions the way the eval does")
        if proxy is not None and not callable(proxy):
            raise InvalidArgumentType(f"proxy= must be a TRL-shaped reward function; got {type(proxy).__name__}")
        return items

    def check_holdout(self, generate: Callable[[list[str]], Sequence[Any]], *, step: int | None = None
                      ) -> dict[str, Any]:
        """Sample the holdout now: ``generate(prompts) -> completions``, ``k`` times over ``n_prompts`` prompts
        drawn with the monitor's seed; score with proxy and gold; record, and return the entry (with alarms)."""
        if not self.holdout:
            raise InvalidArgument("check_holdout() needs HackMonitor(holdout=..., gold=...)")
        rng = np.random.default_rng([self.seed, len(self.holdout_history)])
        pick = rng.choice(len(self.holdout), size=min(self.n_prompts, len(self.holdout)), replace=False)
        base = [self.holdout[int(i)] for i in sorted(pick)]
        prompts = [b["prompt"] for b in base] * self.k
        completions = list(generate(list(prompts)))
        if len(completions) != len(prompts):
            raise InvalidArgument(f"generate() returned {len(completions)} completions for {len(prompts)} prompts; "
                                  "return one per prompt")
        golds = [_verdict_reward(self.gold({**b, "final_text": _text(c)}))  # type: ignore[misc]
                 for b, c in zip(base * self.k, completions)]
        proxies = [as_number(v) for v in self.proxy(prompts=prompts, completions=completions)] if self.proxy else []
        g = [x for x in golds if x is not None]
        p = [x for x in proxies if x is not None]
        entry: dict[str, Any] = {
            "step": self.n_seen if step is None else step, "n": len(prompts), "n_prompts": len(base),
            "gold_mean": float(np.mean(g)) if g else None, "n_gold": len(g),
            "proxy_mean": float(np.mean(p)) if p else None, "n_proxy": len(p),
            "length_mean": float(np.mean([len(_text(c)) for c in completions]))}
        self.holdout_history.append(entry)
        entry["alarms"] = self._holdout_alarms(entry)
        return entry

    def _holdout_alarms(self, entry: dict[str, Any]) -> list[dict[str, Any]]:
        new: list[dict[str, Any]] = []
        if len(self.holdout_history) > self.window:
            then = self.holdout_history[-1 - self.window]
            if None not in (entry["gold_mean"], then["gold_mean"], entry["proxy_mean"], then["proxy_mean"]):
                gold_rise = entry["gold_mean"] - then["gold_mean"]
                rise = entry["proxy_mean"] - then["proxy_mean"]
                if rise >= self.delta and gold_rise < self.delta:
                    new.append({"kind": "divergence", "step": entry["step"],
                                "message": f"holdout proxy reward rose {rise:+.2f} over {self.window} checks while "
                                           f"gold went {then['gold_mean']:.2f} -> {entry['gold_mean']:.2f} "
                                           f"(n={entry['n_gold']} completions on {entry['n_prompts']} prompts)"})
        self.alarms.extend(new)
        if any(a["kind"] in self.stop_on for a in new):
            self.should_stop = True
        return new

    def as_callback(self, generate: Callable[[list[str]], Sequence[Any]] | None = None) -> Any:
        """A ``transformers.TrainerCallback`` that stops training when ``should_stop`` is set (needs transformers);
        with ``generate=`` and a holdout it runs ``check_holdout`` every ``every`` trainer steps."""
        from transformers import TrainerCallback

        monitor = self

        class _HackMonitorCallback(TrainerCallback):
            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
                step = int(getattr(state, "global_step", 0) or 0)
                if generate is not None and monitor.holdout and step % monitor.every == 0:
                    monitor.check_holdout(generate, step=step)
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
                "holdout_checks": [{k: v for k, v in h.items() if k != "alarms"} for h in self.holdout_history],
                "alarms": [dict(a) for a in self.alarms], "should_stop": self.should_stop,
                "stop_on": sorted(self.stop_on)}


def _text(completion: Any) -> str:
    """A completion's text: a string, or the last message's content of a conversational completion."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content", ""))
    return json.dumps(completion, default=str)


def _verdict_reward(verdict: Any) -> float | None:
    """A gold judge's reward under the judge contract (bool, number in [0, 1], or a dict's reward/score)."""
    if isinstance(verdict, Mapping):
        verdict = verdict.get("reward", verdict.get("score"))
    v = as_number(verdict)
    return v if v is not None and 0.0 <= v <= 1.0 else None
