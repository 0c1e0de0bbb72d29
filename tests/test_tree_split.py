"""Split search of MT-DT: Theorem 1 (corrected form), NumPy reference == numba kernel."""

import numpy as np
import pytest

from explorer.solvers.tree_split import (
    feature_bins,
    find_best_split,
    partition_sorted_rows,
    task_information_gains,
    warm_up,
)


def _random_split_counts(rng, sizes, n_splits=200):
    """Random weighted class counts of left/right children for tasks of given label counts."""
    k = sum(sizes)
    left = rng.random((n_splits, k)) * rng.integers(0, 2, (n_splits, k))
    right = rng.random((n_splits, k)) * 3.0
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return left, right, offsets


def test_joint_gain_decomposes_exactly_into_weighted_task_gains_plus_task_information():
    rng = np.random.default_rng(0)
    left, right, offsets = _random_split_counts(rng, [2, 3, 4])
    gains = task_information_gains(left, right, offsets)
    weighted = (gains["p"] * gains["task"]).sum(-1)
    np.testing.assert_allclose(gains["ig_j"], weighted + gains["task_information"],
                               rtol=0, atol=1e-10)
    assert np.all(gains["task_information"] >= -1e-12)


def test_theorem_1_when_branches_keep_the_task_proportions():
    # Every task sees the same instances with the same weights (Sec. 2.1: an instance may
    # appear in several tasks), so each branch keeps p_j and Eq. (4) holds with equality.
    rng = np.random.default_rng(1)
    for _ in range(200):
        n, m = 40, 3
        goes_left = rng.random(n) < rng.random()
        if goes_left.all() or not goes_left.any():
            continue
        weight = rng.random(n)
        left, right = [], []
        for k in (2, 3, 5):
            labels = rng.integers(0, k, n)
            left.append(np.bincount(labels[goes_left], weight[goes_left], minlength=k))
            right.append(np.bincount(labels[~goes_left], weight[~goes_left], minlength=k))
        offsets = np.array([0, 2, 5, 10])
        gains = task_information_gains(np.concatenate(left), np.concatenate(right), offsets)
        np.testing.assert_allclose(gains["p"], np.full(m, 1 / m), atol=1e-12)
        assert abs(gains["ig_j"] - (gains["p"] * gains["task"]).sum()) < 1e-10
        assert abs(gains["task_information"]) < 1e-10
        assert gains["ig_m"] >= gains["ig_j"] - 1e-12
        assert gains["ig_u"] >= gains["ig_j"] - 1e-12


def test_ig_m_can_fall_below_ig_j_when_a_split_separates_tasks():
    # The counter-example to the paper's general claim: each task pure and on one side.
    gains = task_information_gains(np.array([3.0, 0.0, 0.0, 0.0]),
                                   np.array([0.0, 0.0, 0.0, 3.0]), np.array([0, 2, 4]))
    assert gains["ig_m"] == 0.0
    assert gains["ig_j"] == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(6))
def test_numba_kernel_matches_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(150, 5)), 1)
    columns = rng.integers(0, 7, 150)
    weights = rng.random(150)
    offsets = np.array([0, 2, 5, 7])
    sorted_rows = np.argsort(X.T, axis=1, kind="stable")
    fast = find_best_split(X, sorted_rows, columns, weights, offsets, min_samples_leaf=2)
    slow = find_best_split(X, sorted_rows, columns, weights, offsets, min_samples_leaf=2,
                           backend="numpy")
    for criterion in ("ig_m", "ig_j", "ig_u"):
        a, b = fast.best[criterion], slow.best[criterion]
        assert (a.feature, a.threshold) == (b.feature, b.threshold)
        np.testing.assert_allclose(a.task_gains, b.task_gains, atol=1e-12)
        assert a.ig_j == pytest.approx(b.ig_j, abs=1e-12)
    # The criterion's own best is the best of its kind.
    assert fast.best["ig_m"].ig_m >= fast.best["ig_j"].ig_m - 1e-12
    assert fast.best["ig_j"].ig_j >= fast.best["ig_m"].ig_j - 1e-12


@pytest.mark.parametrize("seed, unit_weights, min_leaf",
                         [(0, True, 1), (1, False, 1), (2, True, 3), (3, False, 4)])
def test_numba_kernel_matches_numpy_reference_on_many_tasks(seed, unit_weights, min_leaf):
    """Forty tasks, continuous features: the kernel's running IG_U and its IG_M that follows
    the largest task gain (and its whole-count x log x table under unit weights) give the
    splits, gains and scores of the NumPy search, which sums and scans every task at every
    threshold."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 4, 40)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = 600
    task = rng.integers(0, 40, n)
    X = rng.normal(size=(n, 6))
    # labels that follow a feature in a third of the tasks, so gains differ by task
    signal = X[np.arange(n), task % 6] > 0
    label = np.where(task % 3 == 0, signal.astype(int), rng.integers(0, 2, n))
    columns = offsets[task] + np.minimum(label, sizes[task] - 1)
    weights = np.ones(n) if unit_weights else rng.random(n) + 0.5
    sorted_rows = np.argsort(X.T, axis=1, kind="stable")
    fast = find_best_split(X, sorted_rows, columns, weights, offsets,
                           min_samples_leaf=min_leaf)
    slow = find_best_split(X, sorted_rows, columns, weights, offsets,
                           min_samples_leaf=min_leaf, backend="numpy")
    for criterion in ("ig_m", "ig_j", "ig_u"):
        a, b = fast.best[criterion], slow.best[criterion]
        assert (a.feature, a.threshold) == (b.feature, b.threshold), criterion
        np.testing.assert_allclose(a.task_gains, b.task_gains, atol=1e-12)
        assert a.score(criterion) == pytest.approx(b.score(criterion), abs=1e-12)


def test_no_split_when_features_are_constant():
    X = np.ones((10, 2))
    sorted_rows = np.argsort(X.T, axis=1)
    for backend in ("numba", "numpy"):
        assert find_best_split(X, sorted_rows, np.arange(10) % 2, np.ones(10),
                               np.array([0, 2]), backend=backend) is None


def test_partition_keeps_every_feature_sorted():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    sorted_rows = np.argsort(X.T, axis=1)
    goes_left = X[:, 1] < 0.2
    left, right = partition_sorted_rows(sorted_rows, goes_left)
    for f in range(3):
        assert np.all(np.diff(X[left[f], f]) >= 0) and np.all(np.diff(X[right[f], f]) >= 0)
        assert set(left[f]) == set(np.flatnonzero(goes_left))
    warm_up()


def test_bad_backend_is_named():
    with pytest.raises(ValueError, match="backend"):
        find_best_split(np.ones((2, 1)), np.array([[0, 1]]), np.array([0, 1]), np.ones(2),
                        np.array([0, 2]), backend="gpu")


@pytest.mark.parametrize("seed", range(6))
def test_histogram_search_on_discrete_features_matches_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 9, size=(300, 6)).astype(float)
    columns = rng.integers(0, 7, 300)
    weights = rng.random(300)  # continuous weights: no exact gain ties
    offsets = np.array([0, 2, 5, 7])
    presorted = np.argsort(X.T, axis=1)
    bins = feature_bins(X, presorted)
    assert bins is not None and bins.n_bins.max() == 9
    node = rng.random(300) < 0.6  # a node holding a subset of rows (some values absent)
    sorted_rows = np.array([row[node[row]] for row in presorted])
    fast = find_best_split(X, sorted_rows[:1], columns, weights, offsets, min_samples_leaf=3,
                           bins=bins)
    slow = find_best_split(X, sorted_rows, columns, weights, offsets, min_samples_leaf=3,
                           backend="numpy")
    for criterion in ("ig_m", "ig_j", "ig_u"):
        a, b = fast.best[criterion], slow.best[criterion]
        assert (a.feature, a.threshold) == (b.feature, b.threshold)
        np.testing.assert_allclose(a.task_gains, b.task_gains, atol=1e-12)
    assert feature_bins(rng.normal(size=(100, 2)), np.argsort(rng.normal(size=(2, 100)))) is None
