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
# The examples run along the last axis of ``St`` (m, n), so a pass over one task's examples
# is a contiguous loop; loops index slices from 0 (a non-negative index needs no wraparound
# check, which lets LLVM vectorise them). Sums over examples may be reordered (``_SUM``) to
# run in vector lanes: they round differently from a left-to-right sum, by about one ulp per
# term. Everything else keeps IEEE arithmetic.
_SUM = {"reassoc", "contract", "nsz"}


@njit(cache=True, nogil=True, fastmath=_SUM)
def _dot(a, b):
    """sum_j a_j b_j over two equally long 1-D arrays."""
    total = 0.0
    for j in range(a.shape[0]):
        total += a[j] * b[j]
    return total


@njit(cache=True, nogil=True)
def _margins(St, bounds, w, out):
    """out_j = sum_r St[r, j] w[t_j m + r] (tasks are contiguous column ranges of St)."""
    m = St.shape[0]
    for q in range(m):
        lo, hi = bounds[q], bounds[q + 1]
        part = out[lo:hi]
        part[:] = 0.0
        for r in range(m):
            coef = w[q * m + r]
            row = St[r, lo:hi]
            for j in range(hi - lo):
                part[j] += coef * row[j]


@njit(cache=True, nogil=True)
def _combine(St, bounds, v, out):
    """out[q m + r] = sum_{j in task q} v_j St[r, j] (the transpose of _margins)."""
    m = St.shape[0]
    for q in range(m):
        lo, hi = bounds[q], bounds[q + 1]
        for r in range(m):
            out[q * m + r] = _dot(v[lo:hi], St[r, lo:hi])


@njit(cache=True, nogil=True, error_model="numpy")
def _cholesky(K):
    """Overwrite the lower triangle of the symmetric positive definite ``K`` (N, N) with its
    Cholesky factor (right-looking: each column scales, then updates the rows below it in
    contiguous runs); the strict upper triangle is left as it was."""
    size = K.shape[0]
    column = np.empty(size)
    for j in range(size):
        if not K[j, j] > 0.0:
            raise ArithmeticError("the interior-point Newton matrix is not positive definite")
        pivot = np.sqrt(K[j, j])
        K[j, j] = pivot
        for i in range(j + 1, size):
            K[i, j] /= pivot
            column[i] = K[i, j]
        for i in range(j + 1, size):
            factor = column[i]
            run = K[i, j + 1:i + 1]
            below = column[j + 1:i + 1]
            for k in range(i - j):
                run[k] -= factor * below[k]


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


@njit(cache=True, nogil=True, error_model="numpy")
def _direction(St, bounds, cidx, cval, L, d1, d2, d3, s1, s2, s3, rp1, rp2, rp3, rd_w, rd_xi,
               rc1, rc2, rc3, work, out):
    """Newton direction for complementarity right-hand sides ``rc``; fills ``out`` rows
    (dxi, ds1, ds2, dl1, dl2 over the n examples) and returns (dw, ds3, dl3). ``work``
    (4, n) is scratch."""
    m, n = St.shape
    p = cidx.shape[0]
    u1, u2, share, v = work[0], work[1], work[2], work[3]
    for j in range(n):
        u1[j] = d1[j] * rp1[j] - rc1[j] / s1[j]
        u2[j] = d2[j] * rp2[j] - rc2[j] / s2[j]
        share[j] = (-rd_xi[j] + u1[j] + u2[j]) / (d1[j] + d2[j])
        v[j] = u2[j] - d2[j] * share[j]
    rhs = np.empty(m * m)
    _combine(St, bounds, v, rhs)
    for i in range(m * m):
        rhs[i] -= rd_w[i]
    u3 = np.empty(p)
    for k in range(p):
        u3[k] = d3[k] * rp3[k] - rc3[k] / s3[k]
        for e in range(2):
            rhs[cidx[k, e]] += cval[k, e] * u3[k]
    dw = _cholesky_solve(L, rhs)
    Bdw = v                      # v is no longer needed
    _margins(St, bounds, dw, Bdw)
    for j in range(n):
        dxi = share[j] - d2[j] * Bdw[j] / (d1[j] + d2[j])
        out[0, j] = dxi
        out[1, j] = dxi - rp1[j]
        out[2, j] = Bdw[j] + dxi - rp2[j]
        out[3, j] = -d1[j] * dxi + u1[j]
        out[4, j] = -d2[j] * (Bdw[j] + dxi) + u2[j]
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


@njit(cache=True, nogil=True, error_model="numpy")
def ipm_step(St, bounds, H, cidx, cval, w, xi, s1, s2, s3, l1, l2, l3):
    """One Mehrotra predictor-corrector step of the hinge QP (see task_weights), in place.

    ``St`` (m, n): columns ``y_j x_hat_j`` sorted by task (``bounds`` the task offsets); ``C``
    given sparsely (each constraint row has at most 2 entries: ``cidx``, ``cval``).
    """
    m, n = St.shape
    p = cidx.shape[0]
    mm = m * m
    rd_w = H @ w
    tmp = np.empty(mm)
    _combine(St, bounds, l2, tmp)
    for i in range(mm):
        rd_w[i] -= tmp[i]
    for k in range(p):
        for e in range(2):
            rd_w[cidx[k, e]] -= cval[k, e] * l3[k]
    # per example: residuals, scalings d = lam / s and the Newton weights ew
    per = np.empty((8, n))
    rd_xi, rp1, rp2, d1, d2, ew, rc1, rc2 = per[0], per[1], per[2], per[3], per[4], per[5], \
        per[6], per[7]
    _margins(St, bounds, w, rp2)
    for j in range(n):
        rd_xi[j] = 1.0 - l1[j] - l2[j]
        rp1[j] = s1[j] - xi[j]
        rp2[j] = s2[j] - rp2[j] - xi[j] + 1.0
        d1[j] = l1[j] / s1[j]
        d2[j] = l2[j] / s2[j]
        ew[j] = d1[j] * d2[j] / (d1[j] + d2[j])
        rc1[j] = s1[j] * l1[j]
        rc2[j] = s2[j] * l2[j]
    Cw = np.zeros(p)
    for k in range(p):
        for e in range(2):
            Cw[k] += cval[k, e] * w[cidx[k, e]]
    rp3, d3, rc3 = s3 - Cw, l3 / s3, s3 * l3
    total = 2 * n + p
    mu = (s1 @ l1 + s2 @ l2 + s3 @ l3) / total
    K = H.copy()
    for k in range(p):
        for a in range(2):
            for b in range(2):
                K[cidx[k, a], cidx[k, b]] += d3[k] * cval[k, a] * cval[k, b]
    work = np.empty((4, n))
    for q in range(m):
        base, lo, hi = q * m, bounds[q], bounds[q + 1]
        e, scaled = ew[lo:hi], work[0, lo:hi]
        for r in range(m):
            row = St[r, lo:hi]
            for j in range(hi - lo):
                scaled[j] = e[j] * row[j]
            for c in range(r + 1):
                block = _dot(scaled, St[c, lo:hi])
                K[base + r, base + c] += block
                if c != r:
                    K[base + c, base + r] += block
    _cholesky(K)
    L = K
    out = np.empty((5, n))
    dw, ds3, dl3 = _direction(St, bounds, cidx, cval, L, d1, d2, d3, s1, s2, s3, rp1, rp2,
                              rp3, rd_w, rd_xi, rc1, rc2, rc3, work, out)
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
    for j in range(n):
        rc1[j] = s1[j] * l1[j] + out[1, j] * out[3, j] - target
        rc2[j] = s2[j] * l2[j] + out[2, j] * out[4, j] - target
    rc3 = s3 * l3 + ds3 * dl3 - target
    dw, ds3, dl3 = _direction(St, bounds, cidx, cval, L, d1, d2, d3, s1, s2, s3, rp1, rp2,
                              rp3, rd_w, rd_xi, rc1, rc2, rc3, work, out)
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
def hinge_values(St, bounds, H_inv, cidx, cval, w_feasible, penalty, l2, l3):
    """Eq. 2's hinge value at a feasible vec(W) (``penalty`` its regulariser) and the dual
    value at the multipliers clipped to the dual's bounds (a lower bound of the optimum)."""
    m, n = St.shape
    p = cidx.shape[0]
    margins = np.empty(n)
    _margins(St, bounds, w_feasible, margins)
    loss = 0.0
    alpha = np.empty(n)
    alpha_sum = 0.0
    for j in range(n):
        if margins[j] < 1.0:
            loss += 1.0 - margins[j]
        alpha[j] = min(1.0, max(0.0, l2[j]))
        alpha_sum += alpha[j]
    combo = np.empty(m * m)
    _combine(St, bounds, alpha, combo)
    for k in range(p):
        mu = max(0.0, l3[k])
        for e in range(2):
            combo[cidx[k, e]] += cval[k, e] * mu
    quadratic = combo @ (H_inv @ combo)
    return loss + penalty, alpha_sum - 0.5 * quadratic


@njit(cache=True, nogil=True)
def feasible_values(St, bounds, H_inv, cidx, cval, w, lambda1, lambda2, l2, l3, W):
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
    return hinge_values(St, bounds, H_inv, cidx, cval, W.ravel(), penalty, l2, l3)
