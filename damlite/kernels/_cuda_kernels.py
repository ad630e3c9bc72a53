"""The kernels of :mod:`damlite.kernels.gpu_kernels` and :mod:`damlite.kernels.gpu_fit`, imported on first use
(it imports numba.cuda).

Module-level definitions, so that numba's CUDA simulator can run them on NumPy arrays.
Conventions: ``zeta`` (G, M, K) is a view of the evaluated neurons' memory entries
(w = 2 zeta in the formulas); ``xs`` and ``targets`` are (G, B, M) or (1, B, M), the
second shared by all networks; ``d`` is (G, B, K), any strides.
"""
import math

from numba import config, cuda, float64

from ._scalar import EXPONENTIAL, LEAKY, RECTIFIED, ipow

# Small test grids under-fill a GPU on purpose; numba would warn at every launch.
config.CUDA_LOW_OCCUPANCY_WARNINGS = False


def scalar_kernels(jit):
    """``(power, f_and_df)`` compiled by ``jit`` (a numba decorator): the interactions as scalar code.

    ``power(base, e, one)`` is base**e by repeated squaring (the products of
    :func:`damlite.interactions.integer_power`); ``f_and_df(x, kind, n, nf, slope, zero, one)``
    returns F(x) and F'(x) for the built-in kinds of
    :func:`damlite.kernels.cpu_kernels.interaction_code`: x**n (polynomial),
    max(x, 0)**n (rectified), x**n above 0 and slope x below (leaky), exp(x). ``nf`` (n),
    ``slope``, ``zero`` and ``one`` come in the data's type: a float literal here would be a
    float64 and would turn float32 kernels into float64 arithmetic (1/32 of the speed on a T4).
    """
    ipow_dev = jit(ipow)

    @jit
    def power(base, e, one):
        return ipow_dev(base, e, one)

    @jit
    def f_and_df(x, kind, n, nf, slope, zero, one):
        if kind == EXPONENTIAL:
            v = math.exp(x)
            return v, v
        if kind == RECTIFIED:
            if x <= zero:
                return zero, zero
        elif kind == LEAKY:
            if x < zero:
                return slope * x, slope
        low = power(x, n - 1, one)
        return low * x, nf * low

    return power, f_and_df


power, f_and_df = scalar_kernels(cuda.jit(device=True))

#: Largest number of threads in a block of the per-memory kernels (``finish``, ``step``); a power of two.
ROW_THREADS = 128


@cuda.jit(device=True)
def _cell(d, inner):
    """This thread's (g, b, j) in a (G, B, inner) grid, and whether it is inside it."""
    G, B, _ = d.shape
    t = cuda.grid(1)
    return t // (B * inner), (t // inner) % B, t % inner, t < G * B * inner


@cuda.jit(device=True)
def _smaller(a, b):
    """min(a, b) for numbers of any two types (plain comparisons; no NaN arrives here)."""
    return a if a <= b else b


@cuda.jit(device=True)
def _larger(a, b):
    """max(a, b), as :func:`_smaller`."""
    return a if a >= b else b


@cuda.jit(device=True)
def _net(arr, g):
    """Network g's index into a per-network (first axis G) or shared (first axis 1) array."""
    return g if arr.shape[0] > 1 else 0


@cuda.jit(device=True)
def _typed(d, n, slope):
    """(zero, one, n, slope) in the dtype of array ``d``: the kernels' typed constants
    (see :func:`scalar_kernels`)."""
    t = d.dtype.type
    return t(0), t(1), t(n), t(slope)


@cuda.jit(device=True)
def _other(bi, dv, zv, x, kind, n, nf, slope, zero, one):
    """F and F' at u' = b_in (d - w x) with w = 2 zeta (zv + zv: exact, in the data's type): neuron i flipped."""
    return f_and_df(bi * (dv - (zv + zv) * x), kind, n, nf, slope, zero, one)


@cuda.jit
def outputs(d, zeta, xs, targets, b_in, b_out, kind, n, slope, two_m, loss_terms, g_out):
    """One thread per (g, b, i): loss term (t - C)**(2m) and g = -2m (t - C)**(2m-1) (1 - C**2)."""
    g, b, i, inside = _cell(d, zeta.shape[1])
    if not inside:
        return
    zero, one, nf, sl = _typed(d, n, slope)
    bi = b_in[g]
    x = xs[_net(xs, g), b, i]
    acc = zero
    for k in range(d.shape[2]):
        fu, _ = f_and_df(bi * d[g, b, k], kind, n, nf, sl, zero, one)
        fo, _ = _other(bi, d[g, b, k], zeta[g, i, k], x, kind, n, nf, sl, zero, one)
        acc += fu - fo
    c = math.tanh(b_out[g] * x * acc)
    err = targets[_net(targets, g), b, i] - c
    loss_terms[g, b, i] = power(err, two_m, one)
    g_out[g, b, i] = -d.dtype.type(two_m) * power(err, two_m - 1, one) * (one - c * c)


@cuda.jit
def rows(d, zeta, xs, gs, b_in, kind, n, slope, r_all):
    """One thread per (g, b, mu): r = F'(u) sum_i g_i x_i - sum_i g_i x_i F'(u'_i)."""
    g, b, k, inside = _cell(d, d.shape[2])
    if not inside:
        return
    zero, one, nf, sl = _typed(d, n, slope)
    dv = d[g, b, k]
    _, dfu = f_and_df(b_in[g] * dv, kind, n, nf, sl, zero, one)
    gx_sum = zero
    acc = zero
    row = _net(xs, g)
    for i in range(zeta.shape[1]):
        x = xs[row, b, i]
        gx = gs[g, b, i] * x
        gx_sum += gx
        _, dfo = _other(b_in[g], dv, zeta[g, i, k], x, kind, n, nf, sl, zero, one)
        acc += gx * dfo
    r_all[g, b, k] = dfu * gx_sum - acc


@cuda.jit
def columns(d, zeta, xs, gs, b_in, kind, n, slope, rows_per_chunk, part):
    """One thread per (g, chunk, i, mu): 2 sum_b g_{b,i} F'(u'_{b,i,mu}) over the chunk's rows."""
    G, B, K = d.shape
    M = zeta.shape[1]
    chunks = part.shape[1]
    t = cuda.grid(1)
    if t >= G * chunks * M * K:
        return
    g = t // (chunks * M * K)
    c = (t // (M * K)) % chunks
    i = (t // K) % M
    k = t % K
    row = _net(xs, g)
    zero, one, nf, sl = _typed(d, n, slope)
    acc = zero
    for b in range(c * rows_per_chunk, _smaller(B, (c + 1) * rows_per_chunk)):
        _, dfo = _other(b_in[g], d[g, b, k], zeta[g, i, k], xs[row, b, i], kind, n, nf, sl, zero, one)
        acc += gs[g, b, i] * dfo
    part[g, c, i, k] = acc + acc  # 2 acc, exactly, in the data's type


#: Most evaluated neurons M that the row-wise loss kernels take: each thread keeps M sums in registers
#: (their loops are unrolled at compile time); above it the three kernels above run.
MAX_COLUMNS = 16
#: Warps (rows) per block of the row-wise ``outputs``.
ROW_WARPS = 4
_row_wise = {}


def row_wise_kernels(kind, n, columns, dtype):
    """``(outputs, gradient_parts)``: the row-wise loss kernels for one interaction ``(kind, n)``, M =
    ``columns`` (at most :data:`MAX_COLUMNS`) evaluated neurons and ``dtype`` (a numba float type), compiled
    once per key on first launch.

    The same sums as :func:`outputs`, :func:`rows` and :func:`columns`, in two passes over the
    (G, B, M, K) cells instead of three, one evaluation of F (or F') per cell and pass, every
    read of ``d`` coalesced. ``kind``, n and M are compile-time constants, so that F's products
    (:func:`damlite.kernels._scalar.ipow`) and the loops over the M neurons unroll, and each thread keeps
    its M sums and memory entries in registers. Arguments: ``w`` (G, M, K) = 2 zeta (exact, see
    ``gather``); the rest as in the three kernels.

    ``outputs[ceil(G B / ROW_WARPS), 32 ROW_WARPS]``: one warp per row (g, b); lane l sums
    F(u) - F(u') over mu = l, l + 32, ...; the 32 partial sums of neuron i meet in shared
    memory, where lane i adds them in a fixed order and writes the loss term and g (as
    :func:`outputs`).

    ``gradient_parts`` on one thread per (g, chunk of rows, mu), rows and columns at once: over
    the chunk's rows it writes r (as :func:`rows`: F'(u) sum_i g_i x_i - sum_i g_i x_i F'(u'_i))
    and sums 2 g_i F'(u'_i) (as :func:`columns`, in the same order: the same numbers).
    """
    key = (kind, n, columns, str(dtype))
    if key not in _row_wise:
        _row_wise[key] = _make_row_wise(kind, n, columns, dtype)
    return _row_wise[key]


def _make_row_wise(KIND, N, M, DT):  # noqa: N803 - compile-time constants of the kernels below
    if not 1 <= M <= MAX_COLUMNS:
        raise ValueError(f"columns must be in 1..{MAX_COLUMNS}, got {M}")

    @cuda.jit
    def outputs_rw(d, w, xs, targets, b_in, b_out, slope, two_m, loss_terms, g_out):
        G, B, K = d.shape
        lane = cuda.threadIdx.x % 32
        warp = cuda.threadIdx.x // 32
        cell = cuda.blockIdx.x * ROW_WARPS + warp  # the row (g, b) of this warp
        inside = cell < G * B
        g = cell // B if inside else 0
        b = cell % B
        zero, one, nf, sl = _typed(d, N, slope)
        row = _net(xs, g)
        sums = cuda.local.array(M, DT)
        xv = cuda.local.array(M, DT)
        for i in range(M):
            sums[i] = zero
        if inside:
            bi = b_in[g]
            for i in range(M):
                xv[i] = xs[row, b, i]
            for k in range(lane, K, 32):
                dv = d[g, b, k]
                fu, _ = f_and_df(bi * dv, KIND, N, nf, sl, zero, one)
                for i in range(M):
                    fo, _ = f_and_df(bi * (dv - w[g, i, k] * xv[i]), KIND, N, nf, sl, zero, one)
                    sums[i] += fu - fo
        part = cuda.shared.array((ROW_WARPS, M, 33), DT)  # 33: lane i's reads fall in distinct banks
        for i in range(M):
            part[warp, i, lane] = sums[i]
        cuda.syncthreads()
        if inside and lane < M:
            i = lane
            a0, a1, a2, a3 = zero, zero, zero, zero  # four chains, then fixed pairs: a fixed order
            for j in range(8):
                a0 += part[warp, i, j]
                a1 += part[warp, i, j + 8]
                a2 += part[warp, i, j + 16]
                a3 += part[warp, i, j + 24]
            acc = (a0 + a1) + (a2 + a3)
            x = xs[row, b, i]
            c = math.tanh(b_out[g] * x * acc)
            err = targets[_net(targets, g), b, i] - c
            loss_terms[g, b, i] = power(err, two_m, one)
            g_out[g, b, i] = -d.dtype.type(two_m) * power(err, two_m - 1, one) * (one - c * c)

    @cuda.jit
    def gradient_parts(d, w, xs, gs, b_in, slope, rows_per_chunk, r_all, part):
        G, B, K = d.shape
        chunks = part.shape[1]
        t = cuda.grid(1)
        if t >= G * chunks * K:
            return
        g = t // (chunks * K)
        c = (t // K) % chunks
        k = t % K
        zero, one, nf, sl = _typed(d, N, slope)
        row = _net(xs, g)
        bi = b_in[g]
        wk = cuda.local.array(M, DT)
        cols = cuda.local.array(M, DT)
        for i in range(M):
            wk[i] = w[g, i, k]
            cols[i] = zero
        for b in range(c * rows_per_chunk, _smaller(B, (c + 1) * rows_per_chunk)):
            dv = d[g, b, k]
            _, dfu = f_and_df(bi * dv, KIND, N, nf, sl, zero, one)
            gx_sum = zero
            acc = zero
            for i in range(M):
                x = xs[row, b, i]
                gv = gs[g, b, i]
                gx = gv * x
                gx_sum += gx
                _, dfo = f_and_df(bi * (dv - wk[i] * x), KIND, N, nf, sl, zero, one)
                acc += gx * dfo
                cols[i] += gv * dfo
            r_all[g, b, k] = dfu * gx_sum - acc
        for i in range(M):
            part[g, c, i, k] = cols[i] + cols[i]  # 2 sum, exactly, in the data's type

    return outputs_rw, gradient_parts


@cuda.jit
def gather(probes, targets, order, offset, xb, tb, bad, zeta, w):
    """The minibatch: xb[r] = probes[order[offset + r]], tb[r] = targets[order[offset + r]].

    Also clears the minibatch's non-finite flags ``bad`` (G,), which ``finish`` sets, and
    copies the evaluated neurons' memory entries ``zeta`` (G, M, K, any strides: a view of the
    memories) into ``w`` = 2 zeta (G, M, K, contiguous; exact), which the row-wise loss
    kernels read. Threads: at least max(rows (N + M), G M K, G).
    """
    t = cuda.grid(1)
    if t < bad.shape[0]:
        bad[t] = 0
    G, M, K = w.shape
    if t < G * M * K:
        v = zeta[t // (M * K), (t // K) % M, t % K]
        w[t // (M * K), (t // K) % M, t % K] = v + v
    R, N = xb.shape
    width = N + tb.shape[1]
    if t >= R * width:
        return
    r = t // width
    j = t % width
    src = order[offset + r]
    if j < N:
        xb[r, j] = probes[src, j]
    else:
        tb[r, j - N] = targets[src, j - N]


@cuda.jit(device=True)
def _block_reduce(shared, value, use_max):
    """Sum (or max) of ``value`` over the block's threads, in a fixed order; every thread gets it."""
    tid = cuda.threadIdx.x
    shared[tid] = value
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if tid < half:
            if use_max:
                shared[tid] = _larger(shared[tid], shared[tid + half])
            else:
                shared[tid] += shared[tid + half]
        cuda.syncthreads()
        half //= 2
    total = shared[0]
    cuda.syncthreads()
    return total


@cuda.jit
def finish(grad, part, colmap, scale, loss_terms, loss, bad):
    """One block per memory (g, mu): the gradient's row completed in place, its finiteness, the loss.

    grad[g, mu, j] <- scale_g (grad[g, mu, j] + sum_c part[g, c, i, mu]) where j is the
    evaluated neuron i (``colmap[j] = i``, -1 elsewhere); ``bad[g] = 1`` where an entry is
    not finite. Block g (g < G: the first blocks to start, so that this longer work overlaps
    the others) also sums network g's loss terms into ``loss[g]``, thread t over rows t, t +
    threads, ..., then across threads in a fixed order.
    """
    _, K, N = grad.shape
    g = cuda.blockIdx.x // K
    k = cuda.blockIdx.x % K
    tid = cuda.threadIdx.x
    s = scale[g]
    flag = False
    for j in range(tid, N, cuda.blockDim.x):
        v = grad[g, k, j]
        i = colmap[j]
        if i >= 0:
            extra = part[g, 0, i, k]
            for c in range(1, part.shape[1]):
                extra += part[g, c, i, k]
            v = v + extra
        v = s * v
        grad[g, k, j] = v
        flag = flag or not math.isfinite(v)
    if flag:
        bad[g] = 1  # every writer writes 1: no race on the value
    G, B, M = loss_terms.shape
    net = cuda.blockIdx.x
    if net >= G:
        return
    shared = cuda.shared.array(ROW_THREADS, dtype=float64)
    acc = 0.0
    for b in range(tid, B, cuda.blockDim.x):
        for i in range(M):
            acc += loss_terms[net, b, i]
    total = _block_reduce(shared, acc, False)
    if tid == 0:
        loss[net] = total


@cuda.jit
def step(grad, velocity, memories, loss, bad, finite, lr, momentum, floor, normalize, clamp, norms,
         epoch_loss, epoch_ok):
    """One block per memory (g, mu): the optimiser step of :mod:`damlite.training`, in place.

    ok = finite[g] and no non-finite loss or gradient entry; v <- momentum v - (grad if ok
    else 0); step = v / max(max_j |v_j|, floor) if ``normalize`` else v; zeta <- zeta + lr_g
    step, clipped to [-1, 1] where ``clamp[j]``. The block of memory 0 adds the loss to
    ``epoch_loss[g]`` (when ok) and clears ``epoch_ok[g]`` (when not). Arithmetic in the
    arrays' dtype, in the reference path's order.
    """
    _, K, N = grad.shape
    g = cuda.blockIdx.x // K
    k = cuda.blockIdx.x % K
    tid = cuda.threadIdx.x
    ok = finite[g] != 0 and bad[g] == 0 and math.isfinite(loss[g])
    t = memories.dtype.type
    lo, hi = t(-1), t(1)
    largest = t(0)
    for j in range(tid, N, cuda.blockDim.x):
        if ok:
            v = momentum * velocity[g, k, j] - grad[g, k, j]
        else:
            v = momentum * velocity[g, k, j]
        velocity[g, k, j] = v
        largest = _larger(largest, abs(v))
    shared = cuda.shared.array(ROW_THREADS, dtype=float64)
    largest = _block_reduce(shared, largest, True)
    if tid == 0:
        norms[g, k] = largest if largest > floor else floor  # exact: a value of the dtype
    cuda.syncthreads()
    denom = norms[g, k]
    rate = lr[g]
    for j in range(tid, N, cuda.blockDim.x):
        v = velocity[g, k, j]
        if normalize:
            v = v / denom
        new = memories[g, k, j] + rate * v
        if clamp[j]:
            new = _smaller(_larger(new, lo), hi)
        memories[g, k, j] = new
    if k == 0 and tid == 0:
        if ok:
            epoch_loss[g] += loss[g]
        else:
            epoch_ok[g] = 0
