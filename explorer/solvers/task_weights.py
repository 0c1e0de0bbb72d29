"""Exact solvers for the task-pair weight matrix W of MT-KNN (Eq. 2) and MT-KR (Eq. 7), Zhang 2013.

MT-KNN (each training point's neighbour features ``x_hat`` (m,), labels +-1):

    min_W  sum_j l(y_j, w_{t_j} . x_hat_j) + lambda1/4 ||W - W^T||_F^2 + lambda2/2 ||W||_F^2
           s.t.  w_qq >= 0,  -w_qq <= w_qr <= w_qq                                  (Eq. 2)

with the hinge loss ``max(0, 1 - y f)`` or the square loss ``(1 - y f)^2 = (y - f)^2``;
MT-KR (Eq. 7) has the square loss on the per-task kernel-regression predictions ``y_hat``
and the extra constraint ``W 1 = 1``. Writing the penalty as ``1/2 <W, H W>`` with
``H W = (lambda1 + lambda2) W - lambda1 W^T`` (``H^{-1}``: symmetric part / lambda2,
antisymmetric part / (lambda2 + 2 lambda1)) and the constraints as linear inequalities:

* square loss (both models): the loss enters through per-task Gram matrices, leaving a QP in
  the m^2 entries of W; its dual over the constraints' multipliers is solved by exact
  coordinate ascent (:func:`square_qp_sweeps`);
* hinge loss: a primal-dual interior-point method whose Newton systems reduce to m^2 x m^2
  (:func:`hinge_interior_point_steps`).

Both report the relative duality gap, so a fit stops at the optimum to ``tol``. The paper's
own coordinate-descent / SMO algorithms are in :mod:`explorer.solvers.task_weights_paper`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotrs

__all__ = [
    "task_weight_objective",
    "square_qp_sweeps",
    "hinge_interior_point_steps",
    "project_feasible",
    "SweepResult",
    "warm_up",
    "MAX_EXACT_TASKS",
    "check_exact_size",
]

# The exact solvers hold about eight dense (m^2 x m^2) float64 arrays at their peak
# (measured with tracemalloc at m = 8..20: 8.0 x 8 m^4 bytes for the square QP, 6.2-7.7 x
# for the hinge): ~400 MB at m = 50, ~24 GB at m = 139 (School).
MAX_EXACT_TASKS = 50


def check_exact_size(n_tasks: int, who: str = "the exact solver") -> None:
    """Refuse, before anything is allocated, a problem too large for the exact solvers."""
    if n_tasks > MAX_EXACT_TASKS:
        peak = 64 * n_tasks ** 4 / 1e9
        raise ValueError(
            f"{who} builds dense (m^2 x m^2) systems and handles at most n_tasks = "
            f"{MAX_EXACT_TASKS}; got n_tasks = {n_tasks} (it would need about {peak:.0f} GB). "
            "Use solver='auto' (MT-KR: the projected-gradient solver, exact and linear in "
            "memory) or solver='paper' (the paper's solver).")

# ---------------------------------------------------------------- objectives
def _penalty(W: np.ndarray, lambda1: float, lambda2: float) -> float:
    asym = W - W.T
    return 0.25 * lambda1 * float(np.sum(asym * asym)) + 0.5 * lambda2 * float(np.sum(W * W))


def task_weight_objective(W: np.ndarray, F: np.ndarray, y: np.ndarray, task: np.ndarray,
                          loss: str, lambda1: float, lambda2: float) -> float:
    """Eq. 2 (``loss`` "hinge" or "square", labels +-1) or Eq. 7 ("square", real targets).

    ``F`` (n, m) holds each training point's features (``x_hat`` or ``y_hat``), ``task``
    its task; the square loss ``(1 - y f)^2`` of Eq. 2 equals ``(y - f)^2`` for y = +-1.
    """
    f = np.einsum("ij,ij->i", F, W[task])
    if loss == "hinge":
        data = float(np.maximum(1.0 - y * f, 0.0).sum())
    else:
        residual = y - f
        data = float(residual @ residual)
    return data + _penalty(W, lambda1, lambda2)


@dataclass(frozen=True)
class SweepResult:
    """One sweep: ``W`` (m, m), never mutated afterwards, and the objective there.

    ``dual`` and ``gap`` (relative duality gap) are set by the dual solver.
    """

    W: np.ndarray
    objective: float
    dual: float | None = None
    gap: float | None = None


# ---------------------------------------------------------------- exact dual solver
def project_feasible(W: np.ndarray, row_sum: bool) -> np.ndarray:
    """A feasible copy of a (nearly feasible) ``W``: clip into the constraints of Eq. 2/7.

    ``w_qq <- max(w_qq, 0)``, ``w_qr <- clip(w_qr, -w_qq, w_qq)``; with ``row_sum`` each row
    is then divided by its sum (a positive scale keeps the box constraints).
    """
    diag = np.maximum(np.diag(W), 0.0)[:, None]
    P = np.minimum(np.maximum(W, -diag), diag)
    np.fill_diagonal(P, diag[:, 0])
    if row_sum:
        total = P.sum(axis=1)
        m = P.shape[0]
        P = np.where(total[:, None] > 0, P / np.where(total > 0, total, 1.0)[:, None],
                     np.eye(m))
    return P


def _inverse_H(m: int, lambda1: float, lambda2: float) -> np.ndarray:
    """``H^{-1}`` on row-major vec(W): symmetric part / lambda2 + antisymmetric / (lambda2 +
    2 lambda1)."""
    swap = np.zeros((m * m, m * m))
    swap[np.arange(m * m), np.arange(m * m).reshape(m, m).T.ravel()] = 1.0
    eye = np.eye(m * m)
    return (eye + swap) / (2.0 * lambda2) + (eye - swap) / (2.0 * (lambda2 + 2.0 * lambda1))


def _constraint_matrix(m: int, row_sum: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """Rows of ``A vec(W) >= 0`` (w_qq >= 0, w_qq -+ w_qr >= 0), then ``W 1 = 1`` rows."""
    rows = []
    for q in range(m):
        diag = np.zeros((m, m))
        diag[q, q] = 1.0
        rows.append(diag.ravel())
        for r in range(m):
            if r != q:
                for sign in (1.0, -1.0):
                    a = np.zeros((m, m))
                    a[q, q], a[q, r] = 1.0, -sign
                    rows.append(a.ravel())
    n_ineq = len(rows)
    rhs = [0.0] * n_ineq
    if row_sum:
        for q in range(m):
            a = np.zeros((m, m))
            a[q] = 1.0
            rows.append(a.ravel())
            rhs.append(1.0)
    return np.array(rows), np.array(rhs), n_ineq


@lru_cache(maxsize=8)
def _sparse_constraints(m: int) -> tuple[np.ndarray, np.ndarray]:
    """The inequality rows of :func:`_constraint_matrix` (without row sums) as at most two
    (column, value) pairs each, columns ascending: ``cidx`` (p, 2) int64, ``cval`` (p, 2).
    Cached (read-only arrays): building them costs more than a small fit's solve."""
    cidx = np.zeros((m, 2 * m - 1, 2), dtype=np.int64)
    cval = np.zeros((m, 2 * m - 1, 2))
    for q in range(m):
        diagonal = q * (m + 1)
        cidx[q, 0, 0], cval[q, 0, 0] = diagonal, 1.0
        others = np.delete(np.arange(q * m, (q + 1) * m), q)      # w_qr, r != q, in order
        pair = np.stack([np.repeat(others, 2), np.full(2 * m - 2, diagonal)], axis=1)
        value = np.stack([np.tile([-1.0, 1.0], m - 1), np.ones(2 * m - 2)], axis=1)
        swap = pair[:, 0] > diagonal                    # w_qq's column comes first
        pair[swap], value[swap] = pair[swap][:, ::-1], value[swap][:, ::-1]
        cidx[q, 1:], cval[q, 1:] = pair, value
    cidx, cval = cidx.reshape(-1, 2), cval.reshape(-1, 2)
    cidx.flags.writeable = cval.flags.writeable = False
    return cidx, cval


def square_qp_sweeps(F: np.ndarray, y: np.ndarray, task: np.ndarray, n_tasks: int,
                     lambda1: float, lambda2: float, *, row_sum: bool = False
                     ) -> Iterator[SweepResult]:
    """The square-loss problems (Eq. 2 with the square loss; Eq. 7 with ``row_sum``), forever.

    The loss only enters through per-task Gram matrices ``F_q^T F_q`` and ``F_q^T y_q``, so
    Eq. 2/7 is a QP in the m^2 entries of W: ``1/2 w^T P w + c^T w`` with
    ``P = blockdiag(2 F_q^T F_q) + H``. Its dual over the constraints' multipliers (>= 0 for
    the inequalities, free for ``W 1 = 1``) is solved by exact coordinate ascent, one pass
    per sweep; ``dual`` never decreases and ``gap`` is the relative duality gap.
    """
    from ._task_weight_kernels import qp_dual_passes

    check_exact_size(n_tasks)
    m = n_tasks
    P = np.zeros((m * m, m * m))
    c = np.zeros(m * m)
    for q in range(m):
        rows = task == q
        block = slice(q * m, (q + 1) * m)
        P[block, block] = 2.0 * F[rows].T @ F[rows]
        c[block] = -2.0 * F[rows].T @ y[rows]
    transpose = np.arange(m * m).reshape(m, m).T.ravel()
    H = (lambda1 + lambda2) * np.eye(m * m)
    H[np.arange(m * m), transpose] -= lambda1
    P += H
    constant = float(y @ y)
    A, rhs, n_ineq = _constraint_matrix(m, row_sum)
    P_inv = np.linalg.inv(P)
    Z = np.ascontiguousarray(P_inv @ A.T)
    curvature = np.einsum("kv,vk->k", A, Z)
    lam = np.zeros(A.shape[0])
    w = -P_inv @ c
    while True:
        qp_dual_passes(A, rhs, n_ineq, Z, curvature, lam, w, 1)
        W = project_feasible(w.reshape(m, m), row_sum)
        objective = task_weight_objective(W, F, y, task, "square", lambda1, lambda2)
        # dual value: -1/2 (A^T lam - c)^T P^-1 (A^T lam - c) + rhs . lam + constant
        shifted = A.T @ lam - c
        dual = float(-0.5 * shifted @ P_inv @ shifted + rhs @ lam + constant)
        gap = (objective - dual) / max(abs(objective), 1e-12)
        yield SweepResult(W=W, objective=objective, dual=dual, gap=max(gap, 0.0))


# ---------------------------------------------------------------- MT-KNN hinge: interior point
@dataclass
class _HingeQP:
    """The hinge QP's data: per-task blocks ``y_j x_hat_j`` (rows of the task's W row)."""

    m: int
    rows: list
    blocks: list
    H: np.ndarray
    C: np.ndarray

    @property
    def n(self) -> int:
        return self.rows[-1].stop

    def margins(self, w: np.ndarray) -> np.ndarray:
        """(n,): ``y_j w_{t_j} . x_hat_j`` for vec(W) ``w``."""
        out = np.empty(self.n)
        W = w.reshape(self.m, self.m)
        for q in range(self.m):
            out[self.rows[q]] = self.blocks[q] @ W[q]
        return out

    def combine(self, v: np.ndarray) -> np.ndarray:
        """(m^2,): ``sum_j v_j y_j vec(e_{t_j} x_hat_j^T)``, the transpose of :meth:`margins`."""
        return np.concatenate([v[self.rows[q]] @ self.blocks[q] for q in range(self.m)])


def _newton_direction(qp: _HingeQP, factor, d, s, rp, rd_w, rd_xi, rc):
    """Solve the reduced Newton system for one right-hand side ``rc`` (complementarity).

    ``d = lam / s`` per constraint block, ``rp`` the primal residuals, ``rd_w`` / ``rd_xi``
    the dual ones; returns the steps of w, xi, the slacks and the multipliers.
    """
    (d1, d2, d3), (rp1, rp2, rp3), (s1, s2, s3) = d, rp, s
    u1 = d1 * rp1 - rc[0] / s1
    u2 = d2 * rp2 - rc[1] / s2
    u3 = d3 * rp3 - rc[2] / s3
    share = (-rd_xi + u1 + u2) / (d1 + d2)
    rhs = -rd_w + qp.combine(u2 - d2 * share) + qp.C.T @ u3
    dw, _ = dpotrs(factor, rhs, lower=1)
    Bdw = qp.margins(dw)
    Cdw = qp.C @ dw
    dxi = share - d2 * Bdw / (d1 + d2)
    dl = (-d1 * dxi + u1, -d2 * (Bdw + dxi) + u2, -d3 * Cdw + u3)
    ds = (dxi - rp1, Bdw + dxi - rp2, Cdw - rp3)
    return dw, dxi, ds, dl


def _longest_step(values, deltas) -> float:
    """Largest t <= 1 keeping every ``v + t d >= 0``."""
    step = 1.0
    for v, dv in zip(values, deltas, strict=True):
        shrinking = dv < 0
        if shrinking.any():
            step = min(step, float((-v[shrinking] / dv[shrinking]).min()))
    return step


def _interior_point_step(qp: _HingeQP, w, xi, s, lam):
    """One Mehrotra predictor-corrector step in NumPy (the compiled ``ipm_step`` mirrors it)."""
    m, H = qp.m, qp.H
    total = 2 * xi.size + s[2].size
    rd_w = H @ w - qp.combine(lam[1]) - qp.C.T @ lam[2]
    rd_xi = 1.0 - lam[0] - lam[1]
    rp = (s[0] - xi, s[1] - qp.margins(w) - xi + 1.0, s[2] - qp.C @ w)
    mu = sum(a @ b for a, b in zip(s, lam, strict=True)) / total
    d = [a / b for a, b in zip(lam, s, strict=True)]
    e = d[0] * d[1] / (d[0] + d[1])
    K = H + qp.C.T @ (d[2][:, None] * qp.C)
    for q in range(m):
        block = slice(q * m, (q + 1) * m)
        K[block, block] += qp.blocks[q].T @ (e[qp.rows[q], None] * qp.blocks[q])
    factor, info = dpotrf(K, lower=1)
    if info != 0:
        raise ArithmeticError(f"the interior-point Newton matrix is not positive definite "
                              f"(LAPACK dpotrf info {info}).")
    # predictor (affine scaling), then Mehrotra's corrector
    _, _, ds, dl = _newton_direction(qp, factor, d, s, rp, rd_w, rd_xi,
                                     [a * b for a, b in zip(s, lam, strict=True)])
    affine = min(_longest_step(s, ds), _longest_step(lam, dl))
    mu_affine = sum((a + affine * da) @ (b + affine * db)
                    for a, da, b, db in zip(s, ds, lam, dl, strict=True)) / total
    sigma = (mu_affine / mu) ** 3
    rc = [a * b + da * db - sigma * mu for a, da, b, db in zip(s, ds, lam, dl, strict=True)]
    dw, dxi, ds, dl = _newton_direction(qp, factor, d, s, rp, rd_w, rd_xi, rc)
    step = 0.99 * min(_longest_step(s, ds), _longest_step(lam, dl))
    return (w + step * dw, xi + step * dxi, [a + step * da for a, da in zip(s, ds, strict=True)],
            [a + step * da for a, da in zip(lam, dl, strict=True)])


def hinge_interior_point_steps(F: np.ndarray, y: np.ndarray, task: np.ndarray, n_tasks: int,
                               lambda1: float, lambda2: float, *, compiled: bool = True
                               ) -> Iterator[SweepResult]:
    """Eq. 2 with the hinge loss by a primal-dual interior-point method; one step per yield.

    The QP ``min 1/2 w^T H w + sum xi`` s.t. ``xi >= 0``, ``y_j w_{t_j} . x_hat_j + xi_j >= 1``,
    ``w_qq >= 0``, ``w_qq -+ w_qr >= 0`` (Mehrotra predictor-corrector from an infeasible
    start). Eliminating the slacks and the n ``xi`` leaves the m^2 x m^2 Newton system
    ``H + sum_q F_q^T diag(e_q) F_q + C^T diag(d) C``: a step costs O(n m^2 + m^6). Each step
    reports the feasible :func:`project_feasible` W, its primal value, the dual value of the
    current multipliers clipped to the dual's bounds (``0 <= alpha <= 1``, ``mu >= 0``: a
    valid lower bound) and the relative gap. ``compiled``: the numba kernel
    (:func:`~explorer.solvers._task_weight_kernels.ipm_step`) or the same step in NumPy.
    """
    check_exact_size(n_tasks)
    m = n_tasks
    H_inv = _inverse_H(m, lambda1, lambda2)
    H = (lambda1 + lambda2) * np.eye(m * m)
    H[np.arange(m * m), np.arange(m * m).reshape(m, m).T.ravel()] -= lambda1
    if np.any(task[1:] < task[:-1]):    # tasks as contiguous slices: no gathers
        order = np.argsort(task, kind="stable")
        F, y, task = F[order], y[order], task[order]
    bounds = np.searchsorted(task, np.arange(m + 1))
    signed = y[:, None] * F
    n = F.shape[0]
    cidx, cval = _sparse_constraints(m)
    p = cidx.shape[0]
    w, xi = np.zeros(m * m), np.ones(n)
    s = [np.ones(n), np.ones(n), np.ones(p)]
    lam = [np.full(n, 0.5), np.full(n, 0.5), np.ones(p)]
    if compiled:
        from ._task_weight_kernels import feasible_values, ipm_step

        St = np.ascontiguousarray(signed.T)
        bounds = bounds.astype(np.int64)
    else:
        rows = [slice(bounds[q], bounds[q + 1]) for q in range(m)]
        qp = _HingeQP(m, rows, [signed[r] for r in rows], H, _constraint_matrix(m, False)[0])
    while True:
        if compiled:
            ipm_step(St, bounds, H, cidx, cval, w, xi, *s, *lam)
            W = np.empty((m, m))
            objective, dual = feasible_values(St, bounds, H_inv, cidx, cval, w, lambda1,
                                              lambda2, lam[1], lam[2], W)
        else:
            w, xi, s, lam = _interior_point_step(qp, w, xi, s, lam)
            W = project_feasible(w.reshape(m, m), False)
            objective = task_weight_objective(W, F, y, task, "hinge", lambda1, lambda2)
            alpha = np.clip(lam[1], 0.0, 1.0)
            combo = qp.combine(alpha) + qp.C.T @ np.maximum(lam[2], 0.0)
            dual = float(alpha.sum() - 0.5 * combo @ H_inv @ combo)
        gap = (objective - dual) / max(abs(objective), 1e-12)
        yield SweepResult(W=W, objective=objective, dual=dual, gap=max(gap, 0.0))


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels on a tiny problem: the solvers' and
    the neighbour pass's (float64 with sigma, float32 without)."""
    from .nearest_neighbours import nearest_neighbours, neighbours_and_mean_distance

    points = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    neighbours_and_mean_distance(points, 2)
    nearest_neighbours(points, None, 2)
    F = np.array([[1.0, 0.5], [0.2, -1.0], [0.3, 0.1]])
    y, task = np.array([1.0, -1.0, 1.0]), np.array([0, 1, 1])
    next(square_qp_sweeps(F, y, task, 2, 1.0, 1.0, row_sum=True))
    next(hinge_interior_point_steps(F, y, task, 2, 1.0, 1.0))
