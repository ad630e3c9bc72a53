"""The paper's homogeneity claims, as executable checks (damlite.paper.theory)."""
import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from damlite.paper import capacity as cap
from damlite.paper import theory as th
from damlite.interactions import make_interaction
from damlite.network import energy_difference

HOMOGENEOUS = ["polynomial", "rectified_polynomial"]


@given(st.sampled_from(HOMOGENEOUS), st.integers(1, 12), st.floats(1e-3, 1e3),
       st.lists(st.floats(-10, 10), min_size=1, max_size=20))
@settings(max_examples=100, deadline=None)
def test_polynomials_are_homogeneous(name, n, alpha, xs):
    F = make_interaction(name, n)
    x = np.asarray(xs)
    res = th.homogeneity_residual(F, x, alpha)
    scale = np.maximum(np.abs(F(alpha * x)), np.finfo(float).tiny)
    assert np.all(np.abs(res) <= 1e-12 * scale + 1e-300)


@given(st.integers(2, 8), st.floats(1e-3, 0.99), st.floats(-10, -0.1), st.floats(1e-4, 0.5))
@settings(max_examples=50, deadline=None)
def test_leaky_is_not_homogeneous_on_the_negative_side(n, alpha, x, eps):
    F = make_interaction("leaky_rectified_polynomial", n, eps)
    res = th.homogeneity_residual(F, np.array([x]), alpha)[0]
    assert res == pytest.approx(eps * x * (alpha**n - alpha), rel=1e-9)
    assert res != 0


@given(st.sampled_from(HOMOGENEOUS), st.integers(2, 8), st.floats(1e-3, 1.0), st.integers(0, 2**31))
@settings(max_examples=25, deadline=None)
def test_update_sign_does_not_depend_on_the_scale(name, n, a, seed):
    rng = np.random.default_rng(seed)
    mem = rng.uniform(-1, 1, (2, 6, 20))
    states = cap.random_patterns((2, 5, 20), rng)
    r = th.sign_agreement(mem, states, make_interaction(name, n), a, 1.0)
    assert np.all(r.agreement == 1.0)


@pytest.mark.parametrize("name", HOMOGENEOUS)
@pytest.mark.parametrize("n", [2, 3, 7])
def test_beta_outside_equals_beta_inside_to_the_n(name, n):
    rng = np.random.default_rng(n)
    mem = rng.uniform(-1, 1, (3, 8, 30))
    pats = cap.random_patterns((3, 10, 30), rng)
    r = th.learning_agreement(mem, pats, pats, make_interaction(name, n), 1 / (30 * 0.4))
    assert r["argument"] < 1e-12 and r["loss"] < 1e-12 and r["gradient"] < 1e-12


def test_learning_agreement_detects_a_non_homogeneous_f():
    rng = np.random.default_rng(0)
    mem = rng.uniform(-1, 1, (1, 8, 30))
    pats = cap.random_patterns((1, 10, 30), rng)
    r = th.learning_agreement(mem, pats, pats, make_interaction("leaky_rectified_polynomial", 3, 0.1), 1 / 30)
    assert r["argument"] > 1e-3


def test_leaky_update_changes_with_the_scale_on_random_networks():
    rng = np.random.default_rng(0)
    mem = rng.uniform(-1, 1, (2, 20, 50))
    states = cap.random_patterns((2, 20, 50), rng)
    r = th.sign_agreement(mem, states, make_interaction("leaky_rectified_polynomial", 3, 0.1), 1 / 50)
    assert np.all(r.agreement < 0.99)


def test_exponential_counterexample_in_exact_arithmetic():
    mem, state, i = th.exponential_counterexample()
    F = make_interaction("exponential")
    d1 = th.energy_difference_mp(mem, state, F, 1)[i]
    dN = th.energy_difference_mp(mem, state, F, mpmath.mpf(1) / 4)[i]
    assert d1 < 0 < dN
    closed = lambda a: (mpmath.e ** (2 * a) - mpmath.e ** (4 * a)) + 3 * (1 - mpmath.e ** (-2 * a))
    with mpmath.workdps(60):
        assert mpmath.almosteq(d1, closed(1), 1e-40)
        assert mpmath.almosteq(dN, closed(mpmath.mpf(1) / 4), 1e-40)
    r = th.sign_agreement(mem[None], state[None], F, 0.25, 1.0)
    assert r.disagree[0, 0, i]


@given(st.integers(0, 2**31), st.sampled_from([1e-2, 1.0, 30.0]))
@settings(max_examples=15, deadline=None)
def test_shift_inside_exp_keeps_the_exact_sign(seed, a):
    rng = np.random.default_rng(seed)
    mem = rng.uniform(-1, 1, (1, 4, 6))
    state = cap.random_patterns((6,), rng)
    shifted = th.shifted_exponential_difference(mem, state[None], a)[0, 0]
    exact = th.energy_difference_mp(mem[0], state, make_interaction("exponential"), a)
    for i in range(6):
        if abs(exact[i]) > mpmath.mpf(10) ** -30 * mpmath.e ** (a * 6):
            assert (shifted[i] >= 0) == (exact[i] >= 0)


def test_shift_survives_where_the_plain_exponential_overflows():
    rng = np.random.default_rng(1)
    mem = cap.random_patterns((1, 5, 1000), rng)
    states = cap.flip_bits(mem[:, :2], 0.05, rng)  # overlap 900 with its own memory
    F = make_interaction("exponential")
    plain = energy_difference(mem, states, F, 1.0)
    assert not np.all(np.isfinite(plain))  # e^{900} overflows float64 (largest ~ e^{709})
    shifted = th.shifted_exponential_difference(mem, states, 1.0)
    assert np.all(np.isfinite(shifted))
    assert np.array_equal(th.update_signs(shifted)[0], mem[0, :2])  # each probe goes back to its memory


def test_mp_reference_matches_the_kernel():
    rng = np.random.default_rng(2)
    mem = rng.uniform(-1, 1, (3, 7))
    state = cap.random_patterns((7,), rng)
    for name in ["polynomial", "rectified_polynomial", "leaky_rectified_polynomial", "exponential"]:
        F = make_interaction(name, 3, 0.05)
        ref = np.array([float(v) for v in th.energy_difference_mp(mem, state, F, 0.5)])
        got = energy_difference(mem[None], state[None], F, 0.5)[0, 0]
        assert np.allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_trained_networks_recall_and_keep_their_updates_under_rescaling():
    F = make_interaction("rectified_polynomial", 3)
    mem, pats, recall = th.train_random_networks(32, 4, 8, F, temperature=(3 / 32) ** (1 / 3), n_networks=2,
                                                 epochs=40, random_state=0)
    assert mem.shape == (2, 8, 32) and pats.shape == (2, 4, 32)
    assert recall >= 0.75
    r = th.sign_agreement(mem, cap.flip_bits(pats, 0.1, 1), F, 1 / 32, 1.0, exact=False)
    assert np.all(r.agreement == 1.0)
