"""The paper, graded once: every claim, every reading, one verdict each.

:func:`build` reads the committed result files and applies the rule book of
:mod:`damlite.paper.claims` to each claim in :data:`CLAIMS`; the result is the dictionary that
``python -m damlite scorecard`` writes, atomically, to ``book/results/scorecard.json`` and that
the scorecard page renders (:mod:`damlite.paper.scorecard_markdown`). Nothing in it is typed in
by hand: a grid that lands later changes the file the next time it is built (a test fails
while the committed file is stale). Each claim declares the result files and blocks it grades
from (:func:`required_blocks`); :func:`build` refuses to grade from a missing or incomplete
source (:class:`MissingInputs`), or with ``allow_missing=True`` marks the claims it feeds
"missing input".

Layout of one claim::

    {"id", "short", "paper": {"quote", "where"}, "claim", "rule", "rules", "grids", "task", "figure",
     "readings": {label: {"verdict", "supported", "refuted", "undetermined", "total",
                          "bootstrap_same", "unstable", "identity", "repeats", "margin",
                          "items": [{"item", "n", "outcome", "grids", "note", "margin"}],
                          "per_n": [{"item", "network", "n", "N", "grid", "file",
                                     "best_distance" (or "best_f1"), "good_fraction", "area",
                                     "centre_inv_T", "centre_lr", "good_inv_T", "reach_lr",
                                     "best_inv_T" (the best cells' 1/T range), "repeats", "censored", "outcome",
                                     "note"}]}},
     "bottom_line": {"verdict", "reason", "counted"}}
"""
from __future__ import annotations

import functools
import json
import math
import os
import tempfile
import zlib
from pathlib import Path

import numpy as np

from . import claims as C
from .grading import (CONTROL, SETTINGS, _coarse, _not_worse, _r, _similar, headline, headline_presence,
                      leak_behaves, location_readings, n2_learnable, norm_lr, norm_N, norm_shift_small, norm_stable,
                      norm_substantial, orig_degrades, orig_gone, orig_increased, orig_location, orig_moves,
                      overflow_not_cause, reuse_hparams, secondary, secondary_tables, theory_exponential,
                      theory_homogeneous, theory_overflow)
from .grading_mnist import (mnist_beta1, mnist_consistent, mnist_krotov_range, mnist_proportional, mnist_shape,
                            mnist_shrink)
from .grading_sentences import (alpha_not_required, coarse_misses_large_n, crosstalk_negligible, double_breaks,
                                fails_to_train, norm_near1_dims, precision_limits, scales_seen, sizes_similar,
                                theorems_hold)
# the page's words, where chapters 6 and 8 and older callers import them
from .scorecard_markdown import claim_markdown, evidence_dropdown, prose, verdict_cell, where  # noqa: F401
from .tables import MNIST_N, Reading, load_tables

__all__ = ["CLAIMS", "MNIST_READINGS", "READINGS", "SHORT", "MissingInputs", "build", "check_inputs", "mnist_seed_spread", "required_blocks", "verdicts",
           "summary_rows", "write"]

T = C.TOLERANCES
BOOTSTRAP = T["bootstrap"]
SEED = 20261126
EXTENDED = C.EXTENDED  # a grid -> the grid whose rows it holds (rule "grids")

#: Autoassociative readings: label -> (sources, relabel the original's 1/T as (1/T)**n).
#: A source is (file stem, settings the records must match; "grid" may be one of them).
READINGS = {
    "A": ([("autoassociative-full", {"interaction": "polynomial"}), ("autoassociative-wide", {}),
           ("autoassociative-fine250", {}), ("autoassociative-censored", {"interaction": "polynomial"})], False),
    "B": ([("autoassociative-full", {"interaction": "polynomial"}), ("autoassociative-wide", {}),
           ("autoassociative-fine250", {}), ("autoassociative-censored", {"interaction": "polynomial"}),
           ("autoassociative-scorecard", {"grid": "paper-b"})], True),
    "A + leak": ([("autoassociative-leak", {"leak": "code", "epsilon": 0.01, "memories": 100}),
                  ("autoassociative-leak250", {"leak": "code"}),
                  ("autoassociative-censored", {"leak": "code", "epsilon": 0.01, "memories": 100})], False),
    "A − leak": ([("autoassociative-leak", {"leak": "paper", "epsilon": 0.01, "memories": 100}),
                  ("autoassociative-leak250", {"leak": "paper"}),
                  ("autoassociative-scorecard", {"leak": "paper"}),
                  ("autoassociative-censored", {"leak": "paper"})], False),
    "A + leak, K = P": ([("autoassociative-leak", {"leak": "code", "epsilon": 0.01, "memories": 20}),
                         ("autoassociative-censored", {"memories": 30})], False),
}
READING_TEXT = {
    "A": "Krotov and Hopfield's beta = 1/T^n outside a homogeneous F (the polynomial): the two "
         "networks are one network",
    "B": "the original's beta = 1/T outside F, no power (the author's earliest code): A's runs "
         "with the original's axis relabelled 1/T_B = (1/T_A)^n, plus the paper's grid read this way",
    "A + leak": "A with the leaky F of the author's code, +0.01x below zero",
    "A − leak": "A with the paper's sign of the leak, -0.01x below zero",
    "A + leak, K = P": "A + leak with as many memories as patterns: K = P = 20 at N = 100, "
                       "K = P = 30 at N = 250",
}
SETTINGS_LABEL = "A, settings"
EXACT_LABEL = "exact arithmetic"
#: The label of a claim graded from one bounded run of its own (task "run"), not from the sweeps' blocks.
RUN_LABEL = "MNIST, scored both ways"
MNIST_MATCH = {"interaction": "rectified_polynomial", "grid": "paper"}
MNIST_STEMS = {"mnist-short": "A, 60 epochs", "mnist-full": "A, 500 epochs"}
AUTHOR_LABEL, B_SLICE_LABEL = "author's setup (slice)", "B (slice)"
SLICE_LR = 0.03  # the one learning rate of the pre-registered CPU slices (rule 3 of the 2026-11-29 rules)
#: MNIST readings: label -> (sources, relabel the original's 1/T as (1/T)**n, grid -> the grid it is filed under,
#: required). The slices are graded by the MNIST rules as grids of one column (the 2026-11-29 rules, rule 3); they
#: are not required: a slice not (or not wholly) on file is graded from the blocks that are, and the page lists the rest.
MNIST_READINGS = {
    "A, 60 epochs": ([("mnist-short", MNIST_MATCH)], False, {}, True),
    "A, 500 epochs": ([("mnist-full", MNIST_MATCH)], False, {}, True),
    AUTHOR_LABEL: ([("mnist-author-slice", {"grid": "paper-lr", "interaction": "leaky_rectified_polynomial",
                                            "leak": "code", "init_mean": 0.0, "init_std": 0.1,
                                            "learning_rate": SLICE_LR, "epochs": 60})], False, {"paper-lr": "paper"},
                   False),
    B_SLICE_LABEL: ([("mnist-short", dict(MNIST_MATCH, variant="normalized", learning_rate=SLICE_LR)),
                     ("mnist-b-slice", {"grid": "paper-b", "interaction": "rectified_polynomial",
                                        "learning_rate": SLICE_LR, "epochs": 60})], True, {"paper-b": "paper"}, False),
}
#: MNIST readings where the two networks are two networks (a leaky F; B's power-free 1/T): a claim's "*" identity
#: (one network under A's homogeneous F) does not apply to them.
TWO_NETWORKS = (AUTHOR_LABEL, B_SLICE_LABEL)
#: The autoassociative reading each MNIST reading's F and temperature match (mnist_consistent's other task).
MNIST_AA = {"A, 60 epochs": "A", "A, 500 epochs": "A", AUTHOR_LABEL: "A + leak", B_SLICE_LABEL: "B"}
MNIST_TEXT = {
    "A, 60 epochs": "mnist-short.jsonl: reading A, homogeneous rectified F, the paper's 6 x 6 grid, 60 epochs, one repeat",
    "A, 500 epochs": "mnist-full.jsonl: reading A, homogeneous rectified F, the paper's 6 x 6 grid, 500 epochs, one repeat",
    AUTHOR_LABEL: "mnist-author-slice.jsonl: the author's code, leaky F (+0.01x below zero) and initial memories "
                  "N(0, 0.1^2), both networks, the paper's six 1/T at learning rate 0.03 only, 60 epochs, one repeat",
    B_SLICE_LABEL: "mnist-b-slice.jsonl: the original with beta = 1/T outside F, no power, at the paper's 1/T read "
                   "as 1/T_B (run at 1/T_A = (1/T_B)^(1/n)), learning rate 0.03 only, 60 epochs, one repeat; the "
                   "normalized network is reading A's 60-epoch column at 0.03",
}
SLICES = (AUTHOR_LABEL, B_SLICE_LABEL)
B_SAME_NORMALIZED = ("reading B changes only the original network: the normalized network is reading A's, "
                     "graded there")


# ------------------------------------------------------------------------------ catalogue
def _q(quote, where_, figure=""):
    return {"quote": quote, "where": where_, "figure": figure}


def _claim(paper, claim, rule, task, fn, figure, rules, grids, needs=None, identity=None, about=None):
    return {"paper": paper, "claim": claim, "rule": rule, "task": task, "fn": fn, "figure": figure,
            "rules": rules, "grids": grids, "needs": needs or {}, "identity": identity or {}, "about": about}


#: Rule ``concession``: the n a position claim's sentence is about, where the paper concedes a shift at n <= 5.
_CONCEDED = {"n_min": 10, "why": "the paper concedes that the normalized region shifts for n <= 5 (Sec. 5.2), so "
                                 "the sentence is about n >= 10"}


_ONE_NETWORK = ("under A the original is the normalized network with 1/T = 1/T' / N: the two are "
                "one network")
_AA_RULES = ("recall", "region", "censoring", "direction", "tolerances", "grids", "repeats", "verdict",
             "bootstrap", "bottom line")
_MNIST_RULES = ("region", "censoring", "direction", "tolerances", "verdict", "bottom line")

#: id -> the claim: the paper's words, ours, the rule, task, grading function, figure label, the rules
#: and grids it uses, the blocks it needs (networks, n, grids, N) and the readings where it is an identity.
CLAIMS = {
    "headline": _claim(
        _q("our modified network has a stable region of optimal hyperparameters across a wide range of "
           "interaction vertices. This is in comparison to the original network which had the optimal "
           "hyperparameters shift dramatically as the interaction vertex changed", "Sec. 1 (Introduction); abstract"),
        "the contrast: the normalized network's optimum stays put as n changes while the original's moves",
        "over the n >= 10 where both networks recall (one test per grid; every n shown beside it): the "
        "normalized centres span at most 0.5 decades and the original's at least 1 decade", "aa", headline, "fig-aa-optimum-vs-n",
        _AA_RULES + ("identity", "concession"), _coarse("fine"),
        {"networks": ("original", "normalized"), "grids": _coarse("fine")},
        {"A": _ONE_NETWORK + "; their centres move together by construction"}, _CONCEDED),
    "headline_presence": _claim(
        _q("At even modest interaction vertices we find the optimal region is fleeting enough to not appear "
           "in our grid search [...] unlike the original network we find the region stabilizes and remains "
           "substantial for large interaction vertices", "Sec. 5.1; Sec. 5.2"),
        "at n >= 20 the normalized network keeps a substantial good region where the original's is gone "
        "from the paper's grid",
        "per n >= 20 run for both: the normalized network recalls with a good area of at least 1 decade^2, "
        "and the original has no recalling cell with 1/T in [1e-3, 1]", "aa", headline_presence,
        "fig-aa-readings", _AA_RULES + ("identity",), _coarse("fine"),
        {"networks": ("original", "normalized"), "n": (20, None), "grids": _coarse("fine")},
        {"A": _ONE_NETWORK + ", so on one grid the original cannot be gone where the normalized one is not"}),
    "orig_location": _claim(
        _q("The optimal region [...] is somewhere around 1/T ≈ 10^-2 and learning rate ≈ 0.5",
           "Sec. 5.1, Fig. OriginalModelHyperparameterSearch"),
        "original: the good region is centred near 1/T = 1e-2 and learning rate 0.5 (n <= 5)",
        "per n <= 5: recalls, and the centre lies within a factor 3 of 1e-2 in 1/T and of 0.5 in learning "
        "rate (one test for both halves of the sentence)", "aa", orig_location, "fig-aa-coarse-heatmaps",
        _AA_RULES, _coarse("fine"), {"networks": ("original",), "n": (None, 5), "grids": _coarse("fine")}),
    "orig_moves": _claim(
        _q("but shifts considerably with the interaction vertex", "Sec. 5.1"),
        "original: the good region's centre moves by a decade or more with n",
        "over the n that recall (one test per grid): the 1/T centres span at least 1 decade",
        "aa", orig_moves, "fig-aa-optimum-vs-n", _AA_RULES, _coarse("fine"),
        {"networks": ("original",), "grids": _coarse("fine")}),
    "orig_degrades": _claim(
        _q("higher learning rates tend to degrade network performance", "Sec. 5.1"),
        "original: distance rises at the highest learning rate",
        "per n that recalls (the others are not counted): the highest-rate column, over the good region's "
        "rows, is worse than the best cell by more than 0.5", "aa", orig_degrades, "fig-aa-coarse-heatmaps",
        _AA_RULES, _coarse("fine"), {"networks": ("original",), "grids": _coarse("fine")}),
    "orig_gone": _claim(
        _q("At even modest interaction vertices we find the optimal region is fleeting enough to not appear "
           "in our grid search", "Sec. 5.1, Fig. OriginalModelHyperparameterSearchN20"),
        "original: no recalling cell on the paper's grid from n = 20 on",
        "per n >= 20: no cell within 0.5 of perfect recall with 1/T in [1e-3, 1] (the reading's own 1/T)",
        "aa", orig_gone, "fig-aa-readings", _AA_RULES, _coarse("fine", "paper-b"),
        {"networks": ("original",), "n": (20, None), "grids": _coarse("fine", "paper-b")}),
    "orig_increased": _claim(
        _q("the same region has increased the distance measure compared to its surroundings",
           "Sec. 5.1, Fig. OriginalModelHyperparameterSearchN20"),
        "original, n = 20: where the region was, the distance is higher than around it",
        "n = 20, each grid: the region has vanished and the cells where the last recalling n had its good "
        "region (else 1/T near 1e-2) are worse than the ring of cells around them by >= 0.5", "aa",
        orig_increased, "fig-aa-leaks-sign", _AA_RULES, ("coarse", "paper-b"),
        {"networks": ("original",), "grids": ("coarse", "paper-b")}),
    "norm_shift_small": _claim(
        _q("we find the optimal region shifts slightly for small interaction vertices (n ≤ 5)",
           "Sec. 5.2, Fig. ModifiedModelHyperparameterSearch"),
        "normalized: the centre moves, by at most a decade, over n = 2, 3, 5",
        "over the n <= 5 that recall (one test per grid): the 1/T' centres span more than 0 and at most "
        "1 decade", "aa", norm_shift_small, "fig-aa-optimum-vs-n", _AA_RULES, _coarse("fine"),
        {"networks": ("normalized",), "n": (None, 5), "grids": _coarse("fine")}),
    "norm_stable": _claim(
        _q("the optimal region stabilizes around 1/T ≈ 9 · 10^-1",
           "Sec. 5.2, Fig. ModifiedModelHyperparameterSearchTight"),
        "normalized: centre near 1/T' = 0.9 for every n >= 10 (to n = 100)",
        "per n >= 10: recalls, and the 1/T' centre lies within a factor 3 of 0.9", "aa", norm_stable,
        "fig-aa-fine-large-n", _AA_RULES, _coarse("fine", "wide"),
        {"networks": ("normalized",), "n": (10, None), "grids": _coarse("fine", "wide")}),
    "norm_substantial": _claim(
        _q("the region stabilizes and remains substantial for large interaction vertices", "Sec. 5.2"),
        "normalized: a good region of at least 1 decade^2 for every n >= 10",
        "per n >= 10: recalls, and the good region covers at least 1 decade^2 (an absolute area: the "
        "same on every grid)", "aa", norm_substantial, "fig-aa-readings", _AA_RULES, _coarse("fine", "wide"),
        {"networks": ("normalized",), "n": (10, None), "grids": _coarse("fine", "wide")}),
    "norm_lr": _claim(
        _q("The optimal region also extends to much larger initial learning rates than it does in the "
           "original network", "Sec. 5.2"),
        "normalized: the good region reaches larger learning rates than the original's",
        "per n run for both: the normalized network recalls and its largest good learning rate is at "
        "least 1.5x the original's (not counted where the original has no good region)", "aa", norm_lr,
        "fig-aa-coarse-heatmaps", _AA_RULES + ("identity",), _coarse("fine"),
        {"networks": ("original", "normalized"), "grids": _coarse("fine")},
        {"A": _ONE_NETWORK + ", on the same learning-rate axis",
         "B": "B relabels the original's 1/T axis only; on the learning-rate axis the two are one network"}),
    "norm_N": _claim(
        _q("the optimal region of hyperparameters is no longer heavily dependent on the size of the data "
           "vectors", "Sec. 1; Sec. 5.2 (\"common across many network dimensions\")"),
        "normalized: the same centre at N = 100 and N = 250",
        "per n: both sizes recall and their 1/T' centres lie within a factor 2 (refuted where one size "
        "recalls and the other does not; not counted where neither does)", "aa", norm_N, "fig-aa-n250-heatmaps", _AA_RULES, _coarse("fine"),
        {"networks": ("normalized",), "grids": _coarse("fine"), "N": (100, 250)}),
    "leak_behaves": _claim(
        _q("the leaky rectified polynomial is not homogenous. Empirically, we find it still behaves well under "
           "our modifications", "Sec. 4.1.1; Sec. 6 (\"some nonhomogenous functions also give well-behaved "
           "Dense Associative Memories\")"),
        "the leaky F: the normalized network still recalls with a substantial good region at every n",
        "under the readings with a leak, per n: the normalized network recalls and its good region covers "
        "at least 1 decade^2 (the rule of norm_substantial)", "aa", leak_behaves, "fig-aa-leaks-sign",
        _AA_RULES, _coarse(), {"networks": ("normalized",), "grids": _coarse()}),
    "reuse_hparams": _claim(
        _q("removed the dependence on the interaction vertex, meaning we can reuse the same hyperparameters for "
           "a task even as we change the interaction vertex", "Sec. 5; Sec. 6"),
        "normalized: one setting of (1/T', learning rate) is good at every n >= 10",
        "per grid (one test): some cell is good, in a region that recalls, at every n >= 10 on that grid "
        "(the n where the paper says the region has settled)", "aa", reuse_hparams, "fig-aa-fine-large-n",
        _AA_RULES, _coarse("fine", "wide"), {"networks": ("normalized",), "n": (10, None),
                                             "grids": _coarse("fine", "wide")}),
    "overflow_not_cause": _claim(
        _q("the performance degradation seen at larger interaction vertices in Figure "
           "OriginalModelHyperparameterSearch is not due to floating point overflow", "Sec. 5.1"),
        "original: every run at n >= 10 stays finite in float64",
        "per n >= 10: no run of the original network on any grid overflowed or gave NaN (the records' "
        "finite flag)", "aa", overflow_not_cause, "fig-aa-coarse-heatmaps", ("grids", "repeats", "verdict",
                                                                            "bottom line"),
        _coarse("fine", "paper-b"), {"networks": ("original",), "n": (10, None),
                                     "grids": _coarse("fine", "paper-b")}),
    "n2_learnable": _claim(
        _q("Even for the lowest interaction vertex n=2 this task is perfectly learnable", "Sec. 5"),
        "at n = 2 both networks recall every pattern exactly in some cell",
        "per network at n = 2: some cell where every probe of every repeat returns to its pattern exactly",
        "aa", n2_learnable, "fig-aa-coarse-heatmaps", ("grids", "repeats", "verdict", "bottom line"),
        _coarse("fine"), {"networks": ("original", "normalized"), "n": (2, 2), "grids": _coarse("fine")}),
    "theory_homogeneous": _claim(
        _q("the typical interaction functions — the polynomial interaction function and rectified polynomial "
           "interaction function — are in this class [homogenous functions] [...] the leaky rectified "
           "polynomial is not homogenous", "Sec. 1; Sec. 4.1.1"),
        "the polynomial and rectified polynomial are homogeneous of degree n; the leaky one is not",
        "F(a x) - a^n F(x) in exact fractions, n = 2, 3, 5, 10, four scales a, six arguments x: zero for "
        "the first two, nonzero for the leaky one", "theory", theory_homogeneous, "", ("verdict",), ()),
    "theory_exponential": _claim(
        _q("The behavior of the Dense Associative Memory using the exponential interaction function would be "
           "unchanged by normalizing the similarity scores before taking the exponential", "Sec. 4.1.1"),
        "the exponential F: scaling the similarity scores by 1/N leaves the update unchanged",
        "chapter 4's network of four neurons and four memories: the sign of the energy difference, in "
        "60-digit arithmetic, with and without the scaling", "theory", theory_exponential, "",
        ("verdict",), ()),
    "theory_overflow": _claim(
        _q("N=10^4 and n=30 will result in an intermediate value of 10^120. Single precision floating point "
           "numbers have a maximum value of around 10^38, while double precision [...] around 10^308",
           "Sec. 3"),
        "the paper's overflow example: 1e120 overflows float32 and fits float64",
        "(10^4)^30 computed exactly and compared with the largest float32 and float64", "theory",
        theory_overflow, "", ("verdict",), ()),
    "mnist_shrink": _claim(
        _q("the initially large region for n=2 shrinks slightly as n grows", "Sec. 5.3, "
           "Figs. OriginalModelMNISTHyperparameterSearch, ModifiedModelMNISTHyperparameterSearch"),
        "MNIST: each network's good region shrinks, by less than half, from n = 2 to the largest n on file",
        "per network: fewer good cells at the largest n than at n = 2, and at least half as many",
        "mnist", mnist_shrink, "fig-mnist-short-heatmaps", _MNIST_RULES, ("paper",),
        {"networks": ("original", "normalized")}),
    "mnist_proportional": _claim(
        _q("appears to shrink by proportionally the same amount in both the original and modified network",
           "Sec. 5.3"),
        "MNIST: both networks shrink by the same factor",
        "per n > 2 on file for both: the shrink factors (good cells / their n = 2 count) within a factor 1.5",
        "mnist", mnist_proportional, "fig-mnist-short-heatmaps", _MNIST_RULES + ("identity",), ("paper",),
        {"networks": ("original", "normalized")}, {"*": _ONE_NETWORK}),
    "mnist_shape": _claim(
        _q("The shape of the region also remains consistent in both the modified and unmodified networks",
           "Sec. 5.3"),
        "MNIST: the two networks' good regions cover the same cells",
        "per n on file for both: Jaccard overlap of the good cells (on the shared scale) >= 0.5",
        "mnist", mnist_shape, "fig-mnist-short-heatmaps", _MNIST_RULES + ("identity",), ("paper",),
        {"networks": ("original", "normalized")}, {"*": _ONE_NETWORK}),
    "mnist_beta1": _claim(
        _q("Our modifications have, however, shifted the optimal region to β ≈ 1", "Sec. 5.3"),
        "MNIST: normalized centre near 1/T' = 1", "per n: the 1/T' centre lies within a factor 3 of 1",
        "mnist", mnist_beta1, "fig-mnist-optimum", _MNIST_RULES, ("paper",), {"networks": ("normalized",)}),
    "mnist_krotov": _claim(
        _q("our range of β for the original network matches the range found by [Krotov and Hopfield]",
           "Sec. 5.3"),
        "MNIST: the original's good 1/T range contains Krotov and Hopfield's 1/540",
        "per n: 1/540 lies in the good region's 1/T range widened by a factor 3 either way",
        "mnist", mnist_krotov_range, "fig-mnist-optimum", _MNIST_RULES, ("paper",),
        {"networks": ("original",)}),
    "mnist_consistent": _claim(
        _q("the location of the optimal hyperparameter region is consistent across different datasets and "
           "tasks", "Sec. 5.3; Sec. 6"),
        "the normalized centre on MNIST is where it is on the autoassociative task",
        "per n >= 10 run on both tasks (every n shown beside it): the autoassociative network (the reading "
        "with the same F) recalls and the 1/T' centres lie within a factor 3", "mnist", mnist_consistent,
        "fig-mnist-optimum", _MNIST_RULES + ("concession",), ("paper", "coarse"),
        {"networks": ("normalized",)}, None, _CONCEDED),
    "sec_decay_momentum": _claim(
        _q("We found similar results using a decay rate of 1.0 and higher values for momentum",
           "Sec. 5 (Hyperparameter Tuning)"),
        "decay 1.0, momentum 0.5 and 0.9 give the good region of the control",
        "per block (network, n, setting) against the control's repeats 0-2: same recall status, good "
        "fraction within 0.1 (one grid), 1/T centres within a factor 3 (the censoring rule on fractions and "
        "centres)", "secondary",
        secondary(("decay 1.0", "momentum 0.5", "momentum 0.9"), _similar), "fig-aa-settings", _AA_RULES,
        ("coarse",), {"settings": ("decay 1.0", "momentum 0.5", "momentum 0.9")}),
    "sec_m": _claim(
        _q("We also found we did not require changing the error exponent m", "Sec. 5 (Hyperparameter Tuning)"),
        "m = 1 does as well as m = 2 and 4",
        "per block (network, n, m): m = 1's good fraction is not lower by more than 0.1, and m = 1 "
        "recalls wherever m does (the censoring rule on both fractions)", "secondary", secondary(("m = 2", "m = 4"), _not_worse),
        "fig-aa-settings",
        ("recall", "region", "censoring", "direction", "tolerances", "repeats", "verdict", "bootstrap", "bottom line"),
        ("coarse",),
        {"settings": ("m = 2", "m = 4")}),
    # ---------------------------------------------------------------- sentences that had no row (issue 44)
    "sec3_precision": _claim(
        _q("the precision of these data types decreases as we approach the limits, potentially leading to "
           "numerical instabilities during training or updating", "Sec. 3"),
        "floats lose precision toward the largest and the smallest numbers they hold",
        "float32 and float64 (exact, from the formats): the relative spacing of neighbouring numbers at the "
        "largest finite number against 1 (it grows by more than the factor 2 every binade shares: supported), "
        "and at the smallest subnormal against the smallest normal number", "theory", precision_limits, "",
        ("verdict",), ()),
    "sec3_double": _claim(
        _q("it would not require increasing the network dimension or interaction vertex considerably to break a "
           "double either", "Sec. 3"),
        "from N = 1e4, n = 30, a small increase of n or N overflows float64",
        "the least n at N = 1e4 and the least N at n = 30 with N^n past float64's largest number, in exact "
        "integers; supported when either is within a factor 3 of the paper's value", "theory", double_breaks,
        "", ("tolerances", "verdict"), ()),
    "theorems": _claim(
        _q("We show these modifications are equivalent to the original Dense Associative Memory specification",
           "Sec. 1; Secs. 4.2-4.3 (the update and learning theorems)"),
        "a homogeneous F: the update and the learning rule are unchanged by moving the scaling inside F",
        "polynomial F, n = 2, 3, 10, two random networks each: the update's signs at scale 1/N and 1 agree "
        "everywhere (exact signs), and the learning rule's argument, loss and gradient agree to 1e-9",
        "theory", functools.partial(theorems_hold, "both"), "", ("verdict",), ()),
    "capacity_unchanged": _claim(
        _q("We show our modifications do not alter the properties of the autoassociative memory, such as the "
           "capacity", "Sec. 1; Sec. 6"),
        "the same states are fixed points with and without the normalization",
        "polynomial F, n = 2, 3, 10: probed with stored patterns, the update at scale 1/N and 1 agrees on every "
        "neuron (exact signs), so the same patterns are stable and the capacity is the same", "theory",
        functools.partial(theorems_hold, "capacity"), "", ("verdict",), ()),
    "sizes_similar": _claim(
        _q("Larger dimensions and other dataset sizes were tested with similar results", "Sec. 5"),
        "at N = 250 with 30 patterns the good regions are those of N = 100 with 20",
        "per network and n run at both sizes: the same recall status and 1/T centres within a factor 3",
        "aa", sizes_similar, "fig-aa-n250-heatmaps", _AA_RULES, _coarse("fine"),
        {"networks": ("original", "normalized"), "grids": _coarse("fine"), "N": (100, 250)}),
    "norm_near1_dims": _claim(
        _q("We find it is common across many network dimensions and task sizes for the inverse temperature to "
           "stabilize near 1", "Sec. 5.2"),
        "normalized, N = 250: the centre lies near 1/T' = 1 for n >= 10",
        "per n >= 10 at N = 250: recalls, and the 1/T' centre lies within a factor 3 of 1", "aa", norm_near1_dims,
        "fig-aa-n250-heatmaps", _AA_RULES, _coarse("fine"),
        {"networks": ("normalized",), "n": (10, None), "grids": _coarse("fine"), "N": (250,)}),
    "scales_seen": _claim(
        _q("Note that we have significantly different scales for the original and modified network's values of "
           "β, which is not seen in the previous results", "Sec. 5.3"),
        "the two networks' temperatures differ by the factor N on MNIST but not on the autoassociative task",
        "per n where both recall on the coarse grid: the normalized 1/T' centre over the original's 1/T centre; "
        "refuted where it lies within a factor 3 of N = 100 (the scales differ there too), supported where it "
        "lies outside that window", "aa", scales_seen, "fig-aa-coarse-heatmaps", _AA_RULES + ("identity",),
        ("coarse",), {"networks": ("original", "normalized"), "grids": ("coarse",)},
        {"A": _ONE_NETWORK + ": the ratio is N by construction"}),
    "coarse_misses": _claim(
        _q("We also present only the tight grid search results, as the coarse grid search did not capture the "
           "optimal region well", "Appendix (n = 40 to 100)"),
        "normalized, n >= 40: the good region is narrower than the coarse grid's spacing",
        "per n >= 40 on the fine grid: the good 1/T' range holds fewer than two of the coarse grid's rows "
        "(three a decade)", "aa", coarse_misses_large_n, "fig-aa-fine-large-n", _AA_RULES, ("fine",),
        {"networks": ("normalized",), "n": (40, None), "grids": ("fine",)}),
    "alpha_not_required": _claim(
        _q("we could further tune the scaling factor if numerical instability is still a concern, as we have shown "
           "a general scaling factor is admissible. In practice, we found this was not required", "Sec. 4.2"),
        "normalized: the scaling factor alpha = 1/N needs no tuning: no run is numerically unstable",
        "per n the normalized network ran (every grid, N = 100 and 250): no run with alpha = 1/N overflowed or "
        "gave NaN (the records' finite flag)", "aa", alpha_not_required, "", ("grids", "repeats", "verdict",
                                                                              "bottom line"),
        _coarse("fine", "wide"), {"networks": ("normalized",), "grids": _coarse("fine", "wide"), "N": (100, 250)}),
    "fails_to_train": _claim(
        _q("In general, this network would fail to train for larger interaction vertices or data dimensions",
           "Sec. 5.1"),
        "the original overflows for a large enough n at any N, the normalized network never",
        "per task size (N = 100, 794) and format (float32, float64): the least n with N^n (the original's "
        "largest intermediate value, Sec. 3) past the format's largest number, in exact integers; supported "
        "when there is one, the normalized network's largest value being 1", "theory", fails_to_train, "",
        ("verdict",), ()),
    "crosstalk": _claim(
        _q("This means we have not explicitly ignored the effects of the classification neurons on one another, as "
           "is done in constructing the feed-forward equivalent, although the effect is likely negligible",
           "Sec. 5.3"),
        "classifying with the other class neurons' terms (the autoassociative update) or without them (the "
        "feed-forward equivalent) makes a negligible difference",
        "the same trained memories score the 10 000 test digits both ways (pre-registered 2026-11-29): per network "
        "that learned (accuracy >= 0.5), negligible when the accuracies differ by at most 1 percentage point and "
        "the predictions agree on at least 98 % of the digits; the two committed Krotov-configuration networks "
        "(class weights clamped), eight fresh ones of the paper's setup (class weights free; n = 2, 20, both "
        "networks, 1/T' = 1, 3.16, 10 epochs on 10 000 digits: none learned) and, by the addendum, four that "
        "learn (normalized, 10 epochs on 50 000 digits, 1/T' = 0.316, 1 at n = 2 and 1, 3.16 at n = 20)", "run",
        crosstalk_negligible, "", ("verdict",), ()),
}


#: The grid edges whose censoring can matter to each claim's test (rule ``direction``); the
#: others are not listed when the page says why an outcome is undetermined.
_ALL_EDGES = ("invT_low", "invT_high", "lr_low", "lr_high")
_INVT = ("invT_low", "invT_high")
EDGES_THAT_MATTER = {
    "headline": _INVT, "headline_presence": _ALL_EDGES, "orig_location": _ALL_EDGES, "orig_moves": _INVT,
    "norm_shift_small": _INVT, "norm_stable": _INVT, "norm_substantial": _ALL_EDGES, "norm_lr": ("lr_high",),
    "norm_N": _INVT, "leak_behaves": _ALL_EDGES, "reuse_hparams": _ALL_EDGES, "mnist_beta1": _INVT,
    "mnist_krotov": _INVT, "mnist_consistent": _INVT, "sec_decay_momentum": _INVT, "sizes_similar": _INVT,
    "norm_near1_dims": _INVT, "scales_seen": _INVT, "coarse_misses": _INVT,
}

#: A short name per claim: the rows of the page's matrix.
SHORT = {
    "headline": "headline: one stays put, one moves", "headline_presence": "headline: at n ≥ 20",
    "orig_location": "orig.: near 1/T = 1e-2, rate 0.5", "orig_moves": "orig.: moves with n",
    "orig_degrades": "orig.: top rate degrades", "orig_gone": "orig.: gone by n = 20",
    "orig_increased": "orig.: worse where it was", "norm_shift_small": "norm.: shifts a little, n ≤ 5",
    "norm_stable": "norm.: near 1/T′ = 0.9", "norm_substantial": "norm.: substantial",
    "norm_lr": "norm.: larger rates", "norm_N": "norm.: same for N = 100, 250",
    "leak_behaves": "leaky F behaves well", "reuse_hparams": "norm.: one setting for all n",
    "overflow_not_cause": "orig.: not overflow", "n2_learnable": "n = 2 learnable exactly",
    "theory_homogeneous": "polynomial F homogeneous", "theory_exponential": "exponential F unchanged",
    "theory_overflow": "1e120 overflows float32", "mnist_shrink": "shrinks slightly",
    "mnist_proportional": "shrinks alike in both", "mnist_shape": "same shape in both",
    "mnist_beta1": "normalized near 1/T′ = 1", "mnist_krotov": "original holds 1/540",
    "mnist_consistent": "centre as autoassociative", "sec_decay_momentum": "decay 1.0, momentum",
    "sec_m": "m = 1 as good as 2, 4", "sec3_precision": "precision falls at the limits",
    "sec3_double": "a double breaks soon", "theorems": "update, learning unchanged",
    "capacity_unchanged": "capacity unchanged", "sizes_similar": "other sizes similar",
    "norm_near1_dims": "norm.: near 1 at N = 250", "scales_seen": "β scales not seen before",
    "coarse_misses": "coarse grid misses n ≥ 40", "alpha_not_required": "norm.: α = 1/N needs no tuning",
    "fails_to_train": "orig. fails at larger n, N", "crosstalk": "class crosstalk negligible",
}


# ------------------------------------------------------------------------------ inputs
class MissingInputs(ValueError):
    """Result files or blocks that claims grade from are absent: ``problems`` lists
    (file, what is missing, the claims it feeds)."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__("; ".join(f"{path}: {what} (feeds {', '.join(ids)})" for path, what, ids in problems))


def _profile(stem):
    task, _, profile = stem.partition("-")
    return task, profile


def _block_fields(b):
    return {**b.options, "grid": b.grid, "dtype": b.dtype}


def _wanted(b, needs):
    if b.dtype != "float64":
        return False
    if needs.get("networks") and b.variant not in needs["networks"]:
        return False
    lo, hi = needs.get("n", (None, None))
    if (lo is not None and b.n < lo) or (hi is not None and b.n > hi):
        return False
    grids = tuple(needs.get("grids") or ())
    grids += tuple(ext for ext, base in EXTENDED.items() if base in grids)
    if grids and b.grid not in grids:
        return False
    return b.options.get("N", 100 if b.task == "autoassociative" else MNIST_N) in needs.get(
        "N", (100, 250) if b.task == "autoassociative" else (MNIST_N,))


def _sources(cid, label):
    """The (file stem, match) sources claim ``cid`` grades from under reading ``label``."""
    c = CLAIMS[cid]
    if c["task"] == "aa":
        return READINGS[label][0]
    if c["task"] == "mnist":
        return MNIST_READINGS[label][0]
    if c["task"] == "secondary":
        out = [("autoassociative-scorecard", dict(CONTROL, interaction="polynomial", grid="coarse", **SETTINGS[s]))
               for s in c["needs"]["settings"]]
        return out + [("autoassociative-full", dict(CONTROL, interaction="polynomial", grid="coarse"))]
    return []


def required_blocks(cid, label):
    """{file stem: [blocks]}: the blocks claim ``cid`` needs under reading ``label`` (its sources'
    profile blocks that match the source's settings and the claim's networks, n, grids and N)."""
    from ..sweeps.blocks import profile_blocks  # noqa: PLC0415

    c = CLAIMS[cid]
    out = {}
    sources = _sources(cid, label)
    for stem, match in sources:
        task, profile = _profile(stem)
        needs = dict(c["needs"])
        if c["task"] == "secondary":
            needs = {"networks": None}
        blocks = [b for b in profile_blocks(task, profile)
                  if all(_block_fields(b).get(k) == v for k, v in match.items()) and _wanted(b, needs)]
        if c["task"] == "secondary" and stem == "autoassociative-full":  # the control at the settings' n
            ns = {b.n for s, m in sources[:-1] for b in out.get(s, [])}
            blocks = [b for b in blocks if b.n in ns]
        if blocks:
            out.setdefault(stem, []).extend(blocks)
    if cid == "mnist_consistent":  # the autoassociative side: reading A's normalized network
        for stem, match in READINGS["A"][0]:
            task, profile = _profile(stem)
            blocks = [b for b in profile_blocks(task, profile)
                      if all(_block_fields(b).get(k) == v for k, v in match.items())
                      and _wanted(b, {"networks": ("normalized",), "n": (2, 20), "grids": _coarse(), "N": (100,)})]
            if blocks:
                out.setdefault(stem, []).extend(blocks)
    return out


def _labels(cid):
    task = CLAIMS[cid]["task"]
    return {"aa": list(READINGS), "mnist": list(MNIST_READINGS), "secondary": [SETTINGS_LABEL],
            "theory": [EXACT_LABEL], "run": [RUN_LABEL]}[task]


def check_inputs(results="book/results", cache=None):
    """{(claim, reading): [(file, what is missing)]} for every claim and reading with missing inputs."""
    cache = {} if cache is None else cache
    done = {}
    out = {}
    for cid in CLAIMS:
        for label in _labels(cid):
            if label in MNIST_READINGS and not MNIST_READINGS[label][3]:
                continue  # an optional slice: graded from what is on file (see _mnist_missing)
            for stem, blocks in required_blocks(cid, label).items():
                folder = Path(results) / ("mnist" if stem.startswith("mnist") else "autoassociative")
                path = folder / f"{stem}.jsonl"
                if stem not in done:
                    from .tables import _records  # noqa: PLC0415

                    done[stem] = {r["key"] for r in _records(folder, stem, cache)} if path.exists() else None
                if done[stem] is None:
                    out.setdefault((cid, label), []).append((str(path), "missing"))
                    continue
                lost = [b for b in blocks if b.key not in done[stem]]
                if lost:
                    out.setdefault((cid, label), []).append(
                        (str(path), f"{len(lost)} of its {len(blocks)} blocks these claims need are not on file "
                                    f"(first: {lost[0].variant} n = {lost[0].n}, {lost[0].grid})"))
    return out


def _problems(missing):
    by = {}
    for (cid, _), items in missing.items():
        for path, what in items:
            by.setdefault((path, what.split(" (first")[0] if what != "missing" else what), set()).add(cid)
    return [(path, what, sorted(ids, key=list(CLAIMS).index)) for (path, what), ids in sorted(by.items())]


# ------------------------------------------------------------------------------ build
def _grade(fn, reading, args=(), resamples=(), identity=None):
    items, entries = fn(reading, *args)
    v = C.verdict_of(it["outcome"] for it in items)
    out = dict(v, bootstrap_same=None, unstable=False, identity=identity,
               repeats=sorted({p["repeats"] for p in entries}), items=items, per_n=entries)
    if v["total"] and resamples:
        same = sum(C.verdict_of(it["outcome"] for it in fn(rs, *args)[0])["verdict"] == v["verdict"]
                   for rs in resamples)
        out["bootstrap_same"] = round(same / len(resamples), 3)
        out["unstable"] = out["bootstrap_same"] < T["stable_share"]
    if v["total"] and reading.metric == "f1":
        margins = [it["margin"] for it in items if "margin" in it]
        out["margin"] = _smallest_margin(margins)
    if not v["total"]:
        out["identity"] = None
    return out


def _smallest_margin(margins):
    def cells(text):
        return math.inf if text.startswith("more") else int(text.split()[0])
    return min(margins, key=cells) if margins else None


def _missing_reading():
    return {"verdict": "missing input", "supported": 0, "refuted": 0, "undetermined": 0, "total": 0,
            "bootstrap_same": None, "unstable": False, "identity": None, "repeats": [], "items": [], "per_n": []}


def _resamples(reading, count):
    if not count or not any(len(t.stack) > 1 for t in reading.tables.values()):
        return []
    rng = np.random.default_rng([SEED, zlib.crc32(reading.label.encode())])
    return [reading.resample(rng) for _ in range(count)]


def build(results="book/results", *, bootstrap=BOOTSTRAP, allow_missing=False, reruns=True, effect_resamples=1000):
    """The scorecard dictionary from the result files under ``results`` (see the module docstring).

    Raises :class:`MissingInputs` when a result file or block a claim grades from is absent;
    with ``allow_missing=True`` those claims are graded "missing input" under the readings
    concerned, and ``card["missing_inputs"]`` lists what is missing. ``reruns``: read the noise floor and
    the reruns' summary from :mod:`damlite.paper.reruns` where its file exists (see ``_reruns``).
    ``effect_resamples``: resamples behind each effect size's interval (0 to 10000).
    """
    if not (isinstance(bootstrap, int) and 0 <= bootstrap <= 10_000):
        raise ValueError(f"bootstrap must be an integer from 0 to 10000, got {bootstrap!r}")
    root_aa, root_mn = Path(results) / "autoassociative", Path(results) / "mnist"
    cache = {}
    missing = check_inputs(results, cache)
    if missing and not allow_missing:
        raise MissingInputs(_problems(missing))
    aa = {}
    for label, (src, relabel) in READINGS.items():
        extra = {m: load_tables(root_aa, src, metric=m, cache=cache, relabel=relabel, extended=EXTENDED)
                 for m in ("finite", "exact_fraction")}
        aa[label] = Reading(label, load_tables(root_aa, src, cache=cache, relabel=relabel, extended=EXTENDED),
                            extra=extra, leaky=any(m.get("leak") for _, m in src))
    mcache = {}
    mn = {label: Reading(label, load_tables(root_mn, src, metric="f1", cache=mcache, relabel=relabel, extended=ext),
                         tol=T["mnist_f1"], lower=False, metric="f1")
          for label, (src, relabel, ext, _) in MNIST_READINGS.items()}
    sec = Reading("secondary", secondary_tables(root_aa, cache))
    boot = {label: _resamples(r, bootstrap) for label, r in {**aa, SETTINGS_LABEL: sec}.items()}
    rerun_summary, noise = _reruns(results) if reruns else (None, {})
    out = {"rules": [{"name": n_, "text": t_} for n_, t_ in C.RULES],
           "tolerances": {k: list(v) if isinstance(v, tuple) else v for k, v in T.items()},
           "readings": {**READING_TEXT, **MNIST_TEXT,
                        SETTINGS_LABEL: "the coarse grid, 3 repeats, one setting changed against the control",
                        EXACT_LABEL: "computed exactly (fractions, 60-digit mpmath), no runs",
                        RUN_LABEL: "one bounded CPU run of its own (mnist/crosstalk.json), float64"},
           "sources": {**{label: [[stem, match] for stem, match in src] for label, (src, _) in READINGS.items()},
                       **{k: [[s_, m_] for s_, m_ in src] for k, (src, *_) in MNIST_READINGS.items()},
                       **{f"{SETTINGS_LABEL}: {name}": [["autoassociative-scorecard",
                                                         dict(CONTROL, interaction="polynomial", grid="coarse", **kw)]]
                          for name, kw in SETTINGS.items()},
                       f"{SETTINGS_LABEL}: control": [["autoassociative-full",
                                                       dict(CONTROL, interaction="polynomial", grid="coarse")]]},
           "claims": []}
    not_run = _mnist_missing(mn)
    ctx = {"aa": aa, "mn": mn, "sec": sec, "boot": boot, "missing": missing, "noise": noise, "not_run": not_run,
           "results": results}
    for cid, c in CLAIMS.items():
        graded = _grade_claim(cid, ctx)
        out["claims"].append({"id": cid, "short": SHORT[cid], "paper": c["paper"], "claim": c["claim"], "rule": c["rule"],
                              "rules": list(c["rules"]), "grids": list(c["grids"]),
                              "edges_that_matter": list(EDGES_THAT_MATTER.get(cid, ())), "task": c["task"],
                              "figure": c["figure"], "about": c.get("about"), "readings": graded,
                              "bottom_line": C.bottom_line(graded)})
    out["report"] = _report(results, out, ctx, effect_resamples)
    out["measurements"] = {"mnist_seeds": mnist_seed_spread(root_mn),
                           "mnist_files": sorted({s_ for src, *_ in MNIST_READINGS.values() for s_, _ in src
                                                  if (root_mn / f"{s_}.jsonl").exists()}),
                           "mnist_missing": not_run,
                           "orig_location_readings": location_readings(aa),
                           "beside_centres": _beside_centres(out, rerun_summary),
                           "float32_runs": _float32_runs(results)}
    out["reruns"] = rerun_summary  # the lead's damlite.paper.reruns (noise floor, step floor, rate axis, n = 25)
    if missing:
        out["missing_inputs"] = [{"file": p, "what": w, "claims": ids} for p, w, ids in _problems(missing)]
    return out


def _beside_centres(card, rerun_summary):
    """The upper edges and best cells beside every centre test (:func:`damlite.paper.report.beside_centres`)."""
    from .report import beside_centres  # noqa: PLC0415

    return beside_centres(card, rerun_summary)


def _float32_runs(results):
    """The float32 blocks' runs that are not finite (:func:`damlite.paper.report.float32_runs`)."""
    from .report import float32_runs  # noqa: PLC0415

    return float32_runs(results)


def _report(results, card, ctx, effect_resamples):
    """The report's parts beside the verdicts (:mod:`damlite.paper.report`)."""
    from . import report  # noqa: PLC0415

    readings = [*ctx["aa"].values(), *ctx["mn"].values(), ctx["sec"]]

    def set_tolerance(name, value):
        T[name] = value
        for r in readings:
            r._cache.clear()
            if name == "good_distance" and r.metric == "distance":
                r.tol = value
            if name == "mnist_f1" and r.metric == "f1":
                r.tol = value

    used = {g for r in readings for t in r._all_tables() for g in t.groups}
    return {"effect_sizes": report.effect_sizes(card, {**ctx["aa"], **ctx["mn"]}, effect_resamples),
            "sensitivity": report.sensitivity(card, lambda cid: _grade_claim(cid, ctx, bootstrap=False),
                                              set_tolerance),
            "compute": report.compute(results), "manifest": report.manifest(results, used),
            "deviations": report.deviations(results), "timeline": report.timeline(results)}


def _grade_claim(cid, ctx, bootstrap=True):
    """{reading label: graded reading} of claim ``cid`` from the loaded readings of ``ctx`` (see :func:`build`).

    ``bootstrap=False``: no resamples (the sensitivity table regrades this way, see :mod:`damlite.paper.report`).
    """
    c = CLAIMS[cid]
    aa, mn, sec, boot = ctx["aa"], ctx["mn"], ctx["sec"], ctx["boot"] if bootstrap else {}
    graded = {}
    for label in _labels(cid):
        if (cid, label) in ctx["missing"]:
            graded[label] = _missing_reading()
            continue
        ident = c["identity"].get(label) or (None if label in TWO_NETWORKS else c["identity"].get("*"))
        if c["task"] in ("aa", "mnist"):
            reading = aa[label] if c["task"] == "aa" else mn[label]
            args = (aa[MNIST_AA[label]],) if cid == "mnist_consistent" else ()
            resamples = boot.get(label, ()) if c["task"] == "aa" else ()
            about = c.get("about")
            fn = functools.partial(c["fn"], n_min=about["n_min"]) if about else c["fn"]
            if label == B_SLICE_LABEL and c["needs"].get("networks") == ("normalized",):
                graded[label] = dict(_grade(c["fn"], Reading(label, {}), args), note=B_SAME_NORMALIZED)
                continue
            if label == B_SLICE_LABEL and cid == "mnist_shrink":
                fn = functools.partial(c["fn"], networks=("original",))
            graded[label] = _grade(fn, reading, args, resamples=resamples, identity=ident)
            if about:  # rule "concession": the verdict over every n, shown beside it
                every = _grade(c["fn"], reading, args, resamples=resamples, identity=ident)
                graded[label]["all_n"] = {k: every[k] for k in ("verdict", "supported", "refuted", "undetermined",
                                                                "total", "bootstrap_same", "unstable", "items")}
            if cid == "leak_behaves" and not aa[label].leaky:
                graded[label]["note"] = "the F of this reading has no leak"
            if label in SLICES:
                graded[label]["slice"] = {"learning_rate": SLICE_LR, "not_run": ctx["not_run"][label]}
        elif c["task"] == "secondary":
            graded[label] = _grade(c["fn"], sec, resamples=boot.get(SETTINGS_LABEL, ()))
        else:
            items, _ = c["fn"](ctx.get("results", "book/results")) if c["task"] == "run" else c["fn"]()
            graded[label] = dict(C.verdict_of(it["outcome"] for it in items), bootstrap_same=None,
                                 unstable=False, identity=None, repeats=[], items=items, per_n=[])
        reason = ctx["noise"].get(cid, {}).get(label)
        if reason and graded[label].get("total"):  # rule "noise floor"
            graded[label]["noise"] = reason
            graded[label]["unstable"] = True
    return graded


def _reruns(results):
    """(summary, noise flags) from ``<results>/noise/noise-floor.json`` where it exists, else (None, {}).

    :mod:`damlite.paper.reruns` writes that file (``python -m damlite.paper.reruns``: it regrades this
    scorecard per rounding-level variation, so it imports this module, never the other way):

    * ``"summary"``: JSON-able, stored as ``card["reruns"]``; the page renders its ``"tables"``: a list of
      ``{"id": str, "title": str, "columns": [str], "rows": [[str | int | float | None]], "note": str}``
      (``note`` optional), in order, and keeps the rest of the dict in the JSON only.
    * ``"flags"``: ``{claim id: {reading label: reason}}``, the verdicts that come out otherwise with a
      rerun block in place of its committed block (the 2026-11-29 rules, rule 2); the reading labels are
      the card's (``"A + leak"``, ``"B"``, ...), the reason one sentence. Each such verdict is marked
      unstable (``noise``: the reason) and left out of its claim's bottom line, as one with a bootstrap
      share under 80 %. To regrade with a rerun block, call :func:`build` on a copy of the results with
      ``reruns=False`` and compare :func:`verdicts`.
    """
    path = Path(results) / "noise" / "noise-floor.json"
    if not path.exists():
        return None, {}
    data = json.loads(path.read_text())
    return data.get("summary"), data.get("flags") or {}


def verdicts(card):
    """{claim id: {reading label: verdict}} of a card: what a rerun is compared by (rule ``noise floor``)."""
    return {c["id"]: {label: g["verdict"] for label, g in c["readings"].items()} for c in card["claims"]}


def _mnist_missing(mn):
    return {label: [f"{v} n = {n}" for n in (2, 5, 10, 20) for v in ("original", "normalized")
                    if (v, n, "paper", MNIST_N) not in r.tables] for label, r in mn.items()}


def mnist_seed_spread(root):
    """F1 of the cells run with a second seed (mnist-seeds) beside the same cells of mnist-short."""
    from ..sweeps.experiments import load_records  # noqa: PLC0415

    paths = [Path(root) / f"{s}.jsonl" for s in ("mnist-short", "mnist-seeds")]
    if not all(p.exists() for p in paths):
        return {"cells": [], "note": "mnist-seeds.jsonl not on file"}
    first, second = (load_records(p) for p in paths)
    key = lambda r: (r["variant"], r["n"], round(r["inv_temperature"], 9), r["learning_rate"])  # noqa: E731
    base = {key(r): r["f1"] for r in first if r["interaction"] == "rectified_polynomial" and r["grid"] == "paper"}
    cells = []
    for r in second:
        k = key(r)
        if k in base:
            scale = MNIST_N if r["variant"] == "original" else 1
            cells.append({"network": r["variant"], "n": r["n"], "inv_T_normalized": _r(r["inv_temperature"] * scale),
                          "learning_rate": r["learning_rate"], "f1_seed0": _r(base[k]), "f1_seed1": _r(r["f1"] or 0.0)})
    by_seed = {}
    for c in cells:
        by_seed.setdefault((c["n"], c["inv_T_normalized"], c["learning_rate"]), {})[c["network"]] = c
    seed_gap = max((abs(c["f1_seed0"] - c["f1_seed1"]) for c in cells), default=None)
    net_gap = max((abs(p["original"][s] - p["normalized"][s]) for p in by_seed.values() if len(p) == 2
                   for s in ("f1_seed0", "f1_seed1")), default=None)
    return {"cells": cells, "largest_seed_change": seed_gap, "largest_network_difference": net_gap}


def summary_rows(card):
    """(id, claim, bottom-line verdict) per claim."""
    return [(c["id"], c["claim"], c["bottom_line"]["verdict"]) for c in card["claims"]]


class _Refused(OSError):
    """The scorecard cannot be written where asked; the message (``strerror``) names the path and says why."""

    one_line = True  # the command line prints the message alone


#: The largest file ``check_out`` reads to tell whether it is a scorecard (a card is about 0.5 MB).
_LARGEST_CARD = 64 * 2**20


def _what_is(path: Path, st) -> str | None:
    """Why the existing ``path`` (``st``: its lstat) is not a scorecard this writer may replace, or None."""
    import stat  # noqa: PLC0415

    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return (f"is a symbolic link (to {os.readlink(path)}); the scorecard is written only in place, never "
                f"through a link: give --out the link's target, or remove the link")
    if stat.S_ISDIR(mode):
        return "is a directory; give --out a file name (e.g. scorecard.json in that folder)"
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        return f"is {kind}, not a regular file; the scorecard replaces only a scorecard it wrote"
    if st.st_size == 0:
        return None  # an empty file: nothing to lose
    if st.st_size > _LARGEST_CARD:
        return (f"is a {st.st_size / 2**20:.0f} MiB file, not a scorecard; the scorecard replaces only a scorecard "
                f"it wrote: choose another --out")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(_LARGEST_CARD + 1)
    except OSError as err:
        return f"cannot be read ({err.strerror}), so it cannot be checked to be a scorecard"
    try:
        old = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        old = None
    if isinstance(old, dict) and isinstance(old.get("claims"), list):
        return None
    first = data.split(b"\n", 1)[0]
    if first.startswith(b'{"key":') or path.suffix == ".jsonl":
        kind = "a result file (JSON lines of blocks)"
    else:
        kind = "not a scorecard (a JSON object with its 'claims')"
    return f"is {kind}; the scorecard replaces only a scorecard it wrote: choose another --out, or remove the file"


def check_out(path="book/results/scorecard.json") -> Path:
    """Fail fast, before the card is computed: ``path`` must be absent, empty or a scorecard (never a
    result file, a directory, a device, a FIFO, a symbolic link), and its folder writable.
    Returns ``path``; an ``OSError`` naming ``path`` says what is wrong."""
    import errno  # noqa: PLC0415

    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise _Refused(errno.ENOTDIR, f"cannot write {path}: a folder on its path is a file") from None
    except OSError as err:
        raise _Refused(err.errno, f"cannot write {path}: {err.strerror}") from None
    if st is not None:
        why = _what_is(path, st)
        if why:
            raise _Refused(errno.EEXIST, f"refusing to write the scorecard to {path}: it {why}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise _Refused(errno.ENOENT, f"cannot write {path}: its folder {folder} does not exist")
    try:  # a real trial: os.access is blind to read-only mounts under some file systems
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise _Refused(err.errno, f"cannot write {path}: its folder {folder} is not writable ({err.strerror}); "
                                 f"choose another --out") from None
    return path


def _umask() -> int:
    """The process's umask (read from /proc where it can be: setting it to read it is not thread-safe)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write(card, path="book/results/scorecard.json"):
    """Write the scorecard as stable, diff-friendly JSON, atomically: a temporary file in the same
    folder, flushed and fsynced, then renamed over ``path`` (a reader sees the old file or the new
    one, never half of one). Returns the path; an ``OSError`` names the file.

    Only a scorecard is replaced (``check_out``: never a result file, a directory, a device, a
    FIFO or a symbolic link); the new file keeps the old one's permissions (a new one gets the
    umask's); the temporary file is removed on any way out, Ctrl-C and SIGTERM included."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    path = check_out(path)
    text = json.dumps(card, indent=1, ensure_ascii=False, sort_keys=False) + "\n"
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_umask()
    folder = path.parent if str(path.parent) else Path(".")
    old = None
    if threading.current_thread() is threading.main_thread():  # SIGTERM: cleaned up as Ctrl-C is

        def on_term(signum, frame):
            raise KeyboardInterrupt
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            old = signal.signal(signal.SIGTERM, on_term)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as err:
        raise _Refused(err.errno, f"could not write {path}: {err.strerror or err}") from err
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    try:
        dirfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)
    except OSError:
        pass  # some filesystems cannot fsync a folder; the rename has happened
    return path
