r"""Scores on plain label arrays: accuracy, confusion matrix, macro-F1 (no scikit-learn needed).

The batched versions behind the sweeps (G networks at once, labels 0..C-1, from confusion
matrices: :func:`damlite.classification.macro_f1_from_confusion`) live in
:mod:`damlite.classification`; these take any labels, one network's predictions.

.. math::

    \begin{aligned}
    F_1^{(c)} &= \frac{2\,TP_c}{2\,TP_c + FP_c + FN_c},\\
    \text{macro-}F_1 &= \frac{1}{C}\sum_c F_1^{(c)}
    \end{aligned}
"""
from __future__ import annotations

import numpy as np

from .backend import to_numpy
from .classification import confusion_matrices
from .classification import macro_f1_from_confusion

__all__ = ["accuracy", "confusion_matrix", "macro_f1"]


def _labels(y_true, y_pred, labels):
    y_true = np.asarray(to_numpy(y_true)).reshape(-1)
    y_pred = np.asarray(to_numpy(y_pred)).reshape(-1)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred must have the same length, got {y_true.shape[0]} and {y_pred.shape[0]}")
    if y_true.size == 0:
        raise ValueError("y_true is empty")
    classes = np.unique(np.concatenate([y_true, y_pred])) if labels is None else np.asarray(labels)
    index = {c: i for i, c in enumerate(classes.tolist())}
    missing = sorted({v for v in y_true.tolist() if v not in index})
    if missing:
        raise ValueError(f"y_true holds labels not in labels: {missing[:5]}")
    # a prediction outside ``labels`` counts in no column (it lowers recall, no class's precision)
    true_index = np.array([index[v] for v in y_true.tolist()])
    pred_index = np.array([index.get(v, -1) for v in y_pred.tolist()])
    return classes, true_index, pred_index


def confusion_matrix(y_true, y_pred, *, labels=None):
    """Confusion matrix: entry [i, j] counts items of class ``labels[i]`` predicted as ``labels[j]``.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (B,)
        True and predicted labels (integers or strings), any array library.
    labels : array_like, optional
        The classes and their order; default: every label seen, sorted.

    Returns
    -------
    ndarray of shape (C, C)

    Examples
    --------
    >>> from damlite.metrics import confusion_matrix
    >>> confusion_matrix(["a", "b", "b"], ["a", "a", "b"])
    array([[1, 0],
           [1, 1]])
    """
    classes, t, p = _labels(y_true, y_pred, labels)
    return confusion_matrices(t, p, len(classes))[0]


def macro_f1(y_true, y_pred, *, labels=None):
    r"""Macro-averaged F1: the mean over classes of :math:`2 TP_c / (2 TP_c + FP_c + FN_c)`.

    A class with no true and no predicted items scores 0 (scikit-learn's
    ``f1_score(average="macro", zero_division=0)``).

    Parameters
    ----------
    y_true, y_pred : array_like of shape (B,)
        True and predicted labels (integers or strings), any array library.
    labels : array_like, optional
        The classes averaged over; default: every label seen.

    Returns
    -------
    float

    Examples
    --------
    >>> from damlite.metrics import macro_f1
    >>> round(macro_f1([0, 0, 1, 1], [0, 1, 1, 1]), 4)
    0.7333
    """
    return float(macro_f1_from_confusion(confusion_matrix(y_true, y_pred, labels=labels)))


def accuracy(y_true, y_pred):
    """Fraction of items whose predicted label is the true one.

    Examples
    --------
    >>> from damlite.metrics import accuracy
    >>> accuracy([1, 2, 3, 4], [1, 2, 0, 4])
    0.75
    """
    _, t, p = _labels(y_true, y_pred, None)
    return float(np.mean(t == p))
