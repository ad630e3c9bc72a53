"""The sweep engine: resumable, batched hyperparameter sweeps over any task.

A *sweep* is a list of :class:`Block` s. A block is one task x network variant x
interaction vertex n x grid (learning rate x inverse temperature) x dtype; all of
its grid cells and repeats are trained together as ONE batch of G networks.
This module knows no task: the tasks live in :mod:`damlite.tasks` (the paper's
autoassociative task, its MNIST sweep, Krotov's run) and register themselves.

Tasks
-----
A task is a function ``run_block(block, *, backend, dtype, memory_budget) ->
list[dict]`` returning one record (a flat, JSON-serialisable dict) per grid cell
x repeat, registered with :func:`register_task` together with its profiles
(functions ``profile() -> list[Block]``)::

    from damlite.experiments import Block, register_task

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
:func:`run_sweep` appends one JSON line per finished block to
``<out_dir>/<task>-<profile>.jsonl`` (one ``write``, fsync'd): the block, its
records and provenance (damlite version, resolved git commit and whether the
tree was dirty, backend, device, dtype, seed, date, wall time). Each line also names
the profile it was run for. The writer holds an exclusive lock
(``<file>.lock``) for the whole sweep: a second sweep on the same file waits
for it, says so, then skips what the first one finished. Only the writer,
under that lock, repairs a line cut short (by a kill, say); readers
(:func:`read_results`, :func:`load_records`, ``list``, ``summarize``) never
modify a file, and count a line only when it is the complete line of a block
of the file's task and profile (anything else is skipped with a warning naming
its line number). Rerunning the same command after an interruption (SIGKILL
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
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import errno
import functools
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import zlib
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

__all__ = [
    "Block",
    "TaskSpec",
    "register_task",
    "get_task",
    "TASKS",
    "profile_name",
    "profile_blocks",
    "run_block",
    "run_sweep",
    "load_records",
    "results_path",
    "summarize",
    "heatmap_table",
    "good_region",
    "provenance",
    "git_state",
    "read_results",
    "load_provenance",
    "ResultFileError",
    "SweepFailed",
    "SweepInterrupted",
    "git_problem",
    "BUILTIN_TASKS",
]

BASE_SEED = 20240712


# --------------------------------------------------------------------------- blocks
@dataclass(frozen=True)
class Block:
    """One unit of work: a whole grid x repeats for one (task, variant, n, grid, dtype).

    ``inv_temperature`` is 1/T in the variant's own convention (beta_out = 1/T**n
    for "original", beta_in = 1/(N T) for "normalized"); ``settings`` holds the
    task's fixed choices as sorted (name, value) pairs (hashable, JSON-friendly).
    """

    task: str
    variant: str
    n: int
    grid: str
    inv_temperature: tuple
    learning_rate: tuple
    repeats: int
    dtype: str = "float64"
    settings: tuple = ()
    base_seed: int = BASE_SEED

    @property
    def options(self) -> dict:
        return dict(self.settings)

    @property
    def key(self) -> str:
        """A stable identity: every field that changes the results."""
        opts = ",".join(f"{k}={v}" for k, v in self.settings)
        it = ",".join(f"{x:.6g}" for x in self.inv_temperature)
        lr = ",".join(f"{x:.6g}" for x in self.learning_rate)
        return (f"{self.task}|{self.variant}|n={self.n}|{self.grid}|{self.dtype}|r={self.repeats}|"
                f"seed={self.base_seed}|{opts}|invT={it}|lr={lr}")

    @property
    def seed(self) -> np.random.SeedSequence:
        """The block's own seed sequence, derived from the base seed and its key."""
        return np.random.SeedSequence([self.base_seed, zlib.crc32(self.key.encode())])

    @property
    def n_cells(self) -> int:
        return len(self.inv_temperature) * len(self.learning_rate)

    @property
    def n_networks(self) -> int:
        """G = grid cells x repeats."""
        return self.n_cells * self.repeats

    @property
    def label(self) -> str:
        """A short name for messages: variant, n, grid and dtype (the key is the full identity)."""
        return f"{self.variant} n={self.n} {self.grid} {self.dtype}"

    def cells(self):
        """(repeat, i_T, i_lr, 1/T, lr) for each network, repeat-major: network g."""
        for r in range(self.repeats):
            for i, it in enumerate(self.inv_temperature):
                for j, lr in enumerate(self.learning_rate):
                    yield r, i, j, float(it), float(lr)

    def identity(self) -> dict:
        """Fields copied into every record."""
        return {"task": self.task, "variant": self.variant, "n": self.n, "grid": self.grid,
                "dtype": self.dtype, **self.options}

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d["settings"] = [list(p) for p in self.settings]
        d["inv_temperature"] = list(self.inv_temperature)
        d["learning_rate"] = list(self.learning_rate)
        return d

    @classmethod
    def from_json(cls, d) -> "Block":
        d = dict(d)
        d["settings"] = tuple(tuple(p) for p in d["settings"])
        d["inv_temperature"] = tuple(d["inv_temperature"])
        d["learning_rate"] = tuple(d["learning_rate"])
        return cls(**d)


# --------------------------------------------------------------------------- registry
@dataclass
class TaskSpec:
    """A registered task: how to run one block, and its named profiles."""

    name: str
    run_block: Callable
    profiles: dict = field(default_factory=dict)
    metric: str = "distance"
    lower_is_better: bool = True


TASKS: dict[str, TaskSpec] = {}

#: The tasks that ship with damlite, imported (and so registered) on first use.
BUILTIN_TASKS = {"autoassociative": "damlite.tasks.autoassociative", "mnist": "damlite.tasks.mnist"}


def register_task(name, run_block, *, profiles=None, metric="distance", lower_is_better=True):
    """Register ``run_block(block, *, backend, dtype, memory_budget) -> list[dict]`` as task ``name``.

    ``profiles`` maps a profile name ("quick", "full", ...) to a function
    returning the list of :class:`Block` s of that profile; ``metric`` names the
    record field the summaries optimise (``lower_is_better`` says which way).
    """
    if not isinstance(name, str) or not name or any(c in name for c in "/\\|"):
        raise ValueError(f"task name must be a non-empty string without '/', '\\\\' or '|', got {name!r}")
    if not callable(run_block):
        raise ValueError(f"run_block must be callable, got {run_block!r}")
    TASKS[name] = TaskSpec(name, run_block, dict(profiles or {}), metric, lower_is_better)
    return TASKS[name]


def get_task(name) -> TaskSpec:
    """The registered task ``name`` (a built-in task is imported on first use)."""
    if name not in TASKS and name in BUILTIN_TASKS:
        import importlib  # noqa: PLC0415

        importlib.import_module(BUILTIN_TASKS[name])
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; registered: {sorted({*TASKS, *BUILTIN_TASKS})}")
    return TASKS[name]


def profile_name(profile=None) -> str:
    """The profile to run: ``profile``, else $DAMLITE_PROFILE, else "full" on a GPU, "quick" on a CPU."""
    if profile:
        return profile
    env = os.environ.get("DAMLITE_PROFILE", "").strip().lower()
    if env:
        return env
    from .backend import backend_info  # noqa: PLC0415

    return "full" if backend_info().name == "cupy" else "quick"


def profile_blocks(task, profile=None) -> list[Block]:
    spec = get_task(task)
    name = profile_name(profile)
    if name not in spec.profiles:
        raise ValueError(f"task {task!r} has no profile {name!r}; it has {sorted(spec.profiles)}")
    return list(spec.profiles[name]())


# --------------------------------------------------------------------- provenance
def _git(*args):
    """``git args`` in damlite's checkout: (stdout, None) on success, else (None, why it failed in a few words).

    Read-only: ``status`` runs with ``--no-optional-locks``, so a sweep never takes (or, killed, leaves)
    the checkout's index lock."""
    root = Path(__file__).resolve().parents[1]
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=5)
    except FileNotFoundError:
        return None, "no git on PATH"
    except (OSError, subprocess.SubprocessError) as err:
        return None, f"git could not run ({err})"
    if out.returncode == 0:
        return out.stdout.strip(), None
    why = next((line.strip() for line in out.stderr.splitlines() if line.strip()), f"exit status {out.returncode}")
    return None, f"git said: {why.removeprefix('fatal: ')}"


@functools.lru_cache(maxsize=1)
def _git_info() -> tuple:
    commit, why = _git("rev-parse", "--verify", "HEAD")
    top, _ = _git("rev-parse", "--show-toplevel") if commit else (None, None)
    root = Path(__file__).resolve().parents[1]
    if commit and top and Path(top).resolve() == root:
        dirty, _ = _git("--no-optional-locks", "status", "--porcelain", "--untracked-files=no", "damlite")
        return commit, (None if dirty is None else bool(dirty)), None
    if commit:  # some other repository around an installed copy: not damlite's commit
        why = f"{root} is not the top of a git checkout"
    env = os.environ.get("DAMLITE_GIT_COMMIT", "").strip()
    return (env or None), None, (None if env else why)


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
    from . import __version__  # noqa: PLC0415
    from .backend import backend_info  # noqa: PLC0415

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
    """Which CPU kernels ran: "numba" (damlite.cpu_kernels) or "numpy"; None off the CPU."""
    if backend_name != "numpy":
        return None
    from . import cpu_kernels  # noqa: PLC0415

    return f"numba {cpu_kernels.numba.__version__}" if cpu_kernels.available() else "numpy"


def _gpu_kernels(backend_name):
    """Which GPU learning rule ran (:func:`damlite.gpu_kernels.status`); None off the GPU."""
    if backend_name != "cupy":
        return None
    from . import gpu_kernels  # noqa: PLC0415

    return gpu_kernels.status()


# -------------------------------------------------------------------------- runner
def run_block(block: Block, *, backend="auto", memory_budget=None) -> dict:
    """Run one block with its task's function; return the line written to the result file."""
    from .backend import get_backend  # noqa: PLC0415

    spec = get_task(block.task)
    _, info = get_backend(backend)
    budget = check_memory_budget(memory_budget, info.name)
    start = time.perf_counter()
    records = spec.run_block(block, backend=backend, dtype=block.dtype, memory_budget=budget)
    seconds = time.perf_counter() - start
    ident = block.identity()
    records = [{**ident, **rec} for rec in records]
    prov = provenance(backend)
    prov.update(seconds=round(seconds, 3), memory_budget=budget, seed=[block.base_seed, zlib.crc32(block.key.encode())])
    return {"key": block.key, "block": block.to_json(), "provenance": prov, "records": records}


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
    hint = " (out of memory: lower --memory-budget or run fewer --workers)" if isinstance(err, MemoryError) else ""
    return f"{type(err).__name__}: {text}{hint}"


# --------------------------------------------------------------------- result files
def results_path(out_dir, task, profile) -> Path:
    return Path(out_dir) / f"{task}-{profile}.jsonl"


class ResultFileError(RuntimeError):
    """A result file or its directory cannot be used; the message says what to do."""


def _check_path(path: Path, what="result file") -> bool:
    """True if ``path`` is a regular file, False if absent; ResultFileError for anything else."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise ResultFileError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist; "
                                  f"create its target or remove the link") from None
        return False
    except OSError as err:
        raise ResultFileError(f"cannot read {path}: {err.strerror}") from None
    if stat.S_ISDIR(mode):
        raise ResultFileError(f"{path} is a directory; pass a result file (.jsonl) or use --out for the directory")
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise ResultFileError(f"{path} is {kind}, not a regular file; move it away or choose another --out "
                              f"for the {what}")
    return True


def _file_identity(path: Path):
    """(task, profile) from a result file's name ``<task>-<profile>.jsonl``, else (None, None)."""
    stem = path.name.removesuffix(".jsonl")
    for task in sorted({*TASKS, *BUILTIN_TASKS}, key=len, reverse=True):
        if stem.startswith(task + "-") and len(stem) > len(task) + 1:
            return task, stem[len(task) + 1:]
    return None, None


def _expected(task, profile):
    """(metric name or None, set of the profile's block keys or None) for lines of ``task``'s ``profile``."""
    try:
        spec = get_task(task)
    except ValueError:
        return None, None
    keys = {b.key for b in profile_blocks(task, profile)} if profile in spec.profiles else None
    return spec.metric, keys


def _line_problem(obj, task=None, profile=None, metric=None, keys=None):
    """Why ``obj`` is not a complete result line of ``task``'s ``profile`` (None if it is)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("key"), str):
        return "not a result line (bad JSON, or no 'key')"
    try:
        block = Block.from_json(obj["block"])
        key = block.key
    except (KeyError, TypeError, ValueError, AttributeError):
        return "its 'block' is missing or malformed"
    if key != obj["key"]:
        return "its 'key' is not its block's key"
    if task is not None and block.task != task:
        return f"a block of task {block.task!r}, not {task!r}"
    if profile is not None and obj.get("profile", profile) != profile:
        return f"a line of profile {obj['profile']!r}, not {profile!r}"
    if keys is not None and key not in keys:
        return f"not a block of {block.task}'s profile {profile!r}"
    if not isinstance(obj.get("provenance"), dict):
        return "no provenance"
    records = obj.get("records")
    if not isinstance(records, list) or len(records) != block.n_networks:
        got = len(records) if isinstance(records, list) else "no"
        return f"{got} records where its block has {block.n_networks} networks"
    ident = block.identity()
    for g, (rec, (r, _, _, it, lr)) in enumerate(zip(records, block.cells())):
        if not isinstance(rec, dict) or any(rec.get(k) != v for k, v in ident.items()):
            return f"record {g} does not carry its block's identity"
        if (rec.get("repeat"), rec.get("inv_temperature"), rec.get("learning_rate")) != (r, it, lr):
            return f"record {g} is not network {g} of its block (repeat, 1/T, learning rate)"
        if metric is not None and not (rec.get(metric, "") is None or isinstance(rec.get(metric), (int, float))):
            return f"record {g} has no {metric!r} (a number, or null)"
    return None


def read_results(path, *, warn=True, task=None, profile=None) -> list[dict]:
    """The complete, valid blocks of a result file, read without modifying it.

    A line counts only when it is a JSON object whose ``key`` is its
    ``block``'s key, of the file's task (``task``, else the task in the file's
    name ``<task>-<profile>.jsonl``, else the first valid line's) and profile
    (one of the profile's blocks, when the profile is registered), with
    provenance and one record per network of the block in the block's order,
    each carrying the block's identity, its cell and the task's metric. Any
    other line is skipped with a warning naming its line number, and its block
    is not counted as done. A last line without its newline is kept when it is
    such a line (a file whose final newline was lost) and otherwise ignored
    silently (a write in progress, or one cut short: the next sweep's writer
    repairs it).
    """
    import warnings  # noqa: PLC0415

    path = Path(path)
    if not _check_path(path):
        return []
    if task is None:
        task, profile = _file_identity(path)
    metric, keys = _expected(task, profile) if task is not None else (None, None)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ResultFileError(f"cannot read {path}: {err.strerror}") from None
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    out = []
    for number, line in enumerate([*lines, tail], start=1):
        if not line.strip():
            continue
        obj = _parse_line(line)
        if task is None and _line_problem(obj) is None:  # a file named otherwise: its first line's task
            task = obj["block"]["task"]
            metric, keys = _expected(task, None)
        problem = _line_problem(obj, task, profile, metric, keys)
        if problem is None:
            out.append(obj)
        elif warn and number <= len(lines):
            warnings.warn(f"{path}:{number}: {problem}; skipped, not counted as a finished block", stacklevel=2)
    return out


def _parse_line(line: bytes):
    try:
        return json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def check_out_dir(out_dir) -> Path:
    """Create ``out_dir`` if needed and check that result files can be written there (before any work)."""
    out = Path(out_dir)
    if out.is_symlink() and not out.exists():
        raise ResultFileError(f"--out {out} is a symbolic link to {os.readlink(out)}, which does not exist; "
                              f"create that directory or remove the link")
    if out.exists() and not out.is_dir():
        raise ResultFileError(f"--out {out} is a file; give a directory for the result files")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ResultFileError(f"cannot create the result directory {out}: {err.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ResultFileError(f"the result directory {out} is not writable; choose another --out")
    return out


class _WriterLock:
    """An exclusive ``flock`` on ``<file>.lock`` for one sweep; waits (and says so) when taken."""

    def __init__(self, path: Path, say=print):
        self.path = Path(str(path) + ".lock")
        self.say = say
        self.fh = None

    def __enter__(self):
        import fcntl  # noqa: PLC0415

        _check_path(self.path, "lock file")
        try:
            self.fh = open(self.path, "a+")
        except OSError as err:
            raise ResultFileError(f"cannot open the lock file {self.path}: {err.strerror}; "
                                  f"free some space or choose another --out") from None
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.seek(0)
            holder = self.fh.read().strip() or "another process"
            self.say(f"{self.path.name[:-5]}: another sweep ({holder}) is writing it; waiting for it to finish")
            fcntl.flock(self.fh, fcntl.LOCK_EX)
        try:  # who holds it, for the message above: a note only (a full disk may refuse it)
            self.fh.seek(0)
            self.fh.truncate()
            self.fh.write(f"pid {os.getpid()}")
            self.fh.flush()
        except OSError:
            pass
        return self

    def __exit__(self, *exc):
        import fcntl  # noqa: PLC0415

        fcntl.flock(self.fh, fcntl.LOCK_UN)
        try:
            self.fh.close()
        except OSError:  # the pid note could not be flushed (a full disk): nothing is lost
            pass


def _repair_tail(path: Path, say=print):
    """Writer only, under the lock: end the file on a newline before appending.

    A last line without its newline that is a complete line gets its newline;
    the start of a record (a write cut short) is removed; anything else is kept
    and ended with a newline (readers then skip it with a warning).
    """
    if not path.exists():
        return
    with open(path, "r+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return
        fh.seek(max(0, size - 1))
        if fh.read(1) == b"\n":
            return
        data = path.read_bytes()
        start = data.rfind(b"\n") + 1
        tail = data[start:]
        number = data.count(b"\n") + 1
        if _parse_line(tail) is not None or not tail.startswith(b'{"key":'):
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n")
            if _parse_line(tail) is None:
                say(f"{path.name}: line {number} has no newline and is not a result line; kept, "
                    f"ended with a newline (readers skip it)")
        else:
            fh.truncate(start)
            say(f"{path.name}: removed an unfinished last line ({len(tail)} bytes, no newline: a write that was "
                f"cut short); it held part of a block's line, and that block is not done")
        fh.flush()
        os.fsync(fh.fileno())


def _write_error(path, err) -> str:
    what = {errno.ENOSPC: "the disk is full: free some space", errno.EFBIG:
            "the file size limit is reached (ulimit -f): raise it", getattr(errno, "EDQUOT", -1):
            "the disk quota is exceeded: free some space", errno.EROFS:
            "the file system is read-only: choose another --out", errno.EACCES:
            "permission denied: make it writable or choose another --out"}.get(err.errno, "fix that")
    return (f"cannot write to {path}: {err.strerror}; {what}, then rerun the same command to resume "
            f"(the blocks already in the file are kept)")


def _append_line(path: Path, obj: dict):
    """Append one line in one piece: fsync'd, or (a full disk) taken back so the file ends on a newline."""
    data = (json.dumps(obj, separators=(",", ":"), allow_nan=True) + "\n").encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as err:
        raise ResultFileError(_write_error(path, err)) from None
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as err:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise ResultFileError(_write_error(path, err)) from None
    finally:
        os.close(fd)


def run_sweep(task="autoassociative", profile=None, *, blocks=None, out_dir="results", executor: Executor | None = None,
              workers=1, backend="auto", memory_budget=None, progress=True, max_blocks=None, keep_going=False,
              say=print) -> Path:
    """Run every block of ``task``'s ``profile`` (or the given ``blocks``) not yet in the result file.

    Blocks already on disk are skipped (resume). With ``executor`` (any
    :class:`concurrent.futures.Executor`, e.g. ``dask.distributed.Client(...).get_executor()``)
    blocks run there; otherwise ``workers > 1`` starts a local process pool and
    ``workers == 1`` runs them here. ``max_blocks`` stops after that many new
    blocks (for tests and time-boxed runs). The result file is locked for the
    whole sweep (see the module doc). Returns the result file's path.

    Every block that finishes is written, whatever happens to the others. A
    block that raises is reported (``say``) in one line; after a failure no new
    block starts (the running ones finish and are written) unless
    ``keep_going``; then :class:`SweepFailed` is raised. Ctrl-C or SIGTERM
    writes the blocks already finished, cancels the rest, stops the local
    workers and raises :class:`SweepInterrupted` (a KeyboardInterrupt).
    """
    import numbers  # noqa: PLC0415
    import warnings  # noqa: PLC0415

    from tqdm.auto import tqdm  # noqa: PLC0415

    name = profile_name(profile)
    spec = get_task(task)
    if blocks is None:
        blocks = profile_blocks(task, name)
    for arg, value, least in (("workers", workers, 1), ("max_blocks", max_blocks, 0)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least):
            raise ValueError(f"{arg} must be an integer >= {least}, got {value!r}")
    from .backend import get_backend  # noqa: PLC0415

    check_memory_budget(memory_budget, get_backend(backend)[1].name)
    git_state()  # resolved now, before any worker starts: the commit of the code this sweep loaded
    if git_problem():
        warnings.warn(f"no git commit will be recorded in the provenance ({git_problem()}); "
                      f"set DAMLITE_GIT_COMMIT to the commit of this code to record one", stacklevel=2)
    out = results_path(check_out_dir(out_dir), task, name)
    if _check_path(out) and not os.access(out, os.W_OK):
        raise ResultFileError(f"{out} is read-only; make it writable or choose another --out")
    with _WriterLock(out, say=say), _StopSignals() as signals:
        _repair_tail(out, say=say)
        done = {line["key"] for line in read_results(out, task=task, profile=name)}
        todo = [b for b in blocks if b.key not in done]
        if max_blocks is not None:
            todo = todo[: int(max_blocks)]
        total = sum(b.n_networks for b in blocks)
        text_bar = tqdm.__module__ != "tqdm.notebook"  # a notebook's bar is a widget
        bar = tqdm(total=total, initial=total - sum(b.n_networks for b in blocks if b.key not in done),
                   unit="cell", desc=f"{task}-{name}", disable=not progress or (text_bar and sys.stderr is None),
                   smoothing=0.0, **({"file": _SafeStream(sys.stderr)} if text_bar else {}))
        run = _Run(out, name, blocks, say, bar, signals)
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
    if run.failed:
        (first, error), more = run.failed[0], len(run.failed) - 1
        left = len(todo) - run.kept - len(run.failed)
        raise SweepFailed(
            f"block {run.number(first)} ({first.label}) failed: {error}" + (f"; {more} more failed" if more else "")
            + f"; {run.kept} finished block{'s' * (run.kept != 1)} written to {out}"
            + (f"; {left} not started (--keep-going runs them past a failure)" if left > 0 else "")
            + "; rerun the same command to retry", path=out, kept=run.kept, failed=run.failed)
    return out


class _Run:
    """One sweep's loop: runs blocks (here, in a local pool or on an executor), appends each one that finishes."""

    def __init__(self, out, profile, blocks, say, bar, signals):
        self.out, self.profile, self.say, self.bar, self.signals = out, profile, say, bar, signals
        self.index = {b.key: i for i, b in enumerate(blocks, start=1)}
        self.n_blocks = len(blocks)
        self.kept = 0
        self.failed = []

    def number(self, block):
        return f"{self.index.get(block.key, '?')}/{self.n_blocks}"

    def finished(self, block, line):
        _append_line(self.out, {"key": line["key"], "profile": self.profile, **line})
        self.kept += 1
        self.bar.update(block.n_networks)

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
        if executor is None and (workers == 1 or len(todo) <= 1):
            for block in todo:
                try:
                    with self.signals.interruptible():
                        line = run_block(block, backend=backend, memory_budget=memory_budget)
                except Exception as err:  # noqa: BLE001 - a task's error is reported; the sweep stops or goes on
                    self.fail(block, _one_line(err), going_on=keep_going and block is not todo[-1])
                    if not keep_going:
                        break
                    continue
                self.finished(block, line)
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
                    running[executor.submit(_run_block_entry, spec.run_block, block, backend, memory_budget)] = block
                if not running:
                    break
                with self.signals.interruptible():
                    wait(running, return_when=FIRST_COMPLETED)
                for fut in [f for f in running if f.done()]:  # in submission order
                    block = running.pop(fut)
                    if fut.cancelled():
                        continue
                    err = fut.exception()
                    if err is None:
                        self.finished(block, fut.result())
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


def _kill_workers(pool):
    """SIGKILL a ProcessPoolExecutor's worker processes (their blocks are lost, the pool breaks)."""
    if hasattr(pool, "kill_workers"):  # Python >= 3.14
        pool.kill_workers()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            proc.kill()


def load_records(path_or_dir, task=None, profile=None, *, blocks=None) -> list[dict]:
    """All records of a result file (or ``<dir>/<task>-<profile>.jsonl``), in a stable order.

    With ``blocks``, only the records of those blocks (by key), in their order.
    Each record gains the block's ``seconds`` and ``key``. Reading never
    modifies the file; invalid lines are skipped with a warning (:func:`read_results`).
    """
    path = Path(path_or_dir)
    if path.is_dir() or task is not None:
        path = results_path(path, task, profile)
    lines = {}
    for line in read_results(path, task=task, profile=profile):
        lines.setdefault(line["key"], line)  # the first complete copy of a block wins
    keys = [b.key for b in blocks] if blocks is not None else sorted(lines)
    out = []
    for k in keys:
        if k in lines:
            seconds = lines[k]["provenance"].get("seconds")
            for rec in lines[k]["records"]:
                out.append({**rec, "key": k, "seconds": seconds})
    return out


def load_provenance(path) -> list[dict]:
    return [dict(line["provenance"], key=line["key"]) for line in read_results(Path(path))]


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


def summarize(records, *, tolerance=0.5, metric="distance", lower_is_better=True):
    """One row per (N, variant, dtype, grid, n): optimum and size of the good region."""
    groups = sorted({(r.get("N"), r["variant"], r["dtype"], r["grid"], r["n"]) for r in records},
                    key=lambda g: (g[0] or 0, g[1], g[2], g[3], g[4]))
    rows = []
    for N, variant, dtype, grid, n in groups:
        table = heatmap_table(records, variant, n, grid, metric, dtype=dtype, N=N)
        row = {"N": N, "variant": variant, "dtype": dtype, "grid": grid, "n": n}
        row.update(good_region(table, tolerance=tolerance, lower_is_better=lower_is_better))
        rows.append(row)
    return rows
