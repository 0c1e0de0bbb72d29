"""The comparison harness's metrics: each a name, a direction and a per-task evaluation.

The measures themselves live in :mod:`explorer.compare.metrics` (nMSE / aMSE of the rMTFL
paper, AP / Mean-AP / P@k of the TL-TF paper); this module only says how the harness
applies them to a fitted estimator on one test split: a value per task and an "average"
value (the mean over the tasks, as the papers' tables report, except ``"ap"`` whose average
is the AP of the pooled ranking of all test examples).

================ ======================= =============== =====================================
name             per task                better          needs
================ ======================= =============== =====================================
``error_rate``   fraction misclassified  lower           classification
``accuracy``     1 - error rate          higher          classification
``nmse``         MSE_t / Var(y_t)        lower           regression
``amse``         MSE_t / mean(y_t^2)     lower           regression
``ap``           AP of the task's        higher          binary tasks, ``decision_function``
                 ranking                                 or ``predict_proba``
``mean_ap``      AP (average: Mean-AP)   higher          as ``ap``
``p_at_k``       precision at k=10       higher          as ``ap``; ``"p_at_5"`` sets k
================ ======================= =============== =====================================

A callable ``metric(y_true, y_pred) -> float`` is applied per task to the predictions; it is
a loss (lower is better) unless it has an attribute ``greater_is_better = True``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..parameters import describe
from .metrics import average_precision, per_task_errors, precision_at_k

__all__ = ["Metric", "METRIC_NAMES", "resolve_metrics", "evaluate", "estimator_outputs",
           "score_outputs"]

METRIC_NAMES = ("auto", "error_rate", "accuracy", "nmse", "amse", "mean_ap", "ap", "p_at_k")
_P_AT = re.compile(r"^p_at_([1-9][0-9]{0,5})$")


@dataclass(frozen=True)
class Metric:
    """One measure as the harness applies it.

    Attributes
    ----------
    name : str
        The value of the frame's ``metric`` column.
    greater_is_better : bool
    needs : {"predictions", "scores"}
        What the estimator provides: labels/values from ``predict`` or ranking scores.
    kind : {"classification", "regression", None}
        The data kind it applies to (None: any).
    k : int
        The cut-off of ``p_at_k``.
    function : callable or None
        A user's ``f(y_true, y_pred) -> float``.
    """

    name: str
    greater_is_better: bool
    needs: str = "predictions"
    kind: str | None = None
    k: int = 10
    function: Callable | None = None


def _one_metric(metric, kind: str) -> Metric:
    if callable(metric):
        name = getattr(metric, "__name__", type(metric).__name__)
        return Metric(name, bool(getattr(metric, "greater_is_better", False)),
                      function=metric)
    if not isinstance(metric, str):
        raise ValueError(f"metric must be one of {list(METRIC_NAMES)}, 'p_at_<k>' or a "
                         f"callable; got {describe(metric)}.")
    if metric == "auto":
        metric = "error_rate" if kind == "classification" else "nmse"
    match = _P_AT.match(metric)
    known = {
        "error_rate": Metric("error_rate", False, kind="classification"),
        "accuracy": Metric("accuracy", True, kind="classification"),
        "nmse": Metric("nmse", False, kind="regression"),
        "amse": Metric("amse", False, kind="regression"),
        "ap": Metric("ap", True, "scores", "classification"),
        "mean_ap": Metric("mean_ap", True, "scores", "classification"),
        "p_at_k": Metric("p_at_k", True, "scores", "classification", 10),
    }
    if match:
        found = Metric(metric, True, "scores", "classification", int(match.group(1)))
    elif metric in known:
        found = known[metric]
    else:
        raise ValueError(f"metric must be one of {list(METRIC_NAMES)}, 'p_at_<k>' or a "
                         f"callable; got {describe(metric)}.")
    if found.kind != kind:
        raise ValueError(f"metric {metric!r} needs {found.kind} data; the data set is "
                         f"{kind}.")
    return found


def resolve_metrics(metric, kind: str) -> list[Metric]:
    """``metric`` (a name, a callable, or a non-empty list of them) -> list of Metric.

    >>> [m.name for m in resolve_metrics("auto", "regression")]
    ['nmse']
    >>> resolve_metrics("rmse", "regression")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: metric must be one of ['auto', 'error_rate', ...; got 'rmse'.
    """
    many = isinstance(metric, Sequence) and not isinstance(metric, str)
    items = list(metric) if many else [metric]
    if not items:
        raise ValueError("metric must name at least one metric; got an empty list.")
    metrics = [_one_metric(item, kind) for item in items]
    names = [m.name for m in metrics]
    if len(set(names)) != len(names):
        raise ValueError(f"metric must name each metric once; got {names}.")
    return metrics


def ranking_scores(estimator, X, task) -> np.ndarray:
    """Scores that rank a binary task's examples (higher: more likely the larger label)."""
    if hasattr(estimator, "decision_function"):
        scores = np.asarray(estimator.decision_function(X, task), dtype=np.float64)
    elif hasattr(estimator, "predict_proba"):
        scores = np.asarray(estimator.predict_proba(X, task), dtype=np.float64)
    else:
        raise ValueError(f"ranking metrics need decision_function or predict_proba; "
                         f"{type(estimator).__name__} has neither.")
    if scores.ndim == 2:
        if scores.shape[1] != 2:
            raise ValueError(f"ranking metrics need binary tasks; {type(estimator).__name__}"
                             f" gave scores of shape {scores.shape}.")
        scores = scores[:, 1]
    return scores


def _task_value(metric: Metric, y, prediction, positive) -> float:
    if metric.function is not None:
        return float(metric.function(y, prediction))
    relevant = y == positive
    if metric.name in ("ap", "mean_ap"):
        return average_precision(relevant, prediction, pos_label=True)
    return precision_at_k(relevant, prediction, metric.k, pos_label=True)


def evaluate(metrics: Sequence[Metric], estimator, X, y, task, positive_labels=None
             ) -> dict[str, tuple[dict[int, float], float]]:
    """Per-task and average value of each metric for a fitted estimator on test rows.

    Parameters
    ----------
    metrics : list of Metric
    estimator : fitted multi-task estimator
    X : ndarray of shape (n_samples, n_features)
    y, task : ndarray of shape (n_samples,)
    positive_labels : ndarray of shape (n_tasks,), optional
        Each task's relevant label for the ranking metrics (its larger label).

    Returns
    -------
    dict metric name -> (dict task id -> value, average); see :func:`score_outputs`.
    """
    return score_outputs(metrics, y, task, *estimator_outputs(metrics, estimator, X, task),
                         positive_labels)


def estimator_outputs(metrics: Sequence[Metric], estimator, X, task
                      ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(predictions, scores)`` of a fitted estimator on rows ``X`` of tasks ``task``, each
    of shape (n_samples,), or None when no metric needs it."""
    predictions = scores = None
    if any(m.needs == "predictions" for m in metrics):
        predictions = np.asarray(estimator.predict(X, task))
    if any(m.needs == "scores" for m in metrics):
        scores = ranking_scores(estimator, X, task)
    return predictions, scores


def score_outputs(metrics: Sequence[Metric], y, task, predictions, scores,
                  positive_labels=None) -> dict[str, tuple[dict[int, float], float]]:
    """Per-task and average value of each metric from predictions / ranking scores (as
    :func:`estimator_outputs` gives them; the inner cross-validation passes the pooled
    out-of-fold ones).

    Returns
    -------
    dict metric name -> (dict task id -> value, average). Tasks without rows are absent;
    the average is the mean over the tasks present (NaN-free values only), or the pooled AP
    for ``"ap"``.
    """
    present = np.unique(task)
    out = {}
    for metric in metrics:
        values = predictions if metric.needs == "predictions" else scores
        positive = None
        per_task: dict[int, float] = {}
        if metric.function is None and metric.name in ("nmse", "amse"):
            tasks, errors = per_task_errors(y, values, task, metric.name)
            per_task = dict(zip(tasks.tolist(), errors.tolist(), strict=True))
        elif metric.function is None and metric.name in ("error_rate", "accuracy"):
            tasks, inverse = np.unique(task, return_inverse=True)
            wrong = np.bincount(inverse, weights=y != values) / np.bincount(inverse)
            rates = wrong if metric.name == "error_rate" else 1.0 - wrong
            per_task = dict(zip(tasks.tolist(), rates.tolist(), strict=True))
        else:
            for t in present:
                rows = task == t
                if positive_labels is not None:
                    positive = positive_labels[t]
                per_task[int(t)] = _task_value(metric, y[rows], values[rows], positive)
        finite = [v for v in per_task.values() if not np.isnan(v)]
        average = float(np.mean(finite)) if finite else float("nan")
        if metric.function is None and metric.name == "ap":
            relevant = y == np.asarray(positive_labels)[task]
            average = average_precision(relevant, values, pos_label=True)
        out[metric.name] = (per_task, average)
    return out
