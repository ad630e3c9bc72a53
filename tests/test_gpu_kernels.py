"""The fused GPU kernels (damlite.kernels.gpu_kernels) against the reference learning rule.

Without a GPU the kernels' own code runs on NumPy arrays under numba's CUDA
simulator (a subprocess with NUMBA_ENABLE_CUDASIM=1, set before numba loads);
with a GPU the same comparison runs on CuPy arrays.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from damlite.kernels import gpu_kernels
from damlite.interactions import make_interaction
from damlite.network import loss_and_gradient

pytest.importorskip("numba")

CASES = [("rectified_polynomial", 4, {}), ("polynomial", 3, {}),
         ("leaky_rectified_polynomial", 4, {"epsilon": 0.01, "leak": "code"}), ("exponential", 1, {})]


def _problem(G=2, B=55, K=4, D=5, M=3, seed=0):
    """Classifier-shaped problem: D inputs, M evaluated neurons at -1, bipolar targets; B > one row chunk."""
    rng = np.random.default_rng(seed)
    mem = rng.uniform(-1, 1, (G, K, D + M))
    X = np.concatenate([np.where(rng.random((B, D)) < 0.5, -1.0, 1.0), -np.ones((B, M))], axis=1)
    T = np.where(rng.random((B, M)) < 0.3, 1.0, -1.0)
    return mem, X, T, slice(D, D + M)


SIMULATED = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    from test_gpu_kernels import CASES, _problem
    from damlite.kernels import gpu_kernels
    from damlite.interactions import make_interaction
    from damlite.network import loss_and_gradient
    out = {}

    def compare(key, problem, F, m, gradient, setting="auto"):
        mem, X, T, cols = problem
        args = (mem, X, T, F, np.array([0.3, 0.7]), np.array([1.0, 0.5]))
        opts = dict(error_exponent=m, neurons=cols, gradient=gradient)
        os.environ["DAMLITE_GPU_KERNELS"] = "reference"
        ref = loss_and_gradient(*args, **opts)
        os.environ["DAMLITE_GPU_KERNELS"] = setting
        got = loss_and_gradient(*args, **opts)
        M = cols.stop - cols.start
        out[key] = {"loss": float(np.max(np.abs(got[0] - ref[0]) / np.maximum(np.abs(ref[0]), 1e-300))),
                    "finite": bool(np.array_equal(got[2], ref[2])), "row_wise": gpu_kernels.row_wise(M)}
        if gradient:
            scale = max(float(np.max(np.abs(ref[1]))), 1e-300)
            out[key]["grad"] = float(np.max(np.abs(got[1] - ref[1])) / scale)

    # 12 rows in chunks of 5 (5, 5, 2) for the evaluated columns' partial sums: few rows, as the
    # row-wise outputs simulate a warp of 32 threads per row
    gpu_kernels.ROWS_PER_CHUNK = 5
    small = _problem(B=12)
    for name, n, kw in CASES:
        F = make_interaction(name, n, **kw)
        for m in (1, 30):
            for gradient in (True, False):
                compare(f"{name}|m={m}|grad={gradient}", small, F, m, gradient)
        compare(f"{name}|m=30|grad=True|threepass", small, F, 30, True, "threepass")
    F = make_interaction("rectified_polynomial", 4)
    # 40 memories: the lanes of a row's warp take two of them or one; M = 10 (MNIST's), and one more
    # than the row-wise kernels take (the three-pass kernels then run)
    compare("lanes|M=10", _problem(B=9, K=40, D=3, M=10, seed=5), F, 3, True)
    compare("lanes|M=17", _problem(B=4, K=36, D=3, M=17, seed=5), F, 3, True)
    out["status"] = gpu_kernels.status()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def simulated():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", DAMLITE_CPU_KERNELS="numpy", DAMLITE_QUIET="1")
    proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", SIMULATED, os.path.dirname(__file__)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # the CUDA simulator's run takes ~33 s; CI's full suite runs it
def test_simulated_kernels_ran(simulated):
    assert simulated["status"].startswith("numba-cuda fused kernels")


@pytest.mark.slow  # the CUDA simulator (~33 s); CI's full suite runs it
@pytest.mark.parametrize("name", [c[0] for c in CASES] + ["lanes"])
def test_simulated_kernels_match_reference(simulated, name):
    """The row-wise kernels (and, once per interaction, the three-pass ones) against the reference path."""
    rows = {k: v for k, v in simulated.items() if k.startswith(name + "|")}
    assert len(rows) == (2 if name == "lanes" else 5)
    for key, row in rows.items():
        assert row["finite"], key
        assert row["row_wise"] == ("threepass" not in key and "M=17" not in key), (key, row)
        assert row["loss"] <= 1e-12, (key, row)
        if "grad" in row:
            assert row["grad"] <= 1e-12, (key, row)


def test_unknown_setting_is_refused(monkeypatch):
    monkeypatch.setenv("DAMLITE_GPU_KERNELS", "fast")
    with pytest.raises(ValueError, match="DAMLITE_GPU_KERNELS must be one of auto, minibatch, threepass, reference"):
        gpu_kernels.mode()


def test_reference_setting_turns_them_off(monkeypatch):
    monkeypatch.setenv("DAMLITE_GPU_KERNELS", "reference")
    assert not gpu_kernels.available()
    assert gpu_kernels.status() == "reference (DAMLITE_GPU_KERNELS=reference)"


def test_a_failing_toolchain_falls_back_once_with_a_warning(monkeypatch):
    """A compile or launch error warns once, returns None (the caller takes the reference path) and sticks."""
    monkeypatch.setattr(gpu_kernels, "_state", {"failed": None, "fit_failed": None, "kernels": None})

    def broken():
        raise RuntimeError("NVVM not found\nsecond line")

    monkeypatch.setattr(gpu_kernels, "_build", broken)
    monkeypatch.delenv("DAMLITE_GPU_KERNELS", raising=False)
    mem, X, T, cols = _problem(B=4)
    d = np.matmul(X, np.transpose(mem, (0, 2, 1)))
    zeta_t = np.transpose(mem[:, :, cols], (0, 2, 1))
    args = (d, zeta_t, X[:, cols], T, np.array([0.3, 0.7]), np.array([1.0, 0.5]), (1, 4, 0.0), 2, True)
    with pytest.warns(RuntimeWarning, match="fused GPU kernels failed .RuntimeError: NVVM not found.*"
                                            "DAMLITE_GPU_KERNELS=reference"):
        assert gpu_kernels.loss_and_gradient_bipolar(*args) is None
    assert gpu_kernels.status() == "reference (the fused kernels failed: RuntimeError: NVVM not found)"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gpu_kernels.loss_and_gradient_bipolar(*args) is None  # no second warning


class _Launcher:
    """A stand-in kernel: does nothing, except ``step``, which writes the memories and then fails."""

    def __init__(self, name):
        self.name = name

    def __getitem__(self, config):
        return self

    def __call__(self, *args):
        if self.name == "step":
            args[2][...] = 7.0
            raise RuntimeError("launch failed\nsecond line")


class _BrokenKernels:
    ROW_THREADS, ROW_WARPS, MAX_COLUMNS = 16, 4, 16

    def __getattr__(self, name):
        return _Launcher(name)

    def row_wise_kernels(self, *key):
        return _Launcher("outputs"), _Launcher("gradient_parts")


@pytest.mark.filterwarnings("ignore:overflow encountered in matmul:RuntimeWarning")  # stub kernels: unwritten buffers
def test_a_failing_whole_epoch_path_restores_the_epoch_and_falls_back_to_minibatches(monkeypatch):
    """A launch error in the middle of an epoch: memories and velocity as before it, one warning, then the
    three kernels per minibatch (not the reference path)."""
    from damlite.kernels.gpu_fit import FusedFit

    monkeypatch.setattr(gpu_kernels, "_state", {"failed": None, "fit_failed": None, "kernels": _BrokenKernels()})
    monkeypatch.setattr(gpu_kernels, "kernel_args", lambda *arrays: arrays)
    monkeypatch.setattr(gpu_kernels, "status", lambda: ("numba-cuda fused kernels, whole epochs" if
                                                          not gpu_kernels._state["fit_failed"] else "numba-cuda per minibatch"))
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # NumPy arrays stand for device arrays
    monkeypatch.delenv("DAMLITE_GPU_KERNELS", raising=False)
    mem, X, T, cols, b_in, b_out, lr = _classifier_problem("normalized", "float64")
    memories, velocity = mem.copy(), np.full_like(mem, 0.25)
    F = make_interaction("rectified_polynomial", 3)
    fit = FusedFit.create(np, memories, velocity, X, T, F, cols, None, b_in, b_out, 1, 10, 0.6, True, 1e-30, 2**30)
    assert fit is not None
    with pytest.warns(RuntimeWarning, match="whole-epoch GPU path failed .RuntimeError: launch failed.; "
                                            "using the fused kernels per minibatch"):
        assert fit.epoch(None, lr, np.ones(3, dtype=bool)) is None
    np.testing.assert_array_equal(memories, mem)
    np.testing.assert_array_equal(velocity, 0.25)
    assert gpu_kernels._state["fit_failed"] == "RuntimeError: launch failed" and not gpu_kernels._state["failed"]
    assert FusedFit.create(np, memories, velocity, X, T, F, cols, None, b_in, b_out, 1, 10, 0.6, True, 1e-30,
                           2**30) is None


class _StubKernels:
    """Stand-in kernels that record their launches and do nothing, except those named in ``broken``, which
    raise; the row-wise ones are named ``row-wise outputs`` and ``gradient_parts``."""

    ROW_THREADS, ROW_WARPS, MAX_COLUMNS = 16, 4, 16

    def __init__(self, broken):
        self.broken, self.launched = broken, []

    def __getattr__(self, name):
        return self._launcher(name)

    def row_wise_kernels(self, *key):
        if "row_wise_kernels" in self.broken:
            raise RuntimeError("NVVM: unsupported\nsecond line")
        return self._launcher("row-wise outputs"), self._launcher("gradient_parts")

    def _launcher(self, name):
        stub = self

        class Launcher:
            def __getitem__(self, config):
                return self

            def __call__(self, *args):
                stub.launched.append(name)
                if name in stub.broken:
                    raise RuntimeError(f"{name} failed")

        return Launcher()


def test_failing_row_wise_kernels_fall_back_to_the_three_pass_ones(monkeypatch):
    """One warning, the same call completed by the three-pass kernels, and those from then on."""
    stub = _StubKernels(broken=("row_wise_kernels",))
    monkeypatch.setattr(gpu_kernels, "_state", {"failed": None, "fit_failed": None, "kernels": stub})
    monkeypatch.setattr(gpu_kernels, "kernel_args", lambda *arrays: arrays)
    monkeypatch.delenv("DAMLITE_GPU_KERNELS", raising=False)
    mem, X, T, cols = _problem(B=4)
    d = np.matmul(X, np.transpose(mem, (0, 2, 1)))
    args = (d, np.transpose(mem[:, :, cols], (0, 2, 1)), X[:, cols], T, np.array([0.3, 0.7]), np.array([1.0, 0.5]),
            (1, 4, 0.0), 2, True)
    assert gpu_kernels.row_wise(3)
    with pytest.warns(RuntimeWarning, match="row-wise GPU loss kernels failed .RuntimeError: NVVM: unsupported.; "
                                            "using the three-pass loss kernels. Set DAMLITE_GPU_KERNELS=threepass"):
        assert gpu_kernels.loss_and_gradient_bipolar(*args) is not None
    assert stub.launched == ["outputs", "rows", "columns"]
    assert not gpu_kernels.row_wise(3)
    assert "three-pass loss kernels, the row-wise ones failed: RuntimeError: NVVM: unsupported" in gpu_kernels.status()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gpu_kernels.loss_and_gradient_bipolar(*args) is not None  # no second warning
    assert gpu_kernels.whole_epochs()


@pytest.mark.filterwarnings("ignore:overflow encountered in matmul:RuntimeWarning")  # stub kernels: unwritten buffers
def test_a_failing_row_wise_epoch_runs_again_with_the_three_pass_kernels(monkeypatch):
    """A row-wise launch error in an epoch: the epoch's start restored, one warning, the epoch run again with the
    three-pass kernels (whole epochs stay on)."""
    from damlite.kernels.gpu_fit import FusedFit

    stub = _StubKernels(broken=("gradient_parts",))
    monkeypatch.setattr(gpu_kernels, "_state", {"failed": None, "fit_failed": None, "kernels": stub})
    monkeypatch.setattr(gpu_kernels, "kernel_args", lambda *arrays: arrays)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # NumPy arrays stand for device arrays
    monkeypatch.delenv("DAMLITE_GPU_KERNELS", raising=False)
    mem, X, T, cols, b_in, b_out, lr = _classifier_problem("normalized", "float64")
    F = make_interaction("rectified_polynomial", 3)
    fit = FusedFit.create(np, mem.copy(), np.zeros_like(mem), X, T, F, cols, None, b_in, b_out, 1, 10, 0.6, True,
                          1e-30, 2**30)
    assert fit is not None and fit.row_wise
    with pytest.warns(RuntimeWarning, match="row-wise GPU loss kernels failed .RuntimeError: gradient_parts failed."):
        assert fit.epoch(None, lr, np.ones(3, dtype=bool)) is not None
    assert not fit.row_wise and gpu_kernels.whole_epochs()
    first = stub.launched.index("gradient_parts")
    assert stub.launched[:first + 1] == ["gather", "row-wise outputs", "gradient_parts"]
    assert stub.launched[first + 1:first + 7] == ["gather", "outputs", "rows", "columns", "finish", "step"]
    assert "gradient_parts" not in stub.launched[first + 1:]


def test_minibatch_setting_keeps_the_kernels_but_not_whole_epochs(monkeypatch):
    monkeypatch.setenv("DAMLITE_GPU_KERNELS", "minibatch")
    monkeypatch.setattr(gpu_kernels, "_state", {"failed": None, "fit_failed": None, "kernels": None})
    assert not gpu_kernels.whole_epochs()
    assert gpu_kernels.status().startswith("numba-cuda fused kernels per minibatch (DAMLITE_GPU_KERNELS=minibatch")
    assert gpu_kernels.available()


@contextlib.contextmanager
def _ptx_compiler(cc):
    """``compile(kernel name, signature) -> PTX`` for compute capability ``cc`` without a GPU, and numba's
    types module; skips where numba.cuda does not import or NVVM is missing."""
    import types as pytypes

    from damlite.kernels.gpu_kernels import _import_cuda

    try:
        cuda = _import_cuda()
        import numba.cuda.dispatcher as dispatcher
        from numba import types as T

        from damlite.kernels import _cuda_kernels as k
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"numba.cuda does not import: {exc}")
    if not hasattr(dispatcher, "get_current_device"):
        pytest.skip("this numba.cuda compiles device functions differently")

    def compile_ptx(name, sig):
        """``name``: a kernel of the module, or ``(row-wise kernel index, numba dtype)``."""
        kernel = getattr(k, name) if isinstance(name, str) else k.row_wise_kernels(1, 10, 10, name[1])[name[0]]
        try:
            return cuda.compile_ptx(kernel.py_func, sig, cc=cc)[0]
        except Exception as exc:  # noqa: BLE001
            if "NVVM" in type(exc).__name__ + str(exc) or "CudaSupportError" in type(exc).__name__:
                pytest.skip(f"no NVVM here: {type(exc).__name__}")
            raise

    mp = pytest.MonkeyPatch()
    # device functions ask the current device for its compute capability
    mp.setattr(dispatcher, "get_current_device", lambda: pytypes.SimpleNamespace(compute_capability=cc))
    try:
        yield compile_ptx, T
    finally:
        mp.undo()


def _kernel_signatures(T, dt):
    """Each kernel's argument types on arrays of ``dt`` (any strides); float scalars come as float64."""
    f64, i64, i8 = T.float64, T.int64, T.int8

    def v(nd, of=dt):
        return T.Array(of, nd, "A")

    return {
        "gather": (v(2), v(2), v(1, i64), i64, v(2), v(2), v(1, i8), v(3), v(3)),
        "outputs": (v(3), v(3), v(3), v(3), v(1), v(1), i64, i64, f64, i64, v(3), v(3)),
        "rows": (v(3), v(3), v(3), v(3), v(1), i64, i64, f64, v(3)),
        "columns": (v(3), v(3), v(3), v(3), v(1), i64, i64, f64, i64, v(4)),
        "finish": (v(3), v(4), v(1, i64), v(1), v(3), v(1), v(1, i8)),
        "step": (v(3), v(3), v(3), v(1), v(1, i8), v(1, i8), v(1), dt, dt, T.boolean, v(1, i8), v(2), v(1),
                 v(1, i8)),
        # the row-wise kernels (rectified x**10, M = 10: MNIST's), compiled for ``dt``
        (0, dt): (v(3), v(3), v(3), v(3), v(1), v(1), f64, i64, v(3), v(3)),
        (1, dt): (v(3), v(3), v(3), v(3), v(1), f64, i64, v(3), v(4)),
    }


def test_kernels_compile_to_ptx_for_an_h100():
    """Every kernel through numba's CUDA type inference and NVVM, float32 and float64, for compute capability
    9.0, without a GPU (the simulator runs the kernels as Python and checks no types). Skipped where NVVM
    is missing."""
    with _ptx_compiler((9, 0)) as (compile_ptx, T):
        for dt in (T.float32, T.float64):
            for name, sig in _kernel_signatures(T, dt).items():
                assert ".entry" in compile_ptx(name, sig), (name, dt)


def test_row_wise_kernels_keep_their_sums_in_registers():
    """The row-wise kernels' loops over the M evaluated neurons unroll at compile time (M, the interaction's
    kind and n are constants there), so that each thread's M sums and memory entries are registers:
    no local memory in their PTX (MNIST's M = 10, x**10, float64, an H100)."""
    with _ptx_compiler((9, 0)) as (compile_ptx, T):
        sigs = _kernel_signatures(T, T.float64)
        for which in (0, 1):
            ptx = compile_ptx((which, T.float64), sigs[which, T.float64])
            assert "ld.local" not in ptx and "st.local" not in ptx, which


def test_float32_loss_kernels_do_float32_arithmetic():
    """A float literal in device code is a float64 and drags float32 kernels into float64 arithmetic,
    which a T4 (Colab's GPU) runs at 1/32 of the speed. The loss kernels (three-pass and row-wise),
    compiled for a T4 (compute capability 7.5) on float32 arrays, must hold no float64 arithmetic or
    comparison (PTX ``*.f64`` instructions other than loading and converting a float64 scalar argument)."""
    import re

    with _ptx_compiler((7, 5)) as (compile_ptx, T):
        sigs = _kernel_signatures(T, T.float32)
        for name in ("outputs", "rows", "columns", (0, T.float32), (1, T.float32)):
            ptx = compile_ptx(name, sigs[name])
            f64_ops = [op for op in re.findall(r"\b([a-z]+(?:\.[a-z0-9]+)*\.f64)\b", ptx)
                       if op not in ("ld.param.f64", "cvt.rn.f32.f64")]
            assert not f64_ops, (name, sorted(set(f64_ops)))


@pytest.mark.gpu
@pytest.mark.parametrize("name,n,kw", CASES)
def test_cupy_kernels_match_reference(name, n, kw, monkeypatch):
    from damlite.backend import BackendUnavailableError, get_backend

    try:
        xp, _ = get_backend("cupy", announce=False)
    except BackendUnavailableError as exc:
        pytest.skip(str(exc))
    mem, X, T, cols = _problem(G=3, B=120, K=16, D=20, M=10, seed=3)
    F = make_interaction(name, n, **kw)
    args = (xp.asarray(mem), xp.asarray(X), xp.asarray(T), F, np.array([0.05, 0.1, 0.2]), np.array([1.0, 0.5, 2.0]))
    monkeypatch.setenv("DAMLITE_GPU_KERNELS", "reference")
    ref = [np.asarray(xp.asnumpy(a)) for a in loss_and_gradient(*args, error_exponent=30, neurons=cols)]
    monkeypatch.setenv("DAMLITE_GPU_KERNELS", "auto")
    got = [np.asarray(xp.asnumpy(a)) for a in loss_and_gradient(*args, error_exponent=30, neurons=cols)]
    assert gpu_kernels.available(), gpu_kernels.status()
    np.testing.assert_array_equal(got[2], ref[2])
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-11)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-9, atol=1e-12 * np.max(np.abs(ref[1])))


# ---------------------------------------------------------------- a whole fit (damlite.kernels.gpu_fit)

FIT_CASES = [(variant, m, dtype) for variant in ("original", "normalized") for m in (1, 30)
             for dtype in ("float32", "float64")]
FIT_TOLERANCE = {"float64": 1e-12, "float32": 1e-4}

SIMULATED_FIT = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    from test_gpu_kernels import FIT_CASES, _classifier_problem
    from damlite.kernels import gpu_fit, gpu_kernels
    from damlite.interactions import make_interaction
    from damlite.network import loss_and_gradient
    from damlite.training import train_memories

    epochs_run = []
    original_epoch = gpu_fit.FusedFit.epoch
    def counted(self, *a):
        out = original_epoch(self, *a)
        epochs_run.extend([1] if out is not None else [])
        return out
    gpu_fit.FusedFit.epoch = counted

    def rel(a, b):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))

    def run(variant, m, dtype, threads, fused="auto"):
        gpu_fit.FusedFit.row_threads = threads
        mem, X, T, cols, b_in, b_out, lr = _classifier_problem(variant, dtype)
        F = make_interaction("rectified_polynomial", 3)
        opts = dict(beta_in=b_in, beta_out=b_out, learning_rate=lr, momentum=0.6, epochs=2, batch_size=15,
                    error_exponent=m, neurons=cols, clamp=slice(0, cols.start), random_state=5)
        row = {}
        for setting in ("reference", fused):
            os.environ["DAMLITE_GPU_KERNELS"] = setting
            before = len(epochs_run)
            res = train_memories(mem, X, T, F, **opts)
            row[setting] = res
            row[setting + "_fused_epochs"] = len(epochs_run) - before
        ref, got = row["reference"], row[fused]
        out = {"fused_epochs": row[fused + "_fused_epochs"], "reference_fused_epochs": row["reference_fused_epochs"],
               "loss": rel(got.loss[:, :2], ref.loss[:, :2]), "memories": rel(got.memories, ref.memories),
               "moved": rel(ref.memories[:2], mem[:2]),
               "finite": got.finite.tolist(), "finite_ref": ref.finite.tolist(),
               "failed_epoch": got.failed_epoch.tolist(), "failed_epoch_ref": ref.failed_epoch.tolist(),
               "dtype": str(got.memories.dtype)}
        # one minibatch of the whole set: the fit's loss and gradient buffers against loss_and_gradient
        os.environ["DAMLITE_GPU_KERNELS"] = "reference"
        loss, grad, ok = loss_and_gradient(mem, X, T, F, b_in, b_out, error_exponent=m, neurons=cols)
        os.environ["DAMLITE_GPU_KERNELS"] = fused
        fit = gpu_fit.FusedFit.create(np, mem.copy(), np.zeros_like(mem), X, T, F, cols, None, b_in, b_out, m,
                                      len(X), 0.0, True, 1e-30, 2**30)
        fit.epoch(None, np.zeros(len(b_in)), np.ones(len(b_in), dtype=bool))
        out["step_loss"] = rel(fit.buf["loss"][:2], loss[:2])
        out["step_grad"] = rel(fit.buf["grad"][:2], grad[:2])
        out["step_bad"] = (fit.buf["bad"] != 0).tolist()
        out["step_ok_ref"] = ok.tolist()
        out["row_wise"] = fit.row_wise
        os.environ["DAMLITE_GPU_KERNELS"] = "auto"
        return out

    result = {f"{v}|m={m}|{dt}": run(v, m, dt, 16) for v, m, dt in FIT_CASES}
    result["normalized|m=30|float64|threads=128"] = run("normalized", 30, "float64", 128)
    result["normalized|m=30|float64|threepass"] = run("normalized", 30, "float64", 16, "threepass")
    result["status"] = gpu_kernels.status()
    print(json.dumps(result))
""")


def _classifier_problem(variant, dtype, G=3, B=25, K=3, D=6, M=3, seed=2, temperatures=(0.5, 0.8, 1.0)):
    """MNIST-shaped: real inputs in [-1, 1], M class neurons at -1, one-hot ±1 targets; the third network's
    b_in overflows F (its numbers stop being finite in the first minibatch)."""
    from damlite.classification import classifier_scales

    rng = np.random.default_rng(seed)
    mem = np.clip(rng.normal(-0.2, 0.5, (G, K, D + M)), -1, 1).astype(dtype)
    X = np.concatenate([rng.uniform(-1, 1, (B, D)), -np.ones((B, M))], axis=1).astype(dtype)
    T = -np.ones((B, M), dtype=dtype)
    T[np.arange(B), rng.integers(0, M, B)] = 1.0
    b_in, b_out = classifier_scales(variant, np.array(temperatures, dtype=np.float64), 3, D + M)
    b_in[2] = 1e200  # F(u) overflows in float64 (and b_in itself in float32)
    return mem, X, T, slice(D, D + M), b_in, b_out, np.array([0.02, 0.05, 0.1])


@pytest.fixture(scope="module")
def simulated_fit():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", DAMLITE_CPU_KERNELS="numpy", DAMLITE_QUIET="1")
    # the simulator runs the kernels as Python on NumPy scalars: the overflowing network warns there
    proc = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", "-c", SIMULATED_FIT,
                           os.path.dirname(__file__)], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("key", [f"{v}|m={m}|{dt}" for v, m, dt in FIT_CASES]
                         + ["normalized|m=30|float64|threads=128", "normalized|m=30|float64|threepass"])
def test_simulated_fit_matches_reference_training(simulated_fit, key):
    """Two epochs of 2 minibatches (15 and 10 rows): per-epoch losses, memories, frozen networks; and the
    loss and gradient of one minibatch against loss_and_gradient. Row-wise loss kernels, and once the
    three-pass ones."""
    assert simulated_fit["status"].startswith("numba-cuda fused kernels, whole epochs")  # no failure, no fallback
    row = simulated_fit[key]
    assert row["row_wise"] == ("threepass" not in key), row
    tol = FIT_TOLERANCE[row["dtype"]]
    assert row["fused_epochs"] == 2 and row["reference_fused_epochs"] == 0, row
    assert row["loss"] <= tol and row["memories"] <= tol and row["moved"] > 1e-3, row
    assert row["finite"] == row["finite_ref"] == [True, True, False], row
    assert row["failed_epoch"] == row["failed_epoch_ref"] == [-1, -1, 0], row
    assert row["step_loss"] <= tol and row["step_grad"] <= tol, row
    assert row["step_bad"] == [not ok for ok in row["step_ok_ref"]] == [False, False, True], row


# The float32 case is the original network at temperatures 3 and 5 (b_out = 1/27, 1/125), not the
# simulator's 0.5 and 0.8 (b_out = 8, 1.95): with D = 30 inputs those saturate tanh, so that many memories'
# gradients (1e-7 to 1e-5 in float64, 1 - C**2 below float32's resolution) are float32 rounding noise in
# either path, and the max-scaled step turns that noise into full steps. Measured on this problem at
# T = (0.5, 0.8) (the CUDA simulator, NumPy reference; 3 epochs): fused vs reference float32 0.21 of
# max|memories| (0.15 on an H100), reference float32 vs float64 0.21-0.24, fused float32 vs float64 0.18,
# even fused vs reference in float64 0.046, and a random 1-ulp change of the float32 start moves the
# reference's result by 0.09-0.28: chaos, not a kernel error. At T = (3, 5) (same measures): fused vs
# reference float32 1.6e-7, either float32 path vs float64 1.6e-7 to 1.7e-7, the 1-ulp change up to 3e-7
# (ill-conditioned again from T <= 1.5: 5e-5 at (1.5, 3), 0.03 at (1, 2)); while b_out or the learning rate
# off by 1e-3 (relative) moves the result by 1.5e-4 or 4.7e-4: the 1e-4 tolerance sees such an error.
GPU_FIT_CASES = [("normalized", 30, "float64", (0.5, 0.8, 1.0)), ("original", 1, "float32", (3.0, 5.0, 1.0))]


@pytest.mark.gpu
@pytest.mark.parametrize("variant,m,dtype,temperatures", GPU_FIT_CASES)
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # b_in = 1e200 in float32
def test_cupy_fit_matches_reference_training(variant, m, dtype, temperatures, monkeypatch):
    """On a GPU: whole epochs (damlite.kernels.gpu_fit) against the reference loop, as in the simulator test; a
    float32 fit also against the reference loop in float64 (see GPU_FIT_CASES for the problem's conditioning)."""
    from damlite.backend import BackendUnavailableError, get_backend
    from damlite.training import train_memories

    try:
        xp, _ = get_backend("cupy", announce=False)
    except BackendUnavailableError as exc:
        pytest.skip(str(exc))
    mem, X, T, cols, b_in, b_out, lr = _classifier_problem(variant, dtype, B=120, K=16, D=30, M=10,
                                                           temperatures=temperatures)
    F = make_interaction("rectified_polynomial", 3)
    opts = dict(beta_in=b_in, beta_out=b_out, learning_rate=lr, momentum=0.6, epochs=3, batch_size=50,
                error_exponent=m, neurons=cols, clamp=slice(0, cols.start), random_state=5)
    runs = [("reference", dtype), ("auto", dtype)] + ([("reference", "float64")] if dtype != "float64" else [])
    out = {}
    for setting, dt in runs:
        monkeypatch.setenv("DAMLITE_GPU_KERNELS", setting)
        args = (xp.asarray(a.astype(dt)) for a in (mem, X, T))
        res = train_memories(*args, F, **opts)
        out[setting, dt] = (xp.asnumpy(res.memories).astype(np.float64), res.loss, res.finite, res.failed_epoch)
        assert setting == "reference" or gpu_kernels.whole_epochs(), gpu_kernels.status()
    (mr, lr_, fr, er), (mg, lg, fg, eg) = out["reference", dtype], out["auto", dtype]
    tol = max(FIT_TOLERANCE[dtype], 1e-10)  # cuBLAS may sum in another order than the batched products
    assert fr.tolist() == fg.tolist() == [True, True, False] and er.tolist() == eg.tolist() == [-1, -1, 0]
    assert np.max(np.abs(mr[:2] - mem[:2])) > 1e-3  # it trained
    assert np.max(np.abs(mg - mr)) <= tol * np.max(np.abs(mr))
    np.testing.assert_allclose(lg[:, :2], lr_[:, :2], rtol=tol)
    if ("reference", "float64") in out:
        m64, l64 = out["reference", "float64"][:2]
        scale = np.max(np.abs(m64[:2]))
        # the reference loop's own float32 error first: where it fails, the problem is ill-conditioned
        assert np.max(np.abs(mr[:2] - m64[:2])) <= tol * scale, "reference float32 vs float64: ill-conditioned"
        assert np.max(np.abs(mg[:2] - m64[:2])) <= tol * scale
        np.testing.assert_allclose(lg[:, :2], l64[:, :2], rtol=tol)
