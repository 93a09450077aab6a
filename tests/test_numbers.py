"""One number formatter (issue 31): ``whileai_core.numbers.interval`` prints every interval style the engine
uses, each byte-identical to the f-string it replaced."""

from __future__ import annotations

import math

import numpy as np

from whileai_core.gate.text import fmt, fmt_ci
from whileai_core.numbers import interval, number


def test_each_style_prints_what_the_hand_written_strings_printed():
    ci = (0.123456, 0.987654)
    assert interval(ci) == f"[{ci[0]:.2f}..{ci[1]:.2f}]" == "[0.12..0.99]"
    assert interval(ci, 3) == f"[{ci[0]:.3f}..{ci[1]:.3f}]"
    assert interval(ci, signed=True, brackets=False) == f"{ci[0]:+.2f}..{ci[1]:+.2f}" == "+0.12..+0.99"
    assert interval(ci, 0, percent=True, brackets=False) == f"{ci[0]:.0%}..{ci[1]:.0%}" == "12%..99%"
    assert interval(ci, 0, percent=True) == f"[{ci[0]:.0%}..{ci[1]:.0%}]"
    assert interval(ci, sep=", ") == "[0.12, 0.99]"
    assert interval(np.array([np.float32(0.5), np.float32(0.25)])) == "[0.50..0.25]"  # numpy ends print as before


def test_the_gates_style_keeps_its_missing_ends():
    assert fmt_ci([0.1, 0.2]) == "[0.10, 0.20]" and fmt_ci([-0.1, 0.2], 3, signed=True) == "[-0.100, +0.200]"
    assert fmt_ci(None) == fmt_ci([]) == "[n/a]"
    assert fmt_ci([None, 0.2]) == "[n/a, 0.20]" and fmt_ci([math.nan, True]) == "[n/a, n/a]"
    assert fmt(None) == fmt(math.nan) == fmt("x") == "n/a" and fmt(0.5, signed=True) == "+0.50"
    assert number(0.5, 1, percent=True) == "50.0%" and number(None, na=True) == "n/a"
