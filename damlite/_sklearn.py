"""scikit-learn's base classes and ConvergenceWarning where scikit-learn is importable, stand-ins otherwise.

scikit-learn is optional at run time: without it the estimator keeps its own ``get_params``,
``set_params`` and ``repr`` (:class:`EstimatorParams`) and damlite defines its own
:class:`ConvergenceWarning`.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np

try:  # pragma: no branch
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.exceptions import ConvergenceWarning, DataConversionWarning
    from sklearn.exceptions import NotFittedError as NotFittedBase
    from sklearn.utils.validation import _check_feature_names
    HAVE_SKLEARN = True
except ImportError:  # scikit-learn is not installed
    HAVE_SKLEARN = False
    _check_feature_names = None

    class BaseEstimator:  # noqa: D101 - stand-in
        pass

    class ClassifierMixin:  # noqa: D101 - stand-in
        _estimator_type = "classifier"

    class ConvergenceWarning(UserWarning):
        """Training did not converge (scikit-learn's class where it is installed)."""

    class DataConversionWarning(UserWarning):
        """Input converted to the form expected (scikit-learn's class where it is installed)."""

    class NotFittedBase(ValueError, AttributeError):  # scikit-learn's convention
        pass



class EstimatorParams:
    """``get_params``, ``set_params`` and a scikit-learn style ``repr`` from the constructor's signature.

    The same with or without scikit-learn. ``set_params`` calls ``self._forget_setup()``, so that
    what was derived from the old parameters is derived again on next use.
    """

    @classmethod
    def _param_names(cls):
        return sorted(p for p in inspect.signature(cls.__init__).parameters if p != "self")

    def get_params(self, deep=True):
        """The constructor's parameters (scikit-learn's ``get_params``: ``clone`` works)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters by name (scikit-learn's ``set_params``); returns self."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; valid: {valid}")
            setattr(self, name, value)
        self._forget_setup()
        return self

    def _forget_setup(self):
        pass

    def __repr__(self, N_CHAR_MAX=700):
        """``Name(...)`` with the parameters that differ from their defaults, wrapped at 88 columns."""
        defaults = {k: p.default for k, p in inspect.signature(type(self).__init__).parameters.items() if k != "self"}
        changed = []
        for name in self._param_names():
            value, default = getattr(self, name), defaults[name]
            same = value is default or (type(value) is type(default) and value == default)
            if not same:
                changed.append(f"{name}={value!r}")
        head = f"{type(self).__name__}("
        lines, line = [], head
        for k, part in enumerate(changed):  # continuation lines under the first
            piece = part + ("," if k < len(changed) - 1 else ")")
            if line not in (head, " " * len(head)) and len(line) + 1 + len(piece) > 88:
                lines.append(line.rstrip())
                line = " " * len(head)
            line += ("" if line in (head, " " * len(head)) else " ") + piece
        return "\n".join(lines + [line if changed else head + ")"])


def _names_of(X):
    """The column names of a DataFrame-like X when all are strings, else None (scikit-learn's rule)."""
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = np.asarray(list(columns), dtype=object)
    return names if names.size and all(isinstance(c, str) for c in names) else None


def check_feature_names(est, X, *, reset):
    """Record (``reset``) or check ``est.feature_names_in_`` against X's column names, as scikit-learn does.

    A fit on a DataFrame records its column names; later calls refuse other or reordered names with a
    ValueError and warn when X has no names. scikit-learn's own helper where it is installed.
    """
    if _check_feature_names is not None:
        _check_feature_names(est, X, reset=reset)
        return
    names = _names_of(X)
    if reset:
        if names is not None:
            est.feature_names_in_ = names
        else:
            est.__dict__.pop("feature_names_in_", None)
        return
    fitted = getattr(est, "feature_names_in_", None)
    if fitted is None or names is None:
        if fitted is not None:
            warnings.warn(f"X does not have valid feature names, but {type(est).__name__} was fitted with "
                          "feature names", UserWarning, stacklevel=3)
        return
    if len(fitted) != len(names) or np.any(fitted != names):
        order = " in the same order as in fit" if set(fitted) == set(names) else ""
        raise ValueError(f"The feature names should match those that were passed during fit{order}: "
                         f"fitted with {list(fitted)[:5]}, got {list(names)[:5]}")


def get_state(est):
    """The estimator's attributes as data: arrays to NumPy, no module objects, the damlite version stamped.

    (scikit-learn stamps its own version the same way.)
    """
    from ._version import __version__  # noqa: PLC0415
    from .backend import to_numpy  # noqa: PLC0415

    state = dict(est.__dict__)
    for attr in ("xp_", "backend_info_", "dtype_"):
        state.pop(attr, None)
    if "_memories" in state:
        state["_memories"] = np.asarray(to_numpy(state["_memories"]))
    state["_damlite_version"] = __version__
    return state


def set_state(est, state):
    """Restore a pickled ``state`` onto this process's backend, after :func:`check_pickle_state`."""
    state = check_pickle_state(est, dict(state))
    memories = state.pop("_memories", None)
    est.__dict__.update(state)
    if memories is not None:
        from .backend import as_backend_array  # noqa: PLC0415

        est._ensure_setup()
        est._memories = as_backend_array(memories, est.xp_, est.dtype_)


def check_pickle_state(est, state):
    """Warn when ``state`` was pickled by another damlite version; refuse a fitted state without memories."""
    from ._version import __version__  # noqa: PLC0415

    written = state.pop("_damlite_version", None)
    if written is not None and written != __version__:
        warnings.warn(f"this {type(est).__name__} was pickled with damlite {written} and is loaded with "
                      f"{__version__}: it may not work as it did; refit it with this version",
                      UserWarning, stacklevel=4)  # the line that loaded it (pickle.loads runs no Python frame)
    if "_fitted_params" in state and "_memories" not in state:
        raise ValueError(f"this pickled {type(est).__name__} is fitted but carries no memories (the file is "
                         f"damaged or from an incompatible damlite {written or 'version'}): refit it")
    return state


__all__ = ["HAVE_SKLEARN", "BaseEstimator", "ClassifierMixin", "ConvergenceWarning", "DataConversionWarning",
           "EstimatorParams", "NotFittedBase", "check_feature_names", "check_pickle_state", "get_state", "set_state"]
