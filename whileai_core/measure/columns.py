"""Rows as columns: each field of a run's row dicts read once into a list or a numpy array (issue 34).

Statistics over rows used to walk the rows once per question (the task key, the repeats check, the reward, the
config, the slice label), each walk a Python call per row. ``RowColumns`` reads a field once for every row,
with ``map(dict.get, rows, ...)`` or ``map(operator.itemgetter(name), rows)`` (no Python frame per row), keeps
it, and hands it to every consumer: ``task_counts`` (per-task graded rollouts and passes),
``measure.config.run_config``, ``compare``'s slices. Every pass over 400,000 row dicts costs about as much as
any other (the dicts are far apart in memory), so the reads are few: no type pass (the first ``dict.get`` read
checks), no copy of the list, absent fields proved by one pass over the rows' lengths. The task keys are
factorized once (``TaskIndex``: run by run when a task's rows come together, else one C-level pass of
``dict.setdefault``; no Python frame per row, no sort of strings); per-task counts are then ``numpy.bincount``
over the codes.

The fast path covers the common run: every ``task_id`` a non-empty str (or every one an int), rewards of type
int, float, bool or None, ``row_id`` and ``(task, rollout_index)`` hashable. Anything else (a task keyed by its
prompt, a task id seen as two types, a numpy reward, a repeated rollout) takes the row-by-row walk, which is the
one definition of the semantics: both give the same ``TaskCounts`` (tests/measure/test_columns.py checks this on
random rows).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from functools import cached_property
from itertools import count, repeat
from typing import Any

import numpy as np

from whileai_core.defaults import (
    PAIR_BINCOUNT_MIN,
    PAIR_BINCOUNT_SLOTS,
    RUN_INDEX_MAX_SHARE,
    RUN_INDEX_SAMPLE,
)
from whileai_core.errors import InvalidArgument
from whileai_core.rows import (
    Row,
    TaskKeyTypes,
    as_rows,
    check_rows,
    reward_field_hint,
    task_key_field,
    unique_rows,
)

_NONE = type(None)
_FAST_REWARDS = frozenset({int, float, bool, _NONE})
#: rows with at most this many keys each (on average) have their key union taken once, so that a field no row
#: has is not read row by row (a key costs about what one field of a row costs to read); measured, issue 34
PRESENT_KEYS_PER_ROW = 6
PRESENT_SAMPLE = 64  # rows sampled to tell small rows from large ones (a speed decision only)


@dataclass(frozen=True)
class TaskIndex:
    """Every row's task as a small int: the task keys in the order of their first row, each key's first row,
    and each row's code (its key's position in ``keys``)."""

    keys: list[str]
    first: np.ndarray  # intp per key: the key's first row
    codes: np.ndarray  # intp per row: the row's key's position in ``keys``

    def tasks_in(self, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The tasks with a row under ``mask`` (None: every row), in the order of their first such row, and how
        many of their rows are under ``mask`` (both lined up): what ``Counter(compress(keys, mask))`` gives."""
        n_keys = len(self.keys)
        if mask is None:
            return np.arange(n_keys), np.bincount(self.codes, minlength=n_keys)
        rows = np.flatnonzero(mask)
        codes = self.codes[rows]
        per = np.bincount(codes, minlength=n_keys)
        if len(rows) == len(self.codes):
            return np.arange(n_keys), per
        first = np.full(n_keys, len(self.codes), dtype=np.intp)
        np.minimum.at(first, codes, rows)  # each task's first row under the mask
        hit = np.flatnonzero(per)
        order = hit[np.argsort(first[hit], kind="stable")]
        return order, per[order]

    def first_rows(self) -> dict[str, int]:
        """Each task key's first row index."""
        return dict(zip(self.keys, self.first.tolist()))


def task_index(keys: list[str], *, sample: int = RUN_INDEX_SAMPLE, max_share: float = RUN_INDEX_MAX_SHARE
               ) -> TaskIndex:
    """The task keys factorized: keys in the order of their first row, each key's first row, each row's code.

    Rows of one task usually come in a run (a task's rollouts written together): when at most ``max_share`` of
    the first ``sample`` keys start a run, adjacent keys are compared in C and only the runs' heads go through a
    dict (``_run_index``); else every key does (``_dict_index``). Both give the same ``TaskIndex``."""
    head = keys[:sample]
    if len(keys) > sample and sum(map(operator.ne, head[1:], head[:-1])) < max_share * len(head):
        return _run_index(keys)
    return _dict_index(keys)


def _dict_index(keys: list[str]) -> TaskIndex:
    """``task_index`` in one pass: ``dict.setdefault(key, row)`` through ``map`` (a C loop, no frame per row)
    gives every row its key's first row; those first rows, in order, number the keys."""
    where: dict[str, int] = {}
    first_of_row = np.fromiter(map(where.setdefault, keys, count()), np.intp, len(keys))
    first = np.fromiter(where.values(), np.intp, len(where))
    code_at = np.empty(len(keys), dtype=np.intp)
    code_at[first] = np.arange(len(first))
    return TaskIndex(list(where), first, code_at[first_of_row])


def _run_index(keys: list[str]) -> TaskIndex:
    """``task_index`` run by run: a run starts where a key differs from the one before it (compared in C over an
    object array); the runs' head keys are numbered by ``_dict_index``, and every row takes its run's code. A
    task whose rows come in several runs (interleaved order) gets one code: the dict sees each run's head."""
    n = len(keys)
    objects = np.fromiter(keys, object, n)
    starts = np.empty(n, dtype=bool)
    starts[:1] = True
    np.not_equal(objects[1:], objects[:-1], out=starts[1:])
    heads = np.flatnonzero(starts)
    head_keys = objects[heads].tolist()
    lengths = np.diff(heads, append=n)
    if len(set(head_keys)) == len(head_keys):  # every task in one run (the usual file): the runs are the tasks
        return TaskIndex(head_keys, heads, np.repeat(np.arange(len(heads)), lengths))
    runs = _dict_index(head_keys)  # each run's key numbered, in the order of its first run
    return TaskIndex(runs.keys, heads[runs.first], np.repeat(runs.codes, lengths))


@dataclass
class TaskCounts:
    """Per-task graded rollouts ``n`` and passes ``c`` (tasks with >= 1 binary reward), plus what was skipped."""

    keys: list[str]
    n: np.ndarray
    c: np.ndarray
    n_rows: int  # rows with a binary reward
    n_total: int  # rows seen
    n_none: int  # reward None / missing
    n_partial: int  # a number strictly between 0 and 1, or another non-binary value
    n_bool: int  # a bool reward (excluded: True/False is not a graded 0/1)
    first_error: str | None = None
    hint: str | None = None  # e.g. rows from another tool that carry 'score' instead of 'reward'
    n_duplicates: int = 0  # repeated rollouts dropped under dedupe=True
    rows_n: np.ndarray | None = field(default=None, repr=False)  # every row of each task in keys, lined up
    tasks: TaskIndex | None = field(default=None, repr=False)  # every task key (graded or not), factorized
    task_rows: np.ndarray | None = field(default=None, repr=False)  # every row of each task, lined up with tasks

    @cached_property
    def rows_per_task(self) -> dict[str, int]:
        """Every row of each task (graded or not), tasks in the order of their first row."""
        if self.tasks is None or self.task_rows is None:
            return {}
        return dict(zip(self.tasks.keys, self.task_rows.tolist()))

    def planned(self) -> np.ndarray:
        """Every row of each task in ``keys`` (graded or not), lined up with ``keys``."""
        if self.rows_n is None:
            self.rows_n = np.fromiter(map(self.rows_per_task.get, self.keys, self.n.tolist()), np.int64,
                                      len(self.keys))
        return self.rows_n

    def most_rows(self) -> int:
        """The most rows any task has (graded or not); 1 with no task."""
        return int(self.task_rows.max()) if self.task_rows is not None and len(self.task_rows) else 1

    def short_of(self, k: int) -> list[tuple[str, int, int]]:
        """Tasks with fewer than k graded rollouts: (task, graded, rows)."""
        return [(key, int(n), int(rows)) for key, n, rows in zip(self.keys, self.n, self.planned()) if n < k]

    @property
    def rates(self) -> np.ndarray:
        rates: np.ndarray = self.c / self.n
        return rates

    def skipped_note(self) -> str | None:
        parts = []
        if self.n_none:
            parts.append(f"{self.n_none} ungraded (reward None)")
        if self.n_partial:
            parts.append(f"{self.n_partial} partial/non-binary")
        if self.n_bool:
            parts.append(f"{self.n_bool} bool")
        dup = f"dropped {self.n_duplicates} repeated rollout(s) (dedupe=True)" if self.n_duplicates else None
        if not parts:
            return dup
        note = f"skipped {' + '.join(parts)} of {self.n_total} rows; only rewards exactly 0 or 1 count"
        note = f"{note}; {dup}" if dup else note
        return f"{note}; {self.hint}" if self.hint else note


class RowColumns:
    """A run's rows with their fields read as columns, each field once (kept for the next question).

    ``rows`` is the list of row dicts (so anything that takes rows takes a ``RowColumns``); ``column(name)``
    is every row's ``row.get(name)``; ``task_keys()`` every row's task key when the fast path applies.
    Build one per call that asks several questions of the same rows; it assumes the rows are not edited
    while it lives (a given list is kept, not copied). The rows' types are checked by the first column read
    (``map(dict.get)`` fails on a row that is not a dict; ``rows.check_rows`` then names it), not by a pass
    of their own; every later column is read with ``operator.itemgetter`` while each row has the field.
    """

    __slots__ = ("_checked", "_classified", "_columns", "_complete", "_counts", "_floats", "_index", "_keys",
                 "_present", "_unproved", "name", "rows")

    def __init__(self, rows: Any, *, name: str = "rows") -> None:
        self.rows: list[Row] = as_rows(rows, name=name, check=False, copy=False)
        self.name = name
        self._checked = False  # every row is known to be a Mapping (checked by the first column read)
        self._complete: set[str] = set()  # fields every row has (their columns were read without a miss)
        self._unproved: set[str] = set()  # fields read by dict.get whose None check has not run yet (``complete``)
        self._columns: dict[str, list[Any]] = {}
        self._floats: dict[str, tuple[set[type], np.ndarray | None]] = {}
        self._keys: list[str] | None | bool = False  # False: not computed yet
        self._index: TaskIndex | None = None
        self._counts: dict[tuple[str, bool], TaskCounts] = {}
        self._classified: dict[tuple[str, bool], tuple[TaskIndex, np.ndarray, np.ndarray]] = {}
        self._present: set[str] | None | bool = False  # False: not computed yet

    def __len__(self) -> int:
        return len(self.rows)

    def check(self) -> None:
        """Raise ``InvalidArgumentType`` naming the first row that is not a Mapping (once)."""
        if not self._checked:
            check_rows(self.rows, self.name)
            self._checked = True

    def has(self, name: str) -> bool:
        """True when the first row has the field ``name`` (its column is worth reading); else whether any row
        has it, from the rows' keys: when every row has the first row's keys and no more (``_uniform``), none
        has it; else the union of their keys. Rows with many keys skip both (reading the few absent fields
        asked costs less): True (some row may have it)."""
        self.check()
        if not self.rows:
            return False
        if name in self.rows[0]:
            return True
        if self._present is False:
            rows = self.rows
            sample = rows[:: max(1, len(rows) // PRESENT_SAMPLE)]
            small = sum(map(len, sample)) <= PRESENT_KEYS_PER_ROW * len(sample)
            self._present = None if not small else set(rows[0]) if self._uniform() else set().union(*rows)
        return not isinstance(self._present, set) or name in self._present

    def complete(self, name: str) -> bool:
        """True when every row is known to have the field ``name`` (its column was read without a miss, or a
        column read by ``dict.get`` holds no None: checked here, on the first question, not at the read)."""
        if name in self._unproved:
            self._unproved.discard(name)
            if not any(map(operator.is_, self._columns[name], repeat(None))):  # by identity: == may not be a bool
                self._complete.add(name)
        return name in self._complete

    def _uniform(self) -> bool:
        """Every row has exactly the first row's keys: each row as many keys as the first, and each of the first
        row's keys in every row (proved by reading its column: one ``itemgetter`` pass, kept for later)."""
        rows = self.rows
        if set(map(len, rows)) != {len(rows[0])}:
            return False
        for name in rows[0]:
            if isinstance(name, str) and not self.complete(name):
                self.column(name)
            if not self.complete(name):
                return False
        return True

    def column(self, name: str) -> list[Any]:
        """Every row's ``row.get(name)``, read once."""
        col = self._columns.get(name)
        if col is None:
            col = self._columns[name] = self._read(name)
        return col

    def _read(self, name: str) -> list[Any]:
        """Column ``name``: the first read checks the rows (``map(dict.get)`` takes only dicts); later ones
        try ``itemgetter`` (no default to pass) and fall back to ``dict.get`` at the first row without it."""
        rows = self.rows
        if not self._checked:
            try:  # dict.get through map: no Python frame per row, and a TypeError on a row that is not a dict
                col = list(map(dict.get, rows, repeat(name)))
            except TypeError:  # a row that is a Mapping but not a dict (else check names the row)
                self.check()
                col = [r.get(name) for r in rows]
            self._checked = True
            self._unproved.add(name)  # whether some row lacks it: asked of ``complete`` when it matters
            return col
        if not self.has(name):
            return [None] * len(rows)
        try:
            col = list(map(operator.itemgetter(name), rows))
        except KeyError:  # some row lacks the field
            try:
                return list(map(dict.get, rows, repeat(name)))
            except TypeError:
                return [r.get(name) for r in rows]
        self._complete.add(name)
        return col

    def task_keys(self) -> list[str] | None:
        """Every row's task key (``rows.task_key``) when every ``task_id`` is a non-empty str, or every one an int;
        else None (keys from scenario_id or the prompt, or ids of two types: the caller walks the rows)."""
        if self._keys is False:
            tids = self.column("task_id")
            kinds = set(map(type, tids))
            self._keys = None
            if kinds in ({str}, {int}):  # no None among them: every row has a task_id
                self._unproved.discard("task_id")
                self._complete.add("task_id")
            if kinds == {str}:
                index = task_index(tids)
                if all(index.keys):  # an empty id is not a key: the row walk decides (scenario_id, prompt)
                    self._index, self._keys = index, tids
            elif kinds == {int}:
                self._keys = list(map(str, tids))
        return self._keys if isinstance(self._keys, list) else None

    def floats(self, name: str) -> tuple[set[type], np.ndarray | None]:
        """The types in column ``name`` and the column as floats when they allow (``_floats``), read once."""
        got = self._floats.get(name)
        if got is None:
            got = self._floats[name] = _floats(self.column(name))
        return got

    def index(self, keys: list[str]) -> TaskIndex:
        """``keys`` factorized (``task_index``), kept when they are ``task_keys()``'s answer."""
        if keys is not self._keys:
            return task_index(keys)
        if self._index is None:
            self._index = task_index(keys)
        return self._index


def _floats(values: list[Any]) -> tuple[set[type], np.ndarray | None]:
    """The types in a column, and the column as floats (None -> NaN, True -> 1.0) when every value is an int,
    float, bool or None that fits a float (else None)."""
    kinds = set(map(type, values))
    if not kinds <= _FAST_REWARDS:
        return kinds, None
    if kinds == {int}:  # ints only (the usual 0/1 rewards): read as int64, then float (the same values)
        try:
            return kinds, np.fromiter(values, np.int64, len(values)).astype(float)
        except OverflowError:  # an int past int64: numpy's float conversion decides below
            pass
    try:
        return kinds, np.array(values, dtype=float) if values else np.zeros(0)
    except (OverflowError, TypeError, ValueError):  # an int past float range
        return kinds, None


def of(rows: Any, name: str = "rows") -> RowColumns:
    """``rows`` as a ``RowColumns`` (itself when it is one)."""
    return rows if isinstance(rows, RowColumns) else RowColumns(rows, name=name)


def _no_repeats(cols: RowColumns, keys: list[str]) -> bool:
    """True when no two rows share a ``row_id`` or a (task key, ``rollout_index``), read from the columns; False
    when some do, or when a value is not hashable (``rows.unique_rows`` then decides, row by row)."""
    try:
        for name in ("row_id", "rollout_index"):
            if not cols.has(name):
                continue
            col = cols.column(name)
            missing = col.count(None)
            if missing == len(col):
                continue
            if name == "row_id":
                present: Any = col if not missing else [v for v in col if v is not None]
            else:
                distinct = _distinct_pairs(cols.index(keys).codes, col, missing)
                if distinct is not None:  # whole-number indices: checked on arrays
                    if not distinct:
                        return False
                    continue
                pairs = zip(keys, col)
                present = list(pairs) if not missing else [p for p in pairs if p[1] is not None]
            if len(set(present)) != len(col) - missing:
                return False
    except (TypeError, ValueError):  # an unhashable id, or one whose == is not a bool
        return False
    return True


def _distinct_pairs(codes: np.ndarray, index: list[Any], missing: int, *, slots: int = PAIR_BINCOUNT_SLOTS,
                    least: int = PAIR_BINCOUNT_MIN) -> bool | None:
    """Whether no two rows share a (task code, ``rollout_index``) among rows whose index is not None, when
    every such index is an int (not a bool): counted with ``bincount`` when the pairs' code range is at most
    ``slots`` per row (or ``least`` in all), else sorted. None when some index is not an int (the caller compares tuples)."""
    kinds = set(map(type, index))
    if not kinds - {_NONE} <= {int}:
        return None
    if missing:
        keep = np.fromiter(map(operator.is_not, index, repeat(None)), bool, len(index))
        codes, index = codes[keep], [v for v in index if v is not None]
    try:
        at = np.fromiter(index, np.int64, len(index))
    except OverflowError:  # an index past int64
        return None
    if len(at) < 2:
        return True
    low, span = int(at.min()), int(at.max()) - int(at.min()) + 1
    if span * (int(codes.max()) + 1) > slots * len(at) + least:
        order = np.lexsort((at, codes))
        c, a = codes[order], at[order]
        return not bool(np.any((c[1:] == c[:-1]) & (a[1:] == a[:-1])))
    return int(np.bincount(codes * span + (at - low)).max()) <= 1


def _walked_keys(data: list[Row], name: str, dedupe: bool) -> tuple[list[Row], list[str], int]:
    """The rows (repeats dropped under ``dedupe``), their task keys and the repeats dropped, row by row: the
    missing-key error first, then the repeats, then a task id seen as two types (``rows.TaskKeyTypes``)."""
    keyed = [task_key_field(row) for row in data]
    data, n_dup = unique_rows(data, name=name, dedupe=dedupe, keys=[k[0] for k in keyed])
    if n_dup:
        keyed = [task_key_field(row) for row in data]
    types = TaskKeyTypes(name)
    for i, (key, source, raw) in enumerate(keyed):
        types.check_raw(key, source, raw, i)
    return data, [k[0] for k in keyed], n_dup


def _nan_error(name: str, i: int, key: str) -> InvalidArgument:
    return InvalidArgument(
        f"{name}[{i}] (task {key!r}) has reward NaN; a judge that failed should write "
        f"reward None (skipped and counted), a graded row 0 or 1; fix the judge or drop the row"
    )


def _classify_arrays(rewards: list[Any], keys: list[str], name: str,
                     floats: tuple[set[type], np.ndarray | None] | None = None,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per row: graded (exactly 0 or 1, not a bool), passed (1), ungraded (None), as arrays, when every reward is
    an int, float, bool or None that fits a float; else None (``_classify_walk`` decides). ``floats``:
    ``RowColumns.floats`` of these rewards, when the caller has it."""
    kinds, as_float = floats if floats is not None else _floats(rewards)
    if not kinds <= _FAST_REWARDS or as_float is None:
        return None
    n = len(rewards)
    values = as_float.copy()
    none = np.fromiter(map(operator.is_, rewards, repeat(None)), bool, n) if _NONE in kinds else np.zeros(n, bool)
    if bool in kinds:
        flags = np.fromiter(map(operator.is_, map(type, rewards), repeat(bool)), bool, n)
        values[flags] = 0.5  # neither 0 nor 1: counted apart below
    else:
        flags = np.zeros(n, bool)
    nan = np.isnan(values) & ~none
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        raise _nan_error(name, i, keys[i])
    passed = values == 1
    graded = passed | (values == 0)
    return graded, passed, np.stack([none, flags])


def _classify_walk(rewards: list[Any], keys: list[str], name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_classify_arrays``'s answer row by row, for any reward type (numpy numbers count as numbers)."""
    graded, passed, none, flags = [], [], [], []
    for i, r in enumerate(rewards):
        kind = type(r)
        is_number = kind is not bool and r is not None and (
            kind is int or kind is float or isinstance(r, (int, float, np.integer, np.floating)))
        if is_number and r != r:  # noqa: PLR0124 (NaN, without a call)
            raise _nan_error(name, i, keys[i])
        binary = is_number and (r == 0 or r == 1)
        graded.append(bool(binary))
        passed.append(bool(binary and r == 1))
        none.append(r is None)
        flags.append(kind is bool)
    n = len(rewards)
    return (np.array(graded, dtype=bool).reshape(n), np.array(passed, dtype=bool).reshape(n),
            np.array([none, flags], dtype=bool).reshape(2, n))


def _first_error(data: list[Row], none: np.ndarray) -> str | None:
    """The first ungraded row's judge error (its judge_status not ok), cut to 120 characters."""
    for i in np.flatnonzero(none).tolist():
        row = data[i]
        if row.get("judge_status") not in (None, "ok"):
            return str(row.get("judge_error") or row.get("reason") or row.get("judge_status"))[:120]
    return None


def task_counts(rows: Any, *, name: str = "rows", dedupe: bool = False) -> TaskCounts:
    """Group rows by task key and count graded rollouts and passes per task.

    Repeated rollouts (``rows.unique_rows``) are an error, or dropped and counted with ``dedupe=True``; a task
    id seen as two types (1 and "1") is an error (``rows.TaskKeyTypes``). Only rewards exactly 0 or 1 count
    (bools excluded); None, partial and bool rewards are counted apart; a NaN reward is an error naming its row.
    ``rows`` may be a ``RowColumns`` (its columns are reused, and so is the answer).
    """
    cols = of(rows, name)
    memo = cols._counts.get((name, dedupe))
    if memo is not None:
        return memo
    data, keys, n_dup = cols.rows, cols.task_keys(), 0
    if keys is None or not _no_repeats(cols, keys):
        data, keys, n_dup = _walked_keys(data, name, dedupe)
    rewards = cols.column("reward") if n_dup == 0 else [row.get("reward") for row in data]
    arrays = _classify_arrays(rewards, keys, name, cols.floats("reward") if n_dup == 0 else None)
    graded, passed, apart = arrays if arrays is not None else _classify_walk(rewards, keys, name)
    n_none, n_bool = (int(x) for x in apart.sum(axis=1))
    n_graded = int(graded.sum())
    index = cols.index(keys)
    rows_n = np.bincount(index.codes, minlength=len(index.keys))
    order, n = index.tasks_in(None if n_graded == len(keys) else graded)
    c = np.bincount(index.codes[passed], minlength=len(index.keys))[order].astype(np.int64)
    in_place = len(order) == len(index.keys) and bool(np.all(order == np.arange(len(order))))
    keys_in_order = list(index.keys) if in_place else [index.keys[i] for i in order.tolist()]
    hint = reward_field_hint(data) if n_none == len(data) else None
    out = TaskCounts(keys_in_order, n.astype(np.int64), c, n_graded, len(data), n_none,
                     len(data) - n_graded - n_none - n_bool, n_bool, _first_error(data, apart[0]) if n_none else None,
                     hint, n_dup, rows_n[order].astype(np.int64), index, rows_n)
    cols._counts[(name, dedupe)] = out
    cols._classified[(name, dedupe)] = (index, graded, passed)
    return out


def round_counts(cols: RowColumns, index: list[int], cuts: list[int], *, name: str, dedupe: bool
                 ) -> list[dict[str, tuple[int, int]]] | None:
    """For each cut, ``{task: (passes, graded)}`` over the rows whose ``index`` is below it, tasks in the order of
    their first graded row there: what ``task_counts`` gives on those rows, from the columns read once. None
    when repeats were dropped (a repeat's first copy may lie past a cut: the caller counts row by row)."""
    tc = task_counts(cols, name=name, dedupe=dedupe)
    if tc.n_duplicates:
        return None
    tasks, graded, passed = cols._classified[(name, dedupe)]
    at = np.asarray(index, dtype=np.int64)
    out = []
    for cut in cuts:
        inside = at < cut
        order, n = tasks.tasks_in(graded & inside)
        c = np.bincount(tasks.codes[passed & inside], minlength=len(tasks.keys))[order]
        keys = [tasks.keys[i] for i in order.tolist()]
        out.append(dict(zip(keys, zip(c.tolist(), n.tolist()))))
    return out
