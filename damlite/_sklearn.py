"""scikit-learn's base classes and ConvergenceWarning where scikit-learn is importable, stand-ins otherwise.

scikit-learn is optional at run time: without it the estimator keeps its own ``get_params``,
``set_params`` and ``repr`` (:class:`EstimatorParams`) and damlite defines its own
:class:`ConvergenceWarning`.
"""
from __future__ import annotations

import inspect

try:  # pragma: no branch
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.exceptions import ConvergenceWarning, DataConversionWarning
    from sklearn.exceptions import NotFittedError as NotFittedBase
    HAVE_SKLEARN = True
except ImportError:  # scikit-learn is not installed
    HAVE_SKLEARN = False

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


__all__ = ["HAVE_SKLEARN", "BaseEstimator", "ClassifierMixin", "ConvergenceWarning", "DataConversionWarning",
           "EstimatorParams", "NotFittedBase"]
