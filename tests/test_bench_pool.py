"""bench/pool.py's rule: pooled statistics, met / missed / unclear, and what it refuses.

Made-up records with known medians; no timing runs here.
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import pool  # noqa: E402


def _cpu_epoch(tmp_path, name, epoch, products, commit="abc1234", rounds=None):
    seconds = {"estimator_float64_original": epoch, "products_float64": products,
               "estimator_float64_normalized": epoch, "estimator_float32_normalized": [x / 2 for x in epoch],
               "krotov_notebook": [x * 21 for x in epoch]}
    doc = {"commit": commit, "rounds": rounds or len(epoch), "epochs_timed": 4,
           "runs": [{"threads": 1, "all_seconds": seconds}]}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _row(rows, label):
    return next(r for r in rows if r["target"] == label)


def test_pooled_statistics_are_over_every_round(tmp_path):
    a = _cpu_epoch(tmp_path, "a.json", [1.2, 1.4, 1.25], [1.0, 1.0, 1.0])
    b = _cpu_epoch(tmp_path, "b.json", [2.8, 2.4, 2.7], [2.0, 2.0, 2.0])
    row = _row(pool.pool([a, b]), "float64 epoch / products, 1 thread")
    ratios = [1.2, 1.4, 1.25, 1.4, 1.2, 1.35]
    assert row["pooled_median_of_round_ratios"] == pytest.approx(statistics.median(ratios))
    assert row["ratio_of_pooled_medians"] == pytest.approx(statistics.median([1.2, 1.4, 1.25, 2.8, 2.4, 2.7]) / 1.5)
    assert row["rounds"] == 6 and row["rounds_meeting"] == 3
    assert row["each_record"] == ["met", "missed"] and len(row["leave_one_record_out"]) == 2
    lo, hi = row["bootstrap_95"]
    assert 1.2 <= lo <= hi <= 1.4 and 0 <= row["bootstrap_share_meeting"] <= 1


@pytest.mark.parametrize("epoch, products, want", [
    ([1.2, 1.2, 1.2], [1.0, 1.0, 1.0], "met"),
    ([1.5, 1.5, 1.5], [1.0, 1.0, 1.0], "missed"),
    # rounds' ratios 1.0, 2.0, 1.03 (median 1.03: met); medians 2.0 / 1.0 (missed): the two disagree
    ([1.0, 2.0, 3.0], [1.0, 1.0, 2.9], "unclear"),
])
def test_verdicts(tmp_path, epoch, products, want):
    row = _row(pool.pool([_cpu_epoch(tmp_path, "r.json", epoch, products)]), "float64 epoch / products, 1 thread")
    assert row["verdict"] == want


def test_higher_is_better_targets(tmp_path):
    rows = pool.pool([_cpu_epoch(tmp_path, "r.json", [1.0, 1.1, 1.2], [1.0, 1.0, 1.0])])
    assert _row(rows, "float32 speed-up over float64 (normalized)")["verdict"] == "met"  # 2.0 >= 1.7
    assert _row(rows, "Krotov's notebook / damlite float64")["verdict"] == "met"  # 21 >= 20


def test_refuses_records_of_different_commits_or_settings(tmp_path):
    a = _cpu_epoch(tmp_path, "a.json", [1.2], [1.0], commit="aaaaaaa")
    b = _cpu_epoch(tmp_path, "b.json", [1.2], [1.0], commit="bbbbbbb")
    with pytest.raises(SystemExit, match="different commits"):
        pool.pool([a, b])
    c = _cpu_epoch(tmp_path, "c.json", [1.2], [1.0], commit="aaaaaaa", rounds=5)
    with pytest.raises(SystemExit, match="different settings"):
        pool.pool([a, c])
    with pytest.raises(SystemExit, match="1 to"):
        pool.pool([a] * (pool.MAX_RECORDS + 1))


def test_default_path_level_target_in_milliseconds(tmp_path):
    doc = {"commit": "abc1234", "settings": {"rounds": 2, "epochs": 20, "out": "x"},
           "seconds_per_epoch": {"krotov_float64": [0.6, 0.6], "products_float64": [0.5, 0.5],
                                 "krotov_float32": [0.3, 0.3], "author_example_default": [0.0004, 0.0007],
                                 "author_torch_autoassociative": [0.02, 0.02]}}
    path = tmp_path / "d.json"
    path.write_text(json.dumps(doc))
    rows = pool.pool(default_path=[str(path)])
    ms = _row(rows, "author's example, ms an epoch")
    assert ms["pooled_median_of_round_ratios"] == pytest.approx(0.55) and ms["verdict"] == "met"
    assert _row(rows, "whole 20-epoch fit / products (setup included)")["verdict"] == "met"  # 1.2


def test_out_never_replaces_what_it_did_not_write(tmp_path):
    """--out: refuses a link, a record it read and a file of another kind; replaces an earlier pooled record."""
    a = _cpu_epoch(tmp_path, "a.json", [1.2], [1.0])
    other = tmp_path / "notes.txt"
    other.write_text("mine")
    link = tmp_path / "link.json"
    link.symlink_to(other)
    for path, why in ((link, "is a link"), (a, "one of the records read"), (other, "not a pooled record")):
        with pytest.raises(SystemExit, match=why):
            pool.main(["--cpu-epoch", a, "--out", str(path)])
    assert other.read_text() == "mine"
    out = tmp_path / "pooled.json"
    pool.main(["--cpu-epoch", a, "--out", str(out)])
    pool.main(["--cpu-epoch", a, "--out", str(out)])  # its own kind: replaced
    assert json.loads(out.read_text())["rows"][0]["rounds"] == 1
