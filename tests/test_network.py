"""The batched kernels against the mpmath loop reference (tests/reference.py).

Energy differences and update signs, loss and gradient (autoassociative and
classification-style ``neurons`` slices), finite differences, batching over
networks, chunking, and the relaxation's fixed points, zero-sign rule and cycles.
"""
from __future__ import annotations

import numpy as np
import pytest

import reference
from damlite import DenseAssociativeMemory
from damlite.interactions import make_interaction
from damlite.network import energy_difference, loss_and_gradient, relax, similarities

from conftest import INTERACTIONS, VARIANTS, random_problem

NS = {"polynomial": [1, 2, 3, 6], "rectified_polynomial": [1, 2, 3, 6],
      "leaky_rectified_polynomial": [1, 2, 3, 6], "exponential": [1]}
CASES = [(name, n) for name in INTERACTIONS for n in NS[name]]
EPS = 0.05  # leaky slope used throughout (not the default, so that it is really passed on)


def _scales(name, n, variant, N, T):
    dam = DenseAssociativeMemory(3, interaction=name, n=n, variant=variant, temperature=T, epsilon=EPS,
                                 backend="numpy")
    return dam.scales(N), dam.interaction_


# --------------------------------------------------------------- energy differences
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name, n", CASES)
def test_energy_difference_matches_reference(name, n, variant):
    K, N, B = 4, 7, 3
    memories, states = random_problem(10 * n + len(name), K, N, B)
    (a, _, _), F = _scales(name, n, variant, N, 1.0)
    got = energy_difference(memories[None], states, F, a)[0]
    want = np.array(reference.to_float(reference.energy_difference(memories, states, name, n, a, EPS)))
    size = np.array(reference.to_float(reference.energy_terms_scale(memories, states, name, n, a, EPS)))
    np.testing.assert_array_less(np.abs(got - want), 1e-13 * size + 1e-300)
    clear = np.abs(want) > 1e-10 * size  # decided by more than rounding: signs must agree exactly
    exact_zero = want == 0  # e.g. rectified F with every argument negative
    assert np.all(got[exact_zero] == 0)
    assert (clear | exact_zero).mean() > 0.8
    assert np.array_equal(np.sign(got[clear]), np.sign(want[clear]))


def test_energy_difference_neurons_slice_and_batch():
    """A slice of neurons, per-network scales, and (B, N) vs (G, B, N) states."""
    G, K, N, B = 3, 5, 9, 4
    rng = np.random.default_rng(1)
    memories = rng.uniform(-1, 1, (G, K, N))
    states = np.where(rng.random((G, B, N)) < 0.5, -1.0, 1.0)
    F = make_interaction("rectified_polynomial", 3)
    scales = np.array([1.0, 1 / N, 0.3])
    got = energy_difference(memories, states, F, scales, neurons=slice(2, 7))
    assert got.shape == (G, B, 5)
    for g in range(G):
        want = reference.energy_difference(memories[g], states[g], "rectified_polynomial", 3, scales[g],
                                           neurons=slice(2, 7))
        np.testing.assert_allclose(got[g], reference.to_float(want), rtol=1e-12, atol=1e-14)
    shared = energy_difference(memories, states[0], F, scales)
    for g in range(G):
        np.testing.assert_array_equal(shared[g], energy_difference(memories[g:g + 1], states[0], F, scales[g])[0])


def test_energy_difference_chunking_changes_nothing():
    memories, states = random_problem(3, K=6, N=11, B=17)
    F = make_interaction("polynomial", 4)
    full = energy_difference(memories[None], states, F, 0.1)
    tiny = energy_difference(memories[None], states, F, 0.1, memory_budget=1)  # one row at a time
    np.testing.assert_array_equal(full, tiny)


def test_similarities():
    memories, states = random_problem(4, K=3, N=5, B=2)
    np.testing.assert_allclose(similarities(memories[None], states)[0], states @ memories.T, rtol=1e-15)


def test_return_underflow_flags_only_real_underflow():
    F = make_interaction("polynomial", 200)
    rng = np.random.default_rng(0)
    N = 20
    memories = rng.uniform(-0.2, 0.2, (1, 3, N)).astype(np.float32)
    states = np.where(rng.random((2, N)) < 0.5, -1, 1).astype(np.float32)
    delta, under = energy_difference(memories, states, F, 1 / N, return_underflow=True)
    assert np.all(delta == 0) and bool(under[0])
    ok, under_ok = energy_difference(memories.astype(np.float64), states.astype(np.float64),
                                     make_interaction("polynomial", 3), 1 / N, return_underflow=True)
    assert not bool(under_ok[0])
    zero = np.zeros((1, 3, N))  # Delta == 0 because F(0) - F(0) = 0 exactly: not underflow
    _, under_zero = energy_difference(zero, states.astype(np.float64), F, 1.0, return_underflow=True)
    assert not bool(under_zero[0])


# ----------------------------------------------------------------- loss, gradient
def _learning_case(seed, classification, K=3, N=6, B=3):
    """(memories, probes, targets, neurons): continuous probes; targets = probes, or ±1 class neurons."""
    rng = np.random.default_rng(seed)
    memories = rng.uniform(-1, 1, (K, N))
    if not classification:
        probes = rng.uniform(-1, 1, (B, N))
        return memories, probes, probes.copy(), slice(None)
    n_in, C = N - 2, 2
    probes = np.concatenate([rng.uniform(-1, 1, (B, n_in)), -np.ones((B, C))], axis=1)
    targets = -np.ones((B, C))
    targets[np.arange(B), rng.integers(0, C, B)] = 1.0
    return memories, probes, targets, slice(n_in, N)


# normalized T; the original uses T * N, its equivalent for homogeneous F (beta_out = beta_in**n)
T_NORM = {1: 0.3, 2: 0.4, 3: 0.5, 6: 0.6}


@pytest.mark.parametrize("classification", [False, True], ids=["auto", "classes"])
@pytest.mark.parametrize("m", [1, 2])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name, n", CASES)
def test_loss_and_gradient_match_reference(name, n, variant, m, classification):
    memories, probes, targets, neurons = _learning_case(n + 7 * m + 3 * classification, classification)
    K, N = memories.shape
    T = T_NORM[n] * (N if variant == "original" else 1)
    (_, b_in, b_out), F = _scales(name, n, variant, N, T)
    loss, grad, finite = loss_and_gradient(memories[None], probes, targets, F, b_in, b_out,
                                           error_exponent=m, neurons=neurons)
    assert bool(finite[0])
    want_loss = float(reference.loss(memories, probes, targets, name, n, b_in, b_out, m, neurons, EPS))
    want_grad = np.array(reference.to_float(
        reference.gradient(memories, probes, targets, name, n, b_in, b_out, m, neurons, EPS)))
    assert float(loss[0]) == pytest.approx(want_loss, rel=1e-12)
    scale = np.max(np.abs(want_grad))
    assert scale > 1e-6  # the case is not saturated: the gradient says something
    np.testing.assert_array_less(np.abs(grad[0] - want_grad), 1e-10 * scale)
    # gradient=False gives the same loss and no gradient
    loss_only, none, _ = loss_and_gradient(memories[None], probes, targets, F, b_in, b_out,
                                           error_exponent=m, neurons=neurons, gradient=False)
    assert none is None and float(loss_only[0]) == pytest.approx(float(loss[0]), rel=1e-14)


@pytest.mark.parametrize("name, n", [("rectified_polynomial", 3), ("leaky_rectified_polynomial", 2),
                                     ("exponential", 1), ("polynomial", 5)])
@pytest.mark.parametrize("classification", [False, True], ids=["auto", "classes"])
def test_gradient_matches_finite_differences_and_mpmath_diff(name, n, classification):
    memories, probes, targets, neurons = _learning_case(5 + n, classification, K=3, N=6, B=2)
    K, N = memories.shape
    (_, b_in, b_out), F = _scales(name, n, "normalized", N, T_NORM.get(n, 0.5))
    _, grad, _ = loss_and_gradient(memories[None], probes, targets, F, b_in, b_out, error_exponent=2,
                                   neurons=neurons)
    h = 1e-6
    rng = np.random.default_rng(0)
    entries = [(mu, k) for mu in range(K) for k in range(N)]
    for mu, k in entries:
        up, down = memories.copy(), memories.copy()
        up[mu, k] += h
        down[mu, k] -= h
        lp = loss_and_gradient(up[None], probes, targets, F, b_in, b_out, error_exponent=2, neurons=neurons,
                               gradient=False)[0][0]
        lm = loss_and_gradient(down[None], probes, targets, F, b_in, b_out, error_exponent=2, neurons=neurons,
                               gradient=False)[0][0]
        fd = (float(lp) - float(lm)) / (2 * h)
        assert fd == pytest.approx(float(grad[0, mu, k]), rel=1e-5, abs=1e-8 * np.max(np.abs(grad)))
    for idx in rng.choice(len(entries), 2, replace=False):  # a high-precision numerical derivative too
        mu, k = entries[idx]
        num = float(reference.gradient_entry_numeric(memories, probes, targets, name, mu, k, n, b_in, b_out, 2,
                                                     neurons, EPS))
        assert float(grad[0, mu, k]) == pytest.approx(num, rel=1e-10, abs=1e-12 * np.max(np.abs(grad)))


def test_loss_and_gradient_batched_networks_and_chunks():
    G, K, N, B = 3, 4, 6, 5
    rng = np.random.default_rng(2)
    memories = rng.uniform(-1, 1, (G, K, N))
    probes = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    F = make_interaction("leaky_rectified_polynomial", 3, 0.1)
    b_in, b_out = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 0.5])
    loss, grad, finite = loss_and_gradient(memories, probes, probes, F, b_in, b_out, error_exponent=2)
    chunked = loss_and_gradient(memories, probes, probes, F, b_in, b_out, error_exponent=2, memory_budget=1)
    np.testing.assert_allclose(chunked[0], loss, rtol=1e-13)
    np.testing.assert_allclose(chunked[1], grad, rtol=1e-12, atol=1e-14)
    assert finite.all()
    for g in range(G):
        lg, gg, _ = loss_and_gradient(memories[g:g + 1], probes, probes, F, b_in[g], b_out[g], error_exponent=2)
        assert float(lg[0]) == pytest.approx(float(loss[g]), rel=1e-14)
        np.testing.assert_allclose(gg[0], grad[g], rtol=1e-13, atol=1e-15)


def test_targets_must_match_evaluated_neurons():
    memories, probes = random_problem(0, K=2, N=5, B=2)
    with pytest.raises(ValueError, match="targets"):
        loss_and_gradient(memories[None], probes, probes, make_interaction("polynomial", 2), neurons=slice(0, 2))


def test_nonfinite_loss_is_reported_per_network():
    _, probes = random_problem(0, K=2, N=50, B=2)
    memories = np.stack([probes[0], -probes[1]])  # similarities reach N - 1 = 49: 49**30 > float32 max
    F = make_interaction("polynomial", 30)
    stacked = np.stack([memories, memories]).astype(np.float32)
    loss, grad, finite = loss_and_gradient(stacked, probes.astype(np.float32), probes.astype(np.float32), F,
                                           np.array([1.0, 1 / 50], dtype=np.float32), 1.0)
    assert list(np.asarray(finite)) == [False, True]


# -------------------------------------------------------------------- relaxation
def _energy(memories, state, F, a):
    return -float(np.sum(F(a * (memories @ state))))


@pytest.mark.parametrize("name, n", [("rectified_polynomial", 3), ("polynomial", 2), ("exponential", 1),
                                     ("leaky_rectified_polynomial", 4)])
@pytest.mark.parametrize("mode", ["async", "sync"])
def test_relax_ends_at_fixed_points(name, n, mode):
    memories, states = random_problem(8, K=5, N=12, B=6)
    F = make_interaction(name, n, EPS)
    a = 1 / 12
    out, converged, sweeps, finite = relax(memories[None], states, F, a, mode=mode, random_state=0)
    out, converged = out[0], converged[0]
    assert finite.all() and set(np.unique(out)) <= {-1.0, 1.0}
    signs = reference.update_signs(memories, out, name, n, a, EPS)
    for b in range(out.shape[0]):
        if converged[b]:
            assert np.array_equal(out[b], signs[b])  # a fixed point of xi_i <- sign(Delta_i)
    if mode == "async":
        assert converged.all()
        for b in range(out.shape[0]):  # asynchronous updates never raise E = -sum F(a zeta . xi)
            assert _energy(memories, out[b], F, a) <= _energy(memories, states[b], F, a) + 1e-12


def test_sync_one_sweep_is_sign_of_energy_difference():
    memories, states = random_problem(9, K=4, N=10, B=5)
    F = make_interaction("rectified_polynomial", 2)
    out, _, sweeps, _ = relax(memories[None], states, F, 1.0, mode="sync", max_sweeps=1)
    assert sweeps == 1
    assert np.array_equal(out[0], np.array(reference.update_signs(memories, states, "rectified_polynomial", 2)))


def test_async_matches_a_plain_loop_in_the_same_order():
    """One async sweep = the paper's neuron-by-neuron update, in the order relax drew."""
    memories, states = random_problem(11, K=4, N=9, B=3)
    F = make_interaction("polynomial", 3)
    out, _, _, _ = relax(memories[None], states, F, 1.0, mode="async", max_sweeps=1, random_state=42)
    order = np.argsort(np.random.default_rng(42).random((1, 9)), axis=1)[0]  # documented: seeded per sweep
    want = states.copy()
    for b in range(want.shape[0]):
        for i in order:
            delta = reference.energy_difference(memories, want[b:b + 1], "polynomial", 3, 1.0, neurons=[i])[0][0]
            want[b, i] = 1.0 if delta >= 0 else -1.0
    np.testing.assert_array_equal(out[0], want)


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_zero_sign_conventions(mode):
    memories = np.zeros((1, 2, 6))  # every Delta is exactly F(0) - F(0) = 0
    states = np.array([[1.0, -1, 1, -1, 1, -1]])
    F = make_interaction("polynomial", 2)
    up = relax(memories, states, F, mode=mode, zero_sign=1)[0][0]
    down = relax(memories, states, F, mode=mode, zero_sign=-1)[0][0]
    keep, conv, sweeps, _ = relax(memories, states, F, mode=mode, zero_sign="keep")
    assert np.all(up == 1) and np.all(down == -1)
    np.testing.assert_array_equal(keep[0], states)
    assert bool(conv[0, 0]) and sweeps == 1
    with pytest.raises(ValueError, match="zero_sign"):
        relax(memories, states, F, zero_sign=0)
    with pytest.raises(ValueError, match="mode"):
        relax(memories, states, F, mode="parallel")


def test_sync_detects_a_two_cycle():
    """Classic Hopfield (F = x**2), one memory (1, 1): sync flips (1, -1) <-> (-1, 1) forever."""
    memories = np.array([[[1.0, 1.0]]])
    states = np.array([[1.0, -1.0]])
    F = make_interaction("polynomial", 2)
    out, converged, sweeps, finite = relax(memories, states, F, mode="sync", max_sweeps=7)
    assert not bool(converged[0, 0]) and sweeps == 7 and bool(finite[0])
    np.testing.assert_array_equal(out[0, 0], [-1.0, 1.0])  # 7 flips: odd
    out_a, conv_a, _, _ = relax(memories, states, F, mode="async", max_sweeps=7, random_state=0)
    assert bool(conv_a[0, 0]) and abs(out_a[0, 0].sum()) == 2  # async settles on +-(1, 1)


def test_relax_batched_networks_are_independent():
    G, K, N, B = 3, 4, 10, 4
    rng = np.random.default_rng(5)
    memories = rng.uniform(-1, 1, (G, K, N))
    states = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    F = make_interaction("rectified_polynomial", 3)
    out, conv, _, _ = relax(memories, states, F, [1.0, 0.1, 1 / N], mode="sync")
    for g in range(G):
        single = relax(memories[g:g + 1], states, F, [1.0, 0.1, 1 / N][g], mode="sync")
        np.testing.assert_array_equal(single[0][0], out[g])


def test_relax_per_network_seeds_do_not_depend_on_the_batch():
    """With one seed per network, relaxing networks together or apart gives the same states."""
    from damlite.interactions import make_interaction
    from damlite.network import relax

    rng = np.random.default_rng(11)
    memories = rng.uniform(-1, 1, (3, 6, 24))
    states = np.where(rng.random((5, 24)) < 0.5, -1.0, 1.0)
    F = make_interaction("polynomial", 3)
    seeds = [101, 202, 303]
    together = relax(memories, states, F, 1 / 24, random_state=seeds)[0]
    for g in range(3):
        alone = relax(memories[g:g + 1], states, F, 1 / 24, random_state=[seeds[g]])[0]
        np.testing.assert_array_equal(alone[0], together[g])
    with pytest.raises(ValueError, match="random_state"):
        relax(memories, states, F, 1 / 24, random_state=[1, 2])
