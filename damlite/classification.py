"""Dense Associative Memories as classifiers: G networks trained and scored at once.

A classifier's memories have ``N = D + C`` entries: ``D`` for the input pixels
and ``C`` for the classes. A digit ``x`` is presented as the state
``[x, -1, ..., -1]`` (all class neurons off); each class neuron ``c`` is
evaluated once, and its output ``tanh(beta_out * Delta_c)`` (see
:func:`damlite.network.loss_and_gradient`) is trained towards the bipolar
one-hot label. Prediction is the class with the largest ``Delta_c`` (the same
argmax as the tanh outputs, without their saturation ties).

Every function here takes a batch of G networks that share the data but have
their own learning rate and temperature (per-network arrays), so a whole
learning-rate x temperature grid trains in one call of
:func:`damlite.training.train_memories`.

Scales (``N`` counts all D + C neurons):

=============  ============  ===============
variant        beta_in       beta_out
=============  ============  ===============
"original"     1             1 / T**n
"normalized"   1 / (N T)     1
=============  ============  ===============

For an interaction homogeneous of degree n the two agree exactly when
``T_normalized = T_original / N`` (:func:`damlite.equivalent_temperature`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .backend import array_namespace, get_backend, itemsize_of, resolve_dtype, to_numpy
from .datasets import bipolar_one_hot
from .interactions import make_interaction
from .network import DEFAULT_MEMORY_BUDGET, energy_difference, per_network_scalar, quiet_numpy
from .training import train_memories
from .validation import check_positive, check_random_state

__all__ = [
    "ClassificationResult",
    "KROTOV_CONFIG",
    "accuracy_from_confusion",
    "class_energy_differences",
    "classifier_scales",
    "classifier_probes",
    "confusion_matrices",
    "equivalent_temperature",
    "evaluate_classifiers",
    "macro_f1_from_confusion",
    "parameter_grid",
    "predict_classes",
    "train_classifiers",
]

#: Krotov & Hopfield's MNIST notebook (K=100, n=20, m=30, T=540, 300 epochs).
KROTOV_CONFIG = dict(
    n_memories=100, interaction="rectified_polynomial", n=20, error_exponent=30,
    temperature=540.0, learning_rate=4e-2, lr_decay=0.998, momentum=0.6,
    batch_size=1000, epochs=300, init_mean=-0.3, init_std=0.3, clamp="all",
)


# ----------------------------------------------------------------- scales

def classifier_scales(variant, temperature, n, n_features):
    """(beta_in, beta_out) as float64 arrays of T's shape, for ``variant`` at temperature T.

    ``n`` is the interaction's degree; ``n_features`` is N = D + C.
    """
    T = np.asarray(temperature, dtype=np.float64)
    if np.any(~np.isfinite(T)) or np.any(T <= 0):
        raise ValueError(f"temperature must be finite and > 0, got {temperature!r}")
    if variant == "original":
        return np.ones_like(T), T ** (-float(n))
    if variant == "normalized":
        return 1.0 / (n_features * T), np.ones_like(T)
    raise ValueError(f"variant must be 'original' or 'normalized', got {variant!r}")


def parameter_grid(learning_rates, temperatures):
    """Flatten a learning-rate x temperature grid: two (G,) arrays, learning rate major.

    Network ``g = i * len(temperatures) + j`` has ``learning_rates[i]`` and
    ``temperatures[j]``; reshape per-network results to ``(n_lr, n_T)``.
    """
    lr, T = np.meshgrid(np.asarray(learning_rates, float), np.asarray(temperatures, float), indexing="ij")
    return lr.reshape(-1), T.reshape(-1)


# ------------------------------------------------------------ presentation

def classifier_probes(X, n_classes, xp, dtype, device=None):
    """States ``[x, -1, ..., -1]`` (B, D + C) in namespace ``xp``: inputs, class neurons off."""
    X = np.asarray(to_numpy(X))
    out = np.empty((X.shape[0], X.shape[1] + n_classes), dtype=np.float64)
    out[:, : X.shape[1]] = X
    out[:, X.shape[1]:] = -1.0
    return xp.asarray(out, dtype=dtype) if device is None else xp.asarray(out, dtype=dtype, device=device)


def _rows_per_chunk(G, K, C, itemsize, memory_budget):
    # energy_difference holds (G, b, K) similarities and ~6 (G, b, K, C) tensors per row.
    per_row = G * K * (6 * C + 2) * itemsize
    return max(1, int(memory_budget // max(per_row, 1)))


def class_energy_differences(memories, X, interaction, beta_in, *, n_classes=10,
                             memory_budget=DEFAULT_MEMORY_BUDGET):
    """Delta_c for every network, digit and class neuron, shape (G, B, C), on the memories' device.

    ``memories`` (G, K, D + C); ``X`` (B, D) host inputs; ``beta_in`` a float or (G,).
    Rows are processed in chunks so the intermediates stay within ``memory_budget`` bytes.
    The class outputs are ``tanh(beta_out * Delta)``.
    """
    xp = array_namespace(memories)
    G, K, N = memories.shape
    D = N - n_classes
    X = np.asarray(to_numpy(X))
    if X.ndim != 2 or X.shape[1] != D:
        raise ValueError(f"X must have shape (B, {D}) for memories with {N} = {D} + {n_classes} entries, "
                         f"got {X.shape}")
    device = getattr(memories, "device", None)
    rows = _rows_per_chunk(G, K, n_classes, itemsize_of(memories.dtype), memory_budget)
    neurons = slice(D, N)
    out = []
    with quiet_numpy():
        for start in range(0, X.shape[0], rows):
            probes = classifier_probes(X[start:start + rows], n_classes, xp, memories.dtype, device)
            out.append(energy_difference(memories, probes, interaction, beta_in, neurons=neurons,
                                         memory_budget=memory_budget))
    return out[0] if len(out) == 1 else xp.concat(out, axis=1)


def predict_classes(memories, X, interaction, beta_in, *, n_classes=10, memory_budget=DEFAULT_MEMORY_BUDGET):
    """Predicted class indices (G, B) as a NumPy array, and a (G,) mask of finite networks.

    The class with the largest Delta_c (beta_out > 0 does not change the argmax).
    A network with a non-finite Delta gets prediction -1 everywhere.
    """
    xp = array_namespace(memories)
    G, K, N = memories.shape
    rows = _rows_per_chunk(G, K, n_classes, itemsize_of(memories.dtype), memory_budget)
    X = np.asarray(to_numpy(X))
    preds, finite = [], np.ones(G, dtype=bool)
    for start in range(0, max(X.shape[0], 1), rows):
        delta = class_energy_differences(memories, X[start:start + rows], interaction, beta_in,
                                         n_classes=n_classes, memory_budget=memory_budget)
        ok = xp.all(xp.reshape(xp.isfinite(delta), (G, -1)), axis=1)
        finite &= np.asarray(to_numpy(ok), dtype=bool)
        preds.append(np.asarray(to_numpy(xp.argmax(delta, axis=2))))
    pred = np.concatenate(preds, axis=1) if preds else np.zeros((G, 0), dtype=np.int64)
    pred[~finite] = -1
    return pred, finite


# ----------------------------------------------------------------- metrics

def confusion_matrices(y_true, y_pred, n_classes=10):
    """Confusion matrices (G, C, C): entry [g, i, j] counts digits of class i predicted as j.

    ``y_pred`` is (B,) or (G, B); predictions outside 0..C-1 (failed networks)
    count in no column, so they lower recall but no class's precision.
    """
    y_true = np.asarray(y_true, dtype=np.int64).reshape(-1)
    y_pred = np.atleast_2d(np.asarray(y_pred, dtype=np.int64))
    G, B = y_pred.shape
    if B != y_true.shape[0]:
        raise ValueError(f"y_pred has {B} predictions per network, y_true {y_true.shape[0]} labels")
    valid = (y_pred >= 0) & (y_pred < n_classes)
    flat = (np.arange(G)[:, None] * n_classes + y_true[None, :]) * n_classes + np.clip(y_pred, 0, n_classes - 1)
    counts = np.bincount(flat[valid], minlength=G * n_classes * n_classes)
    return counts.reshape(G, n_classes, n_classes)


def macro_f1_from_confusion(confusion):
    """Macro-averaged F1 per network from confusion matrices (..., C, C).

    :func:`damlite.metrics.macro_f1` is the same score from label arrays.

    F1_c = 2 TP / (2 TP + FP + FN); a class with no true and no predicted
    digits scores 0 (scikit-learn's ``zero_division=0``). Returns shape (...).
    """
    cm = np.asarray(confusion, dtype=np.float64)
    tp = np.diagonal(cm, axis1=-2, axis2=-1)
    fn = cm.sum(axis=-1) - tp
    fp = cm.sum(axis=-2) - tp
    denom = 2 * tp + fp + fn
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    return f1.mean(axis=-1)


def accuracy_from_confusion(confusion):
    """Fraction of correct predictions per network, shape (...)."""
    cm = np.asarray(confusion, dtype=np.float64)
    total = cm.sum(axis=(-2, -1))
    # failed networks' predictions are in no column: count them through the row sums only
    return np.trace(cm, axis1=-2, axis2=-1) / np.where(total > 0, total, 1.0)


def evaluate_classifiers(memories, X, y, interaction, beta_in, *, n_classes=10,
                         memory_budget=DEFAULT_MEMORY_BUDGET):
    """Accuracy (G,), macro-F1 (G,), confusion (G, C, C), finite (G,) of G networks on (X, y)."""
    pred, finite = predict_classes(memories, X, interaction, beta_in, n_classes=n_classes,
                                   memory_budget=memory_budget)
    y = np.asarray(y, dtype=np.int64).reshape(-1)
    cm = confusion_matrices(y, pred, n_classes)
    acc = np.mean(pred == y[None, :], axis=1)
    return acc, macro_f1_from_confusion(cm), cm, finite


# ---------------------------------------------------------------- training

@dataclass
class ClassificationResult:
    """What :func:`train_classifiers` returns (all NumPy, per network g = 0..G-1)."""

    memories: np.ndarray  # (G, K, D + C)
    learning_rate: np.ndarray  # (G,) initial learning rates
    temperature: np.ndarray  # (G,)
    beta_in: np.ndarray  # (G,)
    beta_out: np.ndarray  # (G,)
    loss: np.ndarray  # (epochs, G) training loss summed over each epoch
    eval_epochs: np.ndarray  # (E,) 1-based epochs after which the eval sets were scored
    accuracy: dict = field(default_factory=dict)  # name -> (E, G)
    f1: dict = field(default_factory=dict)  # name -> (E, G) macro-F1
    confusion: dict = field(default_factory=dict)  # name -> (G, C, C) after the last epoch
    finite: np.ndarray = None  # (G,)
    failed_epoch: np.ndarray = None  # (G,) -1 if never
    epoch_seconds: np.ndarray = None  # (epochs,) training wall time per epoch (evaluation excluded)
    eval_seconds: float = 0.0
    settings: dict = field(default_factory=dict)

    def grid(self, values, shape):
        """Reshape a per-network array ``(..., G)`` to ``(..., *shape)``, e.g. ``(n_lr, n_T)``."""
        values = np.asarray(values)
        return values.reshape(*values.shape[:-1], *shape)


def train_classifiers(
    X_train,
    y_train,
    *,
    n_memories=256,
    interaction="rectified_polynomial",
    n=2,
    epsilon=1e-2,
    leak="paper",
    variant="normalized",
    temperature=1.0,
    learning_rate=0.1,
    lr_decay=1.0,
    momentum=0.0,
    epochs=10,
    batch_size=1000,
    error_exponent=1,
    init_mean=0.0,
    init_std=0.1,
    clamp="inputs",
    n_classes=10,
    eval_sets=None,
    eval_every=1,
    initial_memories=None,
    random_state=None,
    backend="auto",
    dtype="auto",
    memory_budget=DEFAULT_MEMORY_BUDGET,
    progress=False,
    on_epoch=None,
):
    """Train G classifiers (one per learning rate x temperature pair) on the same data.

    Parameters
    ----------
    X_train : array (B, D)
        Inputs in [-1, 1]; ``y_train`` (B,) labels 0..C-1.
    n_memories, interaction, n, epsilon, leak, error_exponent
        The network (K, F_n, the leaky slope and its sign, the loss exponent m).
    variant : {"normalized", "original"}
        Where the scales sit (module docstring).
    temperature, learning_rate : float or array (G,)
        Per-network values, broadcast against each other (see :func:`parameter_grid`).
    lr_decay, momentum, epochs, batch_size
        The optimiser (:mod:`damlite.training`); the minibatch order is shared by all G.
    init_mean, init_std
        Memories start as N(init_mean, init_std**2) clipped to [-1, 1], the *same*
        draw for every network (common random numbers across the grid).
    clamp : {"inputs", "all", "none"}
        Which memory entries are clipped to [-1, 1] after each step: the input
        part only (the paper: class weights free), all (Krotov & Hopfield's
        notebook clips every entry), or none.
    eval_sets : dict name -> (X, y), optional
        Scored (accuracy, macro-F1) after every ``eval_every`` epochs and after the last.
    initial_memories : array (K, D + C) or (G, K, D + C), optional
        Start from these instead of a random draw.
    on_epoch : callable(epoch, result_so_far) -> bool, optional
        Called after each scored epoch; returning True stops training.
    dtype : {"auto", "float64", "float32"}
        ``"auto"``: float32 for the normalized network on a GPU without fast float64
        (:func:`damlite.backend.auto_dtype`), float64 otherwise.

    Returns
    -------
    ClassificationResult
    """
    check_positive(n_memories, "n_memories", integer=True)
    check_positive(epochs, "epochs", integer=True)
    check_positive(batch_size, "batch_size", integer=True)
    check_positive(eval_every, "eval_every", integer=True)
    if clamp not in ("inputs", "all", "none"):
        raise ValueError(f"clamp must be 'inputs', 'all' or 'none', got {clamp!r}")
    xp, info = get_backend(backend)
    dt = resolve_dtype(xp, dtype, variant)
    dtype = str(dt).rsplit(".", 1)[-1].strip("'>")
    X_train = np.asarray(to_numpy(X_train))
    y_train = np.asarray(to_numpy(y_train), dtype=np.int64).reshape(-1)
    if X_train.ndim != 2 or X_train.shape[0] != y_train.shape[0]:
        raise ValueError(f"X_train must be (B, D) with one label per row, got {X_train.shape} and {y_train.shape}")
    if y_train.size and (y_train.min() < 0 or y_train.max() >= n_classes):
        raise ValueError(f"y_train must hold labels 0..{n_classes - 1}")
    lr, T = np.broadcast_arrays(np.asarray(learning_rate, float).reshape(-1), np.asarray(temperature, float).reshape(-1))
    lr, T = lr.copy(), T.copy()
    G = lr.shape[0]
    D = X_train.shape[1]
    N = D + n_classes
    F = make_interaction(interaction, n, epsilon, leak)
    degree = F.degree if F.degree is not None else n
    beta_in, beta_out = classifier_scales(variant, T, degree, N)

    rng = check_random_state(random_state)
    if initial_memories is None:
        init = np.clip(rng.normal(init_mean, init_std, size=(n_memories, N)), -1.0, 1.0)
    else:
        init = np.asarray(to_numpy(initial_memories), dtype=np.float64)
        if init.shape[-2:] != (n_memories, N):
            raise ValueError(f"initial_memories must end in shape ({n_memories}, {N}), got {init.shape}")
    memories = xp.asarray(np.broadcast_to(init, (G, n_memories, N)).copy(), dtype=dt)
    device = getattr(memories, "device", None)
    probes = classifier_probes(X_train, n_classes, xp, dt, device)
    targets = xp.asarray(bipolar_one_hot(y_train, n_classes, dtype="float64"), dtype=dt)
    clamp_slice = {"inputs": slice(0, D), "all": slice(None), "none": None}[clamp]
    eval_sets = dict(eval_sets or {})

    b_in_dev = per_network_scalar(beta_in, xp, G, dt, device=device)[:, 0, 0]
    state = dict(epoch_end=[], eval_epochs=[], acc={k: [] for k in eval_sets}, f1={k: [] for k in eval_sets},
                 cm={}, eval_seconds=0.0, finite=np.ones(G, dtype=bool))

    def partial_result(mem, losses):
        return ClassificationResult(
            memories=mem, learning_rate=lr, temperature=T, beta_in=beta_in, beta_out=beta_out,
            loss=losses, eval_epochs=np.asarray(state["eval_epochs"], dtype=np.int64),
            accuracy={k: np.asarray(v) for k, v in state["acc"].items()},
            f1={k: np.asarray(v) for k, v in state["f1"].items()},
            confusion=dict(state["cm"]), finite=state["finite"].copy(),
            epoch_seconds=np.diff(np.asarray([t_start] + state["epoch_end"])),
            eval_seconds=state["eval_seconds"], settings=settings,
        )

    losses_so_far = []

    def callback(epoch, mem, loss):
        # the epoch clock excludes the time spent scoring
        state["epoch_end"].append(time.perf_counter() - state["eval_seconds"])
        losses_so_far.append(np.asarray(loss))
        if not eval_sets or not ((epoch + 1) % eval_every == 0 or epoch + 1 == epochs):
            return False
        t0 = time.perf_counter()
        state["eval_epochs"].append(epoch + 1)
        for name, (Xe, ye) in eval_sets.items():
            acc, f1, cm, fin = evaluate_classifiers(mem, Xe, ye, F, b_in_dev, n_classes=n_classes,
                                                    memory_budget=memory_budget)
            state["acc"][name].append(acc)
            state["f1"][name].append(f1)
            state["cm"][name] = cm
            state["finite"] &= fin
        state["eval_seconds"] += time.perf_counter() - t0
        if on_epoch is not None:
            return bool(on_epoch(epoch, partial_result(np.asarray(to_numpy(mem)), np.asarray(losses_so_far))))
        return False

    settings = dict(
        n_memories=n_memories, interaction=F.name, n=n, epsilon=epsilon, leak=leak, variant=variant,
        lr_decay=lr_decay, momentum=momentum, epochs=epochs, batch_size=batch_size,
        error_exponent=error_exponent, init_mean=init_mean, init_std=init_std, clamp=clamp,
        n_classes=n_classes, n_train=int(X_train.shape[0]), n_features=N, backend=info.name,
        device=str(info.device), dtype=str(dtype), memory_budget=memory_budget,
        random_state=random_state if isinstance(random_state, (int, type(None))) else "generator",
    )
    t_start = time.perf_counter()
    result = train_memories(
        memories, probes, targets, F, beta_in=beta_in, beta_out=beta_out, learning_rate=lr,
        lr_decay=lr_decay, momentum=momentum, epochs=epochs, batch_size=batch_size,
        error_exponent=error_exponent, neurons=slice(D, N), normalize_step=True, clamp=clamp_slice,
        random_state=rng.integers(2**63), progress=progress, callback=callback, memory_budget=memory_budget,
    )
    state["finite"] &= np.asarray(result.finite, dtype=bool)
    out = partial_result(np.asarray(to_numpy(result.memories)), result.loss)
    out.failed_epoch = result.failed_epoch
    return out


def __getattr__(name):
    if name == "equivalent_temperature":  # public here before 0.2; from damlite.model on first use (the model brings
        from .model import equivalent_temperature  # noqa: PLC0415 - scikit-learn, which a sweep does not need)

        return equivalent_temperature
    if name == "macro_f1":  # renamed: damlite.metrics.macro_f1 takes labels, this one confusion matrices
        import warnings  # noqa: PLC0415

        warnings.warn("damlite.classification.macro_f1(confusion) is renamed macro_f1_from_confusion and will be "
                      "removed in the next release; damlite.metrics.macro_f1(y_true, y_pred) scores label arrays",
                      FutureWarning, stacklevel=2)
        return macro_f1_from_confusion
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
