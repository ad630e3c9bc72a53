"""What a warm start continues: checked before ``fit(warm_start=True)`` touches the memories.

A warm fit continues the memories of an earlier fit (or of an assignment to ``memories_``). It can only
continue the same network: the same kind of fit (an associative memory, ``fit(X)``, or a classifier,
``fit(X, y)``), the same number of memories K and of features, the same interaction, n, variant and
dtype. Anything else is another network, and :func:`check_warm_start` says in one line what changed and
how to start cold.
"""
from __future__ import annotations

import numpy as np

__all__ = ["FITTED_PARAMS", "check_unchanged", "check_warm_start", "kind", "require_kind"]

#: Parameters the memories depend on: changing one after fit makes them another network's.
FITTED_PARAMS = ("variant", "interaction", "n", "epsilon", "leak", "dtype")

_COLD = "or set_params(warm_start=False) to start cold"


def _kind(classifier):
    return "a classifier (fit(X, y))" if classifier else "an associative memory (fit(X))"


def check_warm_start(est, X, y):
    """ValueError when a warm fit of ``est`` on (X, y) cannot continue its memories; True when it continues.

    Returns False when there is nothing to continue (no memories yet): the fit starts cold.
    """
    if not hasattr(est, "_memories"):
        return False
    K, N = est._memories.shape
    classifier = hasattr(est, "classes_")
    if classifier != (y is not None):
        raise ValueError(f"warm_start=True continues {_kind(classifier)}, and this call is "
                         f"fit(X{', y' if y is not None else ''}), which trains {_kind(not classifier)}: "
                         "set_params(warm_start=False) to start cold")
    if est.n_memories != K:
        raise ValueError(f"warm_start=True continues {K} memories, and n_memories is now {est.n_memories}: "
                         f"set_params(n_memories={K}) to continue, {_COLD} with {est.n_memories}")
    fitted = getattr(est, "_fitted_params", None) or {}
    changed = [f"{k} {fitted[k]!r} -> {getattr(est, k)!r}" for k in FITTED_PARAMS
               if k in fitted and getattr(est, k) != fitted[k]]
    if changed:
        back = ", ".join(f"{k}={fitted[k]!r}" for k in FITTED_PARAMS if k in fitted and getattr(est, k) != fitted[k])
        raise ValueError(f"warm_start=True continues memories fitted with other parameters ({'; '.join(changed)}): "
                         f"set_params({back}) to continue, {_COLD}")
    width = np.shape(X)[1] if len(np.shape(X)) == 2 else None
    expected = N - (len(est.classes_) if classifier else 0)
    if width is not None and width != expected:
        raise ValueError(f"warm_start=True continues memories of {expected} features, and X has {width}: "
                         f"fit on X of {expected} columns to continue, {_COLD}")
    return True


def remember_params(est):
    """Record the parameters the memories were fitted (or assigned) under (:func:`check_unchanged` compares)."""
    est._fitted_params = {k: getattr(est, k) for k in FITTED_PARAMS}


def check_unchanged(est):
    """ValueError when a parameter the memories depend on changed since they were set (fit or assignment)."""
    fitted = getattr(est, "_fitted_params", None)
    if fitted:
        changed = [f"{k}: {fitted[k]!r} -> {getattr(est, k)!r}" for k in FITTED_PARAMS if getattr(est, k) != fitted[k]]
        if changed:
            raise ValueError(f"parameters changed since the memories were set ({'; '.join(changed)}): "
                             "call fit() again, or set them back")


def kind(est):
    """What a fitted estimator is, in words."""
    return ("a classifier (fitted with labels y)" if hasattr(est, "classes_") else
            "an associative memory (fitted without labels)")


def require_kind(est, classifier, method):
    """A ValueError naming what the model is when ``method`` is the other kind's."""
    if classifier and not hasattr(est, "classes_"):
        raise ValueError(f"{method}() needs a classifier, and this DenseAssociativeMemory is {kind(est)}: "
                         "recall(X) returns the recalled patterns and score(X) the fraction of bits recovered; "
                         "fit(X, y) trains a classifier")
    if not classifier and hasattr(est, "classes_"):
        raise ValueError(f"{method}() is for an associative memory, and this DenseAssociativeMemory is "
                         f"{kind(est)}: predict(X) returns class labels and score(X, y) the accuracy")
