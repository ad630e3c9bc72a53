"""The sweep engine: resumable, batched hyperparameter sweeps over any task.

A *sweep* is a list of :class:`~damlite.sweeps.blocks.Block` s. A block is one task x network variant x
interaction vertex n x grid (learning rate x inverse temperature) x dtype; all of
its grid cells and repeats are trained together as ONE batch of G networks.
This module knows no task: the tasks live in :mod:`damlite.sweeps.tasks` (the paper's
autoassociative task, its MNIST sweep, Krotov's run) and register themselves.

Tasks
-----
A task is a function ``run_block(block, *, backend, dtype, memory_budget) ->
list[dict]`` returning one record (a flat, JSON-serialisable dict) per grid cell
x repeat, registered with :func:`~damlite.sweeps.blocks.register_task` together with its profiles
(functions ``profile() -> list[Block]``)::

    from damlite.sweeps.experiments import Block, register_task

    def run_toy_block(block, *, backend, dtype, memory_budget):
        return [{"repeat": r, "inv_temperature": t, "learning_rate": lr, "distance": 0.0}
                for r, _, _, t, lr in block.cells()]

    register_task("toy", run_toy_block, profiles={"quick": lambda: [...]})

Every record the runner writes carries the block's identity (task, variant, n,
grid, dtype, settings) next to the task's own fields. ``run_block`` must be a
module-level function (it is pickled to worker processes) and deterministic
given ``block.seed``.

Result files
------------
(:mod:`damlite.sweeps.resultfiles`) :func:`run_sweep` appends one JSON line per finished block to
``<out_dir>/<task>-<profile>.jsonl`` (one ``write``, fsync'd): the block, its
records and provenance (damlite version, resolved git commit and whether the
tree was dirty, backend, device, dtype, seed, date, wall time). Each line also names
the profile it was run for. The writer holds an exclusive lock
(``<file>.lock``) for the whole sweep: a second sweep on the same file waits
for it, says so, then skips what the first one finished. Only the writer,
under that lock, repairs a line cut short (by a kill, say); readers
(:func:`~damlite.sweeps.resultfiles.read_results`, :func:`~damlite.sweeps.resultfiles.load_records`,
``list``, ``summarize``) never modify a file, and count a line only when it is the complete line of a block
of the file's task and profile (anything else is skipped with a warning naming
its line number), and refuse a line whose numbers its task cannot produce
(:mod:`damlite.sweeps.validate`), naming file, line, block and field. Rerunning the same command after an interruption (SIGKILL
included) ends with the same records as an uninterrupted run. Blocks are mapped
over any :class:`concurrent.futures.Executor` (a local process pool for
``workers > 1``, or ``dask.distributed``'s ``client.get_executor()``).

Faults
------
Every block that finishes is written at once, whatever happens to the others.
A block that raises is reported in one line; after a failure no new block
starts (the running ones finish and are written) unless ``keep_going``, and
:class:`SweepFailed` names the first failure. Ctrl-C or SIGTERM writes the
blocks that have finished, cancels the rest, stops the local workers (which
leave Ctrl-C to the sweep) and raises :class:`SweepInterrupted` within a
moment; a second Ctrl-C while it stops is ignored. A write that fails (a full
disk, ``ulimit -f``) is taken back, so the file still ends on a whole line, and
the error names the file.

A sweep that cannot loop or lie: a task's records are made JSON-plain (NumPy
scalars become numbers; anything else that is no JSON value fails the block,
naming the record and field), and each line is checked as readers check it
before it is written (a line they would skip fails its block instead of being
appended on every run). Before each write the writer compares the file with
what it left (device, inode, size); if another program truncated, replaced or
grew it, the writer repairs its tail as at the start, takes the blocks it holds
now as done, and says so in one line; a block of this run that the file no
longer holds at the end fails the sweep. So :func:`run_sweep` returns only when
every block it was to run is in the file, and the command line exits non-zero
whenever blocks are left undone for any reason but an interrupt or
``--max-blocks``.

Limits
------
(:mod:`damlite.sweeps.limits`) Before any work: ``workers`` is capped at the
pending blocks, at two per core and at the blocks that fit in memory side by side; a
block whose task's memory estimate plus the budget exceeds the machine's memory
(the GPU's, on CuPy), or the address-space limit (``ulimit -v``) with what the
process maps already, is refused in one line naming it. Block keys hold the
exact grid values (:attr:`~damlite.sweeps.blocks.Block.key`), so two grids that
agree to 6 digits are two blocks; lines keyed as before are still read.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path

import numpy as np

# Blocks, the task registry and result files have modules of their own; their names stay importable from here.
from .blocks import (BASE_SEED, BUILTIN_TASKS, TASKS, Block, TaskSpec, get_task, profile_blocks,  # noqa: F401
                     profile_name, register_task)
from . import limits
from .resultfiles import (ResultFileError, _append_line, _change, _check_path, _check_writable_file,  # noqa: F401
                          _expected, _file_state, _line_problem, _repair_tail, _WriterLock, check_out_dir, load_provenance,
                          load_records, read_results, results_path)

__all__ = [
    "run_block",
    "run_sweep",
    "summarize",
    "heatmap_table",
    "good_region",
    "provenance",
    "git_state",
    "git_problem",
    "SweepFailed",
    "SweepInterrupted",
]


# --------------------------------------------------------------------- provenance
def _git(*args):
    """``git args`` in damlite's checkout: (stdout, None) on success, else (None, why it failed in a few words).

    Output is read as bytes (a checkout path outside ASCII works under any locale, LC_ALL=C included).
    Read-only: ``status`` runs with ``--no-optional-locks``, so a sweep never takes (or, killed, leaves)
    the checkout's index lock."""
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=5)  # bytes: any locale
    except FileNotFoundError:
        return None, "no git on PATH"
    except (OSError, subprocess.SubprocessError) as err:
        return None, f"git could not run ({err})"
    if out.returncode == 0:
        return os.fsdecode(out.stdout).strip(), None  # a path comes back as the file system names it
    stderr = out.stderr if isinstance(out.stderr, str) else out.stderr.decode("utf-8", errors="replace")
    why = next((line.strip() for line in stderr.splitlines() if line.strip()), f"exit status {out.returncode}")
    return None, f"git said: {why.removeprefix('fatal: ')}"


def _env_commit():
    """$DAMLITE_GIT_COMMIT, checked: a full commit hash (40 or 64 hexadecimal digits, lower case), or None."""
    raw = os.environ.get("DAMLITE_GIT_COMMIT", "")
    value = raw.strip().lower()
    if value and not (len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value)):
        raise ValueError(f"DAMLITE_GIT_COMMIT must be a full commit hash (40 or 64 hexadecimal digits), got {raw!r}; "
                         f"`git rev-parse HEAD` in the checkout prints it")
    return value or None


@functools.lru_cache(maxsize=1)
def _git_info() -> tuple:
    env = _env_commit()  # checked even where git answers: a switch has one meaning everywhere
    commit, why = _git("rev-parse", "--verify", "HEAD")
    top, _ = _git("rev-parse", "--show-toplevel") if commit else (None, None)
    root = Path(__file__).resolve().parents[2]
    if commit and top and Path(top).resolve() == root:
        dirty, _ = _git("--no-optional-locks", "status", "--porcelain", "--untracked-files=no", "damlite")
        return commit, (None if dirty is None else bool(dirty)), None
    if commit:  # some other repository around an installed copy: not damlite's commit
        why = f"{root} is not the top of a git checkout"
    return env, None, (None if env else why)


def git_state() -> tuple:
    """(resolved commit hash or None, whether damlite's tracked files differ from it or None).

    Resolved once per process (the code a process runs is the code it imported;
    worker processes inherit the answer). Where the code is not a git checkout
    (a copied tree on a GPU machine), the commit comes from $DAMLITE_GIT_COMMIT
    when set, with ``dirty`` unknown (None).
    """
    return _git_info()[:2]


def git_problem():
    """Why no commit can be recorded (e.g. "no git on PATH"), or None when one can."""
    return _git_info()[2]


def provenance(backend="auto", *, host=False, **extra) -> dict:
    """Where and with what a result was computed; ``host=True`` adds the machine and command line."""
    from .. import __version__  # noqa: PLC0415
    from ..backend import backend_info  # noqa: PLC0415

    info = backend_info(backend)
    commit, dirty = git_state()
    out = {
        "damlite": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "backend": info.name,
        "device": info.device,
        "numpy": np.__version__,
        "cpu_kernels": _cpu_kernels(info.name),
        "gpu_kernels": _gpu_kernels(info.name),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    if host:
        import platform  # noqa: PLC0415
        import sys  # noqa: PLC0415

        out.update(
            python=platform.python_version(), platform=platform.platform(),
            processor=platform.processor() or platform.machine(), cpu_count=os.cpu_count(),
            load_average=list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            argv=[Path(a).name if os.path.isabs(a) else a for a in sys.argv],
            threads={k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
                     if k in os.environ},
        )
    out.update(extra)
    return out


def _cpu_kernels(backend_name):
    """Which CPU kernels ran: "numba" (damlite.kernels.cpu_kernels) or "numpy"; None off the CPU."""
    if backend_name != "numpy":
        return None
    from ..kernels import cpu_kernels  # noqa: PLC0415

    if not cpu_kernels.available():
        return "numpy"
    return f"numba {cpu_kernels.numba.__version__}, {cpu_kernels.num_threads()} threads"


def _gpu_kernels(backend_name):
    """Which GPU learning rule ran (:func:`damlite.kernels.gpu_kernels.status`); None off the GPU."""
    if backend_name != "cupy":
        return None
    from ..kernels import gpu_kernels  # noqa: PLC0415

    return gpu_kernels.status()


# -------------------------------------------------------------------------- runner
def run_block(block: Block, *, backend="auto", memory_budget=None) -> dict:
    """Run one block with its task's function; return the line written to the result file."""
    from ..backend import get_backend  # noqa: PLC0415

    spec = get_task(block.task)
    _, info = get_backend(backend)
    budget = check_memory_budget(memory_budget, info.name)
    start = time.perf_counter()
    records = spec.run_block(block, backend=backend, dtype=block.dtype, memory_budget=budget)
    seconds = time.perf_counter() - start
    if not isinstance(records, (list, tuple)):
        raise TypeError(f"task {block.task!r} returned a {type(records).__name__}, not a list of records (dicts)")
    ident = block.identity()
    records = [{**ident, **_json_record(rec, g)} for g, rec in enumerate(records)]
    prov = provenance(backend)
    prov.update(seconds=round(seconds, 3), memory_budget=budget, seed=block.seed_entropy)
    return {"key": block.key, "block": block.to_json(), "provenance": prov, "records": records}


def _json_record(rec, g) -> dict:
    """Record ``g`` with NumPy scalars as Python numbers; ValueError naming the field of anything else
    that is no JSON value."""
    if not isinstance(rec, dict):
        raise ValueError(f"record {g} is a {_type_name(rec)}, not a dict")
    return {k: _json_value(v, g, k) for k, v in rec.items()}


def _type_name(v) -> str:
    t = type(v)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _json_value(v, g, field):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, np.generic) and isinstance(v, (np.bool_, np.integer, np.floating)):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_json_value(x, g, field) for x in v]
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {k: _json_value(x, g, field) for k, x in v.items()}
    raise ValueError(f"record {g}'s field {field!r} is a {_type_name(v)}, not a JSON value (a number, string, "
                     f"bool or None, or a list or dict of them); convert it in the task (e.g. .tolist())")


def _default_budget(backend_name):
    return 2 * 2**30 if backend_name == "cupy" else 256 * 2**20


def check_memory_budget(memory_budget, backend_name="numpy") -> int:
    """``memory_budget`` in bytes (None: the backend's default), or ValueError naming it."""
    import math  # noqa: PLC0415
    import numbers  # noqa: PLC0415

    if memory_budget is None:
        return _default_budget(backend_name)
    if (isinstance(memory_budget, bool) or not isinstance(memory_budget, numbers.Real)
            or not math.isfinite(memory_budget) or memory_budget < 1):
        raise ValueError(f"memory_budget must be a finite number of bytes >= 1 (or None), got {memory_budget!r}")
    limits.check_budget(int(memory_budget), backend_name)
    return int(memory_budget)


def _run_block_entry(task_spec_fn, block, backend, memory_budget):
    """Worker entry point (module level, picklable). Registers the task if the worker lacks it."""
    if block.task not in TASKS:
        if block.task in BUILTIN_TASKS:
            get_task(block.task)
        else:
            register_task(block.task, task_spec_fn)
    return run_block(block, backend=backend, memory_budget=memory_budget)


def _worker_init():  # pragma: no cover - runs in pool workers
    """Pool initialiser: Ctrl-C is the sweep's to answer, not the workers' (the sweep stops them);
    on Linux a worker gets SIGTERM (which ends it) when the sweep that started it dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the sweep's handler, inherited through fork
    try:
        import ctypes  # noqa: PLC0415

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM stopped a sweep; every block finished before it is in the file.

    ``path``: the result file; ``kept``: blocks written by this run; ``signum``: the signal.
    """

    def __init__(self, message, *, path=None, kept=0, signum=signal.SIGINT):
        super().__init__(message)
        self.path, self.kept, self.signum = path, kept, signum


class SweepFailed(RuntimeError):
    """Blocks of a sweep raised; every block that finished is in the file.

    ``failed``: [(block, one-line error)]; ``kept``: blocks written by this run.
    """

    def __init__(self, message, *, path=None, kept=0, failed=()):
        super().__init__(message)
        self.path, self.kept, self.failed = path, kept, list(failed)


class _StopSignals:
    """SIGINT and SIGTERM while a sweep runs in the main thread: the first one raises KeyboardInterrupt
    only where the sweep is waiting for a block (``interruptible``), never while it writes one;
    when it comes elsewhere it is raised at the next wait (or by ``check``). Later signals are
    ignored: the sweep is already stopping, which takes a moment. A signal that was ignored when
    the sweep started (a background job's SIGINT) stays ignored."""

    def __init__(self):
        self.signum = None
        self._open = False
        self._pending = False
        self._old = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    self._old[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._old.items():
            signal.signal(sig, handler)

    def _on_signal(self, signum, frame):
        if self.signum is not None:
            return
        self.signum = signum
        if self._open:
            raise KeyboardInterrupt
        self._pending = True

    def check(self):
        """Raise the signal that came while the sweep was not waiting."""
        if self._pending:
            self._pending = False
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def interruptible(self):
        self.check()
        self._open = True
        try:
            yield
        finally:
            self._open = False


class _SafeStream:
    """The progress bar's stream: a closed or broken stderr switches the bar off instead of ending the sweep."""

    def __init__(self, stream):
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"

    def write(self, text):
        self._call("write", text)

    def flush(self):
        self._call("flush")

    def _call(self, name, *args):
        if self.stream is not None:
            try:
                getattr(self.stream, name)(*args)
            except (OSError, ValueError):
                self.stream = None


def _one_line(err) -> str:
    """``Type: message`` of an exception, on one line (at most 300 characters)."""
    text = " ".join(str(err).split()) or "(no message)"
    text = text if len(text) <= 300 else text[:297] + "..."
    hint = (" (out of memory: run fewer --workers, lower --memory-budget, which bounds the intermediates, or give "
            "the block a smaller grid)") if isinstance(err, MemoryError) else ""
    return f"{type(err).__name__}: {text}{hint}"


def run_sweep(task="autoassociative", profile=None, *, blocks=None, out_dir="results", executor: Executor | None = None,
              workers=1, backend="auto", memory_budget=None, progress=True, max_blocks=None, keep_going=False,
              say=print) -> Path:
    """Run every block of ``task``'s ``profile`` (or the given ``blocks``) not yet in the result file.

    Blocks already on disk are skipped (resume); when every block is there, nothing
    is opened for writing (a complete file on read-only storage is nothing to do). With ``executor`` (any
    :class:`concurrent.futures.Executor`, e.g. ``dask.distributed.Client(...).get_executor()``)
    blocks run there; otherwise ``workers > 1`` starts a local process pool and
    ``workers == 1`` runs them here. ``max_blocks`` stops after that many new
    blocks (for tests and time-boxed runs). The result file is locked for the
    whole sweep (see the module doc). Returns the result file's path.

    Before any work (without ``executor``), ``workers`` is capped at the pending blocks, at
    :data:`~damlite.sweeps.limits.WORKERS_PER_CORE` per core and at the blocks that fit in memory
    side by side (one line said when capped), and a block that cannot fit in memory
    or under ``ulimit -v`` is refused (:func:`damlite.sweeps.limits.check_blocks`).

    Every block that finishes is written, whatever happens to the others, once
    its line passes the check readers apply (a line they would skip is not
    written: its block fails, naming the field). Before each write the writer
    checks that the file is as it left it; if another program changed it, the
    writer repairs its tail as it does at the start and says so in one line,
    and a block of this run that the file no longer holds at the end counts as
    failed. A block that raises is reported (``say``) in one line; after a failure no new
    block starts (the running ones finish and are written) unless
    ``keep_going``; then :class:`SweepFailed` is raised. Ctrl-C or SIGTERM
    writes the blocks already finished, cancels the rest, stops the local
    workers and raises :class:`SweepInterrupted` (a KeyboardInterrupt).
    """
    import numbers  # noqa: PLC0415
    import warnings  # noqa: PLC0415

    from ..training import progress_bar  # noqa: PLC0415

    name = profile_name(profile)
    spec = get_task(task)
    if blocks is None:
        blocks = profile_blocks(task, name)
    for arg, value, least in (("workers", workers, 1), ("max_blocks", max_blocks, 0)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least):
            raise ValueError(f"{arg} must be an integer >= {least}, got {value!r}")
    from ..backend import get_backend  # noqa: PLC0415

    backend_name = get_backend(backend)[1].name
    budget = check_memory_budget(memory_budget, backend_name)
    git_state()  # resolved now, before any worker starts: the commit of the code this sweep loaded
    if git_problem():
        warnings.warn(f"no git commit will be recorded in the provenance ({git_problem()}); "
                      f"set DAMLITE_GIT_COMMIT to the commit of this code to record one", stacklevel=2)
    metric, keys = _expected(task, name)
    strays = [b for b in blocks if b.task != task or (keys is not None and b.key not in keys)]
    if strays:
        b = strays[0]
        raise ValueError(f"block {b.label} of task {b.task!r} is not a block of {task}'s profile {name!r}: readers "
                         f"of {task}-{name}.jsonl would skip its line; run it under its own task and profile")
    index = {b.key: i for i, b in enumerate(blocks, start=1)}
    number = lambda b: f"{index.get(b.key, '?')}/{len(blocks)}"  # noqa: E731
    out = results_path(out_dir, task, name)
    # read without the lock (readers never need it): what is left, checked before anything is written
    done = ({line["key"] for line in read_results(out, task=task, profile=name, warn=False)}
            if Path(out_dir).is_dir() and _check_path(out) else set())
    pending = [b for b in blocks if b.key not in done]
    if not pending:
        return out
    if max_blocks is not None:
        pending = pending[: int(max_blocks)]
    if executor is None:  # blocks run on this machine (an executor's workers may be other machines)
        limits.check_blocks(pending, spec, budget, backend_name, number)
        workers = limits.cap_workers(workers, pending, spec, budget, backend_name, say)
    out = results_path(check_out_dir(out_dir), task, name)
    _check_writable_file(out)
    if _check_path(out) and not os.access(out, os.W_OK):
        raise ResultFileError(f"{out} is read-only; make it writable or choose another --out")
    with _WriterLock(out, say=say), _StopSignals() as signals:
        _repair_tail(out, say=say)
        done = {line["key"] for line in read_results(out, task=task, profile=name)}
        todo = [b for b in blocks if b.key not in done]
        if max_blocks is not None:
            todo = todo[: int(max_blocks)]
        total = sum(b.n_networks for b in blocks)
        # the one rule for bars (damlite.training.progress_bar): a widget for a person at a notebook, none in a
        # notebook executed unattended, else a text bar (on stderr, which may go away: _SafeStream)
        bar = progress_bar(progress=progress, total=total,
                           initial=total - sum(b.n_networks for b in blocks if b.key not in done), unit="cell",
                           desc=f"{task}-{name}", smoothing=0.0,
                           **({"file": _SafeStream(sys.stderr)} if sys.stderr is not None else {}))
        run = _Run(out, task, name, blocks, say, bar, signals, metric=metric, keys=keys)
        try:
            run.all(todo, spec, executor=executor, workers=workers, backend=backend, memory_budget=memory_budget,
                    keep_going=keep_going)
        except KeyboardInterrupt:
            signum = signals.signum or signal.SIGINT
            finished = len(done & {b.key for b in blocks}) + run.kept
            raise SweepInterrupted(
                f"interrupted; {run.kept} finished block{'s' * (run.kept != 1)} kept ({finished}/{len(blocks)} "
                f"done in {out}), rerun the same command to resume", path=out, kept=run.kept, signum=signum) from None
        finally:
            bar.close()
        run.check_kept()
    if run.failed:
        (first, error), more = run.failed[0], len(run.failed) - 1
        left = len(todo) - len(run.written) - len(run.failed) + len(run.lost) - len(run.skipped)
        raise SweepFailed(
            f"block {run.number(first)} ({first.label}) failed: {error}" + (f"; {more} more failed" if more else "")
            + f"; {run.kept} finished block{'s' * (run.kept != 1)} written to {out}"
            + (f"; {left} not started (--keep-going runs them past a failure)" if left > 0 else "")
            + "; rerun the same command to retry", path=out, kept=run.kept, failed=run.failed)
    return out


class _Run:
    """One sweep's loop: runs blocks (here, in a local pool or on an executor), appends each one that finishes."""

    def __init__(self, out, task, profile, blocks, say, bar, signals, *, metric=None, keys=None):
        self.out, self.task, self.profile, self.say, self.bar, self.signals = out, task, profile, say, bar, signals
        self.metric, self.keys = metric, keys
        self.index = {b.key: i for i, b in enumerate(blocks, start=1)}
        self.n_blocks = len(blocks)
        self.written = []  # blocks this run appended
        self.lost = []  # of those, the ones the file no longer holds at the end
        self.failed = []
        self.skipped = []  # blocks another writer put in the file while this one ran
        self.todo = []
        self.elsewhere = set()  # keys of the blocks the file held when this writer last saw it change
        self.state = _file_state(out)  # the file as this writer left it

    @property
    def kept(self):
        return len(self.written) - len(self.lost)

    def number(self, block):
        return f"{self.index.get(block.key, '?')}/{self.n_blocks}"

    def finished(self, block, line, *, running=0, going_on=False) -> bool:
        """Append a finished block's line if readers would take it (else fail the block); False if not written."""
        line = {"key": line["key"], "profile": self.profile, **line}
        problem = _line_problem(line, self.task, self.profile, self.metric, self.keys)
        if problem is not None:
            self.fail(block, f"its line would be skipped or refused by every reader ({problem}); not written",
                      running=running, going_on=going_on)
            return False
        self.notice()
        self.state = _append_line(self.out, line)
        self.written.append(block)
        self.bar.update(block.n_networks)
        return True

    def notice(self):
        """If another program changed the file since this writer last wrote it, repair its tail as at the
        start, note the blocks it holds now (they are not run again) and say so in one line."""
        now = _file_state(self.out)
        if now == self.state:
            return
        how = _change(self.state, now)
        did = _repair_tail(self.out, say=lambda _: None) or ("its last line is whole" if now else "nothing to repair")
        self.state = _file_state(self.out)
        self.elsewhere = {line["key"] for line in read_results(self.out, task=self.task, profile=self.profile,
                                                                 warn=False, invalid="skip")}
        mine = {b.key for b in self.written}
        there = [b for b in self.todo if b.key in self.elsewhere and b.key not in mine and b not in self.skipped]
        skips = "".join(f"block {self.number(b)} ({b.label}) is in it already, not run again; " for b in there)
        self.say(f"{self.out.name} changed under this sweep: it {how}; {did}; {skips}appending the next block to "
                 f"it (blocks it no longer holds are reported at the end)")

    def done_elsewhere(self, block) -> bool:
        """True (and the block counted as done) if another writer put the block in the file during this sweep."""
        self.notice()
        if block.key not in self.elsewhere:
            return False
        self.skipped.append(block)
        self.bar.update(block.n_networks)
        return True

    def check_kept(self):
        """Blocks this run wrote that the file no longer holds (another program changed it): failed."""
        if not self.written:
            return
        now = {line["key"] for line in read_results(self.out, task=self.task, profile=self.profile, warn=False,
                                                    invalid="skip")}
        for block in self.written:
            if block.key not in now:
                self.lost.append(block)
                self.failed.append((block, "lost: its line was written, then the result file changed under the "
                                           "sweep and no longer holds it"))

    def fail(self, block, error, *, running=0, going_on=False):
        """Note a failed block; say so now only while work goes on (the sweep's error names the first one)."""
        self.failed.append((block, error))
        said = f"{self.out.name}: block {self.number(block)} ({block.label}) failed: {error}"
        if going_on:
            self.say(f"{said}; going on with the other blocks (--keep-going)")
        elif running:
            self.say(f"{said}; no new block starts; waiting for the {running} running block{'s' * (running > 1)} "
                     f"to finish (Ctrl-C stops {'them' if running > 1 else 'it'})")

    def all(self, todo, spec, *, executor, workers, backend, memory_budget, keep_going):
        self.todo = list(todo)
        if executor is None and (workers == 1 or len(todo) <= 1):
            for block in todo:
                if self.done_elsewhere(block):
                    continue
                try:
                    with self.signals.interruptible():
                        line = run_block(block, backend=backend, memory_budget=memory_budget)
                except Exception as err:  # noqa: BLE001 - a task's error is reported; the sweep stops or goes on
                    self.fail(block, _one_line(err), going_on=keep_going and block is not todo[-1])
                    if not keep_going:
                        break
                    continue
                if not self.finished(block, line, going_on=keep_going and block is not todo[-1]) and not keep_going:
                    break
            self.signals.check()
            return
        own = executor is None
        if own:
            executor = ProcessPoolExecutor(max_workers=int(workers), initializer=_worker_init)
        try:
            self._map(executor, todo, spec, window=int(workers) if own else len(todo), backend=backend,
                      memory_budget=memory_budget, keep_going=keep_going, own=own)
        finally:
            if own:
                executor.shutdown(wait=True, cancel_futures=True)

    def _map(self, executor, todo, spec, *, window, backend, memory_budget, keep_going, own):
        """At most ``window`` blocks submitted at a time (a local pool: one per worker, so none waits in
        a queue and none starts after a failure); each one that finishes is appended at once."""
        from concurrent.futures import FIRST_COMPLETED, wait  # noqa: PLC0415
        from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415

        queue = list(reversed(todo))
        running = {}
        stop = False
        try:
            while True:
                while queue and not stop and len(running) < window:
                    block = queue.pop()
                    if self.done_elsewhere(block):
                        continue
                    running[executor.submit(_run_block_entry, spec.run_block, block, backend, memory_budget)] = block
                if not running:
                    break
                with self.signals.interruptible():
                    while not wait(running, timeout=_WAKE_S, return_when=FIRST_COMPLETED).done:
                        pass  # awake now and then, so that a signal another thread took is acted on
                for fut in [f for f in running if f.done()]:  # in submission order
                    block = running.pop(fut)
                    if fut.cancelled():
                        continue
                    err = fut.exception()
                    if err is None:
                        if not self.finished(block, fut.result(), running=len(running),
                                             going_on=keep_going and bool(queue or running)):
                            stop = stop or not keep_going
                    elif isinstance(err, BrokenProcessPool):  # the pool is gone, with every block it ran
                        stop = True
                        self.fail(block, "lost: a worker process died (killed, or out of memory?)")
                    else:
                        stop = stop or not keep_going
                        self.fail(block, _one_line(err), running=len(running),
                                  going_on=not stop and bool(queue or running))
                if stop:
                    for fut in running:
                        fut.cancel()  # not started yet (an executor's queue): never starts
            self.signals.check()
        except KeyboardInterrupt:
            if own:
                _kill_workers(executor)  # stop the running blocks now
            for fut, block in running.items():
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    self.finished(block, fut.result())  # finished before the signal: kept
                else:
                    fut.cancel()
            raise
        except BaseException:  # e.g. the result file cannot be written: nothing more can be kept
            if own:
                _kill_workers(executor)
            for fut in running:
                fut.cancel()
            raise


#: The longest the sweep waits for a block without waking. Linux may hand a process's SIGINT or SIGTERM
#: to any of its threads (the pool's own threads included); Python then runs the handler in the main
#: thread only when that thread next runs, and a wait that the signal did not interrupt would sleep
#: until a block finished (minutes, with real blocks).
_WAKE_S = 0.25


def _kill_workers(pool):
    """SIGKILL a ProcessPoolExecutor's worker processes (their blocks are lost, the pool breaks)."""
    if hasattr(pool, "kill_workers"):  # Python >= 3.14
        pool.kill_workers()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            proc.kill()


# ----------------------------------------------------------------------- summaries
def heatmap_table(records, variant, n, grid, metric="distance", *, dtype="float64", **match):
    """Mean ``metric`` over repeats on the grid: (1/T values, lr values, array (n_T, n_lr)) or None."""
    sel = [r for r in records if r["variant"] == variant and r["n"] == n and r["grid"] == grid
           and r["dtype"] == dtype and all(r.get(k) == v for k, v in match.items())]
    if not sel:
        return None
    its = sorted({r["inv_temperature"] for r in sel})
    lrs = sorted({r["learning_rate"] for r in sel})
    total = np.zeros((len(its), len(lrs)))
    count = np.zeros_like(total)
    for r in sel:
        i, j = its.index(r["inv_temperature"]), lrs.index(r["learning_rate"])
        v = r[metric]
        v = np.nan if v is None else float(v)
        total[i, j] += v
        count[i, j] += 1
    with np.errstate(invalid="ignore"):
        return np.array(its), np.array(lrs), total / count


def good_region(table, *, tolerance=0.5, lower_is_better=True):
    """Where the optimum sits and how large the good region is.

    Ties are common (many cells recall perfectly), so the good region's
    geometric centre in 1/T and learning rate is the robust "optimum";
    ``best_*`` is the first best cell in grid order.

    ``table`` is ``heatmap_table``'s result. A cell is *good* when its mean
    metric is within ``tolerance`` (absolute) of the best cell's. Returns a dict:
    best value, its (1/T, lr), the fraction of good cells, and the good cells'
    1/T range (geometric mean too). Where no cell is finite (every network
    failed) the values are NaN and the good fraction 0.
    """
    _check_tolerance(tolerance)
    its, lrs, z = table
    if not np.isfinite(z).any():  # every network failed (overflow): no optimum, no good region
        nan = float("nan")
        return {"best": nan, "best_inv_temperature": nan, "best_learning_rate": nan, "good_fraction": 0.0,
                "good_inv_temperature_min": nan, "good_inv_temperature_max": nan,
                "good_inv_temperature_center": nan, "good_learning_rate_center": nan}
    finite = np.where(np.isfinite(z), z, np.inf if lower_is_better else -np.inf)
    flat = int(np.argmin(finite) if lower_is_better else np.argmax(finite))
    i, j = np.unravel_index(flat, z.shape)
    best = float(z[i, j])
    good = (np.abs(finite - best) <= tolerance)
    gi = np.nonzero(good.any(axis=1))[0]
    return {
        "best": best,
        "best_inv_temperature": float(its[i]),
        "best_learning_rate": float(lrs[j]),
        "good_fraction": float(good.mean()),
        "good_inv_temperature_min": float(its[gi].min()),
        "good_inv_temperature_max": float(its[gi].max()),
        "good_inv_temperature_center": float(np.exp(np.mean(np.log(its[np.nonzero(good)[0]])))),
        "good_learning_rate_center": float(np.exp(np.mean(np.log(lrs[np.nonzero(good)[1]])))),
    }


def _check_tolerance(tolerance):
    import math  # noqa: PLC0415
    import numbers  # noqa: PLC0415

    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) or not (
            math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number >= 0 (a distance from the best cell's metric), "
                         f"got {tolerance!r}")


def summarize(records, *, tolerance=0.5, metric="distance", lower_is_better=True):
    """One row per (N, variant, dtype, grid, n): optimum and size of the good region."""
    _check_tolerance(tolerance)
    groups = sorted({(r.get("N"), r["variant"], r["dtype"], r["grid"], r["n"]) for r in records},
                    key=lambda g: (g[0] or 0, g[1], g[2], g[3], g[4]))
    rows = []
    for N, variant, dtype, grid, n in groups:
        table = heatmap_table(records, variant, n, grid, metric, dtype=dtype, N=N)
        row = {"N": N, "variant": variant, "dtype": dtype, "grid": grid, "n": n}
        row.update(good_region(table, tolerance=tolerance, lower_is_better=lower_is_better))
        rows.append(row)
    return rows
