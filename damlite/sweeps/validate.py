"""What a result line can hold: each task's bounds, checked by every reader and by the writer.

A result line that is well formed (:func:`damlite.sweeps.resultfiles.read_results` checks its
shape) can still hold numbers its task cannot produce: a hand edit, a bad merge, a bug. Such a
line is *impossible*, and nothing is graded from it. :func:`line_problem` says why a line is
impossible (its record, field and value against the bound), or None:

* the block's settings within the task's bounds (``N``, ``patterns``, ``memories``, ``epochs``
  ... integers >= 1; ``lr_decay`` in (0, 1]; ``momentum`` in [0, 1); ...);
* ``finite`` a bool; where it is true, the task's metric a finite number; where false, none;
* autoassociative: ``distance`` (and the ``distance_*`` of other relaxations) within
  [0, 2 sqrt(N)], the largest distance between two vectors of N entries +-1;
  ``exact_fraction``, ``converged_fraction`` and ``inactive_memories`` in [0, 1]; a distance
  of 0 exactly when every pattern is recalled (``exact_fraction`` 1), and at least
  2 (1 - ``exact_fraction``) (a pattern recalled with one wrong entry is 2 away);
  ``final_loss`` >= 0; ``failed_epoch`` an integer in [-1, epochs]; ``sweeps`` in [0, max_sweeps];
* MNIST: ``f1``, ``accuracy``, ``test_f1``, ``test_accuracy`` and every entry of
  ``f1_curve`` and ``accuracy_curve`` in [0, 1]; ``test_confusion`` counts >= 0.

Readers refuse an impossible line (:class:`InvalidRecord`, naming the file, line, block and
field) unless the caller skips such lines (:func:`skipping_invalid`, the command line's
``--skip-invalid``), which then leaves their blocks out, says so and lists them.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import numbers


__all__ = ["line_problem", "block_problem", "record_problem", "skipping_invalid", "InvalidRecord"]

class ResultFileError(RuntimeError):
    """A result file or its directory cannot be used; the message says what to do."""


#: Relative slack on a bound (2 sqrt(N) computed in floating point by two programs).
_SLACK = 1e-9


class InvalidRecord(ResultFileError):
    """A result line holds numbers its task cannot produce; the message names file, line, block and field."""


# ------------------------------------------------------------------ one value
def _is_number(v) -> bool:
    t = type(v)
    return t is float or t is int or (t is not bool and isinstance(v, numbers.Real))


def _fmt(v) -> str:
    return repr(v) if not isinstance(v, float) else f"{v:.10g}"


def _in(field, v, lo, hi, what="", *, integer=False, none=False, open_lo=False, open_hi=False):
    """Why ``v`` is not a number in the interval (None if it is)."""
    t = type(v)
    if (t is int or (t is float and not integer)) and (lo < v < hi or (v == lo and not open_lo) or (
            v == hi and not open_hi)) and (t is int or math.isfinite(v)):
        return None  # the common case, fast
    if v is None and none:
        return None
    kind = "an integer" if integer else "a number"
    if not _is_number(v) or (integer and not isinstance(v, numbers.Integral)) or math.isnan(v):
        return f"{field!r} is {v!r}, not {kind}"
    slack = 0.0 if integer else _SLACK * max(1.0, abs(lo) if math.isfinite(lo) else 0.0,
                                              abs(hi) if math.isfinite(hi) else 0.0)
    below = v <= lo - slack if open_lo else v < lo - slack
    above = v >= hi + slack if open_hi else v > hi + slack
    if below or above or (math.isinf(v) and not (math.isinf(lo) or math.isinf(hi))):
        left, right = "(" if open_lo else "[", ")" if open_hi else "]"
        return f"{field!r} is {_fmt(v)}, outside {left}{_fmt(lo)}, {_fmt(hi)}{right}{what}"
    return None


# ----------------------------------------------------------------- settings
#: setting -> (low, high, integer, open low, open high): the bounds a block's setting must keep.
_SETTINGS = {
    "N": (1, math.inf, True, False, False),
    "patterns": (1, math.inf, True, False, False),
    "memories": (1, math.inf, True, False, False),
    "epochs": (1, math.inf, True, False, False),
    "max_sweeps": (1, math.inf, True, False, False),
    "batch_size": (1, math.inf, True, False, False),
    "eval_every": (1, math.inf, True, False, False),
    "validation_size": (0, math.inf, True, False, False),
    "error_exponent": (1, math.inf, False, False, False),
    "lr_decay": (0.0, 1.0, False, True, False),
    "momentum": (0.0, 1.0, False, False, True),
    "init_std": (0.0, math.inf, False, False, True),
    "epsilon": (0.0, math.inf, False, False, True),
}


def block_problem(block):
    """Why ``block``'s settings are outside its task's bounds (None if they are within)."""
    for name, (lo, hi, integer, open_lo, open_hi) in _SETTINGS.items():
        if name in block.options:
            why = _in(name, block.options[name], lo, hi, integer=integer, open_lo=open_lo, open_hi=open_hi)
            if why is not None:
                return f"its setting {why}"
    return None


# ------------------------------------------------------------------ records
def _finite_metric(block, rec, metric):
    if "finite" in rec and not isinstance(rec["finite"], bool):
        return f"'finite' is {rec['finite']!r}, not true or false"
    if rec.get("finite") is True and metric is not None:
        v = rec.get(metric)
        if not _is_number(v) or not math.isfinite(v):
            return f"{metric!r} is {v!r} where 'finite' is true (a finite number is expected)"
    if rec.get("finite") is False and metric is not None:
        v = rec.get(metric)
        if v is not None and not (_is_number(v) and math.isnan(v)):
            return f"{metric!r} is {_fmt(v)} where 'finite' is false (a network that failed has no {metric})"
    return None


def _autoassociative(block, rec):
    N = block.options.get("N", rec.get("N"))  # block.options: a dict made once per line (line_problem)
    if not (_is_number(N) and N >= 1):
        return None  # block_problem refuses it
    top = 2.0 * math.sqrt(N)
    what = f" (2 sqrt(N) = {top:.6g}: the largest distance between two vectors of N = {N} entries +-1)"
    for field in ("distance", "distance_sync", "distance_zero_minus", "distance_zero_keep"):
        if field in rec:
            why = _in(field, rec[field], 0.0, top, what, none=True)
            if why:
                return why
    for field in ("exact_fraction", "converged_fraction", "inactive_memories"):
        if field in rec:
            why = _in(field, rec[field], 0.0, 1.0, none=True)
            if why:
                return why
    d, ex = rec.get("distance"), rec.get("exact_fraction")
    if _is_number(d) and _is_number(ex):
        if (d == 0) != (ex == 1):
            return (f"'distance' is {_fmt(d)} with 'exact_fraction' {_fmt(ex)}: a distance of 0 means every "
                    f"pattern is recalled exactly, and only then")
        if d < 2.0 * (1.0 - ex) * (1 - _SLACK):
            return (f"'distance' is {_fmt(d)}, below 2 (1 - exact_fraction) = {_fmt(2.0 * (1.0 - ex))}: a "
                    f"pattern not recalled exactly is at least 2 away")
    if "final_loss" in rec:
        why = _in("final_loss", rec["final_loss"], 0.0, math.inf, none=True)
        if why:
            return why
    epochs = block.options.get("epochs")
    if "failed_epoch" in rec:
        why = _in("failed_epoch", rec["failed_epoch"], -1, epochs if _is_number(epochs) else math.inf,
                  integer=True)
        if why:
            return why
    sweeps = block.options.get("max_sweeps")
    if "sweeps" in rec:
        why = _in("sweeps", rec["sweeps"], 0, sweeps if _is_number(sweeps) else math.inf, integer=True)
        if why:
            return why
    return None


def _mnist(block, rec):
    for field in ("f1", "accuracy", "test_f1", "test_accuracy"):
        if field in rec:
            why = _in(field, rec[field], 0.0, 1.0, none=True)
            if why:
                return why
    for field in ("f1_curve", "accuracy_curve"):
        curve = rec.get(field)
        if curve is None:
            continue
        if not isinstance(curve, list):
            return f"{field!r} is a {type(curve).__name__}, not a list"
        for i, v in enumerate(curve):
            if _is_number(v) and math.isnan(v):  # a network that failed: no score
                continue
            why = _in(f"{field}[{i}]", v, 0.0, 1.0, none=True)
            if why:
                return why
    cm = rec.get("test_confusion")
    if cm is not None:
        if not (isinstance(cm, list) and all(isinstance(row, list) for row in cm)):
            return "'test_confusion' is not a list of rows"
        for i, row in enumerate(cm):
            for j, v in enumerate(row):
                why = _in(f"test_confusion[{i}][{j}]", v, 0, math.inf, integer=True)
                if why:
                    return why
    for field in ("n_train", "n_val"):
        if field in rec:
            why = _in(field, rec[field], 0, math.inf, integer=True)
            if why:
                return why
    if "failed_epoch" in rec:
        epochs = block.options.get("epochs")
        why = _in("failed_epoch", rec["failed_epoch"], -1, epochs if _is_number(epochs) else math.inf,
                  integer=True)
        if why:
            return why
    return None


#: task -> its records' own bounds (a task not named here has the checks every task has).
_TASKS = {"autoassociative": _autoassociative, "mnist": _mnist}


def record_problem(block, rec, metric=None):
    """Why record ``rec`` of ``block`` holds a value its task cannot produce (None if it holds none)."""
    return _finite_metric(block, rec, metric) or (_TASKS[block.task](block, rec) if block.task in _TASKS else None)


def line_problem(block, records, metric=None):
    """Why a line of ``block`` with ``records`` is impossible: "record g (1/T = .., lr = .., repeat r): why",
    or None. Assumes the line's shape was checked (one record per network, each a dict)."""
    why = block_problem(block)
    if why:
        return why
    block = _Settled(block)
    for g, rec in enumerate(records):
        why = record_problem(block, rec, metric)
        if why:
            return (f"record {g} (repeat {rec.get('repeat')}, 1/T = {_fmt(rec.get('inv_temperature'))}, "
                    f"lr = {_fmt(rec.get('learning_rate'))}): {why}")
    return None


class _Settled:
    """A block whose ``options`` dict is made once (a Block makes it anew at each access)."""

    def __init__(self, block):
        self.task, self.options = block.task, block.options


# ------------------------------------------------------------------- policy
_SKIPPED = contextvars.ContextVar("damlite_skipped_invalid", default=None)


@contextlib.contextmanager
def skipping_invalid():
    """Within this context readers skip impossible lines (their blocks are then missing) instead of
    refusing the file; yields the list of what they skipped: ``(file, line number, key, why)``."""
    token = _SKIPPED.set([])
    try:
        yield _SKIPPED.get()
    finally:
        _SKIPPED.reset(token)


def skipped_list():
    """The list of skipped lines when readers skip impossible lines here (:func:`skipping_invalid`), else None."""
    return _SKIPPED.get()
