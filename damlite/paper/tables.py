"""The scorecard's data: result records as tables of repeats, and their paired bootstrap.

A :class:`Table` holds every repeat of one (network, n, grid, N) of a reading: a metric stack
of shape (R, n_T, n_lr) with its axes, and for each repeat the *family* of data it saw.
Blocks of one profile with the same seed, N, patterns and memories train on the same patterns
from the same initial memories at every n, network and grid (common random numbers,
:func:`damlite.sweeps.tasks.autoassociative.task_streams`); the family names that, and
:meth:`Reading.resample` draws the same repeats for every table of a family (a paired
bootstrap).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import claims as C

__all__ = ["MNIST_N", "Reading", "Table", "family_of", "load_tables"]

MNIST_N = 794  # the MNIST records do not store N: 784 pixels and 10 class neurons


def family_of(key):
    """The data family of a block key: (seed, N, patterns, memories) as a string.

    Two blocks of one family see the same patterns and initial memories per repeat.
    """
    seed = re.search(r"\|seed=([^|]+)\|", key)
    found = {m.group(1): m.group(2) for m in re.finditer(r"(?<![a-z_])(N|patterns|memories)=([^,|]+)", key)}
    return "|".join([key.split("|", 1)[0], seed.group(1) if seed else "?"]
                    + [f"{k}={found.get(k, '?')}" for k in ("N", "patterns", "memories")])


@dataclass
class Table:
    """All repeats of one (network, n, grid, N): metric stack (R, n_T, n_lr) and its axes.

    ``groups``: the block key of each repeat (fresh seeds are another key); ``repeats``: each
    repeat's number within its block; ``files``: the result files the repeats came from.
    """

    its: np.ndarray
    lrs: np.ndarray
    stack: np.ndarray
    groups: list
    files: list
    repeats: list | None = None
    grid: str | None = None  # the grid the repeats ran on, where it extends the one it is filed under
    _mean: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.repeats is None:
            self.repeats = [i - self.groups.index(g) for i, g in enumerate(self.groups)]

    @property
    def mean(self):
        if self._mean is None:
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a cell with no finite repeat
                self._mean = np.nanmean(self.stack, axis=0)
        return self._mean

    @property
    def families(self):
        return [family_of(g) for g in self.groups]

    def take(self, rows):
        """The table restricted to (or resampled as) the repeats ``rows``."""
        rows = list(rows)
        return Table(self.its, self.lrs, self.stack[rows], [self.groups[i] for i in rows], self.files,
                     [self.repeats[i] for i in rows], self.grid)

    def resample(self, draws):
        """A paired resample: ``draws`` maps a family to uniform numbers in [0, 1); repeat i of a
        family with R repeats here becomes its repeat floor(u_i R) (sorted by repeat number)."""
        rows = []
        fams = self.families
        for fam in sorted(set(fams)):
            mine = sorted((i for i, f in enumerate(fams) if f == fam), key=lambda i: (self.repeats[i], i))
            u = draws[fam]
            rows += [mine[int(u[k] * len(mine))] for k in range(len(mine))]
        return self.take(rows)


def _records(root, stem, cache):
    if stem not in cache:
        from ..sweeps.experiments import load_records  # noqa: PLC0415

        path = Path(root) / f"{stem}.jsonl"
        cache[stem] = load_records(path) if path.exists() else []
    return cache[stem]


def load_tables(root, sources, *, metric="distance", cache=None, relabel=False, extended=None):
    """(network, n, grid, N) -> :class:`Table` from the matching float64 records of ``sources``.

    ``sources``: (file stem, settings the records must match; "grid" may be one of them).
    ``relabel``: the original's 1/T as (1/T)**n (reading B). ``extended``: grid -> the grid
    it extends (``{"coarse-ext": "coarse"}``): the extension is filed under the grid it holds,
    replacing it where both exist for one (network, n, N) (rule ``grids``); its ``grid`` says
    which grid ran.
    """
    cache = {} if cache is None else cache
    cells = {}
    for stem, match in sources:
        for r in _records(root, stem, cache):
            if r["dtype"] != "float64" or not all(r.get(k) == v for k, v in match.items()):
                continue
            key = (r["variant"], r["n"], r["grid"], r.get("N") or MNIST_N)
            v = r.get(metric)
            cells.setdefault(key, []).append((r["key"], r["repeat"], r["inv_temperature"],
                                              r["learning_rate"], np.nan if v is None else float(v), stem))
    tables = {}
    for key, rows in cells.items():
        its = sorted({x[2] for x in rows})
        lrs = sorted({x[3] for x in rows})
        reps = sorted({(x[0], x[1]) for x in rows})
        stack = np.full((len(reps), len(its), len(lrs)), np.nan)
        for k, rep, it, lr, v, _ in rows:
            stack[reps.index((k, rep)), its.index(it), lrs.index(lr)] = v
        its = np.array(its)
        if relabel and key[0] == "original":
            its = its ** key[1]
        tables[key] = Table(its, np.array(lrs), stack, [k for k, _ in reps], sorted({x[5] for x in rows}),
                            [r for _, r in reps])
    for ext, base in (extended or {}).items():
        for key in [k for k in tables if k[2] == ext]:
            t = tables.pop(key)
            t.grid = ext
            tables[(key[0], key[1], base, key[3])] = t
    return tables


class Reading:
    """The tables of one reading and the good-region entries computed from them (cached)."""

    def __init__(self, label, tables, *, tol=0.5, lower=True, metric="distance", extra=None, leaky=False):
        self.label, self.tables, self.tol, self.lower, self.metric = label, tables, tol, lower, metric
        self.extra = extra or {}  # other metrics' tables of the same blocks (name -> tables)
        self.leaky = leaky  # the reading's F has a leak
        self._cache = {}

    def resample(self, rng):
        """The reading with every table's repeats drawn again, paired within each data family."""
        fams = sorted({f for t in self._all_tables() for f in t.families})
        width = max((len(t.groups) for t in self._all_tables()), default=1)
        draws = {f: rng.random(width) for f in fams}
        return Reading(self.label, {k: t.resample(draws) for k, t in self.tables.items()}, tol=self.tol,
                       lower=self.lower, metric=self.metric, leaky=self.leaky,
                       extra={m: {k: t.resample(draws) for k, t in tb.items()} for m, tb in self.extra.items()})

    def _all_tables(self):
        yield from self.tables.values()
        for tb in self.extra.values():
            yield from tb.values()

    def ns(self, network, grid=None, N=100):
        """The n on file for ``network`` (on ``grid`` if given) at size N."""
        return sorted({k[1] for k in self.tables if k[0] == network and k[3] == N and (grid is None or k[2] == grid)})

    def grids(self, network, n, N=100):
        return sorted(k[2] for k in self.tables if k[:2] == (network, n) and k[3] == N)

    def entry(self, network, n, grid="coarse", N=100):
        key = (network, n, grid, N)
        if key not in self._cache:
            t = self.tables.get(key)
            self._cache[key] = None if t is None else dict(
                C.region(t.mean, t.its, t.lrs, tolerance=self.tol, lower_is_better=self.lower),
                network=network, n=n, grid=t.grid or grid, N=N, table=t, metric=self.metric)
        return self._cache[key]
