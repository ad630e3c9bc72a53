#!/usr/bin/env python
"""NumPy kernels against the numba kernels (damlite.kernels.cpu_kernels) on the CPU, same machine, same run.

    python bench/cpu_kernels.py                   # ~5 min on a busy 2-core machine
    python bench/cpu_kernels.py --epochs 5 --repeats 2   # a smoke run

Workloads:

* ``block``: one repeat of a full-profile autoassociative block (100 networks = the
  10 x 10 coarse grid, N = 100, 20 patterns, K = 100, n = 10, polynomial and the
  author's leaky F), trained for ``--epochs`` full-batch epochs and relaxed, exactly as
  ``damlite.sweeps.tasks.autoassociative.run_autoassociative_block`` runs it. Time per epoch
  is the block time / epochs (relaxation included, amortised as in a 200-epoch block
  it is ~5 % of the time).
* ``relax``: asynchronous relaxation of B = 64 noisy probes (10 % flipped) of K = 100
  stored patterns at N = 784, n = 10, normalized network (one network).

Each round runs every contender once (round robin); the medians of process CPU time
over ``--repeats`` rounds are compared (on more threads it adds the threads up: the wall
time is recorded beside it). One thread unless OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
NUMBA_NUM_THREADS are set (the record holds them). Results:
``bench/results/cpu-kernels-<date>.json`` (or ``--out``; a committed record is named
``cpu-kernels-<date>-<commit>.json``).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from damlite.sweeps import experiments as ex  # noqa: E402
from damlite.interactions import make_interaction  # noqa: E402
from damlite.network import relax  # noqa: E402
from damlite.sweeps.tasks import autoassociative as aa  # noqa: E402

ENGINES = ("numpy", "numba")


def _with_engine(engine, fn):
    os.environ["DAMLITE_CPU_KERNELS"] = engine
    start, wall = time.process_time(), time.perf_counter()
    out = fn()
    _WALL.append(time.perf_counter() - wall)
    return time.process_time() - start, out


_WALL = []  # wall seconds of each timed call, in order (the process CPU time adds up all threads)


def block_workload(epochs, interaction):
    kw = dict(interaction="leaky_rectified_polynomial", leak="code", epsilon=0.01) if interaction == "leaky" else {}
    block = aa.autoassociative_block("normalized", 10, "coarse", repeats=1, epochs=epochs, **kw)
    return lambda: aa.run_autoassociative_block(block, backend="numpy")


def relax_workload():
    rng = np.random.default_rng(0)
    N, K, B = 784, 100, 64
    patterns = np.where(rng.random((K, N)) < 0.5, -1.0, 1.0)
    probes = patterns[:B] * np.where(rng.random((B, N)) < 0.1, -1.0, 1.0)
    F = make_interaction("polynomial", 10)
    return lambda: relax(patterns[None], probes, F, 1.0 / N, random_state=0, max_sweeps=20)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    workloads = {f"block_{name}": block_workload(args.epochs, name) for name in ("polynomial", "leaky")}
    workloads["relax_N784_B64"] = relax_workload()
    for fn in workloads.values():  # compile the kernels and warm the caches first
        for engine in ENGINES:
            _with_engine(engine, fn)
    times = {w: {e: [] for e in ENGINES} for w in workloads}
    walls = {w: {e: [] for e in ENGINES} for w in workloads}
    agree = {}
    for _ in range(args.repeats):
        for w, fn in workloads.items():
            outs = {}
            for engine in ENGINES:
                seconds, outs[engine] = _with_engine(engine, fn)
                times[w][engine].append(seconds)
                walls[w][engine].append(_WALL[-1])
            if w.startswith("block"):
                a = np.array([r["distance"] for r in outs["numpy"]])
                b = np.array([r["distance"] for r in outs["numba"]])
                agree[w] = {"cells_identical": int((a == b).sum()), "cells": int(a.size),
                            "mean_distance_numpy": float(a.mean()), "mean_distance_numba": float(b.mean())}
            else:
                agree[w] = {"states_identical": bool(np.array_equal(outs["numpy"][0], outs["numba"][0]))}
    result = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"processor": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
                    "load_average": list(os.getloadavg())},
        "provenance": ex.provenance("numpy"),
        "epochs": args.epochs, "repeats": args.repeats,
        "clock": "process CPU time (on more threads: all threads added up); wall time beside it",
        "threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")},
        "workloads": {},
    }
    for w, per in times.items():
        med = {e: statistics.median(v) for e, v in per.items()}
        scale = args.epochs if w.startswith("block") else 1
        result["workloads"][w] = {
            "median_seconds": med, "all_seconds": per,
            "median_wall_seconds": {e: statistics.median(v) for e, v in walls[w].items()},
            "per_epoch_seconds": {e: m / scale for e, m in med.items()} if scale > 1 else None,
            "speedup_numba_over_numpy": med["numpy"] / med["numba"],
            "agreement": agree[w],
        }
        wall = result["workloads"][w]["median_wall_seconds"]
        print(f"{w:>20}: numpy {med['numpy']:.2f} s, numba {med['numba']:.2f} s (wall {wall['numpy']:.2f} s, "
              f"{wall['numba']:.2f} s), speed-up {med['numpy'] / med['numba']:.2f}x  {agree[w]}")
    out = Path(args.out or f"bench/results/cpu-kernels-{dt.date.today().isoformat()}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
