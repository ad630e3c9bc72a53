"""An independent recount of ``book/results/noise/noise-floor.json``: no damlite import, only json and NumPy.

The result files are read with the ``json`` module (the first complete copy of each block in a file, as in
``tests/test_recount.py``) and the tolerances are the rule book's (``scorecard.json``'s ``tolerances``, checked
against the words of the frozen rule book, ``book/results/predictions/2026-11-29-mnist-noise-floor.md``).

Recounted from the result files and compared field by field:

* **the noise-floor table** (``blocks``): every rerun block in ``book/results/noise/<variation>/`` is matched to
  the committed block it reruns (same block description, float64 for the ``float32`` variation) in
  ``book/results/autoassociative/``; per block the share of per-repeat cells whose distance is bitwise equal, the
  largest change of a cell mean (over the cells whose repeats all give a distance, on both sides), the cells whose
  status changes (good: within the rule book's tolerance of the best cell mean), the good cells, best cell means
  and recall on both sides, the block's description (file, network, n, grid, N, F, repeats, cells) and where and
  how long each side ran (from the provenance). The test is parametrised over the rerun blocks on file, so new
  variations' blocks are recounted as they are added; the rows are matched to them in file order per variation.
* **blocks swapped in** per variation (``regrade``): the committed blocks that have a rerun of that variation.
* **the edges' runs** (``summary.edges``, ``summary.norm_lr_rate10``, ``summary.n25_reading``,
  ``summary.parity``): rule 5's floor runs (lowest recalling row with the step floor 1e-60 and in the committed
  ``coarse-ext`` block of the same F, decades moved, the reading), rule 6's rate axis (reach, censoring and
  ``norm_lr`` by the direction rule), rule 7's n = 25 blocks (best per repeat, the reading) and the exploratory
  parity blocks;
* **the page's tables** (``summary.tables``): each row rebuilt from the recounted numbers.

Not recounted: the verdicts of the regrading (``regrade[...]["changes"]``). They come from building the whole
scorecard (every claim, reading and grid) once per variation with its rerun blocks in place of the committed ones;
``tests/test_recount.py`` recounts the scorecard from the committed files, and redoing it on substituted files is a
second scorecard, not a recount of this file. What is checked instead: the flags (``flags``) follow from the changes
listed, the verdict table shows them, and the scorecard shows this file's summary unchanged. The variations'
descriptions are words; only what the provenance records of them is checked (thread count, kernels, dtype).
Rule 2 names a cell's status as "good / not good, recalls / not"; the file counts good / not good only (a cell
whose mean crosses the recall threshold while staying good is not a status change there), so that is what is
recounted here.
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
NOISE = RESULTS / "noise"
NOISE_JSON = NOISE / "noise-floor.json"
CARD = RESULTS / "scorecard.json"
RULES = RESULTS / "predictions" / "2026-11-29-mnist-noise-floor.md"
pytestmark = pytest.mark.skipif(not NOISE_JSON.exists(), reason="no committed noise-floor table")

ROUNDING = 5e-5 + 1e-9  # the file rounds to 4 decimals


# ----------------------------------------------------------------------------- reading the files
def _read(path):
    """The first complete copy of each block of a JSON-lines result file, in file order."""
    out = {}
    if not path.exists():
        return []
    for line in path.read_text().splitlines():
        try:
            line = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by a run still writing
            continue
        if isinstance(line, dict) and {"key", "block", "records"} <= set(line):
            out.setdefault(line["key"], line)
    return list(out.values())


@functools.lru_cache(maxsize=None)
def _file(name):
    return json.loads((RESULTS / name).read_text())


def _noise():
    return _file("noise/noise-floor.json")


@functools.lru_cache(maxsize=None)
def _tol():
    t = _file("scorecard.json")["tolerances"]
    return t["good_distance"], t["recall_distance"], t["lr_ratio"]


def _same_block(block):
    """A block's description without its dtype (a float32 rerun stands in for the float64 block)."""
    return json.dumps({k: v for k, v in block.items() if k not in ("key", "dtype")}, sort_keys=True)


@functools.lru_cache(maxsize=None)
def _committed():
    """description -> [(file stem, block), ...] over the committed autoassociative float64 blocks, files sorted."""
    out = {}
    for path in sorted((RESULTS / "autoassociative").glob("*.jsonl")):
        for line in _read(path):
            if line["block"].get("dtype") == "float64":
                out.setdefault(_same_block(line["block"]), []).append((path.stem, line))
    return out


def _variations():
    return sorted(p.name for p in NOISE.iterdir() if p.is_dir()) if NOISE.exists() else []


@functools.lru_cache(maxsize=None)
def _all_reruns(variation):
    """The rerun blocks of a variation on file, in file order."""
    return [line for path in sorted((NOISE / variation).glob("autoassociative-*.jsonl")) for line in _read(path)]


def _reruns(variation):
    """The rerun blocks of a variation that rerun a committed block (the table's rows), in file order."""
    return [line for line in _all_reruns(variation) if _same_block(line["block"]) in _committed()]


def _rerun_ids():  # read at collection: only the reruns' files, not the committed ones
    return [(v, k) for v in _variations() for k in range(len(_all_reruns(v)))]


# ----------------------------------------------------------------------------- the arithmetic
def _table(line, repeats=None):
    """Cell means (n_T x n_lr) over the repeats; NaN where a repeat gave no distance."""
    blk = line["block"]
    shape = (len(blk["inv_temperature"]), len(blk["learning_rate"]))
    repeats = blk["repeats"] if repeats is None else repeats
    vals = np.full((repeats, *shape), np.nan)
    for r in line["records"]:
        if r["repeat"] < repeats and r["distance"] is not None:
            vals[r["repeat"], r["i_T"], r["i_lr"]] = r["distance"]
    z = vals.mean(axis=0)  # NaN wherever any repeat is missing
    return z


def _good(z):
    good_tol = _tol()[0]
    if not np.isfinite(z).any():
        return np.zeros(z.shape, bool), math.nan
    best = float(np.nanmin(z))
    return np.isfinite(z) & (z <= best + good_tol), best


def _distances(line):
    return {(r["repeat"], r["i_T"], r["i_lr"]): r["distance"] for r in line["records"]}


def _on(p):
    return f"GPU ({p.get('device', '')})" if p.get("backend") == "cupy" else f"CPU, {p.get('cpu_kernels') or 'NumPy'}"


def _F(s):
    if s.get("interaction") == "polynomial":
        return "A (polynomial)"
    sign = {"code": "+", "paper": "-"}[s["leak"]]
    K = "" if s.get("memories") in (None, 100) else f", K = {s['memories']}"
    return f"A {sign} leak ({sign}{s['epsilon']}x){K}"


def _fmt(x):
    return None if x is None else float(f"{x:.3g}") if isinstance(x, float) else x


def _close(got, want, what):
    if want is None or got is None or (isinstance(got, float) and not math.isfinite(got)):
        assert want is None and (got is None or not math.isfinite(got)), what
    else:
        assert abs(want - got) <= ROUNDING, (what, want, got)
    return 1


def _equal(got, want, what):
    assert got == want, (what, want, got)
    return 1


# ----------------------------------------------------------------------------- the noise-floor table
def _recount_block(variation, rerun):
    """The recounted row of a rerun block, and its committed block."""
    return _recount_cached(variation, rerun["key"], _all_reruns(variation).index(rerun))


@functools.lru_cache(maxsize=None)
def _recount_cached(variation, key, k):
    rerun = _all_reruns(variation)[k]
    (stem, committed), *_ = _committed()[_same_block(rerun["block"])]
    a, b = _distances(committed), _distances(rerun)
    blk = committed["block"]
    za, zb = _table(committed), _table(rerun)
    both = np.isfinite(za) & np.isfinite(zb)
    ga, best_a = _good(za)
    gb, best_b = _good(zb)
    recall = _tol()[1]
    s = dict(blk["settings"])
    return {"variation": variation, "file": stem, "variant": blk["variant"], "n": blk["n"], "grid": blk["grid"],
            "N": s.get("N"), "F": _F(s), "repeats": blk["repeats"], "cells": len(a),
            "identical_share": sum(repr(a[k]) == repr(b.get(k)) for k in a) / len(a),  # same bits
            "largest_mean_change": float(np.abs(za - zb)[both].max()) if both.any() else None,
            "status_changes": int((ga != gb).sum()), "good_cells": [int(ga.sum()), int(gb.sum())],
            "best": [best_a, best_b], "recalls": [bool(best_a <= recall), bool(best_b <= recall)],
            "committed_on": _on(committed["provenance"]), "rerun_on": _on(rerun["provenance"]),
            "rerun_seconds": rerun["provenance"].get("seconds")}, committed


def _compare_block(variation, k):
    """Fields compared for the k-th rerun block on file of a variation (None: it reruns no committed block)."""
    rerun = _all_reruns(variation)[k]
    if _same_block(rerun["block"]) not in _committed():
        return None
    rows = [r for r in _noise()["blocks"] if r["variation"] == variation]
    assert len(rows) == len(_reruns(variation)), (variation, len(rows), len(_reruns(variation)))
    want = rows[_reruns(variation).index(rerun)]
    got, _ = _recount_block(variation, rerun)
    assert set(want) == set(got), (variation, k, set(want) ^ set(got))
    n = 0
    for field, value in got.items():
        what = (variation, k, field)
        if field in ("identical_share", "largest_mean_change"):
            n += _close(value, want[field], what)
        elif field == "best":
            n += sum(_close(x, y, what) for x, y in zip(value, want[field], strict=True))
        else:
            n += _equal(value, want[field], what)
    return n


@pytest.mark.parametrize(("variation", "k"), _rerun_ids(), ids=lambda x: str(x))
def test_each_rerun_block_recounts(variation, k):
    n = _compare_block(variation, k)
    if n is None:
        pytest.skip("reruns no committed block: not a row of the table")
    assert n == 19


def test_every_rerun_block_has_its_row_and_no_row_is_extra():
    names = _variations()
    rows = _noise()["blocks"]
    assert sum(len(_reruns(v)) for v in names) == len(rows) > 0
    assert {r["variation"] for r in rows} <= set(names) <= set(_noise()["variations"])


def test_the_reruns_ran_under_their_variation_with_the_committed_seeds():
    checks = {"one-thread": lambda p, b: ", 1 threads" in p["cpu_kernels"] and "specialise" not in p["cpu_kernels"],
              "two-threads": lambda p, b: ", 2 threads" in p["cpu_kernels"] and "specialise" not in p["cpu_kernels"],
              "generic": lambda p, b: "specialise never" in p["cpu_kernels"],
              "numpy": lambda p, b: p["cpu_kernels"] == "numpy",
              "float32": lambda p, b: b["dtype"] == "float32" and b["variant"] == "normalized"}
    seen = 0
    for v in _variations():
        for rerun in _reruns(v):
            p = rerun["provenance"]
            assert p["backend"] == "numpy" and p["device"] == "cpu" and not p["git_dirty"], (v, rerun["key"])
            assert checks.get(v, lambda p, b: True)(p, rerun["block"]), (v, rerun["key"], p)
            (_, committed), *_ = _committed()[_same_block(rerun["block"])]
            if "seed" in committed["provenance"] and v != "float32":  # float32: the key (dtype) enters the recorded
                # block seed, which the autoassociative task does not use (its data come from the base seed and
                # the settings, matched above)
                assert p["seed"] == committed["provenance"]["seed"], (v, rerun["key"])
            assert rerun["block"]["dtype"] == ("float32" if v == "float32" else "float64"), (v, rerun["key"])
            seen += 1
    assert seen == len(_noise()["blocks"])


def test_blocks_swapped_in_per_variation_recount():
    regrade = _noise()["regrade"]
    assert set(regrade) == {v for v in _variations() if _reruns(v)}
    for v, res in regrade.items():
        mine = {_same_block(r["block"]) for r in _reruns(v)}
        swapped = sum(len(_committed()[d]) for d in mine)  # every committed copy of a rerun block is replaced
        assert res["blocks_swapped"] == swapped, (v, res["blocks_swapped"], swapped)


# ----------------------------------------------------------------------------- what is not recounted: consistency
def test_the_flags_follow_from_the_regrading_and_the_scorecard_shows_this_file():
    noise = _noise()
    flags = {}
    for v, res in noise["regrade"].items():
        for ch in res["changes"]:
            if ch["item"] is None and ch["reading"] != "bottom line":
                flags.setdefault(ch["claim"], {})[ch["reading"]] = ch
    assert set(noise["flags"]) == set(flags)
    for claim, readings in flags.items():
        assert set(noise["flags"][claim]) == set(readings), claim
        for reading, ch in readings.items():
            assert f"{ch['committed']} -> {ch['rerun']}" in noise["flags"][claim][reading], (claim, reading)
    summary = noise["summary"]
    assert summary["noise_floor"] == {k: noise[k] for k in ("variations", "rule", "blocks", "regrade")}
    assert _file("scorecard.json")["reruns"] == summary
    assert Path(noise["rule"].split(" of ", 1)[1]) == RULES.relative_to(ROOT)


def test_the_tolerances_are_the_rule_books():
    text = " ".join(RULES.read_text().split())
    good, recall, ratio = _tol()
    assert f"good = within {good} of the best distance" in text
    assert f"recall = best cell within {recall} of perfect" in text
    assert f"largest good rate >= {ratio}x the original's" in text
    assert "moves at least 3 decades" in text and "at most 1 decade" in text  # rule 5, used below


# ----------------------------------------------------------------------------- the edges' runs
def _recall_rows(line):
    z = _table(line)
    its = line["block"]["inv_temperature"]
    return [its[i] for i in range(z.shape[0]) if np.isfinite(z[i]).any() and np.nanmin(z[i]) <= _tol()[1]]


@functools.lru_cache(maxsize=None)
def _floor_rows():
    censored = [line for line in _read(RESULTS / "autoassociative" / "autoassociative-censored.jsonl")
                if line["block"]["variant"] == "original" and line["block"]["grid"] == "coarse-ext"]
    rows = []
    for line in _read(RESULTS / "autoassociative" / "autoassociative-floor.jsonl"):
        s = dict(line["block"]["settings"])
        plain = {k: v for k, v in s.items() if k != "step_floor"}
        old = [c for c in censored if c["block"]["n"] == line["block"]["n"] and dict(c["block"]["settings"]) == plain]
        assert len(old) == 1, (line["key"], len(old))  # one committed block with the same F and n, floor 1e-30
        low, old_low = min(_recall_rows(line), default=None), min(_recall_rows(old[0]), default=None)
        moved = math.log10(old_low / low) if low and old_low else None
        its = line["block"]["inv_temperature"]
        rows.append({"n": line["block"]["n"], "F": _F(s), "step_floor": s.get("step_floor"),
                     "rows": [min(its), max(its)], "lowest_recalling_row": low,
                     "recalling_rows": len(_recall_rows(line)), "best": _good(_table(line))[1],
                     "committed_lowest_recalling_row": old_low, "edge_moved_decades": moved,
                     "reading": "undetermined" if moved is None else "follows the floor" if moved >= 3
                     else "landscape" if moved <= 1 else "undetermined"})
    return rows


@functools.lru_cache(maxsize=None)
def _rate_rows():
    rows = []
    for line in _read(RESULTS / "autoassociative" / "autoassociative-rate10.jsonl"):
        good, best = _good(_table(line))
        lrs = line["block"]["learning_rate"]
        rows.append({"variant": line["block"]["variant"], "n": line["block"]["n"],
                     "F": _F(dict(line["block"]["settings"])), "best": best, "recalls": bool(best <= _tol()[1]),
                     "reach_lr": max((lrs[j] for j in range(len(lrs)) if good[:, j].any()), default=None),
                     "touches_top": bool(good[:, -1].any())})
    return rows


@functools.lru_cache(maxsize=None)
def _n25_rows():
    rows = []
    for line in _read(RESULTS / "autoassociative" / "autoassociative-n25.jsonl"):
        good, best = _good(_table(line))
        per_rep = []
        for r in range(line["block"]["repeats"]):
            one = {**line, "records": [dict(x, repeat=0) for x in line["records"] if x["repeat"] == r]}
            zr = _table(one, repeats=1)
            per_rep.append(float(np.nanmin(zr)) if np.isfinite(zr).any() else None)
        rows.append({"n": line["block"]["n"], "seed": line["block"]["base_seed"], "best": best,
                     "recalls": bool(best <= _tol()[1]), "best_per_repeat": per_rep, "good_cells": int(good.sum())})
    return rows


@functools.lru_cache(maxsize=None)
def _parity_rows():
    rows = []
    for line in _read(RESULTS / "autoassociative" / "autoassociative-parity.jsonl"):
        good, best = _good(_table(line))
        rows.append({"n": line["block"]["n"], "best": best, "good_cells": int(good.sum()),
                     "recalls": bool(best <= _tol()[1])})
    return rows


def _compare_rows(got, want, rounded, what):
    assert len(got) == len(want), (what, len(got), len(want))
    n = 0
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert set(g) == set(w), (what, k, set(g) ^ set(w))
        for field, value in g.items():
            if field in rounded:
                values = value if isinstance(value, list) else [value]
                wants = w[field] if isinstance(value, list) else [w[field]]
                assert len(values) == len(wants), (what, k, field)
                n += sum(_close(x, y, (what, k, field)) for x, y in zip(values, wants, strict=True))
            else:
                n += _equal(value, w[field], (what, k, field))
    return n


def _norm_lr(rate):
    """Rule 6 by the direction rule, on intervals: a reach touching 10 may go on past it; an original that recalls
    at no rate >= 1 reaches below 1 (its region ends on the coarse grid)."""
    ratio = _tol()[2]
    pairs = {}
    for r in rate:
        pairs.setdefault((r["n"], r["F"]), {})[r["variant"]] = r
    out = {}
    for key, pair in pairs.items():
        if set(pair) != {"normalized", "original"}:
            continue
        a, b = pair["normalized"], pair["original"]
        a_iv = (a["reach_lr"], math.inf if a["touches_top"] else a["reach_lr"])
        b_touches = b["recalls"] and b["touches_top"]
        b_iv = (b["reach_lr"], math.inf if b_touches else b["reach_lr"]) if b["recalls"] else (0.0, 1.0)
        if not a["recalls"]:
            outcome = "not counted"
        else:
            lo, hi = a_iv[0] / b_iv[1], (math.inf if b_iv[0] == 0 else a_iv[1] / b_iv[0])
            outcome = "supported" if lo >= ratio else "refuted" if hi < ratio else "undetermined"
        out[key] = {"n": key[0], "F": key[1], "reach_normalized": a["reach_lr"],
                    "reach_original": b["reach_lr"] if b["recalls"] else 1.0,
                    "original_recalls_past_1": bool(b["recalls"]),
                    "censored": [v for v, t in (("normalized", a["touches_top"]), ("original", b_touches)) if t],
                    "outcome": outcome}
    return out


def _n25_reading(n25):
    by_n = {r["n"]: r for r in n25}
    if 25 not in by_n:
        return None
    if by_n[25]["recalls"]:
        return "seed-specific"
    same_seeds = all(by_n.get(n, {}).get("seed") == by_n[25]["seed"] for n in (20, 30))
    return "systematic" if same_seeds and all(by_n.get(n, {}).get("recalls") for n in (20, 30)) else "undetermined"


def _compare_edges():
    s = _noise()["summary"]
    n = _compare_rows(_floor_rows(), s["edges"]["floor"], {"best", "edge_moved_decades"}, "floor")  # rows: exact
    rate = _rate_rows()
    n += _compare_rows(rate, s["edges"]["rate10"], {"best"}, "rate10")
    n += _compare_rows(_n25_rows(), s["edges"]["n25"], {"best", "best_per_repeat"}, "n25")
    n += _compare_rows(_parity_rows(), s["parity"], {"best"}, "parity")
    mine = _norm_lr(rate)
    theirs = {(r["n"], r["F"]): r for r in s["norm_lr_rate10"]}
    assert set(mine) == set(theirs) and len(theirs) == len(s["norm_lr_rate10"])
    n += _compare_rows([mine[k] for k in sorted(mine)], [theirs[k] for k in sorted(mine)],
                       set(), "norm_lr_rate10")  # reaches: grid values, exact
    n += _equal(_n25_reading(_n25_rows()), s["n25_reading"], "n25_reading")
    return n


def test_the_edges_runs_recount():
    assert _compare_edges() > 0


# ----------------------------------------------------------------------------- the page's tables
def _tables():
    """Each table's rows, rebuilt from the recounted numbers (the noise-floor rows from the result files)."""
    noise = _noise()
    blocks = [_recount_block(v, r)[0] for v in _variations() for r in _reruns(v)]
    order = {v: k for k, v in enumerate(dict.fromkeys(r["variation"] for r in noise["blocks"]))}
    blocks.sort(key=lambda b: order.get(b["variation"], len(order)))  # stable: file order within a variation
    out = {"noise-floor": [[b["variation"], b["F"] + (f", N = {b['N']}" if b["N"] != 100 else ""), b["variant"],
                            b["n"], b["cells"], f"{100 * b['identical_share']:.0f} %",
                            _fmt(round(b["largest_mean_change"], 4) if b["largest_mean_change"] is not None else None),
                            b["status_changes"], f"{_fmt(round(b['best'][0], 4))} -> {_fmt(round(b['best'][1], 4))}"]
                           for b in blocks]}
    out["noise-verdicts"] = [[v, r["blocks_swapped"],
                              ", ".join(f"{c['claim']} ({c['reading']}): {c['committed']} -> {c['rerun']}"
                                        for c in r["changes"] if c["item"] is None) or "none",
                              sum(1 for c in r["changes"] if c["item"] is not None)]
                             for v, r in sorted(noise["regrade"].items(), key=lambda x: order.get(x[0], len(order)))]
    r4 = lambda x: None if x is None else _fmt(round(x, 4))  # noqa: E731
    out["floor"] = [[r["n"], r["F"], _fmt(r["committed_lowest_recalling_row"]), _fmt(r["lowest_recalling_row"]),
                     r4(r["edge_moved_decades"]), r["reading"]] for r in _floor_rows()]
    lr = _norm_lr(_rate_rows())
    out["rate10"] = [[r["n"], r["F"], _fmt(r["reach_normalized"]),
                      _fmt(r["reach_original"]) if r["original_recalls_past_1"] else "below 1 (no recall at 1 or more)",
                      ", ".join(r["censored"]) or "neither", r["outcome"]] for _, r in sorted(lr.items())]
    out["n25"] = [[r["n"], r4(r["best"]), "yes" if r["recalls"] else "no",
                   ", ".join(str(r4(x)) for x in r["best_per_repeat"])] for r in _n25_rows()]
    out["parity"] = [[r["n"], r4(r["best"]), r["good_cells"]] for r in _parity_rows()]
    return out


def test_the_pages_tables_show_the_recounted_numbers():
    tables = {t["id"]: t for t in _noise()["summary"]["tables"]}
    mine = _tables()
    for tid, rows in mine.items():
        if tid not in tables:
            assert not rows, tid  # a table is shown when its runs are on file
            continue
        assert tables[tid]["rows"] == rows, tid
    assert set(tables) <= set(mine)
    assert f"Reading by rule 7: {_n25_reading(_n25_rows())}." == tables["n25"]["note"]
    note = tables["noise-floor"]["note"]  # the variations and the tolerance the table was counted with
    assert f"within {_tol()[0]} of the best cell mean" in note
    assert all(f"{k}: {v}" in note for k, v in _noise()["variations"].items())
    words = {"one-thread": "one thread", "two-threads": "two threads", "generic": "DAMLITE_SPECIALISE=never",
             "numpy": "NumPy", "float32": "float32"}
    assert all(words[v] in _noise()["variations"][v] for v in _variations() if v in words)
