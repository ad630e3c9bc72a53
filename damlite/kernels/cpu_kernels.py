"""Fused, multi-threaded CPU kernels (numba) for the hot loops of ±1 states, float32 and float64.

The NumPy code in :mod:`damlite.network` is the reference; these kernels compute
the same sums in one pass per (network, state) without the (G, b, M, K)
temporaries, and agree with it to rounding (the tests check both dtypes, on 1 and
2 threads). Three kernels:

* the loss and its gradient (:func:`loss_and_gradient`), for the learning rule with ±1
  evaluated neurons (autoassociative training; MNIST's class neurons at -1);
* asynchronous relaxation of ±1 states (:func:`relax_async_bipolar`);
* the optimiser step (:func:`optimizer_step`): velocity, max-abs normalisation, step
  and clamp of :mod:`damlite.training` in one pass.

A training fit whose minibatches all networks share runs whole epochs through
:mod:`damlite.kernels.cpu_fit` (per minibatch a gather kernel, the loss kernel, a kernel that
completes and checks the gradient, one that sums the minibatch's loss and flags its networks, and
the optimiser step, with the two matrix products into buffers, in two steps split over the
threads), bitwise the results of the
minibatch loop of :mod:`damlite.training`.

The loss kernel is compiled once per interaction (its kind and exponent): for the
polynomial kinds with n <= 128 they are compile-time constants, so that x**(n-1) is a
fixed chain of squarings in straight-line vector code; the exponential and larger n take a
kernel for any interaction. Compiling one takes a few seconds per dtype, cached on disk.
Its outputs tanh(b_out Delta) come from a tanh of its own, in float64 for both dtypes,
vectorised (within 1.3 units in the last place of mpmath's value; the C library's, one call
per value, is not vectorised), so they differ from the NumPy path's tanh in the last bit.

For state xi, memory mu and evaluated neuron i, with d = zeta^mu . xi: u = b d and
u' = b (d - 2 zeta^mu_i xi_i) are the arguments of F for the neuron's own sign and
the flipped one (see :func:`damlite.network.energy_difference`). In the loss and
gradient, powers that would fall below the dtype's smallest normal number are
flushed to zero (subnormal
arithmetic is ~20x slower; in float32 Krotov's MNIST configuration is full of them):
where x**n or the loss term (t - C)**(2m) would be below that number, F, F' or the
term and its gradient are 0. Each such term differs from the NumPy path's by less
than n times that number to the power (n-1)/n (float32: ~1e-36 for n = 20).
Relaxation flushes nothing: its decisions (the sign of a sum) stay those of the
NumPy path even where only subnormal terms decide them.

Switch and fallback
-------------------
``DAMLITE_CPU_KERNELS`` is read before numba is imported: ``auto`` (or unset) and
``numba`` use the kernels, ``numpy`` (or ``off``, ``0``, ``false``, ``no``) turns them
off; any other value is refused (ValueError) with the allowed ones. numba is optional
(``pip install damlite[fast]``) and imported on first use; where it is not installed
the NumPy path runs silently (``DAMLITE_CPU_KERNELS=numba`` warns). Any failure
importing it or compiling or caching a kernel sends the computation to the NumPy path,
with one :class:`CpuKernelsWarning` per process saying why and how to silence it. Kernels are
compiled lazily (on first call, per dtype) and cached on disk only where numba finds a
writable cache directory (a cache that cannot be read or written compiles in memory, with one
warning). The loss kernel for a polynomial interaction with n <= 128 is compiled per kind and bit length of
n - 1 (n = 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65-128 share one; ~2.5 s each, once per machine: numba caches
it on disk), its passes straight-line vector code with the squarings unrolled; the exponential and n > 128
take a kernel for any interaction. Every computation of an interaction runs the same kernel, whatever its
size: its bits depend on it alone.

Threads and determinism
-----------------------
The loss kernel, the optimiser step, relaxation and the whole-epoch path run on one pool of
threads per process (:func:`run_parts`): the kernels are compiled to release the GIL, the
calling thread runs the first part of the work, the others take the rest (no numba
``prange``: no threading layer to abort a forked process or concurrent callers, and relaxation's
kernel compiles ~5 s sooner). The thread count is one per process, whichever thread calls damlite
(a thread pool, a GUI, dask's threaded scheduler): :func:`set_num_threads`'s, else
``NUMBA_NUM_THREADS``, else the first entry of ``OMP_NUM_THREADS``, else one thread in a
multiprocessing worker (the sweep engine's ``--workers``) and all cores elsewhere.
Both variables are checked before numba is imported: a value that is not a count (or
``NUMBA_NUM_THREADS`` above :func:`max_threads`) is refused with one line (ValueError)
instead of an abort inside numba, LLVM or the C library. A call splits its work only where
two threads measurably beat one (:data:`MIN_WORK`, per kind of call).

A whole-epoch fit on several threads (:mod:`damlite.kernels.cpu_fit`) also splits its matrix
products over those threads, with BLAS limited to one thread per product during the
epoch (threadpoolctl, installed with ``damlite[fast]``; without it such a fit runs the
kernels on one thread). OpenBLAS's own idle threads busy-wait for 2**28 cycles after each
product, on the cores the kernels then need; with one pool nothing waits that way.

Rows are cut into chunks of fixed size (independent of the thread count), each chunk sums its
own part of the gradient and the parts are added in chunk order. Within a row, the loss
kernel sums F(u) - F(u') over the memories in the pass that computes them, in vector
lanes (compiled with fastmath ``reassoc`` only: NaN and inf keep their meaning); that
order is fixed by the compiled code, so it may differ between CPUs (vector widths) but
not between runs or thread counts. Relaxation sums in NumPy's pairwise order. The
kernels' results are therefore bitwise the same on any number of threads. The whole-epoch
fits' are too: :mod:`damlite.kernels.cpu_fit` cuts a matrix product over the threads only where
the BLAS sums the blocks as it sums the whole product, checked per shape (OpenBLAS 0.3.31 does
not for every shape: cut at column 128, a product of 250 columns rounds its last 2 columns
otherwise; such a product runs whole). The tests check fits bitwise on 1 and 2 threads with
every step split. What the thread count does not fix: the CPU (vector widths, BLAS kernels)
and the BLAS library, which may each change the last bits.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import warnings

import numpy as np

from ._scalar import EXPONENTIAL, LEAKY, POLYNOMIAL, RECTIFIED

__all__ = [
    "ALLOWED",
    "CpuKernelsWarning",
    "MIN_WORK",
    "PALETTE_SIZE",
    "available",
    "blas_threads",
    "blas_within_limit",
    "call",
    "description",
    "interaction_code",
    "kernel",
    "loss_and_gradient",
    "max_threads",
    "num_threads",
    "one_blas_thread",
    "optimizer_step",
    "palette",
    "relax_async_bipolar",
    "run_parts",
    "set_num_threads",
    "spans",
    "threads_for",
]

#: Values of DAMLITE_CPU_KERNELS and what they mean.
ALLOWED = {"": "auto", "auto": "auto", "numba": "numba", "on": "numba", "1": "numba", "true": "numba",
           "yes": "numba", "numpy": "numpy", "off": "numpy", "0": "numpy", "false": "numpy", "no": "numpy"}

#: Rows per chunk of the loss/gradient kernel: fixed, so that the order of the sums
#: (rows within a chunk, then chunks in order) does not depend on the thread count.
ROW_CHUNK = 64

numba = None  # the numba module once loaded (experiments.provenance reads its version)
_kernels = None  # the compiled-on-demand kernels, once built
_failure = None  # why the kernels are off (a string), once something failed
_warned = False


class CpuKernelsWarning(RuntimeWarning):
    """The numba kernels could not be used; damlite runs the NumPy path instead."""


def _mode() -> str:
    raw = os.environ.get("DAMLITE_CPU_KERNELS", "")
    value = raw.strip().lower()
    if value not in ALLOWED:
        allowed = ", ".join(sorted(k for k in ALLOWED if k))
        raise ValueError(f"DAMLITE_CPU_KERNELS must be one of {allowed} (or unset), got {raw!r}")
    return ALLOWED[value]


def _fail(reason: str):
    """Turn the kernels off for this process and warn once, naming the reason."""
    global _failure, _warned
    _failure = reason
    if not _warned:
        _warned = True
        try:  # where numba caches the kernels, to clear it if they fail on every run
            hint = _kernels.cache_hint() if _kernels is not None else ""
        except Exception:  # noqa: BLE001 - a hint only
            hint = ""
        warnings.warn(
            f"damlite's numba CPU kernels are off ({reason}); running the NumPy path (same results, slower).{hint} "
            "DAMLITE_CPU_KERNELS=numpy chooses the NumPy path from the start.",
            CpuKernelsWarning, stacklevel=4)


def _load() -> bool:
    """Import numba and build the kernels (not compile them) once; False (and one warning) on failure.

    numba simply not installed, with the switch on ``auto``, is not a failure: no warning.
    """
    global numba, _kernels, _failure
    if _failure is not None:
        return False
    if _kernels is not None:
        return True
    _env_threads()  # a thread count that is not one: ValueError here, before numba starts its threads
    try:
        import numba as nb  # noqa: PLC0415
    except Exception as exc:  # ImportError, or a broken llvmlite (OSError), or anything else
        if isinstance(exc, ImportError) and getattr(exc, "name", None) == "numba" and _mode() == "auto":
            _failure = "numba is not installed (optional: pip install damlite[fast])"  # silent: nothing is broken
        else:
            _fail(f"numba failed to import: {type(exc).__name__}: {exc}")
        return False
    try:
        from . import _cpu_numba  # noqa: PLC0415

        _kernels = _cpu_numba
    except Exception as exc:  # noqa: BLE001 - any failure must fall back
        _fail(f"numba could not set up the kernels: {type(exc).__name__}: {exc}")
        return False
    numba = nb
    return True


def available() -> bool:
    """True when the numba kernels are switched on, import and have not failed in this process.

    Reads ``DAMLITE_CPU_KERNELS`` first (ValueError for a value not in :data:`ALLOWED`);
    numba is imported only when the switch allows it.
    """
    if _mode() == "numpy":
        return False
    return _load()


def description() -> str:
    """What computes on the CPU, e.g. ``"numba 0.68.1 (2 threads)"`` or ``"numpy"``."""
    if not available():
        return "numpy"
    n = num_threads()
    return f"numba {numba.__version__} ({n} thread{'' if n == 1 else 's'})"


def num_threads() -> int:
    """Threads the kernels use in this process, whichever thread calls them (1 when they are off)."""
    if not available():
        return 1
    return _limit()


def set_num_threads(n: int | None):
    """Use ``n`` threads in the kernels from now on, in every thread that calls them (this process).

    ``n`` is a whole number from 1 to numba's pool size (``NUMBA_NUM_THREADS``, default all
    cores); anything else is refused (ValueError). None: the environment's count again (see the
    module doc). Without the kernels, nothing to do.
    """
    global _threads
    if not available():
        return
    if n is None:
        _threads = None
        return
    most = int(numba.config.NUMBA_NUM_THREADS)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= most:
        raise ValueError(f"set_num_threads: n must be a whole number from 1 to {most} (NUMBA_NUM_THREADS), got {n!r}")
    _threads = (os.getpid(), int(n))


#: :func:`max_threads` is this many threads per core.
THREADS_PER_CORE = 4


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def max_threads() -> int:
    """The most threads ``NUMBA_NUM_THREADS`` may ask for: ``THREADS_PER_CORE`` per core this process may
    run on (numba starts that many threads; 100 000 of them abort the process in LLVM or the C library)."""
    return THREADS_PER_CORE * _cores()


def _count(raw: str) -> int | None:
    value = raw.strip()
    return int(value) if value.isascii() and value.isdigit() and int(value) >= 1 else None


def _env_threads() -> int | None:
    """The thread count the environment asks for: ``NUMBA_NUM_THREADS``, else the first entry of
    ``OMP_NUM_THREADS``, else None. Read before numba is imported: a value that is not a count is
    refused with one line (ValueError) naming the variable, before numba or its threads see it."""
    raw = os.environ.get("NUMBA_NUM_THREADS", "")
    if raw.strip():
        most = max_threads()
        n = _count(raw)
        if n is None or n > most:
            raise ValueError(f"NUMBA_NUM_THREADS must be a whole number from 1 to {most} ({THREADS_PER_CORE} per core "
                             f"of this machine's {_cores()}), got {raw!r}")
        return n
    raw = os.environ.get("OMP_NUM_THREADS", "")
    if raw.strip():
        counts = [_count(part) for part in raw.split(",")]
        if None in counts:
            raise ValueError(f"OMP_NUM_THREADS must be a whole number from 1 up (or a comma-separated list of them), "
                             f"got {raw!r}")
        return counts[0]
    return None


_threads = None  # (pid, n): this process's thread count, once known


def _limit() -> int:
    """The kernels' thread count in this process (numba loaded): :func:`set_num_threads`'s, else from the
    environment (:func:`_env_threads`, at most numba's pool size), else one thread in a multiprocessing
    worker (the sweep engine's ``--workers``: the processes already share the cores) and numba's pool
    size (all cores) elsewhere. Worked out once per process (a forked worker works out its own)."""
    global _threads
    if _threads is None or _threads[0] != os.getpid():
        most = int(numba.config.NUMBA_NUM_THREADS)
        n = _env_threads()
        if n is None:
            import multiprocessing  # noqa: PLC0415

            n = 1 if multiprocessing.parent_process() is not None else most
        _threads = (os.getpid(), max(1, min(n, most)))
    return _threads[1]


def interaction_code(interaction):
    """(kind, n, slope) for a built-in interaction, or None (use the NumPy path)."""
    from ..interactions import Exponential, LeakyRectifiedPolynomial, Polynomial, RectifiedPolynomial  # noqa: PLC0415

    kind = type(interaction)
    if kind is Polynomial:
        return POLYNOMIAL, interaction.n, 0.0
    if kind is RectifiedPolynomial:
        return RECTIFIED, interaction.n, 0.0
    if kind is LeakyRectifiedPolynomial:
        return LEAKY, interaction.n, float(interaction.negative_slope)
    if kind is Exponential:
        return EXPONENTIAL, 1, 0.0
    return None


def call(name, *args):
    """Run kernel ``name`` on the calling thread; True, or on any failure (compiling, caching, ...) turn the kernels
    off and return None."""
    return run_parts(name, 1, lambda t: args)


_team = None  # (pid, workers, ThreadPoolExecutor): the kernel threads of this process


def _workers(n):
    """This process's pool of at least ``n`` threads besides the caller (rebuilt after a fork, or larger
    when more are asked for; the old pool's threads end once nothing uses it)."""
    global _team
    if _team is None or _team[0] != os.getpid() or _team[1] < n:
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

        _team = (os.getpid(), n, ThreadPoolExecutor(n, thread_name_prefix="damlite-cpu"))
    return _team[2]


def kernel(name):
    """The compiled-on-demand kernel ``name`` (for callers that compose kernels, e.g. damlite.kernels.cpu_fit)."""
    return getattr(_kernels, name)


def run_parts(name, parts, args):
    """Kernel ``name`` (or a function of kernels and products) on ``args(0)``, ..., ``args(parts - 1)`` at
    once, one part per thread (the caller runs part 0; the kernels and BLAS release the GIL); True,
    or on any failure turn the kernels off (one warning) and return None. Each part writes its own
    outputs."""
    if _failure is not None:
        return None
    try:
        fn = kernel(name) if isinstance(name, str) else name
        if parts <= 1:
            fn(*args(0))
            return True
        futures = [_workers(parts - 1).submit(fn, *args(t)) for t in range(1, parts)]
        try:
            fn(*args(0))
        finally:
            errors = [f.exception() for f in futures]  # waits for every part
        for error in errors:
            if error is not None:
                raise error
        return True
    except Exception as exc:  # noqa: BLE001 - any failure must fall back to NumPy
        first = (str(exc).strip().splitlines() or [""])[0]
        label = name if isinstance(name, str) else name.__name__.strip("_")
        _fail(f"kernel {label!r} failed: {type(exc).__name__}: {first}")
        return None


#: Per kind of call, the least work (operations, as :func:`threads_for`'s callers count them) from which two
#: threads beat one on this project's 2-core machine (bench/threads.py: bench/README.md has the table, from
#: bench/results/threads-kernels-2026-11-27.json and threads-2026-11-27.json); below it a call runs on the
#: calling thread alone: waking another thread costs more than it saves. The machine's second core comes and
#: goes (it is shared), so each value is where the records agree, to a factor of about two.
#:
#: * ``"front"``: a whole-epoch fit's first step (the gather, the first product and the loss kernel), rows x
#:   networks x memories x (neurons + evaluated neurons): faster from 8e6-1.6e7 (N = M = K = 100) and 2e7-8e7
#:   (Krotov's MNIST shape; its fastest rounds from 2e7 in both records);
#: * ``"loss"``: the loss kernel alone (:func:`loss_and_gradient`, its products not split), the same count:
#:   not faster at any size measured, up to 1.05e8 (2/1 = 1.00 there);
#: * ``"back"``: a whole-epoch fit's second product and the gradient's completion, rows x networks x memories
#:   x neurons: split alone, faster from 4e7-1.6e8 (not up to 8e6 for N = M = K = 100); kept at Krotov's
#:   7.9e7, where it is split beside his first step;
#: * ``"step"``: the optimiser step, networks x memories x neurons: faster from 5.9e5;
#: * ``"relax"``: relaxation, states x networks x memories x neurons: faster from 2e4 (N = K = 100; 25 states: at
#:   every size, from 1.6e3; measured when relaxation ran numba's ``prange``, not again on the pool).
MIN_WORK = {"front": 20_000_000, "loss": 100_000_000, "back": 50_000_000, "step": 600_000, "relax": 20_000}


def threads_for(work, jobs, kind="loss"):
    """How many threads a call of ``work`` operations in ``jobs`` independent parts takes (``kind``: a key of
    :data:`MIN_WORK`)."""
    return 1 if work < MIN_WORK[kind] else max(1, min(num_threads(), jobs))


def spans(n, parts, align=1):
    """``parts + 1`` boundaries cutting range(n) into ``parts`` near-equal spans (inner ones multiples of ``align``)."""
    cuts = [min(n, align * round(n * t / parts / align)) for t in range(parts + 1)]
    cuts[0], cuts[-1] = 0, n
    return cuts


_controller = None
_blas_own = 1  # the most threads a loaded BLAS library uses by itself, read with the controller
_blas_setters = []  # per BLAS library: a function that sets its thread count and returns the count it had


def _setter(lib):
    """A function n -> the count before, setting ``lib``'s thread count (a threadpoolctl library controller).

    OpenBLAS through its ``openblas_set_num_threads_local`` where it has it: OpenBLAS 0.3.31 ignores
    ``openblas_set_num_threads`` (threadpoolctl's way) called from a thread other than the main one
    once the main thread has called it (measured: the products of a fit in a second thread then ran
    on two BLAS threads, beside the kernel threads, and rounded differently); the local form takes
    effect from any thread. Other libraries through threadpoolctl.
    """
    local = getattr(lib.dynlib, "openblas_set_num_threads_local", None) if lib.internal_api == "openblas" else None
    if local is not None:
        local.restype, local.argtypes = ctypes.c_int, [ctypes.c_int]
        return local

    def through_threadpoolctl(n):
        before = lib.num_threads
        lib.set_num_threads(n)
        return before
    return through_threadpoolctl


def _blas_controller():
    """True where threadpoolctl can hold the loaded BLAS libraries (:data:`_blas_setters`; none found: nothing
    to hold), False where it is missing."""
    global _controller, _blas_own, _blas_setters
    if _controller is None:
        try:
            import threadpoolctl  # noqa: PLC0415

            libs = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
            _blas_own = max([lib.num_threads for lib in libs] or [1])
            _blas_setters = [_setter(lib) for lib in libs]
            _controller = True
        except Exception:  # noqa: BLE001 - optional (pip install damlite[fast] brings it)
            _controller = False
    return _controller


def blas_threads() -> int:
    """The most threads a loaded BLAS library uses by itself (threadpoolctl), read once, before any fit held
    it to one; 1 where threadpoolctl is not installed."""
    return _blas_own if _blas_controller() else 1


_blas_held = [0, [], None]  # [holds open, the counts to restore, the count held now]
_blas_lock = threading.Lock()


class _BlasHold:
    """BLAS held to at most ``n`` threads from construction until exit (a context manager); holds overlap: the
    first sets the libraries' count, a later one with a lower count lowers it, the last to exit restores the
    libraries' own counts."""

    def __init__(self, n=1):
        with _blas_lock:
            if _blas_held[0] == 0:
                _blas_held[1] = [set_threads(n) for set_threads in _blas_setters]
                _blas_held[2] = n
            elif n < _blas_held[2]:
                for set_threads in _blas_setters:
                    set_threads(n)
                _blas_held[2] = n
            _blas_held[0] += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with _blas_lock:
            _blas_held[0] -= 1
            if _blas_held[0] == 0:
                for set_threads, n in zip(_blas_setters, _blas_held[1]):
                    set_threads(n)
                _blas_held[1], _blas_held[2] = [], None


def one_blas_thread():
    """Limit BLAS to one thread per product now and return a context manager that restores the limits on
    exit; None where threadpoolctl is not installed.

    While the kernel threads split the products themselves, no idle BLAS thread busy-waits
    on the cores the kernels use (OpenBLAS's do, for 2**28 cycles after each product).
    Fits in several threads at once share one limit: the first sets it, the last to finish
    restores BLAS's own count (each restoring what it found would leave BLAS on one thread).
    """
    return _BlasHold() if _blas_controller() else None


def blas_within_limit():
    """A context manager that holds BLAS to :func:`num_threads` threads, where the loaded BLAS would use more
    by itself (``NUMBA_NUM_THREADS=1`` or :func:`set_num_threads` below the cores, ``OMP_NUM_THREADS``
    unset); else one that does nothing. The kernels' own products (relaxation's similarities, the loss
    kernel's two products) run inside it, so damlite's thread count holds for them too, in whichever
    thread calls: without it, BLAS's idle threads busy-wait on the cores after each product."""
    if not _blas_controller():
        return contextlib.nullcontext()
    limit = num_threads()
    return _BlasHold(limit) if limit < _blas_own else contextlib.nullcontext()


# ------------------------------------------------------------------ wrappers
def _consts(dtype, *values):
    return np.array(values, dtype=dtype)


def _flush(dtype, kind, n):
    """|x| below which x**n is under the dtype's smallest normal number (the kernels take F, F' as 0)."""
    if kind == EXPONENTIAL or n <= 1:
        return 0.0
    return float(np.finfo(dtype).tiny) ** (1.0 / n) * (1 - 1e-6)


def loss_consts(dtype, kind, n, slope, two_m):
    """The loss kernel's constants in ``dtype``: 0, 1, 2, n, slope, 2m, F's and the error term's flush
    thresholds (see :func:`_flush`), the dtype's smallest normal number."""
    return _consts(dtype, 0, 1, 2, n, slope, two_m, _flush(dtype, kind, n), _flush(dtype, POLYNOMIAL, two_m),
                   np.finfo(dtype).tiny)


def step_consts(dtype, momentum, floor):
    """The optimiser step's constants in ``dtype``: 0, 1, momentum, the normalisation's floor, -1, 1."""
    return _consts(dtype, 0, 1, momentum, floor, -1, 1)


#: :func:`palette`'s limit: values that 1-byte codes can name.
PALETTE_SIZE = 256


def palette(x):
    """``(codes, table)`` with ``table[codes]`` bitwise ``x``, where the 2-D float array ``x`` takes at most
    :data:`PALETTE_SIZE` distinct values (codes uint8, table in ``x``'s dtype); else None (also where the kernels
    are off or fail).

    Images of 8-bit pixels scaled to floats take at most 256 values: MNIST's 784 pixels with its 10
    class neurons at -1 take exactly 256. A float64 training fit then gathers each minibatch from the
    codes, an eighth of the bytes that float64 rows take (:mod:`damlite.kernels.cpu_fit`).
    One pass over ``x`` (a hash table of the values' bit patterns): ~0.08 s for MNIST's 60 000 x 794
    on one core.
    """
    x = np.ascontiguousarray(x)
    if x.ndim != 2 or x.dtype not in (np.float32, np.float64) or x.size == 0 or not available():
        return None
    bits = np.uint32 if x.dtype == np.float32 else np.uint64
    codes, table, found = np.empty(x.shape, np.uint8), np.empty(PALETTE_SIZE, x.dtype), []
    ok = run_parts(lambda *a: found.append(_kernels.palette(*a)), 1,
                   lambda t: (x.reshape(-1).view(bits), codes.reshape(-1), table.view(bits)))
    if ok is None or found[0] < 0:
        return None
    return codes, table[:found[0]].copy()


def row_chunks(B):
    """(number of chunks, rows per chunk) of B rows: equal chunks of at most :data:`ROW_CHUNK`, a function
    of B only (so that the sums' order does not depend on the thread count)."""
    n_chunks = -(-B // ROW_CHUNK)
    return n_chunks, -(-B // n_chunks)


def _shared(a):
    """``a`` (G, B, X) as (2-D rows, stride between networks, stride between rows); shared rows once."""
    if a.ndim == 2:
        return np.ascontiguousarray(a), 0, 1
    G, B = a.shape[:2]
    if G == 1 or a.strides[0] == 0:  # one minibatch for all networks (a broadcast view)
        return np.ascontiguousarray(a[0]), 0, 1
    return np.ascontiguousarray(a).reshape(G * B, a.shape[2]), B, 1


def similarities(memories, states):
    """d (rows, K) with its row map (d_g, d_b): one matrix product when all networks share the states.

    Shared states (B, N): (B, N) @ (N, G K) once instead of G products (B, N) @ (N, K);
    row (g, b) is b G + g. Per-network states (G, B, N): G products; row g B + b.
    """
    G, K, N = memories.shape
    if states.ndim == 2 or states.shape[0] == 1 or states.strides[0] == 0:
        X = states if states.ndim == 2 else states[0]
        if G == 1:
            return np.matmul(X, memories[0].T), 0, 1
        d = np.matmul(X, memories.reshape(G * K, N).T)  # (B, G K)
        return d.reshape(X.shape[0] * G, K), 1, G
    d = np.matmul(states, np.transpose(memories, (0, 2, 1)))  # (G, B, K)
    return d.reshape(G * states.shape[1], K), states.shape[1], 1


def loss_and_gradient(memories, probes, targets, cols, b_in, b_out, code, two_m, gradient):
    """Loss (G,), gradient (G, K, N) unscaled by beta_out beta_in, or None when the kernels failed.

    ``memories`` (G, K, N) NumPy float32/float64; ``probes`` (B, N) or (G, B, N) with
    ±1 entries in the evaluated columns ``cols`` (a slice or an index array);
    ``targets`` (B, M) or (G, B, M); ``b_in``/``b_out`` (G,). The gradient is
    r^T xi plus the evaluated columns' own part, with r and that part from the fused
    kernel (see :func:`damlite.network.loss_and_gradient` for the formulas); with a
    shared minibatch r^T xi is one matrix product for all G networks. Its products run within damlite's
    thread count (:func:`blas_within_limit`).
    """
    with blas_within_limit():
        return _loss_and_gradient(memories, probes, targets, cols, b_in, b_out, code, two_m, gradient)


def _loss_and_gradient(memories, probes, targets, cols, b_in, b_out, code, two_m, gradient):
    G, K, N = memories.shape
    dtype = memories.dtype
    memories = np.ascontiguousarray(memories)
    shared = probes.ndim == 2 or probes.shape[0] == 1 or probes.strides[0] == 0
    P = (probes if probes.ndim == 2 else probes[0]) if shared else probes
    B = P.shape[-2]
    d, d_g, d_b = similarities(memories, P)
    xcols = P[..., cols]
    xs, x_g, x_b = _shared(xcols)
    ts, t_g, t_b = _shared(targets if targets.ndim == 2 else targets)
    if (t_g, t_b) != (x_g, x_b):  # one shared, the other not: give both per-network rows
        xs = np.ascontiguousarray(np.broadcast_to(xcols, (G, B, xcols.shape[-1]))).reshape(G * B, -1)
        ts = np.ascontiguousarray(np.broadcast_to(targets, (G, B, xcols.shape[-1]))).reshape(G * B, -1)
        x_g, x_b = B, 1
    w = np.ascontiguousarray(2 * np.transpose(memories[:, :, cols], (0, 2, 1)))  # 2 zeta, (G, M, K)
    M = w.shape[1]
    kind, n, slope = code
    n_chunks, chunk = row_chunks(B)
    loss_part = np.zeros((G, n_chunks), dtype=dtype)
    r = np.zeros((d.shape[0], K) if gradient else (1, 1), dtype=dtype)
    grad_part = np.zeros((G, n_chunks, M, K) if gradient else (G, n_chunks, 1, 1), dtype=dtype)
    consts = loss_consts(dtype, kind, n, slope, two_m)
    b_in, b_out = np.ascontiguousarray(b_in, dtype=dtype), np.ascontiguousarray(b_out, dtype=dtype)
    parts = threads_for(B * G * K * (N + M), G * n_chunks)
    cut = spans(G * n_chunks, parts)
    ok = run_parts("loss_grad", parts, lambda t: (d, d_g, d_b, w, xs, x_g, x_b, ts, b_in, b_out, consts, kind, n, two_m,
                                                  bool(gradient), chunk, loss_part, r, grad_part, cut[t], cut[t + 1]))
    if ok is None:
        return None
    loss = loss_part[:, 0].copy() if n_chunks == 1 else np.sum(loss_part, axis=1)  # chunks in order
    if not gradient:
        return loss, None
    grad_t = grad_part[:, 0] if n_chunks == 1 else np.sum(grad_part, axis=1)  # (G, M, K)
    if d_g == 0:  # G = 1: r (B, K)
        grad = np.matmul(r.T, P)[None]
    elif d_b == G:  # shared minibatch: rows b G + g, r^T xi for all networks in one product
        grad = np.matmul(r.reshape(B, G * K).T, P).reshape(G, K, N)
    else:
        grad = np.matmul(np.transpose(r.reshape(G, B, K), (0, 2, 1)), P)
    grad[:, :, cols] += np.transpose(grad_t, (0, 2, 1))  # cols: a slice or distinct indices
    return loss, grad


def relax_async_bipolar(memories, states, orders, scale, code, zero_sign, max_sweeps):
    """Asynchronous relaxation of ±1 states, one (network, state) per task, neuron orders given.

    ``orders`` (G, max_sweeps, N) holds each network's neuron order of every sweep
    (the same draws as the NumPy loop). A state stops at its first sweep without a
    flip, which leaves it where further sweeps would. Returns (states (G, B, N),
    converged (G, B), sweeps run (the most any state needed), finite (G,)), or None
    when the kernels failed.
    """
    G, K, N = memories.shape
    dtype = memories.dtype
    B = states.shape[1]
    kind, n, slope = code
    out = np.array(states, dtype=dtype, copy=True, order="C")
    sweeps_used = np.zeros(G * B, dtype=np.int64)
    converged = np.zeros(G * B, dtype=np.bool_)
    nan_seen = np.zeros(G * B, dtype=np.bool_)
    tie = 0 if zero_sign == "keep" else int(zero_sign)
    with blas_within_limit():
        d0, d_g, d_b = similarities(memories, out)
    consts = _consts(dtype, 0, 1, 2, n, slope, 0)  # no flush to zero: every decision as the NumPy path's
    parts = threads_for(G * B * K * N, G * B, "relax")
    cut = spans(G * B, parts)
    w = np.ascontiguousarray(2 * np.transpose(memories, (0, 2, 1)))
    orders, scale = np.ascontiguousarray(orders, dtype=np.int64), np.ascontiguousarray(scale, dtype=dtype)
    ok = run_parts("relax", parts, lambda t: (w, d0, d_g, d_b, out, orders, scale, consts, kind, n, tie, int(max_sweeps),
                                              sweeps_used, converged, nan_seen, cut[t], cut[t + 1]))
    if ok is None:
        return None
    finite = ~nan_seen.reshape(G, B).any(axis=1)
    return out, converged.reshape(G, B), int(sweeps_used.max()) if sweeps_used.size else 0, finite


def optimizer_step(memories, velocity, grad, ok, lr, momentum, normalize, floor, clamp):
    """One optimiser step in place on NumPy arrays (see :mod:`damlite.training`); False if it cannot run.

    v <- momentum v - grad (grad taken as 0 where ``ok`` is False); step = v / max_i|v_i|
    per memory (floor ``floor``) if ``normalize`` else v; zeta <- zeta + lr step, the
    ``clamp`` columns (a step-1 slice, or None) clipped to [-1, 1].
    """
    G, K, N = memories.shape
    if clamp is None:
        start, stop = 0, 0
    else:
        start, stop, stride = clamp.indices(N)
        if stride != 1:
            return False
    if not (memories.flags.c_contiguous and velocity.flags.c_contiguous):
        return False
    dtype = memories.dtype
    consts = step_consts(dtype, momentum, floor)
    grad, lr = np.ascontiguousarray(grad, dtype=dtype), np.ascontiguousarray(lr, dtype=dtype)
    ok = np.ascontiguousarray(ok)
    parts = threads_for(G * K * N, G * K, "step")
    cut = spans(G * K, parts)
    return run_parts("step", parts, lambda t: (memories, velocity, grad, ok, lr, consts, bool(normalize), start, stop,
                                               cut[t], cut[t + 1])) is not None
