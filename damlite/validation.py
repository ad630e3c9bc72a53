"""Input checking shared by every public entry point (scikit-learn's check_array habit)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .backend import to_numpy

__all__ = ["check_states", "check_positive", "check_number", "check_random_state"]


def check_random_state(random_state):
    """None, an int >= 0 or a numpy Generator -> a numpy Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and random_state >= 0:
        return np.random.default_rng(int(random_state))
    raise ValueError(f"random_state must be None, an int >= 0 or a numpy.random.Generator, got {random_state!r}")


def check_number(value, name, *, low=None, high=None, low_open=False, high_open=False, integer=False):
    """``value`` as a float (or int) in the interval given, or ValueError naming ``name``.

    Refuses bools, strings, complex numbers, NaN and inf with a message that says
    what is accepted.
    """
    ok_type = numbers.Integral if integer else numbers.Real
    lo = "" if low is None else f"{'>' if low_open else '>='} {low}"
    hi = "" if high is None else f"{'<' if high_open else '<='} {high}"
    want = " and ".join(x for x in (lo, hi) if x) or "finite"
    kind = "an integer" if integer else "a finite number"
    if isinstance(value, bool) or not isinstance(value, ok_type) or not math.isfinite(value):
        raise ValueError(f"{name} must be {kind} ({want}), got {value!r}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name} must be {kind} {lo}, got {value!r}")
    if high is not None and (value > high or (high_open and value == high)):
        raise ValueError(f"{name} must be {kind} {hi}, got {value!r}")
    return int(value) if integer else float(value)


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
    kind = getattr(getattr(states, "dtype", None), "kind", None)
    if kind is None and not hasattr(states, "__array_namespace__"):
        kind = np.asarray(states).dtype.kind
    if kind in ("c", "U", "S", "O", "M", "m"):
        what = "complex" if kind == "c" else "non-numeric"
        raise TypeError(f"{name} must be a real numeric array, got {what} values")
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
    if arr.shape[1] < 1:
        raise ValueError(f"{name} has no columns (neurons)")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"{name} must have {n_features} columns (one per neuron), got {arr.shape[1]}")
    low, high = float(xp.min(arr)), float(xp.max(arr))  # NaN if any entry is; no temporaries (MNIST: ~50x faster)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"{name} contains NaN or inf")
    if bipolar:
        if not bool(xp.all((arr == 1) | (arr == -1))):
            raise ValueError(f"{name} must contain only -1 and +1 (bipolar states)")
    elif low < -1 or high > 1:
        raise ValueError(f"{name} must lie in [-1, 1]")
    return arr
