"""Solvers for the task-pair weight matrix W of MT-KNN (Eq. 2) and MT-KR (Eq. 7), Zhang 2013.

MT-KNN (per task q, its training points' neighbour features ``x_hat`` (n_q, m), labels +-1):

    min_W  sum_q sum_{j in T_q} l(y_j, w_q . x_hat_j) + lambda1/4 ||W - W^T||_F^2
           + lambda2/2 ||W||_F^2      s.t.  w_qq >= 0,  -w_qq <= w_qr <= w_qq        (Eq. 2)

with the hinge loss ``max(0, 1 - y f)`` or the square loss ``(1 - y f)^2 = (y - f)^2``.
Coordinate descent, one entry at a time, each one-dimensional problem solved exactly:

* off-diagonal ``w_qr`` (Eq. 3): ``lambda/2 w^2 - beta w + sum_j max(0, a_j w + b_j)`` on
  ``[-w_qq, w_qq]`` with ``lambda = lambda1 + lambda2``, ``beta = lambda1 w_rq``; the
  piecewise-quadratic objective is minimised by one walk over its sorted breakpoints
  (:func:`hinge_breakpoint_min`, Table 1);
* diagonal ``w_qq`` (Eq. 4): the same walk with ``lambda = lambda2``, ``beta = 0`` on
  ``[max(0, max_r |w_qr|), inf)``;
* square loss: the closed forms below Eq. 4 (:func:`square_coordinate_min`).

Both axes-only schemes can stall at a corner of the constraint set: when ``w_qr = +-w_qq``
is tight, the objective may decrease only by moving ``w_qq`` *and* ``w_qr`` together (the
paper's coordinate steps never do). Each sweep therefore also solves, per row, the coupled
one-dimensional problem along ``w_qq <- w_qq + t, w_qr <- w_qr + sign(w_qr) t`` for the tight
``r`` (one at a time, then all together) -- the same walk / closed form on the combined
direction. The tests compare the result with cvxpy.

MT-KR (Eq. 7-8): square loss on the per-task kernel-regression predictions ``y_hat`` with
``W 1 = 1`` and ``-w_qq <= w_qr <= w_qq``; SMO over the most violating pair of a row
(Section 3.1) with the analytic clipped step, plus the same coupled moves.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = [
    "hinge_breakpoint_min",
    "square_coordinate_min",
    "task_weight_objective",
    "paper_cd_sweeps",
    "dual_cd_sweeps",
    "square_qp_sweeps",
    "paper_smo_sweeps",
    "project_feasible",
    "SweepResult",
    "warm_up",
]


# ---------------------------------------------------------------- one-dimensional solves
def hinge_breakpoint_min(lam: float, beta: float, a: np.ndarray, b: np.ndarray,
                         lower: float, upper: float) -> float:
    """Exact minimiser of ``lam/2 w^2 - beta w + sum_j max(0, a_j w + b_j)`` on [lower, upper].

    Table 1 of the paper: between consecutive breakpoints ``-b_j / a_j`` the objective is
    one quadratic ``c0 + c1 w + lam/2 w^2``; its coefficients change by one term at each
    breakpoint, so one pass over the sorted breakpoints gives every segment's clipped
    minimiser and value, and the best one wins. ``upper`` may be ``inf`` (Eq. 4).
    Entries with ``a_j == 0`` are constants and dropped. Needs ``lam > 0``.
    """
    nonzero = a != 0
    a, b = a[nonzero], b[nonzero]
    breakpoint = -b / a
    rising = a > 0
    # which terms are active just right of `lower` (the leftmost segment)
    active = np.where(rising, breakpoint <= lower, breakpoint > lower)
    c1 = a[active].sum() - beta
    c0 = b[active].sum()
    inside = (breakpoint > lower) & (breakpoint < upper)
    order = np.argsort(breakpoint[inside], kind="stable")
    points = breakpoint[inside][order]
    a_in, b_in = a[inside][order], b[inside][order]
    # crossing a breakpoint left -> right: a rising term switches on, a falling one off
    slope = np.concatenate(([c1], c1 + np.cumsum(np.abs(a_in))))
    offset = np.concatenate(([c0], c0 + np.cumsum(np.sign(a_in) * b_in)))
    left = np.concatenate(([lower], points))
    right = np.concatenate((points, [upper]))
    w = np.clip(-slope / lam, left, right)
    value = offset + slope * w + 0.5 * lam * w * w
    return float(w[np.argmin(value)])


def square_coordinate_min(lam: float, beta: float, a: np.ndarray, b: np.ndarray,
                          lower: float, upper: float) -> float:
    """Minimiser of ``lam/2 w^2 - beta w + sum_j (a_j w + b_j)^2`` on [lower, upper].

    The closed form below Eq. 4: ``clip((beta - 2 sum a b) / (lam + 2 sum a^2))``.
    """
    w = (beta - 2.0 * float(a @ b)) / (lam + 2.0 * float(a @ a))
    return float(min(max(w, lower), upper))


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


def _line_min(loss: str, lam: float, beta: float, direction_feature: np.ndarray,
              y: np.ndarray, margin: np.ndarray, lower: float, upper: float) -> float:
    """Best step t along a direction: slack_j(t) = (1 - margin_j) - y_j g_j t."""
    a = -y * direction_feature
    b = 1.0 - margin
    if loss == "hinge":
        return hinge_breakpoint_min(lam, beta, a, b, lower, upper)
    return square_coordinate_min(lam, beta, a, b, lower, upper)


def paper_cd_sweeps(F: np.ndarray, y: np.ndarray, task: np.ndarray, n_tasks: int,
                    lambda1: float, lambda2: float, loss: str, W0: np.ndarray
                    ) -> Iterator[SweepResult]:
    """Coordinate sweeps over W for Eq. 2, forever (the caller stops).

    Each sweep visits every row q: the diagonal (Eq. 4), each off-diagonal (Eq. 3), then
    the coupled diagonal moves (module docstring). ``W0`` must be feasible.
    """
    if loss not in ("hinge", "square"):
        raise ValueError(f"loss must be 'hinge' or 'square'; got {loss!r}.")
    m = n_tasks
    W = np.array(W0, dtype=np.float64, copy=True)
    lam = lambda1 + lambda2
    rows = [np.flatnonzero(task == q) for q in range(m)]
    features = [F[r] for r in rows]
    labels = [y[r] for r in rows]
    margins = [labels[q] * (features[q] @ W[q]) for q in range(m)]
    F_all, y_all = F, y
    while True:
        for q in range(m):
            F, y, margin = features[q], labels[q], margins[q]
            off = [r for r in range(m) if r != q]

            # diagonal, Eq. 4: the step t keeps w_qq + t >= max(0, max |w_qr|)
            floor = max(0.0, max((abs(W[q, r]) for r in off), default=0.0))
            unit = np.zeros(m)
            unit[q] = 1.0
            t = _line_min(loss, lambda2, -lambda2 * W[q, q], F[:, q], y, margin,
                          floor - W[q, q], np.inf)
            _move(W, q, unit, t, F, y, margin)
            for r in off:  # Eq. 3 in the step t = w_qr(new) - w_qr
                unit = np.zeros(m)
                unit[r] = 1.0
                beta = lambda1 * W[r, q] - lam * W[q, r]
                t = _line_min(loss, lam, beta, F[:, r], y, margin,
                              -W[q, q] - W[q, r], W[q, q] - W[q, r])
                _move(W, q, unit, t, F, y, margin)
            for candidate in _tight_sets(W[q], q):
                # an earlier coupled move may have released some of them
                tight = [r for r in candidate if _is_tight(W[q], q, r)]
                if tight:
                    _coupled_move(loss, W, q, tight, lambda1, lambda2, F, y, margin)
            margins[q] = margin
        yield SweepResult(W=W.copy(), objective=task_weight_objective(
            W, F_all, y_all, task, loss, lambda1, lambda2))


def _tight_sets(row: np.ndarray, q: int, rtol: float = 1e-12) -> list[list[int]]:
    """Off-diagonal entries at their bound |w_qr| = w_qq: each alone, then all together."""
    if row[q] <= 0:
        return []
    tight = [r for r in range(row.size) if r != q and _is_tight(row, q, r, rtol)]
    sets = [[r] for r in tight]
    if len(tight) > 1:
        sets.append(tight)
    return sets


def _move(W: np.ndarray, q: int, direction: np.ndarray, t: float, F: np.ndarray,
          y: np.ndarray, margin: np.ndarray) -> None:
    """Row q of W moves by t * direction; the margins y_j w_q . F_j follow in place."""
    if t != 0.0:
        W[q] += t * direction
        margin += t * y * (F @ direction)


def _is_tight(row: np.ndarray, q: int, r: int, rtol: float = 1e-12) -> bool:
    return row[q] > 0 and abs(abs(row[r]) - row[q]) <= rtol * max(row[q], 1.0)


def _coupled_move(loss, W, q, tight, lambda1, lambda2, F, y, margin) -> None:
    """Move w_qq and the tight w_qr (r in ``tight``) together: w_qr = sign(w_qr) w_qq stays."""
    m = W.shape[0]
    direction = np.zeros(m)
    direction[q] = 1.0
    for r in tight:
        direction[r] = np.sign(W[q, r])
    lam = lambda1 + lambda2
    # quadratic part along t: lambda2/2 (w_qq+t)^2 + sum_r [lam/2 (w_qr+s t)^2 - lambda1 w_rq s t]
    curvature = lambda2 + lam * len(tight)
    linear = lambda2 * W[q, q] + sum(direction[r] * (lam * W[q, r] - lambda1 * W[r, q])
                                     for r in tight)
    others = [abs(W[q, r]) for r in range(m) if r != q and r not in tight]
    lower = max(0.0, max(others, default=0.0)) - W[q, q]
    t = _line_min(loss, curvature, -linear, F @ direction, y, margin, lower, np.inf)
    _move(W, q, direction, t, F, y, margin)


# ---------------------------------------------------------------- exact dual solver
def project_feasible(W: np.ndarray, row_sum: bool) -> np.ndarray:
    """A feasible copy of a (nearly feasible) ``W``: clip into the constraints of Eq. 2/7.

    ``w_qq <- max(w_qq, 0)``, ``w_qr <- clip(w_qr, -w_qq, w_qq)``; with ``row_sum`` each row
    is then divided by its sum (a positive scale keeps the box constraints).
    """
    P = np.array(W, dtype=np.float64, copy=True)
    diag = np.maximum(np.diag(P), 0.0)
    P = np.clip(P, -diag[:, None], diag[:, None])
    np.fill_diagonal(P, diag)
    if row_sum:
        total = P.sum(axis=1)
        m = P.shape[0]
        P = np.where(total[:, None] > 0, P / np.where(total > 0, total, 1.0)[:, None],
                     np.eye(m))
    return P


def dual_cd_sweeps(F: np.ndarray, y: np.ndarray, task: np.ndarray, n_tasks: int,
                   lambda1: float, lambda2: float, loss: str, *, row_sum: bool = False
                   ) -> Iterator[SweepResult]:
    """Dual coordinate ascent for Eq. 2 (MT-KNN) or, with ``row_sum``, Eq. 7 (MT-KR); forever.

    Writing the quadratic as ``1/2 <W, H W>`` with ``H W = (lambda1 + lambda2) W -
    lambda1 W^T`` and the constraints as linear inequalities (``w_qq >= 0``, ``w_qq -+ w_qr
    >= 0``; ``W 1 = 1``), the Lagrange dual is a concave quadratic over one variable per
    example (in [0, 1] for the hinge, free for the square loss) and one per constraint (>= 0,
    free for the equalities): separable bounds, so exact coordinate ascent converges to the
    optimum (Luo and Tseng), unlike coordinate descent in the primal, whose coupled
    constraints and non-smooth hinge let it stall (see :func:`paper_cd_sweeps`).
    ``W = H^{-1}(dual combination)`` is kept current; ``H^{-1}`` is the symmetric part over
    ``lambda2`` plus the antisymmetric part over ``lambda2 + 2 lambda1``.

    Each yielded sweep is one pass over all dual variables; ``W`` is the feasible
    :func:`project_feasible` copy, ``objective`` the primal value there, ``dual`` the dual
    value (never decreases), ``gap = (objective - dual) / max(|objective|, 1e-12)``.
    Needs ``lambda2 > 0``.
    """
    from ._task_weight_kernels import HINGE, SQUARE, dual_passes

    if loss not in ("hinge", "square"):
        raise ValueError(f"loss must be 'hinge' or 'square'; got {loss!r}.")
    m = n_tasks
    F = np.ascontiguousarray(F, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    task = np.ascontiguousarray(task, dtype=np.int64)
    alpha = np.zeros(F.shape[0])
    mu_upper, mu_lower = np.zeros((m, m)), np.zeros((m, m))
    mu_diag, nu = np.zeros(m), np.zeros(m)
    W = np.zeros((m, m))
    code = HINGE if loss == "hinge" else SQUARE
    newton = _HingeNewton(F, y, task, m, float(lambda1), float(lambda2)) \
        if loss == "hinge" and not row_sum else None
    while True:
        dual_passes(F, y, task, code, row_sum, float(lambda1), float(lambda2), alpha,
                    mu_upper, mu_lower, mu_diag, nu, W, 1)
        if newton is not None:
            newton.step(alpha, mu_upper, mu_lower, mu_diag, W)
        feasible = project_feasible(W, row_sum)
        objective = task_weight_objective(feasible, F, y, task, loss, lambda1, lambda2)
        HW = (lambda1 + lambda2) * W - lambda1 * W.T
        data_part = alpha.sum() if loss == "hinge" else float(alpha @ y - 0.25 * alpha @ alpha)
        dual = float(data_part + nu.sum() - 0.5 * np.sum(W * HW))
        gap = (objective - dual) / max(abs(objective), 1e-12)
        yield SweepResult(W=feasible, objective=objective, dual=dual, gap=max(gap, 0.0))


def _inverse_H(m: int, lambda1: float, lambda2: float) -> np.ndarray:
    """``H^{-1}`` on row-major vec(W): symmetric part / lambda2 + antisymmetric / (lambda2 +
    2 lambda1)."""
    swap = np.zeros((m * m, m * m))
    swap[np.arange(m * m), np.arange(m * m).reshape(m, m).T.ravel()] = 1.0
    eye = np.eye(m * m)
    return (eye + swap) / (2.0 * lambda2) + (eye - swap) / (2.0 * (lambda2 + 2.0 * lambda1))


class _HingeNewton:
    """Exact steps on the face of the hinge dual, interleaved with the coordinate passes.

    Coordinate ascent alone crawls when lambda2 is small: the n example variables are
    coupled through only m^2 directions. Here the dual is one vector ``x`` (alphas in [0, 1],
    then the constraint multipliers >= 0) with ``vec(W) = H^{-1} A x`` (A is m^2 x N, built
    once). A step holds the variables at their bounds and maximises over the free ones: the
    Newton system ``K d = g`` (``K = A_F^T H^{-1} A_F`` has rank <= m^2, so it is solved in
    the least-squares sense through the m^2 x m^2 Gram); if ``g`` has a part in K's null
    space the dual rises linearly along it and that part is the direction. The step stops at
    the first bound (ratio test): the dual never decreases, a variable reaching a bound
    leaves the face, and the next coordinate pass lets fixed ones back in. Once the face is
    the optimal one, one step lands on the optimum.
    """

    def __init__(self, F, y, task, m, lambda1, lambda2):
        n = F.shape[0]
        self.m, self.n = m, n
        self.off = [(q, r) for q in range(m) for r in range(m) if r != q]
        N = n + 2 * len(self.off) + m
        A = np.zeros((m * m, N))
        for r in range(m):
            A[task * m + r, np.arange(n)] = y * F[:, r]
        for i, (q, r) in enumerate(self.off):
            A[q * m + q, n + i] = A[q * m + q, n + len(self.off) + i] = 1.0
            A[q * m + r, n + i] = -1.0                   # w_qq - w_qr >= 0
            A[q * m + r, n + len(self.off) + i] = 1.0    # w_qq + w_qr >= 0
        for q in range(m):
            A[q * m + q, n + 2 * len(self.off) + q] = 1.0
        self.A = A
        self.H_inv = _inverse_H(m, lambda1, lambda2)
        evals, evecs = np.linalg.eigh(self.H_inv)
        self.B = (evecs * np.sqrt(np.maximum(evals, 0.0))) @ evecs.T @ A
        self.linear = np.zeros(N)
        self.linear[:n] = 1.0
        self.upper = np.full(N, np.inf)
        self.upper[:n] = 1.0

    def pack(self, alpha, mu_upper, mu_lower, mu_diag) -> np.ndarray:
        rows, cols = np.array(self.off).T if self.off else (np.array([], int),) * 2
        return np.concatenate([alpha, mu_upper[rows, cols], mu_lower[rows, cols], mu_diag])

    def unpack(self, x, alpha, mu_upper, mu_lower, mu_diag, W) -> None:
        n, k = self.n, len(self.off)
        alpha[:] = x[:n]
        for i, (q, r) in enumerate(self.off):
            mu_upper[q, r], mu_lower[q, r] = x[n + i], x[n + k + i]
        mu_diag[:] = x[n + 2 * k:]
        W[:] = (self.H_inv @ (self.A @ x)).reshape(self.m, self.m)

    def dual(self, x) -> tuple[float, np.ndarray]:
        Bx = self.B @ x
        return float(self.linear @ x - 0.5 * Bx @ Bx), Bx

    def step(self, alpha, mu_upper, mu_lower, mu_diag, W) -> None:
        x = self.pack(alpha, mu_upper, mu_lower, mu_diag)
        free = (x > 0.0) & (x < self.upper)
        if not free.any():
            return
        B = self.B[:, free]
        g = self.linear[free] - B.T @ (self.B @ x)
        gram_vals, gram_vecs = np.linalg.eigh(B @ B.T)
        keep = gram_vals > 1e-12 * max(float(gram_vals.max()), 1e-300)
        inv_sq = np.zeros_like(gram_vals)
        inv_sq[keep] = 1.0 / gram_vals[keep] ** 2
        newton = B.T @ (gram_vecs @ (inv_sq * (gram_vecs.T @ (B @ g))))
        residual = g - B.T @ (B @ newton)
        linear = float(residual @ residual) > 1e-20 * max(float(g @ g), 1e-300)
        direction = residual if linear else newton
        values, ceiling = x[free], self.upper[free]
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(direction > 0, (ceiling - values) / direction,
                            np.where(direction < 0, -values / direction, np.inf))
        blocking = int(np.argmin(room))
        step = float(room[blocking]) if linear else min(1.0, float(room[blocking]))
        if not np.isfinite(step) or step <= 0:
            return
        values = values + step * direction
        if step == room[blocking]:     # land exactly on the blocking bound
            values[blocking] = ceiling[blocking] if direction[blocking] > 0 else 0.0
        x[free] = np.clip(values, 0.0, ceiling)
        self.unpack(x, alpha, mu_upper, mu_lower, mu_diag, W)


def warm_up() -> None:
    """Compile (or load from cache) the dual kernel on a tiny problem."""
    F = np.array([[1.0, 0.5], [0.2, -1.0], [0.3, 0.1]])
    y, task = np.array([1.0, -1.0, 1.0]), np.array([0, 1, 1])
    for loss, row_sum in (("hinge", False), ("square", True)):
        next(dual_cd_sweeps(F, y, task, 2, 1.0, 1.0, loss, row_sum=row_sum))


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


# ---------------------------------------------------------------- MT-KR: the paper's SMO
def paper_smo_sweeps(F: np.ndarray, y: np.ndarray, task: np.ndarray, n_tasks: int,
                     lambda1: float, lambda2: float, *, pair_tol: float = 1e-12,
                     max_pairs: int | None = None) -> Iterator[SweepResult]:
    """The paper's SMO for Eq. 7 (Section 3.1), one sweep = every row once; forever.

    Row q's problem (Eq. 8) is ``1/2 w A w^T + w b^T`` with ``A = 2 sum y_hat y_hat^T +
    lambda1 I^q + lambda2 I`` (the paper prints ``lambda1 I_m``, but the symmetry term does not
    involve w_qq: ``I^q``, the identity with its (q, q) entry zeroed, which it defines and never
    uses, is right) and ``b = -2 sum y y_hat - lambda1 c_q`` (c_q: column q of W, its q-th
    entry zeroed). With ``g = A w + b``, pick ``j = argmax g`` over {w_qj = w_qq or interior}
    and ``k = argmin g`` over {interior, w_qk = -w_qq, k = q}; move ``w_qj += t``,
    ``w_qk -= t`` with ``t = clip((g_k - g_j) / (A_jj + A_kk - 2 A_jk), c, e)``. For
    ``k = q`` the bound is ``e = min((w_qq - w_qj) / 2, min_l (w_qq - |w_ql|))`` (the paper's
    ``(w_ik - w_ii) / 2`` with k = i would be 0; the derivation gives ``(w_ii - w_ij) / 2``).
    Since no pair decreases w_qq, the sweeps start from the uniform W (every ``w_qq = 1/m``,
    its least feasible value); the paper does not say where it starts.

    The pair condition is necessary but not sufficient for optimality: moving w_qq together
    with *two* off-diagonal entries can still descend (the KKT system ties w_qq's multiplier
    to all of the row's bound multipliers), so the sweeps never increase the objective but may
    stop short of the optimum; :func:`square_qp_sweeps` is exact.
    """
    m = n_tasks
    grams = [2.0 * F[task == q].T @ F[task == q] for q in range(m)]
    cross = [2.0 * F[task == q].T @ y[task == q] for q in range(m)]
    # the pairs never decrease w_qq (j != q), so start where w_qq is smallest: w_qq >= 1/m
    # for any feasible row (it is the largest entry of a row summing to 1)
    W = np.full((m, m), 1.0 / m)
    limit = max_pairs or 50 * m
    while True:
        for q in range(m):
            A = grams[q] + lambda2 * np.eye(m)
            A[np.arange(m) != q, np.arange(m) != q] += lambda1
            column = W[:, q].copy()
            column[q] = 0.0
            b = -cross[q] - lambda1 * column
            w = W[q]
            g = A @ w + b
            for _ in range(limit):
                d = w[q]
                others = np.arange(m) != q
                upper = others & (w >= d)              # S1
                interior = others & (np.abs(w) < d)    # S2
                lower = others & (w <= -d)             # S3
                up_set = np.flatnonzero(upper | interior)
                down_set = np.flatnonzero(interior | lower)
                down_set = np.append(down_set, q)      # S4 = {q}
                if up_set.size == 0:
                    break
                j = up_set[np.argmax(g[up_set])]
                k = down_set[np.argmin(g[down_set])]
                if j == k or g[j] - g[k] <= pair_tol * max(1.0, abs(g[j])):
                    break
                eta = A[j, j] + A[k, k] - 2.0 * A[j, k]
                if k == q:
                    rest = np.abs(w[others & (np.arange(m) != j)])
                    high = min((d - w[j]) / 2.0, float((d - rest).min()) if rest.size
                               else np.inf)
                    low = -np.inf
                else:
                    low = max(w[k] - d, -w[j] - d)
                    high = min(d - w[j], d + w[k])
                t = min(high, max(low, (g[k] - g[j]) / eta))
                if t == 0.0:
                    break
                w[j] += t
                w[k] -= t
                g += t * (A[:, j] - A[:, k])
        yield SweepResult(W=W.copy(), objective=task_weight_objective(
            W, F, y, task, "square", lambda1, lambda2))
