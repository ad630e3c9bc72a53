"""A training fit's minibatches on the CPU in two parallel steps each, on buffers allocated once per fit.

The CPU twin of :mod:`damlite.kernels.gpu_fit`. :func:`damlite.training.train_memories` hands an
epoch to :meth:`~damlite.kernels.cpu_fit.CpuFit.epoch` when the memories are NumPy float32 or
float64 arrays, the numba kernels are on (:mod:`damlite.kernels.cpu_kernels`), the minibatches are
shared by the G networks and the evaluated neurons are ±1 in every probe (checked once
per fit). Per minibatch of b rows, on T threads (the kernels' thread count)::

    front    step     the last minibatch's optimiser step of each memory (gradient 0 in a network that is
                      not finite), then w = 2 zeta[:, cols]^T
             gather   xb, tb, xs <- probes[order[rows]], targets[order[rows]], xb[:, cols]
                      (from 1-byte codes where the probes take at most 256 values, fetched ahead)
             GEMM     d (b, G K) = xb zeta^T (float64, G K <= 256: as (zeta xb^T)^T, where bitwise the same)
             loss     loss, r and the evaluated columns' part (damlite.kernels.cpu_kernels)
    back     GEMM     grad (G K, N) = r^T xb
             complete grad <- b_out b_in (grad + columns), its finiteness
    then     tally    the loss (its chunks summed as numpy.sum sums them), ok, the epoch's loss and flags

(the last minibatch's step runs at the epoch's end). Each step is split over the T threads, which
wait for each other between the steps. ``front``, for one network whose rows are cut: each thread
gathers its rows and computes their products (thread 0 runs the step first; the other threads'
products wait for it, their gathers do not), then takes chunks of rows for the loss kernel: half
of its own that are left, then one at a time, then, one at a time, those of a slower thread and
those a boundary cuts, once their rows are in. Both steps then run in one call to the threads,
which meet at a barrier between them (one hand-over a minibatch). Otherwise the
step runs first (split by memories where large enough) and ``front`` is cut by chunks of rows or
by networks (several; the gather and the first product then run before it, on the calling
thread). ``back`` is cut by columns. The boundaries of one network's rows and of the columns
follow the threads' speed: after each minibatch they move towards equal finishing times
(``CpuFit._rebalance``; on the shared 2-core machine one thread ran up to 12 % slower than the
other for minutes at a time, the other way round in the next run). The threads run the numba
kernels and single-threaded BLAS products (threadpoolctl limits BLAS to one thread during the
epoch): one pool of threads, none of them busy-waiting on a core another needs. A step is split
only where its work reaches :data:`damlite.kernels.cpu_kernels.MIN_WORK` (measured: below it two
threads are slower than one); BLAS stays on one thread where no step is split too. Without
threadpoolctl, T is 1 and BLAS keeps its own threads.

The same kernels and the same arithmetic in the same order as the minibatch loop of
:mod:`damlite.training` over :func:`damlite.network.loss_and_gradient`: on one thread the
results are bitwise those of that loop (the tests check it), without its per-minibatch
allocations, copies, reductions and Python. On T threads each product is cut into T
blocks of rows (at multiples of :data:`ROW_ALIGN`) or of columns (of :data:`COLUMN_ALIGN`);
each entry is still one BLAS dot product over the same terms, but a BLAS need not sum them
in a block as in the whole product: OpenBLAS 0.3.31 (its SkylakeX kernels) sums the last
N mod 8 columns of a product of N >= 193 columns in another order in a block of fewer than
193 columns (measured 2026-11-29: the N = 250 autoassociative fits of commit 8a10c68, 96
networks of K = 100 memories, differed from their second epoch on between 1 and 2 threads).
So a product is cut only where, for its shape, the cut blocks give the whole product's bits on
random data (checked once per fit, minibatch size and block, with BLAS as in the epoch); elsewhere
it is computed whole on the calling thread and the kernels after it are still split. The fits
are thus bitwise the same on 1 and 2 threads (the tests check it with every step split); the
check is empirical (random data, one draw), so a BLAS whose order depended on the values
would escape it.
Where a kernel fails, the kernels are off for the process (one warning), the epoch's
start is restored and the loop of :mod:`damlite.training` runs the rest of the fit on
NumPy.
"""
from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from . import cpu_kernels

__all__ = ["COLUMN_ALIGN", "ROW_ALIGN", "CpuFit"]

#: The columns of the gradient product are cut at multiples of this, where BLAS kernels
#: tile, so that each block's entries are summed as in the whole product.
COLUMN_ALIGN = 16

#: The first product d = xb zeta^T is computed as its transpose zeta xb^T (then copied back, ~0.04 ms for
#: 1000 x 100) in float64 when zeta has at most this many rows (G K) and the transposed form gives the same bits
#: (checked once per fit and minibatch size). Measured 2026-11-29 with OpenBLAS 0.3.31 on one thread (9
#: alternating rounds; bench/HISTORY.md): zeta xb^T takes 0.76x the time of xb zeta^T at 1000 x 794 by 100 (the
#: Krotov epoch: 0.92x the whole epoch, 5 of 5 rounds), 0.89x at 100 rows, 0.95x at G K = 256, 1.03x at 2000;
#: float32 1.01x (not used).
TRANSPOSED_MAX_ROWS = 256

#: Where the first step is cut by rows (one network), each thread's rows start at a multiple of this; the
#: boundaries then move with the threads' measured speed (``CpuFit._rebalance``).
ROW_ALIGN = 8

#: How far a boundary aims after each minibatch: this fraction of the rows (or columns) that would have made its
#: two threads finish together, at most one multiple of the alignment a minibatch (one minibatch's times on a
#: shared core are noisy: 5 % from one to the next, now and then 2x).
BALANCE_GAIN = 0.5

#: The share of each minibatch's lateness in the smoothed lateness that moves a boundary (an exponential average
#: over ~5 minibatches), and the least smoothed lateness, as a share of a thread's mean time, that moves it: without
#: them a boundary wandered with the machine's noise over ~20 positions of Krotov's fit, each new one checked at a
#: product's cost (86 checks, 0.5 s of a 20-epoch two-thread fit).
BALANCE_SMOOTHING = 0.2
BALANCE_DEADBAND = 0.03


class CpuFit:
    """Buffers and kernel calls of one fit's minibatches (see the module doc).

    Build with :meth:`create`, which returns None where the fit cannot take this path.
    ``memories`` and ``velocity`` are updated in place.
    """

    def __init__(self, memories, velocity, probes, targets, cols, clamp, b_in, b_out, code, two_m, batch,
                 momentum, normalize, floor):
        G, K, N = memories.shape
        B, M = targets.shape
        dtype = memories.dtype
        self.memories, self.velocity = memories, velocity
        self.probes, self.targets = np.ascontiguousarray(probes), np.ascontiguousarray(targets)
        self.shape, self.batch, self.code, self.two_m, self.cols = (G, K, N, M, B), batch, code, two_m, cols
        self.normalize = bool(normalize)
        self.clamp = (0, 0) if clamp is None else clamp.indices(N)[:2]
        self.colidx = np.arange(N, dtype=np.int64)[cols]
        self.colmap = np.full(N, -1, dtype=np.int64)
        self.colmap[self.colidx] = np.arange(M)
        self.b_in = np.ascontiguousarray(np.reshape(b_in, (G,)), dtype=dtype)
        self.b_out = np.ascontiguousarray(np.reshape(b_out, (G,)), dtype=dtype)
        self.scale = np.ascontiguousarray(np.reshape(b_out * b_in, (G,)), dtype=dtype)  # as the loop's b_out * b_in
        kind, n, slope = code
        self.loss_consts = cpu_kernels.loss_consts(dtype, kind, n, slope, two_m)
        self.step_consts = cpu_kernels.step_consts(dtype, momentum, floor)
        self.order = np.arange(B, dtype=np.int64)
        self.lr = np.zeros(G, dtype=dtype)
        self.finite, self.ok = np.ones(G, dtype=np.bool_), np.ones(G, dtype=np.bool_)
        self.epoch_loss, self.epoch_ok = np.zeros(G, dtype=dtype), np.ones(G, dtype=np.bool_)
        self.xb, self.tb, self.xs = (np.empty((batch, N), dtype), np.empty((batch, M), dtype),
                                     np.empty((batch, M), dtype))
        self.d, self.r = np.empty((batch, G * K), dtype), np.empty((batch, G * K), dtype)  # row b: (b, g, mu)
        self.w = np.empty((G, M, K), dtype)
        self.grad = np.empty((G, K, N), dtype)
        self.bad = np.zeros((G, K), dtype=np.bool_)
        self._by_rows = {}
        self.pending, self.step_parts, self.step_cut = None, 1, [0, G * K]  # a minibatch's step, run with the next
        # the kernels' thread count; a fit splits its products only where BLAS can be held to one thread meanwhile
        self.limit = cpu_kernels.num_threads() if cpu_kernels._blas_controller() else 1
        # probes of at most 256 values (MNIST's): the gather reads 1-byte codes, table[codes] bitwise the probes
        # (cpu_kernels.palette, ~0.07 s of setup for MNIST). Measured (bench/HISTORY.md), float64 (2026-11-27,
        # commits 55280ad and b376a13): the gather 0.051 -> 0.039 s per epoch on 1 thread (whole epochs 2.6 % faster,
        # 11 alternating rounds), on 2 threads 3-12 % faster epochs in two records and no gain in two A/Bs; float32
        # (2026-11-30): its rows copied took 0.031 s an epoch against 0.035 from codes on 2026-11-27; on 2026-11-30
        # 0.055 against 0.035 in one hour (whole epochs 0.925x, 10 of 10 alternating rounds) and 0.038-0.039 against
        # 0.039-0.040 in the next (1.016x and 1.007x, 0 and 2 of 8): the codes, a quarter of the bytes to fetch, cost
        # the same whatever the machine's memory is doing; the rows cost up to half again more when it is busy.
        coded = cpu_kernels.palette(self.probes)
        self.codes, self.table = coded or (np.empty((0, 0), np.uint8), np.empty(0, dtype))
        # BLAS on one thread during every epoch: where the steps are split, the kernel threads cut the products
        # themselves; where they are not, BLAS's own threads lose (measured, bench/threads.py: 3-7x slower
        # epochs on the shared 2-core machine once the products pass OpenBLAS's threading size, its idle threads
        # spinning on the cores), and a thread count of 1 holds for the products too
        self.blas_one = cpu_kernels.blas_threads() > 1
        full = self._rows(self.batch)  # a shorter last minibatch splits no step that a full one does not
        self.threads = max(full["front"], full["back"], full["step"])

    @classmethod
    def create(cls, xp, memories, velocity, probes, targets, interaction, neurons, clamp, beta_in, beta_out,
               error_exponent, batch, momentum, normalize, floor):
        """A :class:`~damlite.kernels.cpu_fit.CpuFit`, or None: not NumPy float32/float64, the numba kernels off,
        probes or targets per network, a clamp that is not a step-1 slice, a non-built-in interaction, or
        evaluated neurons that are not ±1 in every probe."""
        from array_api_compat import is_numpy_namespace  # noqa: PLC0415

        from ..backend import _all_bipolar, neuron_index, per_network_scalar  # noqa: PLC0415

        if not (is_numpy_namespace(xp) and memories.dtype in (np.float32, np.float64)):
            return None
        if probes.ndim != 2 or targets.ndim != 2 or probes.dtype != memories.dtype:
            return None
        if not (memories.flags.c_contiguous and velocity.flags.c_contiguous):
            return None
        G, N = memories.shape[0], memories.shape[2]
        cols, M = neuron_index(neurons, N)
        code = cpu_kernels.interaction_code(interaction)
        if code is None or targets.shape != (probes.shape[0], M) or not cpu_kernels.available():
            return None
        if clamp is not None and slice(*clamp.indices(N)).step != 1:
            return None
        if not _all_bipolar(probes[:, cols]):
            return None
        dtype = memories.dtype
        b_in = per_network_scalar(beta_in, np, G, dtype)
        b_out = per_network_scalar(beta_out, np, G, dtype)
        return cls(memories, velocity, probes, np.asarray(targets, dtype=dtype), cols, clamp, b_in, b_out, code,
                   2 * int(error_exponent), min(batch, probes.shape[0]), momentum, normalize, floor)

    def _rows(self, b):
        """Per-minibatch buffers and the threads' cuts for minibatches of ``b`` rows (cached)."""
        if b not in self._by_rows:
            G, K, N, M, _ = self.shape
            n_chunks, chunk = cpu_kernels.row_chunks(b)
            T, split = self.limit, cpu_kernels.threads_for
            front = min(T, split(b * G * K * (N + M), n_chunks if G == 1 else G, "front"))
            cut = cpu_kernels.spans(n_chunks if G == 1 else G, front)
            back = min(T, split(b * G * K * N, max(1, N // COLUMN_ALIGN), "back"))
            step = min(T, split(G * K * N, G * K, "step"))
            rows = self._by_rows[b] = {
                "xb": self.xb[:b], "tb": self.tb[:b], "xs": self.xs[:b], "d": self.d[:b], "chunk": chunk,
                "n_chunks": n_chunks, "d_rows": self.d[:b].reshape(b * G, K), "r_rows": self.r[:b].reshape(b * G, K),
                "rt": self.r[:b].T, "loss_part": np.zeros((G, n_chunks), self.xb.dtype),
                "grad_part": np.zeros((G, n_chunks, M, K), self.xb.dtype),
                "front": front, "front_cut": cut, "back": back, "back_cut": cpu_kernels.spans(N, back, COLUMN_ALIGN),
                "step": step, "step_cut": cpu_kernels.spans(G * K, step)}
            # a product is cut only where the cut blocks give the whole product's bits (checked once per shape)
            rows["front_whole"] = G > 1 or (front > 1 and not self._cuts_keep_bits(
                rows["xb"], np.arange(G * K * N, dtype=self.xb.dtype).reshape(G * K, N).T,
                [min(b, c * chunk) for c in cut[:-1]] + [b], rows=True))
            rows["back_whole"] = back > 1 and not self._cuts_keep_bits(rows["rt"], rows["xb"], rows["back_cut"])
            blocks = [0, b] if rows["front_whole"] else [min(b, c * chunk) for c in cut[:-1]] + [b]
            rows["dT"] = (np.empty((G * K, b), self.xb.dtype)
                          if self.xb.dtype == np.float64 and G * K <= TRANSPOSED_MAX_ROWS else None)
            if rows["dT"] is not None and not self._transposed_keeps_bits(rows["xb"], rows["dT"], blocks):
                rows["dT"] = None
            # the cut products' boundaries move with the threads' speed (_rebalance), to blocks whose bits are checked
            rows["row_bounds"] = [0, b] if G > 1 or front == 1 or rows["front_whole"] else list(blocks)
            rows["col_bounds"] = list(rows["back_cut"])
            rows["checked"] = {}
            for key in ("row", "col"):
                bounds = rows[key + "_bounds"]
                rows["checked"].update({(key, *bounds[u - 1:u + 2]): True for u in range(1, len(bounds) - 1)})
                rows[key + "_target"] = [float(x) for x in bounds]
                rows[key + "_ends"] = [0.0] * (len(bounds) - 1)
                rows[key + "_late"] = [0.0] * len(bounds)
            rows["done"] = [threading.Event() for _ in range(front)]
            rows["stepped"] = threading.Event()
            # one network's rows cut: the loss kernel's chunks claimed (_claim), and both steps in one call, the
            # threads meeting at a barrier between them, where the second product is cut by as many threads
            rows["claim_lock"] = threading.Lock()
            rows["one_call"] = len(rows["row_bounds"]) > 2 and not rows["back_whole"] and back == front
            rows["barrier"] = threading.Barrier(front) if rows["one_call"] else None
            rows["col_starts"] = [0.0] * back
        return self._by_rows[b]

    def _cut_keeps_bits(self, rows, key, lo, cut, hi):
        """True where rows lo..cut and cut..hi of the first product (``key`` "row") or its columns of the second
        ("col"), computed as two blocks the way an epoch computes them, give the whole product's bits: checked
        once per (lo, cut, hi), on the minibatch just computed, whose operands are still in the buffers. The first
        product's blocks are compared with d (its blocks there give the whole product's bits, by these checks), the
        second's with the whole r^T xb (one temporary of a product's size each; BLAS on one thread, as in the epoch
        that calls this). Measured (Krotov's fit, two threads): a check takes about a product's time, 2-6 ms."""
        known = rows["checked"].get((key, lo, cut, hi))
        if known is None:
            G, K, N, _, _ = self.shape
            if key == "row":
                part = np.empty_like(rows["d"])
                dT = None if rows["dT"] is None else np.empty_like(rows["dT"])
                for first, last in ((lo, cut), (cut, hi)):
                    self._similarities(rows["xb"], part, dT, first, last)
                known = bool(np.array_equal(part[lo:hi], rows["d"][lo:hi]))
            else:
                part = np.empty((G * K, N), self.xb.dtype)
                for first, last in ((lo, cut), (cut, hi)):
                    np.matmul(rows["rt"], rows["xb"][:, first:last], out=part[:, first:last])
                known = bool(np.array_equal(part[:, lo:hi], (rows["rt"] @ rows["xb"])[:, lo:hi]))
            rows["checked"][(key, lo, cut, hi)] = known
        return known

    def _rebalance(self, rows, key, began):
        """Move the boundaries of the rows (``key`` "row") or columns ("col") cut over the threads towards equal
        finishing times, from the last minibatch's (``rows[key + "_ends"]``, the step having begun at ``began``).

        A boundary u follows how much later thread u - 1 finished than thread u, smoothed over minibatches
        (:data:`BALANCE_SMOOTHING`); where that is more than :data:`BALANCE_DEADBAND` of a thread's mean time, it
        aims at :data:`BALANCE_GAIN` of the rows that would make the two finish together (each thread's time taken
        as proportional to its rows), at most :data:`ROW_ALIGN` rows (:data:`COLUMN_ALIGN` columns) a minibatch,
        each thread keeping at least a chunk of rows (so a chunk spans at most two threads) or
        :data:`COLUMN_ALIGN` columns; it moves to the multiple of :data:`ROW_ALIGN` (:data:`COLUMN_ALIGN`) nearest
        its aim where the two blocks give the whole product's bits (:meth:`_cut_keeps_bits`), else it stays. A
        minibatch whose two threads finished more than half a thread's mean time apart counts for nothing: a thread
        taken off its core, not the cut. Where the boundaries go is a matter of timing; the fit's bits are not.
        """
        bounds, target, ends = rows[key + "_bounds"], rows[key + "_target"], rows[key + "_ends"]
        T, total = len(bounds) - 1, bounds[-1]
        busy = sum(ends) - T * began
        if T < 2 or not busy > 0:
            return
        per_unit = busy / total  # seconds per row (column) on one thread
        align, least = (ROW_ALIGN, rows["chunk"]) if key == "row" else (COLUMN_ALIGN, COLUMN_ALIGN)
        smoothed = rows[key + "_late"]
        for u in range(1, T):
            late = ends[u - 1] - ends[u]  # > 0: thread u - 1 finished last
            if abs(late) > busy / T / 2:
                continue
            smoothed[u] += BALANCE_SMOOTHING * (late - smoothed[u])
            if abs(smoothed[u]) <= BALANCE_DEADBAND * busy / T:
                continue
            move = BALANCE_GAIN * smoothed[u] / (2 * per_unit)
            lowest, highest = bounds[u - 1] + least, bounds[u + 1] - least
            target[u] = min(max(target[u] - min(max(move, -align), align), lowest), highest)
            cut = int(align * round(target[u] / align))
            if cut != bounds[u] and lowest <= cut <= highest and self._cut_keeps_bits(
                    rows, key, bounds[u - 1], cut, bounds[u + 1]):
                bounds[u] = cut

    def _similarities(self, xb, d, dT, first, last):
        """d[first:last] = xb[first:last] zeta^T (zeta: the memories as (G K, N)), directly or as the transpose of
        zeta xb[first:last]^T where ``dT`` is given (:data:`TRANSPOSED_MAX_ROWS`)."""
        zeta = self.memories.reshape(-1, self.shape[2])
        if dT is None:
            np.matmul(xb[first:last], zeta.T, out=d[first:last])
        else:
            np.matmul(zeta, xb[first:last].T, out=dT[:, first:last])
            np.copyto(d[first:last], dT[:, first:last].T)

    def _transposed_keeps_bits(self, xb, dT, blocks):
        """True where (zeta xb[lo:hi]^T)^T over ``blocks`` gives bitwise the whole xb zeta^T (what the loop of
        :mod:`damlite.training` computes), for random xb and zeta (``xb`` and ``dT`` are overwritten; BLAS as in an
        epoch). Each entry is one dot product over the same terms in both forms, but OpenBLAS 0.3.31 sums some
        shapes in another order in the two (measured: 250 and 500 rows by 794 columns by 100)."""
        rng = np.random.default_rng(1)
        rng.standard_normal(dtype=xb.dtype, out=xb)
        zeta = rng.standard_normal((dT.shape[0], xb.shape[1]), dtype=xb.dtype)
        limit = cpu_kernels.one_blas_thread() if self.blas_one else None
        with limit or contextlib.nullcontext():
            whole = xb @ zeta.T
            for lo, hi in zip(blocks[:-1], blocks[1:]):
                np.matmul(zeta, xb[lo:hi].T, out=dT[:, lo:hi])
        return bool(np.array_equal(whole, dT.T))

    def _cuts_keep_bits(self, a, b, cuts, rows=False):
        """True where ``a @ b`` computed in blocks, of ``a``'s rows (``rows``) or of ``b``'s columns, at ``cuts``,
        gives bitwise the whole product, for random a and b (``a`` and ``b`` are overwritten; BLAS as in an epoch).

        Each entry is one dot product over the same terms, but the BLAS need not sum them in the same order in a
        block as in the whole: OpenBLAS 0.3.31 (SkylakeX kernels) sums the last N mod 8 columns of a product of
        N >= 193 columns in another order than in a block of fewer than 193 (measured, 2026-11-29: the N = 250
        autoassociative fits differed between 1 and 2 threads). A product that fails is computed whole.
        """
        rng = np.random.default_rng(0)
        for x in (a, b):  # in place, no temporary of the operands' size (a fit keeps within its memory budget)
            if x.flags.c_contiguous:
                rng.standard_normal(dtype=x.dtype, out=x)
            else:
                for row in x:
                    row[...] = rng.standard_normal(row.shape, dtype=x.dtype)
        limit = cpu_kernels.one_blas_thread() if self.blas_one else None
        with limit or contextlib.nullcontext():
            whole = a @ b
            part = np.empty_like(whole)
            for lo, hi in zip(cuts[:-1], cuts[1:]):
                if rows:
                    np.matmul(a[lo:hi], b, out=part[lo:hi])
                else:
                    np.matmul(a, b[:, lo:hi], out=part[:, lo:hi])
        return bool(np.array_equal(whole, part))

    def epoch(self, order, lr, finite):
        """One epoch: the minibatches in ``order`` (indices, or None for 0..B-1) at learning rates ``lr``
        (G,), networks with ``finite`` False frozen as in the loop of :mod:`damlite.training`.

        Returns ``(epoch_loss (G,), epoch_finite (G,) bool)``, or None after the kernels failed
        (one warning); the memories and velocity are then as they were before the epoch.
        """
        B = self.shape[4]
        backup = (self.memories.copy(), self.velocity.copy())
        self.order[...] = np.arange(B) if order is None else order
        self.lr[...] = lr
        self.finite[...] = finite
        self.epoch_loss[...] = 0
        self.epoch_ok[...] = True
        self.pending = None
        limit = cpu_kernels.one_blas_thread() if self.blas_one else None
        with limit or contextlib.nullcontext():
            for start in range(0, B, self.batch):
                if not self.minibatch(start):
                    self.memories[...], self.velocity[...] = backup
                    return None
            if not self._step(split=True):
                self.memories[...], self.velocity[...] = backup
                return None
        return self.epoch_loss.copy(), self.epoch_ok.copy()

    def _step(self, split):
        """The last minibatch's optimiser step, where one is due (``split``: over the threads where its size
        asks for it, else on the calling thread), then the evaluated columns' weights w = 2 zeta[:, cols]^T for
        the next; False if a kernel failed."""
        if self.pending is not None:
            ok, parts, cut = self.pending, (self.step_parts if split else 1), self.step_cut
            start_col, stop_col = self.clamp
            self.pending = None
            if cpu_kernels.run_parts("step", parts, lambda t: (
                    self.memories, self.velocity, self.grad, ok, self.lr, self.step_consts, self.normalize, start_col,
                    stop_col, cut[t] if parts > 1 else 0, cut[t + 1] if parts > 1 else cut[-1])) is None:
                return False
        np.multiply(2, self.memories[:, :, self.cols].transpose(0, 2, 1), out=self.w)
        return True

    def minibatch(self, start):
        """The minibatch from row ``start`` of the epoch's order: the last minibatch's step, then the two threaded
        steps of this one (its own step runs with the next, or at the epoch's end); False if a kernel failed."""
        G, K, N, _, B = self.shape
        b = min(self.batch, B - start)
        rows = self._rows(b)
        clock = time.perf_counter
        rows["grad_part"][...] = 0
        self.bad[...] = False
        by_rows = len(rows["row_bounds"]) > 2  # one network's rows cut over the threads, with the step beside them
        if not (by_rows and rows["step"] == 1):
            if not self._step(split=True):
                return False
        if by_rows:
            for event in (rows["stepped"], *rows["done"]):
                event.clear()
            self._claims(rows)
            if rows["barrier"] is not None and rows["barrier"].broken:
                rows["barrier"].reset()
            began = clock()
            if not cpu_kernels.run_parts(self._both_rows if rows["one_call"] else self._front_rows, rows["front"],
                                         lambda t: (rows, start, t)):
                return False
            self._rebalance(rows, "row", began)
        else:
            if rows["front_whole"]:  # the gather and the first product whole (their cut would round differently)
                if not cpu_kernels.call("gather", self.probes, self.codes, self.table, self.targets, self.order,
                                        start, self.colidx, rows["xb"], rows["tb"], rows["xs"], 0, b):
                    return False
                self._similarities(rows["xb"], rows["d"], rows["dT"], 0, b)
            if not cpu_kernels.run_parts(self._front, rows["front"], lambda t: (rows, start, t)):
                return False
        if rows["one_call"]:  # the back step ran in the same call (one_call implies by_rows)
            began = min(rows["col_starts"])
        else:
            if rows["back_whole"]:  # the second product whole (its cut would round differently)
                np.matmul(rows["rt"], rows["xb"], out=self.grad.reshape(G * K, N))
            began = clock()
            if not cpu_kernels.run_parts(self._back, rows["back"], lambda t: (rows, t)):
                return False
        if not rows["back_whole"]:
            self._rebalance(rows, "col", began)
        # ok = finite, the loss finite and no memory bad; epoch_loss += loss where ok; epoch_ok &= ok (the step of
        # this minibatch, which reads ok, runs before the next minibatch's tally)
        if not cpu_kernels.call("tally", rows["loss_part"], self.bad, self.finite, self.epoch_loss, self.epoch_ok,
                                self.ok):
            return False
        self.pending, self.step_parts, self.step_cut = self.ok, rows["step"], rows["step_cut"]
        return True

    def _loss(self, rows, lo, hi):
        """The loss kernel on jobs lo..hi (chunks of rows of one network, or networks' chunks)."""
        G = self.shape[0]
        kind, n, _ = self.code
        cpu_kernels.kernel("loss_grad")(rows["d_rows"], 1, G, self.w, rows["xs"], 0, 1, rows["tb"], self.b_in,
                                        self.b_out, self.loss_consts, kind, n, self.two_m, True, rows["chunk"],
                                        rows["loss_part"], rows["r_rows"], rows["grad_part"], lo, hi)

    def _gather(self, rows, start, first, last):
        cpu_kernels.kernel("gather")(self.probes, self.codes, self.table, self.targets, self.order, start,
                                     self.colidx, rows["xb"], rows["tb"], rows["xs"], first, last)

    def _front(self, rows, start, t):
        """Thread ``t``'s part of the gather, the first product and the loss kernel, by chunks of rows (one
        network) or by networks (several: the rows gathered and the first product done before)."""
        lo, hi = rows["front_cut"][t], rows["front_cut"][t + 1]
        if self.shape[0] == 1:
            if not rows["front_whole"]:
                first, last = lo * rows["chunk"], min(rows["xb"].shape[0], hi * rows["chunk"])
                self._gather(rows, start, first, last)
                self._similarities(rows["xb"], rows["d"], rows["dT"], first, last)
            self._loss(rows, lo, hi)
        else:
            self._loss(rows, lo * rows["n_chunks"], hi * rows["n_chunks"])

    def _front_rows(self, rows, start, t):
        """Thread ``t``'s rows (``rows["row_bounds"]``) of one network's gather and first product, then chunks of
        the loss kernel (:meth:`_claim`); thread 0 first runs the last minibatch's step (the others' products wait
        for it, their gathers do not). The boundaries follow the times at which the threads' products end."""
        bounds = rows["row_bounds"]
        lo, hi = bounds[t], bounds[t + 1]
        try:
            if t == 0:
                try:
                    if not self._step(split=False):
                        raise RuntimeError("the optimiser step failed")
                finally:
                    rows["stepped"].set()
            self._gather(rows, start, lo, hi)
            rows["stepped"].wait()
            self._similarities(rows["xb"], rows["d"], rows["dT"], lo, hi)
        finally:
            rows["row_ends"][t] = time.perf_counter()
            rows["done"][t].set()
        while (job := self._claim(rows, t)) is not None:
            self._loss(rows, *job)

    def _claims(self, rows):
        """The loss kernel's chunks of one network's cut rows, as ranges to claim (:meth:`_claim`): per thread the
        chunks wholly among its rows, and each chunk that a boundary cuts; each range with the threads whose rows it
        needs."""
        bounds, chunk, T = rows["row_bounds"], rows["chunk"], len(rows["row_bounds"]) - 1
        ranges, needs = [], []
        for u in range(T):
            first, last = -(-bounds[u] // chunk), (bounds[u + 1] // chunk if u < T - 1 else rows["n_chunks"])
            ranges.append([first, max(first, last)])
            needs.append((u,))
        for u in range(1, T):
            if bounds[u] % chunk:
                ranges.append([bounds[u] // chunk, bounds[u] // chunk + 1])
                needs.append((u - 1, u))
        rows["claims"], rows["claim_needs"] = ranges, needs

    def _claim(self, rows, t):
        """The next chunks (first, last) of the loss kernel for thread ``t``, or None when none is left: half of
        what is left of its own (at least one chunk), from the front; then one chunk at a time from the back of
        any range whose rows are in (waiting for them where none is). A thread that finishes its products early
        takes over chunks of a slower one; which thread runs a chunk does not change its bits."""
        ranges, needs, done = rows["claims"], rows["claim_needs"], rows["done"]
        while True:
            waiting = None
            with rows["claim_lock"]:
                own = ranges[t]
                if own[0] < own[1]:
                    first = own[0]
                    own[0] += max(1, (own[1] - own[0]) // 2)
                    return first, own[0]
                for span, need in zip(ranges, needs):
                    if span[0] < span[1]:
                        if all(done[u].is_set() for u in need):
                            span[1] -= 1
                            return span[1], span[1] + 1
                        waiting = waiting or need
            if waiting is None:
                return None
            for u in waiting:
                done[u].wait()

    def _both_rows(self, rows, start, t):
        """Thread ``t``'s part of both steps (:meth:`_front_rows`, then :meth:`_back`), the threads meeting at a
        barrier between them: one hand-over to the threads a minibatch instead of two."""
        try:
            self._front_rows(rows, start, t)
            rows["barrier"].wait()
        except threading.BrokenBarrierError:
            return  # another thread failed: its exception is the one run_parts raises
        except BaseException:
            rows["barrier"].abort()
            raise
        rows["col_starts"][t] = time.perf_counter()
        self._back(rows, t)

    def _back(self, rows, t):
        """Thread ``t``'s columns (``rows["col_bounds"]``) of the second product and of the completed, checked
        gradient."""
        G, K, N, _, _ = self.shape
        lo, hi = rows["col_bounds"][t], rows["col_bounds"][t + 1]
        if not rows["back_whole"]:
            np.matmul(rows["rt"], rows["xb"][:, lo:hi], out=self.grad.reshape(G * K, N)[:, lo:hi])
        cpu_kernels.kernel("complete")(self.grad, rows["grad_part"], self.colmap, self.scale, self.bad, lo, hi)
        rows["col_ends"][t] = time.perf_counter()
