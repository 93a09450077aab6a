"""The ``wai``, ``wai_scenarios`` and ``wai_key`` markers: registration, parsing and validation in one place."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pytest

from whileai_core.errors import WaiError

METRICS = ("pass@1", "pass^k", "pass@k")

MARKER_LINES = (
    ("wai(trials=None, min_pass_rate=None, max_drop=None, metric='pass@1', level=None): per-test whileai "
     "thresholds: k trials, a floor the interval must not fall below, the largest significant drop vs the baseline"),
    ("wai_scenarios(source=None, *, tools=None, system_prompt=None, budget=None, seed=0, ids=None, repeats=None): "
     "expand the test into one item per scenario, repeats trials each (covering array of tools, a list of asks, a JSONL path, or a callable)"),
    "wai_key(key): pin the baseline key of this test so it survives renames and moves",
    "whileai: added by the plugin to every test that uses whileai (select them with -m whileai)",
)

_WAI_KWARGS = ("trials", "min_pass_rate", "max_drop", "metric", "level")
SCENARIO_KWARGS = ("source", "tools", "system_prompt", "budget", "seed", "ids", "repeats")


class WaiMarkerError(WaiError, ValueError):
    """A whileai marker (``wai``, ``wai_key``, ``wai_scenarios``) with a bad argument; a ``WaiError`` and a
    ``ValueError``, like every error of the engine's tree (``whileai_core.errors``)."""


@dataclass(frozen=True)
class Thresholds:
    """Per-test settings from ``@pytest.mark.wai(...)``; ``None`` means "use the run-wide setting"."""

    trials: int | None = None
    min_pass_rate: float | None = None
    max_drop: float | None = None
    metric: str = "pass@1"
    level: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _unit(name: str, value: Any, *, where: str, allow_zero: bool = True, allow_one: bool = True) -> float:
    ok_type = isinstance(value, (int, float)) and not isinstance(value, bool)
    low_ok = ok_type and (value >= 0 if allow_zero else value > 0)
    high_ok = ok_type and (value <= 1 if allow_one else value < 1)
    if not (low_ok and high_ok):
        lo = "[0" if allow_zero else "(0"
        hi = "1]" if allow_one else "1)"
        raise WaiMarkerError(f"{where}: {name}= must be a number in {lo}, {hi}; got {value!r}")
    return float(value)


WAI_MARK_NAMES = ("wai", "wai_scenarios", "wai_key")


def closest_wai_marks(item: pytest.Item, seen: dict[tuple[int, ...], tuple[Any, ...]]) -> tuple[Any, ...]:
    """``get_closest_marker`` of ``wai``, ``wai_scenarios`` and ``wai_key`` (None where absent), in one walk over
    the item's markers per distinct (parent, own markers): the items of one parametrized test share both, so a
    test's 10k items walk once (issue 34). ``seen`` is the caller's cache; it must not outlive the items (the key
    is made of ids, which the living parent and markers keep from being reused)."""
    key = (id(item.parent), *map(id, item.own_markers))
    hit = seen.get(key)
    if hit is None:
        closest: dict[str, Any] = {}
        for mark in item.iter_markers():
            if mark.name in WAI_MARK_NAMES:
                closest.setdefault(mark.name, mark)
        hit = seen[key] = tuple(closest.get(name) for name in WAI_MARK_NAMES)
    return hit


def parse_wai_marker(mark: pytest.Mark | None, *, where: str = "wai marker") -> Thresholds:
    """Validate ``wai(...)`` keyword arguments; unknown or positional arguments are an error naming them."""
    if mark is None:
        return Thresholds()
    if mark.args:
        raise WaiMarkerError(f"{where}: takes keyword arguments only ({', '.join(_WAI_KWARGS)}); "
                             f"got positional {mark.args!r}")
    unknown = sorted(set(mark.kwargs) - set(_WAI_KWARGS))
    if unknown:
        raise WaiMarkerError(f"{where}: unknown argument(s) {', '.join(unknown)}; "
                             f"known: {', '.join(_WAI_KWARGS)}")
    kw = dict(mark.kwargs)
    trials = kw.get("trials")
    if trials is not None and (isinstance(trials, bool) or not isinstance(trials, int) or trials < 1):
        raise WaiMarkerError(f"{where}: trials= must be an int >= 1; got {trials!r}")
    min_pass = kw.get("min_pass_rate")
    if min_pass is not None:
        min_pass = _unit("min_pass_rate", min_pass, where=where)
    max_drop = kw.get("max_drop")
    if max_drop is not None:
        max_drop = _unit("max_drop", max_drop, where=where, allow_one=False)
    metric = kw.get("metric", "pass@1")
    if metric not in METRICS:
        raise WaiMarkerError(f"{where}: metric= must be one of {', '.join(METRICS)}; got {metric!r}")
    level = kw.get("level")
    if level is not None:
        level = _unit("level", level, where=where, allow_zero=False, allow_one=False)
    return Thresholds(trials=trials, min_pass_rate=min_pass, max_drop=max_drop, metric=metric, level=level)


def parse_key_marker(mark: pytest.Mark | None, *, where: str = "wai_key marker") -> str | None:
    """The pinned baseline key from ``wai_key("...")``."""
    if mark is None:
        return None
    if len(mark.args) != 1 or mark.kwargs or not isinstance(mark.args[0], str) or not mark.args[0].strip():
        raise WaiMarkerError(f"{where}: takes one non-empty string, e.g. @pytest.mark.wai_key(\"refunds\"); "
                             f"got args={mark.args!r} kwargs={mark.kwargs!r}")
    return mark.args[0].strip()


def parse_scenarios_marker(mark: pytest.Mark, *, where: str = "wai_scenarios marker") -> dict[str, Any]:
    """``wai_scenarios`` arguments as a dict with every key of ``SCENARIO_KWARGS``."""
    if len(mark.args) > 1:
        raise WaiMarkerError(f"{where}: takes at most one positional argument (the source); got {len(mark.args)}")
    unknown = sorted(set(mark.kwargs) - set(SCENARIO_KWARGS))
    if unknown:
        raise WaiMarkerError(f"{where}: unknown argument(s) {', '.join(unknown)}; known: {', '.join(SCENARIO_KWARGS)}")
    spec: dict[str, Any] = {k: None for k in SCENARIO_KWARGS}
    spec["seed"] = 0
    spec.update(mark.kwargs)
    if mark.args:
        if mark.kwargs.get("source") is not None:
            raise WaiMarkerError(f"{where}: source given both positionally and as source=; pass it once")
        spec["source"] = mark.args[0]
    if spec["source"] is None and spec["tools"] is None:
        raise WaiMarkerError(f"{where}: give a source (list of asks, JSONL path, callable) or tools=[...] "
                             "for the covering array")
    budget = spec["budget"]
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise WaiMarkerError(f"{where}: budget= must be an int >= 1 (number of scenarios); got {budget!r}")
    repeats = spec["repeats"]
    if repeats is not None and (isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1):
        raise WaiMarkerError(f"{where}: repeats= must be an int >= 1 (trials per scenario); got {repeats!r}")
    seed = spec["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise WaiMarkerError(f"{where}: seed= must be an int >= 0; got {seed!r}")
    return spec


def scenarios(source: Any = None, *, tools: Any = None, system_prompt: str | None = None, budget: int | None = None,
              seed: int = 0, ids: Any = None, repeats: int | None = None) -> pytest.MarkDecorator:
    """Decorator form of ``@pytest.mark.wai_scenarios(...)``: one test item per scenario, ``repeats`` trials each
    (``wai(trials=)`` wins when both are given).

    >>> @scenarios(tools=[get_order], system_prompt="Help with orders.", budget=8, repeats=4)
    ... def test_orders(wai_eval): ...

    Args:
        source: a list of situations or rows to use instead of written ones.
        tools: the agent's tools.
        system_prompt: the agent's system prompt.
        budget: the most scenarios.
        seed: the situations' seed.
        ids: test ids for the items (default: the scenario ids).
        repeats: trials per scenario.

    Returns:
        A pytest mark decorator.

    Raises:
        WaiMarkerError: neither a source nor tools, or a bad argument (a ``ValueError``); raised when pytest
            collects the test.

    Example:
        ```python
        @wai.scenarios(tools=[get_order], system_prompt="Help with orders.", budget=8, repeats=4)
        def test_orders(wai_eval, wai_scenario):
            wai_eval.run(agent, judge=my_judge)
        ```
    """
    kwargs: dict[str, Any] = {"tools": tools, "system_prompt": system_prompt, "budget": budget, "seed": seed,
                              "ids": ids, "repeats": repeats}
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    mark = pytest.mark.wai_scenarios(source, **kwargs) if source is not None else pytest.mark.wai_scenarios(**kwargs)
    parse_scenarios_marker(mark.mark)
    return mark
