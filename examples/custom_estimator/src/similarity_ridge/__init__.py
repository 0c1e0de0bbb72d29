"""A toy multi-task ridge with a learned task-similarity matrix (an example of a user's
estimator served by MTL Explorer: see the package's README).

Each task t has weights ``w_t`` (d,) and an intercept. The fit alternates two steps:

1. the similarity ``S = cosine(W)`` of the current weights (m x m);
2. every ``w_t`` in closed form for the ridge loss of its own task plus a pull towards the
   tasks it resembles: ``coupling * sum_s max(S_ts, 0) ||w_t - w_s||^2``.

Tasks whose weights point the same way share their data; opposite and unrelated ones do not.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from explorer.models.constraints import Integral, Interval, Real, validate_parameters

__all__ = ["TaskSimilarityRidge"]


def cosine(W: np.ndarray) -> np.ndarray:
    """Cosine of the columns of ``W`` (d, m): an (m, m) matrix, 1 on the diagonal."""
    norms = np.linalg.norm(W, axis=0)
    unit = W / np.where(norms > 0, norms, 1.0)
    similarity = unit.T @ unit
    np.fill_diagonal(similarity, 1.0)
    return similarity


class TaskSimilarityRidge(RegressorMixin, BaseEstimator):
    """Multi-task ridge whose tasks borrow from the tasks they resemble (learned cosine).

    Parameters
    ----------
    alpha : float >= 0
        Ridge penalty of each task's weights.
    coupling : float >= 0
        Strength of the pull between similar tasks.
    n_iter : int >= 1
        Alternations of (similarity, weights); one snapshot each.
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "coupling": [Interval(Real, 0, 100, closed="both")],
        "n_iter": [Interval(Integral, 1, 200, closed="both")],
    }

    def __init__(self, *, alpha: float = 1.0, coupling: float = 1.0, n_iter: int = 20):
        self.alpha = alpha
        self.coupling = coupling
        self.n_iter = n_iter

    def fit(self, X, y, task):
        for _ in self.fit_iter(X, y, task):
            pass
        return self

    def fit_iter(self, X, y, task):
        """Fit step by step: yields a snapshot per alternation (its ``step``, ``objective``
        and ``matrices={"similarity": (m, m)}``)."""
        validate_parameters(self)   # the explorer's check of the declaration above
        X, y, task = np.asarray(X, float), np.asarray(y, float), np.asarray(task, int)
        m, d = int(task.max()) + 1, X.shape[1]
        centred = []
        for t in range(m):
            rows = task == t
            x_mean, y_mean = X[rows].mean(axis=0), y[rows].mean()
            centred.append((X[rows] - x_mean, y[rows] - y_mean, x_mean, y_mean, rows.sum()))
        W = np.zeros((d, m))
        for step in range(1, self.n_iter + 1):
            S = cosine(W) if step > 1 else np.eye(m)
            pull = np.maximum(S, 0.0)
            np.fill_diagonal(pull, 0.0)
            W_new = np.empty_like(W)
            for t, (Xt, yt, _, _, n) in enumerate(centred):
                weight = self.coupling * pull[t].sum()
                lhs = Xt.T @ Xt / n + (self.alpha / n + weight) * np.eye(d)
                rhs = Xt.T @ yt / n + self.coupling * W @ pull[t]
                W_new[:, t] = np.linalg.solve(lhs, rhs)
            W = W_new
            self.coef_ = W
            self.intercept_ = np.array([c[3] - c[2] @ W[:, t] for t, c in enumerate(centred)])
            self.n_tasks_, self.n_iter_ = m, step
            yield Snapshot(step, self._objective(centred, W, pull),
                           {"similarity": cosine(W)})

    def _objective(self, centred, W, pull) -> float:
        loss = sum(np.mean((yt - Xt @ W[:, t]) ** 2) for t, (Xt, yt, *_) in enumerate(centred))
        spread = ((W[:, :, None] - W[:, None, :]) ** 2).sum(axis=0)
        return float(loss + self.alpha * (W ** 2).sum() + 0.5 * self.coupling
                     * (pull * spread).sum())

    def predict(self, X, task):
        X, task = np.asarray(X, float), np.asarray(task, int)
        return np.einsum("nd,dn->n", X, self.coef_[:, task]) + self.intercept_[task]

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"similarity": (m, m)}``: the cosine of the learned per-task weights."""
        return {"similarity": cosine(self.coef_)}


class Snapshot:
    """One step of the fit, as the explorer reads it (``step``, ``objective``,
    ``matrices``; ``info`` empty): the package needs nothing from the explorer."""

    __slots__ = ("step", "objective", "matrices", "info")

    def __init__(self, step: int, objective: float, matrices: dict):
        self.step, self.objective, self.matrices, self.info = step, objective, matrices, {}
