"""The three kernels of :mod:`damlite.gpu_kernels`, imported on first use (it imports numba.cuda).

Module-level definitions, so that numba's CUDA simulator can run them on NumPy arrays.
"""
import math

from numba import config, cuda

from .gpu_kernels import scalar_kernels

# Small test grids under-fill a GPU on purpose; numba would warn at every launch.
config.CUDA_LOW_OCCUPANCY_WARNINGS = False

power, f_and_df = scalar_kernels(cuda.jit(device=True))


@cuda.jit
def outputs(d, w, xs, targets, b_in, b_out, kind, n, slope, two_m, loss_terms, g_out):
    G, B, K = d.shape
    M = w.shape[1]
    t = cuda.grid(1)
    if t >= G * B * M:
        return
    g = t // (B * M)
    b = (t // M) % B
    i = t % M
    bi = b_in[g]
    x = xs[g, b, i]
    acc = 0.0
    for k in range(K):
        fu, _ = f_and_df(bi * d[g, b, k], kind, n, slope)
        fo, _ = f_and_df(bi * (d[g, b, k] - w[g, i, k] * x), kind, n, slope)
        acc += fu - fo
    c = math.tanh(b_out[g] * x * acc)
    err = targets[g, b, i] - c
    loss_terms[g, b, i] = power(err, two_m)
    g_out[g, b, i] = -two_m * power(err, two_m - 1) * (1.0 - c * c)

@cuda.jit
def rows(d, w, xs, gs, b_in, kind, n, slope, r_all):
    G, B, K = d.shape
    M = w.shape[1]
    t = cuda.grid(1)
    if t >= G * B * K:
        return
    g = t // (B * K)
    b = (t // K) % B
    k = t % K
    bi = b_in[g]
    dv = d[g, b, k]
    _, dfu = f_and_df(bi * dv, kind, n, slope)
    sgx = 0.0
    acc = 0.0
    for i in range(M):
        x = xs[g, b, i]
        gx = gs[g, b, i] * x
        sgx += gx
        _, dfo = f_and_df(bi * (dv - w[g, i, k] * x), kind, n, slope)
        acc += gx * dfo
    r_all[g, b, k] = dfu * sgx - acc

@cuda.jit
def columns(d, w, xs, gs, b_in, kind, n, slope, rows_per_chunk, part):
    G, B, K = d.shape
    M = w.shape[1]
    chunks = part.shape[1]
    t = cuda.grid(1)
    if t >= G * chunks * M * K:
        return
    g = t // (chunks * M * K)
    c = (t // (M * K)) % chunks
    i = (t // K) % M
    k = t % K
    bi = b_in[g]
    wv = w[g, i, k]
    acc = 0.0
    for b in range(c * rows_per_chunk, min(B, (c + 1) * rows_per_chunk)):
        x = xs[g, b, i]
        _, dfo = f_and_df(bi * (d[g, b, k] - wv * x), kind, n, slope)
        acc += gs[g, b, i] * dfo
    part[g, c, i, k] = 2.0 * acc
