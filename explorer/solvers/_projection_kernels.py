"""Compiled kernel of :mod:`explorer.solvers.task_weights_projected`: the Euclidean projection
of each row of a matrix onto MT-KNN's / MT-KR's feasible set of W rows."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _cone_at(u, prefix, diagonal, shift):
    """The projection of ``(diagonal, u) - shift`` onto ``{w_q >= |w_r|}`` at the shift
    ``shift`` (the sum constraint's multiplier).

    ``u`` holds the row's off-diagonal entries sorted in decreasing order, ``prefix[k]`` the
    sum of its first k. Returns ``(tau, top, bottom, row_sum, slope)``: the projected diagonal
    ``tau``, how many entries are clipped to ``+tau`` (the first ``top``) and to ``-tau`` (the
    last ``bottom``), the projected row's sum and its derivative in ``shift``.
    """
    n = u.shape[0]
    t = diagonal - shift
    # tau minimises 1/2 (tau - t)^2 + 1/2 sum_r (|u_r - shift| - tau)_+^2: the largest
    # distances |u_r - shift| lie at either end of the sorted u, so take them end by end
    i, j = 0, n - 1
    total, count, tau = 0.0, 0, t
    while i <= j:
        up, down = u[i] - shift, shift - u[j]
        d = up if up >= down else down
        if d <= tau:
            break
        total += d
        count += 1
        tau = (t + total) / (count + 1)
        if up >= down:
            i += 1
        else:
            j -= 1
    if tau <= 0.0:
        return 0.0, 0, 0, 0.0, 0.0
    top, bottom = i, n - 1 - j
    free = j + 1 - i
    row_sum = tau * (1 + top - bottom) + (prefix[j + 1] - prefix[i]) - free * shift
    slope = -((1.0 + top - bottom) ** 2) / (1.0 + top + bottom) - free
    return tau, top, bottom, row_sum, slope


@njit(cache=True, nogil=True)
def project_rows(V, row_sum, out):
    """``out[q]``: the Euclidean projection of ``V[q]`` onto ``{w: w_q >= |w_r| (r != q)}``,
    intersected with ``{sum_r w_r = 1}`` when ``row_sum``.

    Without the sum: the projection onto the cone (Moreau: ``tau`` is the root of a
    piecewise-linear equation in the sorted |entries|). With it: the projection of
    ``V[q] - shift`` onto the cone for the shift whose row sums to 1, found by Newton's method
    on the piecewise-linear, non-increasing row sum (exact once inside the right piece),
    safeguarded by bisection. The shift that makes the entries sum to 1 before projecting is a
    start whose row sum is >= 1 (the cone's polar has non-positive sums).
    """
    m = V.shape[0]
    n = m - 1
    u = np.empty(n)
    prefix = np.zeros(n + 1)
    for q in range(m):
        k = 0
        for r in range(m):
            if r != q:
                u[k] = V[q, r]
                k += 1
        u[:] = -np.sort(-u)
        for k in range(n):
            prefix[k + 1] = prefix[k] + u[k]
        shift = 0.0
        if row_sum:
            low = (V[q].sum() - 1.0) / m
            high = np.inf
            shift = low
            scale = 1.0 + np.abs(V[q]).max()
            for _ in range(200):
                tau, top, bottom, total, slope = _cone_at(u, prefix, V[q, q], shift)
                excess = total - 1.0
                if abs(excess) <= 1e-14 * scale:
                    break
                if excess > 0.0:
                    low = shift
                else:
                    high = shift
                step = shift - excess / slope if slope < 0.0 else np.nan
                if low < step < high:
                    shift = step
                elif high == np.inf:
                    shift = low + 2.0 * scale
                    scale *= 2.0
                else:
                    shift = 0.5 * (low + high)
                if high < np.inf and high - low <= 1e-16 * (abs(low) + abs(high)):
                    break
        tau = _cone_at(u, prefix, V[q, q], shift)[0]
        for r in range(m):
            if r == q:
                out[q, r] = tau
            else:
                value = V[q, r] - shift
                out[q, r] = min(max(value, -tau), tau)
