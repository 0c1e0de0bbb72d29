"""Compiled kernels of :mod:`explorer.solvers.task_weights`: dual coordinate ascent for the
square-loss QP and the interior-point step of the hinge QP."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
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
@njit(cache=True, nogil=True)
def _margins(S, bounds, w, out):
    """out_j = S_j . w[row t_j] (tasks are contiguous row ranges of S)."""
    m = S.shape[1]
    for q in range(m):
        for j in range(bounds[q], bounds[q + 1]):
            total = 0.0
            for r in range(m):
                total += S[j, r] * w[q * m + r]
            out[j] = total


@njit(cache=True, nogil=True)
def _combine(S, bounds, v, out):
    """out[q m + r] = sum_{j in task q} v_j S_jr (the transpose of _margins)."""
    m = S.shape[1]
    out[:] = 0.0
    for q in range(m):
        for j in range(bounds[q], bounds[q + 1]):
            for r in range(m):
                out[q * m + r] += v[j] * S[j, r]


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _direction(S, bounds, cidx, cval, L, d1, d2, d3, s1, s2, s3, rp1, rp2, rp3, rd_w, rd_xi,
               rc1, rc2, rc3, out):
    """Newton direction for complementarity right-hand sides ``rc``; fills ``out`` rows
    (dxi, ds1, ds2, dl1, dl2 over the n examples) and returns (dw, ds3, dl3)."""
    n, m = S.shape
    p = cidx.shape[0]
    rhs = -rd_w
    u1 = np.empty(n)
    u2 = np.empty(n)
    share = np.empty(n)
    for q in range(m):
        for j in range(bounds[q], bounds[q + 1]):
            u1[j] = d1[j] * rp1[j] - rc1[j] / s1[j]
            u2[j] = d2[j] * rp2[j] - rc2[j] / s2[j]
            share[j] = (-rd_xi[j] + u1[j] + u2[j]) / (d1[j] + d2[j])
            v = u2[j] - d2[j] * share[j]
            for r in range(m):
                rhs[q * m + r] += v * S[j, r]
    u3 = np.empty(p)
    for k in range(p):
        u3[k] = d3[k] * rp3[k] - rc3[k] / s3[k]
        for e in range(2):
            rhs[cidx[k, e]] += cval[k, e] * u3[k]
    dw = _cholesky_solve(L, rhs)
    for q in range(m):
        for j in range(bounds[q], bounds[q + 1]):
            Bdw = 0.0
            for r in range(m):
                Bdw += S[j, r] * dw[q * m + r]
            dxi = share[j] - d2[j] * Bdw / (d1[j] + d2[j])
            out[0, j] = dxi
            out[1, j] = dxi - rp1[j]
            out[2, j] = Bdw + dxi - rp2[j]
            out[3, j] = -d1[j] * dxi + u1[j]
            out[4, j] = -d2[j] * (Bdw + dxi) + u2[j]
    ds3 = np.empty(p)
    dl3 = np.empty(p)
    for k in range(p):
        Cdw = cval[k, 0] * dw[cidx[k, 0]] + cval[k, 1] * dw[cidx[k, 1]]
        ds3[k] = Cdw - rp3[k]
        dl3[k] = -d3[k] * Cdw + u3[k]
    return dw, ds3, dl3


@njit(cache=True, nogil=True)
def _room(v, dv, step):
    for i in range(v.shape[0]):
        if dv[i] < 0.0:
            step = min(step, -v[i] / dv[i])
    return step


@njit(cache=True, nogil=True)
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
    out = np.empty((5, n))
    dw, ds3, dl3 = _direction(S, bounds, cidx, cval, L, d1, d2, d3, s1, s2, s3, rp1, rp2, rp3,
                              rd_w, rd_xi, s1 * l1, s2 * l2, s3 * l3, out)
    affine = _room(s1, out[1], _room(s2, out[2], _room(s3, ds3, 1.0)))
    affine = _room(l1, out[3], _room(l2, out[4], _room(l3, dl3, affine)))
    gap_affine = 0.0
    for j in range(n):
        gap_affine += (s1[j] + affine * out[1, j]) * (l1[j] + affine * out[3, j])
        gap_affine += (s2[j] + affine * out[2, j]) * (l2[j] + affine * out[4, j])
    for k in range(p):
        gap_affine += (s3[k] + affine * ds3[k]) * (l3[k] + affine * dl3[k])
    sigma = (gap_affine / total / mu) ** 3
    target = sigma * mu
    rc1 = s1 * l1 + out[1] * out[3] - target
    rc2 = s2 * l2 + out[2] * out[4] - target
    rc3 = s3 * l3 + ds3 * dl3 - target
    dw, ds3, dl3 = _direction(S, bounds, cidx, cval, L, d1, d2, d3, s1, s2, s3, rp1, rp2, rp3,
                              rd_w, rd_xi, rc1, rc2, rc3, out)
    step = _room(s1, out[1], _room(s2, out[2], _room(s3, ds3, 1.0)))
    step = 0.99 * _room(l1, out[3], _room(l2, out[4], _room(l3, dl3, step)))
    for i in range(mm):
        w[i] += step * dw[i]
    for j in range(n):
        xi[j] += step * out[0, j]
        s1[j] += step * out[1, j]
        s2[j] += step * out[2, j]
        l1[j] += step * out[3, j]
        l2[j] += step * out[4, j]
    for k in range(p):
        s3[k] += step * ds3[k]
        l3[k] += step * dl3[k]


@njit(cache=True, nogil=True)
def hinge_values(S, bounds, H_inv, cidx, cval, w_feasible, penalty, l2, l3):
    """Eq. 2's hinge value at a feasible vec(W) (``penalty`` its regulariser) and the dual
    value at the multipliers clipped to the dual's bounds (a lower bound of the optimum)."""
    n, m = S.shape
    p = cidx.shape[0]
    loss = 0.0
    alpha_sum = 0.0
    combo = np.zeros(m * m)
    for q in range(m):
        for j in range(bounds[q], bounds[q + 1]):
            margin = 0.0
            for r in range(m):
                margin += S[j, r] * w_feasible[q * m + r]
            if margin < 1.0:
                loss += 1.0 - margin
            a = min(1.0, max(0.0, l2[j]))
            alpha_sum += a
            for r in range(m):
                combo[q * m + r] += a * S[j, r]
    for k in range(p):
        mu = max(0.0, l3[k])
        for e in range(2):
            combo[cidx[k, e]] += cval[k, e] * mu
    quadratic = combo @ (H_inv @ combo)
    return loss + penalty, alpha_sum - 0.5 * quadratic


@njit(cache=True, nogil=True)
def feasible_values(S, bounds, H_inv, cidx, cval, w, lambda1, lambda2, l2, l3, W):
    """Fill ``W`` (m, m) with the feasible projection of vec(W) ``w`` (as
    ``task_weights.project_feasible`` without row sums) and return (objective, dual) there,
    as :func:`hinge_values`: one compiled call per interior-point step."""
    m = W.shape[0]
    for q in range(m):
        top = max(w[q * m + q], 0.0)
        for r in range(m):
            W[q, r] = top if r == q else min(max(w[q * m + r], -top), top)
    asymmetry = 0.0
    square = 0.0
    for q in range(m):
        for r in range(m):
            diff = W[q, r] - W[r, q]
            asymmetry += diff * diff
            square += W[q, r] * W[q, r]
    penalty = 0.25 * lambda1 * asymmetry + 0.5 * lambda2 * square
    return hinge_values(S, bounds, H_inv, cidx, cval, W.ravel(), penalty, l2, l3)
