"""The fast column paths of issue 34 equal the code they replaced (the definitions, kept here as references).

Each fast path has a plain definition: the task index is one ``dict.setdefault`` per row (``_dict_index``); a
field is absent when no row's keys hold it (the union of the keys); repeated (task, rollout_index) pairs are a
set of tuples; a slice label is ``compare._field`` on each task's first row; the bootstrap's task grouping is
``_row_groups``. Seeded generators build row sets the fast paths must handle: tasks in runs, interleaved and
shuffled; fields missing from some rows; None, bool and partial rewards; slices with empty groups and scenario
cells that are None, missing or not dicts.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from rowkinds import MappingRow

from whileai_core.errors import InvalidArgumentType
from whileai_core.measure import columns, stats
from whileai_core.measure.compare import MISSING, _field, _slice_labels, compare
from whileai_core.measure.pass_at import pass_at
from whileai_core.rows import task_key


def ordered(rng: random.Random, tasks: int, k: int, order: str) -> list[tuple[int, int]]:
    """(task, rollout) pairs in runs (a task's rollouts together), interleaved (rollout-major) or shuffled."""
    pairs = [(t, i) for t in range(tasks) for i in range(k)]
    if order == "interleaved":
        pairs.sort(key=lambda p: (p[1], p[0]))
    elif order == "shuffled":
        rng.shuffle(pairs)
    elif order == "mixed":  # runs, with a few rows moved elsewhere (a task in two runs)
        for _ in range(len(pairs) // 10):
            pairs.insert(rng.randrange(len(pairs) + 1), pairs.pop(rng.randrange(len(pairs))))
    return pairs


def random_rows(rng: random.Random, order: str) -> list[dict[str, Any]]:
    tasks, k = rng.randint(1, 120), rng.randint(1, 5)
    rewards = [0, 1, 1, 0.0, 1.0, None, True, 0.5]
    extra = rng.random() < 0.5  # some rows carry fields the others lack
    rows = []
    for t, i in ordered(rng, tasks, k, order):
        row: dict[str, Any] = {"task_id": f"t{t}", "reward": rng.choice(rewards)}
        if rng.random() < 0.7:
            row["rollout_index"] = i
        if extra and rng.random() < 0.2:
            row["judge_status"] = "error"
        if rng.random() < 0.05:
            del row["reward"]
        if rng.random() < 0.6:
            row["scenario"] = rng.choice([{"tool": f"tool{t % 3}"}, {}, None, {"tool": ""}, {"tool": t % 2}])
        if rng.random() < 0.1:
            row["tool"] = rng.choice([None, "own", ""])
        rows.append(row)
    return rows


ORDERS = ["runs", "interleaved", "shuffled", "mixed"]


@pytest.mark.parametrize("order", ORDERS)
def test_task_index_run_by_run_equals_a_dict_per_row(order: str) -> None:
    rng = random.Random(340)
    for _ in range(300):
        keys = [f"t{t}" for t, _ in ordered(rng, rng.randint(1, 400), rng.randint(1, 6), order)]
        want = columns._dict_index(keys)
        for got in (columns._run_index(keys), columns.task_index(keys), columns.task_index(keys, sample=4)):
            assert got.keys == want.keys
            assert np.array_equal(got.first, want.first) and np.array_equal(got.codes, want.codes)


def reference_present(rows: list[dict[str, Any]], name: str) -> bool:
    return any(name in row for row in rows)


@pytest.mark.parametrize("order", ORDERS)
def test_has_and_columns_equal_the_rows_read_one_by_one(order: str) -> None:
    rng = random.Random(341)
    names = ["task_id", "reward", "rollout_index", "judge_status", "scenario", "tool", "row_id", "sampling"]
    for _ in range(300):
        rows = random_rows(rng, order)
        cols = columns.RowColumns(rows)
        rng.shuffle(names)  # the answers do not depend on the order of the questions
        for name in names:
            if not reference_present(rows, name):
                assert not cols.has(name) or len(rows[0]) > columns.PRESENT_KEYS_PER_ROW
            assert cols.column(name) == [row.get(name) for row in rows]
        assert cols.rows is rows  # the given list is kept, not copied


def test_the_first_column_read_checks_the_rows() -> None:
    for bad in ([{"task_id": "a", "reward": 1}, ["task_id"]], [["reward"], {"task_id": "a"}], ["task_id"]):
        with pytest.raises(InvalidArgumentType, match=r"rows\[\d\] is (list|str), not a row dict"):
            pass_at(bad)
        with pytest.raises(InvalidArgumentType, match="not a row dict"):
            columns.RowColumns(bad).has("reward")


def reference_no_repeats(rows: list[dict[str, Any]]) -> bool:
    pairs = [(task_key(r), r["rollout_index"]) for r in rows if r.get("rollout_index") is not None]
    return len(set(pairs)) == len(pairs)


@pytest.mark.parametrize("order", ORDERS)
def test_repeated_rollouts_found_on_arrays_as_by_tuples(order: str) -> None:
    rng = random.Random(342)
    for trial in range(400):
        rows = random_rows(rng, order)
        if trial % 2 and len(rows) > 1:  # a repeated rollout, or an index far from the rest (the sort path)
            i, j = rng.randrange(len(rows)), rng.randrange(len(rows))
            rows[i] = {**rows[j]} if trial % 4 == 1 else {**rows[i], "rollout_index": rng.choice([-7, 10**12])}
        cols = columns.RowColumns(rows)
        keys = cols.task_keys()
        assert keys is not None
        assert columns._no_repeats(cols, keys) == reference_no_repeats(rows), rows


def test_repeats_with_index_types_other_than_int_take_the_tuples() -> None:
    rows = [{"task_id": "a", "rollout_index": 1, "reward": 1}, {"task_id": "a", "rollout_index": 1.0, "reward": 0}]
    assert columns._distinct_pairs(np.zeros(2, dtype=np.intp), [1, 1.0], 0) is None
    assert not columns._no_repeats(columns.RowColumns(rows), ["a", "a"])


def reference_labels(before: list[dict[str, Any]], after: list[dict[str, Any]], by: str) -> dict[str, str]:
    """The labels as the code before issue 34 read them: ``_field`` on each task's first row, before first."""
    label: dict[str, str] = {}
    for rows in (before, after):
        for row in rows:
            key = task_key(row)
            if key not in label:
                value = _field(row, by)
                label[key] = MISSING if value is None or value == "" else str(value)
    return label


@pytest.mark.parametrize("order", ORDERS)
def test_slice_labels_as_columns_equal_field_on_each_first_row(order: str) -> None:
    rng = random.Random(343)
    for _ in range(300):
        before, after = random_rows(rng, order), random_rows(rng, order)
        for by in ("tool", "scenario.tool", "judge_status", "absent"):
            got = _slice_labels(columns.RowColumns(before), columns.RowColumns(after), by)
            want = reference_labels(before, after, by)
            # every task of before is labelled, as the reference labels it (after's rows only where before has
            # no label at all); whether any task has a label (no label anywhere is an error) is the same
            assert {task_key(row) for row in before} <= set(got)
            assert all(got[key] == want[key] for key in got)
            assert (set(got.values()) <= {MISSING}) == (set(want.values()) <= {MISSING})


def test_slices_with_empty_groups_and_odd_scenarios_match_each_slice_alone() -> None:
    """A slice whose tasks are all unpaired drops out; None, missing and non-dict scenario cells read as
    ``(none)``; each slice equals compare on that slice's rows alone."""

    class Scenario(Mapping[str, Any]):
        def __init__(self, tool: str) -> None:
            self.tool = tool

        def __getitem__(self, key: str) -> Any:
            if key != "tool":
                raise KeyError(key)
            return self.tool

        def __iter__(self) -> Any:
            return iter(["tool"])

        def __len__(self) -> int:
            return 1

    rng = np.random.default_rng(34)

    def side(tasks: range, shift: float) -> list[dict[str, Any]]:
        cells: list[Any] = [{"tool": "a"}, {"tool": "b"}, None, "not a dict", Scenario("c"), {}]
        return [{"task_id": f"t{t}", "rollout_index": i, "reward": int(rng.random() < 0.4 + shift),
                 "scenario": cells[t % len(cells)]} for i in range(3) for t in tasks]  # interleaved

    before, after = side(range(60), 0.0), side(range(6, 66), 0.2)
    before += [{"task_id": "only_before", "rollout_index": 0, "reward": 1, "scenario": {"tool": "lonely"}}]
    got = compare(before, after, by="tool", seed=2)
    assert "lonely" not in [s.name for s in got.slices]  # its one task has no pair: an empty slice
    assert {s.name for s in got.slices} == {"a", "b", "c", MISSING}
    for s in got.slices:
        label = (lambda r: reference_labels([r], [], "tool")[task_key(r)])
        want = compare([r for r in before if label(r) == s.name], [r for r in after if label(r) == s.name], seed=2)
        assert (s.n_tasks, s.delta, s.ci, s.p_value) == (want.n_paired, want.delta, want.ci, want.p_value)


@pytest.mark.parametrize("order", ORDERS)
def test_pass_at_and_compare_do_not_depend_on_the_row_order_path(order: str) -> None:
    """pass_at and compare over rows in any order equal the same rows as Mapping rows that are not dicts (read
    row by row, the dict index per row) and the bootstrap without the (n, c) grouping."""

    rng = random.Random(344)
    for _ in range(25):
        rows = random_rows(rng, order)
        for r in rows:  # compare's repeats check needs whole rollouts
            r.pop("rollout_index", None)
        fast, slow = pass_at(rows, seed=1), pass_at([MappingRow(r) for r in rows], seed=1)
        assert fast.to_dict() == slow.to_dict()
        other = random_rows(rng, order)
        for r in other:
            r.pop("rollout_index", None)
        got = compare(rows, other, by="tool", seed=1)
        want = compare([MappingRow(r) for r in rows], [MappingRow(r) for r in other], by="tool", seed=1)
        assert got.to_dict() == want.to_dict()


def test_bootstrap_task_codes_give_the_same_draws() -> None:
    """``bootstrap_means(tasks=)`` (groups from the caller's codes) draws what the grouping by value draws; codes
    that put different rows together, or are not small ints, are ignored."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        n, c = rng.integers(1, 6, size=400), None
        c = rng.integers(0, n + 1)
        x = np.stack([c / n, (c == n).astype(float), (c > 0).astype(float)], axis=1)
        w = np.stack([np.ones(400), (n >= 3).astype(float), (n >= 3).astype(float)], axis=1)
        want = stats.bootstrap_means(x, w, draws=300, seed=3)
        for tasks in (n * 6 + c, n * 100 + c, np.zeros(400, dtype=int), (n * 6 + c).astype(float), c):
            assert np.array_equal(stats.bootstrap_means(x, w, draws=300, seed=3, tasks=tasks), want, equal_nan=True)


def test_a_first_column_of_arrays_reads_without_comparing_values() -> None:
    """The first read proves a field present by identity with None, never by ``==`` (an array's is elementwise)."""
    rows = [{"vec": np.arange(3), "task_id": "a"}, {"vec": None, "task_id": "a"}, {"vec": np.ones(2), "task_id": "b"}]
    cols = columns.RowColumns(rows)
    assert [v is None for v in cols.column("vec")] == [False, True, False]
    assert not cols.complete("vec") and cols.has("task_id") and not cols.has("reward")
