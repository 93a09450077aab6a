"""Covering arrays: a small set of situations in which every pair of axis values appears at least once.

Kuhn, Wallace & Gallo 2004 found that nearly all software faults are triggered by the interaction of at most
two factors, so strength-2 (pairwise) coverage buys most of the value of the full cross product at a fraction
of its size. The construction is the greedy one-row-at-a-time method (AETG, Cohen et al. 1997): start each
row from the first uncovered pair, then give every other axis the value that covers the most uncovered pairs.
It is deterministic: the same axes give the same rows on every machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

from whileai_core.defaults import COVERING_STRENGTH
from whileai_core.errors import InvalidArgument

Cell = dict[str, str]


def _check_axes(axes: Mapping[str, Sequence[str]]) -> list[tuple[str, list[str]]]:
    if not isinstance(axes, Mapping) or not axes:
        raise InvalidArgument("axes= must be a non-empty dict {axis name: [values]}")
    out = []
    for name, values in axes.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InvalidArgument(  # noqa: TRY004 - bad axes= is a ValueError throughout this module
                f"axis {name!r} must be a list of values, e.g. {name!r}: [{values!r}]; got "
                             f"{type(values).__name__}")
        vals = list(values)
        if not vals:
            raise InvalidArgument(f"axis {name!r} has no values; give it at least one")
        texts = [str(v) for v in vals]  # cells hold values as text
        if len(set(texts)) != len(texts):
            raise InvalidArgument(f"axis {name!r} repeats a value (values are compared as text): {texts}")
        out.append((str(name), texts))
    return out


def all_pairs(axes: Mapping[str, Sequence[str]]) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    """Every ((axis_a, value), (axis_b, value)) pair that a strength-2 array must cover."""
    ax = _check_axes(axes)
    pairs = set()
    for (na, va), (nb, vb) in combinations(ax, 2):
        for a in va:
            for b in vb:
                pairs.add(((na, a), (nb, b)))
    return pairs


def pairs_of(cell: Mapping[str, str], order: Sequence[str]) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    names = [n for n in order if n in cell]
    return {((a, cell[a]), (b, cell[b])) for a, b in combinations(names, 2)}


def pair_coverage(cells: Sequence[Mapping[str, str]], axes: Mapping[str, Sequence[str]]) -> tuple[int, int]:
    """(pairs covered, pairs needed) for a list of cells."""
    needed = all_pairs(axes)
    order = list(axes)
    covered: set = set()
    for cell in cells:
        covered |= pairs_of(cell, order)
    return len(needed & covered), len(needed)


def covering_array(axes: Mapping[str, Sequence[str]], *, n: int | None = None,
                   strength: int = COVERING_STRENGTH) -> list[Cell]:
    """A strength-2 covering array over ``axes``.

    With ``n=None`` it returns the rows that cover every pair once. With ``n`` larger than that it keeps
    going, covering every pair again in a fresh cycle (with rotated tie-breaks, so the new rows differ), and
    returns exactly ``n`` rows; with ``n`` smaller it returns the first ``n`` (which cover the most pairs).
    """
    if strength not in (1, 2):
        raise InvalidArgument(f"strength= must be 1 or 2 (pairwise); got {strength!r}")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise InvalidArgument(f"n= must be an int >= 1 or None; got {n!r}")
    ax = _check_axes(axes)
    names = [name for name, _ in ax]
    values = dict(ax)
    if len(ax) == 1 or strength == 1:
        width = max(len(v) for _, v in ax)
        base = [{name: vals[i % len(vals)] for name, vals in ax} for i in range(width)]
        return _extend_cycles(base, n)
    rows: list[Cell] = []
    cycle = 0
    while True:
        uncovered = all_pairs(axes)
        ordered = sorted(uncovered, key=lambda p: (names.index(p[0][0]), values[p[0][0]].index(p[0][1]),
                                                   names.index(p[1][0]), values[p[1][0]].index(p[1][1])))
        while uncovered:
            if n is not None and len(rows) >= n:
                return rows
            seed_pair = next(p for p in ordered if p in uncovered)
            cell: Cell = {seed_pair[0][0]: seed_pair[0][1], seed_pair[1][0]: seed_pair[1][1]}
            for name in names:
                if name in cell:
                    continue
                vals = values[name]
                rot = cycle % len(vals)
                candidates = vals[rot:] + vals[:rot]
                best, best_gain = candidates[0], -1
                for v in candidates:
                    gain = sum(1 for other, ov in cell.items()
                               if _norm_pair((name, v), (other, ov), names) in uncovered)
                    if gain > best_gain:
                        best, best_gain = v, gain
                cell[name] = best
            ordered_cell = {name: cell[name] for name in names}
            uncovered -= pairs_of(ordered_cell, names)
            rows.append(ordered_cell)
        cycle += 1
        if n is None or len(rows) >= n:
            return rows if n is None else rows[:n]


def _norm_pair(a: tuple[str, str], b: tuple[str, str], names: Sequence[str]):
    return (a, b) if names.index(a[0]) < names.index(b[0]) else (b, a)


def _extend_cycles(base: list[Cell], n: int | None) -> list[Cell]:
    if n is None:
        return base
    return [dict(base[i % len(base)]) for i in range(n)]
