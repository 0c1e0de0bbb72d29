"""Block coordinate descent (BCD) for stacked least squares plus group penalties.

Solves the rMTFL family's problem (rMTFL paper, Eq. 2, and its L2,1 / column-group / lasso
baselines) on per-task designs,

    min  f(W) + sum_b lam_b g_b(B_b),   f(W) = sum_t w_t ||X_t w_t - y_t||^2,
    W = sum_b B_b,   w_t = 1 / (m n_t),

with ``g_b`` one of the penalties of :mod:`explorer.solvers.penalties` that block CD
visits group by group (``Penalty.groups``): row groups ``||B||_{1,2}`` (the shared
features, P), column groups ``||B^T||_{1,2}`` (outlier tasks, Q), or ``||B||_1``; at most
one block visited by rows and one by columns (rMTFL is rows + columns). One *sweep*
updates every group of the working set once, keeping the residuals ``X_t w_t - y_t`` up to
date (so a step on one group costs one pass over that group's data, not over all of X):

* a row j of a row-group block: one proximal step with the block's constant
  ``L_j = max_t 2 w_t ||X_t[:, j]||^2`` (the Hessian of f in row j is
  ``diag(2 w_t ||X_t[:, j]||^2)``, so this majorises f and the step is closed-form group
  soft-thresholding, Eq. 6); with a shared, normalised design all ``L_j`` are equal to the
  diagonal and the step is the exact block minimisation (scikit-learn's MultiTaskLasso);
* an entry of an L1 block: the exact coordinate minimisation (soft-thresholding);
* a column t of a column-group block: one proximal-gradient step with the column's own
  constant (backtracking from ``2 w_t`` times the largest ``||X_t[:, j]||^2``, doubling,
  never decreasing; Eq. 7 for the prox). rMTFL alternates: rows of P, then columns of Q.

Every step decreases the objective (a majorise-minimise step), so the objective is
non-increasing from sweep to sweep.

Working set (celer / skglm's idea): sweeps visit only the groups that are nonzero or
violate their optimality condition (``g_j^*(G_j) > lam``, G the gradient of f: the
penalty's ``group_dual_norms``) at the last
check; the working set grows (to at most twice the nonzero groups, and 10 rows) and is
recomputed at each check, so groups that stay zero cost nothing. Correctness never depends
on it: the stopping test is the duality gap of the *full* problem.

Duality gap (derived here, not in the paper). With the dual point ``theta_t = 2 s w_t r_t``
(``r`` the residuals), scaled by ``s = min(1, min_b lam_b / g_b^*(G))`` into the dual
feasible set (``g^*`` the dual norm: largest row norm, column norm, or absolute entry;
:meth:`~explorer.solvers.penalties.BlockSum.dual_bound`),

    gap = (1 - s)^2 f(W) + sum_b [ s <G, B_b> + lam_b g_b(B_b) ],

every term non-negative (so it is computed without cancellation). ``gap >= F(W) - F*``;
the solver reports ``gap / F(W)`` and the caller stops at ``tol``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ._bcd_kernels import _bcd_sweeps, _column_sq_norms, _full_gradient, _residuals_f
from ._fista_kernels import ROWS
from .multitask_least_squares import StackedTasks
from .penalties import BlockSum, ColumnGroups, Lasso, Penalty, RowGroups, as_block_sum

__all__ = ["BlockCDStep", "block_cd_steps", "duality_gap", "handles",
           "relative_duality_gap", "warm_up"]

#: Sweeps combined by one Anderson extrapolation step.
_ANDERSON = 5
#: A gap check at least every this many sweeps, even when the inner loop has not settled.
_CHECK_EVERY = 10
#: Smallest working set of rows.
_MIN_ROWS = 100
#: Residuals kept for the dual extrapolation.
_EXTRAPOLATE = 5
#: Designs up to this many entries get the gradient from the compiled loop, larger from BLAS.
_SMALL_GRADIENT = 200_000


@dataclass(frozen=True)
class BlockCDStep:
    """State after one sweep. ``x`` (d, k m) is a copy, never mutated afterwards.

    ``dual_gap`` is the relative duality gap ``gap / objective`` when it was computed after
    this sweep, else NaN; ``converged`` is ``dual_gap <= tol``.
    """

    iteration: int
    x: np.ndarray
    objective: float
    smooth_value: float
    relative_change: float
    dual_gap: float
    converged: bool
    working_set: int


def _design(data: StackedTasks) -> tuple[np.ndarray, np.ndarray]:
    """``(XT, xstart)``: the designs transposed, (d, N) in C order, and each task's first
    column in them (no copy when ``data`` was built with the "features" layout)."""
    if data.shared_design is not None:
        return data.X_by_feature, np.zeros(data.m, dtype=np.int64)
    return data.X_by_feature, np.asarray(data.offsets[:-1], dtype=np.int64)


def handles(penalty: BlockSum | Sequence[Penalty | type[Penalty]]) -> bool:
    """Whether :func:`block_cd_steps` solves this penalty (its blocks, or their classes):
    every block visited group by group, at most one by rows and one by columns."""
    groups = [p.groups for p in penalty]
    return bool(groups) and None not in groups and \
        groups.count("rows") <= 1 and groups.count("columns") <= 1


def duality_gap(G: np.ndarray, x: np.ndarray, penalty: BlockSum,
                smooth_value: float) -> float:
    """The duality gap (module docstring) at ``x`` (d, k m) with gradient ``G`` (d, m)."""
    s = min(1.0, penalty.dual_bound(G))
    gap = (1.0 - s) ** 2 * smooth_value
    for p, B in zip(penalty, penalty.split(x), strict=True):
        gap += s * float(np.sum(G * B)) + p.value(B)
    return max(gap, 0.0)


def relative_duality_gap(data: StackedTasks, penalty: Penalty | BlockSum,
                         x: np.ndarray) -> float:
    """``gap / F(x)`` at any iterate ``x`` (d, k m) of any solver (the same certificate
    for MFISTA's answer as for BCD's)."""
    penalty = as_block_sum(penalty)
    f, G = data.value_grad(penalty.total(x))
    F = f + penalty.value(x)
    return duality_gap(G, x, penalty, f) / max(F, 1e-300)


def _dual_value(rho: np.ndarray, y: np.ndarray, row_task: np.ndarray, weight: np.ndarray,
                G: np.ndarray, penalty: BlockSum) -> float:
    """The dual objective at ``theta_t = 2 s w_t rho_t`` for any residual-like ``rho`` with
    gradient ``G`` (``G_t = 2 w_t X_t^T rho_t``): ``-sum_t w_t (2 s <rho_t, y_t> +
    s^2 ||rho_t||^2)``, with the best feasible ``s`` (the unconstrained optimum clipped to
    the dual ball). Any such point gives a lower bound of the optimum."""
    m = weight.size
    ry = float(weight @ np.bincount(row_task, weights=rho * y, minlength=m))
    rr = float(weight @ np.bincount(row_task, weights=rho * rho, minlength=m))
    bound = penalty.dual_bound(G)
    s = -ry / rr if rr > 0 else 0.0
    s = min(max(s, -bound), bound)
    return -(2.0 * s * ry + s * s * rr)


def _column_constants(XF: np.ndarray, xstart: np.ndarray, offsets: np.ndarray,
                      weight: np.ndarray, colsq: np.ndarray) -> np.ndarray:
    """Start of each column's constant: ``2 w_t ||X_t||_2^2`` exactly on small tasks, else
    the largest diagonal entry (a lower bound; backtracking doubles it as needed)."""
    L = 2.0 * weight * colsq.max(axis=1)
    for t in range(weight.size):
        n = offsets[t + 1] - offsets[t]
        if n * XF.shape[0] <= 200_000 and n > 0:
            Xt = XF[:, xstart[t]:xstart[t] + n]  # (d, n_t)
            gram = Xt.T @ Xt if n <= XF.shape[0] else Xt @ Xt.T
            L[t] = 2.0 * weight[t] * float(np.linalg.eigvalsh(gram)[-1]) * (1 + 1e-10)
    return np.maximum(L, 1e-300)


def block_cd_steps(data: StackedTasks, penalty: Penalty | BlockSum, x0: np.ndarray, *,
                   tol: float) -> Iterator[BlockCDStep]:
    """Yield one :class:`BlockCDStep` per sweep forever (the caller stops, on ``converged``
    or a budget).

    Parameters
    ----------
    data : StackedTasks
        The (normalised, centred) stacked tasks; a shared design is used once, never
        replicated.
    penalty : Penalty or BlockSum
        One penalty per block, in block order, that :func:`handles` accepts, each with a
        positive weight.
    x0 : ndarray of shape (d, k m)
        Start (copied); the k blocks side by side.
    tol : float >= 0
        Relative duality gap at which a step is marked converged.
    """
    penalty = as_block_sum(penalty)
    if not handles(penalty):
        raise ValueError("block coordinate descent handles penalties visited group by group, "
                         f"at most one by rows and one by columns; got {penalty!r}.")
    if not all(lam > 0 and math.isfinite(lam) for lam in penalty.lams):
        raise ValueError(f"block coordinate descent needs positive finite penalties; "
                         f"got {list(penalty.lams)}.")
    m, d, k = data.m, data.d, len(penalty)
    x = np.array(x0, dtype=np.float64, copy=True)
    del x0  # (the generator's frame would hold the caller's start for the whole fit)
    if x.shape != (d, k * m):
        raise ValueError(f"x0 must have shape ({d}, {k * m}); got {x.shape}.")
    XF, xstart = _design(data)
    offsets = np.asarray(data.offsets, dtype=np.int64)
    weight = np.asarray(data.weight, dtype=np.float64)
    y = np.ascontiguousarray(data.y, dtype=np.float64)
    if data.shared_design is not None:  # one design: its column norms once
        colsq = np.tile(np.einsum("ji,ji->j", XF, XF), (m, 1))
    else:
        colsq = _column_sq_norms(XF, xstart, offsets)
    # what the compiled sweeps need of the penalty: which block is visited by rows (its
    # kernel code and weight) and which by columns (its weight)
    row_block = next((b for b, p in enumerate(penalty) if p.groups == "rows"), -1)
    col_block = next((b for b, p in enumerate(penalty) if p.groups == "columns"), -1)
    row_kind = penalty[row_block].code if row_block >= 0 else ROWS
    row_lam = penalty[row_block].lam if row_block >= 0 else 0.0
    col_lam = penalty[col_block].lam if col_block >= 0 else 0.0
    Lcol = _column_constants(XF, xstart, offsets, weight, colsq) if col_block >= 0 else \
        np.ones(m)
    r = _residuals_f(XF, xstart, offsets, y, np.ascontiguousarray(penalty.total(x)))
    f = float(weight @ np.add.reduceat(r * r, offsets[:-1])) if r.size else 0.0
    F = f + penalty.value(x)

    def working_sets(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = np.empty(0, dtype=np.int64)
        cols = np.empty(0, dtype=np.int64)
        if row_block >= 0:
            B = x[:, row_block * m:(row_block + 1) * m]
            nonzero = penalty[row_block].support(B)
            score = penalty[row_block].group_dual_norms(G) / row_lam
            score[nonzero] = np.inf
            n_nonzero = int(nonzero.sum())
            cap = min(d, max(_MIN_ROWS, 2 * n_nonzero))
            candidates = np.flatnonzero(score > 1.0)
            if candidates.size > cap:
                candidates = candidates[np.argsort(-score[candidates], kind="stable")[:cap]]
            rows = np.sort(candidates).astype(np.int64)
        if col_block >= 0:
            B = x[:, col_block * m:(col_block + 1) * m]
            score = penalty[col_block].group_dual_norms(G) / col_lam
            score[penalty[col_block].support(B)] = np.inf
            cols = np.flatnonzero(score > 1.0).astype(np.int64)
        return rows, cols

    row_task = np.asarray(data.row_task, dtype=np.int64)
    history: list[np.ndarray] = []  # residuals after the last calls (dual extrapolation)

    def gradient(rho: np.ndarray) -> np.ndarray:
        if data.shared_design is not None:  # one GEMM
            return (XF @ rho.reshape(m, -1).T) * (2.0 * weight)
        if XF.size <= _SMALL_GRADIENT:
            return _full_gradient(XF, xstart, offsets, weight, rho)
        G = np.empty((d, m))
        for t in range(m):
            a, b = offsets[t], offsets[t + 1]
            G[:, t] = (2.0 * weight[t]) * (XF[:, xstart[t]:xstart[t] + b - a] @ rho[a:b])
        return G

    def relative_gap(G: np.ndarray, f: float, F: float) -> float:
        gap = duality_gap(G, x, penalty, f)
        extrapolated = _extrapolate(history)
        if extrapolated is not None and gap > tol * F:
            G_acc = gradient(extrapolated)
            dual = _dual_value(extrapolated, y, row_task, weight, G_acc, penalty)
            gap = min(gap, max(F - dual, 0.0))
        return gap / max(F, 1e-300)

    G = data.grad_at_zero() if not np.any(x) else gradient(r)  # lambda_max's, cached
    rel_gap = relative_gap(G, f, F)
    ws_rows, ws_cols = working_sets(G)
    inner_tol = max(1e-2 * tol, 1e-3 * rel_gap)
    iteration = 0
    since_check = 0
    iterates: list[tuple[np.ndarray, np.ndarray]] = []  # (x, r) for the Anderson step

    while True:
        F_before = F
        xs, stats, n_done, status = _bcd_sweeps(
            XF, xstart, offsets, y, weight, colsq, row_block, row_kind, row_lam, col_block,
            col_lam, x, r, Lcol, ws_rows, ws_cols, 1, inner_tol, F)
        if status < 0:
            raise FloatingPointError("the column step's line search failed after 60 "
                                     "doublings; the data may not be finite.")
        F, f, change = (float(v) for v in stats[0])
        step_x = xs[0]
        # Anderson acceleration of the sweeps (skglm's idea): the affine combination of the
        # last iterates that best cancels their differences, kept only if it is better
        iterates.append((step_x, r.copy()))
        if len(iterates) > _ANDERSON:
            accelerated = _anderson(iterates)
            iterates.clear()
            if accelerated is not None:
                x_acc, r_acc = accelerated
                f_acc = float(weight @ np.bincount(row_task, weights=r_acc * r_acc,
                                                   minlength=m))
                F_acc = f_acc + penalty.value(x_acc)
                if F_acc < F:
                    x[...] = x_acc
                    r[...] = r_acc
                    step_x, F, f = x_acc, F_acc, f_acc
                    change = (F_before - F) / max(abs(F_before), 1e-300)
        history.append(r.copy())
        del history[:-_EXTRAPOLATE]
        since_check += 1
        iteration += 1
        rel_gap = math.nan
        if status == 1 or since_check >= _CHECK_EVERY:
            since_check = 0
            G = gradient(r)
            rel_gap = relative_gap(G, f, F)
            if rel_gap > tol:
                new_rows, new_cols = working_sets(G)
                if np.array_equal(new_rows, ws_rows) and np.array_equal(new_cols, ws_cols):
                    # the working set is right; what is missing is precision
                    inner_tol = 1e-2 * min(inner_tol, tol)
                else:
                    inner_tol = max(1e-2 * tol, 1e-3 * rel_gap)
                    iterates.clear()
                ws_rows, ws_cols = new_rows, new_cols
        yield BlockCDStep(iteration, step_x, F, f, abs(change), rel_gap,
                          bool(rel_gap <= tol), ws_rows.size + ws_cols.size)


def _anderson_weights(points: np.ndarray) -> np.ndarray | None:
    """Weights (summing to 1) of the affine combination of ``points[1:]`` (rows) that best
    cancels their successive differences, or None when that system is singular."""
    return _weights_of_differences(np.diff(points, axis=0))


def _weights_of_differences(U: np.ndarray) -> np.ndarray | None:
    """:func:`_anderson_weights` from the successive differences ``U`` (rows)."""
    try:
        z = np.linalg.solve(U @ U.T, np.ones(U.shape[0]))
    except np.linalg.LinAlgError:
        return None
    total = z.sum()
    if not np.isfinite(total) or total == 0:
        return None
    return z / total


def _anderson(iterates: list[tuple[np.ndarray, np.ndarray]]
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """Anderson extrapolation of (x, r) pairs (r is affine in x, so it combines alike).

    One (k - 1, x.size) buffer holds the differences, then the points combined (the
    iterates are not stacked into a copy of their own)."""
    points = [z.ravel() for z, _ in iterates]
    work = np.empty((len(points) - 1, points[0].size))
    for k in range(len(points) - 1):
        np.subtract(points[k + 1], points[k], out=work[k])
    c = _weights_of_differences(work)
    if c is None:
        return None
    for k in range(len(points) - 1):
        work[k] = points[k + 1]
    x_acc = (c @ work).reshape(iterates[0][0].shape)
    r_acc = c @ np.array([rr for _, rr in iterates[1:]])
    return x_acc, r_acc


def _extrapolate(history: list[np.ndarray]) -> np.ndarray | None:
    """Dual extrapolation (celer, Massias et al. 2018): the affine combination of the last
    residuals that best cancels their differences (an Anderson step), or None."""
    if len(history) < _EXTRAPOLATE:
        return None
    R = np.array(history)
    c = _anderson_weights(R)
    return None if c is None else c @ R[1:]


def warm_up() -> None:
    """Compile (or load from the on-disk cache) the kernels on tiny data (server start)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 3))
    task = np.repeat([0, 1], 4)
    for design in (X, np.vstack([X[:4], X[:4]])):
        data = StackedTasks(design, rng.normal(size=8), task, 2)
        for penalty in (BlockSum(RowGroups(0.01)), BlockSum(ColumnGroups(0.01)),
                        BlockSum(Lasso(0.01)), BlockSum(RowGroups(0.01), ColumnGroups(0.01))):
            steps = block_cd_steps(data, penalty, np.zeros((3, 2 * len(penalty))), tol=1e-6)
            next(steps)
