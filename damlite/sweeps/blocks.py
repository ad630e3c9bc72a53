"""Blocks and the task registry: what a sweep is made of.

A :class:`Block` is one unit of work of a sweep (one task x network variant x
interaction vertex n x grid x dtype, all its grid cells and repeats trained
together); a task registers how to run a block and its named profiles (lists of
blocks) with :func:`register_task`. The engine that runs them is
:mod:`damlite.sweeps.experiments`; the files it writes, :mod:`damlite.sweeps.resultfiles`.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import os
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["BASE_SEED", "Block", "TaskSpec", "TASKS", "BUILTIN_TASKS", "register_task", "get_task",
           "profile_name", "profile_blocks"]

BASE_SEED = 20240712


# --------------------------------------------------------------------------- blocks
def _key_text(x: float) -> str:
    """A grid value as it appears in a key: its 6-significant-digit text where that text is the value
    exactly (every block keyed before keys were exact, so their keys are unchanged), else ``repr``:
    the shortest text that reads back as the value. Either text reads back as the value, so two blocks
    with different values never share a key."""
    short = f"{x:.6g}"
    return short if float(short) == x else repr(x)


def _check_grid(values, name, where) -> tuple:
    """``values`` as a tuple of floats, each finite and > 0 (as the estimator takes 1/T and learning rates)."""
    try:
        values = tuple(values)
    except TypeError:
        raise ValueError(f"{where}: {name} must be a sequence of numbers, got {values!r}") from None
    if not values:
        raise ValueError(f"{where}: {name} is empty: a grid needs at least one value")
    out = []
    for x in values:
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x) or x <= 0:
            raise ValueError(f"{where}: {name} values must be finite numbers > 0, got {x!r}")
        out.append(float(x))
    return tuple(out)


def _check_int(value, name, least, where) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ValueError(f"{where}: {name} must be an integer >= {least}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Block:
    """One unit of work: a whole grid x repeats for one (task, variant, n, grid, dtype).

    ``inv_temperature`` is 1/T in the variant's own convention (beta_out = 1/T**n
    for "original", beta_in = 1/(N T) for "normalized"); ``settings`` holds the
    task's fixed choices as sorted (name, value) pairs (hashable, JSON-friendly).
    The numbers are checked when a block is made (ValueError naming the block and
    the field): 1/T and learning rates finite and > 0, as the estimator takes them,
    at least one of each; ``n`` and ``repeats`` integers >= 1; ``base_seed`` >= 0.
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

    def __post_init__(self):
        where = f"block {self.task} {self.variant} n={self.n} grid {self.grid!r}"
        set_ = functools.partial(object.__setattr__, self)
        set_("inv_temperature", _check_grid(self.inv_temperature, "inv_temperature (1/T)", where))
        set_("learning_rate", _check_grid(self.learning_rate, "learning_rate", where))
        set_("n", _check_int(self.n, "n", 1, where))
        set_("repeats", _check_int(self.repeats, "repeats", 1, where))
        set_("base_seed", _check_int(self.base_seed, "base_seed", 0, where))

    @property
    def options(self) -> dict:
        return dict(self.settings)

    def _key(self, text) -> str:
        opts = ",".join(f"{k}={v}" for k, v in self.settings)
        it = ",".join(text(x) for x in self.inv_temperature)
        lr = ",".join(text(x) for x in self.learning_rate)
        return (f"{self.task}|{self.variant}|n={self.n}|{self.grid}|{self.dtype}|r={self.repeats}|"
                f"seed={self.base_seed}|{opts}|invT={it}|lr={lr}")

    @property
    def key(self) -> str:
        """A stable identity: every field that changes the results, the grid values exactly.

        A grid value is written with 6 significant digits where that is exact (so the keys of
        blocks on a 6-digit grid, all the result files written before keys were exact, are
        unchanged), else as its ``repr``."""
        return self._key(_key_text)

    @property
    def legacy_key(self) -> str:
        """The key as damlite wrote it before keys were exact (grid values to 6 significant digits):
        readers accept it for this block, and the block's seed is derived from it."""
        return self._key(lambda x: f"{x:.6g}")

    @property
    def seed(self) -> np.random.SeedSequence:
        """The block's own seed sequence, derived from the base seed and its key (as keys were written
        before they were exact, so that every block keeps the seed it had)."""
        return np.random.SeedSequence(self.seed_entropy)

    @property
    def seed_entropy(self) -> list:
        return [self.base_seed, zlib.crc32(self.legacy_key.encode())]

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
    memory: Callable | None = None


TASKS: dict[str, TaskSpec] = {}

#: The tasks that ship with damlite, imported (and so registered) on first use.
BUILTIN_TASKS = {"autoassociative": "damlite.sweeps.tasks.autoassociative", "mnist": "damlite.sweeps.tasks.mnist"}


def register_task(name, run_block, *, profiles=None, metric="distance", lower_is_better=True, memory=None):
    """Register ``run_block(block, *, backend, dtype, memory_budget) -> list[dict]`` as task ``name``.

    ``profiles`` maps a profile name ("quick", "full", ...) to a function
    returning the list of :class:`Block` s of that profile; ``metric`` names the
    record field the summaries optimise (``lower_is_better`` says which way);
    ``memory(block) -> bytes``, if given, estimates the memory a block's own arrays
    take beyond the memory budget (the sweep refuses, up front, a block that cannot fit).
    """
    if not isinstance(name, str) or not name or any(c in name for c in "/\\|"):
        raise ValueError(f"task name must be a non-empty string without '/', '\\\\' or '|', got {name!r}")
    if not callable(run_block):
        raise ValueError(f"run_block must be callable, got {run_block!r}")
    if memory is not None and not callable(memory):
        raise ValueError(f"memory must be callable (block -> bytes) or None, got {memory!r}")
    TASKS[name] = TaskSpec(name, run_block, dict(profiles or {}), metric, lower_is_better, memory)
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
    from ..backend import backend_info  # noqa: PLC0415

    return "full" if backend_info().name == "cupy" else "quick"


def profile_blocks(task, profile=None) -> list[Block]:
    spec = get_task(task)
    name = profile_name(profile)
    if name not in spec.profiles:
        raise ValueError(f"task {task!r} has no profile {name!r}; it has {sorted(spec.profiles)}")
    return list(spec.profiles[name]())
