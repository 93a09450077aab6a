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
                   strength: int = COVERING_STRENGTH, grow_along: str | None = None) -> list[Cell]:
    """A strength-2 covering array over ``axes``.

    With ``n=None`` it returns the rows that cover every pair once. With ``n`` larger than that it keeps
    going, covering every pair again in a fresh cycle (with rotated tie-breaks, so the new rows differ), and
    returns exactly ``n`` rows; with ``n`` smaller it returns the first ``n`` (which cover the most pairs).
    A larger ``n`` therefore only appends rows: the rows of a smaller ``n`` are its prefix.

    ``grow_along`` names an axis that is expected to grow (the tools of a suite). The array is then built in
    blocks, one per value of that axis in the given order, each block covering the pairs its value takes part
    in plus whatever the earlier blocks left uncovered. Appending a value to that axis only appends a block:
    every earlier row is kept. Within a cycle the blocks are interleaved row by row, so a small ``n`` still
    spreads over every value.

    Args:
        axes: ``{axis: [values]}``.
        n: rows wanted; None: exactly the rows that cover every pair.
        strength: the interaction strength (``COVERING_STRENGTH`` 2; Kuhn, Wallace & Gallo 2004).
            (``COVERING_STRENGTH``)
        grow_along: an axis expected to grow, built block by block so adding a value only appends rows.

    Returns:
        A list of cells, each ``{axis: value}``.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix.

    Example:
        ```python
        cells = wai.covering_array({"tool": ["a", "b"], "stance": ["ordinary", "hurried", "unsure"]})
        ```
    """
    if strength not in (1, 2):
        raise InvalidArgument(f"strength= must be 1 or 2 (pairwise); got {strength!r}")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise InvalidArgument(f"n= must be an int >= 1 or None; got {n!r}")
    ax = _check_axes(axes)
    if grow_along is not None and grow_along not in dict(ax):
        raise InvalidArgument(f"grow_along={grow_along!r} is not an axis; axes are {[name for name, _ in ax]}")
    if len(ax) == 1 or strength == 1:
        width = max(len(v) for _, v in ax)
        base = [{name: vals[i % len(vals)] for name, vals in ax} for i in range(width)]
        return _extend_cycles(base, n)
    rows: list[Cell] = []
    cycle = 0
    while n is None or len(rows) < n:
        rows.extend(_cycle(ax, cycle, grow_along))
        cycle += 1
        if n is None:
            break
    return rows if n is None else rows[:n]


def _cycle(ax: list[tuple[str, list[str]]], cycle: int, grow_along: str | None) -> list[Cell]:
    """One full cover: a single greedy pass, or one greedy block per value of ``grow_along``, interleaved."""
    if grow_along is None:
        return _greedy(ax, cycle, all_pairs(dict(ax)))
    blocks = []
    covered: set = set()
    for value in dict(ax)[grow_along]:
        pinned = [(name, [value] if name == grow_along else vals) for name, vals in ax]
        block = _greedy(pinned, cycle, all_pairs(dict(pinned)) - covered)
        for row in block:
            covered |= pairs_of(row, [name for name, _ in ax])
        blocks.append(block)
    if len(blocks) == 1:
        return blocks[0]
    interleaved = [block[i] for i in range(max(len(b) for b in blocks)) for block in blocks if i < len(block)]
    return _most_new_pairs_first(interleaved, [name for name, _ in ax])


def _most_new_pairs_first(rows: list[Cell], names: list[str]) -> list[Cell]:
    """The same rows, reordered so each next row covers the most pairs not yet covered (ties keep the given
    order): a budget that cuts the cycle short keeps as many pairs as the rows allow."""
    left = list(rows)
    covered: set = set()
    out = []
    while left:
        gains = [len(pairs_of(r, names) - covered) for r in left]
        best = gains.index(max(gains))
        covered |= pairs_of(left[best], names)
        out.append(left.pop(best))
    return out


def _greedy(ax: list[tuple[str, list[str]]], cycle: int, uncovered: set) -> list[Cell]:
    """AETG (Cohen et al. 1997): each row starts from the first uncovered pair, then every other axis takes
    the value that covers the most uncovered pairs (ties: the first value after rotating by ``cycle``)."""
    names = [name for name, _ in ax]
    values = dict(ax)
    ordered = sorted(uncovered, key=lambda p: (names.index(p[0][0]), values[p[0][0]].index(p[0][1]),
                                               names.index(p[1][0]), values[p[1][0]].index(p[1][1])))
    rows: list[Cell] = []
    while uncovered:
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
        uncovered = uncovered - pairs_of(ordered_cell, names)
        rows.append(ordered_cell)
    return rows


def _norm_pair(a: tuple[str, str], b: tuple[str, str], names: Sequence[str]):
    return (a, b) if names.index(a[0]) < names.index(b[0]) else (b, a)


def _extend_cycles(base: list[Cell], n: int | None) -> list[Cell]:
    if n is None:
        return base
    return [dict(base[i % len(base)]) for i in range(n)]
