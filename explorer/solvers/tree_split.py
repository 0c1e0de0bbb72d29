"""Split search of multi-task decision trees (Faddoul et al., ECML PKDD 2012, Sec. 2.3-2.4).

At a node the examples of the still-active tasks are held as ``sorted_rows`` (one row
per feature holding the node's row ids sorted by that feature, computed once at the root
and partitioned stably into the children, so no node sorts again). The search keeps the
weighted class counts of all ``(task, label)`` columns cumulated along each sorted
feature, scores every threshold between distinct values, and derives per task the
entropy gain (Eq. 1) of every candidate split, then the three criteria

* ``IG_J``: gain of the concatenated label set ``Y_1 (+) ... (+) Y_N``,
* ``IG_U``: unweighted sum of the per-task gains,
* ``IG_M``: maximum of the per-task gains.

Entropies are in bits. With ``A(c) = s log s - sum_k c_k log c_k`` (``s = sum_k c_k``,
i.e. ``s`` times the entropy of the counts ``c``) the gain of task ``j`` splitting its
weight ``n_j`` into left/right counts is ``IG_j = (A_j - A_jL - A_jR) / n_j``; only
``x log x`` of the cumulated counts is ever needed.

A note on Theorem 1 (Eq. 4), derived from the model because the paper's proof is only
valid in a special case: step (7) writes the task proportions inside each branch as the
global ``p_j``. In general the grouping rule (Lemma 1) gives

``IG_J = sum_j p_j IG_j + I(task; split)``,

where ``I(task; split) >= 0`` is the information the split carries about *which task*
an example belongs to. The theorem's equality (and hence ``IG_M >= IG_J``) holds exactly
when every branch keeps the task proportions ``p_j`` -- e.g. when all tasks share the same
instances with the same weights, the paper's "same instance x can appear in different
tasks" setting. :func:`task_information_gains` returns both terms so tests and the app can
show the identity.

Three implementations return the same splits. ``backend="numpy"`` scores all thresholds
of a block of features at once (``bincount`` + ``cumsum`` of the column counts); it is the
reference of the tests but ran at 2.9x scikit-learn's fit time on digits at depth 8
(``benchmarks/bench_mtdt.py``), missing the target. The default is therefore compiled with
numba (``cache=True``): :func:`_split_kernel` walks each presorted feature once with
running ``x log x`` sums, and when every feature has few distinct values (pixels, counts,
categories) :func:`_histogram_kernel` builds per-node (feature, value, column) histograms
in one pass over the node's rows, needing no sorted lists at all. :func:`warm_up`
compiles or loads the kernels; the app calls it at server start, off the event loop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ._tree_kernels import (
    _histogram_kernel,
    _node_statistics,
    _partition_kernel,
    _split_kernel,
    _split_rows_kernel,
    _value_bins,
    _xlx_table,
)

__all__ = [
    "CRITERIA",
    "SplitCandidate",
    "SplitSearchResult",
    "FeatureBins",
    "feature_bins",
    "histogram_scratch",
    "split_sorted_rows",
    "find_best_split",
    "partition_sorted_rows",
    "relative_gains",
    "task_information_gains",
    "warm_up",
    "xlogx",
]

CRITERIA = ("ig_m", "ig_j", "ig_u")

#: Largest number of float cells (features x thresholds x columns) scored at once.
_BLOCK_CELLS = 1 << 21


def xlogx(counts: np.ndarray) -> np.ndarray:
    """``c * log2(c)`` elementwise with ``0 log 0 = 0``.

    >>> xlogx(np.array([0.0, 1.0, 2.0])).tolist()
    [0.0, 0.0, 2.0]
    """
    counts = np.asarray(counts, dtype=np.float64)
    return counts * np.log2(np.where(counts > 0.0, counts, 1.0))


def task_information_gains(left: np.ndarray, right: np.ndarray, offsets: np.ndarray
                           ) -> dict[str, np.ndarray]:
    """Per-task and joint information gains of splits given their child class counts.

    Parameters
    ----------
    left, right : ndarray of shape (..., K)
        Weighted counts of the ``K`` ``(task, label)`` columns in the left / right child;
        the columns of task ``j`` are ``offsets[j]:offsets[j + 1]``.
    offsets : ndarray of int, shape (m + 1,)
        Column offsets of the tasks (every task has at least one column).

    Returns
    -------
    dict with
        ``"task"`` (..., m): ``IG(Y_j; a)`` (Eq. 1) of each task, 0 for absent tasks;
        ``"ig_j"`` (...): gain of the concatenated label set (Eq. 9);
        ``"ig_u"``, ``"ig_m"`` (...): sum / max of the per-task gains;
        ``"p"`` (..., m): task weight fractions ``p_j`` at the node (Theorem 1);
        ``"task_information"`` (...): ``I(task; split)``, so that
        ``ig_j == sum_j p_j IG_j + task_information`` (see the module docstring).

    Examples
    --------
    >>> left = np.array([2.0, 0.0, 1.0, 1.0]); right = np.array([0.0, 2.0, 1.0, 1.0])
    >>> gains = task_information_gains(left, right, np.array([0, 2, 4]))
    >>> gains["task"].tolist(), float(gains["ig_j"]), float(gains["ig_m"])
    ([1.0, 0.0], 0.5, 1.0)
    """
    left = np.asarray(left, dtype=np.float64)
    right = np.asarray(right, dtype=np.float64)
    starts = np.asarray(offsets[:-1], dtype=np.intp)
    left_sum = np.add.reduceat(left, starts, axis=-1)
    right_sum = np.add.reduceat(right, starts, axis=-1)
    left_xlx = np.add.reduceat(xlogx(left), starts, axis=-1)
    right_xlx = np.add.reduceat(xlogx(right), starts, axis=-1)
    total = left + right
    node_sum = left_sum + right_sum
    node_xlx = np.add.reduceat(xlogx(total), starts, axis=-1)
    task_gain = _task_gain(node_sum, node_xlx, left_sum, left_xlx, right_sum, right_xlx)
    n = node_sum.sum(-1)
    n_left = left_sum.sum(-1)
    n_right = right_sum.sum(-1)
    a_node = xlogx(n) - node_xlx.sum(-1)
    a_left = xlogx(n_left) - left_xlx.sum(-1)
    a_right = xlogx(n_right) - right_xlx.sum(-1)
    ig_joint = (a_node - a_left - a_right) / np.where(n > 0, n, 1.0)
    p = node_sum / np.where(n > 0, n, 1.0)[..., None]
    # I(task; split): the same A-formula applied to the per-task weights.
    a_task = xlogx(n) - xlogx(node_sum).sum(-1)
    a_task_left = xlogx(n_left) - xlogx(left_sum).sum(-1)
    a_task_right = xlogx(n_right) - xlogx(right_sum).sum(-1)
    task_information = (a_task - a_task_left - a_task_right) / np.where(n > 0, n, 1.0)
    return {"task": task_gain, "ig_j": ig_joint, "ig_u": task_gain.sum(-1),
            "ig_m": task_gain.max(-1), "p": p, "task_information": task_information}


def _task_gain(node_sum, node_xlx, left_sum, left_xlx, right_sum, right_xlx):
    """``IG_j = (A_j - A_jL - A_jR) / n_j`` from per-task sums and ``x log x`` sums."""
    a_node = xlogx(node_sum) - node_xlx
    a_left = xlogx(left_sum) - left_xlx
    a_right = xlogx(right_sum) - right_xlx
    gain = (a_node - a_left - a_right) / np.where(node_sum > 0, node_sum, 1.0)
    # Round-off can leave -1e-16 where the gain is exactly zero.
    return np.maximum(gain, 0.0)


@dataclass(frozen=True)
class SplitCandidate:
    """One split ``x[feature] <= threshold`` and its gains.

    Attributes
    ----------
    feature : int
    threshold : float
    task_gains : ndarray of shape (m,)
        ``IG(Y_j; a)`` of every task at this split (0 for tasks not active at the node).
    ig_j, ig_u, ig_m : float
        The three criteria at this split (``ig_u`` and ``ig_m`` computed from
        ``task_gains`` when read: most candidates never are).
    """

    feature: int
    threshold: float
    task_gains: np.ndarray
    ig_j: float

    @property
    def ig_u(self) -> float:
        return float(self.task_gains.sum())

    @property
    def ig_m(self) -> float:
        return float(self.task_gains.max())

    def score(self, criterion: str) -> float:
        return float(getattr(self, criterion))


@dataclass(frozen=True)
class SplitSearchResult:
    """The best split of a node under each criterion.

    Attributes
    ----------
    best : dict of criterion -> SplitCandidate
        The best split under ``"ig_m"``, ``"ig_j"`` and ``"ig_u"``.
    node_counts : ndarray of shape (K,)
        Weighted counts of the ``(task, label)`` columns at the node.
    """

    best: dict[str, SplitCandidate] = field(default_factory=dict)
    node_counts: np.ndarray | None = None


def find_best_split(X: np.ndarray, sorted_rows: np.ndarray, columns: np.ndarray,
                    weights: np.ndarray, offsets: np.ndarray, *,
                    min_samples_leaf: int = 1, backend: str = "numba",
                    X_t: np.ndarray | None = None, bins: FeatureBins | None = None,
                    node_counts: np.ndarray | None = None,
                    column_task: np.ndarray | None = None,
                    scratch: tuple[np.ndarray, np.ndarray] | None = None,
                    ) -> SplitSearchResult | None:
    """Best split of one node under every criterion (``MTIG(S)`` of Sec. 2.4).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        All examples (the node's rows are looked up in it).
    sorted_rows : ndarray of int, shape (n_features, n_node)
        Row ``f`` holds the node's row ids sorted by ``X[:, f]`` (feature-major, so the
        kernel walks contiguous memory).
    columns : ndarray of int, shape (n_samples,)
        The ``(task, label)`` column of every row, ``offsets[task] + label_code``.
    weights : ndarray of shape (n_samples,)
        Example weights (the boosting distribution).
    offsets : ndarray of int, shape (m + 1,)
        Column offsets of the tasks.
    min_samples_leaf : int
        Least number of examples in each child.
    backend : {"numba", "numpy"}
        ``"numba"`` walks each sorted column once in a compiled kernel; ``"numpy"`` scores
        all thresholds of a block of features with array operations. Both return the same
        splits (the NumPy one is the reference of the tests; it was 2-3x slower than
        scikit-learn on the benchmark, hence the kernel).
    X_t : ndarray of shape (n_features, n_samples) or None
        ``X.T`` in C order, computed once per tree by the caller (else here).
    bins : FeatureBins or None
        When every feature has few distinct values (:func:`feature_bins`), the numba
        search builds per-node class histograms over the values instead of walking sorted
        lists (exact, same splits); ``sorted_rows`` may then be just the node's rows,
        shape (1, n_node).
    node_counts : ndarray of shape (n_columns,) or None
        The node's weighted ``(task, label)`` counts when the caller has them (else here).
    column_task : ndarray of int, shape (n_columns,) or None
        The task of every column, ``repeat(arange(m), diff(offsets))`` (else here).
    scratch : tuple of ndarrays or None
        :func:`histogram_scratch` of ``bins``, reused across a tree's nodes (else
        allocated here).

    Returns
    -------
    SplitSearchResult or None
        None when no feature has two distinct values with enough examples on each side.
        Ties are broken towards the lower feature, then the lower threshold.
    """
    if backend not in ("numba", "numpy"):
        raise ValueError(f"backend must be 'numba' or 'numpy'; got {backend!r}.")
    n_features, n_node = sorted_rows.shape
    n_columns = int(offsets[-1])
    rows = sorted_rows[0]
    if node_counts is None:
        node_counts = np.bincount(columns[rows], weights=weights[rows], minlength=n_columns)
    if backend == "numba":
        if column_task is None:
            column_task = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        if bins is not None:
            return _search_histogram(bins, sorted_rows[0], columns, weights, offsets,
                                     node_counts, min_samples_leaf, column_task, scratch)
        if X_t is None:
            X_t = np.ascontiguousarray(X.T)
        return _search_compiled(X_t, sorted_rows, columns, weights, offsets, node_counts,
                                min_samples_leaf, column_task)
    starts = np.asarray(offsets[:-1], dtype=np.intp)
    node_sum = np.add.reduceat(node_counts, starts)
    node_xlx = np.add.reduceat(xlogx(node_counts), starts)
    n_total = node_sum.sum()
    a_joint_node = xlogx(n_total) - node_xlx.sum()
    best_score = {c: -np.inf for c in CRITERIA}
    best_at: dict[str, tuple] = {}
    block = max(1, _BLOCK_CELLS // max(1, n_node * n_columns))
    for first in range(0, n_features, block):
        features = np.arange(first, min(first + block, n_features))
        rows_block = sorted_rows[features].T
        values = X[rows_block, features]
        new_value = values[1:] != values[:-1]
        group = np.zeros(values.shape, dtype=np.intp)
        np.cumsum(new_value, axis=0, out=group[1:])
        n_groups = group[-1] + 1
        width = int(n_groups.max())
        if width < 2:
            continue
        base = (np.arange(features.size) * width)[None, :] + group
        flat = base * n_columns + columns[rows_block]
        left = np.bincount(flat.ravel(), weights=weights[rows_block].ravel(),
                           minlength=features.size * width * n_columns)
        left = left.reshape(features.size, width, n_columns).cumsum(axis=1)
        n_left = np.bincount(base.ravel(), minlength=features.size * width)
        n_left = n_left.reshape(features.size, width).cumsum(axis=1)
        right = np.maximum(node_counts - left, 0.0)
        left_sum = np.add.reduceat(left, starts, axis=-1)
        right_sum = np.maximum(node_sum - left_sum, 0.0)
        left_xlx = np.add.reduceat(xlogx(left), starts, axis=-1)
        right_xlx = np.add.reduceat(xlogx(right), starts, axis=-1)
        task_gain = _task_gain(node_sum, node_xlx, left_sum, left_xlx, right_sum, right_xlx)
        n_l = left_sum.sum(-1)
        ig_joint = (a_joint_node - (xlogx(n_l) - left_xlx.sum(-1))
                    - (xlogx(n_total - n_l) - right_xlx.sum(-1))) / n_total
        valid = ((np.arange(width)[None, :] < (n_groups - 1)[:, None])
                 & (n_left >= min_samples_leaf) & (n_node - n_left >= min_samples_leaf))
        scores = {"ig_j": ig_joint, "ig_u": task_gain.sum(-1), "ig_m": task_gain.max(-1)}
        for criterion, score in scores.items():
            score = np.where(valid, score, -np.inf)
            flat_best = int(np.argmax(score))
            value = score.flat[flat_best]
            if value > best_score[criterion]:
                f_local, g = divmod(flat_best, width)
                best_score[criterion] = value
                position = int(np.searchsorted(group[:, f_local], g, side="right")) - 1
                best_at[criterion] = (
                    int(features[f_local]),
                    _threshold(values[position, f_local], values[position + 1, f_local]),
                    task_gain[f_local, g].copy(), float(ig_joint[f_local, g]),
                )
    if not best_at:
        return None
    best = {}
    for criterion, (feature, threshold, gains, ig_joint) in best_at.items():
        best[criterion] = SplitCandidate(feature, threshold, gains, ig_joint)
    return SplitSearchResult(best=best, node_counts=node_counts)


@dataclass(frozen=True)
class FeatureBins:
    """Distinct values of every feature and each example's value index.

    Attributes
    ----------
    rank : ndarray of int32, shape (n_samples, n_features)
        ``values[f, rank[i, f]] == X[i, f]``.
    values : ndarray of shape (n_features, max_bins)
        Sorted distinct values per feature (padded with the last value).
    n_bins : ndarray of int64, shape (n_features,)
    """

    rank: np.ndarray
    values: np.ndarray
    n_bins: np.ndarray


def feature_bins(X: np.ndarray, presorted: np.ndarray | None = None, max_bins: int = 64
                 ) -> FeatureBins | None:
    """:class:`FeatureBins` of ``X`` when no feature has more than ``max_bins`` values.

    ``presorted`` is ``argsort(X.T, axis=1)`` when the caller has it; without it one
    compiled pass sorts each column and stops at the first feature with too many values
    (continuous data pays for one column, not a full presort).
    Returns None for continuous data. Both ways give the same bins.
    """
    if presorted is None:
        if X.shape[0] == 0 or X.shape[1] == 0:
            return None
        ok, rank, values, n_bins = _value_bins(np.ascontiguousarray(X, dtype=np.float64),
                                               int(max_bins))
        return FeatureBins(rank, values, n_bins) if ok else None
    sorted_values = np.take_along_axis(X.T, presorted, axis=1)
    step = np.zeros(sorted_values.shape, dtype=np.int32)
    np.cumsum(sorted_values[:, 1:] != sorted_values[:, :-1], axis=1, out=step[:, 1:])
    n_bins = step[:, -1].astype(np.int64) + 1
    if n_bins.max() > max_bins:
        return None
    rank = np.empty_like(step)
    np.put_along_axis(rank, presorted, step, axis=1)
    # values[f, step[f, i]] = sorted_values[f, i] (equal values land on the same bin); the
    # padding past a feature's last bin repeats its largest value
    values = np.repeat(sorted_values[:, -1:], int(n_bins.max()), axis=1)
    values[np.arange(X.shape[1])[:, None], step] = sorted_values
    return FeatureBins(np.ascontiguousarray(rank.T), values, n_bins)


def histogram_scratch(bins: FeatureBins, n_columns: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scratch arrays for the histogram search of one tree, reused node to node: the
    zeroed histograms (d, max bins, n_columns) and counts (d, max bins), which the kernel
    leaves zeroed, and ``c log2 c`` of the whole counts ``c = 0 .. n_samples``."""
    d, width = bins.values.shape
    return (np.zeros((d, width, n_columns)), np.zeros((d, width), np.int64),
            _xlx_table(bins.rank.shape[0]))


def _search_histogram(bins, rows, columns, weights, offsets, node_counts, min_leaf,
                      column_task, scratch=None):
    if scratch is None:
        scratch = histogram_scratch(bins, node_counts.size)
    feature, position, score, task_gains, upper = _histogram_kernel(
        bins.rank, np.ascontiguousarray(rows), columns, column_task, weights,
        np.asarray(offsets, dtype=np.int64), node_counts, bins.n_bins, int(min_leaf),
        scratch[0], scratch[1], scratch[2])
    scores = score.tolist()
    if not any(math.isfinite(v) for v in scores[:3]):
        return None
    best = {}
    feature, position, upper = feature.tolist(), position.tolist(), upper.tolist()
    values = bins.values
    for k, criterion in enumerate(("ig_m", "ig_j", "ig_u")):
        f = feature[k]
        gains = task_gains[k]
        best[criterion] = SplitCandidate(
            f, _threshold(float(values[f, position[k]]), float(values[f, upper[k]])), gains,
            scores[3 + k])
    return SplitSearchResult(best=best, node_counts=node_counts)


def _search_compiled(X_t, sorted_rows, columns, weights, offsets, node_counts, min_leaf,
                     column_task):
    """Run :func:`_split_kernel` and turn its best positions into :class:`SplitCandidate`."""
    feature, position, score, task_gains = _split_kernel(
        X_t, np.ascontiguousarray(sorted_rows), columns, column_task, weights,
        np.asarray(offsets, dtype=np.int64), node_counts, int(min_leaf),
        _xlx_table(sorted_rows.shape[1]))
    scores = score.tolist()
    if not any(math.isfinite(v) for v in scores[:3]):
        return None
    best = {}
    feature, position = feature.tolist(), position.tolist()
    for k, criterion in enumerate(("ig_m", "ig_j", "ig_u")):
        f, pos = feature[k], position[k]
        column = sorted_rows[f]
        threshold = _threshold(float(X_t[f, column[pos]]), float(X_t[f, column[pos + 1]]))
        gains = task_gains[k]
        best[criterion] = SplitCandidate(f, threshold, gains, scores[3 + k])
    return SplitSearchResult(best=best, node_counts=node_counts)


def _threshold(low: float, high: float) -> float:
    """Midpoint of two consecutive distinct values (as C4.5 / scikit-learn do)."""
    threshold = low / 2.0 + high / 2.0
    if threshold == high or not math.isfinite(threshold):
        threshold = low
    return float(threshold)


def partition_sorted_rows(sorted_rows: np.ndarray, goes_left: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Stable partition of every row of ``sorted_rows`` into left / right children.

    Parameters
    ----------
    sorted_rows : ndarray of int, shape (n_features, n_node)
    goes_left : ndarray of bool, shape (n_samples,)
        Indexed by row id.

    Returns
    -------
    left, right : ndarrays of shape (n_features, n_left), (n_features, n_node - n_left)
        Each row still sorted by its feature.

    >>> partition_sorted_rows(np.array([[0, 1, 2], [2, 1, 0]]), np.array([True, False, True]))
    (array([[0, 2],
           [2, 0]]), array([[1],
           [1]]))
    """
    n_left = int(goes_left[sorted_rows[0]].sum())
    left = np.empty((sorted_rows.shape[0], n_left), dtype=sorted_rows.dtype)
    right = np.empty((sorted_rows.shape[0], sorted_rows.shape[1] - n_left),
                     dtype=sorted_rows.dtype)
    _partition_kernel(np.ascontiguousarray(sorted_rows), goes_left, left, right)
    return left, right


def split_sorted_rows(sorted_rows: np.ndarray, X_t: np.ndarray, feature: int,
                      threshold: float, scratch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Children of a node split on ``X[:, feature] <= threshold``, in one compiled call.

    As :func:`partition_sorted_rows` with ``goes_left = X_t[feature] <= threshold`` on the
    node's rows; ``scratch`` is a bool array of shape (n_samples,), all False, left so.
    """
    return _split_rows_kernel(sorted_rows, X_t, int(feature), float(threshold), scratch)


def _sample_labels(rng: np.random.Generator, kind: str, n: int, k: int) -> np.ndarray:
    if kind == "U":
        return rng.integers(0, k, n)
    if kind == "N":  # N(0, 1) cut into k equal-width bins over [-3, 3]
        return np.clip(((rng.normal(size=n) + 3.0) / 6.0 * k).astype(int), 0, k - 1)
    return np.minimum(rng.poisson(1.0, n), k - 1)  # "P": Poisson(1), clipped


def relative_gains(n_runs: int = 100, *, n_samples: int = 200, n_features: int = 5,
                   families: Sequence[str] = ("U/U", "U/N", "U/P", "N/N", "N/P", "P/P"),
                   random_state=None) -> dict[str, dict[str, np.ndarray]]:
    """The experiment of the paper's Figure 3: best IG_M and IG_U relative to best IG_J.

    For each family (label distributions of the two tasks: Uniform, Normal, Poisson) and
    run, two tasks label the *same* ``n_samples`` instances (uniform attributes) with
    ``k_1, k_2`` classes drawn in 2..20; the best split under each criterion is found and
    ``max IG_M / max IG_J`` and ``max IG_U / max IG_J`` recorded. Because the tasks share
    the instances, Theorem 1 holds and the IG_M ratio is >= 1.

    Returns
    -------
    dict family -> {"ig_m": (n_runs,), "ig_u": (n_runs,)}
    """
    rng = np.random.default_rng(random_state)
    out: dict[str, dict[str, np.ndarray]] = {}
    for family in families:
        first, second = family.split("/")
        ratios = {"ig_m": [], "ig_u": []}
        while len(ratios["ig_m"]) < n_runs:
            X = rng.uniform(size=(n_samples, n_features))
            k1, k2 = rng.integers(2, 21, 2)
            y1 = _sample_labels(rng, first, n_samples, int(k1))
            y2 = _sample_labels(rng, second, n_samples, int(k2))
            X2 = np.vstack([X, X])
            columns = np.concatenate([y1, k1 + y2])
            offsets = np.array([0, k1, k1 + k2])
            sorted_rows = np.argsort(X2.T, axis=1)
            result = find_best_split(X2, sorted_rows, columns, np.ones(2 * n_samples),
                                     offsets)
            joint = result.best["ig_j"].ig_j if result is not None else 0.0
            if joint <= 1e-12:
                continue
            ratios["ig_m"].append(result.best["ig_m"].ig_m / joint)
            ratios["ig_u"].append(result.best["ig_u"].ig_u / joint)
        out[family] = {key: np.array(value) for key, value in ratios.items()}
    return out


def warm_up() -> None:
    """Exercise the split search on tiny data (the app calls this at server start).

    Loads (or compiles, then caches on disk) the numba kernel, so no user click pays it.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, 2))
    columns = np.repeat(np.arange(4), 4)
    sorted_rows = np.argsort(X.T, axis=1, kind="stable")
    find_best_split(X, sorted_rows, columns, np.ones(16), np.array([0, 2, 4]))
    partition_sorted_rows(sorted_rows, X[:, 0] > 0)
    split_sorted_rows(sorted_rows, np.ascontiguousarray(X.T), 0, 0.0, np.zeros(16, bool))
    discrete = np.round(X)
    presorted = np.argsort(discrete.T, axis=1)
    bins = feature_bins(discrete, presorted)
    feature_bins(discrete)
    find_best_split(discrete, presorted[:1], columns, np.ones(16), np.array([0, 2, 4]),
                    bins=bins)
    _node_statistics(np.arange(16), columns, np.ones(16), np.array([0, 2, 4]),
                     np.ones(2, bool), np.zeros(2, np.int64), 0.9)
