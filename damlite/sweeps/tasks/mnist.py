"""The paper's MNIST sweep: classifiers over a 1/T x learning-rate grid, scored by validation F1.

Registered with the sweep engine (:mod:`damlite.sweeps.experiments`) as ``"mnist"``
with the profiles ``quick`` and ``smoke`` (the bundled digits, seconds),
``short`` (the paper's grid, 60 epochs) and ``full`` (the paper's 500 epochs).
The classifiers themselves are in :mod:`damlite.classification`.
"""
from __future__ import annotations

import numpy as np

from ...datasets import describe_source

from ...backend import get_backend, resolve_dtype
from ...classification import evaluate_classifiers, train_classifiers
from ..experiments import Block, register_task
from ...interactions import make_interaction
from ...network import DEFAULT_MEMORY_BUDGET

__all__ = ["MNIST_TASK", "MNIST_GRIDS", "block_memory", "mnist_block", "run_mnist_block"]

#: Fixed choices of the "mnist" sweep task. The paper gives K = 256, 500 epochs,
#: n in {2, 5, 10, 20} and validation F1; the rest is ours (Krotov & Hopfield's
#: optimiser and initialisation, the paper's unclamped class weights).
MNIST_TASK = {
    "interaction": "rectified_polynomial",  # Krotov's F; homogeneous, so the variants are comparable
    "memories": 256,
    "epochs": 500,
    "batch_size": 1000,
    "lr_decay": 0.998,
    "momentum": 0.6,
    "error_exponent": 30,  # Krotov's m: in short trials m = 1 left n = 20 untrained (see chapter 7)
    "init_mean": -0.3,
    "init_std": 0.3,
    "clamp": "inputs",  # class weights left free (the paper)
    "data": "full",
    "validation_size": 10000,  # the last 10 000 training digits; 50 000 train
    "eval_every": 25,
}

#: Grids in the normalized network's 1/T (the original's is this / N, N = 794: the same
#: networks by homogeneity) and initial learning rates (the largest step of any memory entry).
MNIST_GRIDS = {
    "paper": (tuple(float(f"{x:.4g}") for x in np.logspace(-1, 1.5, 6)),
              (0.001, 0.003, 0.01, 0.03, 0.1, 0.3)),
    "quick": ((0.3, 1.0, 3.0, 10.0), (0.03, 0.1, 0.3)),
}
#: The paper grid's 1/T with the two learning rates that were best at n = 5 and 10 in the
#: short profile (homogeneous F): a third of the cost, for CPU-sized comparisons.
MNIST_GRIDS["paper-lr2"] = (MNIST_GRIDS["paper"][0], (0.01, 0.03))


def mnist_block(variant, n, grid="paper", *, repeats=1, dtype="float64", grids=None, **overrides):
    """A block of the "mnist" task: one variant and n over a 1/T x learning-rate grid."""
    grids = MNIST_GRIDS if grids is None else grids
    inv_t, lrs = grids[grid] if isinstance(grid, str) else grid
    name = grid if isinstance(grid, str) else "custom"
    settings = dict(MNIST_TASK, **overrides)
    N = 794
    if variant == "original":
        inv_t = tuple(float(f"{x / N:.6g}") for x in inv_t)
    return Block("mnist", variant, int(n), name, tuple(float(x) for x in inv_t), tuple(float(x) for x in lrs),
                 int(repeats), dtype, tuple(sorted(settings.items())))


def block_memory(block) -> int:
    """Bytes a block's own arrays take at most, beyond the memory budget (an estimate, for the sweep's checks):
    ``itemsize * 10 G K N`` for one repeat's G networks of K memories over N = 794 neurons (as the
    autoassociative task's :func:`~damlite.sweeps.tasks.autoassociative.block_memory`), and the digits
    in float64, twice (the training, validation and test sets as loaded and as the networks' inputs)."""
    o = block.options
    item = {"float16": 2, "float32": 4}.get(block.dtype, 8)
    rows = (o.get("n_train") or 60000) + o.get("validation_size", 10000) + 10000
    return item * 10 * block.n_cells * o["memories"] * 794 + 2 * 8 * rows * 794


def _mnist_data(o):
    from ...datasets import load_mnist  # noqa: PLC0415

    data = load_mnist(source=o["data"], validation_size=o["validation_size"], dtype="float64")
    n_train = o.get("n_train")
    if n_train:
        data = type(data)(X_train=data.X_train[:n_train], y_train=data.y_train[:n_train], X_val=data.X_val,
                          y_val=data.y_val, X_test=data.X_test, y_test=data.y_test, source=data.source,
                          encoding=data.encoding)
    return data


def run_mnist_block(block, *, backend="auto", dtype="float64", memory_budget=DEFAULT_MEMORY_BUDGET):
    """Train all G = cells x repeats classifiers of ``block`` at once; one record per network.

    Metric ``f1``: validation macro-F1 after the last epoch. Each repeat's
    networks share initial memories and minibatch order, and so do the blocks of
    other n and variants (common random numbers). Test accuracy, F1 and
    confusion matrix are recorded too (for the chosen optimum only, in the book).
    """
    import zlib  # noqa: PLC0415

    o = block.options
    data = _mnist_data(o)
    cells = list(block.cells())
    per_rep = block.n_cells
    records = []
    for r in range(block.repeats):
        mine = cells[r * per_rep:(r + 1) * per_rep]
        inv_t = np.array([c[3] for c in mine])
        lr = np.array([c[4] for c in mine])
        ss = np.random.SeedSequence([block.base_seed, zlib.crc32(b"mnist"), o["memories"], r])
        res = train_classifiers(
            data.X_train, data.y_train, n_memories=o["memories"], interaction=o["interaction"], n=block.n,
            **{k: o[k] for k in ("epsilon", "leak") if k in o},
            variant=block.variant, temperature=1.0 / inv_t, learning_rate=lr, lr_decay=o["lr_decay"],
            momentum=o["momentum"], epochs=o["epochs"], batch_size=o["batch_size"],
            error_exponent=o["error_exponent"], init_mean=o["init_mean"], init_std=o["init_std"],
            clamp=o["clamp"], eval_sets={"val": (data.X_val, data.y_val)}, eval_every=o["eval_every"],
            random_state=np.random.default_rng(ss), backend=backend, dtype=dtype, memory_budget=memory_budget,
        )
        F = make_interaction(o["interaction"], block.n, **{k: o[k] for k in ("epsilon", "leak") if k in o})
        xp, _ = get_backend(backend)
        mem = xp.asarray(res.memories, dtype=resolve_dtype(xp, dtype))
        t_acc, t_f1, t_cm, t_fin = evaluate_classifiers(mem, data.X_test, data.y_test, F, res.beta_in,
                                                        memory_budget=memory_budget)
        finite = res.finite & t_fin
        for g, (rep, i, j, it, lrate) in enumerate(mine):
            ok = bool(finite[g])
            records.append({
                "N": int(res.memories.shape[-1]),
                "repeat": rep, "i_T": i, "i_lr": j, "inv_temperature": it, "learning_rate": lrate,
                "f1": float(res.f1["val"][-1, g]) if ok else None,
                "accuracy": float(res.accuracy["val"][-1, g]) if ok else None,
                "f1_curve": [float(x) for x in res.f1["val"][:, g]],
                "accuracy_curve": [float(x) for x in res.accuracy["val"][:, g]],
                "eval_epochs": res.eval_epochs.tolist(),
                "test_f1": float(t_f1[g]) if ok else None,
                "test_accuracy": float(t_acc[g]) if ok else None,
                "test_confusion": t_cm[g].tolist(),
                "final_loss": float(res.loss[-1, g]) if ok else None,
                "finite": ok, "failed_epoch": int(res.failed_epoch[g]),
                "median_epoch_seconds": float(np.median(res.epoch_seconds)),
                "n_train": int(len(data.y_train)), "n_val": int(len(data.y_val)), "data_source": describe_source(data.source),
            })
    return records


def _mnist_quick():
    """Seconds on a CPU: 1000 bundled digits (500 validation), K = 16, 8 epochs of minibatches of 100."""
    return [mnist_block(v, n, "quick", data="bundled", validation_size=500, n_train=1000, memories=16, epochs=8,
                        batch_size=100, eval_every=4)
            for n in (2, 5, 10, 20) for v in ("original", "normalized")]


#: The leaky F of the paper author's MNIST code: x**n above 0, +0.01 x below (not homogeneous).
AUTHOR_LEAK = {"interaction": "leaky_rectified_polynomial", "leak": "code", "epsilon": 0.01}


def _mnist_leak_quick():
    """The quick profile with the author's leaky F (+0.01 x below 0): seconds on a CPU."""
    return [mnist_block(v, n, "quick", data="bundled", validation_size=500, n_train=1000, memories=16, epochs=8,
                        batch_size=100, eval_every=4, **AUTHOR_LEAK)
            for n in (2, 5, 10, 20) for v in ("original", "normalized")]


def _mnist_short():
    """The paper's grid on all 60 000 digits with 60 epochs instead of 500 (a GPU job of minutes)."""
    return [mnist_block(v, n, "paper", epochs=60, eval_every=10) for n in (2, 5, 10, 20) for v in ("normalized", "original")]


def _mnist_leak_short():
    """The short profile with the leaky F the paper author's MNIST code used (+0.01 x below 0): do the
    two networks differ where the homogeneous F makes them one network? (A GPU job, like "short".)"""
    return [mnist_block(v, n, "paper", epochs=60, eval_every=10, **AUTHOR_LEAK)
            for n in (2, 5, 10, 20) for v in ("normalized", "original")]


def _mnist_leak_cpu():
    """The leak question on all 60 000 digits, sized for a 2-core CPU (about 35 min a block):
    n = 20, where the original's leak is (1/T)^19 times the normalized one's, 60 epochs, the
    paper's six 1/T and two learning rates; the author's leak first, then the homogeneous control."""
    return ([mnist_block(v, 20, "paper-lr2", epochs=60, eval_every=10, **AUTHOR_LEAK) for v in ("normalized", "original")]
            + [mnist_block(v, 20, "paper-lr2", epochs=60, eval_every=10) for v in ("normalized", "original")])


def _mnist_leak_init():
    """The leak question with the paper author's initial memories, N(0, 0.1^2), instead of
    Krotov and Hopfield's N(-0.3, 0.3^2): with those, about half the similarities start below
    zero, where the leak acts. n = 20, all 60 000 digits, 60 epochs, the paper's six 1/T at
    learning rate 0.01; the author's leak for both networks, and the rectified control for the
    normalized one (the original is the same network). CPU-sized: three blocks of about 15 min."""
    grid = (MNIST_GRIDS["paper"][0], (0.01,))
    init = dict(init_mean=0.0, init_std=0.1, epochs=60, eval_every=10)
    return ([mnist_block(v, 20, grid, **init, **AUTHOR_LEAK) for v in ("normalized", "original")]
            + [mnist_block("normalized", 20, grid, **init)])


#: Base seed of the extra MNIST repeats (fresh initial memories and minibatch order).
SEEDS_SEED = 20261126


def _mnist_seeds():
    """A second seed for the short profile's n = 5 and 2 cells of both networks (2026-11-26, commit 129bd78): the
    seed-to-seed spread of F1 against which the two networks' differences are read. The three
    1/T where anything learns (0.316, 1, 3.16) x the two best learning rates (0.03, 0.1), 60
    epochs, fresh initial memories and minibatch order. CPU-sized: four blocks of about 10 min."""
    from dataclasses import replace  # noqa: PLC0415

    inv_t = MNIST_GRIDS["paper"][0][1:4]
    grid = (inv_t, (0.03, 0.1))
    return [replace(mnist_block(v, n, grid, epochs=60, eval_every=10), base_seed=SEEDS_SEED)
            for n in (5, 2) for v in ("normalized", "original")]


#: The paper author's MNIST setup (the most plausible setup of the paper's MNIST runs): the leaky F
#: (+0.01 x below 0) with initial memories N(0, 0.1^2). With it the two networks are two networks.
AUTHOR_SETUP = dict(AUTHOR_LEAK, init_mean=0.0, init_std=0.1)
#: The learning rate best at every n in reading A's 60-epoch grids (``mnist-short``): the CPU slices' one column.
SLICE_LR = 0.03
#: The n of the CPU slices, in the order they run: n = 2 and the largest n first (every MNIST claim compares
#: n = 2 with larger n), then 5 and 10.
SLICE_NS = (2, 20, 5, 10)
#: Base seed of the pre-registered second seed (2026-11-29): fresh initial memories and minibatch order.
SEED2 = 20261129


def reading_b_grid(n, lrs, N=794):
    """Reading B's grid at ``n``: the paper's 1/T values for the original read as beta = 1/T_B outside F with no
    power, 1/T_B = the paper grid's 1/T' / N; run as reading A's original at 1/T_A = (1/T_B)**(1/n), given here in
    the normalized units :func:`mnist_block` takes (1/T' = N / T_A), to 6 significant digits."""
    return (tuple(float(f"{N * (x / N) ** (1 / n):.6g}") for x in MNIST_GRIDS["paper"][0]), tuple(lrs))


def _author(epochs, lrs, **kw):
    grid = (MNIST_GRIDS["paper"][0], tuple(lrs))
    name = "paper" if tuple(lrs) == MNIST_GRIDS["paper"][1] else "paper-lr"
    return [mnist_block(v, n, name, grids={name: grid}, epochs=epochs, eval_every=10 if epochs <= 60 else 25,
                        **AUTHOR_SETUP, **kw)
            for n in SLICE_NS for v in ("normalized", "original")]


def _reading_b(epochs, lrs):
    return [mnist_block("original", n, "paper-b", grids={"paper-b": reading_b_grid(n, lrs)}, epochs=epochs,
                        eval_every=10 if epochs <= 60 else 25)
            for n in SLICE_NS]


def _mnist_author_slice():
    """Pre-registered 2026-11-29 (``book/results/predictions/2026-11-29-mnist-noise-floor.md``): the author's setup,
    the paper's six 1/T at the learning rate 0.03, 60 epochs, n = 2, 20, 5, 10, both networks. CPU-sized: eight
    blocks of about 10-15 minutes on one thread."""
    return _author(60, (SLICE_LR,))


def _mnist_author_short():
    """The author's setup on the paper's whole 6 x 6 grid, 60 epochs (a GPU job of minutes)."""
    return _author(60, MNIST_GRIDS["paper"][1])


def _mnist_author_full():
    """The author's setup on the paper's whole grid, 500 epochs (a GPU job)."""
    return _author(500, MNIST_GRIDS["paper"][1])


def _mnist_author_seed2():
    """The author's setup, 60 epochs, whole grid, a second seed (a GPU job)."""
    from dataclasses import replace  # noqa: PLC0415

    return [replace(b, base_seed=SEED2) for b in _author(60, MNIST_GRIDS["paper"][1])]


def _mnist_b_slice():
    """Reading B (pre-registered 2026-11-29): the original at the paper's 1/T read as beta = 1/T outside F (no power),
    the learning rate 0.03, 60 epochs, n = 2, 20, 5, 10 (the normalized network is reading A's). CPU-sized."""
    return _reading_b(60, (SLICE_LR,))


def _mnist_b_short():
    """Reading B on the paper's whole grid, 60 epochs (a GPU job)."""
    return _reading_b(60, MNIST_GRIDS["paper"][1])


def _mnist_b_full():
    """Reading B on the paper's whole grid, 500 epochs (a GPU job)."""
    return _reading_b(500, MNIST_GRIDS["paper"][1])


def _mnist_full():
    """The paper's sweep: K = 256, 500 epochs, n in {2, 5, 10, 20}, both variants (a GPU job of about an hour)."""
    return [mnist_block(v, n, "paper") for n in (2, 5, 10, 20) for v in ("normalized", "original")]


def _mnist_smoke():
    """Seconds: tests and CI."""
    grids = {"quick": ((1.0, 10.0), (0.05, 0.2))}
    return [mnist_block(v, n, "quick", grids=grids, data="bundled", validation_size=500, n_train=500, memories=8,
                        epochs=2, batch_size=250, eval_every=1)
            for n in (2, 5) for v in ("original", "normalized")]


register_task("mnist", run_mnist_block, metric="f1", lower_is_better=False, memory=block_memory,
              profiles={"quick": _mnist_quick, "short": _mnist_short, "leak-short": _mnist_leak_short,
                        "leak-quick": _mnist_leak_quick,
                        "leak-cpu": _mnist_leak_cpu, "leak-init": _mnist_leak_init, "full": _mnist_full,
                        "seeds": _mnist_seeds, "smoke": _mnist_smoke,
                        "author-slice": _mnist_author_slice, "author-short": _mnist_author_short,
                        "author-full": _mnist_author_full, "author-seed2": _mnist_author_seed2,
                        "b-slice": _mnist_b_slice, "b-short": _mnist_b_short, "b-full": _mnist_b_full})
