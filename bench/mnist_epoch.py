"""Seconds per epoch and test accuracy of Krotov & Hopfield's MNIST classifier in damlite.

Krotov's configuration (damlite.classification.KROTOV_CONFIG: K=100, rectified
n=20, m=30, T=540, lr 4e-2 x 0.998/epoch, momentum 0.6, minibatch 1000, memories
~ N(-0.3, 0.3), all entries clipped) trained on all 60 000 training digits,
test accuracy after every epoch. Writes the per-epoch record with provenance
(default book/results/mnist/krotov_<variant>[_<backend>].json) and a summary
to bench/results/mnist-epoch-<backend>-<variant>-<date>.json (median seconds per epoch, accuracy reached).

    python bench/mnist_epoch.py --epochs 25                       # this CPU
    DAMLITE_BACKEND=cupy python bench/mnist_epoch.py --epochs 300 # a GPU
"""
import argparse
import datetime as dt
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--variant", choices=["original", "normalized"], default="original")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--dtype", default="float64")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None, help="MNIST IDX files (default: $DAMLITE_DATA_DIR, ../shared)")
    parser.add_argument("--out", default=None, help="per-epoch record (JSON)")
    parser.add_argument("--summary", default=None, help="summary (JSON) in bench/results/")
    args = parser.parse_args(argv)

    import damlite
    from damlite.sweeps.tasks.krotov import run_krotov
    from damlite.datasets import load_mnist

    info = damlite.backend_info(args.backend)
    data_dir = args.data_dir
    if data_dir is None and not __import__("os").environ.get("DAMLITE_DATA_DIR"):
        shared = REPO.parent / "shared" / "data" / "mnist"
        data_dir = str(shared) if shared.is_dir() else None
    data = load_mnist(source="full", data_dir=data_dir, validation_size=0, dtype="float64")
    suffix = "" if info.name == "numpy" else f"_{info.name}"
    out = Path(args.out or REPO / "book" / "results" / "mnist" / f"krotov_{args.variant}{suffix}.json")
    summary = Path(args.summary or REPO / "bench" / "results"
                   / f"mnist-epoch-{info.name}-{args.variant}-{dt.date.today().isoformat()}.json")

    def report(epoch, acc, sec):
        print(f"epoch {epoch:4d}  test accuracy {acc:.4f}  {sec:.2f} s", flush=True)

    rec = run_krotov(data, variant=args.variant, epochs=args.epochs, out=out, backend=args.backend,
                     dtype=args.dtype, random_state=args.seed)
    for e, a, s in zip(rec["eval_epochs"], rec["test_accuracy"], rec["epoch_seconds"]):
        report(e, a, s)
    secs = np.asarray(rec["epoch_seconds"])
    steady = secs[1:] if len(secs) > 2 else secs  # the first epoch pays for warm-up
    result = dict(
        benchmark="mnist_epoch (Krotov & Hopfield's configuration, full MNIST)",
        variant=args.variant, epochs=len(secs),
        median_epoch_seconds=float(np.median(steady)),
        min_epoch_seconds=float(steady.min()), max_epoch_seconds=float(steady.max()),
        first_epoch_seconds=float(secs[0]),
        eval_seconds_total=rec["eval_seconds"],
        test_accuracy_final=rec["test_accuracy"][-1],
        test_accuracy_at={str(e): a for e, a in zip(rec["eval_epochs"], rec["test_accuracy"])
                          if e in (1, 5, 10, 20, 30, 50, 100, 200, 300)},
        record=str(out.relative_to(REPO)) if out.is_relative_to(REPO) else str(out),
        provenance=rec["provenance"],
    )
    summary.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "provenance"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
