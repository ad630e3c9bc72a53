#!/usr/bin/env python
"""What a user gets: the default CPU path (no setting forced) timed beside its matrix products, in one run.

    python bench/default_path.py --rounds 3 --out bench/results/default-path-<date>-<commit>.json

One process on one thread (BLAS and numba held to one thread before anything loads), process CPU
time, contenders round robin, medians over ``--rounds``:

* ``krotov_float64`` / ``krotov_float32``: Krotov & Hopfield's MNIST configuration (bench/cpu_epoch.py's
  settings; float64 original network, float32 normalized) fitted for ``--epochs`` epochs (20, as a
  student runs it) on all 60 000 digits, on the default path (the one loss kernel of its interaction: no
  setting to force); seconds per epoch = the whole fit's CPU time /
  epochs (its setup included: this overstates an epoch by the setup's share), with the test accuracy;
* ``products_float64`` / ``products_float32``: the two matrix products of each of the epoch's 60
  minibatches (X_b Z^T and r^T X_b), the yardstick;
* ``author_example_default``: the paper author's autoassociative example (N = K = 100, 25 states, full
  batch, rectified n = 5, T = 50, lr 0.2, momentum 0.6, clamped; bench/threads.py's) for ``--author-epochs``
  epochs through :func:`damlite.training.train_memories`; seconds per epoch = fit / epochs;
* ``author_torch_autoassociative``: the paper author's own PyTorch trainer (bench/peers/author_torch.py's
  ``AuthorAutoassociative``: his ``learnMemories``, torch on one thread) on the same example from the same
  memories and states, ``--author-epochs`` epochs in one call; seconds per epoch = that call / epochs.
  Needs torch and a checkout of hmcalister/Hopfield-Network-PyTorch (``--author-repo DIR`` or
  ``DAMLITE_AUTHOR_REPO``); skipped, with the reason in the record, without them. Before any timing both
  sides train 5 epochs from the same start and the record holds how far apart their losses and memories
  are (``author_torch_agreement``): the check that both run the same learning rule.

Which loss kernels each contender built is recorded (their keys), with the 1-minute load average before
every round: the project's machine is shared, so only ratios from the same run mean anything.
Krotov's notebook and the author's PyTorch on his MNIST example are not run here (bench/cpu_epoch.py runs them).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--author-epochs", type=int, default=200)
    p.add_argument("--out", default=None)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--author-repo", default=os.environ.get("DAMLITE_AUTHOR_REPO"),
                   help="a checkout of hmcalister/Hopfield-Network-PyTorch (his PyTorch trainer; skipped without)")
    args = p.parse_args(argv)
    if not 1 <= args.rounds <= 50 or not 1 <= args.epochs <= 500 or not 1 <= args.author_epochs <= 100_000:
        p.error("--rounds 1..50, --epochs 1..500, --author-epochs 1..100000")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = "1"
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE / "peers"))
    import numpy as np  # noqa: PLC0415

    from cpu_epoch import KROTOV, _estimator, epoch_products  # noqa: PLC0415
    from damlite.datasets import load_mnist  # noqa: PLC0415
    from damlite.interactions import make_interaction  # noqa: PLC0415
    from damlite.kernels import _cpu_numba  # noqa: PLC0415
    from damlite.sweeps.experiments import provenance  # noqa: PLC0415
    from damlite.training import train_memories  # noqa: PLC0415

    clock = time.process_time
    data = load_mnist(source="full", data_dir=args.data_dir, validation_size=0, dtype="float64")
    rng = np.random.default_rng(0)
    probes = np.concatenate([data.X_train, -np.ones((len(data.X_train), 10))], axis=1)
    times, kernels, accuracy, loads = {}, {}, {}, []

    def products(dtype):
        X = probes.astype(dtype)
        Z = rng.normal(-0.3, 0.3, (KROTOV["K"], X.shape[1])).astype(dtype)

        def run():
            start = clock()
            epoch_products(X, Z, KROTOV["batch"])
            return clock() - start
        return run

    def krotov(dtype, variant, warm=False):
        def run():
            if warm:  # compile (or load) the kernels the timed fits run, on a small fit
                est, kw = _estimator(dtype, variant, 1)
                est.fit(data.X_train[:2000], data.y_train[:2000], **kw)
                return 0.0
            est, kw = _estimator(dtype, variant, args.epochs)
            start = clock()
            est.fit(data.X_train, data.y_train, **kw)
            seconds = clock() - start
            accuracy[f"krotov_{dtype}"] = float(est.score(data.X_test, data.y_test))
            return seconds / args.epochs
        return run

    N, K, P, T = 100, 100, 25, 50.0
    arng = np.random.default_rng(1)
    states = np.where(arng.random((P, N)) < 0.5, -1.0, 1.0)
    init = np.clip(arng.normal(0, 0.1, (1, K, N)), -1, 1)
    F = make_interaction("rectified_polynomial", 5)

    def author():
        def run():
            start = clock()
            train_memories(init, states, states, F, beta_in=1.0 / (N * T), beta_out=1.0, error_exponent=1,
                           learning_rate=0.2, momentum=0.6, epochs=args.author_epochs, clamp=slice(0, N),
                           random_state=0)
            return (clock() - start) / args.author_epochs
        return run

    contenders = {"products_float64": products(np.float64), "products_float32": products(np.float32),
                  "krotov_float64": krotov("float64", "original"), "krotov_float32": krotov("float32", "normalized"),
                  "author_example_default": author()}
    skipped, agreement = {}, None
    author_torch = _author_torch(args.author_repo, skipped)
    if author_torch is not None:
        def torch_author():
            def run():
                peer = author_torch.AuthorAutoassociative(args.author_repo, init[0], states)
                start = clock()
                peer.fit(args.author_epochs)
                return (clock() - start) / args.author_epochs
            return run
        contenders["author_torch_autoassociative"] = torch_author()
    for name, run in contenders.items():  # warm up: compile (or load) every kernel the contenders use
        before = set(_cpu_numba._LOSS_GRAD)
        if name.startswith("krotov"):
            krotov(*(("float64", "original") if name.endswith("64") else ("float32", "normalized")), warm=True)()
        else:
            run()
        kernels[name] = sorted(map(str, set(_cpu_numba._LOSS_GRAD) - before))
    if author_torch is not None:  # after the warm-up: the kernels recorded above are those the contenders built
        agreement = _agreement(author_torch, args.author_repo, init, states, F, train_memories, N, T)
        print("author_torch_agreement:", json.dumps(agreement), flush=True)
    for r in range(args.rounds):
        loads.append(list(os.getloadavg()))
        for name, run in contenders.items():
            before = set(_cpu_numba._LOSS_GRAD)
            times.setdefault(name, []).append(run())
            new = sorted(map(str, set(_cpu_numba._LOSS_GRAD) - before))
            if new:
                kernels[name] = kernels.get(name, []) + new
            print(f"round {r}: {name} {times[name][-1]:.5f} s per epoch (load {loads[-1][0]:.1f})", flush=True)
    loads.append(list(os.getloadavg()))
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = {"krotov_float64_over_products": med["krotov_float64"] / med["products_float64"],
              "krotov_float32_over_products_float32": med["krotov_float32"] / med["products_float32"],
              "krotov_float64_over_float32": med["krotov_float64"] / med["krotov_float32"]}
    if "author_torch_autoassociative" in med:
        ratios["author_torch_over_damlite"] = med["author_torch_autoassociative"] / med["author_example_default"]
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    record = {"what": "the default CPU path beside its products, one thread, process CPU time",
              "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
              "settings": vars(args),
              "load_average_1_5_15_before_each_round_and_after": loads, "seconds_per_epoch": times,
              "median_seconds_per_epoch": med, "ratios": ratios, "test_accuracy": accuracy,
              "loss_kernels_built_first_in": kernels, "author_torch_agreement": agreement,
              "provenance": provenance(),
              "not_run": {"krotov_notebook": "not in this benchmark (bench/cpu_epoch.py)",
                          "author_torch_mnist": "not in this benchmark (bench/cpu_epoch.py)", **skipped}}
    if author_torch is not None:
        import torch  # noqa: PLC0415

        record["torch"] = {"version": torch.__version__, "threads": torch.get_num_threads(),
                           "author_repo_commit": subprocess.run(
                               ["git", "-C", args.author_repo, "rev-parse", "--short", "HEAD"], capture_output=True,
                               text=True).stdout.strip() or None}
    print(json.dumps({"median_seconds_per_epoch": med, "ratios": ratios, "test_accuracy": accuracy}, indent=1))
    out = Path(args.out or HERE / "results" / f"default-path-{dt.date.today()}-{commit}.json")
    out.write_text(json.dumps(record, indent=1, default=str))
    print("wrote", out)
    return 0


def _author_torch(repo, skipped):
    """bench/peers/author_torch.py with torch on one thread, or None with the reason in ``skipped``."""
    import author_torch  # noqa: PLC0415

    if author_torch.find_repo(repo) is None:
        skipped["author_torch_autoassociative"] = "no checkout of hmcalister/Hopfield-Network-PyTorch (--author-repo)"
        return None
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        skipped["author_torch_autoassociative"] = "torch is not installed"
        return None
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # set already in this process (main called twice): intra-op threads are what count
        pass
    return author_torch


def _agreement(author_torch, repo, init, states, F, train_memories, N, T, epochs=5):
    """Both trainers ``epochs`` epochs from the same memories: how far apart their losses and memories are.

    His loss is the epoch's summed squared error / (N P), damlite's the sum: compared as his x N P.
    """
    import numpy as np  # noqa: PLC0415

    peer = author_torch.AuthorAutoassociative(repo, init[0], states)
    his = np.asarray(peer.fit(epochs)) * N * len(states)
    ours = train_memories(init, states, states, F, beta_in=1.0 / (N * T), beta_out=1.0, error_exponent=1,
                          learning_rate=0.2, momentum=0.6, epochs=epochs, clamp=slice(0, N), random_state=0)
    loss = np.asarray(ours.loss)[:, 0]
    mem = np.asarray(ours.memories)[0]
    return {"epochs": epochs, "damlite_loss": loss.tolist(), "author_torch_loss_times_N_P": his.tolist(),
            "loss_max_relative_difference": float(np.max(np.abs(his - loss) / np.abs(loss))),
            "memories_max_abs_difference": float(np.max(np.abs(peer.memories() - mem))),
            "memories_max_abs_change_from_start": float(np.max(np.abs(mem - init[0])))}


if __name__ == "__main__":
    sys.exit(main())
