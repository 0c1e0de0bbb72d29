"""The MT-DT speed-ups of issue 15 change nothing in the trees: each fast path against the
reference it replaced (the full presort, the NumPy partition, the NumPy split search)."""

import numpy as np
import pytest

from explorer.models import MTDecisionTree
from explorer.solvers.tree_split import (
    feature_bins,
    find_best_split,
    histogram_scratch,
    partition_sorted_rows,
    split_sorted_rows,
)


def _node(X, subset):
    """A node's sorted lists: every feature's presorted rows restricted to ``subset``."""
    member = np.zeros(X.shape[0], dtype=bool)
    member[subset] = True
    return np.array([order[member[order]] for order in np.argsort(X.T, axis=1)])


def test_bins_without_presort_equal_the_presorted_ones():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 9, size=(300, 6)).astype(float)
    X[:5, 0] = -0.0                      # -0.0 and 0.0 are one value in both paths
    X[:, 3] = 2.5                        # a constant feature: one bin
    fast, reference = feature_bins(X), feature_bins(X, np.argsort(X.T, axis=1))
    np.testing.assert_array_equal(fast.rank, reference.rank)
    np.testing.assert_array_equal(fast.values, reference.values)
    np.testing.assert_array_equal(fast.n_bins, reference.n_bins)
    assert fast.rank.dtype == np.int32 and fast.rank.flags.c_contiguous
    assert feature_bins(rng.normal(size=(200, 3))) is None          # continuous
    assert feature_bins(X, max_bins=5) is None


def test_split_sorted_rows_is_the_partition_on_the_threshold():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    sorted_rows = _node(X, np.arange(0, 50, 2))
    scratch = np.zeros(50, dtype=bool)
    left, right = split_sorted_rows(sorted_rows, np.ascontiguousarray(X.T), 2, 0.1, scratch)
    expected = partition_sorted_rows(sorted_rows, X[:, 2] <= 0.1)
    np.testing.assert_array_equal(left, expected[0])
    np.testing.assert_array_equal(right, expected[1])
    assert not scratch.any()                                # handed back cleared


def test_histogram_scratch_is_left_zero_and_gives_the_numpy_search_split():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 6, size=(120, 5)).astype(float)
    columns = rng.integers(0, 4, size=120)
    offsets = np.array([0, 2, 4])
    weights = rng.random(120)
    bins = feature_bins(X)
    scratch = histogram_scratch(bins, 4)
    node = _node(X, rng.choice(120, size=70, replace=False))
    rows = node[:1]
    for _ in range(2):                   # the second search reuses the scratch
        fast = find_best_split(X, rows, columns, weights, offsets, bins=bins,
                               scratch=scratch)
        assert not scratch[0].any() and not scratch[1].any()
    reference = find_best_split(X, node, columns, weights, offsets, backend="numpy")
    for criterion in ("ig_m", "ig_j", "ig_u"):
        ours, ref = fast.best[criterion], reference.best[criterion]
        assert (ours.feature, ours.threshold) == (ref.feature, ref.threshold)
        np.testing.assert_allclose(ours.task_gains, ref.task_gains, rtol=1e-10, atol=1e-12)


def test_trees_equal_the_numpy_reference_search():
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(400, 6)), 1)           # <= 64 values: histogram path
    task = rng.integers(0, 3, 400)
    y = (X[np.arange(400), task] + 0.3 * rng.normal(size=400) > 0).astype(int)
    weight = rng.random(400)
    for data in (X, X + 1e-3 * rng.normal(size=X.shape)):  # and continuous: sorted path
        fast = MTDecisionTree(max_depth=6).fit(data, y, task, sample_weight=weight)
        slow = MTDecisionTree(max_depth=6)
        slow._split_backend = "numpy"
        slow.fit(data, y, task, sample_weight=weight)
        for key in ("feature", "left", "right", "leaf_code"):
            np.testing.assert_array_equal(fast.tree_[key], slow.tree_[key])
        np.testing.assert_allclose(fast.tree_["threshold"], slow.tree_["threshold"])
        assert len(fast.nodes_) == fast.n_nodes_


def test_trees_are_the_trees_of_the_code_before_the_speedups():
    """Fixed seeds, the trees stored before issue 31's kernels (tests/speedup_reference.py):
    every node's feature, threshold, children, leaves and weighted counts, on digits
    (histogram search, whole counts) and continuous weighted data (sorted search)."""
    from speedup_reference import assert_same_as_reference, tree_outputs

    assert_same_as_reference(tree_outputs())


def test_bins_of_fractions_large_and_negative_values_equal_the_presorted_ones():
    rng = np.random.default_rng(6)
    X = np.column_stack([rng.integers(0, 17, 500) / 16.0,               # digits' pixels
                         rng.integers(-30, 30, 500) * 1000.0,            # large, negative
                         rng.choice([-0.0, 0.0, 1e-300, 5e-324], 500),   # zeros, tiny
                         rng.integers(250, 262, 500).astype(float)])     # around 256
    fast, reference = feature_bins(X), feature_bins(X, np.argsort(X.T, axis=1))
    np.testing.assert_array_equal(fast.rank, reference.rank)
    np.testing.assert_array_equal(fast.values, reference.values)
    np.testing.assert_array_equal(fast.n_bins, reference.n_bins)
    assert feature_bins(np.asfortranarray(X)).n_bins.tolist() == fast.n_bins.tolist()
    wide = np.tile(np.arange(70.0), 3)[:, None]                # 70 values: too many
    assert feature_bins(wide) is None and feature_bins(wide, max_bins=70) is not None


def test_unit_weights_take_the_whole_count_path_to_the_numpy_search_split():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 5, size=(90, 4)).astype(float)
    columns = rng.integers(0, 6, size=90)
    offsets = np.array([0, 2, 4, 6])
    for weights in (np.ones(90), np.full(90, 2.0), rng.random(90)):
        bins = feature_bins(X)
        fast = find_best_split(X, np.arange(90)[None, :], columns, weights, offsets,
                               bins=bins)
        reference = find_best_split(X, np.argsort(X.T, axis=1), columns, weights, offsets,
                                    backend="numpy")
        for criterion in ("ig_m", "ig_j", "ig_u"):
            ours, ref = fast.best[criterion], reference.best[criterion]
            assert (ours.feature, ours.threshold) == (ref.feature, ref.threshold)
            np.testing.assert_allclose(ours.task_gains, ref.task_gains, rtol=1e-10,
                                       atol=1e-12)
            assert ours.ig_u == pytest.approx(ref.ig_u, abs=1e-12)
