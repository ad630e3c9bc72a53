"""The tests behind the scorecard's claims: from a reading's tables to one outcome per n.

Each function takes a :class:`damlite.paper.tables.Reading` and returns ``(items, entries)``:
an *item* is one n (or one test across n) with its outcome (supported, refuted, undetermined
or not counted) and the outcome of each grid that measured it; an *entry* is the JSON form of
one good region behind it. The outcomes follow :mod:`damlite.paper.claims` (the rule book);
:mod:`damlite.paper.scorecard` names the claims, gives each its test and builds the card.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import claims as C
from .claims import NOT_COUNTED, REFUTED, SUPPORTED, UNDETERMINED
from .tables import MNIST_N, load_tables

__all__ = ["CONTROL", "SETTINGS", "all_finite", "across_n", "headline", "headline_presence", "leak_behaves", "location_readings",
           "n2_learnable", "norm_N", "norm_lr", "norm_shift_small", "norm_stable", "norm_substantial", "orig_degrades",
           "orig_gone", "orig_increased", "orig_location", "orig_moves", "overflow_not_cause", "per_n", "public",
           "recalls", "reuse_hparams", "secondary", "secondary_tables", "theory_exponential", "theory_homogeneous",
           "theory_overflow"]

T = C.TOLERANCES
#: The secondary autoassociative settings (coarse grid, reading A, 3 repeats), each against the
#: control's repeats 0-2 (same patterns and initial memories).
SETTINGS = {"decay 1.0": {"lr_decay": 1.0}, "momentum 0.5": {"momentum": 0.5},
            "momentum 0.9": {"momentum": 0.9}, "m = 2": {"error_exponent": 2},
            "m = 4": {"error_exponent": 4}}
CONTROL = {"lr_decay": 0.999, "momentum": 0.0, "error_exponent": 1}


# ------------------------------------------------------------------------------ entries
def recalls(e):
    """Whether a region recalls (rule ``recall``): its best cell within 0.5 of perfect recall."""
    return e is not None and e["best"] <= T["recall_distance"]


def _r(x, digits=4):
    return None if x is None or not math.isfinite(x) else float(f"{x:.{digits}g}")


#: The *best cells* of a region: within this of the best cell's mean (distance or F1), as in the location
#: readings; where many cells tie for the best, one best cell's place is arbitrary, their 1/T range is not.
BEST_CELLS = 0.05


def _best_cells(e):
    """[lowest, highest] 1/T of the rows holding a best cell (within :data:`BEST_CELLS` of the best)."""
    z = e["table"].mean
    lower = e.get("metric", "distance") == "distance"
    fill = np.where(np.isfinite(z), z, np.inf if lower else -np.inf)
    rows = np.nonzero((np.abs(fill - e["best"]) <= BEST_CELLS).any(axis=1))[0]
    its = e["table"].its
    return [_r(float(its[rows].min())), _r(float(its[rows].max()))] if len(rows) else None


def public(e, outcome, note="", item=None):
    """The JSON form of an entry (see the module docstring)."""
    t = e["table"]
    best_key = "best_distance" if e.get("metric", "distance") == "distance" else "best_f1"
    out = {"item": item, "network": e["network"], "n": e["n"], "N": e["N"], "grid": e["grid"],
           "file": ", ".join(t.files), best_key: _r(e["best"]), "good_fraction": _r(e["good_fraction"]),
           "area": _r(e["area"]), "centre_inv_T": _r(e["centre_inv_T"]), "centre_lr": _r(e["centre_lr"]),
           "good_inv_T": [_r(x) for x in e["good_inv_T"]] if e["good_inv_T"] else None,
           "reach_lr": _r(e["good_lr_max"]), "best_inv_T": _best_cells(e), "repeats": int(len(t.stack)),
           "censored": list(e["censored"]), "outcome": outcome}
    if note:
        out["note"] = note
    return out


def _item(label, n, outcome, grids=None, note="", margin=None):
    out = {"item": label, "n": n, "outcome": outcome, "grids": grids or {}}
    if note:
        out["note"] = note
    if margin is not None:
        out["margin"] = margin
    return out


def _add_row(items, entries, label, n, votes, shown):
    """One graded row from its grids' ``votes`` (merged by :func:`C.merge_grids`) into ``items``, and its shown
    entries ``(entry, outcome, note)`` into ``entries``."""
    outcome, merge_note = C.merge_grids(votes)
    items.append(_item(label, n, outcome, votes, merge_note))
    entries += [public(e, o, note, label) for e, o, note in shown]


def _interval(bounds):
    lo, hi = bounds
    return (f"{lo:.2g}" if lo > 0 else "0") + ".." + (f"{hi:.2g}" if math.isfinite(hi) else "inf")


def _past(e, axis="invT"):
    """Words for the edges a region runs past on ``axis``: the direction its true centre may lie."""
    t = e["table"]
    values = t.its if axis == "invT" else t.lrs
    name = ("1/T'" if e["network"] == "normalized" else "1/T") if axis == "invT" else "rate"
    out = [f"past the low {name} edge {values[0]:.2g} (lower)" for c in e["censored"] if c == f"{axis}_low"]
    out += [f"past the high {name} edge {values[-1]:.2g} (higher)" for c in e["censored"] if c == f"{axis}_high"]
    return ("; runs " + " and ".join(out)) if out else ""


# ------------------------------------------------------------------------------ frames
def per_n(reading, network, ns, grids, test, N=100):
    """Grade each n on each grid with ``test(entry) -> (outcome, note)``, merged by rule ``grids``.

    The outcome may be ``NOT_COUNTED`` (the claim does not speak about this n); ``test`` may
    return None: the grid does not measure the claim. Returns (items, entries).
    """
    items, entries = [], []
    for n in ns:
        votes, shown = {}, []
        for g in grids:
            e = reading.entry(network, n, g, N)
            if e is None:
                continue
            got = test(e)
            if got is None:
                continue
            votes[g], note = got
            shown.append((e, votes[g], note))
        if not votes:
            continue
        _add_row(items, entries, f"n = {n}" + (f", N = {N}" if N not in (100, MNIST_N) else ""), n, votes, shown)
    return items, entries


def across_n(reading, network, grids, select, test, label, N=100):
    """One test over several n per grid (``test(entries) -> (outcome, note)``), merged by rule ``grids``.

    ``select(n, entry)``: the n that take part. A grid needs two of them.
    """
    votes, entries, notes = {}, [], []
    for g in grids:
        es = [reading.entry(network, n, g, N) for n in reading.ns(network, g, N)]
        es = [e for e in es if e is not None and select(e["n"], e)]
        if len(es) < 2:
            continue
        votes[g], note = test(es)
        notes.append(f"{g}: {note}")
        entries += [public(e, votes[g], "", label) for e in es]  # the item's note says what decided it
    if not votes:
        return [], []
    outcome, merge_note = C.merge_grids(votes)
    return [_item(label, None, outcome, votes, "; ".join(notes + ([merge_note] if merge_note else [])))], entries


def _coarse(*more):
    """The coarse grid (its extension, coarse-ext, where that ran: rule ``grids``) and ``more``."""
    return ("coarse",) + more


# ------------------------------------------------------------------------------ the original network
def orig_location(r):
    """Both halves of the Sec. 5.1 sentence, one centre test: (1/T, rate) near (1e-2, 0.5)."""
    def test(e):
        if not recalls(e):
            return REFUTED, "no recalling cell"
        bt, bl = C.centre_bounds(e, "invT"), C.centre_bounds(e, "lr")
        ot, ol = C.near_bounds(bt, 1e-2), C.near_bounds(bl, 0.5)
        lo, hi = e["good_inv_T"]
        return C.all_of([ot, ol]), (f"centre 1/T {_interval(bt)} ({ot}), rate {_interval(bl)} ({ol}); "
                                    f"good 1/T {lo:.2g} to {hi:.2g}{_past(e)}")
    return per_n(r, "original", [n for n in r.ns("original") if n <= 5], _coarse("fine"), test)


def orig_moves(r):
    """Over the n that recall: the centres (rule ``censoring``) span at least 1 decade."""
    def test(es):
        least, most = C.span_bounds([C.centre_bounds(e, "invT") for e in es])
        o = C.judge((least, most), T["moves_decades"])
        ns = [e["n"] for e in es]
        return o, f"centres span {least:.2f} to {most:.2f} decades over n = {', '.join(map(str, ns))}"
    return across_n(r, "original", _coarse("fine"), lambda n, e: recalls(e), test, "n that recall")


def orig_degrades(r):
    """Per n that recalls: the highest-rate column, over the good region's rows, is worse by > 0.5."""
    def test(e):
        if not recalls(e):
            return NOT_COUNTED, "no recalling cell"
        z, mask = e["table"].mean, e["mask"]
        top = float(np.nanmean(z[mask.any(axis=1), -1]))
        ok = top > e["best"] + T["good_distance"]
        return (SUPPORTED if ok else REFUTED), f"highest rate {top:.2f} vs best {e['best']:.2f}"
    return per_n(r, "original", r.ns("original"), _coarse("fine"), test)


def _gone_test(e):
    """No recalling cell whose 1/T lies in the paper's grid (1e-3 .. 1, in the reading's own 1/T)."""
    t = e["table"]
    lo, hi = T["paper_grid"]
    rows = (t.its >= lo * 0.999) & (t.its <= hi * 1.001)
    if not rows.any():
        return None  # this grid has no row on the paper's grid
    best = float(np.nanmin(t.mean[rows]))
    ok = best > T["recall_distance"]
    return (SUPPORTED if ok else REFUTED), f"best on the paper's grid {best:.2f}"


def orig_gone(r):
    """Per n >= 20: no recalling cell with 1/T on the paper's grid, [1e-3, 1] in the reading's own 1/T."""
    return per_n(r, "original", [n for n in r.ns("original") if n >= 20], _coarse("fine", "paper-b"), _gone_test)


def _by_group(t):
    keys = sorted(set(t.groups))
    return [np.nanmean(t.stack[[i for i, g in enumerate(t.groups) if g == k]], axis=0) for k in keys]


def _dilate(mask):
    out = mask.copy()
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            out |= np.roll(np.roll(np.pad(mask, 1), di, 0), dj, 1)[1:-1, 1:-1]
    return out


def _mask_on(e, t):
    """The good cells of entry ``e`` on the cells of table ``t`` (matched by their 1/T and rate)."""
    t0 = e["table"]
    rows, cols = np.nonzero(e["mask"])
    good = {(float(f"{t0.its[i]:.6g}"), float(f"{t0.lrs[j]:.6g}")) for i, j in zip(rows, cols)}
    return np.array([[(float(f"{a:.6g}"), float(f"{b:.6g}")) in good for b in t.lrs] for a in t.its])


def orig_increased(r):
    """At n = 20, where the region vanished, is the distance higher where it was than around it?"""
    band_of = {}

    def test(e):
        t, g = e["table"], e["grid"]
        prev = [n for n in r.ns("original", g) if n < 20 and recalls(r.entry("original", n, g))]
        if prev:
            region = _mask_on(r.entry("original", max(prev), g), t)
            where_ = f"where n = {max(prev)} recalled"
        else:
            region = np.zeros_like(e["mask"])
            region[[i for i, x in enumerate(t.its) if C.near(x, 1e-2)]] = True
            where_ = "at 1/T near 1e-2 (the paper's location)"
        ring = _dilate(region) & ~region
        diffs = [np.nanmean(z[region]) - np.nanmean(z[ring]) for z in _by_group(t)]
        inside, around = float(np.nanmean(t.mean[region])), float(np.nanmean(t.mean[ring]))
        vanished = not recalls(e)
        ok = vanished and inside - around >= T["good_distance"]
        med = float(np.nanmedian(t.mean))
        band = t.mean > med + T["good_distance"]
        band_text = (f"; {int(band.sum())} cells above the grid's median {med:.2f} by > 0.5 (mean "
                     f"{np.nanmean(t.mean[band]):.2f}, {int((band & region).sum())} of them where the region was)"
                     if band.any() else f"; no cell above the grid's median {med:.2f} by > 0.5")
        band_of[g] = {"cells": int(band.sum()), "mean": _r(float(np.nanmean(t.mean[band]))) if band.any()
                      else None, "grid_median": _r(med), "where_region_was": int((band & region).sum()),
                      "inside": _r(inside), "around": _r(around), "vanished": vanished}
        note = (f"{'vanished' if vanished else 'still recalls'}; {where_}: {inside:.2f} inside vs "
                f"{around:.2f} around" + (f"; per seed set: {', '.join(f'{d:+.2f}' for d in diffs)}"
                                          if len(diffs) > 1 else "") + band_text)
        return (SUPPORTED if ok else REFUTED), note
    items, entries = per_n(r, "original", [20], ("coarse", "paper-b"), test)
    for p in entries:
        p["band"] = band_of[p["grid"]]
    return items, entries


# ------------------------------------------------------------------------------ the normalized network
def norm_shift_small(r):
    """Over n <= 5 that recall: the centres span more than 0 and at most 1 decade."""
    def test(es):
        least, most = C.span_bounds([C.centre_bounds(e, "invT") for e in es])
        if least > T["moves_decades"] or most == 0:
            o = REFUTED
        elif least > 0 and most <= T["moves_decades"]:
            o = SUPPORTED
        else:
            o = UNDETERMINED
        return o, f"centres span {least:.2f} to {most:.2f} decades"
    return across_n(r, "normalized", _coarse("fine"), lambda n, e: n <= 5 and recalls(e), test, "n = 2, 3, 5")


def _large(r):
    return [n for n in r.ns("normalized") if n >= 10]


def norm_stable(r):
    """Per n >= 10: recalls, and the 1/T' centre lies within a factor 3 of 0.9 (rule ``censoring``)."""
    def test(e):
        if not recalls(e):
            return REFUTED, "no recalling cell"
        b = C.centre_bounds(e, "invT")
        return C.near_bounds(b, 0.9), f"centre 1/T' {_interval(b)}{_past(e)}"
    return per_n(r, "normalized", _large(r), _coarse("fine", "wide"), test)


def _substantial(e):
    if not recalls(e):
        return REFUTED, "no recalling cell"
    b = C.area_bounds(e)
    edges = f"; runs past {', '.join(e['censored'])}" if e["censored"] and b[0] < T["substantial_area"] else ""
    return C.judge(b, T["substantial_area"]), f"good area {_interval(b)} decades^2{edges}"


def norm_substantial(r):
    """Per n >= 10: recalls, and the good area is at least 1 decade^2 (rule ``censoring``)."""
    return per_n(r, "normalized", _large(r), _coarse("fine", "wide"), _substantial)


def _pairs(r, n, grids, N=100):
    """(grid, original entry, normalized entry) for the grids where both networks ran at n."""
    out = []
    for g in grids:
        o, m = r.entry("original", n, g, N), r.entry("normalized", n, g, N)
        if o is not None and m is not None:
            out.append((g, o, m))
    return out


def norm_lr(r):
    """Per n: the normalized network's largest good rate is >= 1.5x the original's (rule ``censoring``)."""
    items, entries = [], []
    for n in r.ns("original"):
        votes, shown = {}, []
        for g, o, m in _pairs(r, n, _coarse("fine")):
            if not recalls(o):
                votes[g], note = NOT_COUNTED, "the original has no good region to compare"
            elif not recalls(m):
                votes[g], note = REFUTED, "the normalized network does not recall"
            else:
                b = C.ratio_bounds(C.reach_bounds(m), C.reach_bounds(o))
                votes[g] = C.judge(b, T["lr_ratio"])
                top = " (both reach the grid's top rate)" if "lr_high" in m["censored"] and "lr_high" in o[
                    "censored"] else ""
                note = (f"largest good rate {m['good_lr_max']:.2g} vs original {o['good_lr_max']:.2g}: "
                        f"ratio {_interval(b)}{top}")
            shown += [(m, votes[g], note), (o, votes[g], "")]
        if not votes:
            continue
        _add_row(items, entries, f"n = {n}", n, votes, shown)
    return items, entries


def norm_N(r):
    """Per n: centres at N = 100 and N = 250 within a factor 2 (rule ``censoring`` on both)."""
    items, entries = [], []
    for n in r.ns("normalized", N=250):
        votes, shown = {}, []
        for g in _coarse("fine"):
            a, b = r.entry("normalized", n, g), r.entry("normalized", n, g, 250)
            if a is None or b is None:
                continue
            if recalls(a) and recalls(b):
                ratio = C.ratio_bounds(C.centre_bounds(b, "invT"), C.centre_bounds(a, "invT"))
                votes[g] = C.near_bounds(ratio, 1.0, T["N_factor"])
                past = "; ".join(f"N = {size} {_past(x)[2:]}" for size, x in ((100, a), (250, b)) if _past(x))
                note = f"centre at N = 250 / N = 100: {_interval(ratio)}" + (f" ({past})" if past else "")
            elif recalls(a) or recalls(b):
                votes[g], note = REFUTED, f"recalls at N = {100 if recalls(a) else 250} only"
            else:
                votes[g], note = NOT_COUNTED, "no recalling cell at either N"
            shown += [(a, votes[g], note), (b, votes[g], "")]
        if not votes:
            continue
        _add_row(items, entries, f"n = {n}", n, votes, shown)
    return items, entries


# ------------------------------------------------------------------------------ the headline
def headline(r, n_min=None):
    """The quoted contrast: over the n both networks recall, the normalized centres stay within
    0.5 decades while the original's move by at least 1 decade (rule ``censoring`` on each).
    ``n_min``: only the n from this one on (rule ``concession``: the paper concedes a shift at n <= 5)."""
    votes, entries, notes, spans = {}, [], [], {}
    for g in _coarse("fine"):
        ns = [n for n in sorted(set(r.ns("original", g)) & set(r.ns("normalized", g)))
              if (n_min is None or n >= n_min)
              and recalls(r.entry("original", n, g)) and recalls(r.entry("normalized", n, g))]
        if len(ns) < 2:
            continue
        os_ = [r.entry("original", n, g) for n in ns]
        ms = [r.entry("normalized", n, g) for n in ns]
        so = C.span_bounds([C.centre_bounds(e, "invT") for e in os_])
        sm = C.span_bounds([C.centre_bounds(e, "invT") for e in ms])
        oo, om = C.judge(so, T["moves_decades"]), C.judge(sm, hi=T["stable_decades"])
        votes[g] = C.all_of([oo, om])
        spans[g] = {"normalized": [_r(x) for x in sm], "original": [_r(x) for x in so]}
        note = (f"over n = {', '.join(map(str, ns))}: normalized centres span {sm[0]:.2f} to {sm[1]:.2f} "
                f"decades ({om}), original {so[0]:.2f} to {so[1]:.2f} ({oo})")
        notes.append(f"{g}: {note}")
        entries += [public(e, votes[g], "", "contrast") for e in ms + os_]
    if not votes:
        return [], []
    outcome, merge_note = C.merge_grids(votes)
    item = _item("contrast", None, outcome, votes, "; ".join(notes + ([merge_note] if merge_note else [])))
    item["spans"] = spans  # decades the centres can span, (least, most), per grid and network
    return [item], entries


def headline_presence(r):
    """Per n >= 20 run for both: the normalized network keeps a substantial region where the
    original has no recalling cell on the paper's grid."""
    items, entries = [], []
    for n in [n for n in r.ns("original") if n >= 20]:
        votes, shown = {}, []
        for g, o, m in _pairs(r, n, _coarse("fine")):
            gone = _gone_test(o)
            if gone is None:
                continue
            sub, sub_note = _substantial(m)
            votes[g] = C.all_of([gone[0], sub])
            note = f"normalized: {sub_note} ({sub}); original: {gone[1]} ({gone[0]})"
            shown += [(m, votes[g], note), (o, votes[g], "")]
        if not votes:
            continue
        _add_row(items, entries, f"n = {n}", n, votes, shown)
    return items, entries


# ------------------------------------------------------------------------------ the claims with no row before
def leak_behaves(r):
    """The leaky F behaves well under the modification: per n, the normalized network recalls and
    keeps a substantial good region (the rule of norm_substantial)."""
    if not r.leaky:
        return [], []
    return per_n(r, "normalized", r.ns("normalized"), _coarse("fine", "wide"), _substantial)


def reuse_hparams(r):
    """Per grid: some cell is good (and recalls) at every n >= 10 of the normalized network on it."""
    def test(es):
        sets = []
        for e in es:
            t = e["table"]
            rows, cols = np.nonzero(e["mask"]) if recalls(e) else ((), ())
            sets.append({(float(f"{t.its[i]:.6g}"), float(f"{t.lrs[j]:.6g}")) for i, j in zip(rows, cols)})
        common = set.intersection(*sets)
        ns = [e["n"] for e in es]
        if common:
            return SUPPORTED, f"{len(common)} cells good at every n = {', '.join(map(str, ns))}"
        shared = set.intersection(*(set(e["censored"]) for e in es)) if all(recalls(e) for e in es) else set()
        note = f"no cell good at every n = {', '.join(map(str, ns))}"
        if shared:
            return UNDETERMINED, note + f" on the grid; every region runs past {', '.join(sorted(shared))}"
        return REFUTED, note
    return across_n(r, "normalized", _coarse("fine", "wide"), lambda n, e: n >= 10, test, "n >= 10")


def all_finite(r):
    """The item test "every run of this (network, n, grid, N) stayed finite" (no overflow, no NaN: the records'
    finite flag): supported where none failed, refuted otherwise, None where the block is missing."""
    finite = r.extra.get("finite", {})

    def test(e):
        t = finite.get((e["network"], e["n"], e["grid"], e["N"]))
        if t is None:
            return None
        bad = int(np.sum(t.stack < 1))
        return (SUPPORTED if bad == 0 else REFUTED), f"{bad} of {t.stack.size} runs not finite"
    return test


def overflow_not_cause(r):
    """Per n >= 10 of the original network: every run stayed finite (no overflow, no NaN)."""
    return per_n(r, "original", [n for n in r.ns("original") if n >= 10], _coarse("fine", "paper-b"), all_finite(r))


def n2_learnable(r):
    """At n = 2, each network has a cell where every probe of every repeat returns exactly."""
    exact = r.extra.get("exact_fraction", {})
    items, entries = [], []
    for net in ("original", "normalized"):
        def test(e):
            t = exact.get((e["network"], e["n"], e["grid"], e["N"]))
            if t is None:
                return None
            top = float(np.nanmax(t.mean))
            return (SUPPORTED if top >= 1.0 else REFUTED), f"largest share of exact recalls {top:.3f}"
        got = per_n(r, net, [2] if 2 in r.ns(net) else [], _coarse("fine"), test)
        for it in got[0]:
            it["item"] = f"{net}, n = 2"
        for p in got[1]:
            p["item"] = f"{net}, n = 2"
        items += got[0]
        entries += got[1]
    return items, entries


# ------------------------------------------------------------------------------ exact arithmetic
def theory_homogeneous():
    """F(a x) = a^n F(x) exactly (fractions) for the polynomial and rectified polynomial; the leaky
    rectified polynomial is not homogeneous (a nonzero residual)."""
    from ..interactions import make_interaction  # noqa: PLC0415
    from .theory import homogeneity_residual  # noqa: PLC0415

    xs = np.array([Fraction(k, 7) for k in (-9, -4, -1, 2, 5, 11)], dtype=object)
    scales = [Fraction(1, 100), Fraction(3, 7), Fraction(5, 2), Fraction(40)]
    items = []
    for name, homogeneous in (("polynomial", True), ("rectified_polynomial", True),
                              ("leaky_rectified_polynomial", False)):
        worst = 0.0
        for n in (2, 3, 5, 10):
            F = make_interaction(name, n)
            for a in scales:
                res = homogeneity_residual(F, xs, a)
                worst = max(worst, max(abs(float(v)) for v in res))
        ok = (worst == 0.0) == homogeneous
        items.append(_item(name.replace("_", " "), None, SUPPORTED if ok else REFUTED,
                           note=f"largest |F(a x) - a^n F(x)| over n = 2, 3, 5, 10 and 4 scales: {worst:.3g}"
                                + ("" if homogeneous else " (the paper: not homogeneous)")))
    return items, []


def theory_exponential():
    """The exponential update unchanged by scaling the similarities by 1/N: a 4-neuron counterexample."""
    from ..interactions import make_interaction  # noqa: PLC0415
    from .theory import energy_difference_mp, exponential_counterexample  # noqa: PLC0415

    mem, state, i = exponential_counterexample()
    E = make_interaction("exponential")
    d1 = energy_difference_mp(mem, state, E, 1)[i]
    dn = energy_difference_mp(mem, state, E, Fraction(1, mem.shape[1]))[i]
    same = (d1 >= 0) == (dn >= 0)
    return [_item("N = 4, K = 4", None, SUPPORTED if same else REFUTED,
                  note=f"energy difference {float(d1):.4g} unscaled, {float(dn):.4g} scaled by 1/N: the update "
                       + ("keeps" if same else "flips") + " its sign")], []


def theory_overflow():
    """The paper's example: N = 1e4, n = 30 gives 1e120, past float32's largest number, within float64's."""
    from .numerics import FORMATS, exact_power  # noqa: PLC0415

    value = exact_power(10 ** 4, 30)
    f32, f64 = float(FORMATS["float32"].max), float(FORMATS["float64"].max)
    items = [_item("N^n = 1e120", None, SUPPORTED if value == exact_power(10, 120) else REFUTED,
                   note=f"exactly {float(value):.3g}"),
             _item("float32 overflows", None, SUPPORTED if value > f32 else REFUTED,
                   note=f"largest float32 {f32:.3g}"),
             _item("float64 holds it", None, SUPPORTED if value < f64 else REFUTED,
                   note=f"largest float64 {f64:.3g}")]
    return items, []


# ------------------------------------------------------------------------------ secondary settings
def _similar(base, alt):
    """Same recall status, good fraction within 0.1 (one grid), 1/T centres within a factor 3
    (rule ``censoring`` on both, fractions and centres alike)."""
    if recalls(base) != recalls(alt):
        return REFUTED, "recall differs"
    if not recalls(base):
        return SUPPORTED, "neither recalls"
    df = alt["good_fraction"] - base["good_fraction"]
    b = C.difference_bounds(C.fraction_bounds(alt), C.fraction_bounds(base))
    o_frac = C.judge(b, -T["similar_fraction"], T["similar_fraction"])
    ratio = C.ratio_bounds(C.centre_bounds(alt, "invT"), C.centre_bounds(base, "invT"))
    o_centre = C.near_bounds(ratio, 1.0)
    return C.all_of([o_frac, o_centre]), (f"good fraction {df:+.2f}, allowed by the edges {_signed(b)} ({o_frac}), "
                                          f"centre ratio {_interval(ratio)} ({o_centre}), learning-rate centre x"
                                          f"{alt['centre_lr'] / base['centre_lr']:.2g}")


def _signed(bounds):
    lo, hi = bounds
    return (f"{lo:+.2f}" if math.isfinite(lo) else "-inf") + ".." + (f"{hi:+.2f}" if math.isfinite(hi) else "+inf")


def _not_worse(base, alt):
    """m = 1 (``base``) recalls wherever ``alt`` does and its good fraction is not lower by more than 0.1
    (rule ``censoring`` on both fractions)."""
    if recalls(alt) and not recalls(base):
        return REFUTED, f"m = 1 does not recall where m does (good {base['good_fraction']:.2f} vs {alt['good_fraction']:.2f})"
    b = C.difference_bounds(C.fraction_bounds(base), C.fraction_bounds(alt))
    o = C.judge(b, -T["similar_fraction"])
    return o, f"m = 1 good {base['good_fraction']:.2f} vs {alt['good_fraction']:.2f}: difference allowed by the edges {_signed(b)}"


def secondary(settings, compare):
    """A grading function for the secondary settings ``settings``: each block against the control, by ``compare``."""
    def grade(r):
        items, entries = [], []
        for name in settings:
            for (net, n, grid, N) in sorted(k for k in r.tables if not k[0].startswith("control|")):
                if net.split("|")[0] != name:
                    continue
                alt = r.entry(net, n, grid, N)
                base = r.entry("control|" + net.split("|")[1], n, grid, N)
                if base is None:
                    continue
                o, note = compare(base, alt)
                label = f"{name}, {net.split('|')[1]}, n = {n}"
                items.append(_item(label, n, o, {grid: o}, note))
                p = public(alt, o, f"{name}: {note}", label)
                p["network"] = net.split("|")[1]
                p["setting"] = name
                entries.append(p)
        return items, entries
    return grade


def secondary_tables(root, cache):
    """Tables keyed ("<setting>|<network>", n, grid, N) and ("control|<network>", ...)."""
    out = {}
    for name, kw in SETTINGS.items():
        t = load_tables(root, [("autoassociative-scorecard", dict(CONTROL, interaction="polynomial",
                                                                   grid="coarse", **kw))], cache=cache)
        out.update({(f"{name}|{k[0]}",) + k[1:]: v for k, v in t.items()})
    ctrl = load_tables(root, [("autoassociative-full", dict(CONTROL, interaction="polynomial", grid="coarse"))],
                       cache=cache)
    for k, v in ctrl.items():
        out[(f"control|{k[0]}",) + k[1:]] = v.take(i for i, rep in enumerate(v.repeats) if rep < 3)
    return out


# ------------------------------------------------------------------------------ for the page
def location_readings(aa):
    """The Sec. 5.1 sentence ("around 1/T = 1e-2 [...] but shifts considerably") read several ways,
    per reading and n on the coarse grid (extended where it was): the good region's centre (the
    rule), its upper edge, whether it is bounded inside the grid and holds 1e-2, and where the
    best cells (within 0.05 of the best) lie. For the page; nothing is graded from it."""
    out = []
    f = T["near_factor"]
    for label in ("A", "A + leak", "A − leak"):
        r = aa[label]
        for n in r.ns("original", "coarse"):
            e = r.entry("original", n, "coarse")
            if not recalls(e):
                continue
            t = e["table"]
            lo, hi = e["good_inv_T"]
            best = t.its[np.nonzero((t.mean <= e["best"] + 0.05).any(axis=1))[0]]
            bounded = not C.censored_on(e, "invT")
            out.append({"reading": label, "n": n, "grid": e["grid"], "grid_low": _r(float(t.its[0])),
                        "best_distance": _r(e["best"]), "centre": _r(e["centre_inv_T"]), "good_low": _r(lo),
                        "good_high": _r(hi), "censored": [c for c in e["censored"] if c.startswith("invT")],
                        "bounded": bounded, "contains": bool(lo <= 1e-2 <= hi),
                        "best_low": _r(float(best.min())), "best_high": _r(float(best.max())),
                        "centre_near": C.near_bounds(C.centre_bounds(e, "invT"), 1e-2),
                        "upper_near": C.near_bounds((hi, math.inf if "invT_high" in e["censored"] else hi), 1e-2),
                        "best_near": SUPPORTED if 1e-2 / f <= best.min() and best.max() <= 1e-2 * f else REFUTED})
    return out
