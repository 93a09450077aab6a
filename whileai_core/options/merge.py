"""Merging an option object into a function's keywords, and the field checks the option objects share.

``with_option`` is the one rule every ``stats=`` / ``execution=`` / ``optim=`` / ``generation=`` keyword
follows: a keyword left at the function's default takes the object's value, a keyword set to the value the
object holds is fine, and one set to another value is an ``InvalidArgument`` naming both spellings (never a
silent pick).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping
from dataclasses import MISSING, fields
from typing import Any

from whileai_core.errors import InvalidArgument, InvalidArgumentType

__all__ = ["field_defaults", "optional_number", "optional_text", "with_option"]


def field_defaults(kind: type) -> dict[str, Any]:
    """Each field of the option dataclass ``kind`` with its default (the function's keyword default)."""
    return {f.name: f.default for f in fields(kind) if f.default is not MISSING}


def with_option(option: Any, kind: type, given: Mapping[str, Any], defaults: Mapping[str, Any] | None = None, *,
                keyword: str, where: str) -> dict[str, Any]:
    """The settings a function runs with: ``given`` (its keywords, as called) where ``option`` is None; else
    ``option``'s values, refusing a keyword of ``given`` that was set (differs from ``defaults``, by default the
    fields' own defaults) to another value than ``option`` holds. Only names in both ``given`` and ``kind`` count.

    Raises:
        InvalidArgumentType: ``option`` is not a ``kind``. InvalidArgument: a keyword conflicts with the object.
    """
    if option is None:
        return dict(given)
    if not isinstance(option, kind):
        raise InvalidArgumentType(f"{where}({keyword}=...) takes a wai.{kind.__name__}, got {type(option).__name__}")
    defaults = field_defaults(kind) if defaults is None else defaults
    out = dict(given)
    for f in fields(kind):
        if f.name not in given:
            continue
        value, held = given[f.name], getattr(option, f.name)
        if not _same(value, defaults[f.name]) and not _same(value, held):
            raise InvalidArgument(f"{where}: {f.name}={value!r} conflicts with {keyword}={kind.__name__}("
                                  f"{f.name}={held!r}); give {f.name} in one place")
        out[f.name] = held
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same kind (``True`` is not ``1``; ``None`` only matches ``None``)."""
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def optional_number(owner: str, name: str, value: Any) -> float | None:
    """None, or a real number (not a bool) as a float; any other type is refused naming ``owner(name=)``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentType(f"{owner}({name}=...) takes a number or None; got {type(value).__name__}")
    return float(value)


def optional_text(owner: str, name: str, value: Any, *, path: bool = False) -> Any:
    """None or a string (or, with ``path``, an ``os.PathLike``); any other type is refused naming the field."""
    if value is None or isinstance(value, str) or (path and isinstance(value, os.PathLike)):
        return value
    what = "a path (str or os.PathLike)" if path else "a string"
    raise InvalidArgumentType(f"{owner}({name}=...) takes {what} or None; got {type(value).__name__}")
