"""The estimator contract on the foundation's two estimators, checked independently."""

import re
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge

from explorer.models import (
    ConvergenceMonitor,
    FitDivergedError,
    PerTaskEstimator,
    RegularizedMTL,
    Snapshot,
)


def linear_tasks(kind="classification", m=3, n=40, d=3, seed=0):
    """Task 0 base, task 1 related, task 2 negated."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=d)
    W = np.stack([base, base + 0.1 * rng.normal(size=d), -base], axis=1)[:, :m]
    task = np.repeat(np.arange(m), n)
    X = rng.normal(size=(m * n, d))
    f = np.einsum("ij,ji->i", X, W[:, task]) + 0.3 * rng.normal(size=m * n)
    y = (f > 0).astype(int) if kind == "classification" else f
    return X, y, task


def exhaust(estimator, *args):
    snapshots = list(estimator.fit_iter(*args))
    return estimator, snapshots


# ---------------------------------------------------------------- contract, both estimators
ESTIMATORS = [
    pytest.param(lambda: RegularizedMTL(loss="logistic", lambda_deviation=0.05, tol=1e-9,
                                        max_iter=3000), "classification", id="rmtl-logistic"),
    pytest.param(lambda: RegularizedMTL(loss="squared", lambda_deviation=0.05, tol=1e-9,
                                        max_iter=3000), "regression", id="rmtl-squared"),
    pytest.param(lambda: PerTaskEstimator(estimator=LogisticRegression()), "classification",
                 id="pertask-logistic"),
    pytest.param(lambda: PerTaskEstimator(estimator=Ridge(alpha=0.5)), "regression",
                 id="pertask-ridge"),
]


@pytest.mark.parametrize("make, kind", ESTIMATORS)
def test_clone_and_params_round_trip(make, kind):
    est = make()
    twin = clone(est)
    assert repr(twin.get_params()) == repr(est.get_params())
    assert twin is not est
    if isinstance(est, RegularizedMTL):
        with pytest.raises(TypeError):  # keyword-only constructor
            type(est)(0.1)


@pytest.mark.parametrize("make, kind", ESTIMATORS)
def test_fit_equals_exhausted_fit_iter(make, kind):
    X, y, task = linear_tasks(kind)
    fitted = make().fit(X, y, task)
    stepped, snapshots = exhaust(make(), X, y, task)
    assert snapshots and all(isinstance(s, Snapshot) for s in snapshots)
    assert [s.step for s in snapshots] == list(range(1, len(snapshots) + 1))
    np.testing.assert_array_equal(fitted.predict(X, task), stepped.predict(X, task))
    if hasattr(fitted, "coef_"):
        np.testing.assert_array_equal(fitted.coef_, stepped.coef_)
        assert fitted.n_iter_ == stepped.n_iter_ == len(snapshots)


@pytest.mark.parametrize("make, kind", ESTIMATORS)
def test_deterministic_and_scores(make, kind):
    X, y, task = linear_tasks(kind)
    a = make().fit(X, y, task).predict(X, task)
    b = make().fit(X, y, task).predict(X, task)
    np.testing.assert_array_equal(a, b)
    est = make().fit(X, y, task)
    per_task = est.score_per_task(X, y, task)
    assert per_task.shape == (3,)
    assert est.score(X, y, task) == pytest.approx(per_task.mean())


@pytest.mark.parametrize("make, kind", ESTIMATORS)
def test_prediction_input_errors(make, kind):
    X, y, task = linear_tasks(kind)
    est = make().fit(X, y, task)
    with pytest.raises(ValueError, match="X has 2 features, but the model expects 3"):
        est.predict(X[:, :2], task)
    with pytest.raises(ValueError, match=r"task ids must be in 0..2 .* got 5"):
        est.predict(X[:2], [0, 5])
    with pytest.raises(ValueError, match="task has 1 entries but X has 2 rows"):
        est.predict(X[:2], [0])


def test_fit_input_errors_name_the_argument():
    X, y, task = linear_tasks()
    est = RegularizedMTL()
    with pytest.raises(ValueError, match="lambda_deviation must be in the range"):
        RegularizedMTL(lambda_deviation=-1.0).fit(X, y, task)
    with pytest.raises(ValueError, match="loss must be 'logistic' or 'squared'; got 'hinge'"):
        RegularizedMTL(loss="hinge").fit(X, y, task)
    y_one_class = y.copy()
    y_one_class[task == 1] = 0
    with pytest.raises(ValueError, match=r"task 1 has 1 class\(es\)"):
        est.fit(X, y_one_class, task)
    three = y.copy()
    three[task == 2][:3] = 7
    three[np.flatnonzero(task == 2)[:3]] = 7
    with pytest.raises(ValueError, match="needs 2 classes in every task; task 2 has 3"):
        est.fit(X, three, task)
    with pytest.raises(ValueError, match="X must be finite"):
        Xn = X.copy()
        Xn[4, 1] = np.nan
        est.fit(Xn, y, task)
    with pytest.raises(ValueError, match="estimator must be a scikit-learn estimator"):
        PerTaskEstimator(estimator="ridge").fit(X, y, task)


# ---------------------------------------------------------------- RegularizedMTL, independently
def closed_form_squared(X, y, task, lam1, lam2):
    """Solve the squared-loss problem exactly: it is a ridge problem in (w0, V, b)."""
    m, d = task.max() + 1, X.shape[1]
    n_params = d + m * d + m
    rows = []
    for i in range(X.shape[0]):
        t = task[i]
        z = np.zeros(n_params)
        z[:d] = X[i]
        z[d + t * d: d + (t + 1) * d] = X[i]
        z[d + m * d + t] = 1.0
        rows.append(z)
    Z = np.array(rows)
    weight = 1.0 / (m * np.bincount(task)[task])
    penalty = np.zeros(n_params)
    penalty[:d] = lam2
    penalty[d: d + m * d] = lam1 / m
    A = Z.T @ (weight[:, None] * Z) + np.diag(penalty)
    theta = np.linalg.solve(A, Z.T @ (weight * y))
    w0 = theta[:d]
    V = theta[d: d + m * d].reshape(m, d).T
    return w0[:, None] + V, theta[d + m * d:]


def test_squared_loss_matches_closed_form():
    X, y, task = linear_tasks("regression", n=30)
    W, b = closed_form_squared(X, y, task, 0.2, 0.05)
    est = RegularizedMTL(loss="squared", lambda_deviation=0.2, lambda_common=0.05, tol=1e-13,
                         max_iter=20000).fit(X, y, task)
    np.testing.assert_allclose(est.coef_, W, atol=1e-5)
    np.testing.assert_allclose(est.intercept_, b, atol=1e-5)


def test_logistic_loss_matches_cvxpy():
    X, y, task = linear_tasks("classification", n=30)
    m, d = 3, X.shape[1]
    s = np.where(y == 1, 1.0, -1.0)
    w0, V, b = cp.Variable(d), cp.Variable((d, m)), cp.Variable(m)
    loss = 0
    for t in range(m):
        r = task == t
        loss += cp.sum(cp.logistic(-cp.multiply(s[r], X[r] @ (w0 + V[:, t]) + b[t]))) / (
            m * r.sum())
    problem = cp.Problem(cp.Minimize(loss + 0.1 / m * cp.sum_squares(V)
                                     + 0.05 * cp.sum_squares(w0)))
    problem.solve()
    est = RegularizedMTL(lambda_deviation=0.1, lambda_common=0.05, tol=1e-12, max_iter=20000).fit(X, y, task)
    assert abs(est.objective_history_[-1] - problem.value) <= 1e-6 * abs(problem.value)
    np.testing.assert_allclose(est.coef_, (w0.value[:, None] + V.value), atol=2e-3)


def test_one_task_without_coupling_is_unregularised_sklearn():
    """lambda1 = 0 with one task: v_t is free, so w = w0 + v is plain least squares /
    unpenalised logistic regression."""
    X, y, task = linear_tasks("regression", m=1, n=50)
    est = RegularizedMTL(loss="squared", lambda_deviation=0.0, lambda_common=1.0, tol=1e-14,
                         max_iter=50000).fit(X, y, task)
    ref = LinearRegression().fit(X, y)
    np.testing.assert_allclose(est.coef_[:, 0], ref.coef_, atol=1e-5)
    np.testing.assert_allclose(est.intercept_[0], ref.intercept_, atol=1e-5)

    Xc, yc, taskc = linear_tasks("classification", m=1, n=60, seed=3)
    yc[:5] = 1 - yc[:5]  # make it non-separable so the optimum is finite
    est = RegularizedMTL(lambda_deviation=0.0, lambda_common=1.0, tol=1e-14, max_iter=50000).fit(Xc, yc, taskc)
    ref = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10000).fit(Xc, yc)
    np.testing.assert_allclose(est.coef_[:, 0], ref.coef_[0], atol=1e-3)


def test_large_coupling_pools_tasks_and_hurts_the_negated_task():
    X, y, task = linear_tasks("classification", n=80)
    pooled = RegularizedMTL(lambda_deviation=1e3, lambda_common=0.01, tol=1e-9, max_iter=5000).fit(X, y, task)
    sim = pooled.task_relationships()["similarity"]
    assert sim.shape == (3, 3)
    np.testing.assert_allclose(sim, 1.0, atol=1e-3)  # every task on w_0
    separate = PerTaskEstimator(estimator=LogisticRegression()).fit(X, y, task)
    assert pooled.score_per_task(X, y, task)[2] < separate.score_per_task(X, y, task)[2] - 0.3
    loose = RegularizedMTL(lambda_deviation=0.01, lambda_common=0.01, tol=1e-9, max_iter=5000).fit(X, y, task)
    sim = loose.task_relationships()["similarity"]
    assert sim[0, 1] > 0.9 and sim[0, 2] < -0.9  # related vs negated, seen in the estimate


def test_objective_never_increases_and_snapshots_are_copies():
    X, y, task = linear_tasks("classification")
    est = RegularizedMTL(lambda_deviation=0.1, tol=1e-10, max_iter=300)
    snapshots = list(est.fit_iter(X, y, task))
    objectives = np.array([s.objective for s in snapshots])
    assert np.all(np.diff(objectives) <= 1e-12 * abs(objectives[0]))
    first, last = snapshots[0].matrices["similarity"], snapshots[-1].matrices["similarity"]
    assert not np.shares_memory(first, last)
    np.testing.assert_allclose(last, est.task_relationships()["similarity"])


def test_convergence_warning_carries_numbers():
    X, y, task = linear_tasks("classification")
    with pytest.warns(ConvergenceWarning, match=r"did not converge in 3 iterations "
                      r"\(max_iter=3\): relative objective change .*, tol 1e-12"):
        est = RegularizedMTL(max_iter=3, tol=1e-12).fit(X, y, task)
    assert est.n_iter_ == 3 and not est.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = RegularizedMTL(max_iter=5000, tol=1e-6).fit(X, y, task)
    assert est.converged_ and est.n_iter_ == len(est.objective_history_)


def test_monitor_reports_divergence_clearly():
    monitor = ConvergenceMonitor("Demo", tol=1e-6, max_iter=10)
    monitor.record(1.0)
    with pytest.raises(FitDivergedError, match="Demo diverged: the objective became nan at "
                       "iteration 2"):
        monitor.record(float("nan"))
    monitor = ConvergenceMonitor("Demo", tol=1e-6, max_iter=10)
    monitor.record(1.0)
    with pytest.raises(FitDivergedError, match=re.escape("grew from 1 to 1e+20")):
        monitor.record(1e20)


# ---------------------------------------------------------------- PerTaskEstimator
def test_per_task_equals_separate_sklearn_fits():
    X, y, task = linear_tasks("classification")
    # different label sets per task are allowed
    labels = np.where(task == 1, np.where(y == 1, "yes", "no"), y.astype(str))
    est = PerTaskEstimator(estimator=LogisticRegression(C=0.5)).fit(X, labels, task)
    assert est._estimator_type == "classifier"
    for t in range(3):
        rows = task == t
        ref = LogisticRegression(C=0.5).fit(X[rows], labels[rows])
        np.testing.assert_array_equal(est.predict(X[rows], task[rows]), ref.predict(X[rows]))
        np.testing.assert_allclose(est.predict_proba(X[rows], task[rows]),
                                   ref.predict_proba(X[rows]))
        np.testing.assert_allclose(est.decision_function(X[rows], task[rows]),
                                   ref.decision_function(X[rows]))
    assert list(est.classes_[1]) == ["no", "yes"]
    assert est.task_relationships() == {}


def test_per_task_regressor_and_sample_weight():
    X, y, task = linear_tasks("regression")
    weights = np.linspace(0.5, 2.0, len(y))
    est = PerTaskEstimator(estimator=Ridge(alpha=1.0)).fit(X, y, task, sample_weight=weights)
    assert est._estimator_type == "regressor"
    rows = task == 2
    ref = Ridge(alpha=1.0).fit(X[rows], y[rows], sample_weight=weights[rows])
    np.testing.assert_allclose(est.estimators_[2].coef_, ref.coef_)
    with pytest.raises(AttributeError, match="Ridge has no predict_proba"):
        est.predict_proba(X, task)
