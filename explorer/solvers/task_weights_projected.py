"""A matrix-free exact solver for the square-loss task-weight problems (MT-KR's Eq. 7, MT-KNN's
Eq. 2 with the square loss), for many tasks.

The problem, over W (m, m) with ``F`` (n, m) each training point's per-task features::

    min_W  f(W) = sum_i (w_{t_i} . F_i - y_i)^2 + lambda1/4 ||W - W^T||_F^2 + lambda2/2 ||W||_F^2
    s.t.   w_qq >= |w_qr| (r != q)   [and W 1 = 1 for MT-KR]

is smooth and strongly convex (modulus at least lambda2) over a set that splits into rows, and
the Euclidean projection of a row onto its constraints is cheap (sort the row, then a
piecewise-linear root; :func:`~explorer.solvers._projection_kernels.project_rows`). So
accelerated projected gradient (FISTA with backtracking and function-value restarts) solves it
with O(n m) work per iteration (one product with F forwards, one backwards) and O(n m + m^2)
memory, where the dense dual solver of :mod:`explorer.solvers.task_weights` needs m^4.

Stopping rule: a certified relative gap. Strong convexity with modulus ``mu = lambda2`` gives,
for any feasible W with gradient G, the lower bound
``f* >= f(W) + min_{Z feasible} <G, Z - W> + mu/2 ||Z - W||^2``, attained at
``Z = P(W - G / mu)``; it tends to f* as W tends to the optimum, so ``(f(W) - bound) / f(W)``
is a gap of the same meaning as the dual solver's.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from .task_weights import SweepResult

__all__ = ["projected_gradient_sweeps", "project_rows"]


def project_rows(V: np.ndarray, row_sum: bool) -> np.ndarray:
    """The projection of each row ``V[q]`` onto ``{w: w_q >= |w_r|}`` (and ``sum w = 1`` with
    ``row_sum``), shape (m, m)."""
    from ._projection_kernels import project_rows as kernel

    out = np.empty_like(V, dtype=np.float64)
    kernel(np.ascontiguousarray(V, dtype=np.float64), bool(row_sum), out)
    return out


class _Problem:
    """f, its gradient and the residuals of the square-loss problem (matrix-free)."""

    def __init__(self, F, y, task, m, lambda1, lambda2):
        self.F, self.y, self.task = F, y, task
        self.lambda1, self.lambda2 = lambda1, lambda2
        # (m, n) indicator: row q sums the rows of task q
        self.gather = sp.csr_matrix((np.ones(task.size), (task, np.arange(task.size))),
                                    shape=(m, task.size))

    def residual(self, W: np.ndarray) -> np.ndarray:
        """(n,): ``w_{t_i} . F_i - y_i``."""
        return np.einsum("ij,ij->i", self.F, W[self.task]) - self.y

    def value(self, W: np.ndarray, residual: np.ndarray) -> float:
        asym = W - W.T
        return float(residual @ residual + 0.25 * self.lambda1 * np.sum(asym * asym)
                     + 0.5 * self.lambda2 * np.sum(W * W))

    def gradient(self, W: np.ndarray, residual: np.ndarray) -> np.ndarray:
        loss = 2.0 * (self.gather @ (self.F * residual[:, None]))
        return loss + self.lambda1 * (W - W.T) + self.lambda2 * W


def _lipschitz_estimate(problem: _Problem, m: int, row_sum: bool, rng) -> float:
    """The largest curvature of f along feasible directions (rows summing to 0 with
    ``row_sum``), by 30 power steps: a start for the backtracking, which corrects it."""
    D = rng.standard_normal((m, m))
    curvature = problem.lambda2 + 2.0 * problem.lambda1
    for _ in range(30):
        if row_sum:
            D -= D.mean(axis=1, keepdims=True)
        norm = np.linalg.norm(D)
        if norm == 0.0:
            break
        D /= norm
        HD = problem.gradient(D, problem.residual(D) + problem.y)   # the Hessian's action
        curvature = max(curvature, float(np.sum(D * HD)))
        D = HD
    return curvature


def projected_gradient_sweeps(F: np.ndarray, y: np.ndarray, task: np.ndarray, n_tasks: int,
                              lambda1: float, lambda2: float, *, row_sum: bool = False,
                              steps_per_sweep: int = 10, seed: int = 0
                              ) -> Iterator[SweepResult]:
    """The square-loss problem (module docstring) by accelerated projected gradient, forever.

    Each sweep is ``steps_per_sweep`` FISTA steps; it yields the current (feasible) W, its
    objective, the strong-convexity lower bound on the optimum (``dual``) and the relative gap
    ``gap``. Starts from the projection of the identity.
    """
    m = n_tasks
    F = np.ascontiguousarray(F, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    task = np.asarray(task, dtype=np.intp)
    problem = _Problem(F, y, task, m, lambda1, lambda2)
    step_inverse = _lipschitz_estimate(problem, m, row_sum, np.random.default_rng(seed))
    mu = lambda2
    X = project_rows(np.eye(m), row_sum)
    rx = problem.residual(X)
    fx = problem.value(X, rx)
    Y, ry, momentum = X, rx, 1.0
    while True:
        for _ in range(steps_per_sweep):
            fy = problem.value(Y, ry)
            gy = problem.gradient(Y, ry)
            while True:   # backtracking: the step must satisfy the descent lemma
                X_new = project_rows(Y - gy / step_inverse, row_sum)
                rx_new = problem.residual(X_new)
                fx_new = problem.value(X_new, rx_new)
                move = X_new - Y
                model = fy + float(np.sum(gy * move)) + 0.5 * step_inverse * float(
                    np.sum(move * move))
                if fx_new <= model + 1e-12 * abs(model):
                    break
                step_inverse *= 2.0
            if fx_new > fx:   # restart the momentum where it stopped helping
                momentum = 1.0
                Y, ry = X, rx
                continue
            next_momentum = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum ** 2))
            beta = (momentum - 1.0) / next_momentum
            Y = X_new + beta * (X_new - X)
            ry = rx_new + beta * (rx_new - rx)     # the residual is affine in W
            X, rx, fx, momentum = X_new, rx_new, fx_new, next_momentum
        gx = problem.gradient(X, rx)
        Z = project_rows(X - gx / mu, row_sum)
        move = Z - X
        bound = fx + float(np.sum(gx * move)) + 0.5 * mu * float(np.sum(move * move))
        gap = (fx - bound) / max(abs(fx), 1e-12)
        yield SweepResult(W=X.copy(), objective=fx, dual=bound, gap=max(gap, 0.0))


def warm_up() -> None:
    """Compile (or load from numba's cache) the row projection on a tiny problem."""
    project_rows(np.array([[0.0, 2.0], [1.0, -1.0]]), True)
    project_rows(np.array([[0.0, 2.0], [1.0, -1.0]]), False)
