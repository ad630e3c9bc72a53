"""Sec. 5.3's crosstalk: the two ways a class neuron is evaluated, against their formulas, and the row's rule."""
from __future__ import annotations

import json

import numpy as np
import pytest

from damlite.classification import class_energy_differences
from damlite.interactions import make_interaction
from damlite.paper.crosstalk import compare, feed_forward_differences
from damlite.paper.grading_sentences import crosstalk_negligible


def _setup(n=3):
    rng = np.random.default_rng(0)
    G, K, D, C = 2, 5, 7, 10
    memories = rng.normal(0.0, 0.5, (G, K, D + C))
    X = rng.uniform(-1.0, 1.0, (4, D))
    scale = np.array([0.3, 1.0])
    return memories, X, scale, make_interaction("rectified_polynomial", n), D


def _formulas(memories, X, scale, n, D):
    """(autoassociative, feed-forward) Delta written out: s the input similarity, X_c the crosstalk."""
    def F(u):
        return np.where(u > 0, u ** n, 0.0)
    s = np.einsum("gkd,bd->gbk", memories[:, :, :D], X)[..., None]
    z = memories[:, None, :, D:]
    a = scale[:, None, None, None]
    crosstalk = z.sum(axis=-1, keepdims=True) - z  # sum over the other class neurons' weights (state -1)
    auto = (F(a * (s + z - crosstalk)) - F(a * (s - z - crosstalk))).sum(axis=2)
    ff = (F(a * (s + z)) - F(a * (s - z))).sum(axis=2)
    return auto, ff


def test_the_model_classifies_with_the_crosstalk_and_the_feed_forward_form_drops_it():
    memories, X, scale, F, D = _setup()
    auto, ff = _formulas(memories, X, scale, 3, D)
    np.testing.assert_allclose(np.asarray(class_energy_differences(memories, X, F, scale)), auto, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(feed_forward_differences(memories, X, F, scale), ff, rtol=1e-12, atol=1e-12)
    assert np.abs(auto - ff).max() > 1e-3  # the two differ here: the test can fail


def test_without_class_weights_elsewhere_the_two_ways_agree():
    memories, X, scale, F, D = _setup()
    memories[:, :, D + 1:] = 0.0  # one class weight per memory: no crosstalk to drop
    auto = np.asarray(class_energy_differences(memories, X, F, scale))[:, :, 0]
    np.testing.assert_allclose(feed_forward_differences(memories, X, F, scale)[:, :, 0], auto, rtol=1e-12)


def test_compare_counts_integers():
    memories, X, scale, F, _ = _setup()
    y = np.array([0, 1, 2, 3])
    rows = compare(memories, X, y, F, scale)
    assert len(rows) == 2
    for r in rows:
        assert r["n_test"] == 4 and 0 <= r["agree"] <= 4 and r["finite"] is True
        assert all(isinstance(r[k], int) for k in ("correct_auto", "correct_ff", "agree"))


@pytest.mark.parametrize("auto, ff, agree, outcome", [
    (9500, 9450, 9850, "supported"),  # 0.5 pp, 98.5 %
    (9500, 9350, 9900, "refuted"),  # 1.5 pp
    (9500, 9500, 9700, "refuted"),  # 97 % agree
    (4000, 1000, 2000, "not counted"),  # did not learn
])
def test_the_rule_as_pre_registered(tmp_path, auto, ff, agree, outcome):
    (tmp_path / "mnist").mkdir()
    row = {"network": "x", "n": 2, "n_test": 10000, "correct_auto": auto, "correct_ff": ff, "agree": agree,
           "finite": True}
    (tmp_path / "mnist" / "crosstalk.json").write_text(json.dumps({"networks": [row]}))
    (item,), _ = crosstalk_negligible(tmp_path)
    assert item["outcome"] == outcome


def test_no_file_no_items(tmp_path):
    assert crosstalk_negligible(tmp_path) == ([], [])
