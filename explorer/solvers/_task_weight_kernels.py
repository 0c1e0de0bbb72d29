"""Compiled dual coordinate ascent for the square-loss task-weight QP (see ``task_weights``)."""

from __future__ import annotations

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
