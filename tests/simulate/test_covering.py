import itertools

import pytest

import whileai as wai
from whileai_core.simulate.covering import all_pairs, covering_array, pair_coverage, pairs_of


def brute_force_missing(rows, axes):
    names = list(axes)
    missing = []
    for a, b in itertools.combinations(names, 2):
        for va in axes[a]:
            for vb in axes[b]:
                if not any(r[a] == va and r[b] == vb for r in rows):
                    missing.append((a, va, b, vb))
    return missing


@pytest.mark.parametrize("sizes", [(1, 3, 4, 6), (2, 3, 4, 6), (3, 3, 3, 3), (2, 2, 2, 2, 2, 2), (5, 4), (4, 1, 7)])
def test_every_pair_covered_checked_by_brute_force(sizes):
    axes = {f"ax{i}": [f"v{j}" for j in range(n)] for i, n in enumerate(sizes)}
    rows = covering_array(axes)
    assert brute_force_missing(rows, axes) == []
    # a strength-2 array needs at least the product of the two largest axes
    a, b = sorted(sizes)[-2:]
    assert len(rows) >= a * b
    # greedy stays well below the full cross product for many axes
    full = 1
    for n in sizes:
        full *= n
    assert len(rows) <= full
    covered, needed = pair_coverage(rows, axes)
    assert covered == needed == len(all_pairs(axes))


def test_deterministic_and_extends_in_cycles():
    axes = {"a": ["1", "2", "3"], "b": ["x", "y"], "c": ["p", "q", "r", "s"]}
    first = covering_array(axes)
    assert first == covering_array(axes)
    longer = covering_array(axes, n=len(first) * 2 + 1)
    assert len(longer) == len(first) * 2 + 1
    assert longer[: len(first)] == first
    assert brute_force_missing(longer[len(first):2 * len(first)], axes) == []  # the second cycle covers again
    assert covering_array(axes, n=3) == first[:3]


def test_bad_axes():
    with pytest.raises(ValueError, match="axis 'a' has no values"):
        covering_array({"a": []})
    with pytest.raises(ValueError, match="repeats a value"):
        covering_array({"a": ["x", "x"]})
    with pytest.raises(ValueError, match="n= must be"):
        covering_array({"a": ["x"]}, n=0)
    with pytest.raises(ValueError, match="strength"):
        covering_array({"a": ["x"], "b": ["y"]}, strength=3)


def test_grow_along_appends_a_block_and_keeps_every_earlier_row():
    axes = {"tool": ["a", "b"], "ws": ["p", "m", "e"], "st": ["o", "h", "u", "x"], "c": ["s", "1", "2", "3"]}
    rows = covering_array(axes, grow_along="tool")
    assert brute_force_missing(rows, axes) == []
    grown = covering_array({**axes, "tool": ["a", "b", "c"]}, grow_along="tool")
    assert brute_force_missing(grown, {**axes, "tool": ["a", "b", "c"]}) == []
    assert all(r in grown for r in rows)  # no earlier cell is lost
    # one value: the same rows as the plain greedy array; several: the rows that add the most pairs come first,
    # so a budget that cuts the cycle short keeps as many pairs as it can
    single = {**axes, "tool": ["a"]}
    assert covering_array(single, grow_along="tool") == covering_array(single)
    gains, covered = [], set()
    for r in rows:
        gains.append(len(pairs_of(r, list(axes)) - covered))
        covered |= pairs_of(r, list(axes))
    assert gains == sorted(gains, reverse=True)
    longer = covering_array(axes, n=len(rows) + 7, grow_along="tool")
    assert longer[: len(rows)] == rows
    with pytest.raises(ValueError, match="grow_along='tools' is not an axis"):
        covering_array(axes, grow_along="tools")


# ---------------------------------------------------------------- edge cases (were test_edge_*.py)


def test_covering_axis_values_as_a_string_or_unhashable():
    with pytest.raises(ValueError, match="axis 'a' must be a list of values"):
        wai.covering_array({"a": "xyz", "b": [1]})
    rows = wai.covering_array({"a": [{"x": 1}, {"y": 2}], "b": [1, 2]})  # any value works: cells hold text
    assert len(rows) == 4 and {r["a"] for r in rows} == {"{'x': 1}", "{'y': 2}"}
    with pytest.raises(ValueError, match="axis 'b' repeats a value"):
        wai.covering_array({"a": [1, 2], "b": [1, "1"]})
