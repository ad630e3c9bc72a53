"""Result files as a chapter reads them: the records, and where, when and with what code
each block was computed.

The sweep engine (:mod:`damlite.sweeps.experiments`) writes one JSON line per finished
block and a provenance entry beside it. A chapter needs both, and a line that says what
is on file; :func:`load` gathers them, :meth:`ResultFile.provenance_table` lists the
blocks, and :func:`cpu_hours` turns the measured block times into the cost of a whole
profile on a CPU.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KrotovRuns", "ResultFile", "commit_of", "cpu_hours", "krotov_runs", "load", "mean_by_n", "ns_on_file"]


def commit_of(entry):
    """The first 10 hex digits of the commit a provenance entry names, or ``"not recorded"``."""
    commit = str(entry.get("git_commit") or "")
    return commit[:10] if re.fullmatch(r"[0-9a-f]{40}", commit) else "not recorded"


@dataclass
class ResultFile:
    """One result file: its records, its provenance, and the blocks of its profile.

    Attributes
    ----------
    path : Path
    records : list of dict
        The records on file (only those of ``blocks`` when a profile was given).
    provenance : list of dict
        One entry per block on file: ``key``, ``backend``, ``device``, ``seconds``, ``date``,
        ``git_commit``.
    blocks : list
        The profile's blocks (``damlite.sweeps.blocks.profile_blocks``); empty
        when no profile was given.
    """

    path: Path
    records: list = field(default_factory=list)
    provenance: list = field(default_factory=list)
    blocks: list = field(default_factory=list)

    @property
    def on_file(self):
        """Provenance entries of the blocks on file (of the profile's blocks, when there is a profile)."""
        keys = {b.key for b in self.blocks}
        return [p for p in self.provenance if not keys or p["key"] in keys]

    def summary(self, name=""):
        """One line: how many of the profile's blocks are on file, and on which backend and device."""
        done = {p["key"] for p in self.on_file}
        where = Counter(f"{p['backend']} on {p['device']}" for p in self.on_file)
        of = f" of {len(self.blocks)}" if self.blocks else ""
        head = f"{name + ': ' if name else ''}{len(done)}{of} blocks in {self.path.name}"
        return head + "".join(f"; {k}: {v} blocks" for k, v in where.items())

    def provenance_table(self):
        """One row per block on file: network, n, grid, dtype, N, seconds, backend, date, commit."""
        from .tables import Table  # noqa: PLC0415

        by_key = {b.key: b for b in self.blocks}
        rows = []
        for p in self.on_file:
            b = by_key.get(p["key"])
            what = ([b.variant, b.n, b.grid, b.dtype, b.options.get("N", "")] if b is not None
                    else ["", "", "", "", ""])
            rows.append(what + [f"{p['seconds']:.0f}", p["backend"], str(p["date"])[:10],
                                commit_of(p)])
        return Table(["network", "n", "grid", "dtype", "N", "seconds", "backend", "date", "commit"], rows,
                     stack=True)


def load(path, task=None, profile=None):
    """The records and provenance of the result file at ``path`` (nothing if it is absent).

    With ``task`` and ``profile`` only the records of that profile's blocks are kept
    (:func:`damlite.sweeps.resultfiles.load_records` with ``blocks``), and
    ``ResultFile.blocks`` lists them all, on file or not.
    """
    from ..sweeps import experiments as ex  # noqa: PLC0415

    path = Path(path)
    blocks = ex.profile_blocks(task, profile) if task and profile else []
    if not path.exists():
        return ResultFile(path, blocks=blocks)
    records = ex.load_records(path, blocks=blocks) if blocks else ex.load_records(path)
    return ResultFile(path, records, ex.load_provenance(path), blocks)


def ns_on_file(records, ns, grid, N=100):
    """The values of ``ns`` with records on ``grid`` at dimension ``N``; the first of ``ns`` when none has."""
    found = [n for n in ns if any(r["n"] == n and r["grid"] == grid and r["N"] == N for r in records)]
    return found or list(ns)[:1]


def mean_by_n(records, variant, key):
    """{n: mean of ``key``} over the ``variant`` network's records that have it, in order of n."""
    out = {}
    for r in records:
        if r["variant"] == variant and r.get(key) is not None:
            out.setdefault(r["n"], []).append(r[key])
    return {n: sum(v) / len(v) for n, v in sorted(out.items())}


def _work(block):
    """A block's work: networks x epochs x patterns x memories x N (its time on a CPU grows like this)."""
    o = block.options
    return block.n_networks * o["epochs"] * o["patterns"] * o["memories"] * o["N"]


def cpu_hours(result, fallback=None):
    """What a whole profile costs on one CPU, from the blocks timed on a CPU.

    Parameters
    ----------
    result : ResultFile
        The profile (its ``blocks``) and the blocks timed so far (its provenance).
    fallback : ResultFile, optional
        Timed blocks to use when ``result`` has none timed with NumPy: a quick profile
        run on the machine at hand (whatever its backend).

    Returns
    -------
    (float, float)
        Seconds per unit of work (networks x epochs x patterns x memories x N) and the
        hours the whole of ``result.blocks`` would take at that rate.
    """
    def timed(rf, backend=None):
        by_key = {b.key: b for b in rf.blocks}
        return [(by_key[p["key"]], p["seconds"]) for p in rf.provenance
                if p["key"] in by_key and backend in (None, p["backend"])]

    pairs = timed(result, "numpy") or (timed(fallback) if fallback is not None else [])
    if not pairs:
        raise ValueError("result: no block timed with NumPy on file, and no timed block in fallback")
    per_unit = sum(s for _, s in pairs) / sum(_work(b) for b, _ in pairs)
    return per_unit, per_unit * sum(_work(b) for b in result.blocks) / 3600


@dataclass
class KrotovRuns:
    """Krotov and Hopfield's MNIST configuration as chapter 7 reads it from ``book/results/mnist``.

    Attributes
    ----------
    cpu : dict
        ``{"original": run, "normalized": run}``, the two networks trained on a CPU
        (``krotov_<network>.json``, written by ``bench/mnist_epoch.py``).
    gpu : dict
        The original network trained for all epochs on a GPU (``krotov_original_cupy.json``).
    reference : dict
        ``{epoch: test accuracy}`` of Krotov and Hopfield's own notebook, run on this machine.

    A run holds ``eval_epochs`` and ``test_accuracy`` (one per evaluated epoch),
    ``epochs_done``, ``epoch_seconds``, ``median_epoch_seconds``, ``test_confusion`` (10 x 10,
    after the last epoch) and ``provenance``.
    """

    cpu: dict
    gpu: dict
    reference: dict

    def curves(self):
        """{label: (epochs, test accuracy)} of the three runs, for :func:`damlite.book.plots.plot_accuracy_curves`."""
        out = {f"{v} network, {r['epochs_done']} epochs (CPU)": (r["eval_epochs"], r["test_accuracy"])
               for v, r in self.cpu.items()}
        out[f"original network, {self.gpu['epochs_done']} epochs (GPU)"] = (self.gpu["eval_epochs"],
                                                                           self.gpu["test_accuracy"])
        return out


def krotov_runs(directory="results/mnist"):
    """The runs of Krotov and Hopfield's configuration on file in ``directory`` (:class:`KrotovRuns`)."""
    directory = Path(directory)

    def read(name):
        return json.loads((directory / name).read_text(encoding="utf-8"))

    theirs = read("krotov_notebook_reference.json")
    return KrotovRuns(
        cpu={v: read(f"krotov_{v}.json") for v in ("original", "normalized")},
        gpu=read("krotov_original_cupy.json"),
        reference={int(e): a for e, a in theirs["test_accuracy_after_epochs"].items()},
    )
