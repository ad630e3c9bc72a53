"""The numba kernels behind :mod:`damlite.cpu_kernels` (imported only by it, only when numba is wanted).

Kept apart so that importing damlite never imports numba: :mod:`damlite.cpu_kernels`
imports this module on first use, inside a ``try``, after reading the off switch.
Each kernel's equations are in the docstrings of the wrappers in
:mod:`damlite.cpu_kernels`. Compiled lazily (on first call, per dtype); cached on
disk only where numba finds a writable cache directory (``cpu_kernels._cache_ok``).
"""
import math

import numba
import numpy as np

from .cpu_kernels import EXPONENTIAL, POLYNOMIAL, RECTIFIED, _cache_ok

prange = numba.prange
_CACHE = _cache_ok(numba)


def njit(fn=None, **kw):
    """numba.njit with this process's caching decision."""
    if fn is None:
        return lambda f: numba.njit(f, cache=_CACHE, **kw)
    return numba.njit(fn, cache=_CACHE, **kw)


@njit(inline="always")
def _values(x, f, df, tmp, kind, n, nf, slope, zero, one):
    """f = F(x), df = F'(x) (if want_df) for the built-in kinds, over arrays of length K.

    Each pass is one loop over K (vectorised); the power x**(n-1) is built by
    repeated squaring, the same products in the same order as
    damlite.interactions.integer_power. ``tmp`` is scratch.
    """
    K = x.shape[0]
    if kind == EXPONENTIAL:
        for k in range(K):
            e = math.exp(x[k])
            f[k] = e
            df[k] = e
        return
    for k in range(K):  # the base: r = max(x, 0) (rectified, leaky; NaN stays NaN), or x
        v = x[k]
        tmp[k] = zero if (kind != POLYNOMIAL and v <= zero) else v
    for k in range(K):
        df[k] = one
    e = n - 1
    while e:  # df <- r**(n-1)
        if e & 1:
            for k in range(K):
                df[k] *= tmp[k]
        e >>= 1
        if e:
            for k in range(K):
                tmp[k] *= tmp[k]
    if kind == POLYNOMIAL:
        for k in range(K):
            low = df[k]
            f[k] = low * x[k]
            df[k] = nf * low
    elif kind == RECTIFIED:
        for k in range(K):
            v = x[k]
            low = df[k]
            f[k] = zero if v <= zero else low * v
            df[k] = zero if v <= zero else nf * low
    else:  # LEAKY: slope * x below 0
        for k in range(K):
            v = x[k]
            low = df[k]
            f[k] = slope * v if v < zero else low * v
            df[k] = slope if v < zero else nf * low

@njit(inline="always")
def _sum_diff(a, b, zero):
    """sum_k (a[k] - b[k]) in a fixed order: blocks of 128 (in order), each summed as NumPy's
    pairwise_sum sums a block (8 running sums, combined pairwise; vectorised)."""
    K = a.shape[0]
    s = zero
    lo = 0
    while lo < K:
        n = min(128, K - lo)
        if n < 8:
            part = zero
            for k in range(lo, lo + n):
                part += a[k] - b[k]
        else:
            r0 = a[lo] - b[lo]
            r1 = a[lo + 1] - b[lo + 1]
            r2 = a[lo + 2] - b[lo + 2]
            r3 = a[lo + 3] - b[lo + 3]
            r4 = a[lo + 4] - b[lo + 4]
            r5 = a[lo + 5] - b[lo + 5]
            r6 = a[lo + 6] - b[lo + 6]
            r7 = a[lo + 7] - b[lo + 7]
            i = 8
            stop = n - n % 8
            while i < stop:
                j = lo + i
                r0 += a[j] - b[j]
                r1 += a[j + 1] - b[j + 1]
                r2 += a[j + 2] - b[j + 2]
                r3 += a[j + 3] - b[j + 3]
                r4 += a[j + 4] - b[j + 4]
                r5 += a[j + 5] - b[j + 5]
                r6 += a[j + 6] - b[j + 6]
                r7 += a[j + 7] - b[j + 7]
                i += 8
            part = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            while i < n:
                part += a[lo + i] - b[lo + i]
                i += 1
        s = part if lo == 0 else s + part
        lo += n
    return s


@njit(inline="always")
def _ipow(x, e, one):
    """x**e for an integer e >= 0 by repeated squaring."""
    result = one
    while e:
        if e & 1:
            result *= x
        e >>= 1
        if e:
            x *= x
    return result

@njit(parallel=True)
def loss_grad(d, d_g, d_b, w, xs, x_g, x_b, targets, b_in, b_out, consts, kind, n, two_m, want_grad, chunk,
              loss_part, r, grad_part):
    """Loss per (network, chunk of rows), r = sum_i g_i P_i per row, and each chunk's gradient columns.

    Row (g, b) of ``d``/``r`` is g*d_g + b*d_b, of ``xs``/``targets`` g*x_g + b*x_b
    (a shared minibatch has x_g = 0).
    """
    G, n_chunks = loss_part.shape
    M, K = w.shape[1], w.shape[2]
    B = d.shape[0] // G
    zero, one, two, nf, slope, tm = consts[0], consts[1], consts[2], consts[3], consts[4], consts[5]
    for job in prange(G * n_chunks):
        g = job // n_chunks
        c = job % n_chunks
        b0 = c * chunk
        b1 = min(B, b0 + chunk)
        bi = b_in[g]
        bo = b_out[g]
        u = np.empty(K, d.dtype)
        fu = np.empty(K, d.dtype)
        dfu = np.empty(K, d.dtype)
        other = np.empty(K, d.dtype)
        fo = np.empty(K, d.dtype)
        dfo = np.empty(K, d.dtype)
        tmp = np.empty(K, d.dtype)
        racc = np.empty(K, d.dtype)
        gp = grad_part[g, c]
        total = zero
        for b in range(b0, b1):
            rd = g * d_g + b * d_b
            rx = g * x_g + b * x_b
            for k in range(K):
                u[k] = bi * d[rd, k]
            _values(u, fu, dfu, tmp, kind, n, nf, slope, zero, one)
            sgx = zero
            for k in range(K):
                racc[k] = zero
            for i in range(M):
                x = xs[rx, i]
                for k in range(K):
                    other[k] = bi * (d[rd, k] - w[g, i, k] * x)
                _values(other, fo, dfo, tmp, kind, n, nf, slope, zero, one)
                acc = _sum_diff(fu, fo, zero)
                cc = math.tanh(bo * x * acc)
                err = targets[rx, i] - cc
                total += _ipow(err, two_m, one)
                if want_grad:
                    gi = -tm * _ipow(err, two_m - 1, one) * (one - cc * cc)
                    gx = gi * x
                    sgx += gx
                    g2 = two * gi
                    for k in range(K):
                        gp[i, k] += g2 * dfo[k]
                        racc[k] -= gx * dfo[k]
            if want_grad:
                for k in range(K):
                    r[rd, k] = racc[k] + dfu[k] * sgx
        loss_part[g, c] = total

@njit(parallel=True)
def relax(mem_t, d0, d_g, d_b, states, orders, scale, consts, kind, n, zero_sign, max_sweeps, sweeps_used,
          converged, nan_seen):
    """Asynchronous sweeps of each (network, state) until a sweep flips nothing."""
    G, N, K = mem_t.shape
    B = states.shape[1]
    zero, one, two, nf, slope = consts[0], consts[1], consts[2], consts[3], consts[4]
    for job in prange(G * B):
        g = job // B
        b = job % B
        a = scale[g]
        d = np.empty(K, mem_t.dtype)
        other = np.empty(K, mem_t.dtype)
        arg = np.empty(K, mem_t.dtype)
        f_ad = np.empty(K, mem_t.dtype)
        f_other = np.empty(K, mem_t.dtype)
        df = np.empty(K, mem_t.dtype)
        tmp = np.empty(K, mem_t.dtype)
        row = g * d_g + b * d_b
        for k in range(K):
            d[k] = d0[row, k]
            arg[k] = a * d[k]
        _values(arg, f_ad, df, tmp, kind, n, nf, slope, zero, one)
        used = max_sweeps
        stable = False
        for s in range(max_sweeps):
            changed = False
            for t in range(N):
                i = orders[g, s, t]
                x = states[g, b, i]
                two_x = two * x
                for k in range(K):
                    o = d[k] - two_x * mem_t[g, i, k]
                    other[k] = o
                    arg[k] = a * o
                _values(arg, f_other, df, tmp, kind, n, nf, slope, zero, one)
                delta = x * _sum_diff(f_ad, f_other, zero)
                if not math.isfinite(delta):
                    nan_seen[job] = True
                if delta > zero:
                    new = one
                elif delta < zero:
                    new = -one
                elif zero_sign == 0:
                    new = x
                else:  # 0, or NaN: the tie value, as the NumPy lean loop
                    new = one if zero_sign > 0 else -one
                if new != x:
                    changed = True
                    states[g, b, i] = new
                    for k in range(K):
                        d[k] = other[k]
                        f_ad[k] = f_other[k]
            if not changed:
                used = s + 1
                stable = True
                break
        sweeps_used[job] = used
        converged[job] = stable

@njit(parallel=True)
def step(memories, velocity, grad, ok, lr, consts, normalize, clamp_start, clamp_stop):
    """v <- momentum v - grad (0 where not ok); zeta <- clip(zeta + lr v / max|v|) per memory, in place."""
    G, K, N = memories.shape
    zero, one, momentum, floor, lo, hi = consts[0], consts[1], consts[2], consts[3], consts[4], consts[5]
    for job in prange(G * K):
        g = job // K
        k = job % K
        use = ok[g]
        norm = zero
        for j in range(N):
            v = momentum * velocity[g, k, j] - (grad[g, k, j] if use else zero)
            velocity[g, k, j] = v
            a = abs(v)
            if a > norm or a != a:  # max(|v|) with NaN propagating, as numpy.max
                norm = a if norm == norm else norm
        if not normalize:
            norm = one
        elif not norm > floor:
            norm = floor
        rate = lr[g]
        for j in range(N):
            z = memories[g, k, j] + rate * (velocity[g, k, j] / norm)
            if clamp_start <= j < clamp_stop:
                z = lo if z < lo else (hi if z > hi else z)
            memories[g, k, j] = z

@njit(parallel=True)
def all_finite(x, out):
    """out[g] = every entry of x[g] (a (G, R) array) is finite."""
    G, R = x.shape
    for g in prange(G):
        ok = True
        for j in range(R):
            ok &= math.isfinite(x[g, j])
        out[g] = ok

