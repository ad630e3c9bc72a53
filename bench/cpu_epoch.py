#!/usr/bin/env python
"""Krotov & Hopfield's MNIST configuration on the CPU: an epoch against its matrix products and the peers.

    python bench/cpu_epoch.py --threads 1,2 --out bench/results/cpu-epoch-<date>-<commit>.json  # a record
    python bench/cpu_epoch.py --threads 1 --rounds 1 --epochs 1 --no-peers             # a smoke run
    python bench/cpu_epoch.py --readme bench/results/cpu-epoch-<date>-<commit>.json  # README table from a record

For each thread count a fresh process (BLAS, numba and torch threads set through
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and NUMBA_NUM_THREADS before
anything loads) times the contenders round robin, ``--rounds`` rounds (a load spike
hits every contender of its round alike; medians over rounds), on all 60 000 digits:

* ``estimator_*``: :class:`damlite.DenseAssociativeMemory` ``fit(X, y)`` with Krotov's
  settings (K = 100, rectified n = 20, m = 30, T = 540, lr 4e-2 x 0.998, momentum 0.6,
  minibatch 1000, memories ~ N(-0.3, 0.3)): float64 original; float64 and float32
  normalized (the same network at the equivalent temperature); float64 through the
  NumPy path (``DAMLITE_CPU_KERNELS=numpy``, the reference); float64 original with its
  minibatches gathered from the float64 rows (``full_rows``: the 1-byte codes of
  :func:`damlite.kernels.cpu_kernels.palette` off, to show what they save; in the records made between commits
  55280ad and b376a13 (2026-11-27) a fit on one thread used the rows, so there the two were
  the same code, a check on the noise). The per-epoch cost is
  (fit of 1 + E epochs - fit of 1 epoch) / E, so setup is excluded; ``setup`` is what
  remains of the one-epoch fit. Each round starts with an untimed one-epoch fit, so that
  the first contender's fits do not pay for what the previous round's peers evicted. Test accuracy after the 1 + E epochs of the last round.
* ``train_memories_float64_original``: :func:`damlite.training.train_memories` on the same
  problem (what the book's Krotov run calls), per epoch as above.
* ``products_*``: the two matrix products per minibatch that any implementation does,
  X_b Z^T (1000 x 794 x 100) and r^T X_b (100 x 1000 x 794), for the 60 minibatches.
* ``krotov_notebook``: the training loop of Krotov & Hopfield's notebook
  (bench/peers/krotov_notebook.py, only its data loading adapted), one epoch per round,
  continuing; test accuracy after all rounds.
* ``author_torch`` and ``estimator_author_setup``: the paper author's PyTorch trainer on
  his MNIST example (bench/peers/author_torch.py; needs torch and a checkout of his
  repository, ``--author-repo``) and damlite's estimator set up the same way; skipped,
  with the reason in the record, when either is missing.

Clock: process CPU time on one thread (the machine is shared; CPU time is disturbed far
less than wall time), wall time on more threads (CPU time would add the threads up).
The record holds the load average before each round and after the last, the thread
settings, the machine and the versions (provenance). Results: ``--out`` (default
``bench/results/cpu-epoch-<date>.json``).
"""
from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
#: The multi-core setting of 2026-11-27 (commit e218769, bench/HISTORY.md): OpenBLAS's idle
#: threads sleep at once (they busy-wait 2**28 cycles by default), numba's parallel regions run on
#: GNU OpenMP with its idle threads asleep. Since commit 3de1824 (2026-11-27) a fit runs its kernels
#: and products on one pool of threads; ``--tuned`` checks that the setting no longer matters.
TUNED = {"OPENBLAS_THREAD_TIMEOUT": "4", "OMP_WAIT_POLICY": "PASSIVE", "NUMBA_THREADING_LAYER": "omp"}
KROTOV = dict(K=100, n=20, m=30, T=540.0, lr=4e-2, decay=0.998, momentum=0.6, batch=1000, mean=-0.3, std=0.3)


def _clock(threads):
    return time.process_time if threads == 1 else time.perf_counter


def epoch_products(X, Z, batch):
    """The yardstick: an epoch's two matrix products per minibatch, X_b Z^T and its transpose times X_b, each in the
    form the fit computes it (float64: X_b Z^T as (Z X_b^T)^T, damlite.kernels.cpu_fit.TRANSPOSED_MAX_ROWS)."""
    import numpy as np  # noqa: PLC0415

    for s in range(0, X.shape[0], batch):
        xb = X[s:s + batch]
        if X.dtype == np.float64:
            dT = Z @ xb.T
            dT @ xb
        else:
            d = xb @ Z.T
            d.T @ xb


def _estimator(dtype, variant, epochs, seed=0):
    """The estimator with Krotov's settings, whichever of fit() or the constructor takes the optimiser's."""
    from damlite import DenseAssociativeMemory  # noqa: PLC0415
    from damlite.classification import equivalent_temperature  # noqa: PLC0415

    T = KROTOV["T"] if variant == "original" else equivalent_temperature(KROTOV["T"], 794)
    params = dict(n_memories=KROTOV["K"], interaction="rectified_polynomial", n=KROTOV["n"],
                  error_exponent=KROTOV["m"], temperature=T, variant=variant, init="normal",
                  init_mean=KROTOV["mean"], init_std=KROTOV["std"], backend="numpy", dtype=dtype, random_state=seed)
    fit_kw = dict(epochs=epochs, learning_rate=KROTOV["lr"], lr_decay=KROTOV["decay"], momentum=KROTOV["momentum"],
                  batch_size=KROTOV["batch"], clamp=True)
    ctor = inspect.signature(DenseAssociativeMemory.__init__).parameters
    for key in list(fit_kw):
        if key in ctor:
            params[key] = fit_kw.pop(key)
    return DenseAssociativeMemory(**params), fit_kw


def _fit_seconds(data, dtype, variant, epochs, clock, engine="auto"):
    """A fit's seconds and the fitted estimator. ``engine``: the value of DAMLITE_CPU_KERNELS, or ``"rows"``: the
    kernels with the minibatches gathered from the float64 rows themselves, not from 1-byte codes
    (damlite.kernels.cpu_kernels.palette off), to show what the codes save."""
    from damlite.kernels import cpu_kernels  # noqa: PLC0415

    old, palette = os.environ.get("DAMLITE_CPU_KERNELS"), cpu_kernels.palette
    os.environ["DAMLITE_CPU_KERNELS"] = "auto" if engine == "rows" else engine
    if engine == "rows":
        cpu_kernels.palette = lambda x: None
    try:
        est, kw = _estimator(dtype, variant, epochs)
        start = clock()
        est.fit(data.X_train, data.y_train, **kw)
        return clock() - start, est
    finally:
        cpu_kernels.palette = palette
        if old is None:
            os.environ.pop("DAMLITE_CPU_KERNELS", None)
        else:
            os.environ["DAMLITE_CPU_KERNELS"] = old


class _Breakdown:
    """Where a fit's time goes: the matrix products (``np.matmul`` in damlite.kernels.cpu_fit and
    damlite.kernels.cpu_kernels) and each numba kernel, on the benchmark's clock; the rest is the
    optimiser's bookkeeping, Python and, on more threads, waiting. On T threads the parts are
    summed over the threads (thread-seconds) and the rest is T x the fit's time less the parts.
    Installed only around the extra, untimed fits."""

    def __init__(self, clock):
        import threading  # noqa: PLC0415

        self.clock, self.seconds, self.lock = clock, {}, threading.Lock()

    def __enter__(self):
        import numpy as np  # noqa: PLC0415

        from damlite.kernels import cpu_fit, cpu_kernels  # noqa: PLC0415

        outer = self

        class _NumPy:  # np as damlite.kernels.cpu_kernels and damlite.kernels.cpu_fit see it, with matmul timed
            def __getattr__(self, name):
                return getattr(np, name)

            @staticmethod
            def matmul(*a, **k):
                start = outer.clock()
                out = np.matmul(*a, **k)
                outer.add("products", start)
                return out

        def kernel(name):
            fn = self._kernel(name)

            def timed(*a):
                start = outer.clock()
                out = fn(*a)
                outer.add(f"kernel {name}", start)
                return out
            return timed

        self._modules, self._np, self._kernel = (cpu_kernels, cpu_fit), np, cpu_kernels.kernel
        cpu_kernels.np = cpu_fit.np = _NumPy()
        cpu_kernels.kernel = kernel
        return self

    def add(self, key, start):
        seconds = self.clock() - start
        with self.lock:
            self.seconds[key] = self.seconds.get(key, 0.0) + seconds

    def __exit__(self, *exc):
        for module in self._modules:
            module.np = self._np
        self._modules[0].kernel = self._kernel


def _train_memories_problem(data, seed=0):
    """Krotov's problem as train_memories takes it: probes (X, -1 labels), bipolar one-hot targets, N(-0.3, 0.3)."""
    import numpy as np  # noqa: PLC0415

    from damlite.interactions import RectifiedPolynomial  # noqa: PLC0415

    X = np.ascontiguousarray(np.concatenate([data.X_train, -np.ones((len(data.X_train), 10))], axis=1))
    T = -np.ones((len(X), 10))
    T[np.arange(len(X)), np.asarray(data.y_train)] = 1.0
    Z = np.random.default_rng(seed).normal(KROTOV["mean"], KROTOV["std"], (1, KROTOV["K"], X.shape[1]))
    return dict(memories=Z, probes=X, targets=T, interaction=RectifiedPolynomial(KROTOV["n"]),
                beta_in=1.0, beta_out=KROTOV["T"] ** -KROTOV["n"], learning_rate=KROTOV["lr"],
                lr_decay=KROTOV["decay"], momentum=KROTOV["momentum"], batch_size=KROTOV["batch"],
                error_exponent=KROTOV["m"], neurons=slice(784, 794), clamp=slice(0, 784), random_state=seed)


def _author_estimator(epochs, seed=0):
    """damlite's estimator in the author's MNIST example's setup (bench/peers/author_torch.py)."""
    from author_torch import SETTINGS as S  # noqa: PLC0415

    from damlite import DenseAssociativeMemory  # noqa: PLC0415

    return DenseAssociativeMemory(
        n_memories=S["K"], interaction="leaky_rectified_polynomial", n=S["n"], epsilon=0.01, leak="code",
        error_exponent=1, temperature=S["T"], variant="normalized", init="normal", init_mean=0.0, init_std=0.1,
        backend="numpy", dtype="float64", random_state=seed, epochs=epochs, learning_rate=S["lr"],
        lr_decay=S["decay"], momentum=S["momentum"], batch_size=S["batch"], clamp=True)


def worker(args):
    import numpy as np  # noqa: PLC0415

    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(HERE / "peers"))
    from damlite.kernels import cpu_kernels  # noqa: PLC0415
    from damlite.datasets import load_mnist  # noqa: PLC0415
    from damlite.sweeps.experiments import provenance  # noqa: PLC0415
    from damlite.training import train_memories  # noqa: PLC0415

    threads = args.threads_one
    clock = _clock(threads)
    data = load_mnist(source="full", data_dir=args.data_dir, validation_size=0, dtype="float64")
    E = args.epochs
    times, setups, accuracy, loads = {}, {}, {}, []

    def record(name, seconds):
        times.setdefault(name, []).append(seconds)

    def per_epoch(name, fit, last):
        """fit(epochs) -> (seconds, score()); per-epoch cost by differencing, setup = the rest of one epoch."""
        t1, _ = fit(1)
        t2, score = fit(1 + E)
        record(name, (t2 - t1) / E)
        setups.setdefault(name, []).append(t1 - (t2 - t1) / E)
        if last:
            accuracy[name] = {"epochs": 1 + E, "test_accuracy": score()}

    estimators = {"estimator_float64_original": ("float64", "original", "auto"),
                  "estimator_float64_normalized": ("float64", "normalized", "auto"),
                  "estimator_float32_normalized": ("float32", "normalized", "auto"),
                  "estimator_float64_original_numpy_path": ("float64", "original", "numpy"),
                  "estimator_float64_original_full_rows": ("float64", "original", "rows")}
    problem = _train_memories_problem(data)
    rng = np.random.default_rng(0)

    def products(dtype):
        X = problem["probes"].astype(dtype)
        Z = rng.normal(-0.3, 0.3, (KROTOV["K"], X.shape[1])).astype(dtype)
        batch = KROTOV["batch"]

        def run():
            start = clock()
            epoch_products(X, Z, batch)
            return clock() - start
        return run

    def fit_estimator(dtype, variant, engine):
        def fit(epochs):
            seconds, est = _fit_seconds(data, dtype, variant, epochs, clock, engine)
            return seconds, lambda: est.score(data.X_test, data.y_test)
        return fit

    def fit_train_memories(epochs):
        start = clock()
        train_memories(**problem, epochs=epochs)
        return clock() - start, lambda: None

    prod = {"products_float64": products(np.float64), "products_float32": products(np.float32)}
    peers, skipped = {}, {}
    author_data = None
    if args.no_peers:
        skipped = {"krotov_notebook": "--no-peers", "author_torch": "--no-peers"}
    else:
        import author_torch  # noqa: PLC0415
        import krotov_notebook as kn  # noqa: PLC0415

        peers["krotov_notebook"] = kn.KrotovNotebook(data.X_train, data.y_train, data.X_test, data.y_test, seed=0)
        repo = author_torch.find_repo(args.author_repo)
        if _no_torch():
            skipped["author_torch"] = "torch is not installed"
        elif repo is None:
            skipped["author_torch"] = "no checkout of hmcalister/Hopfield-Network-PyTorch (--author-repo)"
        else:
            import torch  # noqa: PLC0415

            torch.set_num_threads(threads)
            peers["author_torch"] = author_torch.AuthorTorch(repo, data.X_train, data.y_train, data.X_test,
                                                             data.y_test, seed=0)
            n = author_torch.SETTINGS["items"]
            author_data = (author_torch.bipolar_pixels(data.X_train[:n]), np.asarray(data.y_train[:n]),
                           author_torch.bipolar_pixels(data.X_test), np.asarray(data.y_test))

    def fit_author_setup(epochs):
        est = _author_estimator(epochs)
        start = clock()
        est.fit(author_data[0], author_data[1])
        return clock() - start, lambda: est.score(author_data[2], author_data[3])

    for fn in prod.values():  # warm up: compile the kernels (cached after the first run), fault the pages in
        fn()
    _fit_seconds(_Small(data), "float64", "original", 1, clock)
    _fit_seconds(_Small(data), "float32", "normalized", 1, clock)
    if author_data is not None:  # its interaction's kernel too (compiled per interaction)
        _author_estimator(1).fit(author_data[0][:2000], author_data[1][:2000])
    for r in range(args.rounds):
        last = r == args.rounds - 1
        loads.append(list(os.getloadavg()))
        # untimed: the first fit after the previous round's peers pays for caches and pages they took; without
        # this the first contender's 1-epoch fit absorbed it and its per-epoch cost came out too low by that / E
        _fit_seconds(data, "float64", "original", 1, clock)
        for name, (dtype, variant, engine) in estimators.items():
            per_epoch(name, fit_estimator(dtype, variant, engine), last)
        per_epoch("train_memories_float64_original", fit_train_memories, False)
        if author_data is not None:
            per_epoch("estimator_author_setup", fit_author_setup, last)
        for name, fn in prod.items():
            record(name, fn())
        for name, peer in peers.items():
            start = clock()
            peer.epoch()
            record(name, clock() - start)
            if last:
                accuracy[name] = {"epochs": peer.epochs_done, "test_accuracy": peer.test_accuracy()}
        print(f"threads={threads} round {r + 1}/{args.rounds} (load {loads[-1][0]:.1f}): "
              + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in times.items()), file=sys.stderr, flush=True)
    breakdown = {}  # per epoch, by differencing instrumented fits of 1 + E and 1 epochs (untimed otherwise)
    for name in ("estimator_float64_original", "estimator_float64_normalized", "estimator_float32_normalized"):
        dtype, variant, engine = estimators[name]
        parts = []
        for epochs in (1 + E, 1):
            with _Breakdown(clock) as bd:
                total, _ = _fit_seconds(data, dtype, variant, epochs, clock, engine)
            parts.append(dict(bd.seconds, fit=total))
        per = {k: (parts[0].get(k, 0.0) - parts[1].get(k, 0.0)) / E for k in parts[0]}
        per["rest"] = threads * per["fit"] - sum(v for k, v in per.items() if k != "fit")  # thread-seconds
        breakdown[name] = per
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = {
        "float64_original_epoch_over_products": med["estimator_float64_original"] / med["products_float64"],
        "float64_normalized_epoch_over_products": med["estimator_float64_normalized"] / med["products_float64"],
        "float32_epoch_over_products": med["estimator_float32_normalized"] / med["products_float32"],
        "float32_speedup_over_float64_normalized": med["estimator_float64_normalized"]
        / med["estimator_float32_normalized"],
        "estimator_over_train_memories": med["estimator_float64_original"] / med["train_memories_float64_original"],
        "train_memories_over_products": med["train_memories_float64_original"] / med["products_float64"],
        "numpy_path_over_kernels": med["estimator_float64_original_numpy_path"] / med["estimator_float64_original"],
        "float64_full_rows_epoch_over_products": med["estimator_float64_original_full_rows"] / med["products_float64"],
    }
    if "krotov_notebook" in med:
        ratios["krotov_notebook_over_estimator"] = med["krotov_notebook"] / med["estimator_float64_original"]
    if "author_torch" in med:
        ratios["author_torch_over_estimator_author_setup"] = med["author_torch"] / med["estimator_author_setup"]
    return {
        "threads": threads,
        "clock": "process CPU time" if threads == 1 else "wall time",
        "env": {k: os.environ.get(k) for k in (*THREAD_VARS, *TUNED)},
        "cpu_kernels": cpu_kernels.description(),
        "load_average_before_rounds": loads,
        "load_average_after": list(os.getloadavg()),
        "median_seconds_per_epoch": med,
        "all_seconds": times,
        "setup_seconds_median": {k: statistics.median(v) for k, v in setups.items()},
        "accuracy": accuracy,
        "ratios": ratios,
        "in_epoch_breakdown_seconds": breakdown,
        "skipped": skipped,
        "provenance": provenance("numpy"),
    }


class _Small:
    """The first 2000 digits: a warm-up fit."""

    def __init__(self, data):
        self.X_train, self.y_train = data.X_train[:2000], data.y_train[:2000]


def _cpu_model():
    """The CPU's model name (Linux: /proc/cpuinfo), else what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _commit():
    """The checkout's commit, with "+changes" where its tracked files differ from it (provenance)."""
    def git(*a):
        return subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True).stdout.strip()
    try:
        head = git("rev-parse", "HEAD")
        return (head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")) or None
    except OSError:
        return None


def _no_torch():
    try:
        import torch  # noqa: F401, PLC0415
    except ImportError:
        return True
    return False


ROWS = [  # (label, contender, what to put beside the time)
    ("the two matrix products per minibatch, float64", "products_float64", None),
    ("the two matrix products per minibatch, float32", "products_float32", None),
    ("estimator `fit`, float64, original network (T = 540)", "estimator_float64_original",
     "float64_original_epoch_over_products"),
    ("the same, its minibatches gathered from the float64 rows, not from 1-byte codes",
     "estimator_float64_original_full_rows", "float64_full_rows_epoch_over_products"),
    ("estimator `fit`, float64, normalized network", "estimator_float64_normalized",
     "float64_normalized_epoch_over_products"),
    ("estimator `fit`, float32, normalized network", "estimator_float32_normalized", "float32_epoch_over_products"),
    ("`train_memories`, float64, original network", "train_memories_float64_original", "train_memories_over_products"),
    ("estimator `fit`, float64, NumPy path (`DAMLITE_CPU_KERNELS=numpy`)", "estimator_float64_original_numpy_path",
     "numpy_path_over_kernels"),
    ("Krotov & Hopfield's notebook code (`bench/peers/krotov_notebook.py`)", "krotov_notebook",
     "krotov_notebook_over_estimator"),
    ("the author's PyTorch trainer, his MNIST example (`bench/peers/author_torch.py`)", "author_torch",
     "author_torch_over_estimator_author_setup"),
    ("estimator `fit` in the author's example setup", "estimator_author_setup", None),
]
RATIO_WORDS = {"numpy_path_over_kernels": "× the kernels", "krotov_notebook_over_estimator": "× damlite's float64",
               "author_torch_over_estimator_author_setup": "× damlite in his setup"}
BEGIN, END = "<!-- cpu-epoch table: begin (python bench/cpu_epoch.py --readme RESULT.json) -->", \
    "<!-- cpu-epoch table: end -->"


PAIRS = {  # target ratio -> (numerator, denominator) contenders, for the per-round (paired) ratios
    "float64_original_epoch_over_products": ("estimator_float64_original", "products_float64"),
    "float64_normalized_epoch_over_products": ("estimator_float64_normalized", "products_float64"),
    "float32_speedup_over_float64_normalized": ("estimator_float64_normalized", "estimator_float32_normalized"),
    "float64_full_rows_epoch_over_products": ("estimator_float64_original_full_rows", "products_float64"),
}


def paired(run, name):
    """The ratio ``name`` (:data:`PAIRS`) round by round, numerator and denominator from the same round: on this
    shared machine a slow spell that hits one contender of a round and not the other moves the ratio of the
    medians; the rounds' own ratios show how often the target holds. Returns the list (round order)."""
    num, den = PAIRS[name]
    a, b = run["all_seconds"][num], run["all_seconds"][den]
    return [x / y for x, y in zip(a, b)]


def _verdict(name, run, target, higher_is_better=False):
    """One target's line: the ratio of the medians, the rounds' own ratios (median, range, k of m rounds that
    meet it) and the verdict: met only when both the ratio of the medians and the rounds' median meet it."""
    got = run["ratios"][name]
    rounds = paired(run, name)
    meets = (lambda v: v >= target) if higher_is_better else (lambda v: v <= target)
    k = sum(meets(v) for v in rounds)
    mid = statistics.median(rounds)
    both = meets(got) and meets(mid)
    either = meets(got) or meets(mid)
    verdict = "met" if both else ("unclear: the two statistics disagree" if either else "missed")
    sign = "≥" if higher_is_better else "≤"
    return (f"{got:.3f} from the medians, {mid:.3f} the median of the rounds' own ratios (range {min(rounds):.2f}–"
            f"{max(rounds):.2f}; {k} of {len(rounds)} rounds {sign} {target}); target {sign} {target}: {verdict}")


def table(result, source=None):
    """Markdown: one table per thread count (seconds per epoch, ratio, accuracy), then the targets' verdicts;
    the last line names the record (``source``, its path), its commit, date and machine, and its command."""
    lines = []
    for run in result["runs"]:
        t, med, ratios, acc = run["threads"], run["median_seconds_per_epoch"], run["ratios"], run["accuracy"]
        loads = [la[0] for la in run["load_average_before_rounds"]] + [run["load_average_after"][0]]
        extra = [f"{k}={v}" for k, v in (run.get("env") or {}).items() if k in TUNED and v]
        with_timeout = f", with {' '.join(extra)}" if extra else ""
        head = (f"**{t} thread{'s' if t > 1 else ''}{with_timeout}** ({run['clock']}; {run['cpu_kernels']}; "
                f"1-minute load average {min(loads):.1f}–{max(loads):.1f} during the run)")
        lines += [head, "",
                  "| contender | seconds per epoch (median) | ratio | test accuracy (epochs) |", "|---|---|---|---|"]
        for label, key, ratio in ROWS:
            if key not in med:
                why = run.get("skipped", {}).get(key)
                if why:
                    lines.append(f"| {label} | not run: {why} | — | — |")
                continue
            r = f"{ratios[ratio]:.2f}{RATIO_WORDS.get(ratio, '× the products')}" if ratio in ratios else "—"
            a = acc.get(key)
            a = f"{a['test_accuracy']:.4f} ({a['epochs']})" if a and a["test_accuracy"] is not None else "—"
            lines.append(f"| {label} | {med[key]:.3f} | {r} | {a} |")
        target = result["targets"][f"float64 epoch / products, {t} thread{'s' if t > 1 else ''}"] if t <= 2 else None
        lines.append("")
        if target:
            lines += [f"Target: float64 epoch / products, original network: "
                      f"{_verdict('float64_original_epoch_over_products', run, target)}. Normalized network: "
                      f"{_verdict('float64_normalized_epoch_over_products', run, target)}.", ""]
            if "estimator_float64_original_full_rows" in med:
                lines += [f"The original network gathered from the float64 rows (no codes): "
                          f"{_verdict('float64_full_rows_epoch_over_products', run, target)}.", ""]
        lines += [f"Target: float32 faster than float64 (normalized network): "
                  f"{_verdict('float32_speedup_over_float64_normalized', run, 1.7, higher_is_better=True)}.", "",
                  "Setup of a fit (medians): "
                  + ", ".join(f"{k.replace('estimator_', '')} {v:.2f} s" for k, v in run["setup_seconds_median"].items()
                              if k.startswith("estimator_float")) + ".", ""]
        for name, per in run.get("in_epoch_breakdown_seconds", {}).items():
            label = name.replace("estimator_", "").replace("_", " ")
            kernels = ", ".join(f"{k.replace('kernel ', '')} {v:.3f}" for k, v in per.items() if k.startswith("kernel"))
            where = (f"{t} threads: the parts are thread-seconds, the fit {t} × its wall time; the rest is "
                     "bookkeeping, Python and waiting" if t > 1 else "the rest is bookkeeping and Python")
            rest = (f"the rest {per['rest']:.3f} s" if per["rest"] >= 0 else
                    f"the rest below zero ({per['rest']:.3f} s: one pair of instrumented fits, whose difference the "
                    "machine's noise outweighs here)")
            lines += [f"Inside one epoch ({label}, an instrumented fit outside the rounds; {where}): "
                      f"fit {per['fit']:.3f} s, products {per.get('products', 0):.3f} s, kernels: {kernels} s, "
                      f"{rest}.", ""]
    command = re.sub(r" --out \S+", "", result.get("command", "python bench/cpu_epoch.py"))
    where = f"`{source}`, commit {result['commit'][:7]}, " if source and result.get("commit") else ""
    lines.append(f"Record: {where}{result['date']}, {result['machine']['processor']} "
                 f"({result['machine']['cpu_count']} cores); made by `{command}`.")
    return "\n".join(lines)


def write_readme(path_json, readme=HERE / "README.md"):
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{readme} has no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path = Path(path_json).resolve()
    source = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    body = table(json.loads(path.read_text()), source)
    readme.write_text(f"{head}{BEGIN}\n{body}\n{END}{tail}")
    print(f"wrote the table of {path_json} into {readme}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts, one process each")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=2, help="E: epochs timed per fit (after one untimed)")
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--blas-timeout", type=int, default=None, metavar="T",
                   help="also run each thread count > 1 with OPENBLAS_THREAD_TIMEOUT=T (OpenBLAS's idle threads "
                        "busy-wait 2**T cycles after a product, on the cores the numba kernels then use; 4 is the least)")
    p.add_argument("--tuned", action="store_true",
                   help="also run each thread count > 1 with " + " ".join(f"{k}={v}" for k, v in TUNED.items())
                        + " (see bench/HISTORY.md)")
    p.add_argument("--author-repo", default=os.environ.get("DAMLITE_AUTHOR_REPO"),
                   help="a checkout of hmcalister/Hopfield-Network-PyTorch (its package is imported from there)")
    p.add_argument("--readme", metavar="JSON", help="write the README's table from this record, then stop")
    p.add_argument("--data-dir", default=os.environ.get("DAMLITE_DATA_DIR") or str(REPO.parent / "shared" / "data"
                                                                                    / "mnist"))
    p.add_argument("--out", default=None)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.readme:
        write_readme(args.readme)
        return 0
    if args.worker:
        args.threads_one = int(args.threads)
        print(json.dumps(worker(args)))
        return 0
    runs = []
    settings = []
    for t in [int(x) for x in args.threads.split(",")]:
        settings.append((t, {}))
        if args.blas_timeout is not None and t > 1:
            settings.append((t, {"OPENBLAS_THREAD_TIMEOUT": str(args.blas_timeout)}))
        if args.tuned and t > 1:
            settings.append((t, dict(TUNED)))
    for t, extra in settings:
        env = dict(os.environ, DAMLITE_QUIET="1", PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH",
                                                                                                         "")]))
        env.update({k: str(t) for k in THREAD_VARS})
        for k in TUNED:
            env.pop(k, None)
        env.update(extra)
        cmd = [sys.executable, __file__, "--worker", "--threads", str(t), "--rounds", str(args.rounds), "--epochs",
               str(args.epochs), "--data-dir", args.data_dir] + (["--no-peers"] if args.no_peers else []) \
            + (["--author-repo", args.author_repo] if args.author_repo else [])
        out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps({"threads": t, "env": extra, "ratios": runs[-1]["ratios"],
                          "accuracy": runs[-1]["accuracy"]}, indent=1))
    result = {
        "benchmark": "Krotov & Hopfield's MNIST configuration, full MNIST, per epoch (bench/cpu_epoch.py)",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "python bench/cpu_epoch.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "commit": _commit(),
        "machine": {"processor": _cpu_model(), "cpu_count": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "epochs_timed": args.epochs, "rounds": args.rounds,
        "targets": {"float64 epoch / products, 1 thread": 1.3, "float64 epoch / products, 2 threads": 1.5,
                    "float32 speed-up over float64 (normalized)": 1.7},
        "runs": runs,
    }
    out = Path(args.out or REPO / "bench" / "results" / f"cpu-epoch-{dt.date.today().isoformat()}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
