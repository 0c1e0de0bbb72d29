"""rMTFL (Gong, Ye & Zhang 2012) and the baselines sharing its solver."""

import numpy as np
import pytest
from sklearn.linear_model import MultiTaskLasso

from explorer.compare.metrics import detection_scores, nmse
from explorer.data.synthetic import make_outlier_tasks
from explorer.models import (
    L21MTFL,
    RMTL,
    ColumnGroupMTL,
    MultiTaskLassoL1,
    MultiTaskRidge,
    RobustMTFL,
    TraceNormMTL,
    TwoStageRMTFL,
)
from explorer.solvers.proximal_operators import column_norms, row_norms


def _small(seed=0, m=4, d=6, sizes=(8, 11, 9, 12)):
    rng = np.random.default_rng(seed)
    task = np.concatenate([np.full(n, t) for t, n in enumerate(sizes[:m])])
    X = rng.normal(size=(task.size, d))
    W = rng.normal(size=(d, m)) * (rng.random(d) < 0.5)[:, None]
    W[:, -1] += 3 * rng.normal(size=d)
    y = np.einsum("ij,ji->i", X, W[:, task]) + 0.1 * rng.normal(size=task.size)
    return X, y, task


def _f1(estimated, truth):
    return detection_scores(estimated, truth)["f1"]


def test_objective_monotone_and_kkt():
    X, y, task = _small()
    est = RobustMTFL(lambda_rows=0.05, lambda_columns=0.2, tol=1e-12, max_iter=20000).fit(
        X, y, task)
    h = est.objective_history_
    assert np.all(np.diff(h) <= 1e-12 * abs(h[0]))
    m = est.n_tasks_
    # the KKT conditions on the normalised scale the solver works on
    from explorer.solvers.multitask_least_squares import StackedTasks
    data = StackedTasks(X, y, task, m)
    P, Q = est.P_ * data.scale, est.Q_ * data.scale
    _, G = data.value_grad(P + Q)
    l1, l2 = est.lambda_rows_, est.lambda_columns_
    for j in range(P.shape[0]):
        p = P[j]
        if np.linalg.norm(p) > 0:
            assert np.allclose(G[j], -l1 * p / np.linalg.norm(p), atol=1e-4 * l1)
        else:
            assert np.linalg.norm(G[j]) <= l1 * (1 + 1e-4)
    for i in range(m):
        q = Q[:, i]
        if np.linalg.norm(q) > 0:
            assert np.allclose(G[:, i], -l2 * q / np.linalg.norm(q), atol=1e-4 * l2)
        else:
            assert np.linalg.norm(G[:, i]) <= l2 * (1 + 1e-4)


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_cvxpy(seed):
    import cvxpy as cp  # a test dependency: missing, the test must fail, not skip
    X, y, task = _small(seed)
    m, d = 4, X.shape[1]
    l1, l2 = 0.05, 0.3
    est = RobustMTFL(lambda_rows=l1, lambda_columns=l2, tol=1e-12, max_iter=50000, normalize=False,
                     fit_intercept=False).fit(X, y, task)
    P, Q = cp.Variable((d, m)), cp.Variable((d, m))
    loss = sum(cp.sum_squares(X[task == t] @ (P[:, t] + Q[:, t]) - y[task == t])
               / (m * np.sum(task == t)) for t in range(m))
    pen = l1 * cp.sum(cp.norm(P, 2, axis=1)) + l2 * cp.sum(cp.norm(Q, 2, axis=0))
    opt = cp.Problem(cp.Minimize(loss + pen)).solve()
    ours = est.objective_history_[-1]
    assert abs(ours - opt) / abs(opt) <= 1e-5
    assert np.allclose(est.coef_, P.value + Q.value, atol=1e-3)


def test_l21_limit_matches_sklearn_multitask_lasso():
    rng = np.random.default_rng(3)
    n, d, m = 40, 8, 3
    Xs = rng.normal(size=(n, d))
    Y = Xs @ (rng.normal(size=(d, m)) * (rng.random(d) < 0.5)[:, None]) + 0.1 * rng.normal(
        size=(n, m))
    alpha = 0.05
    ref = MultiTaskLasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100000).fit(Xs, Y)
    X = np.vstack([Xs] * m)
    y = Y.T.ravel()
    task = np.repeat(np.arange(m), n)
    # sklearn: 1/(2n)||Y - XW||^2 + alpha ||W||_21; ours: 1/(m n)||.||^2 + lam ||W||_{1,2}
    lam = 2 * alpha / m
    common = dict(tol=1e-13, max_iter=50000, normalize=False, fit_intercept=False)
    ours = L21MTFL(lambda_rows=lam, **common).fit(X, y, task)
    assert np.allclose(ours.coef_, ref.coef_.T, atol=1e-5)
    robust = RobustMTFL(lambda_rows=lam, lambda_columns=1e6, **common).fit(X, y, task)
    assert np.all(robust.Q_ == 0)
    assert np.allclose(robust.coef_, ref.coef_.T, atol=1e-5)


def test_lambda_max_gives_zeros():
    X, y, task = _small(2)
    lm = RobustMTFL().lambda_max(X, y, task)
    probe = RobustMTFL()
    probe.lambda_max(X, y, task)
    assert not hasattr(probe, "n_tasks_")  # a query, not a fit
    est = RobustMTFL(lambda_rows=lm["lambda_rows"] * 1.0001,
                     lambda_columns=lm["lambda_columns"] * 1.0001).fit(X, y, task)
    assert est.lambda_max_ == lm
    assert np.all(est.P_ == 0) and np.all(est.Q_ == 0)
    assert est.shared_features_.shape == (6,) and not est.shared_features_.any()
    assert est.outlier_tasks_.shape == (4,) and not est.outlier_tasks_.any()
    est = RobustMTFL(lambda_rows=lm["lambda_rows"] * 0.9,
                     lambda_columns=lm["lambda_columns"] * 0.9).fit(X, y, task)
    assert np.any(est.P_ != 0) or np.any(est.Q_ != 0)
    for cls in (L21MTFL, ColumnGroupMTL, MultiTaskLassoL1, TraceNormMTL, RMTL):
        limits = cls().lambda_max(X, y, task)
        assert set(limits) == set(cls._penalties)
        zero = cls(**{k: v * 1.0001 for k, v in limits.items()}).fit(X, y, task)
        assert zero.lambda_max_ == limits
        assert np.all(zero.coef_ == 0), cls.__name__


def test_auto_penalties_do_what_the_docstrings_say():
    X, y, task = _small(4)
    d, m = X.shape[1], 4
    est = RobustMTFL().fit(X, y, task)
    assert est.lambda_rows_ == pytest.approx(0.2 * est.lambda_max_["lambda_rows"])
    assert est.lambda_columns_ == pytest.approx(1.15 * np.sqrt(d / m) * est.lambda_rows_)
    rmtl = RMTL().fit(X, y, task)
    assert rmtl.lambda_trace_ == pytest.approx(0.2 * rmtl.lambda_max_["lambda_trace"])
    assert rmtl.lambda_columns_ == pytest.approx(0.1 * rmtl.lambda_max_["lambda_columns"])
    for cls in (L21MTFL, ColumnGroupMTL, MultiTaskLassoL1, TraceNormMTL, MultiTaskRidge):
        one = cls().fit(X, y, task)
        name = cls._penalties[0]
        assert getattr(one, name + "_") == pytest.approx(0.1 * one.lambda_max_[name])


def test_bad_parameters():
    X, y, task = _small()
    with pytest.raises(ValueError, match="lambda_rows"):
        RobustMTFL(lambda_rows=-1.0).fit(X, y, task)
    with pytest.raises(ValueError, match="lambda_columns must be a finite number >= 0 or 'auto'"):
        RobustMTFL(lambda_columns="big").fit(X, y, task)


def test_default_rule_detects_outliers_over_10_seeds():
    f1s, shared = [], []
    for seed in range(10):
        ds = make_outlier_tasks(n_tasks=30, n_outliers=10, n_features=200, n_shared_features=40,
                                n_samples_per_task=20, noise=1.0, random_state=seed)
        est = RobustMTFL().fit(ds.X, ds.y, ds.task)
        f1s.append(_f1(est.outlier_tasks_, ds.truth["outlier_tasks"]))
        shared.append(_f1(est.shared_features_, ds.truth["shared_features"]))
    print(f"outlier F1 mean {np.mean(f1s):.3f}; shared-feature F1 mean {np.mean(shared):.3f}")
    assert np.mean(f1s) >= 0.9


def test_n200_nmse_beats_ridge_lasso_l21():
    ds = make_outlier_tasks(n_tasks=30, n_outliers=10, n_features=200, n_shared_features=40,
                            n_samples_per_task=400, noise=1.0, random_state=0)
    train = np.concatenate([np.flatnonzero(ds.task == t)[:200] for t in range(30)])
    test = np.setdiff1d(np.arange(ds.task.size), train)
    Xtr, ytr, ttr = ds.X[train], ds.y[train], ds.task[train]

    def score(est):
        est.fit(Xtr, ytr, ttr)
        return nmse(ds.y[test], est.predict(ds.X[test], ds.task[test]), ds.task[test])

    # every model gets its best lambda from the same small grid of fractions of lambda_max
    # (the paper tunes by cross-validation); rMTFL keeps its default ratio lambda2/lambda1
    fractions = (0.003, 0.03, 0.3)
    lam1_max = RobustMTFL().lambda_max(Xtr, ytr, ttr)["lambda_rows"]
    ours = min(score(RobustMTFL(lambda_rows=f * lam1_max)) for f in fractions)
    for cls in (MultiTaskRidge, MultiTaskLassoL1, L21MTFL):
        (name, limit), = cls().lambda_max(Xtr, ytr, ttr).items()
        best = min(score(cls(**{name: f * limit})) for f in fractions)
        print(cls.__name__, best, "rMTFL", ours)
        assert ours < best, cls.__name__


def test_baselines_fit_and_two_stage():
    ds = make_outlier_tasks(n_tasks=12, n_outliers=3, n_features=30, n_shared_features=6,
                            n_samples_per_task=40, noise=1.0, random_state=1)
    for est in (RMTL(), TraceNormMTL(), ColumnGroupMTL(), MultiTaskRidge()):
        est.fit(ds.X, ds.y, ds.task)
        assert est.coef_.shape == (30, 12)
        h = est.objective_history_
        assert np.all(np.diff(h) <= 1e-12 * abs(h[0]))
    two = TwoStageRMTFL()
    snaps = list(two.fit_iter(ds.X, ds.y, ds.task))
    np.testing.assert_array_equal(two.outlier_tasks_, ds.truth["outlier_tasks"])
    keep = np.flatnonzero(~two.outlier_tasks_)
    assert np.allclose(two.coef_[:, keep], two.refit_.coef_)
    outliers = two.outlier_tasks_
    np.testing.assert_array_equal(two.coef_[:, outliers], two.rmtfl_.coef_[:, outliers])
    # one step counter across both stages, W always (d, m), one objective per step
    assert [s.step for s in snaps] == list(range(1, two.n_iter_ + 1))
    assert two.n_iter_ == two.rmtfl_.n_iter_ + two.refit_.n_iter_
    assert {s.matrices["W"].shape for s in snaps} == {(30, 12)}
    assert [s.info["stage"] for s in snaps].count(2) == two.refit_.n_iter_
    np.testing.assert_array_equal([s.objective for s in snaps], two.objective_history_)
    np.testing.assert_array_equal(snaps[-1].matrices["W"], two.coef_)
    assert set(two.task_relationships()) == {"P", "Q", "W", "outlier_scores"}


def test_fit_iter_snapshots_and_warm_start():
    X, y, task = _small()
    est = RobustMTFL(lambda_rows=0.05, lambda_columns=0.2, warm_start=True)
    snaps = list(est.fit_iter(X, y, task))
    assert set(snaps[-1].matrices) == {"P", "Q", "W"}
    info = snaps[-1].info
    np.testing.assert_array_equal(info["outlier_scores"], est.outlier_scores_)
    np.testing.assert_array_equal(info["outlier_tasks"], est.outlier_tasks_)
    np.testing.assert_array_equal(info["shared_features"], est.shared_features_)
    assert info["outlier_tasks"].dtype == bool and info["shared_features"].shape == (6,)
    n_cold = est.n_iter_
    est.set_params(lambda_columns=0.21).fit(X, y, task)
    assert est.n_iter_ < n_cold
    np.testing.assert_array_equal(row_norms(est.P_) > 0, est.shared_features_)
    np.testing.assert_allclose(column_norms(est.Q_), est.outlier_scores_)  # user's scale


def test_task_relationships_are_the_contract_matrices():
    X, y, task = _small()
    est = RobustMTFL(lambda_rows=0.05, lambda_columns=0.2).fit(X, y, task)
    rel = est.task_relationships()
    assert set(rel) == {"P", "Q", "W", "outlier_scores"}
    assert rel["W"].shape == (X.shape[1], 4) and rel["outlier_scores"].shape == (4,)
    np.testing.assert_allclose(rel["P"] + rel["Q"], rel["W"], atol=1e-12)
    # a task is an outlier exactly when its column of Q is nonzero
    np.testing.assert_array_equal(np.linalg.norm(rel["Q"], axis=0) > 0, est.outlier_tasks_)


@pytest.mark.parametrize("layout", ["shared design", "small stacked", "large stacked"])
def test_stacked_products_agree_with_the_per_task_definition(layout):
    # the three code paths of StackedTasks (one GEMM, one einsum, per-task loops) against
    # the plain definition f(W) = sum_t 1/(m n_t) ||X_t w_t - y_t||^2
    from explorer.solvers import multitask_least_squares as mls

    rng = np.random.default_rng(5)
    m, d = 4, 7
    sizes = [9, 9, 9, 9] if layout == "shared design" else [6, 11, 8, 9]
    design = rng.normal(size=(9, d))
    Xs = [design if layout == "shared design" else rng.normal(size=(n, d)) for n in sizes]
    X = np.vstack(Xs)
    task = np.repeat(np.arange(m), sizes)
    y = rng.normal(size=task.size)
    data = mls.StackedTasks(X, y, task, m, normalize=False, center=False)
    if layout == "large stacked":
        data._vectorized = False
    assert (data._shared_design is not None) == (layout == "shared design")
    W = rng.normal(size=(d, m))
    value, grad = data.value_grad(W)
    expected, expected_grad = 0.0, np.zeros((d, m))
    for t in range(m):
        r = Xs[t] @ W[:, t] - y[task == t]
        expected += r @ r / (m * sizes[t])
        expected_grad[:, t] = 2 * Xs[t].T @ r / (m * sizes[t])
    np.testing.assert_allclose([value, data.value(W)], expected, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)
    r_expected = np.concatenate([Xs[t] @ W[:, t] - y[task == t] for t in range(m)])
    np.testing.assert_allclose(data.residuals(W), r_expected, rtol=1e-12, atol=1e-12)


def test_detection_scores_take_the_masks_estimates_and_truth_share():
    scores = detection_scores(np.array([True, False, True]), np.array([True, True, False]))
    assert scores["true_positives"] == 1 and scores["f1"] == pytest.approx(0.5)
    assert detection_scores(np.zeros(3, bool), np.zeros(3, bool))["f1"] == 1.0
    assert detection_scores(np.zeros(3, bool), np.array([True, False, False]))["f1"] == 0.0
    with pytest.raises(ValueError, match="estimated must be a 1-D boolean mask"):
        detection_scores(np.array([0, 2]), np.zeros(3, bool))
    with pytest.raises(ValueError, match="same shape"):
        detection_scores(np.zeros(2, bool), np.zeros(3, bool))
