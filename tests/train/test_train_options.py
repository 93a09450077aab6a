"""``wai.Optim`` and ``wai.Generation`` (issue 31 item 3): train's optimisation and GRPO generation knobs as
objects, accepted as ``optim=`` / ``generation=`` beside the keywords. For every field the object and the keyword
hand TRL the same settings (what ``train`` passes to ``_trainer``, the step that builds the TRL config, which is
stopped there: no model is trained); a conflict names both spellings; a wrong type is refused naming the field.
The field checks need no torch; the hand-off needs the train extra and the tiny offline model."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

import whileai as wai
from whileai_core.errors import InvalidArgument, WaiError
from whileai_core.train import train as train_module

pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

#: each field of each object with two values that differ from each other and from the default
CASES: dict[type, dict[str, tuple[Any, Any]]] = {
    wai.Optim: {"learning_rate": (1e-4, 3e-4), "batch_size": (4, 2), "max_steps": (3, 5), "epochs": (2.0, 3.0),
                "logging_steps": (2, 3), "seed": (7, 9)},
    wai.Generation: {"num_generations": (4, 2), "max_completion_length": (16, 32), "temperature": (0.7, 0.9)},
}
KEYWORD = {wai.Optim: "optim", wai.Generation: "generation"}
WRONG_TYPES = {"learning_rate": "1e-4", "batch_size": 2.5, "max_steps": "3", "epochs": "2", "logging_steps": None,
               "seed": True, "num_generations": 4.0, "max_completion_length": "16", "temperature": "hot"}
FIELDS = [(kind, name) for kind, names in CASES.items() for name in names]


def test_the_cases_cover_every_field_and_the_defaults_are_trains():
    params = inspect.signature(wai.train).parameters
    for kind, names in CASES.items():
        assert sorted(names) == sorted(f.name for f in dataclasses.fields(kind))
        assert params[KEYWORD[kind]].default is None
        for f in dataclasses.fields(kind):
            assert params[f.name].default == f.default, f.name
            first, second = names[f.name]
            assert first != f.default and second != f.default and first != second
    assert sorted(WRONG_TYPES) == sorted(name for _, name in FIELDS)


@pytest.mark.parametrize("kind,name", FIELDS, ids=[n for _, n in FIELDS])
def test_a_field_of_the_wrong_type_is_refused_by_name(kind, name):
    with pytest.raises((TypeError, ValueError), match=f"{name}="):
        kind(**{name: WRONG_TYPES[name]})


def test_the_objects_are_frozen_and_hold_the_defaults_of_defaults_py():
    from whileai_core import defaults as D

    assert wai.Optim() == wai.Optim(None, D.TRAIN_BATCH_SIZE, None, D.TRAIN_EPOCHS, D.TRAIN_LOGGING_STEPS,
                                    D.TRAIN_SEED)
    assert wai.Generation() == wai.Generation(D.GRPO_NUM_GENERATIONS, D.GRPO_MAX_COMPLETION_LENGTH,
                                              D.GRPO_TEMPERATURE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        wai.Optim().seed = 1  # type: ignore[misc]


class _Stop(Exception):
    """Raised in place of building the trainer: the hand-off is what is compared."""


@pytest.fixture
def handed(monkeypatch):
    """What ``train`` hands ``_trainer``: the TRL config's common settings and the method's own."""
    seen: list[dict[str, Any]] = []

    def stop(method, common, dataset, lm, tok, **kwargs):
        seen.append({"method": method, **common, **{k: v for k, v in kwargs.items() if k not in ("data",)}})
        raise _Stop

    monkeypatch.setattr(train_module, "_trainer", stop)
    return seen


ROWS = [{"task_id": f"q{i}", "prompt": f"question {i}: say yes", "privileged": {"reference": "yes"},
         "messages": [{"role": "user", "content": f"question {i}: say yes"}, {"role": "assistant", "content": "yes"}],
         "reward": 1} for i in range(4)]


def _judge(row: dict) -> dict:
    return {"reward": float("yes" in row["final_text"]), "reason": "says yes"}


def _handed(handed, model, tmp_path, **kwargs) -> dict[str, Any]:
    handed.clear()
    with pytest.raises(_Stop):
        wai.train(ROWS, "grpo", model, judge=_judge, output_dir=tmp_path, use_cpu=True, **kwargs)
    return handed[0]


@pytest.mark.train
@pytest.mark.parametrize("kind,name", FIELDS, ids=[n for _, n in FIELDS])
def test_each_field_by_object_hands_trl_what_the_keyword_does(kind, name, tiny_model, tmp_path, handed):
    value, other = CASES[kind][name]
    by_keyword = _handed(handed, tiny_model, tmp_path, **{name: value})
    assert by_keyword != _handed(handed, tiny_model, tmp_path)  # the field reaches TRL at all
    assert _handed(handed, tiny_model, tmp_path, **{KEYWORD[kind]: kind(**{name: value})}) == by_keyword
    assert _handed(handed, tiny_model, tmp_path, **{name: value, KEYWORD[kind]: kind(**{name: value})}) == by_keyword
    handed.clear()
    with pytest.raises(InvalidArgument) as err:
        wai.train(ROWS, "grpo", tiny_model, judge=_judge, output_dir=tmp_path, **{name: other},
                  **{KEYWORD[kind]: kind(**{name: value})})
    assert isinstance(err.value, ValueError) and isinstance(err.value, WaiError)
    assert f"train: {name}={other!r} conflicts with {KEYWORD[kind]}={kind.__name__}({name}={value!r})" in str(err.value)
    assert not handed  # refused before any model is loaded


def test_train_refuses_an_option_of_the_wrong_class():
    with pytest.raises(TypeError, match=r"train\(optim=...\) takes a wai.Optim, got Generation"):
        wai.train(ROWS, "grpo", "unused", judge=_judge, optim=wai.Generation())
