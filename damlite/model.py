"""The estimator: one Dense Associative Memory, original or normalized.

``variant`` selects where the scale factors sit (the paper's modification):

=============  ==================  =============  ===================
variant        update scale a      beta_in        beta_out
=============  ==================  =============  ===================
"original"     1                   1              1 / T**n
"normalized"   1 / N               1 / (N T)      1
=============  ==================  =============  ===================

Update: xi_i <- sign sum_mu [F(a(zeta_i + s)) - F(a(-zeta_i + s))].
Learning: C = tanh(beta_out sum_mu [F(beta_in(zeta_i + s)) - F(beta_in(-zeta_i + s))]).
For an interaction homogeneous of degree n both variants make the same updates,
and the original network at temperature N*T computes the same C as the normalized
one at T, since (1/(N T))**n F(x) = F(x/(N T)) (the paper's theorems).
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from . import _monitor
from ._sklearn import (HAVE_SKLEARN, BaseEstimator, ClassifierMixin, ConvergenceWarning, EstimatorParams,
                       NotFittedBase)
from .backend import get_backend, resolve_dtype, to_numpy
from .interactions import make_interaction
from .network import DEFAULT_MEMORY_BUDGET, energy_difference, loss_and_gradient, neuron_index, quiet_numpy, relax
from .training import initial_memories, train_memories
from .validation import (check_dtype, check_label_types, check_labels, check_number, check_positive,
                         check_random_state, check_states)

__all__ = ["ConvergenceWarning", "DenseAssociativeMemory", "InputRangeWarning", "NotFittedError",
           "NumericalOverflowError", "NumericalUnderflowWarning", "RelaxResult", "equivalent_temperature"]

VARIANTS = ("original", "normalized")
SCALINGS = ("fixed", "adaptive")
#: T' of the normalized network when ``temperature=None`` (the original network gets T = N T').
DEFAULT_NORMALIZED_TEMPERATURE = 0.5
#: Training settings that were ``fit`` keywords before 0.x: constructor parameters now.
_TRAINING_PARAMS = ("epochs", "learning_rate", "lr_decay", "momentum", "batch_size", "normalize_step", "clamp",
                    "neurons", "warm_start")
_MAX = {"float16": 65504.0, "float32": 3.4028235e38, "float64": 1.7976931348623157e308}


def equivalent_temperature(temperature, n_features, *, to="normalized"):
    r"""The other variant's temperature giving the same outputs C for a homogeneous interaction.

    For F homogeneous of degree n, :math:`(1/(N T'))^n F(x) = F(x)/T^n` exactly when

    .. math:: T = N\,T',

    so ``to="normalized"`` returns :math:`T' = T/N` and ``to="original"`` returns
    :math:`T = N T'`, whatever n.

    Parameters
    ----------
    temperature : float or array_like
        T of the original network (``to="normalized"``) or T' of the normalized one.
    n_features : int
        N, the number of neurons (for a classifier: inputs plus class neurons).
    to : {"normalized", "original"}, default "normalized"
        The variant whose temperature is wanted.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> import damlite
    >>> damlite.equivalent_temperature(540.0, 794)
    0.6801007556675063
    >>> damlite.equivalent_temperature(0.5, 100, to="original")
    50.0
    """
    T = np.asarray(temperature, dtype=np.float64)
    if to == "normalized":
        out = T / n_features
    elif to == "original":
        out = T * n_features
    else:
        raise ValueError(f"to must be 'normalized' or 'original', got {to!r}")
    return float(out) if out.ndim == 0 else out


class NumericalOverflowError(FloatingPointError):
    """The network's numbers left the floating-point range (inf or NaN)."""


class NumericalUnderflowWarning(RuntimeWarning):
    """Terms of the energy difference rounded to zero, leaving sign(0) to decide."""


class InputRangeWarning(UserWarning):
    """A classifier's inputs are not symmetric about 0 (X in [0, 1], say): rescale them to [-1, 1]."""


class NotFittedError(NotFittedBase):
    """The estimator has no memories yet.

    Both a ValueError and an AttributeError (scikit-learn's convention), and
    scikit-learn's own ``NotFittedError`` where scikit-learn is installed.
    """


#: Parameters the memories depend on: changing one after fit makes them another network's.
_FITTED_PARAMS = ("variant", "interaction", "n", "epsilon", "leak", "dtype")


def _overflow_error(est, what, N):
    """NumericalOverflowError for ``what``, with N, n, dtype and, for the original network, the size of N**n."""
    degree = est.interaction_.degree
    dtype = est._dtype_name
    hint = ""
    if degree is not None and est.variant == "original":
        hint = (f" Similarity scores reach about N = {N}, and F grows like N**n = 10**{degree * np.log10(N):.1f}"
                f" against the {dtype} maximum {_MAX.get(dtype, float('nan')):.3g}.")
    return NumericalOverflowError(
        f"{what} overflowed: inf/NaN in the {est.variant} network with N={N}, n={est.n}, "
        f"interaction={est.interaction_.name}, dtype={dtype}.{hint} {_overflow_advice(est.variant)}"
    )


def _overflow_advice(variant) -> str:
    """What to try after an overflow: the normalized network only where this one is the original."""
    if variant == "original":
        return "Use variant='normalized', a wider dtype, or scaling='adaptive' (updates)."
    return "Use a wider dtype, a higher temperature, or scaling='adaptive' (updates)."


def _warn_underflow(est, N):
    """NumericalUnderflowWarning: some update was decided by sign(0) because terms rounded to 0."""
    warnings.warn(
        f"underflow: terms of the energy difference rounded to 0 in the {est.variant} network "
        f"(N={N}, n={est.n}, dtype={est._dtype_name}); some updates were decided by sign(0). "
        "Use scaling='adaptive' or a wider dtype.",
        NumericalUnderflowWarning,
        stacklevel=3,
    )


def _training_options(est, deprecated):
    """The training settings of this fit, checked: the constructor's, or deprecated ``fit`` keywords."""
    unknown = sorted(set(deprecated) - set(_TRAINING_PARAMS) - {"temperature"})
    if unknown:
        raise TypeError(f"fit() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}")
    if deprecated:
        names = ", ".join(sorted(deprecated))
        warnings.warn(
            f"fit({names}=...) is deprecated and will be removed in the next release: these are "
            f"constructor parameters now, DenseAssociativeMemory(..., {names}=...) or "
            f"set_params({names}=...), then fit(X, y)",
            FutureWarning,
            stacklevel=3,
        )
        if deprecated.get("temperature") is not None:
            est.temperature = deprecated["temperature"]
    opts = {name: deprecated.get(name, getattr(est, name)) for name in _TRAINING_PARAMS}
    est._validate_params()
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


class RelaxResult(NamedTuple):
    """Relaxed states (B, N), a (B,) mask of states at a fixed point, sweeps run."""

    states: object
    converged: object
    n_sweeps: int


class DenseAssociativeMemory(ClassifierMixin, EstimatorParams, BaseEstimator):
    r"""Dense Associative Memory (Krotov & Hopfield 2016), original or normalized: an estimator.

    ``fit(X)`` stores ±1 patterns (an associative memory: :meth:`recall`, and :meth:`score` as
    the fraction of bits recovered); ``fit(X, y)`` trains a classifier on inputs in [-1, 1]
    (:meth:`predict`, :meth:`decision_function`, :meth:`score` as accuracy). Every setting is a
    constructor parameter, so scikit-learn's ``clone``, ``GridSearchCV`` and ``Pipeline`` work.
    Neuron i of a state :math:`\xi` is updated to the sign of

    .. math:: \Delta_i = \sum_{\mu} \big[F(a(\zeta^\mu_i + s_\mu)) - F(a(-\zeta^\mu_i + s_\mu))\big],
              \qquad s_\mu = \sum_{j \ne i} \zeta^\mu_j\, \xi_j,

    and learning minimises :math:`L = \sum_{b,i} (t_{bi} - C_{bi})^{2m}`, :math:`C = \tanh(\beta_\text{out}
    \Delta)` with :math:`\beta_\text{in}` in place of a. The original network has
    :math:`a = \beta_\text{in} = 1`, :math:`\beta_\text{out} = 1/T^n`; the normalized one
    :math:`a = 1/N`, :math:`\beta_\text{in} = 1/(N T')`, :math:`\beta_\text{out} = 1`; for a homogeneous
    F they compute the same C exactly when **T = N T'** (:func:`damlite.equivalent_temperature`).
    A fit that fails says so with a :class:`ConvergenceWarning` naming the cause and the fix (the
    API reference lists the checks).

    Parameters
    ----------
    n_memories : int, default 100
        K, the number of memory vectors.
    interaction : str, default "polynomial"
        F: "polynomial", "rectified_polynomial", "leaky_rectified_polynomial", "exponential" or
        "author_rectified_polynomial" (:func:`~damlite.interactions.make_interaction`).
    n : int, default 10
        The interaction vertex: the power of the polynomial interactions.
    variant : str, default "normalized"
        "normalized" or "original": where the scale factors sit (above).
    temperature : float or None, default None
        T > 0 (original) or T' > 0 (normalized); None: T' = 0.5, or T = N/2 for the original
        network (the value in use is ``temperature_``).
    error_exponent : int, default 1
        m >= 1 in the loss.
    scaling : str, default "fixed"
        "adaptive" divides each neuron's arguments by their largest magnitude before F in
        updates: exact signs for a homogeneous F at any n.
    epsilon : float, default 0.01
        The leaky rectified polynomial's slope for x < 0.
    leak : str, default "paper"
        Its sign: -eps x for x < 0 ("paper") or +eps x ("code", the paper author's code).
    init : str, default "patterns"
        Initial memories: "patterns" (init_std times a training row, bipolar one-hot label
        included, plus N(0, init_std^2) noise), "normal" (N(init_mean, init_std^2)) or "uniform"
        (U[0, 1)); clipped to [-1, 1].
    init_mean : float, default 0.0
        Mean of the initial memories ("normal" only).
    init_std : float, default 0.1
        Spread of the initial memories.
    epochs : int, default 100
        Passes over the training data.
    learning_rate : float, default 0.1
        The step size in the first epoch (:mod:`damlite.training`).
    lr_decay : float, default 1.0
        Factor applied to the learning rate after each epoch, in (0, 1].
    momentum : float, default 0.0
        Velocity kept from one minibatch to the next, in [0, 1).
    batch_size : int or None, default None
        Rows per minibatch; None: all rows at once.
    normalize_step : bool, default True
        Divide each memory's step by its largest entry (Krotov & Hopfield).
    clamp : bool, default True
        Keep the memory entries of the input neurons in [-1, 1].
    neurons : slice, sequence of int or None, default None
        Train only these neurons' predictions (associative memory only).
    warm_start : bool, default False
        Continue from the current memories (the optimiser starts anew).
    backend : str, default "auto"
        "auto" (CuPy on a usable GPU, else NumPy), "numpy" or "cupy".
    dtype : str or numpy dtype, default "auto"
        float64, float32 or float16 (normalized network only), in any spelling NumPy accepts
        (``"float32"``, ``np.float32``, ``np.dtype("f4")``); "auto": float32 for the normalized
        network on a GPU without fast float64, else float64 (the dtype in use is ``dtype_``).
    random_state : None, int or numpy.random.Generator, default None
        Seeds the initial memories, the minibatch order and the update order.
    memory_budget : int, default DEFAULT_MEMORY_BUDGET
        Bytes allowed for the largest intermediate tensors (work is chunked).

    Attributes
    ----------
    memories_ : array of shape (K, N)
        The memory vectors (settable: assign patterns to store them as they are).
    loss_curve_ : ndarray of shape (epochs,)
        The loss of each epoch, summed over its minibatches (each before its step).
    temperature_ : float
        The temperature in use.
    classes_ : ndarray of shape (n_classes,)
        The class labels (a classifier only).
    n_features_in_ : int
        Features of X seen by ``fit``.
    fit_seconds_ : float
        Wall-clock time of the last ``fit``.

    Examples
    --------
    >>> import numpy as np, damlite
    >>> patterns = np.random.default_rng(0).choice([-1.0, 1.0], (5, 64))
    >>> dam = damlite.DenseAssociativeMemory(10, n=4, temperature=0.3, backend="numpy", random_state=0)
    >>> dam = dam.fit(patterns)
    >>> noisy = patterns.copy(); noisy[:, :6] *= -1
    >>> dam.score(noisy, patterns)
    1.0
    """

    def __init__(
        self,
        n_memories=100,
        *,
        interaction="polynomial",
        n=10,
        variant="normalized",
        temperature=None,
        error_exponent=1,
        scaling="fixed",
        epsilon=1e-2,
        leak="paper",
        init="patterns",
        init_mean=0.0,
        init_std=0.1,
        epochs=100,
        learning_rate=0.1,
        lr_decay=1.0,
        momentum=0.0,
        batch_size=None,
        normalize_step=True,
        clamp=True,
        neurons=None,
        warm_start=False,
        backend="auto",
        dtype="auto",
        random_state=None,
        memory_budget=DEFAULT_MEMORY_BUDGET,
    ):
        self.n_memories = n_memories
        self.interaction = interaction
        self.n = n
        self.variant = variant
        self.temperature = temperature
        self.error_exponent = error_exponent
        self.scaling = scaling
        self.epsilon = epsilon
        self.leak = leak
        self.init = init
        self.init_mean = init_mean
        self.init_std = init_std
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.lr_decay = lr_decay
        self.momentum = momentum
        self.batch_size = batch_size
        self.normalize_step = normalize_step
        self.clamp = clamp
        self.neurons = neurons
        self.warm_start = warm_start
        self.backend = backend
        self.dtype = dtype
        self.random_state = random_state
        self.memory_budget = memory_budget

    # ------------------------------------------------------------------ setup
    def _validate_params(self):
        if isinstance(self.n_memories, bool) or not isinstance(self.n_memories, (int, np.integer)) or self.n_memories < 1:
            raise ValueError(f"n_memories must be an integer K >= 1, got {self.n_memories!r}")
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        if self.scaling not in SCALINGS:
            raise ValueError(f"scaling must be one of {SCALINGS}, got {self.scaling!r}")
        if self.temperature is not None:
            check_positive(self.temperature, "temperature")
        m = self.error_exponent
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"error_exponent must be an integer m >= 1, got {m!r}")
        if self.init not in ("patterns", "normal", "uniform"):
            raise ValueError(f"init must be 'patterns', 'normal' or 'uniform', got {self.init!r}")
        check_number(self.init_mean, "init_mean", low=-1, high=1)
        check_number(self.init_std, "init_std", low=0)
        if self.memory_budget is not None:
            check_number(self.memory_budget, "memory_budget", low=1)
        dtype = check_dtype(self.dtype)
        check_random_state(self.random_state)
        self.interaction_ = make_interaction(self.interaction, self.n, self.epsilon, self.leak)
        if self.scaling == "adaptive" and self.interaction_.degree is None:
            raise ValueError("scaling='adaptive' needs a homogeneous interaction (polynomial or rectified_polynomial)")
        self.xp_, self.backend_info_ = get_backend(self.backend)
        self.dtype_ = resolve_dtype(self.xp_, dtype, self.variant)
        if dtype == "float16" and self.variant == "original":
            raise ValueError("dtype='float16' is offered for the normalized variant only (the original overflows at once)")

    def _ensure_setup(self):
        if not hasattr(self, "xp_"):
            self._validate_params()

    @property
    def _budget(self):
        return DEFAULT_MEMORY_BUDGET if self.memory_budget is None else int(self.memory_budget)

    def _check_fitted(self):
        """Raise :class:`NotFittedError` without memories, ValueError when a network parameter changed since."""
        if not hasattr(self, "_memories"):
            raise NotFittedError("this DenseAssociativeMemory has no memories yet: call fit() or assign memories_")
        fitted = getattr(self, "_fitted_params", None)
        if fitted:
            changed = [f"{k}: {fitted[k]!r} -> {getattr(self, k)!r}" for k in _FITTED_PARAMS
                       if getattr(self, k) != fitted[k]]
            if changed:
                raise ValueError(f"parameters changed since the memories were set ({'; '.join(changed)}): "
                                 "call fit() again, or set them back")
        self._ensure_setup()

    def _remember_params(self):
        self._fitted_params = {k: getattr(self, k) for k in _FITTED_PARAMS}

    # ------------------------------------------------ scikit-learn conventions
    get_params = EstimatorParams.get_params  # on the class itself, so that the API page lists them
    set_params = EstimatorParams.set_params

    def _forget_setup(self):
        """After set_params: what the old parameters gave is derived again on next use."""
        for attr in ("xp_", "backend_info_", "dtype_", "interaction_"):
            self.__dict__.pop(attr, None)

    def __sklearn_is_fitted__(self):
        """Fitted means: has memories (scikit-learn's ``check_is_fitted`` asks this)."""
        return hasattr(self, "_memories")

    def __sklearn_tags__(self):
        """scikit-learn's tags: a classifier whose ``y`` is optional (``fit(X)`` stores patterns)."""
        if not HAVE_SKLEARN:
            raise ImportError("__sklearn_tags__ needs scikit-learn")
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.allow_nan = False
        tags.non_deterministic = self.random_state is None
        return tags

    def __getstate__(self):
        """Fitted attributes as data: arrays to NumPy, no module objects (pickle, deepcopy, joblib)."""
        state = dict(self.__dict__)
        for attr in ("xp_", "backend_info_", "dtype_"):
            state.pop(attr, None)
        if "_memories" in state:
            state["_memories"] = np.asarray(to_numpy(state["_memories"]))
        return state

    def __setstate__(self, state):
        memories = state.pop("_memories", None)
        self.__dict__.update(state)
        if memories is not None:  # back onto this process's backend
            self._ensure_setup()
            self._memories = self._to_backend(memories, "memories_")

    def _degree_for_beta(self):
        degree = self.interaction_.degree
        if degree is None:
            degree = getattr(self.interaction_, "n", 1)
        return degree

    def _temperature(self, n_features):
        """The temperature in use for N = ``n_features`` neurons (``temperature=None`` resolved).

        ``None`` means T' = 0.5 for the normalized network and the equivalent
        original network, T = N T' = N / 2.
        """
        if self.temperature is not None:
            return self.temperature
        if self.variant == "original":
            return equivalent_temperature(DEFAULT_NORMALIZED_TEMPERATURE, n_features, to="original")
        return DEFAULT_NORMALIZED_TEMPERATURE

    @property
    def temperature_(self):
        """The temperature the fitted network uses (``temperature``, or with ``None`` T' = 0.5 or T = N T')."""
        return float(self._temperature(self.memories_.shape[1]))

    def scales(self, n_features, temperature=None):
        """Return (update scale a, beta_in, beta_out) for N = n_features (see module doc).

        ``temperature`` defaults to the estimator's (with ``None``: T' = 0.5, or
        T = N T' for the original network).
        """
        self._ensure_setup()
        check_positive(n_features, "n_features", integer=True)
        T = self._temperature(n_features) if temperature is None else temperature
        check_positive(T, "temperature")
        if self.variant == "original":
            n = self._degree_for_beta()
            log10_beta = -n * np.log10(float(T))
            if log10_beta > 308:
                raise ValueError(f"temperature={T} with n={n} gives beta_out = 1/T**n = 10**{log10_beta:.0f}, "
                                 "beyond every float format: raise the temperature or use variant='normalized'")
            return 1.0, 1.0, float(T) ** (-n)
        return 1.0 / n_features, 1.0 / (n_features * float(T)), 1.0

    def _learning_scales(self, N):
        """(beta_in, beta_out) for N neurons, warning when one rounds to 0 or subnormal in dtype."""
        _, b_in, b_out = self.scales(N)
        tiny = float(np.finfo(self._dtype_name).tiny)
        for name, value in (("beta_in", b_in), ("beta_out", b_out)):
            if float(np.asarray(value, dtype=self._dtype_name)) < tiny:
                warnings.warn(
                    f"underflow: {name} = {value:.3g} is below the smallest normal {self._dtype_name} "
                    f"({tiny:.3g}) for the {self.variant} network (N={N}, n={self.n}, T={self._temperature(N):g}); "
                    "the tanh argument and the gradient vanish. " + (
                        "Use variant='normalized' or a wider dtype." if self.variant == "original" else
                        "Use a lower temperature or a wider dtype."),
                    NumericalUnderflowWarning,
                    stacklevel=3,
                )
        return b_in, b_out

    # --------------------------------------------------------------- memories
    @property
    def memories_(self):
        if not hasattr(self, "_memories"):
            raise AttributeError("memories_ is not set: call fit() or assign memories_ first")
        return self._memories

    @memories_.setter
    def memories_(self, value):
        self._ensure_setup()
        arr = self._to_backend(value, "memories_", copy=True)
        if arr.ndim != 2 or arr.shape[0] != self.n_memories:
            raise ValueError(f"memories_ must have shape (n_memories={self.n_memories}, N), got {tuple(arr.shape)}")
        if not bool(self.xp_.all(self.xp_.isfinite(arr))):
            raise ValueError("memories_ contains NaN or inf")
        self._memories = arr
        self._remember_params()

    def _to_backend(self, value, name, copy=None):
        xp = self.xp_
        try:
            return xp.asarray(value, dtype=self.dtype_, copy=copy)
        except Exception:
            return xp.asarray(np.asarray(to_numpy(value)), dtype=self.dtype_, copy=copy)

    @property
    def n_features_(self):
        """N, the number of neurons (for a classifier the inputs plus one per class)."""
        return self.memories_.shape[1]

    @property
    def n_features_in_(self):
        """Features of X that ``fit`` saw (N for an associative memory, N minus the classes for a classifier)."""
        return self.memories_.shape[1] - (len(self.classes_) if hasattr(self, "classes_") else 0)

    # ------------------------------------------------------------ numerics
    @property
    def _dtype_name(self):
        """The dtype in use, as a name ("auto" resolved)."""
        self._ensure_setup()
        return str(self.dtype_).rsplit(".", 1)[-1].strip("'>")

    # -------------------------------------------------------------- dynamics
    def energy_difference(self, states):
        r"""Each neuron's energy difference; its sign is the neuron's update.

        .. math:: \Delta_i = \sum_\mu \big[F(a(\zeta^\mu_i + s_\mu))
                  - F(a(-\zeta^\mu_i + s_\mu))\big], \qquad
                  s_\mu = \sum_{j \ne i} \zeta^\mu_j \xi_j

        with a = 1 (original) or 1/N (normalized); ``scaling="adaptive"`` divides
        each neuron's arguments by their largest magnitude first.

        Parameters
        ----------
        states : array of shape (B, N)
            ±1 states :math:`\sigma`.

        Returns
        -------
        array of shape (B, N)
            On the estimator's backend.
        """
        self._check_fitted()
        mem = self.memories_
        N = mem.shape[1]
        xi = check_states(states, self.xp_, self.dtype_, N, "states")
        a = self.scales(N)[0]
        with quiet_numpy():
            delta, underflow = energy_difference(
                mem[None], xi, self.interaction_, a, rescale=self.scaling == "adaptive",
                memory_budget=self._budget, return_underflow=True,
            )
        if not bool(self.xp_.all(self.xp_.isfinite(delta))):
            raise _overflow_error(self, "energy_difference", N)
        if bool(underflow[0]):
            _warn_underflow(self, N)
        return delta[0]

    def relax(self, states, *, mode="async", max_sweeps=100, zero_sign=1, random_state=None):
        r"""Relax ±1 states to a fixed point of :math:`\sigma_i \leftarrow \operatorname{sign}(\Delta_i)`.

        Underflow is checked at the end: if an energy difference of the relaxed
        states is exactly 0 only because terms rounded to 0, a
        :class:`NumericalUnderflowWarning` says so (sign(0) decided those neurons).

        Parameters
        ----------
        states : array of shape (B, N)
            ±1 starting states.
        mode : {"async", "sync"}, default "async"
            "async": one neuron at a time in a fresh random order per sweep (the
            paper); "sync": all neurons at once.
        max_sweeps : int, default 100
            At most this many sweeps over the neurons.
        zero_sign : {1, -1, "keep"}, default 1
            sign(0): +1 (the paper), -1, or keep the neuron's current value.
        random_state : None, int or numpy.random.Generator, default None
            Seeds the update order; None: the estimator's ``random_state``.

        Returns
        -------
        RelaxResult
            ``states`` (B, N) on the estimator's backend, ``converged`` (B,) and
            ``n_sweeps``; :meth:`recall` returns the states as NumPy.
        """
        self._check_fitted()
        mem = self.memories_
        N = mem.shape[1]
        xi = check_states(states, self.xp_, self.dtype_, N, "states")
        check_positive(max_sweeps, "max_sweeps", integer=True)  # mode, zero_sign: checked by network.relax
        seed = self.random_state if random_state is None else random_state
        if isinstance(seed, np.random.Generator):
            seed = seed.integers(2**63)
        elif seed is not None:
            check_random_state(seed)
        out, converged, sweeps, finite = relax(
            mem[None], xi, self.interaction_, self.scales(N)[0], mode=mode, max_sweeps=max_sweeps,
            zero_sign=zero_sign, rescale=self.scaling == "adaptive", random_state=seed,
            memory_budget=self._budget,
        )
        if not bool(finite[0]):
            raise _overflow_error(self, "relax", N)
        with quiet_numpy():
            _, underflow = energy_difference(mem[None], out[0], self.interaction_, self.scales(N)[0],
                                             rescale=self.scaling == "adaptive", memory_budget=self._budget,
                                             return_underflow=True)
        if bool(underflow[0]):
            _warn_underflow(self, N)
        return RelaxResult(out[0], converged[0], sweeps)

    # --------------------------------------------------------------- learning
    def _learning_problem(self, X, y=None):
        """(probes, targets, neurons, clamp) for autoassociative (y None) or classification."""
        xp = self.xp_
        if y is None:
            N = self.memories_.shape[1] if hasattr(self, "_memories") else None
            xi = check_states(X, xp, self.dtype_, N, "X")
            return xi, xi, slice(None), slice(None)
        labels = check_labels(y, None)  # label errors before those of X, as scikit-learn
        X = check_states(X, xp, self.dtype_, None, "X", bipolar=False)
        if labels.shape[0] != X.shape[0]:
            raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got {labels.shape[0]}")
        if not hasattr(self, "classes_"):
            self.classes_ = np.unique(labels)
        check_label_types(self.classes_, labels)
        index = np.searchsorted(self.classes_, labels)
        if np.any(index >= len(self.classes_)) or np.any(self.classes_[np.minimum(index, len(self.classes_) - 1)] != labels):
            raise ValueError("y contains labels not seen in the first fit")
        C = len(self.classes_)
        targets = -np.ones((labels.shape[0], C))
        targets[np.arange(labels.shape[0]), index] = 1.0
        n_in = X.shape[1]
        probes = xp.concat([X, -xp.ones((X.shape[0], C), dtype=self.dtype_)], axis=1)
        return probes, self._to_backend(targets, "y"), slice(n_in, n_in + C), slice(0, n_in)

    def _loss_and_gradient(self, X, y, gradient, what):
        self._check_fitted()
        probes, targets, neurons, _ = self._learning_problem(X, y)
        N = self.memories_.shape[1]
        b_in, b_out = self._learning_scales(N)
        loss, grad, finite = loss_and_gradient(
            self.memories_[None], probes, targets, self.interaction_, b_in, b_out,
            error_exponent=self.error_exponent, neurons=neurons, gradient=gradient, memory_budget=self._budget,
        )
        if not bool(finite[0]):
            raise _overflow_error(self, what, N)
        return loss, grad

    def loss(self, X, y=None):
        r"""The training loss :math:`L = \sum_{b,i} (t_{bi} - C_{bi})^{2m}` on X.

        The targets t are X itself (an associative memory) or the bipolar one-hot
        code of ``y`` (a classifier's class neurons); C is as in the class docstring.

        Returns
        -------
        float
        """
        loss, _ = self._loss_and_gradient(X, y, gradient=False, what="loss")
        return float(to_numpy(loss)[0])

    def loss_gradient(self, X, y=None):
        r"""The gradient :math:`\partial L / \partial \zeta^\mu_i` of :meth:`loss`, shape (K, N).

        Derived by hand (see :func:`damlite.network.loss_and_gradient`), checked
        against finite differences and an mpmath reference in the tests.
        """
        _, grad = self._loss_and_gradient(X, y, gradient=True, what="loss_gradient")
        return grad[0]

    def fit(self, X, y=None, *, progress=False, **deprecated):
        """Train the memories by gradient descent on :meth:`loss`.

        The optimiser's settings are constructor parameters (``epochs``,
        ``learning_rate``, ``lr_decay``, ``momentum``, ``batch_size``,
        ``normalize_step``, ``clamp``, ``neurons``, ``warm_start``), so that
        ``GridSearchCV`` and ``clone`` see them.

        Afterwards the loss curve and one pass over (at most 1000) training rows are
        checked: a fit that failed (loss rising, frozen or dead, one class predicted for
        nearly everything, stored patterns not fixed points, loss still falling steeply)
        warns with a :class:`ConvergenceWarning` that names the cause and the call that
        fixes it. A classifier's X in [0, 1] warns with :class:`InputRangeWarning`.

        Parameters
        ----------
        X : array of shape (B, N) or (B, D)
            ±1 patterns to store (``y`` None), or inputs in [-1, 1] to classify.
        y : array of shape (B,), optional
            Class labels: memories get one extra neuron per class, only the
            class neurons are evaluated (from the all -1 label state) and left
            unclamped.
        progress : bool, default False
            Show a progress bar (kept on screen when training ends).
        **deprecated
            The settings above as ``fit`` keywords, and ``temperature``: accepted
            for one release with a :class:`FutureWarning`. They apply to this
            call only (``temperature`` sets ``self.temperature``, as before).

        Returns
        -------
        self : DenseAssociativeMemory
        """
        opts = _training_options(self, deprecated)
        epochs, learning_rate, lr_decay, momentum, batch_size = (
            opts[k] for k in ("epochs", "learning_rate", "lr_decay", "momentum", "batch_size"))
        normalize_step, clamp, neurons, warm_start = (
            opts[k] for k in ("normalize_step", "clamp", "neurons", "warm_start"))
        if not warm_start:
            for attr in ("_memories", "classes_"):
                if hasattr(self, attr):
                    delattr(self, attr)
        probes, targets, train_neurons, clamp_slice = self._learning_problem(X, y)
        N = probes.shape[1]
        x_range = None
        if y is not None:
            inputs = probes[:, clamp_slice]
            x_range = (float(self.xp_.min(inputs)), float(self.xp_.max(inputs)))
            if x_range[0] >= 0 and x_range[1] > 0:
                warnings.warn(f"{_monitor.input_range_hint(*x_range)} (an input at 0 sits halfway between a "
                              "neuron's -1 and +1 and carries no signal)", InputRangeWarning, stacklevel=2)
        if neurons is not None:
            if y is not None:
                raise ValueError("neurons is for autoassociative training; with y the class neurons are trained")
            train_neurons, _ = neuron_index(neurons, N)
            if isinstance(train_neurons, slice):
                targets = targets[:, train_neurons]
            else:
                targets = self.xp_.take(targets, self.xp_.asarray(train_neurons, device=getattr(targets, "device", None)),
                                        axis=1)
        rng = check_random_state(self.random_state)
        if not hasattr(self, "_memories"):
            rows = to_numpy(probes if self.init == "patterns" else probes[:1]).astype(np.float64)  # others: N only
            if y is not None:  # a classifier's rows carry their bipolar one-hot label
                rows[:, train_neurons] = to_numpy(targets[: rows.shape[0]])
            self.memories_ = initial_memories(rows, self.n_memories, self.init, self.init_mean, self.init_std, rng)
        b_in, b_out = self._learning_scales(N)
        initial = self.memories_
        result = train_memories(
            self.memories_[None], probes, targets, self.interaction_, beta_in=b_in, beta_out=b_out,
            learning_rate=learning_rate, lr_decay=lr_decay, momentum=momentum, epochs=epochs,
            batch_size=batch_size, error_exponent=self.error_exponent, neurons=train_neurons,
            normalize_step=normalize_step, clamp=clamp_slice if clamp else None,
            random_state=rng.integers(2**63), progress=progress, memory_budget=self._budget,
        )
        if not result.finite[0]:
            raise _overflow_error(self, f"fit (epoch {int(result.failed_epoch[0])})", N)
        self._memories = result.memories[0]
        self._remember_params()
        self.loss_curve_ = result.loss[:, 0]
        self.fit_seconds_ = result.seconds
        seen = _monitor.learning_pass(self, probes, train_neurons, b_in, targets.shape[1])
        if seen.underflow:
            warnings.warn(
                f"underflow: while learning, terms F(beta_in (s +- zeta)) rounded to 0 in the {self.variant} network "
                f"(N={N}, n={self.n}, T={self._temperature(N):g}, dtype={self._dtype_name}): the tanh argument "
                "and its gradient vanish there, so the loss cannot move. Lower the temperature or use a wider dtype.",
                NumericalUnderflowWarning,
                stacklevel=2,
            )
        _monitor.review_fit(self, seen, targets=targets, neurons=train_neurons, beta_out=b_out, initial=initial,
                            n_patterns=probes.shape[0], x_range=x_range, warm_start=warm_start, stacklevel=2)
        return self

    def _outputs(self, probes, neurons, beta_in, beta_out):
        """C = tanh(beta_out Delta) of the evaluated ``neurons`` for ``probes``, shape (B, M)."""
        with quiet_numpy():
            delta = energy_difference(self.memories_[None], probes, self.interaction_, beta_in,
                                      neurons=neurons, memory_budget=self._budget)[0]
        if not bool(self.xp_.all(self.xp_.isfinite(delta))):
            raise _overflow_error(self, "decision_function", self.memories_.shape[1])
        return self.xp_.tanh(beta_out * delta)

    # ---------------------------------------------------------- classification
    def _kind(self):
        return "a classifier (fitted with labels y)" if hasattr(self, "classes_") else \
            "an associative memory (fitted without labels)"

    def _require(self, classifier, method):
        """NotFittedError before fit; a ValueError naming what the model is when ``method`` is the other kind's."""
        if not hasattr(self, "_memories"):
            raise NotFittedError(f"this DenseAssociativeMemory has no memories yet: call fit(X, y) for a classifier "
                                 f"or fit(X) for an associative memory before {method}()")
        if classifier and not hasattr(self, "classes_"):
            raise ValueError(f"{method}() needs a classifier, and this DenseAssociativeMemory is {self._kind()}: "
                             "recall(X) returns the recalled patterns and score(X) the fraction of bits recovered; "
                             "fit(X, y) trains a classifier")
        if not classifier and hasattr(self, "classes_"):
            raise ValueError(f"{method}() is for an associative memory, and this DenseAssociativeMemory is "
                             f"{self._kind()}: predict(X) returns class labels and score(X, y) the accuracy")
        self._check_fitted()

    def _check_n_features(self, X):
        X = check_states(X, self.xp_, self.dtype_, None, "X", bipolar=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but DenseAssociativeMemory is expecting "
                             f"{self.n_features_in_} features as input (as in fit)")
        return X

    def decision_function(self, X):
        r"""Class-neuron outputs from the all -1 label state, shape (B, n_classes).

        .. math:: C_c = \tanh\big(\beta_\text{out} \sum_\mu [F(\beta_\text{in}(\zeta^\mu_c
                  + s_\mu)) - F(\beta_\text{in}(-\zeta^\mu_c + s_\mu))]\big)

        where :math:`s_\mu` is memory :math:`\mu`'s similarity with the input and the
        other class neurons at -1. With two classes the score is :math:`C_1 - C_0`
        (scikit-learn's convention: positive means ``classes_[1]``).
        """
        C = self._class_outputs(X)
        return C[:, 1] - C[:, 0] if C.shape[1] == 2 else C

    def _class_outputs(self, X):
        """C of every class neuron, (B, n_classes)."""
        self._require(True, "decision_function")
        X = self._check_n_features(X)
        probes, _, neurons, _ = self._learning_problem(X, np.repeat(self.classes_[:1], X.shape[0]))
        b_in, b_out = self._learning_scales(self.memories_.shape[1])
        return self._outputs(probes, neurons, b_in, b_out)

    def predict(self, X):
        """Class labels: the class neuron with the largest output C (argmax of :meth:`decision_function`).

        Parameters
        ----------
        X : array of shape (B, D)
            Inputs in [-1, 1], as in ``fit(X, y)``.

        Returns
        -------
        ndarray of shape (B,)
            Labels from ``classes_`` (a NumPy array on every backend).
        """
        scores = to_numpy(self._class_outputs(X))
        return self.classes_[np.argmax(scores, axis=1)]

    def recall(self, X, *, mode="async", max_sweeps=100, random_state=None):
        """The patterns an associative memory recalls from the probes ``X`` (relaxed to a fixed point).

        Parameters
        ----------
        X : array of shape (B, N)
            ±1 probes, e.g. stored patterns with bits flipped. Every bit must be -1 or +1:
            for a partial pattern, fill the unknown bits with random ±1 values.
        mode, max_sweeps, random_state
            As in :meth:`relax`.

        Returns
        -------
        ndarray of shape (B, N)
            The relaxed ±1 states, as a NumPy array.
        """
        self._require(False, "recall")
        return np.asarray(to_numpy(self.relax(X, mode=mode, max_sweeps=max_sweeps,
                                              random_state=random_state).states))

    def score(self, X, y=None, *, per="bit"):
        """Accuracy (a classifier) or fraction recovered by :meth:`recall` (an associative memory).

        Parameters
        ----------
        X : array of shape (B, D) or (B, N)
            Inputs (classifier) or ±1 probes (associative memory).
        y : array, optional
            A classifier: the true labels, shape (B,), required. An associative
            memory: the patterns the probes should recall, shape (B, N); default ``X``
            itself (are the patterns fixed points?).
        per : {"bit", "pattern"}, default "bit"
            An associative memory: the fraction of bits recalled right, or of
            patterns recalled exactly.

        Returns
        -------
        float
        """
        if per not in ("bit", "pattern"):
            raise ValueError(f"per must be 'bit' or 'pattern', got {per!r}")
        if hasattr(self, "classes_"):
            if y is None:
                raise ValueError(f"this DenseAssociativeMemory is {self._kind()}: score(X, y) needs the labels y")
            labels = check_labels(y, np.shape(X)[0])
            check_label_types(self.classes_, labels)
            return float(np.mean(self.predict(X) == labels))
        self._require(False, "score")
        recalled = self.recall(X)
        target = np.asarray(to_numpy(X if y is None else y), dtype=np.float64)
        if target.shape != recalled.shape:
            raise ValueError(f"this DenseAssociativeMemory is {self._kind()}: y holds the patterns to recall, "
                             f"shape {recalled.shape} like X, got {target.shape}")
        right = recalled == target
        return float(np.mean(right) if per == "bit" else np.mean(np.all(right, axis=1)))
