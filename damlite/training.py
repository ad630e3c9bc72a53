"""Gradient descent on the memories of G networks at once (Krotov & Hopfield's optimiser).

One epoch visits the training items in minibatches. For each minibatch::

    v    <- momentum * v - dL/dzeta                     (velocity)
    step <- v / max_i |v_{mu,i}|  (per memory, floor 1e-30 or the dtype's tiny) if normalize_step else v
    zeta <- clip(zeta + lr * step, -1, 1)               (clamped neurons only)

and after each epoch ``lr <- lr * lr_decay``. Learning rate, temperature and
seed may differ between the G networks; the minibatch order is shared by them
(one shuffle per epoch from ``random_state``: common random numbers across a grid).
A network whose loss or gradient stops being finite is frozen and reported.
On NumPy float32/float64 arrays with the numba kernels on, each epoch with minibatches
shared by the networks runs as :meth:`damlite.kernels.cpu_fit.CpuFit.epoch` (two threaded steps per
minibatch, the memories updated in place), other fits take the fused optimiser step
(:func:`damlite.kernels.cpu_kernels.optimizer_step`); on CuPy arrays with the fused GPU kernels on,
each epoch runs as :meth:`damlite.kernels.gpu_fit.FusedFit.epoch` (eight launches per minibatch,
no host synchronisation within the epoch).
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

import numpy as np
from array_api_compat import is_numpy_namespace
from tqdm import tqdm

from .backend import array_namespace, itemsize_of, to_numpy
from .network import DEFAULT_MEMORY_BUDGET, loss_and_gradient, per_network_scalar, quiet_numpy

__all__ = ["TrainingResult", "initial_memories", "progress_bar", "train_memories"]

_STEP_FLOOR = 1e-30


@dataclass
class TrainingResult:
    """What :func:`train_memories` returns."""

    memories: object  # (G, K, N) array in the input's namespace
    loss: np.ndarray  # (epochs, G) loss summed over each epoch's minibatches
    finite: np.ndarray  # (G,) False where the network's numbers overflowed
    failed_epoch: np.ndarray  # (G,) first epoch with non-finite numbers, -1 if none
    learning_rate: np.ndarray  # (epochs, G) learning rate used in each epoch
    seconds: float = 0.0


def _kernel():
    """The Jupyter kernel (ipykernel) this code runs in, or None outside one."""
    if "ipykernel" not in sys.modules:
        return None
    try:
        from IPython import get_ipython  # noqa: PLC0415
    except ImportError:
        return None
    return getattr(get_ipython(), "kernel", None)


def _frontend_takes_input(kernel) -> bool:
    """True when the cell running in ``kernel`` came from a frontend that can answer ``input()``: a person at
    JupyterLab, Jupyter Notebook, VS Code or Colab. Notebooks executed unattended (``jupyter nbconvert
    --execute``, Jupyter Book, papermill: nbclient) send their cells with ``allow_stdin`` false."""
    try:
        parent = kernel.get_parent()  # ipykernel >= 6: the request of the cell running now
        return bool(parent.get("content", {}).get("allow_stdin", False))
    except Exception:  # noqa: BLE001 - an older or another kernel: its own record of the request
        return bool(getattr(kernel, "_allow_stdin", False))


def progress_bar(iterable=None, *, progress=True, **kwargs):
    """A tqdm progress bar over ``iterable`` where ``progress`` is true and someone can watch it.

    In a Jupyter kernel the bar shows only for a cell a person runs (its frontend can answer
    ``input()``): as tqdm's notebook widget, one line updated in place, where ipywidgets is
    installed (not in Qt consoles and Spyder, as with tqdm.auto), else as a text bar (one line,
    redrawn). A notebook executed unattended (``jupyter nbconvert --execute``, a Jupyter Book
    build, papermill) gets no bar, so its saved outputs hold none. Outside a kernel: tqdm's text bar on stderr (none where there is no stderr).
    ``kwargs`` go to tqdm.
    """
    kernel = _kernel() if progress else None
    if kernel is not None:
        if not _frontend_takes_input(kernel):
            progress = False
        else:
            try:
                from tqdm.notebook import IProgress  # noqa: PLC0415 - None without ipywidgets
                from tqdm.notebook import tqdm as notebook_tqdm  # noqa: PLC0415
            except ImportError:
                IProgress = None  # noqa: N806
            console = any(k == "QT_API" or k.startswith("SPYDER") for k in os.environ)  # no widgets: as tqdm.auto
            if IProgress is not None and not console:
                return notebook_tqdm(iterable, **kwargs)
    return tqdm(iterable, disable=not progress or sys.stderr is None, **kwargs)


def _fused_step(xp, memories):
    """damlite.kernels.cpu_kernels when its optimiser step can update these NumPy memories in place, else None."""
    if not (is_numpy_namespace(xp) and memories.dtype in (np.float32, np.float64)):
        return None
    from .kernels import cpu_kernels  # noqa: PLC0415

    return cpu_kernels if cpu_kernels.available() else None


def _cpu_fit(xp, memories, *args):
    """damlite.kernels.cpu_fit's epochs when this fit can take them (NumPy, numba kernels on, shared ±1 minibatches),
    else None."""
    from .kernels.cpu_fit import CpuFit  # noqa: PLC0415

    return CpuFit.create(xp, memories, *args)


def _gpu_fit(xp, memories, *args):
    """damlite.kernels.gpu_fit's fused epochs when this fit can take them (CuPy, kernels on, ±1 evaluated neurons),
    else None."""
    from .kernels import gpu_kernels  # noqa: PLC0415

    if not gpu_kernels.usable(xp):
        return None
    from .kernels.gpu_fit import FusedFit  # noqa: PLC0415

    return FusedFit.create(xp, memories, *args)


def initial_memories(rows, n_memories, init="patterns", init_mean=0.0, init_std=0.1, random_state=None):
    """K = ``n_memories`` initial memories (K, N), clipped to [-1, 1], from the training ``rows`` (B, N).

    ``init="patterns"``: ``init_std`` times a row plus N(0, init_std^2) noise, the rows taken in a
    shuffled round robin (every row gets memories of its own when K >= B); ``"normal"``:
    N(init_mean, init_std^2) draws; ``"uniform"``: U[0, 1) draws.
    """
    rng = np.random.default_rng(random_state) if not isinstance(random_state, np.random.Generator) else random_state
    rows = np.asarray(rows, dtype=np.float64)
    K, (B, N) = n_memories, rows.shape
    if init == "patterns":
        order = np.concatenate([rng.permutation(B) for _ in range(K // B + 1)])[:K]
        host = init_std * rows[order] + rng.normal(0.0, init_std, size=(K, N))
    elif init == "uniform":
        host = rng.random((K, N))
    else:
        host = rng.normal(init_mean, init_std, size=(K, N))
    return np.clip(host, -1.0, 1.0)


def _step_floor(step_floor, dtype):
    """The normalised step's floor: ``step_floor``, checked, or the default for ``dtype``."""
    if step_floor is None:
        return _STEP_FLOOR if itemsize_of(dtype) > 2 else 2.0**-14
    tiny = {2: 2.0**-14, 4: 2.0**-126}.get(itemsize_of(dtype), 2.0**-1022)
    if isinstance(step_floor, bool) or not isinstance(step_floor, (int, float)) or not tiny <= step_floor < 1:
        raise ValueError(f"step_floor must be a number in [{tiny:.3g}, 1) (a normal number of the memories' "
                         f"dtype), got {step_floor!r}")
    return float(step_floor)


def train_memories(
    memories,
    probes,
    targets,
    interaction,
    *,
    beta_in=1.0,
    beta_out=1.0,
    learning_rate=0.1,
    lr_decay=1.0,
    momentum=0.0,
    epochs=100,
    batch_size=None,
    error_exponent=1,
    neurons=slice(None),
    normalize_step=True,
    clamp=slice(None),
    random_state=None,
    progress=False,
    callback=None,
    memory_budget=DEFAULT_MEMORY_BUDGET,
    step_floor=None,
):
    """Train G networks' memories (G, K, N) on ``probes`` (B, N) against ``targets``.

    ``targets`` holds the wanted values of the ``neurons`` evaluated (B, M);
    ``clamp`` is the slice of neurons whose memory entries are kept in [-1, 1]
    (``None`` clamps nothing). ``learning_rate`` and the betas are floats or
    length-G sequences. ``callback(epoch, memories, loss)`` runs after each epoch;
    returning True stops training. ``progress``: a bar over the epochs (:func:`progress_bar`: none
    in a notebook executed unattended). ``step_floor``: the smallest divisor of the normalised step
    (``max_i |v_i|`` below it divides by it instead; None: 1e-30 as in Krotov's and the paper
    author's code, or float16's smallest normal number); a positive number a normal number of the
    memories' dtype. Returns a :class:`TrainingResult`.
    """
    xp = array_namespace(memories, probes)
    G, K, N = memories.shape
    B = probes.shape[-2]
    dtype = memories.dtype
    lr = np.broadcast_to(np.asarray(learning_rate, dtype=np.float64).reshape(-1), (G,)).copy()
    batch = B if batch_size is None else int(batch_size)
    rng = np.random.default_rng(random_state)
    memories = xp.asarray(memories, copy=True)
    velocity = xp.zeros_like(memories)
    # 1e-30, or the dtype's smallest normal number where 1e-30 is not representable (float16)
    floor = _step_floor(step_floor, dtype)
    fused = _fused_step(xp, memories)  # numba: the whole step in one pass, in place
    return _train(memories, velocity, probes, targets, interaction, xp, fused, lr, batch, rng, floor, epochs,
                  beta_in=beta_in, beta_out=beta_out, lr_decay=lr_decay, momentum=momentum,
                  error_exponent=error_exponent, neurons=neurons, normalize_step=normalize_step, clamp=clamp,
                  progress=progress, callback=callback, memory_budget=memory_budget)


def _train(memories, velocity, probes, targets, interaction, xp, fused, lr, batch, rng, floor, epochs, *, beta_in,
           beta_out, lr_decay, momentum, error_exponent, neurons, normalize_step, clamp, progress, callback,
           memory_budget):
    """:func:`train_memories`'s epochs (its arguments checked and its state set up)."""
    G, K, N = memories.shape
    B = probes.shape[-2]
    device = getattr(memories, "device", None)
    dtype = memories.dtype
    finite = xp.ones((G,), dtype=xp.bool, device=device)
    failed_epoch = np.full(G, -1)
    losses = np.zeros((epochs, G))
    lr_trace = np.zeros((epochs, G))
    # whole epochs in a few fused calls per minibatch: numba on NumPy (cpu_fit), numba-cuda on CuPy (gpu_fit)
    whole = (_cpu_fit(xp, memories, velocity, probes, targets, interaction, neurons, clamp, beta_in, beta_out,
                      error_exponent, batch, momentum, normalize_step, floor) if fused else
             _gpu_fit(xp, memories, velocity, probes, targets, interaction, neurons, clamp, beta_in, beta_out,
                      error_exponent, batch, momentum, normalize_step, floor, memory_budget))
    start = time.perf_counter()
    bar = progress_bar(range(epochs), progress=progress, desc="training", unit="epoch", leave=True)
    with quiet_numpy():
        for epoch in bar:
            lr_dev = per_network_scalar(lr, xp, G, dtype, device=device)
            order = rng.permutation(B) if batch < B else None
            epoch_loss = xp.zeros((G,), dtype=dtype, device=device)
            epoch_finite = xp.ones((G,), dtype=xp.bool, device=device)
            minibatches = range(0, B, batch)
            if whole is not None:  # the whole epoch in fused calls; None: they failed (warned), loop below
                done = whole.epoch(order, lr, finite)
                if done is None:
                    whole = None
                    fused = _fused_step(xp, memories)  # None when the CPU kernels are now off
                else:
                    (epoch_loss, epoch_finite), minibatches = done, ()
            for start_row in minibatches:
                if order is None:
                    xb, tb = probes, targets
                else:
                    idx = xp.asarray(order[start_row:start_row + batch], device=device)
                    xb, tb = xp.take(probes, idx, axis=-2), xp.take(targets, idx, axis=-2)
                loss, grad, ok = loss_and_gradient(
                    memories, xb, tb, interaction, beta_in, beta_out,
                    error_exponent=error_exponent, neurons=neurons, memory_budget=memory_budget,
                )
                ok = ok & finite
                epoch_finite = epoch_finite & ok
                epoch_loss = epoch_loss + xp.where(ok, loss, xp.zeros_like(loss))
                if fused and fused.optimizer_step(memories, velocity, grad, ok, lr, momentum, normalize_step, floor,
                                                  clamp):
                    continue
                grad = xp.where(ok[:, None, None], grad, xp.zeros_like(grad))
                velocity = momentum * velocity - grad
                step = velocity
                if normalize_step:
                    norm = xp.max(xp.abs(velocity), axis=2, keepdims=True)
                    step = velocity / xp.where(norm > floor, norm, xp.full_like(norm, floor))
                memories = memories + lr_dev * step
                if clamp is not None:
                    memories[:, :, clamp] = xp.clip(memories[:, :, clamp], -1.0, 1.0)
            newly_failed = np.asarray(to_numpy(finite & ~epoch_finite))
            failed_epoch[newly_failed & (failed_epoch < 0)] = epoch
            finite = finite & epoch_finite
            losses[epoch] = to_numpy(epoch_loss)
            lr_trace[epoch] = lr
            lr = lr * lr_decay
            if not bar.disable:
                bar.set_postfix(loss=f"{np.nanmedian(losses[epoch]):.4g}")
            in_place = fused or whole is not None
            if callback is not None and callback(epoch, xp.asarray(memories, copy=True) if in_place else memories,
                                                 losses[epoch]):
                losses, lr_trace = losses[: epoch + 1], lr_trace[: epoch + 1]
                break
    bar.close()
    return TrainingResult(
        memories=memories,
        loss=losses,
        finite=np.asarray(to_numpy(finite)),
        failed_epoch=failed_epoch,
        learning_rate=lr_trace,
        seconds=time.perf_counter() - start,
    )
