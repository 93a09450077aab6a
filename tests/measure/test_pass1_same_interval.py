"""The same rows print the same pass@1 interval whichever function reads them (issue 34's exact bootstrap made
delta_report's sides exact while pass_at's pass@1 at k > 1 still came from joint draws; lesson 5 printed two
intervals for one side)."""

import numpy as np
import pytest

import whileai as wai


def _rows(rng: np.random.Generator, n_tasks: int, k: int) -> list[dict]:
    """Binary rewards, k rollouts per task, task difficulty from a Beta(2, 2)."""
    rows = []
    for t in range(n_tasks):
        p = rng.beta(2, 2)
        rows += [{"task_id": f"t{t}", "rollout_index": i, "reward": int(rng.random() < p)} for i in range(k)]
    return rows


@pytest.mark.parametrize("seed", range(8))
def test_pass_at_pass1_interval_equals_delta_report_side(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    n_tasks = int(rng.integers(10, 60))
    a, b = _rows(rng, n_tasks, k), _rows(rng, n_tasks, k)
    for method in ("percentile", "basic", "bca"):
        pa, pb = wai.pass_at(a, method=method), wai.pass_at(b, method=method)
        d = wai.delta_report(a, b, method=method)
        assert pa.ci95 == d.before_ci, (k, n_tasks, method)
        assert pb.ci95 == d.after_ci, (k, n_tasks, method)
        assert pa.ci95 is not None and pa.ci95[0] <= pa.pass_at_1 <= pa.ci95[1]
