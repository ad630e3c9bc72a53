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
    s.add_argument("--keep-going", action="store_true",
                   help="after a block fails, start the remaining blocks anyway (default: stop starting new ones)")

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
    sc.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples of the repeats per verdict (0-10000)")
    sc.add_argument("--allow-missing", action="store_true",
                    help="grade the claims whose inputs are on file, mark the others 'missing input', write the "
                         "card and exit 3 (default: refuse, naming the missing files)")
    return p


def _select(blocks, only, where=""):
    """The blocks whose key contains every comma-separated term of ``only``; an error if none does."""
    if not only:
        return blocks
    terms = [t for t in only.split(",") if t]
    chosen = [b for b in blocks if all(t in b.key for t in terms)]
    if not chosen:
        raise ValueError(f"--only {only!r} matches none of the {len(blocks)} blocks of {where}; "
                         f"a term must be part of a block key, e.g. 'normalized,n=10|'")
    return chosen


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one line on stderr (none when stderr is closed)."""
    stream = file or sys.stderr
    if stream is not None:
        try:
            stream.write(f"damlite: warning: {message}\n")
        except (OSError, ValueError):
            pass


def _exit_now_on_signal(code):
    """After an interrupted sweep (its results written, its lock released): another Ctrl-C ends the process at once."""
    import signal  # noqa: PLC0415

    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: os._exit(code))


def _memory_budget_bytes(mib):
    """--memory-budget (MiB) in bytes, or None; a ValueError that states the unit."""
    if mib is None:
        return None
    if not (math.isfinite(mib) and mib > 0):
        raise ValueError(f"--memory-budget must be a positive number of MiB, got {mib}")
    if not math.isfinite(mib * 2**20) or mib * 2**20 < 1:
        raise ValueError(f"--memory-budget is in MiB: {mib} MiB is {mib * 2**20:.3g} bytes; "
                         f"give at least 1 byte ({1 / 2**20:.3g} MiB)")
    return int(mib * 2**20)


def main(argv=None):
    """Run the command line; every failure is one line on stderr.

    Returns 0; 2 for an expected error (``damlite: error: ...``: a bad argument, an unusable
    file, a scorecard's missing inputs); 3 for a scorecard written with ``--allow-missing``
    that lacks inputs; 1 when blocks of a sweep failed (the finished ones are written) or memory ran out;
    128 + the signal (130 for Ctrl-C, 143 for SIGTERM) when a sweep was interrupted.
    """
    import warnings  # noqa: PLC0415

    from .sweeps.experiments import SweepFailed, SweepInterrupted  # noqa: PLC0415

    args = _parser().parse_args(argv)
    shown, warnings.showwarning = warnings.showwarning, _one_line_warning
    try:
        return _main(args)
    except BrokenPipeError:  # output piped into `head` and cut: not an error
        if sys.stderr is not None:
            sys.stderr.close()
        return 0
    except SweepInterrupted as stop:  # every finished block is written; the message says how many
        print(f"damlite: {stop}", file=sys.stderr)
        _exit_now_on_signal(128 + int(stop.signum))
        return 128 + int(stop.signum)
    except KeyboardInterrupt:
        print("damlite: interrupted" + ("; rerun the same command to resume" if args.command == "sweep" else ""),
              file=sys.stderr)
        return 130
    except SweepFailed as err:
        print(f"damlite: error: {err}", file=sys.stderr)
        return 1
    except MemoryError as err:
        print(f"damlite: error: out of memory ({err or 'an allocation failed'}); lower --memory-budget (MiB) "
              f"or run fewer --workers", file=sys.stderr)
        return 1
    except (ValueError, TypeError, OSError, RuntimeError) as err:
        if os.environ.get("DAMLITE_TRACEBACK"):
            raise
        print(f"damlite: error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - a bug: one line, the traceback on request
        if os.environ.get("DAMLITE_TRACEBACK"):
            raise
        print(f"damlite: internal error (a bug, please report it): {type(err).__name__}: {err}; "
              f"set DAMLITE_TRACEBACK=1 for the traceback", file=sys.stderr)
        return 1
    finally:
        warnings.showwarning = shown


def _main(args):
    from .sweeps import experiments as ex  # noqa: PLC0415

    if args.command == "sweep":
        if args.workers < 1:
            raise ValueError(f"--workers must be >= 1, got {args.workers}")
        if args.max_blocks is not None and args.max_blocks < 0:
            raise ValueError(f"--max-blocks must be >= 0, got {args.max_blocks}")
        budget = _memory_budget_bytes(args.memory_budget)
        profile = ex.profile_name(args.profile)
        blocks = _select(ex.profile_blocks(args.task, profile), args.only, f"{args.task}-{profile}")
        executor = client = None
        if args.scheduler:
            from dask.distributed import Client  # noqa: PLC0415

            client = Client(args.scheduler)
            executor = client.get_executor()
        start = time.perf_counter()
        try:
            path = ex.run_sweep(args.task, profile, blocks=blocks, out_dir=args.out, executor=executor,
                                workers=args.workers, backend=args.backend, memory_budget=budget,
                                progress=not args.no_progress, max_blocks=args.max_blocks,
                                keep_going=args.keep_going)
        finally:
            if client is not None:
                client.close()
        done = {line["key"] for line in ex.read_results(path, task=args.task, profile=profile, warn=False)}
        left = sum(b.key not in done for b in blocks)
        print(f"{path}: {len(blocks) - left}/{len(blocks)} blocks done, {left} left "
              f"({time.perf_counter() - start:.1f} s this run)")
        return 0
    if args.command == "summarize":
        if not os.path.lexists(args.path):
            raise ValueError(f"{args.path}: no such result file (run `python -m damlite sweep ...` first)")
        records = ex.load_records(args.path)  # a directory, a FIFO or a dangling link: an error naming it
        if not records:
            raise ValueError(f"{args.path}: no complete, valid block in this file (a sweep appends one line per "
                             f"finished block)")
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
            print(f"{r['N']!s:>4} {r['variant']:>10} {r['dtype']:>7} {r['grid']:>6} {r['n']:>4} {r['best']:7.3f} "
                  f"{r['best_inv_temperature']:9.4g} {r['best_learning_rate']:7.3g} {r['good_fraction']:6.2f}")
        if any(math.isnan(r["best"]) for r in rows):
            print("nan: every network of that row failed (non-finite values)")
        return 0
    if args.command == "list":
        profile = ex.profile_name(args.profile)
        blocks = ex.profile_blocks(args.task, profile)
        done = {line["key"] for line in ex.read_results(ex.results_path(args.out, args.task, profile),
                                                        task=args.task, profile=profile)}
        shown = ("interaction", "leak", "epsilon", "memories", "init", "relaxation", "zero_sign")
        for b in blocks:
            extra = " ".join(f"{k}={b.options[k]}" for k in shown if k in b.options)
            print(("done " if b.key in done else "todo ") + f"{b.variant:>10} n={b.n:<3} {b.grid:<6} {b.dtype} "
                  f"N={b.options.get('N')} G={b.n_networks} {extra}".rstrip())
        return 0
    if args.command == "scorecard":
        from .paper import scorecard  # noqa: PLC0415

        if not 0 <= args.bootstrap <= 10_000:
            raise ValueError(f"--bootstrap must be from 0 to 10000 resamples, got {args.bootstrap}")
        card = scorecard.build(args.results, bootstrap=args.bootstrap, allow_missing=args.allow_missing)
        path = scorecard.write(card, args.out or os.path.join(args.results, "scorecard.json"))
        for cid, _, verdict in scorecard.summary_rows(card):
            print(f"{cid:>20}: {verdict}")
        print(f"{path}: {len(card['claims'])} claims")
        for miss in card.get("missing_inputs", []):
            print(f"damlite: missing input: {miss['file']}: {miss['what']} (feeds {', '.join(miss['claims'])})",
                  file=sys.stderr)
        return 3 if card.get("missing_inputs") else 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
