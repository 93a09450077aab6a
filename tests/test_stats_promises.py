"""Issue 15: statistics that keep their promises (rows edge cases, printed intervals, small-n coverage, noise band)."""

from __future__ import annotations

import numpy as np
import pytest

from whileai_core import rows as rows_mod
from whileai_core.measure import delta_report, eval_variance, pass_at, task_counts


def run_rows(counts, k, prefix="t"):
    """One run: task t has counts[t] passes out of k, with row_id and rollout_index as simulate writes them."""
    return [{"row_id": f"{prefix}{t}#{i}", "task_id": f"{prefix}{t}", "rollout_index": i, "reward": int(i < c)}
            for t, c in enumerate(counts) for i in range(k)]


# ------------------------------------------------------------------------------------------------
# rows edge cases
# ------------------------------------------------------------------------------------------------
def test_the_same_run_appended_twice_is_an_error_naming_the_first_repeat():
    rows = run_rows([4, 3, 2, 1, 0, 4, 3, 2], 4)
    with pytest.raises(ValueError, match=r"rows\[32\] repeats rows\[0\] \(row_id 't0#0'\).*dedupe=True"):
        pass_at(rows + rows)
    with pytest.raises(ValueError, match=r"after\[32\] repeats after\[0\]"):
        delta_report(rows, rows + rows)
    with pytest.raises(ValueError, match=r"runs\[1\]\[32\] repeats"):
        eval_variance(rows, rows + rows)


def test_dedupe_drops_repeats_and_counts_them():
    rows = run_rows([4, 3, 2, 1, 0, 4, 3, 2], 4)
    once = pass_at(rows)
    twice = pass_at(rows + rows[:5], dedupe=True)
    assert twice.k == once.k == 4 and twice.n_rows == once.n_rows == 32
    assert (twice.pass_pow_k, twice.pass_at_k) == (once.pass_pow_k, once.pass_at_k)
    assert "dropped 5 repeated rollout(s) (dedupe=True)" in twice.note
    assert task_counts(rows + rows, dedupe=True).n_duplicates == 32


def test_same_task_and_rollout_index_under_new_row_ids_is_a_repeat():
    rows = run_rows([2, 3, 1], 4)
    again = [dict(r, row_id=r["row_id"] + "-b") for r in rows[:2]]
    with pytest.raises(ValueError, match=r"rows\[12\] repeats rows\[0\] \(task 't0' rollout_index 0\)"):
        pass_at(rows + again)
    plain = [{"task_id": "a", "reward": 1}] * 3  # rows with neither row_id nor rollout_index cannot be checked
    assert pass_at(plain, min_tasks=1).n_rows == 3


def test_one_ungraded_row_leaves_its_task_out_not_the_run():
    rows = run_rows([4, 3, 2, 1, 0, 4, 3, 2, 1, 3], 4)
    rows[6]["reward"] = None  # task t1, rollout 2
    res = pass_at(rows)
    full = pass_at([r for r in rows if r["task_id"] != "t1"])
    assert res.k == 4 and res.n_groups_at_k == 9 and res.n_excluded == 1
    assert res.pass_pow_k == pytest.approx(full.pass_pow_k) and res.pass_at_k == pytest.approx(full.pass_at_k)
    assert "'t1' has 3 of 4 rollouts graded" in res.note
    assert "repeats" not in res.note
    three = pass_at(run_rows([3, 2, 1, 0], 3))  # a run that really asked for 3 says so, and how to fix it
    assert three.pass_pow_k is None and "tasks have 3 rollout(s) each; set repeats>=4" in three.note
    assert "k=2 is below min_k=4; pass min_k=2" in pass_at(rows, k=2).note


def test_task_ids_of_two_types_are_an_error_not_one_task():
    rows = [{"task_id": 1, "reward": 1}, {"task_id": 2, "reward": 0}, {"task_id": "1", "reward": 0}]
    with pytest.raises(ValueError, match=r"rows\[0\] has task_id 1 \(int\) and rows\[2\] has task_id '1' \(str\)"):
        pass_at(rows)
    with pytest.raises(ValueError, match=r"one type"):
        rows_mod.group_rows(rows)
    same = [{"task_id": 1, "reward": 1}, {"task_id": 1, "reward": 0}, {"task_id": 2, "reward": 0}]
    assert sorted(rows_mod.group_rows(same)) == ["1", "2"] and pass_at(same, min_tasks=1).n_groups == 2
