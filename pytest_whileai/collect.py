"""Scenario expansion: ``@pytest.mark.wai_scenarios(...)`` becomes one test item per scenario.

Sources, in the order they are tried: the ``pytest_whileai_load_scenarios`` hook; ``tools=`` (the covering
array of ``whileai_core.simulate.situations``); a JSONL path (one row per line: ``prompt``, optional ``task_id``); a list
of asks (str or ``Scenario``); a callable returning any of these. Test ids are readable and stable: they are
built from the scenario's content (its cell and task id), never from its position, so reordering a source
keeps every baseline key.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_whileai.keys import EVAL_FIXTURES, WAI_SESSION
from pytest_whileai.markers import WaiMarkerError, parse_scenarios_marker
from whileai_core import defaults as D
from whileai_core.rows import stable_id  # (loaded with the plugin: session -> gate.store -> rows)

_SLUG = re.compile(r"[^a-z0-9_]+")
ROUND_TOKEN = "wai-round"  # the id part of a --wai-sequential round: test[<scenario>-wai-round2]
_ROUND = re.compile(r"(?:(?<=\[)|-)" + ROUND_TOKEN + r"(\d+)(?=[-\]])")


def slug(text: str, limit: int = D.SCENARIO_ID_CHARS) -> str:
    s = _SLUG.sub("-", str(text).lower()).strip("-")
    return (s[:limit].rstrip("-")) or "ask"


def _scenario_from(value: Any, where: str) -> Any:
    return _to_scenario(value, where, None, _scenario_type())


def _to_scenario(value: Any, where: str, index: int | None, Scenario: Any, keep_asks: bool = False) -> Any:
    """``_scenario_from`` with its imports done once per source; an error names ``where`` and item ``index``.
    ``keep_asks``: a plain ``str`` ask stays a ``str`` (checked, not wrapped; see ``ask_scenario``)."""
    if isinstance(value, Scenario):
        return value
    if isinstance(value, str):
        if not value.strip():
            raise WaiMarkerError(f"{_where(where, index)}: an empty ask; every scenario needs a user message")
        if keep_asks and type(value) is str:
            return value
        return Scenario(value, task_id=ask_task_id(value))
    if isinstance(value, Mapping):
        prompt = value.get("prompt") or value.get("ask") or value.get("question")
        if not isinstance(prompt, str) or not prompt.strip():
            raise WaiMarkerError(f"{_where(where, index)}: a scenario dict needs a 'prompt' string; got keys {sorted(value)}")
        tid = value.get("task_id") or value.get("id") or value.get("scenario_id") or ask_task_id(prompt)
        extra = {k: value[k] for k in ("scenario", "faults", "world_state", "stance", "privileged", "system_prompt")
                 if k in value}
        return Scenario(prompt, task_id=str(tid), **extra)
    raise WaiMarkerError(f"{_where(where, index)}: a scenario is a str, a Scenario or a dict with 'prompt'; "
                         f"got {type(value).__name__}")


def ask_task_id(ask: str) -> str:
    """The task id of a plain ``str`` ask: ``ask-`` and a hash of its text (the same on every machine)."""
    return "ask-" + str(stable_id(ask))


@functools.cache
def _scenario_type() -> Any:
    """``whileai_core.simulate.situations.Scenario``, imported at its first use and kept: an import statement in
    a function that runs per item costs microseconds even for a loaded module (issue 34)."""
    from whileai_core.simulate.situations import Scenario

    return Scenario


def ask_scenario(ask: str, task_ids: Mapping[str, str]) -> Any:
    """The ``Scenario`` of a plain ``str`` ask, as ``load_scenarios`` makes it without ``keep_asks``; ``task_ids``
    holds the ids collection computed (a miss computes it). A ``wai_scenarios`` test that reads its scenario
    through ``wai_eval`` keeps its asks as ``str`` in its parameters and builds the scenario when the test runs:
    a ``Scenario`` (a ``str`` with attributes) kept per item for the whole session is three objects more for
    the garbage collector to walk at every full collection (issue 34)."""
    return _scenario_type().ask(ask, task_ids.get(ask) or ask_task_id(ask))


def _where(where: str, index: int | None) -> str:
    return where if index is None else f"{where} item {index}"


def _read_jsonl(path: Path, where: str) -> list[Any]:
    from whileai_core.rows import read_jsonl

    try:
        return read_jsonl(path)
    except (FileNotFoundError, ValueError) as exc:
        raise WaiMarkerError(f"{where}: {exc}") from None


def load_scenarios(config: pytest.Config, spec: dict[str, Any], *, base_dir: Path, where: str,
                   keep_asks: bool = False) -> list[Any]:
    """The list of ``Scenario`` objects a ``wai_scenarios`` spec names; with ``keep_asks`` a plain ``str`` ask
    stays a ``str`` (``ask_scenario`` makes its ``Scenario``)."""
    source = spec["source"]
    hooked = config.hook.pytest_whileai_load_scenarios(config=config, source=source, spec=spec)
    if hooked is not None:
        values = list(hooked)
    elif source is None:
        from whileai_core.simulate.situations import situations

        try:
            values = situations(spec["tools"], spec["system_prompt"], n=spec["budget"], seed=spec["seed"])
        except (TypeError, ValueError) as exc:
            raise WaiMarkerError(f"{where}: situations(tools=...) failed: {exc}") from None
        if spec["system_prompt"] is not None:
            values = [s if s.system_prompt else s.replace(system_prompt=spec["system_prompt"]) for s in values]
    else:
        if callable(source):
            source = source()
        path = Path(str(source)) if isinstance(source, (str, os.PathLike)) else None
        if path is not None and not path.is_absolute():
            path = base_dir / path
        if path is not None and (isinstance(source, os.PathLike) or str(source).endswith(".jsonl")
                                 or path.is_file()):
            values = _read_jsonl(path, where)
        elif isinstance(source, str):
            values = [source]
        else:
            try:
                values = list(source)
            except TypeError:
                raise WaiMarkerError(f"{where}: source= must be a list of asks, a JSONL path or a callable; "
                                     f"got {type(source).__name__}") from None
        if spec["budget"] is not None:
            values = values[: spec["budget"]]
    Scenario = _scenario_type()
    scenarios = [_to_scenario(v, where, i, Scenario, keep_asks) for i, v in enumerate(values)]
    if not scenarios:
        raise WaiMarkerError(f"{where}: the source gave no scenarios")
    return scenarios


def scenario_ids(scenarios: list[Any], ids: Any = None, *, where: str = "wai_scenarios",
                 nodeid: str = "", task_ids: dict[str, str] | None = None) -> list[str]:
    """Readable, stable ids: ``<cell or ask slug>-<task id>``. Two scenarios with one id (the same ask twice, a
    repeated ``ids=`` entry, two rows sharing a task id) are a ``WaiMarkerError`` naming both items: the id is
    the baseline key, and numbering the repeat would key it by its position and count the scenario twice.
    A plain ``str`` ask (``keep_asks``) gets its ``ask_task_id``, stored in ``task_ids`` when given."""
    if ids is not None:
        if callable(ids):
            out = [str(ids(s)) for s in scenarios]
        else:
            out = [str(x) for x in ids]
            if len(out) != len(scenarios):
                raise WaiMarkerError(f"wai_scenarios ids= has {len(out)} ids for {len(scenarios)} scenarios")
    else:
        out = []
        for s in scenarios:
            cell = getattr(s, "scenario", None) or {}
            if cell:
                readable = "-".join(str(cell[a]) for a in ("tool", "world_state", "stance", "tool_condition")
                                    if a in cell)
                readable = slug(readable, limit=D.SCENARIO_ID_CHARS * 2)
            else:
                readable = slug(str(s))
            if type(s) is str:
                tid = ask_task_id(s)
                if task_ids is not None:
                    task_ids[s] = tid
            else:
                tid = s.task_id
            out.append(f"{readable}-{tid}")
    first: dict[str, int] = {}
    for i, name in enumerate(out):
        if name in first:
            raise WaiMarkerError(
                f"{where}: items {first[name]} and {i} both give the scenario id {name!r}, so both would run as "
                f"{nodeid}[{name}] and share one baseline key; drop the repeat, or give each a distinct task_id "
                "(or ids= entry)")
        first[name] = i
    return out


def generate(metafunc: pytest.Metafunc) -> None:
    """``pytest_generate_tests`` body: parametrize ``wai_scenario`` from the marker."""
    mark = metafunc.definition.get_closest_marker("wai_scenarios")
    if mark is None:
        return
    where = f"{metafunc.definition.nodeid}: wai_scenarios"
    spec = parse_scenarios_marker(mark, where=where)
    base_dir = Path(str(metafunc.definition.path)).parent
    # the test reads the scenario through wai_eval.scenario: parametrize the wai_eval fixture itself (one fixture
    # per item instead of two; cheaper on large suites), its plain str asks kept as str (the fixture makes the
    # Scenario; an ids= callable is handed Scenarios, as documented). The deprecated ``wai`` requests wai_eval.
    handle = "wai_scenario" not in metafunc.fixturenames and any(n in metafunc.fixturenames for n in EVAL_FIXTURES)
    task_ids = metafunc.config.stash[WAI_SESSION].ask_ids if WAI_SESSION in metafunc.config.stash else None
    keep = handle and task_ids is not None and not callable(spec["ids"])
    scenarios = load_scenarios(metafunc.config, spec, base_dir=base_dir, where=where, keep_asks=keep)
    ids = scenario_ids(scenarios, spec["ids"], where=where, nodeid=metafunc.definition.nodeid,
                       task_ids=task_ids if keep else None)
    if handle:
        metafunc.parametrize("wai_eval", scenarios, ids=ids, indirect=True)
        return
    if "wai_scenario" not in metafunc.fixturenames:
        metafunc.fixturenames.append("wai_scenario")
    metafunc.parametrize("wai_scenario", scenarios, ids=ids)


def add_rounds(metafunc: pytest.Metafunc, settings: Any) -> None:
    """Under ``--wai-sequential``: parametrize a whileai test by round (``wai_round``, ids ``wai-round1``..), so
    each round of each scenario is an item; ``plugin`` orders them round-major and skips rounds the gate no
    longer needs. The rounds cover the test's k (``wai(trials=)``, the scenarios' ``repeats``, ``--wai-trials``)."""
    from pytest_whileai.markers import parse_wai_marker
    from whileai_core.measure.sequential import SequentialPlan

    if not any(n in metafunc.fixturenames for n in EVAL_FIXTURES) or settings.trial_index is not None:
        return
    where = metafunc.definition.nodeid
    trials = parse_wai_marker(metafunc.definition.get_closest_marker("wai"), where=where).trials
    scen = metafunc.definition.get_closest_marker("wai_scenarios")
    if trials is None and scen is not None:
        trials = parse_scenarios_marker(scen, where=where)["repeats"]
    plan = SequentialPlan(settings.round_trials, trials or settings.trials)
    if "wai_round" not in metafunc.fixturenames:
        metafunc.fixturenames.append("wai_round")
    metafunc.parametrize("wai_round", range(plan.rounds), ids=[f"{ROUND_TOKEN}{r + 1}" for r in range(plan.rounds)])


def round_of(nodeid: str) -> int | None:
    """The 0-based round of a ``--wai-sequential`` item from its node id (None for an item without rounds)."""
    if ROUND_TOKEN not in nodeid:  # the common case, without the regex
        return None
    match = _ROUND.search(nodeid)
    return None if match is None else int(match.group(1)) - 1


def strip_round(nodeid: str) -> str:
    """The node id without its round part: every round of one scenario shares the scenario's key."""
    out = _ROUND.sub("", nodeid, count=1) if ROUND_TOKEN in nodeid else nodeid
    return out.replace("[-", "[").replace("[]", "")


def baseline_key(item: pytest.Item, pinned: str | None) -> str:
    """The key a test's results are stored and paired under: the node id, with ``wai_key`` replacing the
    path and function part when pinned (the parametrization suffix, content-derived, stays); a round's id part
    is left out, so the rounds of one scenario share its key."""
    nodeid = strip_round(item.nodeid)
    if pinned is None:
        return nodeid
    bracket = nodeid.find("[")
    return pinned + (nodeid[bracket:] if bracket >= 0 else "")


def refuse_shared_keys(items: list[pytest.Item], key: Any, error: Any) -> int:
    """Tests whose baseline keys collide (two ``wai_key`` pins alike, or a pin equal to another test's key) each
    get a setup error naming every node id that shares the key, instead of one result silently replacing the
    other in the run document. ``key`` and ``error`` are the stash keys of the key and of the error text;
    returns how many tests were refused."""
    first: dict[tuple[str, int | None], pytest.Item] = {}  # each key's first test; a list only for a shared key
    groups: dict[tuple[str, int | None], list[pytest.Item]] = {}
    for item in items:
        if key not in item.stash or "wai_eval" not in getattr(item, "fixturenames", ()):
            continue  # only wai_eval (or its old name) records
        shared = (item.stash[key], round_of(item.nodeid))  # rounds of one scenario share its key
        seen = first.setdefault(shared, item)
        if seen is not item:
            groups.setdefault(shared, [seen]).append(item)
    refused = 0
    for (k, _), group in groups.items():  # every group holds two tests or more
        names = ", ".join(i.nodeid for i in group)
        for item in group:
            if item.stash.get(error, None) is None:
                item.stash[error] = (f"whileai: {len(group)} tests share the baseline key {k!r} ({names}); their "
                                     "results would replace each other in the run document and the baseline, so "
                                     "none of them runs: give each a distinct @pytest.mark.wai_key")
                refused += 1
    return refused
