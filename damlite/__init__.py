"""damlite: the Dense Associative Memory (original and normalized) on NumPy or CuPy.

>>> import damlite
>>> dam = damlite.DenseAssociativeMemory(n_memories=20, n=3, variant="normalized")
"""
from ._version import __version__
from .datasets import load_mnist
from .backend import BackendUnavailableError, backend_info, get_backend, to_numpy
from .interactions import make_interaction
from .model import (DenseAssociativeMemory, NotFittedError, NumericalOverflowError, NumericalUnderflowWarning,
                    RelaxResult, equivalent_temperature)

__all__ = [
    "__version__",
    "BackendUnavailableError",
    "DenseAssociativeMemory",
    "NotFittedError",
    "NumericalOverflowError",
    "NumericalUnderflowWarning",
    "RelaxResult",
    "backend_info",
    "equivalent_temperature",
    "get_backend",
    "load_mnist",
    "make_interaction",
    "to_numpy",
]
