"""The numba kernels behind :mod:`damlite.kernels.cpu_kernels` (imported only by it, only when numba is wanted).

Kept apart so that importing damlite never imports numba: :mod:`damlite.kernels.cpu_kernels`
imports this module on first use, inside a ``try``, after reading the off switch.
Each kernel's equations are in the docstrings of the wrappers in
:mod:`damlite.kernels.cpu_kernels`. Compiled lazily (on first call, per dtype); cached on
disk only where numba finds a writable cache directory (:func:`_cache_ok`).
"""
import math
import os
import sys
import threading

import numba
import numba.core.event
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ._scalar import EXPONENTIAL, LEAKY, POLYNOMIAL, RECTIFIED


def _probe():  # pragma: no cover - never called: numba's cache locator is asked where it would cache it
    return 0


def _cache_ok(nb) -> bool:
    """True where numba finds a writable cache directory (else: compile in memory, each process)."""
    try:
        nb.njit(cache=True)(_probe)  # raises "no locator available" where nothing is writable
        return True
    except Exception:  # noqa: BLE001
        return False


_CACHE = _cache_ok(numba)


def cache_dir():
    """The directory where numba caches these kernels (``__pycache__`` beside this file, or under
    ``$NUMBA_CACHE_DIR``), or None where they are not cached."""
    if not _CACHE:
        return None
    try:
        from numba.core.caching import FunctionCache  # noqa: PLC0415

        return FunctionCache(_probe)._cache_path
    except Exception:  # noqa: BLE001 - numba's internals moved: no hint
        return None


def cache_hint() -> str:
    """What to do when the kernels fail on every run: numba's on-disk cache may be damaged; how to clear it."""
    where = cache_dir()
    if where is None:
        return ""
    import os  # noqa: PLC0415

    return (f" If this comes back on every run, numba's on-disk cache may be damaged: delete "
            f"{os.path.join(where, '_cpu_numba.*.nbi')} and .nbc (numba compiles the kernels again).")


def _quiet() -> bool:
    """``DAMLITE_QUIET`` on (:func:`damlite.backend.env_flag`; a value it refuses counts as off here: the
    switches are checked where damlite starts, not in the middle of a compilation)."""
    from ..backend import env_flag  # noqa: PLC0415

    try:
        return env_flag("DAMLITE_QUIET")
    except ValueError:
        return False


def _cached_kernels(where, dtype=None) -> bool:
    """True where the cache directory ``where`` holds an index of this module's kernels written after this
    file last changed (numba's cache keys each index by the source file's time stamp and size); with ``dtype``
    (a name, "float32"), one that holds a kernel taking arrays of that dtype (the index's pickled signatures,
    read as numba reads them: a version, then the time stamp and the overloads)."""
    try:
        source = os.stat(__file__).st_mtime
        with os.scandir(where) as entries:
            fresh = [e.path for e in entries if e.name.startswith(__name__.rsplit(".", 1)[1] + ".")
                     and e.name.endswith(".nbi") and e.stat().st_mtime >= source]
    except OSError:  # no such directory yet: nothing cached
        return False
    if dtype is None or not fresh:
        return bool(fresh)
    import pickle  # noqa: PLC0415 - numba's own cache index format

    for path in fresh:
        try:
            with open(path, "rb") as f:
                pickle.load(f)  # numba's version
                _, overloads = pickle.loads(f.read())
        except Exception:  # noqa: BLE001 - an index numba would not read either: not counted
            continue
        for key in overloads:  # numba's key: (the argument types, the target, hashes of the code)
            sig = key[0] if isinstance(key, tuple) and key and isinstance(key[0], tuple) else ()
            if any(isinstance(t, numba.types.Array) and str(t.dtype) == dtype for t in sig):
                return True
    return False


class _FirstCompile(numba.core.event.Listener):
    """One line on stderr, at most once per process, when numba starts compiling these kernels for a dtype
    (float64, float32) into a cache that holds none of them for it (the first run, the first float32 fit, or
    the first after damlite changed), or into none (no writable cache).

    numba announces a ``numba:compile`` event only where it compiles, not where it loads a kernel from its
    on-disk cache. A cache that already holds kernels of that dtype compiles the others (another interaction
    or bit length of n - 1, a few seconds each) without a word. Silent with ``DAMLITE_QUIET``.
    """

    def __init__(self):
        self.seen = set()  # the dtypes (None: no float array) whose kernels were looked up in this process
        self.said = False  # one line per process at most
        self.lock = threading.Lock()

    def on_start(self, event):
        data = event.data if isinstance(event.data, dict) else {}
        dispatcher = data.get("dispatcher")
        if getattr(getattr(dispatcher, "py_func", None), "__module__", None) != __name__:
            return
        dtype = next((str(a.dtype) for a in data.get("args") or ()
                      if isinstance(a, numba.types.Array) and isinstance(a.dtype, numba.types.Float)), None)
        where = getattr(getattr(dispatcher, "_cache", None), "cache_path", None)
        with self.lock:
            if self.said or dtype in self.seen:
                return
            self.seen.add(dtype)
            if _quiet():
                return
            anything = bool(where) and _cached_kernels(where)
            if anything and (dtype is None or _cached_kernels(where, dtype)):
                return
            self.said = True
        what = f"the CPU kernels for {dtype}" if anything else "the CPU kernels"
        print(f"damlite: compiling {what} with numba" + (
            f", once (~5-15 s); cached in {where}" if where else
            " (~5-15 s); no writable cache directory, so every process compiles them (set NUMBA_CACHE_DIR)"),
            file=sys.stderr, flush=True)

    def on_end(self, event):
        pass


numba.core.event.register("numba:compile", _FirstCompile())


_cache_failed = []  # why numba's on-disk cache failed in this process (once it has)


class _TolerantCache:
    """numba's on-disk cache of one kernel (``cache``), where a failure to read or write it (a full or read-only
    disk, a damaged index) compiles the kernel in memory instead of failing the call: the kernel runs, only
    the next process compiles it again. One :class:`~damlite.kernels.cpu_kernels.CpuKernelsWarning` per process
    says why; everything else is numba's cache's own."""

    def __init__(self, cache):
        self._cache = cache

    def __getattr__(self, name):
        return getattr(self._cache, name)

    def load_overload(self, sig, target_context):
        try:
            return self._cache.load_overload(sig, target_context)
        except Exception as exc:  # noqa: BLE001 - a cache that cannot be read: compile
            _cache_failure("read", exc)
            return None

    def save_overload(self, sig, cres):
        try:
            self._cache.save_overload(sig, cres)
        except Exception as exc:  # noqa: BLE001 - the compiled kernel is in memory already: it runs
            _cache_failure("write", exc)


def _cache_failure(what, exc):
    """Note (once per process, one warning) that numba's on-disk cache could not be read or written."""
    if _cache_failed:
        return
    first = (str(exc).strip().splitlines() or [""])[0]
    _cache_failed.append(f"{type(exc).__name__}: {first}")
    import warnings  # noqa: PLC0415

    # cpu_kernels imports this module (and is loaded first): its warning class, without an import circle
    CpuKernelsWarning = sys.modules[__name__.rsplit(".", 1)[0] + ".cpu_kernels"].CpuKernelsWarning  # noqa: N806

    warnings.warn(f"numba could not {what} its on-disk cache of damlite's CPU kernels ({_cache_failed[0]}); they "
                  f"compile in memory in this process (same results; the next process compiles them again)."
                  f"{cache_hint()}", CpuKernelsWarning, stacklevel=2)


def njit(fn=None, **kw):
    """numba.njit with this process's caching decision (a cache that fails compiles in memory:
    :class:`_TolerantCache`), NumPy's error model (a float division by zero gives inf or NaN (IEEE), as in
    the NumPy path, not a ZeroDivisionError) and no fastmath flags unless given.

    The flags are always stated: numba compiles a function that states none with the fastmath flags of the caller
    that first needs it, and keeps that build for every later caller with the same argument types (and in its
    on-disk cache). :func:`_flip_slow` and :func:`_tanh`, called from the loss kernels (``reassoc``) and, for
    :func:`_flip_slow`, from relaxation (none), were built either way, so a fit's last bits depended on what the
    process (or the one that filled the cache) had compiled first (tests/test_cpu_kernels.py).
    """
    kw.setdefault("error_model", "numpy")
    kw.setdefault("fastmath", False)

    def build(f):
        dispatcher = numba.njit(f, cache=_CACHE, **kw)
        if _CACHE and hasattr(dispatcher, "_cache"):
            dispatcher._cache = _TolerantCache(dispatcher._cache)
        return dispatcher
    return build if fn is None else build(fn)


#: The dtypes whose loss kernel asks LLVM for 512-bit vectors (:func:`_wide_vectors`).
WIDE_DTYPES = frozenset({"float64"})


@intrinsic
def _wide_vectors(typingctx, arr):
    """Ask LLVM to vectorise the calling function with 512-bit registers where the CPU has them, if ``arr``'s
    dtype is in :data:`WIDE_DTYPES` (a compile-time choice; nothing runs).

    LLVM keeps to 256-bit vectors on AVX-512 CPUs by default (``prefer-vector-width``) and takes a
    per-function ``"prefer-vector-width"="512"`` attribute; numba offers no option for it, so this
    adds the attribute to the function being lowered. It is a hint: a CPU without AVX-512 ignores it,
    and if llvmlite's attribute set ever refuses it, nothing is added (tests/test_cpu_kernels.py checks that
    it arrives). Measured on a 2-core AVX-512 Xeon (bench/HISTORY.md; 2026-11-27, commit e24b5ae): the float64
    loss kernel's passes over K = 100 memories 1.24-1.57x faster; float32 with K = 100 slower (its 16-lane loop
    leaves a long remainder), so float32 keeps 256 bits.
    """
    def codegen(context, builder, sig, args):
        if str(sig.args[0].dtype) in WIDE_DTYPES:
            try:
                set.add(builder.function.attributes, '"prefer-vector-width"="512"')
            except Exception:  # noqa: BLE001, S110 - a hint only
                pass
        return context.get_dummy_value()
    return types.none(arr), codegen


@intrinsic
def _abs_bits(typingctx, x):
    """The bit pattern of |x| (a float32 or float64) as a signed integer of its width: the sign bit cleared.

    Non-negative floats order as their patterns, and every NaN's pattern orders above inf's, so an
    integer maximum of these patterns is the pattern of max |x|, or of a NaN if any x is NaN, as
    numpy.max gives; and an integer maximum is a reduction LLVM vectorises without fastmath (a float
    maximum that keeps NaNs it does not).
    """
    if not isinstance(x, types.Float):
        return None
    width = x.bitwidth

    def codegen(context, builder, sig, args):
        bits = builder.bitcast(args[0], ir.IntType(width))
        return builder.and_(bits, ir.Constant(ir.IntType(width), (1 << (width - 1)) - 1))
    return types.int64(x) if width == 64 else types.int32(x), codegen


@intrinsic
def _from_bits(typingctx, bits, like):
    """The float of ``like``'s type whose bit pattern is ``bits`` (the inverse of :func:`_abs_bits` on its values)."""
    if not (isinstance(like, types.Float) and isinstance(bits, types.Integer) and bits.bitwidth == like.bitwidth):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(sig.return_type))
    return like(bits, like), codegen


@intrinsic
def _prefetch(typingctx, arr, i, j):
    """Ask the CPU to fetch the cache line of ``arr[i, j]`` (a 2-D array) into every level of its cache, to be read
    soon (``llvm.prefetch``: a hint; it reads nothing, cannot fault, and changes no value).

    The gather's source rows are rows of a large array in a random order: a row read cold waits on memory, and
    the CPU's own prefetcher learns a row's lines only once it is being read. Measured (bench/HISTORY.md,
    2026-11-29), one thread, MNIST: the float64 gather from 1-byte codes with each row's codes fetched two rows
    ahead took 0.76x the time back to back (31.7 against 41.6 ms an epoch; 1, 2, 4 or 8 rows ahead the same) and
    0.85x within Krotov's epochs (42.5 against 50.2 ms, 14 of 15 alternating rounds): ~1.5 % of the epoch. Rows
    copied as they are (float32 ones, 3 KB each, before they too were read from codes) gained nothing (1.02x), so
    only the codes are fetched ahead.
    """
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(i, types.Integer)
            and isinstance(j, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        aty = sig.args[0]
        ary = context.make_array(aty)(context, builder, args[0])
        index = [context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], sig.args[1:])]
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, index)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")
        # read (0), keep in every level (3), data cache (1)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return types.none(arr, i, j), codegen


#: How many rows ahead :func:`gather` fetches a row's codes and targets (:func:`_prefetch`; float64 from codes only).
PREFETCH_ROWS = 2


@njit(inline="always")
def _ipow_lanes(base, out, e, n):
    """out[j] *= base[j]**e for j < n by repeated squaring, a vectorised pass per step (``base`` is overwritten):
    the products of ``_scalar.ipow`` in its order, for each j."""
    while e:
        if e & 1:
            for j in range(n):
                out[j] *= base[j]
        e >>= 1
        if e:
            for j in range(n):
                base[j] *= base[j]


@njit(inline="always")
def _values(x, f, df, tmp, kind, n, nf, slope, zero, one, flush):
    """f = F(x), df = F'(x) (if want_df) for the built-in kinds, over arrays of length K.

    Each pass is one loop over K (vectorised); the power x**(n-1) is built by
    repeated squaring, the same products in the same order as
    damlite.interactions.integer_power. Where |x| < ``flush`` (x**n would be below
    the dtype's smallest normal number) the base is 0: no subnormal number arises,
    which keeps float32 at full speed. ``tmp`` is scratch.
    """
    K = x.shape[0]
    if kind == EXPONENTIAL:
        for k in range(K):
            e = math.exp(x[k])
            f[k] = e
            df[k] = e
        return
    for k in range(K):  # the base: r = max(x, 0) (rectified, leaky; NaN stays NaN), or x; 0 where r**(n-1) underflows
        v = x[k]
        tmp[k] = zero if ((kind != POLYNOMIAL and v <= zero) or abs(v) < flush) else v
    for k in range(K):
        df[k] = one
    _ipow_lanes(tmp, df, n - 1, K)  # df <- r**(n-1)
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
def _sum_block(a, b, lo, n, acc, zero):
    """sum_{k in [lo, lo+n)} (a[k] - b[k]) as NumPy's pairwise_sum sums a block of n <= 128:
    8 running sums (in ``acc``), combined pairwise, then the rest in order."""
    if n < 8:
        s = zero
        for k in range(lo, lo + n):
            s += a[k] - b[k]
        return s
    for j in range(8):
        acc[j] = a[lo + j] - b[lo + j]
    stop = lo + n - n % 8
    for i in range(lo + 8, stop, 8):
        for j in range(8):
            acc[j] += a[i + j] - b[i + j]
    s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
    for i in range(stop, lo + n):
        s += a[i] - b[i]
    return s


@njit(inline="always")
def _sum_diff(a, b, acc, zero):
    """sum_k (a[k] - b[k]) in a fixed order: blocks of 128 in order, each as :func:`_sum_block`."""
    K = a.shape[0]
    s = zero
    for lo in range(0, max(K, 1), 128):  # one call site (see _f_df); K = 0: one empty block, 0
        block = _sum_block(a, b, lo, min(128, K - lo), acc, zero)
        s = block if lo == 0 else s + block
    return s


@njit(inline="always")
def _power_bits(r, n1, one, NB, top=False):
    """r**n1 for 0 <= n1 < 2**NB by repeated squaring, branch-free: the same products in the
    same order as damlite.interactions.integer_power (unused steps multiply by 1, exactly).

    ``top`` (a constant at each call site): n1's highest set bit is bit NB - 1, so every squaring is
    used and the last product needs no select."""
    low = one * (r if n1 & 1 else one)
    p = r
    for j in range(1, NB):  # NB is a constant at each call site: unrolled, vectorisable
        if top:
            p = p * p
            low = low * (p if (j == NB - 1 or (n1 >> j) & 1) else one)
        else:
            p = p * (p if (n1 >> j) else one)
            low = low * (p if (n1 >> j) & 1 else one)
    return low


@njit(inline="always")
def _f_df(o, kind, n1, nf, slope, zero, one, flush, NB, rect=False, top=False):
    """F(o), F'(o) of the polynomial kinds, branch-free in the kind (selects): the base r = max(o, 0)
    (rectified, leaky; NaN stays NaN) or o, 0 where r**(n-1) would be below the dtype's smallest
    normal number (|o| < ``flush``); r**(n-1) by :func:`_power_bits`; the leaky kinds slope * o below 0.

    ``rect`` (a constant at each call site, True only for the rectified kind with n >= 2, where ``flush`` > 0):
    a shorter form with the same values: r = 0 where o < flush (NaN stays NaN), and F = r**(n-1) r,
    F' = n r**(n-1), which are 0 where r is, without selects. A constant, not a test of ``kind`` and ``n1``:
    where those are run-time values (relaxation) such a test would stay in the loop (measured 1.5-2x slower).
    """
    if rect:
        r = zero if o < flush else o
    else:
        r = zero if ((kind != POLYNOMIAL and o <= zero) or abs(o) < flush) else o
    low = _power_bits(r, n1, one, NB, top)  # one call site: numba copies an inlined function's IR at each one
    if rect:
        return low * r, nf * low
    below = kind == LEAKY and o < zero
    f = slope * o if below else low * r
    return f, (slope if below else (zero if (kind == RECTIFIED and o <= zero) else nf * low))


@njit(inline="always")
def _pass_nb(d, rd, w, wi, x, scale, fu, oth, fo, dfo, di, kind, n1, nf, slope, zero, one, flush, NB, fused,
             rect=False, top=False):
    """One vectorised pass over the K memories for one neuron's flipped sign (:func:`_relax_one`, the loss kernels).

    Straight-line code (:func:`_f_df`), ``NB`` and ``fused`` constants at each call site.
    ``fused``: return sum_k [fu_k - F(o_k)] summed in the loop (vector lanes: the caller is
    compiled with fastmath reassoc) and store only F'; else store oth, F and F' and return 0.
    The K = len(fu) memories' d are row ``rd`` of ``d``, their w row ``wi`` of ``w``, their F' go to row ``di`` of
    ``dfo`` (rows indexed, not sliced: no array is made per pass).
    """
    s = zero
    for k in range(fu.shape[0]):
        o_raw = d[rd, k] - w[wi, k] * x
        f, dfo[di, k] = _f_df(scale * o_raw, kind, n1, nf, slope, zero, one, flush, NB, rect, top)
        if fused:
            s += fu[k] - f
        else:
            oth[k] = o_raw
            fo[k] = f
    return s


@njit(inline="always")
def _flip_any(drow, wi, x, scale, fu, oth, fo, dfo, scratch, kind, n, nf, slope, zero, one, flush):
    """A neuron's flip for any kind and n by a pass per step (:func:`_flip_slow`): oth = d - w x, fo = F(scale oth),
    dfo = F'(scale oth), and sum_k [fu_k - fo_k] in :func:`_sum_diff`'s fixed order."""
    for k in range(drow.shape[0]):
        oth[k] = drow[k] - wi[k] * x
    return _flip_slow(oth, scale, fu, fo, dfo, scratch, kind, n, nf, slope, zero, one, flush)


@njit
def _flip_slow(oth, scale, fu, fo, dfo, scratch, kind, n, nf, slope, zero, one, flush):
    K = oth.shape[0]
    arg, tmp = scratch[0, :K], scratch[1, :K]
    for k in range(K):
        arg[k] = scale * oth[k]
    _values(arg, fo, dfo, tmp, kind, n, nf, slope, zero, one, flush)
    return _sum_diff(fu, fo, scratch[0, :8], zero)




@njit(inline="always")
def _own_pass(d, rd, scale, fu, dfu, kind, n1, nf, slope, zero, one, flush, NB, rect=False, top=False):
    """fu = F(scale d), dfu = F'(scale d) over the K = len(fu) memories (the neuron's own sign; d: row ``rd`` of
    ``d``), one vectorised pass.

    The same operations as :func:`_pass_nb` with w x = 0 (d - 0 is d exactly), so the
    values are those of the flipped passes' formula.
    """
    for k in range(fu.shape[0]):
        fu[k], dfu[k] = _f_df(scale * d[rd, k], kind, n1, nf, slope, zero, one, flush, NB, rect, top)


#: tanh x = x + x z P(z) / Q(z), z = x**2, on |x| < 0.625: the rational form and coefficients of
#: S. L. Moshier's Cephes library (P of degree 2, Q monic of degree 3).
_TANH_P = (-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3)
_TANH_Q = (1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3)
#: 1 / j! for j = 0 .. 13.
_INV_FACTORIALS = tuple(1.0 / math.factorial(j) for j in range(14))
#: ln 2 in two parts (the first with its low 32 bits zero, so that k ln2_hi is exact), and 1 / ln 2.
_LN2_HI, _LN2_LO, _INV_LN2 = 6.93147180369123816490e-01, 1.90821492927058770002e-10, 1.44269504088896338700e00


@njit
def _tanh(v):
    """tanh(v) in float64 arithmetic, straight-line code (selects only), so that a loop of calls vectorises.

    |v| < 0.625: v + v z P(z)/Q(z) with z = v**2 (:data:`_TANH_P`, :data:`_TANH_Q`); else
    sign(v) (1 - 2 / (e**(2|v|) + 1)), with e**y = 2**k e**r, k = round(y / ln 2),
    r = y - k ln 2 (two parts), e**r = 1 + r + r**2 sum_{j=0}^{11} r**j / (j + 2)! (|r| <= ln2 / 2,
    truncation below 1e-17 relative), 2**k exact from an integer shift; 1 for |v| > 19.1 (tanh
    rounds to 1 there); NaN stays NaN, -0.0 stays -0.0. Measured against mpmath (tests/test_cpu_kernels.py):
    within 1.3 units in the last place (the C library's tanh: 2.1), and ~3.7 ns a value in a loop
    against the C library's 20-28 ns per call, which also keeps a loop out of the vector lanes (a
    Krotov-config epoch: 0.02 s less, bench/HISTORY.md). Compiled without fastmath flags (stated, :func:`njit`), and
    called (not inlined by numba), so that the caller's ``reassoc`` cannot regroup these sums (LLVM keeps each
    instruction's flags).
    """
    x = np.float64(v)
    a = abs(x)
    z = x * x
    p = (_TANH_P[0] * z + _TANH_P[1]) * z + _TANH_P[2]
    q = ((z + _TANH_Q[0]) * z + _TANH_Q[1]) * z + _TANH_Q[2]
    small = x + x * (z * (p / q))
    small = x if x == 0.0 else small  # -0.0 (the sum would give +0.0)
    y = a + a
    y = y if y < 40.0 else 40.0  # also NaN and inf: the integer steps below stay defined
    kf = math.floor(y * _INV_LN2 + 0.5)
    r = (y - kf * _LN2_HI) - kf * _LN2_LO
    c = _INV_FACTORIALS[13]  # Horner down to 1/2!, written out (a loop over the tuple stays a loop)
    c = c * r + _INV_FACTORIALS[12]
    c = c * r + _INV_FACTORIALS[11]
    c = c * r + _INV_FACTORIALS[10]
    c = c * r + _INV_FACTORIALS[9]
    c = c * r + _INV_FACTORIALS[8]
    c = c * r + _INV_FACTORIALS[7]
    c = c * r + _INV_FACTORIALS[6]
    c = c * r + _INV_FACTORIALS[5]
    c = c * r + _INV_FACTORIALS[4]
    c = c * r + _INV_FACTORIALS[3]
    c = c * r + _INV_FACTORIALS[2]
    e = np.float64(np.int64(1) << np.int64(kf)) * (1.0 + (r + (r * r) * c))
    big = 1.0 - 2.0 / (e + 1.0)  # each value computed, then selected: no branch in the loop
    big = 1.0 if a > 19.1 else big
    big = math.copysign(big, x)
    big = x if x != x else big
    return small if a < 0.625 else big


def _loss_grad_kernel(KIND, L):
    """The loss kernel for the polynomial kind ``KIND`` with an exponent n whose n - 1 has ``L`` bits (n <= 128):
    for each row, :func:`_own_pass` and each evaluated neuron's :func:`_pass_nb` with the kind and the bit length
    constants, so each pass is straight-line vector code with the L - 1 squarings of x**(n-1) unrolled and only the
    lower bits' products selected at run time (``top``); one compile per (kind, bit length, dtype), cached on disk
    (numba keys a closure's cache entry by the values it captures). n = 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65-128
    share a kernel, and every n runs it, whatever the computation's size, so a fit's bits depend on the fit alone.
    With ``KIND`` None: the kernel for any kind and n (:func:`_flip_any`, a pass per step: the exponential and
    n > 128). Measured against kernels compiled per n (bench/HISTORY.md, 2026-11-29 later entry): within the noise.
    Then the row's outputs C_i = tanh(b_out x_i accs_i) (:func:`_tanh`), its loss and, with ``want_grad``, its
    gradient parts: the neurons whose error counts (not flushed) get g_i = -2m e_i^(2m-1) (1 - C_i^2) (the powers
    of all M errors step by step in vector lanes, :func:`_ipow_lanes`), then gp[i] += 2 g_i F'(u'_i) and
    r = sum_i -g_i x_i F'(u'_i) + F'(u) sum_i g_i x_i, two neurons per pass over the K memories (the same sums in
    the same order as one at a time, with half the reads and writes of r).

    The passes are inlined in the kernel's own body, not through a function that inlines them: numba inlines a
    function by copying its IR block by block, each block's copy with all the function's variables, so a level of
    inlining that holds other inlined passes multiplies their cost (a loss kernel compiled in ~3.5 s with that
    level, ~2 s without, on this project's 2-core machine; the same operations in the same order). The row's outputs
    are written out here too: as an inlined function (one build per dtype before, for the compile time) numba kept a
    reference count per array argument at every row, ~20 atomic operations a row: with them written out the
    kernel ran Krotov's minibatches in 0.81x the time (float32 0.84x), bitwise the same (bench/HISTORY.md).

    The kernel runs the (network, chunk of rows) jobs ``j_lo`` to ``j_hi`` (job g n_chunks + c), releasing
    the GIL: :func:`damlite.kernels.cpu_kernels.run_parts` spreads the jobs over threads. It is compiled with fastmath
    ``reassoc`` only (no assumption about NaN or inf): sums over the memories run in
    vector lanes, in an order fixed by the compiled code, not by the thread count. Each
    work array is its own allocation (no aliasing for the vectoriser to guard against).
    """
    ANY = KIND is None
    KIND_ = RECTIFIED if ANY else KIND
    TOP = not ANY and L >= 1  # n >= 2: bit L - 1 of n - 1 is set
    NB = L if TOP else 1
    RECT = TOP and KIND_ == RECTIFIED  # the shorter rectified F, F' (see _f_df)

    @njit(nogil=True, fastmath={"reassoc"})
    def kernel(d, d_g, d_b, w, xs, x_g, x_b, targets, b_in, b_out, consts, kind, n, two_m, want_grad, chunk,
               loss_part, r, grad_part, j_lo, j_hi):
        _wide_vectors(d)
        G, n_chunks = loss_part.shape
        B = d.shape[0] // G
        M, K = w.shape[1], w.shape[2]
        zero, one, nf, slope, flush, tiny = consts[0], consts[1], consts[3], consts[4], consts[6], consts[8]
        two, tm, err_flush = consts[2], consts[5], consts[7]
        dt = d.dtype
        fu, dfu, racc, oth, fo = np.empty(K, dt), np.empty(K, dt), np.empty(K, dt), np.empty(K, dt), np.empty(K, dt)
        dfo = np.empty((M, K), dt)  # F'(u') of the row's evaluated neurons
        accs, cs = np.empty(M, dt), np.empty(M, dt)  # sums, then g_i; the outputs C_i
        errs, base, lows = np.empty(M, dt), np.empty(M, dt), np.empty(M, dt)  # e_i, and e_i**(2m-1) in steps
        act = np.empty(M, np.int64)  # the neurons whose error counts
        scratch, zeros = np.zeros((2, max(K, 8)), dt), np.zeros(K, dt)
        for job in range(j_lo, j_hi):
            g = job // n_chunks
            c = job % n_chunks
            wg, bi, gp = w[g], b_in[g], grad_part[g, c]
            total = zero
            for b in range(c * chunk, min(B, (c + 1) * chunk)):
                row = g * d_g + b * d_b
                rx = g * x_g + b * x_b
                if not ANY:  # the own pass, then each evaluated neuron's flipped pass, straight-line vector code
                    _own_pass(d, row, bi, fu, dfu, KIND_, n - 1, nf, slope, zero, one, flush, NB, RECT, TOP)
                    for i in range(M):
                        accs[i] = _pass_nb(d, row, wg, i, xs[rx, i], bi, fu, oth, fo, dfo, i, KIND_, n - 1, nf, slope,
                                           zero, one, flush, NB, True, RECT, TOP)
                else:  # a pass per step, summed in _sum_diff's fixed order (zeros: w x = 0 for the own sign)
                    drow = d[row]
                    _flip_any(drow, zeros, zero, bi, zeros, oth, fu, dfu, scratch, kind, n, nf, slope, zero, one,
                              flush)
                    for i in range(M):
                        accs[i] = _flip_any(drow, wg[i], xs[rx, i], bi, fu, oth, fo, dfo[i], scratch, kind, n, nf,
                                            slope, zero, one, flush)
                # the row's outputs C_i = tanh(b_out x_i accs_i), its loss and, if want_grad, its gradient parts
                bo = b_out[g]
                for i in range(M):  # a loop of its own, vectorised
                    cs[i] = _tanh(bo * xs[rx, i] * accs[i])
                row_loss = zero
                sgx = zero
                na = 0
                for i in range(M):  # e_i**(2m-1) in vector lanes (_ipow_lanes)
                    err = targets[rx, i] - cs[i]  # (base 0 where the error is flushed: no subnormal powers)
                    errs[i], base[i], lows[i] = err, (zero if abs(err) < err_flush else err), one
                _ipow_lanes(base, lows, two_m - 1, M)
                for i in range(M):
                    x = xs[rx, i]
                    cc = cs[i]
                    err = errs[i]
                    if abs(err) < err_flush:  # err**(2m-1) would be subnormal: 0 (and nothing to add)
                        continue
                    e_low = lows[i]
                    row_loss += e_low * err
                    if want_grad:
                        gi = -tm * e_low * (one - cc * cc)
                        sgx += gi * x
                        accs[i] = gi
                        act[na] = i
                        na += 1
                total += row_loss
                if want_grad:
                    for k in range(K):
                        racc[k] = zero
                    for j in range(0, na - 1, 2):  # two neurons per pass over the memories
                        i0, i1 = act[j], act[j + 1]
                        g0, g1 = accs[i0], accs[i1]
                        a0, a1, b0, b1 = two * g0, two * g1, g0 * xs[rx, i0], g1 * xs[rx, i1]
                        for k in range(K):
                            v0 = dfo[i0, k]
                            v1 = dfo[i1, k]
                            gp[i0, k] += a0 * v0
                            gp[i1, k] += a1 * v1
                            racc[k] = (racc[k] - b0 * v0) - b1 * v1
                    if na % 2:
                        i0 = act[na - 1]
                        g0 = accs[i0]
                        a0, b0 = two * g0, g0 * xs[rx, i0]
                        for k in range(K):
                            v0 = dfo[i0, k]
                            gp[i0, k] += a0 * v0
                            racc[k] -= b0 * v0
                    for k in range(K):
                        v = racc[k] + dfu[k] * sgx
                        r[row, k] = zero if abs(v) < tiny else v  # no subnormal into the matrix product (~20x slower)
            if want_grad:
                for i in range(M):
                    for k in range(K):
                        if abs(gp[i, k]) < tiny:
                            gp[i, k] = zero
            loss_part[g, c] = total

    return kernel


_LOSS_GRAD = {}


def loss_grad_key(kind, n):
    """The key of :data:`_LOSS_GRAD` (the arguments of :func:`_loss_grad_kernel`) that runs (kind, n): (kind, bit
    length of n - 1) for the polynomial kinds with n <= 128, (None, None) for the rest."""
    if kind == EXPONENTIAL or n - 1 >= 128:
        return None, None
    return kind, (n - 1).bit_length()


def loss_grad(d, d_g, d_b, w, xs, x_g, x_b, targets, b_in, b_out, consts, kind, n, two_m, want_grad, chunk,
              loss_part, r, grad_part, j_lo, j_hi):
    """Loss per (network, chunk of rows), r = sum_i g_i P_i per row, and each chunk's gradient columns,
    for the jobs (network g, chunk c) numbered g n_chunks + c from ``j_lo`` to ``j_hi``.

    Row (g, b) of ``d``/``r`` is g*d_g + b*d_b, of ``xs``/``targets`` g*x_g + b*x_b
    (a shared minibatch has x_g = 0). Runs the kernel of :func:`_loss_grad_kernel` for (kind, bit length of
    n - 1), or the one for any interaction (the exponential, n > 128); each built once per process.
    """
    key = loss_grad_key(kind, n)
    kernel = _LOSS_GRAD.get(key)
    if kernel is None:
        kernel = _LOSS_GRAD[key] = _loss_grad_kernel(*key)
    kernel(d, d_g, d_b, w, _writable(xs), x_g, x_b, _writable(targets), b_in, b_out, consts, kind, n, two_m, want_grad,
           chunk, loss_part, r, grad_part, j_lo, j_hi)


def _writable(a):
    """``a``, or a copy of it where it is read-only. numba types an array's writeability: a read-only input (a
    caller's data, a broadcast) compiled the kernel a second time (~5 s) and ran that other build, whose bits need
    not be the fits'. In a fit the inputs are writable work arrays, so the rare read-only one is copied (rows x
    evaluated neurons) and every call runs the one build. (Speed: making every input read-only instead ran Krotov's
    float64 epoch 1.07-1.28x fbc5a66's in three rounds, bench/results/archive/kernel-ab-2026-11-29-readonly.json,
    but the same build against itself spread 0.79-1.19x, kernel-ab-2026-11-29-writable.json: not told apart.)"""
    return a if a.flags.writeable else np.array(a)


@njit
def _relax_one(w, d0row, states, orders, g, b, a, consts, kind, n, zero_sign, max_sweeps):
    """Relax state b of network g in place; returns (sweeps run, reached a fixed point, NaN seen).

    Each neuron's flip: sum_k [F(a d_k) - F(a (d_k - w_k x))] with d' = d - w x, F(a d') and F'(a d') kept for the
    flip's acceptance; one vectorised pass (:func:`_pass_nb`, the power unrolled to 5 or 7 squarings) summed in
    :func:`_sum_diff`'s fixed order for the polynomial kinds with n <= 128, else :func:`_flip_any` (a pass per
    step). Written out here, not in a function of its own: numba counted a reference to each array argument of
    that function at each flip (atomic increments and decrements). d and F' reach :func:`_pass_nb` as 1-row views
    of the work space, made once per state: passing the whole work space with row numbers instead ran the K = 100
    relaxation 1.18x slower, likely its vector loop with the same array read and written (bench/HISTORY.md).
    """
    N, K = w.shape[1], w.shape[2]
    zero, one, nf, slope, flush = consts[0], consts[1], consts[3], consts[4], consts[5]
    buf = np.empty((6, K), w.dtype)  # work space: rows d, d', a d, F(a d), F(a d'), F'
    scratch = np.empty((2, max(K, 8)), w.dtype)
    d, other, arg, f_ad, f_other, df, acc = buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], scratch[0, :8]
    dm, dfm = buf[0:1], buf[5:6]  # d and F' as 1-row arrays for _pass_nb (views made once, not at each flip)
    n1 = n - 1
    one_pass = kind != EXPONENTIAL and n1 < 128
    for k in range(K):
        d[k] = d0row[k]
        arg[k] = a * d[k]
    _values(arg, f_ad, df, scratch[0, :K], kind, n, nf, slope, zero, one, flush)
    nan_seen = False
    wg = w[g]
    st = states[g, b]
    for s in range(max_sweeps):
        changed = False
        for t in range(N):
            i = orders[g, s, t]
            x = st[i]
            if one_pass:  # other = d - w x, f_other = F(a other), df = F'(a other)
                if n1 < 32:
                    _pass_nb(dm, 0, wg, i, x, a, f_ad, other, f_other, dfm, 0, kind, n1, nf, slope, zero, one, flush,
                             5, False)
                else:
                    _pass_nb(dm, 0, wg, i, x, a, f_ad, other, f_other, dfm, 0, kind, n1, nf, slope, zero, one, flush,
                             7, False)
                total = _sum_diff(f_ad, f_other, acc, zero)
            else:
                total = _flip_any(d, wg[i], x, a, f_ad, other, f_other, df, scratch, kind, n, nf, slope, zero, one,
                                  flush)
            delta = x * total
            if not math.isfinite(delta):
                nan_seen = True
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
                st[i] = new
                for k in range(K):
                    d[k] = other[k]
                    f_ad[k] = f_other[k]
        if not changed:
            return s + 1, True, nan_seen
    return max_sweeps, False, nan_seen


@njit(nogil=True)
def relax(w, d0, d_g, d_b, states, orders, scale, consts, kind, n, zero_sign, max_sweeps, sweeps_used, converged,
          nan_seen, lo, hi):
    """Asynchronous sweeps of each (network, state) until a sweep flips nothing, for the jobs ``lo`` to ``hi``
    (job g B + b: state b of network g); w = 2 zeta, (G, N, K). Jobs are independent: :func:`damlite.kernels.
    cpu_kernels.run_parts` spreads them over threads, and a state's result does not depend on the split."""
    B = states.shape[1]
    for job in range(lo, hi):
        g = job // B
        b = job % B
        used, stable, nan = _relax_one(w, d0[g * d_g + b * d_b], states, orders, g, b, scale[g], consts, kind, n,
                                       zero_sign, max_sweeps)
        sweeps_used[job] = used
        converged[job] = stable
        nan_seen[job] = nan


@njit(inline="always")
def _step_row(memories, velocity, grad, g, k, use, rate, consts, normalize, clamp_start, clamp_stop):
    """Memory k of network g: v <- momentum v - grad (0 unless ``use``); zeta <- clip(zeta + rate v / max|v|).

    max|v| as numpy.max gives it (NaN if a v is NaN) from the integer maximum of :func:`_abs_bits`;
    both loops run from 0 over the memory's own rows, in vector lanes.
    """
    zero, one, momentum, floor, lo, hi = consts[0], consts[1], consts[2], consts[3], consts[4], consts[5]
    vel, mem, gr = velocity[g, k], memories[g, k], grad[g, k]
    top = _abs_bits(zero)
    for j in range(vel.shape[0]):
        v = momentum * vel[j] - (gr[j] if use else zero)
        vel[j] = v
        top = max(top, _abs_bits(v))
    norm = _from_bits(top, zero)
    if not normalize:
        norm = one
    elif not norm > floor:
        norm = floor
    for j in range(vel.shape[0]):
        z = mem[j] + rate * (vel[j] / norm)
        if clamp_start <= j < clamp_stop:
            z = lo if z < lo else (hi if z > hi else z)
        mem[j] = z


@njit(nogil=True)
def step(memories, velocity, grad, ok, lr, consts, normalize, clamp_start, clamp_stop, lo, hi):
    """v <- momentum v - grad (0 where not ok); zeta <- clip(zeta + lr v / max|v|), in place, for the
    memories lo to hi of the G K (network g, memory k numbered g K + k)."""
    K = memories.shape[1]
    for job in range(lo, hi):
        g = job // K
        _step_row(memories, velocity, grad, g, job % K, ok[g], lr[g], consts, normalize, clamp_start, clamp_stop)


@njit(nogil=True)
def gather(probes, codes, table, targets, order, start, colidx, xb, tb, xs, lo, hi):
    """Rows lo to hi of the minibatch of rows order[start:start + b]: xb = probes[rows], tb = targets[rows],
    xs = xb[:, colidx]. With a ``table`` (not empty), the rows are read as ``table[codes[rows]]``
    (:func:`palette`): the same values, an eighth (float64) or a quarter (float32) of the bytes to fetch from
    memory, each row's codes fetched :data:`PREFETCH_ROWS` rows ahead (:func:`_prefetch`; rows themselves are not:
    measured no faster)."""
    N, M = xb.shape[1], targets.shape[1]
    coded = table.shape[0] > 0
    for b in range(lo, hi):
        ahead = start + b + PREFETCH_ROWS
        if coded and ahead < order.shape[0]:  # the codes row PREFETCH_ROWS ahead (at the end: the next minibatch's)
            nxt = order[ahead]
            for j in range(0, N, 64):  # a 64-byte cache line holds 64 codes
                _prefetch(codes, nxt, j)
            _prefetch(targets, nxt, 0)
        src = order[start + b]
        out = xb[b]
        if coded:
            crow = codes[src]
            for j in range(N):
                out[j] = table[crow[j]]
        else:
            row = probes[src]
            for j in range(N):
                out[j] = row[j]
        for i in range(M):
            tb[b, i] = targets[src, i]
            xs[b, i] = out[colidx[i]]


#: The hash table of :func:`palette`: 4096 slots for at most 256 values (load <= 1/16).
_SLOTS_LOG2 = 12


@njit(nogil=True)
def _hash(b):
    return (np.uint64(b) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - _SLOTS_LOG2)


@njit(nogil=True)
def _palette_insert(b, slot_bits, slot_code, table, n):
    """(code of bit pattern b, values so far), b added as value n if new; code -1 if the table is full."""
    h = _hash(b)
    while slot_code[h] >= 0 and slot_bits[h] != b:  # linear probing
        h = (h + np.uint64(1)) & np.uint64((1 << _SLOTS_LOG2) - 1)
    if slot_code[h] >= 0:
        return slot_code[h], n
    if n == table.shape[0]:
        return -1, n
    slot_code[h], slot_bits[h], table[n] = n, b, b
    return n, n + 1


@njit(nogil=True)
def palette(bits, codes, table):
    """codes, table with bits == table[codes] (bit patterns, so -0.0 and NaNs keep theirs); returns the number
    of distinct values, or -1 where there are more than ``table`` holds (codes and table then unfinished)."""
    slot_bits = np.zeros(1 << _SLOTS_LOG2, bits.dtype)
    slot_code = np.full(1 << _SLOTS_LOG2, -1, np.int64)
    n = 0
    for i in range(bits.shape[0]):
        b = bits[i]
        h = _hash(b)
        c = slot_code[h]
        if c < 0 or slot_bits[h] != b:  # a new value, or another in its slot
            c, n = _palette_insert(b, slot_bits, slot_code, table, n)
            if c < 0:
                return -1
        codes[i] = c
    return n


@njit(nogil=True)
def complete(grad, part, colmap, scale, bad, lo, hi):
    """Columns lo to hi of the gradient completed and checked.

    grad[g, k, j] <- scale_g (grad[g, k, j] + sum_c part[g, c, i, k]) where column j is
    evaluated neuron i (``colmap[j] = i``, -1 elsewhere), the chunks summed in order;
    ``bad[g, k]`` is set (never cleared) where an entry is not finite (v - v is then NaN, whose
    :func:`_abs_bits` are not 0: an integer OR over the row, in vector lanes).
    """
    G, K, N = grad.shape
    C = part.shape[1]
    evaluated = np.empty(hi - lo, np.int64)  # the evaluated columns among lo..hi
    n_eval = 0
    for j in range(lo, hi):
        if colmap[j] >= 0:
            evaluated[n_eval] = j
            n_eval += 1
    for g in range(G):
        s = scale[g]
        for k in range(K):
            for e in range(n_eval):
                j = evaluated[e]
                i = colmap[j]
                extra = part[g, 0, i, k]
                for c in range(1, C):
                    extra += part[g, c, i, k]
                grad[g, k, j] = grad[g, k, j] + extra
            row = grad[g, k, lo:hi]
            nonfinite = _abs_bits(s - s)  # 0 where s is finite (else every entry is not)
            for j in range(row.shape[0]):
                v = row[j] * s
                row[j] = v
                nonfinite |= _abs_bits(v - v)
            if nonfinite:
                bad[g, k] = True


@njit(inline="always")
def _pairwise_block(a, lo, n):
    """sum a[lo:lo + n], 1 <= n <= 128, as NumPy's pairwise_sum adds a block: in order below 8, else 8 running
    sums combined pairwise, then the rest in order."""
    if n < 8:
        s = a[lo]
        for i in range(lo + 1, lo + n):
            s += a[i]
        return s
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    stop = lo + n - n % 8
    for i in range(lo + 8, stop, 8):
        r0, r1, r2, r3 = r0 + a[i], r1 + a[i + 1], r2 + a[i + 2], r3 + a[i + 3]
        r4, r5, r6, r7 = r4 + a[i + 4], r5 + a[i + 5], r6 + a[i + 6], r7 + a[i + 7]
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(stop, lo + n):
        s += a[i]
    return s


@njit
def _pairwise_sum(a, lo, n):
    """sum a[lo:lo + n], n >= 1, as NumPy's pairwise_sum adds it (numpy.sum along a contiguous axis): blocks of up
    to 128 as :func:`_pairwise_block`; a longer span as the sum of its two halves, the first a multiple of 8, each
    so. The halving runs on an explicit stack, not by recursion (numba's on-disk cache cannot hold a recursive
    function: loaded from it, one crashed the process)."""
    if n <= 128:
        return _pairwise_block(a, lo, n)
    los, ns, stage, left = np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64, a.dtype)
    top, ret = 0, a[lo]
    los[0], ns[0], stage[0] = lo, n, 0
    while True:
        first, m = los[top], ns[top]
        if m <= 128 or stage[top] == 2:  # a block, or both halves done: hand the sum to the span above
            ret = _pairwise_block(a, first, m) if m <= 128 else left[top] + ret
            top -= 1
            if top < 0:
                return ret
            continue
        half = m // 2
        half -= half % 8
        if stage[top] == 0:  # the first half
            stage[top] = 1
            top += 1
            los[top], ns[top], stage[top] = first, half, 0
        else:  # the first half's sum is in: the second half
            left[top], stage[top] = ret, 2
            top += 1
            los[top], ns[top], stage[top] = first + half, m - half, 0


@njit(nogil=True)
def tally(loss_part, bad, finite, epoch_loss, epoch_ok, ok):
    """A minibatch's bookkeeping, per network g: its loss, the sum of its chunks' ``loss_part[g]`` as
    ``numpy.sum(loss_part, axis=1)`` gives it (:func:`_pairwise_sum` of all its chunks); ``ok[g]``:
    ``finite[g]``, the loss finite and no ``bad[g, k]``; where ok, the loss added to ``epoch_loss[g]``;
    ``epoch_ok[g]`` and-ed with ok. One call in place of eight NumPy calls between a fit's kernels (there each
    took ~50 us, its code and data out of the caches: 6 ms of a Krotov epoch)."""
    G, C = loss_part.shape
    for g in range(G):
        row = loss_part[g]
        loss = _pairwise_sum(row, 0, C)
        good = finite[g] and loss - loss == 0
        for k in range(bad.shape[1]):
            good = good and not bad[g, k]
        ok[g] = good
        if good:
            epoch_loss[g] += loss
        epoch_ok[g] = epoch_ok[g] and good
