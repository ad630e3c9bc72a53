"""Executable checks of the paper's homogeneity arguments (chapter 4 of the book).

Notation as in :mod:`damlite.network`: for neuron i, memory mu and state xi,
s_mu = sum_{j != i} zeta^mu_j xi_j and the arguments of F are u+- = a (s_mu +- zeta^mu_i).

* Homogeneity of degree k: F(alpha x) = alpha^k F(x) for all alpha > 0
  (:func:`homogeneity_residual` returns the left side minus the right side).
* Update theorem: for homogeneous F, sign sum_mu [F(a u+) - F(a u-)] does not depend
  on a > 0, because the sum is a^k times the a = 1 sum
  (:func:`sign_agreement` measures how often two scales agree).
* Learning theorem: beta_out sum_mu [F(beta_in u+) - F(beta_in u-)] is the same for
  (beta_in, beta_out) = (1, beta^k) and (beta, 1) (:func:`learning_agreement`).
* Exponential F: a scale a inside exp is *not* sign-safe (see
  :func:`exponential_counterexample`); a common shift is, since
  exp(u - c) = exp(-c) exp(u) (:func:`shifted_exponential_difference`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..backend import array_namespace, to_numpy
from ..interactions import Exponential
from ..network import energy_difference, loss_and_gradient, quiet_numpy, similarities

__all__ = [
    "homogeneity_residual",
    "update_signs",
    "exact_update_signs",
    "shifted_exponential_difference",
    "SignAgreement",
    "sign_agreement",
    "learning_agreement",
    "energy_difference_mp",
    "exponential_counterexample",
    "train_random_networks",
]


def homogeneity_residual(interaction, x, alpha, degree=None):
    """F(alpha x) - alpha**k F(x), elementwise (zero everywhere iff F is k-homogeneous at alpha).

    ``degree`` defaults to ``interaction.degree`` or, for the non-homogeneous
    polynomial-like interactions, their power ``n`` (the degree they would need).
    """
    F = interaction
    k = degree if degree is not None else (F.degree if F.degree is not None else getattr(F, "n", 1))
    with quiet_numpy():
        return F(alpha * x) - alpha ** k * F(x)


def update_signs(delta):
    """The update's sign: +1 where Delta >= 0 (the paper's sign(0) = +1), else -1."""
    xp = array_namespace(delta)
    return xp.where(delta >= 0, xp.ones_like(delta), -xp.ones_like(delta))


def _pair_arguments(memories, states, scale):
    """u+- of shape (G, B, K, N) for all neurons (small problems only)."""
    xp = array_namespace(memories, states)
    G = memories.shape[0]
    if states.ndim == 2:
        states = xp.broadcast_to(states[None], (G, *states.shape))
    d = similarities(memories, states)  # (G, B, K)
    zeta = memories[:, None, :, :]
    s = d[..., None] - zeta * states[:, :, None, :]
    a = xp.reshape(xp.asarray(scale, dtype=memories.dtype), (-1, 1, 1, 1))
    return a * (s + zeta), a * (s - zeta)


def shifted_exponential_difference(memories, states, scale=1.0):
    """Delta_i e^{-c_i} = sum_mu [exp(u+ - c_i) - exp(u- - c_i)], c_i = max over mu of u+-.

    The log-sum-exp trick for the exponential interaction: subtracting a common c
    from every argument multiplies Delta_i by e^{-c_i} > 0, so the sign is exact
    while the largest term is 1 (no overflow at any N or scale). Shape (G, B, N).
    """
    xp = array_namespace(memories, states)
    plus, minus = _pair_arguments(memories, states, scale)
    c = xp.maximum(xp.max(plus, axis=2, keepdims=True), xp.max(minus, axis=2, keepdims=True))
    with quiet_numpy():
        return xp.sum(xp.exp(plus - c) - xp.exp(minus - c), axis=2)


def exact_update_signs(memories, states, interaction, scale=1.0):
    """sign(Delta) computed so that overflow cannot decide it: (G, B, N) of +-1.

    Homogeneous F: each neuron's arguments divided by their largest magnitude
    (``energy_difference(..., rescale=True)``). Exponential F: the shift of
    :func:`shifted_exponential_difference`. Otherwise the plain energy difference.
    """
    F = interaction
    if isinstance(F, Exponential):
        return update_signs(shifted_exponential_difference(memories, states, scale))
    return update_signs(energy_difference(memories, states, F, scale, rescale=F.degree is not None))


class SignAgreement(NamedTuple):
    """Result of :func:`sign_agreement`."""

    agreement: np.ndarray  # (G,) fraction of (probe, neuron) pairs whose update signs agree
    disagree: np.ndarray  # (G, B, N) boolean mask of the disagreements
    delta_a: np.ndarray  # (G, B, N) Delta at scale a
    delta_b: np.ndarray  # (G, B, N) Delta at scale b


def sign_agreement(memories, states, interaction, scale_a, scale_b=1.0, *, exact=True):
    """How often the update sign at similarity scale a agrees with the one at scale b.

    agreement_g = mean over probes b and neurons i of
    [ sign sum_mu (F(a u+) - F(a u-)) == sign sum_mu (F(b u+) - F(b u-)) ],
    with u+- = s_mu +- zeta^mu_i (sign(0) = +1). The update theorem says this is 1
    for homogeneous F and any a, b > 0. ``exact=True`` computes the signs with
    :func:`exact_update_signs` (no overflow, no underflow to 0 from scale alone);
    ``exact=False`` uses the plain floating-point energy difference, as a network
    would. ``memories`` (G, K, N), ``states`` (G, B, N) or (B, N).
    """
    F = interaction
    if exact:
        sa = exact_update_signs(memories, states, F, scale_a)
        sb = exact_update_signs(memories, states, F, scale_b)
    else:
        sa = update_signs(energy_difference(memories, states, F, scale_a))
        sb = update_signs(energy_difference(memories, states, F, scale_b))
    with quiet_numpy():
        da = to_numpy(energy_difference(memories, states, F, scale_a))
        db = to_numpy(energy_difference(memories, states, F, scale_b))
    disagree = np.asarray(to_numpy(sa != sb))
    G = disagree.shape[0]
    return SignAgreement(1.0 - disagree.reshape(G, -1).mean(axis=1), disagree, da, db)


def learning_agreement(memories, probes, targets, interaction, beta, *, error_exponent=1):
    """Compare the learning rule with beta outside (beta**k) and inside (beta) of F.

    Original: C = tanh(beta**k sum_mu [F(u+) - F(u-)]); moved: C' = tanh(sum_mu
    [F(beta u+) - F(beta u-)]), with k the degree of F. For homogeneous F the tanh
    arguments, the losses and the gradients are identical. Returns a dict of the
    largest relative differences (each over the largest magnitude):
    ``argument``, ``loss``, ``gradient``, and the two argument arrays.
    """
    F = interaction
    k = F.degree if F.degree is not None else getattr(F, "n", 1)
    h_out = (beta ** k) * energy_difference(memories, probes, F, 1.0)
    h_in = energy_difference(memories, probes, F, beta)
    loss_out, g_out, _ = loss_and_gradient(memories, probes, targets, F, 1.0, beta ** k, error_exponent=error_exponent)
    loss_in, g_in, _ = loss_and_gradient(memories, probes, targets, F, beta, 1.0, error_exponent=error_exponent)
    h_out, h_in = to_numpy(h_out), to_numpy(h_in)

    def rel(x, y):
        x, y = np.asarray(to_numpy(x)), np.asarray(to_numpy(y))
        return float(np.max(np.abs(x - y)) / max(np.max(np.abs(x)), np.finfo(float).tiny))

    return {
        "argument": rel(h_out, h_in),
        "loss": rel(loss_out, loss_in),
        "gradient": rel(g_out, g_in),
        "h_outside": h_out,
        "h_inside": h_in,
    }


def energy_difference_mp(memories, state, interaction, scale=1, *, dps=60):
    """Reference Delta_i for one network and one state in mpmath at ``dps`` digits.

    ``memories`` (K, N) and ``state`` (N,) of numbers (floats convert exactly;
    ``scale`` may be an int, a float or an ``mpmath.mpf``/``Fraction``-like). Returns a
    list of N ``mpf``. Interactions: polynomial, rectified_polynomial,
    leaky_rectified_polynomial, exponential (by their ``name``).
    """
    import mpmath

    F = interaction
    with mpmath.workdps(dps):
        a = mpmath.mpf(scale) if not hasattr(scale, "numerator") else mpmath.mpf(scale.numerator) / scale.denominator
        Z = [[mpmath.mpf(float(z)) for z in row] for row in np.asarray(memories, dtype=np.float64)]
        x = [mpmath.mpf(float(v)) for v in np.asarray(state, dtype=np.float64)]

        def f(u):
            if F.name == "exponential":
                return mpmath.exp(u)
            if F.name == "polynomial":
                return u ** F.n
            if F.name == "rectified_polynomial":
                return u ** F.n if u > 0 else mpmath.mpf(0)
            if F.name == "leaky_rectified_polynomial":
                return u ** F.n if u >= 0 else mpmath.mpf(F.negative_slope) * u
            raise ValueError(f"no mpmath reference for {F.name!r}")

        out = []
        for i in range(len(x)):
            total = mpmath.mpf(0)
            for row in Z:
                s = mpmath.fsum(row[j] * x[j] for j in range(len(x)) if j != i)
                total += f(a * (s + row[i])) - f(a * (s - row[i]))
            out.append(total)
        return out


def exponential_counterexample():
    """A tiny network whose exponential update flips when the similarities are scaled.

    N = 4 neurons, K = 4 bipolar memories, state xi = (1, 1, 1, 1), neuron i = 0.
    Memory 1 agrees with xi except at neuron 0 (s = 3, zeta_0 = -1); memories 2-4
    have zeta_0 = +1 and s = -1. Then

        Delta(a) = (e^{2a} - e^{4a}) + 3 (1 - e^{-2a}),

    negative at a = 1 (the strongly matching memory wins) but positive at a = 1/4 = 1/N
    (three weak votes outweigh it). Returns ``(memories (K, N), state (N,), neuron)``.
    """
    memories = np.array(
        [[-1, 1, 1, 1], [1, -1, -1, 1], [1, -1, 1, -1], [1, 1, -1, -1]], dtype=np.float64
    )
    return memories, np.ones(4), 0


def train_random_networks(N, n_patterns, n_memories, interaction, *, temperature, n_networks=4, epochs=100,
                          learning_rate=0.1, lr_decay=0.99, init_std=0.1, noise=0.1, random_state=0):
    """Train G normalized networks (beta_in = 1/(N T), beta_out = 1) on random patterns.

    Each of the ``n_networks`` networks gets its own ``n_patterns`` random +-1
    patterns and memories drawn from N(0, init_std^2) clipped to [-1, 1], trained
    with :func:`damlite.training.train_memories` (autoassociative, full batch).
    Returns ``(memories (G, K, N), patterns (G, P, N), recall)`` with ``recall``
    the fraction of probes (patterns with a fraction ``noise`` of bits flipped)
    that relax exactly onto their pattern.
    """
    from .capacity import flip_bits, random_patterns
    from ..network import relax
    from ..training import train_memories

    rng = np.random.default_rng(random_state)
    pats = random_patterns((n_networks, n_patterns, N), rng)
    mem0 = np.clip(rng.normal(0.0, init_std, (n_networks, n_memories, N)), -1.0, 1.0)
    res = train_memories(mem0, pats, pats, interaction, beta_in=1.0 / (N * temperature), beta_out=1.0,
                         learning_rate=learning_rate, lr_decay=lr_decay, epochs=epochs, random_state=rng)
    probes = flip_bits(pats, noise, rng)
    final, *_ = relax(res.memories, probes, interaction, 1.0 / N, max_sweeps=30, random_state=rng)
    recall = float(np.mean(np.all(np.asarray(to_numpy(final)) == pats, axis=-1)))
    return res.memories, pats, recall
