"""Tests of damlite.classification: metrics, batching, the two variants' equivalence, memory bounds."""
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import damlite
from damlite.classification import (
    KROTOV_CONFIG,
    accuracy_from_confusion,
    class_energy_differences,
    classifier_scales,
    confusion_matrices,
    equivalent_temperature,
    evaluate_classifiers,
    macro_f1_from_confusion as macro_f1,
    parameter_grid,
    predict_classes,
    train_classifiers,
)
from damlite.datasets import load_mnist
from damlite.interactions import make_interaction
from damlite.network import loss_and_gradient


@pytest.fixture(scope="module")
def digits():
    return load_mnist(source="bundled", dtype="float64")


def _f1_reference(y_true, y_pred, C):
    scores = []
    for c in range(C):
        tp = np.sum((y_true == c) & (y_pred == c))
        fp = np.sum((y_true != c) & (y_pred == c))
        fn = np.sum((y_true == c) & (y_pred != c))
        scores.append(0.0 if 2 * tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn))
    return np.mean(scores)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 40), st.integers(2, 6), st.integers(0, 2**32 - 1))
def test_confusion_and_macro_f1_match_a_loop(G, B, C, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, B)
    pred = rng.integers(0, C, (G, B))
    cm = confusion_matrices(y, pred, C)
    assert cm.shape == (G, C, C) and np.all(cm.sum(axis=(1, 2)) == B)
    for g in range(G):
        for i in range(C):
            for j in range(C):
                assert cm[g, i, j] == np.sum((y == i) & (pred[g] == j))
        assert macro_f1(cm[g]) == pytest.approx(_f1_reference(y, pred[g], C))
        assert accuracy_from_confusion(cm[g]) == pytest.approx(np.mean(y == pred[g]))
    np.testing.assert_allclose(macro_f1(cm), [_f1_reference(y, p, C) for p in pred])


def test_perfect_and_failed_predictions():
    y = np.array([0, 1, 2, 2])
    cm = confusion_matrices(y, np.stack([y, -np.ones(4, int)]), 3)
    assert macro_f1(cm)[0] == 1.0 and accuracy_from_confusion(cm)[0] == 1.0
    assert cm[1].sum() == 0 and macro_f1(cm)[1] == 0.0  # a failed network counts in no column


def test_parameter_grid_is_learning_rate_major():
    lr, T = parameter_grid([1, 2], [10, 20, 30])
    assert lr.tolist() == [1, 1, 1, 2, 2, 2] and T.tolist() == [10, 20, 30, 10, 20, 30]


def test_scales_and_equivalent_temperature():
    b_in, b_out = classifier_scales("original", [540.0], 20, 794)
    assert b_in[0] == 1.0 and b_out[0] == pytest.approx(540.0 ** -20)
    T = equivalent_temperature(540.0, 794)
    b_in, b_out = classifier_scales("normalized", T, 20, 794)
    assert b_in == pytest.approx(1 / 540.0) and b_out == 1.0
    assert equivalent_temperature(T, 794, to="original") == pytest.approx(540.0)
    with pytest.raises(ValueError, match="variant"):
        classifier_scales("other", 1.0, 2, 10)
    with pytest.raises(ValueError, match="temperature"):
        classifier_scales("original", 0.0, 2, 10)


def test_krotov_original_and_normalized_give_the_same_outputs(digits):
    """By homogeneity C agrees to rounding at T_norm = T_orig / N (n = 20, Krotov's T = 540)."""
    rng = np.random.default_rng(0)
    N = 794
    mem = np.clip(rng.normal(-0.3, 0.3, (1, 100, N)), -1, 1)
    mem[0, :, :784] = 0.6 * digits.X_train[1000:1100]  # prototype-like memories: C far from 0
    mem[0, :, 784:] = -1.0
    mem[0, np.arange(100), 784 + digits.y_train[1000:1100]] = 1.0
    X = digits.X_train[:200]
    probes = np.concatenate([X, -np.ones((200, 10))], axis=1)
    y = digits.y_train[:200]
    targets = -np.ones((200, 10))
    targets[np.arange(200), y] = 1
    F = make_interaction("rectified_polynomial", 20)
    out = {}
    for variant, T in (("original", 540.0), ("normalized", equivalent_temperature(540.0, N))):
        b_in, b_out = classifier_scales(variant, [T], 20, N)
        delta = class_energy_differences(mem, X, F, b_in)
        loss, grad, ok = loss_and_gradient(mem, probes, targets, F, b_in, b_out, error_exponent=30,
                                           neurons=slice(784, N))
        out[variant] = (np.tanh(b_out[0] * delta), loss, grad)
        assert ok[0]
    c_o, l_o, g_o = out["original"]
    c_n, l_n, g_n = out["normalized"]
    assert np.abs(c_o).max() > 1e-2  # not a trivial comparison of zeros
    np.testing.assert_allclose(c_n, c_o, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(l_n, l_o, rtol=1e-10)
    np.testing.assert_allclose(g_n, g_o, rtol=1e-8, atol=1e-12 * np.abs(g_o).max())


@pytest.mark.slow  # whole computations (tens of seconds on 2 cores): the full suite runs it
def test_krotov_trajectories_agree(digits):
    """Three epochs of Krotov's optimiser: the two variants' memories stay equal to ~1e-10."""
    cfg = {k: v for k, v in KROTOV_CONFIG.items() if k not in ("epochs", "batch_size", "temperature", "n_memories")}
    X, y = digits.X_train[:400], digits.y_train[:400]
    runs = [train_classifiers(X, y, variant=v, temperature=T, epochs=3, batch_size=100, n_memories=30,
                              backend="numpy", random_state=1, eval_sets={"test": (digits.X_test[:200], digits.y_test[:200])},
                              **cfg)
            for v, T in (("original", 540.0), ("normalized", equivalent_temperature(540.0, 794)))]
    assert np.abs(runs[0].memories - runs[0].memories[0]).max() == 0  # G = 1
    assert np.max(np.abs(runs[1].memories - runs[0].memories)) < 1e-10
    np.testing.assert_allclose(runs[1].loss, runs[0].loss, rtol=1e-9)
    np.testing.assert_array_equal(runs[1].accuracy["test"], runs[0].accuracy["test"])


def test_batched_grid_equals_separate_networks(digits):
    X, y = digits.X_train[:300], digits.y_train[:300]
    lr, T = parameter_grid([0.02, 0.1], [0.01, 0.05])
    common = dict(n_memories=12, n=3, variant="normalized", epochs=2, batch_size=100, backend="numpy",
                  random_state=3, eval_sets={"val": (digits.X_val[:100], digits.y_val[:100])})
    grid = train_classifiers(X, y, learning_rate=lr, temperature=T, **common)
    assert grid.memories.shape == (4, 12, 794) and grid.accuracy["val"].shape == (2, 4)
    for g in range(4):
        one = train_classifiers(X, y, learning_rate=lr[g], temperature=T[g], **common)
        np.testing.assert_allclose(one.memories[0], grid.memories[g], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(one.f1["val"][:, 0], grid.f1["val"][:, g])


def test_classifier_learns_and_agrees_with_the_estimator(digits):
    X, y = digits.X_train[:600], digits.y_train[:600]
    res = train_classifiers(X, y, n_memories=20, n=3, variant="normalized", temperature=0.01,
                            learning_rate=0.05, epochs=4, batch_size=100, backend="numpy", random_state=0,
                            eval_sets={"test": (digits.X_test, digits.y_test)})
    assert res.accuracy["test"][-1, 0] > 0.5  # chance is 0.1
    assert res.accuracy["test"][-1, 0] > res.accuracy["test"][0, 0] or res.accuracy["test"][0, 0] > 0.5
    assert res.epoch_seconds.shape == (4,) and np.all(res.epoch_seconds > 0)
    # the estimator's predictions from the same memories
    dam = damlite.DenseAssociativeMemory(20, interaction="rectified_polynomial", n=3, temperature=0.01, backend="numpy",
                                         random_state=0)
    with pytest.warns(damlite.ConvergenceWarning, match="tanh saturated"):  # T = 0.01: saturated, as the message says
        dam.set_params(epochs=1).fit(X[:20], y[:20])  # a fitted estimator to hold the memories trained above
    dam.memories_ = res.memories[0]
    pred, finite = predict_classes(res.memories, digits.X_test, dam.interaction_, res.beta_in)
    assert finite[0]
    np.testing.assert_array_equal(dam.predict(digits.X_test), pred[0])
    acc, f1, cm, _ = evaluate_classifiers(res.memories, digits.X_test, digits.y_test, dam.interaction_, res.beta_in)
    assert acc[0] == pytest.approx(res.accuracy["test"][-1, 0]) and cm[0].sum() == len(digits.y_test)


def test_clamp_modes(digits):
    X, y = digits.X_train[:200], digits.y_train[:200]
    common = dict(n_memories=8, n=2, variant="normalized", temperature=0.01, learning_rate=0.5, epochs=3,
                  batch_size=50, backend="numpy", random_state=0, init_std=0.9)
    free = train_classifiers(X, y, clamp="none", **common).memories[0]
    inputs = train_classifiers(X, y, clamp="inputs", **common).memories[0]
    every = train_classifiers(X, y, clamp="all", **common).memories[0]
    assert np.abs(free).max() > 1 and np.abs(inputs[:, 784:]).max() > 1  # class weights left free
    assert np.abs(inputs[:, :784]).max() <= 1 and np.abs(every).max() <= 1
    with pytest.raises(ValueError, match="clamp"):
        train_classifiers(X, y, clamp="some", **common)


def test_bad_inputs(digits):
    with pytest.raises(ValueError, match="y_train"):
        train_classifiers(digits.X_train[:10], np.full(10, 12), epochs=1, backend="numpy")
    with pytest.raises(ValueError, match="X must have shape"):
        class_energy_differences(np.zeros((1, 3, 794)), np.zeros((2, 10)), make_interaction("polynomial", 2), 1.0)


def test_evaluation_memory_stays_within_budget():
    """Scoring G=4 networks on 3000 digits: six (G, B, K, C) tensors would take 184 MB; the budget is 4 MB."""
    rng = np.random.default_rng(0)
    G, K, D, C, B = 4, 32, 784, 10, 3000
    mem = rng.uniform(-1, 1, (G, K, D + C))
    X = rng.uniform(-1, 1, (B, D)).astype(np.float32)
    budget = 4 * 2**20
    F = make_interaction("rectified_polynomial", 5)
    tracemalloc.start()
    pred, finite = predict_classes(mem, X, F, np.full(G, 1 / 794), memory_budget=budget)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert pred.shape == (G, B) and finite.all()
    naive = 6 * G * B * K * C * 8
    assert peak < 3 * budget < naive / 10, f"peak {peak / 2**20:.1f} MiB"
    # same predictions as an unchunked computation on a slice
    ref = np.argmax(class_energy_differences(mem, X[:50], F, np.full(G, 1 / 794)), axis=2)
    np.testing.assert_array_equal(pred[:, :50], ref)


def test_training_memory_stays_within_budget(digits):
    """A 2000-digit minibatch for G=6 networks with K=64: peak stays near the budget plus the data."""
    X = np.tile(digits.X_train[:1000], (2, 1))
    y = np.tile(digits.y_train[:1000], 2)
    budget = 8 * 2**20
    lr, T = parameter_grid([0.01, 0.1], [0.01, 0.1, 1.0])
    kw = dict(n_memories=64, n=2, learning_rate=lr, temperature=T, epochs=1, backend="numpy", memory_budget=budget,
              random_state=0)
    train_classifiers(X, y, batch_size=2000, **kw)  # the kernels compiled (or loaded) first: numba's compiler
    tracemalloc.start()                               # allocates far more than the fit, and tracemalloc counts it
    res = train_classifiers(X, y, batch_size=2000, **kw)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    data = X.size * 8 * 2  # probes (float64) and one minibatch copy
    naive = 6 * 2000 * 64 * 10 * 8 * 8  # eight (G, B, K, C) intermediates
    assert res.finite.all()
    assert peak < data + 4 * budget < naive, f"peak {peak / 2**20:.1f} MiB"


def test_mnist_task_runs_through_the_sweep_machinery(tmp_path):
    from damlite.sweeps import experiments as ex

    spec = ex.get_task("mnist")
    assert spec.metric == "f1" and not spec.lower_is_better
    assert {"quick", "short", "full", "smoke"} <= set(spec.profiles)
    full = ex.profile_blocks("mnist", "full")
    assert {b.n for b in full} == {2, 5, 10, 20} and {b.variant for b in full} == {"original", "normalized"}
    assert all(b.options["memories"] == 256 and b.options["epochs"] == 500 for b in full)
    orig = [b for b in full if b.variant == "original"][0]
    norm = [b for b in full if b.variant == "normalized"][0]
    np.testing.assert_allclose(np.array(orig.inv_temperature) * 794, norm.inv_temperature, rtol=1e-5)
    blocks = ex.profile_blocks("mnist", "smoke")[:2]
    path = ex.run_sweep("mnist", "smoke", blocks=blocks, out_dir=tmp_path, progress=False, backend="numpy")
    recs = ex.load_records(path)
    assert len(recs) == sum(b.n_networks for b in blocks)
    assert all(0 <= r["f1"] <= 1 and r["task"] == "mnist" and len(r["f1_curve"]) == 2 for r in recs)
    before = path.read_bytes()
    ex.run_sweep("mnist", "smoke", blocks=blocks, out_dir=tmp_path, progress=False, backend="numpy")
    assert path.read_bytes() == before  # resumed: nothing left to do


def test_metric_profiles_put_both_networks_on_the_normalized_scale():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from damlite.book import plots

    recs = [{"variant": v, "inv_temperature": it / (794 if v == "original" else 1), "learning_rate": lr,
             "f1": None if it == 10 else 0.5}
            for v in ("original", "normalized") for it in (1.0, 10.0) for lr in (0.01, 0.03)]
    axes = plots.plot_metric_profiles({
        "original": ([r for r in recs if r["variant"] == "original"], {"linestyle": "--"}),
        "normalized": ([r for r in recs if r["variant"] == "normalized"], {}),
    })
    assert len(axes) == 2
    for line in axes[0].get_lines():
        np.testing.assert_allclose(line.get_xdata(), [1.0, 10.0])
        np.testing.assert_allclose(line.get_ydata(), [0.5, 0.0])  # missing metric drawn at 0
    plt.close("all")
