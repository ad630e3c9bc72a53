#!/usr/bin/env python
"""The MNIST sweep's unit of GPU work, one block-epoch, checked and timed.

A block of the paper's MNIST sweep trains G = 36 classifiers (6 temperatures x 6
learning rates, K = 256 memories, N = 784 + 10, minibatches of 1000, m = 30,
momentum 0.6, 50 000 training digits) as one tensor; one epoch of it is a
block-epoch.

    python bench/gpu_block_epoch.py check   --out DIR  # fused kernels vs reference path (exit 0/5/4/3, below)
    python bench/gpu_block_epoch.py profile --out DIR  # one minibatch of the whole-epoch path, stage by stage
    python bench/gpu_block_epoch.py time    --out DIR  # seconds per block-epoch: fused, reference, PyTorch

``check`` compares, on 4 networks, the loss and gradient of one minibatch
(relative 1e-9) and the memories and losses after one epoch of 5 minibatches
(absolute 1e-6, relative 1e-9) between ``DAMLITE_GPU_KERNELS=reference`` and
each of ``auto`` (whole epochs, damlite.kernels.gpu_fit, row-wise loss kernels),
``minibatch`` (the row-wise kernels per call) and ``threepass`` (whole epochs with
the three-pass loss kernels). Exit 0: ``auto`` agrees; 5: ``threepass`` agrees
(use it); 4: only ``minibatch`` agrees (use it); 3: none. ``profile`` (<= 30 s)
times each launch of one MNIST minibatch, row-wise and three-pass, with CUDA
events (device time, measured behind a queued matrix product so that no launch
gap counts) and on the host (the Python and launch cost), then one free-running
epoch. ``time`` reports wall-clock medians with device synchronisation: damlite's
whole epochs (row-wise, then three-pass), the ceiling (the two matrix products
of each minibatch alone), the two whole-epoch paths in float32, the per-minibatch
kernels, the reference path and PyTorch autograd on the same GPU (when torch sees
it, bench/baselines.py's batched loss). All write JSON into ``--out``. Uses the
full MNIST (``$DAMLITE_DATA_DIR``) when found, else MNIST-shaped random data.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _data(items, seed=0):
    from damlite.datasets import load_mnist

    try:
        data = load_mnist(source="full", validation_size=10000, dtype="float64")
        return data.X_train[:items], data.y_train[:items], "full MNIST"
    except Exception:  # noqa: BLE001 - no files: MNIST-shaped random data does the same arithmetic
        rng = np.random.default_rng(seed)
        return rng.uniform(-1, 1, (items, 784)), rng.integers(0, 10, items), "random MNIST-shaped"


def _grid(G_side):
    from damlite.sweeps.tasks.mnist import MNIST_GRIDS

    inv_t, lrs = MNIST_GRIDS["paper"]
    inv_t, lrs = np.asarray(inv_t[:G_side]), np.asarray(lrs[:G_side])
    lr, it = np.meshgrid(lrs, inv_t, indexing="ij")
    return lr.ravel(), 1.0 / it.ravel()


def _train(X, y, lr, T, epochs, n=10, seed=0, dtype="float64"):
    from damlite.classification import train_classifiers
    from damlite.sweeps.tasks.mnist import MNIST_TASK

    o = MNIST_TASK
    return train_classifiers(
        X, y, n_memories=o["memories"], interaction=o["interaction"], n=n, variant="normalized",
        temperature=T, learning_rate=lr, lr_decay=o["lr_decay"], momentum=o["momentum"], epochs=epochs,
        batch_size=o["batch_size"], error_exponent=o["error_exponent"], init_mean=o["init_mean"],
        init_std=o["init_std"], clamp=o["clamp"], random_state=seed, backend="cupy", dtype=dtype)


def _with_kernels(setting, fn):
    old = os.environ.get("DAMLITE_GPU_KERNELS")
    os.environ["DAMLITE_GPU_KERNELS"] = setting
    try:
        return fn()
    finally:
        if old is None:
            os.environ.pop("DAMLITE_GPU_KERNELS", None)
        else:
            os.environ["DAMLITE_GPU_KERNELS"] = old


def _device():
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return {"device": name.decode() if isinstance(name, bytes) else str(name), "cupy": cupy.__version__,
            "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(), "driver": cupy.cuda.runtime.driverGetVersion()}


def check(out):
    import cupy

    from damlite.kernels import gpu_kernels
    from damlite.classification import classifier_probes, classifier_scales
    from damlite.datasets import bipolar_one_hot
    from damlite.interactions import make_interaction
    from damlite.network import loss_and_gradient

    X, y, source = _data(5000)
    lr, T = _grid(2)
    G = lr.size
    rng = np.random.default_rng(1)
    mem = cupy.asarray(np.clip(rng.normal(-0.3, 0.3, (G, 256, 794)), -1, 1))
    probes = classifier_probes(X[:1000], 10, cupy, cupy.float64)
    targets = cupy.asarray(bipolar_one_hot(y[:1000], 10, dtype="float64"))
    b_in, b_out = classifier_scales("normalized", T, 10, 794)
    F = make_interaction("rectified_polynomial", 10)

    def one(setting):
        loss, grad, _ = _with_kernels(setting, lambda: loss_and_gradient(
            mem, probes, targets, F, b_in, b_out, error_exponent=30, neurons=slice(784, 794)))
        return cupy.asnumpy(loss), cupy.asnumpy(grad)

    lr_, gr = one("reference")
    rep = {"source": source, "networks": G, **_device()}
    er = _with_kernels("reference", lambda: _train(X, y, lr, T, 1))
    paths = (("whole_epochs", "auto", "numba-cuda fused kernels, whole epochs", "row-wise loss kernels"),
             ("minibatch", "minibatch", "numba-cuda fused kernels per minibatch", "row-wise loss kernels"),
             ("threepass", "threepass", "numba-cuda fused kernels, whole epochs", "three-pass loss kernels"))
    for name, setting, prefix, loss_kernels in paths:
        t0 = time.perf_counter()
        lf, gf = one(setting)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = _with_kernels(setting, lambda: _train(X, y, lr, T, 1))
        status = _with_kernels(setting, gpu_kernels.status)
        row = {"setting": setting, "status": status, "first_call_seconds": first,
               "seconds_with_compile": time.perf_counter() - t0,
               "row_wise_for_mnist": _with_kernels(setting, lambda: gpu_kernels.available() and
                                                   gpu_kernels.row_wise(10)),
               "loss_rel": float(np.max(np.abs(lf - lr_) / np.maximum(np.abs(lr_), 1e-300))),
               "grad_rel": float(np.max(np.abs(gf - gr)) / max(np.max(np.abs(gr)), 1e-300)),
               "memories_abs_after_epoch": float(np.max(np.abs(res.memories - er.memories))),
               "epoch_loss_rel": float(np.max(np.abs(res.loss - er.loss) / np.maximum(np.abs(er.loss), 1e-300)))}
        row["ran"] = bool(status.startswith(prefix) and loss_kernels in status
                          and row["row_wise_for_mnist"] == loss_kernels.startswith("row-wise"))
        row["agree"] = bool(row["ran"] and row["loss_rel"] <= 1e-9 and row["grad_rel"] <= 1e-9
                            and row["memories_abs_after_epoch"] <= 1e-6 and row["epoch_loss_rel"] <= 1e-9)
        rep[name] = row
        Path(out, "gpu_check.json").write_text(json.dumps(rep, indent=1))
    rep["agree"] = rep["whole_epochs"]["agree"]
    rep["use"] = next((s for n, s, *_ in paths if rep[n]["agree"]), "reference")
    Path(out, "gpu_check.json").write_text(json.dumps(rep, indent=1))
    print(json.dumps(rep, indent=1))
    return {"auto": 0, "threepass": 5, "minibatch": 4}.get(rep["use"], 3)


def profile(out, reps=20, time_limit=30.0):
    """Each launch of one MNIST minibatch (36 networks, 1000 rows) on the device and on the host: the row-wise
    loss kernels (``auto``), then the three-pass ones (``threepass``)."""
    import cupy

    from damlite.kernels import gpu_kernels

    start = time.perf_counter()
    X, y, source = _data(50000)
    lr, T = _grid(6)
    rep = {"source": source, "networks": lr.size, "memories": 256, "batch": 1000, **_device()}

    def write():
        Path(out, "gpu_profile.json").write_text(json.dumps(rep, indent=1))

    for name, setting in (("row_wise", "auto"), ("threepass", "threepass")):
        if time.perf_counter() - start > time_limit - 8:
            rep[name] = "not run: time"
            break
        rep[name] = {"status": _with_kernels(setting, gpu_kernels.status)}
        _with_kernels(setting, lambda: _profile_fit(rep[name], X, y, lr, T, reps, start, time_limit, write))
        write()
    rep["seconds"] = time.perf_counter() - start
    write()
    print(json.dumps({k: {m: rep[k].get(m) for m in ("stages_ms", "minibatch_ms", "bound")}
                      for k in ("row_wise", "threepass") if isinstance(rep.get(k), dict)}, indent=1))
    cupy.cuda.Device().synchronize()
    return 0


def _profile_fit(rep, X, y, lr, T, reps, start, time_limit, write):
    """One fit's minibatch launch by launch into ``rep`` (see :func:`profile`)."""
    import cupy

    from damlite.backend import array_namespace
    from damlite.classification import classifier_probes, classifier_scales
    from damlite.datasets import bipolar_one_hot
    from damlite.interactions import make_interaction
    from damlite.kernels import gpu_kernels
    from damlite.kernels.gpu_fit import FusedFit

    G, K, N, batch = lr.size, 256, 794, 1000
    rng = np.random.default_rng(0)
    mem = cupy.asarray(np.clip(rng.normal(-0.3, 0.3, (G, K, N)), -1, 1))
    xp = array_namespace(mem)
    probes = classifier_probes(X, 10, cupy, cupy.float64)
    targets = cupy.asarray(bipolar_one_hot(y, 10, dtype="float64"))
    b_in, b_out = classifier_scales("normalized", T, 10, N)
    F = make_interaction("rectified_polynomial", 10)
    fit = FusedFit.create(xp, mem, cupy.zeros_like(mem), probes, targets, F, slice(784, 794), slice(0, 784),
                          b_in, b_out, 30, batch, 0.6, True, 1e-30, 2**30)
    if fit is None:
        rep["error"] = f"the whole-epoch path does not run here: {gpu_kernels.status()}"
        return
    rep["row_wise_kernels"] = fit.row_wise
    fit.begin_epoch(rng.permutation(len(y)), lr, np.ones(G, dtype=bool))
    t0 = time.perf_counter()
    for _, launch in fit.stages(0):  # compiles every kernel
        launch()
    cupy.cuda.Device().synchronize()
    rep["compile_seconds"] = time.perf_counter() - t0
    # a queued matrix product (~1-2 ms of device work) ahead of each timed launch: the launch is enqueued
    # before the device reaches it, so the events around it time the device work alone
    filler_a = cupy.ones((3072, 3072))
    filler_c = cupy.empty_like(filler_a)
    names = [name for name, _ in fit.stages(0)]
    device = {name: [] for name in names + ["minibatch"]}
    host = {name: [] for name in names + ["minibatch"]}
    for r in range(reps):
        stages = fit.stages((r % (len(y) // batch)) * batch)
        events = []
        for name, launch in stages:
            cupy.matmul(filler_a, filler_a, out=filler_c)
            a, b = cupy.cuda.Event(), cupy.cuda.Event()
            a.record()
            t0 = time.perf_counter()
            launch()
            host[name].append(time.perf_counter() - t0)
            b.record()
            events.append((name, a, b))
        cupy.matmul(filler_a, filler_a, out=filler_c)
        a, b = cupy.cuda.Event(), cupy.cuda.Event()
        a.record()
        t0 = time.perf_counter()
        for _, launch in fit.stages(((r + 1) % (len(y) // batch)) * batch):
            launch()
        host["minibatch"].append(time.perf_counter() - t0)
        b.record()
        events.append(("minibatch", a, b))
        b.synchronize()
        for name, a, b in events:
            device[name].append(cupy.cuda.get_elapsed_time(a, b) / 1e3)
    ms = lambda v: round(1e3 * float(np.median(v)), 4)  # noqa: E731
    rep["stages_ms"] = {name: {"device": ms(device[name]), "host": ms(host[name])} for name in names}
    rep["minibatch_ms"] = {"device": ms(device["minibatch"]), "host": ms(host["minibatch"]),
                           "device_sum_of_stages": round(sum(v["device"] for v in rep["stages_ms"].values()), 4)}
    rep["launches_per_minibatch"] = {"numba-cuda kernels": len(names) - 2, "cuBLAS matrix products": 2,
                                     "host synchronisations": 0}
    rep["bound"] = "host (launches)" if rep["minibatch_ms"]["host"] > rep["minibatch_ms"]["device"] else "device"
    write()
    if time.perf_counter() - start < time_limit - 5:  # one free-running epoch: what training gets
        minibatches = len(y) // batch
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        fit.epoch(rng.permutation(len(y)), lr, np.ones(G, dtype=bool))
        cupy.cuda.Device().synchronize()
        rep["free_running_epoch_seconds"] = time.perf_counter() - t0
        rep["free_running_ms_per_minibatch"] = round(1e3 * rep["free_running_epoch_seconds"] / minibatches, 4)


def timing(out, epochs=3, time_limit=60.0):
    import cupy

    from damlite.kernels import gpu_kernels

    start = time.perf_counter()
    X, y, source = _data(50000)
    lr, T = _grid(6)
    G = lr.size
    rep = {"source": source, "networks": G, "items": len(y), "epochs_timed": epochs, **_device()}

    def write():
        Path(out, "gpu_block_epoch.json").write_text(json.dumps(rep, indent=1))

    def run(name, setting, dtype="float64"):
        if time.perf_counter() - start > time_limit:
            rep[name] = "not run: time"
            return
        res = _with_kernels(setting, lambda: _train(X, y, lr, T, epochs, dtype=dtype))
        secs = np.asarray(res.epoch_seconds)
        rep[name] = {"setting": setting, "dtype": dtype, "status": _with_kernels(setting, gpu_kernels.status),
                     "epoch_seconds": secs.tolist(), "median_after_first": float(np.median(secs[1:])),
                     "final_loss_median": float(np.median(res.loss[-1]))}
        write()
        print(name, rep[name]["median_after_first"], "s per block-epoch", flush=True)

    run("damlite_fused", "auto")  # whole epochs, row-wise loss kernels
    run("damlite_threepass", "threepass")  # whole epochs, the three-pass loss kernels
    def ceiling(dtype):
        """The similarity and gradient products of every minibatch in ``dtype``, nothing else (medians of 3)."""
        from damlite.backend import pin_full_float32

        pin_full_float32()  # float32 products at full precision, as damlite's own
        mem = cupy.asarray(np.zeros((G, 256, 794)) + 0.01, dtype=dtype)
        probes = cupy.asarray(np.concatenate([X, -np.ones((len(X), 10))], axis=1), dtype=dtype)
        times = []
        for _ in range(3):
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter()
            for s in range(0, len(X), 1000):
                xb = probes[s:s + 1000]
                d = xb @ cupy.swapaxes(mem, 1, 2)
                _ = cupy.swapaxes(d, 1, 2) @ xb
            cupy.cuda.Device().synchronize()
            times.append(time.perf_counter() - t0)
        return {"median": float(np.median(times)), "dtype": dtype}

    rep["ceiling"] = ceiling("float64")
    rep["ceiling_float32"] = ceiling("float32")
    write()
    print("ceiling", rep["ceiling"]["median"], "float32", rep["ceiling_float32"]["median"], "s per block-epoch",
          flush=True)
    run("damlite_fused_float32", "auto", "float32")
    run("damlite_threepass_float32", "threepass", "float32")
    run("damlite_minibatch", "minibatch")
    run("damlite_reference", "reference")
    try:
        import torch

        import baselines as bl
    except ImportError as exc:
        rep["torch"] = f"not run: {exc}"
    else:
        if not torch.cuda.is_available() or time.perf_counter() - start > time_limit:
            rep["torch"] = "not run: no CUDA device for torch" if not torch.cuda.is_available() else "not run: time"
        else:
            from damlite.classification import classifier_scales
            from damlite.datasets import bipolar_one_hot

            dev = torch.device("cuda")
            b_in, b_out = classifier_scales("normalized", T, 10, 794)
            t = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float64, device=dev)  # noqa: E731
            mem_t = t(np.broadcast_to(np.clip(np.random.default_rng(0).normal(-0.3, 0.3, (256, 794)), -1, 1),
                                      (G, 256, 794)).copy())
            probes_t = t(np.concatenate([X, -np.ones((len(X), 10))], axis=1))
            targets_t = t(bipolar_one_hot(y, 10, dtype="float64"))
            secs = []
            velocity = None
            for _ in range(epochs):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                mem_t, loss, velocity = bl.torch_train_epoch(
                    mem_t, probes_t, targets_t, "rectified_polynomial", 10, t(b_in), t(b_out),
                    learning_rate=t(lr).reshape(-1, 1, 1), momentum=0.6, batch_size=1000, error_exponent=30,
                    cols=slice(784, 794), clamp=slice(0, 784), velocity=velocity)
                torch.cuda.synchronize()
                secs.append(time.perf_counter() - t0)
                if time.perf_counter() - start > time_limit:
                    break
            rep["torch"] = {"version": torch.__version__, "epoch_seconds": secs,
                            "median_after_first": float(np.median(secs[1:] if len(secs) > 1 else secs))}
    f = rep["damlite_fused"]["median_after_first"]
    rep["ratios"] = {"fused_over_ceiling": f / rep["ceiling"]["median"]}
    for name in ("threepass", "minibatch", "reference", "fused_float32", "threepass_float32"):
        if isinstance(rep.get("damlite_" + name), dict):
            rep["ratios"][f"{name}_over_fused"] = rep["damlite_" + name]["median_after_first"] / f
    if isinstance(rep.get("damlite_fused_float32"), dict):
        rep["ratios"]["fused_float32_over_ceiling_float32"] = (rep["damlite_fused_float32"]["median_after_first"]
                                                              / rep["ceiling_float32"]["median"])
    if isinstance(rep.get("damlite_threepass"), dict):
        rep["ratios"]["threepass_over_ceiling"] = rep["damlite_threepass"]["median_after_first"] / rep["ceiling"]["median"]
    if isinstance(rep.get("torch"), dict):
        rep["ratios"]["torch_over_fused"] = rep["torch"]["median_after_first"] / f
    write()
    print(json.dumps(rep["ratios"]), flush=True)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["check", "profile", "time"])
    p.add_argument("--out", default=os.environ.get("OUT", "bench/results"))
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--time-limit", type=float, default=60.0)
    a = p.parse_args(argv)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    if a.what == "profile":
        return profile(a.out, time_limit=a.time_limit)
    return check(a.out) if a.what == "check" else timing(a.out, a.epochs, a.time_limit)


if __name__ == "__main__":
    sys.exit(main())
