"""The tests behind the scorecard's MNIST claims: one repeat per cell, so each outcome comes with
its margin, the fewest good cells that would have to change to turn it.

The same frame as :mod:`damlite.paper.grading` (items and entries; outcomes by the rule book of
:mod:`damlite.paper.claims`), on the paper's 6 x 6 MNIST grid.
"""
from __future__ import annotations

import math

import numpy as np

from . import claims as C
from .claims import REFUTED, SUPPORTED
from .grading import _interval, _item, per_n, public, recalls
from .tables import MNIST_N

__all__ = ["KROTOV_INV_T", "mnist_beta1", "mnist_consistent", "mnist_krotov_range", "mnist_proportional",
           "mnist_shape", "mnist_shrink"]

T = C.TOLERANCES
KROTOV_INV_T = 1 / 540  # Krotov & Hopfield's MNIST temperature (n = 20), original network


def _mnist_rows(r, network):
    return {n: r.entry(network, n, "paper", MNIST_N) for n in r.ns(network, "paper", MNIST_N)}


def _count_margin(counts, passes, limit=12, valid=None):
    """Fewest good cells that must change (added or removed, across ``counts``) to flip ``passes``;
    ``valid(*counts)``: the counts a change may reach. None when more than ``limit`` are needed."""
    start = passes(*counts)
    frontier = {tuple(counts)}
    seen = set(frontier)
    for k in range(1, limit + 1):
        nxt = set()
        for c in frontier:
            for i in range(len(c)):
                for d in (-1, 1):
                    x = list(c)
                    x[i] += d
                    x = tuple(x)
                    if min(x) < 0 or x in seen or (valid is not None and not valid(*x)):
                        continue
                    if passes(*x) != start:
                        return k
                    seen.add(x)
                    nxt.add(x)
        frontier = nxt
    return None


def _margin_text(k, limit=12):
    return f"more than {limit} cells" if k is None else f"{k} cell" + ("" if k == 1 else "s")


def mnist_shrink(r, networks=("original", "normalized")):
    """Per network (of ``networks``): fewer good cells at the largest n than at n = 2, and at least half as many."""
    items, entries = [], []
    for net in networks:
        rows = _mnist_rows(r, net)
        if 2 not in rows or len(rows) < 2:
            continue
        last = max(rows)
        c2, cl = int(rows[2]["mask"].sum()), int(rows[last]["mask"].sum())

        def passes(a, b):
            return b < a and b >= 0.5 * a
        ok = passes(c2, cl)
        margin = _count_margin((c2, cl), passes)
        label = f"{net}, n = 2 to {last}"
        note = f"good cells {c2} at n = 2 -> {cl} at n = {last}"
        items.append(_item(label, last, SUPPORTED if ok else REFUTED, note=note, margin=_margin_text(margin)))
        entries += [public(e, SUPPORTED if ok else REFUTED, note if n == last else "", label)
                    for n, e in sorted(rows.items())]
    return items, entries


def mnist_proportional(r):
    """Per n > 2: the two networks' shrink factors (good cells over their n = 2 count) within a factor 1.5."""
    o, m = _mnist_rows(r, "original"), _mnist_rows(r, "normalized")
    items, entries = [], []
    if 2 not in o or 2 not in m:
        return items, entries
    f = T["shrink_factor"]
    for n in sorted(set(o) & set(m) - {2}):
        counts = tuple(int(x["mask"].sum()) for x in (o[2], o[n], m[2], m[n]))

        def passes(o2, on, m2, mn):
            if min(o2, m2) == 0:
                return False
            ro, rm = on / o2, mn / m2
            return C.near(ro, rm, f) if ro > 0 and rm > 0 else ro == rm
        ok = passes(*counts)
        note = (f"shrink factor normalized {counts[3]}/{counts[2]} = {counts[3] / counts[2]:.2f} vs original "
                f"{counts[1]}/{counts[0]} = {counts[1] / counts[0]:.2f}")
        label = f"n = {n}"
        items.append(_item(label, n, SUPPORTED if ok else REFUTED, note=note,
                           margin=_margin_text(_count_margin(counts, passes))))
        entries += [public(m[n], SUPPORTED if ok else REFUTED, note, label),
                    public(o[n], SUPPORTED if ok else REFUTED, "", label)]
    return items, entries


def mnist_shape(r):
    """Per n: the two networks' good cells overlap (Jaccard) by at least one half."""
    o, m = _mnist_rows(r, "original"), _mnist_rows(r, "normalized")
    items, entries = [], []
    for n in sorted(set(o) & set(m)):
        a, b = o[n]["mask"], m[n]["mask"]
        both, either = int((a & b).sum()), int((a | b).sum())
        # a cell can join the common set (both + 1), leave it (both - 1), leave the union (either - 1)
        # or join it (either + 1)

        def passes(i, u):
            return u > 0 and i <= u and i / u >= T["jaccard"]
        ok = passes(both, max(either, 1))
        label = f"n = {n}"
        note = f"good cells shared (Jaccard) {both}/{either} = {both / max(either, 1):.2f}"
        margin = _count_margin((both, max(either, 1)), passes, valid=lambda i, u: 0 <= i <= u and u >= 1)
        items.append(_item(label, n, SUPPORTED if ok else REFUTED, note=note, margin=_margin_text(margin)))
        entries += [public(m[n], SUPPORTED if ok else REFUTED, note, label),
                    public(o[n], SUPPORTED if ok else REFUTED, "", label)]
    return items, entries


def _centre_margin(e, lo, hi):
    """Fewest good cells to remove (from either end of the 1/T axis) or add (in the outermost
    rows) that move the 1/T centre across [lo, hi], for an uncensored centre."""
    its = e["table"].its
    mask = e["mask"].copy()
    inside = lo <= e["centre_inv_T"] <= hi
    logs = np.log(its)
    best = None
    good = sorted(zip(*np.nonzero(mask)), key=lambda c: logs[c[0]])
    for order in (good, good[::-1]):  # remove from the low end, then from the high end
        cur = list(order)
        for k in range(1, len(cur)):
            rest = cur[k:]
            c = math.exp(np.mean([logs[i] for i, _ in rest]))
            if (lo <= c <= hi) != inside:
                best = k if best is None else min(best, k)
                break
    bad = [(i, j) for i in range(len(its)) for j in range(mask.shape[1]) if not mask[i, j]]
    for order in (sorted(bad, key=lambda c: logs[c[0]]), sorted(bad, key=lambda c: -logs[c[0]])):
        cells = list(zip(*np.nonzero(mask)))
        for k, cell in enumerate(order, 1):
            cells.append(cell)
            c = math.exp(np.mean([logs[i] for i, _ in cells]))
            if (lo <= c <= hi) != inside:
                best = k if best is None else min(best, k)
                break
    return best


def mnist_beta1(r):
    """Per n: the normalized 1/T' centre lies within a factor 3 of 1 (rule ``censoring``)."""
    def test(e):
        b = C.centre_bounds(e, "invT")
        o = C.near_bounds(b, 1.0)
        return o, f"centre 1/T' {_interval(b)}"
    items, entries = per_n(r, "normalized", r.ns("normalized", "paper", MNIST_N), ("paper",), test, N=MNIST_N)
    f = T["near_factor"]
    for it in items:
        e = r.entry("normalized", it["n"], "paper", MNIST_N)
        if not C.censored_on(e, "invT"):
            it["margin"] = _margin_text(_centre_margin(e, 1 / f, f))
    return items, entries


def mnist_krotov_range(r):
    """Per n: 1/540 lies in the original's good 1/T range widened by a factor 3 either way."""
    f = T["near_factor"]

    def test(e):
        lo, hi = e["good_inv_T"]
        b = (0.0 if "invT_low" in e["censored"] else lo / f, math.inf if "invT_high" in e["censored"] else hi * f)
        inside = b[0] <= KROTOV_INV_T <= b[1]
        return (SUPPORTED if inside else REFUTED), f"good 1/T {lo:.2g} .. {hi:.2g} (Krotov & Hopfield: 1/540)"
    items, entries = per_n(r, "original", r.ns("original", "paper", MNIST_N), ("paper",), test, N=MNIST_N)
    for it in items:
        e = r.entry("original", it["n"], "paper", MNIST_N)
        its, mask = e["table"].its, e["mask"]
        rows = mask.any(axis=1)
        if it["outcome"] == SUPPORTED:  # good cells to remove until the widened range misses 1/540
            need = []
            for order in (range(len(its)), range(len(its) - 1, -1, -1)):
                k = 0
                for i in order:
                    if not rows[i]:
                        continue
                    rest = [x for x in np.nonzero(rows)[0] if (x > i if order.step == 1 else x < i)]
                    k += int(mask[i].sum())
                    if not rest or not (its[min(rest)] / f <= KROTOV_INV_T <= its[max(rest)] * f):
                        need.append(k)
                        break
            it["margin"] = _margin_text(min(need) if need else None)
        else:
            it["margin"] = _margin_text(1 if any(x / f <= KROTOV_INV_T <= x * f for x in its) else None)
    return items, entries


def mnist_consistent(r, aa, n_min=None):
    """Per n run on both tasks: the MNIST and autoassociative 1/T' centres within a factor 3.
    ``n_min``: only the n from this one on (rule ``concession``)."""
    items, entries = [], []
    for n in [n for n in r.ns("normalized", "paper", MNIST_N) if n_min is None or n >= n_min]:
        e = r.entry("normalized", n, "paper", MNIST_N)
        a = aa.entry("normalized", n, "coarse")
        if a is None:
            continue
        if not recalls(a):
            o, note = REFUTED, "the autoassociative network does not recall"
        else:
            ratio = C.ratio_bounds(C.centre_bounds(e, "invT"), C.centre_bounds(a, "invT"))
            o = C.near_bounds(ratio, 1.0)
            note = (f"MNIST centre {e['centre_inv_T']:.2g} vs autoassociative {a['centre_inv_T']:.2g}: "
                    f"ratio {_interval(ratio)}")
        label = f"n = {n}"
        items.append(_item(label, n, o, {"paper": o, a["grid"]: o}, note))
        entries += [public(e, o, note, label), public(a, o, "", label)]
    return items, entries
