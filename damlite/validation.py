"""Input checking shared by every public entry point (scikit-learn's check_array habit)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .backend import to_numpy

__all__ = ["check_states", "check_positive", "check_random_state"]


def check_random_state(random_state):
    """None, an int or a numpy Generator -> a numpy Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)):
        return np.random.default_rng(random_state)
    raise ValueError(f"random_state must be None, an int or a numpy.random.Generator, got {random_state!r}")


def check_positive(value, name, *, integer=False):
    """Raise ValueError naming ``name`` unless ``value`` is a finite number > 0 (an int if asked)."""
    ok_type = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, ok_type) or not math.isfinite(value) or value <= 0:
        kind = "a positive integer" if integer else "a finite number > 0"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return value


def check_states(states, xp, dtype, n_features, name, *, bipolar=True):
    """Return ``states`` as a 2-D ``xp`` array of ``dtype``, checked.

    Raises ValueError naming ``name`` for a wrong number of dimensions or
    columns, NaN/inf, or (``bipolar``) entries other than -1 and +1. A 1-D
    state is treated as one row. Arrays already in ``xp`` stay on their device.
    """
    try:
        arr = xp.asarray(states, dtype=dtype)
    except Exception:
        arr = xp.asarray(np.asarray(to_numpy(states), dtype=np.float64), dtype=dtype)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (samples x neurons), got {arr.ndim} dimensions")
    if arr.shape[0] < 1:
        raise ValueError(f"{name} is empty")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"{name} must have {n_features} columns (one per neuron), got {arr.shape[1]}")
    if not bool(xp.all(xp.isfinite(arr))):
        raise ValueError(f"{name} contains NaN or inf")
    if bipolar:
        if not bool(xp.all((arr == 1) | (arr == -1))):
            raise ValueError(f"{name} must contain only -1 and +1 (bipolar states)")
    elif not bool(xp.all(xp.abs(arr) <= 1)):
        raise ValueError(f"{name} must lie in [-1, 1]")
    return arr
