"""One seed, one experiment: relaxation leaves a shared Generator where every path leaves it.

The numba kernels draw all ``max_sweeps`` neuron orders up front; the array path (NumPy
without numba, array-api-strict, CuPy) draws one sweep at a time and may stop at
convergence. A caller that draws its next patterns from the same Generator (the capacity
curves of chapter 1 do) must get the same patterns on every path, and the states must agree.
"""
from __future__ import annotations

import numpy as np
import pytest

import damlite.network as network
from damlite.interactions import make_interaction
from damlite.kernels import cpu_kernels


def _problem(seed=3, G=2, K=12, N=24, B=5):
    rng = np.random.default_rng(seed)
    memories = np.where(rng.random((G, K, N)) < 0.5, -1.0, 1.0)
    probes = memories[:, :B, :].copy()
    flips = rng.random(probes.shape) < 0.15
    return memories, np.where(flips, -probes, probes)


@pytest.mark.parametrize("max_sweeps", [1, 3, 50])
def test_array_path_leaves_the_generator_where_the_kernels_do(monkeypatch, max_sweeps):
    if not cpu_kernels.available():
        pytest.skip("numba kernels unavailable: nothing to compare with")
    memories, probes = _problem()
    F = make_interaction("polynomial", 3)
    fused_rng = np.random.default_rng(11)
    fused = network.relax(memories, probes, F, 1 / 24, max_sweeps=max_sweeps, random_state=fused_rng)
    monkeypatch.setattr(network, "_fused_cpu_code", lambda *a: None)  # the NumPy loop, as on CuPy
    loop_rng = np.random.default_rng(11)
    loop = network.relax(memories, probes, F, 1 / 24, max_sweeps=max_sweeps, random_state=loop_rng)
    assert np.array_equal(fused[0], loop[0])
    assert fused[2] == loop[2]
    if max_sweeps == 50:
        assert loop[2] < max_sweeps  # converged early: the case that used to leave the Generator behind
    assert np.array_equal(fused_rng.random(8), loop_rng.random(8))


def test_integer_seed_leaves_no_generator_to_advance(monkeypatch):
    memories, probes = _problem()
    F = make_interaction("polynomial", 2)
    monkeypatch.setattr(network, "_fused_cpu_code", lambda *a: None)
    a = network.relax(memories, probes, F, 1 / 24, max_sweeps=50, random_state=5)
    b = network.relax(memories, probes, F, 1 / 24, max_sweeps=50, random_state=5)
    assert np.array_equal(a[0], b[0])
