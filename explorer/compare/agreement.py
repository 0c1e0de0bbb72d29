"""How close a learned task-relationship matrix is to the truth.

A model's task matrix (MTBoost's correlation, MT-KNN's W, TL-TF's similarity, a matrix
computed elsewhere) lives on its own scale; the truth (``truth["task_relation"]``: +1
related, -1 negated, 0 unrelated; or ``truth["task_similarity"]``: cosines) on another.
:func:`relationship_agreement` compares them on what both can say about the off-diagonal
task pairs (i, j), i != j, taken in both orders (a learned matrix need not be symmetric):

* ``sign_agreement``: of the pairs the truth calls related or negated (non-zero), the
  share whose estimate has the same sign (an estimate of exactly 0 disagrees);
* ``rank_correlation``: Spearman's correlation of the estimate with the truth over all
  off-diagonal pairs (does the model order the pairs as the truth does?);
* ``relative_error``: ``||e / ||e|| - t / ||t|| ||`` over the off-diagonal entries, each
  matrix divided by its own Frobenius norm first, so the model's scale does not count
  (0: the same up to a positive factor; 2: opposite; ~1.4: unrelated).

A figure that cannot be computed is ``nan`` and ``reason`` says why (the truth is unknown,
constant off the diagonal, or has no related or negated pair).

>>> import numpy as np
>>> truth = np.array([[1., 1, -1], [1, 1, -1], [-1, -1, 1]])
>>> a = relationship_agreement(0.5 * truth, truth)
>>> a["sign_agreement"], a["rank_correlation"], round(a["relative_error"], 12)
(1.0, 1.0, 0.0)
>>> relationship_agreement(truth, None)["reason"]
'the truth is unknown'
"""

from __future__ import annotations

import numpy as np

__all__ = ["relationship_agreement", "AGREEMENT_KEYS"]

#: The figures :func:`relationship_agreement` returns (besides ``n_pairs`` and ``reason``).
AGREEMENT_KEYS = ("sign_agreement", "rank_correlation", "relative_error")


def _square(name: str, value) -> np.ndarray:
    matrix = np.asarray(value, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} must be a square (n_tasks, n_tasks) matrix; got shape "
                         f"{matrix.shape}.")
    return matrix


def _ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean of their ranks), as Spearman's rho needs."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(values.size)
    ranks[order] = np.arange(values.size, dtype=np.float64)
    _, first, counts = np.unique(values[order], return_index=True, return_counts=True)
    for start, count in zip(first, counts, strict=True):
        if count > 1:
            ranks[order[start:start + count]] = start + (count - 1) / 2.0
    return ranks


def relationship_agreement(estimate, truth) -> dict:
    """Agreement of a learned task matrix with the true one, over the off-diagonal pairs.

    Parameters
    ----------
    estimate : array-like of shape (m, m)
        The learned matrix (any scale; need not be symmetric).
    truth : array-like of shape (m, m) or None
        The true relation or similarity; None (or all NaN) when unknown.

    Returns
    -------
    dict
        ``sign_agreement``, ``rank_correlation``, ``relative_error`` (floats, ``nan`` where
        they cannot be computed), ``n_pairs`` (ordered off-diagonal pairs compared) and
        ``reason`` ('' when every figure was computed, else why not).
    """
    estimate = _square("estimate", estimate)
    result = {key: float("nan") for key in AGREEMENT_KEYS}
    result.update(n_pairs=0, reason="")
    if truth is None:
        result["reason"] = "the truth is unknown"
        return result
    truth = _square("truth", truth)
    if truth.shape != estimate.shape:
        raise ValueError(f"estimate and truth must have the same shape; got {estimate.shape} "
                         f"and {truth.shape}.")
    if not np.all(np.isfinite(estimate)):
        raise ValueError("estimate must be finite (no NaN or inf).")
    off = ~np.eye(truth.shape[0], dtype=bool) & np.isfinite(truth)
    e, t = estimate[off], truth[off]
    result["n_pairs"] = int(t.size)
    if t.size == 0:
        result["reason"] = ("the truth is unknown" if truth.shape[0] > 1
                            else "one task has no pair")
        return result
    reasons = []
    signed = t != 0
    if signed.any():
        result["sign_agreement"] = float(np.mean(np.sign(e[signed]) == np.sign(t[signed])))
    else:
        reasons.append("the truth has no related or negated pair")
    if np.ptp(t) > 0 and np.ptp(e) > 0:
        rank_e, rank_t = _ranks(e) - (t.size - 1) / 2.0, _ranks(t) - (t.size - 1) / 2.0
        result["rank_correlation"] = float(
            rank_e @ rank_t / np.sqrt((rank_e @ rank_e) * (rank_t @ rank_t)))
    else:
        reasons.append("the truth is constant off the diagonal" if np.ptp(t) == 0
                       else "the estimate is constant off the diagonal")
    norm_e, norm_t = np.linalg.norm(e), np.linalg.norm(t)
    if norm_t > 0 and norm_e > 0:
        result["relative_error"] = float(np.linalg.norm(e / norm_e - t / norm_t))
    else:
        reasons.append("the truth is zero off the diagonal" if norm_t == 0
                       else "the estimate is zero off the diagonal")
    result["reason"] = "; ".join(reasons)
    return result
