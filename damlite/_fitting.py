"""Fitting the estimator: its parameters checked, the learning problem, one run of training.

:class:`~damlite.DenseAssociativeMemory` keeps its public methods; what a fit does step by step lives
here, so that the estimator's class stays the estimator's (scikit-learn's constructor, ``fit``,
``predict``, ``recall``, ``score``).
"""
from __future__ import annotations

import warnings

import numpy as np

from . import _monitor
from ._monitor import EXP_NORMALIZED, NormalizationWarning, NumericalUnderflowWarning, overflow_error
from .backend import as_backend_array, get_backend, resolve_dtype, to_numpy
from .interactions import make_interaction
from ._sklearn import check_feature_names
from ._warm import remember_params
from .network import loss_and_gradient, neuron_index
from .training import initial_memories, train_memories
from .validation import (check_dtype, check_label_types, check_labels, check_number, check_positive,
                         check_random_state, check_states, user_stacklevel)

__all__ = ["SCALINGS", "TRAINING_PARAMS", "VARIANTS", "learning_problem", "learning_scales", "loss_and_gradient_of",
           "run_fit", "scales_of",
           "training_options", "validate_params"]

VARIANTS = ("original", "normalized")
SCALINGS = ("fixed", "adaptive")
#: Training settings that were ``fit`` keywords before 0.x: constructor parameters now.
TRAINING_PARAMS = ("epochs", "learning_rate", "lr_decay", "momentum", "batch_size", "normalize_step", "clamp",
                   "neurons", "warm_start")


def training_options(est, deprecated):
    """The training settings of this fit, checked: the constructor's, or deprecated ``fit`` keywords."""
    unknown = sorted(set(deprecated) - set(TRAINING_PARAMS) - {"temperature"})
    if unknown:
        raise TypeError(f"fit() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}")
    if deprecated:
        names = ", ".join(sorted(deprecated))
        warnings.warn(
            f"fit({names}=...) is deprecated and will be removed in the next release: these are "
            f"constructor parameters now, DenseAssociativeMemory(..., {names}=...) or "
            f"set_params({names}=...), then fit(X, y)",
            FutureWarning,
            stacklevel=user_stacklevel(),
        )
        if deprecated.get("temperature") is not None:
            est.temperature = deprecated["temperature"]
    opts = {name: deprecated.get(name, getattr(est, name)) for name in TRAINING_PARAMS}
    validate_params(est)
    check_positive(opts["learning_rate"], "learning_rate")
    check_positive(opts["epochs"], "epochs", integer=True)
    check_number(opts["lr_decay"], "lr_decay", low=0, high=1, low_open=True)
    check_number(opts["momentum"], "momentum", low=0, high=1, high_open=True)
    for name in ("normalize_step", "clamp", "warm_start"):
        if not isinstance(opts[name], (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {opts[name]!r}")
    if opts["batch_size"] is not None:
        check_positive(opts["batch_size"], "batch_size", integer=True)
    return opts


def validate_params(est):
    """Check every constructor parameter of ``est`` and derive its setup (``interaction_``, ``xp_``, ``dtype_``)."""
    if isinstance(est.n_memories, bool) or not isinstance(est.n_memories, (int, np.integer)) or est.n_memories < 1:
        raise ValueError(f"n_memories must be an integer K >= 1, got {est.n_memories!r}")
    if est.variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {est.variant!r}")
    if est.scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}, got {est.scaling!r}")
    if est.temperature is not None:
        check_positive(est.temperature, "temperature")
    m = est.error_exponent
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"error_exponent must be an integer m >= 1, got {m!r}")
    if est.init not in ("patterns", "normal", "uniform"):
        raise ValueError(f"init must be 'patterns', 'normal' or 'uniform', got {est.init!r}")
    check_number(est.init_mean, "init_mean", low=-1, high=1)
    check_number(est.init_std, "init_std", low=0)
    if est.memory_budget is not None:
        check_number(est.memory_budget, "memory_budget", low=1)
    dtype = check_dtype(est.dtype)
    check_random_state(est.random_state)
    est.interaction_ = make_interaction(est.interaction, est.n, est.epsilon, est.leak)
    if est.scaling == "adaptive" and est.interaction_.degree is None:
        raise ValueError("scaling='adaptive' needs a homogeneous interaction (polynomial or rectified_polynomial)")
    if est.interaction_.name == "exponential" and est.variant == "normalized":
        warnings.warn(f"interaction='exponential' with variant='normalized': {EXP_NORMALIZED}. Use "
                      "a polynomial interaction (the default), or variant='original' (T = N T')", NormalizationWarning,
                      stacklevel=user_stacklevel())
    est.xp_, est.backend_info_ = get_backend(est.backend)
    est.dtype_ = resolve_dtype(est.xp_, dtype, est.variant)
    if dtype == "float16" and est.variant == "original":
        raise ValueError("dtype='float16' is offered for the normalized variant only (the original overflows at once)")


def scales_of(est, n_features, temperature=None):
    """(update scale a, beta_in, beta_out) of ``est`` for N = ``n_features`` (see ``DenseAssociativeMemory.scales``)."""
    est._ensure_setup()
    check_positive(n_features, "n_features", integer=True)
    T = est._temperature(n_features) if temperature is None else temperature
    check_positive(T, "temperature")
    if est.variant == "original":
        n = est.interaction_.degree or getattr(est.interaction_, "n", 1)
        log10_beta = -n * np.log10(float(T))
        if log10_beta > 308:
            raise ValueError(f"temperature={T} with n={n} gives beta_out = 1/T**n = 10**{log10_beta:.0f}, "
                             "beyond every float format: raise the temperature or use variant='normalized'")
        return 1.0, 1.0, float(T) ** (-n)
    return 1.0 / n_features, 1.0 / (n_features * float(T)), 1.0


def learning_scales(est, N):
    """(beta_in, beta_out) for N neurons, warning when one rounds to 0 or subnormal in dtype."""
    _, b_in, b_out = est.scales(N)
    tiny = float(np.finfo(est._dtype_name).tiny)
    for name, value in (("beta_in", b_in), ("beta_out", b_out)):
        if float(np.asarray(value, dtype=est._dtype_name)) < tiny:
            warnings.warn(
                f"underflow: {name} = {value:.3g} is below the smallest normal {est._dtype_name} "
                f"({tiny:.3g}) for the {est.variant} network (N={N}, n={est.n}, "
                f"{est._t_name}={est._temperature(N):g}); "
                "the tanh argument and the gradient vanish. " + (
                    "Use variant='normalized' or a wider dtype." if est.variant == "original" else
                    "Use a lower temperature or a wider dtype."),
                NumericalUnderflowWarning,
                stacklevel=user_stacklevel(),
            )
    return b_in, b_out


def learning_problem(est, X, y=None):
    """(probes, targets, neurons, clamp, x_range) for autoassociative (y None) or classification; x_range: X's
    (least, greatest) entry, from the validation's one pass (None for autoassociative)."""
    xp = est.xp_
    if y is None:
        N = est.memories_.shape[1] if hasattr(est, "_memories") else None
        xi = check_states(X, xp, est.dtype_, N, "X")
        return xi, xi, slice(None), slice(None), None
    labels = check_labels(y, None)  # label errors before those of X, as scikit-learn
    X, x_range = check_states(X, xp, est.dtype_, None, "X", bipolar=False, return_range=True)
    if labels.shape[0] != X.shape[0]:
        raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got {labels.shape[0]}")
    if not hasattr(est, "classes_"):
        est.classes_ = np.unique(labels)
    check_label_types(est.classes_, labels)
    index = np.searchsorted(est.classes_, labels)
    if np.any(index >= len(est.classes_)) or np.any(est.classes_[np.minimum(index, len(est.classes_) - 1)] != labels):
        raise ValueError("y contains labels not seen in the first fit")
    C = len(est.classes_)
    targets = -np.ones((labels.shape[0], C))
    targets[np.arange(labels.shape[0]), index] = 1.0
    n_in = X.shape[1]
    probes = xp.concat([X, -xp.ones((X.shape[0], C), dtype=est.dtype_)], axis=1)
    return probes, as_backend_array(targets, est.xp_, est.dtype_), slice(n_in, n_in + C), slice(0, n_in), x_range


def run_fit(est, X, y, warm, opts, progress):
    """One fit of ``est`` on (X, y): the memories to start from, training, the loss curve and the checks."""
    epochs, learning_rate, lr_decay, momentum, batch_size = (
        opts[k] for k in ("epochs", "learning_rate", "lr_decay", "momentum", "batch_size"))
    normalize_step, clamp, neurons = (opts[k] for k in ("normalize_step", "clamp", "neurons"))
    probes, targets, train_neurons, clamp_slice, x_range = learning_problem(est, X, y)
    N = probes.shape[1]
    if y is not None:
        _monitor.warn_input_range(*x_range)
    if neurons is not None:
        if y is not None:
            raise ValueError("neurons is for autoassociative training; with y the class neurons are trained")
        train_neurons, _ = neuron_index(neurons, N)
        if isinstance(train_neurons, slice):
            targets = targets[:, train_neurons]
        else:
            targets = est.xp_.take(targets, est.xp_.asarray(train_neurons, device=getattr(targets, "device", None)),
                                    axis=1)
    rng = check_random_state(est.random_state)
    if warm:
        initial = est.memories_
    else:
        rows = to_numpy(probes if est.init == "patterns" else probes[:1]).astype(np.float64)  # others: N only
        if y is not None:  # a classifier's rows carry their bipolar one-hot label
            rows[:, train_neurons] = to_numpy(targets[: rows.shape[0]])
        initial = as_backend_array(initial_memories(rows, est.n_memories, est.init, est.init_mean, est.init_std, rng),
                                   est.xp_, est.dtype_)
    b_in, b_out = learning_scales(est, N)
    result = train_memories(
        initial[None], probes, targets, est.interaction_, beta_in=b_in, beta_out=b_out,
        learning_rate=learning_rate, lr_decay=lr_decay, momentum=momentum, epochs=epochs,
        batch_size=batch_size, error_exponent=est.error_exponent, neurons=train_neurons,
        normalize_step=normalize_step, clamp=clamp_slice if clamp else None,
        random_state=rng.integers(2**63), progress=progress, memory_budget=est._budget,
    )
    if not result.finite[0]:
        raise overflow_error(est, f"fit (epoch {int(result.failed_epoch[0])})", N)
    est._memories = result.memories[0]
    remember_params(est)
    curve = np.asarray(result.loss[:, 0])
    previous = est.__dict__.get("loss_curve_") if warm else None
    est.loss_curve_ = curve if previous is None else np.concatenate([previous, curve])
    est.fit_seconds_ = result.seconds
    seen = _monitor.learning_pass(est, probes, train_neurons, b_in, targets.shape[1])
    _monitor.review_fit(est, seen, targets=targets, neurons=train_neurons, beta_out=b_out, initial=initial,
                        n_patterns=probes.shape[0], x_range=x_range, warm_start=bool(opts["warm_start"]), epochs=epochs)


def loss_and_gradient_of(est, X, y, *, gradient, what):
    """The loss of the fitted ``est`` on (X, y) and, with ``gradient``, its gradient (K, N)."""
    est._check_fitted()
    check_feature_names(est, X, reset=False)
    probes, targets, neurons, _, _ = learning_problem(est, X, y)
    N = est.memories_.shape[1]
    b_in, b_out = learning_scales(est, N)
    loss, grad, finite = loss_and_gradient(
        est.memories_[None], probes, targets, est.interaction_, b_in, b_out,
        error_exponent=est.error_exponent, neurons=neurons, gradient=gradient, memory_budget=est._budget,
    )
    if not bool(finite[0]):
        raise overflow_error(est, what, N)
    return loss, grad
