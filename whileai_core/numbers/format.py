"""How the engine prints a number and an interval: one formatter, the style chosen by argument.

Every interval the engine prints goes through ``interval``: the gate's ``[lo, hi]`` (``sep=", "``, missing
ends as ``n/a``), the measurements' ``[lo..hi]``, and the bare ``lo..hi`` inside a sentence
(``brackets=False``), in decimals or percents, signed or not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def is_number(x: Any) -> bool:
    """A real number that prints as one: not a bool, not NaN."""
    return not isinstance(x, bool) and isinstance(x, (int, float)) and not math.isnan(x)


def number(x: Any, digits: int = 2, *, signed: bool = False, percent: bool = False, na: bool = False) -> str:
    """``x`` with ``digits`` decimals (``percent=True``: as a percent with ``digits`` decimals), a sign with
    ``signed=True``; ``na=True`` prints ``n/a`` for None, NaN or a non-number instead of failing."""
    if na and not is_number(x):
        return "n/a"
    return f"{x:{'+' if signed else ''}.{digits}{'%' if percent else 'f'}}"


def interval(ci: Sequence[Any], digits: int = 2, *, signed: bool = False, percent: bool = False, sep: str = "..",
             brackets: bool = True, na: bool = False) -> str:
    """``[lo..hi]`` (the default), ``[lo, hi]`` with ``sep=", "``, ``lo..hi`` with ``brackets=False``; each end
    as ``number`` prints it."""
    text = (f"{number(ci[0], digits, signed=signed, percent=percent, na=na)}{sep}"
            f"{number(ci[1], digits, signed=signed, percent=percent, na=na)}")
    return f"[{text}]" if brackets else text
