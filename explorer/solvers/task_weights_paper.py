"""The paper's own solvers for W (Zhang 2013): coordinate descent for Eq. 2, SMO for Eq. 7.

MT-KNN, coordinate descent one entry at a time, each one-dimensional problem solved exactly:

* off-diagonal ``w_qr`` (Eq. 3): ``lambda/2 w^2 - beta w + sum_j max(0, a_j w + b_j)`` on
  ``[-w_qq, w_qq]`` with ``lambda = lambda1 + lambda2``, ``beta = lambda1 w_rq``; the
  piecewise-quadratic objective is minimised by one walk over its sorted breakpoints
  (:func:`hinge_breakpoint_min`, Table 1);
* diagonal ``w_qq`` (Eq. 4): the same walk with ``lambda = lambda2``, ``beta = 0`` on
  ``[max(0, max_r |w_qr|), inf)``;
* square loss: the closed forms below Eq. 4 (:func:`square_coordinate_min`).

Axis-only steps can stall at a corner of the constraint set: when ``w_qr = +-w_qq`` is
tight, the objective may decrease only by moving ``w_qq`` *and* ``w_qr`` together. Each
sweep therefore also solves, per row, the coupled one-dimensional problem along
``w_qq <- w_qq + t, w_qr <- w_qr + sign(w_qr) t`` for the tight ``r`` (one at a time, then
all together) with the same walk / closed form. Even so coordinate descent can stop well
short of the optimum (``MTKNN.gap_to_optimum`` at MT-KNN's defaults: 0.01-18% above it on
synthetic task families, 0.35-16.5% on the app's opening data, seeds 7600-7611, measured by
``benchmarks/measure_mtknn_paper_gap.py``; 5-27% on digit-pair tasks; the figures and how
they were measured are in ``MTKNN``'s docstring): the hinge's kinks stop single-entry moves, and
a row whose diagonal move alone does not pay stays 0 from the start W = 0 (its off-diagonal
entries are boxed in [-w_qq, w_qq] = {0} and the coupled moves skip rows with w_qq <= 0).
The sweeps never increase the objective, but the exact solvers of
:mod:`explorer.solvers.task_weights` are the default.

MT-KR (Eq. 7-8): SMO over the most violating pair of a row (Section 3.1) with the analytic
clipped step, :func:`paper_smo_sweeps`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .task_weights import SweepResult, task_weight_objective

__all__ = ["hinge_breakpoint_min", "square_coordinate_min", "paper_cd_sweeps",
           "paper_smo_sweeps"]

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
