"""An independent reference for damlite's kernels: plain loops over the paper's equations.

Everything here is written from the equations, not from damlite's vectorised
code, in mpmath at ``DPS`` significant digits. Inputs are converted from
float64 exactly (``mpf(float)`` is exact), so differences from damlite are
damlite's rounding, not ours. Only for small N, K and B (the loops are O(B K N^2)).

Notation (McAlister, Robins & Szymanski; Krotov & Hopfield):
    memories zeta (K, N), states xi (B, N), s = sum_{j != i} zeta_j xi_j,
    Delta_i = sum_mu F(a (zeta_i + s)) - F(a (-zeta_i + s)),
    C_i = tanh(beta_out sum_mu [F(beta_in (zeta_i + s)) - F(beta_in (-zeta_i + s))]),
    L = sum_{b, i in neurons} (t_{b,i} - C_{b,i})**(2m).
"""
from __future__ import annotations

import mpmath
from mpmath import mp, mpf

DPS = 50


# ----------------------------------------------------------------- interactions
def F_ref(name, n=2, epsilon=1e-2, leak="paper"):
    """(F, F') as functions of one mpf, for an interaction name of damlite."""
    eps = mpf(epsilon) if leak == "code" else -mpf(epsilon)  # slope below 0

    if name == "polynomial":
        return (lambda x: x**n), (lambda x: n * x ** (n - 1))
    if name == "rectified_polynomial":
        def f(x):
            return x**n if x > 0 else mpf(0)

        def df(x):
            return n * x ** (n - 1) if x > 0 else mpf(0)

        return f, df
    if name == "leaky_rectified_polynomial":
        def f(x):
            return x**n if x >= 0 else eps * x

        def df(x):
            return n * x ** (n - 1) if x >= 0 else eps

        return f, df
    if name == "exponential":
        return mpmath.exp, mpmath.exp
    raise ValueError(name)


def _mp(matrix):
    """Nested lists of mpf from a 2-D array-like of floats (exact conversion)."""
    return [[mpf(float(v)) for v in row] for row in matrix]


def _s(zeta_mu, xi, i):
    """s = sum_{j != i} zeta_j xi_j, as a loop."""
    total = mpf(0)
    for j in range(len(xi)):
        if j != i:
            total += zeta_mu[j] * xi[j]
    return total


def _neuron_list(neurons, N):
    if neurons is None:
        return list(range(N))
    if isinstance(neurons, slice):
        return list(range(*neurons.indices(N)))
    return list(neurons)


# ----------------------------------------------------------- energy difference
def energy_difference(memories, states, name, n=2, a=1.0, epsilon=1e-2, neurons=None):
    """Delta[b][i] (mpf) for memories (K, N), states (B, N), update scale a."""
    with mp.workdps(DPS):
        F, _ = F_ref(name, n, epsilon)
        zeta, xis = _mp(memories), _mp(states)
        a = mpf(a) if not isinstance(a, mpf) else a
        N = len(zeta[0])
        cols = _neuron_list(neurons, N)
        out = []
        for xi in xis:
            row = []
            for i in cols:
                delta = mpf(0)
                for z in zeta:
                    s = _s(z, xi, i)
                    delta += F(a * (z[i] + s)) - F(a * (-z[i] + s))
                row.append(delta)
            out.append(row)
        return out


def energy_terms_scale(memories, states, name, n=2, a=1.0, epsilon=1e-2):
    """Per (b, i): sum_mu |F(u+)| + |F(u-)|, the size of what the difference cancels."""
    with mp.workdps(DPS):
        F, _ = F_ref(name, n, epsilon)
        zeta, xis = _mp(memories), _mp(states)
        a = mpf(a)
        N = len(zeta[0])
        out = []
        for xi in xis:
            row = []
            for i in range(N):
                total = mpf(0)
                for z in zeta:
                    s = _s(z, xi, i)
                    total += abs(F(a * (z[i] + s))) + abs(F(a * (-z[i] + s)))
                row.append(total)
            out.append(row)
        return out


def update_signs(memories, states, name, n=2, a=1.0, epsilon=1e-2, zero_sign=1):
    """sign(Delta) per (b, i) with sign(0) = zero_sign (the paper: +1)."""
    deltas = energy_difference(memories, states, name, n, a, epsilon)
    return [[1 if d > 0 else (-1 if d < 0 else zero_sign) for d in row] for row in deltas]


# ------------------------------------------------------------- loss, gradient
def _loss_mp(zeta, xis, targets, F, beta_in, beta_out, m, cols):
    loss = mpf(0)
    for b, xi in enumerate(xis):
        for c, i in enumerate(cols):
            h = mpf(0)
            for z in zeta:
                s = _s(z, xi, i)
                h += F(beta_in * (z[i] + s)) - F(beta_in * (-z[i] + s))
            C = mpmath.tanh(beta_out * h)
            loss += (targets[b][c] - C) ** (2 * m)
    return loss


def loss(memories, probes, targets, name, n=2, beta_in=1.0, beta_out=1.0, m=1, neurons=None, epsilon=1e-2):
    """L = sum_b sum_{i in neurons} (t_{b,i} - C_{b,i})**(2m); targets (B, len(neurons))."""
    with mp.workdps(DPS):
        F, _ = F_ref(name, n, epsilon)
        zeta, xis, ts = _mp(memories), _mp(probes), _mp(targets)
        cols = _neuron_list(neurons, len(zeta[0]))
        return _loss_mp(zeta, xis, ts, F, mpf(beta_in), mpf(beta_out), m, cols)


def gradient(memories, probes, targets, name, n=2, beta_in=1.0, beta_out=1.0, m=1, neurons=None, epsilon=1e-2):
    """dL/dzeta[mu][k] by the chain rule written out entry by entry as loops.

    For each probe b and evaluated neuron i, with u+- = beta_in (s +- zeta_i):
      du+-/dzeta_{mu,k} = beta_in xi_{b,k} (k != i),  +-beta_in (k == i);
      dh/dzeta_{mu,k}   = beta_out [F'(u+) du+/dzeta - F'(u-) du-/dzeta];
      dL/dh             = -2m (t - C)**(2m-1) (1 - C**2).
    """
    with mp.workdps(DPS):
        F, dF = F_ref(name, n, epsilon)
        zeta, xis, ts = _mp(memories), _mp(probes), _mp(targets)
        K, N = len(zeta), len(zeta[0])
        cols = _neuron_list(neurons, N)
        bi, bo = mpf(beta_in), mpf(beta_out)
        grad = [[mpf(0) for _ in range(N)] for _ in range(K)]
        for b, xi in enumerate(xis):
            for c, i in enumerate(cols):
                h = mpf(0)
                slopes = []
                for z in zeta:
                    s = _s(z, xi, i)
                    up, um = bi * (z[i] + s), bi * (-z[i] + s)
                    h += F(up) - F(um)
                    slopes.append((dF(up), dF(um)))
                C = mpmath.tanh(bo * h)
                dL_dh = -2 * m * (ts[b][c] - C) ** (2 * m - 1) * (1 - C**2)
                for mu in range(K):
                    dfp, dfm = slopes[mu]
                    for k in range(N):
                        if k == i:
                            dup, dum = bi, -bi
                        else:
                            dup = dum = bi * xi[k]
                        grad[mu][k] += dL_dh * bo * (dfp * dup - dfm * dum)
        return grad


def gradient_entry_numeric(memories, probes, targets, name, mu, k, n=2, beta_in=1.0, beta_out=1.0, m=1,
                           neurons=None, epsilon=1e-2):
    """dL/dzeta[mu][k] by mpmath.diff of the loop loss (high-precision numerical derivative)."""
    with mp.workdps(DPS):
        F, _ = F_ref(name, n, epsilon)
        zeta, xis, ts = _mp(memories), _mp(probes), _mp(targets)
        cols = _neuron_list(neurons, len(zeta[0]))
        bi, bo = mpf(beta_in), mpf(beta_out)

        def L(x):
            z = [row[:] for row in zeta]
            z[mu][k] = x
            return _loss_mp(z, xis, ts, F, bi, bo, m, cols)

        return mpmath.diff(L, zeta[mu][k])


def to_float(nested):
    """Nested lists of mpf -> nested lists of Python floats."""
    if isinstance(nested, list):
        return [to_float(v) for v in nested]
    return float(nested)
