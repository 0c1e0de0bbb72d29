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
  off-diagonal pairs (does the model order the pairs as the truth does?); both sides are
  ranked the same way, each rounded to :data:`RANK_RESOLUTION` of its own largest magnitude
  first, so values that close count as ties (a co-membership of 0.998 against 1.0 is no
  ordering) and a matrix compared with itself, or a positive multiple of it, gives exactly 1;
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
           "TRUTH_FOR", "TruthComparison", "truth_for"]

#: The figures :func:`relationship_agreement` returns (besides ``n_pairs`` and ``reason``).
AGREEMENT_KEYS = ("sign_agreement", "rank_correlation", "relative_error")

#: Truth entries smaller than this share of its largest magnitude carry no sign.
UNRELATED_SHARE = 0.1

#: The estimate and the truth are each ranked after rounding to this share of their own
#: largest magnitude.
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


def _rounded(values: np.ndarray) -> np.ndarray:
    """``values`` in units of :data:`RANK_RESOLUTION` of their largest magnitude, rounded to
    integers (at most ~400 distinct values): what is ranked, on both sides.

    >>> _rounded(np.array([1.0, 0.998, -0.5, 0.0]))
    array([ 200.,  200., -100.,    0.])
    """
    scale = np.max(np.abs(values), initial=0.0)
    return np.round(values / (RANK_RESOLUTION * scale)) if scale > 0 else values


def _rounded_ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean of their ranks, as Spearman's rho needs) of
    integer-valued floats in a short range (:func:`_rounded`'s), by counting instead of
    sorting (a live view ranks every frame's estimate).

    >>> _rounded_ranks(np.array([3.0, 1.0, 3.0, 2.0]))
    array([2.5, 0. , 2.5, 1. ])
    """
    low = values.min()
    codes = (values - low).astype(np.int64)
    counts = np.bincount(codes)
    starts = np.cumsum(counts) - counts
    return (starts + (counts - 1) / 2.0)[codes]


class TruthComparison:
    """What :func:`relationship_agreement` needs of the truth, computed once for the many
    estimates compared with it (a live view compares every frame's).

    Parameters
    ----------
    truth : array-like of shape (m, m) (any 2-D shape with ``entries="all"``), or None
        As :func:`relationship_agreement`.
    entries : {"off-diagonal", "all"}
        As :func:`relationship_agreement`.

    >>> compare = TruthComparison(np.array([[1., 1, -1], [1, 1, -1], [-1, -1, 1]]))
    >>> compare.agreement(np.eye(3) - 0.5)["sign_agreement"]
    0.6666666666666666
    """

    def __init__(self, truth, *, entries: str = "off-diagonal"):
        if entries not in ("off-diagonal", "all"):
            raise ValueError(f"entries must be 'off-diagonal' or 'all'; got {entries!r}.")
        self.pairs = entries == "off-diagonal"
        self.truth = None if truth is None else _matrix("truth", truth, self.pairs)
        if self.truth is None:
            return
        compared = np.isfinite(self.truth)
        if self.pairs:
            compared &= ~np.eye(self.truth.shape[0], dtype=bool)
        self.compared = compared
        t = self.truth[compared]
        self.t = t
        self.signed = np.abs(t) > UNRELATED_SHARE * np.max(np.abs(t), initial=0.0)
        self.sign_t = np.sign(t[self.signed])
        t_ranked = _rounded(t)
        self.rank_t = ((_rounded_ranks(t_ranked) - (t.size - 1) / 2.0)
                       if t.size and np.ptp(t_ranked) > 0 else None)
        norm_t = np.linalg.norm(t)
        self.unit_t = t / norm_t if norm_t > 0 else None

    def agreement(self, estimate) -> dict:
        """:func:`relationship_agreement` of ``estimate`` with this truth."""
        pairs = self.pairs
        estimate = _matrix("estimate", estimate, pairs)
        result = {key: float("nan") for key in AGREEMENT_KEYS}
        result.update(n_pairs=0, reason="")
        if self.truth is None:
            result["reason"] = "the truth is unknown"
            return result
        if self.truth.shape != estimate.shape:
            raise ValueError(f"estimate and truth must have the same shape; got "
                             f"{estimate.shape} and {self.truth.shape}.")
        if not np.all(np.isfinite(estimate)):
            raise ValueError("estimate must be finite (no NaN or inf).")
        t = self.t
        e = estimate[self.compared]
        result["n_pairs"] = int(t.size)
        if t.size == 0:
            result["reason"] = ("the truth is unknown" if not pairs or self.truth.shape[0] > 1
                                else "one task has no pair")
            return result
        reasons = []
        where = " off the diagonal" if pairs else ""
        if self.signed.any():
            result["sign_agreement"] = float(np.mean(np.sign(e[self.signed]) == self.sign_t))
        else:
            reasons.append("the truth has no related or negated pair")
        e_ranked = _rounded(e)
        if self.rank_t is not None and np.ptp(e_ranked) > 0:
            rank_e = _rounded_ranks(e_ranked) - (t.size - 1) / 2.0
            rank_t = self.rank_t
            result["rank_correlation"] = float(
                rank_e @ rank_t / np.sqrt((rank_e @ rank_e) * (rank_t @ rank_t)))
        else:
            reasons.append(f"the truth is constant{where}" if self.rank_t is None
                           else f"the estimate is constant{where}")
        norm_e = np.linalg.norm(e)
        if self.unit_t is not None and norm_e > 0:
            result["relative_error"] = float(np.linalg.norm(e / norm_e - self.unit_t))
        else:
            reasons.append(f"the truth is zero{where}" if self.unit_t is None
                           else f"the estimate is zero{where}")
        result["reason"] = "; ".join(reasons)
        return result


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

    Comparing many estimates with one truth: :class:`TruthComparison`.
    """
    # the estimate's shape is checked before the truth is looked at (TruthComparison
    # checks ``entries``)
    _matrix("estimate", estimate, entries == "off-diagonal")
    return TruthComparison(truth, entries=entries).agreement(estimate)
