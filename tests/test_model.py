"""The estimator: input checking, overflow and underflow reporting, recall, seeds, modes, dtypes,
classification."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import reference
import damlite
from damlite import DenseAssociativeMemory, NumericalOverflowError, NumericalUnderflowWarning
from damlite.network import relax as relax_kernel
from damlite.interactions import make_interaction


def dam_(**kwargs):
    kwargs.setdefault("backend", "numpy")
    return DenseAssociativeMemory(kwargs.pop("n_memories", 4), **kwargs)


def patterns(seed=0, B=5, N=64):
    rng = np.random.default_rng(seed)
    return np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)


def noisy(P, flips, seed):
    rng = np.random.default_rng(seed)
    out = P.copy()
    for b in range(P.shape[0]):
        out[b, rng.choice(P.shape[1], flips, replace=False)] *= -1
    return out


X8 = patterns(0, B=3, N=8)


# ------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("kwargs, match", [
    ({"n_memories": 0}, "n_memories"),
    ({"n_memories": 2.5}, "n_memories"),
    ({"n_memories": True}, "n_memories"),
    ({"n": 0}, "n must"),
    ({"n": -3}, "n must"),
    ({"n": 1.5}, "n must"),
    ({"temperature": 0.0}, "temperature"),
    ({"temperature": -1.0}, "temperature"),
    ({"temperature": float("nan")}, "temperature"),
    ({"temperature": float("inf")}, "temperature"),
    ({"error_exponent": 0}, "error_exponent"),
    ({"error_exponent": 1.5}, "error_exponent"),
    ({"interaction": "cubic"}, "interaction"),
    ({"variant": "modern"}, "variant"),
    ({"scaling": "auto"}, "scaling"),
    ({"scaling": "adaptive", "interaction": "exponential"}, "scaling"),
    ({"backend": "tpu"}, "backend"),
    ({"dtype": "int8"}, "dtype"),
    ({"dtype": "float128"}, "dtype"),
    ({"dtype": "float16", "variant": "original"}, "float16"),
    ({"epsilon": -0.1, "interaction": "leaky_rectified_polynomial"}, "epsilon"),
    ({"random_state": "seed"}, "random_state"),
])
def test_bad_parameters_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dam_(**kwargs, epochs=1).fit(X8)


@pytest.mark.parametrize("fit_kwargs, match", [
    ({"learning_rate": 0.0}, "learning_rate"),
    ({"learning_rate": -0.1}, "learning_rate"),
    ({"learning_rate": float("nan")}, "learning_rate"),
    ({"epochs": 0}, "epochs"),
    ({"epochs": 2.5}, "epochs"),
    ({"lr_decay": 0.0}, "lr_decay"),
    ({"lr_decay": 1.5}, "lr_decay"),
    ({"momentum": 1.0}, "momentum"),
    ({"momentum": -0.1}, "momentum"),
    ({"batch_size": 0}, "batch_size"),
])
def test_bad_fit_arguments_name_the_argument(fit_kwargs, match):
    with pytest.raises(ValueError, match=match):
        dam_(**{"epochs": 1, **fit_kwargs}).fit(X8)


BAD_STATES = [
    (np.array([[1.0, 0.0, -1, 1, 1, -1, 1, 1]]), "-1 and \\+1"),
    (np.array([[1.0, 2.0, -1, 1, 1, -1, 1, 1]]), "-1 and \\+1"),
    (np.array([[1.0, np.nan, -1, 1, 1, -1, 1, 1]]), "NaN or inf"),
    (np.array([[1.0, np.inf, -1, 1, 1, -1, 1, 1]]), "NaN or inf"),
    (np.ones((2, 9)), "8 columns"),
    (np.ones((2, 2, 8)), "2-D"),
    (np.ones((0, 8)), "empty"),
]


@pytest.mark.parametrize("states, what", BAD_STATES)
@pytest.mark.parametrize("method", ["relax", "energy_difference"])
def test_bad_states_name_the_argument(method, states, what):
    dam = dam_()
    dam.memories_ = np.zeros((4, 8))
    with pytest.raises(ValueError, match="states") as exc:
        getattr(dam, method)(states)
    assert re.search(what, str(exc.value)), str(exc.value)


@pytest.mark.parametrize("X, match", [
    (np.array([[1.0, 0.5, -1, 1]]), "X"),
    (np.array([[1.0, np.nan, -1, 1]]), "X"),
    (np.ones((2, 2, 4)), "X"),
])
def test_bad_training_data_names_X(X, match):
    with pytest.raises(ValueError, match=match):
        dam_(epochs=1).fit(X)
    with pytest.raises(ValueError, match="X"):
        dam_(epochs=1).fit(X * 3 if np.isfinite(X).all() else X, np.zeros(X.shape[0]))


def test_bad_labels_name_y():
    X = np.random.default_rng(0).uniform(-1, 1, (4, 6))
    with pytest.raises(ValueError, match="y"):
        dam_(epochs=1).fit(X, np.array([0, 1, 0]))
    clf = dam_(epochs=1).fit(X, np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="y"):
        clf.set_params(epochs=1, warm_start=True).fit(X, np.array([0, 1, 2, 1]))


@pytest.mark.parametrize("value, match", [
    (np.zeros((3, 8)), "memories_"),
    (np.zeros(8), "memories_"),
    (np.zeros((4, 8, 1)), "memories_"),
    (np.full((4, 8), np.nan), "memories_"),
])
def test_bad_memories_name_memories_(value, match):
    dam = dam_()
    with pytest.raises(ValueError, match=match):
        dam.memories_ = value


def test_relax_arguments_and_unfitted_estimator():
    dam = dam_()
    with pytest.raises(AttributeError, match="memories_"):
        dam.relax(X8)
    dam.memories_ = np.zeros((4, 8))
    with pytest.raises(ValueError, match="max_sweeps"):
        dam.relax(X8, max_sweeps=0)
    with pytest.raises(ValueError, match="mode"):
        dam.relax(X8, mode="parallel")
    with pytest.raises(ValueError, match="zero_sign"):
        dam.relax(X8, zero_sign=0)
    with pytest.raises(ValueError, match="needs a classifier.*is an associative memory"):
        dam.predict(X8)  # fitted (memories set): the message says which model it is


# ---------------------------------------------------------------- overflow
def _overflowing(N, n, dtype, K=2, seed=0):
    P = patterns(seed, B=2, N=N)
    dam = dam_(n_memories=K, n=n, variant="original", dtype=dtype, interaction="polynomial",
               temperature=0.5)  # the normalized scale: beta_out = 2**n
    dam.memories_ = P[:K]  # similarity with a stored pattern = N: F ~ N**n
    return dam, P


def _check_message(exc, N, n, dtype):
    msg = str(exc.value)
    assert f"N={N}" in msg and f"n={n}" in msg and dtype in msg


@pytest.mark.parametrize("N, n, dtype", [pytest.param(10_000, 30, "float32", marks=pytest.mark.slow),
                                         pytest.param(1000, 120, "float64", marks=pytest.mark.slow)])
def test_original_network_overflow_raises(N, n, dtype):
    dam, P = _overflowing(N, n, dtype)
    with pytest.raises(NumericalOverflowError) as exc:
        dam.energy_difference(P)
    _check_message(exc, N, n, dtype)
    with pytest.raises(NumericalOverflowError) as exc:
        dam.relax(P, mode="sync")
    _check_message(exc, N, n, dtype)
    with pytest.raises(NumericalOverflowError) as exc:
        dam.relax(P[:1], mode="async", max_sweeps=1)
    _check_message(exc, N, n, dtype)
    with pytest.raises(NumericalOverflowError) as exc:
        dam.loss(P)
    _check_message(exc, N, n, dtype)
    with pytest.raises(NumericalOverflowError) as exc:
        dam.loss_gradient(P)
    _check_message(exc, N, n, dtype)
    with pytest.raises(NumericalOverflowError) as exc:
        dam.set_params(epochs=2, warm_start=True).fit(P)  # from the stored patterns: overflow in epoch 0
    _check_message(exc, N, n, dtype)
    assert "fit (epoch 0)" in str(exc.value)
    np.testing.assert_array_equal(dam.memories_, P[:2])  # a failed fit leaves the memories alone


def test_original_fit_from_scratch_overflows_float32_at_paper_size():
    P = patterns(0, B=2, N=10_000)
    fitter = dam_(n_memories=2, n=30, variant="original", dtype="float32", interaction="polynomial",
                  random_state=0, init_std=1.0,
                  temperature=0.5)  # similarities ~ 0.6 sqrt(N) = 60: 60**30 > 3.4e38
    with pytest.raises(NumericalOverflowError, match="N=10000.*n=30.*float32"):
        fitter.set_params(epochs=3).fit(P)


def test_normalized_network_does_not_overflow_there():
    P = patterns(0, B=2, N=10_000)
    dam = dam_(n_memories=2, n=30, variant="normalized", dtype="float32", interaction="polynomial")
    dam.memories_ = P
    delta = dam.energy_difference(P)
    assert np.all(np.isfinite(delta)) and np.array_equal(np.sign(delta), P)
    assert np.isfinite(dam.loss(P))


def test_normalized_underflow_warns():
    rng = np.random.default_rng(0)
    dam = dam_(n_memories=3, n=200, variant="normalized", dtype="float32", interaction="polynomial")
    dam.memories_ = rng.uniform(-0.2, 0.2, (3, 20))
    with pytest.warns(NumericalUnderflowWarning, match="N=20.*n=200.*float32"):
        delta = dam.energy_difference(patterns(1, B=2, N=20))
    assert np.all(delta == 0)  # every term rounded to 0: what the warning is about
    dam.scaling = "adaptive"
    del dam.xp_  # parameters changed: re-validate (as fit does)
    dam.memories_ = dam.memories_
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalUnderflowWarning)
        assert np.all(dam.energy_difference(patterns(1, B=2, N=20)) != 0)


def test_exact_zero_is_not_underflow():
    dam = dam_(n=3)
    dam.memories_ = np.zeros((4, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalUnderflowWarning)
        assert np.all(dam.energy_difference(X8) == 0)


# ------------------------------------------------------------------ recall
P64 = patterns(0, B=5, N=64)
# Settings that learn reliably (5/5 seeds tried): polynomial n=4 (no dead memories: F' != 0 for
# negative similarities), K=10, normalized T=0.5 == original T=0.5*N (theorem: same network).
RECALL = dict(n_memories=10, interaction="polynomial", n=4, random_state=0)


@pytest.fixture(scope="module")
def trained():
    out = {}
    for variant, T in (("normalized", 0.5), ("original", 0.5 * 64)):
        dam = DenseAssociativeMemory(variant=variant, temperature=T, backend="numpy", **RECALL)
        out[variant] = dam.set_params(epochs=100, learning_rate=0.1).fit(P64)
    return out


@pytest.mark.parametrize("variant", ["normalized", "original"])
def test_training_lowers_the_loss(trained, variant):
    curve = trained[variant].loss_curve_
    assert curve.shape == (100,)
    assert curve[0] == pytest.approx(5 * 64, rel=0.05)  # C ~ 0 from small random memories
    assert curve[-1] < 0.01 * curve[0]
    assert trained[variant].loss(P64) == pytest.approx(curve[-1], abs=0.05 * curve[0])


@pytest.mark.parametrize("mode", ["async", "sync"])
@pytest.mark.parametrize("variant", ["normalized", "original"])
def test_relaxation_recovers_stored_patterns(trained, variant, mode):
    dam = trained[variant]
    for seed in range(3):
        probe = noisy(P64, 8, seed)  # 8 of 64 bits flipped
        result = dam.relax(probe, mode=mode, random_state=seed)
        assert isinstance(result, damlite.RelaxResult)
        np.testing.assert_array_equal(result.states, P64)
        assert result.converged.all() and result.n_sweeps <= 5
    assert dam.relax(P64, mode=mode).n_sweeps == 1  # stored patterns are fixed points


def test_variants_learn_the_same_network(trained):
    np.testing.assert_allclose(trained["original"].memories_, trained["normalized"].memories_, atol=1e-8)


# ------------------------------------------------------------------ seeds
def test_fixed_seeds_reproduce():
    a = dam_(n=3, random_state=4, epochs=10).fit(P64)
    b = dam_(n=3, random_state=4, epochs=10).fit(P64)
    np.testing.assert_array_equal(a.memories_, b.memories_)
    np.testing.assert_array_equal(a.loss_curve_, b.loss_curve_)
    probe = noisy(P64, 20, 0)
    r1, r2 = a.relax(probe), a.relax(probe)
    np.testing.assert_array_equal(r1.states, r2.states)
    c = dam_(n=3, random_state=5, epochs=10).fit(P64)
    assert not np.array_equal(a.memories_, c.memories_)
    # minibatch order comes from the seed too
    d = dam_(n=3, random_state=4, epochs=3, batch_size=2).fit(P64)
    e = dam_(n=3, random_state=4, epochs=3, batch_size=2).fit(P64)
    np.testing.assert_array_equal(d.memories_, e.memories_)


def test_different_seeds_give_different_async_orders():
    rng = np.random.default_rng(0)
    memories = rng.uniform(-1, 1, (6, 16))
    states = np.where(rng.random((30, 16)) < 0.5, -1.0, 1.0)
    dam = dam_(n_memories=6, n=3)
    dam.memories_ = memories
    one = [dam.relax(states, random_state=s, max_sweeps=1).states for s in (1, 1, 2)]
    np.testing.assert_array_equal(one[0], one[1])
    assert not np.array_equal(one[0], one[2])  # another order, another trajectory
    with pytest.warns(damlite.RelaxationWarning, match="alternate between two states"):
        sync = [dam.relax(states, mode="sync", random_state=s).states for s in (1, 2)]
    np.testing.assert_array_equal(*sync)  # sync has no order


def test_sync_reports_a_two_cycle():
    dam = dam_(n_memories=1, n=2, interaction="polynomial", variant="original")
    dam.memories_ = np.array([[1.0, 1.0]])
    with pytest.warns(damlite.RelaxationWarning, match=r"1 of 1 probes did not reach a fixed point"):
        result = dam.relax(np.array([[1.0, -1.0]]), mode="sync", max_sweeps=6)
    assert not bool(result.converged[0]) and result.n_sweeps == 6
    assert list(result.status) == ["cycle"]
    np.testing.assert_array_equal(result.states, [[1.0, -1.0]])  # even number of flips
    settled = dam.relax(np.array([[1.0, -1.0]]), mode="async", random_state=0)
    assert bool(settled.converged[0]) and abs(settled.states.sum()) == 2
    assert list(settled.status) == ["fixed_point"]


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_zero_sign_conventions(mode):
    dam = dam_(n=2)
    dam.memories_ = np.zeros((4, 8))
    state = X8[:1]
    assert np.all(dam.relax(state, mode=mode).states == 1)  # the paper: sign(0) = +1
    assert np.all(dam.relax(state, mode=mode, zero_sign=-1).states == -1)  # McAlister's code
    kept = dam.relax(state, mode=mode, zero_sign="keep")
    np.testing.assert_array_equal(kept.states, state)
    assert bool(kept.converged[0]) and kept.n_sweeps == 1


# ------------------------------------------------------------------ dtypes
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_low_precision_normalized_runs(dtype):
    dam = DenseAssociativeMemory(dtype=dtype, temperature=0.5, backend="numpy", **RECALL)
    dam.set_params(epochs=60, learning_rate=0.1).fit(P64)
    assert dam.memories_.dtype == np.dtype(dtype)
    assert np.all(np.isfinite(dam.loss_curve_)) and dam.loss_curve_[-1] < 0.2 * dam.loss_curve_[0]
    result = dam.relax(noisy(P64, 4, 0), random_state=0)
    assert result.states.dtype == np.dtype(dtype)
    assert np.mean(np.all(result.states == P64, axis=1)) >= 0.8
    assert dam.energy_difference(P64).dtype == np.dtype(dtype)


# ---------------------------------------------------------------- classification
def _blobs(seed=0, per_class=20, N=12, labels=("cat", "dog", "emu")):
    rng = np.random.default_rng(seed)
    centres = np.where(rng.random((len(labels), N)) < 0.5, -0.8, 0.8)
    X = np.concatenate([np.clip(c + rng.normal(0, 0.3, (per_class, N)), -1, 1) for c in centres])
    y = np.repeat(np.array(labels), per_class)
    order = rng.permutation(len(y))
    return X[order], y[order]


def test_classification_on_a_separable_dataset():
    X, y = _blobs()
    clf = dam_(n_memories=12, interaction="rectified_polynomial", n=3, temperature=0.3, random_state=0,
               init_mean=0.0, init_std=0.3)
    clf.set_params(epochs=150, learning_rate=0.05).fit(X, y)
    assert list(clf.classes_) == ["cat", "dog", "emu"]
    assert clf.memories_.shape == (12, 12 + 3)  # class neurons appended after the inputs
    assert clf.loss_curve_[-1] < 0.5 * clf.loss_curve_[0]
    pred = clf.predict(X)
    assert pred.dtype.kind == "U" and set(pred) <= {"cat", "dog", "emu"}
    assert clf.score(X, y) >= 0.95
    Xt, yt = _blobs(seed=0, per_class=10)  # the same centres, new noise
    assert clf.score(Xt, yt) >= 0.9
    scores = np.asarray(clf.decision_function(X))
    assert scores.shape == (len(y), 3) and np.all(np.abs(scores) <= 1)
    assert np.array_equal(clf.classes_[np.argmax(scores, axis=1)], pred)
    # input-neuron memories are clamped to [-1, 1]; the class neurons' entries are not
    assert np.all(np.abs(clf.memories_[:, :12]) <= 1)


def test_classification_loss_matches_reference():
    X, y = _blobs(seed=1, per_class=2, N=5, labels=(0, 1))
    clf = dam_(n_memories=3, interaction="leaky_rectified_polynomial", n=2, temperature=0.7, random_state=1,
               error_exponent=2, epsilon=0.05)
    clf.set_params(epochs=2).fit(X, y)
    N = X.shape[1] + 2
    probes = np.concatenate([X, -np.ones((len(y), 2))], axis=1)
    targets = np.where(y[:, None] == np.array([0, 1])[None, :], 1.0, -1.0)
    _, b_in, b_out = clf.scales(N)
    want = float(reference.loss(clf.memories_, probes, targets, "leaky_rectified_polynomial", 2, b_in, b_out, 2,
                                slice(5, 7), 0.05))
    assert clf.loss(X, y) == pytest.approx(want, rel=1e-12)
    want_grad = np.array(reference.to_float(reference.gradient(
        clf.memories_, probes, targets, "leaky_rectified_polynomial", 2, b_in, b_out, 2, slice(5, 7), 0.05)))
    np.testing.assert_allclose(clf.loss_gradient(X, y), want_grad, rtol=1e-9, atol=1e-12 * np.abs(want_grad).max())


def test_neurons_option_trains_a_subset():
    dam = dam_(n=3, random_state=0, epochs=5, neurons=slice(0, 10)).fit(P64)
    assert dam.loss_curve_[0] == pytest.approx(5 * 10, rel=0.05)  # only 10 neurons' errors count
    with pytest.raises(ValueError, match="neurons"):
        dam_(n=3, epochs=1, neurons=slice(0, 2)).fit(_blobs()[0], _blobs()[1])


def test_model_relax_uses_the_kernel_with_its_scale():
    """The estimator's relax is the kernel's with a = 1 (original) or 1/N (normalized)."""
    rng = np.random.default_rng(2)
    memories = rng.uniform(-1, 1, (4, 10))
    probe = np.where(rng.random((3, 10)) < 0.5, -1.0, 1.0)
    for variant, a in (("original", 1.0), ("normalized", 0.1)):
        dam = dam_(n=3, variant=variant, interaction="exponential")
        dam.memories_ = memories
        want = relax_kernel(memories[None], probe, make_interaction("exponential"), a, random_state=7)[0][0]
        np.testing.assert_array_equal(dam.relax(probe, random_state=7).states, want)
