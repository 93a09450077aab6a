"""How the gate prints a number, an interval and a p-value: ``n/a`` for a missing one (no scored trial, no
baseline, no delta), never a crash."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whileai_core.numbers import interval, is_number, number


def fmt(x: Any, digits: int = 2, *, signed: bool = False) -> str:
    """A number with ``digits`` decimals, or ``n/a`` for None / NaN / a non-number."""
    return number(x, digits, signed=signed, na=True)


def fmt_p(p: Any) -> str:
    """A p-value with 3 significant digits, or ``n/a``."""
    return f"{p:.3g}" if is_number(p) else "n/a"


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
