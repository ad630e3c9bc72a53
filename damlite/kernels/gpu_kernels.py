"""Fused GPU kernels (numba-cuda) for the learning rule on ±1 evaluated neurons.

The reference path of :func:`damlite.network.loss_and_gradient` builds
(G, b, M, K) tensors and passes over them a dozen times (F, F', differences,
sums, two contractions): on a GPU that is dozens of small kernel launches per
minibatch, and the MNIST block-epoch is bound by them. Here the same sums take
two launches (or three) and no (G, B, M, K) temporaries. With d = zeta^mu . xi (G, B, K),
u = b_in d and u' = b_in (d - w_i x_i) (w_i = 2 zeta^mu_i, x_i = xi_i = ±1), the
three-pass kernels compute:

1. one thread per (network g, row b, evaluated neuron i)::

       C = tanh(b_out x_i sum_mu [F(u) - F(u')]),  e = t - C,
       loss term e**(2m),  g_{b,i} = -2m e**(2m-1) (1 - C**2)

2. one thread per (g, b, mu):  r = F'(u) sum_i g_i x_i - sum_i g_i x_i F'(u')
   (the part of dL/dd that multiplies every neuron's state);
3. one thread per (g, chunk of rows, i, mu):  2 sum_b g_{b,i} F'(u')_{b,i,mu}
   (the evaluated neurons' own columns), partial sums over chunks added after.

Each of the three passes evaluates F or F' on all G B M K cells (the first twice), with
reads of ``d`` and ``zeta`` that the threads of a warp do not share in order. The row-wise
kernels (``damlite.kernels._cuda_kernels.row_wise_kernels``, the default for M <=
``MAX_COLUMNS`` evaluated neurons) produce the same three results in two passes: ``outputs``
with one warp per row (g, b) and its 32 lanes along the memories, then ``gradient_parts``
with one thread per (g, chunk of rows, mu) writing r and the columns' partial sums at once;
one evaluation of F or F' per cell and pass, compiled for the interaction, with every read
of ``d`` coalesced. r and the columns' sums are the three-pass kernels' numbers; the loss
terms and g differ from them in rounding only (the sum over mu runs in another order).

Arguments and results as described in :func:`loss_and_gradient_bipolar`; the
network module does the two matrix products around it. Deterministic: every
sum has a fixed order (no atomics). The kernel code runs on NumPy arrays under
numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``), which is how the tests
check it without a GPU.

``DAMLITE_GPU_KERNELS``: ``auto`` (default: on CuPy arrays when numba-cuda
imports, training runs whole epochs in :mod:`damlite.kernels.gpu_fit`, with the row-wise
kernels), ``minibatch`` (the kernels in each call of the learning rule, the training loop of
:mod:`damlite.training` around them), ``threepass`` (as ``auto``, with the three-pass
kernels: kept for comparison) or ``reference`` (never). If compiling or
launching them fails, damlite warns once and falls back: from whole epochs to
``minibatch``, from there to the reference path.
"""
from __future__ import annotations

import os
import warnings

from array_api_compat import is_cupy_namespace, is_numpy_namespace

from ..backend import GPU_KERNEL_MODES as _MODES
from ..backend import env_choice

__all__ = ["available", "fail", "kernel_args", "kernels", "launch", "launch_outputs", "loss_and_gradient_bipolar",
           "mode", "row_wise", "row_wise_kernels", "status", "usable", "whole_epochs"]

_THREADS = 128  # threads per block
ROWS_PER_CHUNK = 50  # rows summed per partial of the evaluated columns' gradient
_state = {"failed": None, "fit_failed": None, "row_wise_failed": None, "kernels": None}


def mode() -> str:
    """The ``DAMLITE_GPU_KERNELS`` setting, checked: ``auto``, ``minibatch``, ``threepass`` or ``reference``."""
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


def fail(exc, whole_epochs=False, stacklevel=3, row_wise=False):
    """Record that the kernels failed (``exc``) and warn, once.

    From now on the reference path runs; or, where only the whole-epoch path of
    :mod:`damlite.kernels.gpu_fit` failed (``whole_epochs``), the fused kernels per minibatch;
    or, where the row-wise loss kernels failed (``row_wise``), the three-pass ones.
    """
    skip = "reference"
    if row_wise:
        key, instead, what, skip = "row_wise_failed", "the three-pass loss kernels", "row-wise GPU loss kernels", \
            "threepass"
    elif whole_epochs:
        key, instead, what = "fit_failed", "the fused kernels per minibatch", "whole-epoch GPU path"
    else:
        key, instead, what = "failed", "the reference path", "fused GPU kernels"
    _state[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    warnings.warn(f"damlite: the {what} failed ({_state[key]}); using {instead}. "
                  f"Set DAMLITE_GPU_KERNELS={skip} to skip them.", RuntimeWarning, stacklevel=stacklevel + 1)


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
    loss = ("three-pass loss kernels, DAMLITE_GPU_KERNELS=threepass" if mode() == "threepass" else
            f"three-pass loss kernels, the row-wise ones failed: {_state.get('row_wise_failed')}"
            if _state.get("row_wise_failed") else "row-wise loss kernels")
    if mode() == "minibatch":
        return f"numba-cuda fused kernels per minibatch (DAMLITE_GPU_KERNELS=minibatch; {loss}; numba {version})"
    if _state["fit_failed"]:
        return (f"numba-cuda fused kernels per minibatch (whole epochs failed: {_state['fit_failed']}; {loss}; "
                f"numba {version})")
    return f"numba-cuda fused kernels, whole epochs ({loss}; numba {version})"


def available() -> bool:
    """True when the fused kernels may be tried (setting not ``reference``, numba-cuda imports, no earlier failure)."""
    return not status().startswith("reference")


def usable(xp) -> bool:
    """True when the learning rule may take these kernels on arrays of ``xp``: CuPy arrays (or NumPy arrays
    under numba's CUDA simulator, ``NUMBA_ENABLE_CUDASIM=1``, which is how the tests run the kernels)."""
    simulated = is_numpy_namespace(xp) and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    if is_cupy_namespace(xp):
        from ..backend import pin_full_float32  # noqa: PLC0415

        pin_full_float32()  # a fit on CuPy arrays: its products at full float32 precision, whatever CUPY_TF32 says
    elif not simulated:
        return False
    return available()


def whole_epochs() -> bool:
    """True when a fit may run whole epochs in :mod:`damlite.kernels.gpu_fit` (``auto`` or ``threepass``, kernels
    available, no failure)."""
    return status().startswith("numba-cuda fused kernels, whole epochs")


def row_wise(columns) -> bool:
    """True when the loss kernels for ``columns`` (M) evaluated neurons are the row-wise ones: the setting is
    not ``threepass``, they have not failed, and 1 <= M <= ``MAX_COLUMNS`` of ``damlite.kernels._cuda_kernels``
    (imports numba.cuda)."""
    return mode() != "threepass" and not _state.get("row_wise_failed") and 1 <= columns <= kernels().MAX_COLUMNS


def row_wise_kernels(code, columns, dtype):
    """``(outputs, gradient_parts)`` of ``damlite.kernels._cuda_kernels.row_wise_kernels`` for ``code`` =
    (kind, n, slope), M = ``columns`` and arrays of ``dtype`` (a NumPy dtype)."""
    from numba import from_dtype  # noqa: PLC0415

    kind, n, _ = code
    return kernels().row_wise_kernels(kind, n, columns, from_dtype(dtype))


def launch_outputs(kernel, G, B, *args):
    """The row-wise ``outputs`` on G B rows: one warp per row, ``ROW_WARPS`` rows per block."""
    warps = kernels().ROW_WARPS
    kernel[max(1, -(-(G * B) // warps)), 32 * warps](*args)


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
    dtype = d.dtype
    arrays = (xp.asarray(d),
              xp.reshape(xp.asarray(zeta_t), (G, M, K)) + xp.zeros((G, M, K), dtype=dtype),  # contiguous copy
              xp.broadcast_to(xs, (G, B, M)) + xp.zeros((G, B, M), dtype=dtype),
              xp.broadcast_to(targets, (G, B, M)) + xp.zeros((G, B, M), dtype=dtype),
              xp.reshape(b_in, (G,)) + xp.zeros((G,), dtype=dtype),
              xp.reshape(b_out, (G,)) + xp.zeros((G,), dtype=dtype))
    fast = False
    try:  # a broken toolchain must not stop a run: fall back, once, loudly
        fast = row_wise(M)
        return _loss_launches(xp, fast, arrays, code, two_m, gradient)
    except Exception as exc:  # noqa: BLE001
        fail(exc, row_wise=fast)
        if not fast:
            return None
    try:  # the three-pass kernels, from now on
        return _loss_launches(xp, False, arrays, code, two_m, gradient)
    except Exception as exc:  # noqa: BLE001
        fail(exc)
        return None


def _loss_launches(xp, fast, arrays, code, two_m, gradient):
    """The launches of :func:`loss_and_gradient_bipolar` on its contiguous ``arrays``: the row-wise kernels
    (``fast``) or the three-pass ones."""
    d, zeta_t, xs, targets, b_in, b_out = arrays
    G, B, K = d.shape
    M = zeta_t.shape[1]
    kind, n, slope = code
    dtype = d.dtype
    k = kernels()
    if fast:
        zeta_t = zeta_t + zeta_t  # w = 2 zeta (exact), as the row-wise kernels take it
    loss_terms = xp.empty((G, B, M), dtype=dtype)
    gs = xp.empty((G, B, M), dtype=dtype)
    dd, zz, xx, tt, bi, bo, lt, gg = kernel_args(d, zeta_t, xs, targets, b_in, b_out, loss_terms, gs)
    if fast:
        outputs, parts = row_wise_kernels(code, M, dtype)
        launch_outputs(outputs, G, B, dd, zz, xx, tt, bi, bo, slope, two_m, lt, gg)
    else:
        launch(k.outputs, G * B * M, dd, zz, xx, tt, bi, bo, kind, n, slope, two_m, lt, gg)
    loss = xp.sum(xp.reshape(loss_terms, (G, -1)), axis=1)
    if not gradient:
        return loss, None, None
    chunks = -(-B // ROWS_PER_CHUNK)
    r_all = xp.empty((G, B, K), dtype=dtype)
    part = xp.empty((G, chunks, M, K), dtype=dtype)
    rr, pp = kernel_args(r_all, part)
    if fast:
        launch(parts, G * chunks * K, dd, zz, xx, gg, bi, slope, ROWS_PER_CHUNK, rr, pp)
    else:
        launch(k.rows, G * B * K, dd, zz, xx, gg, bi, kind, n, slope, rr)
        launch(k.columns, G * chunks * M * K, dd, zz, xx, gg, bi, kind, n, slope, ROWS_PER_CHUNK, pp)
    return loss, r_all, xp.sum(part, axis=1)
