"""The CPU kernels' thread count: one limit for every calling thread, checked before numba sees it, small
problems on one thread, and the line that says the kernels are being compiled."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from damlite.interactions import make_interaction
from damlite.kernels import cpu_fit, cpu_kernels
from damlite.network import relax
from damlite.training import train_memories

numba = pytest.importorskip("numba")
ROOT = Path(__file__).resolve().parents[1]


def _two_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has fewer than 2 threads here (NUMBA_NUM_THREADS)")


def _every_step_split(monkeypatch, blas_limit=True):
    """Two kernel threads (else skip), the kernels on and every step split however small (MIN_WORK 0); with
    ``blas_limit``, skip without threadpoolctl (without it a fit's products are not cut)."""
    _two_threads()
    if blas_limit:
        pytest.importorskip("threadpoolctl")
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    monkeypatch.setattr(cpu_kernels, "MIN_WORK", dict.fromkeys(cpu_kernels.MIN_WORK, 0))


def _python(code, **env):
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("DAMLITE_CPU", "NUMBA_", "OMP_", "OPENBLAS_", "MKL_"))}
    full.update(env, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=600)


def _in_thread(fn):
    """fn() run in a new threading.Thread; its result (or its exception, raised here)."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            out["error"] = exc
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


# ------------------------------------------------------------ one limit for every thread
_FIT_IN_A_THREAD = """
import threading, time
import numpy as np
from damlite.interactions import make_interaction
from damlite.kernels import cpu_fit, cpu_kernels
from damlite.network import relax
from damlite.training import train_memories
rng = np.random.default_rng(0)
X = np.where(rng.random((2000, 200)) < 0.5, -1.0, 1.0)
mem = rng.normal(0, 0.1, (1, 100, 200))
F = make_interaction("rectified_polynomial", 6)
kw = dict(beta_in=0.02, learning_rate=0.05, momentum=0.5, batch_size=1000, random_state=0)
fits, epoch = [], cpu_fit.CpuFit.epoch
cpu_fit.CpuFit.epoch = lambda self, *a: fits.append(self) or epoch(self, *a)
train_memories(mem, X, X, F, epochs=1, **kw)  # compiled on the main thread
relax(mem, X[:50], F, 0.02, random_state=0, max_sweeps=2)
seen = {}
def fit():
    seen["limit"] = cpu_kernels.num_threads()
    wall0, n = time.perf_counter(), 0
    spent = {"fit": [0.0, 0.0], "relax": [0.0, 0.0]}  # CPU and wall seconds of each
    while time.perf_counter() - wall0 < 1.5 or n < 2:
        for name, call in (("fit", lambda: train_memories(mem, X, X, F, epochs=2, **kw)),
                           ("relax", lambda: relax(mem, X[:400], F, 0.02, random_state=0, max_sweeps=3))):
            c0, w0 = time.process_time(), time.perf_counter()
            call()
            spent[name][0] += time.process_time() - c0
            spent[name][1] += time.perf_counter() - w0
        n += 1
    seen["ratio"] = spent["fit"][0] / spent["fit"][1]
    seen["relax_ratio"] = spent["relax"][0] / spent["relax"][1]
t = threading.Thread(target=fit)
t.start(); t.join()
print("LIMIT", seen["limit"], "SPLIT", max(f.threads for f in fits), "RATIO", seen["ratio"],
      "RELAX", seen["relax_ratio"])
"""


@pytest.mark.slow
@pytest.mark.parametrize("env", [{"OMP_NUM_THREADS": "1"}, {"NUMBA_NUM_THREADS": "1"}])
def test_a_fit_from_another_thread_keeps_the_limit_of_one(env):
    """With the limit at 1, fits and relaxation called from a thread started after import use one core:
    no step split, CPU time ~ wall time (before: every core there).
    NUMBA_NUM_THREADS=1 alone (BLAS not limited by the environment) holds for the products too: the kernels'
    products run with BLAS held to damlite's count (before 2026-11-28, on an idle 2-core machine: 1.79 cores
    busy during the fits, 1.94 during relaxation, from BLAS's idle threads spinning after relaxation's product)."""
    out = _python(_FIT_IN_A_THREAD, **env)
    assert out.returncode == 0, out.stderr[-3000:]
    words = out.stdout.split()
    got = dict(zip(words[::2], words[1::2]))
    assert got["LIMIT"] == "1" and got["SPLIT"] == "1", out.stdout
    assert float(got["RATIO"]) < 1.2, out.stdout  # one busy core (two: ~2 where the other core is free)
    assert float(got["RELAX"]) < 1.2, out.stdout


def test_the_limit_set_in_one_thread_holds_in_another(monkeypatch):
    """set_num_threads is per process: a thread started afterwards sees it, and a fit and a relaxation split over
    two threads from a non-main thread are bitwise the ones on one."""
    _every_step_split(monkeypatch, blas_limit=False)
    rng = np.random.default_rng(3)
    X = np.where(rng.random((300, 40)) < 0.5, -1.0, 1.0)
    mem = rng.normal(0, 0.2, (2, 30, 40))
    F = make_interaction("rectified_polynomial", 4)
    fits, epoch = [], cpu_fit.CpuFit.epoch
    monkeypatch.setattr(cpu_fit.CpuFit, "epoch", lambda self, *a: fits.append(self) or epoch(self, *a))

    def work():
        fit = train_memories(mem, X, X, F, beta_in=0.05, learning_rate=0.05, momentum=0.5, epochs=2,
                             batch_size=100, random_state=0)
        states = relax(mem, X[:20], F, 0.05, random_state=[1, 2], max_sweeps=4)
        return cpu_kernels.num_threads(), fits[-1].threads, fit, states

    runs = {}
    try:
        for n in (1, 2):
            cpu_kernels.set_num_threads(n)
            runs[n] = _in_thread(work)
    finally:
        cpu_kernels.set_num_threads(None)
    assert runs[1][:2] == (1, 1) and runs[2][:2] == (2, 2)
    one, two = runs[1][2], runs[2][2]
    np.testing.assert_array_equal(two.memories, one.memories)
    np.testing.assert_array_equal(two.loss, one.loss)
    for a, b in zip(runs[1][3], runs[2][3]):
        np.testing.assert_array_equal(a, b)


def _blas_now():
    import threadpoolctl  # noqa: PLC0415

    return [lib.num_threads for lib in threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers]


def test_fits_in_several_threads_at_once_give_the_serial_bits_and_leave_blas_as_it_was(monkeypatch):
    """Three threads fitting at once: each fit bitwise the fit made alone, and BLAS's thread count afterwards what
    it was (each fit restoring the count it found left BLAS on one thread; a hold set from a thread other than the
    main one was ignored by OpenBLAS 0.3.31, so those fits' products ran on BLAS's threads and rounded otherwise)."""
    pytest.importorskip("threadpoolctl")
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    rng = np.random.default_rng(0)
    X = np.where(rng.random((2000, 200)) < 0.5, -1.0, 1.0)
    mem = rng.normal(0, 0.1, (1, 100, 200))
    F = make_interaction("rectified_polynomial", 5)
    kw = dict(beta_in=0.02, learning_rate=0.05, momentum=0.5, batch_size=1000, random_state=0, epochs=2)
    before = _blas_now()
    want = train_memories(mem, X, X, F, **kw)
    got, errors = [], []

    def fit():
        try:
            got.extend(train_memories(mem, X, X, F, **kw) for _ in range(2))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=fit) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(got) == 6
    for g in got:
        np.testing.assert_array_equal(g.memories, want.memories)
        np.testing.assert_array_equal(g.loss, want.loss)
    assert _blas_now() == before


def test_the_kernels_own_products_run_within_the_thread_limit(monkeypatch):
    """Relaxation's similarities and the loss kernel's products run with BLAS held to damlite's thread count where
    BLAS would use more (NUMBA_NUM_THREADS=1 alone left them on BLAS's threads, which then spun on the cores), and
    BLAS is as it was afterwards; at a limit of BLAS's own count nothing is held."""
    pytest.importorskip("threadpoolctl")
    if cpu_kernels.blas_threads() < 2:
        pytest.skip("BLAS runs one thread here by itself: nothing to hold")
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    seen, similarities = [], cpu_kernels.similarities
    monkeypatch.setattr(cpu_kernels, "similarities", lambda *a: seen.append(_blas_now()) or similarities(*a))
    rng = np.random.default_rng(0)
    X = np.where(rng.random((40, 30)) < 0.5, -1.0, 1.0)
    mem = rng.normal(0, 0.1, (2, 20, 30))
    F = make_interaction("polynomial", 3)
    from damlite.network import loss_and_gradient  # noqa: PLC0415

    before = _blas_now()
    try:
        for limit in (1, cpu_kernels.blas_threads()):
            cpu_kernels.set_num_threads(limit)
            seen.clear()
            relax(mem, X, F, 0.1, random_state=0, max_sweeps=2)
            loss_and_gradient(mem, X, X, F, 0.1, 0.1)
            assert len(seen) == 2 and all(max(counts) == limit for counts in seen), (limit, seen)
            assert _blas_now() == before
    finally:
        cpu_kernels.set_num_threads(None)


def test_relaxations_in_several_threads_at_once_each_give_the_relaxation_alone():
    """Relaxations from three threads at once, each bitwise the one alone (when relaxation ran numba's prange, its
    workqueue layer, the fork-safe one where TBB is missing, aborted the process: 'Concurrent access has been
    detected')."""
    code = ("import threading, numpy as np\nfrom damlite.network import relax\n"
            "from damlite.interactions import make_interaction\n"
            "rng = np.random.default_rng(0)\nmem = rng.normal(0, 0.3, (1, 100, 100))\n"
            "X = np.where(rng.random((300, 100)) < 0.5, -1.0, 1.0)\nF = make_interaction('rectified_polynomial', 5)\n"
            "want = relax(mem, X, F, 0.01, random_state=0)[0]\nout = []\n"
            "def go():\n    out.extend(relax(mem, X, F, 0.01, random_state=0)[0] for _ in range(5))\n"
            "ts = [threading.Thread(target=go) for _ in range(3)]\n[t.start() for t in ts]; [t.join() for t in ts]\n"
            "print(len(out), all((o == want).all() for o in out))\n")
    out = _python(code)
    assert out.returncode == 0 and out.stdout.split() == ["15", "True"], out.stdout + out.stderr[-2000:]


def test_set_num_threads_refuses_what_numba_cannot_run():
    assert cpu_kernels.available()
    most = numba.config.NUMBA_NUM_THREADS
    for bad in (0, -1, most + 1, 1.5, True, "2"):
        with pytest.raises(ValueError, match=r"set_num_threads: n must be a whole number from 1 to"):
            cpu_kernels.set_num_threads(bad)


# ------------------------------------------------------------ thread counts checked first
@pytest.mark.parametrize("name, value", [("NUMBA_NUM_THREADS", "100000"), ("NUMBA_NUM_THREADS", "0"),
                                         ("NUMBA_NUM_THREADS", "-2"), ("NUMBA_NUM_THREADS", "two"),
                                         ("NUMBA_NUM_THREADS", "1e3"), ("OMP_NUM_THREADS", "0"),
                                         ("OMP_NUM_THREADS", "lots"), ("OMP_NUM_THREADS", "2,x")])
def test_a_thread_count_that_is_not_one_is_refused_by_name(monkeypatch, name, value):
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=rf"^{name} must be a whole number from 1 .*got '{value}'$"):
        cpu_kernels._env_threads()


@pytest.mark.parametrize("env, want", [({"NUMBA_NUM_THREADS": " 2 "}, 2), ({"OMP_NUM_THREADS": "3,1"}, 3),
                                       ({"OMP_NUM_THREADS": "100000"}, 100000), ({"OMP_NUM_THREADS": ""}, None),
                                       ({"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "2"}, 1), ({}, None)])
def test_thread_counts_the_environment_may_give(monkeypatch, env, want):
    """OpenMP's forms are taken (a list: its first entry); a large OMP_NUM_THREADS is capped at numba's pool later."""
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert cpu_kernels._env_threads() == want


def test_a_huge_numba_thread_count_gives_one_line_not_an_abort():
    """NUMBA_NUM_THREADS=100000 aborted the process inside LLVM ('Unable to allocate section memory')."""
    code = ("import numpy as np\nfrom damlite.interactions import make_interaction\n"
            "from damlite.network import relax\n"
            "relax(np.ones((1, 3, 8)), np.ones((2, 8)), make_interaction('polynomial', 3), 0.1)\n")
    out = _python(code, NUMBA_NUM_THREADS="100000")
    assert out.returncode == 1, out.stderr[-2000:]
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: NUMBA_NUM_THREADS must be a whole number from 1 to ") and "'100000'" in last


# ------------------------------------------------------------ small problems on one thread
def test_small_problems_run_on_one_thread_and_large_ones_on_all(monkeypatch):
    """The author's autoassociative example (N = K = 100, 25 states, full batch) splits no step (two threads
    measured slower, bench/threads.py); Krotov's MNIST configuration (minibatches of 1000, N = 794, K = 100)
    splits its two products and the loss kernel, not its optimiser step (G K N = 79 400: too small)."""
    _two_threads()
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    rng = np.random.default_rng(0)
    F = make_interaction("rectified_polynomial", 5)

    def fit_of(X, T, K, neurons, batch):
        mem = rng.normal(0, 0.1, (1, K, X.shape[1]))
        return cpu_fit.CpuFit.create(np, mem, np.zeros_like(mem), X, T, F, neurons, None, 0.01, 1.0, 1, batch,
                                     0.6, True, 1e-30)

    cpu_kernels.set_num_threads(2)
    try:
        states = np.where(rng.random((25, 100)) < 0.5, -1.0, 1.0)
        small = fit_of(states, states, 100, None, 25)
        pixels = np.concatenate([rng.uniform(-1, 1, (1000, 784)), -np.ones((1000, 10))], axis=1)
        large = fit_of(pixels, -np.ones((1000, 10)), 100, slice(784, 794), 1000)
    finally:
        cpu_kernels.set_num_threads(None)
    assert small.threads == 1
    rows = large._rows(1000)
    assert large.threads == 2 and (rows["front"], rows["back"], rows["step"]) == (2, 2, 1) and large.blas_one


# ------------------------------------------------------------ the first compilation says so
_COMPILE = """
import numpy as np
from damlite.kernels import cpu_kernels
x = np.random.default_rng(0).integers(0, 5, (30, 40)).astype(float)
assert cpu_kernels.palette(x) is not None
"""


@pytest.mark.slow  # ~20 s: three compiles in empty caches; CI's full suite runs it
def test_the_first_compilation_in_a_cache_says_so_once(tmp_path):
    """An empty cache: one line on stderr naming the cache (several kernels compiled, one line); the same cache
    again: nothing; another empty cache with DAMLITE_QUIET=1: nothing. (palette: a small kernel, quick to compile.)"""
    first = _python(_COMPILE, NUMBA_CACHE_DIR=str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr[-2000:]
    lines = first.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("damlite: compiling the CPU kernels with numba, once"), first.stderr
    assert str(tmp_path / "a") in lines[0]
    again = _python(_COMPILE, NUMBA_CACHE_DIR=str(tmp_path / "a"))
    assert again.returncode == 0 and again.stderr == "", again.stderr
    quiet = _python(_COMPILE, NUMBA_CACHE_DIR=str(tmp_path / "b"), DAMLITE_QUIET="1")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


_COMPILE_F32 = """
import numpy as np, damlite
patterns = np.where(np.random.default_rng(0).random((4, 16)) < 0.5, -1.0, 1.0)
damlite.DenseAssociativeMemory(4, n=2, epochs=1, dtype="{dtype}", random_state=0).fit(patterns).relax(patterns)
"""


@pytest.mark.slow
def test_the_first_float32_compilation_says_so_where_the_cache_holds_only_float64(tmp_path):
    """A cache that holds the float64 kernels: a float32 fit compiles its own (many seconds) and says so in one
    line naming float32; the same again: nothing; another float64 fit: nothing."""
    cache = str(tmp_path / "c")
    first = _python(_COMPILE_F32.format(dtype="float64"), NUMBA_CACHE_DIR=cache)
    assert first.returncode == 0, first.stderr[-2000:]
    assert [ln for ln in first.stderr.splitlines() if ln.startswith("damlite: compiling the CPU kernels with")]
    f32 = _python(_COMPILE_F32.format(dtype="float32"), NUMBA_CACHE_DIR=cache)
    assert f32.returncode == 0, f32.stderr[-2000:]
    lines = [ln for ln in f32.stderr.splitlines() if ln.startswith("damlite: compiling")]
    assert len(lines) == 1, f32.stderr
    assert lines[0].startswith("damlite: compiling the CPU kernels for float32 with numba, once (~5-15 s); cached in "
                               + cache), f32.stderr
    for dtype in ("float32", "float64"):
        again = _python(_COMPILE_F32.format(dtype=dtype), NUMBA_CACHE_DIR=cache)
        assert again.returncode == 0 and "damlite: compiling" not in again.stderr, again.stderr
    other = _python(_COMPILE_F32.format(dtype="float64").replace("n=2,", "n=20,"), NUMBA_CACHE_DIR=cache)
    assert other.returncode == 0 and "damlite: compiling" not in other.stderr, other.stderr  # one more kernel: silent


def test_the_cache_check_reads_the_dtypes_of_the_cached_kernels():
    """The first-compile line's check: numba's index of the package's cache names the argument types of each
    cached kernel; after a float64 fit it holds float64 kernels and no float16 one."""
    import damlite
    from damlite.kernels import _cpu_numba

    patterns = np.where(np.random.default_rng(0).random((4, 16)) < 0.5, -1.0, 1.0)
    damlite.DenseAssociativeMemory(4, n=2, epochs=1, dtype="float64", backend="numpy", random_state=0).fit(patterns)
    where = _cpu_numba.cache_dir()
    if where is None:
        pytest.skip("no writable numba cache here")
    assert _cpu_numba._cached_kernels(where) and _cpu_numba._cached_kernels(where, "float64")
    assert not _cpu_numba._cached_kernels(where, "float16")


# ------------------------------------------------------------ the products' cuts and the thread count
@pytest.mark.parametrize(("G", "K", "N"), [(1, 20, 100), (1, 20, 250), (3, 20, 100), (3, 20, 794), (8, 100, 250)])
def test_a_fit_whose_steps_are_split_gives_the_bits_of_one_thread(monkeypatch, G, K, N):
    """Every step split over 2 threads (MIN_WORK 0) gives the fit of one thread bitwise, N = 250 included: there
    OpenBLAS (0.3.31, SkylakeX kernels) sums the last N mod 8 columns of the gradient product otherwise in a block of
    fewer than 193 columns than in the whole product, so the block sweep's N = 250 fits (96 networks of K = 100, 30
    patterns, commit 8a10c68) differed from the first epoch on between NUMBA_NUM_THREADS=1 and 2."""
    _every_step_split(monkeypatch)
    rng = np.random.default_rng(1)
    X = np.where(rng.random((30, N)) < 0.5, -1.0, 1.0)
    mem = rng.normal(0, 0.1, (G, K, N))
    F = make_interaction("polynomial", 3)
    kw = dict(beta_in=1.0, beta_out=np.linspace(1e-3, 3e-3, G), learning_rate=np.linspace(0.01, 0.03, G),
              lr_decay=0.999, random_state=0, epochs=3)
    fits = {}
    for n in (1, 2):
        cpu_kernels.set_num_threads(n)
        try:
            fits[n] = train_memories(mem, X, X, F, **kw)
        finally:
            cpu_kernels.set_num_threads(None)
    np.testing.assert_array_equal(fits[2].memories, fits[1].memories)
    np.testing.assert_array_equal(fits[2].loss, fits[1].loss)


# ------------------------------------------------------------ the cuts follow the threads' speed
def _balance_rows(bounds, ends, chunk=63, key="row"):
    return {key + "_bounds": list(bounds), key + "_target": [float(x) for x in bounds], key + "_ends": list(ends),
            key + "_late": [0.0] * len(bounds), "chunk": chunk}


class _Checks:
    """Stands for a CpuFit in CpuFit._rebalance: every cut keeps the bits but those ``refused``; records the checks."""

    def __init__(self, refused=()):
        self.refused, self.checked = set(refused), []

    def _cut_keeps_bits(self, rows, key, lo, cut, hi):
        self.checked.append((key, lo, cut, hi))
        return (key, lo, cut, hi) not in self.refused


def _rebalanced(fit, rows, times, key="row"):
    """The boundaries after ``times`` minibatches with the same finishing times."""
    seen = []
    for _ in range(times):
        cpu_fit.CpuFit._rebalance(fit, rows, key, 10.0)
        seen.append(list(rows[key + "_bounds"]))
    return seen


def test_a_boundary_moves_one_step_at_a_time_towards_the_thread_that_finished_first():
    """Thread 0 keeps finishing 1 ms after thread 1 (of ~3.5 ms): its boundary moves down, never more than ROW_ALIGN
    rows a minibatch; the other way round, back up."""
    step = cpu_fit.ROW_ALIGN
    rows = _balance_rows([0, 504, 1000], [10.004, 10.003])
    seen = _rebalanced(_Checks(), rows, 6)
    assert seen[-1][1] < 504 and all(a[1] - b[1] in (0, step) for a, b in zip([[0, 504, 1000]] + seen, seen))
    low = seen[-1][1]
    rows["row_ends"] = [10.003, 10.004]
    seen = _rebalanced(_Checks(), rows, 12)
    assert seen[-1][1] > low and all(b[1] - a[1] in (0, step) for a, b in zip(seen, seen[1:]))


def test_a_boundary_stays_where_the_threads_finish_together_or_one_was_descheduled():
    rows = _balance_rows([0, 504, 1000], [10.0035, 10.0034])  # 0.1 ms of 3.5: within the dead band
    assert _rebalanced(_Checks(), rows, 20)[-1] == [0, 504, 1000]
    rows = _balance_rows([0, 504, 1000], [10.010, 10.001])  # 9 ms late of 11: not the cut's doing
    assert _rebalanced(_Checks(), rows, 5)[-1] == [0, 504, 1000]


def test_a_boundary_never_leaves_a_thread_less_than_a_chunk_and_columns_move_by_their_alignment():
    rows = _balance_rows([0, 72, 1000], [10.004, 10.003])
    assert _rebalanced(_Checks(), rows, 10)[-1][1] == 64  # the multiple of 8 nearest 63 rows (a chunk), not below
    rows = _balance_rows([0, 400, 794], [10.004, 10.003], key="col")
    seen = _rebalanced(_Checks(), rows, 3, key="col")
    assert seen[-1][1] < 400 and all(b[1] - a[1] in (0, -cpu_fit.COLUMN_ALIGN) for a, b in zip(seen, seen[1:]))


def test_a_boundary_moves_only_where_both_blocks_keep_the_whole_products_bits():
    fit = _Checks(refused={("row", 0, 496, 1000)})
    rows = _balance_rows([0, 504, 1000], [10.004, 10.003])
    seen = _rebalanced(fit, rows, 6)
    assert [0, 496, 1000] not in seen and seen[-1][1] < 496
    assert ("row", 0, 496, 1000) in fit.checked


def test_a_fit_whose_cuts_move_every_minibatch_gives_the_bits_of_one_thread(monkeypatch):
    """The boundaries moved back and forth (made-up finishing times fed to the balancing), one network's rows cut off
    chunk boundaries (a chunk's loss then waits for both threads' rows): bitwise the fit of one thread."""
    _every_step_split(monkeypatch)
    rng = np.random.default_rng(3)
    B, N = 1200, 120
    X = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    mem = rng.normal(0, 0.1, (1, 30, N))
    F = make_interaction("rectified_polynomial", 4)
    kw = dict(beta_in=0.1, learning_rate=0.02, momentum=0.6, batch_size=300, neurons=slice(100, 120),
              random_state=0, epochs=10)
    seen = set()
    rebalance = cpu_fit.CpuFit._rebalance
    noise, calls = np.random.default_rng(4), []

    def shaken(self, rows, key, began):  # thread 0 late, then early, then late..., with noise
        calls.append(key)
        ends = began + noise.uniform(1.4e-3, 1.5e-3, len(rows[key + "_ends"]))
        ends[0] += 8e-4 * np.sin(len(calls) / 8)
        rows[key + "_ends"] = list(ends)
        rebalance(self, rows, key, began)
        seen.add((key, tuple(rows[key + "_bounds"])))

    fits = {}
    for n in (1, 2):
        cpu_kernels.set_num_threads(n)
        try:
            if n == 2:
                monkeypatch.setattr(cpu_fit.CpuFit, "_rebalance", shaken)
            fits[n] = train_memories(mem, X, X[:, 100:], F, **kw)
        finally:
            cpu_kernels.set_num_threads(None)
    rows_seen = {bounds[1] for key, bounds in seen if key == "row"}
    assert len(rows_seen) >= 2 and any(b % 60 for b in rows_seen)  # moved, off the chunks (5 of 60 rows)
    assert len({bounds[1] for key, bounds in seen if key == "col"}) >= 2
    np.testing.assert_array_equal(fits[2].memories, fits[1].memories)
    np.testing.assert_array_equal(fits[2].loss, fits[1].loss)


# ------------------------------------------------------------ the loss kernel's chunks go to whichever thread is free
def _claim_rows(bounds, chunk=63, n_chunks=16, done=(0, 1)):
    rows = {"row_bounds": list(bounds), "chunk": chunk, "n_chunks": n_chunks, "claim_lock": threading.Lock(),
            "done": [threading.Event() for _ in range(len(bounds) - 1)]}
    for u in done:
        rows["done"][u].set()
    cpu_fit.CpuFit._claims(None, rows)
    return rows


def _drain(rows, t):
    got = []
    while (job := cpu_fit.CpuFit._claim(None, rows, t)) is not None:
        got.append(job)
    return got


def test_a_thread_takes_half_of_its_own_chunks_then_one_at_a_time_then_the_others_from_their_end():
    """Rows 0-300 and 300-1000 (chunks of 63): thread 0 owns chunks 0-3, thread 1 chunks 5-15, chunk 4 (rows 252-315)
    is cut by the boundary. Thread 1 takes 5 of its 11, then 3, 1, 1, 1; once its own are gone it takes the cut chunk
    and thread 0's from their end, one at a time; every chunk runs once."""
    rows = _claim_rows([0, 300, 1000])
    assert rows["claims"] == [[0, 4], [5, 16], [4, 5]]
    assert _drain(rows, 1) == [(5, 10), (10, 13), (13, 14), (14, 15), (15, 16), (3, 4), (2, 3), (1, 2), (0, 1), (4, 5)]
    rows = _claim_rows([0, 300, 1000])
    first = [cpu_fit.CpuFit._claim(None, rows, 0), cpu_fit.CpuFit._claim(None, rows, 1)]
    assert first == [(0, 2), (5, 10)]
    rest = _drain(rows, 0) + _drain(rows, 1)
    chunks = sorted(c for lo, hi in first + rest for c in range(lo, hi))
    assert chunks == list(range(16))


def test_a_thread_waits_for_rows_that_are_not_in_yet_and_chunks_run_once_whoever_takes_them():
    """Thread 1's rows come in late: thread 0, done with its own chunks, waits for them, then shares them; on two real
    threads taking chunks at once, each chunk is taken exactly once."""
    rows = _claim_rows([0, 504, 1000], done=(0,))
    timer = threading.Timer(0.05, rows["done"][1].set)
    timer.start()
    got = _drain(rows, 0)
    timer.join()
    assert [c for lo, hi in got for c in range(lo, hi)][:8] == list(range(8))  # its own first, before the wait
    assert sorted(c for lo, hi in got for c in range(lo, hi)) == list(range(16))
    for _ in range(20):
        rows = _claim_rows([0, 504, 1000])
        taken = [[], []]
        threads = [threading.Thread(target=lambda t=t: taken[t].extend(_drain(rows, t))) for t in (0, 1)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert sorted(c for part in taken for lo, hi in part for c in range(lo, hi)) == list(range(16))


@pytest.mark.parametrize(("part", "worker"), [("_back", True), ("_loss", True), ("_loss", False), ("_gather", True)])
def test_a_thread_that_fails_in_the_one_call_of_both_steps_leaves_no_thread_waiting(monkeypatch, part, worker):
    """A kernel failing on the kernels' other thread or on the calling one, before the threads meet between the two
    steps or after: the fit does not hang, warns once and ends on the NumPy loop, as that loop's fit."""
    _every_step_split(monkeypatch)
    rng = np.random.default_rng(3)
    X = np.where(rng.random((600, 120)) < 0.5, -1.0, 1.0)
    mem = rng.normal(0, 0.1, (1, 30, 120))
    F = make_interaction("rectified_polynomial", 4)
    kw = dict(beta_in=0.1, learning_rate=0.02, momentum=0.6, batch_size=300, neurons=slice(100, 120),
              random_state=0, epochs=3)
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numpy")
    want = train_memories(mem, X, X[:, 100:], F, **kw)
    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numba")
    real, calls = getattr(cpu_fit.CpuFit, part), []

    def fails(self, rows, *args):
        assert rows["one_call"]
        here = threading.current_thread().name.startswith("damlite-cpu")
        calls.append(here)
        if here == worker and len(calls) > 6:
            raise RuntimeError("LLVM ERROR: broken")
        return real(self, rows, *args)

    monkeypatch.setattr(cpu_fit.CpuFit, part, fails)
    monkeypatch.setattr(cpu_kernels, "_failure", None)
    monkeypatch.setattr(cpu_kernels, "_warned", False)
    cpu_kernels.set_num_threads(2)
    try:
        with pytest.warns(cpu_kernels.CpuKernelsWarning, match="broken"):
            got = _in_thread(lambda: train_memories(mem, X, X[:, 100:], F, **kw))
    finally:
        cpu_kernels.set_num_threads(None)
    assert worker in calls
    np.testing.assert_allclose(got.memories, want.memories, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.loss, want.loss, rtol=1e-12)
