"""Fused CPU kernels (numba) for the two hot loops of ±1 states, float64 only.

The NumPy code in :mod:`damlite.network` is the reference; these kernels compute
the same sums in one pass per (network, state) without the (G, b, M, K)
temporaries, and agree with it to rounding (the tests check 1e-12). They are
used when numba imports, the arrays are NumPy float64, every evaluated state
entry is ±1 and the interaction is one of the four built-in kinds;
``DAMLITE_CPU_KERNELS=numpy`` turns them off. numba is optional
(``pip install damlite[fast]``).

For state xi, memory mu and evaluated neuron i, with d = zeta^mu . xi:
u = b d and u' = b (d - 2 zeta^mu_i xi_i) are the arguments of F for the
neuron's own sign and the flipped one (see :func:`damlite.network.energy_difference`).
"""
from __future__ import annotations

import math
import os

import numpy as np

__all__ = ["available", "interaction_code", "loss_and_gradient_bipolar", "relax_async_bipolar"]

try:  # pragma: no cover - depends on the environment
    import numba

    _NUMBA = True
except ImportError:  # pragma: no cover
    _NUMBA = False

POLYNOMIAL, RECTIFIED, LEAKY, EXPONENTIAL = 0, 1, 2, 3


def available() -> bool:
    """True when numba imports and ``DAMLITE_CPU_KERNELS`` is not ``numpy``."""
    return _NUMBA and os.environ.get("DAMLITE_CPU_KERNELS", "").strip().lower() != "numpy"


def interaction_code(interaction):
    """(kind, n, slope) for a built-in interaction, or None (use the NumPy path)."""
    from .interactions import Exponential, LeakyRectifiedPolynomial, Polynomial, RectifiedPolynomial  # noqa: PLC0415

    kind = type(interaction)
    if kind is Polynomial:
        return POLYNOMIAL, interaction.n, 0.0
    if kind is RectifiedPolynomial:
        return RECTIFIED, interaction.n, 0.0
    if kind is LeakyRectifiedPolynomial:
        return LEAKY, interaction.n, float(interaction.negative_slope)
    if kind is Exponential:
        return EXPONENTIAL, 1, 0.0
    return None


if _NUMBA:  # pragma: no branch

    @numba.njit(inline="always", cache=True)
    def _power(base, e):
        """base**e by repeated squaring, the same products in the same order as integer_power."""
        result = 1.0
        while e:
            if e & 1:
                result *= base
            e >>= 1
            if e:
                base *= base
        return result

    @numba.njit(inline="always", cache=True)
    def _f_and_df(x, kind, n, slope):
        """F(x) and F'(x) for the built-in kinds (as damlite.interactions computes them)."""
        if kind == EXPONENTIAL:
            e = math.exp(x)
            return e, e
        if kind == RECTIFIED:
            if x <= 0.0:
                return 0.0, 0.0
        elif kind == LEAKY:
            if x < 0.0:
                return slope * x, slope
        low = _power(x, n - 1)
        return low * x, n * low

    @numba.njit(cache=True)
    def _loss_grad(d, w, xs, targets, b_in, b_out, kind, n, slope, two_m, want_grad, loss, r_all, grad_t):
        G, B, K = d.shape
        M = w.shape[1]
        for g in range(G):
            fu = np.empty(K)
            dfu = np.empty(K)
            dfo = np.empty(K)
            bi, bo = b_in[g], b_out[g]
            total = 0.0
            for b in range(B):
                for k in range(K):
                    fu[k], dfu[k] = _f_and_df(bi * d[g, b, k], kind, n, slope)
                sgx = 0.0
                for i in range(M):
                    x = xs[g, b, i]
                    acc = 0.0
                    for k in range(K):
                        fo, dfo[k] = _f_and_df(bi * (d[g, b, k] - w[g, i, k] * x), kind, n, slope)
                        acc += fu[k] - fo
                    c = math.tanh(bo * x * acc)
                    err = targets[g, b, i] - c
                    total += err ** two_m
                    if want_grad:
                        gi = -two_m * err ** (two_m - 1) * (1.0 - c * c)
                        gx = gi * x
                        sgx += gx
                        for k in range(K):
                            grad_t[g, i, k] += 2.0 * gi * dfo[k]
                            r_all[g, b, k] -= gx * dfo[k]
                if want_grad:
                    for k in range(K):
                        r_all[g, b, k] += dfu[k] * sgx
            loss[g] = total

    @numba.njit(cache=True)
    def _relax(mem_t, d0, states, orders, scale, kind, n, slope, zero_sign, max_sweeps, sweeps_used, converged,
               nan_seen):
        G, N, K = mem_t.shape
        B = states.shape[1]
        for job in range(G * B):
            g = job // B
            b = job % B
            a = scale[g]
            d = d0[g, b].copy()
            f_ad = np.empty(K)
            for k in range(K):
                f_ad[k], _ = _f_and_df(a * d[k], kind, n, slope)
            other = np.empty(K)
            f_other = np.empty(K)
            used = max_sweeps
            stable = False
            for s in range(max_sweeps):
                changed = False
                for t in range(N):
                    i = orders[g, s, t]
                    x = states[g, b, i]
                    acc = 0.0
                    for k in range(K):
                        other[k] = d[k] - 2.0 * mem_t[g, i, k] * x
                        f_other[k], _ = _f_and_df(a * other[k], kind, n, slope)
                        acc += f_ad[k] - f_other[k]
                    delta = x * acc
                    if not math.isfinite(delta):
                        nan_seen[job] = True
                    if delta > 0.0:
                        new = 1.0
                    elif delta < 0.0:
                        new = -1.0
                    elif zero_sign == 0:
                        new = x
                    elif delta == 0.0:
                        new = float(zero_sign)
                    else:  # NaN: the tie value, as the NumPy lean loop
                        new = float(zero_sign)
                    if new != x:
                        changed = True
                        states[g, b, i] = new
                        for k in range(K):
                            d[k] = other[k]
                            f_ad[k] = f_other[k]
                if not changed:
                    used = s + 1
                    stable = True
                    break
            sweeps_used[job] = used
            converged[job] = stable


def loss_and_gradient_bipolar(d, w_t, xs, targets, b_in, b_out, code, two_m, gradient):
    """Fused loss (G,), r = dL/dd-part (G, B, K) and the evaluated columns' part (G, M, K).

    ``d`` (G, B, K) similarities; ``w_t`` (G, M, K) = 2 zeta of the evaluated
    neurons; ``xs``/``targets`` (G, B, M); ``b_in``/``b_out`` (G,). See
    :func:`damlite.network.loss_and_gradient` for the formulas.
    """
    G, B, K = d.shape
    M = w_t.shape[1]
    kind, n, slope = code
    loss = np.zeros(G)
    r_all = np.zeros((G, B, K)) if gradient else np.zeros((1, 1, 1))
    grad_t = np.zeros((G, M, K)) if gradient else np.zeros((1, 1, 1))
    _loss_grad(np.ascontiguousarray(d), np.ascontiguousarray(w_t), np.ascontiguousarray(xs),
               np.ascontiguousarray(targets), np.ascontiguousarray(b_in, dtype=np.float64),
               np.ascontiguousarray(b_out, dtype=np.float64), kind, n, slope, two_m, bool(gradient), loss, r_all,
               grad_t)
    return loss, (r_all if gradient else None), (grad_t if gradient else None)


def relax_async_bipolar(memories, states, orders, scale, code, zero_sign, max_sweeps):
    """Asynchronous relaxation of ±1 states, one (network, state) per task, neuron orders given.

    ``orders`` (G, max_sweeps, N) holds each network's neuron order of every
    sweep (the same draws as the NumPy loop). A state stops at its first sweep
    without a flip, which leaves it where further sweeps would. Returns
    (states (G, B, N), converged (G, B), sweeps run (the most any state needed),
    finite (G,)).
    """
    G, K, N = memories.shape
    B = states.shape[1]
    kind, n, slope = code
    out = np.array(states, dtype=np.float64, copy=True, order="C")
    sweeps_used = np.zeros(G * B, dtype=np.int64)
    converged = np.zeros(G * B, dtype=np.bool_)
    nan_seen = np.zeros(G * B, dtype=np.bool_)
    tie = 0 if zero_sign == "keep" else int(zero_sign)
    d0 = np.matmul(out, np.transpose(memories, (0, 2, 1)))  # (G, B, K), as similarities()
    _relax(np.ascontiguousarray(np.transpose(memories, (0, 2, 1))), d0, out, np.ascontiguousarray(orders, dtype=np.int64),
           np.ascontiguousarray(scale, dtype=np.float64), kind, n, slope, tie, int(max_sweeps), sweeps_used, converged,
           nan_seen)
    finite = ~nan_seen.reshape(G, B).any(axis=1)
    return out, converged.reshape(G, B), int(sweeps_used.max()) if sweeps_used.size else 0, finite
