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


class _UsageError(Exception):
    """A command line argparse refuses: one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line (no usage dump): ``--workers must be an integer >= 1, got '1e20'``."""

    def error(self, message):
        flag, sep, rest = message.partition(": ")
        if flag.startswith("argument ") and rest.startswith("must "):  # from the flag types below
            message = f"{flag.removeprefix('argument ').split('/')[0]} {rest}"
        raise _UsageError(f"{message} (python -m damlite {self.prog.split()[-1]} --help)")


def _integer(least, most=None):
    """An argparse type: an integer in [least, most]."""
    want = f">= {least}" if most is None else f"in [{least}, {most}]"

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < least or (most is not None and value > most):
            raise argparse.ArgumentTypeError(f"must be an integer {want}, got {text!r}")
        return value
    return parse


def _number(what, *, positive=False):
    """An argparse type: a finite float, >= 0 (or > 0 if ``positive``)."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value > 0 if positive else value >= 0)):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value
    return parse


#: The largest --bootstrap: 50 times the default (the scorecard refuses more).
MAX_BOOTSTRAP = 10_000


def _profiles_help() -> str:
    """Every built-in task's profiles, for ``sweep --help``."""
    from .sweeps.blocks import BUILTIN_TASKS, get_task  # noqa: PLC0415

    return "; ".join(f"{task}: {', '.join(get_task(task).profiles)}" for task in BUILTIN_TASKS)


def _parser():
    p = _Parser(prog="python -m damlite", description="damlite experiments: resumable hyperparameter sweeps.")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("sweep", help="run (or resume) a sweep; every finished block is appended to the result file")
    s.add_argument("task", nargs="?", default="autoassociative", help="registered task (default: autoassociative)")
    s.add_argument("--profile", default=None, help=f"{_profiles_help()} (default: $DAMLITE_PROFILE, else full on a GPU, "
                   "quick on a CPU)")
    s.add_argument("--out", default="results", help="directory of the result file <task>-<profile>.jsonl")
    s.add_argument("--workers", type=_integer(1), default=1,
                   help="local worker processes (default 1: run in this process); at most the pending blocks, "
                        "2 per core and the blocks that fit in memory")
    s.add_argument("--scheduler", default=None, help="dask.distributed scheduler address: run the blocks on that cluster")
    s.add_argument("--backend", default="auto", choices=["auto", "numpy", "cupy"], help="array library (default: $DAMLITE_BACKEND or auto)")
    s.add_argument("--memory-budget", type=_number("a positive number of MiB", positive=True), default=None,
                   help="MiB for the largest intermediates (default: 256 CPU, 2048 GPU)")
    s.add_argument("--max-blocks", type=_integer(0), default=None, help="stop after this many new blocks")
    s.add_argument("--only", default=None, help="run only blocks whose key contains every comma-separated term, e.g. 'normalized,n=10|'")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--keep-going", action="store_true",
                   help="after a block fails, start the remaining blocks anyway (default: stop starting new ones)")

    m = sub.add_parser("summarize", help="optimum and good-region size per network and n, from a result file")
    m.add_argument("path", help="result file (.jsonl)")
    m.add_argument("--tolerance", type=_number("a finite number >= 0"), default=0.5,
                   help="a cell is good within this distance of the best (default 0.5)")
    m.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    m.add_argument("--skip-invalid", action="store_true",
                   help="leave out blocks whose records hold numbers the task cannot produce, saying which "
                        "(default: refuse the file, naming line, block and field)")

    ls = sub.add_parser("list", help="list a profile's blocks and whether each is done")
    ls.add_argument("task", nargs="?", default="autoassociative")
    ls.add_argument("--profile", default=None)
    ls.add_argument("--out", default="results")

    sc = sub.add_parser("scorecard", help="grade every claim of the paper from the result files; write scorecard.json")
    sc.add_argument("--results", default="book/results", help="directory holding autoassociative/ and mnist/")
    sc.add_argument("--out", default=None, help="output file (default: <results>/scorecard.json)")
    sc.add_argument("--bootstrap", type=_integer(0, MAX_BOOTSTRAP), default=200,
                    help=f"bootstrap resamples of the repeats per verdict (0 to {MAX_BOOTSTRAP}; default 200)")
    sc.add_argument("--allow-missing", action="store_true",
                    help="grade the claims whose inputs are on file, mark the others 'missing input', write the "
                         "card and exit 3 (default: refuse, naming the missing files)")
    sc.add_argument("--skip-invalid", action="store_true",
                    help="leave out blocks whose records hold numbers their task cannot produce (a distance "
                         "outside [0, 2 sqrt(N)], an F1 outside [0, 1], ...), saying which; their claims then "
                         "lack inputs (see --allow-missing). Default: refuse, naming file, line, block and field")
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


def _done(ex, path, task, profile):
    """Keys of the blocks done in result file ``path`` (read without the lock, without warnings)."""
    return {line["key"] for line in ex.read_results(path, task=task, profile=profile, warn=False)}


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one line on stderr (none when stderr is closed)."""
    stream = file or sys.stderr
    if stream is not None:
        try:
            stream.write(f"damlite: warning: {message}\n")
        except (OSError, ValueError):
            pass


def _say_interrupted(stop, code):
    """The interrupted sweep's last line, with Ctrl-C and SIGTERM ignored while it prints (a third Ctrl-C in quick
    succession once cut it off with a traceback), then :func:`_exit_now_on_signal`."""
    import signal  # noqa: PLC0415

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    print(f"damlite: {stop}", file=sys.stderr)
    _exit_now_on_signal(code)


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


class _StdoutError(OSError):
    """Standard output could not be written (a full disk, a closed pipe's reader gone...)."""

    one_line = True


class _NamedStdout:
    """sys.stdout while a command runs: a write or flush that fails (other than a closed pipe) raises
    :class:`_StdoutError`, which names standard output."""

    def __init__(self, stream):
        self._stream = stream

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def _call(self, name, *args):
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise
        except OSError as err:
            _drop_stdout(self._stream)
            raise _StdoutError(err.errno, f"cannot write to standard output: {err.strerror or err}") from None

    def write(self, text):
        return self._call("write", text)

    def flush(self):
        return self._call("flush")


def _drop_stdout(stream):
    """After a failed write to stdout: point it at the null device, so that what is still buffered
    goes nowhere when Python exits (instead of a second, unnamed error)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _escape_unencodable(err):
    """A codec error handler for stdout and stderr: bytes a path was decoded from (surrogateescape)
    written back as they were, any other character the encoding lacks as ``\\uXXXX`` (an ASCII
    locale prints "\\u2212" instead of failing after the work is done)."""
    import codecs  # noqa: PLC0415

    if isinstance(err, UnicodeEncodeError):
        chunk = err.object[err.start:err.end]
        if all(0xDC80 <= ord(c) <= 0xDCFF for c in chunk):
            return bytes(ord(c) - 0xDC00 for c in chunk), err.end
        return codecs.backslashreplace_errors(err)
    raise err


def _robust_streams():
    """stdout and stderr that never fail on a character their encoding lacks (LC_ALL=C, PYTHONUTF8=0)."""
    import codecs  # noqa: PLC0415

    try:
        codecs.lookup_error("damlite-escape")
    except LookupError:
        codecs.register_error("damlite-escape", _escape_unencodable)
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if stream is not None and encoding not in ("utf8", "utf16", "utf32") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="damlite-escape")
            except (ValueError, OSError, AttributeError):
                pass


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
    file, a block that cannot fit, a scorecard's missing inputs); 3 for a scorecard written with
    ``--allow-missing`` that lacks inputs; 1 when blocks of a sweep are left undone for any reason but
    an interrupt or ``--max-blocks`` (they failed, or the result file lost them; the finished ones
    are written) or memory ran out; 128 + the signal (130 for Ctrl-C, 143 for SIGTERM) when a
    sweep was interrupted.
    """
    import warnings  # noqa: PLC0415

    from .backend import env_flag  # noqa: PLC0415
    from .sweeps.experiments import SweepFailed, SweepInterrupted  # noqa: PLC0415

    try:
        traceback = env_flag("DAMLITE_TRACEBACK")
        args = _parser().parse_args(argv)
    except (_UsageError, ValueError) as err:
        print(f"damlite: error: {err}", file=sys.stderr)
        return 2
    shown, warnings.showwarning = warnings.showwarning, _one_line_warning
    _robust_streams()
    stdout = sys.stdout
    if stdout is not None:
        sys.stdout = _NamedStdout(stdout)
    try:
        code = _main(args)
        if sys.stdout is not None:
            sys.stdout.flush()
        return code
    except BrokenPipeError:  # output piped into `head` and cut: not an error
        if sys.stderr is not None:
            sys.stderr.close()
        return 0
    except SweepInterrupted as stop:  # every finished block is written; the message says how many
        _say_interrupted(stop, 128 + int(stop.signum))
        return 128 + int(stop.signum)
    except KeyboardInterrupt:
        print("damlite: interrupted" + ("; rerun the same command to resume" if args.command == "sweep" else ""),
              file=sys.stderr)
        return 130
    except SweepFailed as err:
        print(f"damlite: error: {err}", file=sys.stderr)
        return 1
    except MemoryError as err:
        print(f"damlite: error: out of memory ({err or 'an allocation failed'}); run fewer --workers, lower "
              f"--memory-budget (MiB; it bounds the intermediates) or choose blocks with smaller grids (--only)",
              file=sys.stderr)
        return 1
    except (ValueError, TypeError, OSError, RuntimeError) as err:
        if traceback:
            raise
        text = err.strerror if getattr(err, "one_line", False) else err  # a message of ours: no "[Errno N]"
        print(f"damlite: error: {text}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - a bug: one line, the traceback on request
        if traceback:
            raise
        print(f"damlite: internal error (a bug, please report it): {type(err).__name__}: {err}; "
              f"set DAMLITE_TRACEBACK=1 for the traceback", file=sys.stderr)
        return 1
    finally:
        warnings.showwarning = shown
        if isinstance(sys.stdout, _NamedStdout):
            sys.stdout = stdout


def _close_cluster(client, executor, *, abandoned):
    """Close the dask client; when the sweep ended early (Ctrl-C, SIGTERM, a failure), first cancel
    every block it submitted there, so that the cluster starts none of them. (A block already
    running on a worker runs to its end: dask cannot stop a running task; its result is dropped.)"""
    if abandoned:
        try:
            executor.shutdown(wait=False)  # dask's ClientExecutor: cancels all its futures
        except Exception:  # noqa: BLE001 - the cluster may be gone already; closing is all that is left
            pass
        try:
            client.close()
        except Exception:  # noqa: BLE001
            pass
        return
    client.close()


def _check_results_dir(results):
    """--results must be a directory (one line saying what it is otherwise)."""
    if os.path.isdir(results):
        return
    if not os.path.lexists(results):
        raise ValueError(f"--results {results}: no such directory (it holds autoassociative/ and mnist/)")
    what = "a broken symbolic link" if os.path.islink(results) and not os.path.exists(results) else "a file"
    raise ValueError(f"--results {results} is {what}, not a directory; give the folder that holds "
                     f"autoassociative/ and mnist/")


class _invalid_lines:
    """With --skip-invalid, readers skip impossible lines; on the way out one line per skipped line
    on stderr (file:line, block, why). Without it they refuse the file (the default)."""

    def __init__(self, skip):
        self.skip, self._ctx, self.skipped = skip, None, []

    def __enter__(self):
        if self.skip:
            from .sweeps.validate import skipping_invalid  # noqa: PLC0415

            self._ctx = skipping_invalid()
            self.skipped = self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
            for path, number, key, why in self.skipped:
                print(f"damlite: skipped {path}:{number} (--skip-invalid): block {key}: {why}", file=sys.stderr)
        return False


def _main(args):
    from .sweeps import experiments as ex  # noqa: PLC0415

    if args.command == "sweep":
        budget = _memory_budget_bytes(args.memory_budget)
        profile = ex.profile_name(args.profile)
        blocks = _select(ex.profile_blocks(args.task, profile), args.only, f"{args.task}-{profile}")
        path = ex.results_path(args.out, args.task, profile)
        before = _done(ex, path, args.task, profile) if os.path.isdir(args.out) else set()
        pending = sum(b.key not in before for b in blocks)
        if not pending:  # nothing is opened for writing: a complete file on read-only storage is fine
            print(f"{path}: nothing to do; all {len(blocks)} blocks are done")
            return 0
        executor = client = None
        if args.scheduler:
            from dask.distributed import Client  # noqa: PLC0415

            client = Client(args.scheduler)
            executor = client.get_executor()
        start = time.perf_counter()
        finished = False
        try:
            path = ex.run_sweep(args.task, profile, blocks=blocks, out_dir=args.out, executor=executor,
                                workers=args.workers, backend=args.backend, memory_budget=budget,
                                progress=not args.no_progress, max_blocks=args.max_blocks,
                                keep_going=args.keep_going)
            finished = True
        finally:
            if client is not None:
                _close_cluster(client, executor, abandoned=not finished)
        done = _done(ex, path, args.task, profile)
        left = sum(b.key not in done for b in blocks)
        print(f"{path}: {len(blocks) - left}/{len(blocks)} blocks done, {left} left "
              f"({time.perf_counter() - start:.1f} s this run)")
        allowed = max(0, pending - args.max_blocks) if args.max_blocks is not None else 0
        if left > allowed:  # the sweep returned, yet blocks are missing: never exit 0 on that
            print(f"damlite: error: {left - allowed} block{'s' * (left - allowed != 1)} of this sweep "
                  f"{'are' if left - allowed != 1 else 'is'} not in {path} (did another program change it?); "
                  f"rerun the same command to run {'them' if left - allowed != 1 else 'it'}", file=sys.stderr)
            return 1
        return 0
    if args.command == "summarize":
        if not os.path.lexists(args.path):
            raise ValueError(f"{args.path}: no such result file (run `python -m damlite sweep ...` first)")
        with _invalid_lines(args.skip_invalid):  # a directory, a FIFO or a dangling link: an error naming it
            records = ex.load_records(args.path)
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
        _check_results_dir(args.results)
        out = scorecard.check_out(args.out or os.path.join(args.results, "scorecard.json"))  # before the work
        with _invalid_lines(args.skip_invalid):
            card = scorecard.build(args.results, bootstrap=args.bootstrap, allow_missing=args.allow_missing)
        path = scorecard.write(card, out)
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
