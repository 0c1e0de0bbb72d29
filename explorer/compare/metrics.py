"""Regression measures of the rMTFL paper's experiments (Sec. 6.2): nMSE and aMSE; and
the recovery of a detected set (outlier tasks, shared features) against the truth.

The paper cites [39, 10, 42] for the definitions without restating them; following Chen,
Zhou & Ye (2011): per task, nMSE_i = MSE_i / Var(y_i) and aMSE_i = MSE_i / mean(y_i^2);
both are then averaged over the tasks present.

>>> import numpy as np
>>> round(nmse(np.array([1., 2, 3, 4]), np.array([1., 2, 3, 4]), np.array([0, 0, 1, 1])), 6)
0.0
"""

from __future__ import annotations

import numpy as np

from .agreement import relationship_agreement

__all__ = ["nmse", "amse", "per_task_errors", "detection_scores", "relationship_agreement"]


def per_task_errors(y_true, y_pred, task, measure: str) -> tuple[np.ndarray, np.ndarray]:
    """Each task's normalised squared error, for ``measure`` ``"nmse"`` (MSE_i / Var(y_i))
    or ``"amse"`` (MSE_i / mean(y_i^2)).

    Returns
    -------
    tasks : ndarray of shape (k,)
        The task ids present in ``task``, sorted.
    values : ndarray of shape (k,)
        Their measures (a zero denominator counts as the smallest positive float).

    >>> per_task_errors([1., 3, 2, 2], [2., 2, 2, 2], [0, 0, 1, 1], "nmse")[1]
    array([1., 0.])
    """
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    task = np.asarray(task)
    if not (y_true.shape == y_pred.shape == task.shape) or y_true.ndim != 1:
        raise ValueError(f"y_true, y_pred and task must be 1-D of the same shape; got "
                         f"{y_true.shape}, {y_pred.shape} and {task.shape}.")
    if measure not in ("nmse", "amse"):
        raise ValueError(f"measure must be 'nmse' or 'amse'; got {measure!r}.")
    tasks, inverse = np.unique(task, return_inverse=True)
    counts = np.bincount(inverse)
    mse = np.bincount(inverse, weights=(y_true - y_pred) ** 2) / counts
    if measure == "nmse":
        centred = y_true - (np.bincount(inverse, weights=y_true) / counts)[inverse]
        denominator = np.bincount(inverse, weights=centred * centred) / counts
    else:
        denominator = np.bincount(inverse, weights=y_true * y_true) / counts
    with np.errstate(over="ignore"):   # an error over a zero variance is infinite
        return tasks, mse / np.maximum(denominator, np.finfo(float).tiny)


def nmse(y_true, y_pred, task) -> float:
    """Normalised MSE: mean over tasks of MSE_i / Var(y_i)."""
    return float(np.mean(per_task_errors(y_true, y_pred, task, "nmse")[1]))


def amse(y_true, y_pred, task) -> float:
    """Averaged MSE: mean over tasks of MSE_i / mean(y_i^2)."""
    return float(np.mean(per_task_errors(y_true, y_pred, task, "amse")[1]))


def detection_scores(estimated, true) -> dict[str, float]:
    """Precision, recall and F1 of a detected set against the truth, both boolean masks.

    The masks are what the estimators and the generators use (``outlier_tasks_`` /
    ``truth["outlier_tasks"]`` of shape (m,), ``shared_features_`` /
    ``truth["shared_features"]`` of shape (d,)). An empty detection of an empty truth scores
    1.0 everywhere.

    Returns
    -------
    dict with ``"precision"``, ``"recall"``, ``"f1"`` (floats) and ``"true_positives"``,
    ``"detected"``, ``"relevant"`` (counts).

    >>> scores = detection_scores([True, True, False, False], [True, False, True, False])
    >>> scores["precision"], scores["recall"], scores["f1"]
    (0.5, 0.5, 0.5)
    """
    estimated, true = np.asarray(estimated), np.asarray(true)
    for name, mask in (("estimated", estimated), ("true", true)):
        if mask.dtype != bool or mask.ndim != 1:
            raise ValueError(f"{name} must be a 1-D boolean mask; got dtype {mask.dtype}, "
                             f"shape {mask.shape}.")
    if estimated.shape != true.shape:
        raise ValueError(f"estimated and true must have the same shape; got {estimated.shape}"
                         f" and {true.shape}.")
    hits, detected, relevant = int(np.sum(estimated & true)), int(estimated.sum()), \
        int(true.sum())
    precision = hits / detected if detected else float(relevant == 0)
    recall = hits / relevant if relevant else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1),
            "true_positives": hits, "detected": detected, "relevant": relevant}


# ---------------------------------------------------------------- ranking (TL-TF, Sec. 5.1)
__all__ += ["average_precision", "mean_average_precision", "precision_at_k"]


def _ranking_inputs(y_true, scores, pos_label):
    relevant = np.asarray(y_true) == pos_label
    scores = np.asarray(scores, dtype=np.float64)
    if relevant.ndim != 1 or scores.shape != relevant.shape:
        raise ValueError(f"y_true and scores must be 1-D of the same shape; got "
                         f"{relevant.shape} and {scores.shape}.")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite.")
    return relevant, scores


def average_precision(y_true, scores, *, pos_label=1) -> float:
    """Average precision of a ranking by ``scores`` (Yan & Zhang 2009, Sec. 5.1):
    ``AP = 1/R sum_j (R_j / j) I_j`` over the documents sorted by decreasing score, R the
    number of relevant ones, R_j those in the top j, I_j = 1 if document j is relevant.

    Tied scores form one block (the precision at the block's end counts for each relevant
    document in it), so the value does not depend on the order of ties; without ties this
    is the paper's formula, and it equals ``sklearn.metrics.average_precision_score``.
    NaN when nothing is relevant.

    >>> average_precision([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])   # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    relevant, scores = _ranking_inputs(y_true, scores, pos_label)
    R = int(relevant.sum())
    if R == 0:
        return float("nan")
    order = np.argsort(-scores, kind="stable")
    hits = np.cumsum(relevant[order])
    ends = np.r_[np.flatnonzero(np.diff(scores[order]) != 0), scores.size - 1]  # tie blocks
    new_hits = np.diff(np.r_[0, hits[ends]])
    return float(np.sum(new_hits * hits[ends] / (ends + 1.0)) / R)


def mean_average_precision(y_true, scores, task, *, pos_label=1) -> float:
    """Mean over the tasks (queries) that have a relevant example of their
    :func:`average_precision` (the paper's Mean-AP)."""
    task = np.asarray(task)
    relevant, scores = _ranking_inputs(y_true, scores, pos_label)
    if task.shape != scores.shape:
        raise ValueError(f"task must have shape {scores.shape}; got {task.shape}.")
    values = [average_precision(relevant[task == t], scores[task == t], pos_label=True)
              for t in np.unique(task)]
    values = [v for v in values if not np.isnan(v)]
    return float(np.mean(values)) if values else float("nan")


def precision_at_k(y_true, scores, k: int, *, pos_label=1) -> float:
    """Fraction of relevant documents among the ``k`` with the highest scores (ties broken
    by position); ``k`` larger than the list counts the missing ranks as not relevant.

    >>> precision_at_k([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], 2)
    0.5
    """
    relevant, scores = _ranking_inputs(y_true, scores, pos_label)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1; got {k!r}.")
    order = np.argsort(-scores, kind="stable")[:k]
    return float(relevant[order].sum() / k)
