"""Compiled parts of MTBoost's inner step (:mod:`explorer.solvers.mtboost`).

MTBoost updates Omega once per inner step on an (m, m) matrix: a handful of flops wrapped in
a dozen NumPy calls and a LAPACK call through SciPy, about 18 us a step on 5 tasks against a
pooled base-learner fit of 130 us. One compiled call makes the same LAPACK call (numba's
``np.linalg.eigh`` is ``dsyevd`` on the lower triangle, as :func:`scipy.linalg.lapack.dsyevd`)
and does the rest in place, in about 4 us.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_EPS = float(np.finfo(np.float64).eps)


@njit(cache=True, nogil=True, error_model="numpy")
def omega_from_gram(B, ridge):
    """``(S)^{1/2} / tr(S^{1/2})`` with ``S = (B + B^T) / 2 + ridge I``, computed as
    :func:`explorer.solvers.mtboost.omega_update` documents (eigenvalues at round-off level
    set to 0; ``I / m`` when nothing is left), symmetric to the last bit; (m, m)."""
    m = B.shape[0]
    shifted = B + B.T
    for i in range(m):
        shifted[i, i] += 2.0 * ridge
    values, vectors = np.linalg.eigh(shifted)
    cut = m * _EPS * max(values[m - 1], 0.0)       # eigh sorts ascending
    root = np.zeros(m)
    total = 0.0
    for i in range(m):
        if values[i] > cut:
            root[i] = np.sqrt(values[i])
        total += root[i]
    if total <= 0.0:
        return np.eye(m) / m
    for i in range(m):
        root[i] /= total
    half = (vectors * root) @ vectors.T
    omega = np.empty((m, m))
    for i in range(m):
        for j in range(m):
            omega[i, j] = (half[i, j] + half[j, i]) * 0.5
    return omega


@njit(cache=True, nogil=True, error_model="numpy")
def step_statistics(gradient, task, f, committed, w, smoothing):
    """After an inner step's fit ``f`` (n,): ``beta_i = sum_{j in i} gradient_j f_j`` (m,),
    ``B = committed + w w^T`` and the Omega update of ``B`` with the ridge
    ``smoothing * tr(B) / m`` (:func:`explorer.solvers.mtboost.smoothing_ridge`), (m, m) each."""
    m = w.shape[0]
    beta = np.zeros(m)
    for j in range(task.shape[0]):
        beta[task[j]] += gradient[j] * f[j]
    B = np.empty((m, m))
    trace = 0.0
    for i in range(m):
        for k in range(m):
            B[i, k] = committed[i, k] + w[i] * w[k]
        trace += B[i, i]
    return beta, B, omega_from_gram(B, smoothing * trace / m)


@njit(cache=True, nogil=True, error_model="numpy")
def supertask_rows(w, task, slope_rows, target):
    """The supertask's rows for task weights ``w`` (m,), each (n,): ``instance_j = |w_t| /
    max|w| * slope_rows_j``, ``flipped_j = w_t < 0`` and the targets negated where flipped."""
    n = task.shape[0]
    instance, flipped, signed = np.empty(n), np.empty(n, dtype=np.bool_), np.empty(n)
    largest = 0.0
    for i in range(w.shape[0]):
        largest = max(largest, abs(w[i]))
    for j in range(n):
        t = task[j]
        instance[j] = abs(w[t]) / largest * slope_rows[j]
        flipped[j] = w[t] < 0.0
        signed[j] = -target[j] if flipped[j] else target[j]
    return instance, flipped, signed
