"""Straightforward implementations of the Dense Associative Memory, to time damlite against.

Written from the equations, not from damlite's code, and deliberately plain:

* ``*_neuronwise``: NumPy, one neuron at a time. For every neuron i the dot
  products s = sum_{j != i} zeta_j xi_j are computed afresh (the full product
  zeta . xi, minus neuron i's own term), as the update and learning rules read.
  Relaxation also goes one probe at a time.
* ``torch_*``: PyTorch, the loss written as array expressions over
  (B, K, M) tensors and its gradient taken by autograd (the way the paper's
  author trains; see /work/shared/REFERENCE.md). PyTorch is optional
  (``pip install damlite[bench]``); these functions import it when called.

Notation: memories zeta (K, N), probes xi (B, N), evaluated neurons ``cols`` (M of
them), u+- = beta (s +- zeta_i), Delta_i = sum_mu F(u+) - F(u-),
C = tanh(beta_out Delta), L = sum (t - C)**(2m).

The optimiser (one epoch): v <- momentum v - dL/dzeta; step = v / max_i |v_mu,i|
(floor 1e-30); zeta <- zeta + lr step; entries of the clamped neurons clipped to
[-1, 1] (Krotov & Hopfield's rule).
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "interaction_numpy",
    "energy_difference_neuronwise",
    "relax_neuronwise",
    "relax_neuronwise_batched",
    "loss_and_gradient_neuronwise",
    "train_epoch_neuronwise",
    "interaction_torch",
    "torch_loss",
    "torch_loss_and_gradient",
    "torch_train_epoch",
    "sweep_orders",
]

STEP_FLOOR = 1e-30


# ------------------------------------------------------------------ interactions
def interaction_numpy(name, n=2, epsilon=1e-2):
    """(F, F') for one of damlite's interaction names, as plain NumPy expressions."""
    if name == "polynomial":
        return (lambda x: x**n), (lambda x: n * x ** (n - 1))
    if name == "rectified_polynomial":
        return (lambda x: np.maximum(x, 0) ** n), (lambda x: n * np.maximum(x, 0) ** (n - 1))
    if name == "leaky_rectified_polynomial":
        return (lambda x: np.where(x >= 0, np.maximum(x, 0) ** n, -epsilon * x),
                lambda x: np.where(x >= 0, n * np.maximum(x, 0) ** (n - 1), -epsilon))
    if name == "exponential":
        return np.exp, np.exp
    raise ValueError(f"unknown interaction {name!r}")


def sweep_orders(random_state, N):
    """Neuron orders for successive asynchronous sweeps, the recipe damlite.network.relax uses.

    One order per sweep, shared by all probes of one network: argsort of N uniform
    draws from ``numpy.random.default_rng(random_state)``. Used only so that a
    baseline visits neurons in the same order as damlite and the relaxed states can
    be compared exactly; if damlite's recipe changes, the runner's agreement check fails.
    """
    rng = np.random.default_rng(random_state)
    while True:
        yield np.argsort(rng.random((1, N)), axis=1)[0]


# ------------------------------------------------------------- neuron by neuron
def energy_difference_neuronwise(memories, states, name, n=2, scale=1.0, epsilon=1e-2, neurons=None):
    """Delta (B, M): for each probe and neuron, recompute s and sum F(u+) - F(u-) over memories."""
    F, _ = interaction_numpy(name, n, epsilon)
    memories, states = np.asarray(memories), np.asarray(states)
    N = memories.shape[1]
    cols = range(N) if neurons is None else range(*neurons.indices(N))
    out = np.empty((states.shape[0], len(cols)), dtype=memories.dtype)
    for b, xi in enumerate(states):
        for j, i in enumerate(cols):
            s = memories @ xi - memories[:, i] * xi[i]  # sum over j != i, recomputed
            out[b, j] = np.sum(F(scale * (s + memories[:, i])) - F(scale * (s - memories[:, i])))
    return out


def _sign(delta, current, zero_sign):
    if delta > 0:
        return 1.0
    if delta < 0:
        return -1.0
    return current if zero_sign == "keep" else float(zero_sign)


def relax_neuronwise(memories, states, name, n=2, scale=1.0, *, orders, max_sweeps=100, zero_sign=1, epsilon=1e-2):
    """Asynchronous relaxation, probe by probe and neuron by neuron (s recomputed each time).

    ``orders`` is a callable returning a fresh iterator of per-sweep neuron orders
    (e.g. ``lambda: sweep_orders(seed, N)``); every probe sees the same sequence.
    Returns the relaxed states (B, N) and the sweeps each probe ran.
    """
    F, _ = interaction_numpy(name, n, epsilon)
    memories = np.asarray(memories)
    out = np.array(states, dtype=memories.dtype, copy=True)
    sweeps = np.zeros(out.shape[0], dtype=int)
    for b in range(out.shape[0]):
        xi = out[b]
        order_iter = orders()
        for sweep in range(1, max_sweeps + 1):
            changed = False
            for i in next(order_iter):
                s = memories @ xi - memories[:, i] * xi[i]
                delta = np.sum(F(scale * (s + memories[:, i])) - F(scale * (s - memories[:, i])))
                new = _sign(delta, xi[i], zero_sign)
                changed |= new != xi[i]
                xi[i] = new
            sweeps[b] = sweep
            if not changed:
                break
    return out, sweeps


def relax_neuronwise_batched(memories, states, name, n=2, scale=1.0, *, orders, max_sweeps=100, zero_sign=1,
                             epsilon=1e-2):
    """As :func:`relax_neuronwise`, but each neuron's s is one (B, N) @ (N, K) product for all probes.

    A stronger baseline: still recomputes every dot product for every neuron, but
    lets BLAS do it for the whole batch of probes at once.
    """
    F, _ = interaction_numpy(name, n, epsilon)
    memories = np.asarray(memories)
    xi = np.array(states, dtype=memories.dtype, copy=True)
    order_iter = orders()
    one = np.ones(xi.shape[0], dtype=xi.dtype)
    for sweep in range(1, max_sweeps + 1):
        changed = False
        for i in next(order_iter):
            s = xi @ memories.T - xi[:, i:i + 1] * memories[:, i]  # (B, K)
            delta = np.sum(F(scale * (s + memories[:, i])) - F(scale * (s - memories[:, i])), axis=1)
            tie = xi[:, i] if zero_sign == "keep" else zero_sign * one
            new = np.where(delta > 0, one, np.where(delta < 0, -one, tie))
            changed |= bool(np.any(new != xi[:, i]))
            xi[:, i] = new
        if not changed:
            break
    return xi, sweep


def loss_and_gradient_neuronwise(memories, probes, targets, name, n, beta_in, beta_out, *, error_exponent=1,
                                 neurons=None, epsilon=1e-2, gradient=True):
    """Loss and dL/dzeta, one evaluated neuron at a time (s recomputed for each neuron).

    For neuron i (column j of ``targets``): C = tanh(beta_out sum_mu F(u+) - F(u-));
    g = dL/d(Delta) = -2m (t - C)**(2m-1) (1 - C**2) beta_out; u+- depend on zeta_k
    through s (k != i: d u+-/d zeta_k = beta_in xi_k) and on zeta_i (d u+-/d zeta_i = +-beta_in).
    """
    F, dF = interaction_numpy(name, n, epsilon)
    memories, probes, targets = np.asarray(memories), np.asarray(probes), np.asarray(targets)
    K, N = memories.shape
    cols = range(N) if neurons is None else range(*neurons.indices(N))
    two_m = 2 * int(error_exponent)
    loss = 0.0
    grad = np.zeros_like(memories)
    for j, i in enumerate(cols):
        s = probes @ memories.T - probes[:, i:i + 1] * memories[:, i]  # (B, K), recomputed
        up, um = beta_in * (s + memories[:, i]), beta_in * (s - memories[:, i])
        c = np.tanh(beta_out * np.sum(F(up) - F(um), axis=1))  # (B,)
        err = targets[:, j] - c
        loss += np.sum(err**two_m)
        if not gradient:
            continue
        g = -two_m * err ** (two_m - 1) * (1 - c * c) * beta_out * beta_in  # (B,)
        dp, dm = dF(up), dF(um)  # (B, K)
        contrib = (g[:, None] * (dp - dm)).T @ probes  # k != i: xi_k (F'(u+) - F'(u-))
        contrib[:, i] = g @ (dp + dm)  # k == i: F'(u+) + F'(u-)
        grad += contrib
    return loss, (grad if gradient else None)


def _optimiser_step(memories, velocity, grad, lr, momentum, normalize_step, clamp):
    velocity = momentum * velocity - grad
    step = velocity
    if normalize_step:
        norm = np.max(np.abs(velocity), axis=1, keepdims=True)
        step = velocity / np.maximum(norm, STEP_FLOOR)
    memories = memories + lr * step
    if clamp is not None:
        memories[:, clamp] = np.clip(memories[:, clamp], -1.0, 1.0)
    return memories, velocity


def train_epoch_neuronwise(memories, probes, targets, name, n, beta_in, beta_out, *, learning_rate, momentum=0.0,
                           batch_size=None, order=None, error_exponent=1, neurons=None, normalize_step=True,
                           clamp=slice(None), velocity=None):
    """One epoch of minibatch gradient descent with :func:`loss_and_gradient_neuronwise`."""
    memories = np.array(memories, copy=True)
    velocity = np.zeros_like(memories) if velocity is None else velocity
    B = probes.shape[0]
    order = np.arange(B) if order is None else order
    batch = B if batch_size is None else batch_size
    total = 0.0
    for start in range(0, B, batch):
        idx = order[start:start + batch]
        loss, grad = loss_and_gradient_neuronwise(memories, probes[idx], targets[idx], name, n, beta_in, beta_out,
                                                  error_exponent=error_exponent, neurons=neurons)
        total += loss
        memories, velocity = _optimiser_step(memories, velocity, grad, learning_rate, momentum, normalize_step, clamp)
    return memories, total, velocity


# --------------------------------------------------------------- PyTorch autograd
def interaction_torch(name, n=2, epsilon=1e-2):
    """F as a PyTorch expression (autograd differentiates it)."""
    import torch  # noqa: PLC0415

    if name == "polynomial":
        return lambda x: x**n
    if name == "rectified_polynomial":
        return lambda x: torch.relu(x) ** n
    if name == "leaky_rectified_polynomial":
        return lambda x: torch.where(x >= 0, torch.relu(x) ** n, -epsilon * x)
    if name == "exponential":
        return torch.exp
    raise ValueError(f"unknown interaction {name!r}")


def torch_loss(memories, probes, targets, name, n, beta_in, beta_out, *, error_exponent=1, cols=slice(None),
               epsilon=1e-2):
    """L for torch tensors memories (K, N) or (G, K, N), probes (B, N), targets (B, M): s over (..., B, K, M).

    With G networks, ``beta_in``/``beta_out`` may be (G,) tensors and the loss is summed over all of them
    (so the gradient of each network's memories is its own).
    """
    import torch  # noqa: PLC0415

    F = interaction_torch(name, n, epsilon)
    if memories.ndim == 3:
        beta_in, beta_out = (torch.as_tensor(b, dtype=memories.dtype, device=memories.device).reshape(-1, 1, 1, 1)
                             for b in (beta_in, beta_out))
    zeta = memories[..., cols]  # (..., K, M)
    s = (probes @ memories.transpose(-1, -2))[..., None] - zeta[..., None, :, :] * probes[:, None, cols]  # (..., B, K, M)
    delta = (F(beta_in * (s + zeta[..., None, :, :])) - F(beta_in * (s - zeta[..., None, :, :]))).sum(dim=-2)
    c = torch.tanh((beta_out[..., 0] if memories.ndim == 3 else beta_out) * delta)  # (..., B, M)
    return ((targets - c) ** (2 * int(error_exponent))).sum()


def torch_loss_and_gradient(memories, probes, targets, name, n, beta_in, beta_out, **kw):
    """(loss, dL/dzeta) with autograd."""
    import torch  # noqa: PLC0415

    zeta = memories.detach().clone().requires_grad_(True)
    loss = torch_loss(zeta, probes, targets, name, n, beta_in, beta_out, **kw)
    (grad,) = torch.autograd.grad(loss, zeta)
    return loss.detach(), grad


def torch_train_epoch(memories, probes, targets, name, n, beta_in, beta_out, *, learning_rate, momentum=0.0,
                      batch_size=None, order=None, error_exponent=1, cols=slice(None), normalize_step=True,
                      clamp=slice(None), velocity=None):
    """One epoch of the optimiser with autograd gradients; torch tensors in, (memories, loss, velocity) out."""
    import torch  # noqa: PLC0415

    zeta = memories.detach().clone().requires_grad_(True)
    velocity = torch.zeros_like(memories) if velocity is None else velocity
    B = probes.shape[0]
    order = torch.arange(B, device=probes.device) if order is None else order
    batch = B if batch_size is None else batch_size
    total = 0.0
    for start in range(0, B, batch):
        idx = order[start:start + batch]
        loss = torch_loss(zeta, probes[idx], targets[idx], name, n, beta_in, beta_out,
                          error_exponent=error_exponent, cols=cols)
        (grad,) = torch.autograd.grad(loss, zeta)
        total += loss.detach()
        with torch.no_grad():
            velocity = momentum * velocity - grad
            step = velocity
            if normalize_step:
                norm = velocity.abs().amax(dim=-1, keepdim=True)
                step = velocity / torch.clamp(norm, min=STEP_FLOOR)
            zeta += learning_rate * step
            if clamp is not None:
                zeta[..., clamp] = zeta[..., clamp].clamp(-1.0, 1.0)
    return zeta.detach(), total, velocity
