"""Zero-shot transfer to held-out tasks (Yan & Zhang 2009, Table 2 and Figure 1).

Every fourth task of a data set is held out; the models are fitted on the others and rank
all examples of each held-out task from its task features alone (TL-TF and its settings
TL-SC / TL-MC / TL-Comb through ``predict_proba_new_task``; STL, which has no model of an
unseen task, through one logistic regression pooled over the training tasks).
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from ..models.tltf import TLTF
from .metrics import mean_average_precision, precision_at_k

__all__ = ["held_out_tasks", "zero_shot_scores", "zero_shot_table", "figure1_curves",
           "VARIANTS"]

#: The paper's methods as settings of one class (STL is handled apart).
VARIANTS = {"TL-SC": {"n_clusters": 1}, "TL-MC": {"gate": "constant"},
            "TL-Comb": {"gate": "append"}, "TL-TF": {}}


def held_out_tasks(n_tasks: int) -> tuple[np.ndarray, np.ndarray]:
    """``(training tasks, held-out tasks)``: every fourth task (3, 7, 11, ...) is held out.

    >>> [t.tolist() for t in held_out_tasks(8)]
    [[0, 1, 2, 4, 5, 6], [3, 7]]
    """
    held = np.arange(3, n_tasks, 4)
    return np.setdiff1d(np.arange(n_tasks), held), held


def _check(dataset):
    if dataset.task_features is None:
        raise ValueError("zero-shot transfer needs task features; this data set has none.")
    train_tasks, held = held_out_tasks(dataset.n_tasks)
    if held.size == 0:
        raise ValueError(f"zero-shot transfer needs at least 4 tasks (every fourth is held "
                         f"out); the data set has {dataset.n_tasks}.")
    return dataset.subset(train_tasks), dataset.subset(held)


def zero_shot_scores(model, test) -> np.ndarray:
    """Scores of every example of ``test`` (rows in its order) from each task's features."""
    scores = np.empty(test.n_samples)
    for t in range(test.n_tasks):
        rows = test.task == t
        scores[rows] = model.predict_proba_new_task(test.X[rows], test.task_features[t])[:, 1]
    return scores


def _evaluate(scores, test, k: int) -> dict[str, float]:
    positive = test.y == np.unique(test.y)[-1]
    p_at_k = [precision_at_k(positive[test.task == t], scores[test.task == t], k,
                             pos_label=True) for t in range(test.n_tasks)]
    return {"mean AP": mean_average_precision(positive, scores, test.task, pos_label=True),
            f"P@{k}": float(np.mean(p_at_k))}


def _fit(params: dict, train):
    # No warnings.catch_warnings here: these fits run on worker threads (the app's), where
    # swapping the process-wide filters would clobber other threads'. A generous max_iter
    # instead: at tol 1e-4 EM needs tens to a few hundred iterations.
    return TLTF(**params).fit(train.X, train.y, train.task, task_features=train.task_features)


def zero_shot_table(dataset, *, n_clusters: int = 3, covariance: str = "full",
                    random_state=0, k: int = 10, tol: float = 1e-4, max_iter: int = 3000
                    ) -> dict[str, dict[str, float]]:
    """Mean AP and P@k on held-out tasks for STL (pooled), TL-SC, TL-MC, TL-Comb, TL-TF."""
    train, test = _check(dataset)
    pooled = LogisticRegression(max_iter=1000).fit(train.X, train.y)
    table = {"STL (pooled)": _evaluate(pooled.predict_proba(test.X)[:, 1], test, k)}
    H = min(int(n_clusters), train.n_tasks)
    for name, setting in VARIANTS.items():
        params = {"n_clusters": H, "covariance": covariance, "random_state": random_state,
                  "tol": tol, "max_iter": max_iter, **setting}
        table[name] = _evaluate(zero_shot_scores(_fit(params, train), test), test, k)
    return table


def figure1_curves(dataset, *, clusters=range(1, 7), covariance: str = "full",
                   random_state=0, tol: float = 1e-4, max_iter: int = 3000
                   ) -> dict[str, tuple[list[int], list[float]]]:
    """Zero-shot mean AP against H for TL-TF and TL-MC (the paper's Figure 1)."""
    train, test = _check(dataset)
    positive = test.y == np.unique(test.y)[-1]
    curves: dict[str, tuple[list[int], list[float]]] = {}
    for name in ("TL-TF", "TL-MC"):
        hs, values = [], []
        for H in clusters:
            if H > train.n_tasks:
                break
            params = {"n_clusters": int(H), "covariance": covariance, "tol": tol,
                      "max_iter": max_iter, "random_state": random_state, **VARIANTS[name]}
            scores = zero_shot_scores(_fit(params, train), test)
            hs.append(int(H))
            values.append(mean_average_precision(positive, scores, test.task, pos_label=True))
        curves[name] = (hs, values)
    return curves
