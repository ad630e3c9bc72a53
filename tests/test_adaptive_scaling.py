"""Adaptive (per-neuron) scaling: float32 update signs against an mpmath reference.

``DenseAssociativeMemory(..., scaling="adaptive")`` divides both arguments of F,
for every neuron, by c_i = max_mu max(|u+|, |u-|) before F is applied. For F
homogeneous of degree n the energy difference is then multiplied by c_i**-n > 0:
its sign is untouched, while the largest term is 1, so nothing overflows and the
terms that matter cannot underflow, whatever n is.

"Exact sign" can only hold up to float32's own rounding: when the true Delta is
smaller than the rounding errors of the terms it is made of, no float32
computation can be trusted to get its sign. The tolerance used here is an a
priori bound on those errors, derived below (``_error_bound``), in units of the
rescaled terms (largest term = 1). Where the exact |Delta| / c**n exceeds twice
that bound the float32 sign must equal the exact one; everything else is a
near-tie and is not judged.

The reference is written here from the equations (independent of damlite's
kernels): the arguments are exact (float32 values are integers times 2**-149),
F and the sum over memories run in mpmath at 50 significant digits.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from mpmath import mp, mpf

import damlite

U32 = 2.0**-24  # float32 unit roundoff (round to nearest)
TINY32 = 2.0**-149  # smallest float32 subnormal: the absolute error of a product that underflows
SHIFT = 149  # every float32 value times 2**149 is an integer
DPS = 50


def _gamma(k):
    """Higham's gamma_k = k u / (1 - k u) for float32."""
    return k * U32 / (1 - k * U32)


def _ints(values):
    """float32 values as Python integers times 2**-SHIFT (exact)."""
    out = []
    for v in np.asarray(values, dtype=np.float32).ravel():
        num, den = float(v).as_integer_ratio()
        out.append(num * ((1 << SHIFT) // den))
    return np.array(out, dtype=object).reshape(np.shape(values))


def _reference(memories, state, n, rectified):
    """Per neuron i: (Delta_i / c_i**n, tolerance_i) in mpmath, for update scale a = 1.

    A positive scale a (1/N for the normalized network) multiplies every argument
    and c_i alike, so the rescaled quantities do not depend on it.
    """
    K, N = memories.shape
    Z = _ints(memories)
    x = [int(v) for v in state]
    l1 = [sum(abs(z) for z in Z[m]) for m in range(K)]  # ||zeta^mu||_1 * 2**SHIFT
    d = [sum(Z[m, j] * x[j] for j in range(N)) for m in range(K)]
    unit = mpf(2) ** -SHIFT
    out = []
    with mp.workdps(DPS):
        for i in range(N):
            args, errs = [], []
            for m in range(K):
                s = d[m] - Z[m, i] * x[i]
                # float32 error of one argument: the dot product d (any summation order:
                # gamma_N ||zeta||_1), then s = d - zeta_i xi_i, a * (s +- zeta_i), and the
                # division by c: a few roundings of at most |s| + |zeta_i| each.
                err = _gamma(N) * l1[m] + 6 * U32 * (abs(s) + abs(Z[m, i]))
                for u in (s + Z[m, i], s - Z[m, i]):
                    args.append(mpf(u) * unit)
                    errs.append(mpf(err) * unit)
            c = max(abs(u) for u in args)
            if c == 0:
                out.append((mpf(0), mpf(1)))
                continue

            def F(v):
                return mpf(0) if (rectified and v <= 0) else v**n

            delta = mp.fsum(F(u / c) * (1 if k % 2 == 0 else -1) for k, u in enumerate(args))
            out.append((delta, _error_bound(args, errs, c, n, K)))
    return out


def _error_bound(args, errs, c, n, K):
    """A priori bound on |float32 Delta-hat - Delta / c**n|, largest term = 1.

    For each term with exact rescaled argument v and argument error delta:
    F is n (|v| + delta)**(n-1)-Lipschitz near v (mean value theorem, also for the
    rectified F), the power by repeated squaring adds a relative error of at most
    about (n - 1) u, and a product that underflows loses at most a subnormal unit
    per multiplication (2 log2 n of them, each factor at most 1 in size); the
    differences and the sum over the 2K terms add gamma_{2K} of their magnitude.
    """
    steps = 2 * max(1, math.ceil(math.log2(max(n, 2))))
    total = mpf(0)
    for u, e in zip(args, errs):
        v, dv = abs(u) / c, e / c
        top = v + dv
        total += n * top ** (n - 1) * dv + (_gamma(n + 2 * K + 2)) * top**n + steps * TINY32
    return total


def _adaptive_float32(memories, states, n, interaction, variant):
    K = memories.shape[0]
    dam = damlite.DenseAssociativeMemory(K, interaction=interaction, n=n, variant=variant, scaling="adaptive",
                                         dtype="float32", backend="numpy")
    dam.memories_ = memories
    with warnings.catch_warnings():
        # Delta = 0 exactly (zeta_i = 0) with some tiny terms rounded to 0: a legitimate warning.
        warnings.simplefilter("ignore", damlite.NumericalUnderflowWarning)
        return np.asarray(damlite.to_numpy(dam.energy_difference(states)), dtype=np.float64)


# ------------------------------------------------------------------ strategies
@st.composite
def networks(draw):
    """(memories float32 (K, N), states (B, N), n, interaction, variant).

    Half of the examples are "trained-like": memories near random patterns and
    states near one memory (the regime where large n matters); the rest are
    arbitrary float32 entries in [-1, 1] (zeros and subnormals included).
    """
    N = draw(st.integers(2, 14))
    K = draw(st.integers(1, 6))
    B = draw(st.integers(1, 2))
    n = draw(st.one_of(st.integers(1, 40), st.sampled_from([99, 100, 300, 511, 999, 1000])))
    interaction = draw(st.sampled_from(["polynomial", "rectified_polynomial"]))
    variant = draw(st.sampled_from(["original", "normalized"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):
        patterns = rng.choice([-1.0, 1.0], size=(K, N))
        noise = draw(st.sampled_from([0.0, 0.1, 0.5]))
        memories = np.clip(patterns * rng.uniform(0.5, 1.0, size=(K, 1)) + rng.normal(0, noise, size=(K, N)), -1, 1)
        flips = rng.random((B, N)) < draw(st.sampled_from([0.0, 0.1, 0.25, 0.4]))
        states = patterns[rng.integers(0, K, size=B)] * np.where(flips, -1.0, 1.0)
    else:
        entries = st.floats(-1, 1, width=32, allow_subnormal=True)
        memories = np.array(draw(st.lists(entries, min_size=K * N, max_size=K * N)), dtype=np.float64).reshape(K, N)
        states = rng.choice([-1.0, 1.0], size=(B, N))
    return memories.astype(np.float32), states, n, interaction, variant


# ------------------------------------------------------------------------ tests
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks())
def test_adaptive_float32_signs_match_mpmath(net):
    memories, states, n, interaction, variant = net
    delta = _adaptive_float32(memories, states, n, interaction, variant)
    assert np.all(np.isfinite(delta))
    # The largest rescaled term is 1 in size, so no rescaled Delta exceeds 2K.
    assert np.all(np.abs(delta) <= 2 * memories.shape[0] * (1 + 1e-3))
    judged = 0
    for b, state in enumerate(states):
        for i, (exact, tol) in enumerate(_reference(memories, state, n, interaction == "rectified_polynomial")):
            if abs(exact) <= 2 * tol:
                continue  # a near-tie: within float32 rounding of 0
            judged += 1
            assert np.sign(delta[b, i]) == int(mp.sign(exact)), (
                f"neuron {i} of state {b}: float32 {delta[b, i]!r}, exact {mp.nstr(exact, 8)}, tolerance "
                f"{mp.nstr(tol, 3)}, n={n}, {interaction}, {variant}")
    event(f"judged {'all' if judged == states.size else 'some' if judged else 'none'} of the entries")


def _near_memory_case(N=40, K=8, n=1000, flip=0.2, seed=3):
    rng = np.random.default_rng(seed)
    patterns = rng.choice([-1.0, 1.0], size=(K, N))
    memories = np.clip(0.8 * patterns + rng.normal(0, 0.2, size=(K, N)), -1, 1).astype(np.float32)
    states = patterns[:2] * np.where(rng.random((2, N)) < flip, -1.0, 1.0)
    return memories, states


def test_adaptive_beats_fixed_scaling_at_n_1000():
    """The property above is not vacuous: at n = 1000 every entry is judged, the fixed
    normalized network in float32 has only zeros (decided by sign(0)), the adaptive one
    gets every sign right."""
    n = 1000
    memories, states = _near_memory_case(n=n)
    ref = [_reference(memories, s, n, False) for s in states]
    exact = np.array([[int(mp.sign(e)) for e, _ in row] for row in ref])
    assert all(abs(e) > 2 * t for row in ref for e, t in row)  # no near-ties here
    adaptive = _adaptive_float32(memories, states, n, "polynomial", "normalized")
    assert np.array_equal(np.sign(adaptive), exact)

    fixed = damlite.DenseAssociativeMemory(memories.shape[0], interaction="polynomial", n=n, dtype="float32",
                                           backend="numpy")
    fixed.memories_ = memories
    with pytest.warns(damlite.NumericalUnderflowWarning):
        delta = damlite.to_numpy(fixed.energy_difference(states))
    assert np.all(delta == 0)
    assert 0 < np.mean(exact == -1) < 1  # so sign(0) = +1 gets some of them wrong


@pytest.mark.slow  # whole computations (tens of seconds on 2 cores): the full suite runs it
def test_adaptive_relaxation_in_float32_at_n_1000():
    """Relaxation (async) with adaptive scaling in float32 ends where the float64
    adaptive network ends, at a fixed point of the update; the fixed-scaling float32
    network sees only Delta = 0 and sign(0) = +1 drives every neuron to +1."""
    n = 1000
    memories, states = _near_memory_case(n=n)
    K = memories.shape[0]
    results = {}
    for dtype, scaling in (("float32", "adaptive"), ("float64", "adaptive"), ("float32", "fixed")):
        dam = damlite.DenseAssociativeMemory(K, interaction="polynomial", n=n, dtype=dtype, scaling=scaling,
                                             backend="numpy")
        dam.memories_ = memories
        if scaling == "fixed":  # every Delta is 0 by underflow: relax says so (never silent; commit 33fbdf0)
            with pytest.warns(damlite.NumericalUnderflowWarning, match="sign"):
                out = dam.relax(states, random_state=0)
        else:
            out = dam.relax(states, random_state=0)
        results[dtype, scaling] = np.asarray(damlite.to_numpy(out.states))
        if scaling == "adaptive":
            assert bool(np.all(damlite.to_numpy(out.converged)))
            fixed_point = np.sign(_adaptive_float32(memories, results[dtype, scaling], n, "polynomial", "normalized"))
            assert np.array_equal(fixed_point, results[dtype, scaling])
    assert np.array_equal(results["float32", "adaptive"], results["float64", "adaptive"])
    assert not np.any(np.all(results["float32", "adaptive"] == 1, axis=1))
    assert np.all(results["float32", "fixed"] == 1)


@pytest.mark.parametrize("interaction", ["leaky_rectified_polynomial", "exponential"])
def test_adaptive_scaling_rejected_for_non_homogeneous(interaction):
    X = np.where(np.random.default_rng(0).random((4, 10)) < 0.5, -1.0, 1.0)
    dam = damlite.DenseAssociativeMemory(3, interaction=interaction, n=3, scaling="adaptive", backend="numpy")
    with pytest.raises(ValueError, match="homogeneous"):
        dam.set_params(epochs=1).fit(X)
    with pytest.raises(ValueError, match="homogeneous"):
        dam.memories_ = np.zeros((3, 10))


@pytest.mark.parametrize("interaction", ["polynomial", "rectified_polynomial"])
def test_adaptive_scaling_accepted_for_homogeneous(interaction):
    dam = damlite.DenseAssociativeMemory(3, interaction=interaction, n=7, scaling="adaptive", backend="numpy")
    dam.memories_ = np.ones((3, 5))
    assert dam.energy_difference(np.ones((1, 5))).shape == (1, 5)
