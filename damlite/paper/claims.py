"""The paper's claims about its autoassociative sweeps, graded from summary rows.

A *reading* is one way the paper's experiment may have been run; each has its
summary rows (:func:`damlite.sweeps.experiments.summarize`: one row per network and n
with the good region's centre, range and size). :func:`grade` turns them into a
verdict per claim: "reproduced", "partly", "not reproduced" or "not tested",
with the numbers behind it. Tolerances are stated once, here, and so are the
scorecard's grading rules (:data:`RULES`, :func:`region`, :func:`merge_grids`), which
:mod:`damlite.paper.scorecard` applies to every claim of the paper.

Readings of the original network's temperature:

* **A** (Krotov & Hopfield's convention): beta = 1/T**n outside F;
* **B** (the paper author's earliest code): beta = 1/T outside F, no power. For a
  homogeneous F, B's 1/T is A's 1/T to the power n: :func:`convention_b` relabels
  rows of A exactly (no new runs).
"""
from __future__ import annotations

import math

__all__ = ["CLAIMS", "EDGES", "RULES", "SHORT", "TOLERANCES", "censored_on", "convention_b", "grade", "ledger_markdown",
           "merge_grids", "near", "reading_rows", "region", "verdict_of"]

#: How close counts: "near" a value is within this factor; "stable" is a spread of the
#: good region's centre over n of at most this many decades; "gone" is no cell within
#: ``gone_distance`` of perfect recall; "substantial" is at least this fraction of the grid.
TOLERANCES = {
    "near_factor": 3.0,
    "stable_decades": 0.5,
    "moves_decades": 1.0,
    "gone_distance": 0.5,
    "substantial_fraction": 0.1,
    "lr_ratio": 1.5,
    "N_factor": 2.0,
    "paper_grid_b": (1e-3, 1.0),  # a three-decade grid around the paper's 1e-2 (its grid is not given)
    "mnist_f1": 0.05,  # MNIST: a cell is good within this F1 of the best cell
}

#: (key, the paper's claim in our words, the networks and n it concerns)
CLAIMS = [
    ("orig_location", "original: good region near 1/T = 1e-2 (n <= 5)"),
    ("orig_lr", "original: good region near learning rate 0.5 (n <= 5)"),
    ("orig_moves", "original: the good region moves considerably with n"),
    ("orig_gone", "original: the good region is gone from the grid by n = 20"),
    ("norm_stable", "normalized: the good region stays put in 1/T' for n >= 10, near 1/T' = 0.9"),
    ("norm_substantial", "normalized: the good region stays substantial for large n"),
    ("norm_lr", "normalized: the good region reaches larger learning rates than the original's"),
    ("norm_N", "normalized: the good region does not depend on N (100 vs 250)"),
]

#: A short label per claim, for the rows of :func:`ledger_markdown` (the full text is
#: listed under the table).
SHORT = {
    "orig_location": "orig.: 1/T near 1e-2",
    "orig_lr": "orig.: rate near 0.5",
    "orig_moves": "orig.: moves with n",
    "orig_gone": "orig.: gone by n = 20",
    "norm_stable": "norm.: stays near 0.9",
    "norm_substantial": "norm.: substantial",
    "norm_lr": "norm.: larger rates",
    "norm_N": "norm.: same for any N",
}


def _near(x, target, factor):
    return target / factor <= x <= target * factor


def _verdict(hits, total):
    if total == 0:
        return "not tested"
    if hits == total:
        return "reproduced"
    return "partly" if hits else "not reproduced"


def _by(rows, variant, N=100):
    return {r["n"]: r for r in rows if r["variant"] == variant and r.get("N", N) == N}


def convention_b(rows):
    """Rows of reading A with the original network's 1/T relabelled as 1/T_B = (1/T_A)**n."""
    out = []
    for r in rows:
        if r["variant"] != "original":
            out.append(dict(r))
            continue
        n = r["n"]
        r = dict(r)
        for key in ("best_inv_temperature", "good_inv_temperature_min", "good_inv_temperature_max",
                    "good_inv_temperature_center"):
            r[key] = float(r[key]) ** n
        out.append(r)
    return out


def grade(rows, *, reading="A", rows_other_N=None, tol=TOLERANCES):
    """Verdicts for :data:`CLAIMS` from one reading's summary rows (one grid, N = 100).

    ``reading="B"`` reads the original network's 1/T as 1/T_B (pass rows already
    relabelled by :func:`convention_b`): "gone from the grid" then means the good
    region lies outside the paper-like grid ``tol["paper_grid_b"]``.
    ``rows_other_N``: rows at N = 250 for the N claim. Returns a list of dicts
    (key, claim, verdict, detail).
    """
    orig, norm = _by(rows, "original"), _by(rows, "normalized")
    f = tol["near_factor"]
    out = []

    def add(key, hits, total, detail):
        text = dict(CLAIMS)[key]
        out.append({"key": key, "claim": text, "verdict": _verdict(hits, total), "detail": detail})

    small = [n for n in sorted(orig) if n <= 5]
    ok = [n for n in small if _near(orig[n]["good_inv_temperature_center"], 1e-2, f)]
    add("orig_location", len(ok), len(small), ", ".join(
        f"n={n}: {orig[n]['good_inv_temperature_center']:.2g}" for n in small))
    ok = [n for n in small if _near(orig[n]["good_learning_rate_center"], 0.5, f)]
    add("orig_lr", len(ok), len(small), ", ".join(
        f"n={n}: {orig[n]['good_learning_rate_center']:.2g}" for n in small))

    def spread(table, ns):
        logs = [math.log10(table[n]["good_inv_temperature_center"]) for n in ns]
        return max(logs) - min(logs) if logs else float("nan")

    ns_o = sorted(orig)
    s_o = spread(orig, ns_o)
    add("orig_moves", int(s_o >= tol["moves_decades"]) if ns_o else 0, 1 if len(ns_o) > 1 else 0,
        f"centre spans {s_o:.1f} decades over n = {ns_o[0]}..{ns_o[-1]}" if len(ns_o) > 1 else "")

    big = [n for n in ns_o if n >= 20]
    if reading == "B":
        lo, hi = tol["paper_grid_b"]
        gone = [n for n in big if orig[n]["good_inv_temperature_max"] < lo or orig[n]["good_inv_temperature_min"] > hi]
        detail = ", ".join(f"n={n}: good 1/T_B in [{orig[n]['good_inv_temperature_min']:.1g}, "
                           f"{orig[n]['good_inv_temperature_max']:.1g}]" for n in big)
    else:
        gone = [n for n in big if orig[n]["best"] > tol["gone_distance"]]
        detail = ", ".join(f"n={n}: best distance {orig[n]['best']:.2f}" for n in big)
    add("orig_gone", len(gone), len(big), detail)

    large = [n for n in sorted(norm) if n >= 10]
    # an n passes when some cell recalls (best within gone_distance) and the good region's
    # centre is near 0.9; the centre of cells that all fail says nothing. "reproduced" also
    # needs the centres to stay within stable_decades of each other.
    live = [n for n in large if norm[n]["best"] <= tol["gone_distance"]]
    near = [n for n in live if _near(norm[n]["good_inv_temperature_center"], 0.9, f)]
    s_n = spread(norm, live)
    hits = len(near) - int(len(near) == len(large) and len(live) > 1 and s_n > tol["stable_decades"])
    dead = [n for n in large if n not in live]
    detail = ""
    if large:
        detail = ", ".join(f"n={n}: {norm[n]['good_inv_temperature_center']:.2g}" for n in live)
        detail += f" (spread {s_n:.2f} decades)" if len(live) > 1 else ""
        if dead:
            detail += f"; no cell within {tol['gone_distance']} of perfect recall at n = {', '.join(map(str, dead))}"
    add("norm_stable", hits, len(large), detail)

    # an n counts only where some cell recalls: the cells within gone_distance of a best
    # cell that itself fails are not a good region, whatever fraction of the grid they cover
    sub = [n for n in live if norm[n]["good_fraction"] >= tol["substantial_fraction"]]
    add("norm_substantial", len(sub), len(large), ", ".join(
        f"n={n}: {norm[n]['good_fraction']:.2f}" if n in live else f"n={n}: no recall"
        for n in large))

    both = [n for n in sorted(norm) if n in orig]
    wider = [n for n in both if norm[n]["good_learning_rate_center"]
             >= tol["lr_ratio"] * orig[n]["good_learning_rate_center"]]
    add("norm_lr", len(wider), len(both), ", ".join(
        f"n={n}: {norm[n]['good_learning_rate_center']:.2g} vs {orig[n]['good_learning_rate_center']:.2g}"
        for n in both))

    if rows_other_N:
        other = _by(rows_other_N, "normalized", N=rows_other_N[0].get("N", 250))
        common = [n for n in sorted(norm) if n in other]
        recalls = {n for n in common
                   if max(norm[n]["best"], other[n]["best"]) <= tol["gone_distance"]}  # at both N
        same = [n for n in sorted(recalls) if _near(other[n]["good_inv_temperature_center"],
                                                    norm[n]["good_inv_temperature_center"], tol["N_factor"])]
        add("norm_N", len(same), len(common), ", ".join(
            f"n={n}: {norm[n]['good_inv_temperature_center']:.2g} vs {other[n]['good_inv_temperature_center']:.2g}"
            + ("" if n in recalls else " (no recalling cell at N = 100 or 250)") for n in common))
    else:
        add("norm_N", 0, 0, "not run for this reading")
    return out


def reading_rows(records, *, grid="coarse", dtype="float64", N=100, **match):
    """Summary rows of the records that match (grid, dtype, N and any settings in ``match``)."""
    from ..sweeps.experiments import summarize  # noqa: PLC0415

    sel = [r for r in records if r["grid"] == grid and r["dtype"] == dtype and r.get("N") == N
           and all(r.get(k) == v for k, v in match.items())]
    return summarize(sel) if sel else []


#: The readings drawn in chapter 6: label -> (result file stem, settings the records must match).
READINGS = {
    "A, homogeneous F": ("autoassociative-full", {"interaction": "polynomial"}),
    "A, leak +0.01x (author's code)": ("autoassociative-leak", {"leak": "code", "epsilon": 0.01, "memories": 100}),
    "A, leak -0.01x (paper's sign)": ("autoassociative-leak", {"leak": "paper", "epsilon": 0.01, "memories": 100}),
    "A, leak +x (author's slope 1)": ("autoassociative-leak", {"leak": "code", "epsilon": 1.0, "memories": 100}),
    "A, leak +0.01x, K = 20": ("autoassociative-leak", {"leak": "code", "epsilon": 0.01, "memories": 20}),
    "A, rectified, no leak": ("autoassociative-rectified", {"interaction": "rectified_polynomial"}),
}


def load_readings(directory, *, grid="coarse", N=100):
    """(records per result file, summary rows per reading) from a results directory.

    Files that are absent give no records; a reading without records is left out
    (the chapter says which). Convention B is added as "B, homogeneous F".
    """
    from pathlib import Path  # noqa: PLC0415

    from ..sweeps.experiments import load_records  # noqa: PLC0415

    records = {}
    for stem, _ in READINGS.values():
        path = Path(directory) / f"{stem}.jsonl"
        if stem not in records:
            records[stem] = load_records(path) if path.exists() else []
    rows = {}
    for label, (stem, match) in READINGS.items():
        r = reading_rows(records[stem], grid=grid, N=N, **match)
        if r:
            rows[label] = r
    if "A, homogeneous F" in rows:
        rows["B, homogeneous F"] = convention_b(rows["A, homogeneous F"])
    return records, rows


def ledger_markdown(graded, *, headers=None, links=None, full_claims=True):
    """A Markdown table: one row per claim (its :data:`SHORT` label), one column per reading.

    ``graded``: label -> :func:`grade` output. ``headers``: label -> a short column
    heading (default: the label); when given, a line under the table says which reading
    each heading stands for. The full text of every claim follows as a list, so the
    table stays narrow (short cells, no long headings); ``full_claims=False`` leaves the
    list out (a second table on a page that already shows it). ``links``: claim key ->
    text of an extra "evidence" column.
    """
    marks = {"reproduced": "reproduced", "partly": "partly", "not reproduced": "**not**", "not tested": "–"}
    labels = list(graded)
    heads = [(headers or {}).get(label, label) for label in labels]
    head = "| claim | " + " | ".join(heads) + (" | evidence |" if links else " |")
    rule = "|---" * (len(labels) + 1 + bool(links)) + "|"
    lines = [head, rule]
    for key, _ in CLAIMS:
        cells = []
        for label in labels:
            hit = next(g for g in graded[label] if g["key"] == key)
            cells.append(marks[hit["verdict"]])
        link = f" | {links.get(key, '')}" if links else ""
        lines.append(f"| {SHORT[key]} | " + " | ".join(cells) + link + " |")
    lines.append("")
    if headers:
        lines.append("Columns: " + "; ".join(
            f"**{h}**: {label}" for h, label in zip(heads, labels) if h != label) + ".")
        lines.append("")
    if full_claims:
        lines += ["The claims in full:", ""]
        lines += [f"- *{SHORT[key]}*: {text}" for key, text in CLAIMS]
    return "\n".join(lines).rstrip("\n")


# --------------------------------------------------------------------------------------
# The scorecard's grading rules (2026-11-26, commit fab6d78), stated once. `damlite.paper.scorecard` applies them
# to every claim of the paper; the functions below are the rules, nothing else.
# --------------------------------------------------------------------------------------

#: The rules every verdict of the scorecard follows, in the words the page prints.
RULES = (
    "A network *recalls* at n when its best cell (the mean over repeats) is within "
    "0.5 of perfect recall; on MNIST there is no such floor.",
    "The *good region* is the cells within 0.5 of the best cell's distance (0.05 of the "
    "best F1 on MNIST); its *centre* is the geometric mean of the good cells' 1/T "
    "(and learning rates).",
    "A good region that touches an edge of its grid is *censored* on that edge "
    "(invT_low, invT_high, lr_low, lr_high): its true extent lies beyond the grid.",
    "A censored centre never passes a location claim on the censored axis; it may pass a "
    "claim of movement or absence when the censoring can only make the measured effect "
    "larger.",
    "\"Near\" a value is within a factor 3; \"stable\" a spread of at most 0.5 decades; "
    "\"moves\" at least 1 decade; \"substantial\" at least 10 % of the grid.",
    "Grids of one claim are merged per n: an n passes when it passes on every grid that "
    "measures it uncensored on the claim's axis; if every grid is censored it fails; grids "
    "that disagree are listed, and the n fails.",
    "Repeats of blocks with the same settings and grid are pooled (fresh seeds count as "
    "more repeats); different grids are never pooled.",
    "A verdict is *reproduced* when all m values of n pass, *partly* (k of m) when some "
    "do, *not reproduced* when none do, *not tested* when nothing was run.",
    "Each verdict is recomputed on bootstrap resamples of the repeats (200, seeded); the "
    "share of resamples that give the same verdict is printed beside it.",
    "The bottom line is *reproduced* when every reading that was run reproduces the "
    "claim, *only under* the readings that do when some do, *partly* when the best "
    "reading gives partly, *not reproduced* otherwise.",
)

#: The grid edges a good region can touch, in the order :func:`region` reports them.
EDGES = ("invT_low", "invT_high", "lr_low", "lr_high")


def verdict_of(hits, total):
    """The verdict word for k of m passing values of n (see :data:`RULES`)."""
    return _verdict(hits, total)


def region(z, its, lrs, *, tolerance=0.5, lower_is_better=True):
    """The good region of one mean table ``z`` (n_T x n_lr): best, mask, centre, censoring.

    A cell is good when its mean is within ``tolerance`` of the best cell's; a cell with
    no value (a failed run) is never good. ``censored`` lists the grid edges the good
    region touches (:data:`EDGES`). Returns a dict (``mask`` is a boolean array).
    """
    import numpy as np  # noqa: PLC0415

    z = np.asarray(z, dtype=float)
    its, lrs = np.asarray(its, dtype=float), np.asarray(lrs, dtype=float)
    filled = np.where(np.isfinite(z), z, np.inf if lower_is_better else -np.inf)
    flat = int(np.argmin(filled) if lower_is_better else np.argmax(filled))
    i, j = np.unravel_index(flat, z.shape)
    best = float(z[i, j])
    mask = np.isfinite(z) & (np.abs(filled - best) <= tolerance)
    rows, cols = np.nonzero(mask)
    censored = [edge for edge, hit in zip(EDGES, (mask[0].any(), mask[-1].any(),
                                                  mask[:, 0].any(), mask[:, -1].any())) if hit]
    return {
        "best": best, "best_inv_T": float(its[i]), "best_lr": float(lrs[j]),
        "good_fraction": float(mask.mean()),
        "centre_inv_T": float(np.exp(np.log(its[rows]).mean())) if len(rows) else float("nan"),
        "centre_lr": float(np.exp(np.log(lrs[cols]).mean())) if len(cols) else float("nan"),
        "good_inv_T": (float(its[rows].min()), float(its[rows].max())) if len(rows) else None,
        "good_lr_max": float(lrs[cols].max()) if len(cols) else float("nan"),
        "censored": censored, "mask": mask,
    }


def censored_on(entry, axis):
    """Whether a region's centre is censored on ``axis`` ("invT" or "lr")."""
    return any(edge.startswith(axis) for edge in entry["censored"])


def near(x, target, factor=TOLERANCES["near_factor"]):
    """Within ``factor`` of ``target`` (both positive)."""
    return _near(x, target, factor)


def merge_grids(votes):
    """One n's verdict from several grids (see :data:`RULES`).

    ``votes``: grid -> (passes, censored) for the claim's axis. Returns (passes,
    note): the uncensored grids must all pass; disagreeing grids and an n censored
    on every grid fail, with a note that says which.
    """
    if len(votes) == 1:
        ok, cens = next(iter(votes.values()))
        return ok and not cens, "censored" if cens else ""
    clean = {g: ok for g, (ok, cens) in votes.items() if not cens}
    if not clean:
        return False, "censored on every grid (" + ", ".join(votes) + ")"
    if len(set(clean.values())) > 1:
        return False, "grids disagree: " + ", ".join(
            f"{g} {'passes' if ok else 'fails'}" for g, ok in clean.items())
    return next(iter(clean.values())), ""
