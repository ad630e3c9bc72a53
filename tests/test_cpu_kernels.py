"""The numba kernels (damlite.kernels.cpu_kernels) against the NumPy reference path of damlite.network."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from damlite.kernels import cpu_kernels
from damlite.interactions import make_interaction
from damlite.network import loss_and_gradient, relax
from damlite.training import train_memories

pytest.importorskip("numba")

CASES = [("polynomial", 3, {}), ("polynomial", 10, {}), ("rectified_polynomial", 1, {}), ("rectified_polynomial", 4, {}),
         ("leaky_rectified_polynomial", 1, {"epsilon": 0.3}),
         ("leaky_rectified_polynomial", 5, {"epsilon": 0.01, "leak": "code"}), ("exponential", 1, {})]


def _both(monkeypatch, fn):
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numpy")
    want = fn()
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    got = fn()
    return want, got


def _problem(seed=0, G=3, K=9, N=14, B=5):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (G, K, N)), np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize("name, n, kw", CASES)
@pytest.mark.parametrize("neurons", [slice(None), slice(10, 14), np.array([5, 0, 9])])
@pytest.mark.parametrize("m", [1, 3])
def test_loss_and_gradient_agree_to_rounding(monkeypatch, name, n, kw, neurons, m):
    mem, X = _problem()
    F = make_interaction(name, n, **kw)
    targets = X[:, neurons]
    b_in, b_out = np.array([0.05, 0.1, 0.2]), np.array([2.0, 1.0, 0.5])

    def run():
        return loss_and_gradient(mem, X, targets, F, b_in, b_out, error_exponent=m, neurons=neurons)

    (l0, g0, f0), (l1, g1, f1) = _both(monkeypatch, run)
    np.testing.assert_allclose(l1, l0, rtol=1e-12)
    np.testing.assert_allclose(g1, g0, rtol=1e-10, atol=1e-12 * np.abs(g0).max())
    np.testing.assert_array_equal(f1, f0)


@pytest.mark.parametrize("name, n, kw", CASES)
@pytest.mark.parametrize("zero_sign", [1, -1, "keep"])
def test_async_relaxation_reaches_the_same_states(monkeypatch, name, n, kw, zero_sign):
    mem, X = _problem(1)
    F = make_interaction(name, n, **kw)
    seeds = [11, 12, 13]

    def run():
        return relax(mem, X, F, np.array([0.1, 0.2, 0.05]), zero_sign=zero_sign, random_state=seeds, max_sweeps=15)

    (s0, c0, n0, f0), (s1, c1, n1, f1) = _both(monkeypatch, run)
    np.testing.assert_array_equal(s1, s0)
    np.testing.assert_array_equal(c1, c0)
    assert n1 == n0
    np.testing.assert_array_equal(f1, f0)


_CASES = [("polynomial", 3, {}), ("rectified_polynomial", 4, {}),
                ("leaky_rectified_polynomial", 5, {"epsilon": 0.01, "leak": "code"}), ("polynomial", 40, {}),
                *[pytest.param(*case, marks=pytest.mark.slow) for case in [
                    ("polynomial", 2, {}), ("polynomial", 10, {}), ("polynomial", 33, {}), ("polynomial", 128, {}),
                    ("rectified_polynomial", 1, {}), ("rectified_polynomial", 20, {}), ("rectified_polynomial", 40, {}),
                    ("leaky_rectified_polynomial", 1, {"epsilon": 0.3})]]]


def _route(monkeypatch, any_kernel=False):
    """A fresh set of built loss kernels; with ``any_kernel``, every call routed to the kernel for any interaction."""
    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    monkeypatch.setattr(_cpu_numba, "_LOSS_GRAD", {})
    if any_kernel:
        monkeypatch.setattr(_cpu_numba, "loss_grad_key", lambda kind, n: (None, None))
    return _cpu_numba._LOSS_GRAD


def test_the_loss_kernel_key_is_the_kind_and_the_exponents_bit_length():
    """n = 2, 3-4, 5-8, 9-16, ..., 65-128 share a kernel per polynomial kind; the exponential and n > 128 take the
    kernel for any interaction."""
    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    for n in range(1, 129):
        assert _cpu_numba.loss_grad_key(_cpu_numba.POLYNOMIAL, n) == (_cpu_numba.POLYNOMIAL, (n - 1).bit_length())
    assert {_cpu_numba.loss_grad_key(_cpu_numba.RECTIFIED, n)[1] for n in (17, 20, 32)} == {5}
    assert _cpu_numba.loss_grad_key(_cpu_numba.RECTIFIED, 33)[1] == 6
    assert _cpu_numba.loss_grad_key(_cpu_numba.POLYNOMIAL, 129) == (None, None)
    assert _cpu_numba.loss_grad_key(_cpu_numba.EXPONENTIAL, 1) == (None, None)


@settings(max_examples=60, deadline=None)
@given(n1=st.integers(0, 127), r=st.floats(-1.3, 1.3, allow_nan=False), dtype=st.sampled_from([np.float32, np.float64]))
def test_power_by_bit_length_is_integer_power_bit_for_bit(n1, r, dtype):
    """r**n1 by the squarings of n1's bit length (its top bit's product without a select) and by the fixed-width
    form: bit for bit damlite.interactions.integer_power's products."""
    from damlite.interactions import integer_power  # noqa: PLC0415
    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    x = dtype(r)
    want = integer_power(np.asarray([x]), n1)[0]
    L = n1.bit_length()
    top = _cpu_numba._power_bits(x, n1, dtype(1), max(L, 1), L >= 1)
    fixed = _cpu_numba._power_bits(x, n1, dtype(1), 7, False)
    assert np.asarray(top, dtype).tobytes() == np.asarray(want, dtype).tobytes()  # numba returns a Python float
    assert np.asarray(fixed, dtype).tobytes() == np.asarray(want, dtype).tobytes()


@pytest.mark.parametrize("name, n, kw", _CASES)
@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_loss_kernels_agree_with_the_kernel_for_any(monkeypatch, name, n, kw, dtype):
    """The loss kernel compiled for (kind, bit length of n - 1) and the one for any interaction (a pass per step
    of the power): the same loss, gradient and finiteness to rounding (LLVM may order their sums differently),
    from arguments that are small (flushed to zero), ordinary, saturating and overflowing; each call ran the
    kernel it was routed to."""
    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    rng = np.random.default_rng(n)
    G, K, N = 4, 24, 30
    mem = (rng.uniform(-1, 1, (G, K, N)) * np.array([1e-3, 0.05, 1.0, 40.0])[:, None, None]).astype(dtype)
    X = np.where(rng.random((150, N)) < 0.5, -1.0, 1.0).astype(dtype)
    F = make_interaction(name, n, **kw)
    neurons = slice(20, 30)
    b = np.array([0.5, 1.0, 0.05, 0.2], dtype=dtype)
    kind = cpu_kernels.interaction_code(F)[0]
    runs = {}
    for label in ("bits", "any"):  # "any" patches the routing for the rest of the test
        built = _route(monkeypatch, any_kernel=label == "any")
        runs[label] = loss_and_gradient(mem, X, X[:, neurons], F, b, b, error_exponent=3, neurons=neurons)
        assert set(built) == ({(None, None)} if label == "any" else {(kind, (n - 1).bit_length())}), built
    (l0, g0, f0), (l1, g1, f1) = runs["any"], runs["bits"]
    np.testing.assert_array_equal(f1, f0)
    assert f0.any(), "every network overflowed: the comparison saw no finite value"
    rtol = 1e-11 if dtype == np.float64 else 2e-3
    np.testing.assert_allclose(l1[f0], l0[f0], rtol=rtol)
    for g in np.flatnonzero(f0):
        np.testing.assert_allclose(g1[g], g0[g], rtol=rtol, atol=rtol * np.abs(g0[g]).max())


def test_a_fits_bits_depend_on_the_fit_alone(monkeypatch):
    """A short fit, a long one and a lone call of an interaction all run its one kernel, and the same fit gives the
    same bits whatever ran before it in the process."""
    mem, X = _problem(G=1, K=9, N=14, B=40)
    F = make_interaction("polynomial", 3)
    kw = dict(beta_in=0.1, learning_rate=0.05, momentum=0.5, batch_size=10, random_state=0)
    kind = cpu_kernels.interaction_code(F)[0]
    built = _route(monkeypatch)
    first = train_memories(mem, X, X, F, epochs=4, **kw)
    train_memories(mem, X, X, make_interaction("polynomial", 20), epochs=1, **kw)  # another kernel in between
    train_memories(mem, X, X, F, epochs=40, **kw)
    loss_and_gradient(mem, X, X, F, 0.1, 0.1)
    again = train_memories(mem, X, X, F, epochs=4, **kw)
    np.testing.assert_array_equal(again.memories, first.memories)
    assert set(built) == {(kind, 2), (kind, 5)}


def test_every_kernel_function_states_its_fastmath_flags():
    """numba builds a function that states no fastmath flags with those of the first caller that needs it, and every
    later caller runs that build: the loss kernels (reassoc) and relaxation (none) share functions, so a fit's bits
    depended on what had been compiled first. Every numba function of the kernels states its flags."""
    import numba  # noqa: PLC0415

    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    functions = {name: f for name, f in vars(_cpu_numba).items() if isinstance(f, numba.core.dispatcher.Dispatcher)}
    functions["loss kernel"] = _cpu_numba._loss_grad_kernel(None, None)
    assert {"_tanh", "_flip_slow", "_relax_one", "relax"} <= set(functions)
    unstated = sorted(name for name, f in functions.items() if "fastmath" not in f.targetoptions)
    assert not unstated, f"no fastmath flags stated: {unstated}"
    assert functions["loss kernel"].targetoptions["fastmath"] == {"reassoc"}
    assert functions["_tanh"].targetoptions["fastmath"] is False


_ORDER = """
import sys, hashlib, warnings
import numpy as np
warnings.simplefilter("ignore")
import damlite
from damlite.kernels import _cpu_numba
rng = np.random.default_rng(1)
X = np.where(rng.random((30, 40)) < 0.5, -1.0, 1.0)
if sys.argv[1] == "others first":  # relaxation (no flags) and tanh alone compiled before the loss kernel (reassoc)
    damlite.DenseAssociativeMemory(4, interaction="polynomial", n=3, epochs=1, random_state=0).fit(X[:4]).relax(X[:2])
    _cpu_numba._tanh(0.5)
dam = damlite.DenseAssociativeMemory(12, interaction="exponential", n=1, epochs=3, variant="original",
                                     dtype="float64", random_state=0).fit(X)
print("BITS", hashlib.sha256(np.ascontiguousarray(dam.memories_).tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_a_fits_bits_do_not_depend_on_what_the_process_compiled_first(tmp_path):
    """The exponential interaction's fit (its loss kernel calls a function that relaxation also calls) in two fresh
    processes with empty caches, one compiling relaxation and tanh first: the same bits (before: 296 of 480
    memory entries differed after one epoch, by the last bit, on this fit)."""
    bits = []
    for i, order in enumerate(("fit first", "others first")):
        out = _subprocess(f"import sys; sys.argv[1:] = [{order!r}]\n" + _ORDER,
                          env={"NUMBA_CACHE_DIR": str(tmp_path / f"cache{i}"), "DAMLITE_QUIET": "1"})
        assert out.returncode == 0, out.stderr
        bits.append(_parse(out)[0]["BITS"])
    assert bits[0] == bits[1]


def test_exact_ties_follow_the_zero_sign_convention(monkeypatch):
    """Memories of +-1 entries give exact integer sums: Delta = 0 ties are decided by sign(0)."""
    rng = np.random.default_rng(3)
    mem = np.where(rng.random((1, 4, 8)) < 0.5, -1.0, 1.0)
    X = np.where(rng.random((6, 8)) < 0.5, -1.0, 1.0)
    F = make_interaction("polynomial", 2)
    for zero_sign in (1, -1, "keep"):
        (s0, *_), (s1, *_) = _both(monkeypatch, lambda: relax(mem, X, F, 1.0, zero_sign=zero_sign, random_state=0))
        np.testing.assert_array_equal(s1, s0)


def test_overflow_is_reported_not_hidden(monkeypatch):
    mem, X = _problem(2, N=40)
    F = make_interaction("polynomial", 400)
    (s0, c0, n0, f0), (s1, c1, n1, f1) = _both(monkeypatch, lambda: relax(mem * 40, X, F, 1.0, random_state=0))
    assert not f0.any() and not f1.any()
    (l0, g0, ok0), (l1, g1, ok1) = _both(monkeypatch, lambda: loss_and_gradient(mem * 40, X, X, F, 1.0, 1.0))
    np.testing.assert_array_equal(ok1, ok0)


def test_other_dtypes_and_interactions_use_numpy():
    from damlite.interactions import Interaction  # noqa: PLC0415

    class Custom(Interaction):
        def value_and_derivative(self, x, derivative=True):
            return x, (x * 0 + 1 if derivative else None)

    assert cpu_kernels.interaction_code(Custom()) is None
    from damlite.network import _fused_cpu_code  # noqa: PLC0415

    assert _fused_cpu_code(np, np.zeros((1, 2, 3), dtype=np.float16), make_interaction("polynomial", 2)) is None
    assert _fused_cpu_code(np, np.zeros((1, 2, 3), dtype=np.float32), make_interaction("polynomial", 2)) is not None


# ---------------------------------------------------------- float32, threads
def _threads_available():
    import numba  # noqa: PLC0415

    return numba.config.NUMBA_NUM_THREADS >= 2


@pytest.mark.parametrize("name, n, kw", [pytest.param("polynomial", 3, {}, marks=pytest.mark.slow), ("rectified_polynomial", 4, {}),
                                         pytest.param("leaky_rectified_polynomial", 5, {"epsilon": 0.01, "leak": "code"}, marks=pytest.mark.slow),
                                         pytest.param("rectified_polynomial", 40, {}, marks=pytest.mark.slow), ("exponential", 1, {})])
@pytest.mark.parametrize("neurons", [slice(None), pytest.param(slice(10, 14), marks=pytest.mark.slow)])
def test_float32_kernels_agree_with_the_float32_numpy_path(monkeypatch, name, n, kw, neurons):
    mem, X = _problem()
    mem, X = mem.astype(np.float32), X.astype(np.float32)
    F = make_interaction(name, n, **kw)
    b_in = np.array([0.05, 0.1, 0.2]) if n < 40 else np.array([0.02, 0.03, 0.05])

    def run():
        return loss_and_gradient(mem, X, X[:, neurons], F, b_in, 1.0, neurons=neurons)

    (l0, g0, f0), (l1, g1, f1) = _both(monkeypatch, run)
    assert l1.dtype == np.float32 and g1.dtype == np.float32
    np.testing.assert_allclose(l1, l0, rtol=2e-5)
    np.testing.assert_allclose(g1, g0, rtol=1e-3, atol=1e-5 * np.abs(g0).max())
    np.testing.assert_array_equal(f1, f0)

    def relaxed():
        return relax(mem, X, F, np.array([0.1, 0.2, 0.05]) if n < 40 else 0.02, random_state=[1, 2, 3], max_sweeps=10)

    (s0, *_), (s1, *_) = _both(monkeypatch, relaxed)
    assert (s1 != s0).mean() < 0.02  # float32 rounding may decide a near-tie differently


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_results_do_not_depend_on_the_thread_count(monkeypatch, dtype):
    """Row chunks of fixed size, summed in chunk order: bitwise the same on 1 and 2 threads."""
    if not _threads_available():
        pytest.skip("numba has fewer than 2 threads here (NUMBA_NUM_THREADS)")
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    monkeypatch.setattr(cpu_kernels, "MIN_WORK", dict.fromkeys(cpu_kernels.MIN_WORK, 0))  # every call cut
    rng = np.random.default_rng(5)
    G, K, N, B = 3, 20, 30, 300  # 300 rows: several chunks per network
    mem = rng.uniform(-1, 1, (G, K, N)).astype(dtype)
    X = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0).astype(dtype)
    F = make_interaction("rectified_polynomial", 6)
    outs = []
    for threads in (1, 2):
        cpu_kernels.set_num_threads(threads)
        try:
            lg = loss_and_gradient(mem, X, X[:, 20:], F, 0.05, 1.0, neurons=slice(20, 30))
            rl = relax(mem, X[:40], F, 0.05, random_state=[1, 2, 3], max_sweeps=5)
            tr = train_memories(mem, X, X[:, 20:], F, beta_in=0.05, learning_rate=0.05, momentum=0.5, epochs=2,
                                batch_size=100, neurons=slice(20, 30), random_state=0)
        finally:
            cpu_kernels.set_num_threads(None)
        outs.append((lg, rl, tr))
    (lg1, rl1, tr1), (lg2, rl2, tr2) = outs
    for a, b in zip(lg1, lg2):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(rl1, rl2):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(tr1.memories, tr2.memories)
    np.testing.assert_array_equal(tr1.loss, tr2.loss)


def test_fused_optimiser_step_matches_the_numpy_step(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "MIN_WORK", dict.fromkeys(cpu_kernels.MIN_WORK, 0))  # every call cut over the threads
    mem, X = _problem(4)
    F = make_interaction("polynomial", 3)

    def run():
        return train_memories(mem, X, X, F, beta_in=[0.05, 0.1, 0.2], learning_rate=[0.1, 0.05, 0.01], momentum=0.6,
                              epochs=1, batch_size=2, clamp=slice(0, 10), random_state=3)

    a, b = _both(monkeypatch, run)
    np.testing.assert_allclose(b.memories, a.memories, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.loss, a.loss, rtol=1e-12)


def test_train_memories_keeps_memories_seen_by_the_callback(monkeypatch):
    """The fused step updates in place: the callback gets a snapshot, not the live array."""
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    mem, X = _problem(6)
    seen = []
    train_memories(mem, X, X, make_interaction("polynomial", 3), beta_in=0.1, epochs=3, batch_size=2,
                   callback=lambda epoch, m, loss: seen.append(m) and False)
    assert not np.array_equal(seen[0], seen[-1])


def _without_whole_epochs(monkeypatch):
    """train_memories with damlite.kernels.cpu_fit off: the minibatch loop over network.loss_and_gradient."""
    from damlite.kernels import cpu_fit  # noqa: PLC0415

    monkeypatch.setattr(cpu_fit.CpuFit, "create", classmethod(lambda cls, *a, **k: None))


def _classifier_problem(dtype, G=1, seed=7, B=150, D=60, C=6, K=37):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.uniform(-1, 1, (B, D)), -np.ones((B, C))], axis=1).astype(dtype)
    T = -np.ones((B, C), dtype=dtype)
    T[np.arange(B), rng.integers(0, C, B)] = 1
    return rng.normal(0.05, 0.3, (G, K, D + C)).astype(dtype), X, T


def _whole_epoch_fit(monkeypatch, threads, mem, X, T, F, kw):
    """train_memories on ``threads`` threads, small problems cut over them too; (result, the CpuFit of each epoch)."""
    from damlite.kernels import cpu_fit  # noqa: PLC0415

    monkeypatch.setattr(cpu_kernels, "MIN_WORK", dict.fromkeys(cpu_kernels.MIN_WORK, 0))
    fits = []
    epoch = cpu_fit.CpuFit.epoch
    monkeypatch.setattr(cpu_fit.CpuFit, "epoch", lambda self, *a: fits.append(self) or epoch(self, *a))
    cpu_kernels.set_num_threads(threads)
    try:
        return train_memories(mem, X, T, F, **kw), fits
    finally:
        cpu_kernels.set_num_threads(None)


@pytest.mark.parametrize("dtype", [pytest.param(np.float32, marks=pytest.mark.slow), np.float64])
@pytest.mark.parametrize("G, batch, neurons, clamp", [(1, 50, slice(60, 66), slice(0, 66)),
                                                      (1, None, slice(60, 66), None),
                                                      (3, 40, np.array([61, 65, 60]), None),
                                                      (2, None, slice(60, 66), slice(10, 30))])
@pytest.mark.parametrize("threads", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_whole_epochs_are_bitwise_the_minibatch_loop(monkeypatch, dtype, G, batch, neurons, clamp, threads):
    """damlite.kernels.cpu_fit (three parallel steps per minibatch) against the loop of damlite.training: the same
    memories, losses and learning rates to the last bit; one or several networks, ragged last minibatch,
    an index array of evaluated neurons, clamps or none; on one thread and cut over two (rows of one
    network's minibatch of 150 in chunks, or networks; the gradient's columns; the memories)."""
    if threads > 1 and not _threads_available():
        pytest.skip("numba has fewer than 2 threads here (NUMBA_NUM_THREADS)")
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    mem, X, T = _classifier_problem(dtype, G)
    T = T[:, :3] if isinstance(neurons, np.ndarray) else T
    F = make_interaction("rectified_polynomial", 6)
    kw = dict(beta_in=list(np.linspace(0.05, 0.08, G)), beta_out=2.0, learning_rate=list(np.linspace(0.01, 0.05, G)),
              momentum=0.6, lr_decay=0.9, epochs=3, batch_size=batch, error_exponent=3, neurons=neurons, clamp=clamp,
              random_state=1)
    got, fits = _whole_epoch_fit(monkeypatch, threads, mem, X, T, F, kw)
    assert len(fits) == 3  # the fit took the whole-epoch path
    cuts = next(iter(fits[0]._by_rows.values()))
    assert fits[0].threads == threads and cuts["back"] == threads and cuts["step"] == threads
    if threads > 1 and (G > 1 or batch is None):  # the front step is cut too (chunks of rows, or networks)
        assert cuts["front"] == threads
    _without_whole_epochs(monkeypatch)
    want = train_memories(mem, X, T, F, **kw)
    assert np.abs(got.memories - mem).max() > 1e-3  # the memories moved
    np.testing.assert_array_equal(got.memories, want.memories)
    np.testing.assert_array_equal(got.loss, want.loss)
    np.testing.assert_array_equal(got.finite, want.finite)


def test_the_first_product_runs_transposed_where_it_keeps_the_bits(monkeypatch):
    """float64, G K <= TRANSPOSED_MAX_ROWS: d = xb zeta^T computed as (zeta xb^T)^T (faster with OpenBLAS), bitwise
    the loop's; a BLAS that sums the transposed form in another order at this shape keeps the direct form."""
    from damlite.kernels import cpu_fit  # noqa: PLC0415

    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    mem, X, T = _classifier_problem(np.float64)
    F = make_interaction("rectified_polynomial", 6)
    kw = dict(beta_in=0.05, beta_out=2.0, learning_rate=0.02, momentum=0.6, epochs=2, batch_size=50,
              error_exponent=3, neurons=slice(60, 66), random_state=0)
    got, fits = _whole_epoch_fit(monkeypatch, 1, mem, X, T, F, kw)
    cuts = fits[0]._by_rows[50]
    if cuts["dT"] is None:
        pytest.skip("this BLAS sums zeta xb^T in another order than xb zeta^T at this shape")
    monkeypatch.setattr(cpu_fit, "TRANSPOSED_MAX_ROWS", mem.shape[1] - 1)  # G K = 37 over the limit: direct
    direct, fits = _whole_epoch_fit(monkeypatch, 1, mem, X, T, F, kw)
    assert fits[0]._by_rows[50]["dT"] is None
    _without_whole_epochs(monkeypatch)
    want = train_memories(mem, X, T, F, **kw)
    np.testing.assert_array_equal(got.memories, want.memories)
    np.testing.assert_array_equal(direct.memories, want.memories)


def test_the_transposed_product_check_sees_a_different_last_bit(monkeypatch):
    """CpuFit._transposed_keeps_bits: True for the same bits, False when one entry of the transposed form differs."""
    from types import SimpleNamespace  # noqa: PLC0415

    from damlite.kernels import cpu_fit  # noqa: PLC0415

    fit = SimpleNamespace(blas_one=False)
    xb, dT = np.empty((40, 30)), np.empty((7, 40))
    assert cpu_fit.CpuFit._transposed_keeps_bits(fit, xb, dT, [0, 40]) in (True, False)
    real = np.matmul

    def off_by_one_ulp(a, b, out=None):
        r = real(a, b, out=out)
        if out is not None and out.shape[0] == 7:
            out[0, 0] = np.nextafter(out[0, 0], np.inf)
        return r

    monkeypatch.setattr(cpu_fit.np, "matmul", off_by_one_ulp)
    assert not cpu_fit.CpuFit._transposed_keeps_bits(fit, xb, dT, [0, 20, 40])


def test_whole_epochs_freeze_a_network_that_overflows_as_the_loop_does(monkeypatch):
    """One network of three overflows (huge beta_in): frozen at the same epoch, the others bitwise the loop's."""
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    mem, X, T = _classifier_problem(np.float64, G=3)
    F = make_interaction("rectified_polynomial", 20)
    kw = dict(beta_in=[0.05, 1e30, 0.06], beta_out=2.0, learning_rate=0.02, momentum=0.6, epochs=2, batch_size=50,
              error_exponent=2, neurons=slice(60, 66), clamp=slice(0, 66), random_state=0)
    got = train_memories(mem, X, T, F, **kw)
    _without_whole_epochs(monkeypatch)
    want = train_memories(mem, X, T, F, **kw)
    assert got.finite.tolist() == [True, False, True]
    np.testing.assert_array_equal(got.failed_epoch, want.failed_epoch)
    np.testing.assert_array_equal(got.memories, want.memories)
    np.testing.assert_array_equal(got.loss, want.loss)


def test_the_tally_sums_each_networks_chunks_as_numpy_sum_does_and_keeps_only_finite_networks():
    """A minibatch's loss per network, the sum of its chunks' losses, bitwise numpy.sum's along the chunks (pairwise:
    blocks of 128, halves above) for 1 to 300 chunks and past several halvings, over values of 17 orders of
    magnitude; ok only where the network was finite, its loss is and no memory is bad; the epoch's sums and flags
    change only where ok."""
    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    rng = np.random.default_rng(0)
    for n in [*range(1, 301), 511, 512, 513, 1000, 1025, 4097]:
        parts = rng.standard_normal((3, n)) * 10.0 ** rng.integers(-8, 9, (3, n))
        epoch_loss, epoch_ok, ok = np.zeros(3), np.ones(3, bool), np.zeros(3, bool)
        _cpu_numba.tally(parts, np.zeros((3, 4), bool), np.ones(3, bool), epoch_loss, epoch_ok, ok)
        assert np.array_equal(epoch_loss, np.sum(parts, axis=1)), n
        assert ok.all() and epoch_ok.all()
    parts = np.array([[1.0, 2.0], [np.inf, 1.0], [3.0, 4.0], [5.0, 6.0]])
    bad = np.zeros((4, 2), bool)
    bad[2, 1] = True
    finite = np.array([True, True, True, False])
    epoch_loss, epoch_ok, ok = np.full(4, 10.0), np.array([True, True, True, True]), np.zeros(4, bool)
    _cpu_numba.tally(parts, bad, finite, epoch_loss, epoch_ok, ok)
    assert ok.tolist() == [True, False, False, False] and epoch_ok.tolist() == ok.tolist()
    assert epoch_loss.tolist() == [13.0, 10.0, 10.0, 10.0]


def test_whole_epochs_fall_back_to_the_loop_when_a_kernel_fails(monkeypatch):
    """A kernel failing mid-epoch: one warning, the epoch restored and rerun by the NumPy loop."""
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    assert cpu_kernels.available()
    mem, X, T = _classifier_problem(np.float64)
    F = make_interaction("rectified_polynomial", 6)
    kw = dict(beta_in=0.05, beta_out=2.0, learning_rate=0.02, momentum=0.6, epochs=2, batch_size=50,
              error_exponent=3, neurons=slice(60, 66), random_state=0)
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numpy")
    want = train_memories(mem, X, T, F, **kw)
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    real = cpu_kernels._kernels
    seen = []

    class FailsOnThirdStep:
        def __getattr__(self, name):
            if name == "step":
                seen.append(1)
                if len(seen) == 3:
                    raise RuntimeError("LLVM ERROR: broken")
            return getattr(real, name)

    monkeypatch.setattr(cpu_kernels, "_kernels", FailsOnThirdStep())
    monkeypatch.setattr(cpu_kernels, "_failure", None)
    monkeypatch.setattr(cpu_kernels, "_warned", False)
    with pytest.warns(cpu_kernels.CpuKernelsWarning, match="step"):
        got = train_memories(mem, X, T, F, **kw)
    np.testing.assert_allclose(got.memories, want.memories, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.loss, want.loss, rtol=1e-12)


# ------------------------------------------- the switch, and every way numba can fail
def test_the_switch_values(monkeypatch):
    for value in ("numpy", "off", "0", "false", "NO", " Off "):
        monkeypatch.setenv("DAMLITE_CPU_KERNELS", value)
        assert not cpu_kernels.available(), value
    for value in ("", "auto", "numba", "on", "1", "true"):
        monkeypatch.setenv("DAMLITE_CPU_KERNELS", value)
        assert cpu_kernels.available(), value


def test_an_unknown_switch_value_is_refused_with_the_allowed_ones(monkeypatch):
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "garbage")
    with pytest.raises(ValueError, match=r"DAMLITE_CPU_KERNELS must be one of .*numba.*numpy.*got 'garbage'"):
        cpu_kernels.available()
    mem, X = _problem()
    with pytest.raises(ValueError, match="DAMLITE_CPU_KERNELS"):
        loss_and_gradient(mem, X, X, make_interaction("polynomial", 2))


def _subprocess(code, env=None, cwd=None, pythonpath=()):
    import os  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    root = Path(__file__).resolve().parents[1]
    full = {k: v for k, v in os.environ.items() if not k.startswith(("DAMLITE_CPU", "NUMBA_CACHE"))}
    full.update(env or {})
    full["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), str(root)])
    return subprocess.run([sys.executable, "-c", code], env=full, cwd=cwd, capture_output=True, text=True, timeout=600)


_RUN_ALL = """
import sys, warnings
import numpy as np
warnings.simplefilter("always")
from damlite.interactions import make_interaction
from damlite.network import loss_and_gradient, relax
from damlite.training import train_memories
from damlite.training import train_memories
rng = np.random.default_rng(0)
mem = rng.uniform(-1, 1, (2, 6, 9)); X = np.where(rng.random((4, 9)) < 0.5, -1.0, 1.0)
F = make_interaction("polynomial", 3)
with warnings.catch_warnings(record=True) as caught:
    l, g, f = loss_and_gradient(mem, X, X, F, 0.1, 1.0)
    s, *_ = relax(mem, X, F, 0.1, random_state=0)
    t = train_memories(mem, X, X, F, beta_in=0.1, epochs=2, random_state=0)
print("LOSS", repr(l.tolist()))
print("STATES", int(s.sum()))
print("NUMBA_IMPORTED", "numba" in sys.modules)
from damlite.kernels import cpu_kernels
print("KERNELS", cpu_kernels.description())
print("WARNINGS", len([w for w in caught if w.category.__name__ == "CpuKernelsWarning"]))
for w in caught:
    print("W", w.category.__name__, str(w.message))
"""


def _parse(out):
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line and not line.startswith("W "))
    return lines, [line for line in out.stdout.splitlines() if line.startswith("W ")]


@pytest.fixture(scope="module")
def numpy_reference():
    out = _subprocess(_RUN_ALL, env={"DAMLITE_CPU_KERNELS": "numpy"})
    assert out.returncode == 0, out.stderr
    return _parse(out)[0]


def test_the_off_switch_is_read_before_numba_is_imported(numpy_reference):
    assert numpy_reference["NUMBA_IMPORTED"] == "False"
    assert numpy_reference["KERNELS"] == "numpy"
    assert numpy_reference["WARNINGS"] == "0"


@pytest.mark.parametrize("error", ["ImportError('No module named llvmlite.binding')",
                                   "OSError('libLLVM.so: cannot open shared object file')"])
def test_a_broken_numba_falls_back_to_numpy_with_one_warning(tmp_path, numpy_reference, error):
    fake = tmp_path / "numba"
    fake.mkdir()
    (fake / "__init__.py").write_text(f"raise {error}\n")
    out = _subprocess(_RUN_ALL, pythonpath=[tmp_path])
    assert out.returncode == 0, out.stderr
    got, warned = _parse(out)
    assert got["LOSS"] == numpy_reference["LOSS"] and got["STATES"] == numpy_reference["STATES"]
    assert got["KERNELS"] == "numpy"
    assert got["WARNINGS"] == "1", out.stdout
    assert "DAMLITE_CPU_KERNELS=numpy" in warned[0] and error.split("(")[0] in warned[0]


@pytest.mark.slow
def test_no_writable_cache_still_runs_the_kernels(numpy_reference):
    """A missing HOME and no writable package directory: numba finds no cache locator.

    Before: ``cannot cache function '_power': no locator available`` at import, even
    with the kernels switched off. Simulated by emptying numba's list of locators."""
    code = ("import numba.core.caching as c\n"
            "(getattr(c, 'CacheImpl', None) or c._CacheImpl)._locator_classes = []\n" + _RUN_ALL)
    out = _subprocess(code, env={"HOME": "/nonexistent"})
    assert out.returncode == 0, out.stderr
    got, _ = _parse(out)
    assert got["KERNELS"].startswith("numba"), got
    assert got["WARNINGS"] == "0"
    np.testing.assert_allclose(eval(got["LOSS"]), eval(numpy_reference["LOSS"]), rtol=1e-12)
    assert got["STATES"] == numpy_reference["STATES"]


def test_a_kernel_that_fails_to_compile_falls_back_with_one_warning(monkeypatch):
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "auto")
    assert cpu_kernels.available()

    class Broken:
        def __getattr__(self, name):
            def fail(*args):
                raise RuntimeError("LLVM ERROR: out of memory\nmore lines")
            return fail

    monkeypatch.setattr(cpu_kernels, "_kernels", Broken())
    monkeypatch.setattr(cpu_kernels, "_failure", None)
    monkeypatch.setattr(cpu_kernels, "_warned", False)
    mem, X = _problem()
    F = make_interaction("polynomial", 3)
    with pytest.warns(cpu_kernels.CpuKernelsWarning, match=r"LLVM ERROR: out of memory.*DAMLITE_CPU_KERNELS=numpy"):
        got = loss_and_gradient(mem, X, X, F, 0.1, 1.0)
    assert not cpu_kernels.available()
    import warnings  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning
        relax(mem, X, F, 0.1, random_state=0)
        train_memories(mem, X, X, F, beta_in=0.1, epochs=1)
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numpy")
    want = loss_and_gradient(mem, X, X, F, 0.1, 1.0)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_numba_not_installed_is_silent_unless_asked_for(tmp_path, numpy_reference):
    """An optional dependency that is absent is not a fault: no warning on ``auto``; one on ``numba``."""
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nclass _Block:\n    def find_spec(self, name, path=None, target=None):\n"
                       "        if name == 'numba':\n            raise ModuleNotFoundError(\"No module named 'numba'\", "
                       "name='numba')\nsys.meta_path.insert(0, _Block())\n")
    out = _subprocess(_RUN_ALL, pythonpath=[tmp_path])
    assert out.returncode == 0, out.stderr
    got, _ = _parse(out)
    assert got["KERNELS"] == "numpy" and got["WARNINGS"] == "0" and got["LOSS"] == numpy_reference["LOSS"]
    out = _subprocess(_RUN_ALL, env={"DAMLITE_CPU_KERNELS": "numba"}, pythonpath=[tmp_path])
    got, warned = _parse(out)
    assert got["WARNINGS"] == "1" and "numba" in warned[0]


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-3)])
@pytest.mark.parametrize("threads", [1, 2])
def test_krotov_classifier_problem_agrees_with_numpy_on_1_and_2_threads(monkeypatch, dtype, rtol, threads):
    """The MNIST shape of the learning rule (continuous inputs, class neurons at -1, rectified n = 20, m = 30):
    the fused pass (its sums in vector lanes) against the NumPy path, both dtypes, 1 and 2 threads."""
    if threads > 1 and not _threads_available():
        pytest.skip("numba has fewer than 2 threads here (NUMBA_NUM_THREADS)")
    rng = np.random.default_rng(7)
    B, D, C, K = 150, 60, 6, 37  # K not a multiple of the vector width: the loop tails run too
    X = np.concatenate([rng.uniform(-1, 1, (B, D)), -np.ones((B, C))], axis=1).astype(dtype)
    T = -np.ones((B, C), dtype=dtype)
    T[np.arange(B), rng.integers(0, C, B)] = 1
    mem = rng.normal(0.05, 0.3, (1, K, D + C)).astype(dtype)
    F = make_interaction("rectified_polynomial", 20)
    b_in = 1.0 / (2.0 * D)
    b_out = 50.0

    def run():
        return loss_and_gradient(mem, X, T, F, b_in, b_out, error_exponent=30, neurons=slice(D, D + C))

    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numpy")
    l0, g0, f0 = run()
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    monkeypatch.setattr(cpu_kernels, "MIN_WORK", dict.fromkeys(cpu_kernels.MIN_WORK, 0))  # cut however small
    cpu_kernels.set_num_threads(threads)
    try:
        l1, g1, f1 = run()
    finally:
        cpu_kernels.set_num_threads(None)
    assert l1.dtype == dtype and g1.dtype == dtype
    assert np.all(f0) and np.all(f1) and np.abs(g0).max() > 0  # a problem with a gradient to compare
    np.testing.assert_allclose(l1, l0, rtol=rtol)
    np.testing.assert_allclose(g1, g0, rtol=rtol, atol=rtol * np.abs(g0).max())


def test_the_wide_vector_hint_reaches_llvm_for_float64_only():
    """The loss kernel's 512-bit hint (damlite.kernels._cpu_numba._wide_vectors) is in the compiled IR for the
    dtypes of WIDE_DTYPES and absent for the others; if llvmlite stopped taking it, the hint would
    vanish silently (it is wrapped in a try), so this test is what notices."""
    assert cpu_kernels.available()
    import numba  # noqa: PLC0415

    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    @numba.njit(cache=False)
    def doubled(a):
        _cpu_numba._wide_vectors(a)
        for k in range(a.shape[0]):
            a[k] *= 2

    for dtype in (np.float64, np.float32):
        a = np.ones(40, dtype)
        doubled(a)
        np.testing.assert_array_equal(a, 2)
        ir = doubled.inspect_llvm(doubled.signatures[-1])
        assert ('"prefer-vector-width"="512"' in ir) == (np.dtype(dtype).name in _cpu_numba.WIDE_DTYPES)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_palette_is_bitwise_and_refuses_more_than_256_values(dtype):
    """cpu_kernels.palette: table[codes] has the bits of x (-0.0 apart from 0.0, NaN kept), at most 256 values;
    257 values, 1-D input or another dtype give None."""
    assert cpu_kernels.available()
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(size=253), [0.0, -0.0, np.nan]]).astype(dtype)
    x = values[rng.integers(0, 256, (300, 41))]
    x[0, :] = values[:41]  # a few of each, in some order
    codes, table = cpu_kernels.palette(x)
    assert codes.dtype == np.uint8 and table.dtype == dtype and codes.shape == x.shape
    bits = np.uint32 if dtype == np.float32 else np.uint64
    np.testing.assert_array_equal(table[codes].view(bits), x.view(bits))
    assert len(table) == len(np.unique(x.view(bits)))
    more = x.copy()
    more[-1, -1] = dtype(1e3)  # a 257th value, last
    assert len(np.unique(x.view(bits))) == 256 and cpu_kernels.palette(more) is None
    assert cpu_kernels.palette(x[0]) is None and cpu_kernels.palette(x.astype(np.float16)) is None


@pytest.mark.parametrize("coded", [True, False])
def test_the_gather_reads_the_rows_of_its_order_whatever_it_fetches_ahead(coded):
    """The gather kernel (which fetches each source row's codes PREFETCH_ROWS rows ahead, a cache hint) writes
    exactly probes[order[start + b]] (from the codes or the rows), targets and the evaluated columns, for
    minibatches at the start, in the middle and at the end of the order (where the rows ahead run past it), on
    row blocks as the threads cut them."""
    assert cpu_kernels.available()
    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    assert _cpu_numba.PREFETCH_ROWS >= 1
    rng = np.random.default_rng(5)
    B, N, M, b = 37, 70, 4, 10
    probes = rng.integers(0, 9, (B, N)) / 8.0 - 0.5
    probes[:, N - M:] = np.where(rng.random((B, M)) < 0.5, -1.0, 1.0)
    targets = np.where(rng.random((B, M)) < 0.5, -1.0, 1.0)
    codes, table = cpu_kernels.palette(probes) if coded else (np.empty((0, 0), np.uint8), np.empty(0))
    assert len(table) == (11 if coded else 0)  # k / 8 - 1/2 for k = 0..8, and -1, 1
    order = rng.permutation(B).astype(np.int64)
    colidx = np.arange(N - M, N, dtype=np.int64)
    for start in (0, 10, 30):
        rows = min(b, B - start)
        xb, tb, xs = np.full((b, N), np.nan), np.full((b, M), np.nan), np.full((b, M), np.nan)
        for lo, hi in ((0, 4), (4, rows)):
            cpu_kernels.kernel("gather")(probes, codes, table, targets, order, start, colidx, xb, tb, xs, lo, hi)
        src = order[start:start + rows]
        np.testing.assert_array_equal(xb[:rows], probes[src])
        np.testing.assert_array_equal(tb[:rows], targets[src])
        np.testing.assert_array_equal(xs[:rows], probes[src][:, colidx])
        assert np.isnan(xb[rows:]).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("G", [1, 3])
@pytest.mark.parametrize("threads", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_whole_epochs_from_coded_rows_are_bitwise_the_minibatch_loop(monkeypatch, dtype, G, threads):
    """Probes of at most 256 values (pixels k / 15 here, -0.0 one of them; MNIST's are k / 127.5 - 1): a
    float64 or float32 fit on 1 or 2 threads gathers its rows from 1-byte codes (cpu_kernels.palette), with the
    same memories and losses to the last bit as the loop."""
    if threads > 1 and not _threads_available():
        pytest.skip("numba has fewer than 2 threads here (NUMBA_NUM_THREADS)")
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    mem, X, T = _classifier_problem(dtype, G)
    X[:, :60] = np.round(X[:, :60] * 15) / 15
    F = make_interaction("rectified_polynomial", 6)
    kw = dict(beta_in=0.06, beta_out=2.0, learning_rate=0.03, momentum=0.6, epochs=2, batch_size=50,
              error_exponent=3, neurons=slice(60, 66), random_state=1)
    got, fits = _whole_epoch_fit(monkeypatch, threads, mem, X, T, F, kw)
    assert fits and 0 < len(fits[0].table) <= 32 and fits[0].codes.shape == X.shape
    assert fits[0].table.dtype == dtype
    _without_whole_epochs(monkeypatch)
    want = train_memories(mem, X, T, F, **kw)
    assert np.abs(got.memories - mem).max() > 1e-3
    np.testing.assert_array_equal(got.memories, want.memories)
    np.testing.assert_array_equal(got.loss, want.loss)


def _tanh_values():
    """Values for _tanh: every scale it sees, its branch edges (0.625, 19.1) and the special values."""
    rng = np.random.default_rng(11)
    edges = np.array([0.625, 19.1, 2.0 ** -28, 0.5 * np.log(3)])  # 0.5 ln 3: where e**(2x) = 3
    near = np.concatenate([np.nextafter(edges, 0), edges, np.nextafter(edges, np.inf)])
    special = np.array([0.0, 5e-324, 1e-310, 2.0 ** -1022, 1e-300, 40.0, 700.0, 1e300, np.inf, np.nan])
    x = np.concatenate([rng.normal(0, s, 1500) for s in (1e-9, 1e-4, 0.05, 0.3, 0.6, 1, 3, 8)]
                       + [rng.uniform(-22, 22, 3000), near, special])
    return np.concatenate([x, -x])


def test_tanh_is_within_1_3_ulp_of_mpmath_and_keeps_its_bits_in_a_reassoc_caller():
    """damlite.kernels._cpu_numba._tanh (the loss kernel's vectorised tanh) against mpmath at 120 bits: at most
    1.3 units in the last place (the C library's tanh: 2.1 in our measurement), most values correctly
    rounded; exact at 0, -0, the tiny values, +-inf and NaN; and bitwise the same when called from a
    function compiled with fastmath reassoc, as the loss kernel is (the caller's flags must not regroup it)."""
    mpmath = pytest.importorskip("mpmath")
    assert cpu_kernels.available()
    import numba  # noqa: PLC0415

    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    alone = numba.njit(cache=False, error_model="numpy", fastmath=False)(_cpu_numba._tanh.py_func)

    def each(h, out):
        for i in range(h.shape[0]):
            out[i] = _cpu_numba._tanh(h[i])

    def each_alone(h, out):
        for i in range(h.shape[0]):
            out[i] = alone(h[i])

    # the reassoc caller first: a function stating no flags would be built with the first caller's
    reassoc = numba.njit(cache=False, error_model="numpy", fastmath={"reassoc"})(each)
    plain = numba.njit(cache=False, error_model="numpy")(each_alone)
    x = _tanh_values()
    got, again = np.empty_like(x), np.empty_like(x)
    plain(x, got)
    reassoc(x, again)
    np.testing.assert_array_equal(again, got)
    with mpmath.workdps(36):
        exact = [mpmath.tanh(mpmath.mpf(float(v))) if np.isfinite(v) else None for v in x]
    finite = np.isfinite(x)
    ulp = np.array([float(abs(mpmath.mpf(float(g)) - e) / np.spacing(abs(float(e))) if float(e) != 0 else abs(g))
                    for g, e in zip(got[finite], [e for e in exact if e is not None])])
    assert ulp.max() <= 1.3, f"max error {ulp.max():.3f} ulp at x = {x[finite][ulp.argmax()]!r}"
    assert (ulp <= 0.5).mean() > 0.9
    tiny = finite & (np.abs(x) < 2.0 ** -28)
    np.testing.assert_array_equal(got[tiny], x[tiny])  # tanh x = x to the last bit there, -0.0 included
    assert np.array_equal(np.signbit(got[tiny]), np.signbit(x[tiny]))
    np.testing.assert_array_equal(got[np.isinf(x)], np.sign(x[np.isinf(x)]))
    assert np.isnan(got[np.isnan(x)]).all()
    np.testing.assert_array_equal(np.abs(got[finite & (np.abs(x) > 19.1)]), 1.0)


def test_tanh_of_float32_values_rounds_to_the_nearest_float32():
    """The float32 kernels call _tanh on float32 values and store its float64 result as float32: against mpmath,
    each within one float32 ulp and all but a few correctly rounded (double rounding can miss by one)."""
    mpmath = pytest.importorskip("mpmath")
    assert cpu_kernels.available()
    import numba  # noqa: PLC0415

    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    @numba.njit(cache=False, error_model="numpy")
    def each32(h, out):
        for i in range(h.shape[0]):
            out[i] = _cpu_numba._tanh(h[i])

    x = _tanh_values()
    x = x[np.abs(x) < 1e38].astype(np.float32)  # finite in float32
    got = np.empty_like(x)
    each32(x, got)
    with mpmath.workdps(36):
        nearest = np.array([np.float32(float(mpmath.tanh(mpmath.mpf(float(v))))) for v in x])
    # float(mpmath) rounds to float64 first; that double rounding can miss the nearest float32 only where
    # the value is within 2**-29 float32 ulp of a midpoint, so the reference is exact here to that extent
    off = np.abs(got.astype(np.float64) - nearest) / np.spacing(np.abs(nearest).astype(np.float32))
    assert off.max() <= 1
    assert (off == 0).mean() > 0.999


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("normalize, floor", [(True, 1e-30), (True, 0.5), (False, 1e-30)])
def test_step_and_complete_kernels_are_bitwise_their_equations_in_numpy(dtype, normalize, floor):
    """The whole-epoch kernels 'complete' and 'step', each cut in two spans, against their equations in NumPy,
    bit for bit: sums in the same order, max|v| NaN where a v is NaN (then the floor), non-finite entries
    flagged (inf, -inf, NaN, an overflowing scale), -0.0 kept, a network not ok stepping on its velocity alone."""
    assert cpu_kernels.available()
    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    rng = np.random.default_rng(11)
    G, K, N, M, C = 3, 7, 45, 4, 3
    big = np.finfo(dtype).max / 2
    grad = rng.normal(size=(G, K, N)).astype(dtype)
    grad[0, 1, 5], grad[0, 2, 40], grad[1, 3, 0], grad[1, 4, 44] = np.inf, np.nan, -np.inf, big
    grad[2, 5] = -0.0
    part = rng.normal(size=(G, C, M, K)).astype(dtype)
    part[1, 2, 3, 6] = np.nan
    cols = np.array([40, 3, 17, 44])
    colmap = np.full(N, -1, np.int64)
    colmap[cols] = np.arange(M)
    scale = np.array([0.37, 4.0, 1.5], dtype)
    extra = part[:, 0].copy()
    for c in range(1, C):
        extra += part[:, c]
    want = grad.copy()
    with np.errstate(all="ignore"):
        want[:, :, cols] = want[:, :, cols] + extra.transpose(0, 2, 1)
        want *= scale[:, None, None]
    got, bad = grad.copy(), np.zeros((G, K), np.bool_)
    for lo, hi in ((0, 20), (20, N)):
        _cpu_numba.complete(got, part, colmap, scale, bad, lo, hi)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    np.testing.assert_array_equal(got.view(bits), want.view(bits))
    np.testing.assert_array_equal(bad, ~np.isfinite(want).all(axis=2))
    assert bad[1, 4] and bad[1].sum() >= 2  # big * 4.0 overflows

    memories = rng.uniform(-1, 1, (G, K, N)).astype(dtype)
    velocity = rng.normal(size=(G, K, N)).astype(dtype)
    velocity[2, 1] = -0.0  # max|v| = 0: the floor
    velocity[2, 1, 3] = 0.0
    grad[2, 1] = 0.0
    ok, lr = np.array([True, True, False]), np.array([0.1, 0.01, 0.2], dtype)
    consts = cpu_kernels.step_consts(dtype, 0.6, floor)
    with np.errstate(all="ignore"):
        v = consts[2] * velocity - np.where(ok[:, None, None], grad, dtype(0))
        norm = np.max(np.abs(v), axis=2, keepdims=True)
        norm = np.where(norm > consts[3], norm, consts[3]) if normalize else np.ones_like(norm)
        z = memories + lr[:, None, None] * (v / norm)
        z[:, :, 10:30] = np.clip(z[:, :, 10:30], -1, 1)
    for lo, hi in ((0, 8), (8, G * K)):
        _cpu_numba.step(memories, velocity, grad, ok, lr, consts, normalize, 10, 30, lo, hi)
    np.testing.assert_array_equal(velocity.view(bits), v.view(bits))
    np.testing.assert_array_equal(memories.view(bits), z.view(bits))
    assert np.isnan(v[0, 2]).any() and (np.isnan(memories[0, 2]) == np.isnan(v[0, 2])).all()


def test_a_cache_that_cannot_be_read_or_written_compiles_in_memory(monkeypatch):
    """numba's on-disk cache failing (a damaged index, a full or read-only disk) compiles the kernel in memory
    with one warning, instead of sending the process to the NumPy path."""
    import pickle

    from damlite.kernels import _cpu_numba

    if not _cpu_numba._CACHE:
        pytest.skip("no writable cache directory here: nothing is cached")

    class Broken:
        cache_path = None

        def load_overload(self, sig, target_context):
            raise pickle.UnpicklingError("damaged index")

        def save_overload(self, sig, cres):
            raise OSError(28, "No space left on device")

    def plus_one(x):
        return x + 1

    kernel = _cpu_numba.njit(plus_one)
    kernel._cache._cache = Broken()
    monkeypatch.setattr(_cpu_numba, "_cache_failed", [])
    with pytest.warns(cpu_kernels.CpuKernelsWarning, match="compile in memory"):
        assert kernel(2.0) == 3.0
    assert kernel(5.0) == 6.0 and cpu_kernels._failure is None
    assert isinstance(_cpu_numba.relax._cache, _cpu_numba._TolerantCache)  # every kernel of the module


def test_a_read_only_input_runs_the_build_fits_run(monkeypatch):
    """Read-only states and targets (a caller's data, a broadcast) are copied for the loss kernel, not given a build
    of their own (numba types writeability): the same bits as writable ones, and no signature with a read-only
    input (a second ~5 s compile, whose bits need not be the fits')."""
    if not cpu_kernels.available():
        pytest.skip("the numba kernels are off here")
    from damlite.kernels import _cpu_numba  # noqa: PLC0415

    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    rng = np.random.default_rng(4)
    mem = rng.normal(0, 0.3, (2, 6, 9))
    X = np.where(rng.random((7, 9)) < 0.5, -1.0, 1.0)
    frozen = X.copy()
    frozen.flags.writeable = False
    F = make_interaction("rectified_polynomial", 3)
    writable = loss_and_gradient(mem, X, X, F, 0.2, 0.3)
    read_only = loss_and_gradient(mem, frozen, frozen, F, 0.2, 0.3)
    for a, b in zip(writable, read_only):
        np.testing.assert_array_equal(a, b)
    kernel = _cpu_numba._LOSS_GRAD[_cpu_numba.loss_grad_key(cpu_kernels.RECTIFIED, 3)]
    assert kernel.signatures and all(sig[4].mutable and sig[7].mutable for sig in kernel.signatures)
