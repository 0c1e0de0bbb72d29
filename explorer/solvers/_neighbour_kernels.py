"""Compiled row-block scan of :mod:`explorer.solvers.nearest_neighbours`.

One call walks every distance from a block of query rows to all training points, a column
tile at a time (a tile of the transposed points stays in the L1 cache): it keeps each row's
``keep`` smallest ranking values ``|t_j|^2 - 2 q . t_j`` (the squared distance less the
row's constant ``|q|^2``) and, when asked, each row's sum of distances (for sigma).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# the hot loops may be reordered and vectorised (no infinities reach them)
_FAST = {"nnan", "nsz", "reassoc", "contract"}
#: Query rows per BLAS product (the products of a sub-block and a tile stay in L2).
_GEMM_ROWS = 64


@njit(cache=True, nogil=True, fastmath=_FAST)
def _ranking_row(dots, sq_t, threshold, ranking):
    """ranking[j] = |t_j|^2 - 2 q . t_j from one row's dot products with a tile (1-D slices,
    so the loop vectorises); returns how many are below ``threshold``."""
    below = 0
    for j in range(dots.shape[0]):
        v = sq_t[j] - (dots[j] + dots[j])
        ranking[j] = v
        below += v < threshold
    return below


@njit(cache=True, nogil=True, fastmath=_FAST)
def _distance_sum(ranking, sq, width):
    total = 0.0
    for j in range(width):
        total += np.sqrt(max(sq + ranking[j], 0.0))
    return total


@njit(cache=True, nogil=True)
def scan_rows(Q, T, sq_q, sq_t, n_points, first_row, want_sums, values, index, sums):
    """Fill ``values`` / ``index`` (rows, keep), ascending, and ``sums`` (rows,), in place.

    ``Q`` (rows, d) queries, ``T`` (tiles, d, tile) the training points transposed per tile
    (zero padding past ``n_points``), ``sq_q`` (float64) / ``sq_t`` (Q's dtype) their squared
    norms. The dot products of a row block with a tile are one BLAS call. ``first_row``: the
    training row of query 0 when the queries are the training points (its own distance is
    left out of ``sums``), else -1.
    """
    rows = Q.shape[0]
    n_tiles, _, tile = T.shape
    keep = values.shape[1]
    G = np.empty((min(rows, _GEMM_ROWS), tile), dtype=Q.dtype)
    ranking = np.empty(tile, dtype=Q.dtype)
    values[:, :] = np.inf
    index[:, :] = -1
    sums[:] = 0.0
    for t in range(n_tiles):
        base = t * tile
        width = min(tile, n_points - base)
        # the tile stays in cache for every sub-block of this call's rows
        for start in range(0, rows, _GEMM_ROWS):
            stop = min(start + _GEMM_ROWS, rows)
            np.dot(Q[start:stop], T[t], G[:stop - start])
            for i in range(start, stop):
                below = _ranking_row(G[i - start, :width], sq_t[base:base + width],
                                     values[i, keep - 1], ranking)
                if want_sums:
                    total = _distance_sum(ranking, sq_q[i], width)
                    own = first_row + i - base
                    if 0 <= own < width:
                        total -= np.sqrt(max(sq_q[i] + ranking[own], 0.0))
                    sums[i] += total
                if below == 0:
                    continue
                row_values = values[i]
                row_index = index[i]
                threshold = row_values[keep - 1]
                for j in range(width):
                    v = ranking[j]
                    if v < threshold:
                        p = keep - 1
                        while p > 0 and row_values[p - 1] > v:
                            row_values[p] = row_values[p - 1]
                            row_index[p] = row_index[p - 1]
                            p -= 1
                        row_values[p] = v
                        row_index[p] = base + j
                        threshold = row_values[keep - 1]


@njit(cache=True, nogil=True)
def _squared_distance(X, Xq, i, j):
    total = 0.0
    for k in range(X.shape[1]):
        diff = Xq[i, k] - X[j, k]
        total += diff * diff
    return total


@njit(cache=True, nogil=True)
def _insert(dist, idx, d2, j):
    """Insert (d2, j) into the ascending lists ordered by (distance, index)."""
    k = dist.shape[0]
    if not (d2 < dist[k - 1] or (d2 == dist[k - 1] and j < idx[k - 1])):
        return
    p = k - 1
    while p > 0 and (dist[p - 1] > d2 or (dist[p - 1] == d2 and idx[p - 1] > j)):
        dist[p] = dist[p - 1]
        idx[p] = idx[p - 1]
        p -= 1
    dist[p] = d2
    idx[p] = j


@njit(cache=True, nogil=True)
def exact_neighbours(X, Xq, candidates, values, margin, k, out_d2, out_idx):
    """The exact k nearest (by float64 squared distance, then index) of every query row.

    Each row's ``candidates`` (rows, keep) with approximate ranking ``values`` are re-checked
    exactly; they provably hold the k nearest when the row's ``keep``-th value exceeds its
    k-th by more than ``2 margin[i]`` (the bound on a ranking value's error) or the row kept
    every point. Otherwise the row is searched again exactly over all points. Returns the
    number of rows searched again.
    """
    rows = Xq.shape[0]
    n = X.shape[0]
    keep = candidates.shape[1]
    redone = 0
    for i in range(rows):
        out_d2[i, :] = np.inf
        out_idx[i, :] = n
        proven = candidates[i, keep - 1] < 0 or \
            values[i, keep - 1] - values[i, k - 1] > 2.0 * margin[i]
        if proven:
            for c in range(keep):
                j = candidates[i, c]
                if j >= 0:
                    _insert(out_d2[i], out_idx[i], _squared_distance(X, Xq, i, j), j)
        else:
            redone += 1
            for j in range(n):
                _insert(out_d2[i], out_idx[i], _squared_distance(X, Xq, i, j), j)
    return redone
