"""The Dense Associative Memory's kernels: energy differences, relaxation, loss, gradient.

All functions work on a *batch of G independent networks* at once and take
arrays from any array-API library (NumPy, CuPy, array-api-strict); results stay
in the library and on the device of the inputs.

Shapes: memories ``(G, K, N)``; states ``(G, B, N)`` or ``(B, N)`` (shared by all
networks); per-network scalars (``scale``, ``beta_in``, ``beta_out``) are Python
floats or arrays of shape ``(G,)``. ``neurons`` is a ``slice`` of the N neurons
to evaluate (default: all), e.g. ``slice(784, 794)`` for MNIST's class neurons, or
an array of distinct neuron indices (see :func:`neuron_index`).

For neuron i, memory mu and state xi, with d = zeta^mu . xi (the full dot
product, computed once) and s = d - zeta^mu_i xi_i (the dot product without
neuron i), the two arguments of F are ``u+ = a (s + zeta^mu_i)`` and
``u- = a (s - zeta^mu_i)``. Every kernel costs O(G B K N).
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from array_api_compat import is_numpy_namespace

from .backend import _all_bipolar, array_namespace, itemsize_of, neuron_index, per_network_scalar

__all__ = [
    "DEFAULT_MEMORY_BUDGET",
    "similarities",
    "energy_difference",
    "relax",
    "loss_and_gradient",
    "per_network_scalar",
    "neuron_index",
]

#: Bytes the largest intermediate (G x B x K x M) tensors may take; work is chunked over B.
DEFAULT_MEMORY_BUDGET = 512 * 2**20

#: On the CPU, chunks of the (G, b, K, M) work are kept about this small (bytes for all
#: the temporaries of one chunk) so that they stay in the cache: fewer page faults and
#: memory round trips; about 2x faster than one big chunk for MNIST-sized minibatches.
_CPU_CHUNK_BYTES = 4 * 2**20


@contextmanager
def quiet_numpy():
    """Silence NumPy's overflow/underflow warnings: damlite checks results itself."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        yield


def _columns(x, cols):
    """x[..., cols] for a slice or an index array (array-API ``take``)."""
    if isinstance(cols, slice):
        return x[..., cols]
    xp = array_namespace(x)
    return xp.take(x, xp.asarray(cols, device=getattr(x, "device", None)), axis=x.ndim - 1)


def _add_columns(x, cols, part):
    """x with ``part`` added to its columns ``cols`` (last axis): a slice, or distinct indices."""
    xp = array_namespace(x)
    if isinstance(cols, slice):
        x[..., cols] = x[..., cols] + part
        return x
    onehot = np.zeros((cols.size, x.shape[-1]))
    onehot[np.arange(cols.size), cols] = 1.0
    return x + xp.matmul(part, xp.asarray(onehot, dtype=x.dtype, device=getattr(x, "device", None)))


def _fused_cpu_code(xp, memories, interaction):
    """The numba kernels' interaction code when they can take this call, else None (NumPy path).

    NumPy float32 or float64 arrays and a built-in interaction; the kernels are
    switched on (``DAMLITE_CPU_KERNELS``) and numba works (see :mod:`damlite.kernels.cpu_kernels`).
    """
    if not (is_numpy_namespace(xp) and memories.dtype in (np.float32, np.float64)):
        return None
    from .kernels import cpu_kernels  # noqa: PLC0415

    code = cpu_kernels.interaction_code(interaction)
    return code if code is not None and cpu_kernels.available() else None


def _cpu_loss_and_gradient(memories, probes, targets, cols, b_in, b_out, code, two_m, gradient):
    """:func:`loss_and_gradient` by the numba kernels, or None (their ±1 precondition fails, or they broke)."""
    from .kernels import cpu_kernels  # noqa: PLC0415

    G = memories.shape[0]
    shared = probes[0] if G == 1 or probes.strides[0] == 0 else probes  # one minibatch for all networks
    if not _all_bipolar(_columns(shared, cols)):
        return None
    out = cpu_kernels.loss_and_gradient(memories, probes, targets, cols, np.reshape(b_in, (G,)),
                                        np.reshape(b_out, (G,)), code, two_m, gradient)
    if out is None:
        return None
    loss, grad = out
    finite = np.isfinite(loss)
    if gradient:
        grad *= b_out * b_in
        flat = grad.reshape(G, -1)  # max and min are NaN or inf exactly when an entry is: no temporaries
        finite &= np.isfinite(np.max(flat, axis=1)) & np.isfinite(np.min(flat, axis=1))
    return loss, grad, finite


def _batched_states(states, G):
    xp = array_namespace(states)
    if states.ndim == 2:
        return xp.broadcast_to(states[None, ...], (G, *states.shape))
    return states


def similarities(memories, states):
    """Dot products d[g, b, mu] = sum_j zeta^mu_j xi_j, shape (G, B, K)."""
    xp = array_namespace(memories, states)
    return xp.matmul(_batched_states(states, memories.shape[0]), xp.matrix_transpose(memories))


def _chunk_budget(xp, memory_budget):
    """Bytes per chunk: the memory budget, and on NumPy also a cache-sized bound."""
    return min(memory_budget, _CPU_CHUNK_BYTES) if is_numpy_namespace(xp) else memory_budget


def _row_chunks(B, bytes_per_row, budget):
    rows = max(1, int(budget // max(bytes_per_row, 1)))
    for start in range(0, B, rows):
        yield slice(start, min(B, start + rows))


def _cells(G, B, bytes_per_cell, budget, split_networks):
    """(networks, rows) slices whose cells (one network x one row) fit ``budget`` together.

    Rows are split first; when one row of all G networks is over the budget and
    ``split_networks`` is set, networks are split too (down to one network x one row).
    """
    if not split_networks or G * bytes_per_cell <= budget:
        for rows in _row_chunks(B, G * bytes_per_cell, budget):
            yield slice(None), rows
        return
    nets = max(1, int(budget // max(bytes_per_cell, 1)))
    for start in range(0, G, nets):
        for rows in _row_chunks(B, nets * bytes_per_cell, budget):
            yield slice(start, min(G, start + nets)), rows


def _pair_arguments(memories, states, d, cols, scale):
    """u+ and u- of shape (G, B, K, M) for the neurons in ``cols`` (see module doc)."""
    zeta = _columns(memories, cols)[:, None, :, :]  # (G, 1, K, M)
    xi = _columns(states, cols)[:, :, None, :]  # (G, B, 1, M)
    s = d[..., None] - zeta * xi
    a = scale[..., None]  # (G, 1, 1, 1)
    return a * (s + zeta), a * (s - zeta)


def _adaptive_rescale(plus, minus, interaction):
    """Divide both arguments by their largest magnitude over the memories (per neuron).

    Only arguments where F is non-zero count (for the rectified polynomial,
    the positive ones). For an interaction homogeneous of degree k this
    multiplies the energy difference by c**-k > 0, so its sign is exact while
    the largest term is 1.
    """
    xp = array_namespace(plus)

    def largest(u):
        return xp.max(xp.where(interaction.support(u), xp.abs(u), xp.zeros_like(u)), axis=2, keepdims=True)

    c = xp.maximum(largest(plus), largest(minus))
    c = xp.where(c > 0, c, xp.ones_like(c))
    return plus / c, minus / c


def energy_difference(
    memories,
    states,
    interaction,
    scale=1.0,
    *,
    neurons=slice(None),
    rescale=False,
    memory_budget=DEFAULT_MEMORY_BUDGET,
    return_underflow=False,
):
    """Energy differences Delta[g, b, i] = sum_mu F(u+) - F(u-), shape (G, B, M).

    ``scale`` is the similarity scale a (1 for the original network, 1/N for the
    normalized one). With ``rescale=True`` each neuron's arguments are divided by
    their largest magnitude first (exact signs for homogeneous F at any n).
    ``return_underflow=True`` also returns a (G,) boolean: some F(u) rounded to 0
    where it is mathematically non-zero, for an entry whose Delta is exactly 0.
    """
    xp = array_namespace(memories, states)
    G, K, N = memories.shape
    states = _batched_states(states, G)
    B = states.shape[1]
    scale = per_network_scalar(scale, xp, G, memories.dtype, device=getattr(memories, "device", None))
    cols, M = neuron_index(neurons, N)
    d = similarities(memories, states)
    out, underflow = [], xp.zeros((G,), dtype=xp.bool, device=getattr(memories, "device", None))
    itemsize = itemsize_of(memories.dtype)
    budget = _chunk_budget(xp, memory_budget)
    # For +-1 states one argument is a*d itself: u = a d for the neuron's own sign
    # and u' = a (d - 2 zeta_i xi_i) for the other, so Delta_i = xi_i sum_mu [F(a d) - F(u')]
    # needs F on (G, B, K) once and on (G, B, K, M) once instead of twice.
    states_cols = _columns(states, cols)
    bipolar = not rescale and _all_bipolar(states_cols)
    if bipolar:  # the fast path keeps memories innermost, (G, b, M, K): contiguous sums over K
        w = 2 * xp.matrix_transpose(_columns(memories, cols))[:, None, ...]  # 2 zeta, (G, 1, M, K)
        delta_all = xp.zeros((G, B, M), dtype=memories.dtype, device=getattr(memories, "device", None))
    with quiet_numpy():
        for gs, rows in _cells(G, B, 6 * K * M * itemsize, budget, split_networks=bipolar):
            if bipolar:
                xs = states_cols[gs, rows, ...]  # (g, b, M)
                a = scale[gs, ...]
                ad = a * d[gs, rows, ...]  # (g, b, K)
                # a (d - 2 zeta xi), not a d - 2 a zeta xi: bitwise the old a (s -+ zeta) where
                # the sums are exact (+-1 memories), so exact ties Delta = 0 stay exact
                other = a[..., None] * (d[gs, rows, None, :] - w[gs, ...] * xs[..., None])  # (g, b, M, K)
                f_same, f_other = interaction(ad)[:, :, None, :], interaction(other)
                delta = xs * xp.sum(f_same - f_other, axis=3)
                if return_underflow and bool(xp.any(delta == 0)):
                    lost = ((f_same == 0) & interaction.support(ad)[:, :, None, :]) | (
                        (f_other == 0) & interaction.support(other))
                    lost = xp.any(lost, axis=3) & (delta == 0)
                    underflow[gs] = underflow[gs] | xp.any(xp.reshape(lost, (lost.shape[0], -1)), axis=1)
                delta_all[gs, rows, ...] = delta
                continue
            plus, minus = _pair_arguments(memories, states[:, rows, ...], d[:, rows, ...], cols, scale)
            if rescale:
                plus, minus = _adaptive_rescale(plus, minus, interaction)
            f_plus, f_minus = interaction(plus), interaction(minus)
            delta = xp.sum(f_plus - f_minus, axis=2)
            if return_underflow and bool(xp.any(delta == 0)):
                lost = (f_plus == 0) & interaction.support(plus) | (f_minus == 0) & interaction.support(minus)
                lost = xp.any(lost, axis=2) & (delta == 0)
                underflow = underflow | xp.any(xp.reshape(lost, (G, -1)), axis=1)
            out.append(delta)
    if bipolar:
        delta = delta_all
    else:
        delta = out[0] if len(out) == 1 else xp.concat(out, axis=1)
    return (delta, underflow) if return_underflow else delta


def _sign(delta, current, zero_sign):
    """sign(Delta) as +-1 with the convention for Delta == 0: +1, -1 or 'keep' (current)."""
    xp = array_namespace(delta)
    one = xp.ones_like(current)
    if zero_sign == "keep":
        tie = current
    else:
        tie = one if zero_sign == 1 else -one
    return xp.where(delta > 0, one, xp.where(delta < 0, -one, tie))


def _gather_columns(x, flat_index, G, N):
    """x (G, A, N) -> x with its last axis reordered per network by ``flat_index``."""
    xp = array_namespace(x)
    A = x.shape[1]
    xt = xp.reshape(xp.permute_dims(x, (0, 2, 1)), (G * N, A))
    xt = xp.take(xt, flat_index, axis=0)
    return xp.permute_dims(xp.reshape(xt, (G, N, A)), (0, 2, 1))


def _order_drawer(random_state, G, N):
    """Draw each sweep's neuron orders (G, N) from one seed, a Generator, or one seed per network.

    Returns ``(draw, skip)``: ``draw()`` gives the next sweep's orders and ``skip(k)`` moves a
    caller's Generator past ``k`` sweeps' draws without sorting them. The fused CPU kernels
    draw every sweep's orders up front; a loop that stops early at convergence calls ``skip``
    for the sweeps it did not run, so a shared Generator ends in the same state on every path
    (the next patterns a caller draws from it are the same on NumPy, numba and CuPy).
    """
    if isinstance(random_state, (list, tuple, np.ndarray)):  # one seed per network
        if len(random_state) != G:
            raise ValueError(f"random_state must be one seed or {G} seeds (one per network), got {len(random_state)}")
        rngs = [np.random.default_rng(seed) for seed in random_state]
        return (lambda: np.stack([np.argsort(r.random(N)) for r in rngs])), (lambda k: None)
    rng = np.random.default_rng(random_state)

    def skip(k):
        if isinstance(random_state, np.random.Generator):  # the caller's: it sees where we leave it
            for _ in range(k):
                rng.random((G, N))

    return (lambda: np.argsort(rng.random((G, N)), axis=1)), skip


def relax(
    memories,
    states,
    interaction,
    scale=1.0,
    *,
    mode="async",
    max_sweeps=100,
    zero_sign=1,
    rescale=False,
    random_state=None,
    memory_budget=DEFAULT_MEMORY_BUDGET,
):
    """Relax ±1 ``states`` under the update xi_i <- sign(Delta_i) until nothing changes.

    ``mode="async"`` updates one neuron at a time in a random order drawn afresh
    each sweep (per network, from ``random_state``: one seed for the batch, or a
    sequence of G seeds so that each network's orders do not depend on how a grid
    is split into batches), keeping the dot products up
    to date with a rank-one correction; ``mode="sync"`` updates all neurons of a
    state at once. Stops after a sweep that changes nothing, or ``max_sweeps``.

    Returns ``(states, converged, n_sweeps, finite)``: relaxed states (G, B, N),
    a (G, B) mask of states that reached a fixed point, the number of sweeps run,
    and a (G,) mask of networks whose energy differences stayed finite.
    """
    xp = array_namespace(memories, states)
    G, K, N = memories.shape
    device = getattr(memories, "device", None)
    states = xp.asarray(_batched_states(states, G), copy=True)
    B = states.shape[1]
    finite = xp.ones((G,), dtype=xp.bool, device=device)
    converged = xp.zeros((G, B), dtype=xp.bool, device=device)
    if mode not in ("async", "sync"):
        raise ValueError(f"mode must be 'async' or 'sync', got {mode!r}")
    if isinstance(zero_sign, bool) or zero_sign not in (1, -1, "keep"):
        raise ValueError(f"zero_sign must be 1, -1 or 'keep', got {zero_sign!r}")
    draw_orders, skip_orders = _order_drawer(random_state, G, N)
    scale_arr = per_network_scalar(scale, xp, G, memories.dtype, device=device)
    # +-1 states (the usual case): keep a*d and F(a d) per memory; neuron t's other
    # argument is a d - 2 a zeta_t xi_t, and when the neuron flips that becomes the new
    # a d, so each neuron costs one F evaluation on (G, B, K) (see energy_difference).
    bipolar = mode == "async" and not rescale and _all_bipolar(states)
    code = _fused_cpu_code(xp, memories, interaction) if bipolar else None
    if code is not None:  # one fused pass per (network, state); the same neuron orders
        from .kernels import cpu_kernels  # noqa: PLC0415

        orders = np.stack([draw_orders() for _ in range(max_sweeps)], axis=1)  # (G, sweeps, N)
        out = cpu_kernels.relax_async_bipolar(memories, states, orders, np.reshape(scale_arr, (G,)), code,
                                              zero_sign, max_sweeps)
        if out is not None:  # None: the kernels failed (warned once); the NumPy loop below
            return out
        draw_orders, skip_orders = iter(np.moveaxis(orders, 1, 0)).__next__, (lambda k: None)  # the same orders
    sweeps = 0
    with quiet_numpy():
        for sweeps in range(1, max_sweeps + 1):
            if mode == "sync":
                delta = energy_difference(memories, states, interaction, scale_arr[:, 0, 0],
                                          rescale=rescale, memory_budget=memory_budget)
                finite = finite & xp.all(xp.reshape(xp.isfinite(delta), (G, -1)), axis=1)
                new = _sign(delta, states, zero_sign)
                changed = xp.any(new != states, axis=2)
                states = new
            else:
                perm = draw_orders()
                flat = np.arange(G)[:, None] * N + perm
                flat_dev = xp.asarray(flat.reshape(-1), device=device)
                inverse = xp.asarray((np.arange(G)[:, None] * N + np.argsort(perm, axis=1)).reshape(-1), device=device)
                mem_p = _gather_columns(memories, flat_dev, G, N)
                st_p = _gather_columns(states, flat_dev, G, N)
                d = similarities(mem_p, st_p)  # (G, B, K)
                changed = xp.zeros((G, B), dtype=xp.bool, device=device)
                if bipolar:  # lean loop: per neuron ~10 array operations on (G, B, K)
                    f_ad = interaction(scale_arr * d)
                    w_t = xp.permute_dims(2 * mem_p, (0, 2, 1))[:, :, None, :]  # 2 zeta, (G, N, 1, K)
                    one = xp.ones((G, B), dtype=memories.dtype, device=device)
                    neg = -one
                    nan_probe = xp.zeros((G, B), dtype=memories.dtype, device=device)  # 0 * delta: NaN if any delta is
                for t in range(N if bipolar else 0):
                    x = st_p[:, :, t]  # (G, B)
                    other = d - w_t[:, t, ...] * x[..., None]  # d after flipping neuron t
                    f_other = interaction(scale_arr * other)
                    delta = x * xp.sum(f_ad - f_other, axis=2)  # (G, B)
                    nan_probe = nan_probe + 0 * delta
                    if zero_sign == 1:  # sign(Delta) with sign(0) (and NaN) = tie value, as in _sign
                        new = xp.where(delta < 0, neg, one)
                    elif zero_sign == -1:
                        new = xp.where(delta > 0, one, neg)
                    else:
                        new = xp.where(delta > 0, one, xp.where(delta < 0, neg, x))
                    flip = (new != x)[..., None]
                    changed = changed | flip[..., 0]
                    d = xp.where(flip, other, d)
                    f_ad = xp.where(flip, f_other, f_ad)
                    st_p[:, :, t] = new
                if bipolar:
                    finite = finite & xp.all(nan_probe == 0, axis=1)
                for t in range(0 if bipolar else N):
                    z = mem_p[:, None, :, t]  # (G, 1, K)
                    x = st_p[:, :, t]  # (G, B)
                    s = d - z * x[..., None]
                    plus, minus = scale_arr * (s + z), scale_arr * (s - z)
                    if rescale:
                        plus, minus = _adaptive_rescale(plus[..., None], minus[..., None], interaction)
                        plus, minus = plus[..., 0], minus[..., 0]
                    delta = xp.sum(interaction(plus) - interaction(minus), axis=2)  # (G, B)
                    finite = finite & xp.all(xp.isfinite(delta), axis=1)
                    new = _sign(delta, x, zero_sign)
                    changed = changed | (new != x)
                    d = s + z * new[..., None]
                    st_p[:, :, t] = new
                states = _gather_columns(st_p, inverse, G, N)
            converged = ~changed
            if not bool(xp.any(changed)):
                break
    if mode == "async":
        skip_orders(max_sweeps - sweeps)
    return states, converged, sweeps, finite


def loss_and_gradient(
    memories,
    probes,
    targets,
    interaction,
    beta_in=1.0,
    beta_out=1.0,
    *,
    error_exponent=1,
    neurons=slice(None),
    gradient=True,
    memory_budget=DEFAULT_MEMORY_BUDGET,
):
    """The learning rule's loss and its gradient with respect to the memories.

    L = sum_{a,i} (t_{a,i} - C_{a,i})**(2m), with
    C_{a,i} = tanh(beta_out * sum_mu [F(beta_in (s + zeta_i)) - F(beta_in (s - zeta_i))])
    and s = sum_{j != i} zeta_j xi_{a,j}, for the neurons i in ``neurons``.
    ``probes`` (the xi) and ``targets`` (the t, shape (B, M) or (G, B, M)) are
    the same array for autoassociative training. Derived by hand::

        dL/dzeta_{mu,k} = beta_out beta_in sum_a [ g_{a,k} (Q - xi_{a,k} P)_{a,mu,k}
                          + xi_{a,k} sum_i g_{a,i} P_{a,mu,i} ],
        g = -2m (t - C)**(2m-1) (1 - C**2), P/Q = F'(u+) -/+ F'(u-)

    (the first term only for k in ``neurons``).

    Returns ``(loss (G,), gradient (G, K, N) or None, finite (G,))``.
    """
    xp = array_namespace(memories, probes)
    G, K, N = memories.shape
    device = getattr(memories, "device", None)
    probes = _batched_states(probes, G)
    targets = _batched_states(targets, G)
    B = probes.shape[1]
    cols, M = neuron_index(neurons, N)
    if targets.shape[-1] != M:
        raise ValueError(f"targets must have {M} columns (one per evaluated neuron), got {targets.shape[-1]}")
    b_in = per_network_scalar(beta_in, xp, G, memories.dtype, device=device)
    b_out = per_network_scalar(beta_out, xp, G, memories.dtype, device=device)
    two_m = 2 * int(error_exponent)
    from .kernels import gpu_kernels  # noqa: PLC0415

    code = None if gpu_kernels.usable(xp) else _fused_cpu_code(xp, memories, interaction)
    if code is not None:  # numba: fused, threaded, one pass per (network, row); None: take the NumPy path
        out = _cpu_loss_and_gradient(memories, probes, targets, cols, b_in, b_out, code, two_m, gradient)
        if out is not None:
            return out
    d = similarities(memories, probes)
    loss = xp.zeros((G,), dtype=memories.dtype, device=device)
    grad = xp.zeros_like(memories) if gradient else None
    grad_cols = xp.zeros((G, K, M), dtype=memories.dtype, device=device) if gradient else None
    itemsize = itemsize_of(memories.dtype)
    # +-1 evaluated neurons (autoassociative training; MNIST's class neurons at -1):
    # with u = b_in d and u' = b_in (d - 2 zeta_i xi_i) (see energy_difference),
    # P = xi_i (F'(u) - F'(u')) and Q - xi_i P = 2 F'(u'): one F, F' on (G, B, K, M).
    probes_cols = _columns(probes, cols)
    bipolar = _all_bipolar(probes_cols)
    fused = None
    if bipolar and gpu_kernels.usable(xp):  # numba-cuda: three launches, no (G, b, M, K) temporaries
        from .kernels import cpu_kernels  # noqa: PLC0415

        gpu_code = cpu_kernels.interaction_code(interaction)
        if gpu_code is not None:
            fused = gpu_kernels.loss_and_gradient_bipolar(
                d, xp.matrix_transpose(_columns(memories, cols)), probes_cols, targets, b_in, b_out, gpu_code,
                two_m, gradient)
    if fused is not None:
        loss, r_all, grad_cols_t = fused
    elif bipolar:  # memories innermost, (G, b, M, K), as in energy_difference
        w = 2 * xp.matrix_transpose(_columns(memories, cols))[:, None, ...]  # 2 zeta, (G, 1, M, K)
        r_all = xp.zeros_like(d) if gradient else None  # sum_i g P for all rows, (G, B, K)
        grad_cols_t = xp.zeros((G, M, K), dtype=memories.dtype, device=device) if gradient else None
    with quiet_numpy():
        for gs, rows in ([] if fused is not None else
                         _cells(G, B, 8 * K * M * itemsize, _chunk_budget(xp, memory_budget), split_networks=bipolar)):
            if bipolar:
                xs = probes_cols[gs, rows, ...]  # (g, b, M)
                bi, bo = b_in[gs, ...], b_out[gs, ...]
                u = bi * d[gs, rows, ...]  # (g, b, K)
                other = bi[..., None] * (d[gs, rows, None, :] - w[gs, ...] * xs[..., None])  # (g, b, M, K)
                if gradient:
                    f_u, df_u = interaction.value_and_derivative(u)
                    f_o, df_o = interaction.value_and_derivative(other)
                else:
                    f_u, f_o = interaction(u), interaction(other)
                c = xp.tanh(bo * xs * xp.sum(f_u[:, :, None, :] - f_o, axis=3))  # (g, b, M)
                err = targets[gs, rows, ...] - c
                loss[gs] = loss[gs] + xp.sum(xp.reshape(err ** two_m, (err.shape[0], -1)), axis=1)
                if not gradient:
                    continue
                g = -two_m * err ** (two_m - 1) * (1 - c * c)  # dL/dh, (g, b, M)
                gx = g * xs
                g_t = xp.permute_dims(g, (0, 2, 1))[:, :, None, :]  # (g, M, 1, b): sum over b as a matmul
                grad_cols_t[gs, ...] = (grad_cols_t[gs, ...]
                                        + 2 * xp.matmul(g_t, xp.permute_dims(df_o, (0, 2, 1, 3)))[:, :, 0, :])
                r_all[gs, rows, ...] = (df_u * xp.sum(gx, axis=2)[..., None]
                                        - xp.matmul(gx[:, :, None, :], df_o)[:, :, 0, :])
                continue
            xi = probes[:, rows, ...]
            plus, minus = _pair_arguments(memories, xi, d[:, rows, ...], cols, b_in)
            if gradient:
                f_plus, df_plus = interaction.value_and_derivative(plus)
                f_minus, df_minus = interaction.value_and_derivative(minus)
            else:
                f_plus, f_minus = interaction(plus), interaction(minus)
            h = b_out * xp.sum(f_plus - f_minus, axis=2)  # (G, b, M)
            c = xp.tanh(h)
            err = targets[:, rows, ...] - c
            loss = loss + xp.sum(xp.reshape(err ** two_m, (G, -1)), axis=1)
            if not gradient:
                continue
            g = -two_m * err ** (two_m - 1) * (1 - c * c)  # dL/dh, (G, b, M)
            p = df_plus - df_minus  # (G, b, K, M)
            q = df_plus + df_minus
            xi_cols = _columns(xi, cols)[:, :, None, :]
            grad_cols = grad_cols + xp.sum(g[:, :, None, :] * (q - xi_cols * p), axis=1)
            r = xp.sum(g[:, :, None, :] * p, axis=3)  # (G, b, K)
            grad = grad + xp.matmul(xp.matrix_transpose(r), xi)
    finite = xp.isfinite(loss)
    if gradient and bipolar:
        grad = xp.matmul(xp.matrix_transpose(r_all), probes)
        grad_cols = xp.matrix_transpose(grad_cols_t)
    if gradient:
        grad = _add_columns(grad, cols, grad_cols)
        grad = (b_out * b_in) * grad
        finite = finite & xp.all(xp.reshape(xp.isfinite(grad), (G, -1)), axis=1)
    return loss, grad, finite
