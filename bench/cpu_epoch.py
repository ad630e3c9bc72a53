#!/usr/bin/env python
"""Krotov & Hopfield's MNIST configuration on the CPU: an epoch against its matrix products and the peers.

    python bench/cpu_epoch.py                        # threads 1 and 2, ~10 min on a busy 2-core machine
    python bench/cpu_epoch.py --threads 1 --rounds 1 --epochs 1 --no-peers   # a smoke run

For each thread count a fresh process (BLAS, numba and torch threads set through
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and NUMBA_NUM_THREADS before
anything loads) times, round robin over ``--rounds`` rounds, on all 60 000 MNIST digits:

* ``estimator_*``: :class:`damlite.DenseAssociativeMemory` ``fit(X, y)`` with Krotov's
  settings (K = 100, rectified n = 20, m = 30, T = 540, lr 4e-2 x 0.998, momentum 0.6,
  minibatch 1000, memories ~ N(-0.3, 0.3)): float64 original; float64 and float32
  normalized (the same network at the equivalent temperature); float64 through the
  NumPy path (``DAMLITE_CPU_KERNELS=numpy``, the reference). The per-epoch cost is
  (fit of 1 + E epochs - fit of 1 epoch) / E, so setup is excluded; ``setup`` is what
  remains of the one-epoch fit. Test accuracy after the 1 + E epochs of the last round.
* ``products_*``: the two matrix products per minibatch that any implementation does,
  X_b Z^T (1000 x 794 x 100) and r^T X_b (100 x 1000 x 794), for the 60 minibatches.
* ``krotov_notebook``: the training loop of Krotov & Hopfield's notebook
  (bench/peers/krotov_notebook.py, only its data loading adapted), one epoch per round,
  continuing; test accuracy after all rounds.
* ``torch_author``: the paper author's PyTorch trainer, when torch is installed
  (see bench/README.md; not timed when it is missing).

Clock: process CPU time on one thread (the machine is shared; CPU time is disturbed far
less than wall time), wall time on more threads (CPU time would add the threads up);
both are stored. Results: ``bench/results/cpu-epoch-<date>.json`` (or ``--out``).
"""
from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
KROTOV = dict(K=100, n=20, m=30, T=540.0, lr=4e-2, decay=0.998, momentum=0.6, batch=1000, mean=-0.3, std=0.3)


def _clock(threads):
    return time.process_time if threads == 1 else time.perf_counter


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
    old = os.environ.get("DAMLITE_CPU_KERNELS")
    os.environ["DAMLITE_CPU_KERNELS"] = engine
    try:
        est, kw = _estimator(dtype, variant, epochs)
        start = clock()
        est.fit(data.X_train, data.y_train, **kw)
        return clock() - start, est
    finally:
        if old is None:
            os.environ.pop("DAMLITE_CPU_KERNELS", None)
        else:
            os.environ["DAMLITE_CPU_KERNELS"] = old


def worker(args):
    import numpy as np  # noqa: PLC0415

    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(HERE / "peers"))
    from damlite import cpu_kernels  # noqa: PLC0415
    from damlite.datasets import load_mnist  # noqa: PLC0415
    from damlite.experiments import provenance  # noqa: PLC0415

    threads = args.threads_one
    clock = _clock(threads)
    data = load_mnist(source="full", data_dir=args.data_dir, validation_size=0, dtype="float64")
    E = args.epochs
    times = {}
    setups = {}
    accuracy = {}

    def record(name, seconds):
        times.setdefault(name, []).append(seconds)

    estimators = {"estimator_float64_original": ("float64", "original", "auto"),
                  "estimator_float64_normalized": ("float64", "normalized", "auto"),
                  "estimator_float32_normalized": ("float32", "normalized", "auto"),
                  "estimator_float64_original_numpy_path": ("float64", "original", "numpy")}
    X64 = np.ascontiguousarray(np.concatenate([data.X_train, -np.ones((len(data.X_train), 10))], axis=1))
    rng = np.random.default_rng(0)

    def products(dtype):
        X = X64.astype(dtype)
        Z = rng.normal(-0.3, 0.3, (KROTOV["K"], X.shape[1])).astype(dtype)
        batch = KROTOV["batch"]

        def run():
            start = clock()
            for s in range(0, X.shape[0], batch):
                xb = X[s:s + batch]
                d = xb @ Z.T
                d.T @ xb
            return clock() - start
        return run

    prod = {"products_float64": products(np.float64), "products_float32": products(np.float32)}
    peers = {}
    if not args.no_peers:
        import krotov_notebook as kn  # noqa: PLC0415

        state = kn.KrotovNotebook(data.X_train, data.y_train, data.X_test, data.y_test, seed=0)
        peers["krotov_notebook"] = state
    for fn in prod.values():  # warm up: compile the kernels (cached after the first run), fault the pages in
        fn()
    _fit_seconds(_Small(data), "float64", "original", 1, clock)
    _fit_seconds(_Small(data), "float32", "normalized", 1, clock)
    for r in range(args.rounds):
        for name, (dtype, variant, engine) in estimators.items():
            t1, _ = _fit_seconds(data, dtype, variant, 1, clock, engine)
            t2, est = _fit_seconds(data, dtype, variant, 1 + E, clock, engine)
            per_epoch = (t2 - t1) / E
            record(name, per_epoch)
            setups.setdefault(name, []).append(t1 - per_epoch)
            if r == args.rounds - 1:
                accuracy[name] = {"epochs": 1 + E, "test_accuracy": est.score(data.X_test, data.y_test)}
        for name, fn in prod.items():
            record(name, fn())
        for name, peer in peers.items():
            start = clock()
            peer.epoch()
            record(name, clock() - start)
            if r == args.rounds - 1:
                accuracy[name] = {"epochs": peer.epochs_done, "test_accuracy": peer.test_accuracy()}
        print(f"threads={threads} round {r + 1}/{args.rounds}: "
              + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in times.items()), file=sys.stderr, flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = {
        "float64_original_epoch_over_products": med["estimator_float64_original"] / med["products_float64"],
        "float64_normalized_epoch_over_products": med["estimator_float64_normalized"] / med["products_float64"],
        "float32_epoch_over_products": med["estimator_float32_normalized"] / med["products_float32"],
        "float32_speedup_over_float64_normalized": med["estimator_float64_normalized"]
        / med["estimator_float32_normalized"],
        "numpy_path_over_kernels": med["estimator_float64_original_numpy_path"] / med["estimator_float64_original"],
    }
    if "krotov_notebook" in med:
        ratios["krotov_notebook_over_estimator"] = med["krotov_notebook"] / med["estimator_float64_original"]
    return {
        "threads": threads,
        "clock": "process CPU time" if threads == 1 else "wall time",
        "env": {k: os.environ.get(k) for k in THREAD_VARS},
        "cpu_kernels": cpu_kernels.description(),
        "load_average_after": list(os.getloadavg()),
        "median_seconds_per_epoch": med,
        "all_seconds": times,
        "setup_seconds_median": {k: statistics.median(v) for k, v in setups.items()},
        "accuracy": accuracy,
        "ratios": ratios,
        "provenance": provenance("numpy"),
        "torch_author": "not run: torch is not installed" if _no_torch() else "not run: see bench/README.md",
    }


class _Small:
    """The first 2000 digits: a warm-up fit."""

    def __init__(self, data):
        self.X_train, self.y_train = data.X_train[:2000], data.y_train[:2000]


def _no_torch():
    try:
        import torch  # noqa: F401, PLC0415
    except ImportError:
        return True
    return False


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts, one process each")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=2, help="E: epochs timed per fit (after one untimed)")
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--data-dir", default=os.environ.get("DAMLITE_DATA_DIR") or str(REPO.parent / "shared" / "data"
                                                                                    / "mnist"))
    p.add_argument("--out", default=None)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        args.threads_one = int(args.threads)
        print(json.dumps(worker(args)))
        return 0
    runs = []
    for t in [int(x) for x in args.threads.split(",")]:
        env = dict(os.environ, DAMLITE_QUIET="1", PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH",
                                                                                                         "")]))
        env.update({k: str(t) for k in THREAD_VARS})
        cmd = [sys.executable, __file__, "--worker", "--threads", str(t), "--rounds", str(args.rounds), "--epochs",
               str(args.epochs), "--data-dir", args.data_dir] + (["--no-peers"] if args.no_peers else [])
        out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps({"threads": t, "ratios": runs[-1]["ratios"], "accuracy": runs[-1]["accuracy"]}, indent=1))
    result = {
        "benchmark": "Krotov & Hopfield's MNIST configuration, full MNIST, per epoch (bench/cpu_epoch.py)",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"processor": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
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
