"""Storage capacity, measured: the classical Hopfield network and the idealised DAM.

Two models, both storing P random bipolar patterns xi^1..xi^P in {-1,+1}^N.

*Hopfield (1982)*, Hebbian weights and zero diagonal::

    W = (1/N) sum_mu xi^mu (xi^mu)^T,   W_ii = 0,
    xi_i <- sign(sum_j W_ij xi_j)       (asynchronous, sign(0) = +1).

The classical analysis (Amit, Gutfreund & Sompolinsky; see Hertz, Krogh & Palmer
1991) puts the retrieval transition at P/N = alpha_c ~ 0.138 for large N: below it
a stable state lies close to every pattern, above it that state disappears.

*Dense Associative Memory, idealised* (Krotov & Hopfield 2016): the memories are the
patterns themselves, zeta = xi (no training), and neuron i is updated by::

    xi_i <- sign sum_mu [F(zeta^mu_i + s_mu) - F(-zeta^mu_i + s_mu)],
    s_mu = sum_{j != i} zeta^mu_j xi_j.

For F(x) = x^n Krotov & Hopfield estimate that a stored pattern stays a fixed point
(with high probability) up to

    P_max ~ N^(n-1) / (2 (2n-3)!! ln N)      (:func:`krotov_hopfield_capacity`).

Everything here draws its randomness from ``random_state`` (None, an int or a
numpy Generator); the DAM measurements run on damlite's batched kernels, G
independent networks at once.
"""
from __future__ import annotations

import math

import numpy as np

from ..backend import get_backend, to_numpy
from ..interactions import make_interaction
from ..network import energy_difference, relax
from ..validation import check_random_state

__all__ = [
    "ALPHA_C",
    "random_patterns",
    "flip_bits",
    "hebbian_weights",
    "hopfield_relax",
    "hopfield_capacity_curve",
    "krotov_hopfield_capacity",
    "dam_capacity_curve",
    "capacity_from_curve",
    "dam_recall_example",
]

#: The Hopfield network's retrieval transition P/N for large N (Amit et al. 1985).
ALPHA_C = 0.138


def random_patterns(shape, random_state=None):
    """Independent, equiprobable +-1 entries (float64 NumPy array of ``shape``)."""
    rng = check_random_state(random_state)
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def flip_bits(patterns, fraction, random_state=None):
    """Copy of ``patterns`` with exactly ``round(fraction * N)`` entries of each row flipped."""
    rng = check_random_state(random_state)
    patterns = np.asarray(patterns, dtype=np.float64)
    N = patterns.shape[-1]
    k = int(round(fraction * N))
    out = patterns.copy()
    if k == 0:
        return out
    rows = out.reshape(-1, N)
    idx = np.argsort(rng.random(rows.shape), axis=1)[:, :k]
    np.put_along_axis(rows, idx, -np.take_along_axis(rows, idx, axis=1), axis=1)
    return rows.reshape(out.shape)


def hebbian_weights(patterns):
    """Hebbian weights W = (1/N) sum_mu xi^mu xi^mu^T with zero diagonal.

    ``patterns`` has shape (P, N) or (G, P, N) (G networks); returns (N, N) or (G, N, N).
    """
    x = np.asarray(patterns, dtype=np.float64)
    N = x.shape[-1]
    W = np.swapaxes(x, -1, -2) @ x / N
    idx = np.arange(N)
    W[..., idx, idx] = 0.0
    return W


def hopfield_relax(weights, states, *, max_sweeps=50, random_state=None):
    """Asynchronous Hopfield dynamics xi_i <- sign(sum_j W_ij xi_j), sign(0) = +1.

    ``weights`` (G, N, N), ``states`` (G, B, N). Neurons are visited in a random
    order drawn afresh for each sweep (shared by the batch); the local fields
    h = xi W are kept up to date by a rank-one correction when a neuron flips.
    Stops after a sweep that changes nothing. Returns (states, converged (G, B)).
    """
    rng = check_random_state(random_state)
    W = np.asarray(weights, dtype=np.float64)
    xi = np.array(states, dtype=np.float64, copy=True)
    h = xi @ W  # W is symmetric: h[g, b, i] = sum_j W_ij xi_j
    changed = np.ones(xi.shape[:2], dtype=bool)
    for _ in range(max_sweeps):
        changed = np.zeros(xi.shape[:2], dtype=bool)
        for i in rng.permutation(xi.shape[-1]):
            new = np.where(h[..., i] >= 0, 1.0, -1.0)
            flip = new != xi[..., i]
            if flip.any():
                # h_j += W_ji (new_i - old_i) for the states that flipped
                h += (2.0 * new * flip)[..., None] * W[:, None, i, :]
                xi[..., i] = new
                changed |= flip
        if not changed.any():
            break
    return xi, ~changed


def hopfield_capacity_curve(N, loads, *, n_networks=4, noise=0.05, max_sweeps=50, random_state=None):
    """Measure how a Hebbian Hopfield network of N neurons copes with P = load * N patterns.

    For each load, ``n_networks`` networks store P random patterns; every pattern is
    (a) tested as a fixed point and (b) relaxed from a copy with a fraction ``noise``
    of its bits flipped. Returns a dict of arrays over the loads:

    ``P``; ``fixed`` (fraction of patterns that are exact fixed points);
    ``bit_errors`` (fraction of bits that one update would flip, starting at a pattern);
    ``overlap`` (mean overlap m = xi . xi_final / N after relaxing the noisy probe);
    ``recovered`` (fraction of noisy probes that relax to within 5% of their pattern,
    m >= 0.9: the "retrieval" that disappears near P/N = 0.138).
    """
    rng = check_random_state(random_state)
    out = {k: [] for k in ("P", "fixed", "bit_errors", "overlap", "recovered")}
    for load in loads:
        P = max(1, int(round(load * N)))
        pats = random_patterns((n_networks, P, N), rng)
        W = hebbian_weights(pats)
        h = pats @ W
        wrong = np.where(h >= 0, 1.0, -1.0) != pats
        probes = flip_bits(pats, noise, rng)
        final, _ = hopfield_relax(W, probes, max_sweeps=max_sweeps, random_state=rng)
        m = np.mean(final * pats, axis=-1)
        out["P"].append(P)
        out["fixed"].append(float(np.mean(~wrong.any(axis=-1))))
        out["bit_errors"].append(float(np.mean(wrong)))
        out["overlap"].append(float(np.mean(m)))
        out["recovered"].append(float(np.mean(m >= 0.9)))
    return {k: np.asarray(v) for k, v in out.items()} | {"load": np.asarray(loads, dtype=float), "N": N,
                                                        "noise": noise}


def _double_factorial(k):
    return math.prod(range(k, 0, -2)) if k > 0 else 1


def krotov_hopfield_capacity(N, n):
    """Krotov & Hopfield's estimate N^(n-1) / (2 (2n-3)!! ln N) for F(x) = x^n.

    The number of random patterns a DAM with the patterns as memories holds while
    each stays a fixed point with high probability; n = 2 gives Hopfield's
    N / (2 ln N).
    """
    N = np.asarray(N, dtype=np.float64)
    return N ** (n - 1) / (2.0 * _double_factorial(2 * n - 3) * np.log(N))


def dam_capacity_curve(
    N,
    n,
    P_values,
    *,
    interaction="polynomial",
    n_networks=4,
    n_probes=16,
    noise=0.1,
    relax_sweeps=0,
    backend="auto",
    dtype="float64",
    random_state=None,
):
    """Store P random patterns as the memories of G = ``n_networks`` DAMs and test them.

    For each P in ``P_values``: memories zeta = patterns (G, P, N), with
    F = ``make_interaction(interaction, n)`` at scale a = 1/N (the same signs as
    a = 1 for homogeneous F, without overflow). ``n_probes`` of the stored
    patterns per network are tested:

    ``fixed``: fraction that are fixed points, sign(Delta_i) = xi_i for every i
    (sign(0) = +1);
    ``bit_errors``: fraction of their bits that one update would flip;
    ``recovered`` (only when ``relax_sweeps > 0``): fraction of probes with a
    fraction ``noise`` of bits flipped that relax (asynchronously, at most
    ``relax_sweeps`` sweeps) exactly onto their pattern; NaN otherwise.

    Returns a dict of arrays over ``P_values`` plus ``N`` and ``n``.
    """
    rng = check_random_state(random_state)
    xp, _ = get_backend(backend)
    dt = getattr(xp, dtype)
    F = make_interaction(interaction, n)
    out = {k: [] for k in ("P", "fixed", "bit_errors", "recovered")}
    for P in P_values:
        P = int(P)
        B = min(n_probes, P)
        pats = random_patterns((n_networks, P, N), rng)
        mem = xp.asarray(pats, dtype=dt)
        probe = mem[:, :B, :]
        delta = to_numpy(energy_difference(mem, probe, F, 1.0 / N))
        wrong = np.where(delta >= 0, 1.0, -1.0) != pats[:, :B, :]
        rec = np.nan
        if relax_sweeps > 0:
            noisy = xp.asarray(flip_bits(pats[:, :B, :], noise, rng), dtype=dt)
            final, *_ = relax(mem, noisy, F, 1.0 / N, max_sweeps=relax_sweeps, random_state=rng)
            rec = float(np.mean(np.all(to_numpy(final) == pats[:, :B, :], axis=-1)))
        out["P"].append(P)
        out["fixed"].append(float(np.mean(~wrong.any(axis=-1))))
        out["bit_errors"].append(float(np.mean(wrong)))
        out["recovered"].append(rec)
    return {k: np.asarray(v) for k, v in out.items()} | {"N": N, "n": n}


def capacity_from_curve(P, fraction, level=0.9):
    """Largest P at which ``fraction`` is still >= ``level``, interpolated in log P.

    ``P`` increasing. Returns the first crossing from above (linear interpolation of
    ``fraction`` against log P between the bracketing points); ``P[-1]`` if the curve
    never drops below ``level`` and ``nan`` if it starts below it.
    """
    P = np.asarray(P, dtype=np.float64)
    f = np.asarray(fraction, dtype=np.float64)
    below = np.nonzero(f < level)[0]
    if below.size == 0:
        return float(P[-1])
    j = int(below[0])
    if j == 0:
        return float("nan")
    x0, x1 = np.log(P[j - 1]), np.log(P[j])
    t = (f[j - 1] - level) / (f[j - 1] - f[j])
    return float(np.exp(x0 + t * (x1 - x0)))


def dam_recall_example(N=100, P=20, n=2, noise=0.2, *, interaction="polynomial", probe_index=0, random_state=0):
    """Relax one noisy probe in a DAM whose memories are P random patterns (zeta = patterns).

    The patterns depend only on ``random_state``, so changing ``n`` or ``noise``
    keeps the same stored patterns. Returns ``(pattern, probe, final, overlap)``
    as NumPy arrays (N,) and the final overlap m = pattern . final / N.
    """
    rng = np.random.default_rng(random_state)
    pats = random_patterns((1, P, N), rng)
    probe = flip_bits(pats[:, probe_index:probe_index + 1], noise, np.random.default_rng([random_state, 1]))
    xp, _ = get_backend("auto")
    F = make_interaction(interaction, n)
    final, *_ = relax(xp.asarray(pats), xp.asarray(probe), F, 1.0 / N, max_sweeps=50, random_state=random_state)
    final = to_numpy(final)[0, 0]
    pattern = pats[0, probe_index]
    return pattern, probe[0, 0], final, float(pattern @ final / N)
