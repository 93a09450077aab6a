"""A judge as an RL environment's rubric: stored as an importable ``"module:attr"`` reference, resolved in a fresh
process, and called on the whileai row rebuilt from each completion. Shared by both environment runtimes
(``train.environment`` for verifiers, ``train.openenv``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.rows import Row


def judge_reference(judge: Any) -> str:
    """The ``"module:attr"`` reference of an importable judge; a lambda or a local function is an error."""
    if isinstance(judge, str):
        module, sep, attr = judge.partition(":")
        if not sep or not module or not attr:
            raise InvalidArgument(f"judge= as a string must be 'module:attr'; got {judge!r}")
        try:
            _resolve(judge)
        except (ImportError, AttributeError) as exc:
            raise InvalidArgument(f"judge={judge!r} does not import ({type(exc).__name__}: {exc}); "
                             "check the module is on sys.path and the attribute name") from None
        return judge
    module_name: str | None = getattr(judge, "__module__", None)
    qualname = getattr(judge, "__qualname__", None) or getattr(type(judge), "__qualname__", None)
    if module_name in (None, "__main__") or not qualname or "<" in qualname:
        raise InvalidArgument(
            f"judge= must be importable in a fresh process (a module-level function, or 'module:attr'); "
            f"got {getattr(judge, '__name__', type(judge).__name__)!r} from module {module_name!r}. Move it to a module "
            "and pass it, or its 'module:attr' string"
        )
    ref = f"{module_name}:{qualname}"
    try:
        found = _resolve(ref)
    except (ImportError, AttributeError):
        found = None
    if found is not judge:
        raise InvalidArgument(f"judge= resolves as {ref!r}, but importing that does not give back the same object; "
                         "pass a module-level function or the 'module:attr' string of an instance")
    return ref


def _resolve(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise InvalidArgumentType(f"judge {ref!r} is {type(obj).__name__}, not callable")
    return obj


def example_row(example: Mapping[str, Any], completion: Any) -> Row:
    """The whileai row a judge sees for one completion of an environment example."""
    from whileai_core.train.trl_formats import completion_row

    info = dict(example.get("info") or {})
    prompt_text = info.pop("prompt_text", None)
    base: Row = dict(info)
    if prompt_text is None:
        users = [m.get("content") for m in example.get("prompt") or [] if m.get("role") == "user"]
        prompt_text = users[-1] if users else ""
    base["prompt"] = prompt_text
    if example.get("answer") and "privileged" not in base:
        base["privileged"] = {"reference": example["answer"]}
    return completion_row(base, example.get("prompt") or [], completion)


def make_rubric(judge: Any) -> Callable[..., float]:
    """A rubric function ``reward(prompt, completion, answer, info, **kw) -> float`` grading with ``judge``
    (a callable or a ``"module:attr"`` reference). A judge error or a verdict outside the contract scores 0."""
    from whileai_core.train.trl_formats import verdict_reward

    fn = _resolve(judge) if isinstance(judge, str) else judge
    if not callable(fn):
        raise InvalidArgumentType(f"judge= must be callable; got {type(fn).__name__}")

    def reward(prompt: Any = None, completion: Any = None, answer: str = "", info: Mapping[str, Any] | None = None,
               **_: Any) -> float:
        row = example_row({"prompt": prompt, "answer": answer, "info": info or {}}, completion or "")
        try:
            value = verdict_reward(fn(row))
        except Exception:  # noqa: BLE001 - a failing judge scores 0 in an RL rubric, never crashes the rollout
            return 0.0
        return 0.0 if value is None else value

    reward.__name__ = "judge_reward"
    return reward
