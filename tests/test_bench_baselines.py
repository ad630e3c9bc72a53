"""The benchmark's straightforward baselines (bench/baselines.py) agree with damlite on tiny sizes.

Only agreement is tested here; no timings (the suite is ``python bench/run.py``).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from damlite.interactions import make_interaction
from damlite.network import energy_difference, loss_and_gradient, relax
from damlite.training import train_memories

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import baselines as bl  # noqa: E402

NAMES = ["polynomial", "rectified_polynomial", "leaky_rectified_polynomial", "exponential"]


def _problem(seed, K=5, N=9, B=4):
    rng = np.random.default_rng(seed)
    memories = np.clip(rng.normal(0.1, 0.5, (K, N)), -1, 1)
    states = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    return rng, memories, states


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [2, 3, 7])
def test_energy_difference_neuronwise(name, n):
    _, mem, st = _problem(n)
    F = make_interaction(name, n)
    for neurons in (slice(None), slice(3, 7)):
        want = np.asarray(energy_difference(mem[None], st, F, 1 / 9, neurons=neurons))[0]
        got = bl.energy_difference_neuronwise(mem, st, name, n, 1 / 9, neurons=neurons)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("zero_sign", [1, -1, "keep"])
@pytest.mark.parametrize("n", [2, 3])
def test_relax_neuronwise_matches_async_relax(zero_sign, n):
    """+-1 memories: integer dot products, so n = 2 meets exact ties Delta = 0 (zero_sign decides)."""
    rng, _, _ = _problem(0)
    K, N, B = 6, 40, 8
    mem = np.where(rng.random((K, N)) < 0.5, -1.0, 1.0)
    probes = mem[rng.integers(0, K, B)] * np.where(rng.random((B, N)) < 0.3, -1.0, 1.0)
    F = make_interaction("rectified_polynomial", n)
    want, converged, sweeps, finite = relax(mem[None], probes, F, 1 / N, random_state=7, zero_sign=zero_sign)
    got, per_probe = bl.relax_neuronwise(mem, probes, "rectified_polynomial", n, 1 / N, zero_sign=zero_sign,
                                         orders=lambda: bl.sweep_orders(7, N))
    np.testing.assert_array_equal(got, np.asarray(want)[0])
    assert per_probe.max() == sweeps
    got_b, sweeps_b = bl.relax_neuronwise_batched(mem, probes, "rectified_polynomial", n, 1 / N, zero_sign=zero_sign,
                                                  orders=lambda: bl.sweep_orders(7, N))
    np.testing.assert_array_equal(got_b, np.asarray(want)[0])
    assert sweeps_b == sweeps


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("continuous", [False, True])
def test_loss_and_gradient_neuronwise(name, continuous):
    rng, mem, st = _problem(3)
    if continuous:  # MNIST-like: continuous inputs, +-1 evaluated neurons
        st[:, :6] = rng.uniform(-1, 1, (st.shape[0], 6))
    cols = slice(6, 9) if continuous else slice(None)
    targets = st[:, cols] if not continuous else np.where(rng.random((st.shape[0], 3)) < 0.5, -1.0, 1.0)
    F = make_interaction(name, 3)
    loss, grad, finite = loss_and_gradient(mem[None], st, targets, F, 0.3, 0.8, error_exponent=2, neurons=cols)
    loss_b, grad_b = bl.loss_and_gradient_neuronwise(mem, st, targets, name, 3, 0.3, 0.8, error_exponent=2,
                                                     neurons=cols)
    assert bool(finite[0])
    np.testing.assert_allclose(loss_b, float(loss[0]), rtol=1e-12)
    np.testing.assert_allclose(grad_b, np.asarray(grad)[0], rtol=1e-9, atol=1e-12)


def test_train_epoch_neuronwise_matches_train_memories():
    rng, mem, st = _problem(5, K=6, N=10, B=8)
    F = make_interaction("rectified_polynomial", 4)
    res = train_memories(mem[None], st, st, F, beta_in=0.1, beta_out=1.0, learning_rate=0.05, momentum=0.5,
                         epochs=1, batch_size=3, random_state=11)
    order = np.random.default_rng(11).permutation(8)
    got, loss, _ = bl.train_epoch_neuronwise(mem, st, st, "rectified_polynomial", 4, 0.1, 1.0, learning_rate=0.05,
                                             momentum=0.5, batch_size=3, order=order)
    np.testing.assert_allclose(got, np.asarray(res.memories)[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(loss, res.loss[0, 0], rtol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_torch_autograd_matches_damlite(name):
    torch = pytest.importorskip("torch")
    rng, mem, st = _problem(4)
    st[:, :6] = rng.uniform(-1, 1, (st.shape[0], 6))
    targets = np.where(rng.random((st.shape[0], 3)) < 0.5, -1.0, 1.0)
    F = make_interaction(name, 3)
    loss, grad, _ = loss_and_gradient(mem[None], st, targets, F, 0.3, 0.8, error_exponent=2, neurons=slice(6, 9))
    t = lambda a: torch.as_tensor(a, dtype=torch.float64)  # noqa: E731
    loss_t, grad_t = bl.torch_loss_and_gradient(t(mem), t(st), t(targets), name, 3, 0.3, 0.8, error_exponent=2,
                                                cols=slice(6, 9))
    np.testing.assert_allclose(float(loss_t), float(loss[0]), rtol=1e-12)
    np.testing.assert_allclose(grad_t.numpy(), np.asarray(grad)[0], rtol=1e-9, atol=1e-12)


def test_torch_train_epoch_matches_train_memories():
    torch = pytest.importorskip("torch")
    rng, mem, st = _problem(6, K=6, N=10, B=8)
    F = make_interaction("rectified_polynomial", 4)
    res = train_memories(mem[None], st, st, F, beta_in=0.1, beta_out=1.0, learning_rate=0.05, momentum=0.5,
                         epochs=1, batch_size=3, random_state=2, clamp=slice(0, 7))
    order = torch.as_tensor(np.random.default_rng(2).permutation(8))
    t = lambda a: torch.as_tensor(a, dtype=torch.float64)  # noqa: E731
    got, loss, _ = bl.torch_train_epoch(t(mem), t(st), t(st), "rectified_polynomial", 4, 0.1, 1.0, learning_rate=0.05,
                                        momentum=0.5, batch_size=3, order=order, clamp=slice(0, 7))
    np.testing.assert_allclose(got.numpy(), np.asarray(res.memories)[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(float(loss), res.loss[0, 0], rtol=1e-10)


def test_torch_batched_loss_matches_damlite_per_network():
    """The (G, K, N) form of the autograd baseline (bench/gpu_block_epoch.py) is G separate networks."""
    torch = pytest.importorskip("torch")
    rng, mem, st = _problem(7)
    mems = np.stack([mem, np.clip(mem + 0.1 * rng.standard_normal(mem.shape), -1, 1)])
    targets = np.where(rng.random((st.shape[0], 3)) < 0.5, -1.0, 1.0)
    F = make_interaction("rectified_polynomial", 3)
    b_in, b_out = np.array([0.3, 0.5]), np.array([0.8, 1.2])
    loss, grad, _ = loss_and_gradient(mems, st, targets, F, b_in, b_out, error_exponent=2, neurons=slice(6, 9))
    t = lambda a: torch.as_tensor(a, dtype=torch.float64)  # noqa: E731
    loss_t, grad_t = bl.torch_loss_and_gradient(t(mems), t(st), t(targets), "rectified_polynomial", 3, t(b_in),
                                                t(b_out), error_exponent=2, cols=slice(6, 9))
    np.testing.assert_allclose(float(loss_t), float(np.sum(loss)), rtol=1e-12)
    np.testing.assert_allclose(grad_t.numpy(), np.asarray(grad), rtol=1e-9, atol=1e-12)


def test_the_cpu_epoch_verdict_needs_both_statistics():
    """bench/cpu_epoch.py grades a target from the ratio of the medians and from the rounds' own ratios: met only
    when both meet it, 'unclear' when they disagree, and it counts the rounds that meet it (k of m)."""
    import cpu_epoch  # noqa: PLC0415

    def run(epochs, products):
        seconds = {"estimator_float64_original": epochs, "products_float64": products}
        med = {k: float(np.median(v)) for k, v in seconds.items()}
        return {"all_seconds": seconds, "ratios": {"float64_original_epoch_over_products": med[
            "estimator_float64_original"] / med["products_float64"]}}

    name = "float64_original_epoch_over_products"
    assert cpu_epoch.paired(run([2.0, 3.0], [1.0, 2.0]), name) == [2.0, 1.5]
    line = cpu_epoch._verdict(name, run([1.2, 1.25, 1.28], [1.0, 1.0, 1.0]), 1.3)
    assert line.endswith(": met") and "3 of 3 rounds" in line
    # the medians' ratio 1.2 / 1.0 meets 1.3; the rounds' own ratios (2.0, 1.2, 1.5) mostly do not
    line = cpu_epoch._verdict(name, run([1.0, 1.2, 3.0], [0.5, 1.0, 2.0]), 1.3)
    assert "unclear" in line and "1 of 3 rounds" in line
    line = cpu_epoch._verdict(name, run([2.0, 2.1, 2.2], [1.0, 1.0, 1.0]), 1.3)
    assert line.endswith(": missed")
