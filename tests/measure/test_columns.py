"""The columnar readers give the same answers as reading the rows one by one (issue 34).

``measure.columns.task_counts`` (fields read once as columns, counts by ``Counter``), ``measure.config.run_config``
(distinct values per column) and ``stats._distinct_rows`` (rows grouped by one float, then factorized) each have
a row-by-row definition: the reference implementations below, written as the code read before the columns. Random
rows with seeds cover the fast path and every fallback (ids of two types, keys from the prompt, numpy and bool
rewards, NaN, repeats with and without dedupe, non-dict sampling, think blocks).
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
from rowkinds import MappingRow

from whileai_core.measure import columns, config, stats
from whileai_core.measure.pass_at import pass_at
from whileai_core.rows import TaskKeyTypes, reward_field_hint, task_key_field, unique_rows


def reference_counts(rows: list[dict[str, Any]], name: str = "rows", dedupe: bool = False) -> dict[str, Any]:
    """Per-task counts row by row: the definition (keys, then repeats, then id types, then each reward)."""
    keyed = [task_key_field(row) for row in rows]
    data, n_dup = unique_rows(rows, name=name, dedupe=dedupe, keys=[k[0] for k in keyed])
    keyed = [task_key_field(row) for row in data]
    types = TaskKeyTypes(name)
    per_task: dict[str, int] = {}
    for i, (key, source, raw) in enumerate(keyed):
        types.check_raw(key, source, raw, i)
        per_task[key] = per_task.get(key, 0) + 1
    n: dict[str, int] = {}
    c: dict[str, int] = {}
    n_none = n_partial = n_bool = 0
    first_error = None
    for i, row in enumerate(data):
        r = row.get("reward")
        if r is None:
            n_none += 1
            if first_error is None and row.get("judge_status") not in (None, "ok"):
                first_error = str(row.get("judge_error") or row.get("reason") or row.get("judge_status"))[:120]
        elif type(r) is bool:
            n_bool += 1
        elif isinstance(r, (int, float, np.integer, np.floating)) and r != r:  # noqa: PLR0124
            raise ValueError(f"{name}[{i}] (task {keyed[i][0]!r}) has reward NaN; a judge that failed should write "
                             f"reward None (skipped and counted), a graded row 0 or 1; fix the judge or drop the row")
        elif isinstance(r, (int, float, np.integer, np.floating)) and (r == 0 or r == 1):
            n[keyed[i][0]] = n.get(keyed[i][0], 0) + 1
            c[keyed[i][0]] = c.get(keyed[i][0], 0) + int(r == 1)
        else:
            n_partial += 1
    hint = reward_field_hint(data) if n_none == len(data) else None
    return {"keys": list(n), "n": list(n.values()), "c": [c[k] for k in n], "n_rows": sum(n.values()),
            "n_total": len(data), "n_none": n_none, "n_partial": n_partial, "n_bool": n_bool,
            "first_error": first_error, "hint": hint, "rows_per_task": list(per_task.items()), "n_duplicates": n_dup}


def counted(tc: columns.TaskCounts) -> dict[str, Any]:
    return {"keys": tc.keys, "n": tc.n.tolist(), "c": tc.c.tolist(), "n_rows": tc.n_rows, "n_total": tc.n_total,
            "n_none": tc.n_none, "n_partial": tc.n_partial, "n_bool": tc.n_bool, "first_error": tc.first_error,
            "hint": tc.hint, "rows_per_task": list(tc.rows_per_task.items()), "n_duplicates": tc.n_duplicates}


def outcome(fn: Any) -> Any:
    try:
        return fn()
    except ValueError as exc:  # the same error, word for word
        return ("error", str(exc))


def random_rows(rng: random.Random, fast_only: bool) -> list[dict[str, Any]]:
    rewards = [0, 1, 0.0, 1.0, None, True, False, 0.5, 2, -0.0, float("inf")]
    if not fast_only:
        rewards += [np.int64(1), np.float64(0), "1", float("nan")]
    rows = []
    for _ in range(rng.randint(0, 30)):
        row: dict[str, Any] = {}
        pick = rng.random()
        if pick < 0.75 or fast_only:
            row["task_id"] = f"t{rng.randint(0, 5)}"
        elif pick < 0.85:
            row["task_id"] = rng.randint(0, 5)
        elif pick < 0.92:
            row["scenario_id"] = f"t{rng.randint(0, 5)}"
        else:
            row["task_id"], row["prompt"] = "", f"p{rng.randint(0, 3)}"
        if rng.random() < 0.9:
            row["reward"] = rng.choice(rewards)
        if rng.random() < 0.3:
            row["row_id"] = f"r{rng.randint(0, 40)}"
        if rng.random() < 0.3:
            row["rollout_index"] = rng.randint(0, 6)
        if rng.random() < 0.1:
            row["judge_status"], row["judge_error"] = "error", "judge timed out"
        rows.append(row)
    return rows


@pytest.mark.parametrize("fast_only", [True, False])
def test_task_counts_match_the_row_by_row_definition(fast_only: bool) -> None:
    rng = random.Random(34)
    for _ in range(1500):
        rows = random_rows(rng, fast_only)
        for dedupe in (False, True):
            want = outcome(lambda rows=rows, dedupe=dedupe: reference_counts(rows, dedupe=dedupe))
            got = outcome(lambda rows=rows, dedupe=dedupe: counted(columns.task_counts(rows, dedupe=dedupe)))
            assert got == want, rows


def test_task_counts_on_many_rows_take_the_columns_and_agree() -> None:
    rng = np.random.default_rng(3)
    rows = [{"task_id": f"t{t}", "rollout_index": i, "reward": int(rng.random() < 0.6)}
            for t in range(2000) for i in range(4)]
    rows += [{"task_id": "t0", "rollout_index": 9, "reward": None, "judge_status": "error", "reason": "boom"}]
    cols = columns.RowColumns(rows)
    assert cols.task_keys() is not None  # the fast path applies
    assert counted(columns.task_counts(cols)) == reference_counts(rows)
    assert columns.task_counts(cols) is columns.task_counts(cols)  # read once per RowColumns


def reference_config(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """run_config row by row: every row's fields as a tuple, then agreement; each row's reply, one by one."""
    from whileai_core.messages import reply_text

    out = dict(zip(config._FIELDS, config._agreed_rows(rows)))
    answered = unclosed = 0
    for r in rows:
        text = reply_text(r)
        if "<think>" in text:
            text = config._THINK.sub("", text)
            unclosed += "<think>" in text
        answered += bool(text.strip())
    n = len(rows)
    share = (lambda x: round(x / n, 4) if n else None)
    return {"agreed": out, "answered": share(answered), "unclosed": share(unclosed),
            "truncated": share(sum(r.get("finish_reason") == "length" for r in rows)),
            "graded": share(sum(map(config._finite, (r.get("reward") for r in rows))))}


def test_run_config_matches_the_row_by_row_definition() -> None:
    class Text(str):
        pass

    rng = random.Random(7)
    choices: dict[str, list[Any]] = {
        "sampling": [{"temperature": 0.7}, {"temperature": 0.5, "max_tokens": 10}, {}, None, "bad", []],
        "policy_version": ["p", "p@abc", None, 3], "user_model": ["u1", "u2", None],
        "lineage": [{"system_prompt_sha": "s1", "judge_version": "j"}, {}, None],
        "judge_meta": [{"version": "v1"}, {}, None], "writer_model": ["w", "pinned", None],
        "final_text": ["hi", "", "  ", "<think>a</think>ok", "<think>open", None, 5, Text("sub"), Text("")],
        "messages": [[{"role": "assistant", "content": "yo"}], [], "x", [{"role": "assistant", "content": "<think>"}]],
        "finish_reason": ["length", "stop"], "reward": [0, 1, 0.5, None, True, float("nan"), float("inf"), 10**400],
    }
    for _ in range(2500):
        rows = [{f: rng.choice(v) for f, v in choices.items() if rng.random() < 0.4} for _ in range(rng.randint(0, 12))]
        got = config.run_config(rows)
        want = reference_config(rows)
        assert {f: (got[f], f in got["mixed"]) for f in config._FIELDS} == want["agreed"], rows
        assert (got["answered_share"], got["unclosed_think_share"], got["truncated_share"], got["graded_share"]) == \
            (want["answered"], want["unclosed"], want["truncated"], want["graded"]), rows


def reference_distinct(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows ordered as their values (first column first) at their first occurrence, and their counts."""
    order = np.lexsort(x.T[::-1], axis=0) if len(x) else np.zeros(0, dtype=np.int64)
    first: dict[tuple[float, ...], int] = {}
    counts: dict[tuple[float, ...], int] = {}
    for i in order.tolist():
        key = tuple(x[i].tolist())
        key = tuple(0.0 if v == 0 else v for v in key)  # -0.0 and 0.0 are one value
        first[key] = min(first.get(key, i), i)
        counts[key] = counts.get(key, 0) + 1
    return x[list(first.values())], np.array(list(counts.values()))


def test_distinct_rows_match_the_reference_with_signed_zeros_and_collisions() -> None:
    rng = np.random.default_rng(11)
    for trial in range(300):
        n, s = int(rng.integers(1, 300)), int(rng.integers(1, 10))
        kind = trial % 3
        if kind == 0:
            x = rng.integers(0, 5, size=(n, s)) / 4
        elif kind == 1:  # signed zeros: equal values, different bits
            x = np.where(rng.random((n, s)) < 0.5, -0.0, 0.0) + rng.integers(0, 2, size=(n, s))
        else:  # different rows built to share the grouping float (0.618 * 1 == 1 * 0.618): the checked fallback
            x = np.array([[0.6180339887498949, 0.0], [0.0, 1.0], [0.6180339887498949, 0.0]])
            assert stats._row_groups(x) is None
        cells, counts = stats._distinct_rows(x)
        ref, ref_counts = reference_distinct(x)
        assert np.array_equal(cells, ref) and np.array_equal(counts, ref_counts)
        assert np.array_equal(np.signbit(cells), np.signbit(ref))  # each at its first occurrence


def test_pass_at_on_dict_rows_equals_pass_at_on_mapping_rows() -> None:
    """The whole pass_at over row dicts (fields read with map(dict.get)) equals pass_at over the same rows as a
    Mapping that is not a dict (read with .get, row by row)."""
    rng = np.random.default_rng(2)
    rows = [{"task_id": f"t{t}", "rollout_index": i, "reward": int(rng.random() < 0.3 + 0.05 * (t % 9)),
             "final_text": "<think>x</think>a" if i else "b", "sampling": {"temperature": 0.7}}
            for t in range(300) for i in range(4)]
    fast, slow = pass_at(rows, seed=5), pass_at([MappingRow(r) for r in rows], seed=5)
    assert fast.to_dict() == slow.to_dict()
    assert not math.isnan(fast.pass_at_1)


@pytest.mark.parametrize("after_tasks", ["same order", "shuffled", "some missing, one extra"])
def test_compare_slices_equal_delta_report_on_each_slice_rows(after_tasks: str) -> None:
    """Each slice of ``compare(by=)`` (labels read from each task's first row, rates from the shared columns) is
    the paired delta of that slice's rows alone: same delta, interval and p-value for the same seed, whether
    after lists the same tasks in the same order (no lookups) or not."""
    from whileai_core.measure.compare import compare
    from whileai_core.measure.delta import delta_report

    rng = np.random.default_rng(8)
    p = rng.beta(2, 1.5, size=240)

    def side(shift: float) -> list[dict[str, Any]]:
        return [{"task_id": f"t{t}", "rollout_index": i, "reward": int(rng.random() < min(1.0, p[t] + shift)),
                 "scenario": {"tool": f"tool{t % 4}"} if t % 7 else {}} for t in range(240) for i in range(3)]

    before, after = side(0.0), side(0.1)
    if after_tasks != "same order":
        random.Random(9).shuffle(after)
    if after_tasks == "some missing, one extra":
        after = [r for r in after if int(r["task_id"][1:]) % 5] + [
            {"task_id": "extra", "rollout_index": 0, "reward": 1, "scenario": {"tool": "tool9"}}]
    got = compare(before, after, by="tool", seed=3)
    assert [s.name for s in got.slices] == ["(none)", "tool0", "tool1", "tool2", "tool3"]
    for s in got.slices:
        b_rows = [r for r in before if r["scenario"].get("tool", "(none)") == s.name]
        a_rows = [r for r in after if r["scenario"].get("tool", "(none)") == s.name]
        want = delta_report(b_rows, a_rows, seed=3)
        assert (s.n_tasks, s.delta, s.ci, s.p_value) == (want.n_paired, want.delta, want.ci, want.p_value)


def test_sequential_rounds_from_the_columns_equal_task_counts_on_each_rounds_rows() -> None:
    """``columns.round_counts`` (each round's counts from the classified columns) equals ``task_counts`` on the
    rows of that round, for shuffled rows with ungraded and partial rewards."""
    rng = random.Random(12)
    for _ in range(200):
        rows = [{"task_id": f"t{t}", "rollout_index": i, "reward": rng.choice([0, 1, 1, None, 0.5])}
                for t in range(rng.randint(1, 20)) for i in range(rng.randint(1, 6))]
        rng.shuffle(rows)
        index = [r["rollout_index"] for r in rows]
        cuts = [2, 4, 6]
        got = columns.round_counts(columns.RowColumns(rows, name="after"), index, cuts, name="after", dedupe=False)
        want = []
        for cut in cuts:
            tc = columns.task_counts([r for r, i in zip(rows, index) if i < cut], name="after")
            want.append({k: (int(c), int(n)) for k, c, n in zip(tc.keys, tc.c, tc.n)})
        assert got is not None and [list(g.items()) for g in got] == [list(w.items()) for w in want]


def run_keys(rng: random.Random) -> list[str]:
    """Task keys as runs: mostly one run a task, sometimes a task split over two runs, sometimes shuffled."""
    keys: list[str] = []
    for t in range(rng.randint(1, 80)):
        keys += [f"t{t}"] * rng.randint(1, 6)
    if rng.random() < 0.3:  # a task's rows written again later (two runs of one key)
        keys += [keys[rng.randrange(len(keys))]] * rng.randint(1, 3)
    if rng.random() < 0.2:
        rng.shuffle(keys)
    return keys


def test_task_index_runs_equal_the_one_pass_dict_index() -> None:
    """``task_index`` (runs taken as tasks when their heads are distinct, else the heads through a dict) equals
    ``_dict_index``, the one-pass definition, on seeded key lists of runs, split runs and shuffled keys."""
    rng = random.Random(341)
    for _ in range(600):
        keys = run_keys(rng)
        got, want = columns.task_index(keys, sample=4), columns._dict_index(keys)
        assert got.keys == want.keys, keys
        assert np.array_equal(got.first, want.first) and np.array_equal(got.codes, want.codes), keys


def test_int_rewards_read_as_int64_equal_numpy_floats() -> None:
    """An all-int reward column (read as int64, then float) gives numpy's float conversion bit for bit, past
    2**53 and past int64 (the fallback) included."""
    rng = random.Random(342)
    pool = [0, 1, -1, 2, 2**53 + 1, 2**62 + 3, -(2**63), 2**63 - 1, 2**64, 10**30]
    for _ in range(300):
        values = [rng.choice(pool) for _ in range(rng.randint(0, 12))]
        kinds, got = columns._floats(values)
        want = np.array(values, dtype=float) if values else np.zeros(0)
        assert kinds == set(map(type, values)) and got is not None
        assert got.tobytes() == want.tobytes(), values


def reference_pass_at_1(rows: list[Any]) -> tuple[dict[str, float], int, int]:
    """pass@1's per-task rates in plain Python (graded rows: rewards exactly 0 or 1, not bools), the graded rows
    and the rows skipped (None, bool, partial)."""
    n: dict[str, int] = {}
    c: dict[str, int] = {}
    skipped = 0
    for row in rows:
        r = row.get("reward")
        if r is None or type(r) is bool or r not in (0, 1):
            skipped += 1
            continue
        key = row["task_id"]
        n[key] = n.get(key, 0) + 1
        c[key] = c.get(key, 0) + int(r == 1)
    return {key: c[key] / n[key] for key in n}, sum(n.values()), skipped


def test_pass_at_on_seeded_run_rows_equals_the_reference_and_mapping_rows() -> None:
    """pass_at over seeded row sets (tasks of varying k in runs, split runs, shuffled order; None, missing, bool,
    float and partial rewards) gives the plain-Python per-task rates and counts, and the same result (every
    field, printed form) as over the same rows as a Mapping that is not a dict."""
    rng = random.Random(343)
    rewards = [0, 1, 0, 1, 1, 0.0, 1.0, None, True, False, 0.5]
    for trial in range(60):
        keys = run_keys(rng)
        rows: list[dict[str, Any]] = []
        for key in keys:
            row: dict[str, Any] = {"task_id": key}
            if rng.random() < 0.95:
                row["reward"] = rng.choice(rewards if trial % 2 else [0, 1])
            rows.append(row)
        per_task, graded, skipped = reference_pass_at_1(rows)
        got = pass_at(rows, seed=trial, draws=200)
        assert got.per_task == per_task and got.n_rows == graded and got.n_skipped == skipped, rows
        slow = pass_at([MappingRow(r) for r in rows], seed=trial, draws=200)
        assert got.to_dict() == slow.to_dict() and str(got) == str(slow), rows


def test_complete_after_a_first_read_equals_a_none_scan_of_the_rows() -> None:
    """``RowColumns.complete`` (the first read's None check deferred to the first question; task_id proved by
    its types) equals, for the column read first, "no row lacks it or holds None" by brute force, and for a later
    column "every row has the key" (an itemgetter read without a miss), on seeded rows with a field missing, None
    or present, whether or not ``task_keys`` ran between."""
    rng = random.Random(344)
    for _ in range(400):
        rows: list[dict[str, Any]] = []
        for t in range(rng.randint(1, 12)):
            row: dict[str, Any] = {}
            for name in ("task_id", "reward", "extra"):
                roll = rng.random()
                if roll < 0.9:
                    row[name] = f"t{t}" if name == "task_id" else rng.choice([0, 1])
                elif roll < 0.95:
                    row[name] = None
            rows.append(row)
        first = rng.choice(["task_id", "reward", "extra"])
        cols = columns.RowColumns(rows)
        cols.column(first)
        if rng.random() < 0.5:
            cols.task_keys()
        assert cols.complete(first) == all(row.get(first) is not None for row in rows), (rows, first)
        for name in ("task_id", "reward", "extra", "absent"):
            if name != first:
                cols.column(name)
                want = all(name in row for row in rows) and (name == "task_id" and cols.task_keys() is not None
                                                             or cols.has(name))
                assert cols.complete(name) == want, (rows, first, name)
