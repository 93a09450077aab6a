"""How the gate prints a number, an interval and a p-value: ``n/a`` for a missing one (no scored trial, no
baseline, no delta), never a crash."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from whileai_core.defaults import P_VALUE_PRINT_FLOOR
from whileai_core.numbers import interval, is_number, number


def fmt(x: Any, digits: int = 2, *, signed: bool = False) -> str:
    """A number with ``digits`` decimals, or ``n/a`` for None / NaN / a non-number."""
    return number(x, digits, signed=signed, na=True)


def fmt_p(p: Any) -> str:
    """A p-value with 3 significant digits, or ``n/a``; one below ``P_VALUE_PRINT_FLOOR`` (FFT round-off, or an
    exact tail that underflowed to 0) prints as ``<1e-12``, never as 0."""
    if is_number(p) and p < P_VALUE_PRINT_FLOOR:
        return f"<{P_VALUE_PRINT_FLOOR:g}"
    return f"{p:.3g}" if is_number(p) else "n/a"


def p_eq(p: Any, *, exact: bool | None = None, permutations: int | None = None, sides: int = 2) -> str:
    """``=0.0123`` for ``f"p{p_eq(p)}"``; ``<1e-12`` below the print floor; and for a Monte-Carlo p-value
    (``exact=False`` with its ``permutations`` B) at its smallest value (b + 1)/(B + 1) x sides with b = 0, when
    no random flip reached the observed statistic, ``<`` that bound rounded up (``p<0.0002`` at B = 10,000
    two-sided): the estimate is an upper bound there, never 0 and never an exact value."""
    text = fmt_p(p)
    if text.startswith("<") or text == "n/a":
        return text if text.startswith("<") else "=n/a"
    if exact is False and permutations:
        floor = sides / (permutations + 1)
        if p <= floor * (1 + 1e-9):
            digits = max(0, -math.floor(math.log10(floor)))  # one significant digit, rounded up
            bound = math.ceil(floor * 10**digits) / 10**digits
            return f"<{bound:g}" if bound > floor else f"<={fmt_p(floor)}"
    return f"={text}"


def fmt_ci(ci: Sequence[Any] | None, digits: int = 2, *, signed: bool = False) -> str:
    """``[lo, hi]``, or ``[n/a]`` when there is no interval."""
    if not ci or len(ci) < 2:
        return "[n/a]"
    return interval(ci, digits, signed=signed, sep=", ", na=True)


def power_text(plan: Any) -> str | None:
    """The power line ("N scenarios x k trials are needed to detect a drop of X ...; this suite has M") from a
    gate's ``trials_needed`` plan, or None without one."""
    if not plan:
        return None
    enough = "enough" if plan["scenarios_here"] >= plan["scenarios_needed"] else "too few"
    return (f"power: {plan['scenarios_needed']} scenarios x k={plan['k']} trials are needed to detect a pass@1 drop "
            f"of {plan['drop']:g} at {plan['power']:.0%} power (alpha {plan['alpha']:g}); this suite has "
            f"{plan['scenarios_here']} ({enough})")
