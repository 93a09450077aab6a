"""Argument validators: one message shape, one argument order ``(name, value, ...)``, bounds said at each call.

Every check raises ``InvalidArgument`` (a ``ValueError``) naming the keyword, what it takes and what it got.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, cast

from whileai_core.errors import InvalidArgument, InvalidArgumentType

__all__ = ["choice", "fraction", "integer", "positive"]


def integer(name: str, value: Any, *, minimum: int) -> int:
    """An int ``>= minimum`` (numpy ints count; ``True``/``False`` do not)."""
    if type(value) is int and value >= minimum:  # the common case, checked once per model call
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InvalidArgument(f"{name}= must be an int >= {minimum}; got {value!r}")
    return int(value)


def fraction(name: str, value: Any, *, closed: bool) -> float:
    """A finite number in ``[0, 1]`` (``closed=True``) or ``(0, 1)`` (``closed=False``)."""
    bounds = "[0, 1]" if closed else "(0, 1)"
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InvalidArgument(f"{name}= must be a number in {bounds}; got {value!r}")
    real = cast(float, value)  # a numbers.Real compares like a float (typeshed's Real lacks __ge__ and __gt__)
    if not (0 <= real <= 1 if closed else 0 < real < 1):
        raise InvalidArgument(f"{name}= must be a number in {bounds}; got {value!r}")
    return float(value)


def positive(name: str, value: Any) -> float:
    """A finite number ``> 0``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise InvalidArgument(f"{name}= must be a positive number; got {value!r}")
    return float(value)


def choice(name: str, value: Any, allowed: Sequence[Any]) -> Any:
    """One of ``allowed``."""
    if value not in allowed:
        raise InvalidArgument(f"{name}= must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def refuse_sdk_keywords(call: str, passed: Mapping[str, Any], differences: Mapping[str, str]) -> None:
    """Raise for a keyword the whileai SDK documents and this project deliberately does not take, naming why
    (each is a row of docs/sdk.md's table); any other unknown keyword is a plain ``TypeError`` naming it."""
    for name in passed:
        if name in differences:
            raise InvalidArgumentType(f"{call}({name}=...) is the whileai SDK's keyword; it is not taken here: "
                                      f"{differences[name]} (docs/sdk.md, 'Where we deliberately differ')")
    if passed:
        raise InvalidArgumentType(f"{call}() got unexpected keyword argument(s) {sorted(passed)}")
