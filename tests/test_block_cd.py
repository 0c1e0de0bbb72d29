"""Block coordinate descent (explorer.solvers.block_cd) against MFISTA, scikit-learn and cvxpy."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import MultiTaskLasso

from explorer.models import L21MTFL, ColumnGroupMTL, MultiTaskLassoL1, RobustMTFL, TwoStageRMTFL
from explorer.solvers.block_cd import block_cd_steps, handles, relative_duality_gap
from explorer.solvers.multitask_least_squares import StackedTasks
from explorer.solvers.penalties import (
    BlockSum,
    ColumnGroups,
    Lasso,
    Ridge,
    RowGroups,
    TraceNorm,
)


def _tasks(seed=0, m=4, d=12, sizes=(9, 14, 7, 20)):
    """Per-task designs of unequal sizes, a few shared features and one outlier task."""
    rng = np.random.default_rng(seed)
    task = np.concatenate([np.full(n, t) for t, n in enumerate(sizes[:m])])
    X = rng.normal(size=(task.size, d))
    W = rng.normal(size=(d, m)) * (rng.random(d) < 0.4)[:, None]
    W[:, -1] += 2 * rng.normal(size=d)
    y = np.einsum("ij,ji->i", X, W[:, task]) + 0.1 * rng.normal(size=task.size)
    return X, y, task


CASES = [
    (RobustMTFL, dict(lambda_rows=0.05, lambda_columns=0.25)),
    (L21MTFL, dict(lambda_rows=0.05)),
    (ColumnGroupMTL, dict(lambda_columns=0.1)),
    (MultiTaskLassoL1, dict(lambda_l1=0.02)),
]


@pytest.mark.parametrize("cls, params", CASES, ids=[c.__name__ for c, _ in CASES])
@pytest.mark.parametrize("normalize", [True, False])
def test_bcd_and_fista_reach_the_same_objective(cls, params, normalize):
    X, y, task = _tasks(1)
    common = dict(normalize=normalize, fit_intercept=normalize, max_iter=100000)
    bcd = cls(**params, solver="bcd", tol=1e-10, **common).fit(X, y, task)
    fista = cls(**params, solver="fista", tol=1e-13, **common).fit(X, y, task)
    assert bcd.solver_ == "bcd" and fista.solver_ == "fista"
    assert bcd.converged_ and bcd.dual_gap_ <= 1e-10
    f_bcd, f_fista = bcd.objective_history_[-1], fista.objective_history_[-1]
    assert abs(f_bcd - f_fista) <= 1e-6 * abs(f_fista)
    np.testing.assert_allclose(bcd.coef_, fista.coef_, atol=1e-4)
    np.testing.assert_allclose(bcd.intercept_, fista.intercept_, atol=1e-4)
    # each sweep lowers the objective (majorise-minimise steps, Anderson kept only if better)
    h = bcd.objective_history_
    assert np.all(np.diff(h) <= 1e-13 * abs(h[0]))


def test_bcd_equals_sklearn_multitask_lasso_on_a_shared_design():
    rng = np.random.default_rng(5)
    n, d, m = 60, 40, 5
    Xs = rng.normal(size=(n, d))
    Y = Xs @ (rng.normal(size=(d, m)) * (rng.random(d) < 0.2)[:, None]) + 0.3 * rng.normal(
        size=(n, m))
    alpha = 0.1
    ref = MultiTaskLasso(alpha=alpha, fit_intercept=True, tol=1e-12, max_iter=100000).fit(Xs, Y)
    # scikit-learn: 1/(2n) ||Y - XW||_F^2 + alpha ||W||_{2,1}; ours: sum_t 1/(m n) ||.||^2 +
    # lam ||W||_{1,2}, i.e. 2/m times scikit-learn's objective, so lam = 2 alpha / m.
    # Rows in a shuffled order: the shared design is found whatever the row order.
    X, y, task = np.vstack([Xs] * m), Y.T.ravel(), np.repeat(np.arange(m), n)
    order = rng.permutation(task.size)
    est = L21MTFL(lambda_rows=2 * alpha / m, normalize=False, tol=1e-10, solver="bcd").fit(
        X[order], y[order], task[order])
    np.testing.assert_allclose(est.coef_, ref.coef_.T, atol=1e-6)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, atol=1e-6)
    sk_objective = (np.sum((Y - Xs @ ref.coef_.T - ref.intercept_) ** 2) / (2 * n)
                    + alpha * np.linalg.norm(ref.coef_, axis=0).sum())
    assert est.objective_history_[-1] == pytest.approx(2 / m * sk_objective, rel=1e-8)
    # "auto" picks BCD on a shared design and reaches the same answer
    auto = L21MTFL(lambda_rows=2 * alpha / m, normalize=False, tol=1e-10).fit(X, y, task)
    assert auto.solver_ == "bcd"
    np.testing.assert_allclose(auto.coef_, ref.coef_.T, atol=1e-6)
    # the one-design entry point: scikit-learn's layout, no stacking, the same optimum
    shared = L21MTFL(lambda_rows=2 * alpha / m, normalize=False, tol=1e-10).fit_shared(Xs, Y)
    assert shared.solver_ == "bcd" and shared.n_tasks_ == m
    np.testing.assert_allclose(shared.coef_, ref.coef_.T, atol=1e-6)
    np.testing.assert_allclose(shared.intercept_, ref.intercept_, atol=1e-6)
    assert shared.objective_history_[-1] == pytest.approx(est.objective_history_[-1], rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_bcd_matches_cvxpy_on_per_task_designs(seed):
    import cvxpy as cp  # a test dependency: missing, the test must fail, not skip
    X, y, task = _tasks(seed)
    m, d = 4, X.shape[1]
    l1, l2 = 0.04, 0.3
    est = RobustMTFL(lambda_rows=l1, lambda_columns=l2, tol=1e-10, max_iter=100000,
                     normalize=False, fit_intercept=False, solver="bcd").fit(X, y, task)
    P, Q = cp.Variable((d, m)), cp.Variable((d, m))
    loss = sum(cp.sum_squares(X[task == t] @ (P[:, t] + Q[:, t]) - y[task == t])
               / (m * np.sum(task == t)) for t in range(m))
    pen = l1 * cp.sum(cp.norm(P, 2, axis=1)) + l2 * cp.sum(cp.norm(Q, 2, axis=0))
    opt = cp.Problem(cp.Minimize(loss + pen)).solve()
    ours = est.objective_history_[-1]
    assert ours <= opt * (1 + 1e-6)          # at least as good as cvxpy's answer
    assert ours - opt <= 1e-10 * ours + 1e-7 * abs(opt)
    np.testing.assert_allclose(est.coef_, P.value + Q.value, atol=1e-3)
    np.testing.assert_array_equal(est.outlier_tasks_, np.linalg.norm(Q.value, axis=0) > 1e-4)


def test_duality_gap_bounds_the_suboptimality():
    X, y, task = _tasks(2)
    exact = RobustMTFL(lambda_rows=0.05, lambda_columns=0.25, tol=1e-12, max_iter=100000,
                       solver="bcd").fit(X, y, task)
    optimum = exact.objective_history_[-1]
    loose = RobustMTFL(lambda_rows=0.05, lambda_columns=0.25, tol=1e-2, solver="bcd").fit(
        X, y, task)
    F = loose.objective_history_[-1]
    assert loose.converged_ and loose.dual_gap_ <= 1e-2
    assert F - optimum <= loose.dual_gap_ * F + 1e-14
    assert F - optimum >= 0
    # the same certificate for MFISTA's answer: an upper bound of its suboptimality too
    fista = RobustMTFL(lambda_rows=0.05, lambda_columns=0.25, tol=1e-3, solver="fista").fit(
        X, y, task)
    F = fista.objective_history_[-1]
    assert F - optimum <= fista.dual_gap_ * F + 1e-14
    data = StackedTasks(X, y, task, 4)
    x = np.hstack([exact.P_ * data.scale, exact.Q_ * data.scale])
    gap = relative_duality_gap(data, BlockSum(RowGroups(exact.lambda_rows_),
                                              ColumnGroups(exact.lambda_columns_)), x)
    assert 0 <= gap <= 1e-10


def test_fit_iter_one_snapshot_per_sweep_with_the_contract_keys():
    X, y, task = _tasks(3)
    est = RobustMTFL(lambda_rows=0.05, lambda_columns=0.25, solver="bcd")
    snaps = list(est.fit_iter(X, y, task))
    assert [s.step for s in snaps] == list(range(1, est.n_iter_ + 1))
    assert all(set(s.matrices) == {"P", "Q", "W"} for s in snaps)
    np.testing.assert_array_equal([s.objective for s in snaps], est.objective_history_)
    np.testing.assert_array_equal(snaps[-1].matrices["W"], est.coef_)
    assert {"outlier_scores", "outlier_tasks", "shared_features", "dual_gap",
            "relative_change", "lipschitz"} <= set(snaps[-1].info)
    gaps = [s.info["dual_gap"] for s in snaps]
    assert gaps[-1] == est.dual_gap_ <= est.tol
    # the snapshots hold their own iterates: earlier ones differ from the answer
    assert not np.array_equal(snaps[0].matrices["W"], est.coef_)
    # warm start from the previous answer: a nearby penalty needs fewer sweeps
    n_cold = est.n_iter_
    est.set_params(warm_start=True, lambda_columns=0.26).fit(X, y, task)
    assert est.n_iter_ < n_cold


def test_screening_keeps_zero_groups_zero_and_counts_only_the_working_set():
    X, y, task = _tasks(4, d=30)
    data = StackedTasks(X, y, task, 4)
    lam = 0.5 * RowGroups.lambda_max(data.grad_at_zero())
    steps = block_cd_steps(data, RowGroups(lam), np.zeros((30, 4)), tol=1e-10)
    for step in steps:
        if step.converged:
            break
    nonzero = int(np.any(step.x != 0, axis=1).sum())
    assert 0 < nonzero < 30
    assert step.working_set < 30            # zero rows outside the working set were skipped
    assert step.working_set >= nonzero


def test_two_stage_passes_the_solver_and_bad_solver_values_fail():
    X, y, task = _tasks(5)
    with pytest.raises(ValueError, match="solver"):
        L21MTFL(solver="cd").fit(X, y, task)
    with pytest.raises(ValueError, match="positive"):
        RobustMTFL(lambda_rows=0.0, lambda_columns=0.1, solver="bcd").fit(X, y, task)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zero = RobustMTFL(lambda_rows=0.0, lambda_columns=0.1).fit(X, y, task)
    assert zero.solver_ == "fista"          # "auto" falls back where BCD does not apply
    assert ColumnGroupMTL().fit(X, y, task).solver_ == "fista"
    two = TwoStageRMTFL(solver="bcd").fit(X, y, task)
    assert two.rmtfl_.solver_ == "bcd"
    assert two.refit_ is None or two.refit_.solver_ == "bcd"


def test_fits_give_the_answers_of_the_code_before_the_one_copy_layout():
    """Fixed seeds, the fits stored before the "features" layout (tests/speedup_reference.py):
    the normalised design is the same to the last bit, so are the iterations; only
    products with a shared design are taken the other way round (1e-15)."""
    from speedup_reference import assert_same_as_reference, rmtfl_outputs

    assert_same_as_reference(rmtfl_outputs(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("center, normalize", [(True, True), (False, True), (True, False)])
@pytest.mark.parametrize("layout_case", ["sorted", "shuffled", "shared", "shared shuffled"])
def test_features_layout_stores_the_rows_layout_transposed(layout_case, center, normalize):
    rng = np.random.default_rng(4)
    if layout_case.startswith("shared"):
        X0 = rng.normal(size=(15, 7)) + 2.0
        X, task = np.vstack([X0] * 3), np.repeat(np.arange(3), 15)
    else:
        X, _, task = _tasks(seed=4)
        X = X + 2.0
    y = rng.normal(size=task.size)
    if layout_case == "shuffled":
        order = rng.permutation(task.size)
        X, y, task = X[order], y[order], task[order]
    elif layout_case == "shared shuffled":   # tasks interleaved row by row, still shared
        order = np.arange(task.size).reshape(3, 15).T.ravel()
        X, y, task = X[order], y[order], task[order]
    m = int(task.max()) + 1
    rows = StackedTasks(X, y, task, m, center=center, normalize=normalize)
    feats = StackedTasks(X, y, task, m, center=center, normalize=normalize, layout="features")
    assert (rows.shared_design is None) == (feats.shared_design is None) == \
        (layout_case[:6] != "shared")
    np.testing.assert_array_equal(feats.X, rows.X)          # bit for bit
    for name in ("y", "x_mean", "y_mean", "scale", "offsets"):
        np.testing.assert_array_equal(getattr(feats, name), getattr(rows, name))
    def design(data):
        return data.X if data.shared_design is None else data.shared_design

    np.testing.assert_array_equal(design(feats), design(rows))
    storage = feats.X_by_feature
    assert storage.flags.c_contiguous and np.shares_memory(storage, design(feats))
    assert np.shares_memory(storage, feats.X_by_feature)    # no copy on the way to BCD
    assert not np.shares_memory(rows.X_by_feature, design(rows))  # "rows" copies


def test_fit_shared_holds_one_working_copy_of_the_design():
    """Peak memory of a shared-design fit above the data: one normalised copy of X plus
    small column blocks and (d, m)-sized work (tracemalloc sees NumPy's allocations; the
    compiled sweeps allocate only (d, m) and (n m,) arrays). 1.35 X here; before the
    "features" layout, 2.35 X."""
    import tracemalloc

    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 1500))
    Y = X[:, :30] @ rng.normal(size=(30, 8)) + rng.normal(size=(400, 8))
    L21MTFL(tol=1e-3).fit_shared(X[:20, :30], Y[:20])       # compile outside the measure
    tracemalloc.start()
    try:
        est = L21MTFL(tol=1e-6).fit_shared(X, Y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert est.solver_ == "bcd"
    assert peak < 1.5 * X.nbytes


def test_block_cd_handles_the_group_penalties_only():
    assert handles([RowGroups]) and handles([ColumnGroups]) and handles([Lasso])
    assert handles(BlockSum(RowGroups(1.0), ColumnGroups(1.0)))
    assert handles([Lasso, ColumnGroups])            # rows of one block, columns of another
    assert not handles([Ridge]) and not handles([TraceNorm, ColumnGroups])
    assert not handles([RowGroups, Lasso])            # two blocks visited by rows
    assert not handles([])
    data = StackedTasks(*_tasks(6), 4)
    with pytest.raises(ValueError, match="group by group"):
        next(block_cd_steps(data, BlockSum(Ridge(0.1)), np.zeros((12, 4)), tol=1e-8))
    with pytest.raises(ValueError, match="positive"):
        next(block_cd_steps(data, RowGroups(0.0), np.zeros((12, 4)), tol=1e-8))
    # any such combination, e.g. lasso + column groups, reaches MFISTA's optimum
    from explorer.solvers.stacked_fista import mfista_steps

    penalty = BlockSum(Lasso(0.01), ColumnGroups(0.2))
    for bcd in block_cd_steps(data, penalty, np.zeros((12, 8)), tol=1e-10):
        if bcd.converged:
            break
    for fista in mfista_steps(data, penalty, np.zeros((12, 8)),
                              lipschitz=data.lipschitz_lower_bound()):
        if fista.iteration >= 20000:
            break
    assert bcd.objective == pytest.approx(fista.objective, rel=1e-8)
    assert bcd.objective <= fista.objective * (1 + 1e-10)
