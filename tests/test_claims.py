"""The scorecard's rule book (damlite.paper.claims) and its machinery, on hand-made tables whose
answers are known; the committed scorecard is fresh; missing inputs are refused; the card is
written whole or not at all. The recount of the committed card is tests/test_recount.py."""
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from damlite.paper import claims as C
from damlite.paper import grading, scorecard, scorecard_markdown
from damlite.paper.tables import Reading, Table

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "book" / "results"
CARD = RESULTS / "scorecard.json"
SUP, REF, UND = C.SUPPORTED, C.REFUTED, C.UNDETERMINED


# ---------------------------------------------------------------------------------- the rules
def test_region_flags_every_edge_the_good_cells_touch_and_measures_area_in_decades():
    its, lrs = np.logspace(0, 3, 4), np.logspace(0, 4, 5)  # one decade per step on both axes
    z = np.full((4, 5), 10.0)
    z[0, 1:3] = 0.0  # touches the lowest 1/T only
    r = C.region(z, its, lrs)
    assert r["censored"] == ["invT_low"] and r["good_fraction"] == 2 / 20
    assert r["area"] == pytest.approx(2.0)  # two cells of 1 x 1 decade
    z[1:, 4] = 0.2  # now also the highest 1/T and the highest rate
    assert C.region(z, its, lrs)["censored"] == ["invT_low", "invT_high", "lr_high"]


@pytest.mark.parametrize("edges, centre, outcome", [
    ([], 1e-2, SUP),  # measured inside the window, nothing beyond the grid
    ([], 1e-4, REF),
    (["invT_low"], 1e-2, UND),  # the true centre may be lower: out of the window, or not
    (["invT_low"], 1e-4, REF),  # lower still cannot bring it back
    (["invT_low"], 1.0, UND),  # lower could bring it in
    (["invT_high"], 1.0, REF),  # higher cannot
    (["lr_high", "lr_low"], 1e-2, SUP),  # the other axis does not matter
])
def test_censoring_counts_only_in_the_direction_that_could_change_the_outcome(edges, centre, outcome):
    entry = {"centre_inv_T": centre, "censored": edges}
    assert C.near_bounds(C.centre_bounds(entry, "invT"), 1e-2) == outcome


def test_reach_area_span_and_ratio_open_toward_the_censored_side():
    e = {"good_lr_max": 1.0, "area": 0.6, "censored": ["lr_high"]}
    assert C.reach_bounds(e) == (1.0, math.inf) and C.area_bounds(e) == (0.6, math.inf)
    assert C.judge(C.area_bounds(e), 1.0) == UND  # 0.6 decades^2 so far: more could lie past the top rate
    assert C.judge(C.area_bounds({"area": 0.6, "censored": []}), 1.0) == REF
    # two regions both at the top rate: their ratio of reaches says nothing (the old norm_lr "ratio 1")
    assert C.judge(C.ratio_bounds(C.reach_bounds(e), C.reach_bounds(e)), 1.5) == UND
    # a span of centres, one censored outward: at least the measured distance to it
    least, most = C.span_bounds([(1e-3, 1e-3), (0.0, 1e-2)])
    assert least == 0.0 and most == math.inf
    least, most = C.span_bounds([(0.0, 1e-4), (1e-1, math.inf)])
    assert least == pytest.approx(3.0) and most == math.inf
    assert C.judge((least, most), 1.0) == SUP  # censoring can only widen it


def test_grids_merge_the_same_way_everywhere():
    assert C.merge_grids({"coarse": UND, "fine": SUP}) == (SUP, "")
    outcome, note = C.merge_grids({"coarse": SUP, "fine": REF})
    assert outcome == UND and "disagree" in note
    outcome, note = C.merge_grids({"coarse": UND, "fine": UND})
    assert outcome == UND and "every grid" in note
    assert C.merge_grids({"coarse": C.NOT_COUNTED, "fine": REF}) == (REF, "")
    assert C.merge_grids({"coarse": C.NOT_COUNTED})[0] == C.NOT_COUNTED


def test_a_verdict_counts_three_outcomes_and_leaves_out_n_it_does_not_count():
    v = C.verdict_of([SUP, SUP, UND, C.NOT_COUNTED])
    assert (v["verdict"], v["supported"], v["undetermined"], v["total"]) == (UND, 2, 1, 3)
    assert C.verdict_of([SUP, REF, UND])["verdict"] == REF
    assert C.verdict_of([SUP, SUP])["verdict"] == SUP
    assert C.verdict_of([])["verdict"] == "not tested"


def test_the_bottom_line_ignores_unstable_and_identity_verdicts():
    def g(verdict, share=1.0, identity=None):
        return {"verdict": verdict, "bootstrap_same": share, "identity": identity}
    assert C.bottom_line({"A": g(REF), "B": g(SUP)})["verdict"] == "only under B"
    assert C.bottom_line({"A": g(REF), "B": g(UND)})["verdict"] == UND
    assert C.bottom_line({"A": g(REF), "B": g(REF)})["verdict"] == REF
    line = C.bottom_line({"A": g(SUP, share=0.5), "B": g(REF)})
    assert line["verdict"] == REF and "unstable" in line["reason"] and line["counted"] == ["B"]
    line = C.bottom_line({"A": g(SUP, identity="one network")})
    assert line["verdict"] == "no bottom line" and "identity" in line["reason"]
    assert C.bottom_line({"A": {"verdict": "not tested"}})["verdict"] == "not tested"


def test_every_rule_a_claim_names_is_in_the_rule_book():
    names = {name for name, _ in C.RULES}
    for cid, c in scorecard.CLAIMS.items():
        assert set(c["rules"]) <= names, cid
    with pytest.raises(ValueError, match="rule must be one of"):
        C.rule_text("no such rule")


# ---------------------------------------------------------------------------------- grading
def _table(z, its, lrs, repeats=3, noise=0.0, seed=0, key="autoassociative|x|seed=1|N=100,memories=100,patterns=20|"):
    rng = np.random.default_rng(seed)
    stack = np.stack([np.asarray(z, float) + noise * rng.standard_normal(np.shape(z)) for _ in range(repeats)])
    return Table(np.asarray(its, float), np.asarray(lrs, float), stack, [key] * repeats, ["f"])


def _location_tables(z, its, lrs):
    return {("original", n, "coarse", 100): _table(z, its, lrs) for n in (2, 3, 5)}


def test_the_location_claim_tests_both_halves_and_censoring_decides_undetermined_or_refuted():
    its, lrs = np.logspace(-3, 0, 10), np.logspace(-3, 0, 10)
    z = np.full((10, 10), 12.0)
    z[2:5, 8:10] = 0.0  # 1/T ~ 1e-2, rates ~ 0.5 (touches the top rate: censored there)
    tables = _location_tables(z, its, lrs)
    items, _ = grading.orig_location(Reading("t", tables))
    assert [it["outcome"] for it in items] == [UND] * 3  # the rate's centre could lie past the top
    z = np.full((10, 10), 12.0)
    z[2:5, 7:9] = 0.0  # the same, inside the grid
    items, _ = grading.orig_location(Reading("t", _location_tables(z, its, lrs)))
    assert [it["outcome"] for it in items] == [SUP] * 3
    z[0:2, 7:9] = 0.0  # now it runs past the lowest 1/T and its centre falls to 1e-2.6: still near
    items, entries = grading.orig_location(Reading("t", _location_tables(z, its, lrs)))
    assert [it["outcome"] for it in items] == [UND] * 3 and entries[0]["censored"] == ["invT_low"]
    z = np.full((10, 10), 12.0)
    z[0:1, 7:9] = 0.0  # only at the lowest row: already below 1e-2 / 3, and lower still beyond
    items, _ = grading.orig_location(Reading("t", _location_tables(z, its, lrs)))
    assert [it["outcome"] for it in items] == [REF] * 3


def test_degrades_counts_only_the_n_that_recall():
    its, lrs = np.logspace(-3, 0, 10), np.logspace(-3, 0, 10)
    z = np.full((10, 10), 12.0)
    z[3:6, 3:6] = 0.0  # good region away from the top rate, which is bad: degrades
    dead = np.full((10, 10), 12.0)  # no cell recalls
    tables = {("original", 2, "coarse", 100): _table(z, its, lrs), ("original", 20, "coarse", 100): _table(dead, its, lrs)}
    items, _ = grading.orig_degrades(Reading("t", tables))
    assert [it["outcome"] for it in items] == [SUP, C.NOT_COUNTED]
    assert C.verdict_of(it["outcome"] for it in items)["total"] == 1


def test_the_paired_bootstrap_draws_the_same_repeats_for_blocks_that_share_their_data():
    its, lrs = np.logspace(-1, 2, 6), np.logspace(-3, 0, 6)
    rng = np.random.default_rng(3)
    offsets = rng.normal(0, 3.0, 5)  # each repeat's data: large, shared by setting and control
    base = np.full((6, 6), 12.0)
    base[2:4, 2:4] = 0.0
    ctrl = Table(its, lrs, np.stack([base + o for o in offsets]), ["autoassociative|c|seed=1|N=100,memories=100,patterns=20|"] * 5, ["f"])
    alt = Table(its, lrs, np.stack([base + o + 0.01 for o in offsets]),
                ["autoassociative|a|seed=1|N=100,memories=100,patterns=20|"] * 5, ["f"])
    r = Reading("t", {("control|original", 3, "coarse", 100): ctrl, ("m = 2|original", 3, "coarse", 100): alt})
    for rs in (r.resample(np.random.default_rng(k)) for k in range(20)):
        a, b = (rs.tables[k].stack for k in sorted(rs.tables))
        assert np.allclose(np.abs(a - b), 0.01)  # the same repeats drawn on both sides
    other = Table(its, lrs, alt.stack, ["autoassociative|a|seed=2|N=100,memories=100,patterns=20|"] * 5, ["f"])
    r2 = Reading("t", {("control|original", 3, "coarse", 100): ctrl, ("m = 2|original", 3, "coarse", 100): other})
    draws = [r2.resample(np.random.default_rng(k)) for k in range(20)]
    assert any(not np.allclose(np.abs(d.tables[("control|original", 3, "coarse", 100)].stack
                                      - d.tables[("m = 2|original", 3, "coarse", 100)].stack), 0.01) for d in draws)


def test_bootstrap_agreement_is_one_for_clear_data_and_lower_for_marginal_data():
    its, lrs = np.logspace(-3, 0, 10), np.logspace(-3, 0, 10)
    z = np.full((10, 10), 12.0)
    z[3:5, 7:9] = 0.0  # 1/T ~ 1.5e-2, rate ~ 0.32
    clear = Reading("clear", _location_tables(z, its, lrs))
    g = scorecard._grade(grading.orig_location, clear, resamples=scorecard._resamples(clear, 50))
    assert g["verdict"] == SUP and g["bootstrap_same"] == 1.0 and not g["unstable"]
    stack = np.full((5, 10, 10), 12.0)
    stack[:, 3, 8] = [0.0, 0.0, 1.0, 1.0, 0.4]  # at n = 5 one cell, its mean 0.48: at the recall threshold
    tables = _location_tables(z, its, lrs)
    tables[("original", 5, "coarse", 100)] = Table(its, lrs, stack, ["autoassociative|x|seed=1|N=100,memories=100,"
                                                                      "patterns=20|"] * 5, ["f"])
    marginal = Reading("marginal", tables)
    g = scorecard._grade(grading.orig_location, marginal, resamples=scorecard._resamples(marginal, 50))
    assert g["verdict"] == SUP and 0.2 < g["bootstrap_same"] < 0.8 and g["unstable"]


def test_mnist_margins_count_the_cells_that_would_turn_an_outcome():
    from damlite.paper.grading_mnist import _count_margin

    def shrinks(a, b):
        return b < a and b >= 0.5 * a
    assert _count_margin((9, 8), shrinks) == 1  # 9 -> 9 good cells would not shrink
    assert _count_margin((10, 7), shrinks) == 3  # 7 -> 4, 7 -> 10, or 10 -> 8 and 7 -> 8
    assert _count_margin((9, 9), lambda i, u: i / u >= 0.5, valid=lambda i, u: 0 <= i <= u and u >= 1) == 5


def test_the_claims_that_compare_a_network_with_itself_are_marked_under_reading_a():
    for cid in ("headline", "norm_lr", "mnist_proportional", "mnist_shape", "scales_seen"):
        ident = scorecard.CLAIMS[cid]["identity"]
        assert ident.get("A") or ident.get("*"), cid
    # "identity" only where two networks are compared: Krotov's 1/540 is not the other network
    for cid in ("orig_location", "mnist_krotov", "mnist_beta1"):
        assert not scorecard.CLAIMS[cid]["identity"], cid


def test_the_exact_claims_come_out_as_chapter_4_and_3_show():
    assert {it["outcome"] for it in grading.theory_homogeneous()[0]} == {SUP}
    assert [it["outcome"] for it in grading.theory_exponential()[0]] == [REF]
    assert {it["outcome"] for it in grading.theory_overflow()[0]} == {SUP}


# ---------------------------------------------------------------------------------- the page's words
def test_the_matrix_has_one_symbol_cell_per_claim_and_reading():
    card = {"claims": [{"id": "x", "task": "aa", "claim": "orig.: n >= 20",
                        "readings": {"A": {"verdict": SUP, "supported": 2, "total": 2, "identity": None,
                                           "unstable": False},
                                     "B": {"verdict": REF, "supported": 1, "total": 3, "identity": "one network",
                                           "unstable": False},
                                     "C": {"verdict": "not tested", "total": 0}},
                        "bottom_line": {"verdict": SUP}}]}
    text = scorecard_markdown.matrix_markdown(card, ("aa",))
    assert text.splitlines()[0] == "| claim | A | B | C | bottom line |"
    assert text.splitlines()[2] == "| orig.: n ≥ 20 | ✓ 2/2 | = 1/3 | – | supported |"
    assert "identity" in scorecard_markdown.legend_markdown()


# ---------------------------------------------------------------------------------- the committed card
@pytest.mark.slow
@pytest.mark.skipif(not CARD.exists(), reason="no committed scorecard")
def test_the_committed_scorecard_is_not_stale():
    """Regenerate the scorecard from the committed result files: it must equal the committed json
    (run `python -m damlite scorecard` after adding results)."""
    fresh = json.loads(json.dumps(scorecard.build(RESULTS), ensure_ascii=False))
    committed = json.loads(CARD.read_text())
    assert fresh == committed, "book/results/scorecard.json is stale: run `python -m damlite scorecard`"


# ---------------------------------------------------------------------------------- inputs and writing
def _partial_results(tmp_path, leave_out):
    """A copy of book/results (links to the files) without ``leave_out``."""
    for sub in ("autoassociative", "mnist"):
        (tmp_path / sub).mkdir()
        for f in (RESULTS / sub).glob("*.jsonl"):
            if f.name != leave_out:
                (tmp_path / sub / f.name).symlink_to(f)
    return tmp_path


def test_a_missing_result_file_is_an_error_naming_it_and_the_claims_it_feeds(tmp_path, capsys):
    from damlite.__main__ import main

    root = _partial_results(tmp_path, "autoassociative-full.jsonl")
    with pytest.raises(scorecard.MissingInputs) as err:
        scorecard.build(root, bootstrap=0)
    assert "autoassociative-full.jsonl: missing" in str(err.value) and "headline" in str(err.value)
    previous = '{"claims": [], "previous": true}\n'  # a card (--out replaces nothing else)
    (root / "scorecard.json").write_text(previous)
    assert main(["scorecard", "--results", str(root), "--bootstrap", "0"]) == 2
    assert "autoassociative-full.jsonl: missing (feeds headline" in capsys.readouterr().err
    assert (root / "scorecard.json").read_text() == previous  # nothing written


def test_an_empty_results_folder_is_refused(tmp_path, capsys):
    from damlite.__main__ import main

    assert main(["scorecard", "--results", str(tmp_path), "--bootstrap", "0"]) == 2
    assert "missing" in capsys.readouterr().err
    assert not (tmp_path / "scorecard.json").exists()


@pytest.mark.slow  # whole computations (tens of seconds on 2 cores): the full suite runs it
def test_allow_missing_marks_the_claims_and_exits_non_zero(tmp_path, capsys):
    from damlite.__main__ import main

    root = _partial_results(tmp_path, "autoassociative-censored.jsonl")
    assert main(["scorecard", "--results", str(root), "--bootstrap", "0", "--allow-missing"]) == 3
    card = json.loads((root / "scorecard.json").read_text())
    by = {c["id"]: c for c in card["claims"]}
    assert by["orig_location"]["readings"]["A"]["verdict"] == "missing input"
    assert by["mnist_shrink"]["readings"]["A, 60 epochs"]["verdict"] == SUP  # its inputs are all there
    assert card["missing_inputs"][0]["file"].endswith("autoassociative-censored.jsonl")
    assert "missing input" in capsys.readouterr().err


def test_an_incomplete_result_file_is_an_error_too(tmp_path):
    root = _partial_results(tmp_path, "mnist-short.jsonl")
    lines = (RESULTS / "mnist" / "mnist-short.jsonl").read_text().splitlines(keepends=True)
    (root / "mnist" / "mnist-short.jsonl").write_text("".join(lines[:2]))  # two of its grids
    with pytest.raises(scorecard.MissingInputs, match=r"mnist-short.jsonl: 6 of its 8 blocks .* \(feeds mnist_shrink"):
        scorecard.build(root, bootstrap=0)


def test_the_card_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "scorecard.json"
    scorecard.write({"a": 1, "claims": []}, path)
    assert json.loads(path.read_text()) == {"a": 1, "claims": []}

    def full_disk(*args, **kw):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="could not write .*scorecard.json"):
        scorecard.write({"b": 2, "claims": []}, path)
    assert json.loads(path.read_text()) == {"a": 1, "claims": []}  # the previous card, untouched
    assert [p.name for p in tmp_path.iterdir()] == ["scorecard.json"]  # no temporary file left


def test_the_bootstrap_count_is_bounded(capsys):
    from damlite.__main__ import main

    assert main(["scorecard", "--bootstrap", "-1"]) == 2
    assert "--bootstrap must be an integer in [0, 10000]" in capsys.readouterr().err
    with pytest.raises(ValueError, match="bootstrap"):
        scorecard.build(RESULTS, bootstrap=10**9)
