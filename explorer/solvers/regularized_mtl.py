"""The smooth problem of regularized MTL (Evgeniou & Pontil, KDD 2004) on stacked tasks.

    f(w_0, V, b) = sum_t 1/(m n_t) sum_{i in t} loss(y_i, x_i^T (w_0 + v_t) + b_t)
                   + lambda_deviation (1/m) sum_t ||v_t||^2 + lambda_common ||w_0||^2

with the squared loss ``(y - f)^2`` or the logistic loss ``log(1 + exp(-y f))`` (y in
{-1, +1}). Per-task products go through :class:`~explorer.solvers.multitask_least_squares.
StackedTasks` (the same layer the rMTFL family uses); no (dm x dm) matrix is formed.

The parameters are packed in one array ``theta`` of shape (d + 1, m + 1):
``theta[:d, 0] = w_0``, ``theta[:d, 1:] = V``, ``theta[d, 1:] = b`` and ``theta[d, 0] = 0``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import expit, log_expit

from .multitask_least_squares import StackedTasks

__all__ = ["RegularizedMTLProblem", "pack", "unpack"]


def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(w_0 (d,), V (d, m), b (m,))`` views of a packed ``theta`` (d + 1, m + 1)."""
    d = theta.shape[0] - 1
    return theta[:d, 0], theta[:d, 1:], theta[d, 1:]


def pack(w0: np.ndarray, V: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Inverse of :func:`unpack`: a new (d + 1, m + 1) array."""
    d, m = V.shape
    theta = np.zeros((d + 1, m + 1))
    theta[:d, 0], theta[:d, 1:], theta[d, 1:] = w0, V, b
    return theta


class RegularizedMTLProblem:
    """Value, gradient and a Lipschitz lower bound of ``f`` above.

    Parameters
    ----------
    data : StackedTasks
        Built with ``normalize=False, center=False``; its ``y`` is the target (+-1 for the
        logistic loss).
    loss : {"logistic", "squared"}
    lambda_deviation, lambda_common : float
    fit_intercept : bool
        When False the intercept row of the gradient stays 0 (so ``b`` stays at its start).
    """

    def __init__(self, data: StackedTasks, *, loss: str, lambda_deviation: float,
                 lambda_common: float, fit_intercept: bool):
        self.data = data
        self.logistic = loss == "logistic"
        self.lam_dev = float(lambda_deviation) / data.m
        self.lam_common = float(lambda_common)
        self.fit_intercept = bool(fit_intercept)

    def _margins(self, theta: np.ndarray) -> np.ndarray:
        w0, V, b = unpack(theta)
        f = self.data.margins(w0[:, None] + V)
        return f + b[self.data.row_task] if self.fit_intercept else f

    def _ridge(self, theta: np.ndarray) -> float:
        w0, V, _ = unpack(theta)
        return self.lam_dev * float(np.vdot(V, V)) + self.lam_common * float(w0 @ w0)

    def _loss_terms(self, f: np.ndarray) -> np.ndarray:
        y = self.data.y
        if self.logistic:
            return -log_expit(y * f)
        r = f - y
        return r * r

    def value(self, theta: np.ndarray) -> float:
        """``f(theta)``."""
        terms = self._loss_terms(self._margins(theta))
        return float(self.data.row_weight @ terms) + self._ridge(theta)

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """``(f(theta), grad f(theta))``, the gradient packed like ``theta``."""
        w0, V, _ = unpack(theta)
        y, weight = self.data.y, self.data.row_weight
        f = self._margins(theta)
        dloss = -y * expit(-y * f) if self.logistic else 2.0 * (f - y)
        g_rows = weight * dloss
        grad = np.zeros_like(theta)
        d = theta.shape[0] - 1
        task_grad = self.data.task_gradients(g_rows)
        grad[:d, 1:] = task_grad + 2.0 * self.lam_dev * V
        grad[:d, 0] = task_grad.sum(axis=1) + 2.0 * self.lam_common * w0
        if self.fit_intercept:
            grad[d, 1:] = self.data.task_sums(g_rows)
        return float(weight @ self._loss_terms(f)) + self._ridge(theta), grad

    def lipschitz_lower_bound(self) -> float:
        """Largest curvature along a single coordinate (a unit vector's Rayleigh quotient
        never exceeds the largest eigenvalue of the Hessian)."""
        curvature = 0.25 if self.logistic else 2.0
        data = self.data
        col_sq = max(float(np.max(data.weight[t] * np.sum(data.X[sl] ** 2, axis=0)))
                     for t, sl in enumerate(data.slices))
        return max(curvature * col_sq + 2.0 * max(self.lam_dev, self.lam_common), 1e-12)

    def closures(self) -> tuple[Callable, Callable]:
        """``(smooth, value)`` for :func:`~explorer.solvers.proximal_gradient.
        proximal_gradient_steps`."""
        return self.value_grad, self.value
