"""Fixed-seed outputs of the fits issue 31's speed-ups touch, and the script that made them.

``data/speedup_reference.npz`` was written by ``python tests/speedup_reference.py
tests/data/speedup_reference.npz`` on the code before those speed-ups (commit 27f0d32):
block coordinate descent and MFISTA on per-task and shared designs, MT-DT trees on digits
and on continuous weighted data, MTBoost with both base learners. The tests
(``test_block_cd.py``, ``test_tree_speedups.py``, ``test_mtboost.py``) run the same fits on
today's code and compare with :func:`assert_same_as_reference`. Keys are
``"<fit>/<attribute>"``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

from explorer.data import load_digits_tasks
from explorer.data.synthetic import make_outlier_tasks
from explorer.models import (
    L21MTFL,
    ColumnGroupMTL,
    MTBoost,
    MTDecisionTree,
    MultiTaskLassoL1,
    RobustMTFL,
)

TREE_KEYS = ("feature", "threshold", "left", "right", "leaf_code", "value")
REFERENCE = Path(__file__).parent / "data" / "speedup_reference.npz"

#: The libraries the reference was stored with. Elsewhere (CI's lowest-versions step: NumPy
#: 1.24, SciPy 1.10) their own round-off differs, and boosting rounds amplify it, so the
#: floats are compared at ``OTHER_LIBRARIES_RTOL``; integers (features, children, leaves)
#: must still agree exactly.
STORED_WITH = {"numpy": "2.4.6", "scipy": "1.17.1"}
OTHER_LIBRARIES_RTOL, OTHER_LIBRARIES_ATOL = 1e-3, 1e-4


def _same_libraries() -> bool:
    import scipy

    return np.__version__ == STORED_WITH["numpy"] and scipy.__version__ == STORED_WITH["scipy"]


def assert_same_as_reference(outputs: dict[str, np.ndarray], *, rtol: float = 0.0,
                             atol: float = 0.0) -> None:
    """Every array of ``outputs`` equals the stored one: exactly by default, floats within
    ``rtol`` / ``atol`` when given (a BLAS product taken the other way round rounds
    differently; the iterations and the integers must still agree exactly)."""
    if not _same_libraries():
        rtol, atol = max(rtol, OTHER_LIBRARIES_RTOL), max(atol, OTHER_LIBRARIES_ATOL)
    with np.load(REFERENCE) as stored:
        assert set(outputs) <= set(stored.files)
        for key, value in outputs.items():
            expected = stored[key]
            assert value.shape == expected.shape, key
            if expected.dtype.kind == "f" and (rtol or atol):
                np.testing.assert_allclose(value, expected, rtol=rtol, atol=atol,
                                           err_msg=key)
            else:
                np.testing.assert_array_equal(value, expected, err_msg=key)


def _put(out, prefix, est, names):
    for name in names:
        out[f"{prefix}/{name}"] = np.asarray(getattr(est, name))


def rmtfl_outputs() -> dict[str, np.ndarray]:
    """The rMTFL family: BCD and MFISTA, stacked, shuffled, unequal and shared designs."""
    out: dict[str, np.ndarray] = {}
    warnings.simplefilter("ignore")
    small = make_outlier_tasks(n_tasks=10, n_outliers=3, n_features=50, n_shared_features=10,
                               n_samples_per_task=20, noise=1.0, random_state=0)
    wide = make_outlier_tasks(n_tasks=8, n_outliers=2, n_features=300, n_shared_features=30,
                              n_samples_per_task=30, noise=1.0, random_state=1)
    _put(out, "rmtfl_bcd_small", RobustMTFL(solver="bcd").fit(small.X, small.y, small.task),
         ["coef_", "P_", "Q_", "n_iter_", "objective_history_", "dual_gap_"])
    _put(out, "rmtfl_fista_small",
         RobustMTFL(solver="fista").fit(small.X, small.y, small.task),
         ["coef_", "n_iter_", "objective_history_"])
    for cls in (RobustMTFL, L21MTFL, MultiTaskLassoL1, ColumnGroupMTL):
        _put(out, f"{cls.__name__}_bcd_wide",
             cls(solver="bcd").fit(wide.X, wide.y, wide.task),
             ["coef_", "n_iter_", "objective_history_", "dual_gap_"])
    _put(out, "rmtfl_auto_wide", RobustMTFL().fit(wide.X, wide.y, wide.task),
         ["coef_", "n_iter_", "objective_history_", "solver_"])
    # tasks in shuffled order and of unequal sizes
    rng = np.random.default_rng(3)
    keep = rng.random(wide.y.size) < 0.8
    perm = rng.permutation(np.flatnonzero(keep))
    _put(out, "rmtfl_bcd_shuffled",
         RobustMTFL(solver="bcd").fit(wide.X[perm], wide.y[perm], wide.task[perm]),
         ["coef_", "intercept_", "n_iter_", "objective_history_"])
    # one design shared by every task: fit_shared (BCD and MFISTA), the stacked copies
    rng = np.random.default_rng(0)
    Xs = rng.normal(size=(80, 200)) + 0.3
    W = rng.normal(size=(200, 6)) * (rng.random(200) < 0.1)[:, None]
    Y = Xs @ W + rng.normal(size=(80, 6))
    _put(out, "l21_shared", L21MTFL().fit_shared(Xs, Y),
         ["coef_", "intercept_", "n_iter_", "objective_history_", "solver_"])
    _put(out, "l21_shared_fista", L21MTFL(solver="fista").fit_shared(Xs, Y),
         ["coef_", "intercept_", "n_iter_", "objective_history_"])
    _put(out, "rmtfl_shared_stacked",
         RobustMTFL().fit(np.vstack([Xs] * 6), Y.T.ravel(), np.repeat(np.arange(6), 80)),
         ["coef_", "intercept_", "n_iter_", "objective_history_"])
    return out


def tree_outputs() -> dict[str, np.ndarray]:
    """MT-DT: digits (histogram search) at depth 8 / unlimited / weighted with early stops,
    and continuous weighted data (sorted search) under the three criteria."""
    out: dict[str, np.ndarray] = {}
    digits = load_digits_tasks("one-vs-rest", random_state=0)
    for depth in (8, None):
        tree = MTDecisionTree(max_depth=depth).fit(digits.X, digits.y, digits.task)
        for key in TREE_KEYS:
            out[f"mtdt_digits_{depth}/{key}"] = tree.tree_[key]
    rng = np.random.default_rng(0)
    n, d, m = 3000, 12, 4
    X = rng.normal(size=(n, d))
    task = rng.integers(0, m, n)
    y = ((X[np.arange(n), task] + X[:, 5] * X[:, 6] + 0.5 * rng.normal(size=n)) > 0
         ).astype(int)
    weight = rng.random(n) + 0.5
    for criterion in ("ig_m", "ig_j", "ig_u"):
        tree = MTDecisionTree(criterion=criterion).fit(X, y, task, sample_weight=weight)
        for key in TREE_KEYS:
            out[f"mtdt_cont_{criterion}/{key}"] = tree.tree_[key]
    tree = MTDecisionTree(max_depth=6, min_samples_leaf=5, purity=0.9).fit(
        digits.X, digits.y, digits.task,
        sample_weight=np.random.default_rng(1).random(digits.y.size))
    for key in TREE_KEYS:
        out[f"mtdt_digits_weighted/{key}"] = tree.tree_[key]
    return out


def boost_outputs() -> dict[str, np.ndarray]:
    """MTBoost on 300-row digit pairs, LS-SVM and stump base learners, 10 x 10 steps."""
    out: dict[str, np.ndarray] = {}
    pairs = load_digits_tasks("pairs", n_tasks=5, max_per_task=300, random_state=0)
    train, test = pairs.split(0.2, random_state=0)
    for base in ("ls_svm", "stump"):
        est = MTBoost(base_learner=base, n_rounds=10, n_inner=10, random_state=0).fit(
            train.X, train.y, train.task)
        _put(out, f"mtboost_{base}", est, ["weights_", "omega_gram_", "step_sizes_",
                                           "betas_", "objective_history_"])
        out[f"mtboost_{base}/decision"] = est.decision_function(test.X, test.task)
    return out


if __name__ == "__main__":
    arrays = {**rmtfl_outputs(), **tree_outputs(), **boost_outputs()}
    np.savez_compressed(sys.argv[1], **arrays)
    print(f"{len(arrays)} arrays written to {sys.argv[1]}")
