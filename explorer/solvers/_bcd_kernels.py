"""Compiled (numba, ``cache=True``) block coordinate descent sweeps for stacked least squares
plus group penalties; the caller is :mod:`explorer.solvers.block_cd`.

The designs are stored transposed, ``XF`` of shape (d, N) in C order (feature j's values
contiguous); task ``t`` uses columns ``xstart[t] : xstart[t] + n_t`` of it
(``n_t = offsets[t+1] - offsets[t]``), and its residuals are ``r[offsets[t]:offsets[t+1]]``.
Per-task designs have ``xstart = offsets[:-1]``; a design shared by every task is stored
once with ``xstart = 0``. Inner loops run over contiguous 1-d slices (so they vectorise). No
Python objects inside.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._fista_kernels import ROWS, _value

__all__ = ["_bcd_sweeps", "_full_gradient", "_column_sq_norms", "_residuals_f",
           "_blocks_equal"]

_FAST = {"reassoc", "contract"}


@njit(cache=True, nogil=True, fastmath=_FAST)
def _dot(XF, j, x0, r, r0, n):  # pragma: no cover - compiled
    u = XF[j, x0:x0 + n]
    v = r[r0:r0 + n]
    s = 0.0
    for i in range(n):
        s += u[i] * v[i]
    return s


@njit(cache=True, nogil=True, fastmath=_FAST)
def _axpy(XF, j, x0, r, r0, n, a):  # pragma: no cover - compiled
    u = XF[j, x0:x0 + n]
    v = r[r0:r0 + n]
    for i in range(n):
        v[i] += a * u[i]


@njit(cache=True, nogil=True)
def _blocks_equal(X, n0, m):  # pragma: no cover - compiled
    """Whether the m consecutive (n0, d) row blocks of X are all equal to the first (one
    read of X, no temporaries, stops at the first difference)."""
    d = X.shape[1]
    for t in range(1, m):
        for i in range(n0):
            a = X[i]
            b = X[t * n0 + i]
            for j in range(d):
                if a[j] != b[j]:
                    return False
    return True


@njit(cache=True, nogil=True, fastmath=_FAST)
def _column_sq_norms(XF, xstart, offsets):  # pragma: no cover - compiled
    """``||X_t[:, j]||^2``, shape (m, d)."""
    m = xstart.size
    d = XF.shape[0]
    out = np.zeros((m, d))
    for t in range(m):
        n = offsets[t + 1] - offsets[t]
        for j in range(d):
            u = XF[j, xstart[t]:xstart[t] + n]
            s = 0.0
            for i in range(n):
                s += u[i] * u[i]
            out[t, j] = s
    return out


@njit(cache=True, nogil=True, fastmath=_FAST)
def _residuals_f(XF, xstart, offsets, y, W):  # pragma: no cover - compiled
    """``X_t w_t - y_t`` stacked from W (d, m)."""
    r = -y.copy()
    m = xstart.size
    for t in range(m):
        n = offsets[t + 1] - offsets[t]
        for j in range(W.shape[0]):
            if W[j, t] != 0.0:
                _axpy(XF, j, xstart[t], r, offsets[t], n, W[j, t])
    return r


@njit(cache=True, nogil=True, fastmath=_FAST)
def _full_gradient(XF, xstart, offsets, weight, r):  # pragma: no cover - compiled
    """``G[:, t] = 2 weight_t X_t^T r_t``, shape (d, m)."""
    m = xstart.size
    d = XF.shape[0]
    G = np.empty((d, m))
    for t in range(m):
        n = offsets[t + 1] - offsets[t]
        c = 2.0 * weight[t]
        for j in range(d):
            G[j, t] = c * _dot(XF, j, xstart[t], r, offsets[t], n)
    return G


@njit(cache=True, nogil=True)
def _update_row(XF, xstart, offsets, weight, colsq, r, x, col0, j, kind, lam, g):
    # pragma: no cover - compiled
    """One block step on row j of the block at columns col0:col0+m (rows: group soft-
    thresholding with the block constant max_t 2 w_t ||X_t[:, j]||^2; L1: exact coordinate
    minimisation per task). Residuals updated; returns the row's new penalty (without lam)."""
    m = xstart.size
    for t in range(m):
        g[t] = 2.0 * weight[t] * _dot(XF, j, xstart[t], r, offsets[t], offsets[t + 1] - offsets[t])
    if kind == ROWS:
        L = 0.0
        for t in range(m):
            h = 2.0 * weight[t] * colsq[t, j]
            if h > L:
                L = h
        if L <= 0.0:
            return 0.0
        s = 0.0
        for t in range(m):
            v = x[j, col0 + t] - g[t] / L
            g[t] = v  # reuse as the gradient step
            s += v * v
        norm = math.sqrt(s)
        factor = 1.0 - lam / (L * norm) if norm > 0.0 else 0.0
        if factor < 0.0:
            factor = 0.0
        for t in range(m):
            new = g[t] * factor
            delta = new - x[j, col0 + t]
            if delta != 0.0:
                _axpy(XF, j, xstart[t], r, offsets[t], offsets[t + 1] - offsets[t], delta)
                x[j, col0 + t] = new
        return norm * factor
    # L1
    penalty = 0.0
    for t in range(m):
        h = 2.0 * weight[t] * colsq[t, j]
        if h <= 0.0:
            continue
        v = x[j, col0 + t] - g[t] / h
        a = abs(v) - lam / h
        new = 0.0
        if a > 0.0:
            new = a if v > 0.0 else -a
        delta = new - x[j, col0 + t]
        if delta != 0.0:
            _axpy(XF, j, xstart[t], r, offsets[t], offsets[t + 1] - offsets[t], delta)
            x[j, col0 + t] = new
        penalty += abs(new)
    return penalty


@njit(cache=True, nogil=True, fastmath=_FAST)
def _update_column(XF, xstart, offsets, weight, r, x, col0, t, lam, Lcol, g, v, dr):
    # pragma: no cover - compiled
    """One proximal-gradient step on column t of the column-group block (group soft-
    thresholding), with backtracking on the column's constant ``Lcol[t]`` (which only grows)
    so the objective never increases. Residuals updated; returns the column's new norm."""
    d = XF.shape[0]
    n = offsets[t + 1] - offsets[t]
    x0, r0 = xstart[t], offsets[t]
    rt = r[r0:r0 + n]
    c = 2.0 * weight[t]
    for j in range(d):
        g[j] = c * _dot(XF, j, x0, r, r0, n)
    old_sq = 0.0
    for i in range(n):
        old_sq += rt[i] * rt[i]
    f_old = weight[t] * old_sq
    for _ in range(60):
        L = Lcol[t]
        s = 0.0
        for j in range(d):
            vj = x[j, col0 + t] - g[j] / L
            v[j] = vj
            s += vj * vj
        norm = math.sqrt(s)
        factor = 1.0 - lam / (L * norm) if norm > 0.0 else 0.0
        if factor < 0.0:
            factor = 0.0
        inner = 0.0
        sq = 0.0
        any_change = False
        for j in range(d):
            v[j] = v[j] * factor - x[j, col0 + t]  # now the change
            if v[j] != 0.0:
                any_change = True
            inner += g[j] * v[j]
            sq += v[j] * v[j]
        if not any_change:
            return norm * factor
        for i in range(n):
            dr[i] = 0.0
        for j in range(d):
            if v[j] != 0.0:
                a = v[j]
                u = XF[j, x0:x0 + n]
                for i in range(n):
                    dr[i] += a * u[i]
        new_sq = 0.0
        for i in range(n):
            e = rt[i] + dr[i]
            new_sq += e * e
        f_new = weight[t] * new_sq
        if f_new <= f_old + inner + 0.5 * L * sq + 1e-13 * max(1.0, f_old):
            for i in range(n):
                rt[i] += dr[i]
            for j in range(d):
                x[j, col0 + t] += v[j]
            return norm * factor
        Lcol[t] = 2.0 * L
    return -1.0  # line search failed (non-finite data)


@njit(cache=True, nogil=True)
def _bcd_sweeps(XF, xstart, offsets, y, weight, colsq, row_block, row_kind, row_lam,
                col_block, col_lam, x, r, Lcol, ws_rows, ws_cols, max_sweeps, inner_tol,
                F_prev):  # pragma: no cover - compiled
    """Up to ``max_sweeps`` sweeps over the working set: the rows ``ws_rows`` of the row-type
    block (index ``row_block`` in x, -1 if none), then the columns ``ws_cols`` of the column
    block (``col_block``, -1 if none). ``x`` (d, k m), ``r`` and ``Lcol`` are updated in place.
    The penalties come as their objects hand them over (:mod:`explorer.solvers.penalties`):
    the row block's ``code`` (``row_kind``: ROWS or L1) and weight, the column block's weight.

    Stops early when a sweep lowers the objective by at most ``inner_tol`` relative.
    Returns ``(xs, stats, n_done, status)``: the iterate after each sweep (copies), per
    sweep [objective, smooth value, relative decrease], the sweeps run, and status 1 when
    the inner tolerance was met, 0 when the budget ran out, -1 when a line search failed.
    """
    d = x.shape[0]
    m = xstart.size
    xs = np.empty((max_sweeps, d, x.shape[1]))
    stats = np.zeros((max_sweeps, 3))
    g_rows = np.empty(m)
    g_col = np.empty(d)
    v_col = np.empty(d)
    n_max = 0
    for t in range(m):
        if offsets[t + 1] - offsets[t] > n_max:
            n_max = offsets[t + 1] - offsets[t]
    dr = np.empty(n_max)
    status = 0
    n_done = 0
    for sweep in range(max_sweeps):
        penalty = 0.0
        if row_block >= 0:
            col0 = row_block * m
            for j in ws_rows:
                penalty += row_lam * _update_row(XF, xstart, offsets, weight, colsq, r, x,
                                                 col0, j, row_kind, row_lam, g_rows)
        if col_block >= 0:
            col0 = col_block * m
            for t in ws_cols:
                norm = _update_column(XF, xstart, offsets, weight, r, x, col0, t, col_lam,
                                      Lcol, g_col, v_col, dr)
                if norm < 0.0:
                    return xs, stats, n_done, -1
                penalty += col_lam * norm
        f = _value(r, offsets, weight)
        F = f + penalty
        xs[sweep] = x
        change = (F_prev - F) / max(abs(F_prev), 1e-300)
        stats[sweep, 0], stats[sweep, 1], stats[sweep, 2] = F, f, change
        n_done = sweep + 1
        F_prev = F
        if change <= inner_tol:
            status = 1
            break
    return xs, stats, n_done, status
