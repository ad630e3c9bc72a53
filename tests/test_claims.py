"""damlite.paper.claims: verdicts from summary rows, on hand-made rows whose answers are known."""
import pytest

from damlite.paper import claims


def _row(variant, n, centre, best=0.0, lr=0.5, fraction=0.3, N=100):
    return {"variant": variant, "n": n, "N": N, "best": best, "good_fraction": fraction,
            "best_inv_temperature": centre, "good_inv_temperature_center": centre,
            "good_inv_temperature_min": centre / 2, "good_inv_temperature_max": centre * 2,
            "good_learning_rate_center": lr}


def _verdicts(rows, **kw):
    return {g["key"]: g["verdict"] for g in claims.grade(rows, **kw)}


def test_the_papers_picture_is_reproduced_when_the_rows_show_it():
    rows = [_row("original", n, 1e-2, lr=0.5) for n in (2, 3, 5)]
    rows += [_row("original", 10, 1e-1), _row("original", 20, 1.0, best=3.0), _row("original", 30, 1.0, best=4.0)]
    rows += [_row("normalized", n, 0.9, lr=1.0) for n in (2, 3, 5, 10, 20, 30)]
    v = _verdicts(rows, rows_other_N=[_row("normalized", n, 1.2, N=250) for n in (10, 20)])
    assert v == {k: "reproduced" for k, _ in claims.CLAIMS}


def test_a_region_without_any_recalling_cell_does_not_count_as_stable():
    rows = [_row("original", 2, 1e-2)]
    rows += [_row("normalized", 10, 0.9), _row("normalized", 20, 1.0), _row("normalized", 30, 1.1, best=0.72)]
    g = next(g for g in claims.grade(rows) if g["key"] == "norm_stable")
    assert g["verdict"] == "partly" and "n = 30" in g["detail"]  # n = 10, 20 pass; 30 recalls nowhere
    rows[-1]["best"] = 0.4  # now n = 30 recalls: stable and near 0.9
    assert _verdicts(rows)["norm_stable"] == "reproduced"


@pytest.mark.parametrize("centre, verdict", [(1e-2, "reproduced"), (1e-4, "not reproduced")])
def test_original_location_uses_the_stated_factor(centre, verdict):
    rows = [_row("original", n, centre) for n in (2, 3, 5)] + [_row("normalized", 2, 0.9)]
    assert _verdicts(rows)["orig_location"] == verdict


def test_convention_b_raises_the_original_axis_to_the_power_n():
    rows = claims.convention_b([_row("original", 3, 0.1), _row("normalized", 3, 0.1)])
    assert rows[0]["good_inv_temperature_center"] == pytest.approx(1e-3)
    assert rows[1]["good_inv_temperature_center"] == 0.1


def test_the_n_claim_is_not_tested_without_rows_at_the_other_n():
    rows = [_row("original", 2, 1e-2), _row("normalized", 2, 0.9)]
    assert _verdicts(rows)["norm_N"] == "not tested"


def test_centres_near_the_target_but_spread_apart_are_only_partly_stable():
    rows = [_row("original", 2, 1e-2)] + [_row("normalized", n, c) for n, c in ((10, 0.35), (20, 2.5))]
    assert _verdicts(rows)["norm_stable"] == "partly"  # both within a factor 3 of 0.9, 0.85 decades apart


def test_the_n_claim_fails_where_either_size_has_no_recalling_cell():
    rows = [_row("original", 2, 1e-2)] + [_row("normalized", n, 1.0) for n in (10, 20)]
    other = [_row("normalized", 10, 1.2, N=250), _row("normalized", 20, 1.0, best=1.04, N=250)]
    g = next(g for g in claims.grade(rows, rows_other_N=other) if g["key"] == "norm_N")
    assert g["verdict"] == "partly" and "n=20: 1 vs 1 (no recalling cell at N = 100 or 250)" in g["detail"]


def test_substantial_counts_an_n_only_where_some_cell_recalls():
    rows = [_row("original", 2, 1e-2)]
    rows += [_row("normalized", 10, 0.9), _row("normalized", 20, 1.0),
             _row("normalized", 30, 1.1, best=0.72, fraction=0.77)]  # wide, but no cell recalls
    g = next(g for g in claims.grade(rows) if g["key"] == "norm_substantial")
    assert g["verdict"] == "partly"
    assert g["detail"] == "n=10: 0.30, n=20: 0.30, n=30: no recall"


def test_the_ledger_is_narrow_with_a_legend_and_the_claims_in_full():
    rows = [_row("original", n, 1e-2) for n in (2, 20)] + [_row("normalized", 10, 0.9)]
    graded = {"A, homogeneous F": claims.grade(rows),
              "A, leak +0.01x (author's code)": claims.grade(rows)}
    text = claims.ledger_markdown(graded, headers={"A, homogeneous F": "A",
                                                   "A, leak +0.01x (author's code)": "A + leak"})
    lines = text.splitlines()
    assert lines[0] == "| claim | A | A + leak |"
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + len(claims.CLAIMS)
    assert max(len(line) for line in table) <= 60  # short labels, short headings
    assert "**A + leak**: A, leak +0.01x (author's code)" in text
    for key, full in claims.CLAIMS:  # every claim's full text is still shown, under its label
        assert f"- *{claims.SHORT[key]}*: {full}" in text


def test_the_ledger_without_headers_uses_the_labels_and_needs_no_legend():
    rows = [_row("original", 2, 1e-2), _row("normalized", 10, 0.9)]
    text = claims.ledger_markdown({"fine grid": claims.grade(rows)})
    assert text.splitlines()[0] == "| claim | fine grid |"
    assert "Columns:" not in text
    assert "The claims in full" not in claims.ledger_markdown({"fine grid": claims.grade(rows)},
                                                              full_claims=False)


# ---------------------------------------------------------------------------------- scorecard
import functools  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from damlite.paper import scorecard  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "book" / "results"
CARD = RESULTS / "scorecard.json"


def test_region_flags_every_edge_the_good_cells_touch():
    z = np.full((4, 5), 10.0)
    z[0, 1:3] = 0.0  # touches the lowest 1/T only
    r = claims.region(z, [1, 2, 3, 4], [1, 2, 3, 4, 5])
    assert r["censored"] == ["invT_low"] and r["good_fraction"] == 2 / 20
    z[1:, 4] = 0.2  # now also the highest 1/T and the highest rate
    assert claims.region(z, [1, 2, 3, 4], [1, 2, 3, 4, 5])["censored"] == ["invT_low", "invT_high", "lr_high"]


def test_merged_grids_fail_when_they_disagree_or_are_all_censored():
    assert claims.merge_grids({"coarse": (True, True), "fine": (True, False)}) == (True, "")
    ok, note = claims.merge_grids({"coarse": (True, False), "fine": (False, False)})
    assert not ok and "disagree" in note
    ok, note = claims.merge_grids({"coarse": (True, True), "fine": (True, True)})
    assert not ok and "censored" in note


def _reading(tables):
    return scorecard.Reading("test", tables)


def _table(z, its, lrs, repeats=3, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    stack = np.stack([np.asarray(z, float) + noise * rng.standard_normal(np.shape(z)) for _ in range(repeats)])
    return scorecard.Table(np.asarray(its, float), np.asarray(lrs, float), stack, ["k"] * repeats, ["f"])


def test_a_censored_centre_never_passes_a_location_claim():
    its, lrs = np.logspace(-3, 0, 10), np.logspace(-3, 0, 10)
    z = np.full((10, 10), 12.0)
    z[2:5, 3:7] = 0.0  # centred at 1/T ~ 1e-2, inside the grid
    tables = {("original", n, "coarse", 100): _table(z, its, lrs) for n in (2, 3, 5)}
    hits, total, _ = scorecard.orig_location(_reading(tables))
    assert (hits, total) == (3, 3)
    z[0, 3:7] = 0.0  # the same region now also touches the lowest 1/T: its centre is censored
    tables[("original", 5, "coarse", 100)] = _table(z, its, lrs)
    hits, total, per_n = scorecard.orig_location(_reading(tables))
    assert (hits, total) == (2, 3)
    assert [p["censored"] for p in per_n if p["n"] == 5] == [["invT_low"]]


def test_bootstrap_agreement_is_one_for_clear_data_and_lower_for_marginal_data():
    its, lrs = np.logspace(-3, 0, 10), np.logspace(-3, 0, 10)
    z = np.full((10, 10), 12.0)
    z[3:5, 3:6] = 0.0
    clear = {("original", n, "coarse", 100): _table(z, its, lrs) for n in (2, 3, 5)}
    g = scorecard._grade(scorecard.orig_location, _reading(clear), bootstrap=50)
    assert g["verdict"] == "reproduced" and g["bootstrap_same"] == 1.0
    z2 = np.full((10, 10), 12.0)
    z2[3, 4] = 0.5  # at n = 5 one cell sits at the recall threshold
    marginal = dict(clear)
    marginal[("original", 5, "coarse", 100)] = _table(z2, its, lrs, repeats=5, noise=0.5, seed=1)
    g = scorecard._grade(scorecard.orig_location, _reading(marginal), bootstrap=50)
    assert g["bootstrap_same"] < 1.0


def test_the_bottom_line_names_the_readings_that_reproduce():
    rd = {"A": {"verdict": "not reproduced", "hits": 0, "total": 2},
          "B": {"verdict": "reproduced", "hits": 2, "total": 2}}
    assert scorecard._bottom_line(rd)["verdict"] == "only under B"
    rd["B"] = {"verdict": "partly", "hits": 1, "total": 2}
    assert scorecard._bottom_line(rd)["verdict"] == "partly"
    assert scorecard._bottom_line({"A": {"verdict": "not tested", "hits": 0, "total": 0}})["verdict"] == "not tested"


@pytest.mark.skipif(not CARD.exists(), reason="no committed scorecard")
def test_the_committed_scorecard_is_not_stale():
    """Regenerate the scorecard from the committed result files: it must equal the committed json
    (run `python -m damlite scorecard` after adding results)."""
    fresh = json.loads(json.dumps(scorecard.build(RESULTS), ensure_ascii=False))
    committed = json.loads(CARD.read_text())
    assert fresh == committed, "book/results/scorecard.json is stale: run `python -m damlite scorecard`"


@functools.lru_cache(maxsize=None)
def _blocks(stem):
    """The blocks of a result file (the first copy of each key), parsed with the json module."""
    path = RESULTS / ("mnist" if stem.startswith("mnist") else "autoassociative") / f"{stem}.jsonl"
    out = {}
    for line in path.read_text().splitlines():
        block = json.loads(line)
        out.setdefault(block["key"], block)
    return list(out.values())


def _recount(sources, network, n, grid, N, metric):
    """Cell means over repeats, read with the json module and reduced in plain NumPy."""
    cells = {}
    for stem, match in sources:
        for block in _blocks(stem):
            for r in block["records"]:
                if (r["variant"], r["n"], r["grid"], r.get("N") or 794, r["dtype"]) != (network, n, grid, N, "float64"):
                    continue
                if any(r.get(k) != v for k, v in match.items() if k != "grid"):
                    continue
                v = r[metric]
                cells.setdefault((r["inv_temperature"], r["learning_rate"]), []).append(np.nan if v is None else v)
    its = sorted({k[0] for k in cells})
    lrs = sorted({k[1] for k in cells})
    z = np.array([[np.nanmean(cells[(i, j)]) for j in lrs] for i in its])
    return z, len(cells[(its[0], lrs[0])])


@pytest.mark.skipif(not CARD.exists(), reason="no committed scorecard")
def test_an_independent_recount_agrees_with_the_scorecard():
    """best_distance / best_f1, good_fraction, repeats and the censoring flags of every per-n entry,
    recounted from the .jsonl files without damlite."""
    card = json.loads(CARD.read_text())
    checked = 0
    for claim in card["claims"]:
        for label, graded in claim["readings"].items():
            for p in graded["per_n"]:
                src = card["sources"][f"{label}: {p['setting']}" if "setting" in p else label]
                if p["grid"] == "coarse" and p["N"] == 100 and p["network"] == "normalized" \
                        and claim["id"] == "mnist_consistent":
                    src = card["sources"]["A"]  # the autoassociative side of the cross-task claim
                files = [f.strip() for f in p["file"].split(",")]
                sources = [(stem, m) for stem, m in src
                           if stem in files and m.get("grid", p["grid"]) == p["grid"]]
                metric = "distance" if "best_distance" in p else "f1"
                z, repeats = _recount(sources, p["network"], p["n"], p["grid"], p["N"], metric)
                if metric == "distance":
                    best, tol = np.nanmin(z), 0.5
                    assert p["best_distance"] == pytest.approx(best, rel=1e-3, abs=1e-4)
                else:
                    best, tol = np.nanmax(z), card["tolerances"]["mnist_f1"]
                    assert p["best_f1"] == pytest.approx(best, rel=1e-3, abs=1e-4)
                good = np.isfinite(z) & (np.abs(z - best) <= tol)
                assert p["good_fraction"] == pytest.approx(good.mean(), rel=1e-3)
                edges = [e for e, hit in zip(("invT_low", "invT_high", "lr_low", "lr_high"),
                                             (good[0].any(), good[-1].any(), good[:, 0].any(), good[:, -1].any()))
                         if hit]
                assert p["censored"] == edges, (claim["id"], label, p)
                assert p["repeats"] == repeats
                checked += 1
    assert checked > 100


def test_the_command_line_writes_a_scorecard_from_partial_results(tmp_path, capsys):
    """Grids that are not on file yet are listed as missing and their claims are not tested;
    the command writes the json all the same."""
    from damlite.__main__ import main

    (tmp_path / "autoassociative").mkdir()
    (tmp_path / "mnist").mkdir()
    lines = (RESULTS / "mnist" / "mnist-short.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "mnist" / "mnist-short.jsonl").write_text("".join(lines[:2]))  # two grids only
    assert main(["scorecard", "--results", str(tmp_path), "--bootstrap", "0"]) == 0
    card = json.loads((tmp_path / "scorecard.json").read_text())
    assert len(card["measurements"]["mnist_missing"]["A, 60 epochs"]) == 6
    verdicts = {c["id"]: c["bottom_line"]["verdict"] for c in card["claims"]}
    assert verdicts["headline"] == "not tested" and verdicts["sec_m"] == "not tested"
    assert "20 claims" in capsys.readouterr().out
