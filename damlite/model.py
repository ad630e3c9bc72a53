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

from .backend import get_backend, resolve_dtype, to_numpy
from .interactions import make_interaction
from .network import DEFAULT_MEMORY_BUDGET, energy_difference, loss_and_gradient, neuron_index, quiet_numpy, relax
from .training import train_memories
from .validation import check_number, check_positive, check_random_state, check_states

__all__ = ["DenseAssociativeMemory", "NotFittedError", "NumericalOverflowError", "NumericalUnderflowWarning",
           "RelaxResult"]

VARIANTS = ("original", "normalized")
SCALINGS = ("fixed", "adaptive")
_MAX = {"float16": 65504.0, "float32": 3.4028235e38, "float64": 1.7976931348623157e308}


class NumericalOverflowError(FloatingPointError):
    """The network's numbers left the floating-point range (inf or NaN)."""


class NumericalUnderflowWarning(RuntimeWarning):
    """Terms of the energy difference rounded to zero, leaving sign(0) to decide."""


class NotFittedError(ValueError, AttributeError):
    """The estimator has no memories yet (scikit-learn's convention: both ValueError and AttributeError)."""


#: Parameters the memories depend on: changing one after fit makes them another network's.
_FITTED_PARAMS = ("variant", "interaction", "n", "epsilon", "leak", "dtype")


class RelaxResult(NamedTuple):
    """Relaxed states (B, N), a (B,) mask of states at a fixed point, sweeps run."""

    states: object
    converged: object
    n_sweeps: int


class DenseAssociativeMemory:
    """Dense Associative Memory (Krotov & Hopfield 2016) with the paper's normalization.

    The defaults work on the paper's autoassociative task: with 40 memories,
    ``fit(patterns, epochs=300)`` on 20 random patterns of N = 100 keeps every
    bit when relaxed from the patterns (checked in the tests for n = 10, 20 and 30).
    Why these (measured on that task, 16 pattern sets for each n in {3, 5, 10, 20,
    30}: every bit kept in every set): memories start as weak noisy copies of
    the training patterns (``init="patterns"``), so every pattern has memories
    of its own from the first step. Started from noise instead (``"normal"``,
    the sweeps' and the public codes' choice), each memory drifts to the pattern
    it happens to start closest to; with two memories per pattern some patterns
    get none and stay unstored (at n = 30 about 45 % of bits fall), and with a
    rectified F a memory that no pattern activates gets no gradient at all. The
    polynomial F has no such dead memories; 1/T' = 2 sits inside the normalized
    network's good region for 3 <= n <= 20 in chapter 6's sweeps.

    Parameters
    ----------
    n_memories : int
        K, the number of memory vectors.
    interaction : {"polynomial", "rectified_polynomial", "leaky_rectified_polynomial", "exponential",
                   "author_rectified_polynomial"}
    n : int
        Interaction vertex (the power of the polynomial interactions).
    variant : {"normalized", "original"}
        Where the scale factors sit (see the module docstring).
    temperature : float
        T > 0; beta_out = 1/T**n (original) or beta_in = 1/(N T) (normalized).
    error_exponent : int
        m >= 1 in the loss sum (t - C)**(2m).
    scaling : {"fixed", "adaptive"}
        "adaptive" divides each neuron's arguments by their largest magnitude
        before F in updates: exact signs for homogeneous F at any n.
    epsilon, leak : float, {"paper", "code"}
        The leaky rectified polynomial's slope for x < 0: F(x) = -eps x
        (``leak="paper"``, as the paper writes it) or +eps x (``leak="code"``, as
        the paper author's code computes it).
    init : {"patterns", "normal", "uniform"}
        How memories start: ``"patterns"``, init_std * (a training row) plus
        N(0, init_std**2) noise, the rows taken in a shuffled round robin so that
        every row gets K/B memories (for a classifier the row is the input and its
        bipolar one-hot label); ``"normal"``, N(init_mean, init_std**2) draws;
        ``"uniform"``, U[0, 1) draws (the paper author's early code). Clipped to [-1, 1].
    init_mean, init_std : float
        Mean (``"normal"`` only) and spread of the initial memories.
    backend : {"auto", "numpy", "cupy"}
    dtype : {"float64", "float32", "float16"}
    random_state : None, int or numpy.random.Generator
    memory_budget : int
        Bytes allowed for the largest intermediate tensors (work is chunked).

    Attributes
    ----------
    memories_ : array of shape (K, N)
        The memory vectors (settable).
    loss_curve_ : ndarray of shape (epochs,)
    classes_ : ndarray, set by ``fit(X, y)``

    Examples
    --------
    >>> import numpy as np, damlite
    >>> rng = np.random.default_rng(0)
    >>> patterns = np.where(rng.random((5, 64)) < 0.5, -1.0, 1.0)
    >>> dam = damlite.DenseAssociativeMemory(10, interaction="polynomial", n=4, temperature=0.3,
    ...                                      backend="numpy", random_state=0)
    >>> dam = dam.fit(patterns, epochs=100, learning_rate=0.1)
    >>> noisy = patterns.copy(); noisy[:, :6] *= -1
    >>> bool((damlite.to_numpy(dam.relax(noisy).states) == patterns).all())
    True
    """

    def __init__(
        self,
        n_memories=100,
        *,
        interaction="polynomial",
        n=10,
        variant="normalized",
        temperature=0.5,
        error_exponent=1,
        scaling="fixed",
        epsilon=1e-2,
        leak="paper",
        init="patterns",
        init_mean=0.0,
        init_std=0.1,
        backend="auto",
        dtype="float64",
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
        if self.dtype not in ("float16", "float32", "float64"):
            raise ValueError(f"dtype must be 'float16', 'float32' or 'float64', got {self.dtype!r}")
        check_random_state(self.random_state)
        self.interaction_ = make_interaction(self.interaction, self.n, self.epsilon, self.leak)
        if self.scaling == "adaptive" and self.interaction_.degree is None:
            raise ValueError("scaling='adaptive' needs a homogeneous interaction (polynomial or rectified_polynomial)")
        self.xp_, self.backend_info_ = get_backend(self.backend)
        self.dtype_ = resolve_dtype(self.xp_, self.dtype)
        if self.dtype == "float16" and self.variant == "original":
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
    @classmethod
    def _param_names(cls):
        import inspect  # noqa: PLC0415

        sig = inspect.signature(cls.__init__)
        return sorted(p for p in sig.parameters if p != "self")

    def get_params(self, deep=True):
        """The constructor's parameters (scikit-learn's ``get_params``: ``clone`` works)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters by name (scikit-learn's ``set_params``); returns self."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for DenseAssociativeMemory; valid: {valid}")
            setattr(self, name, value)
        for attr in ("xp_", "backend_info_", "dtype_", "interaction_"):  # re-validated on next use
            self.__dict__.pop(attr, None)
        return self

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

    def scales(self, n_features, temperature=None):
        """Return (update scale a, beta_in, beta_out) for N = n_features (see module doc)."""
        self._ensure_setup()
        check_positive(n_features, "n_features", integer=True)
        T = self.temperature if temperature is None else temperature
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
        tiny = float(np.finfo(self.dtype).tiny)
        for name, value in (("beta_in", b_in), ("beta_out", b_out)):
            if float(np.asarray(value, dtype=self.dtype)) < tiny:
                warnings.warn(
                    f"underflow: {name} = {value:.3g} is below the smallest normal {self.dtype} "
                    f"({tiny:.3g}) for the {self.variant} network (N={N}, n={self.n}, T={self.temperature}); "
                    "the tanh argument and the gradient vanish. Use variant='normalized' or a wider dtype.",
                    NumericalUnderflowWarning,
                    stacklevel=3,
                )
        return b_in, b_out

    def _init_memories(self, rows):
        """Initial memories (see ``init``) from the training ``rows`` (B, N) in [-1, 1]."""
        rng = check_random_state(self.random_state)
        K, (B, N) = self.n_memories, rows.shape
        if self.init == "patterns":
            order = np.concatenate([rng.permutation(B) for _ in range(K // B + 1)])[:K]
            host = self.init_std * rows[order] + rng.normal(0.0, self.init_std, size=(K, N))
        elif self.init == "uniform":
            host = rng.random((K, N))
        else:
            host = rng.normal(self.init_mean, self.init_std, size=(K, N))
        self.memories_ = np.clip(host, -1.0, 1.0)
        return rng

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
        return self.memories_.shape[1]

    # ------------------------------------------------------------ numerics
    def _nonfinite(self, what, N):
        degree = self.interaction_.degree
        dtype = str(self.dtype)
        hint = ""
        if degree is not None and self.variant == "original":
            hint = (f" Similarity scores reach about N = {N}, and F grows like N**n = 10**{degree * np.log10(N):.1f}"
                    f" against the {dtype} maximum {_MAX.get(dtype, float('nan')):.3g}.")
        return NumericalOverflowError(
            f"{what} overflowed: inf/NaN in the {self.variant} network with N={N}, n={self.n}, "
            f"interaction={self.interaction_.name}, dtype={dtype}.{hint} Use variant='normalized', "
            "a wider dtype, or scaling='adaptive' (updates)."
        )

    def _warn_underflow(self, N):
        warnings.warn(
            f"underflow: terms of the energy difference rounded to 0 in the {self.variant} network "
            f"(N={N}, n={self.n}, dtype={self.dtype}); some updates were decided by sign(0). "
            "Use scaling='adaptive' or a wider dtype.",
            NumericalUnderflowWarning,
            stacklevel=3,
        )

    # -------------------------------------------------------------- dynamics
    def energy_difference(self, states):
        """Delta_i = sum_mu F(a(zeta_i + s)) - F(a(-zeta_i + s)) for each state and neuron, (B, N).

        Its sign is the update of neuron i; a = 1 (original) or 1/N (normalized).
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
            raise self._nonfinite("energy_difference", N)
        if bool(underflow[0]):
            self._warn_underflow(N)
        return delta[0]

    def relax(self, states, *, mode="async", max_sweeps=100, zero_sign=1, random_state=None):
        """Relax ±1 states to a fixed point of the update (at most ``max_sweeps`` sweeps).

        ``mode="async"``: one neuron at a time in a fresh random order per sweep
        (the paper; seeded by ``random_state``, default: the estimator's).
        ``mode="sync"``: all neurons at once. ``zero_sign`` is sign(0): +1 (the
        paper), -1, or "keep". Returns a :class:`RelaxResult`.

        Underflow is checked at the end: if an energy difference of the relaxed
        states is exactly 0 only because terms rounded to 0, a
        :class:`NumericalUnderflowWarning` says so (sign(0) decided those neurons).
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
            raise self._nonfinite("relax", N)
        with quiet_numpy():
            _, underflow = energy_difference(mem[None], out[0], self.interaction_, self.scales(N)[0],
                                             rescale=self.scaling == "adaptive", memory_budget=self._budget,
                                             return_underflow=True)
        if bool(underflow[0]):
            self._warn_underflow(N)
        return RelaxResult(out[0], converged[0], sweeps)

    # --------------------------------------------------------------- learning
    def _learning_problem(self, X, y=None):
        """(probes, targets, neurons, clamp) for autoassociative (y None) or classification."""
        xp = self.xp_
        if y is None:
            N = self.memories_.shape[1] if hasattr(self, "_memories") else None
            xi = check_states(X, xp, self.dtype_, N, "X")
            return xi, xi, slice(None), slice(None)
        X = check_states(X, xp, self.dtype_, None, "X", bipolar=False)
        labels = np.asarray(to_numpy(y)).reshape(-1)
        if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
            raise ValueError("y contains NaN or inf")
        if labels.dtype.kind in "cOV":
            raise TypeError(f"y must hold class labels (integers or strings), got {labels.dtype} values")
        if labels.shape[0] != X.shape[0]:
            raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got {labels.shape[0]}")
        if not hasattr(self, "classes_"):
            self.classes_ = np.unique(labels)
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
            raise self._nonfinite(what, N)
        return loss, grad

    def loss(self, X, y=None):
        """L = sum_{a,i} (t_{a,i} - C_{a,i})**(2m) on X (targets: X itself, or y's one-hot)."""
        loss, _ = self._loss_and_gradient(X, y, gradient=False, what="loss")
        return float(to_numpy(loss)[0])

    def loss_gradient(self, X, y=None):
        """dL/dzeta, shape (K, N), derived by hand (see :func:`damlite.network.loss_and_gradient`)."""
        _, grad = self._loss_and_gradient(X, y, gradient=True, what="loss_gradient")
        return grad[0]

    def fit(self, X, y=None, *, epochs=100, learning_rate=0.1, lr_decay=1.0, momentum=0.0, batch_size=None,
            normalize_step=True, clamp=True, neurons=None, warm_start=False, progress=False, temperature=None):
        """Train the memories by gradient descent on :meth:`loss`.

        Parameters
        ----------
        X : array (B, N)
            ±1 patterns to store (y None), or inputs in [-1, 1] to classify.
        y : array (B,), optional
            Class labels: memories get one extra neuron per class, only the
            class neurons are evaluated (from the all -1 label state) and left
            unclamped.
        epochs, learning_rate, lr_decay, momentum, batch_size
            The optimiser (see :mod:`damlite.training`); lr decays per epoch.
        normalize_step : bool
            Divide each memory's step by its largest entry (Krotov & Hopfield).
        clamp : bool
            Keep memory entries of the input neurons in [-1, 1].
        neurons : slice or array of int, optional
            Train only these neurons' predictions (autoassociative mode): a
            slice or distinct neuron indices, e.g. ``[0, 3, 7]``.
        warm_start : bool
            Continue from the current memories instead of re-initialising. Each call
            starts the optimiser afresh (zero velocity, ``learning_rate`` undecayed),
            and with an integer ``random_state`` each call shuffles the minibatches in
            the same order: pass the decayed rate, or a Generator, to continue a schedule.
        temperature : ignored unless not None: a shortcut to set ``self.temperature``.
        progress : bool
            Show a progress bar.
        """
        if temperature is not None:
            self.temperature = temperature
        self._validate_params()
        check_positive(learning_rate, "learning_rate")
        check_positive(epochs, "epochs", integer=True)
        check_number(lr_decay, "lr_decay", low=0, high=1, low_open=True)
        check_number(momentum, "momentum", low=0, high=1, high_open=True)
        for name, flag in (("normalize_step", normalize_step), ("clamp", clamp), ("warm_start", warm_start)):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        if batch_size is not None:
            check_positive(batch_size, "batch_size", integer=True)
        if not warm_start:
            for attr in ("_memories", "classes_"):
                if hasattr(self, attr):
                    delattr(self, attr)
        probes, targets, train_neurons, clamp_slice = self._learning_problem(X, y)
        N = probes.shape[1]
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
            rng = self._init_memories(rows)
        b_in, b_out = self._learning_scales(N)
        result = train_memories(
            self.memories_[None], probes, targets, self.interaction_, beta_in=b_in, beta_out=b_out,
            learning_rate=learning_rate, lr_decay=lr_decay, momentum=momentum, epochs=epochs,
            batch_size=batch_size, error_exponent=self.error_exponent, neurons=train_neurons,
            normalize_step=normalize_step, clamp=clamp_slice if clamp else None,
            random_state=rng.integers(2**63), progress=progress, memory_budget=self._budget,
        )
        if not result.finite[0]:
            raise self._nonfinite(f"fit (epoch {int(result.failed_epoch[0])})", N)
        self._memories = result.memories[0]
        self._remember_params()
        self.loss_curve_ = result.loss[:, 0]
        self.fit_seconds_ = result.seconds
        self._check_learning_underflow(probes, train_neurons, b_in)
        return self

    def _check_learning_underflow(self, probes, neurons, beta_in, rows=256):
        """Warn when the learning rule's energy differences are 0 only because F rounded to 0."""
        with quiet_numpy():
            _, underflow = energy_difference(self._memories[None], probes[:rows], self.interaction_, beta_in,
                                             neurons=neurons, memory_budget=self._budget, return_underflow=True)
        if bool(underflow[0]):
            warnings.warn(
                f"underflow: while learning, terms F(beta_in (s +- zeta)) rounded to 0 in the {self.variant} network "
                f"(N={probes.shape[1]}, n={self.n}, T={self.temperature}, dtype={self.dtype}): the tanh argument "
                "and its gradient vanish there, so the loss cannot move. Lower the temperature or use a wider dtype.",
                NumericalUnderflowWarning,
                stacklevel=3,
            )

    # ---------------------------------------------------------- classification
    def decision_function(self, X):
        """C for each class neuron from the all -1 label state, shape (B, n_classes)."""
        if not hasattr(self, "classes_"):
            raise NotFittedError("decision_function needs a classifier: call fit(X, y) first")
        self._check_fitted()
        C = len(self.classes_)
        n_in = self.memories_.shape[1] - C
        width = np.shape(X)[-1] if np.ndim(X) else 0
        if width != n_in:
            raise ValueError(f"X must have {n_in} features (as in fit), got {width}")
        probes, _, neurons, _ = self._learning_problem(X, np.repeat(self.classes_[:1], np.shape(X)[0]))
        N = self.memories_.shape[1]
        b_in, b_out = self._learning_scales(N)
        with quiet_numpy():
            delta = energy_difference(self.memories_[None], probes, self.interaction_, b_in,
                                      neurons=neurons, memory_budget=self._budget)[0]
        if not bool(self.xp_.all(self.xp_.isfinite(delta))):
            raise self._nonfinite("decision_function", N)
        assert delta.shape[1] == C
        return self.xp_.tanh(b_out * delta)

    def predict(self, X):
        """Class with the largest class-neuron output (argmax), as a NumPy array of labels."""
        scores = to_numpy(self.decision_function(X))
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X, y):
        """Accuracy of :meth:`predict` on (X, y)."""
        return float(np.mean(self.predict(X) == np.asarray(to_numpy(y)).reshape(-1)))

    def __repr__(self):
        return (f"DenseAssociativeMemory(n_memories={self.n_memories}, interaction={self.interaction!r}, "
                f"n={self.n}, variant={self.variant!r}, temperature={self.temperature}, dtype={self.dtype!r})")
