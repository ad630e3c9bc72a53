"""An independent recount of ``book/results/scorecard.json``: no damlite import, only json and NumPy.

The result files are read with the ``json`` module; every good region the scorecard lists is
recounted from them (best cell, good share and area, centres, reach, the edges it touches,
repeats); the outcome of each grid is recomputed from those numbers for the claims whose tests
are centre, reach, span, ratio and area tests, with the rule book's words re-implemented here
(censoring opens a value toward each edge it touches; a test is supported when every value
allowed passes, refuted when none does); grids are merged and verdicts counted as the rules say.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "book" / "results"
CARD = RESULTS / "scorecard.json"
pytestmark = pytest.mark.skipif(not CARD.exists(), reason="no committed scorecard")

EDGES = ("invT_low", "invT_high", "lr_low", "lr_high")
SUP, REF, UND, NOT = "supported", "refuted", "undetermined", "not counted"


@functools.lru_cache(maxsize=None)
def _blocks(stem):
    path = RESULTS / ("mnist" if stem.startswith("mnist") else "autoassociative") / f"{stem}.jsonl"
    out = {}
    for line in path.read_text().splitlines():
        block = json.loads(line)
        out.setdefault(block["key"], block)  # the first complete copy of a block
    return list(out.values())


@functools.lru_cache(maxsize=None)
def _card():
    return json.loads(CARD.read_text())


def _sources(label, p, claim):
    card = _card()
    if "setting" in p:
        return card["sources"][f"{label}: {p['setting']}"]
    if claim == "mnist_consistent" and p["N"] == 100:  # the autoassociative side of the cross-task claim: the
        # autoassociative reading with the same F (the author's leak -> A + leak, B -> B, else A)
        return card["sources"][{"author's setup (slice)": "A + leak", "B (slice)": "B"}.get(label, "A")]
    if label.startswith("A, settings"):
        return card["sources"]["A, settings: control"]
    return card["sources"][label]


def _table(claim, label, p, metric):
    """Mean table (n_T x n_lr), its axes and the number of repeats, from the result files."""
    files = [f.strip() for f in p["file"].split(",")]
    cells = {}
    control = label.startswith("A, settings") and "setting" not in p
    for stem, match in _sources(label, p, claim):
        if stem not in files:
            continue
        for block in _blocks(stem):
            for r in block["records"]:
                if (r["variant"], r["n"], r["grid"], r.get("N") or 794, r["dtype"]) != (
                        p["network"], p["n"], p["grid"], p["N"], "float64"):
                    continue
                if any(r.get(k) != v for k, v in match.items()):
                    continue
                if control and r["repeat"] >= 3:
                    continue
                v = r[metric]
                cells.setdefault((r["inv_temperature"], r["learning_rate"]), []).append(np.nan if v is None else v)
    its = np.array(sorted({k[0] for k in cells}))
    lrs = np.array(sorted({k[1] for k in cells}))
    repeats = len(cells[(its[0], lrs[0])])
    z = np.array([[np.mean([v for v in cells[(i, j)] if np.isfinite(v)]) if np.isfinite(cells[(i, j)]).any()
                   else np.nan for j in lrs] for i in its])
    if label in ("B", "B (slice)") and p["network"] == "original":
        its = its ** p["n"]  # reading B: the original's axis is 1/T_B = (1/T_A)**n
    return z, its, lrs, repeats


def _width(values):
    logs = np.log10(values)
    if len(logs) < 2:  # a one-learning-rate slice: one decade wide, as the rule book takes it
        return np.ones_like(logs)
    mid = (logs[1:] + logs[:-1]) / 2
    edges = np.concatenate(([1.5 * logs[0] - 0.5 * logs[1]], mid, [1.5 * logs[-1] - 0.5 * logs[-2]]))
    return np.diff(edges)


def _region(z, its, lrs, tol, lower):
    fill = np.where(np.isfinite(z), z, np.inf if lower else -np.inf)
    best = fill.min() if lower else fill.max()
    near = np.nonzero((np.abs(fill - best) <= 0.05).any(axis=1))[0]  # rows holding a best cell (within 0.05)
    good = np.isfinite(z) & (np.abs(fill - best) <= tol)
    rows, cols = np.nonzero(good)
    return {"best": float(best), "best_T": [float(its[near].min()), float(its[near].max())],
            "good": good, "fraction": float(good.mean()), "low": float(its[rows].min()), "high": float(its[rows].max()),
            "area": float((np.outer(_width(its), _width(lrs)) * good).sum()),
            "centre_T": float(np.exp(np.log(its[rows]).mean())), "centre_lr": float(np.exp(np.log(lrs[cols]).mean())),
            "reach": float(lrs[cols].max()),
            "edges": [e for e, hit in zip(EDGES, (good[0].any(), good[-1].any(), good[:, 0].any(), good[:, -1].any()))
                      if hit]}


# ----------------------------------------------------------------------------- the rules, again
def _open(value, edges, axis):
    return (0.0 if f"{axis}_low" in edges else value, math.inf if f"{axis}_high" in edges else value)


def _judge(bounds, lo=-math.inf, hi=math.inf):
    if lo <= bounds[0] and bounds[1] <= hi:
        return SUP
    if bounds[1] < lo or bounds[0] > hi:
        return REF
    return UND


def _near(bounds, target, factor=3.0):
    return _judge(bounds, target / factor, target * factor)


def _lg(x):
    return -math.inf if x <= 0 else math.inf if math.isinf(x) else math.log10(x)


def _ratio(top, bottom):
    lo, hi = _lg(top[0]) - _lg(bottom[1]), _lg(top[1]) - _lg(bottom[0])
    return (0.0 if lo == -math.inf else 10 ** lo, math.inf if hi == math.inf else 10 ** hi)


def _span(intervals):
    lo = [_lg(a) for a, _ in intervals]
    hi = [_lg(b) for _, b in intervals]
    return max(0.0, max(lo) - min(hi)), max(hi) - min(lo)


def _all(outcomes):
    return REF if REF in outcomes else UND if UND in outcomes else SUP


def _merge(votes):
    votes = [v for v in votes if v != NOT]
    if not votes:
        return NOT
    decided = {v for v in votes if v != UND}
    return decided.pop() if len(decided) == 1 else UND


def _recalls(g):
    return g["best"] <= 0.5


def _substantial(g):
    if not _recalls(g):
        return REF
    return _judge((g["area"], math.inf if g["edges"] else g["area"]), 1.0)


def _per_entry(claim, g):
    """The outcome of one grid for the per-n claims whose test is one region's."""
    if claim == "orig_location":
        if not _recalls(g):
            return REF
        return _all([_near(_open(g["centre_T"], g["edges"], "invT"), 1e-2),
                     _near(_open(g["centre_lr"], g["edges"], "lr"), 0.5)])
    if claim == "norm_stable":
        return _near(_open(g["centre_T"], g["edges"], "invT"), 0.9) if _recalls(g) else REF
    if claim in ("norm_substantial", "leak_behaves"):
        return _substantial(g)
    if claim == "mnist_beta1":
        return _near(_open(g["centre_T"], g["edges"], "invT"), 1.0)
    if claim == "norm_near1_dims":
        return _near(_open(g["centre_T"], g["edges"], "invT"), 1.0) if _recalls(g) else REF
    return None


def _pair(claim, a, b):
    """The outcome of one grid for the claims that compare two regions: (first entry, second entry)."""
    if claim == "norm_lr":  # (normalized, original)
        if not _recalls(b):
            return NOT
        if not _recalls(a):
            return REF
        reach = lambda g: (g["reach"], math.inf if "lr_high" in g["edges"] else g["reach"])  # noqa: E731
        return _judge(_ratio(reach(a), reach(b)), 1.5)
    if claim == "norm_N":  # (N = 100, N = 250)
        if _recalls(a) and _recalls(b):
            return _near(_ratio(_open(b["centre_T"], b["edges"], "invT"), _open(a["centre_T"], a["edges"], "invT")),
                         1.0, 2.0)
        return REF if _recalls(a) or _recalls(b) else NOT
    if claim == "sizes_similar":  # (N = 250, N = 100)
        if _recalls(a) != _recalls(b):
            return REF
        if not _recalls(a):
            return SUP
        return _near(_ratio(_open(a["centre_T"], a["edges"], "invT"), _open(b["centre_T"], b["edges"], "invT")), 1.0)
    return None


def _across(claim, regions):
    """The outcome of one grid for the claims tested across n: the regions of the n taking part."""
    spans = _span([_open(g["centre_T"], g["edges"], "invT") for g in regions])
    if claim == "orig_moves":
        return _judge(spans, 1.0)
    if claim == "norm_shift_small":
        if spans[0] > 1.0 or spans[1] == 0:
            return REF
        return SUP if spans[0] > 0 and spans[1] <= 1.0 else UND
    return None


def _verdict(outcomes):
    counted = [o for o in outcomes if o != NOT]
    if not counted:
        return "not tested"
    return REF if REF in counted else UND if UND in counted else SUP


# ----------------------------------------------------------------------------- the recount
def _recount_claim(claim, label, graded, card):
    checked = 0
    regions = {}
    for k, p in enumerate(graded["per_n"]):
        metric = "distance" if "best_distance" in p else "f1"
        tol = 0.5 if metric == "distance" else card["tolerances"]["mnist_f1"]
        z, its, lrs, repeats = _table(claim, label, p, metric)
        g = _region(z, its, lrs, tol, metric == "distance")
        best = p["best_distance"] if metric == "distance" else p["best_f1"]
        assert best == pytest.approx(g["best"], rel=1e-3, abs=1e-4), (claim, label, p)
        assert p["good_fraction"] == pytest.approx(g["fraction"], rel=1e-3), (claim, label, p)
        assert p["area"] == pytest.approx(g["area"], rel=1e-3), (claim, label, p)
        assert p["centre_inv_T"] == pytest.approx(g["centre_T"], rel=1e-3), (claim, label, p)
        assert p["centre_lr"] == pytest.approx(g["centre_lr"], rel=1e-3), (claim, label, p)
        assert p["reach_lr"] == pytest.approx(g["reach"], rel=1e-3), (claim, label, p)
        assert p["censored"] == g["edges"], (claim, label, p)
        assert p["best_inv_T"] == pytest.approx(g["best_T"], rel=1e-3), (claim, label, p)
        assert p["good_inv_T"] == pytest.approx([g["low"], g["high"]], rel=1e-3), (claim, label, p)
        assert p["repeats"] == repeats, (claim, label, p)
        regions[k] = g
        own = _per_entry(claim, g)
        if own is not None:
            assert p["outcome"] == own, (claim, label, p, own)
        checked += 1
    entries = graded["per_n"]
    if claim in ("norm_lr", "norm_N", "sizes_similar"):  # entries come in pairs per grid: the first carries the note
        for k in range(0, len(entries), 2):
            got = _pair(claim, regions[k], regions[k + 1])
            assert entries[k]["outcome"] == got, (claim, label, entries[k], got)
    if claim in ("orig_moves", "norm_shift_small"):
        by_grid = {}
        for k, p in enumerate(entries):
            by_grid.setdefault(p["grid"] if p["grid"] != "coarse-ext" else "coarse", []).append(k)
        for ks in by_grid.values():
            got = _across(claim, [regions[k] for k in ks])
            assert all(entries[k]["outcome"] == got for k in ks), (claim, label, got)
    return checked


@pytest.mark.slow  # ~17 s: every region of every claim recounted; CI's full suite runs it
def test_every_region_outcome_and_verdict_of_the_scorecard_recounts():
    card = _card()
    checked = 0
    for c in card["claims"]:
        for label, graded in c["readings"].items():
            checked += _recount_claim(c["id"], label, graded, card)
            # each item's outcome: its grids merged as the rules say (undetermined grids abstain,
            # the others must agree), and each grid's outcome as listed under its entries
            for it in graded["items"]:
                assert it["outcome"] == _merge(list(it["grids"].values()) or [it["outcome"]]), (c["id"], label, it)
                for p in graded["per_n"]:
                    if p["item"] == it["item"] and p["grid"] in it["grids"]:
                        assert p["outcome"] == it["grids"][p["grid"]], (c["id"], label, p, it)
            if "all_n" in graded:  # rule "concession": the verdict over every n, shown beside it
                every = [it["outcome"] for it in graded["all_n"]["items"]]
                assert graded["all_n"]["verdict"] == _verdict(every), (c["id"], label)
                assert graded["all_n"]["total"] == len([o for o in every if o != NOT]), (c["id"], label)
                n_min = c["about"]["n_min"]
                assert all(it["n"] is None or it["n"] >= n_min for it in graded["items"]), (c["id"], label)
            outcomes = [it["outcome"] for it in graded["items"]]
            counted = [o for o in outcomes if o != NOT]
            if graded["verdict"] != "missing input":
                assert graded["verdict"] == _verdict(outcomes), (c["id"], label)
                assert (graded["supported"], graded["refuted"], graded["undetermined"], graded["total"]) == (
                    counted.count(SUP), counted.count(REF), counted.count(UND), len(counted)), (c["id"], label)
    assert checked > 300


def test_the_bottom_lines_follow_from_the_verdicts():
    for c in _card()["claims"]:
        counted = {label: g["verdict"] for label, g in c["readings"].items()
                   if g["verdict"] in (SUP, REF, UND) and not g["identity"]
                   and (g["bootstrap_same"] is None or g["bootstrap_same"] >= 0.8) and not g.get("noise")}
        assert c["bottom_line"]["counted"] == list(counted), c["id"]
        word = c["bottom_line"]["verdict"]
        values = list(counted.values())
        if not values:
            assert word in ("no bottom line", "not tested", "missing input"), c["id"]
        elif all(v == SUP for v in values):
            assert word == SUP, c["id"]
        elif SUP in values:
            assert word == "only under " + "; ".join(k for k, v in counted.items() if v == SUP), c["id"]
        elif all(v == REF for v in values):
            assert word == REF, c["id"]
        else:
            assert word == UND, c["id"]


# ----------------------------------------------------------------------------- the report beside the verdicts
def _all_blocks():
    """(file, first complete copy of each block) over every committed result file."""
    out = []
    for folder in ("autoassociative", "mnist"):
        for path in sorted((RESULTS / folder).glob("*.jsonl")):
            seen = set()
            for line in path.read_text().splitlines():
                try:
                    block = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(block, dict) and "key" in block and block["key"] not in seen:
                    seen.add(block["key"])
                    out.append((f"{folder}/{path.name}", block))
    return out


def test_compute_and_manifest_recount_from_the_records():
    rep = _card()["report"]
    blocks = _all_blocks()
    hours = {}
    for f, b in blocks:
        hours[f] = hours.get(f, 0.0) + float(b["provenance"].get("seconds") or 0.0) / 3600
    assert rep["compute"]["blocks"] == len(blocks) == rep["manifest"]["blocks"]
    assert rep["compute"]["block_hours"] == pytest.approx(sum(hours.values()), rel=5e-3)  # 3 digits
    for row in rep["compute"]["files"]:
        assert row["block_hours"] == pytest.approx(hours[row["file"]], rel=5e-3, abs=1e-4), row
        assert row["blocks"] == sum(1 for f, _ in blocks if f == row["file"]), row
    assert rep["manifest"]["unused"] == sum(r["blocks"] for r in rep["manifest"]["rows"])
    keys = {(f, b["key"]) for f, b in blocks}
    read = set()  # every block a graded region names lies in a file the card lists
    for c in _card()["claims"]:
        for g in c["readings"].values():
            read |= {p["file"] for p in g["per_n"]}
    assert read and all(any(k[0].endswith(f"/{stem}.jsonl") for k in keys) for files in read for stem in files.split(", "))


def test_effect_sizes_recount_from_the_centres():
    card = _card()
    targets = {"orig_location": 1e-2, "norm_stable": 0.9, "mnist_beta1": 1.0}
    rows = card["report"]["effect_sizes"]
    assert rows and {e["claim"] for e in rows} <= set(targets)
    claims = {c["id"]: c for c in card["claims"]}
    for e in rows:
        assert e["paper"] == targets[e["claim"]]
        assert e["decades"] == pytest.approx(math.log10(e["centre"] / e["paper"]), rel=5e-3, abs=2e-3), e
        entry = next(p for p in claims[e["claim"]]["readings"][e["reading"]]["per_n"]
                     if (p["network"], p["n"], p["grid"], p["N"]) == (e["network"], e["n"], e["grid"], e["N"]))
        assert entry["centre_inv_T"] == e["centre"]
        low, high = "invT_low" in entry["censored"], "invT_high" in entry["censored"]
        assert e["bound"] == ("unbounded" if low and high else "at most" if low else "at least" if high else None)
        if e["interval"]:
            assert e["resamples"] >= 1000 and e["repeats"] > 1
            assert e["interval"][0] <= e["interval"][1]


def test_the_sensitivity_table_halves_and_doubles_each_tolerance():
    rows = _card()["report"]["sensitivity"]
    tol = _card()["tolerances"]
    assert {(r["tolerance"], r["factor"]) for r in rows} == {(t, f) for t in {r["tolerance"] for r in rows}
                                                              for f in (0.5, 2.0)}
    for r in rows:
        assert r["value"] == tol[r["tolerance"]] and r["tried"] == pytest.approx(r["value"] * r["factor"])
        for m in r["moved"]:
            assert m["from"] != m["to"]


def test_the_timeline_recounts_from_the_records():
    from datetime import datetime, timedelta  # noqa: PLC0415

    tl = _card()["report"]["timeline"]
    firsts = []
    for name, row in tl["files"].items():
        path = RESULTS / name
        starts = []
        if path.exists():
            seen = set()
            for line in path.read_text().splitlines():
                try:
                    block = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a run still writing
                if block["key"] in seen:
                    continue
                seen.add(block["key"])
                p = block["provenance"]
                starts.append(datetime.fromisoformat(p["date"]) - timedelta(seconds=float(p.get("seconds") or 0)))
        assert row["first_start"] == (min(starts).isoformat(timespec="seconds") if starts else None), name
        firsts += [row["first_start"]] if row["first_start"] else []
    assert tl["first_start"] == (min(firsts) if firsts else None)


# ----------------------------------------------------------------------------- finite runs, exact arithmetic
def _not_finite(claim, label, p):
    """(runs not finite, runs) of one entry, from the records' finite flag."""
    bad = total = 0
    for stem, match in _sources(label, p, claim):
        if stem not in [f.strip() for f in p["file"].split(",")]:
            continue
        for block in _blocks(stem):
            for r in block["records"]:
                if (r["variant"], r["n"], r["grid"], r.get("N") or 794, r["dtype"]) != (
                        p["network"], p["n"], p["grid"], p["N"], "float64"):
                    continue
                if any(r.get(k) != v for k, v in match.items()):
                    continue
                total += 1
                bad += not r["finite"]
    return bad, total


def test_the_finite_runs_recount_from_the_records():
    """overflow_not_cause (the original) and alpha_not_required (the normalized network with alpha = 1/N):
    each entry's count of runs that are not finite, and its outcome (supported when there is none)."""
    checked = 0
    for c in _card()["claims"]:
        if c["id"] not in ("overflow_not_cause", "alpha_not_required"):
            continue
        for label, g in c["readings"].items():
            for p in g["per_n"]:
                bad, total = _not_finite(c["id"], label, p)
                assert total == p["repeats"] * len(_table(c["id"], label, p, "distance")[1]) * len(
                    _table(c["id"], label, p, "distance")[2]), (c["id"], label, p)
                assert p["note"] == f"{bad} of {total} runs not finite", (c["id"], label, p)
                assert p["outcome"] == (SUP if bad == 0 else REF), (c["id"], label, p)
                checked += 1
    assert checked > 50


def test_the_original_fails_to_train_in_exact_integers():
    """fails_to_train: the least n with N^n past each format's largest number (an integer), and the verdict."""
    c = next(c for c in _card()["claims"] if c["id"] == "fails_to_train")
    items = c["readings"]["exact arithmetic"]["items"]
    assert [it["item"] for it in items] == ["N = 100, float32", "N = 100, float64", "N = 794, float32",
                                            "N = 794, float64"]
    for it in items:
        N, name = int(it["item"].split(",")[0][4:]), it["item"].split(", ")[1]
        top = int(np.finfo(name).max)
        n = next(k for k in range(1, 1000) if N ** k > top)
        assert N ** (n - 1) <= top < N ** n
        assert f"from n = {n} on" in it["note"] and it["outcome"] == SUP, it
    assert c["readings"]["exact arithmetic"]["verdict"] == SUP


def test_the_crosstalk_recounts_from_its_result_file():
    """crosstalk (Sec. 5.3): per network of ``mnist/crosstalk.json``, the pre-registered rule
    (``predictions/2026-11-29-crosstalk.md``: graded when the accuracy with crosstalk is at least 0.5; negligible
    when the two accuracies differ by at most 1 percentage point and the predictions agree on at least 98 %) from
    the integer counts, the outcome and the verdict."""
    c = next(c for c in _card()["claims"] if c["id"] == "crosstalk")
    (label, g), = c["readings"].items()
    path = RESULTS / "mnist" / "crosstalk.json"
    if not path.exists():
        assert g["verdict"] == "not tested" and not g["items"]
        return
    nets = json.loads(path.read_text())["networks"]
    assert [it["item"] for it in g["items"]] == [r["network"] for r in nets]
    counted = []
    for it, r in zip(g["items"], nets):
        assert 0 <= r["agree"] <= r["n_test"] == 10000 and 0 <= r["correct_ff"] <= r["n_test"], r
        a, f, agree = r["correct_auto"] / r["n_test"], r["correct_ff"] / r["n_test"], r["agree"] / r["n_test"]
        if not r["finite"] or a < 0.5:
            want = NOT
        else:
            want = SUP if abs(a - f) <= 0.01 and agree >= 0.98 else REF
            counted.append(want)
        assert it["outcome"] == want and it["n"] == r["n"], (it, r)
        assert f"{100 * a:.2f} % with the crosstalk, {100 * f:.2f} % without" in it["note"]
        assert f"agree on {100 * agree:.2f} % of" in it["note"]
    assert g["total"] == len(counted) and g["supported"] == counted.count(SUP) and g["refuted"] == counted.count(REF)
    assert g["verdict"] == ("not tested" if not counted else REF if REF in counted else SUP)


def test_upper_edges_and_best_cells_beside_every_centre_test():
    """measurements.beside_centres (issue 43): per centre test, reading and (network, grid, N), the n whose
    region recalls, their centres, edges and best cells (from the entries recounted above), the decades
    each spans, and the n whose lower edge the step-floor reruns showed to follow the floor."""
    card = _card()
    rows = card["measurements"]["beside_centres"]
    claims = {c["id"]: c for c in card["claims"]}
    tests = ("headline", "orig_location", "orig_moves", "norm_shift_small", "norm_stable", "norm_near1_dims",
             "mnist_beta1", "mnist_consistent")
    assert {r["claim"] for r in rows} <= set(tests) and {"orig_location", "orig_moves"} <= {r["claim"] for r in rows}
    noise = RESULTS / "noise" / "noise-floor.json"
    floor = {}
    if noise.exists():
        names = {"A (polynomial)": ("A", "B"), "A + leak (+0.01x)": ("A + leak",), "A - leak (-0.01x)": ("A − leak",)}
        for f in json.loads(noise.read_text())["summary"]["edges"]["floor"]:
            if f["reading"] == "follows the floor":
                for label in names[f["F"]]:
                    floor.setdefault(label, set()).add(f["n"])

    def span(values):
        return None if len(values) < 2 else round(math.log10(max(values) / min(values)), 3)

    seen = set()
    for r in rows:
        ext = {"coarse-ext": "coarse"}
        ps = {}
        for p in claims[r["claim"]]["readings"][r["reading"]]["per_n"]:
            if (p["network"], ext.get(p["grid"], p["grid"]), p["N"]) != (r["network"], r["grid"], r["N"]):
                continue
            if p["good_inv_T"] and not ("best_distance" in p and p["best_distance"] > 0.5):
                ps.setdefault(p["n"], p)
        assert r["n"] == sorted(ps), r
        assert r["centre"] == [ps[n]["centre_inv_T"] for n in r["n"]]
        assert r["upper"] == [ps[n]["good_inv_T"][1] for n in r["n"]]
        assert r["lower"] == [ps[n]["good_inv_T"][0] for n in r["n"]]
        assert r["best"] == [ps[n]["best_inv_T"] for n in r["n"]]
        for key, values in (("centre_decades", r["centre"]), ("upper_decades", r["upper"]),
                            ("best_decades", [b[1] for b in r["best"]])):
            want = span(values)
            assert (r[key] is None) == (want is None), r
            assert want is None or r[key] == pytest.approx(want, rel=5e-3, abs=2e-3), r
        assert r["floor_n"] == sorted(n for n in r["n"] if r["network"] == "original"
                                      and n in floor.get(r["reading"], ())), r
        seen.add((r["claim"], r["reading"], r["network"], r["grid"], r["N"]))
    assert len(seen) == len(rows)


def test_the_float32_runs_recount_from_the_records():
    """measurements.float32_runs: every committed float32 block of the autoassociative task (the first
    copy of each key), its runs and those not finite, per file, network, F, N and n."""
    want = {}
    for f, b in _all_blocks():
        if not f.startswith("autoassociative/") or b["block"].get("dtype") != "float32":
            continue
        for r in b["records"]:
            key = (f.split("/")[1][:-len(".jsonl")], r["variant"], r.get("interaction"), r.get("N"), r["n"])
            row = want.setdefault(key, [0, 0])
            row[0] += 1
            row[1] += not r.get("finite", True)
    got = {(r["file"], r["network"], r["F"], r["N"], r["n"]): [r["runs"], r["not_finite"]]
           for r in _card()["measurements"]["float32_runs"]}
    assert got == want and got
