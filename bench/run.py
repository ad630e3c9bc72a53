#!/usr/bin/env python
"""damlite's performance suite: one command, one results file, one table of ratios.

    python bench/run.py                      # full preset, NumPy, 1 BLAS thread
    python bench/run.py --preset quick       # smoke run (seconds)
    python bench/run.py --backend cupy --preset gpu --threads 0   # on a GPU machine
    python bench/run.py --markdown bench/results/<file>.json      # a results file as tables

Workloads (sizes per preset, see ``PRESETS``):

1. ``relax``: asynchronous relaxation of a batch of noisy probes of K stored +-1
   patterns, N = 100 and 784, several n (normalized network, a = 1/N).
2. ``epoch_autoassociative`` (N = 100, 20 patterns, full batch) and ``epoch_mnist``
   (Krotov & Hopfield's configuration: N = 784 + 10, minibatch 1000, n = 20, m = 30,
   momentum 0.6, K = 100; and the paper's K = 256), synthetic MNIST-shaped data.
3. ``grid``: 100 configurations (10 learning rates x 10 temperatures) trained as one
   (G = 100) tensor by ``damlite.training.train_memories`` vs one network at a time.
4. ``memory``: peak traced memory of the loss/gradient kernel under ``memory_budget``.

Every timing is the median of ``repeats`` rounds; in each round every contender runs
once (round robin), so the ratios compare runs made under the same machine load.
Baselines (bench/baselines.py) must agree with damlite before their times count: the
runner asserts it. The "ceiling" is the dominant matrix products alone, on the same
backend and dtype, at the same sizes. Results go to ``bench/results/<label>-<date>.json``
(or ``$OUT`` / ``--out``).
"""
from __future__ import annotations

import argparse
import os
import sys


def _early_threads(argv):
    """Pin BLAS/OpenMP threads before NumPy loads (``--threads N``; 0 = library default)."""
    threads = 1
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            threads = int(argv[i + 1])
        elif arg.startswith("--threads="):
            threads = int(arg.split("=", 1)[1])
    if threads > 0:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
            os.environ[var] = str(threads)
    return threads


THREADS = _early_threads(sys.argv)
os.environ.setdefault("DAMLITE_QUIET", "1")

import datetime as _dt  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import baselines as bl  # noqa: E402

import damlite  # noqa: E402
from damlite.backend import get_backend, to_numpy  # noqa: E402
from damlite.interactions import make_interaction  # noqa: E402
from damlite.network import DEFAULT_MEMORY_BUDGET, energy_difference, loss_and_gradient, relax  # noqa: E402
from damlite.training import train_memories  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:  # the optional extra "bench"
    torch = None

PRESETS = {
    # relax: (N, B probes) pairs, n values, K; epochs: autoassociative epochs per timing;
    # mnist: items per epoch (60 000 is the real epoch; time scales linearly), K values.
    "quick": dict(relax_sizes=[(100, 4)], relax_n=[2, 10], relax_K=20, auto_epochs=3, mnist_items=2000,
                  mnist_K=[100], dtypes=["float64"], grid_epochs=2, grid_K=20, repeats=2),
    "full": dict(relax_sizes=[(100, 32), (784, 8), (784, 64)], relax_n=[2, 10, 30], relax_K=100, relax_repeats=3,
                 auto_epochs=20, mnist_items=10000, mnist_K=[100, 256], dtypes=["float64", "float32"], grid_epochs=10,
                 grid_K=20, repeats=5),
    # on a GPU machine: damlite on CuPy against damlite on that machine's CPU (NumPy) and,
    # where torch sees the GPU, autograd on the GPU; no neuron-by-neuron baselines.
    "gpu": dict(relax_sizes=[(100, 256), (784, 64)], relax_n=[2, 30], relax_K=100, relax_repeats=3,
                auto_epochs=20, mnist_items=10000, mnist_K=[100, 256], dtypes=["float64", "float32"], grid_epochs=10,
                grid_K=20, repeats=5),
}

TARGETS = {  # (ratio key, comparison, threshold, description)
    "relax": ("neuronwise_over_damlite", ">=", 20.0, "relaxation >= 20x faster than neuron by neuron (N = 784)"),
    "epoch_mnist": ("torch_over_damlite", ">=", 5.0, "MNIST epoch >= 5x faster than PyTorch autograd (float64, K=256)"),
    "epoch_mnist_ceiling": ("damlite_over_ceiling", "<=", 3.0, "MNIST epoch within 3x of its matrix products"),
    "grid": ("single_over_batched", ">=", 10.0, "grid of 100 configurations >= 10x faster batched"),
}


# ------------------------------------------------------------------------ timing
class Bench:
    """Backend, synchronisation and the round-robin timer."""

    def __init__(self, backend, repeats, clock="auto"):
        self.xp, self.info = get_backend(backend)
        self.repeats = repeats
        self.is_cupy = self.info.name == "cupy"
        if clock == "auto":
            clock = "cpu" if (THREADS == 1 and not self.is_cupy) else "wall"
        self.clock = clock
        if self.is_cupy:
            import cupy  # noqa: PLC0415

            self._sync = cupy.cuda.Device().synchronize
        else:
            self._sync = lambda: None
        self.torch_device = "cpu"
        if torch is not None and self.is_cupy and torch.cuda.is_available():
            self.torch_device = "cuda"

    def sync(self):
        self._sync()
        if torch is not None and self.torch_device == "cuda":
            torch.cuda.synchronize()

    def arr(self, a, dtype):
        return self.xp.asarray(np.asarray(a, dtype=dtype))

    def tt(self, a, dtype):
        return torch.as_tensor(np.asarray(a, dtype=dtype), device=self.torch_device)

    def rounds(self, fns, repeats=None):
        """Warm up each function once (its result is returned), then time round robin."""
        repeats = self.repeats if repeats is None else repeats
        results = {}
        for name, fn in fns.items():
            results[name] = fn()
            self.sync()
        wall = {name: [] for name in fns}
        cpu = {name: [] for name in fns}
        for _ in range(repeats):
            for name, fn in fns.items():
                self.sync()
                start, start_cpu = time.perf_counter(), time.process_time()
                fn()
                self.sync()
                wall[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
        return results, {name: stats(wall[name], cpu[name], self.clock) for name in fns}


def stats(wall, cpu, clock, per=1):
    """Median, min and max of the chosen clock (``median_s``...), and both clocks' samples.

    ``clock="cpu"`` (NumPy, one thread): process CPU time, which a busy shared machine
    disturbs far less than wall time; ``"wall"``: elapsed time (GPU, several threads).
    """
    w, c = np.asarray(wall) / per, np.asarray(cpu) / per
    t = c if clock == "cpu" else w
    return {"clock": clock, "median_s": float(np.median(t)), "min_s": float(t.min()), "max_s": float(t.max()),
            "repeats": len(t), "wall_median_s": float(np.median(w)), "cpu_median_s": float(np.median(c)),
            "wall_s": [float(x) for x in w], "cpu_s": [float(x) for x in c]}


def ratio(timings, a, b):
    return timings[a]["median_s"] / timings[b]["median_s"]


def max_rel(a, b):
    a, b = np.asarray(to_numpy(a), dtype=np.float64), np.asarray(to_numpy(b), dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def check(name, value, tol, results):
    """Record an agreement number and fail loudly when it is out of tolerance."""
    results.setdefault("agreement", {})[name] = value
    if not (value <= tol):
        raise AssertionError(f"baseline disagrees with damlite: {name} = {value:.3g} > {tol:.3g}")


# ----------------------------------------------------------------- workloads
def bench_relax(b, cfg, seed=0):
    out = []
    K = cfg["relax_K"]
    for N, B in cfg["relax_sizes"]:
        rng = np.random.default_rng(seed + N)
        patterns = np.where(rng.random((K, N)) < 0.5, -1.0, 1.0)
        probes = patterns[rng.integers(0, K, B)] * np.where(rng.random((B, N)) < 0.1, -1.0, 1.0)
        for n in cfg["relax_n"]:
            F = make_interaction("rectified_polynomial", n)
            a = 1.0 / N
            mem_x, probes_x = b.arr(patterns, np.float64), b.arr(probes, np.float64)
            rec = {"workload": "relax", "config": dict(N=N, K=K, B=B, n=n, interaction="rectified_polynomial",
                                                         variant="normalized", dtype="float64", mode="async")}
            # agreement: energy differences and relaxed states
            ed = energy_difference(mem_x[None], probes_x[:4], F, a)[0]
            ed_ref = bl.energy_difference_neuronwise(patterns, probes[:4], "rectified_polynomial", n, a)
            check("energy_difference_rel", max_rel(ed, ed_ref), 1e-9, rec)
            orders = lambda N=N: bl.sweep_orders(seed, N)  # noqa: E731
            fns = {"damlite": lambda: relax(mem_x[None], probes_x, F, a, random_state=seed)}
            if not b.is_cupy:
                fns["neuronwise"] = lambda: bl.relax_neuronwise(patterns, probes, "rectified_polynomial", n, a,
                                                                orders=orders)
                fns["neuronwise_batched"] = lambda: bl.relax_neuronwise_batched(
                    patterns, probes, "rectified_polynomial", n, a, orders=orders)
            else:
                mem_h, probes_h = np.asarray(patterns), np.asarray(probes)
                fns["damlite_numpy_cpu"] = lambda: relax(mem_h[None], probes_h, F, a, random_state=seed)
            first = fns["damlite"]()
            sweeps = int(first[2])
            mem_t = b.xp.matrix_transpose(mem_x)
            fns["ceiling"] = lambda: [b.xp.matmul(probes_x, mem_t) for _ in range(sweeps)]
            res, timings = b.rounds(fns, repeats=cfg.get("relax_repeats"))
            states = to_numpy(res["damlite"][0])[0]
            if "neuronwise" in res:
                check("relaxed_states_mismatch_neuronwise", float(np.mean(states != res["neuronwise"][0])), 0, rec)
                check("relaxed_states_mismatch_batched", float(np.mean(states != res["neuronwise_batched"][0])), 0, rec)
            if "damlite_numpy_cpu" in res:
                # GPU and CPU sum in different orders: near-ties may break differently; recorded, <= 1 %
                check("relaxed_states_mismatch_numpy", float(np.mean(states != res["damlite_numpy_cpu"][0][0])), 0.01, rec)
            rec["config"]["sweeps"] = sweeps
            rec["config"]["converged"] = bool(np.all(to_numpy(res["damlite"][1])))
            rec["timings"] = timings
            rec["ratios"] = {"damlite_over_ceiling": ratio(timings, "damlite", "ceiling")}
            if "neuronwise" in timings:
                rec["ratios"]["neuronwise_over_damlite"] = ratio(timings, "neuronwise", "damlite")
                rec["ratios"]["neuronwise_batched_over_damlite"] = ratio(timings, "neuronwise_batched", "damlite")
            else:
                rec["ratios"]["numpy_cpu_over_damlite"] = ratio(timings, "damlite_numpy_cpu", "damlite")
            out.append(rec)
            print(_line(rec), flush=True)
    return out


def _epochs(train_epoch, memories, patterns, epochs, n, beta_in, beta_out, learning_rate):
    """A run of ``epochs`` epochs of a baseline's ``train_epoch`` (autoassociative, rectified polynomial)."""
    def run():
        m, v = memories, None
        for _ in range(epochs):
            m, _, v = train_epoch(m, patterns, patterns, "rectified_polynomial", n, beta_in, beta_out,
                                  learning_rate=learning_rate, velocity=v)
        return m
    return run


def bench_epoch_autoassociative(b, cfg, seed=1):
    N, P, K, n, E = 100, 20, 100, 10, cfg["auto_epochs"]
    rng = np.random.default_rng(seed)
    patterns = np.where(rng.random((P, N)) < 0.5, -1.0, 1.0)
    mem0 = np.clip(rng.normal(0.0, 0.1, (K, N)), -1, 1)
    b_in, b_out, lr = 1.0 / N, 1.0, 0.1
    F = make_interaction("rectified_polynomial", n)
    rec = {"workload": "epoch_autoassociative",
           "config": dict(N=N, patterns=P, K=K, n=n, epochs_per_timing=E, batch="full", dtype="float64",
                          beta_in=b_in, beta_out=b_out, learning_rate=lr)}
    mem_x, pat_x = b.arr(mem0, np.float64), b.arr(patterns, np.float64)
    fns = {"damlite": lambda: train_memories(mem_x[None], pat_x, pat_x, F, beta_in=b_in, beta_out=b_out,
                                             learning_rate=lr, epochs=E).memories[0]}
    if torch is not None:
        mem_t, pat_t = b.tt(mem0, np.float64), b.tt(patterns, np.float64)

        fns["torch"] = _epochs(bl.torch_train_epoch, mem_t, pat_t, E, n, b_in, b_out, lr)
    if not b.is_cupy:
        fns["neuronwise"] = _epochs(bl.train_epoch_neuronwise, mem0, patterns, E, n, b_in, b_out, lr)
    else:
        fns["damlite_numpy_cpu"] = lambda: train_memories(mem0[None], patterns, patterns, F, beta_in=b_in,
                                                          beta_out=b_out, learning_rate=lr, epochs=E).memories[0]
    mem_tT = b.xp.matrix_transpose(mem_x[None])[0]
    r = b.arr(rng.normal(size=(K, P)), np.float64)
    fns["ceiling"] = lambda: [(b.xp.matmul(pat_x, mem_tT), b.xp.matmul(r, pat_x)) for _ in range(E)]
    res, timings = b.rounds(fns)
    got = to_numpy(res["damlite"])
    if "torch" in res:
        check("memories_rel_torch", max_rel(got, res["torch"].cpu().numpy()), 1e-8, rec)
    if "neuronwise" in res:
        check("memories_rel_neuronwise", max_rel(got, res["neuronwise"]), 1e-8, rec)
    if "damlite_numpy_cpu" in res:
        check("memories_rel_numpy_cpu", max_rel(got, res["damlite_numpy_cpu"]), 1e-8, rec)
    rec["timings"] = {k: stats(v["wall_s"], v["cpu_s"], v["clock"], per=E) for k, v in timings.items()}  # per epoch
    rec["ratios"] = {"damlite_over_ceiling": ratio(timings, "damlite", "ceiling")}
    for other in ("torch", "neuronwise", "damlite_numpy_cpu"):
        if other in timings:
            rec["ratios"][f"{other}_over_damlite"] = ratio(timings, other, "damlite")
    print(_line(rec), flush=True)
    return [rec]


def mnist_problem(items, seed=2):
    """Synthetic MNIST-shaped data: 784 pixels in [-1, 1] (mostly -1), bipolar one-hot labels."""
    rng = np.random.default_rng(seed)
    X = np.where(rng.random((items, 784)) < 0.8, -1.0, rng.uniform(-1, 1, (items, 784)))
    labels = rng.integers(0, 10, items)
    targets = -np.ones((items, 10))
    targets[np.arange(items), labels] = 1.0
    probes = np.concatenate([X, -np.ones((items, 10))], axis=1)
    return probes, targets


def bench_epoch_mnist(b, cfg, seed=3):
    out = []
    items = cfg["mnist_items"]
    probes, targets = mnist_problem(items)
    n, m, batch, T, lr, momentum = 20, 30, 1000, 540.0, 4e-2, 0.6
    # beta_in = 1/T, beta_out = 1 is the same loss as Krotov & Hopfield's beta_in = 1,
    # beta_out = 1/T**n (F is homogeneous of degree n) and stays finite in float32.
    b_in, b_out = 1.0 / T, 1.0
    cols, clamp = slice(784, 794), slice(0, 784)
    F = make_interaction("rectified_polynomial", n)
    order = np.random.default_rng(seed).permutation(items)
    for K in cfg["mnist_K"]:
        mem0 = np.clip(np.random.default_rng(seed + K).normal(-0.3, 0.3, (K, 794)), -1, 1)
        for dtype in cfg["dtypes"]:
            dt = np.dtype(dtype).type
            rec = {"workload": "epoch_mnist",
                   "config": dict(N=794, K=K, n=n, m=m, minibatch=batch, items=items, dtype=dtype, beta_in=b_in,
                                  beta_out=b_out, learning_rate=lr, momentum=momentum, data="synthetic")}
            mem_x, probes_x, targets_x = b.arr(mem0, dt), b.arr(probes, dt), b.arr(targets, dt)
            kw = dict(beta_in=b_in, beta_out=b_out, learning_rate=lr, momentum=momentum, epochs=1, batch_size=batch,
                      error_exponent=m, neurons=cols, clamp=clamp, random_state=seed)
            fns = {"damlite": lambda: train_memories(mem_x[None], probes_x, targets_x, F, **kw).memories[0]}
            if torch is not None:
                tdt = torch.float64 if dtype == "float64" else torch.float32
                mem_t, probes_t, targets_t = (torch.as_tensor(x, dtype=tdt, device=b.torch_device)
                                              for x in (mem0, probes, targets))
                order_t = torch.as_tensor(order, device=b.torch_device)
                fns["torch"] = lambda: bl.torch_train_epoch(
                    mem_t, probes_t, targets_t, "rectified_polynomial", n, b_in, b_out, learning_rate=lr,
                    momentum=momentum, batch_size=batch, order=order_t, error_exponent=m, cols=cols, clamp=clamp)[0]
            mem_h, probes_h, targets_h = (np.asarray(x, dtype=dt) for x in (mem0, probes, targets))
            if b.is_cupy:
                fns["damlite_numpy_cpu"] = lambda: train_memories(mem_h[None], probes_h, targets_h, F, **kw).memories[0]
            else:
                fns["neuronwise"] = lambda: bl.train_epoch_neuronwise(
                    mem_h, probes_h, targets_h, "rectified_polynomial", n, b_in, b_out, learning_rate=lr,
                    momentum=momentum, batch_size=batch, order=order, error_exponent=m, neurons=cols,
                    clamp=clamp)[0]
            batches = [b.arr(probes[order[s:s + batch]], dt) for s in range(0, items, batch)]
            mem_T = b.xp.matrix_transpose(mem_x[None])[0]
            r = b.arr(np.random.default_rng(0).normal(size=(K, batch)), dt)
            fns["ceiling"] = lambda: [(b.xp.matmul(xb, mem_T), b.xp.matmul(r, xb)) for xb in batches]
            # agreement on the first minibatch: loss and gradient
            xb, tb = probes[order[:batch]], targets[order[:batch]]
            loss, grad, _ = loss_and_gradient(b.arr(mem0, dt)[None], b.arr(xb, dt), b.arr(tb, dt), F, b_in, b_out,
                                              error_exponent=m, neurons=cols)
            tol = 1e-9 if dtype == "float64" else 2e-3
            if dtype == "float64" and not b.is_cupy:
                loss_r, grad_r = bl.loss_and_gradient_neuronwise(mem0, xb, tb, "rectified_polynomial", n, b_in, b_out,
                                                                 error_exponent=m, neurons=cols)
                check("loss_rel_neuronwise", max_rel(to_numpy(loss)[0], loss_r), tol, rec)
                check("gradient_rel_neuronwise", max_rel(to_numpy(grad)[0], grad_r), tol, rec)
            if torch is not None:
                loss_t, grad_t = bl.torch_loss_and_gradient(mem_t, probes_t[order_t[:batch]],
                                                            targets_t[order_t[:batch]], "rectified_polynomial", n,
                                                            b_in, b_out, error_exponent=m, cols=cols)
                check("loss_rel_torch", max_rel(to_numpy(loss)[0], loss_t.cpu().numpy()), tol, rec)
                check("gradient_rel_torch", max_rel(to_numpy(grad)[0], grad_t.cpu().numpy()), tol, rec)
            res, timings = b.rounds(fns)
            got = to_numpy(res["damlite"])
            # after a whole epoch rounding differences grow a little (normalised steps); float32 is looser
            etol = 1e-7 if dtype == "float64" else 5e-2
            if "torch" in res:
                check("epoch_memories_rel_torch", max_rel(got, res["torch"].cpu().numpy()), etol, rec)
            if "neuronwise" in res:
                check("epoch_memories_rel_neuronwise", max_rel(got, res["neuronwise"]), etol, rec)
            if "damlite_numpy_cpu" in res:
                check("epoch_memories_rel_numpy_cpu", max_rel(got, res["damlite_numpy_cpu"]), etol, rec)
            rec["timings"] = timings
            rec["ratios"] = {"damlite_over_ceiling": ratio(timings, "damlite", "ceiling")}
            for other in ("torch", "neuronwise", "damlite_numpy_cpu"):
                if other in timings:
                    rec["ratios"][f"{other}_over_damlite"] = ratio(timings, other, "damlite")
            out.append(rec)
            print(_line(rec), flush=True)
    return out


def grid_problem(G_side=10, K=20, seed=4):
    N, P = 100, 20
    rng = np.random.default_rng(seed)
    patterns = np.where(rng.random((P, N)) < 0.5, -1.0, 1.0)
    mem0 = np.clip(rng.normal(0.0, 0.1, (G_side * G_side, K, N)), -1, 1)
    lrs, temps = np.logspace(-2, 0, G_side), np.logspace(-2, 0, G_side)
    lr_grid, t_grid = (x.reshape(-1) for x in np.meshgrid(lrs, temps, indexing="ij"))
    return patterns, mem0, lr_grid, 1.0 / (N * t_grid)


def bench_grid(b, cfg):
    K, E, n = cfg["grid_K"], cfg["grid_epochs"], 10
    patterns, mem0, lr, b_in = grid_problem(K=K)
    G, N = mem0.shape[0], patterns.shape[1]
    F = make_interaction("rectified_polynomial", n)
    rec = {"workload": "grid", "config": dict(G=G, N=N, patterns=patterns.shape[0], K=K, n=n, epochs=E,
                                              lr_decay=0.999, dtype="float64", batch="full",
                                              grid="10 learning rates x 10 temperatures, log-spaced 1e-2..1")}
    mem_x, pat_x = b.arr(mem0, np.float64), b.arr(patterns, np.float64)
    kw = dict(beta_out=1.0, lr_decay=0.999, epochs=E)

    def batched():
        return train_memories(mem_x, pat_x, pat_x, F, beta_in=b_in, learning_rate=lr, **kw).memories

    def single():
        return [train_memories(mem_x[g:g + 1], pat_x, pat_x, F, beta_in=float(b_in[g]), learning_rate=float(lr[g]),
                               **kw).memories[0] for g in range(G)]

    # Agreement after ONE epoch: later epochs amplify rounding differences (the max-abs
    # normalised step turns a ~1e-15 gradient difference into a full step), and on a GPU the
    # batched and single products sum in different orders: 1e-14 after 1 epoch, O(1) after 20
    # (bench/results/gpu-h200-2026-11-26-cc63737/grid-batched-vs-single.txt). On NumPy they stay bitwise equal.
    kw_one = dict(kw, epochs=1)
    first = train_memories(mem_x, pat_x, pat_x, F, beta_in=b_in, learning_rate=lr, **kw_one).memories
    first_single = np.stack([to_numpy(train_memories(mem_x[g:g + 1], pat_x, pat_x, F, beta_in=float(b_in[g]),
                                                     learning_rate=float(lr[g]), **kw_one).memories[0])
                             for g in range(G)])
    check("memories_rel_single_vs_batched_epoch1", max_rel(to_numpy(first), first_single), 1e-10, rec)
    res, timings = b.rounds({"batched": batched, "single": single}, repeats=max(2, b.repeats // 2))
    one_by_one = np.stack([to_numpy(m) for m in res["single"]])
    rec.setdefault("agreement", {})["memories_rel_single_vs_batched_final"] = max_rel(to_numpy(res["batched"]), one_by_one)
    rec["timings"] = timings
    rec["ratios"] = {"single_over_batched": ratio(timings, "single", "batched")}
    print(_line(rec), flush=True)
    return [rec]


def bench_memory(b, cfg):
    """Peak traced memory (NumPy only) of loss_and_gradient under several memory budgets."""
    if b.is_cupy:
        return []
    out = []
    probes, targets = mnist_problem(1000)
    F20 = make_interaction("rectified_polynomial", 20)
    K = max(cfg["mnist_K"])
    mem = np.clip(np.random.default_rng(0).normal(-0.3, 0.3, (1, K, 794)), -1, 1)
    patterns, mem_g, lr, b_in = grid_problem(K=cfg["grid_K"])
    F10 = make_interaction("rectified_polynomial", 10)
    cases = [
        ("mnist_minibatch", dict(G=1, B=1000, K=K, M=10),
         lambda budget: loss_and_gradient(mem, probes, targets, F20, 1 / 540, 1.0, error_exponent=30,
                                          neurons=slice(784, 794), memory_budget=budget)),
        ("grid_full_batch", dict(G=mem_g.shape[0], B=20, K=mem_g.shape[1], M=100),
         lambda budget: loss_and_gradient(mem_g, patterns, patterns, F10, b_in, 1.0, memory_budget=budget)),
    ]
    for name, shape, fn in cases:
        for budget in (2**18, 2**20, 2**22, DEFAULT_MEMORY_BUDGET):
            fn(budget)
            tracemalloc.start()
            tracemalloc.reset_peak()
            fn(budget)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            G, B, K_, M = shape["G"], shape["B"], shape["K"], shape["M"]
            rec = {"workload": "memory", "config": dict(case=name, **shape, memory_budget=budget),
                   "peak_traced_bytes": int(peak),
                   "unchunked_intermediate_bytes": 8 * G * B * K_ * M * 8,
                   "one_row_intermediate_bytes": 8 * G * K_ * M * 8,
                   "fixed_arrays_bytes": 8 * (2 * G * B * K_ + 2 * G * K_ * 794)}
            out.append(rec)
            print(f"memory  {name:<16} budget {budget / 2**20:7.1f} MiB  peak {peak / 2**20:8.2f} MiB", flush=True)
    return out


# ------------------------------------------------------------------- reporting
def _line(rec):
    c = rec["config"]
    key = {"relax": lambda: f"N={c['N']} n={c['n']} B={c['B']} sweeps={c['sweeps']}",
           "epoch_autoassociative": lambda: f"N={c['N']} K={c['K']} n={c['n']} (per epoch)",
           "epoch_mnist": lambda: f"K={c['K']} {c['dtype']} items={c['items']}",
           "grid": lambda: f"G={c['G']} K={c['K']} epochs={c['epochs']}"}[rec["workload"]]()
    t = rec["timings"]
    main = "damlite" if "damlite" in t else "batched"
    ratios = "  ".join(f"{k}={v:.2f}" for k, v in rec["ratios"].items())
    return f"{rec['workload']:<22} {key:<34} {main} {t[main]['median_s'] * 1e3:9.2f} ms  {ratios}"


def target_summary(records):
    rows = []
    for rec in records:
        w, c, r = rec["workload"], rec.get("config", {}), rec.get("ratios", {})
        if w == "relax" and c["N"] == 784 and "neuronwise_over_damlite" in r:
            rows.append((TARGETS["relax"], r["neuronwise_over_damlite"], f"B={c['B']} n={c['n']}"))
        if w == "epoch_mnist" and "torch_over_damlite" in r and c["dtype"] == "float64" and c["K"] == 256:
            rows.append((TARGETS["epoch_mnist"], r["torch_over_damlite"], f"K={c['K']}"))
        if w == "epoch_mnist":
            rows.append((TARGETS["epoch_mnist_ceiling"], r["damlite_over_ceiling"], f"K={c['K']} {c['dtype']}"))
        if w == "grid":
            rows.append((TARGETS["grid"], r["single_over_batched"], f"G={c['G']}"))
    out = []
    for (key, op, thr, desc), value, where in rows:
        met = value >= thr if op == ">=" else value <= thr
        out.append({"target": desc, "where": where, "ratio": value, "threshold": f"{op} {thr}", "met": bool(met)})
    return out


def machine_info(b):
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {})
    except Exception:  # older NumPy
        blas = {}
    info = {
        "host": socket.gethostname(), "machine": platform.machine(), "platform": platform.platform(),
        "cpu_model": cpu, "cores": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "load_average_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "threads": THREADS if THREADS > 0 else "library default", "clock": b.clock,
        "backend": b.info.name, "device": b.info.device,
        "python": platform.python_version(), "numpy": np.__version__, "damlite": damlite.__version__,
        "torch": torch.__version__ if torch is not None else None, "torch_device": b.torch_device,
        "blas": {k: blas.get(k) for k in ("name", "version")},
    }
    if b.is_cupy:
        import cupy  # noqa: PLC0415

        info["cupy"] = cupy.__version__
    return info


def markdown(path):
    """A results file as Markdown tables (for bench/README.md)."""
    data = json.loads(Path(path).read_text())
    m = data["machine"]
    lines = [f"{m['cpu_model']}, {m['cores']} cores, {m['backend']} ({m['device']}), threads={m['threads']}, "
             f"clock={m.get('clock', 'wall')}, numpy {m['numpy']}, torch {m['torch']}, damlite {m['damlite']}, "
             f"{data['date']}, preset {data['preset']}, {data['seconds']:.0f} s", ""]
    lines += ["| workload | configuration | damlite median (min-max) | contender medians | ratios |",
              "|---|---|---|---|---|"]
    for rec in data["records"]:
        if rec["workload"] == "memory":
            continue
        t = rec["timings"]
        main_key = "damlite" if "damlite" in t else "batched"
        cfg = _line(rec).split(main_key)[0].split(None, 1)[1].strip()
        own = t[main_key]
        others = ", ".join(f"{k} {v['median_s'] * 1e3:.1f}" for k, v in t.items() if k != main_key)
        ratios = ", ".join(f"{k} {v:.2f}" for k, v in rec["ratios"].items())
        lines.append(f"| {rec['workload']} | {cfg} | {own['median_s'] * 1e3:.1f} ms "
                     f"({own['min_s'] * 1e3:.1f}-{own['max_s'] * 1e3:.1f}) | {others} ms | {ratios} |")
    mem = [r for r in data["records"] if r["workload"] == "memory"]
    if mem:
        lines += ["", "| memory case | budget | peak traced | unchunked intermediates | one row |",
                  "|---|---|---|---|---|"]
        for r in mem:
            c = r["config"]
            lines.append(f"| {c['case']} (G={c['G']}, B={c['B']}, K={c['K']}, M={c['M']}) | "
                         f"{c['memory_budget'] / 2**20:g} MiB | {r['peak_traced_bytes'] / 2**20:.1f} MiB | "
                         f"{r['unchunked_intermediate_bytes'] / 2**20:.0f} MiB | "
                         f"{r['one_row_intermediate_bytes'] / 2**20:.2f} MiB |")
    lines += ["", "| target | where | ratio | wanted | |", "|---|---|---|---|---|"]
    for row in data["targets"]:
        lines.append(f"| {row['target']} | {row['where']} | {row['ratio']:.2f} | {row['threshold']} | "
                     f"{'met' if row['met'] else 'missed'} |")
    return "\n".join(lines)


def main(argv=None):
    if argv is None and len(sys.argv) > 2 and sys.argv[1] == "--markdown":
        print(markdown(sys.argv[2]))
        return None
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default="full")
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    p.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP/torch threads (0: library default)")
    p.add_argument("--clock", choices=["auto", "cpu", "wall"], default="auto",
                   help="what the medians time: process CPU time or wall time (auto: cpu for NumPy on 1 thread)")
    p.add_argument("--repeats", type=int, default=None, help="timed rounds (default: the preset's)")
    p.add_argument("--only", default="relax,epoch_autoassociative,epoch_mnist,grid,memory",
                   help="comma-separated workloads")
    p.add_argument("--mnist-items", type=int, default=None, help="items per MNIST epoch (60000: a real epoch)")
    p.add_argument("--label", default=None, help="results file name prefix (default: host name)")
    p.add_argument("--out", default=None, help="results folder (default: $OUT, else bench/results)")
    args = p.parse_args(argv)
    cfg = dict(PRESETS[args.preset])
    if args.repeats:
        cfg["repeats"] = args.repeats
    if args.mnist_items:
        cfg["mnist_items"] = args.mnist_items
    if torch is not None and THREADS > 0:
        torch.set_num_threads(THREADS)
    b = Bench(args.backend, cfg["repeats"], args.clock)
    info = machine_info(b)
    print(f"damlite bench: {info['backend']} on {info['device']}, {info['cpu_model']}, threads={info['threads']}, "
          f"preset={args.preset}, clock={b.clock}", flush=True)
    records = []
    start = time.perf_counter()
    runners = {"relax": bench_relax, "epoch_autoassociative": bench_epoch_autoassociative,
               "epoch_mnist": bench_epoch_mnist, "grid": bench_grid, "memory": bench_memory}
    folder = Path(args.out or os.environ.get("OUT") or HERE / "results")
    folder.mkdir(parents=True, exist_ok=True)
    label = args.label or socket.gethostname()
    path = folder / f"{label}-{info['backend']}-{_dt.date.today().isoformat()}.json"

    def write(complete):
        info["load_average_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
        info["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        result = {"machine": info, "preset": args.preset, "config": cfg, "seconds": time.perf_counter() - start,
                  "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "complete": complete,
                  "targets": target_summary(records), "records": records}
        path.write_text(json.dumps(result, indent=1))
        return result

    for name in args.only.split(","):
        records += runners[name.strip()](b, cfg)
        write(False)  # what is done so far survives a time limit
    result = write(True)
    summary = result["targets"]
    print("\ntargets (ratios of medians, same run):")
    for row in summary:
        print(f"  [{'met' if row['met'] else 'MISSED':>6}] {row['target']:<62} {row['where']:<14} "
              f"ratio {row['ratio']:7.2f} (want {row['threshold']})")
    print(f"\nwrote {path} ({result['seconds']:.0f} s, peak RSS {info['peak_rss_bytes'] / 2**20:.0f} MiB)")
    return result


if __name__ == "__main__":
    main()
