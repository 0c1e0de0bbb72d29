"""Compiled (numba, ``cache=True``) MFISTA iteration for stacked least squares plus
block-separable group penalties; the caller is :mod:`explorer.solvers.stacked_fista`.

No Python objects inside. Every iteration allocates its new iterate (nothing handed out is
mutated later), so snapshots may keep references.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["RIDGE", "L1", "ROWS", "COLUMNS", "_fista_iteration", "_residuals", "_value"]

#: The kernels' codes of a block's penalty: ``lam ||B||_F^2``, ``lam ||B||_1``,
#: ``lam ||B||_{1,2}`` (rows), ``lam ||B^T||_{1,2}`` (columns). A penalty object hands its code
#: to the kernels (``Penalty.code``, :mod:`explorer.solvers.penalties`); the numbering lives
#: here, beside the branches that read it (numba keys a kernel's cache on this file).
RIDGE, L1, ROWS, COLUMNS = 0, 1, 2, 3


#: Reassociation lets the dot products use SIMD; NaN/inf semantics are kept.
_FAST = {"reassoc", "contract"}


@njit(cache=True, nogil=True)
def _total_t(x, m, k):  # pragma: no cover - compiled
    """``W^T`` (m, d): the sum of the k (d, m) blocks stored side by side in x (d, k m)."""
    d = x.shape[0]
    WT = np.zeros((m, d))
    for b in range(k):
        for j in range(d):
            for t in range(m):
                WT[t, j] += x[j, b * m + t]
    return WT


@njit(cache=True, nogil=True, fastmath=_FAST)
def _residuals_t(X, y, offsets, WT):  # pragma: no cover - compiled
    """``X_i^T w_i - y_i`` stacked, from ``W^T`` (m, d) (rows sorted by task)."""
    n, d = X.shape
    r = np.empty(n)
    for t in range(offsets.size - 1):
        for i in range(offsets[t], offsets[t + 1]):
            s = 0.0
            for j in range(d):
                s += X[i, j] * WT[t, j]
            r[i] = s - y[i]
    return r


@njit(cache=True, nogil=True)
def _residuals(X, y, offsets, W):  # pragma: no cover - compiled
    """``X_i^T w_i - y_i`` stacked from W (d, m) (task t in offsets[t]:offsets[t+1])."""
    return _residuals_t(X, y, offsets, np.ascontiguousarray(W.T))


@njit(cache=True, nogil=True)
def _value(r, offsets, weight):  # pragma: no cover - compiled
    """``sum_t weight_t ||r_t||^2``."""
    total = 0.0
    for t in range(offsets.size - 1):
        s = 0.0
        for i in range(offsets[t], offsets[t + 1]):
            s += r[i] * r[i]
        total += weight[t] * s
    return total


@njit(cache=True, nogil=True, fastmath=_FAST)
def _gradient_t(X, r, offsets, weight, m):  # pragma: no cover - compiled
    """``G^T[t] = 2 weight_t X_t^T r_t``, shape (m, d)."""
    d = X.shape[1]
    GT = np.zeros((m, d))
    for t in range(m):
        c = 2.0 * weight[t]
        for i in range(offsets[t], offsets[t + 1]):
            ri = c * r[i]
            for j in range(d):
                GT[t, j] += X[i, j] * ri
    return GT


@njit(cache=True, nogil=True)
def _prox_block(V, out, col0, m, kind, step, lam):  # pragma: no cover - compiled
    """Prox of block ``V[:, col0:col0+m]`` into ``out`` for the penalty of code ``kind`` and
    weight ``lam`` (``Penalty.prox``, compiled); returns the penalty of the result."""
    d = V.shape[0]
    thr = step * lam
    penalty = 0.0
    if kind == RIDGE:
        f = 1.0 / (1.0 + 2.0 * thr)
        for j in range(d):
            for t in range(m):
                v = V[j, col0 + t] * f
                out[j, col0 + t] = v
                penalty += v * v
    elif kind == L1:
        for j in range(d):
            for t in range(m):
                v = V[j, col0 + t]
                a = abs(v) - thr
                if a > 0.0:
                    out[j, col0 + t] = a if v > 0.0 else -a
                    penalty += a
                else:
                    out[j, col0 + t] = 0.0
    elif kind == ROWS:
        for j in range(d):
            s = 0.0
            for t in range(m):
                s += V[j, col0 + t] * V[j, col0 + t]
            norm = math.sqrt(s)
            factor = max(1.0 - thr / (norm if norm > 0.0 else 1.0), 0.0)
            for t in range(m):
                out[j, col0 + t] = V[j, col0 + t] * factor
            penalty += norm * factor
    else:  # COLUMNS
        for t in range(m):
            s = 0.0
            for j in range(d):
                s += V[j, col0 + t] * V[j, col0 + t]
            norm = math.sqrt(s)
            factor = max(1.0 - thr / (norm if norm > 0.0 else 1.0), 0.0)
            for j in range(d):
                out[j, col0 + t] = V[j, col0 + t] * factor
            penalty += norm * factor
    return lam * penalty


@njit(cache=True, nogil=True)
def _fista_iteration(X, y, offsets, weight, kinds, lams, x, x_prev, z, r_x, r_x_prev, r_z,
                     state, monotone, restart, max_line_search):  # pragma: no cover
    """One MFISTA iteration with backtracking and adaptive restart (the scheme of
    :func:`explorer.solvers.proximal_gradient.proximal_gradient_steps`).

    ``state`` = [t, t_prev, L, F_x, f_x]; ``r_*`` are the residuals of ``x``, ``x_prev`` and
    ``z`` (residuals are affine in W, so the search point's come without a product).
    Returns ``(x, x_prev, z, r_x, r_x_prev, r_z, trials, change, state)``, with new
    arrays for what changed; ``trials`` is -1 when the line search failed.
    """
    d = x.shape[0]
    k = kinds.size
    m = offsets.size - 1
    t, t_prev, L, F_x, f_x = state[0], state[1], state[2], state[3], state[4]
    a = t_prev / t
    b = (t_prev - 1.0) / t
    s = x + a * (z - x) + b * (x - x_prev)
    r_s = r_x + a * (r_z - r_x) + b * (r_x - r_x_prev)
    f_s = _value(r_s, offsets, weight)
    GT = _gradient_t(X, r_s, offsets, weight, m)
    trials = 0
    new_z = np.empty_like(x)
    V = np.empty_like(x)
    penalty = 0.0
    f_z = 0.0
    r_new = r_s
    while True:
        trials += 1
        step = 1.0 / L
        for j in range(d):
            for blk in range(k):
                for task in range(m):
                    V[j, blk * m + task] = s[j, blk * m + task] - GT[task, j] * step
        penalty = 0.0
        for blk in range(k):
            penalty += _prox_block(V, new_z, blk * m, m, kinds[blk], step, lams[blk])
        r_new = _residuals_t(X, y, offsets, _total_t(new_z, m, k))
        f_z = _value(r_new, offsets, weight)
        inner = 0.0
        sq = 0.0
        for j in range(d):
            for blk in range(k):
                for task in range(m):
                    diff = new_z[j, blk * m + task] - s[j, blk * m + task]
                    inner += GT[task, j] * diff
                    sq += diff * diff
        bound = f_s + inner + 0.5 * L * sq
        if f_z <= bound + 1e-13 * max(1.0, abs(f_s)):
            break
        if trials >= max_line_search:
            return x, x_prev, z, r_x, r_x_prev, r_z, -1, 0.0, state
        L *= 2.0
    F_z = f_z + penalty
    uphill = False
    if restart:
        acc = 0.0
        for j in range(d):
            for c in range(k * m):
                acc += (s[j, c] - new_z[j, c]) * (new_z[j, c] - x[j, c])
        uphill = acc > 0.0
    out_prev, r_out_prev = x, r_x
    if not monotone or F_z <= F_x:
        out_x, r_out_x, f_new, F_new = new_z, r_new, f_z, F_z
    else:
        out_x, r_out_x, f_new, F_new = x, r_x, f_x, F_x
    out_z, r_out_z = new_z, r_new
    if not monotone:
        out_z, r_out_z = out_x, r_out_x
    change = abs(F_x - F_z) / max(abs(F_x), 2.2250738585072014e-308)
    t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
    t_prev = t
    t = t_next
    if uphill:
        t_prev = 1.0
        t = 1.0
        out_z, r_out_z = out_x, r_out_x
    new_state = np.array([t, t_prev, L, F_new, f_new])
    return out_x, out_prev, out_z, r_out_x, r_out_prev, r_out_z, trials, change, new_state


@njit(cache=True, nogil=True)
def _fista_batch(X, y, offsets, weight, kinds, lams, x, x_prev, z, r_x, r_x_prev, r_z,
                 state, monotone, restart, max_line_search, n_steps):  # pragma: no cover
    """``n_steps`` calls of :func:`_fista_iteration` in one dispatch (the fixed cost of a
    call from Python, ~5 us, is most of an iteration on small problems).

    Returns the iterates ``xs`` (n_steps, d, k m) and per step ``stats`` (n_steps, 5) =
    [objective, smooth value, L, trials, change] (trials -1: the line search failed and
    the batch stopped there), plus the state to continue from.
    """
    xs = np.empty((n_steps, x.shape[0], x.shape[1]))
    stats = np.zeros((n_steps, 5))
    for b in range(n_steps):
        x, x_prev, z, r_x, r_x_prev, r_z, trials, change, state = _fista_iteration(
            X, y, offsets, weight, kinds, lams, x, x_prev, z, r_x, r_x_prev, r_z, state,
            monotone, restart, max_line_search)
        xs[b] = x
        stats[b, 0], stats[b, 1], stats[b, 2] = state[3], state[4], state[2]
        stats[b, 3], stats[b, 4] = trials, change
        if trials < 0:
            break
    return xs, stats, x, x_prev, z, r_x, r_x_prev, r_z, state
