"""MTRL: multi-task relationship learning (Zhang & Yeung, UAI 2010), MTBoost's baseline.

It shares MTBoost's closed-form Omega update (:func:`explorer.solvers.mtboost.omega_update`).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from sklearn.utils.validation import check_is_fitted

from ..solvers.mtboost import correlation_from_covariance, omega_update, task_row_scale
from .base import (
    ConvergenceMonitor,
    LazyMapping,
    MultiTaskEstimator,
    Snapshot,
    binary_targets,
    labels_from_margin,
    n_tasks_of,
)
from .constraints import COUNT, NON_NEGATIVE, POSITIVE, RANDOM_STATE

__all__ = ["MTRL"]


class MTRL(MultiTaskEstimator):
    """Multi-task relationship learning (Zhang & Yeung, UAI 2010), logistic loss.

        min_{W, b, Omega}  sum_i mean_{j in i} c(y_j (x_j w_i + b_i))
                           + lambda_ridge/2 ||W||_F^2
                           + lambda_relation/2 tr(Omega^{-1} (W^T W + smoothing I))
        s.t. Omega >= 0, tr(Omega) = 1,

    ``W`` (d, m). Alternating: W and b by L-BFGS with Omega fixed, then Omega in closed form
    ``(W^T W + smoothing I)^{1/2} / tr(.)`` (the same update as MTBoost's Eq. 10). The
    ``smoothing`` term keeps Omega invertible; both steps are exact block minimisations of
    this one jointly convex objective, so it never increases.

    Parameters
    ----------
    lambda_ridge : float > 0, lambda_relation : float >= 0   (the paper's lambda_1, lambda_2)
    smoothing : float > 0
    max_iter : int, alternations;  tol : relative objective change
    random_state : unused (deterministic); kept for the contract

    Attributes
    ----------
    coef_ (d, m), intercept_ (m,), Omega_ (m, m), classes_, n_iter_, converged_,
    objective_history_
    """

    _estimator_type = "classifier"
    _parameter_constraints = {
        "lambda_ridge": [POSITIVE],
        "lambda_relation": [NON_NEGATIVE],
        "smoothing": [POSITIVE],
        "max_iter": [COUNT],
        "tol": [NON_NEGATIVE],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, lambda_ridge: float = 0.01, lambda_relation: float = 0.1,
                 smoothing: float = 1e-3, max_iter: int = 30, tol: float = 1e-6,
                 random_state=None):
        self.lambda_ridge = lambda_ridge
        self.lambda_relation = lambda_relation
        self.smoothing = smoothing
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit_steps(self, X, y, task) -> Iterator[Snapshot]:
        lam1, lam2 = float(self.lambda_ridge), float(self.lambda_relation)
        ridge, max_iter, tol = float(self.smoothing), int(self.max_iter), float(self.tol)
        m, d = n_tasks_of(task), X.shape[1]
        target, classes = binary_targets(y, task, m, type(self).__name__)
        scale = task_row_scale(task, m)
        omega = np.eye(m) / m
        theta = np.zeros((d + 1) * m)
        monitor = ConvergenceMonitor(type(self).__name__, tol=float(tol),
                                     max_iter=int(max_iter))
        while True:
            precision = np.linalg.inv(omega)

            def objective(flat, precision=precision):
                W, b = flat[:d * m].reshape(d, m), flat[d * m:]
                margin = np.einsum("nd,dn->n", X, W[:, task]) + b[task]
                loss = -float(scale @ log_expit(target * margin))
                g_rows = -scale * target * expit(-target * margin)
                grad_W = np.zeros((d, m))
                for i in range(m):
                    rows = task == i
                    grad_W[:, i] = X[rows].T @ g_rows[rows]
                grad_W += lam1 * W + lam2 * W @ precision
                value = loss + 0.5 * lam1 * float(np.vdot(W, W)) + 0.5 * lam2 * float(
                    np.trace(precision @ (W.T @ W + ridge * np.eye(m))))
                grad_b = np.bincount(task, weights=g_rows, minlength=m)
                return value, np.concatenate([grad_W.ravel(), grad_b])

            theta = minimize(objective, theta, jac=True, method="L-BFGS-B",
                             options={"maxiter": 500, "gtol": 1e-9}).x
            W = theta[:d * m].reshape(d, m)
            omega = omega_update(W.T @ W, ridge)
            value, _ = objective(theta, np.linalg.inv(omega))
            monitor.record(value)
            yield Snapshot(step=monitor.n_iter, objective=value,
                           matrices=LazyMapping(partial(_relationships_mtrl, omega)))
            if monitor.done:
                break
        self.coef_ = W.copy()
        self.intercept_ = theta[d * m:].copy()
        self.Omega_ = omega
        self.classes_ = classes
        monitor.finish(self)

    def decision_function(self, X, task) -> np.ndarray:
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "coef_")
        return np.einsum("nd,dn->n", X, self.coef_[:, task]) + self.intercept_[task]

    def predict(self, X, task) -> np.ndarray:
        return labels_from_margin(self.decision_function(X, task), task, self.classes_)

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"Omega", "correlation"}``, each (m, m)."""
        check_is_fitted(self, "Omega_")
        return _relationships_mtrl(self.Omega_)


def _relationships_mtrl(omega: np.ndarray) -> dict[str, np.ndarray]:
    return {"Omega": omega.copy(), "correlation": correlation_from_covariance(omega)}
