"""The scorecard's rule book: how a measurement becomes *supported*, *refuted* or *undetermined*.

Every verdict of :mod:`damlite.paper.scorecard` follows the rules of :data:`RULES`, stated once
here in the words the book prints, with the tolerances of :data:`TOLERANCES`. The functions below
are those rules and nothing else:

* :func:`region`: the good region of one table of results (best cell, good cells, centre, reach,
  area, the grid edges it touches);
* :func:`centre_bounds`, :func:`reach_bounds`, :func:`area_bounds`: what a censored region still
  says about the true value (rule ``censoring``): an interval, open toward each edge it touches;
* :func:`judge`, :func:`span_bounds`, :func:`ratio_bounds`: a test on such an interval gives
  supported when every value in it passes, refuted when none does, undetermined otherwise
  (rule ``direction``);
* :func:`all_of`, :func:`merge_grids`, :func:`verdict_of`, :func:`bottom_line`: outcomes combined
  into one per n, per reading and per claim.

Chapter 6's summary rows (:func:`reading_rows`, :func:`load_readings`, :func:`convention_b`) are
read here too; they draw figures and grade nothing.

Readings of the original network's temperature:

* **A** (Krotov & Hopfield's convention): beta = 1/T**n outside F;
* **B** (the paper author's earliest code): beta = 1/T outside F, no power. For a
  homogeneous F, B's 1/T is A's 1/T to the power n: :func:`convention_b` relabels
  rows of A exactly (no new runs).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["EDGES", "NOT_COUNTED", "OUTCOMES", "READINGS", "REFUTED", "RULES", "SUPPORTED", "TOLERANCES", "UNDETERMINED",
           "all_of", "area_bounds", "bottom_line", "censored_on", "centre_bounds", "convention_b", "difference_bounds",
           "fraction_bounds", "judge",
           "load_readings", "merge_grids", "near", "near_bounds", "ratio_bounds", "reach_bounds", "reading_rows",
           "region", "rule_text", "span_bounds", "verdict_of"]

SUPPORTED, REFUTED, UNDETERMINED = "supported", "refuted", "undetermined"
#: The three outcomes of a test, of one n and of a verdict.
OUTCOMES = (SUPPORTED, REFUTED, UNDETERMINED)
#: An n that a claim does not speak about (e.g. no recall where it says "every n that recalls").
NOT_COUNTED = "not counted"

#: Every tolerance the rules use, stated once.
TOLERANCES = {
    "recall_distance": 0.5,  # a network recalls when its best cell is within this of perfect recall
    "good_distance": 0.5,  # a cell is good within this distance of the best cell
    "mnist_f1": 0.05,  # MNIST: a cell is good within this F1 of the best cell
    "near_factor": 3.0,  # "near" a value: within this factor either way
    "stable_decades": 0.5,  # "stable": centres spread over at most this many decades
    "moves_decades": 1.0,  # "moves": centres spread over at least this many decades
    "substantial_area": 1.0,  # "substantial": a good region of at least this many decades^2
    "lr_ratio": 1.5,  # "larger learning rates": the largest good rate at least this many times higher
    "N_factor": 2.0,  # "does not depend on N": centres within this factor
    "similar_fraction": 0.1,  # "similar" regions on one grid: good fractions within this
    "shrink_factor": 1.5,  # "by proportionally the same amount": shrink factors within this factor
    "jaccard": 0.5,  # "the same shape": at least this share of the good cells in common
    "paper_grid": (1e-3, 1.0),  # the paper's 1/T grid for the original network, in the reading's own 1/T
    "bootstrap": 200,  # resamples of the repeats per verdict
    "stable_share": 0.8,  # a verdict is stable when at least this share of resamples repeats it
}

#: A grid -> the grid whose rows it holds (rule "grids"): its blocks are read as that grid's.
EXTENDED = {"coarse-ext": "coarse"}

#: The rule book: (name, text). Each claim names the rules it uses; the page prints them.
RULES = (
    ("recall", "A network *recalls* at n when its best cell (the mean over repeats) is within 0.5 of "
               "perfect recall. On MNIST there is no such floor."),
    ("region", "The *good region* is the cells within 0.5 of the best cell's distance (0.05 of the best F1 "
               "on MNIST). Its *centre* is the geometric mean of the good cells' 1/T (or learning rates), its "
               "*reach* the largest good learning rate, its *area* the good cells' area in decades^2 (each "
               "cell as wide as the grid's spacing on both axes)."),
    ("censoring", "A good region that touches an edge of its grid is *censored* there (invT_low, invT_high, "
                  "lr_low, lr_high): it may go on past the edge. Its true centre then lies anywhere beyond the "
                  "measured one on that side, its true reach or area is at least the measured one."),
    ("direction", "A test gives *supported* when every value the censoring allows passes, *refuted* when "
                  "none does, *undetermined* otherwise. So censoring that could rescue a failing test (or "
                  "sink a passing one) leaves it undetermined; censoring that cannot change it does not "
                  "matter. This applies to every centre, reach, span, ratio, area and good fraction tested (a good "
                  "fraction is an area on its grid), and to differences of them."),
    ("tolerances", "\"Near\" a value is within a factor 3; \"stable\" a spread of centres of at most 0.5 "
                   "decades; \"moves\" at least 1 decade; \"substantial\" an area of at least 1 decade^2 "
                   "(the same on every grid); \"larger rates\" at least 1.5x the reach."),
    ("grids", "Every grid that measures a claim is used, and grids are merged the same way for every claim: "
              "each grid gives an outcome per n (or per claim, for a test across n); undetermined grids "
              "abstain; the others must agree, else the n is undetermined (grids disagree). The coarse grid "
              "extended to lower 1/T (coarse-ext) replaces the coarse grid where both exist: it holds the "
              "coarse grid's rows."),
    ("repeats", "Repeats of blocks with the same settings and grid are pooled (fresh seeds count as more "
                "repeats); different grids are never pooled."),
    ("verdict", "A verdict counts k supported / r refuted / u undetermined of the m values of n it covers: "
                "*supported* when all m are, *refuted* when any is, *undetermined* otherwise. An n the claim "
                "does not speak about (no recall where it says \"every n that recalls\", no good region "
                "on either side of a comparison) is listed as not counted."),
    ("concession", "Where the paper concedes that the normalized region shifts for n <= 5 (Sec. 5.2), a claim "
                   "about where that region lies across n or tasks is graded over n >= 10, the n its sentence is "
                   "about; its verdict over every n is shown beside it and does not count."),
    ("bootstrap", "Each verdict is recomputed on 200 seeded resamples of the repeats. The resampling is "
                  "paired: blocks that share patterns and initial memories (the same seed, N, patterns and "
                  "memories; every n, network and grid of a profile) draw the same repeats. A verdict that "
                  "fewer than 80 % of the resamples repeat is *unstable*."),
    ("noise floor", "A verdict that comes out otherwise when a block it reads is replaced by a rerun at rounding "
                    "level (one thread, the generic or NumPy kernel, float32) is *unstable* too, like one with a "
                    "low bootstrap share."),
    ("slices", "An MNIST slice (the paper's six 1/T at one learning rate, 0.03) is graded by the MNIST rules as "
               "a grid of one column (good: within 0.05 F1 of the slice's best); its verdicts say \"one learning "
               "rate\" and their margin, and the page lists the cells of the paper's grid it did not run."),
    ("identity", "Under reading A (and B for the learning-rate axis) the two networks are one network, the "
                 "original's 1/T being the normalized 1/T' divided by N. A claim that compares the two "
                 "networks there compares a network with itself: it is graded and shown, marked *identity*."),
    ("bottom line", "The bottom line counts the readings whose verdict is stable (by the bootstrap and the noise "
                    "floor) and not an identity: "
                    "*supported* when all of them support the claim, *only under* the ones that do when some "
                    "do, *refuted* when all refute it, *undetermined* when none supports it and one is "
                    "undetermined; with no such reading there is no bottom line."),
)
_RULE_NAMES = tuple(name for name, _ in RULES)


def rule_text(name):
    """The text of one rule of :data:`RULES`, by name."""
    for key, text in RULES:
        if key == name:
            return text
    raise ValueError(f"rule must be one of {_RULE_NAMES}, got {name!r}")


#: The grid edges a good region can touch, in the order :func:`region` reports them.
EDGES = ("invT_low", "invT_high", "lr_low", "lr_high")


def _spacing(values):
    """Each value's width on a log10 axis: the mean spacing of its neighbours (the grid's step)."""
    logs = np.log10(np.asarray(values, dtype=float))
    if len(logs) < 2:
        return np.ones_like(logs)
    edges = np.concatenate(([1.5 * logs[0] - 0.5 * logs[1]], (logs[1:] + logs[:-1]) / 2,
                            [1.5 * logs[-1] - 0.5 * logs[-2]]))
    return np.diff(edges)


def region(z, its, lrs, *, tolerance=0.5, lower_is_better=True):
    """The good region of one mean table ``z`` (n_T x n_lr): best, mask, centre, reach, area, censoring.

    A cell is good when its mean is within ``tolerance`` of the best cell's; a cell with
    no value (a failed run) is never good. ``censored`` lists the grid edges the good
    region touches (:data:`EDGES`). ``area`` is the good cells' area in decades^2, each
    cell spanning the grid's log10 spacing on both axes. Returns a dict (``mask`` is a
    boolean array).
    """
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
    cell_area = np.outer(_spacing(its), _spacing(lrs))
    return {
        "best": best, "best_inv_T": float(its[i]), "best_lr": float(lrs[j]),
        "good_fraction": float(mask.mean()), "area": float(cell_area[mask].sum()),
        "centre_inv_T": float(np.exp(np.log(its[rows]).mean())) if len(rows) else float("nan"),
        "centre_lr": float(np.exp(np.log(lrs[cols]).mean())) if len(cols) else float("nan"),
        "good_inv_T": (float(its[rows].min()), float(its[rows].max())) if len(rows) else None,
        "good_lr_max": float(lrs[cols].max()) if len(cols) else float("nan"),
        "censored": censored, "mask": mask,
    }


def censored_on(entry, axis):
    """Whether a region is censored on ``axis`` ("invT" or "lr")."""
    return any(edge.startswith(axis) for edge in entry["censored"])


# ----------------------------------------------------------------------------- intervals
def centre_bounds(entry, axis="invT"):
    """(lo, hi): where the true centre on ``axis`` can lie, given the censoring (rule ``censoring``).

    The measured centre, opened to 0 when the region touches the axis's low edge and to
    infinity when it touches the high edge.
    """
    c = entry["centre_inv_T" if axis == "invT" else "centre_lr"]
    cens = entry["censored"]
    return (0.0 if f"{axis}_low" in cens else c, math.inf if f"{axis}_high" in cens else c)


def reach_bounds(entry):
    """(lo, hi) of the true largest good learning rate: at least the measured one when censored at the top."""
    r = entry["good_lr_max"]
    return r, (math.inf if "lr_high" in entry["censored"] else r)


def area_bounds(entry):
    """(lo, hi) of the true good area in decades^2: at least the measured one when censored anywhere."""
    a = entry["area"]
    return a, (math.inf if entry["censored"] else a)


def fraction_bounds(entry):
    """(lo, hi) of the true good fraction of a grid: at least the measured one when censored anywhere.

    The good fraction is the good region's area over its grid's area, so rule ``censoring`` opens
    it upward exactly as :func:`area_bounds` opens the area.
    """
    f = entry["good_fraction"]
    return f, (math.inf if entry["censored"] else f)


def difference_bounds(a, b):
    """(lo, hi) of x - y for values known to lie in the intervals ``a`` (x) and ``b`` (y)."""
    return a[0] - b[1], a[1] - b[0]


def judge(bounds, lo=-math.inf, hi=math.inf):
    """The outcome of "x lies in [lo, hi]" when x is only known to lie in ``bounds`` (rule ``direction``)."""
    x_lo, x_hi = bounds
    if lo <= x_lo and x_hi <= hi:
        return SUPPORTED
    if x_hi < lo or x_lo > hi:
        return REFUTED
    return UNDETERMINED


def near_bounds(bounds, target, factor=None):
    """The outcome of "within ``factor`` of ``target``" for a value known to lie in ``bounds``
    (``factor``: ``TOLERANCES["near_factor"]`` when not given, read at the call)."""
    factor = TOLERANCES["near_factor"] if factor is None else factor
    return judge(bounds, target / factor, target * factor)


def near(x, target, factor=None):
    """Within ``factor`` of ``target`` (both positive; ``factor`` as in :func:`near_bounds`)."""
    factor = TOLERANCES["near_factor"] if factor is None else factor
    return target / factor <= x <= target * factor


def _log10(x):
    return -math.inf if x <= 0 else math.inf if math.isinf(x) else math.log10(x)


def span_bounds(intervals):
    """(least, most) decades the true centres can span, each known to lie in its interval."""
    lo = [_log10(a) for a, _ in intervals]
    hi = [_log10(b) for _, b in intervals]
    return max(0.0, max(lo) - min(hi)), max(hi) - min(lo)


def ratio_bounds(top, bottom):
    """(lo, hi) of top / bottom for values known to lie in the intervals ``top`` and ``bottom``."""
    lo = _log10(top[0]) - _log10(bottom[1])
    hi = _log10(top[1]) - _log10(bottom[0])
    return 10.0 ** lo if lo > -math.inf else 0.0, 10.0 ** hi if hi < math.inf else math.inf


# ----------------------------------------------------------------------------- combining
def all_of(outcomes):
    """Outcome of a conjunction: refuted if any part is, undetermined if any part is, else supported."""
    outcomes = list(outcomes)
    if REFUTED in outcomes:
        return REFUTED
    return UNDETERMINED if UNDETERMINED in outcomes else SUPPORTED


def merge_grids(outcomes):
    """One outcome from several grids (rule ``grids``): ``outcomes`` maps grid -> outcome.

    Returns (outcome, note). Undetermined grids abstain; the others must agree, else the
    result is undetermined and the note names the disagreeing grids. Grids where the n is
    not counted abstain too; an n not counted on every grid is not counted.
    """
    outcomes = {g: o for g, o in outcomes.items() if o != NOT_COUNTED} or None
    if outcomes is None:
        return NOT_COUNTED, ""
    decided = {g: o for g, o in outcomes.items() if o != UNDETERMINED}
    if not decided:
        return UNDETERMINED, ("undetermined on every grid (" + ", ".join(outcomes) + ")") if len(outcomes) > 1 else ""
    if len(set(decided.values())) > 1:
        return UNDETERMINED, "grids disagree: " + ", ".join(f"{g} {o}" for g, o in decided.items())
    return next(iter(decided.values())), ""


def verdict_of(outcomes):
    """The verdict of a reading from its per-n outcomes (rule ``verdict``): a dict with the counts.

    Outcomes other than the three of :data:`OUTCOMES` (an n not counted) are left out.
    """
    outcomes = [o for o in outcomes if o in OUTCOMES]
    counts = {o: outcomes.count(o) for o in OUTCOMES}
    total = len(outcomes)
    if not total:
        word = "not tested"
    elif counts[REFUTED]:
        word = REFUTED
    elif counts[UNDETERMINED]:
        word = UNDETERMINED
    else:
        word = SUPPORTED
    return {"verdict": word, "supported": counts[SUPPORTED], "refuted": counts[REFUTED],
            "undetermined": counts[UNDETERMINED], "total": total}


def bottom_line(readings, stable_share=TOLERANCES["stable_share"]):
    """The bottom line of a claim from its verdicts per reading (rule ``bottom line``).

    ``readings``: label -> graded reading (``verdict``, ``bootstrap_same``, ``identity``, and ``noise``: why a
    rounding-level rerun turns it, if one does; rule ``noise floor``).
    Returns {"verdict", "reason", "counted"}; lists of readings are joined with "; " (a
    reading's label may hold a comma).
    """
    counted, left_out = {}, []
    for label, g in readings.items():
        if g["verdict"] in ("not tested", "missing input"):
            continue
        if g.get("identity"):
            left_out.append(f"{label} (identity)")
        elif g.get("bootstrap_same") is not None and g["bootstrap_same"] < stable_share:
            left_out.append(f"{label} (unstable, {g['bootstrap_same']:.0%})")
        elif g.get("noise"):
            left_out.append(f"{label} (unstable at rounding level)")
        else:
            counted[label] = g["verdict"]
    missing = [label for label, g in readings.items() if g["verdict"] == "missing input"]
    aside = ". Left out: " + "; ".join(left_out) if left_out else ""
    aside += ". Missing input: " + "; ".join(missing) if missing else ""
    if not counted:
        if missing:
            return {"verdict": "missing input", "reason": "its inputs are missing" + aside, "counted": []}
        if left_out:
            return {"verdict": "no bottom line", "reason": "no reading is stable and not an identity" + aside,
                    "counted": []}
        return {"verdict": "not tested", "reason": "no reading was run for this claim", "counted": []}
    by = {o: [k for k, v in counted.items() if v == o] for o in OUTCOMES}
    said = ". ".join(f"{o.capitalize()} under {'; '.join(by[o])}" for o in OUTCOMES if by[o]) + aside
    if len(by[SUPPORTED]) == len(counted):
        word = SUPPORTED
    elif by[SUPPORTED]:
        word = "only under " + "; ".join(by[SUPPORTED])
    elif len(by[REFUTED]) == len(counted):
        word = REFUTED
    else:
        word = UNDETERMINED
    return {"verdict": word, "reason": said, "counted": list(counted)}


# ----------------------------------------------------------------------------- chapter 6's rows
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
