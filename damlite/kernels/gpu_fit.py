"""A training fit's minibatches on the GPU in seven launches each, with no host synchronisation.

:func:`damlite.training.train_memories` hands an epoch to :meth:`~damlite.kernels.gpu_fit.FusedFit.epoch` when
the memories are CuPy arrays, the fused kernels are on (:mod:`damlite.kernels.gpu_kernels`),
the minibatches are shared by the G networks and the evaluated neurons are ±1 in every
probe (checked once per fit). Per minibatch of b rows, on buffers allocated once per fit
(and their numba views made once per fit)::

    gather   xb, tb <- probes[order[rows]], targets[order[rows]]; w <- 2 zeta[:, :, cols]
    GEMM     d (b, G K) = xb zeta^T                                   (one cuBLAS call)
    outputs  loss terms and g = dL/dh per (g, b, i), a warp per row   (numba-cuda)
    gradient_parts  r = F'(u) sum_i g x_i - sum_i g x_i F'(u') per (g, b, mu), and the
             evaluated columns' own part per (g, chunk, i, mu), in one pass
    GEMM     grad (G K, N) = r^T xb                                   (one cuBLAS call)
    finish   grad <- b_out b_in (grad + columns), its finiteness, the loss per network
    step     v <- momentum v - grad; zeta <- clip(zeta + lr v / max|v|)   (as in damlite.training)

These are the row-wise loss kernels (see :mod:`damlite.kernels.gpu_kernels`); with
``DAMLITE_GPU_KERNELS=threepass``, or more than ``MAX_COLUMNS`` evaluated neurons, the
three-pass ``outputs``, ``rows`` and ``columns`` run instead (eight launches).

The epoch's loss and finiteness stay on the device; the caller reads them once per
epoch. Results equal the reference path's up to rounding (the sums run in another
order); the tests compare them under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``).
``DAMLITE_GPU_KERNELS=minibatch`` (or ``reference``) turns this path off; a launch that
fails restores the epoch's start, warns once and leaves the rest of the fit to the loop
of :mod:`damlite.training` (see :func:`damlite.kernels.gpu_kernels.fail`).
"""
from __future__ import annotations

import numpy as np

from array_api_compat import is_cupy_namespace

from . import gpu_kernels

__all__ = ["FusedFit"]


def _module(xp):
    """The array library itself (CuPy, or NumPy under the simulator): ``matmul`` with ``out=``, buffers."""
    if is_cupy_namespace(xp):
        import cupy  # noqa: PLC0415

        return cupy
    return np


class FusedFit:
    """Buffers, numba views and launches of one fit's minibatches (see the module doc).

    Build with :meth:`create`, which returns None where the fit cannot take this path.
    ``memories`` and ``velocity`` are updated in place. ``row_threads``: threads per block of
    ``finish`` and ``step`` (a power of two up to ``ROW_THREADS``; None: that maximum).
    """

    row_threads = None

    def __init__(self, xp, memories, velocity, probes, targets, cols, clamp, b_in, b_out, code, two_m, batch,
                 momentum, normalize, floor):
        self.xp, self.lib = xp, _module(xp)
        self.memories, self.velocity = memories, velocity
        G, K, N = memories.shape
        B, M = targets.shape
        self.shape, self.batch, self.code, self.two_m = (G, K, N, M, B), batch, code, two_m
        self.normalize, self.cols = bool(normalize), cols
        dtype = memories.dtype
        self.consts = (np.asarray(momentum, dtype=dtype)[()], np.asarray(floor, dtype=dtype)[()])
        lib = self.lib
        colmap = np.full(N, -1, dtype=np.int64)
        colmap[np.arange(N)[cols]] = np.arange(M)
        clampmask = np.zeros(N, dtype=np.int8)
        if clamp is not None:
            clampmask[np.arange(N)[clamp]] = 1
        dev = dict(b_in=b_in, b_out=b_out, scale=b_out * b_in)
        buf = {name: lib.ascontiguousarray(lib.reshape(v, (G,))) for name, v in dev.items()}
        buf.update(
            probes=lib.ascontiguousarray(probes), targets=lib.ascontiguousarray(targets),
            colmap=lib.asarray(colmap), clampmask=lib.asarray(clampmask),
            order=lib.arange(B, dtype=np.int64), lr=lib.zeros(G, dtype=dtype),
            xb=lib.empty((batch, N), dtype=dtype), tb=lib.empty((batch, M), dtype=dtype),
            d=lib.empty((batch, G * K), dtype=dtype), r=lib.empty((batch, G * K), dtype=dtype),
            loss_terms=lib.empty((G, batch, M), dtype=dtype), gs=lib.empty((G, batch, M), dtype=dtype),
            part=lib.empty((G, -(-batch // gpu_kernels.ROWS_PER_CHUNK), M, K), dtype=dtype),
            grad=lib.empty((G, K, N), dtype=dtype), norms=lib.empty((G, K), dtype=dtype),
            w=lib.empty((G, M, K), dtype=dtype),
            loss=lib.zeros(G, dtype=dtype), bad=lib.zeros(G, dtype=np.int8), finite=lib.ones(G, dtype=np.int8),
            epoch_loss=lib.zeros(G, dtype=dtype), epoch_ok=lib.ones(G, dtype=np.int8))
        self.buf = buf
        self.zeta_t = lib.transpose(memories[:, :, cols], (0, 2, 1))  # a view: (G, M, K)
        self.mem_flat = lib.reshape(memories, (G * K, N))
        self.grad_flat = lib.reshape(buf["grad"], (G * K, N))
        names = ("b_in", "b_out", "scale", "probes", "targets", "colmap", "clampmask", "order", "lr", "grad",
                 "norms", "loss", "bad", "finite", "epoch_loss", "epoch_ok", "w")
        self.views = dict(zip(names, gpu_kernels.kernel_args(*(buf[n] for n in names))))
        self.views["memories"], self.views["velocity"], self.views["zeta_t"] = gpu_kernels.kernel_args(
            memories, velocity, self.zeta_t)
        self._by_rows = {}
        self.k = gpu_kernels.kernels()
        self.row_wise = gpu_kernels.row_wise(M)
        self.rw = gpu_kernels.row_wise_kernels(code, M, dtype) if self.row_wise else None

    @classmethod
    def create(cls, xp, memories, velocity, probes, targets, interaction, neurons, clamp, beta_in, beta_out,
               error_exponent, batch, momentum, normalize, floor, memory_budget):
        """A :class:`~damlite.kernels.gpu_fit.FusedFit`, or None: not CuPy (nor the simulator), whole epochs off (see
        :func:`damlite.kernels.gpu_kernels.whole_epochs`), probes per network,
        evaluated neurons not a slice or not ±1, a non-built-in interaction, or buffers over ``memory_budget``.

        The ±1 check is the fit's one host synchronisation before training.
        """
        from ..backend import _all_bipolar, itemsize_of, neuron_index, per_network_scalar  # noqa: PLC0415
        from .cpu_kernels import interaction_code  # noqa: PLC0415

        if not (gpu_kernels.usable(xp) and gpu_kernels.whole_epochs()) or memories.dtype not in (np.float32,
                                                                                               np.float64):
            return None
        if probes.ndim != 2 or targets.ndim != 2 or not (memories.flags.c_contiguous and
                                                           velocity.flags.c_contiguous):
            return None
        G, K, N = memories.shape
        cols, M = neuron_index(neurons, N)
        code = interaction_code(interaction)
        b = min(batch, probes.shape[0])
        if not isinstance(cols, slice) or code is None or targets.shape != (probes.shape[0], M):
            return None
        chunks = -(-b // gpu_kernels.ROWS_PER_CHUNK)
        if ((2 * G * b * K + G * K * N + (chunks + 1) * G * M * K + 2 * G * b * M) * itemsize_of(memories.dtype)
                > memory_budget):
            return None  # the buffers of d, r, the gradient, the columns' partial sums and w, the outputs
        if not _all_bipolar(probes[:, cols]):
            return None
        dev = getattr(memories, "device", None)
        b_in = per_network_scalar(beta_in, xp, G, memories.dtype, device=dev)
        b_out = per_network_scalar(beta_out, xp, G, memories.dtype, device=dev)
        try:
            return cls(xp, memories, velocity, probes, targets, cols, clamp, b_in, b_out, code,
                       2 * int(error_exponent), b, momentum, normalize, floor)
        except Exception as exc:  # noqa: BLE001 - no kernels: the caller's loop runs instead
            gpu_kernels.fail(exc, whole_epochs=True)
            return None

    def _rows(self, b):
        """The numba views of the per-minibatch buffers for minibatches of ``b`` rows (cached)."""
        if b not in self._by_rows:
            lib, buf = self.lib, self.buf
            G, K, N, M, _ = self.shape
            xb, tb = buf["xb"][:b], buf["tb"][:b]
            d3 = lib.transpose(lib.reshape(buf["d"][:b], (b, G, K)), (1, 0, 2))  # (G, b, K) view
            r3 = lib.transpose(lib.reshape(buf["r"][:b], (b, G, K)), (1, 0, 2))
            xs = lib.reshape(xb, (1, b, N))[:, :, self.cols]
            chunks = -(-b // gpu_kernels.ROWS_PER_CHUNK)
            arrays = (xb, tb, d3, r3, xs, lib.reshape(tb, (1, b, M)), buf["loss_terms"][:, :b],
                      buf["gs"][:, :b], buf["part"][:, :chunks])
            self._by_rows[b] = {"xb": xb, "d": buf["d"][:b], "r": buf["r"][:b],
                                "views": gpu_kernels.kernel_args(*arrays), "chunks": chunks}
        return self._by_rows[b]

    def epoch(self, order, lr, finite):
        """One epoch: the minibatches in ``order`` (NumPy indices, or None for 0..B-1) at learning
        rates ``lr`` (G,), networks with ``finite`` False frozen as in the reference loop.

        Returns ``(epoch_loss (G,), epoch_finite (G,) bool)`` on the device, or None after one
        warning if a launch failed; the memories and velocity are then as they were before the epoch.
        Where a row-wise loss kernel failed, the epoch runs again with the three-pass ones (one
        warning), as does the rest of the fit.
        """
        lib = self.lib
        backup = (lib.array(self.memories, copy=True), lib.array(self.velocity, copy=True))
        stage = None
        try:
            self.begin_epoch(order, lr, finite)
            for start in range(0, self.shape[4], self.batch):
                for stage, launch in self.stages(start):
                    launch()
        except Exception as exc:  # noqa: BLE001 - a broken toolchain must not stop a run
            self.memories[...], self.velocity[...] = backup
            if self.row_wise and stage in ("outputs", "gradient_parts"):
                gpu_kernels.fail(exc, row_wise=True)
                self.row_wise, self.rw = False, None
                return self.epoch(order, lr, finite)
            gpu_kernels.fail(exc, whole_epochs=True)
            return None
        return self.buf["epoch_loss"], self.buf["epoch_ok"] != 0

    def begin_epoch(self, order, lr, finite):
        """Upload the epoch's order, learning rates and frozen networks; zero its loss (see :meth:`epoch`)."""
        lib, buf = self.lib, self.buf
        B = self.shape[4]
        buf["lr"][...] = lib.asarray(np.asarray(lr, dtype=buf["lr"].dtype))
        buf["order"][...] = lib.asarray(np.arange(B) if order is None else np.asarray(order, dtype=np.int64))
        buf["finite"][...] = lib.asarray(finite).astype(np.int8)
        buf["epoch_loss"][...] = 0
        buf["epoch_ok"][...] = 1

    def stages(self, start):
        """The minibatch from row ``start`` of the epoch's order: its seven launches (eight with the three-pass
        kernels), as (name, function) pairs in order (``bench/gpu_block_epoch.py profile`` times them one by
        one)."""
        lib, v, k = self.lib, self.views, self.k
        G, K, N, M, B = self.shape
        kind, n, slope = self.code
        momentum, floor = self.consts
        b = min(self.batch, B - start)
        rows = self._rows(b)
        xb, tb, d3, r3, xs, ts, lt, gs, part = rows["views"]
        threads = self.row_threads or k.ROW_THREADS
        launch = gpu_kernels.launch
        if self.row_wise:
            outputs, parts = self.rw
            loss_stages = (
                ("outputs", lambda: gpu_kernels.launch_outputs(outputs, G, b, d3, v["w"], xs, ts, v["b_in"],
                                                               v["b_out"], slope, self.two_m, lt, gs)),
                ("gradient_parts", lambda: launch(parts, G * rows["chunks"] * K, d3, v["w"], xs, gs, v["b_in"],
                                                  slope, gpu_kernels.ROWS_PER_CHUNK, r3, part)))
        else:
            loss_stages = (
                ("outputs", lambda: launch(k.outputs, G * b * M, d3, v["zeta_t"], xs, ts, v["b_in"], v["b_out"],
                                           kind, n, slope, self.two_m, lt, gs)),
                ("rows", lambda: launch(k.rows, G * b * K, d3, v["zeta_t"], xs, gs, v["b_in"], kind, n, slope, r3)),
                ("columns", lambda: launch(k.columns, G * rows["chunks"] * M * K, d3, v["zeta_t"], xs, gs, v["b_in"],
                                           kind, n, slope, gpu_kernels.ROWS_PER_CHUNK, part)))
        return (
            ("gather", lambda: launch(k.gather, max(b * (N + M), G * M * K, G), v["probes"], v["targets"],
                                      v["order"], start, xb, tb, v["bad"], v["zeta_t"], v["w"])),
            ("similarities", lambda: lib.matmul(rows["xb"], self.mem_flat.T, out=rows["d"])),
            *loss_stages,
            ("gradient", lambda: lib.matmul(rows["r"].T, rows["xb"], out=self.grad_flat)),
            ("finish", lambda: k.finish[G * K, threads](v["grad"], part, v["colmap"], v["scale"], lt, v["loss"],
                                                        v["bad"])),
            ("step", lambda: k.step[G * K, threads](v["grad"], v["velocity"], v["memories"], v["loss"], v["bad"],
                                                    v["finite"], v["lr"], momentum, floor, self.normalize,
                                                    v["clampmask"], v["norms"], v["epoch_loss"], v["epoch_ok"])),
        )
