"""What a reproduction report owes beside its verdicts, computed from the result files.

:func:`damlite.paper.scorecard.build` calls these with the readings it has loaded and the
claims it has graded; each returns a JSON-able value for ``scorecard.json``:

* :func:`effect_sizes`: how far each measured centre lies from the paper's value, in decades
  (log10 of centre / value), with a paired-bootstrap interval over the repeats;
* :func:`sensitivity`: each tolerance of :data:`damlite.paper.claims.TOLERANCES` halved and
  doubled, the claims are regraded and the bottom lines that move are listed;
* :func:`compute`: block-hours, hardware and dtype per result file, from each block's provenance;
* :func:`manifest`: every committed block that no reading reads, and why;
* :func:`deviations`: where the runs depart from the paper's protocol, our side read from the records;
* :func:`timeline`: when the first block of each pre-registered result file started
  (``provenance.date`` minus ``provenance.seconds``);
* :func:`beside_centres`: beside every test of where a centre lies or how it moves, how far the good
  region's upper edge and its best cell move over the same n, and the n whose lower edge the step-floor
  reruns showed to follow the optimiser's floor (a centre can move only because its lower edge does);
* :func:`float32_runs`: the committed float32 blocks' runs that are not finite.
"""
from __future__ import annotations

import math
import zlib
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from . import claims as C
from .claims import EXTENDED

__all__ = ["CENTRE_TESTS", "EFFECT_RESAMPLES", "EFFECTS", "FLOOR_READINGS", "NEW_FILES", "PREDICTIONS", "SENSITIVE",
           "beside_centres", "compute", "deviations", "effect_sizes", "float32_runs", "manifest", "sensitivity",
           "timeline"]

T = C.TOLERANCES
#: Resamples of the repeats behind each effect size's interval (bounded in :func:`effect_sizes`).
EFFECT_RESAMPLES = 1000
#: claim id -> (network, the paper's value of the 1/T centre): the centre tests with a number to compare.
EFFECTS = {"orig_location": ("original", 1e-2), "norm_stable": ("normalized", 0.9), "mnist_beta1": ("normalized", 1.0)}
#: The tolerances the sensitivity table halves and doubles (the bootstrap's count and share, and the
#: paper's grid, are settings of the procedure, not tolerances of a test).
SENSITIVE = ("recall_distance", "good_distance", "mnist_f1", "near_factor", "stable_decades", "moves_decades",
             "substantial_area", "lr_ratio", "N_factor", "similar_fraction", "shrink_factor", "jaccard")
_AA = ("headline", "headline_presence", "orig_location", "orig_moves", "orig_degrades", "orig_gone", "orig_increased",
       "norm_shift_small", "norm_stable", "norm_substantial", "norm_lr", "norm_N", "leak_behaves", "reuse_hparams",
       "n2_learnable", "mnist_consistent", "sec_decay_momentum", "sec_m", "sizes_similar", "norm_near1_dims",
       "scales_seen", "coarse_misses")
#: tolerance -> the claims whose tests read it (the others cannot move when it changes).
USES = {"recall_distance": _AA, "good_distance": _AA,
        "mnist_f1": ("mnist_shrink", "mnist_proportional", "mnist_shape", "mnist_beta1", "mnist_krotov", "mnist_consistent"),
        "near_factor": ("orig_location", "norm_stable", "mnist_beta1", "mnist_krotov", "mnist_consistent",
                        "sec_decay_momentum", "orig_increased", "sec3_double", "sizes_similar", "norm_near1_dims",
                        "scales_seen"),
        "stable_decades": ("headline",), "moves_decades": ("headline", "orig_moves", "norm_shift_small"),
        "substantial_area": ("headline_presence", "norm_substantial", "leak_behaves"), "lr_ratio": ("norm_lr",),
        "N_factor": ("norm_N",), "similar_fraction": ("sec_decay_momentum", "sec_m"),
        "shrink_factor": ("mnist_proportional",), "jaccard": ("mnist_shape",)}
#: The pre-registration of 2026-11-29 and the result files whose blocks it precedes.
PREDICTIONS = "book/results/predictions/2026-11-29-mnist-noise-floor.md"
NEW_FILES = ("mnist/mnist-author-slice", "mnist/mnist-b-slice", "autoassociative/autoassociative-floor",
             "autoassociative/autoassociative-rate10", "autoassociative/autoassociative-n25")
SEED = 20261129


def _r(x, digits=4):
    return None if x is None or not math.isfinite(x) else float(f"{x:.{digits}g}")


# ------------------------------------------------------------------------------ effect sizes
def _filed(grid):
    return EXTENDED.get(grid, grid)


def effect_sizes(card, readings, resamples=EFFECT_RESAMPLES):
    """Per centre test with a paper value (:data:`EFFECTS`): log10(centre / value) with a 95 % interval.

    ``readings``: label -> :class:`damlite.paper.tables.Reading`. The interval is the 2.5 and 97.5
    percentiles over ``resamples`` paired resamples of the repeats (the draws of one resample are
    shared by every table of a reading's data family, as in rule ``bootstrap``); a table of one repeat
    has none. A centre whose region runs past an edge of the 1/T axis is a bound: ``bound`` says
    which way the true effect may lie ("at most": past the low edge, "at least": past the high edge).
    """
    if not (isinstance(resamples, int) and 0 <= resamples <= 10_000):
        raise ValueError(f"resamples must be an integer from 0 to 10000, got {resamples!r}")
    rows = []
    for c in card["claims"]:
        if c["id"] not in EFFECTS:
            continue
        network, value = EFFECTS[c["id"]]
        for label, g in c["readings"].items():
            r = readings.get(label)
            if r is None:
                continue
            draws = None
            for p in g["per_n"]:
                if p["network"] != network or p.get("centre_inv_T") is None:
                    continue
                t = r.tables.get((network, p["n"], _filed(p["grid"]), p["N"]))
                if t is None:
                    continue
                if draws is None and resamples and len(t.stack) > 1:
                    rng = np.random.default_rng([SEED, zlib.crc32(f"{c['id']}|{label}".encode())])
                    fams = sorted({f for tb in r.tables.values() for f in tb.families})
                    width = max(len(tb.groups) for tb in r.tables.values())
                    draws = [{f: rng.random(width) for f in fams} for _ in range(resamples)]
                effect = math.log10(p["centre_inv_T"] / value)
                interval = None
                if draws and len(t.stack) > 1:
                    got = []
                    for d in draws:
                        ts = t.resample(d)
                        e = C.region(ts.mean, ts.its, ts.lrs, tolerance=r.tol, lower_is_better=r.lower)
                        got.append(math.log10(e["centre_inv_T"] / value))
                    lo, hi = np.percentile(got, [2.5, 97.5])
                    interval = [_r(float(lo), 3), _r(float(hi), 3)]
                cens = set(p["censored"])
                bound = ("unbounded" if {"invT_low", "invT_high"} <= cens else "at most" if "invT_low" in cens
                         else "at least" if "invT_high" in cens else None)
                rows.append({"claim": c["id"], "reading": label, "network": network, "n": p["n"], "N": p["N"],
                             "grid": p["grid"], "paper": value, "centre": p["centre_inv_T"],
                             "decades": _r(effect, 3), "interval": interval, "bound": bound,
                             "repeats": p["repeats"], "resamples": resamples if interval else 0})
    return rows


# ------------------------------------------------------------------------------ sensitivity
def sensitivity(card, regrade, set_tolerance):
    """Each tolerance of :data:`SENSITIVE` halved and doubled: the bottom lines that move.

    ``regrade(cid) -> {label: graded}`` grades one claim without bootstrap under the tolerances in
    force; ``set_tolerance(name, value)`` sets one (and clears what was computed with the old value).
    A regraded verdict keeps the stability (bootstrap share, noise floor) and identity of the card's,
    so only the tests' tolerances change. Returns one row per tolerance and factor.
    """
    base = {c["id"]: c["bottom_line"]["verdict"] for c in card["claims"]}
    kept = {c["id"]: c["readings"] for c in card["claims"]}
    rows = []
    for name in SENSITIVE:
        old = T[name]
        for factor in (0.5, 2.0):
            value = old * factor
            moved = []
            try:
                set_tolerance(name, value)
                for cid, was in base.items():
                    if cid not in USES[name]:
                        continue
                    graded = regrade(cid)
                    for label, g in graded.items():
                        k = kept[cid].get(label, {})
                        g["bootstrap_same"], g["identity"] = k.get("bootstrap_same"), k.get("identity")
                        if k.get("noise"):
                            g["noise"] = k["noise"]
                    now = C.bottom_line(graded)["verdict"]
                    if now != was:
                        moved.append({"claim": cid, "from": was, "to": now})
            finally:
                set_tolerance(name, old)
            rows.append({"tolerance": name, "value": old, "factor": factor, "tried": _r(value), "moved": moved})
    return rows


# ------------------------------------------------------------------------------ the result files' own record
def _lines(results):
    """(file stem, folder, block line) for every committed block, the first complete copy of a key."""
    from ..sweeps.resultfiles import read_results  # noqa: PLC0415

    out = []
    for folder in ("autoassociative", "mnist"):
        for path in sorted((Path(results) / folder).glob("*.jsonl")):
            seen = set()
            for line in read_results(path):
                if line["key"] not in seen:
                    seen.add(line["key"])
                    out.append((path.stem, folder, line))
    return out


def _hardware(p):
    device = p.get("device", "?")
    if device.startswith("GPU"):
        return device.split(": ", 1)[-1] + f" ({p.get('backend')})"
    return f"CPU ({p.get('cpu_kernels') or 'numpy'})"


def compute(results):
    """Per result file: blocks, block-hours (the sum of each block's ``provenance.seconds``), the
    hardware and dtypes they ran on, the days they ran; and the total."""
    by = {}
    for stem, folder, line in _lines(results):
        p = line["provenance"]
        row = by.setdefault(stem, {"file": f"{folder}/{stem}.jsonl", "blocks": 0, "seconds": 0.0,
                                   "hardware": set(), "dtype": set(), "days": set()})
        row["blocks"] += 1
        row["seconds"] += float(p.get("seconds") or 0.0)
        row["hardware"].add(_hardware(p))
        row["dtype"].add(line["block"]["dtype"])
        row["days"].add(str(p.get("date", "?"))[:10])
    rows = [{"file": r["file"], "blocks": r["blocks"], "block_hours": _r(r["seconds"] / 3600, 3),
             "hardware": sorted(r["hardware"]), "dtype": sorted(r["dtype"]), "days": sorted(r["days"])}
            for _, r in sorted(by.items())]
    total = sum(r["seconds"] for r in by.values()) / 3600
    return {"files": rows, "blocks": sum(r["blocks"] for r in by.values()), "block_hours": _r(total, 3)}


def _why_unused(stem, block):
    o = dict(block["settings"])
    if stem in ("autoassociative-floor", "autoassociative-rate10", "autoassociative-n25"):
        return "a rerun of 2026-11-29 (step floor, rate axis to 10, n = 25): read by the reruns' summary, not by a reading"
    if block["dtype"] != "float64":
        return f"{block['dtype']}: the rules grade float64 runs only (chapter 3 compares the formats)"
    if "sensitivity" in stem:
        return "sensitivity profile: probes of a setting's effect for chapter 6, no claim of the paper"
    if o.get("epsilon") == 1.0:
        return "leak slope 1 (the author's slope-1 variant): no reading of the paper's setup uses it"
    if o.get("interaction") == "rectified_polynomial" and block["task"] == "autoassociative":
        return "rectified F without a leak: not one of the five readings (chapter 6 shows it)"
    if stem in ("mnist-leak-cpu", "mnist-leak-init") and o.get("leak"):
        return "MNIST with the leak on the 2 x 6 or 1 x 6 CPU grids of 2026-11-26: chapter 7's leak question"
    if block["task"] == "mnist" and stem == "mnist-seeds":
        return "second seed of chosen MNIST cells: shown beside the verdicts (seed spread), not graded"
    if stem == "autoassociative-scorecard" and o.get("memories") == 20:
        return "fresh seeds of A + leak with K = 20 (chapter 6's question at large n); reading K = P reads the first seeds"
    if stem == "autoassociative-leak-unshifted":
        return "the leak without its shift: chapter 6's check of one detail of the author's code"
    if block["task"] == "mnist":
        return "MNIST controls of chapter 7's leak question (homogeneous F on a CPU-sized grid)"
    return "no reading's sources match its settings"


def manifest(results, used):
    """Every committed block that no reading reads (its key not in ``used``), with why, grouped by reason."""
    groups = {}
    lines = _lines(results)
    extended = {(b["variant"], b["n"], o.get("interaction"), o.get("leak"), o.get("memories"))
                for stem, _, line in lines if line["block"]["grid"] == "coarse-ext"
                for b, o in [(line["block"], dict(line["block"]["settings"]))]}
    for stem, folder, line in lines:
        if line["key"] in used:
            continue
        b = line["block"]
        o = dict(b["settings"])
        if b["grid"] == "coarse" and (b["variant"], b["n"], o.get("interaction"), o.get("leak"),
                                      o.get("memories")) in extended:
            why = "coarse grid replaced by its extension to lower 1/T (coarse-ext), which holds its rows (rule grids)"
        else:
            why = _why_unused(stem, b)
        g = groups.setdefault((f"{folder}/{stem}.jsonl", why), {"file": f"{folder}/{stem}.jsonl", "why": why,
                                                                 "blocks": 0, "n": set(), "networks": set()})
        g["blocks"] += 1
        g["n"].add(b["n"])
        g["networks"].add(b["variant"])
    rows = [dict(g, n=sorted(g["n"]), networks=sorted(g["networks"])) for _, g in sorted(groups.items())]
    total = sum(1 for _ in _lines(results))
    return {"blocks": total, "unused": sum(r["blocks"] for r in rows), "rows": rows}


def deviations(results):
    """Where the runs depart from the paper's protocol: the paper's side as the paper states it (or
    "not stated"), ours as the committed records have it."""
    epochs, inits, floors, repeats = {}, {}, set(), {}
    for stem, _, line in _lines(results):
        b, o = line["block"], dict(line["block"]["settings"])
        if b["task"] == "mnist":
            epochs[o.get("epochs")] = epochs.get(o.get("epochs"), 0) + 1
            key = f"N({o.get('init_mean')}, {o.get('init_std')}^2)"
            inits[key] = inits.get(key, 0) + 1
        else:
            floors.add(o.get("step_floor", 1e-30))
            repeats[b["repeats"]] = repeats.get(b["repeats"], 0) + 1
    return [
        {"what": "MNIST epochs", "paper": "500",
         "ours": "; ".join(f"{e} ({k} blocks)" for e, k in sorted(epochs.items(), key=lambda x: str(x[0])))},
        {"what": "MNIST initial memories", "paper": "not stated (the author's code: N(0, 0.1^2))",
         "ours": "; ".join(f"{i} ({k} blocks)" for i, k in sorted(inits.items()))},
        {"what": "MNIST grid", "paper": "6 x 6 (1/T x learning rate)",
         "ours": "6 x 6 for reading A; the 2026-11-29 slices run one learning rate (0.03) of it"},
        {"what": "autoassociative repeats per block", "paper": "not stated",
         "ours": "; ".join(f"{r} ({k} blocks)" for r, k in sorted(repeats.items()))},
        {"what": "the normalised step's floor", "paper": "not stated (Krotov's and the author's code: 1e-30)",
         "ours": ", ".join(f"{f:g}" for f in sorted(floors))},
        {"what": "the original's temperature", "paper": "1/T, its place in the energy not stated",
         "ours": "graded under five readings (A, B, A + leak, A - leak, A + leak with K = P)"},
        {"what": "grids", "paper": "coarse 1/T x learning rate, finer grids around the region",
         "ours": "the paper's coarse grid, extended below 1/T = 1e-3 where its region ran past (coarse-ext), "
                 "fine, wide and N = 250 grids"},
    ]


def timeline(results):
    """When the first block of each pre-registered file (``NEW_FILES``) started: ``provenance.date``
    minus ``provenance.seconds``, in UTC (ISO 8601); None for a file not on file."""
    from ..sweeps.resultfiles import read_results  # noqa: PLC0415

    files = {}
    for name in NEW_FILES:
        path = Path(results) / f"{name}.jsonl"
        starts = []
        if path.exists():
            for line in read_results(path):
                p = line["provenance"]
                end = datetime.fromisoformat(p["date"])
                starts.append(end - timedelta(seconds=float(p.get("seconds") or 0.0)))
        files[f"{name}.jsonl"] = {"blocks": len(starts),
                                  "first_start": min(starts).isoformat(timespec="seconds") if starts else None}
    firsts = [f["first_start"] for f in files.values() if f["first_start"]]
    return {"predictions": PREDICTIONS, "files": files, "first_start": min(firsts) if firsts else None}


# ------------------------------------------------------------------------------ beside the centres
#: The claims whose test is where a good region's centre lies or how far it moves (issue 43: beside each,
#: the upper edge and the best cell).
CENTRE_TESTS = ("headline", "orig_location", "orig_moves", "norm_shift_small", "norm_stable", "norm_near1_dims",
                "mnist_beta1", "mnist_consistent")
#: The step-floor reruns' interaction (``noise-floor.json``: summary, edges, floor) -> the readings whose
#: original network those runs are (B relabels A's runs).
FLOOR_READINGS = {"A (polynomial)": ("A", "B"), "A + leak (+0.01x)": ("A + leak",),
                  "A - leak (-0.01x)": ("A − leak",)}


def _decades(values):
    vals = [v for v in values if v]
    return _r(math.log10(max(vals) / min(vals)), 3) if len(vals) > 1 else None


def beside_centres(card, reruns=None):
    """Per centre test (:data:`CENTRE_TESTS`), reading and (network, grid, N): over the n whose region
    counts (it recalls; every n on MNIST), each n's centre, lower and upper edge of the good 1/T range and
    its best cells' 1/T range (within 0.05 of the best), and how many decades the centres, the upper edges
    and the best cells' highest 1/T span (like the upper edge, the top of the best cells does not follow
    the optimiser's floor; ties for the best often run down to it); ``floor_n``: the n where the step-floor reruns
    (``reruns``: the summary of ``noise-floor.json``) moved the original's lowest recalling row with the
    floor ("follows the floor"), so that its lower edge, and with it the centre, is the optimiser's.
    Returns a list of rows (JSON-able)."""
    floor = {}
    for row in ((reruns or {}).get("edges") or {}).get("floor") or []:
        if row.get("reading") == "follows the floor":
            for label in FLOOR_READINGS.get(row["F"], ()):
                floor.setdefault(label, set()).add(row["n"])
    out = []
    for c in card["claims"]:
        if c["id"] not in CENTRE_TESTS:
            continue
        for label, g in c["readings"].items():
            groups = {}
            for p in g.get("per_n") or []:
                if not p.get("good_inv_T") or ("best_distance" in p and p["best_distance"] > T["recall_distance"]):
                    continue
                key = (p["network"], _filed(p["grid"]), p["N"])
                groups.setdefault(key, {}).setdefault(p["n"], p)  # an n once (a claim may list it twice)
            for (net, grid, N), by_n in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
                ps = [by_n[n] for n in sorted(by_n)]
                ns = [p["n"] for p in ps]
                out.append({
                    "claim": c["id"], "reading": label, "network": net, "grid": grid, "N": N, "n": ns,
                    "centre": [p["centre_inv_T"] for p in ps], "lower": [p["good_inv_T"][0] for p in ps],
                    "upper": [p["good_inv_T"][1] for p in ps], "best": [p["best_inv_T"] for p in ps],
                    "centre_decades": _decades([p["centre_inv_T"] for p in ps]),
                    "upper_decades": _decades([p["good_inv_T"][1] for p in ps]),
                    "best_decades": _decades([p["best_inv_T"][1] for p in ps]),
                    "floor_n": sorted(n for n in ns if net == "original" and n in floor.get(label, ()))})
    return out


# ------------------------------------------------------------------------------ float32 runs
def float32_runs(results):
    """The committed float32 blocks of the autoassociative task (no reading grades them: the readings are
    float64): per file, network, F, N and n, the runs and how many of them are not finite (overflow or
    NaN, the records' finite flag). Beside the claims about numerical trouble (alpha = 1/N needs no
    tuning; the original fails at larger n): the format the paper does not name."""
    rows = {}
    for stem, folder, line in _lines(results):
        if folder != "autoassociative" or line["block"].get("dtype") != "float32":
            continue
        for r in line["records"]:
            key = (stem, r["variant"], r.get("interaction"), r.get("N"), r["n"])
            row = rows.setdefault(key, [0, 0])
            row[0] += 1
            row[1] += not r.get("finite", True)
    return [{"file": k[0], "network": k[1], "F": k[2], "N": k[3], "n": k[4], "runs": v[0], "not_finite": v[1]}
            for k, v in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], str(kv[0][2]), kv[0][3], kv[0][4]))]
