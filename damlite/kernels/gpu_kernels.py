"""Fused GPU kernels (numba-cuda) for the learning rule on ±1 evaluated neurons.

The reference path of :func:`damlite.network.loss_and_gradient` builds
(G, b, M, K) tensors and passes over them a dozen times (F, F', differences,
sums, two contractions): on a GPU that is dozens of small kernel launches per
minibatch, and the MNIST block-epoch is bound by them. Here the same sums take
three launches and no (G, B, M, K) temporaries. With d = zeta^mu . xi (G, B, K),
u = b_in d and u' = b_in (d - w_i x_i) (w_i = 2 zeta^mu_i, x_i = xi_i = ±1):

1. one thread per (network g, row b, evaluated neuron i)::

       C = tanh(b_out x_i sum_mu [F(u) - F(u')]),  e = t - C,
       loss term e**(2m),  g_{b,i} = -2m e**(2m-1) (1 - C**2)

2. one thread per (g, b, mu):  r = F'(u) sum_i g_i x_i - sum_i g_i x_i F'(u')
   (the part of dL/dd that multiplies every neuron's state);
3. one thread per (g, chunk of rows, i, mu):  2 sum_b g_{b,i} F'(u')_{b,i,mu}
   (the evaluated neurons' own columns), partial sums over chunks added after.

Arguments and results as described in :func:`loss_and_gradient_bipolar`; the
network module does the two matrix products around it. Deterministic: every
sum has a fixed order (no atomics). The kernel code runs on NumPy arrays under
numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``), which is how the tests
check it without a GPU.

``DAMLITE_GPU_KERNELS``: ``auto`` (default: on CuPy arrays when numba-cuda
imports, training runs whole epochs in :mod:`damlite.kernels.gpu_fit`), ``minibatch``
(the three kernels in each call of the learning rule, the training loop of
:mod:`damlite.training` around them) or ``reference`` (never). If compiling or
launching them fails, damlite warns once and falls back: from whole epochs to
``minibatch``, from there to the reference path.
"""
from __future__ import annotations

import os
import warnings

from array_api_compat import is_cupy_namespace, is_numpy_namespace

from ..backend import GPU_KERNEL_MODES as _MODES
from ..backend import env_choice

__all__ = ["available", "fail", "kernel_args", "kernels", "launch", "loss_and_gradient_bipolar", "mode",
           "status", "usable", "whole_epochs"]

_THREADS = 128  # threads per block
ROWS_PER_CHUNK = 50  # rows summed per partial of the evaluated columns' gradient
_state = {"failed": None, "fit_failed": None, "kernels": None}


def mode() -> str:
    """The ``DAMLITE_GPU_KERNELS`` setting, checked: ``auto``, ``minibatch`` or ``reference``."""
    return env_choice("DAMLITE_GPU_KERNELS", _MODES, "auto")


def _import_cuda():
    """``numba.cuda``, imported once the NumPy it expects is in place.

    numba-cuda 0.30 registers an overload for ``np.row_stack`` at import, a name NumPy 2.5
    removed (it was an alias of ``np.vstack``); without it the import fails with AttributeError.
    """
    import numpy as np  # noqa: PLC0415

    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda  # noqa: PLC0415

    return cuda


def _build():
    """The kernels module, compiled kernel by kernel on first launch (numba-cuda)."""
    _import_cuda()
    from . import _cuda_kernels  # noqa: PLC0415

    return _cuda_kernels


def kernels():
    """The module of numba-cuda kernels (``damlite.kernels._cuda_kernels``), imported once."""
    if _state["kernels"] is None:
        _state["kernels"] = _build()
    return _state["kernels"]


def launch(kernel, total, *args):
    """``kernel`` on ``total`` threads, one per item, in blocks of 128."""
    blocks = max(1, -(-total // _THREADS))
    kernel[blocks, _THREADS](*args)


def kernel_args(*arrays):
    """Arrays as numba device arrays without a stream sync (CuPy and numba share the default stream).

    Under the simulator, NumPy arrays are wrapped as its device arrays, views without a copy
    (as ``as_cuda_array`` makes on a GPU; the simulator would copy plain arrays in and out, and
    refuses strided views).
    """
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray  # noqa: PLC0415

        return tuple(FakeCUDAArray(a) for a in arrays)
    cuda = _import_cuda()
    return tuple(cuda.as_cuda_array(a, sync=False) for a in arrays)


def fail(exc, whole_epochs=False, stacklevel=3):
    """Record that the kernels failed (``exc``) and warn, once.

    From now on the reference path runs; or, where only the whole-epoch path of
    :mod:`damlite.kernels.gpu_fit` failed (``whole_epochs``), the three kernels per minibatch.
    """
    key, instead = ("fit_failed", "the fused kernels per minibatch") if whole_epochs else ("failed", "the reference path")
    _state[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    what = "whole-epoch GPU path" if whole_epochs else "fused GPU kernels"
    warnings.warn(f"damlite: the {what} failed ({_state[key]}); using {instead}. "
                  "Set DAMLITE_GPU_KERNELS=reference to skip them.", RuntimeWarning, stacklevel=stacklevel + 1)


def status() -> str:
    """One line: which path the GPU learning rule takes, and why."""
    if mode() == "reference":
        return "reference (DAMLITE_GPU_KERNELS=reference)"
    if _state["failed"]:
        return f"reference (the fused kernels failed: {_state['failed']})"
    try:
        import numba  # noqa: PLC0415

        _import_cuda()
    except Exception as exc:  # noqa: BLE001 - any import failure means: no kernels
        return f"reference (numba-cuda does not import: {type(exc).__name__})"
    version = getattr(numba, "__version__", "?")
    try:
        import numba_cuda  # noqa: PLC0415

        version = f"{version}, numba-cuda {numba_cuda.__version__}"
    except Exception:  # noqa: BLE001
        pass
    if mode() == "minibatch":
        return f"numba-cuda fused kernels per minibatch (DAMLITE_GPU_KERNELS=minibatch; numba {version})"
    if _state["fit_failed"]:
        return f"numba-cuda fused kernels per minibatch (whole epochs failed: {_state['fit_failed']}; numba {version})"
    return f"numba-cuda fused kernels, whole epochs (numba {version})"


def available() -> bool:
    """True when the fused kernels may be tried (setting not ``reference``, numba-cuda imports, no earlier failure)."""
    return not status().startswith("reference")


def usable(xp) -> bool:
    """True when the learning rule may take these kernels on arrays of ``xp``: CuPy arrays (or NumPy arrays
    under numba's CUDA simulator, ``NUMBA_ENABLE_CUDASIM=1``, which is how the tests run the kernels)."""
    simulated = is_numpy_namespace(xp) and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    if not (is_cupy_namespace(xp) or simulated):
        return False
    return available()


def whole_epochs() -> bool:
    """True when a fit may run whole epochs in :mod:`damlite.kernels.gpu_fit` (``auto``, kernels available, no
    failure)."""
    return status().startswith("numba-cuda fused kernels, whole epochs")


def loss_and_gradient_bipolar(d, zeta_t, xs, targets, b_in, b_out, code, two_m, gradient):
    """Fused loss (G,), r (G, B, K) and the evaluated columns' part (G, M, K), or None.

    ``d`` (G, B, K) similarities; ``zeta_t`` (G, M, K) the evaluated neurons' memory
    entries (w = 2 zeta in the formulas); ``xs``/``targets`` (G, B, M);
    ``b_in``/``b_out`` (G,); ``code`` from
    :func:`damlite.kernels.cpu_kernels.interaction_code`; all arrays of one namespace
    (CuPy on a GPU, NumPy under the simulator). Returns
    None, after one warning, when the kernels cannot run; the caller then takes
    the reference path.
    """
    from ..backend import array_namespace  # noqa: PLC0415

    if not available():
        return None
    xp = array_namespace(d)
    G, B, K = d.shape
    M = zeta_t.shape[1]
    kind, n, slope = code
    dtype = d.dtype
    d = xp.asarray(d)
    zeta_t = xp.reshape(xp.asarray(zeta_t), (G, M, K)) + xp.zeros((G, M, K), dtype=dtype)  # contiguous copy
    xs = xp.broadcast_to(xs, (G, B, M)) + xp.zeros((G, B, M), dtype=dtype)
    targets = xp.broadcast_to(targets, (G, B, M)) + xp.zeros((G, B, M), dtype=dtype)
    b_in = xp.reshape(b_in, (G,)) + xp.zeros((G,), dtype=dtype)
    b_out = xp.reshape(b_out, (G,)) + xp.zeros((G,), dtype=dtype)
    loss_terms = xp.empty((G, B, M), dtype=dtype)
    gs = xp.empty((G, B, M), dtype=dtype)
    try:
        k = kernels()
        args = kernel_args(d, zeta_t, xs, targets, b_in, b_out, loss_terms, gs)
        dd, zz, xx, tt, bi, bo, lt, gg = args
        launch(k.outputs, G * B * M, dd, zz, xx, tt, bi, bo, kind, n, slope, two_m, lt, gg)
        loss = xp.sum(xp.reshape(loss_terms, (G, -1)), axis=1)
        if not gradient:
            return loss, None, None
        chunks = -(-B // ROWS_PER_CHUNK)
        r_all = xp.empty((G, B, K), dtype=dtype)
        part = xp.empty((G, chunks, M, K), dtype=dtype)
        rr, pp = kernel_args(r_all, part)
        launch(k.rows, G * B * K, dd, zz, xx, gg, bi, kind, n, slope, rr)
        launch(k.columns, G * chunks * M * K, dd, zz, xx, gg, bi, kind, n, slope, ROWS_PER_CHUNK, pp)
        return loss, r_all, xp.sum(part, axis=1)
    except Exception as exc:  # noqa: BLE001 - a broken toolchain must not stop a run: fall back, once, loudly
        fail(exc)
        return None
