"""A matrix-free exact solver for the square-loss task-weight problems (MT-KR's Eq. 7, MT-KNN's
Eq. 2 with the square loss), for many tasks.

The problem, over W (m, m) with ``F`` (n, m) each training point's per-task features::

    min_W  f(W) = sum_i (w_{t_i} . F_i - y_i)^2 + lambda1/4 ||W - W^T||_F^2 + lambda2/2 ||W||_F^2
    s.t.   w_qq >= |w_qr| (r != q)   [and W 1 = 1 for MT-KR]

is smooth and strongly convex (modulus at least lambda2) over a set that splits into rows, and
the Euclidean projection of a row onto its constraints is cheap (sort the row, then a
piecewise-linear root; :func:`~explorer.solvers._projection_kernels.project_rows`). So
accelerated projected gradient (FISTA with backtracking and function-value restarts) solves it
with one product per iteration: either with F (O(n m) work, forwards and backwards) or, when
they are no larger than a few F's, with the per-task Gram matrices (O(m^3) whatever n). Memory
stays O(n m + m^3) at most, where the dense dual solver of :mod:`explorer.solvers.task_weights`
needs m^4 (about 24 GB for School's 139 tasks).

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


def _penalty(W: np.ndarray, lambda1: float, lambda2: float) -> tuple[float, np.ndarray]:
    """The penalty's value and gradient."""
    asym = W - W.T
    value = 0.25 * lambda1 * float(np.sum(asym * asym)) + 0.5 * lambda2 * float(np.sum(W * W))
    return value, lambda1 * asym + lambda2 * W


class _PointwiseLoss:
    """The loss through F itself: the image of W is the predictions (n,) ``w_{t_i} . F_i``;
    O(n m) per product, no more memory than F."""

    def __init__(self, F, y, task, m):
        self.F, self.y, self.task = F, y, task
        # (m, n) indicator: row q sums the rows of task q
        self.gather = sp.csr_matrix((np.ones(task.size), (task, np.arange(task.size))),
                                    shape=(m, task.size))

    def image(self, W: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ij->i", self.F, W[self.task])

    def value(self, W: np.ndarray, image: np.ndarray) -> float:
        residual = image - self.y
        return float(residual @ residual)

    def gradient(self, W: np.ndarray, image: np.ndarray, *, data: bool = True) -> np.ndarray:
        residual = image - self.y if data else image
        return 2.0 * (self.gather @ (self.F * residual[:, None]))


class _GramLoss:
    """The loss through per-task Gram matrices ``G_q = F_q^T F_q`` (m, m, m): the image of W
    is ``G_q w_q`` per row; O(m^3) per product whatever n (School: 139^3 against n m)."""

    def __init__(self, F, y, task, m):
        order = np.argsort(task, kind="stable")
        bounds = np.searchsorted(task[order], np.arange(m + 1))
        F, y = F[order], y[order]
        self.G = np.empty((m, m, m))
        self.c = np.empty((m, m))
        for q in range(m):
            rows = slice(bounds[q], bounds[q + 1])
            self.G[q] = F[rows].T @ F[rows]
            self.c[q] = F[rows].T @ y[rows]
        self.constant = float(y @ y)

    def image(self, W: np.ndarray) -> np.ndarray:
        return np.matmul(self.G, W[:, :, None])[:, :, 0]

    def value(self, W: np.ndarray, image: np.ndarray) -> float:
        return float(np.sum(W * (image - 2.0 * self.c))) + self.constant

    def gradient(self, W: np.ndarray, image: np.ndarray, *, data: bool = True) -> np.ndarray:
        return 2.0 * (image - self.c) if data else 2.0 * image


class _Problem:
    """f and its gradient from a loss's image of W (affine in W, so FISTA's extrapolation
    carries it along without a product)."""

    def __init__(self, F, y, task, m, lambda1, lambda2):
        self.lambda1, self.lambda2 = lambda1, lambda2
        # the cheaper product; the Gram matrices only while they take no more than ~8 F's
        gram = m * m <= 8 * task.size
        self.loss = (_GramLoss if gram else _PointwiseLoss)(F, y, task, m)
        self.image = self.loss.image

    def value(self, W: np.ndarray, image: np.ndarray) -> float:
        return self.loss.value(W, image) + _penalty(W, self.lambda1, self.lambda2)[0]

    def gradient(self, W: np.ndarray, image: np.ndarray) -> np.ndarray:
        return self.loss.gradient(W, image) + _penalty(W, self.lambda1, self.lambda2)[1]

    def hessian_action(self, D: np.ndarray) -> np.ndarray:
        return self.loss.gradient(D, self.image(D), data=False) + _penalty(
            D, self.lambda1, self.lambda2)[1]


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
        HD = problem.hessian_action(D)
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
    rx = problem.image(X)
    fx = problem.value(X, rx)
    Y, ry, momentum = X, rx, 1.0
    while True:
        for _ in range(steps_per_sweep):
            fy = problem.value(Y, ry)
            gy = problem.gradient(Y, ry)
            while True:   # backtracking: the step must satisfy the descent lemma
                X_new = project_rows(Y - gy / step_inverse, row_sum)
                rx_new = problem.image(X_new)
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
            ry = rx_new + beta * (rx_new - rx)     # the image is linear in W
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
