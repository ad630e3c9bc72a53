"""Command line: ``python -m damlite sweep|summarize|list``.

Examples
--------
Run the quick autoassociative sweep on this machine (resumes where it stopped)::

    python -m damlite sweep autoassociative --profile quick --out book/results/autoassociative

The full profile on a GPU, two blocks at a time in worker processes::

    DAMLITE_BACKEND=cupy python -m damlite sweep autoassociative --profile full --workers 1 \\
        --out book/results/autoassociative

On a dask cluster: ``--scheduler tcp://host:8786`` maps the blocks over
``Client(address).get_executor()``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time


def _parser():
    p = argparse.ArgumentParser(prog="python -m damlite", description="damlite experiments: resumable hyperparameter sweeps.")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("sweep", help="run (or resume) a sweep; every finished block is appended to the result file")
    s.add_argument("task", nargs="?", default="autoassociative", help="registered task (default: autoassociative)")
    s.add_argument("--profile", default=None, help="quick | full (default: $DAMLITE_PROFILE, else full on a GPU, quick on a CPU)")
    s.add_argument("--out", default="results", help="directory of the result file <task>-<profile>.jsonl")
    s.add_argument("--workers", type=int, default=1, help="local worker processes (default 1: run in this process)")
    s.add_argument("--scheduler", default=None, help="dask.distributed scheduler address: run the blocks on that cluster")
    s.add_argument("--backend", default="auto", choices=["auto", "numpy", "cupy"], help="array library (default: $DAMLITE_BACKEND or auto)")
    s.add_argument("--memory-budget", type=float, default=None, help="MiB for the largest intermediates (default: 256 CPU, 2048 GPU)")
    s.add_argument("--max-blocks", type=int, default=None, help="stop after this many new blocks")
    s.add_argument("--only", default=None, help="run only blocks whose key contains every comma-separated term, e.g. 'normalized,n=10|'")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")

    m = sub.add_parser("summarize", help="optimum and good-region size per network and n, from a result file")
    m.add_argument("path", help="result file (.jsonl)")
    m.add_argument("--tolerance", type=float, default=0.5, help="a cell is good within this distance of the best (default 0.5)")
    m.add_argument("--json", action="store_true", help="print JSON rows instead of a table")

    ls = sub.add_parser("list", help="list a profile's blocks and whether each is done")
    ls.add_argument("task", nargs="?", default="autoassociative")
    ls.add_argument("--profile", default=None)
    ls.add_argument("--out", default="results")

    sc = sub.add_parser("scorecard", help="grade every claim of the paper from the result files; write scorecard.json")
    sc.add_argument("--results", default="book/results", help="directory holding autoassociative/ and mnist/")
    sc.add_argument("--out", default=None, help="output file (default: <results>/scorecard.json)")
    sc.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples of the repeats per verdict")
    return p


def _select(blocks, only):
    if not only:
        return blocks
    terms = [t for t in only.split(",") if t]
    return [b for b in blocks if all(t in b.key for t in terms)]


def main(argv=None):
    """Run the command line; an expected failure prints one line (``damlite: error: ...``) and returns 2."""
    args = _parser().parse_args(argv)
    try:
        return _main(args)
    except BrokenPipeError:  # output piped into `head` and cut: not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("damlite: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError, RuntimeError) as err:
        if os.environ.get("DAMLITE_TRACEBACK"):
            raise
        print(f"damlite: error: {err}", file=sys.stderr)
        return 2


def _main(args):
    from . import experiments as ex  # noqa: PLC0415

    if args.command == "sweep":
        if args.workers < 1:
            raise ValueError(f"--workers must be >= 1, got {args.workers}")
        if args.max_blocks is not None and args.max_blocks < 0:
            raise ValueError(f"--max-blocks must be >= 0, got {args.max_blocks}")
        if args.memory_budget is not None and not (math.isfinite(args.memory_budget) and args.memory_budget > 0):
            raise ValueError(f"--memory-budget must be a positive number of MiB, got {args.memory_budget}")
        profile = ex.profile_name(args.profile)
        blocks = _select(ex.profile_blocks(args.task, profile), args.only)
        budget = None if args.memory_budget is None else int(args.memory_budget * 2**20)
        executor = client = None
        if args.scheduler:
            from dask.distributed import Client  # noqa: PLC0415

            client = Client(args.scheduler)
            executor = client.get_executor()
        start = time.perf_counter()
        try:
            path = ex.run_sweep(args.task, profile, blocks=blocks, out_dir=args.out, executor=executor,
                                workers=args.workers, backend=args.backend, memory_budget=budget,
                                progress=not args.no_progress, max_blocks=args.max_blocks)
        finally:
            if client is not None:
                client.close()
        done = {line["key"] for line in ex.read_results(path)}
        left = sum(b.key not in done for b in blocks)
        print(f"{path}: {len(blocks) - left}/{len(blocks)} blocks done, {left} left "
              f"({time.perf_counter() - start:.1f} s this run)")
        return 0
    if args.command == "summarize":
        from pathlib import Path  # noqa: PLC0415

        if not Path(args.path).is_file():
            raise ValueError(f"{args.path}: no such result file (run `python -m damlite sweep ...` first)")
        records = ex.load_records(args.path)
        if not records:
            raise ValueError(f"{args.path}: no finished block in this file yet")
        need = ("task", "variant", "n", "grid", "dtype", "inv_temperature", "learning_rate")
        missing = sorted({k for r in records for k in need if k not in r})
        if missing:
            raise ValueError(f"{args.path}: not a sweep result file (records lack {', '.join(missing)})")
        spec = ex.get_task(records[0]["task"]) if records else None
        rows = ex.summarize(records, tolerance=args.tolerance, **(
            {"metric": spec.metric, "lower_is_better": spec.lower_is_better} if spec else {}))
        if args.json:
            print(json.dumps(rows, indent=1))
            return 0
        print(f"{'N':>4} {'variant':>10} {'dtype':>7} {'grid':>6} {'n':>4} {'best':>7} {'1/T*':>9} {'lr*':>7} {'good':>6}")
        for r in rows:
            print(f"{r['N']:>4} {r['variant']:>10} {r['dtype']:>7} {r['grid']:>6} {r['n']:>4} {r['best']:7.3f} "
                  f"{r['best_inv_temperature']:9.4g} {r['best_learning_rate']:7.3g} {r['good_fraction']:6.2f}")
        return 0
    if args.command == "list":
        profile = ex.profile_name(args.profile)
        blocks = ex.profile_blocks(args.task, profile)
        done = {line["key"] for line in ex.read_results(ex.results_path(args.out, args.task, profile))}
        shown = ("interaction", "leak", "epsilon", "memories", "init", "relaxation", "zero_sign")
        for b in blocks:
            extra = " ".join(f"{k}={b.options[k]}" for k in shown if k in b.options)
            print(("done " if b.key in done else "todo ") + f"{b.variant:>10} n={b.n:<3} {b.grid:<6} {b.dtype} "
                  f"N={b.options.get('N')} G={b.n_networks} {extra}".rstrip())
        return 0
    if args.command == "scorecard":
        from . import scorecard  # noqa: PLC0415

        card = scorecard.build(args.results, bootstrap=args.bootstrap)
        path = scorecard.write(card, args.out or os.path.join(args.results, "scorecard.json"))
        for cid, _, verdict in scorecard.summary_rows(card):
            print(f"{cid:>20}: {verdict}")
        print(f"{path}: {len(card['claims'])} claims")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
