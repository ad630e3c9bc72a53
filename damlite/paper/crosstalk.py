"""The class neurons' crosstalk (Sec. 5.3, "likely negligible"): the same trained classifiers scored two ways.

A digit x is presented with every class neuron off, and each class neuron c is evaluated once. With
s^mu = sum_{i <= D} zeta^mu_i x_i the input part of memory mu's similarity and a the similarity scale:

* **autoassociative** (what the paper ran, and what
  :func:`damlite.classification.class_energy_differences` computes): the other class neurons enter
  with their current state -1,

  Delta_c = sum_mu F(a (s^mu + zeta^mu_c - X^mu_c)) - F(a (s^mu - zeta^mu_c - X^mu_c)),
  X^mu_c = sum_{g != c} zeta^mu_g (the crosstalk);

* **feed-forward equivalent** (Krotov & Hopfield 2016, the crosstalk dropped):

  Delta^ff_c = sum_mu F(a (s^mu + zeta^mu_c)) - F(a (s^mu - zeta^mu_c)).

The prediction is the argmax over c in both. :func:`feed_forward_differences` evaluates Delta^ff with the
model's own kernel (:func:`damlite.network.energy_difference`) on a copy of the memories whose other class
weights are zero, one class at a time.

``python -m damlite.paper.crosstalk`` writes ``book/results/mnist/crosstalk.json`` (a few minutes on two
cores): the two committed Krotov-configuration networks and small fresh networks of the paper's setup, each
scored on the 10 000 test digits both ways. The rule and the prediction were committed first, in
``book/results/predictions/2026-11-29-crosstalk.md``; the scorecard reads the file and never imports this
module.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from ..classification import class_energy_differences, classifier_probes, classifier_scales, train_classifiers
from ..datasets import load_mnist
from ..interactions import make_interaction
from ..network import energy_difference
from ..sweeps.experiments import provenance
from ..sweeps.tasks.mnist import MNIST_TASK

__all__ = ["FRESH", "KROTOV_FILES", "compare", "feed_forward_differences", "measure", "write"]

#: The fresh networks: the paper's MNIST setup reduced to two cores. The first as pre-registered (item 2 of the
#: prediction file; none learned in its 100 steps), the second its addendum (committed before it ran): 50 000
#: digits, the normalized network (reading A's original is the same network), the two 1/T' per n that learn.
FRESH = (
    {"n": {2: (1.0, 3.16), 20: (1.0, 3.16)}, "variants": ("normalized", "original"), "learning_rate": 0.03,
     "n_train": 10000, "epochs": 10, "seed": 20261129, "setup": "as pre-registered"},
    {"n": {2: (0.316, 1.0), 20: (1.0, 3.16)}, "variants": ("normalized",), "learning_rate": 0.03,
     "n_train": 50000, "epochs": 10, "seed": 20261129, "setup": "addendum"},
)
#: The committed Krotov-configuration networks (n = 20, K = 100, every entry clamped, 30 epochs).
KROTOV_FILES = ("krotov_original", "krotov_normalized")
RESULT_FILE = "crosstalk.json"
N_CLASSES = 10


def feed_forward_differences(memories, X, interaction, scale, *, n_classes=N_CLASSES):
    """Delta^ff (G, B, C): each class neuron evaluated without the other class neurons' terms.

    Parameters
    ----------
    memories : array (G, K, D + C)
    X : array (B, D)
        Inputs in [-1, 1].
    interaction : Interaction
    scale : float or array (G,)
        The similarity scale a (``beta_in``).

    Notes
    -----
    Delta^ff_c = sum_mu F(a (s^mu + zeta^mu_c)) - F(a (s^mu - zeta^mu_c)), s^mu the input part of the
    similarity: the autoassociative Delta_c of memories whose class weights other than c are zero.
    """
    mem = np.asarray(memories, dtype=np.float64)
    G, K, N = mem.shape
    D = N - n_classes
    probes = classifier_probes(X, n_classes, np, np.float64)
    out = np.empty((G, probes.shape[0], n_classes))
    for c in range(n_classes):
        alone = mem.copy()
        alone[:, :, D:] = 0.0
        alone[:, :, D + c] = mem[:, :, D + c]
        out[:, :, c] = energy_difference(alone, probes, interaction, scale, neurons=slice(D + c, D + c + 1))[:, :, 0]
    return out


def compare(memories, X, y, interaction, scale, *, n_classes=N_CLASSES):
    """Per network: test digits, correct with crosstalk, correct without, predictions that agree (integers)."""
    mem = np.asarray(memories, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    auto = np.asarray(class_energy_differences(mem, X, interaction, scale, n_classes=n_classes))
    ff = feed_forward_differences(mem, X, interaction, scale, n_classes=n_classes)
    rows = []
    for g in range(mem.shape[0]):
        finite = bool(np.all(np.isfinite(auto[g])) and np.all(np.isfinite(ff[g])))
        pa, pf = auto[g].argmax(axis=1), ff[g].argmax(axis=1)
        rows.append({"n_test": int(y.size), "correct_auto": int((pa == y).sum()), "correct_ff": int((pf == y).sum()),
                     "agree": int((pa == pf).sum()), "finite": finite})
    return rows


def _krotov(results, X, y):
    rows = []
    for name in KROTOV_FILES:
        record = json.loads((Path(results) / "mnist" / f"{name}.json").read_text())
        cfg = record["config"]
        F = make_interaction(cfg["interaction"], cfg["n"])
        mem = np.load(Path(results) / "mnist" / f"{name}.memories.npy")[None]
        (row,) = compare(mem, X, y, F, record["beta_in"])
        rows.append(dict(row, network=name, source=f"book/results/mnist/{name}.memories.npy", variant=record["variant"],
                         n=cfg["n"], memories=cfg["n_memories"], clamp=cfg["clamp"], epochs=record["epochs_done"],
                         n_train=record["n_train"], temperature=cfg["temperature"]))
    return rows


def _fresh(data, f):
    o = MNIST_TASK
    X, y = data.X_train[: f["n_train"]], data.y_train[: f["n_train"]]
    N = X.shape[1] + N_CLASSES
    rows = []
    for n, inv_T_prime in f["n"].items():
        F = make_interaction(o["interaction"], n)
        for variant in f["variants"]:
            inv_T = np.asarray(inv_T_prime) / (N if variant == "original" else 1.0)
            res = train_classifiers(
                X, y, n_memories=o["memories"], interaction=o["interaction"], n=n, variant=variant,
                temperature=1.0 / inv_T, learning_rate=f["learning_rate"], lr_decay=o["lr_decay"],
                momentum=o["momentum"], epochs=f["epochs"], batch_size=o["batch_size"],
                error_exponent=o["error_exponent"], init_mean=o["init_mean"], init_std=o["init_std"],
                clamp=o["clamp"], random_state=f["seed"], backend="numpy", dtype="float64")
            beta_in, _ = classifier_scales(variant, res.temperature, n, N)
            for g, row in enumerate(compare(res.memories, data.X_test, data.y_test, F, beta_in)):
                name = f"{variant} n={n} 1/T'={inv_T_prime[g]:g}" + (", 50 000 digits" if f["n_train"] == 50000 else "")
                rows.append(dict(row, network=name, source=f"trained here ({f['setup']})",
                                 variant=variant, n=n, memories=o["memories"], clamp=o["clamp"], epochs=f["epochs"],
                                 n_train=f["n_train"], temperature=float(res.temperature[g]),
                                 inv_T_prime=inv_T_prime[g], learning_rate=f["learning_rate"]))
    return rows


def measure(results="book/results", data_dir=None):
    """Every network of the prediction file scored both ways: a list of rows (see :func:`compare`)."""
    data = load_mnist(source="full", data_dir=data_dir or os.environ.get("DAMLITE_DATA_DIR"), dtype="float64")
    return _krotov(results, data.X_test, data.y_test) + [row for f in FRESH for row in _fresh(data, f)]


def write(results="book/results", path=None, data_dir=None):
    """Measure and write ``book/results/mnist/crosstalk.json`` (networks, settings, provenance with seconds)."""
    path = Path(path) if path is not None else Path(results) / "mnist" / RESULT_FILE
    t0 = time.perf_counter()
    rows = measure(results, data_dir)
    card = {"what": "Sec. 5.3 crosstalk: argmax of the autoassociative Delta_c (other class neurons at -1) and of "
                    "the feed-forward Delta^ff_c (their terms dropped), same memories, all 10 000 test digits",
            "prediction_file": "book/results/predictions/2026-11-29-crosstalk.md",
            "fresh": [dict(f, n={str(k): list(v) for k, v in f["n"].items()}) for f in FRESH],
            "task": {k: MNIST_TASK[k] for k in ("interaction", "memories", "batch_size", "lr_decay", "momentum",
                                                "error_exponent", "init_mean", "init_std", "clamp")},
            "networks": rows,
            "provenance": provenance("numpy", host=True, seconds=round(time.perf_counter() - t0, 1))}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return card


if __name__ == "__main__":  # pragma: no cover - a command
    import argparse

    ap = argparse.ArgumentParser(prog="python -m damlite.paper.crosstalk", description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="book/results")
    args = ap.parse_args()
    for r in write(args.results)["networks"]:
        print(f"{r['network']}: {r['correct_auto']} vs {r['correct_ff']} correct of {r['n_test']}, agree {r['agree']}")
