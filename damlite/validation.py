"""Input checking shared by every public entry point (scikit-learn's check_array habit)."""
from __future__ import annotations

import math
import numbers
import os
import sys
import warnings

import numpy as np

from .backend import to_numpy

__all__ = ["InputTypeError", "check_dtype", "check_label_types", "check_labels", "check_states", "check_positive",
           "check_number", "check_random_state", "user_stacklevel"]

#: The float formats a network computes in.
FLOAT_DTYPES = ("float16", "float32", "float64")


#: How far past +-1 a scaled input may lie from rounding alone (it is clipped back).
_ROUNDING = 1e-9


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning raised by the caller point at the first frame outside damlite:
    the user's line (a script's, a notebook cell's) that called the public method, however deep below it the
    warning is raised."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _host(x):
    """``x`` as a NumPy array: from any supported array library, or anything ``np.asarray`` reads."""
    try:
        return np.asarray(to_numpy(x))
    except TypeError:  # not an array of a known library (e.g. an object with __array__ only)
        return np.asarray(x)


class InputTypeError(TypeError, ValueError):
    """Input of the wrong type (complex, text, objects): a TypeError, and a ValueError as scikit-learn expects."""


def check_random_state(random_state):
    """None, an int >= 0 or a numpy Generator -> a numpy Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and random_state >= 0:
        return np.random.default_rng(int(random_state))
    raise ValueError(f"random_state must be None, an int >= 0 or a numpy.random.Generator, got {random_state!r}")


def check_dtype(dtype, name="dtype"):
    """``"auto"``, or the name of the float format ``dtype`` spells in any way NumPy accepts.

    ``"float32"``, ``np.float32``, ``np.dtype("float32")`` and ``"f4"`` all give ``"float32"``
    (CuPy's dtypes are NumPy's). Anything but float16, float32 and float64 is a ValueError.
    """
    if isinstance(dtype, str) and dtype == "auto":
        return "auto"
    want = f"{name} must be 'auto', 'float16', 'float32' or 'float64' (or np.float32, ...), got {dtype!r}"
    if dtype is None:
        raise ValueError(want)
    try:
        spelled = np.dtype(dtype).name
    except (TypeError, ValueError):
        raise ValueError(want) from None
    if spelled not in FLOAT_DTYPES:
        raise ValueError(want)
    return spelled


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


def check_states(states, xp, dtype, n_features, name, *, bipolar=True, return_range=False):
    """Return ``states`` as a 2-D ``xp`` array of ``dtype``, checked; with ``return_range``, ``(array, (low,
    high))``: its least and greatest entries as floats (one pass each, shared with the checks).

    Raises ValueError naming ``name`` for a wrong number of dimensions (a 1-D
    array with the ``reshape(1, -1)`` hint, a stack of images with the flattening
    one) or columns, NaN/inf, or (``bipolar``) entries other than -1 and +1.
    Arrays already in ``xp`` stay on their device.
    """
    if type(states).__module__.startswith("scipy.sparse"):
        raise TypeError(f"{name} is a sparse matrix: sparse input is not supported; pass {name}.toarray()")
    kind = getattr(getattr(states, "dtype", None), "kind", None)
    if kind is None and not hasattr(states, "__array_namespace__"):
        kind = np.asarray(states).dtype.kind
    if kind == "O":  # numbers held as objects are numbers; anything else is refused by float()
        try:
            states = np.asarray(states, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise InputTypeError(f"{name} must be a real numeric array: {err}") from None
        kind = "f"
    if kind in ("c", "U", "S", "M", "m"):
        what = "complex values (Complex data not supported)" if kind == "c" else "non-numeric values"
        raise InputTypeError(f"{name} must be a real numeric array, got {what}")
    try:
        arr = xp.asarray(states, dtype=dtype)
    except Exception:
        arr = xp.asarray(np.asarray(_host(states), dtype=np.float64), dtype=dtype)
    if arr.ndim == 1:
        raise ValueError(f"{name} must be a 2-D array (samples x neurons), got a 1-D array of shape "
                         f"{tuple(arr.shape)}: for one pattern pass {name}.reshape(1, -1), for one "
                         f"neuron {name}.reshape(-1, 1)")
    if arr.ndim == 3:
        B, h, w = arr.shape
        raise ValueError(f"{name} must be a 2-D array (samples x neurons), got 3 dimensions {tuple(arr.shape)}: "
                         f"a stack of {h} x {w} images? Flatten each image: {name}.reshape(len({name}), -1) "
                         f"gives {h * w} features")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (samples x neurons), got {arr.ndim} dimensions")
    if arr.shape[0] < 1:
        raise ValueError(f"{name} is empty: 0 sample(s) (shape={tuple(arr.shape)}) while a minimum of 1 is required")
    if arr.shape[1] < 1:
        raise ValueError(f"{name} has no columns (neurons): 0 feature(s) (shape={tuple(arr.shape)}) while a "
                         "minimum of 1 is required.")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"{name} must have {n_features} columns (one per neuron), got {arr.shape[1]}")
    low, high = float(xp.min(arr)), float(xp.max(arr))  # NaN if any entry is; no temporaries (MNIST: ~50x faster)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"{name} contains NaN or inf")
    if bipolar:
        if not bool(xp.all((arr == 1) | (arr == -1))):
            hint = ""
            if bool(xp.any(arr == 0)):
                hint = (f": 0 is not a state; for unknown bits (a partial pattern) put random values, "
                        f"np.where({name} == 0, rng.choice([-1.0, 1.0], {name}.shape), {name})")
            raise ValueError(f"{name} must contain only -1 and +1 (bipolar states){hint}")
    elif low < -1 or high > 1:
        if low < -1 - _ROUNDING or high > 1 + _ROUNDING:
            raise ValueError(f"{name} must lie in [-1, 1] (inputs are neuron states): rescale it, e.g. "
                             f"2 * {name} / 255 - 1 for 8-bit pixels, or MinMaxScaler(feature_range=(-1, 1), "
                             "clip=True) in a scikit-learn Pipeline")
        arr = xp.clip(arr, -1.0, 1.0)  # a rescaling's rounding (1 + 2e-16) is not an error
        low, high = max(low, -1.0), min(high, 1.0)  # the clipped array's (clipping is monotone)
    return (arr, (low, high)) if return_range else arr


def check_label_types(classes, labels):
    """ValueError (scikit-learn's "Mix of label input types") when ``labels`` are text and ``classes`` numbers,
    or the other way round."""
    text = [np.asarray(a).dtype.kind in "USO" for a in (classes, labels)]
    if text[0] != text[1]:
        kinds = ("string", "number") if text[0] else ("number", "string")
        raise ValueError(f"Mix of label input types (string and number): the classifier was fitted with "
                         f"{kinds[0]} labels, y holds {kinds[1]}s")


def check_labels(y, n_samples):
    """Class labels ``y`` as a 1-D NumPy array of ``n_samples`` labels, or an error that says what ``y`` is.

    A one-hot (or bipolar one-hot) matrix is named as such, with the ``argmax`` that
    turns it into labels; a column vector (B, 1) is taken as labels.
    """
    labels = _host(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        from ._sklearn import DataConversionWarning  # noqa: PLC0415

        warnings.warn("A column-vector y was passed when a 1d array was expected: taken as y.ravel()",
                      DataConversionWarning, stacklevel=user_stacklevel())
        labels = labels[:, 0]
    if labels.ndim == 2:
        values = np.unique(labels) if labels.dtype.kind in "biuf" else None
        onehot = (values is not None and labels.shape[1] > 1 and set(values.tolist()) <= {-1, 0, 1}
                  and np.all(np.sum(labels == 1, axis=1) == 1))
        if onehot:
            raise ValueError(f"y looks one-hot encoded (shape {labels.shape}, one 1 per row): pass one class label "
                             "per row instead, y.argmax(axis=1)")
        raise ValueError(f"y must be 1-D, one class label per row of X, got shape {labels.shape}")
    labels = labels.reshape(-1)
    if labels.dtype.kind == "O":  # objects: all text, or all integers
        values = labels.tolist()
        text = [isinstance(v, str) for v in values]
        if all(text):
            labels = labels.astype(str)
        elif all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values):
            labels = labels.astype(np.int64)
        elif any(text) and all(t or isinstance(v, numbers.Number) for t, v in zip(text, values)):
            raise ValueError("Mix of label input types (string and number): y holds both; pass labels of one type")
        else:
            raise ValueError("Unknown label type: y holds objects that are neither all text nor all integers")
    if labels.dtype.kind == "f" and np.any(np.isnan(labels)):
        raise ValueError("Input y contains NaN.")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError(f"Input y contains infinity or a value too large for dtype('{labels.dtype}').")
    if labels.dtype.kind == "f" and not np.all(labels == np.round(labels)):
        raise ValueError("Unknown label type: continuous. y holds non-integer numbers; a classifier needs class "
                         "labels (integers or strings)")
    if labels.dtype.kind in "cV":
        what = "complex values (Complex data not supported)" if labels.dtype.kind == "c" else f"{labels.dtype} values"
        raise InputTypeError(f"y must hold class labels (integers or strings), got {what}")
    if n_samples is not None and labels.shape[0] != n_samples:
        raise ValueError(f"y must have one label per row of X ({n_samples}), got {labels.shape[0]}")
    return labels

