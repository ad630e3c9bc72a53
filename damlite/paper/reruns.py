"""What the verdicts rest on, measured (issue of 2026-11-29): the noise floor under every verdict, and the runs
that test the grids' edges.

* **Noise floor.** Committed autoassociative blocks rerun, same settings and seeds, under the variations a
  user's machine brings (``book/results/noise/<variation>/``): per block, the share of per-repeat cells whose
  distance is bitwise equal, the largest change of a cell mean, and the cells whose status (good: within the
  rule book's 0.5 of the best cell mean) changes; then the verdicts: the scorecard regraded with each
  variation's blocks in place of the committed ones (rule 2 of
  ``book/results/predictions/2026-11-29-mnist-noise-floor.md``), and every verdict that changes is *unstable at
  rounding level*.
* **Floor or landscape** (rule 5): the original at n = 3, 5 below the censored grid with the normalised step's
  floor 1e-60: how far down the recalling rows reach, against the committed blocks' floor 1e-30.
* **The rate axis past 1** (rule 6) and **n = 25 with fresh seeds** (rule 7).

``python -m damlite.paper.reruns`` writes ``book/results/noise/noise-floor.json`` (the regrading takes a few
minutes: one scorecard build per variation); the scorecard reads that file and never recomputes it, so
``python -m damlite scorecard`` stays fast and byte for byte.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from . import claims as C

__all__ = ["VARIATIONS", "compare_blocks", "edge_runs", "noise_flags", "noise_floor", "regrade", "summary", "unstable",
           "write"]

#: variation folder -> what differs from the committed run (the committed blocks ran on this project's 2-core CPU
#: with the numba kernels, two blocks at a time (``--workers 2``) under the thread rules of their commit, the loss
#: kernel specialised by the size rule of the day).
VARIATIONS = {
    "one-thread": "today's code on one thread (NUMBA_NUM_THREADS=1)",
    "two-threads": "today's code on two threads (NUMBA_NUM_THREADS=2)",
    "generic": "the loss kernel not specialised (DAMLITE_SPECIALISE=never, a switch of 8a10c68's code), one thread",
    "numpy": "the NumPy path instead of the numba kernels (DAMLITE_CPU_KERNELS=numpy)",
    "float32": "float32 instead of float64 (normalized network only)",
}
NOISE_FILE = "noise-floor.json"
GOOD = C.TOLERANCES["good_distance"]
RATE_AXIS = (1.0, 2.15443, 4.64159, 10.0)  # the rate10 blocks' learning rates
RECALL = C.TOLERANCES["recall_distance"]


def _identity(block):
    """What makes two blocks the same computation (the key without the key's text formatting)."""
    b = dict(block)
    b.pop("key", None)
    b["settings"] = [list(x) for x in b.get("settings", [])]
    return json.dumps(b, sort_keys=True)


def _lines(path):
    from ..sweeps.resultfiles import read_results  # noqa: PLC0415

    return read_results(Path(path)) if Path(path).exists() else []


def _committed(results):
    """identity -> (file stem, line) over every committed autoassociative file."""
    out = {}
    for path in sorted((Path(results) / "autoassociative").glob("*.jsonl")):
        for line in _lines(path):
            out.setdefault(_identity(line["block"]), (path.stem, line))
    return out


def _as_committed(block, variation):
    """The identity of the committed block a rerun stands in for: the same block, and for the float32 variation
    the float64 block it reruns in float32."""
    return _identity(dict(block, dtype="float64") if variation == "float32" else block)


def _cells(line):
    """(repeat, i_T, i_lr) -> distance (None where the network failed), and the grid's shape."""
    recs = line["records"]
    cells = {(r["repeat"], r["i_T"], r["i_lr"]): r["distance"] for r in recs}
    shape = (1 + max(r["i_T"] for r in recs), 1 + max(r["i_lr"] for r in recs))
    return cells, shape


def _means(cells, shape, repeats):
    z = np.full(shape, np.nan)
    for i in range(shape[0]):
        for j in range(shape[1]):
            v = [cells.get((r, i, j)) for r in range(repeats)]
            if all(x is not None for x in v):
                z[i, j] = float(np.mean(v))
    return z


def _good(z):
    if not np.isfinite(z).any():
        return np.zeros(z.shape, bool), math.nan
    best = float(np.nanmin(z))
    return np.isfinite(z) & (z - best <= GOOD), best


def compare_blocks(committed, rerun):
    """One row: how far a rerun of a block is from the block on file (distances of the autoassociative task)."""
    a, shape = _cells(committed)
    b, _ = _cells(rerun)
    repeats = committed["block"]["repeats"]
    keys = sorted(a)
    equal = sum(1 for k in keys if a[k] == b.get(k))
    za, zb = _means(a, shape, repeats), _means(b, shape, repeats)
    both = np.isfinite(za) & np.isfinite(zb)
    change = float(np.max(np.abs(za - zb)[both])) if both.any() else None
    ga, best_a = _good(za)
    gb, best_b = _good(zb)
    flips = int((ga != gb).sum())
    blk = committed["block"]
    return {"variant": blk["variant"], "n": blk["n"], "grid": blk["grid"], "N": dict(blk["settings"]).get("N"),
            "F": _f_label(dict(blk["settings"])), "repeats": repeats, "cells": len(keys),
            "identical_share": round(equal / len(keys), 4), "largest_mean_change": None if change is None else
            round(change, 4), "status_changes": flips, "good_cells": [int(ga.sum()), int(gb.sum())],
            "best": [_r(best_a), _r(best_b)], "recalls": [bool(best_a <= RECALL), bool(best_b <= RECALL)],
            "committed_on": _where(committed["provenance"]), "rerun_on": _where(rerun["provenance"]),
            "rerun_seconds": rerun["provenance"].get("seconds")}


def _r(x):
    return None if x is None or not math.isfinite(x) else round(float(x), 4)


def _f_label(o):
    if o.get("interaction") == "polynomial":
        return "A (polynomial)"
    if o.get("interaction") == "leaky_rectified_polynomial":
        sign = "+" if o.get("leak") == "code" else "-"
        k = f", K = {o['memories']}" if o.get("memories") not in (None, 100) else ""
        return f"A {sign} leak ({sign}{o.get('epsilon')}x){k}"
    return str(o.get("interaction"))


def _where(p):
    if p.get("backend") == "cupy":
        return f"GPU ({p.get('device', '')})"
    return f"CPU, {p.get('cpu_kernels') or 'NumPy'}"


def noise_floor(results="book/results", noise=None):
    """Rows of the noise-floor table: one per (variation, rerun block on file), in the variations' order."""
    noise = Path(noise) if noise is not None else Path(results) / "noise"
    index = _committed(results)
    rows = []
    for var in VARIATIONS:
        for path in sorted((noise / var).glob("autoassociative-*.jsonl")):
            for line in _lines(path):
                hit = index.get(_as_committed(line["block"], var))
                if hit is None:
                    continue
                stem, committed = hit
                rows.append({"variation": var, "file": stem, **compare_blocks(committed, line)})
    return rows


def _substituted(results, noise, variation, dest):
    """A copy of ``results`` with every block of ``variation`` on file put in place of its committed block
    (keeping the committed block's key and dtype, so the scorecard reads it where it read the committed one)."""
    shutil.copytree(Path(results), dest, ignore=shutil.ignore_patterns("noise", "*.lock", "*.npy"))
    reruns = {}
    for path in sorted((Path(noise) / variation).glob("autoassociative-*.jsonl")):
        for line in _lines(path):
            reruns[_as_committed(line["block"], variation)] = line
    swapped = 0
    for path in sorted((Path(dest) / "autoassociative").glob("*.jsonl")):
        out = []
        for line in _lines(path):
            new = reruns.get(_identity(line["block"]))
            if new is not None:
                dtype = line["block"]["dtype"]
                line = {"key": line["key"], "block": line["block"], "provenance": new["provenance"],
                        "records": [{**r, "dtype": dtype} if "dtype" in r else r for r in new["records"]]}
                swapped += 1
            out.append(json.dumps(line))
        path.write_text("".join(x + "\n" for x in out))
    return swapped


def _verdicts(card):
    """(claim, reading) -> verdict (the scorecard's :func:`~damlite.paper.scorecard.verdicts`), (claim, reading,
    item label, n) -> outcome, and (claim, "bottom line") -> the bottom line."""
    from .scorecard import verdicts  # noqa: PLC0415

    out = {(cid, label): v for cid, per in verdicts(card).items() for label, v in per.items()}
    for c in card["claims"]:
        for label, g in c["readings"].items():
            for it in g.get("items", []):
                out[(c["id"], label, str(it.get("item")), str(it.get("n")))] = it.get("outcome")
        out[(c["id"], "bottom line")] = json.dumps(c.get("bottom_line"), sort_keys=True)
    return out


def regrade(results="book/results", noise=None, variations=None):
    """Per variation: the verdicts and item outcomes that change when its rerun blocks replace the committed
    ones (scorecard built without bootstrap, both sides)."""
    from .scorecard import build  # noqa: PLC0415

    noise = Path(noise) if noise is not None else Path(results) / "noise"
    base = _verdicts(build(results, bootstrap=0, allow_missing=True, reruns=False))
    out = {}
    for var in variations or VARIATIONS:
        if not any((noise / var).glob("autoassociative-*.jsonl")):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            dest = Path(tmp) / "results"
            swapped = _substituted(results, noise, var, dest)
            new = _verdicts(build(dest, bootstrap=0, allow_missing=True, reruns=False))
        changes = [{"claim": k[0], "reading": k[1], "item": k[2] if len(k) > 2 else None,
                    "n": k[3] if len(k) > 3 else None, "committed": base[k], "rerun": new.get(k)}
                   for k in sorted(base, key=str) if new.get(k) != base[k]]
        out[var] = {"blocks_swapped": swapped, "changes": changes}
    return out


def unstable(noise_json):
    """{claim id: {reading: reason}} for the verdicts a rounding-level rerun changes (from the file's regrading)."""
    out = {}
    for var, res in (noise_json or {}).get("regrade", {}).items():
        for ch in res["changes"]:
            if ch["item"] is None and ch["reading"] != "bottom line":
                out.setdefault(ch["claim"], {})[ch["reading"]] = (
                    f"{ch['committed']} -> {ch['rerun']} with the {var} rerun ({VARIATIONS[var]})")
    return out


# ------------------------------------------------------------------------------ the edges' runs
def _region(line):
    cells, shape = _cells(line)
    z = _means(cells, shape, line["block"]["repeats"])
    good, best = _good(z)
    its, lrs = line["block"]["inv_temperature"], line["block"]["learning_rate"]
    recall_rows = [its[i] for i in range(shape[0]) if np.isfinite(z[i]).any() and np.nanmin(z[i]) <= RECALL]
    good_lrs = [lrs[j] for j in range(shape[1]) if good[:, j].any()]
    return z, good, best, recall_rows, good_lrs


def edge_runs(results="book/results"):
    """The floor, rate-axis and n = 25 runs on file, summarised (absent files give empty lists)."""
    aa = Path(results) / "autoassociative"
    censored = {}
    for line in _lines(aa / "autoassociative-censored.jsonl"):
        o = dict(line["block"]["settings"])
        if line["block"]["variant"] == "original" and line["block"]["grid"] == "coarse-ext":
            censored[(line["block"]["n"], _f_label(o))] = line
    floor = []
    for line in _lines(aa / "autoassociative-floor.jsonl"):
        z, good, best, rows, _ = _region(line)
        o = dict(line["block"]["settings"])
        key = (line["block"]["n"], _f_label(o))
        old_rows = _region(censored[key])[3] if key in censored else []
        low, old = (min(rows) if rows else None), (min(old_rows) if old_rows else None)
        floor.append({"n": key[0], "F": key[1], "step_floor": o.get("step_floor"),
                      "rows": [min(line["block"]["inv_temperature"]), max(line["block"]["inv_temperature"])],
                      "lowest_recalling_row": low, "recalling_rows": len(rows), "best": _r(best),
                      "committed_lowest_recalling_row": old,
                      "edge_moved_decades": _r(math.log10(old / low)) if low and old else None,
                      "reading": _floor_reading(low, old)})
    rate = []
    for line in _lines(aa / "autoassociative-rate10.jsonl"):
        z, good, best, rows, good_lrs = _region(line)
        rate.append({"variant": line["block"]["variant"], "n": line["block"]["n"],
                     "F": _f_label(dict(line["block"]["settings"])), "best": _r(best), "recalls": bool(best <= RECALL),
                     "reach_lr": max(good_lrs) if good_lrs else None,
                     "touches_top": bool(good[:, -1].any())})
    n25 = []
    for line in _lines(aa / "autoassociative-n25.jsonl"):
        z, good, best, rows, _ = _region(line)
        per_rep = []
        cells, shape = _cells(line)
        for r in range(line["block"]["repeats"]):
            zr = _means({(0, i, j): v for (rr, i, j), v in cells.items() if rr == r}, shape, 1)
            per_rep.append(_r(float(np.nanmin(zr))) if np.isfinite(zr).any() else None)
        n25.append({"n": line["block"]["n"], "seed": line["block"]["base_seed"], "best": _r(best),
                    "recalls": bool(best <= RECALL), "best_per_repeat": per_rep,
                    "good_cells": int(good.sum())})
    return {"floor": floor, "rate10": rate, "n25": n25}


def _floor_reading(low, old):
    """Rule 5: the lower edge follows the floor (moved >= 3 decades), is landscape (<= 1), else undetermined."""
    if not low or not old:
        return "undetermined"
    moved = math.log10(old / low)
    return "follows the floor" if moved >= 3 else "landscape" if moved <= 1 else "undetermined"


def _noise_file(results):
    path = Path(results) / "noise" / NOISE_FILE
    return json.loads(path.read_text()) if path.exists() else None


def noise_flags(results="book/results"):
    """{claim id: {reading label: reason}}: the verdicts a rounding-level rerun changes (the scorecard's hook)."""
    return unstable(_noise_file(results))


def norm_lr_rate10(rate):
    """Rule 6: per (n, F) with both networks on the rate axis 1 ... 10, ``norm_lr`` by the direction rule: the
    normalized network's reach at least 1.5x the original's; a reach touching 10 may go on past it."""
    ratio = C.TOLERANCES["lr_ratio"]
    both = {}
    for r in rate:
        both.setdefault((r["n"], r["F"]), {})[r["variant"]] = r
    out = []
    for (n, F), pair in sorted(both.items()):
        if set(pair) != {"normalized", "original"}:
            continue
        a, b = pair["normalized"], pair["original"]
        if not b["recalls"]:  # no recalling cell at rates >= 1: its region (on the coarse grid) ends below 1
            b = dict(b, reach_lr=min(RATE_AXIS), touches_top=False)
        if not a["recalls"] or b["reach_lr"] is None:
            outcome = "not counted"
        else:
            low_ok = a["reach_lr"] / b["reach_lr"] >= ratio  # measured values
            if low_ok and not b["touches_top"]:
                outcome = C.SUPPORTED
            elif not low_ok and not a["touches_top"]:
                outcome = C.REFUTED
            else:
                outcome = C.UNDETERMINED
        out.append({"n": n, "F": F, "reach_normalized": a["reach_lr"], "reach_original": b["reach_lr"],
                    "original_recalls_past_1": bool(pair["original"]["recalls"]),
                    "censored": [v for v, r in (("normalized", a), ("original", b)) if r["touches_top"]],
                    "outcome": outcome})
    return out


def _n25_reading(n25):
    """Rule 7: seed-specific when n = 25 recalls with the fresh seeds; systematic when it fails while n = 20 and
    30 with the same seeds recall; else undetermined."""
    by_n = {r["n"]: r for r in n25}
    if 25 not in by_n:
        return None
    if by_n[25]["recalls"]:
        return "seed-specific"
    return "systematic" if all(by_n.get(n, {}).get("recalls") for n in (20, 30)) else "undetermined"


def _fmt(x):
    return None if x is None else float(f"{x:.3g}") if isinstance(x, float) else x


def summary(results="book/results", noise=None):
    """What the scorecard shows (``card["reruns"]``): the noise floor (``noise``, else the file's) and the edges'
    runs as ``tables`` (the page's), with the measurements behind them; None when none of their files is on file."""
    noise = _noise_file(results) if noise is None else noise
    edges = edge_runs(results)
    parity = _parity(results)
    if noise is None and not any(edges.values()) and not parity:
        return None
    tables = []
    if noise is not None:
        tables.append({"id": "noise-floor", "title": "The noise floor: committed blocks rerun at rounding level",
                       "columns": ["variation", "reading", "network", "n", "cells", "bitwise equal",
                                   "largest change of a cell mean", "cells changing status", "best: on file -> rerun"],
                       "rows": [[b["variation"], b["F"] + (f", N = {b['N']}" if b["N"] != 100 else ""), b["variant"],
                                 b["n"], b["cells"], f"{100 * b['identical_share']:.0f} %",
                                 _fmt(b["largest_mean_change"]), b["status_changes"],
                                 f"{_fmt(b['best'][0])} -> {_fmt(b['best'][1])}"] for b in noise["blocks"]],
                       "note": "Distances (the recall threshold is 0.5); a cell's status is good or not (within 0.5 of "
                               "the best cell mean). " + "; ".join(f"{k}: {v}" for k, v in noise["variations"].items())})
        tables.append({"id": "noise-verdicts", "title": "Verdicts regraded with each variation's blocks",
                       "columns": ["variation", "blocks swapped in", "verdicts that change", "item outcomes that change"],
                       "rows": [[v, r["blocks_swapped"],
                                 ", ".join(f"{c['claim']} ({c['reading']}): {c['committed']} -> {c['rerun']}"
                                           for c in r["changes"] if c["item"] is None) or "none",
                                 sum(1 for c in r["changes"] if c["item"] is not None)]
                                for v, r in noise["regrade"].items()]})
    if edges["floor"]:
        tables.append({"id": "floor", "title": "Floor or landscape: the original's lower edge with the step floor 1e-60",
                       "columns": ["n", "F", "lowest recalling 1/T, floor 1e-30", "lowest recalling 1/T, floor 1e-60",
                                   "decades moved", "reading (rule 5)"],
                       "rows": [[r["n"], r["F"], _fmt(r["committed_lowest_recalling_row"]),
                                 _fmt(r["lowest_recalling_row"]), _fmt(r["edge_moved_decades"]), r["reading"]]
                                for r in edges["floor"]]})
    if edges["rate10"]:
        tables.append({"id": "rate10", "title": "The learning-rate axis past 1: norm_lr (rule 6)",
                       "columns": ["n", "F", "largest good rate, normalized", "largest good rate, original",
                                   "touches 10", "outcome"],
                       "rows": [[r["n"], r["F"], _fmt(r["reach_normalized"]),
                                 _fmt(r["reach_original"]) if r["original_recalls_past_1"] else "below 1 (no recall at 1 or more)",
                                 ", ".join(r["censored"]) or "neither", r["outcome"]]
                                for r in norm_lr_rate10(edges["rate10"])]})
    if edges["n25"]:
        tables.append({"id": "n25", "title": "The normalized network at n = 25 with fresh patterns and memories (rule 7)",
                       "columns": ["n", "best cell mean", "recalls", "best per repeat"],
                       "rows": [[r["n"], _fmt(r["best"]), "yes" if r["recalls"] else "no",
                                 ", ".join(str(_fmt(x)) for x in r["best_per_repeat"])] for r in edges["n25"]],
                       "note": f"Reading by rule 7: {_n25_reading(edges['n25'])}."})
    if parity:
        tables.append({"id": "parity", "title": "Exploratory (not pre-registered): n = 21 ... 27, polynomial F, one repeat",
                       "columns": ["n", "best cell mean", "good cells"],
                       "rows": [[r["n"], _fmt(r["best"]), r["good_cells"]] for r in parity]})
    noise = None if noise is None else {k: noise[k] for k in ("variations", "rule", "blocks", "regrade")}
    return {"tables": tables, "noise_floor": noise, "edges": edges, "norm_lr_rate10": norm_lr_rate10(edges["rate10"]),
            "n25_reading": _n25_reading(edges["n25"]), "parity": parity}


def _parity(results):
    out = []
    for line in _lines(Path(results) / "autoassociative" / "autoassociative-parity.jsonl"):
        z, good, best, rows, _ = _region(line)
        out.append({"n": line["block"]["n"], "best": _r(best), "good_cells": int(good.sum()),
                    "recalls": bool(best <= RECALL)})
    return out


def write(results="book/results", path=None):
    """Measure the noise floor and regrade: ``book/results/noise/noise-floor.json``, with what the scorecard shows
    (``summary``: :func:`summary`) and the verdicts it marks unstable (``flags``: :func:`unstable`); the scorecard
    reads the file and never imports this module."""
    path = Path(path) if path is not None else Path(results) / "noise" / NOISE_FILE
    card = {"variations": VARIATIONS, "rule": "rule 2 of book/results/predictions/2026-11-29-mnist-noise-floor.md",
            "blocks": noise_floor(results), "regrade": regrade(results)}
    card["flags"] = unstable(card)
    card["summary"] = summary(results, noise=card)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return card


if __name__ == "__main__":  # pragma: no cover - a command
    import argparse

    ap = argparse.ArgumentParser(prog="python -m damlite.paper.reruns", description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="book/results")
    args = ap.parse_args()
    card = write(args.results)
    print(f"{len(card['blocks'])} rerun blocks compared; "
          + "; ".join(f"{v}: {len(r['changes'])} changed verdicts or outcomes" for v, r in card["regrade"].items()))
