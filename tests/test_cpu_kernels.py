"""The numba kernels (damlite.cpu_kernels) against the NumPy reference path of damlite.network."""
from __future__ import annotations

import numpy as np
import pytest

from damlite import cpu_kernels
from damlite.interactions import make_interaction
from damlite.network import loss_and_gradient, relax

pytest.importorskip("numba")

CASES = [("polynomial", 3, {}), ("polynomial", 10, {}), ("rectified_polynomial", 1, {}), ("rectified_polynomial", 4, {}),
         ("leaky_rectified_polynomial", 1, {"epsilon": 0.3}),
         ("leaky_rectified_polynomial", 5, {"epsilon": 0.01, "leak": "code"}), ("exponential", 1, {})]


def _both(monkeypatch, fn):
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numpy")
    want = fn()
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    got = fn()
    return want, got


def _problem(seed=0, G=3, K=9, N=14, B=5):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (G, K, N)), np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize("name, n, kw", CASES)
@pytest.mark.parametrize("neurons", [slice(None), slice(10, 14), np.array([5, 0, 9])])
@pytest.mark.parametrize("m", [1, 3])
def test_loss_and_gradient_agree_to_rounding(monkeypatch, name, n, kw, neurons, m):
    mem, X = _problem()
    F = make_interaction(name, n, **kw)
    targets = X[:, neurons]
    b_in, b_out = np.array([0.05, 0.1, 0.2]), np.array([2.0, 1.0, 0.5])

    def run():
        return loss_and_gradient(mem, X, targets, F, b_in, b_out, error_exponent=m, neurons=neurons)

    (l0, g0, f0), (l1, g1, f1) = _both(monkeypatch, run)
    np.testing.assert_allclose(l1, l0, rtol=1e-12)
    np.testing.assert_allclose(g1, g0, rtol=1e-10, atol=1e-12 * np.abs(g0).max())
    np.testing.assert_array_equal(f1, f0)


@pytest.mark.parametrize("name, n, kw", CASES)
@pytest.mark.parametrize("zero_sign", [1, -1, "keep"])
def test_async_relaxation_reaches_the_same_states(monkeypatch, name, n, kw, zero_sign):
    mem, X = _problem(1)
    F = make_interaction(name, n, **kw)
    seeds = [11, 12, 13]

    def run():
        return relax(mem, X, F, np.array([0.1, 0.2, 0.05]), zero_sign=zero_sign, random_state=seeds, max_sweeps=15)

    (s0, c0, n0, f0), (s1, c1, n1, f1) = _both(monkeypatch, run)
    np.testing.assert_array_equal(s1, s0)
    np.testing.assert_array_equal(c1, c0)
    assert n1 == n0
    np.testing.assert_array_equal(f1, f0)


def test_exact_ties_follow_the_zero_sign_convention(monkeypatch):
    """Memories of +-1 entries give exact integer sums: Delta = 0 ties are decided by sign(0)."""
    rng = np.random.default_rng(3)
    mem = np.where(rng.random((1, 4, 8)) < 0.5, -1.0, 1.0)
    X = np.where(rng.random((6, 8)) < 0.5, -1.0, 1.0)
    F = make_interaction("polynomial", 2)
    for zero_sign in (1, -1, "keep"):
        (s0, *_), (s1, *_) = _both(monkeypatch, lambda: relax(mem, X, F, 1.0, zero_sign=zero_sign, random_state=0))
        np.testing.assert_array_equal(s1, s0)


def test_overflow_is_reported_not_hidden(monkeypatch):
    mem, X = _problem(2, N=40)
    F = make_interaction("polynomial", 400)
    (s0, c0, n0, f0), (s1, c1, n1, f1) = _both(monkeypatch, lambda: relax(mem * 40, X, F, 1.0, random_state=0))
    assert not f0.any() and not f1.any()
    (l0, g0, ok0), (l1, g1, ok1) = _both(monkeypatch, lambda: loss_and_gradient(mem * 40, X, X, F, 1.0, 1.0))
    np.testing.assert_array_equal(ok1, ok0)


def test_the_numpy_switch_turns_the_kernels_off(monkeypatch):
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numpy")
    assert not cpu_kernels.available()
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "")
    assert cpu_kernels.available()


def test_other_dtypes_and_interactions_use_numpy():
    from damlite.interactions import Interaction  # noqa: PLC0415

    class Custom(Interaction):
        def value_and_derivative(self, x, derivative=True):
            return x, (x * 0 + 1 if derivative else None)

    assert cpu_kernels.interaction_code(Custom()) is None
    from damlite.network import _fused_cpu_code  # noqa: PLC0415

    assert _fused_cpu_code(np, np.zeros((1, 2, 3), dtype=np.float16), make_interaction("polynomial", 2)) is None
    assert _fused_cpu_code(np, np.zeros((1, 2, 3), dtype=np.float32), make_interaction("polynomial", 2)) is not None
