"""Batched grid vs one configuration at a time: the same autoassociative networks, timed.

Runs one grid of the autoassociative task (N=100, 20 patterns, K=100 memories,
normalized network) twice: as ONE batched block of G networks
(damlite.sweeps.tasks.autoassociative.run_autoassociative_block), and as G blocks of one network
each, the way a plain loop over hyperparameters would. Train + relax, same
settings; medians over --runs repeats, all in one process on one machine.
Writes a JSON result to bench/results/sweep-batched-vs-single-<date>.json (or --out).

    python bench/sweep_batched_vs_single.py                      # this machine, NumPy
    DAMLITE_BACKEND=cupy python bench/sweep_batched_vs_single.py --out bench/results/sweep-batched-vs-single-gpu.json
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from damlite.sweeps import experiments as ex
from damlite.sweeps.tasks import autoassociative as aa
from damlite.backend import get_backend


def _sync(xp):
    if "cupy" in xp.__name__:
        import cupy  # noqa: PLC0415

        cupy.cuda.Device().synchronize()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10, help="interaction vertex")
    p.add_argument("--cells", type=int, default=6, help="grid side: cells x cells configurations")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--runs", type=int, default=3, help="timed repeats (median reported)")
    p.add_argument("--dtype", default="float64")
    p.add_argument("--N", type=int, default=100, help="pattern dimension")
    p.add_argument("--patterns", type=int, default=20)
    p.add_argument("--memories", type=int, default=100, help="K")
    p.add_argument("--out", default=str(Path(__file__).parent / "results"
                                        / f"sweep-batched-vs-single-{time.strftime('%Y-%m-%d')}.json"))
    p.add_argument("--record-sweeps", nargs="*", default=[], metavar="JSONL",
                   help="only record the wall times of these sweep result files (blocks run with NumPy) into --out")
    args = p.parse_args(argv)
    if args.record_sweeps:
        return record_sweeps(args.record_sweeps, args.out)
    xp, info = get_backend("auto")
    grid = (tuple(np.round(np.logspace(-0.5, 1.5, args.cells), 6)), tuple(np.round(np.logspace(-2, 0, args.cells), 6)))
    batched = aa.autoassociative_block("normalized", args.n, grid, repeats=1, epochs=args.epochs, dtype=args.dtype,
                                       N=args.N, patterns=args.patterns, memories=args.memories)
    singles = [aa.autoassociative_block("normalized", args.n, ((it,), (lr,)), repeats=1, epochs=args.epochs,
                                        dtype=args.dtype, N=args.N, patterns=args.patterns, memories=args.memories)
               for it in grid[0] for lr in grid[1]]
    budget = ex._default_budget(info.name)

    def run_batched():
        return aa.run_autoassociative_block(batched, dtype=args.dtype, memory_budget=budget)

    def run_single():
        return [r for b in singles for r in aa.run_autoassociative_block(b, dtype=args.dtype, memory_budget=budget)]

    run_batched(), run_single()  # warm-up (imports, kernels)
    t_b, t_s = [], []
    for _ in range(args.runs):
        for fn, acc in ((run_batched, t_b), (run_single, t_s)):
            _sync(xp)
            t0 = time.perf_counter()
            fn()
            _sync(xp)
            acc.append(time.perf_counter() - t0)
    G = len(singles)
    result = {
        "what": "autoassociative grid, train + relax: one batched block of G networks vs G one-network blocks",
        "N": args.N, "patterns": args.patterns, "memories": args.memories, "n": args.n, "epochs": args.epochs,
        "G": G, "dtype": args.dtype, "runs": args.runs,
        "batched_seconds": t_b, "single_seconds": t_s,
        "batched_median_s": statistics.median(t_b), "single_median_s": statistics.median(t_s),
        "speedup_median": statistics.median(t_s) / statistics.median(t_b),
        "backend": info.name, "device": info.device, "machine": platform.processor() or platform.machine(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("G", "batched_median_s", "single_median_s", "speedup_median", "device")}, indent=1))


def record_sweeps(paths, out):
    """Add the wall time of each NumPy block in the given result files to the JSON at ``out``."""
    result = json.loads(Path(out).read_text()) if Path(out).exists() else {}
    sweeps = {}
    for path in paths:
        for prov in ex.load_provenance(path):
            if prov["backend"] != "numpy":
                continue
            block = next(line["block"] for line in ex.read_results(Path(path)) if line["key"] == prov["key"])
            o = dict(block["settings"])
            sweeps.setdefault(Path(path).name, []).append({
                "variant": block["variant"], "n": block["n"], "grid": block["grid"], "dtype": block["dtype"],
                "N": o["N"], "networks": len(block["inv_temperature"]) * len(block["learning_rate"]) * block["repeats"],
                "epochs": o["epochs"], "seconds": prov["seconds"], "device": prov["device"], "date": prov["date"]})
    result["sweeps_on_this_machine"] = {k: {"blocks": v, "total_seconds": round(sum(b["seconds"] for b in v), 1)}
                                        for k, v in sweeps.items()}
    Path(out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v["total_seconds"] for k, v in result["sweeps_on_this_machine"].items()}))


if __name__ == "__main__":
    main()
