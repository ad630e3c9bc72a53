#!/usr/bin/env python
"""Whole fits with the numba kernels of two (or more) git revisions, interleaved in one process.

    python bench/kernel_ab.py 7307065~1 HEAD --threads 1 --rounds 3 --out bench/results/kernel-ab-<date>-<commit>.json
    python bench/kernel_ab.py 0afca8f HEAD --workload author --rounds 9
    python bench/kernel_ab.py 2cc5258 HEAD --workload loss --rounds 15     # the loss kernel alone
    python bench/kernel_ab.py 2cc5258 HEAD --workload relax --rounds 9     # relaxation

A revision whose loss kernel was chosen by a fit's size (``loss_grad(..., special)``) runs its specialised
kernel, the one its long fits ran. ``--workload author``: the paper author's autoassociative example instead
(medians of 5 fits per round, the revisions' order alternating by round).

``damlite/kernels/_cpu_numba.py`` of each revision is loaded as its own module; everything else
(the estimator, the wrapper, the data) is the working tree's. Each round fits, for each
revision in turn, the float64 original and the float32 normalized network of Krotov's
configuration (bench/cpu_epoch.py) on all 60 000 digits; the per-epoch cost is
(fit of 1 + E epochs - fit of 1 epoch) / E, medians over rounds. Comparing kernels inside one
process and one round removes most of this shared machine's drift between runs, which
is as large as the change measured (about 15 % between hours).
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CASES = (("float64", "original"), ("float32", "normalized"))


def _load_kernels(rev, tmp):
    """damlite/kernels/_cpu_numba.py at git revision ``rev`` as module damlite.kernels._cpu_numba_<i>.

    A revision from before the kernels moved into damlite/kernels/ has the file at damlite/_cpu_numba.py,
    taking the interaction codes and ``_cache_ok`` from cpu_kernels: those come from where they live now."""
    show = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:damlite/kernels/_cpu_numba.py"],
                          capture_output=True, text=True)
    if show.returncode != 0:
        show = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:damlite/_cpu_numba.py"], check=True,
                              capture_output=True, text=True)
    source = show.stdout.replace(
        "from .cpu_kernels import EXPONENTIAL, LEAKY, POLYNOMIAL, RECTIFIED, _cache_ok\n",
        "from ._scalar import EXPONENTIAL, LEAKY, POLYNOMIAL, RECTIFIED\nfrom ._cpu_numba import _cache_ok\n")
    name = f"damlite.kernels._cpu_numba_ab{len(list(Path(tmp).iterdir()))}"
    path = Path(tmp) / f"{name.split('.')[-1]}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    if "special" in inspect.signature(module.loss_grad).parameters:  # a revision with the size rule: the kernel
        inner = module.loss_grad                                      # a long fit ran there, the specialised one

        def loss_grad(*args):
            return inner(*args, True)
        module.loss_grad = loss_grad
    return module


def _krotov_rounds(args, kernels, cpu_kernels, ce, clock, times):
    """Krotov's configuration: per round and revision, (fit of 1 + E epochs - fit of 1 epoch) / E."""
    from damlite.datasets import load_mnist  # noqa: PLC0415

    data = load_mnist(source="full", data_dir=args.data_dir, validation_size=0, dtype="float64")
    small = ce._Small(data)
    E = args.epochs
    for module in kernels.values():  # compile outside the rounds
        cpu_kernels._kernels = module
        for dtype, variant in CASES:
            ce._fit_seconds(small, dtype, variant, 1, clock)
    for r in range(args.rounds):
        for rev, module in kernels.items():
            cpu_kernels._kernels = module
            for dtype, variant in CASES:
                t1, _ = ce._fit_seconds(data, dtype, variant, 1, clock)
                t2, _ = ce._fit_seconds(data, dtype, variant, 1 + E, clock)
                times.setdefault(f"{rev} {dtype} {variant}", []).append((t2 - t1) / E)
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in times.items()),
              file=sys.stderr, flush=True)


def _author_rounds(args, kernels, cpu_kernels, clock, times):
    """The author's example: per round and revision (the order alternating by round), the median of 5 fits'
    CPU time / epochs."""
    import numpy as np  # noqa: PLC0415

    from damlite.interactions import make_interaction  # noqa: PLC0415
    from damlite.training import train_memories  # noqa: PLC0415

    N, K, P, T = 100, 100, 25, 50.0
    rng = np.random.default_rng(1)
    states = np.where(rng.random((P, N)) < 0.5, -1.0, 1.0)
    init = np.clip(rng.normal(0, 0.1, (1, K, N)), -1, 1)
    F = make_interaction("rectified_polynomial", 5)

    def fit(epochs):
        start = clock()
        train_memories(init, states, states, F, beta_in=1.0 / (N * T), beta_out=1.0, error_exponent=1,
                       learning_rate=0.2, momentum=0.6, epochs=epochs, clamp=slice(0, N), random_state=0)
        return clock() - start

    for module in kernels.values():  # compile (or load) outside the rounds
        cpu_kernels._kernels = module
        fit(1)
    revs = list(kernels)
    for r in range(args.rounds):
        for rev in (revs if r % 2 == 0 else revs[::-1]):
            cpu_kernels._kernels = kernels[rev]
            times.setdefault(f"{rev} author float64", []).append(
                statistics.median(fit(args.author_epochs) for _ in range(5)) / args.author_epochs)
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1] * 1e3:.3f} ms" for k, v in times.items()),
              file=sys.stderr, flush=True)


def _recorded_loss_calls(args, cpu_kernels, ce):
    """One loss-kernel call of each of Krotov's fits (float64 original, float32 normalized), recorded in its
    fourth epoch on all 60 000 digits with the working tree's kernels: ``{dtype: args}``."""
    import numpy as np  # noqa: PLC0415

    from damlite.datasets import load_mnist  # noqa: PLC0415

    data = load_mnist(source="full", data_dir=args.data_dir, validation_size=0, dtype="float64")
    calls, kernel = {}, cpu_kernels.kernel
    for dtype, variant in CASES:
        def recording(name, dtype=dtype):
            fn = kernel(name)
            if name != "loss_grad":
                return fn

            def record(*a):
                calls[dtype] = [x.copy() if isinstance(x, np.ndarray) else x for x in a]
                return fn(*a)
            return record
        cpu_kernels.kernel = recording
        try:
            ce._fit_seconds(data, dtype, variant, 4, time.process_time)
        finally:
            cpu_kernels.kernel = kernel
    return calls


def _loss_rounds(args, kernels, cpu_kernels, ce, clock, times):
    """The loss kernel alone on one recorded minibatch of Krotov's fits (1000 rows, K = 100, 10 class neurons):
    per round and revision (the order alternating by round), the mean of 10 calls on fresh copies of the inputs."""
    import numpy as np  # noqa: PLC0415

    calls = _recorded_loss_calls(args, cpu_kernels, ce)

    def run(module, dtype):
        a = [x.copy() if isinstance(x, np.ndarray) else x for x in calls[dtype]]
        start = clock()
        for _ in range(10):
            module.loss_grad(*a)
        return (clock() - start) / 10

    for module in kernels.values():  # compile (or load) outside the rounds
        for dtype in calls:
            run(module, dtype)
    revs = list(kernels)
    for r in range(args.rounds):
        for rev in (revs if r % 2 == 0 else revs[::-1]):
            for dtype in calls:
                times.setdefault(f"{rev} loss kernel {dtype}", []).append(run(kernels[rev], dtype))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1] * 1e3:.3f} ms" for k, v in times.items()),
              file=sys.stderr, flush=True)


#: Relaxation workloads: (N neurons, K memories = stored patterns, interaction, n).
RELAX_CASES = ((100, 10, "polynomial", 2), (100, 40, "polynomial", 3), (200, 100, "polynomial", 10))


def _relax_rounds(args, kernels, cpu_kernels, clock, times):
    """Relaxation (``recall``) of each stored pattern with 20 % of its bits flipped, float64: per round and revision
    (the order alternating by round), the seconds of one recall of all of them (the mean of as many recalls as
    take ~0.1 s)."""
    import warnings  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    from damlite import DenseAssociativeMemory  # noqa: PLC0415

    rng = np.random.default_rng(0)
    cases = []
    for N, K, interaction, n in RELAX_CASES:
        X = np.where(rng.random((K, N)) < 0.5, -1.0, 1.0)
        noisy = np.where(rng.random(X.shape) < 0.2, -X, X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = DenseAssociativeMemory(K, interaction=interaction, n=n, epochs=1, random_state=0).fit(X)
        cases.append((f"N={N} K={K} {interaction} n={n}", est, noisy))

    def run(module, est, noisy, reps=1):
        cpu_kernels._kernels = module
        start = clock()
        for _ in range(reps):
            est.recall(noisy)
        return (clock() - start) / reps

    reps = {}
    for module in kernels.values():
        for label, est, noisy in cases:  # compile, then as many recalls per round as take ~0.1 s
            run(module, est, noisy)
            reps.setdefault(label, max(1, min(1000, int(0.1 / max(run(module, est, noisy), 1e-6)))))
    revs = list(kernels)
    for r in range(args.rounds):
        for rev in (revs if r % 2 == 0 else revs[::-1]):
            for label, est, noisy in cases:
                times.setdefault(f"{rev} relax {label}", []).append(run(kernels[rev], est, noisy, reps[label]))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1] * 1e3:.2f} ms" for k, v in times.items()),
              file=sys.stderr, flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("revisions", nargs="+", help="git revisions whose damlite/kernels/_cpu_numba.py to compare")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=3, help="E: epochs timed per fit (after one untimed)")
    p.add_argument("--data-dir", default=os.environ.get("DAMLITE_DATA_DIR") or str(REPO.parent / "shared" / "data"
                                                                                    / "mnist"))
    p.add_argument("--workload", choices=("krotov", "author", "loss", "relax"), default="krotov",
                   help="krotov: Krotov's MNIST configuration (float64 original, float32 normalized); author: the "
                        "paper author's autoassociative example (N = K = 100, 25 states, full batch, rectified n = 5, "
                        "T = 50, lr 0.2, momentum 0.6, clamped), --author-epochs epochs per fit, 5 fits per round; "
                        "loss: the loss kernel alone on one recorded minibatch of each Krotov fit, 10 calls per "
                        "round; relax: recall of noisy stored patterns (RELAX_CASES), one thread")
    p.add_argument("--author-epochs", type=int, default=200)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    if not 1 <= args.rounds <= 50 or not 1 <= args.epochs <= 500 or not 1 <= args.author_epochs <= 100_000 \
            or not 1 <= args.threads <= (os.cpu_count() or 1):
        p.error("--rounds 1..50, --epochs 1..500, --author-epochs 1..100000, --threads 1..cores")
    from damlite.kernels import cpu_kernels as kernels  # noqa: PLC0415

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(args.threads)  # before NumPy and numba load
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(HERE))
    import cpu_epoch as ce  # noqa: PLC0415

    from damlite.kernels import cpu_kernels  # noqa: PLC0415
    from damlite.sweeps.experiments import provenance  # noqa: PLC0415

    if not cpu_kernels.available():
        raise SystemExit("the numba kernels are off here (DAMLITE_CPU_KERNELS or numba missing): nothing to compare")
    clock = ce._clock(args.threads)
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        kernels = {rev: _load_kernels(rev, tmp) for rev in args.revisions}
        if args.workload == "author":
            _author_rounds(args, kernels, cpu_kernels, clock, times)
        elif args.workload == "loss":
            _loss_rounds(args, kernels, cpu_kernels, ce, clock, times)
        elif args.workload == "relax":
            _relax_rounds(args, kernels, cpu_kernels, clock, times)
        else:
            _krotov_rounds(args, kernels, cpu_kernels, ce, clock, times)
    commits = {rev: subprocess.run(["git", "-C", str(REPO), "rev-parse", rev], check=True, capture_output=True,
                                   text=True).stdout.strip() for rev in args.revisions}
    result = {
        "benchmark": "whole MNIST fits, numba kernels of several revisions interleaved (bench/kernel_ab.py)",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "python bench/kernel_ab.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "workload": args.workload, "revisions": commits, "threads": args.threads, "rounds": args.rounds,
        "epochs_timed": {"krotov": args.epochs, "author": args.author_epochs}.get(args.workload),
        "clock": "process CPU time" if args.threads == 1 else "wall time",
        "median_seconds_per_epoch" if args.workload in ("krotov", "author") else "median_seconds_per_call":
            {k: statistics.median(v) for k, v in times.items()},
        "all_seconds": times,
        "provenance": provenance("numpy"),
    }
    unit = "epoch" if args.workload in ("krotov", "author") else "call"
    for k, v in {k: statistics.median(v) for k, v in times.items()}.items():
        print(f"{k}: {v * 1e3:.3f} ms per {unit} (median of {len(times[k])})")
    revs = list(args.revisions)
    for k in times:  # each later revision against the first, round by round
        if k.startswith(revs[0] + " "):
            for rev in revs[1:]:
                other = rev + k[len(revs[0]):]
                if other in times:
                    ratios = [b / a for a, b in zip(times[k], times[other])]
                    print(f"{other} / {revs[0]}: median of the rounds' ratios {statistics.median(ratios):.3f} "
                          f"(range {min(ratios):.3f}-{max(ratios):.3f})")
    out = Path(args.out or REPO / "bench" / "results" / f"kernel-ab-{dt.date.today().isoformat()}.json")
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
