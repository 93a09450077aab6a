"""The gate's exact tests without scipy.stats (issue 34): ``fisher_drop_pvalues`` as an integer hypergeometric
tail equals brute-force enumeration exactly and scipy.stats to rel 1e-12; ``fft_convolve`` and ``brent_root``
give scipy.signal's and scipy.optimize's floats bit for bit; and a whole gated run (fixed and
``--wai-sequential``) leaves scipy.stats, scipy.signal and scipy.optimize unimported."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.signal import fftconvolve
from scipy.stats import fisher_exact, hypergeom

from whileai_core.measure.sequential import _boundaries, boundaries, brent_root
from whileai_core.measure.stats import fft_convolve, fisher_drop_pvalues

ROOT = Path(__file__).resolve().parents[2]


def brute_force_p(b: int, bn: int, a: int, an: int) -> Fraction:
    """P(before passes >= b | total passes) by enumerating every way to place the passes among the 2x2 table's
    trials: each set of b + a passing trials out of bn + an is equally likely under no change."""
    total, passes = bn + an, b + a
    hits = sum(1 for chosen in itertools.combinations(range(total), passes) if sum(1 for t in chosen if t < bn) >= b)
    return Fraction(hits, math.comb(total, passes))


def tables(seed: int, count: int, most: int) -> np.ndarray:
    """``count`` seeded tables (b, bn, a, an) with 1..most trials a side and passes within them."""
    rng = np.random.default_rng(seed)
    bn = rng.integers(1, most + 1, count)
    an = rng.integers(1, most + 1, count)
    return np.stack([rng.integers(0, bn + 1), bn, rng.integers(0, an + 1), an], axis=1)


def test_equals_brute_force_enumeration_exactly() -> None:
    for b, bn, a, an in tables(0, 150, 7).tolist():
        assert fisher_drop_pvalues(b, bn, a, an) == float(brute_force_p(b, bn, a, an)), (b, bn, a, an)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_agrees_with_scipy_to_rel_1e_12(seed: int) -> None:
    t = tables(seed, 3000, 200 if seed == 3 else 16)
    b, bn, a, an = t.T
    ours = fisher_drop_pvalues(b, bn, a, an)
    np.testing.assert_allclose(ours, hypergeom.sf(b - 1, bn + an, b + a, bn), rtol=1e-12, atol=0)
    for row in t[:200].tolist():  # Fisher's exact test itself, one-sided for a drop (before passes more often)
        rb, rbn, ra, ran = row
        expected = fisher_exact([[rb, rbn - rb], [ra, ran - ra]], alternative="greater").pvalue
        assert math.isclose(fisher_drop_pvalues(*row), expected, rel_tol=1e-12), row


def test_shapes_scalars_and_the_cases_scipy_refuses() -> None:
    p = fisher_drop_pvalues(2, 4, 0, 4)
    assert isinstance(p, np.floating) and np.ndim(p) == 0 and p == float(brute_force_p(2, 4, 0, 4))
    grid = fisher_drop_pvalues(np.array([[1], [3]]), 4, np.array([0, 2, 4]), 4)  # broadcast to (2, 3)
    assert grid.shape == (2, 3) and grid[1, 0] == fisher_drop_pvalues(3, 4, 0, 4)
    assert fisher_drop_pvalues([], [], [], []).shape == (0,)
    assert fisher_drop_pvalues(0, 5, 3, 5) == 1.0  # no before pass: nothing to drop from
    # scipy's hypergeom gives nan where its arguments are out of range; so do we
    for row in ((0, 0, 0, 0), (-1, 4, -2, 4), (6, 4, 5, 4)):
        assert np.isnan(fisher_drop_pvalues(*row)) and np.isnan(hypergeom.sf(row[0] - 1, row[1] + row[3],
                                                                             row[0] + row[2], row[1]))


def test_fft_convolve_is_scipy_signal_fftconvolve_bit_for_bit() -> None:
    rng = np.random.default_rng(4)
    for _ in range(200):
        a, b = rng.random(int(rng.integers(1, 4000))), rng.random(int(rng.integers(1, 600)))
        assert np.array_equal(fft_convolve(a, b), fftconvolve(a, b))


def test_brent_root_is_scipy_brentq_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    for _ in range(500):
        c, s, xtol = rng.normal(0, 3), rng.uniform(0.2, 5), 10.0 ** -int(rng.integers(4, 13))
        a, b = c - rng.uniform(0.1, 20), c + rng.uniform(0.1, 50)

        def f(x: float, c: float = c, s: float = s) -> float:
            return math.tanh((x - c) / s) + 0.1 * (x - c) ** 3 / (1 + (x - c) ** 2)

        assert brent_root(f, a, b, xtol=xtol) == brentq(f, a, b, xtol=xtol)
    with pytest.raises(ValueError, match="different signs"):
        brent_root(lambda x: x * x + 1, -1.0, 1.0, xtol=1e-10)


def test_sequential_boundaries_equal_those_computed_with_scipy_brentq(monkeypatch: pytest.MonkeyPatch) -> None:
    looks = [(0.25, 0.5, 0.75, 1.0), (0.5, 1.0), (1 / 3, 2 / 3, 1.0), (0.2, 0.4, 0.6, 0.8, 1.0)]
    ours = [boundaries(f, alpha=alpha) for f in looks for alpha in (0.025, 0.01)]
    _boundaries.cache_clear()
    monkeypatch.setattr("whileai_core.measure.sequential.brent_root",
                        lambda f, a, b, xtol: brentq(f, a, b, xtol=xtol))
    theirs = [boundaries(f, alpha=alpha) for f in looks for alpha in (0.025, 0.01)]
    _boundaries.cache_clear()
    assert all(np.array_equal(x, y) for x, y in zip(ours, theirs))


GATED_RUN = """
import sys

import pytest

args = ["-q", "-p", "no:cacheprovider", "-p", "pytest_whileai.plugin", "--wai-trials=8"]
assert pytest.main([*args, "--wai-save=main"]) == 0
for extra in ([], ["--wai-sequential", "--wai-max-drop=0.3"]):
    assert pytest.main([*args, "--wai-baseline=main", *extra]) == 0
loaded = sorted(m for m in ("scipy.stats", "scipy.signal", "scipy.optimize") if m in sys.modules)
print("LOADED", loaded)
"""

SUITE = """
import random

import pytest

ASKS = [f"ask {i}" for i in range(300)]


@pytest.mark.wai_scenarios(ASKS)
def test_agent(wai_eval):
    rate = random.Random(wai_eval.key).uniform(0.6, 1.0)
    wai_eval.record([float(random.Random(f"{wai_eval.key}-{i}").random() < rate) for i in wai_eval.trial_indices()])
"""


def test_a_gated_run_imports_neither_scipy_stats_nor_signal_nor_optimize(tmp_path: Path) -> None:
    """Fixed and sequential gated runs in one fresh interpreter (300 scenarios: the paired test takes its exact
    lattice path, Fisher's test runs per scenario, the sequential boundaries are solved)."""
    (tmp_path / "test_agent.py").write_text(textwrap.dedent(SUITE))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTEST_ADDOPTS"))}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", GATED_RUN], cwd=tmp_path, capture_output=True, text=True, env=env,
                         check=False, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "LOADED []" in out.stdout, out.stdout[-2000:]
