"""Multi-task decision trees (MT-DT) of Faddoul et al., ECML PKDD 2012, and the single-task tree.

Training data are triples ``(x, y, task)``; every task has its own label set (any labels,
different class counts). The tree is grown by Algorithm 1: at each node the tasks whose
examples are pure (or absent) get an *early decision leaf* and leave the node; the split
``x[a] <= v`` maximises ``IG_J``, ``IG_U`` or ``IG_M`` (Sec. 2.3) over the remaining tasks.
The split search lives in :mod:`explorer.solvers.tree_split`. Boosting is in
:mod:`explorer.models.mtadaboost`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from functools import partial

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..solvers._tree_kernels import _node_statistics
from ..solvers.tree_split import (
    CRITERIA,
    feature_bins,
    find_best_split,
    histogram_scratch,
    partition_sorted_rows,
    split_sorted_rows,
)
from .base import LazyMapping, MultiTaskEstimator, Snapshot, encode_task_labels, n_tasks_of
from .constraints import COUNT, RANDOM_STATE, Interval, Options, Real

__all__ = ["MTDecisionTree", "SingleTaskTree", "NodeRecords"]

#: Early-leaf reasons by the code :func:`~explorer.solvers._tree_kernels._node_statistics`
#: returns (0: the task goes on).
_STOP_REASONS = (None, "absent", "pure", "purity")

#: The tree parameters of MTDecisionTree and SingleTaskTree.
TREE_CONSTRAINTS = {
    "max_depth": [None, COUNT],
    "min_samples_leaf": [COUNT],
    "purity": [Interval(Real, 0, 1, closed="right")],
    "random_state": RANDOM_STATE,
}


class MTDecisionTree(MultiTaskEstimator):
    """Multi-task decision tree (MT-DT, Algorithm 1 of Faddoul et al. 2012).

    Each node carries a test ``x[feature] <= threshold`` (left when true) chosen by the
    criterion over the tasks still active at the node, plus early decision leaves for the
    tasks that stop there. ``predict`` walks a task's examples down until they meet a leaf
    of their task, so a task's prediction may be decided at an internal node.

    Parameters
    ----------
    criterion : {"ig_m", "ig_j", "ig_u"}
        ``IG_M = max_j IG(Y_j; a)`` (the paper's proposal, Theorem 1), ``IG_J`` the gain
        of the concatenated label set, ``IG_U = sum_j IG(Y_j; a)`` (Sec. 2.3).
    max_depth : int or None
        Depth limit; tasks still active at that depth get a majority leaf.
    min_samples_leaf : int
        Least number of (active-task) examples in each child of a split.
    purity : float in (0, 1]
        A task stops at a node when this weighted fraction of its examples share a label
        (the paper's 80% example, Sec. 2.4); 1.0 stops only on pure tasks.
    random_state : None, int or Generator
        Unused by the deterministic search (ties go to the lower feature, then the lower
        threshold); kept for the estimator contract.

    Attributes
    ----------
    classes_ : list of ndarray, ``classes_[t]`` the sorted labels of task t
    tree_ : dict of ndarray describing the nodes (see :meth:`_grow`)
    nodes_ : NodeRecords
        The per-node records (dicts, built on first access) also sent in the snapshots.
    n_nodes_, max_depth_ : int
    split_borrowing_ : ndarray of shape (m, m)
        Entry (i, j): weighted information gain task i obtained from splits decided by
        task j (the task with the largest own gain at the split, which is the task that
        chose the split under IG_M). The weight is the fraction of task i's total weight
        that reaches the node.

    Notes
    -----
    Choices the paper leaves open or states differently, derived from the model:

    * Theorem 1 (Eq. 4) as printed holds only when the split keeps the task proportions in
      both branches; in general ``IG_J = sum_j p_j IG_j + I(task; split)`` (see
      :mod:`explorer.solvers.tree_split`), so ``IG_M >= IG_J`` can fail when tasks occupy
      different regions of the input space.
    * Like scikit-learn (and unlike C4.5's zero-gain stop), a node is split whenever a
      valid split exists, even at zero gain, so that one task reproduces
      ``DecisionTreeClassifier(criterion="entropy")``; thresholds are midpoints between
      consecutive distinct values; gains are in bits; ties go to the lower feature index.
    * An absent task's leaf takes the weighted majority label of the nearest ancestor
      where the task had examples (Algorithm 1, line 4); example weights enter all
      counts, so boosting's distribution ``D_t`` shapes both splits and leaves.
    * Nodes are grown breadth first (one snapshot per node), which changes nothing in the
      fitted tree but lets the page show it level by level.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array(["a", "a", "b", "b", 0, 1, 1, 1], dtype=object)
    >>> task = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> tree = MTDecisionTree().fit(X, y, task)
    >>> tree.predict(np.array([[0.2], [2.5]]), [0, 1]).tolist()
    ['a', 1]
    """

    _estimator_type = "classifier"
    accepts_sample_weight = True
    #: Features with at most this many distinct values use the histogram search.
    _histogram_max_bins = 64
    #: "numba" (default) or "numpy" (the reference search; the benchmark times both).
    _split_backend = "numba"
    _parameter_constraints = {"criterion": [Options(*CRITERIA)], **TREE_CONSTRAINTS}

    def __init__(self, *, criterion: str = "ig_m", max_depth: int | None = None,
                 min_samples_leaf: int = 1, purity: float = 1.0, random_state=None):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.purity = purity
        self.random_state = random_state

    # ------------------------------------------------------------------ parameters
    def _resolved_params(self) -> tuple[str, float, int, float]:
        """The validated parameters as the growth uses them (no depth limit: ``inf``)."""
        max_depth = np.inf if self.max_depth is None else int(self.max_depth)
        return self.criterion, max_depth, int(self.min_samples_leaf), float(self.purity)

    # ------------------------------------------------------------------ fitting
    def _fit_steps(self, X, y, task, sample_weight=None) -> Iterator[Snapshot]:
        codes, classes = encode_task_labels(y, task, n_tasks_of(task))
        weight = _check_weight(sample_weight, X.shape[0])
        yield from self._grow(X, codes, task, weight, classes)

    def _prepare(self, X) -> tuple:
        """Per-data work shared by all trees of a booster: presort, ``X.T``, value bins.

        With few distinct values per feature (the histogram search) only the first
        feature's order is needed (the node's row list); it is what the full presort's
        first row was, so the trees are the same."""
        bins = (feature_bins(X, None, self._histogram_max_bins)
                if self._split_backend == "numba" else None)
        if bins is not None:  # only the node's rows are needed: keep one "feature" row
            presorted = np.argsort(X[:, 0])[None, :] if X.shape[0] else \
                np.zeros((1, 0), dtype=np.intp)
        else:
            presorted = np.argsort(X.T, axis=1)
        return presorted, np.ascontiguousarray(X.T), bins

    def _grow(self, X, codes, task, weight, classes, prepared=None) -> Iterator[Snapshot]:
        """Grow the tree breadth first, one :class:`Snapshot` per node.

        ``codes`` are per-task label codes, ``classes`` the per-task label arrays and
        ``prepared`` optionally the output of :meth:`_prepare` (shared by boosting rounds).
        Fitted attributes are set when the tree is complete. A snapshot's ``info`` is lazy:
        ``"tree"`` is the tuple of the node records so far (the list only grows),
        ``"node"`` the new node's record, ``"n_pending"`` the queued nodes; its
        ``matrices["split_borrowing"]`` is a copy made only when the matrix changed.
        """
        criterion, max_depth, min_leaf, purity = self._resolved_params()
        m = len(classes)
        n_classes = np.array([len(c) for c in classes])
        offsets = np.concatenate([[0], np.cumsum(n_classes)]).astype(np.intp)
        columns = offsets[task] + codes
        task_total = np.bincount(task, weights=weight, minlength=m)
        column_task = np.repeat(np.arange(m), n_classes)
        presorted, X_t, bins = self._prepare(X) if prepared is None else prepared
        scratch = None if bins is None else histogram_scratch(bins, int(offsets[-1]))
        keep = np.ones(X.shape[0], dtype=bool)
        goes_left = np.zeros(X.shape[0], dtype=bool)
        feature, threshold, left, right, depth_of, parent_of = [], [], [], [], [], []
        leaf_code, value = [], []
        nodes = NodeRecords(offsets, classes)
        borrowing = np.zeros((m, m))
        queue = deque([(0, -1, 0, presorted, np.ones(m, bool), np.zeros(m, np.int64))])
        next_id = 1
        while queue:
            node, parent, depth, sorted_rows, active, parent_major = queue.popleft()
            rows = sorted_rows[0]
            counts, n_samples, task_weight, major, reason = _node_statistics(
                rows, columns, weight, offsets, active, parent_major, purity)
            stops = reason > 0
            codes_here = np.where(stops, major, -1)
            # plain Python on short lists: cheaper per node than NumPy calls on (m,) arrays
            reasons = reason.tolist()
            leaves = [(j, _STOP_REASONS[r]) for j, r in enumerate(reasons) if r > 0]
            remaining = active & ~stops
            split = None
            if remaining.any():
                if any(n > 0 and not k for n, k in zip(n_samples.tolist(), remaining.tolist(),
                                                       strict=True)):
                    # drop the stopped tasks' rows
                    keep[rows] = remaining[task[rows]]
                    sorted_rows = _filter(sorted_rows, keep)
                    keep[rows] = True
                stop = None
                if depth >= max_depth:
                    stop = "max depth"
                elif sorted_rows.shape[1] < 2 * min_leaf:
                    stop = "min samples"
                else:
                    split = find_best_split(X, sorted_rows, columns, weight, offsets,
                                            min_samples_leaf=min_leaf, X_t=X_t,
                                            bins=bins, backend=self._split_backend,
                                            node_counts=counts * remaining[column_task],
                                            column_task=column_task, scratch=scratch)
                    if split is None:
                        stop = "no split"
                if stop is not None:
                    for j in np.flatnonzero(remaining):
                        codes_here[j] = major[j]
                        leaves.append((int(j), stop))
            side = None if parent < 0 else ("left" if left[parent] == node else "right")
            split_record = None
            feature.append(-1)
            threshold.append(np.nan)
            left.append(-1)
            right.append(-1)
            depth_of.append(depth)
            parent_of.append(parent)
            leaf_code.append(codes_here)
            value.append(counts)
            if split is not None:
                chosen = split.best[criterion]
                gains = chosen.task_gains
                decider = int(np.argmax(np.where(remaining, gains, -np.inf)))
                reach = task_weight / np.where(task_total > 0, task_total, 1.0)
                # copy on write: earlier snapshots hold references to the old matrix
                borrowing = borrowing.copy()
                borrowing[:, decider] += reach * gains
                feature[node], threshold[node] = chosen.feature, chosen.threshold
                left[node], right[node] = next_id, next_id + 1
                split_record = (split, chosen, decider, next_id)
                left_rows, right_rows = split_sorted_rows(sorted_rows, X_t, chosen.feature,
                                                          chosen.threshold, goes_left)
                queue.append((next_id, node, depth + 1, left_rows, remaining, major))
                queue.append((next_id + 1, node, depth + 1, right_rows, remaining, major))
                next_id += 2
            nodes.append((node, parent, depth, side, n_samples, counts, active, remaining,
                          leaves, codes_here, split_record))
            yield Snapshot(step=len(nodes), matrices=LazyMapping(partial(
                               _borrowing_matrices, borrowing)),
                           info=LazyMapping(partial(_node_info, nodes, len(nodes), criterion,
                                                    len(queue), self.max_depth)))
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.tree_ = {"feature": np.array(feature), "threshold": np.array(threshold),
                      "left": np.array(left), "right": np.array(right),
                      "depth": np.array(depth_of), "parent": np.array(parent_of),
                      "leaf_code": np.array(leaf_code), "value": np.array(value),
                      "offsets": offsets}
        self.nodes_ = nodes
        self.n_nodes_ = len(nodes)
        self.max_depth_ = int(max(depth_of))
        self.split_borrowing_ = borrowing
        self.n_tasks_ = m

    # ------------------------------------------------------------------ prediction
    def _leaf_nodes(self, X, task) -> np.ndarray:
        """Node at which each row meets its task's decision leaf."""
        tree = self.tree_
        current = np.zeros(X.shape[0], dtype=np.intp)
        rows = np.arange(X.shape[0])
        pending = tree["leaf_code"][current, task] < 0
        while pending.any():
            idx = rows[pending]
            at = current[idx]
            go_left = X[idx, tree["feature"][at]] <= tree["threshold"][at]
            current[idx] = np.where(go_left, tree["left"][at], tree["right"][at])
            pending[idx] = tree["leaf_code"][current[idx], task[idx]] < 0
        return current

    def _predict_codes(self, X, task) -> np.ndarray:
        return self.tree_["leaf_code"][self._leaf_nodes(X, task), task]

    def predict(self, X, task) -> np.ndarray:
        """Each row's label for its own task, shape (n_samples,)."""
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "tree_")
        return _decode(self._predict_codes(X, task), task, self.classes_)

    def predict_all(self, X) -> np.ndarray:
        """One label per task for every row, shape (n_samples, n_tasks): ``h(x)`` of Sec. 2.1."""
        check_is_fitted(self, "tree_")
        n = np.asarray(X).shape[0]
        X, _ = self._validate_predict_data(X, np.zeros(n, dtype=np.intp))
        columns = [self.predict(X, np.full(n, t)) for t in range(self.n_tasks_)]
        out = np.empty((n, self.n_tasks_), dtype=object)
        for t, col in enumerate(columns):
            out[:, t] = col
        return out

    def predict_proba(self, X, task) -> np.ndarray:
        """Class probabilities from the leaf's class weights, shape (n_samples, max_t k_t).

        Column c of a row of task t is the probability of ``classes_[t][c]``. A leaf of a
        task absent from its node uses the majority label's indicator.
        """
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "tree_")
        nodes = self._leaf_nodes(X, task)
        offsets = self.tree_["offsets"]
        width = max(len(c) for c in self.classes_)
        proba = np.zeros((X.shape[0], width))
        for t in np.unique(task):
            rows = np.flatnonzero(task == t)
            block = self.tree_["value"][nodes[rows], offsets[t]:offsets[t + 1]]
            total = block.sum(axis=1, keepdims=True)
            empty = total[:, 0] <= 0
            block = np.where(total > 0, block / np.where(total > 0, total, 1.0), 0.0)
            if empty.any():
                codes = self.tree_["leaf_code"][nodes[rows[empty]], t]
                block[np.flatnonzero(empty), codes] = 1.0
            proba[rows, : block.shape[1]] = block
        return proba

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"split_borrowing": (m, m)}``: see the class docstring."""
        check_is_fitted(self, "split_borrowing_")
        return {"split_borrowing": self.split_borrowing_.copy()}


class SingleTaskTree(MultiTaskEstimator):
    """Baseline: one entropy tree per task (MT-DT fit on each task alone, C4.5-like).

    With one task the three criteria coincide with the C4.5 information gain. Parameters
    as :class:`MTDecisionTree`. ``fit_iter`` yields one snapshot per task fitted.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [0.0], [1.0], [2.0]])
    >>> model = SingleTaskTree().fit(X, [0, 0, 1, 5, 6, 6], [0, 0, 0, 1, 1, 1])
    >>> model.predict(X, [0, 0, 0, 1, 1, 1]).tolist()
    [0, 0, 1, 5, 6, 6]
    """

    _estimator_type = "classifier"
    accepts_sample_weight = True
    _parameter_constraints = TREE_CONSTRAINTS

    def __init__(self, *, max_depth: int | None = None, min_samples_leaf: int = 1,
                 purity: float = 1.0, random_state=None):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.purity = purity
        self.random_state = random_state

    def _fit_steps(self, X, y, task, sample_weight=None) -> Iterator[Snapshot]:
        yield from fit_one_per_task(
            self, lambda: MTDecisionTree(max_depth=self.max_depth,
                                         min_samples_leaf=self.min_samples_leaf,
                                         purity=self.purity),
            lambda tree: {"n_nodes": tree.n_nodes_}, X, y, task, sample_weight)

    def predict(self, X, task) -> np.ndarray:
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "estimators_")
        out = np.empty(X.shape[0], dtype=object)
        for t in np.unique(task):
            rows = task == t
            out[rows] = self.estimators_[t].predict(X[rows], np.zeros(rows.sum(), np.intp))
        return _tidy(out, [self.classes_[t] for t in np.unique(task)])

    def predict_proba(self, X, task) -> np.ndarray:
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "estimators_")
        width = max(len(c) for c in self.classes_)
        proba = np.zeros((X.shape[0], width))
        for t in np.unique(task):
            rows = task == t
            p = self.estimators_[t].predict_proba(X[rows], np.zeros(rows.sum(), np.intp))
            proba[rows, : p.shape[1]] = p
        return proba


def fit_one_per_task(owner, make_model, describe, X, y, task, sample_weight
                     ) -> Iterator[Snapshot]:
    """The single-task baselines' loop: ``make_model()`` fitted on each task alone.

    Each task's rows become a one-task problem; ``owner.estimators_`` (one model per task)
    and ``owner.classes_`` are set when all tasks are fitted; one snapshot per task,
    ``info = {"task": t, **describe(model)}``.
    """
    weight = _check_weight(sample_weight, X.shape[0])
    estimators = []
    for t in range(n_tasks_of(task)):
        rows = task == t
        model = make_model()
        model.fit(X[rows], y[rows], np.zeros(rows.sum(), np.intp), sample_weight=weight[rows])
        estimators.append(model)
        yield Snapshot(step=t + 1, info={"task": t, **describe(model)})
    owner.estimators_ = estimators
    owner.classes_ = [model.classes_[0] for model in estimators]


class NodeRecords(Sequence):
    """The node records of a tree, built on first access (``fit`` never pays for them).

    Item ``i`` is node ``i``'s record, a dict: ``node``, ``parent``, ``depth``, ``side``
    ("left"/"right"/None), ``n_samples`` (m,) examples per task at the node,
    ``class_counts`` (list of m arrays, weighted label counts), ``active_tasks``,
    ``early_leaves`` (list of ``{"task", "label", "reason"}``), and for a split ``feature``,
    ``threshold``, ``deciding_task``, ``left``, ``right`` and ``gains`` (``"task"`` (m,)
    per-task gains, NaN for tasks not active, ``"ig_j"``, ``"ig_u"``, ``"ig_m"``, and
    ``"best"`` the best split under every criterion); otherwise these are None. The tree
    only appends, so a prefix stays valid while it grows.
    """

    def __init__(self, offsets: np.ndarray, classes: list[np.ndarray]):
        self._offsets, self._classes = offsets, classes
        self._raw: list[tuple | None] = []
        self._built: dict[int, dict] = {}

    def append(self, raw: tuple) -> None:
        self._raw.append(raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = range(len(self))[index]
        if index not in self._built:
            self._built[index] = self._build(self._raw[index])
        return self._built[index]

    def __getstate__(self):
        return {"records": list(self)}

    def __setstate__(self, state):
        self._raw = [None] * len(state["records"])
        self._built = dict(enumerate(state["records"]))
        self._offsets = self._classes = None

    def _build(self, raw: tuple) -> dict:
        (node, parent, depth, side, n_samples, counts, active, remaining, leaves, codes_here,
         split_record) = raw
        offsets, classes = self._offsets, self._classes
        m = len(classes)
        record = {
            "node": node, "parent": parent, "depth": depth, "side": side,
            "n_samples": n_samples,
            "class_counts": [counts[offsets[j]:offsets[j + 1]].copy() for j in range(m)],
            "active_tasks": np.flatnonzero(active).tolist(),
            "early_leaves": [{"task": j, "label": classes[j][codes_here[j]], "reason": r}
                             for j, r in leaves],
            "feature": None, "threshold": None, "gains": None, "deciding_task": None,
        }
        if split_record is not None:
            split, chosen, decider, first_child = split_record
            record.update(
                feature=chosen.feature, threshold=chosen.threshold, deciding_task=decider,
                left=first_child, right=first_child + 1,
                gains={"task": np.where(remaining, chosen.task_gains, np.nan),
                       "ig_j": chosen.ig_j, "ig_u": chosen.ig_u, "ig_m": chosen.ig_m,
                       "best": {c: {"feature": s.feature, "threshold": s.threshold,
                                    "task": s.task_gains.copy(), "ig_j": s.ig_j,
                                    "ig_u": s.ig_u, "ig_m": s.ig_m}
                                for c, s in split.best.items()}})
        return record


def _borrowing_matrices(borrowing: np.ndarray) -> dict[str, np.ndarray]:
    return {"split_borrowing": borrowing.copy()}


def _node_info(nodes: list, count: int, criterion: str, n_pending: int,
               max_depth: int | None) -> dict:
    return {"node": nodes[count - 1], "tree": tuple(nodes[:count]), "criterion": criterion,
            "n_pending": n_pending, "max_depth": max_depth}


def _filter(sorted_rows: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Drop the rows with ``keep[row]`` False from every feature's sorted list."""
    return partition_sorted_rows(sorted_rows, keep)[0]


def _check_weight(sample_weight, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    weight = np.asarray(sample_weight, dtype=np.float64)
    if weight.shape != (n,) or not np.all(np.isfinite(weight)) or np.any(weight < 0):
        raise ValueError(
            f"sample_weight must be a finite non-negative array of shape ({n},); got "
            f"{'shape ' + str(weight.shape) if weight.shape != (n,) else 'invalid values'}."
        )
    return weight


def _decode(codes: np.ndarray, task: np.ndarray, classes: list[np.ndarray]) -> np.ndarray:
    """Labels of per-task codes, in a common dtype when the tasks' label dtypes agree."""
    out = np.empty(codes.shape[0], dtype=object)
    for t in np.unique(task):
        rows = task == t
        out[rows] = classes[t][codes[rows]]
    return _tidy(out, [classes[t] for t in np.unique(task)])


def _tidy(out: np.ndarray, classes: list[np.ndarray] | None = None) -> np.ndarray:
    """Turn an object array back into a plain dtype when all labels share one."""
    if classes is not None and classes and all(c.dtype != object for c in classes):
        try:
            return out.astype(np.result_type(*[c.dtype for c in classes]))
        except (TypeError, ValueError):
            return out
    if out.size and all(isinstance(v, (int, np.integer)) for v in out):
        return out.astype(np.int64)
    return out
