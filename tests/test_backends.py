"""Backends: the kernels on NumPy, array-api-strict (device1) and CuPy agree and stay on device;
backend selection, the CuPy-without-GPU fallback and the environment variable, in subprocesses
(``get_backend`` caches its choice per process)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import damlite
from damlite.backend import get_backend, resolve_dtype, to_numpy
from damlite.interactions import make_interaction
from damlite.network import energy_difference, loss_and_gradient, relax
from damlite.training import train_memories

#: How the backend line starts: the package and its version, then the backend.
PREFIX = f"damlite {damlite.__version__}, backend:"


def _problem(seed=0, G=2, K=5, N=8, B=4):
    rng = np.random.default_rng(seed)
    memories = rng.uniform(-1, 1, (G, K, N))
    states = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    probes = rng.uniform(-1, 1, (B, N))
    return memories, states, probes


F = make_interaction("leaky_rectified_polynomial", 3, 0.05)


def test_energy_difference_on_backend(backend):
    memories, states, _ = _problem()
    want = energy_difference(memories, states, F, [1.0, 1 / 8])
    got = energy_difference(backend.asarray(memories), backend.asarray(states), F, [1.0, 1 / 8])
    assert backend.on_device(got)
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-12, atol=1e-14)
    sliced = energy_difference(backend.asarray(memories), backend.asarray(states), F, 0.5, neurons=slice(2, 5),
                               rescale=True)
    assert backend.on_device(sliced)
    np.testing.assert_allclose(to_numpy(sliced), energy_difference(memories, states, F, 0.5, neurons=slice(2, 5),
                                                                   rescale=True), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", ["async", "sync"])
@pytest.mark.parametrize("rescale", [False, True])
def test_relax_on_backend(backend, mode, rescale):
    memories, states, _ = _problem(1)
    G3 = make_interaction("rectified_polynomial", 3)
    want = relax(memories, states, G3, 1 / 8, mode=mode, random_state=5, rescale=rescale)
    got = relax(backend.asarray(memories), backend.asarray(states), G3, 1 / 8, mode=mode, random_state=5,
                rescale=rescale)
    for w, g in zip((want[0], want[1], want[3]), (got[0], got[1], got[3])):
        assert backend.on_device(g)
        np.testing.assert_array_equal(to_numpy(g), w)
    assert got[2] == want[2]


@pytest.mark.parametrize("continuous", [False, True])
def test_loss_and_gradient_on_backend(backend, continuous):
    memories, states, probes = _problem(2)
    x = probes if continuous else states
    want = loss_and_gradient(memories, x, x[:, 1:6], F, [0.1, 0.2], [1.0, 0.5], error_exponent=2,
                             neurons=slice(1, 6))
    got = loss_and_gradient(backend.asarray(memories), backend.asarray(x), backend.asarray(x[:, 1:6]), F,
                            [0.1, 0.2], [1.0, 0.5], error_exponent=2, neurons=slice(1, 6))
    for w, g in zip(want, got):
        assert backend.on_device(g)
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-11, atol=1e-14)


def test_train_memories_on_backend(backend):
    memories, states, _ = _problem(3, K=6, B=6)
    kwargs = dict(beta_in=[1 / 8, 1 / 4], beta_out=1.0, learning_rate=[0.1, 0.05], lr_decay=0.99, momentum=0.5,
                  epochs=4, batch_size=4, error_exponent=1, random_state=9)
    want = train_memories(memories, states, states, F, **kwargs)
    got = train_memories(backend.asarray(memories), backend.asarray(states), backend.asarray(states), F, **kwargs)
    assert backend.on_device(got.memories)
    np.testing.assert_allclose(to_numpy(got.memories), to_numpy(want.memories), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.loss, want.loss, rtol=1e-10)
    assert np.array_equal(got.finite, want.finite) and np.array_equal(got.failed_epoch, want.failed_epoch)
    assert want.loss[-1].max() < want.loss[0].min() * 1.5  # it trains, not just runs
    assert np.all(np.abs(to_numpy(got.memories)) <= 1)  # clamped


@pytest.mark.gpu
def test_estimator_on_cupy_matches_numpy(cupy_backend):
    rng = np.random.default_rng(0)
    X = np.where(rng.random((5, 32)) < 0.5, -1.0, 1.0)
    kwargs = dict(n=3, random_state=0, temperature=0.5)
    cpu = damlite.DenseAssociativeMemory(8, backend="numpy", **kwargs, epochs=5).fit(X)
    gpu = damlite.DenseAssociativeMemory(8, backend="cupy", **kwargs, epochs=5).fit(X)
    assert cupy_backend.on_device(gpu.memories_)
    np.testing.assert_allclose(to_numpy(gpu.memories_), cpu.memories_, rtol=1e-9, atol=1e-12)
    assert cupy_backend.on_device(gpu.relax(X).states)


# ------------------------------------------------------------------ selection
def test_numpy_backend_and_dtypes():
    xp, info = get_backend("numpy")
    assert info.name == "numpy" and info.device == "cpu"
    assert resolve_dtype(xp, "float32") == xp.float32 and resolve_dtype(xp, xp.float16) == xp.float16
    for bad in ("int32", "float128", np.int64):
        with pytest.raises(ValueError, match="dtype"):
            resolve_dtype(xp, bad)
    with pytest.raises(ValueError, match="backend"):
        get_backend("bogus")


def _run(code, **env_extra):
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "SYSTEMROOT", "PYTHONPATH") if k in os.environ}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          cwd=tempfile.gettempdir())


def _gpu_usable():
    try:
        get_backend("cupy")
        return True
    except damlite.BackendUnavailableError:
        return False


needs_cupy_without_gpu = pytest.mark.skipif(
    importlib.util.find_spec("cupy") is None or _gpu_usable(),
    reason="needs CuPy installed on a machine without a usable GPU",
)


@needs_cupy_without_gpu
def test_cupy_installed_without_gpu_falls_back_to_numpy():
    code = ("import damlite\n"
            "info = damlite.backend_info()\n"
            "print(info.name); print(info.reason); print(info.detail)\n"
            "xp, _ = damlite.get_backend()\n"
            "import numpy as np\n"
            "dam = damlite.DenseAssociativeMemory(4, random_state=0)\n"
            "dam.set_params(epochs=2).fit(np.ones((2, 8)))\n")
    proc = _run(code, DAMLITE_CPU_KERNELS="numpy")  # no numba compile line on a fresh cache: only the banner
    assert proc.returncode == 0, proc.stderr
    name, reason = proc.stdout.splitlines()[:2]
    assert name == "numpy"
    assert reason == "CuPy is installed but no usable GPU"  # short; the error is in .detail
    assert proc.stdout.splitlines()[2]  # the underlying error, for whoever asks
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) <= 1 and all(ln.startswith(f"{PREFIX} numpy") for ln in lines), proc.stderr


@needs_cupy_without_gpu
def test_auto_backend_announces_once_with_the_reason():
    code = ("import damlite, numpy as np\n"
            "xp, info = damlite.get_backend()\n"
            "damlite.get_backend('auto'); damlite.get_backend()\n"
            "dam = damlite.DenseAssociativeMemory(4, random_state=0, epochs=2).fit(np.ones((2, 8)))\n"
            "dam.relax(np.ones((1, 8)))\n")
    proc = _run(code, DAMLITE_CPU_KERNELS="numpy")  # no numba compile line on a fresh cache: only the banner
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()  # one message, wrapped to 88 columns
    assert proc.stderr.count(PREFIX) == 1, proc.stderr
    assert lines[0].startswith(f"{PREFIX} numpy on cpu (") and "CuPy" in proc.stderr
    assert all(len(line) <= 88 for line in lines) and all(line.startswith("  ") for line in lines[1:])


@needs_cupy_without_gpu
def test_backend_info_counts_as_the_announcement():
    """backend_info() returns the line the user prints; damlite does not repeat it on stderr."""
    proc = _run("import damlite\nprint(damlite.backend_info())\ndamlite.get_backend()\n")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.startswith(f"{PREFIX} numpy on cpu")


def test_quiet_env_silences_the_announcement():
    proc = _run("import damlite\ndamlite.get_backend()\n", DAMLITE_QUIET="1")
    assert proc.returncode == 0 and proc.stderr == ""


@needs_cupy_without_gpu
def test_env_cupy_without_gpu_raises_backend_unavailable():
    code = ("import damlite\n"
            "try:\n"
            "    damlite.get_backend()\n"
            "except damlite.BackendUnavailableError as exc:\n"
            "    print('RAISED', exc)\n"
            "try:\n"
            "    damlite.DenseAssociativeMemory(3, epochs=1).fit([[1.0, -1.0, 1.0]])\n"
            "except damlite.BackendUnavailableError as exc:\n"
            "    print('RAISED', exc)\n")
    proc = _run(code, DAMLITE_BACKEND="cupy")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert len(out) == 2 and all(ln.startswith("RAISED CuPy") for ln in out), proc.stdout
    assert "no usable GPU" in out[0] or "not importable" in out[0]


def test_env_bogus_is_a_value_error():
    code = ("import damlite\n"
            "try:\n"
            "    damlite.backend_info()\n"
            "except ValueError as exc:\n"
            "    print('VALUE', exc)\n")
    proc = _run(code, DAMLITE_BACKEND="bogus")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("VALUE DAMLITE_BACKEND") and "'bogus'" in proc.stdout


def test_env_numpy_is_honoured_quietly():
    proc = _run("import damlite\nprint(damlite.backend_info().name, damlite.backend_info().reason)\n",
                DAMLITE_BACKEND="numpy")
    assert proc.returncode == 0 and proc.stdout.strip() == "numpy asked for NumPy"


@pytest.mark.gpu
def test_cupy_reported_when_gpu_present(cupy_backend):
    info = damlite.backend_info("cupy")
    assert info.name == "cupy" and info.device.startswith("GPU")


@pytest.mark.parametrize("cc,fast", [("60", True), ("70", True), ("75", False), ("80", True), ("86", False),
                                     ("89", False), ("90", True), ("100", True), ("120", False)])
def test_fast_float64_capabilities(cc, fast):
    from damlite.backend import capability_has_fast_float64

    assert capability_has_fast_float64(cc) is fast


def test_auto_dtype_keeps_float64_on_the_cpu_and_for_the_original_network(monkeypatch):
    import damlite.backend as be

    assert be.auto_dtype(np, "normalized") == "float64"
    monkeypatch.setattr(be, "fast_float64", lambda xp: False)  # as on a T4
    assert be.auto_dtype(np, "normalized") == "float32"
    assert be.auto_dtype(np, "original") == "float64"
    assert be.resolve_dtype(np, "auto", "normalized") == np.float32


@pytest.mark.slow
def test_float32_normalized_block_agrees_with_float64():
    """The T4 default (float32, normalized network) finds float64's best cell on a block of the mnist task.

    Marginal cells may differ (here one cell by ~0.08 in F1 after 4 epochs: the max-abs step amplifies
    rounding); the grid's best cell and its F1 must not.
    """
    from damlite.sweeps.tasks.mnist import mnist_block, run_mnist_block

    block = mnist_block("normalized", 10, ((1.0, 3.0), (0.1, 0.3)), data="bundled", validation_size=500,
                        n_train=1000, memories=16, epochs=4, batch_size=100, eval_every=4)
    f64 = np.array([r["f1"] for r in run_mnist_block(block, backend="numpy", dtype="float64")])
    f32 = np.array([r["f1"] for r in run_mnist_block(block, backend="numpy", dtype="float32")])
    assert np.all(np.isfinite(f32)) and f64.max() > 0.3  # the block learns
    assert np.argmax(f32) == np.argmax(f64)
    assert abs(f32.max() - f64.max()) <= 0.01, (f64, f32)


@pytest.mark.slow  # whole computations (tens of seconds on 2 cores): the full suite runs it
def test_estimator_dtype_auto_follows_the_device(monkeypatch):
    """The estimator's default dtype is "auto": float64 here, float32 for the normalized network on a T4."""
    import damlite.backend as be

    X = np.where(np.random.default_rng(0).random((4, 12)) < 0.5, -1.0, 1.0)
    est = damlite.DenseAssociativeMemory(4, n=3, epochs=2, backend="numpy", random_state=0).fit(X)
    assert est.dtype == "auto" and est.dtype_ == np.float64
    monkeypatch.setattr(be, "fast_float64", lambda xp: False)
    est = damlite.DenseAssociativeMemory(4, n=3, epochs=2, backend="numpy", random_state=0).fit(X)
    assert est.dtype_ == np.float32 and damlite.to_numpy(est.memories_).dtype == np.float32
    orig = damlite.DenseAssociativeMemory(4, n=3, variant="original", epochs=2, backend="numpy", random_state=0).fit(X)
    assert orig.dtype_ == np.float64


# ------------------------------------------------------------------ TF32 never silent
def _fake_cupy(monkeypatch, linalg):
    """A stand-in for CuPy with ``cupy._core._routines_linalg`` = ``linalg`` and no GPU (cupy.cuda missing)."""
    import types

    cupy, core = types.ModuleType("cupy"), types.ModuleType("cupy._core")
    core._routines_linalg = linalg
    cupy._core = core
    for name, module in (("cupy", cupy), ("cupy._core", core), ("cupy._core._routines_linalg", linalg)):
        monkeypatch.setitem(sys.modules, name, module)


@pytest.mark.parametrize("asked", ["1", "0", None])
def test_cupy_float32_products_are_pinned_to_full_precision_whatever_cupy_tf32_says(monkeypatch, asked):
    """Choosing CuPy sets CuPy's compute type of float32 and complex64 products to its default (full float32
    precision through cuBLAS) before anything else runs, whatever CUPY_TF32 asks (CuPy would otherwise read it
    at its first product and run TF32); a fit on CuPy arrays pins it again."""
    import types

    import damlite.backend as be
    from damlite.kernels import gpu_kernels

    calls = []
    linalg = types.SimpleNamespace(COMPUTE_TYPE_DEFAULT=1, COMPUTE_TYPE_TF32=7,
                                   set_compute_type=lambda dtype, kind: calls.append((np.dtype(dtype), kind)))
    _fake_cupy(monkeypatch, linalg)
    if asked is None:
        monkeypatch.delenv("CUPY_TF32", raising=False)
    else:
        monkeypatch.setenv("CUPY_TF32", asked)
    with pytest.raises(be.BackendUnavailableError):  # the stand-in has no GPU: pinned first, then refused
        be._probe_cupy()
    assert calls == [(np.dtype(np.float32), 1), (np.dtype(np.complex64), 1)]
    calls.clear()
    monkeypatch.setattr(gpu_kernels, "is_cupy_namespace", lambda xp: True)
    monkeypatch.setattr(gpu_kernels, "available", lambda: False)
    gpu_kernels.usable(types.ModuleType("cupy_namespace"))
    assert calls == [(np.dtype(np.float32), 1), (np.dtype(np.complex64), 1)]


def test_a_cupy_that_cannot_be_pinned_is_refused_in_one_line_only_where_cupy_tf32_asks_for_tf32(monkeypatch):
    import types

    import damlite.backend as be

    _fake_cupy(monkeypatch, types.SimpleNamespace())  # no set_compute_type: CuPy's internals moved
    for value in ("1", "yes"):
        monkeypatch.setenv("CUPY_TF32", value)
        with pytest.raises(be.BackendUnavailableError, match="CUPY_TF32") as caught:
            be.pin_full_float32()
        assert "\n" not in str(caught.value)
    for value in ("0", ""):
        monkeypatch.setenv("CUPY_TF32", value)
        be.pin_full_float32()  # nothing asks for TF32: CuPy's default is full precision


@pytest.mark.gpu
def test_cupy_float32_products_keep_float32_precision_with_cupy_tf32_set(cupy_backend, monkeypatch):
    """On the GPU: with CUPY_TF32=1 and CuPy's choice not yet made, a float32 product after damlite pinned it
    agrees with float64 to float32 rounding (~1e-6 relative), not TF32's ~1e-3."""
    import cupy
    from cupy._core import _routines_linalg as linalg

    import damlite.backend as be

    monkeypatch.setenv("CUPY_TF32", "1")
    linalg.set_compute_type(np.float32, linalg.COMPUTE_TYPE_TBD)  # as in a fresh process: CuPy reads CUPY_TF32 again
    be.pin_full_float32()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((512, 512)), rng.standard_normal((512, 512))
    got = cupy.asnumpy(cupy.asarray(a, dtype=cupy.float32) @ cupy.asarray(b, dtype=cupy.float32))
    want = a.astype(np.float32).astype(np.float64) @ b.astype(np.float32).astype(np.float64)
    assert np.abs(got - want).max() / np.abs(want).max() < 1e-5
    linalg.set_compute_type(np.float32, linalg.COMPUTE_TYPE_TBD)
