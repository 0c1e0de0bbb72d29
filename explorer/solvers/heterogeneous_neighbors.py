"""Heterogeneous neighbourhoods (Zhang 2013, Sections 2-3): neighbours from *all* tasks.

For a query point ``x_i`` the ``k`` nearest training points are found among every task's
points (a training point never counts as its own neighbour), weighted by the heat kernel
``s(i, l) = exp(-||x_i - x_l||^2 / (2 sigma^2))`` with ``sigma`` the mean pairwise Euclidean
distance of the training data (Section 4.2; above 3,000 points the mean over a sample of
3,000 of them, see :func:`mean_pairwise_distance`). Grouping the neighbours by their task gives

* MT-KNN's features ``x_hat_i`` (m,): ``x_hat_ij = sum_{l in N_k^j(i)} s(i, l) y_l``
  (Section 2.1), labels in {-1, +1};
* MT-KR's per-task kernel-regression predictions ``y_hat_ij = sum s y / sum s`` over the
  same groups (Section 3).

The neighbour search and sigma come from one blocked pass over the distances
(:mod:`explorer.solvers.nearest_neighbours`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .nearest_neighbours import SIGMA_EXACT_MAX, mean_pairwise_distance

__all__ = ["Neighbourhoods", "mean_pairwise_distance", "heterogeneous_neighbours",
           "vote_features", "kernel_regression_features", "SIGMA_EXACT_MAX"]


@dataclass(frozen=True)
class Neighbourhoods:
    """The k heterogeneous neighbours of each query point.

    Attributes
    ----------
    index : ndarray of int, shape (n_queries, k)
        Rows of the training data, nearest first.
    similarity : ndarray, shape (n_queries, k)
        Heat-kernel similarity ``s(i, l)``.
    task : ndarray of int, shape (n_queries, k)
        The neighbours' tasks ``t_l``.
    """

    index: np.ndarray
    similarity: np.ndarray
    task: np.ndarray


def heterogeneous_neighbours(distances: np.ndarray, indices: np.ndarray,
                             train_task: np.ndarray, k: int, sigma: float, *,
                             exclude_self: bool) -> Neighbourhoods:
    """The k heterogeneous neighbours from a search's ``distances`` / ``indices`` (nq, k or
    k + 1), nearest first.

    With ``exclude_self`` the queries are the training points themselves (in order), searched
    for k + 1 neighbours, and a point's own row is removed from its list (ties at distance 0
    with a duplicate are kept: only the row itself is dropped).
    """
    dist, idx = distances, indices
    if exclude_self:
        own = idx == np.arange(idx.shape[0])[:, None]
        # drop the own row where found, else the farthest of the k + 1
        drop = np.where(own.any(axis=1), own.argmax(axis=1), k)
        keep = np.ones_like(own)
        keep[np.arange(idx.shape[0]), drop] = False
        dist = dist[keep].reshape(-1, k)
        idx = idx[keep].reshape(-1, k)
    sim = np.exp(-(dist ** 2) / (2.0 * sigma ** 2))
    return Neighbourhoods(index=idx, similarity=sim, task=train_task[idx])


def vote_features(nb: Neighbourhoods, train_y: np.ndarray, n_tasks: int) -> np.ndarray:
    """MT-KNN's ``x_hat`` (n_queries, m): per neighbour task, ``sum s(i, l) y_l`` (Sec. 2.1)."""
    n, k = nb.index.shape
    out = np.zeros((n, n_tasks))
    rows = np.repeat(np.arange(n), k)
    np.add.at(out, (rows, nb.task.ravel()), (nb.similarity * train_y[nb.index]).ravel())
    return out


def kernel_regression_features(nb: Neighbourhoods, train_y: np.ndarray, n_tasks: int,
                               task_means: np.ndarray) -> np.ndarray:
    """MT-KR's ``y_hat`` (n_queries, m): kernel regression from each task's neighbours (Sec. 3).

    The paper leaves ``y_hat_ij`` undefined when none of the k neighbours is from task j;
    we use task j's mean training target there (kernel regression with an infinite
    bandwidth), so Eq. (6) stays defined.
    """
    n, k = nb.index.shape
    num = np.zeros((n, n_tasks))
    den = np.zeros((n, n_tasks))
    rows = np.repeat(np.arange(n), k)
    cols = nb.task.ravel()
    np.add.at(num, (rows, cols), (nb.similarity * train_y[nb.index]).ravel())
    np.add.at(den, (rows, cols), nb.similarity.ravel())
    empty = den <= 0
    return np.where(empty, task_means[None, :], num / np.where(empty, 1.0, den))
