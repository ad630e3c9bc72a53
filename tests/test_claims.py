"""damlite.claims: verdicts from summary rows, on hand-made rows whose answers are known."""
import pytest

from damlite import claims


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
