"""Regression measures of the rMTFL paper's experiments (Sec. 6.2): nMSE and aMSE.

The paper cites [39, 10, 42] for the definitions without restating them; following Chen,
Zhou & Ye (2011): per task, nMSE_i = MSE_i / Var(y_i) and aMSE_i = MSE_i / mean(y_i^2);
both are then averaged over the tasks present.

>>> import numpy as np
>>> round(nmse(np.array([1., 2, 3, 4]), np.array([1., 2, 3, 4]), np.array([0, 0, 1, 1])), 6)
0.0
"""

from __future__ import annotations

import numpy as np

__all__ = ["nmse", "amse"]


def _per_task(y_true, y_pred, task, denominator) -> float:
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    task = np.asarray(task)
    if not (y_true.shape == y_pred.shape == task.shape) or y_true.ndim != 1:
        raise ValueError(f"y_true, y_pred and task must be 1-D of the same shape; got "
                         f"{y_true.shape}, {y_pred.shape} and {task.shape}.")
    values = []
    for t in np.unique(task):
        rows = task == t
        mse = np.mean((y_true[rows] - y_pred[rows]) ** 2)
        values.append(mse / max(denominator(y_true[rows]), np.finfo(float).tiny))
    return float(np.mean(values))


def nmse(y_true, y_pred, task) -> float:
    """Normalised MSE: mean over tasks of MSE_i / Var(y_i)."""
    return _per_task(y_true, y_pred, task, np.var)


def amse(y_true, y_pred, task) -> float:
    """Averaged MSE: mean over tasks of MSE_i / mean(y_i^2)."""
    return _per_task(y_true, y_pred, task, lambda v: np.mean(v * v))
