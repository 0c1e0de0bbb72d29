"""How close a learned task-relationship matrix is to the truth.

A model's task matrix (MTBoost's correlation, MT-KNN's W, TL-TF's similarity, a matrix
computed elsewhere) lives on its own scale; the truth (``truth["task_relation"]``: +1
related, -1 negated, 0 unrelated; or ``truth["task_similarity"]``: cosines) on another.
:func:`relationship_agreement` compares them on what both can say about the off-diagonal
task pairs (i, j), i != j, taken in both orders (a learned matrix need not be symmetric):

* ``sign_agreement``: of the pairs the truth calls related or negated, the share whose
  estimate has the same sign (an estimate of exactly 0 disagrees); a truth entry within
  :data:`UNRELATED_SHARE` of the truth's largest magnitude counts as unrelated (a true
  cosine of -0.004 between two unrelated tasks has no sign worth matching);
* ``rank_correlation``: Spearman's correlation of the estimate with the truth over all
  off-diagonal pairs (does the model order the pairs as the truth does?); estimates within
  :data:`RANK_RESOLUTION` of the largest magnitude of each other count as ties, as the
  truth's equal entries do (a co-membership of 0.998 against 1.0 is no ordering);
* ``relative_error``: ``||e / ||e|| - t / ||t|| ||`` over the off-diagonal entries, each
  matrix divided by its own Frobenius norm first, so the model's scale does not count
  (0: the same up to a positive factor; 2: opposite; ~1.4: unrelated).

A figure that cannot be computed is ``nan`` and ``reason`` says why (the truth is unknown,
constant off the diagonal, or has no related or negated pair).

With ``entries="all"`` the same three figures compare every entry of two matrices of any
one shape (a coefficient matrix W of tasks x features beside the true W): the sign
agreement is then over the truly non-zero coefficients.

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

__all__ = ["relationship_agreement", "AGREEMENT_KEYS", "RANK_RESOLUTION", "UNRELATED_SHARE",
           "TRUTH_FOR", "truth_for"]

#: The figures :func:`relationship_agreement` returns (besides ``n_pairs`` and ``reason``).
AGREEMENT_KEYS = ("sign_agreement", "rank_correlation", "relative_error")

#: Truth entries smaller than this share of its largest magnitude carry no sign.
UNRELATED_SHARE = 0.1

#: Estimates are ranked after rounding to this share of their largest magnitude.
RANK_RESOLUTION = 0.005

#: The truths a learned matrix (a ``task_relationships()`` key) is judged against, in order
#: of preference, besides the truth of its own key: the first of the data's truths with the
#: learned matrix's shape is used.
TRUTH_FOR = {
    "similarity": ("task_similarity", "task_relation"),   # cosines of the task weights
    "correlation": ("task_relation",),                   # MTBoost's task correlation
    "W_normalised": ("task_relation",),                  # MT-KNN's w_qr / w_qq
    "W": ("coef", "task_relation"),                      # rMTFL's (d, m); MT-KNN's (m, m)
}


def truth_for(key: str, shape: tuple, truth: dict | None) -> tuple[str, str] | None:
    """The data's truth to judge the learned matrix ``key`` of ``shape`` against, and how
    (``entries`` of :func:`relationship_agreement`); None when the data have none.

    >>> truth_for("W", (5, 3), {"coef": np.zeros((5, 3)), "task_relation": np.eye(3)})
    ('coef', 'all')
    >>> truth_for("W", (3, 3), {"coef": np.zeros((5, 3)), "task_relation": np.eye(3)})
    ('task_relation', 'off-diagonal')
    """
    for name in (key, *TRUTH_FOR.get(key, ())):
        value = (truth or {}).get(name)
        if value is not None and np.shape(value) == tuple(shape):
            square = len(shape) == 2 and shape[0] == shape[1] and name != "coef"
            return name, "off-diagonal" if square else "all"
    return None


def _matrix(name: str, value, square: bool) -> np.ndarray:
    matrix = np.asarray(value, dtype=np.float64)
    if square and (matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]):
        raise ValueError(f"{name} must be a square (n_tasks, n_tasks) matrix; got shape "
                         f"{matrix.shape}.")
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix; got shape {matrix.shape}.")
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


def relationship_agreement(estimate, truth, *, entries: str = "off-diagonal") -> dict:
    """Agreement of a learned task matrix with the true one, over the off-diagonal pairs.

    Parameters
    ----------
    estimate : array-like of shape (m, m)
        The learned matrix (any scale; need not be symmetric).
    truth : array-like of shape (m, m) or None
        The true relation or similarity; None (or all NaN) when unknown.
    entries : {"off-diagonal", "all"}
        Compare the off-diagonal task pairs of two square matrices, or every entry of two
        matrices of the same (any) shape.

    Returns
    -------
    dict
        ``sign_agreement``, ``rank_correlation``, ``relative_error`` (floats, ``nan`` where
        they cannot be computed), ``n_pairs`` (ordered off-diagonal pairs compared) and
        ``reason`` ('' when every figure was computed, else why not).
    """
    if entries not in ("off-diagonal", "all"):
        raise ValueError(f"entries must be 'off-diagonal' or 'all'; got {entries!r}.")
    pairs = entries == "off-diagonal"
    estimate = _matrix("estimate", estimate, pairs)
    result = {key: float("nan") for key in AGREEMENT_KEYS}
    result.update(n_pairs=0, reason="")
    if truth is None:
        result["reason"] = "the truth is unknown"
        return result
    truth = _matrix("truth", truth, pairs)
    if truth.shape != estimate.shape:
        raise ValueError(f"estimate and truth must have the same shape; got {estimate.shape} "
                         f"and {truth.shape}.")
    if not np.all(np.isfinite(estimate)):
        raise ValueError("estimate must be finite (no NaN or inf).")
    compared = np.isfinite(truth)
    if pairs:
        compared &= ~np.eye(truth.shape[0], dtype=bool)
    e, t = estimate[compared], truth[compared]
    result["n_pairs"] = int(t.size)
    if t.size == 0:
        result["reason"] = ("the truth is unknown" if not pairs or truth.shape[0] > 1
                            else "one task has no pair")
        return result
    reasons = []
    signed = np.abs(t) > UNRELATED_SHARE * np.max(np.abs(t), initial=0.0)
    if signed.any():
        result["sign_agreement"] = float(np.mean(np.sign(e[signed]) == np.sign(t[signed])))
    else:
        reasons.append("the truth has no related or negated pair")
    scale = np.max(np.abs(e), initial=0.0)
    e_ranked = np.round(e / (RANK_RESOLUTION * scale)) if scale > 0 else e
    if np.ptp(t) > 0 and np.ptp(e_ranked) > 0:
        rank_e = _ranks(e_ranked) - (t.size - 1) / 2.0
        rank_t = _ranks(t) - (t.size - 1) / 2.0
        result["rank_correlation"] = float(
            rank_e @ rank_t / np.sqrt((rank_e @ rank_e) * (rank_t @ rank_t)))
    else:
        where = " off the diagonal" if pairs else ""
        reasons.append(f"the truth is constant{where}" if np.ptp(t) == 0
                       else f"the estimate is constant{where}")
    norm_e, norm_t = np.linalg.norm(e), np.linalg.norm(t)
    if norm_t > 0 and norm_e > 0:
        result["relative_error"] = float(np.linalg.norm(e / norm_e - t / norm_t))
    else:
        where = " off the diagonal" if pairs else ""
        reasons.append(f"the truth is zero{where}" if norm_t == 0
                       else f"the estimate is zero{where}")
    result["reason"] = "; ".join(reasons)
    return result
