"""Hyperparameter sweeps as batched networks, resumable and distributable.

A *sweep* is a list of :class:`Block` s. A block is one task x network variant x
interaction vertex n x grid (learning rate x inverse temperature) x dtype; all of
its grid cells and repeats are trained together as ONE batch of G networks
(:func:`damlite.training.train_memories` and :func:`damlite.network.relax`
take per-network learning rates and betas).

Tasks
-----
A task is a function ``run_block(block, *, backend, dtype, memory_budget) ->
list[dict]`` returning one record (a flat, JSON-serialisable dict) per grid cell
x repeat, registered with :func:`register_task` together with its profiles
(functions ``profile() -> list[Block]``). ``"autoassociative"`` (the paper's
random bipolar patterns) is registered here; other modules register theirs, e.g.::

    from damlite.experiments import Block, register_task

    def run_mnist_block(block, *, backend, dtype, memory_budget):
        ...                                   # train block.n_networks networks at once
        return [{"repeat": r, "inv_temperature": t, "learning_rate": lr, "f1": f1}, ...]

    register_task("mnist", run_mnist_block, profiles={"quick": quick_blocks, "full": full_blocks})

Every record the runner writes carries the block's identity (task, variant, n,
grid, dtype, settings) next to the task's own fields. ``run_block`` must be a
module-level function (it is pickled to worker processes) and deterministic
given ``block.seed``.

Result files
------------
:func:`run_sweep` appends one JSON line per finished block to
``<out_dir>/<task>-<profile>.jsonl`` (written in one ``write`` and fsync'd): the
block, its records and provenance (damlite version, git commit, backend, device,
dtype, seed, date, wall time). A line cut short by a kill is dropped on the next
start, and blocks already on disk are skipped, so rerunning the same command
after an interruption (SIGKILL included) ends with the same records as an
uninterrupted run. Blocks are mapped over any :class:`concurrent.futures.Executor`
(a local process pool for ``workers > 1``, or ``dask.distributed``'s
``client.get_executor()``); only the calling process writes the file.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
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
    "AUTOASSOCIATIVE",
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


def register_task(name, run_block, *, profiles=None, metric="distance", lower_is_better=True):
    """Register ``run_block(block, *, backend, dtype, memory_budget) -> list[dict]`` as task ``name``.

    ``profiles`` maps a profile name ("quick", "full", ...) to a function
    returning the list of :class:`Block` s of that profile; ``metric`` names the
    record field the summaries optimise (``lower_is_better`` says which way).
    """
    if not callable(run_block):
        raise ValueError(f"run_block must be callable, got {run_block!r}")
    TASKS[name] = TaskSpec(name, run_block, dict(profiles or {}), metric, lower_is_better)
    return TASKS[name]


def get_task(name) -> TaskSpec:
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; registered: {sorted(TASKS)}")
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
def _git_commit():
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "damlite"], cwd=root,
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except Exception:
        return None
    return (commit + ("+dirty" if dirty else "")) if commit else None


def provenance(backend="auto") -> dict:
    """Where and with what a result was computed."""
    from . import __version__  # noqa: PLC0415
    from .backend import backend_info  # noqa: PLC0415

    info = backend_info(backend)
    return {
        "damlite": __version__,
        "git_commit": _git_commit(),
        "backend": info.name,
        "device": info.device,
        "numpy": np.__version__,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


# -------------------------------------------------------------------------- runner
def run_block(block: Block, *, backend="auto", memory_budget=None) -> dict:
    """Run one block with its task's function; return the line written to the result file."""
    from .backend import get_backend  # noqa: PLC0415
    from .network import DEFAULT_MEMORY_BUDGET  # noqa: PLC0415

    spec = get_task(block.task)
    xp, info = get_backend(backend)
    budget = int(memory_budget or _default_budget(info.name))
    start = time.perf_counter()
    records = spec.run_block(block, backend=backend, dtype=block.dtype, memory_budget=budget or DEFAULT_MEMORY_BUDGET)
    seconds = time.perf_counter() - start
    ident = block.identity()
    records = [{**ident, **rec} for rec in records]
    prov = provenance(backend)
    prov.update(seconds=round(seconds, 3), memory_budget=budget, seed=[block.base_seed, zlib.crc32(block.key.encode())])
    return {"key": block.key, "block": block.to_json(), "provenance": prov, "records": records}


def _default_budget(backend_name):
    return 2 * 2**30 if backend_name == "cupy" else 256 * 2**20


def _run_block_entry(task_spec_fn, block, backend, memory_budget):
    """Worker entry point (module level, picklable). Registers the task if the worker lacks it."""
    if block.task not in TASKS:
        register_task(block.task, task_spec_fn)
    return run_block(block, backend=backend, memory_budget=memory_budget)


def results_path(out_dir, task, profile) -> Path:
    return Path(out_dir) / f"{task}-{profile}.jsonl"


def _read_lines(path: Path) -> list[dict]:
    """Complete JSON lines of a result file; a partial last line (a killed write) is dropped."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):  # cut short: drop the tail so the next append starts on a fresh line
        with open(path, "r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())
        data = data[:end]
    out = []
    for line in data.splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def _append_line(path: Path, obj: dict):
    line = (json.dumps(obj, separators=(",", ":"), allow_nan=True) + "\n").encode()
    with open(path, "ab") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def run_sweep(task="autoassociative", profile=None, *, blocks=None, out_dir="results", executor: Executor | None = None,
              workers=1, backend="auto", memory_budget=None, progress=True, max_blocks=None) -> Path:
    """Run every block of ``task``'s ``profile`` (or the given ``blocks``) not yet in the result file.

    Blocks already on disk are skipped (resume). With ``executor`` (any
    :class:`concurrent.futures.Executor`, e.g. ``dask.distributed.Client(...).get_executor()``)
    blocks run there; otherwise ``workers > 1`` starts a local process pool and
    ``workers == 1`` runs them here. ``max_blocks`` stops after that many new
    blocks (for tests and time-boxed runs). Returns the result file's path.
    """
    from tqdm.auto import tqdm  # noqa: PLC0415

    name = profile_name(profile)
    spec = get_task(task)
    if blocks is None:
        blocks = profile_blocks(task, name)
    out = results_path(out_dir, task, name)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {line["key"] for line in _read_lines(out)}
    todo = [b for b in blocks if b.key not in done]
    if max_blocks is not None:
        todo = todo[: int(max_blocks)]
    total = sum(b.n_networks for b in blocks)
    bar = tqdm(total=total, initial=total - sum(b.n_networks for b in blocks if b.key not in done),
               unit="cell", desc=f"{task}-{name}", disable=not progress, smoothing=0.0)
    own_pool = None
    try:
        if executor is None and workers > 1 and len(todo) > 1:
            own_pool = executor = ProcessPoolExecutor(max_workers=int(workers))
        if executor is None:
            for block in todo:
                line = run_block(block, backend=backend, memory_budget=memory_budget)
                _append_line(out, line)
                bar.update(block.n_networks)
        else:
            futures = {executor.submit(_run_block_entry, spec.run_block, b, backend, memory_budget): b for b in todo}
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
    Each record gains the block's ``seconds`` and ``key``.
    """
    path = Path(path_or_dir)
    if path.is_dir() or task is not None:
        path = results_path(path, task, profile)
    lines = {}
    for line in _read_lines(path) if path.exists() else []:
        lines.setdefault(line["key"], line)  # the first complete copy of a block wins
    keys = [b.key for b in blocks] if blocks is not None else sorted(lines)
    out = []
    for k in keys:
        if k in lines:
            for rec in lines[k]["records"]:
                out.append({**rec, "key": k, "seconds": lines[k]["provenance"]["seconds"]})
    return out


def load_provenance(path) -> list[dict]:
    return [dict(line["provenance"], key=line["key"]) for line in _read_lines(Path(path))]


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


# ====================================================================== the task
#: The autoassociative task's fixed choices (the paper leaves them open; see chapter 6).
AUTOASSOCIATIVE = {
    "interaction": "polynomial",  # homogeneous; no dead memories (rectified: see chapter 6)
    "memories": 100,  # K, as in the paper author's own autoassociative example
    "epochs": 200,
    "lr_decay": 0.999,
    "momentum": 0.0,
    "error_exponent": 1,
    "init_std": 0.1,  # memories ~ N(0, 0.1**2), clipped to [-1, 1]
    "max_sweeps": 20,  # asynchronous relaxation limit
}

#: Grids in the normalized network's 1/T; the original's 1/T is this divided by N (same networks, see chapter 6).
GRIDS = {
    "coarse": (tuple(np.round(np.logspace(-1, 2, 10), 6)), tuple(np.round(np.logspace(-3, 0, 10), 6))),
    "fine": (tuple(np.round(np.logspace(np.log10(0.5), np.log10(30), 12), 6)),
             tuple(np.round(np.logspace(-2, 0, 8), 6))),
}


def autoassociative_block(variant, n, grid="coarse", *, N=100, patterns=20, repeats=5, dtype="float64",
                          grids=GRIDS, **overrides) -> Block:
    """A block of the autoassociative task; the original's 1/T grid is the normalized one / N."""
    inv_t, lrs = grids[grid] if isinstance(grid, str) else grid
    name = grid if isinstance(grid, str) else "custom"
    if variant == "original":
        inv_t = tuple(float(f"{x / N:.6g}") for x in inv_t)
    settings = dict(AUTOASSOCIATIVE, N=N, patterns=patterns, **overrides)
    return Block("autoassociative", variant, int(n), name, tuple(float(x) for x in inv_t),
                 tuple(float(x) for x in lrs), int(repeats), dtype, tuple(sorted(settings.items())))


def _task_streams(block: Block, repeat: int):
    """Patterns, initial memories and relaxation seed of one repeat: shared by all blocks of the
    same (N, patterns, K, base seed), so every grid cell, n and variant sees the same data
    (common random numbers)."""
    o = block.options
    ss = np.random.SeedSequence([block.base_seed, zlib.crc32(b"autoassociative"), o["N"], o["patterns"],
                                 o["memories"], repeat])
    s_pat, s_mem, s_relax = ss.spawn(3)
    patterns = np.where(np.random.default_rng(s_pat).random((o["patterns"], o["N"])) < 0.5, -1.0, 1.0)
    memories = np.clip(np.random.default_rng(s_mem).normal(0.0, o["init_std"], (o["memories"], o["N"])), -1, 1)
    return patterns, memories, int(s_relax.generate_state(1, np.uint64)[0] >> np.uint64(1))


def run_autoassociative_block(block: Block, *, backend="auto", dtype="float64", memory_budget=256 * 2**20):
    """Train and probe all G = cells x repeats networks of ``block``; one record per network.

    Each repeat (its grid of networks, which share patterns and initial
    memories) is one batched call; ``memory_budget`` bounds the kernels'
    intermediates. Metric: mean Euclidean distance between each learned
    pattern and the state it relaxes to (asynchronous updates, sign(0) = +1).
    """
    from .backend import get_backend, resolve_dtype, to_numpy  # noqa: PLC0415
    from .interactions import make_interaction  # noqa: PLC0415
    from .network import relax  # noqa: PLC0415
    from .training import train_memories  # noqa: PLC0415

    xp, _ = get_backend(backend)
    xdt = resolve_dtype(xp, dtype)
    o = block.options
    N = o["N"]
    F = make_interaction(o["interaction"], block.n, **{k: o[k] for k in ("epsilon", "leak") if k in o})
    cells = list(block.cells())
    per_rep = block.n_cells
    records = []
    for r in range(block.repeats):
        patterns, init, relax_seed = _task_streams(block, r)
        mine = cells[r * per_rep:(r + 1) * per_rep]
        inv_t = np.array([c[3] for c in mine])
        lr = np.array([c[4] for c in mine])
        G = len(mine)
        if block.variant == "original":
            beta_in, beta_out, scale = 1.0, inv_t ** block.n, 1.0
        elif block.variant == "normalized":
            beta_in, beta_out, scale = inv_t / N, 1.0, 1.0 / N
        else:
            raise ValueError(f"variant must be 'original' or 'normalized', got {block.variant!r}")
        pat = xp.asarray(patterns, dtype=xdt)
        mem = xp.asarray(np.broadcast_to(init, (G, *init.shape)).copy(), dtype=xdt)
        res = train_memories(mem, pat, pat, F, beta_in=beta_in, beta_out=beta_out, learning_rate=lr,
                             lr_decay=o["lr_decay"], momentum=o["momentum"], epochs=o["epochs"],
                             error_exponent=o["error_exponent"], random_state=0, memory_budget=memory_budget)
        states, converged, sweeps, finite = relax(res.memories, pat, F, scale, mode="async",
                                                  max_sweeps=o["max_sweeps"], zero_sign=1,
                                                  random_state=relax_seed, memory_budget=memory_budget)
        states = to_numpy(states).astype(np.float64)
        converged = to_numpy(converged)
        finite_all = to_numpy(finite) & res.finite
        dist = np.linalg.norm(states - patterns[None], axis=2)  # (G, P)
        for g, (rep, i, j, it, lrate) in enumerate(mine):
            ok = bool(finite_all[g])
            records.append({
                "repeat": rep, "i_T": i, "i_lr": j, "inv_temperature": it, "learning_rate": lrate,
                "distance": float(dist[g].mean()) if ok else None,
                "exact_fraction": float((dist[g] == 0).mean()) if ok else None,
                "converged_fraction": float(converged[g].mean()),
                "final_loss": float(res.loss[-1, g] / (N * o["patterns"])) if ok else None,
                "finite": ok, "failed_epoch": int(res.failed_epoch[g]), "sweeps": int(sweeps),
            })
    return records


def _aa_quick():
    blocks = []
    grids = {"coarse": ((0.3, 1.0, 3.0, 10.0, 30.0), (0.05, 0.3))}
    for variant in ("original", "normalized"):
        for n in (2, 10):
            blocks.append(autoassociative_block(variant, n, "coarse", repeats=2, epochs=30, grids=grids))
    blocks.append(autoassociative_block("normalized", 10, "coarse", repeats=2, epochs=30, grids=grids, dtype="float32"))
    return blocks


def _aa_full():
    blocks = []
    for grid in ("coarse", "fine"):
        blocks += [autoassociative_block("original", n, grid) for n in (2, 3, 5, 10, 20, 30)]
        blocks += [autoassociative_block("normalized", n, grid) for n in (2, 3, 5, 10, 15, 20, 25, 30)]
    blocks += [autoassociative_block("normalized", n, "fine") for n in range(40, 101, 10)]
    blocks += [autoassociative_block("normalized", n, "coarse", dtype="float32") for n in (2, 3, 5, 10, 15, 20, 25, 30)]
    for variant in ("original", "normalized"):
        blocks += [autoassociative_block(variant, n, "coarse", N=250, patterns=30) for n in (2, 3, 5, 10, 20, 30)]
    return blocks


#: The leaks of the decisive experiment (chapter 6), in the order they run: the paper
#: author's code (+eps x) at eps = 0.01, the paper's sign (-eps x), and +x (eps = 1: the
#: author's earlier "rectified polynomial"). The homogeneous control is the full
#: profile's polynomial coarse blocks (same patterns and initial memories).
LEAKS = (("code", 0.01), ("paper", 0.01), ("code", 1.0))
LEAK_NS = (2, 3, 5, 10, 20, 30)


def _aa_leak():
    """Both networks under convention A with a non-homogeneous (leaky) F; K = 20 for one leak."""
    blocks = []
    leaky = dict(interaction="leaky_rectified_polynomial")
    for leak, eps in LEAKS:
        for n in LEAK_NS:
            blocks += [autoassociative_block(v, n, "coarse", leak=leak, epsilon=eps, **leaky)
                       for v in ("normalized", "original")]
    for n in LEAK_NS:
        blocks += [autoassociative_block(v, n, "coarse", leak="code", epsilon=0.01, memories=20, **leaky)
                   for v in ("normalized", "original")]
    return blocks


def _aa_smoke():
    """Seconds in all: tiny networks, for tests and CI."""
    grids = {"coarse": ((1.0, 3.0), (0.1, 0.3))}
    return [autoassociative_block(v, n, "coarse", N=16, patterns=3, repeats=2, grids=grids, memories=8, epochs=15)
            for n in (2, 3, 4) for v in ("original", "normalized")]


register_task("autoassociative", run_autoassociative_block,
              profiles={"quick": _aa_quick, "full": _aa_full, "leak": _aa_leak, "smoke": _aa_smoke})

from . import classification as _classification  # noqa: E402,F401  (registers the "mnist" task)
