#!/usr/bin/env python
"""When do two threads beat one? The CPU kernels' split thresholds (damlite.kernels.cpu_kernels.MIN_WORK), measured.

    python bench/threads.py --out bench/results/threads-<date>.json      # the record (a few minutes)
    python bench/threads.py --quick                                       # a smoke run, nothing written
    python bench/threads.py --only autoassociative,krotov                 # only the two whole fits

Three parts, each in this one process, on one thread and on two (``set_num_threads``), in rounds that
alternate the order of the contenders (ABAB..., then BABA...), medians over the rounds; wall clock
(perf_counter), as the point of two threads is the wall time:

* ``kernels``: each kind of call of :data:`MIN_WORK` over a range of sizes, with the threshold at 0 so
  that the two-thread contender does split: the loss kernel (``cpu_kernels.loss_and_gradient``: G = 2
  networks of 64 rows, N = M = K = s, and a classifier's shape with M = 10 evaluated neurons), the
  optimiser step (``optimizer_step``, K = N = s), relaxation (``relax_async_bipolar``, one sweep: 25
  states with N = K = s, and N = K = 100 with B states), BLAS held to one thread in both contenders
  (only the kernel's split differs); a whole-epoch fit's three steps (``cpu_fit.CpuFit.epoch`` of
  one network, full batch of b rows, of the autoassociative shape N = M = K = 100 and of Krotov's
  MNIST shape, each step split alone against none split, BLAS held to one thread in both, as in a
  fit); and a fit with no step split with
  BLAS held to one thread against BLAS on its own threads. For each series the smallest work from
  which two threads are faster at every larger size measured (the crossover), and each contender's
  fastest round beside the medians (the rounds least disturbed by the machine's other work).
* ``autoassociative``: the paper author's autoassociative example (N = 100, K = 100 memories, 25
  states, full batch, rectified n = 5, T = 50, lr 0.2, momentum 0.6, clamped): per epoch, on one
  thread, on two with the thresholds, and on two with every step split (the rule before the
  thresholds split this problem's steps too).
* ``krotov``: Krotov & Hopfield's MNIST configuration (bench/cpu_epoch.py's, float64 original, all
  60 000 digits, minibatch 1000): per epoch, the same three contenders. Needs the MNIST files
  (``DAMLITE_DATA_DIR``); skipped, with the reason in the record, without them.

The record holds the load average before and after each part (the machine may be shared: a busy
second core makes two threads look worse than they are), the process's scheduling priority, numba's
and NumPy's versions, the thread settings and the commit. On a shared Linux machine the record of
bench/README.md was taken at a raised priority, in a session group of its own, so that other users'
processes do not take the second core mid-measurement (nice values alone act within a session group
where the kernel's autogroup is on)::

    setsid sh -c 'echo -15 > /proc/self/autogroup; exec nice -n -15 python bench/threads.py'

``--readme RECORD`` prints the README table of a record.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

import damlite  # noqa: E402
from damlite.interactions import make_interaction  # noqa: E402
from damlite.kernels import cpu_fit, cpu_kernels  # noqa: E402

INF = float("inf")


def _load():
    return [round(x, 2) for x in os.getloadavg()]


def _median_times(contenders, rounds, reps):
    """{name: median seconds per call} over ``rounds`` rounds; each round runs every contender ``reps`` calls,
    in the listed order on even rounds and reversed on odd ones. A contender is a function, or
    (a context manager in force during its calls, the function)."""
    names = list(contenders)
    seen = {name: [] for name in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            ctx, fn = contenders[name] if isinstance(contenders[name], tuple) else (contextlib.nullcontext(),
                                                                                     contenders[name])
            with ctx:
                start = time.perf_counter()
                for _ in range(reps):
                    fn()
                seen[name].append((time.perf_counter() - start) / reps)
    return {name: statistics.median(v) for name, v in seen.items()}, seen


def _reps(fn, target):
    """Calls of ``fn`` that take about ``target`` seconds (at least 1)."""
    fn()
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < target / 4 or n < 1:
        fn()
        n += 1
    return max(1, int(round(target * n / (time.perf_counter() - start))))


class _Threads:
    """set_num_threads(n) and MIN_WORK for the ``with`` block; the process's defaults after it."""

    def __init__(self, n, min_work=None):
        self.n, self.min_work = n, min_work

    def __enter__(self):
        self.saved = dict(cpu_kernels.MIN_WORK)
        if self.min_work is not None:
            cpu_kernels.MIN_WORK.update(self.min_work)
        cpu_kernels.set_num_threads(self.n)

    def __exit__(self, *exc):
        cpu_kernels.MIN_WORK.clear()
        cpu_kernels.MIN_WORK.update(self.saved)
        cpu_kernels.set_num_threads(None)


class _Kernel(_Threads):
    """:class:`_Threads`, with BLAS held to one thread: the products around a kernel (similarities, r^T xi) run
    on the calling thread in both contenders, so that only the kernel's split differs (BLAS's own threads
    made a 64 x 64 x 128 product 25x slower on the loaded machine)."""

    def __enter__(self):
        super().__enter__()
        self.blas = cpu_kernels.one_blas_thread()

    def __exit__(self, *exc):
        if self.blas is not None:
            self.blas.__exit__(*exc)
        super().__exit__(*exc)


ZERO = {"front": 0, "loss": 0, "back": 0, "step": 0, "relax": 0}


# ------------------------------------------------------------------------ the kernels
def _loss_point(s, M, rng):
    G, B = 2, 64  # one chunk of rows per network: two jobs to split
    N = max(s, M)
    mem = rng.normal(0, 0.3, (G, s, N))
    X = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    cols = slice(N - M, N)
    code = cpu_kernels.interaction_code(make_interaction("rectified_polynomial", 5))
    b = np.full(G, 1.0 / N)

    def call():
        cpu_kernels.loss_and_gradient(mem, X, X[:, cols], cols, b, np.ones(G), code, 2, True)
    return B * G * s * (N + M), call


def _step_point(s, rng):
    mem, vel, grad = (rng.normal(size=(1, s, s)) for _ in range(3))
    ok, lr = np.ones(1, bool), np.full(1, 1e-9)

    def call():
        cpu_kernels.optimizer_step(mem, vel, grad, ok, lr, 0.6, True, 1e-30, None)
    return s * s, call


def _relax_point(B, s, rng):
    mem = rng.normal(0, 0.3, (1, s, s))
    X = np.where(rng.random((1, B, s)) < 0.5, -1.0, 1.0)
    orders = np.argsort(rng.random((1, 1, s)), axis=2)
    code = cpu_kernels.interaction_code(make_interaction("rectified_polynomial", 5))

    def call():
        cpu_kernels.relax_async_bipolar(mem, X, orders, np.full(1, 1.0 / s), code, 1, 1)
    return B * s * s, call


def _fit(X, T, K, neurons, batch, clamp, b_in, b_out, m, momentum, rng, threads, min_work, init=None, n=5):
    """A CpuFit (rectified polynomial ``n``) built with ``threads`` threads and ``min_work`` (its split decisions
    are made here)."""
    N = X.shape[1]
    mem = rng.normal(0, 0.1, (1, K, N)) if init is None else init.copy()
    with _Threads(threads, min_work):
        fit = cpu_fit.CpuFit.create(np, mem, np.zeros_like(mem), X, T, make_interaction("rectified_polynomial", n),
                                    neurons, clamp, b_in, b_out, m, batch, momentum, True, 1e-30)
    assert fit is not None, "the fit did not take the whole-epoch path"
    return fit


def _autoassociative_rows(b, rng):
    """(X, T, K, neurons, clamp, b_in, b_out, m, n) of b states of the autoassociative shape, N = M = K = 100."""
    X = np.where(rng.random((b, 100)) < 0.5, -1.0, 1.0)
    return X, X, 100, None, slice(0, 100), 1 / 5000, 1.0, 1, 5


def _classifier_rows(b, rng):
    """The same for b rows of Krotov's MNIST shape: 784 pixels in [-1, 1] and 10 class neurons at -1 (N = 794,
    M = 10), K = 100, rectified n = 20, m = 30."""
    X = np.concatenate([rng.uniform(-1, 1, (b, 784)), -np.ones((b, 10))], axis=1)
    T = -np.ones((b, 10))
    T[np.arange(b), rng.integers(0, 10, b)] = 1
    return X, T, 100, slice(784, 794), slice(0, 794), 1 / 1588, 50.0, 30, 20


def _epoch(fit, lr):
    G = fit.shape[0]
    lr, finite = np.full(G, lr), np.ones(G, bool)
    return lambda: fit.epoch(None, lr, finite)


def _crossover(points, stat="ratio"):
    """The smallest work from which two threads are faster at every larger size measured (None: never), by the
    ratio of the medians (``"ratio"``) or of the fastest rounds (``"min"``)."""
    best = None
    for p in sorted(points, key=lambda p: -p["work"]):
        ratio = p["ratio"] if stat == "ratio" else p["two_min_s"] / p["one_min_s"]
        if ratio < 1:
            best = p["work"]
        else:
            break
    return best


def bench_kernels(quick):
    rng = np.random.default_rng(0)
    rounds, target = (3, 0.005) if quick else (41, 0.005)
    series = {}

    def measure(name, kind, points):
        rows = []
        for label, (work, call) in points:
            with _Kernel(1, ZERO):
                reps = _reps(call, target)
            med, seen = _median_times({"1": (_Kernel(1, ZERO), call), "2": (_Kernel(2, ZERO), call)}, rounds, reps)
            rows.append({"size": label, "work": int(work), "one_s": med["1"], "two_s": med["2"],
                         "ratio": med["2"] / med["1"], "one_min_s": min(seen["1"]), "two_min_s": min(seen["2"]),
                         "load": _load()[0]})
            print(f"  {name:<34} {label:<14} work {work:>11.3g}  1: {med['1'] * 1e6:9.1f} us  "
                  f"2: {med['2'] * 1e6:9.1f} us  2/1 {med['2'] / med['1']:.2f}", flush=True)
        series[name] = {"kind": kind, "points": rows, "crossover": _crossover(rows),
                        "crossover_fastest": _crossover(rows, "min")}

    sizes = [8, 12, 16, 24, 32, 48, 64, 96, 128, 192] if not quick else [8, 32, 128]
    measure("loss: G=2, B=64, N=M=K=s", "loss", [(f"s={s}", _loss_point(s, s, rng)) for s in sizes])
    measure("loss: G=2, B=64, N=K=s, M=10", "loss", [(f"s={s}", _loss_point(s, 10, rng)) for s in sizes + [256, 400]])
    steps = [16, 32, 64, 128, 256, 384, 512, 768, 1024, 1536] if not quick else [16, 128, 512]
    measure("step: G=1, K=N=s", "step", [(f"s={s}", _step_point(s, rng)) for s in steps])
    measure("relax: B=25, N=K=s, 1 sweep", "relax", [(f"s={s}", _relax_point(25, s, rng)) for s in sizes])
    states = [2, 4, 8, 16, 25, 50, 100, 200, 400, 800] if not quick else [2, 25, 200]
    measure("relax: N=K=100, B states, 1 sweep", "relax", [(f"B={b}", _relax_point(b, 100, rng)) for b in states])

    # a whole-epoch fit's steps, each split alone against none split (BLAS held to one thread in both)
    shapes = (("N=M=K=100", _autoassociative_rows, [25, 50, 100, 200, 400, 800]),
              ("Krotov's N=794, M=10, K=100", _classifier_rows, [125, 250, 500, 1000, 2000]))
    for shape, rows_of, batches in shapes:
        batches = batches if not quick else batches[::3]
        for step, kind in (("front", "front"), ("back", "back"), ("step", "step")):
            rows = []
            for b in batches:
                X, T, K, neurons, clamp, b_in, b_out, m, n = rows_of(b, rng)
                alone = {**{k: INF for k in ZERO}, kind: 0}
                none, split = (_fit(X, T, K, neurons, b, clamp, b_in, b_out, m, 0.6, rng, 2, mw, n=n)
                               for mw in ({k: INF for k in ZERO}, alone))
                if split._rows(b)[step] < 2:
                    print(f"  fit {step} {shape:<26} b={b:<8} not splittable ({step} has one part)")
                    continue
                one, two = _epoch(none, 1e-9), _epoch(split, 1e-9)
                med, seen = _median_times({"1": one, "2": two}, rounds, _reps(one, target))
                G, K, N, M, _ = split.shape
                work = {"front": b * G * K * (N + M), "back": b * G * K * N, "step": G * K * N}[step]
                rows.append({"size": f"b={b}", "work": work, "one_s": med["1"], "two_s": med["2"],
                             "ratio": med["2"] / med["1"], "one_min_s": min(seen["1"]), "two_min_s": min(seen["2"]),
                             "load": _load()[0]})
                print(f"  fit {step} {shape:<26} b={b:<8} work {work:>11.3g}  1: {med['1'] * 1e6:9.1f} us  "
                      f"2: {med['2'] * 1e6:9.1f} us  2/1 {med['2'] / med['1']:.2f}", flush=True)
            series[f"fit {step}: {shape}, G=1, full batch of b"] = {
                "kind": kind, "points": rows, "crossover": _crossover(rows), "crossover_fastest": _crossover(rows, "min")}

    # no step split: BLAS held to one thread during the epoch ("1") against BLAS on its own threads ("2")
    rows = []
    for b in [25, 50, 100, 200, 400, 800] if not quick else [25, 400]:
        X = np.where(rng.random((b, 100)) < 0.5, -1.0, 1.0)
        held = _fit(X, X, 100, None, b, slice(0, 100), 1 / 5000, 1.0, 1, 0.6, rng, 2, {k: INF for k in ZERO})
        free = _fit(X, X, 100, None, b, slice(0, 100), 1 / 5000, 1.0, 1, 0.6, rng, 2, {k: INF for k in ZERO})
        held.blas_one, free.blas_one = True, False
        one, two = _epoch(held, 1e-9), _epoch(free, 1e-9)
        med, seen = _median_times({"1": one, "2": two}, rounds, _reps(one, target))
        work = b * 100 * 100
        rows.append({"size": f"b={b}", "work": work, "one_s": med["1"], "two_s": med["2"], "ratio": med["2"] / med["1"],
                     "one_min_s": min(seen["1"]), "two_min_s": min(seen["2"]), "load": _load()[0]})
        print(f"  fit, no step split, BLAS free   b={b:<12} work {work:>11.3g}  held: {med['1'] * 1e6:9.1f} us  "
              f"free: {med['2'] * 1e6:9.1f} us  free/held {med['2'] / med['1']:.2f}", flush=True)
    series["fit, no step split: BLAS on its threads (2) against held to one (1)"] = {
        "kind": "blas", "points": rows, "crossover": _crossover(rows), "crossover_fastest": _crossover(rows, "min")}
    return series


# ------------------------------------------------------------------------ the two whole fits
def _three(make, lr, rounds, reps):
    """Per-epoch seconds of one fit per contender: one thread, two with the thresholds, two with every step split."""
    fits = {"one_thread": make(1, None), "two_threads": make(2, None), "two_threads_every_step_split": make(2, ZERO)}
    contenders = {name: _epoch(fit, lr) for name, fit in fits.items()}
    med, seen = _median_times(contenders, rounds, reps)
    split = {name: {s: fit._rows(fit.batch)[s] for s in ("front", "back", "step")} for name, fit in fits.items()}
    return {"per_epoch_s": med, "fastest_s": {name: min(v) for name, v in seen.items()}, "rounds_s": seen,
            "parts": split,
            "two_over_one": med["two_threads"] / med["one_thread"],
            "every_step_split_over_one": med["two_threads_every_step_split"] / med["one_thread"]}


def bench_autoassociative(quick):
    rng = np.random.default_rng(1)
    N, K, P, T = 100, 100, 25, 50.0
    X = np.where(rng.random((P, N)) < 0.5, -1.0, 1.0)
    init = np.clip(rng.normal(0, 0.1, (1, K, N)), -1, 1)

    def make(threads, min_work):
        return _fit(X, X, K, None, P, slice(0, N), 1.0 / (N * T), 1.0, 1, 0.6, rng, threads, min_work, init)
    rounds = 5 if quick else 21
    out = _three(make, 0.2, rounds, 20 if quick else 200)
    out["config"] = dict(N=N, K=K, states=P, batch="full", interaction="rectified_polynomial", n=5, T=T,
                         beta_in=1.0 / (N * T), learning_rate=0.2, momentum=0.6, clamp=True, epochs_per_sample=200)
    return out


def bench_krotov(quick):
    from damlite.datasets import load_mnist  # noqa: PLC0415

    sys.path.insert(0, str(HERE))
    from cpu_epoch import _estimator  # noqa: PLC0415

    try:
        data = load_mnist(source="full", validation_size=0, dtype="float64")
    except Exception as exc:  # noqa: BLE001 - recorded, not fatal
        return {"skipped": f"{type(exc).__name__}: {exc}"}
    captured = []
    create = cpu_fit.CpuFit.create

    def capture(cls, *a, **k):
        captured.append((a, k))
        return create(*a, **k)
    cpu_fit.CpuFit.create = classmethod(capture)
    try:
        est, kw = _estimator("float64", "original", 1)
        with warnings.catch_warnings():  # one epoch only builds the fit to time: the monitor's verdict is moot
            warnings.simplefilter("ignore", damlite.ConvergenceWarning)
            est.fit(data.X_train, data.y_train, **kw)
    finally:
        cpu_fit.CpuFit.create = create
    (args, kwargs), = captured
    xp, memories, velocity, *rest = args
    start = memories.copy()

    def make(threads, min_work):
        with _Threads(threads, min_work):
            fit = create(xp, start.copy(), np.zeros_like(start), *rest, **kwargs)
        assert fit is not None
        return fit
    rounds = 3 if quick else 11
    out = _three(make, 4e-2, rounds, 1)
    out["config"] = "bench/cpu_epoch.py's KROTOV, float64 original, 60 000 digits, minibatch 1000"
    return out


def _autogroup():
    try:
        return Path("/proc/self/autogroup").read_text().strip()
    except OSError:
        return None


def _provenance():
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "damlite", "bench/threads.py"], cwd=REPO,
                                    capture_output=True, text=True).stdout.strip())
    except OSError:
        commit, dirty = None, None
    return {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
            "worktree_changes": dirty, "machine": platform.processor() or platform.machine(),
            "cores": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
            "numba": cpu_kernels.numba.__version__, "kernels": cpu_kernels.description(),
            "blas_threads": cpu_kernels.blas_threads(), "min_work": dict(cpu_kernels.MIN_WORK),
            "priority": {"nice": os.nice(0), "autogroup": _autogroup()},
            "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
                                                    "NUMBA_THREADING_LAYER")}}


def readme(record):
    """The README's tables of a record."""
    def work(c):
        return "never" if c is None else f"{c:.3g}"
    lines = ["| series | crossover: medians | crossover: fastest rounds | 2/1 at the smallest size | 2/1 at the largest |",
             "|---|---|---|---|---|"]
    for name, s in record.get("kernels", {}).items():
        pts = s["points"]
        if pts:
            lines.append(f"| {name} | {work(s['crossover'])} | {work(s.get('crossover_fastest'))} | "
                         f"{pts[0]['ratio']:.2f} ({pts[0]['size']}) | {pts[-1]['ratio']:.2f} ({pts[-1]['size']}) |")
    lines += ["", "| workload | 1 thread | 2 threads | 2 threads, every step split | 2/1 | every step split/1 |",
              "|---|---|---|---|---|---|"]
    for name in ("autoassociative", "krotov"):
        r = record.get(name)
        if not r or "skipped" in r:
            continue
        t = r["per_epoch_s"]
        unit, scale = ("ms", 1e3) if t["one_thread"] < 0.1 else ("s", 1)
        lines.append(f"| {name} (per epoch) | {t['one_thread'] * scale:.3f} {unit} | {t['two_threads'] * scale:.3f} "
                     f"{unit} | {t['two_threads_every_step_split'] * scale:.3f} {unit} | {r['two_over_one']:.2f} | "
                     f"{r['every_step_split_over_one']:.2f} |")
    loads = [v for k, v in record.items() if k.startswith("load_")]
    lines.append("")
    lines.append("Load averages (1, 5, 15 min) around the parts: " + "; ".join(
        f"{k[5:]} {v}" for k, v in record.items() if k.startswith("load_")) if loads else "")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="record file (default: nothing written with --quick, else "
                                 "bench/results/threads-<date>.json)")
    p.add_argument("--quick", action="store_true", help="few sizes and rounds: a smoke run")
    p.add_argument("--only", default="kernels,autoassociative,krotov")
    p.add_argument("--readme", metavar="RECORD", help="print the README tables of a record and exit")
    a = p.parse_args(argv)
    if a.readme:
        print(readme(json.loads(Path(a.readme).read_text())))
        return 0
    if not cpu_kernels.available():
        print("the numba kernels are off here; nothing to measure", file=sys.stderr)
        return 1
    if cpu_kernels.numba.config.NUMBA_NUM_THREADS < 2:
        print("numba has one thread here (NUMBA_NUM_THREADS): nothing to compare", file=sys.stderr)
        return 1
    record = {"provenance": _provenance()}
    for part, fn in (("kernels", bench_kernels), ("autoassociative", bench_autoassociative), ("krotov", bench_krotov)):
        if part in a.only.split(","):
            print(f"== {part} (load {_load()})", flush=True)
            record[f"load_before_{part}"] = _load()
            record[part] = fn(a.quick)
            record[f"load_after_{part}"] = _load()
    print(readme(record))
    out = a.out or (None if a.quick else f"bench/results/threads-{dt.date.today().isoformat()}.json")
    if out:
        Path(out).write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
