"""damlite: the Dense Associative Memory (original and normalized) on NumPy or CuPy.

>>> import damlite
>>> dam = damlite.DenseAssociativeMemory(n_memories=20, n=3, variant="normalized")

The model's modules (:mod:`damlite.metrics`, :mod:`damlite.network`, ...) load on first use,
so ``import damlite`` stays light: ``damlite.metrics.macro_f1`` works without importing
``damlite.metrics`` first. The rest lives in subpackages, imported by name:
:mod:`damlite.kernels` (CPU and GPU kernels), :mod:`damlite.sweeps` (the sweep engine and its tasks),
:mod:`damlite.paper` (claims, scorecard, theory, numerics, capacity) and :mod:`damlite.book`
(the book's figures, explorers and glue), e.g. ``from damlite.book.plots import plot_memories``.
"""
import importlib

from ._version import __version__
from .datasets import load_mnist
from .backend import BackendUnavailableError, backend_info, get_backend, to_numpy
from .interactions import make_interaction

__all__ = [
    "__version__",
    "BackendUnavailableError",
    "ConvergenceWarning",
    "DenseAssociativeMemory",
    "InputRangeWarning",
    "NormalizationWarning",
    "NotFittedError",
    "NumericalOverflowError",
    "NumericalUnderflowWarning",
    "RelaxResult",
    "RelaxationWarning",
    "backend_info",
    "equivalent_temperature",
    "get_backend",
    "load_mnist",
    "make_interaction",
    "to_numpy",
]

#: Submodules loaded on first attribute access (``damlite.metrics``, ``damlite.network``, ...).
_LAZY = ("classification", "datasets", "interactions", "metrics", "model", "network", "training", "validation")

#: The estimator's names, from :mod:`damlite.model` on first access: it brings scikit-learn (~1.3 s to import),
#: which the command line's listings, summaries and errors, and the sweep engine, do not need.
_MODEL = ("ConvergenceWarning", "DenseAssociativeMemory", "InputRangeWarning", "NormalizationWarning", "NotFittedError",
          "NumericalOverflowError", "NumericalUnderflowWarning", "RelaxResult", "RelaxationWarning",
          "equivalent_temperature")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    if name in _MODEL:
        value = getattr(importlib.import_module(".model", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'damlite' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_MODEL))
