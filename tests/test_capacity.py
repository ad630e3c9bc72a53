"""Tests of damlite.paper.capacity: Hebbian Hopfield network and idealised DAM capacity."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from damlite.paper import capacity as cap


def test_flip_bits_flips_exactly_k_per_row():
    x = cap.random_patterns((3, 5, 40), 0)
    y = cap.flip_bits(x, 0.1, 1)
    assert np.all((x != y).sum(axis=-1) == 4)
    assert np.array_equal(cap.flip_bits(x, 0.0, 1), x)


def test_hebbian_weights_match_the_definition():
    x = cap.random_patterns((4, 12), 0)
    W = cap.hebbian_weights(x)
    ref = sum(np.outer(p, p) for p in x) / 12
    np.fill_diagonal(ref, 0.0)
    assert np.allclose(W, ref) and np.allclose(W, W.T) and np.all(np.diag(W) == 0)
    Wg = cap.hebbian_weights(np.stack([x, -x]))
    assert Wg.shape == (2, 12, 12) and np.allclose(Wg[0], W) and np.allclose(Wg[1], W)


def test_hopfield_relax_reaches_fixed_points_and_recovers_few_patterns():
    pats = cap.random_patterns((2, 3, 100), 0)  # P/N = 0.03, far below 0.138
    W = cap.hebbian_weights(pats)
    probes = cap.flip_bits(pats, 0.1, 1)
    final, conv = cap.hopfield_relax(W, probes, random_state=2)
    assert conv.all()
    assert np.array_equal(final, pats)
    h = final @ W  # a converged state satisfies its own update
    assert np.array_equal(np.where(h >= 0, 1.0, -1.0), final)


def test_hopfield_relax_matches_a_loop_reference():
    pats = cap.random_patterns((1, 15, 30), 3)  # overloaded: many flips happen
    W = cap.hebbian_weights(pats)
    probes = cap.random_patterns((1, 4, 30), 4)
    final, conv = cap.hopfield_relax(W, probes, random_state=5)
    for b in range(4):
        s = final[0, b]
        if conv[0, b]:
            for i in range(30):
                assert (1.0 if W[0, i] @ s >= 0 else -1.0) == s[i]


def test_hopfield_curve_falls_across_the_classical_capacity():
    r = cap.hopfield_capacity_curve(100, [0.04, 0.3], n_networks=2, random_state=0)
    assert r["fixed"][0] == 1.0 and r["recovered"][0] == 1.0
    assert r["fixed"][1] < 0.5 and r["bit_errors"][1] > 0


def test_krotov_hopfield_capacity_formula():
    assert math.isclose(cap.krotov_hopfield_capacity(100, 2), 100 / (2 * math.log(100)))
    assert math.isclose(cap.krotov_hopfield_capacity(100, 3), 100**2 / (6 * math.log(100)))
    assert math.isclose(cap.krotov_hopfield_capacity(50, 4), 50**3 / (30 * math.log(50)))


@given(st.floats(0.05, 0.95), st.integers(1, 6))
@settings(max_examples=40, deadline=None)
def test_capacity_from_curve_interpolates_the_crossing(level, j):
    P = np.geomspace(10, 1000, 8)
    f = np.where(np.arange(8) < j, 1.0, 0.0)
    p = cap.capacity_from_curve(P, f, level)
    assert P[j - 1] <= p <= P[j]
    assert cap.capacity_from_curve(P, np.ones(8), level) == P[-1]
    assert math.isnan(cap.capacity_from_curve(P, np.zeros(8), level))


@pytest.mark.slow  # whole computations (tens of seconds on 2 cores): the full suite runs it
def test_dam_capacity_grows_with_n():
    # n = 2 at N = 40 holds ~5 patterns; n = 4 holds hundreds.
    r2 = cap.dam_capacity_curve(40, 2, [3, 60], n_networks=2, n_probes=8, backend="numpy", random_state=0)
    r4 = cap.dam_capacity_curve(40, 4, [3, 60], n_networks=2, n_probes=8, relax_sweeps=5, noise=0.1,
                                backend="numpy", random_state=0)
    assert r2["fixed"][0] == 1.0 and r2["fixed"][1] == 0.0
    assert np.all(r4["fixed"] == 1.0) and np.all(r4["recovered"] == 1.0)
    assert np.isnan(r2["recovered"]).all()
