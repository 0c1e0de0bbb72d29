"""Compiled per-task sums of :mod:`explorer.solvers.tltf_variational`.

Rows are sorted by task (``starts`` the first row of each task), so every per-task F x F
sum is one streaming pass over X with no (N, F, F) temporaries: the work is O(N F^2) and the
memory traffic O(N F), linear in the number of tasks whatever the caches hold.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def weighted_gram(X, starts, weight):
    """``sum_{i in task k} weight_i x_i x_i^T`` for every task k, shape (K, F, F)."""
    N, F = X.shape
    K = starts.shape[0]
    out = np.zeros((K, F, F))
    for k in range(K):
        stop = starts[k + 1] if k + 1 < K else N
        for i in range(starts[k], stop):
            for f in range(F):
                scaled = weight[i] * X[i, f]
                for g in range(f + 1):
                    out[k, f, g] += scaled * X[i, g]
        for f in range(F):
            for g in range(f):
                out[k, g, f] = out[k, f, g]
    return out


@njit(cache=True, nogil=True)
def _quadratic_form(X, i, S, k):
    F = X.shape[1]
    total = 0.0
    for g in range(F):
        column = 0.0
        for f in range(F):
            column += X[i, f] * S[k, f, g]
        total += column * X[i, g]
    return total


@njit(cache=True, nogil=True)
def _jj_lambda(xi):
    xi = abs(xi)
    if xi < 1e-6:
        return 0.125 - xi * xi / 96.0
    return np.tanh(xi / 2.0) / (4.0 * xi)


@njit(cache=True, nogil=True)
def _log_expit(z):
    if z < 0.0:
        return z - np.log1p(np.exp(z))
    return -np.log1p(np.exp(-z))


@njit(cache=True, nogil=True)
def xi_from_moments(X, starts, S):
    """Eq. 3 for every row: ``sqrt(max(x_i^T S_{task(i)} x_i, 0))``, shape (N,)."""
    N = X.shape[0]
    K = starts.shape[0]
    out = np.empty(N)
    for k in range(K):
        stop = starts[k + 1] if k + 1 < K else N
        for i in range(starts[k], stop):
            out[i] = np.sqrt(max(_quadratic_form(X, i, S, k), 0.0))
    return out


@njit(cache=True, nogil=True)
def likelihood_bounds(X, y, starts, xi, m, S, next_xi):
    """Per task, ``sum_i log sigma(xi_i) + (y_i m_k . x_i - xi_i) / 2 - lambda(xi_i)
    (x_i^T S_k x_i - xi_i^2)`` (the Jaakkola-Jordan bound of the likelihood), shape (K,).

    Fills ``next_xi`` (N,) with Eq. 3 at this S, ``sqrt(max(x_i^T S_k x_i, 0))``: the next
    sweep's xi, from the quadratic forms the bound needs anyway."""
    N, F = X.shape
    K = starts.shape[0]
    out = np.zeros(K)
    for k in range(K):
        stop = starts[k + 1] if k + 1 < K else N
        total = 0.0
        for i in range(starts[k], stop):
            mx = 0.0
            for f in range(F):
                mx += X[i, f] * m[k, f]
            quad = _quadratic_form(X, i, S, k)
            next_xi[i] = np.sqrt(max(quad, 0.0))
            total += (_log_expit(xi[i]) + 0.5 * (y[i] * mx - xi[i])
                      - _jj_lambda(xi[i]) * (quad - xi[i] * xi[i]))
        out[k] = total
    return out
