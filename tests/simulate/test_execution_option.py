"""``wai.Execution`` (issue 31 item 3): simulate's execution knobs as one object, accepted as ``execution=`` beside
the keywords. For every field: the object and the keyword make the same call (the same arguments reach simulate's
steps) and the same rows; a conflict names both spellings; an equal value given both ways is fine; a value of
the wrong type is refused naming the field."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest
import shop

import whileai as wai
from whileai_core.errors import InvalidArgument, WaiError
from whileai_core.simulate import run as sim_run


def _on_progress(info: dict[str, Any]) -> None:
    """A progress callback that keeps nothing (the same object both ways)."""


def _cases(tmp_path) -> dict[str, tuple[Any, Any]]:
    """Each ``Execution`` field with two values that differ from each other and from its default."""
    return {"concurrency": (3, 5), "executor": ("threads", "local"), "ray_address": ("ray://127.0.0.1:1", "auto"),
            "output": (str(tmp_path / "rows.jsonl"), str(tmp_path / "other.jsonl")), "progress": (False, True),
            "on_progress": (_on_progress, print), "time_budget": (3600.0, 7200.0)}


WRONG_TYPES = {"concurrency": "8", "executor": 3, "ray_address": 5, "output": 1.5, "progress": 1,
               "on_progress": "print", "time_budget": "10"}


def test_the_cases_cover_every_field_and_the_defaults_are_simulates(tmp_path):
    cases = _cases(tmp_path)
    assert sorted(cases) == sorted(f.name for f in dataclasses.fields(wai.Execution)) == sorted(WRONG_TYPES)
    params = inspect.signature(wai.simulate).parameters
    for f in dataclasses.fields(wai.Execution):
        assert f.name in params and params[f.name].default == f.default, f.name
        first, second = cases[f.name]
        assert first != f.default and second != f.default and first != second


@pytest.fixture
def calls(monkeypatch):
    """What simulate hands its steps: ``_settings``' keywords, the executor, the output path, the deadline's
    inputs, and ``_play``'s progress arguments."""
    seen: list[tuple[str, Any]] = []

    def spy(name, real, pick):
        def wrapped(*args, **kwargs):
            seen.append((name, pick(*args, **kwargs)))
            return real(*args, **kwargs)
        monkeypatch.setattr(sim_run, name, wrapped)

    spy("_settings", sim_run._settings, lambda **kw: kw)
    spy("resolve_executor", sim_run.resolve_executor, lambda *a: a)
    spy("_output_path", sim_run._output_path, lambda *a: a)
    spy("_deadline", sim_run._deadline, lambda *a: a)
    spy("_play", sim_run._play, lambda *a, **kw: (a[5], a[6], kw["name"], kw["path"]))
    return seen


def _simulate(tmp_path, **kwargs):
    """A seeded offline run; the output file (if any) is removed first, so each call starts clean."""
    for name in ("rows.jsonl", "other.jsonl"):
        (tmp_path / name).unlink(missing_ok=True)
    data = wai.simulate(AGENT, tools=shop.TOOLS, repeats=2, budget=8, seed=3, **kwargs)
    return [{k: v for k, v in r.items() if k not in ("latency_s", "privileged")} for r in data.rows]


AGENT = wai.seeded_agent(shop.TOOLS)


@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_each_field_by_object_is_the_keyword(name, tmp_path, calls):
    value = _cases(tmp_path)[name][0]
    by_keyword = _simulate(tmp_path, **{name: value})
    keyword_calls = list(calls)
    calls.clear()
    by_object = _simulate(tmp_path, execution=wai.Execution(**{name: value}))
    assert calls == keyword_calls and by_object == by_keyword
    calls.clear()
    both = _simulate(tmp_path, **{name: value}, execution=wai.Execution(**{name: value}))  # equal: fine
    assert calls == keyword_calls and both == by_keyword


@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_a_conflicting_keyword_names_both_spellings(name, tmp_path):
    given, held = _cases(tmp_path)[name]
    with pytest.raises(InvalidArgument) as err:
        wai.simulate(AGENT, tools=shop.TOOLS, budget=2, **{name: given}, execution=wai.Execution(**{name: held}))
    assert isinstance(err.value, ValueError) and isinstance(err.value, WaiError)
    assert f"simulate: {name}={given!r} conflicts with execution=Execution({name}={held!r})" in str(err.value)


@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_a_field_of_the_wrong_type_is_refused_by_name(name):
    with pytest.raises((TypeError, ValueError), match=f"{name}="):
        wai.Execution(**{name: WRONG_TYPES[name]})


def test_execution_is_frozen_and_only_an_execution_is_taken():
    run = wai.Execution(concurrency=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.concurrency = 8  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"simulate\(execution=...\) takes a wai.Execution, got dict"):
        wai.simulate(AGENT, tools=shop.TOOLS, budget=2, execution={"concurrency": 4})
    with pytest.raises(ValueError, match="executor= must be one of"):
        wai.Execution(executor="cluster")
