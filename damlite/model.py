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

import numpy as np

from ._fitting import (learning_problem, learning_scales, loss_and_gradient_of, run_fit, scales_of,
                       training_options, validate_params)
from ._monitor import (InputRangeWarning, NormalizationWarning, NumericalOverflowError, NumericalUnderflowWarning,
                       overflow_error, warn_underflow)
from ._recall import RelaxationWarning, RelaxResult, relax_states
from ._recall import energy as _energy
from ._sklearn import (HAVE_SKLEARN, BaseEstimator, ClassifierMixin, ConvergenceWarning, EstimatorParams,
                       NotFittedBase, check_feature_names, get_state, set_state)
from ._warm import check_unchanged, check_warm_start, kind, remember_params, require_kind
from .backend import as_backend_array, to_numpy
from .network import DEFAULT_MEMORY_BUDGET, energy_difference, quiet_numpy
from .validation import check_label_types, check_labels, check_positive, check_random_state, check_states

__all__ = ["ConvergenceWarning", "DenseAssociativeMemory", "InputRangeWarning", "NormalizationWarning", "NotFittedError",
           "NumericalOverflowError", "NumericalUnderflowWarning", "RelaxResult", "RelaxationWarning",
           "equivalent_temperature"]

#: T' of the normalized network when ``temperature=None`` (the original network gets T = N T').
DEFAULT_NORMALIZED_TEMPERATURE = 0.5


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


class NotFittedError(NotFittedBase):
    """The estimator has no memories yet.

    Both a ValueError and an AttributeError (scikit-learn's convention), and
    scikit-learn's own ``NotFittedError`` where scikit-learn is installed.
    """



class DenseAssociativeMemory(ClassifierMixin, EstimatorParams, BaseEstimator):
    r"""Dense Associative Memory (Krotov & Hopfield 2016), original or normalized: an estimator.

    ``fit(X)`` stores ±1 patterns (an associative memory: :meth:`recall`, and :meth:`score` as
    the fraction of bits recovered); ``fit(X, y)`` trains a classifier on inputs in [-1, 1]
    (:meth:`predict`, :meth:`decision_function`, :meth:`score` as accuracy). Every setting is a
    constructor parameter, so scikit-learn's ``clone``, ``GridSearchCV`` and ``Pipeline`` work.
    Neuron i of a state :math:`\xi` is updated to the sign of

    .. math::

        \begin{aligned}
        \Delta_i &= \sum_{\mu} \big[F(a(\zeta^\mu_i + s_\mu))\\
                 &\qquad - F(a(-\zeta^\mu_i + s_\mu))\big],\\
        s_\mu &= \sum_{j \ne i} \zeta^\mu_j\, \xi_j,
        \end{aligned}

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
        Continue from the current memories (the optimiser starts anew); a ValueError names what
        changed when they are another network's (kind of fit, K, features, F, n, variant, dtype).
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
        The loss of each epoch, summed over its minibatches (each before its step); warm fits extend it.
    temperature_ : float
        The temperature in use.
    classes_ : ndarray of shape (n_classes,)
        The class labels (a classifier only).
    n_features_in_ : int
        Features of X seen by ``fit``.
    feature_names_in_ : ndarray of shape ``(n_features_in_,)``
        Column names of X when ``fit`` saw a DataFrame with string names; later calls check them.
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
    def _ensure_setup(self):
        if not hasattr(self, "xp_"):
            validate_params(self)

    @property
    def _budget(self):
        return DEFAULT_MEMORY_BUDGET if self.memory_budget is None else int(self.memory_budget)

    def _check_fitted(self):
        """Raise :class:`NotFittedError` without memories, ValueError when a network parameter changed since."""
        if not hasattr(self, "_memories"):
            raise NotFittedError("this DenseAssociativeMemory has no memories yet: call fit() or assign memories_")
        check_unchanged(self)
        self._ensure_setup()

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
        """Fitted attributes as data (pickle, deepcopy, joblib), stamped with the damlite version."""
        return get_state(self)

    def __setstate__(self, state):
        """Back onto this process's backend; warns when another damlite version wrote the pickle."""
        set_state(self, state)

    def _temperature(self, n_features):
        """The temperature in use for N neurons: ``temperature``, or for None T' = 0.5 (normalized), T = N T'."""
        if self.temperature is not None:
            return self.temperature
        T = DEFAULT_NORMALIZED_TEMPERATURE
        return equivalent_temperature(T, n_features, to="original") if self.variant == "original" else T

    @property
    def _t_name(self):
        """The temperature's name in messages: T' for the normalized network, T for the original."""
        return "T" if self.variant == "original" else "T'"

    @property
    def temperature_(self):
        """The temperature the fitted network uses (``temperature``, or with ``None`` T' = 0.5 or T = N T')."""
        return float(self._temperature(self.memories_.shape[1]))

    def scales(self, n_features, temperature=None):
        """Return (update scale a, beta_in, beta_out) for N = n_features (see module doc).

        ``temperature`` defaults to the estimator's (with ``None``: T' = 0.5, or
        T = N T' for the original network).
        """
        return scales_of(self, n_features, temperature)

    # --------------------------------------------------------------- memories
    @property
    def memories_(self):
        if not hasattr(self, "_memories"):
            raise AttributeError("memories_ is not set: call fit() or assign memories_ first")
        return self._memories

    @memories_.setter
    def memories_(self, value):
        self._ensure_setup()
        arr = as_backend_array(value, self.xp_, self.dtype_, copy=True)
        if arr.ndim != 2 or arr.shape[0] != self.n_memories:
            raise ValueError(f"memories_ must have shape (n_memories={self.n_memories}, N), got {tuple(arr.shape)}")
        if not bool(self.xp_.all(self.xp_.isfinite(arr))):
            raise ValueError("memories_ contains NaN or inf")
        self._memories = arr
        remember_params(self)
        self.__dict__.pop("loss_curve_", None)  # the curve of a fit these memories did not come from

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

        .. math::

            \begin{aligned}
            \Delta_i &= \sum_\mu \big[F(a(\zeta^\mu_i + s_\mu))\\
                     &\qquad - F(a(-\zeta^\mu_i + s_\mu))\big],\\
            s_\mu &= \sum_{j \ne i} \zeta^\mu_j \xi_j
            \end{aligned}

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
        xi = self._states(states)
        mem = self.memories_
        N = mem.shape[1]
        a = self.scales(N)[0]
        with quiet_numpy():
            delta, underflow = energy_difference(
                mem[None], xi, self.interaction_, a, rescale=self.scaling == "adaptive",
                memory_budget=self._budget, return_underflow=True,
            )
        if not bool(self.xp_.all(self.xp_.isfinite(delta))):
            raise overflow_error(self, "energy_difference", N)
        if bool(underflow[0]):
            warn_underflow(self, N)
        return delta[0]

    def _states(self, states, name="states"):
        """``states`` checked against the fitted network: ±1, N columns, the feature names of fit."""
        self._check_fitted()
        check_feature_names(self, states, reset=False)
        return check_states(states, self.xp_, self.dtype_, self.memories_.shape[1], name)

    def energy(self, states):
        r"""The energy of each ±1 state, the quantity an asynchronous relaxation lowers at every flip.

        .. math:: E(\xi) = -\sum_{\mu=1}^{K} F\big(a\, \zeta^\mu \cdot \xi\big)

        with a = 1 (original) or 1/N (normalized), the book's energy. A neuron's energy difference is
        :math:`\Delta_i = E(\xi\text{ with }\xi_i = -1) - E(\xi\text{ with }\xi_i = +1)`.

        Parameters
        ----------
        states : array of shape (B, N)
            ±1 states :math:`\xi`.

        Returns
        -------
        array of shape (B,)
            On the estimator's backend; ``relax(..., record=True).energies`` holds it along a relaxation.
        """
        xi = self._states(states)
        E = _energy(self, xi)
        if not bool(self.xp_.all(self.xp_.isfinite(E))):
            raise overflow_error(self, "energy", self.memories_.shape[1])
        return E

    def relax(self, states, *, mode="async", max_sweeps=100, zero_sign=1, random_state=None, record=False):
        r"""Relax ±1 states under :math:`\sigma_i \leftarrow \operatorname{sign}(\Delta_i)`, and say how each ended.

        A probe ends at a fixed point (a sweep changes nothing), in a 2-cycle (``mode="sync"`` only:
        two states that turn into each other), or still changing when ``max_sweeps`` runs out;
        ``status`` of the result says which, and a :class:`RelaxationWarning` says how many did not
        reach a fixed point (not for ``max_sweeps=1``, a single step asked for). Underflow is checked
        at the end: if an energy difference of the relaxed states is exactly 0 only because terms
        rounded to 0, a :class:`NumericalUnderflowWarning` says so (sign(0) decided those neurons).

        Parameters
        ----------
        states : array of shape (B, N)
            ±1 starting states.
        mode : {"async", "sync"}, default "async"
            "async": one neuron at a time in a fresh random order per sweep (the
            paper; each flip lowers :meth:`energy`, so it settles); "sync": all neurons at once.
        max_sweeps : int, default 100
            At most this many sweeps over the neurons.
        zero_sign : {1, -1, "keep"}, default 1
            sign(0): +1 (the paper), -1, or keep the neuron's current value.
        random_state : None, int or numpy.random.Generator, default None
            Seeds the update order; None: the estimator's ``random_state``.
        record : bool, default False
            Keep the states after every sweep and their energies (``trajectory``, ``energies``);
            the same states as without it.

        Returns
        -------
        RelaxResult
            ``states`` (B, N) on the estimator's backend, ``converged`` (B,), ``n_sweeps``,
            ``status`` (B,) "fixed_point", "cycle" or "max_sweeps", and with ``record``
            ``trajectory`` (S + 1, B, N) and ``energies`` (S + 1, B); :meth:`recall` returns the
            states as NumPy.
        """
        xi = self._states(states)
        check_positive(max_sweeps, "max_sweeps", integer=True)  # mode, zero_sign: checked by network.relax
        if not isinstance(record, (bool, np.bool_)):
            raise ValueError(f"record must be True or False, got {record!r}")
        seed = self.random_state if random_state is None else random_state
        seed = seed.integers(2**63) if isinstance(seed, np.random.Generator) else seed
        check_random_state(seed)
        return relax_states(self, xi, mode=mode, max_sweeps=max_sweeps, zero_sign=zero_sign, seed=seed,
                            record=bool(record))

    # --------------------------------------------------------------- learning
    def loss(self, X, y=None):
        r"""The training loss :math:`L = \sum_{b,i} (t_{bi} - C_{bi})^{2m}` on X.

        The targets t are X itself (an associative memory) or the bipolar one-hot
        code of ``y`` (a classifier's class neurons); C is as in the class docstring.

        Returns
        -------
        float
        """
        loss, _ = loss_and_gradient_of(self, X, y, gradient=False, what="loss")
        return float(to_numpy(loss)[0])

    def loss_gradient(self, X, y=None):
        r"""The gradient :math:`\partial L / \partial \zeta^\mu_i` of :meth:`loss`, shape (K, N).

        Derived by hand (see :func:`damlite.network.loss_and_gradient`), checked
        against finite differences and an mpmath reference in the tests.
        """
        _, grad = loss_and_gradient_of(self, X, y, gradient=True, what="loss_gradient")
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
        fixes it. A classifier's X in [0, 1] warns with :class:`InputRangeWarning`. A cold
        fit that is interrupted (Ctrl-C) or fails leaves the estimator unfitted.

        Parameters
        ----------
        X : array of shape (B, N) or (B, D)
            ±1 patterns to store (``y`` None), or inputs in [-1, 1] to classify.
        y : array of shape (B,), optional
            Class labels: memories get one extra neuron per class, only the
            class neurons are evaluated (from the all -1 label state) and left
            unclamped.
        progress : bool, default False
            Show a progress bar, kept when training ends (:func:`damlite.training.progress_bar`): text on
            stderr, a one-line widget in a notebook a person runs, none in a notebook executed unattended.
        **deprecated
            The settings above as ``fit`` keywords, and ``temperature``: accepted
            for one release with a :class:`FutureWarning`. They apply to this
            call only (``temperature`` sets ``self.temperature``, as before).

        Returns
        -------
        self : DenseAssociativeMemory
        """
        opts = training_options(self, deprecated)
        warm = opts["warm_start"] and check_warm_start(self, X, y)
        if not warm:
            for attr in ("_memories", "classes_", "loss_curve_"):
                self.__dict__.pop(attr, None)
        check_feature_names(self, X, reset=not warm)
        try:
            run_fit(self, X, y, warm, opts, progress)
        except BaseException:
            if not warm:  # an interrupted or failed cold fit leaves no half-fitted estimator behind
                for attr in ("_memories", "classes_", "feature_names_in_", "loss_curve_", "_fitted_params"):
                    self.__dict__.pop(attr, None)
            raise
        return self

    def _outputs(self, probes, neurons, beta_in, beta_out):
        """C = tanh(beta_out Delta) of the evaluated ``neurons`` for ``probes``, shape (B, M)."""
        with quiet_numpy():
            delta = energy_difference(self.memories_[None], probes, self.interaction_, beta_in,
                                      neurons=neurons, memory_budget=self._budget)[0]
        if not bool(self.xp_.all(self.xp_.isfinite(delta))):
            raise overflow_error(self, "decision_function", self.memories_.shape[1])
        return self.xp_.tanh(beta_out * delta)

    # ---------------------------------------------------------- classification
    def _require(self, classifier, method):
        """NotFittedError before fit; a ValueError naming what the model is when ``method`` is the other kind's."""
        if not hasattr(self, "_memories"):
            raise NotFittedError(f"this DenseAssociativeMemory has no memories yet: call fit(X, y) for a classifier "
                                 f"or fit(X) for an associative memory before {method}()")
        require_kind(self, classifier, method)
        self._check_fitted()

    def _check_n_features(self, X):
        check_feature_names(self, X, reset=False)
        X = check_states(X, self.xp_, self.dtype_, None, "X", bipolar=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but DenseAssociativeMemory is expecting "
                             f"{self.n_features_in_} features as input (as in fit)")
        return X

    def decision_function(self, X):
        r"""Class-neuron outputs from the all -1 label state, shape (B, n_classes).

        .. math::

            \begin{aligned}
            C_c &= \tanh(\beta_\text{out} \Delta_c),\\
            \Delta_c &= \sum_\mu \big[F(\beta_\text{in}(\zeta^\mu_c + s_\mu))\\
                     &\qquad - F(\beta_\text{in}(-\zeta^\mu_c + s_\mu))\big]
            \end{aligned}

        where :math:`s_\mu` is memory :math:`\mu`'s similarity with the input and the
        other class neurons at -1. With two classes the score is :math:`C_1 - C_0`
        (scikit-learn's convention: positive means ``classes_[1]``).
        """
        C = self._class_outputs(X, "decision_function")
        return C[:, 1] - C[:, 0] if C.shape[1] == 2 else C

    def _class_outputs(self, X, method):
        """C of every class neuron, (B, n_classes), for the public ``method``."""
        self._require(True, method)
        X = self._check_n_features(X)
        probes, _, neurons, _, _ = learning_problem(self, X, np.repeat(self.classes_[:1], X.shape[0]))
        b_in, b_out = learning_scales(self, self.memories_.shape[1])
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
        scores = to_numpy(self._class_outputs(X, "predict"))
        return self.classes_[np.argmax(scores, axis=1)]

    def recall(self, X, *, mode="async", max_sweeps=100, random_state=None):
        """The patterns an associative memory recalls from the probes ``X``: the states :meth:`relax` ends in.

        Each probe relaxes until a sweep changes nothing (a fixed point) or ``max_sweeps`` runs out;
        ``mode="sync"`` can leave a probe alternating between two states. A
        :class:`RelaxationWarning` says how many probes did not reach a fixed point, and
        ``relax(X).status`` says which.

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

    def score(self, X, y=None, *, per=None):
        """Accuracy (a classifier) or fraction recovered by :meth:`recall` (an associative memory).

        Parameters
        ----------
        X : array of shape (B, D) or (B, N)
            Inputs (classifier) or ±1 probes (associative memory).
        y : array, optional
            A classifier: the true labels, shape (B,), required. An associative
            memory: the patterns the probes should recall, shape (B, N); default ``X``
            itself (are the patterns fixed points?).
        per : {"bit", "pattern"} or None, default None ("bit")
            An associative memory: the fraction of bits recalled right, or of
            patterns recalled exactly. A classifier scores per row (accuracy) and
            refuses ``per``. (Cross-validating a memory scores held-out patterns it
            never stored, which says nothing about storage: the API page has the fix.)

        Returns
        -------
        float
        """
        if per not in (None, "bit", "pattern"):
            raise ValueError(f"per must be 'bit' or 'pattern', got {per!r}")
        if hasattr(self, "classes_"):
            if per is not None:
                raise ValueError(f"per={per!r} is for an associative memory; this DenseAssociativeMemory is "
                                 f"{kind(self)}, whose score(X, y) is the accuracy over rows")
            if y is None:
                raise ValueError(f"this DenseAssociativeMemory is {kind(self)}: score(X, y) needs the labels y")
            labels = check_labels(y, np.shape(X)[0])
            check_label_types(self.classes_, labels)
            return float(np.mean(self.predict(X) == labels))
        self._require(False, "score")
        recalled = self.recall(X)
        target = np.asarray(to_numpy(X if y is None else y), dtype=np.float64)
        if target.shape != recalled.shape:
            raise ValueError(f"this DenseAssociativeMemory is {kind(self)}: y holds the patterns to recall, "
                             f"shape {recalled.shape} like X, got {target.shape}")
        right = recalled == target
        return float(np.mean(right) if per != "pattern" else np.mean(np.all(right, axis=1)))
