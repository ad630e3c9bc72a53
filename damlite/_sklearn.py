"""scikit-learn's base classes and ConvergenceWarning where scikit-learn is importable, stand-ins otherwise.

scikit-learn is optional at run time: without it the estimator keeps its own ``get_params``,
``set_params`` and ``repr`` and damlite defines its own :class:`ConvergenceWarning`.
"""
from __future__ import annotations

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

__all__ = ["HAVE_SKLEARN", "BaseEstimator", "ClassifierMixin", "ConvergenceWarning", "DataConversionWarning", "NotFittedBase"]
