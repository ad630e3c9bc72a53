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
tree was dirty, backend, device, dtype, seed, date, wall time). The writer holds
an exclusive lock (``<file>.lock``) for the whole sweep: a second sweep on the
same file waits for it, says so, then skips what the first one finished. Only
the writer, under that lock, repairs a line cut short by a kill; readers
(:func:`read_results`, :func:`load_records`, ``list``, ``summarize``) never
modify a file. Rerunning the same command after an interruption (SIGKILL
included) ends with the same records as an uninterrupted run. Blocks are mapped
over any :class:`concurrent.futures.Executor` (a local process pool for
``workers > 1``, or ``dask.distributed``'s ``client.get_executor()``).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import json
import os
import subprocess
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
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=5)
    return out.stdout.strip() if out.returncode == 0 else None


@functools.lru_cache(maxsize=1)
def git_state() -> tuple:
    """(resolved commit hash or None, whether damlite's tracked files differ from it or None).

    Resolved once per process (the code a process runs is the code it imported;
    worker processes inherit the answer). Where the code is not a git checkout
    (a copied tree on a GPU machine), the commit comes from $DAMLITE_GIT_COMMIT
    when set, with ``dirty`` unknown (None).
    """
    try:
        commit = _git("rev-parse", "--verify", "HEAD")
        top = _git("rev-parse", "--show-toplevel")
        root = Path(__file__).resolve().parents[1]
        if commit and top and Path(top).resolve() == root:  # not some other repository around an installed copy
            dirty = _git("status", "--porcelain", "--untracked-files=no", "damlite")
            return commit, (None if dirty is None else bool(dirty))
    except (OSError, subprocess.SubprocessError):
        pass
    env = os.environ.get("DAMLITE_GIT_COMMIT", "").strip()
    return (env or None), None


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


def _kill_children_with_parent():  # pragma: no cover - runs in pool workers
    """Pool initialiser: on Linux, a worker gets SIGTERM when the sweep that started it dies."""
    try:
        import ctypes  # noqa: PLC0415
        import signal  # noqa: PLC0415

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# --------------------------------------------------------------------- result files
def results_path(out_dir, task, profile) -> Path:
    return Path(out_dir) / f"{task}-{profile}.jsonl"


class ResultFileError(RuntimeError):
    """A result file or its directory cannot be used; the message says what to do."""


def read_results(path, *, warn=True) -> list[dict]:
    """The complete blocks of a result file, read without modifying it.

    A last line without its newline is kept when it parses as a complete
    record (a file whose final newline was lost) and otherwise ignored (a write
    in progress, or one cut short by a kill: the next sweep repairs it). A line
    that is not a JSON object with a ``key`` is skipped with a warning naming its
    line number.
    """
    import warnings  # noqa: PLC0415

    path = Path(path)
    if not path.exists():
        return []
    if path.is_dir():
        raise ResultFileError(f"{path} is a directory; pass a result file (.jsonl) or use --out for the directory")
    data = path.read_bytes()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        obj = _parse_line(line)
        if obj is None:
            if warn:
                warnings.warn(f"{path}:{number}: not a result line (bad JSON or no 'key'); skipped", stacklevel=2)
            continue
        out.append(obj)
    if tail.strip():
        obj = _parse_line(tail)
        if obj is not None:
            out.append(obj)
    return out


def _parse_line(line: bytes):
    try:
        obj = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) and isinstance(obj.get("key"), str) else None


def check_out_dir(out_dir) -> Path:
    """Create ``out_dir`` if needed and check that result files can be written there (before any work)."""
    out = Path(out_dir)
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

        self.fh = open(self.path, "a+")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.seek(0)
            holder = self.fh.read().strip() or "another process"
            self.say(f"{self.path.name[:-5]}: another sweep ({holder}) is writing it; waiting for it to finish")
            fcntl.flock(self.fh, fcntl.LOCK_EX)
        self.fh.seek(0)
        self.fh.truncate()
        self.fh.write(f"pid {os.getpid()}")
        self.fh.flush()
        return self

    def __exit__(self, *exc):
        import fcntl  # noqa: PLC0415

        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


def _repair_tail(path: Path, say=print):
    """Writer only, under the lock: end the file on a newline (complete last record) or cut a torn line."""
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
        if _parse_line(data[start:]) is not None:
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n")
        else:
            fh.truncate(start)
            say(f"{path.name}: dropped a line cut short by an earlier kill ({size - start} bytes); "
                f"its block runs again")
        fh.flush()
        os.fsync(fh.fileno())


def _append_line(path: Path, obj: dict):
    line = (json.dumps(obj, separators=(",", ":"), allow_nan=True) + "\n").encode()
    with open(path, "ab") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def run_sweep(task="autoassociative", profile=None, *, blocks=None, out_dir="results", executor: Executor | None = None,
              workers=1, backend="auto", memory_budget=None, progress=True, max_blocks=None, say=print) -> Path:
    """Run every block of ``task``'s ``profile`` (or the given ``blocks``) not yet in the result file.

    Blocks already on disk are skipped (resume). With ``executor`` (any
    :class:`concurrent.futures.Executor`, e.g. ``dask.distributed.Client(...).get_executor()``)
    blocks run there; otherwise ``workers > 1`` starts a local process pool and
    ``workers == 1`` runs them here. ``max_blocks`` stops after that many new
    blocks (for tests and time-boxed runs). The result file is locked for the
    whole sweep (see the module doc). Returns the result file's path.
    """
    import numbers  # noqa: PLC0415

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
    out = results_path(check_out_dir(out_dir), task, name)
    if out.exists() and not os.access(out, os.W_OK):
        raise ResultFileError(f"{out} is read-only; make it writable or choose another --out")
    with _WriterLock(out, say=say):
        _repair_tail(out, say=say)
        done = {line["key"] for line in read_results(out)}
        todo = [b for b in blocks if b.key not in done]
        if max_blocks is not None:
            todo = todo[: int(max_blocks)]
        total = sum(b.n_networks for b in blocks)
        bar = tqdm(total=total, initial=total - sum(b.n_networks for b in blocks if b.key not in done),
                   unit="cell", desc=f"{task}-{name}", disable=not progress, smoothing=0.0)
        own_pool = None
        try:
            if executor is None and workers > 1 and len(todo) > 1:
                own_pool = executor = ProcessPoolExecutor(max_workers=int(workers),
                                                          initializer=_kill_children_with_parent)
            if executor is None:
                for block in todo:
                    line = run_block(block, backend=backend, memory_budget=memory_budget)
                    _append_line(out, line)
                    bar.update(block.n_networks)
            else:
                futures = {executor.submit(_run_block_entry, spec.run_block, b, backend, memory_budget): b
                           for b in todo}
                for fut in as_completed(futures):
                    line = fut.result()
                    _append_line(out, line)
                    bar.update(futures[fut].n_networks)
        finally:
            bar.close()
            if own_pool is not None:
                own_pool.shutdown(cancel_futures=True)
    return out


def load_records(path_or_dir, task=None, profile=None, *, blocks=None) -> list[dict]:
    """All records of a result file (or ``<dir>/<task>-<profile>.jsonl``), in a stable order.

    With ``blocks``, only the records of those blocks (by key), in their order.
    Each record gains the block's ``seconds`` and ``key``. Reading never
    modifies the file.
    """
    path = Path(path_or_dir)
    if path.is_dir() or task is not None:
        path = results_path(path, task, profile)
    lines = {}
    for line in read_results(path):
        lines.setdefault(line["key"], line)  # the first complete copy of a block wins
    keys = [b.key for b in blocks] if blocks is not None else sorted(lines)
    out = []
    for k in keys:
        if k in lines:
            for rec in lines[k]["records"]:
                out.append({**rec, "key": k, "seconds": lines[k]["provenance"]["seconds"]})
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
    1/T range (geometric mean too).
    """
    its, lrs, z = table
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
