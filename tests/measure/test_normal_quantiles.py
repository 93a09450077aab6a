"""The stdlib normal CDF and quantile behind the sequential gate (``measure.quantiles.normal``), against
``scipy.special``; and the gate's boundaries built on them against the same boundaries built on scipy's."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from whileai_core.measure import sequential
from whileai_core.measure.quantiles.normal import normal_cdf, normal_quantile


def test_normal_cdf_matches_scipy_ndtr():
    x = np.concatenate([np.linspace(-40, 40, 40_001), np.random.default_rng(3).normal(0, 3, 5000), [0.0, -0.0]])
    ref = ndtr(x)
    got = normal_cdf(x)
    assert got.shape == x.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, ref, rtol=4e-13, atol=1e-300)  # below: subnormals where scipy gives 0
    gate = np.abs(x) < 8  # the z's a gate meets
    np.testing.assert_allclose(got[gate], ref[gate], rtol=4e-15, atol=1e-300)
    assert float(normal_cdf(0.0)) == 0.5 and normal_cdf(np.inf) == 1.0 and normal_cdf(-np.inf) == 0.0


def test_normal_quantile_matches_scipy_ndtri():
    p = np.concatenate([np.logspace(-300, -1, 3000), np.linspace(0.001, 0.999, 3000), 1 - np.logspace(-15, -2, 200)])
    got = np.array([normal_quantile(float(v)) for v in p])
    np.testing.assert_allclose(got, ndtri(p), rtol=2e-15, atol=1e-15)
    assert normal_quantile(0.0) == -np.inf and normal_quantile(1.0) == np.inf and normal_quantile(0.5) == 0.0


def _scipy_boundaries(monkeypatch, fractions, alpha):
    with monkeypatch.context() as m:
        m.setattr(sequential, "normal_cdf", ndtr)
        m.setattr(sequential, "normal_quantile", lambda p: float(ndtri(p)))
        sequential._boundaries.cache_clear()
        try:
            return sequential.boundaries(fractions, alpha=alpha)
        finally:
            sequential._boundaries.cache_clear()


def test_boundaries_agree_with_the_scipy_built_ones_on_seeded_designs(monkeypatch):
    """40 seeded designs (1-6 looks, ties, alpha 0.005-0.1): every boundary within 1e-9 of scipy's (the root
    search's own tolerance is 1e-10 on the score scale), inf where scipy's is inf."""
    rng = np.random.default_rng(34)
    for _ in range(40):
        looks = int(rng.integers(1, 7))
        fr = np.sort(rng.uniform(0.05, 1.0, looks))
        fr[-1] = 1.0
        if looks > 2 and rng.random() < 0.3:
            fr[1] = fr[0]  # a look with no new information
        alpha = float(rng.uniform(0.005, 0.1))
        ours = sequential.boundaries(fr.tolist(), alpha=alpha)
        theirs = _scipy_boundaries(monkeypatch, fr.tolist(), alpha)
        assert np.array_equal(np.isinf(ours), np.isinf(theirs))
        fin = np.isfinite(ours)
        np.testing.assert_allclose(ours[fin], theirs[fin], rtol=0, atol=1e-9)


def test_the_published_obrien_fleming_type_boundaries():
    # Jennison & Turnbull (2000), Table 7.6 style: 4 equally spaced looks, one-sided 0.025
    np.testing.assert_allclose(sequential.boundaries([0.25, 0.5, 0.75, 1.0]), [4.33, 2.96, 2.36, 2.01], atol=6e-3)


def test_a_sequential_gate_run_imports_no_scipy_special():
    import subprocess
    import sys

    code = ("import sys; from whileai_core.measure.sequential import sequential_test, SequentialPlan;"
            "b = {f's{i}': (7, 8) for i in range(30)};"
            "r = [{f's{i}': (2, 2) for i in range(30)}];"
            "print(sequential_test(b, r, plan=SequentialPlan(2, 8)).decision);"
            "print('scipy.special' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[-1] == "False", out


@pytest.mark.parametrize("p", [1e-320, 0.025, 0.5, 0.975])
def test_quantile_inverts_the_cdf(p):
    assert float(normal_cdf(normal_quantile(p))) == pytest.approx(p, rel=1e-13)
