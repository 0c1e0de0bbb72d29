"""Exact k nearest neighbours and the mean pairwise distance from one blocked pass.

MT-KNN needs, for every training point, its k nearest training points and, for the heat
kernel's width, the mean Euclidean distance over all pairs. Both walk the same n x n
distances, so :func:`neighbours_and_mean_distance` computes them together: query rows in
blocks, training points in tiles (one BLAS product per block and tile), each distance block
used once for the row sums and for the candidate lists
(:func:`explorer.solvers._neighbour_kernels.scan_rows`).

Exactness. Candidates are ranked by ``|t|^2 - 2 q . t`` on centred data, in float64 when the
distance sums are needed (they must match a float64 sum to 1e-12) and in float32 otherwise
(twice the arithmetic per cycle). Each row keeps ``k + SPARE`` candidates; they provably hold
the k nearest when the last kept value exceeds the k-th by twice the rounding bound of the
ranking, and the candidates are then re-measured in float64 from the raw coordinates and
ordered by (distance, index). A row without that proof is searched again exactly. So the
result is the exact k nearest in float64, ties broken by the lower index (as scikit-learn's
brute-force search keeps the first point met at an equal distance).

Row blocks run on up to two threads (the kernels release the GIL).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["nearest_neighbours", "neighbours_and_mean_distance", "mean_pairwise_distance",
           "SIGMA_EXACT_MAX"]

#: Up to this many training points sigma is the mean over every pair (to float64 rounding:
#: relative error ~1e-16, up to ~3e-12 with duplicated rows); above, the mean over the pairs
#: of a sample of this many rows (see :func:`mean_pairwise_distance`).
SIGMA_EXACT_MAX = 3000
#: Candidates kept per row beyond the k asked for (room for the float32 rounding).
SPARE = 8
#: Query rows per kernel call: each call streams all training points once, so larger
#: blocks read them from memory fewer times (the kernel multiplies 64 rows at a time).
ROW_BLOCK = 512
#: Bytes of one tile of transposed training points (with the row block's products, fits
#: the L2 cache).
TILE_BYTES = 32768


def _threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def _scan(X: np.ndarray, Xq: np.ndarray | None, k: int, want_sums: bool):
    """Exact k nearest of each query among the rows of ``X`` (float64, (n, d)).

    ``Xq`` None: the queries are the rows of X themselves (each is its own nearest, at 0),
    and the row sums leave the own distance out. Returns (squared distances (nq, k),
    indices (nq, k), row sums of distances (nq,) or None).
    """
    from ._neighbour_kernels import exact_neighbours, scan_rows

    n, d = X.shape
    dtype = np.float64 if want_sums else np.float32
    centre = X.mean(axis=0)
    Xc = X - centre
    Qc = Xc if Xq is None else Xq - centre
    queries = X if Xq is None else Xq
    nq = Qc.shape[0]
    itemsize = np.dtype(dtype).itemsize
    tile = max(16, TILE_BYTES // (max(d, 1) * itemsize) // 16 * 16)
    n_tiles = -(-n // tile)
    padded = np.zeros((n_tiles * tile, d), dtype=dtype)
    padded[:n] = Xc
    T = np.ascontiguousarray(padded.reshape(n_tiles, tile, d).transpose(0, 2, 1))
    Q = np.ascontiguousarray(Qc, dtype=dtype)
    sq_t = np.einsum("ij,ij->i", Xc, Xc)
    sq_q = sq_t if Xq is None else np.einsum("ij,ij->i", Qc, Qc)
    sq_t_ranking = sq_t.astype(dtype)
    keep = min(k + SPARE, n)
    values = np.empty((nq, keep), dtype=dtype)
    candidates = np.empty((nq, keep), dtype=np.int64)
    sums = np.empty(nq)

    def block(start: int) -> None:
        stop = min(start + ROW_BLOCK, nq)
        scan_rows(Q[start:stop], T, sq_q[start:stop], sq_t_ranking, n,
                  start if Xq is None else -1, want_sums, values[start:stop],
                  candidates[start:stop], sums[start:stop])

    starts = range(0, nq, ROW_BLOCK)
    threads = _threads()
    # our threads split the rows; BLAS must not start its own for each small product
    with threadpool_limits(limits=1, user_api="blas"):
        if threads > 1 and len(starts) > 1:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(block, starts))
        else:
            for start in starts:
                block(start)
    # the error of a ranking value |t|^2 - 2 q . t in `dtype` (inputs, products, sums and
    # the norms rounded, in any order), doubled for the exact re-measure's own rounding
    unit = float(np.finfo(dtype).eps) / 2.0
    largest = float(np.sqrt(sq_t.max()))
    margin = 4.0 * (d + 6) * unit * (2.0 * np.sqrt(sq_q) * largest + sq_q + largest ** 2)
    if keep >= n:
        margin = np.full(nq, -np.inf)          # every point was kept: nothing to prove
    d2 = np.empty((nq, k))
    idx = np.empty((nq, k), dtype=np.int64)
    exact_neighbours(X, np.ascontiguousarray(queries, dtype=np.float64), candidates, values,
                     margin, k, d2, idx)
    return d2, idx, (sums if want_sums else None)


def nearest_neighbours(X: np.ndarray, Xq: np.ndarray | None, k: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest rows of ``X`` (n, d) to each row of ``Xq`` (nq, d), nearest first.

    ``Xq`` None queries the rows of X themselves (each row is then its own first neighbour).
    Returns ``(distances (nq, k), indices (nq, k))`` like scikit-learn's ``kneighbors``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    Xq = None if Xq is None else np.ascontiguousarray(Xq, dtype=np.float64)
    d2, idx, _ = _scan(X, Xq, k, want_sums=False)
    return np.sqrt(d2), idx


def neighbours_and_mean_distance(X: np.ndarray, k: int, rng=None
                                 ) -> tuple[float, np.ndarray, np.ndarray]:
    """The mean pairwise distance of the rows of ``X`` and their k nearest rows (self first).

    Up to :data:`SIGMA_EXACT_MAX` rows both come from the same pass over the distances
    (the mean over all pairs, to rounding: see :func:`mean_pairwise_distance`); above, the
    mean is :func:`mean_pairwise_distance`'s sample of that many rows drawn with ``rng``
    and the neighbours come from a float32 pass (then re-measured exactly). Returns
    ``(sigma, distances (n, k), indices (n, k))``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"the mean pairwise distance needs at least 2 points; got {n}.")
    if n > SIGMA_EXACT_MAX:
        sigma = mean_pairwise_distance(X, rng)
        distances, idx = nearest_neighbours(X, None, k)
        return sigma, distances, idx
    d2, idx, sums = _scan(X, None, k, want_sums=True)
    return float(sums.sum() / (n * (n - 1))), np.sqrt(d2), idx


def mean_pairwise_distance(X: np.ndarray, rng: np.random.Generator | None = None) -> float:
    """Mean Euclidean distance over distinct pairs of rows of ``X`` (n >= 2).

    Up to :data:`SIGMA_EXACT_MAX` rows: the mean over every pair, in row blocks (no n x n
    matrix held), each distance from ``|q|^2 + |t|^2 - 2 q.t`` in float64 on centred data:
    exact to rounding (2e-16 relative on the app's opening data), but a pair of equal rows
    comes out at the square root of the rounding left in that sum rather than 0 (1,200 rows,
    700 of them repeats: 2.4e-12 to 3.3e-12 relative, against scipy's ``pdist``).

    Above :data:`SIGMA_EXACT_MAX` rows: the mean over the pairs of a sample of
    :data:`SIGMA_EXACT_MAX` rows drawn without replacement with ``rng``, an estimate (3e-4
    to 1.4e-2 relative off the mean over all pairs in 20 draws each on 7,000 rows of 12
    features and on 5,000 of 2; ``benchmarks/measure_sigma.py`` measures both cases). A
    generator from a fixed seed gives the same sample at every call; ``rng=None`` means
    ``default_rng(0)``. The estimators pass a generator from their ``random_state``: with
    ``random_state=None`` every fit draws another sample, so sigma (and the fit) differs
    from fit to fit.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"the mean pairwise distance needs at least 2 points; got {n}.")
    if n > SIGMA_EXACT_MAX:
        rng = np.random.default_rng(0) if rng is None else rng
        X = X[rng.choice(n, SIGMA_EXACT_MAX, replace=False)]
        n = SIGMA_EXACT_MAX
    _, _, sums = _scan(np.ascontiguousarray(X), None, 1, want_sums=True)
    return float(sums.sum() / (n * (n - 1)))
