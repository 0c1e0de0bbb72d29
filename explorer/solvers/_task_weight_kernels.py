"""Compiled kernels of :mod:`explorer.solvers.task_weights`: dual coordinate ascent for the
square-loss QP and the interior-point step of the hinge QP."""

from __future__ import annotations

import numpy as np
from numba import njit


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


# ---------------------------------------------------------------- hinge interior point
@njit(cache=True)
def _margins(S, bounds, w, out):
    """out_j = S_j . w[row t_j] (tasks are contiguous row ranges of S)."""
    m = S.shape[1]
    for q in range(m):
        for j in range(bounds[q], bounds[q + 1]):
            total = 0.0
            for r in range(m):
                total += S[j, r] * w[q * m + r]
            out[j] = total


@njit(cache=True)
def _combine(S, bounds, v, out):
    """out[q m + r] = sum_{j in task q} v_j S_jr (the transpose of _margins)."""
    m = S.shape[1]
    out[:] = 0.0
    for q in range(m):
        for j in range(bounds[q], bounds[q + 1]):
            for r in range(m):
                out[q * m + r] += v[j] * S[j, r]


@njit(cache=True)
def _cholesky_solve(L, b):
    n = b.shape[0]
    z = np.empty(n)
    for i in range(n):
        total = b[i]
        for k in range(i):
            total -= L[i, k] * z[k]
        z[i] = total / L[i, i]
    x = np.empty(n)
    for i in range(n - 1, -1, -1):
        total = z[i]
        for k in range(i + 1, n):
            total -= L[k, i] * x[k]
        x[i] = total / L[i, i]
    return x


@njit(cache=True)
def _direction(S, bounds, cidx, cval, L, d1, d2, d3, s1, s2, s3, rp1, rp2, rp3, rd_w, rd_xi,
               rc1, rc2, rc3):
    n, m = S.shape
    p = cidx.shape[0]
    u1 = d1 * rp1 - rc1 / s1
    u2 = d2 * rp2 - rc2 / s2
    u3 = d3 * rp3 - rc3 / s3
    share = (-rd_xi + u1 + u2) / (d1 + d2)
    rhs = np.empty(m * m)
    _combine(S, bounds, u2 - d2 * share, rhs)
    rhs -= rd_w
    for k in range(p):
        for e in range(2):
            rhs[cidx[k, e]] += cval[k, e] * u3[k]
    dw = _cholesky_solve(L, rhs)
    Bdw = np.empty(n)
    _margins(S, bounds, dw, Bdw)
    Cdw = np.zeros(p)
    for k in range(p):
        for e in range(2):
            Cdw[k] += cval[k, e] * dw[cidx[k, e]]
    dxi = share - d2 * Bdw / (d1 + d2)
    return (dw, dxi, dxi - rp1, Bdw + dxi - rp2, Cdw - rp3,
            -d1 * dxi + u1, -d2 * (Bdw + dxi) + u2, -d3 * Cdw + u3)


@njit(cache=True)
def _room(v, dv, step):
    for i in range(v.shape[0]):
        if dv[i] < 0.0:
            step = min(step, -v[i] / dv[i])
    return step


@njit(cache=True)
def ipm_step(S, bounds, H, cidx, cval, w, xi, s1, s2, s3, l1, l2, l3):
    """One Mehrotra predictor-corrector step of the hinge QP (see task_weights), in place.

    ``S`` (n, m): rows ``y_j x_hat_j`` sorted by task (``bounds`` the task offsets); ``C``
    given sparsely (each constraint row has at most 2 entries: ``cidx``, ``cval``).
    """
    n, m = S.shape
    p = cidx.shape[0]
    mm = m * m
    rd_w = H @ w
    tmp = np.empty(mm)
    _combine(S, bounds, l2, tmp)
    rd_w -= tmp
    for k in range(p):
        for e in range(2):
            rd_w[cidx[k, e]] -= cval[k, e] * l3[k]
    rd_xi = 1.0 - l1 - l2
    margins = np.empty(n)
    _margins(S, bounds, w, margins)
    Cw = np.zeros(p)
    for k in range(p):
        for e in range(2):
            Cw[k] += cval[k, e] * w[cidx[k, e]]
    rp1, rp2, rp3 = s1 - xi, s2 - margins - xi + 1.0, s3 - Cw
    total = 2 * n + p
    mu = (s1 @ l1 + s2 @ l2 + s3 @ l3) / total
    d1, d2, d3 = l1 / s1, l2 / s2, l3 / s3
    ew = d1 * d2 / (d1 + d2)
    K = H.copy()
    for k in range(p):
        for a in range(2):
            for b in range(2):
                K[cidx[k, a], cidx[k, b]] += d3[k] * cval[k, a] * cval[k, b]
    for q in range(m):
        base = q * m
        for j in range(bounds[q], bounds[q + 1]):
            for r in range(m):
                scaled = ew[j] * S[j, r]
                for c in range(r + 1):
                    K[base + r, base + c] += scaled * S[j, c]
    for r in range(mm):          # only the lower triangle was accumulated for the blocks
        for c in range(r + 1, mm):
            if (r // m) == (c // m):
                K[r, c] = K[c, r]
    L = np.linalg.cholesky(K)
    dw, dxi, ds1, ds2, ds3, dl1, dl2, dl3 = _direction(
        S, bounds, cidx, cval, L, d1, d2, d3, s1, s2, s3, rp1, rp2, rp3, rd_w, rd_xi,
        s1 * l1, s2 * l2, s3 * l3)
    affine = _room(s1, ds1, _room(s2, ds2, _room(s3, ds3, 1.0)))
    affine = _room(l1, dl1, _room(l2, dl2, _room(l3, dl3, affine)))
    mu_affine = ((s1 + affine * ds1) @ (l1 + affine * dl1)
                 + (s2 + affine * ds2) @ (l2 + affine * dl2)
                 + (s3 + affine * ds3) @ (l3 + affine * dl3)) / total
    sigma = (mu_affine / mu) ** 3
    dw, dxi, ds1, ds2, ds3, dl1, dl2, dl3 = _direction(
        S, bounds, cidx, cval, L, d1, d2, d3, s1, s2, s3, rp1, rp2, rp3, rd_w, rd_xi,
        s1 * l1 + ds1 * dl1 - sigma * mu, s2 * l2 + ds2 * dl2 - sigma * mu,
        s3 * l3 + ds3 * dl3 - sigma * mu)
    step = _room(s1, ds1, _room(s2, ds2, _room(s3, ds3, 1.0)))
    step = 0.99 * _room(l1, dl1, _room(l2, dl2, _room(l3, dl3, step)))
    w += step * dw
    xi += step * dxi
    s1 += step * ds1
    s2 += step * ds2
    s3 += step * ds3
    l1 += step * dl1
    l2 += step * dl2
    l3 += step * dl3
