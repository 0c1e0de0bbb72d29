"""Compiled dual coordinate ascent for the task-weight problems (see ``task_weights``).

One pass visits every example's dual variable, then every constraint's multiplier. ``W`` is
kept equal to ``H^{-1} M`` (``M`` the dual combination), so each update costs O(m).
"""

from __future__ import annotations

import numpy as np
from numba import njit

HINGE = 0
SQUARE = 1


@njit(cache=True)
def _apply(W, q, vec, coef, cd, ca, cb):
    """W += coef * H^{-1}(e_q vec^T) (a matrix whose only non-zero row is q)."""
    m = W.shape[0]
    for r in range(m):
        if r == q:
            W[q, q] += coef * cd * vec[q]
        else:
            W[q, r] += coef * ca * vec[r]
            W[r, q] += coef * cb * vec[r]


@njit(cache=True)
def dual_passes(F, y, task, loss, row_sum, lambda1, lambda2, alpha, mu_upper, mu_lower,
                mu_diag, nu, W, n_passes):
    """Run ``n_passes`` passes of dual coordinate ascent in place.

    Primal: sum_j loss_j(w_{t_j} . F_j) + lambda1/4 ||W - W^T||^2 + lambda2/2 ||W||^2 s.t.
    w_qq >= 0, w_qq +- w_qr >= 0 and, with ``row_sum``, sum_r w_qr = 1. ``loss`` HINGE is
    max(0, 1 - y f) (alpha in [0, 1]), SQUARE is (y - f)^2 (alpha free).
    """
    n, m = F.shape
    cd = 1.0 / lambda2
    far = 1.0 / (lambda2 + 2.0 * lambda1)
    ca = 0.5 * (cd + far)
    cb = 0.5 * (cd - far)
    ones = np.ones(m)
    for _ in range(n_passes):
        for j in range(n):
            q = task[j]
            f = 0.0
            curv = 0.0
            for r in range(m):
                f += W[q, r] * F[j, r]
                if r == q:
                    curv += cd * F[j, r] * F[j, r]
                else:
                    curv += ca * F[j, r] * F[j, r]
            if loss == HINGE:
                if curv <= 0.0:
                    continue
                new = alpha[j] + (1.0 - y[j] * f) / curv
                new = min(1.0, max(0.0, new))
                delta = new - alpha[j]
                coef = delta * y[j]
            else:
                new = alpha[j] + (y[j] - f - 0.5 * alpha[j]) / (curv + 0.5)
                delta = new - alpha[j]
                coef = delta
            if delta != 0.0:
                alpha[j] = new
                _apply(W, q, F[j], coef, cd, ca, cb)
        for q in range(m):
            for r in range(m):
                if r == q:
                    continue
                for sign in (1.0, -1.0):
                    value = W[q, q] + sign * W[q, r]
                    mu = mu_upper[q, r] if sign < 0 else mu_lower[q, r]
                    new = max(0.0, mu - value / (cd + ca))
                    delta = new - mu
                    if delta != 0.0:
                        if sign < 0:
                            mu_upper[q, r] = new
                        else:
                            mu_lower[q, r] = new
                        W[q, q] += delta * cd
                        W[q, r] += delta * sign * ca
                        W[r, q] += delta * sign * cb
            new = max(0.0, mu_diag[q] - W[q, q] / cd)
            delta = new - mu_diag[q]
            if delta != 0.0:
                mu_diag[q] = new
                W[q, q] += delta * cd
            if row_sum:
                total = 0.0
                for r in range(m):
                    total += W[q, r]
                delta = (1.0 - total) / (cd + ca * (m - 1))
                nu[q] += delta
                _apply(W, q, ones, delta, cd, ca, cb)


@njit(cache=True)
def qp_dual_passes(A, rhs, n_ineq, Z, curvature, lam, w, n_passes):
    """Coordinate ascent on the dual of ``min 1/2 w^T P w + c^T w`` s.t. ``A w >= rhs`` (the
    first ``n_ineq`` rows) and ``A w = rhs`` (the rest), in place.

    ``Z = P^{-1} A^T``, ``curvature[k] = A_k . Z_k``; ``w = -P^{-1} c + Z lam`` is kept current.
    """
    n_cons = A.shape[0]
    for _ in range(n_passes):
        for k in range(n_cons):
            if curvature[k] <= 0.0:
                continue
            slack = rhs[k]
            for v in range(w.shape[0]):
                slack -= A[k, v] * w[v]
            new = lam[k] + slack / curvature[k]
            if k < n_ineq and new < 0.0:
                new = 0.0
            delta = new - lam[k]
            if delta != 0.0:
                lam[k] = new
                for v in range(w.shape[0]):
                    w[v] += delta * Z[v, k]
