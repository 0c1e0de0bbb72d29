"""The estimator contract (docs/DESIGN.md), checked on every estimator ``explorer.models`` exports.

A new estimator joins by being exported: :func:`test_every_exported_estimator_is_registered`
fails until it has an entry in ``FAST`` (small, fast constructor keyword arguments per data
kind) and ``RELATIONSHIPS`` (the documented ``task_relationships()`` keys and shapes). The
check functions are plain functions so that :func:`test_the_checks_catch_broken_estimators`
can prove they bite on deliberately broken dummies. Independent checks of RegularizedMTL
(closed form, cvxpy, scikit-learn limits) and PerTaskEstimator follow.
"""

import inspect
import pickle
import re
import warnings
from collections.abc import Sequence

import cvxpy as cp
import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge

import explorer.models as models
from explorer.models import (
    ConvergenceMonitor,
    FitDivergedError,
    MultiTaskEstimator,
    PerTaskEstimator,
    RegularizedMTL,
    Snapshot,
)
from explorer.models.base import n_tasks_of
from explorer.models.constraints import (
    BOOLEAN,
    RANDOM_STATE,
    Integral,
    Interval,
    Options,
    accepts,
    validate_parameters,
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


# ---------------------------------------------------------------- registry
C, R = "classification", "regression"
_ITER = {"max_iter": 40, "tol": 1e-6}
#: class name -> list of (constructor kwargs, data kind): small and fast.
FAST = {
    "RegularizedMTL": [(dict(loss="logistic", **_ITER), C), (dict(loss="squared", **_ITER), R)],
    "PerTaskEstimator": [(dict(estimator=LogisticRegression()), C),
                         (dict(estimator=Ridge(alpha=0.5)), R)],
    "RobustMTFL": [(_ITER, R)],
    "RMTL": [(_ITER, R)],
    "TwoStageRMTFL": [(_ITER, R)],
    "L21MTFL": [(_ITER, R)],
    "ColumnGroupMTL": [(_ITER, R)],
    "MultiTaskLassoL1": [(_ITER, R)],
    "MultiTaskRidge": [(_ITER, R)],
    "TraceNormMTL": [(_ITER, R)],
    "MTDecisionTree": [(dict(max_depth=3), C)],
    "SingleTaskTree": [(dict(max_depth=3), C)],
    "MTAdaBoost": [(dict(n_estimators=3), C)],
    "SingleTaskAdaBoost": [(dict(n_estimators=3), C)],
    "MTBoost": [(dict(n_rounds=4, n_inner=3, random_state=0), C),
                (dict(n_rounds=3, base_learner="stump", random_state=0), C)],
    "AnyBoost": [(dict(n_rounds=4), C)],
    "MTRL": [(dict(max_iter=5), C)],
    "MTKNN": [(dict(loss="hinge", **_ITER), C), (dict(loss="square", **_ITER), C),
              (dict(solver="paper", **_ITER), C)],
    "MTKR": [(_ITER, R), (dict(solver="paper", **_ITER), R)],
    "KNNPerTask": [(dict(n_neighbors=5), C)],
    "KernelRegressionPerTask": [(dict(n_neighbors=5), R)],
    "TLTF": [(dict(n_clusters=2, fit_intercept=False, random_state=0, **_ITER), C)],  # k-means init
}
#: class name -> documented task_relationships() keys and shapes ("d" features, "m" tasks).
_PQW = {"P": ("d", "m"), "Q": ("d", "m"), "W": ("d", "m"), "outlier_scores": ("m",)}
_W = {"W": ("d", "m")}
RELATIONSHIPS = {
    "RegularizedMTL": {"similarity": ("m", "m")},
    "PerTaskEstimator": {},
    "RobustMTFL": _PQW, "RMTL": _PQW, "TwoStageRMTFL": _PQW,
    "L21MTFL": _W, "ColumnGroupMTL": _W, "MultiTaskLassoL1": _W, "MultiTaskRidge": _W,
    "TraceNormMTL": _W,
    "MTDecisionTree": {"split_borrowing": ("m", "m")},
    "MTAdaBoost": {"split_borrowing": ("m", "m")},
    "SingleTaskTree": {}, "SingleTaskAdaBoost": {},
    "MTBoost": {"Omega": ("m", "m"), "correlation": ("m", "m"),
                "correlation_unsmoothed": ("m", "m")},
    "AnyBoost": {}, "MTRL": {"Omega": ("m", "m"), "correlation": ("m", "m")},
    "MTKNN": {"W": ("m", "m"), "W_normalised": ("m", "m")},
    "MTKR": {"W": ("m", "m"), "W_normalised": ("m", "m")},
    "KNNPerTask": {}, "KernelRegressionPerTask": {},
    # fitted without task features the gate is its bias column: Gamma (1, H); H = 2 in FAST
    "TLTF": {"phi": ("m", 2), "Lambda": ("d", 2), "Gamma": (1, 2), "similarity": ("m", "m")},
}


def exported_estimators() -> list[type]:
    return [obj for name in models.__all__ for obj in [getattr(models, name)]
            if inspect.isclass(obj) and issubclass(obj, MultiTaskEstimator)
            and obj is not MultiTaskEstimator]


CASES = [pytest.param(cls, kwargs, kind, id=f"{cls.__name__}-{kind[:5]}-{i}")
         for cls in exported_estimators() for i, (kwargs, kind) in
         enumerate(FAST.get(cls.__name__, []))]


def data_for(kind):
    return linear_tasks(kind)


def maker(cls, kwargs):
    return lambda **extra: cls(**{**kwargs, **extra})


# ---------------------------------------------------------------- comparison helpers
def fitted_attributes(est) -> dict:
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}


def assert_same(a, b, path="estimator"):
    """Deep equality of fitted state (arrays exactly, NaN == NaN, nested estimators)."""
    if isinstance(a, BaseEstimator):
        assert type(a) is type(b), path
        assert repr(a.get_params()) == repr(b.get_params()), path
        fa, fb = fitted_attributes(a), fitted_attributes(b)
        assert sorted(fa) == sorted(fb), f"{path}: fitted attributes {sorted(fa)} != {sorted(fb)}"
        for key in fa:
            assert_same(fa[key], fb[key], f"{path}.{key}")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"{path}: shape {a.shape} != {b.shape}"
        if a.dtype.kind in "fc":
            np.testing.assert_array_equal(a, b, err_msg=path)
        else:
            assert a.tolist() == b.tolist(), path
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a, key=str) == sorted(b, key=str), path
        for key in a:
            assert_same(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, Sequence) and not isinstance(a, str):
        assert isinstance(b, Sequence) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        pass
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


# ---------------------------------------------------------------- the checks
def check_params_and_clone(make):
    est = make()
    twin = clone(est)
    assert twin is not est
    assert repr(twin.get_params()) == repr(est.get_params())
    params = inspect.signature(type(est).__init__).parameters
    positional = [n for n, p in params.items() if n != "self" and p.kind is not p.KEYWORD_ONLY]
    assert not positional, f"{type(est).__name__}: constructor parameters {positional} are " \
        "not keyword-only"
    assert "random_state" in est.get_params(), f"{type(est).__name__} has no random_state"


def check_not_fitted(make, X, y, task):
    est = make()
    with pytest.raises(NotFittedError):
        est.predict(X, task)
    with pytest.raises(NotFittedError):
        est.task_relationships()


def check_fit_equals_fit_iter(make, X, y, task):
    fitted = make()
    before = repr(fitted.get_params())
    fitted.fit(X, y, task)
    assert repr(fitted.get_params()) == before, "fit changed a constructor parameter"
    stepped = make()
    iterator = stepped.fit_iter(X, y, task)
    first = next(iterator)
    assert not fitted_attributes(stepped), (
        f"fitted attributes set before the fit completed: {sorted(fitted_attributes(stepped))}")
    snapshots = [first, *iterator]
    assert all(isinstance(s, Snapshot) for s in snapshots)
    assert [s.step for s in snapshots] == list(range(1, len(snapshots) + 1))
    assert_same(fitted_attributes(fitted), fitted_attributes(stepped), type(fitted).__name__)
    assert_same(fitted.predict(X, task), stepped.predict(X, task), "predict")
    return stepped, snapshots


def check_random_state(make, X, y, task):
    a = make(random_state=0).fit(X, y, task)
    b = make(random_state=0).fit(X, y, task)
    assert_same(fitted_attributes(a), fitted_attributes(b), type(a).__name__)
    assert_same(a.predict(X, task), b.predict(X, task), "predict")


def check_pickle(make, X, y, task):
    est = make().fit(X, y, task)
    again = pickle.loads(pickle.dumps(est))
    assert_same(est.predict(X, task), again.predict(X, task), "predict after pickle")


def check_iterative(make, X, y, task):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est, snapshots = exhaust(make(), X, y, task)
    if not hasattr(est, "n_iter_"):
        assert "max_iter" not in est.get_params(), "max_iter without n_iter_"
        return
    assert isinstance(est.n_iter_, int) and est.n_iter_ >= 1
    assert isinstance(est.converged_, bool)
    assert est.objective_history_.shape == (est.n_iter_,)
    assert len(snapshots) == est.n_iter_
    assert_same(np.array([s.objective for s in snapshots], dtype=float),
                est.objective_history_, "snapshot objectives")
    if "max_iter" in est.get_params():
        with pytest.warns(ConvergenceWarning) as record:
            short = make(max_iter=2, tol=0.0).fit(X, y, task)
        message = str(record[0].message)
        assert re.search(r"\d", message) and "tol" in message, message
        assert short.n_iter_ >= 2 and not short.converged_


def check_bad_input(make, X, y, task):
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"\bX\b"):
        make().fit(bad, y, task)
    est = make().fit(X, y, task)
    with pytest.raises(ValueError, match=r"\bX\b"):
        est.predict(bad, task)
    d = X.shape[1]
    with pytest.raises(ValueError, match=f"X has {d - 1} features, but the model expects {d}"):
        est.predict(X[:, :-1], task)
    with pytest.raises(ValueError, match=r"task ids must be in 0..2 .* got 5"):
        est.predict(X[:2], [0, 5])


def check_fit_shared(make, X, y, task, kind):
    """``fit_shared(X0, Y)`` is ``fit`` on the stacked copies of the one design ``X0``."""
    m = n_tasks_of(task)
    X0 = X[task == 0]
    if kind == R:
        Y = np.column_stack([y[task == 0] * (t + 1) - t for t in range(m)])
    else:   # one label per task column, each task with both classes
        Y = np.column_stack([np.roll(y[task == 0], t) for t in range(m)])
    shared = make().fit_shared(X0, Y)
    stacked = make().fit(np.tile(X0, (m, 1)), Y.T.ravel(), np.repeat(np.arange(m), len(X0)))
    assert shared.n_tasks_ == m and shared.n_features_in_ == X.shape[1]
    np.testing.assert_allclose(shared.predict(X, task), stacked.predict(X, task),
                               rtol=1e-9, atol=1e-12, err_msg="fit_shared vs fit")
    with pytest.raises(ValueError, match=r"\bY\b.*shape"):
        make().fit_shared(X0, Y[:-1])


def check_relationships(make, X, y, task, documented):
    est, snapshots = exhaust(make(), X, y, task)
    sizes = {"d": X.shape[1], "m": n_tasks_of(task)}
    expected = {key: tuple(sizes.get(s, s) for s in shape) for key, shape in documented.items()}
    relationships = est.task_relationships()
    assert {k: np.shape(v) for k, v in relationships.items()} == expected
    for snap in snapshots:
        shapes = {k: np.shape(v) for k, v in snap.matrices.items()}
        assert set(shapes) <= set(expected), f"snapshot keys {set(shapes) - set(expected)}"
        assert all(expected[k] == s for k, s in shapes.items()), shapes
    if snapshots[-1].matrices:
        for key, value in snapshots[-1].matrices.items():
            np.testing.assert_allclose(value, relationships[key], err_msg=key)


def check_kind_and_extras(make, X, y, task, kind):
    est = make()
    assert is_classifier(est) == (kind == C) and is_regressor(est) == (kind == R)
    m = n_tasks_of(task)
    if not est.uses_task_features:
        with pytest.raises(ValueError, match=f"{type(est).__name__} uses no task features"):
            est.fit(X, y, task, task_features=np.ones((m, 2)))
    else:
        with pytest.raises(ValueError, match=rf"task_features must have shape \((n_tasks=)?{m}, "):
            est.fit(X, y, task, task_features=np.ones((m + 1, 2)))
    fitted = make().fit(X, y, task)
    if not est.supports_new_tasks:
        with pytest.raises(NotImplementedError, match="cannot predict for a task unseen"):
            fitted.predict_new_task(X, np.ones(2))
    weights = np.ones(len(y))
    if est.accepts_sample_weight:
        weighted = make().fit(X, y, task, sample_weight=weights)
        assert_same(weighted.predict(X, task), fitted.predict(X, task), "unit weights")
    else:
        with pytest.raises(ValueError, match="does not use sample_weight"):
            make().fit(X, y, task, sample_weight=weights)
    per_task = fitted.score_per_task(X, y, task)
    assert per_task.shape == (m,)
    assert fitted.score(X, y, task) == pytest.approx(per_task.mean())


def bad_values(constraints: list) -> list:
    """Values that none of ``constraints`` accepts, derived from the declaration: just outside
    each interval's finite ends, a non-integer for an integer, NaN and a bool for a number,
    an unknown choice, None where None is not allowed, an arbitrary object."""
    candidates = [object(), "no-such-choice"]
    for constraint in constraints:
        if isinstance(constraint, Interval):
            step = 1 if constraint.kind is Integral else 0.5
            if constraint.low is not None:
                candidates.append(constraint.low - step if constraint.low_inclusive
                                  else constraint.low)
            if constraint.high is not None:
                candidates.append(constraint.high + step if constraint.high_inclusive
                                  else constraint.high)
            candidates += [True, float("nan")]
            if constraint.kind is Integral:
                candidates.append(2.5)
        elif isinstance(constraint, Options):
            candidates += [f"{v}-unknown" if isinstance(v, str) else object()
                           for v in constraint.values]
    if None not in constraints:
        candidates.append(None)
    if BOOLEAN not in constraints:
        candidates.append(False)
    return [value for value in candidates if not accepts(constraints, value)]


def check_constraints_declared(make):
    """Every constructor parameter has a declaration, and the defaults are accepted."""
    est = make()
    cls = type(est)
    declared = cls._parameter_constraints or {}
    params = cls().get_params(deep=False) if cls is not PerTaskEstimator else \
        est.get_params(deep=False)
    assert set(declared) == set(params), (
        f"{cls.__name__}: constraints {sorted(declared)} != parameters {sorted(params)}")
    for name, value in params.items():
        assert accepts(declared[name], value), f"{cls.__name__}: default {name}={value!r} refused"
    assert declared["random_state"] is RANDOM_STATE, f"{cls.__name__}: random_state"


def check_bad_values_refused(make, X, y, task):
    """Each declared parameter: every value derived as bad is refused by ``fit`` (and by
    ``fit_iter`` before its first snapshot), the message naming the class and parameter."""
    cls = type(make())
    for name, constraints in cls._parameter_constraints.items():
        values = bad_values(constraints)
        assert values, f"{cls.__name__}.{name}: no bad value derived from {constraints}"
        for value in values:
            with pytest.raises(ValueError, match=rf"^{cls.__name__}: {name} must be .*; got "):
                make(**{name: value}).fit(X, y, task)
        with pytest.raises(ValueError, match=rf"^{cls.__name__}: {name} must be "):
            make(**{name: values[0]}).fit_iter(X, y, task)


ALL_CHECKS = (check_params_and_clone, check_not_fitted, check_fit_equals_fit_iter,
              check_random_state, check_pickle, check_iterative, check_bad_input)


# ---------------------------------------------------------------- the parametrised contract
def test_every_exported_estimator_is_registered():
    names = [cls.__name__ for cls in exported_estimators()]
    assert len(names) >= 14
    missing = [n for n in names if n not in FAST or n not in RELATIONSHIPS]
    assert not missing, f"exported estimators without a contract entry: {missing}"


@pytest.mark.parametrize("cls, kwargs, kind", CASES)
def test_contract(cls, kwargs, kind):
    make = maker(cls, kwargs)
    X, y, task = data_for(kind)
    with warnings.catch_warnings():
        # short budgets: unconverged fits are expected here; check_iterative tests the warning
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_params_and_clone(make)
        check_constraints_declared(make)
        check_bad_values_refused(make, X, y, task)
        check_not_fitted(make, X, y, task)
        check_fit_equals_fit_iter(make, X, y, task)
        check_random_state(make, X, y, task)
        check_pickle(make, X, y, task)
        check_bad_input(make, X, y, task)
        check_relationships(make, X, y, task, RELATIONSHIPS[cls.__name__])
        check_kind_and_extras(make, X, y, task, kind)
        if not cls.uses_task_features:
            check_fit_shared(make, X, y, task, kind)
    check_iterative(make, X, y, task)


TASK_FEATURE_CASES = [case for case in CASES if case.values[0].uses_task_features]


@pytest.mark.parametrize("cls, kwargs, kind", TASK_FEATURE_CASES)
def test_contract_with_task_features(cls, kwargs, kind):
    """Models that use task features: fit == fit_iter and reproducible *with* them, and the
    new-task predictions of those that transfer."""
    X, y, task = data_for(kind)
    m = n_tasks_of(task)
    features = np.random.default_rng(0).normal(size=(m, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = cls(**{**kwargs, "random_state": 0}).fit(X, y, task, task_features=features)
        stepped = cls(**{**kwargs, "random_state": 0})
        snapshots = list(stepped.fit_iter(X, y, task, task_features=features))
    assert [s.step for s in snapshots] == list(range(1, len(snapshots) + 1))
    assert_same(fitted_attributes(fitted), fitted_attributes(stepped), cls.__name__)
    if cls.supports_new_tasks:
        proba = fitted.predict_proba_new_task(X[:5], features[0])
        assert proba.shape[0] == 5 and np.allclose(proba.sum(axis=1), 1.0)
        assert fitted.predict_new_task(X[:5], features[0]).shape == (5,)
        with pytest.raises(ValueError, match="task_features"):
            fitted.predict_new_task(X[:5], np.ones(3))


# ---------------------------------------------------------------- the checks bite
class _TaskMean(MultiTaskEstimator):
    """A correct minimal estimator: each task's mean target (one snapshot)."""

    def __init__(self, *, shrink=0.0, random_state=None):
        self.shrink = shrink
        self.random_state = random_state

    def _fit_steps(self, X, y, task):
        means = np.bincount(task, weights=y) / np.bincount(task)
        yield Snapshot(step=1)
        self.task_mean_ = (1.0 - self.shrink) * means

    def predict(self, X, task):
        X, task = self._validate_predict_data(X, task)
        return self.task_mean_[task]


class _FitDiffersFromFitIter(_TaskMean):
    def fit(self, X, y, task, **kwargs):
        super().fit(X, y, task, **kwargs)
        self.task_mean_ = self.task_mean_ + 1.0
        return self


class _MutatesParameter(_TaskMean):
    def _fit_steps(self, X, y, task):
        self.shrink = 0.5
        yield from super()._fit_steps(X, y, task)


class _SetsStateEarly(_TaskMean):
    def _fit_steps(self, X, y, task):
        self.task_mean_ = np.zeros(n_tasks_of(task))
        yield from super()._fit_steps(X, y, task)


class _PositionalParameter(_TaskMean):
    def __init__(self, shrink=0.0, *, random_state=None):
        super().__init__(shrink=shrink, random_state=random_state)


class _IgnoresRandomState(_TaskMean):
    def _fit_steps(self, X, y, task):
        yield from super()._fit_steps(X, y, task)
        self.task_mean_ = self.task_mean_ + np.random.default_rng().normal()


class _SilentAtMaxIter(_TaskMean):
    def __init__(self, *, max_iter=10, tol=1e-3, random_state=None):
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit_steps(self, X, y, task):
        for step in range(1, self.max_iter + 1):
            yield Snapshot(step=step, objective=1.0 / step)
        self.task_mean_ = np.bincount(task, weights=y) / np.bincount(task)
        self.n_iter_, self.converged_ = self.max_iter, False
        self.objective_history_ = 1.0 / np.arange(1, self.max_iter + 1)


class _UndocumentedSnapshotKey(_TaskMean):
    def _fit_steps(self, X, y, task):
        for snap in super()._fit_steps(X, y, task):
            yield Snapshot(step=snap.step, matrices={"Omega": np.eye(n_tasks_of(task))})


class _Declared(_TaskMean):
    _parameter_constraints = {"shrink": [Interval(models.constraints.Real, 0, 1)],
                              "random_state": RANDOM_STATE}


class _UndeclaredParameter(_Declared):
    def __init__(self, *, shrink=0.0, scale=1.0, random_state=None):
        super().__init__(shrink=shrink, random_state=random_state)
        self.scale = scale


class _DoesNotValidate(_Declared):
    def fit_iter(self, X, y, task, **kwargs):   # skips validate_parameters
        return self._run(self._fit_steps(X, y, task), n_tasks_of(task), X.shape[1])

    def _fit_steps(self, X, y, task):
        yield Snapshot(step=1)
        self.task_mean_ = np.bincount(task, weights=y) / np.bincount(task)


@pytest.mark.parametrize("broken, check", [
    (_UndeclaredParameter, lambda make, *data: check_constraints_declared(make)),
    (_DoesNotValidate, check_bad_values_refused),
    (_FitDiffersFromFitIter, check_fit_equals_fit_iter),
    (_MutatesParameter, check_fit_equals_fit_iter),
    (_SetsStateEarly, check_fit_equals_fit_iter),
    (_PositionalParameter, check_params_and_clone),
    (_IgnoresRandomState, check_random_state),
    (_SilentAtMaxIter, check_iterative),
    (_UndocumentedSnapshotKey, lambda make, *data: check_relationships(make, *data, {})),
])
def test_the_checks_catch_broken_estimators(broken, check):
    X, y, task = data_for(R)
    make = maker(broken, {})
    if check is check_params_and_clone:
        with pytest.raises(AssertionError, match="not keyword-only"):
            check(make)
        return
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        check(make, X, y, task)


def test_the_correct_dummy_passes_every_check():
    X, y, task = data_for(R)
    make = maker(_TaskMean, {})
    check_params_and_clone(make)
    for check in ALL_CHECKS[1:]:
        check(make, X, y, task)
    check_relationships(make, X, y, task, {})
    check_kind_and_extras(make, X, y, task, R)
    declared = maker(_Declared, {})
    check_constraints_declared(declared)
    check_bad_values_refused(declared, X, y, task)


def test_validate_parameters_messages():
    derived = bad_values([None, Interval(Integral, 1, None)])
    assert 0 in derived and 2.5 in derived and True in derived and None not in derived
    assert bad_values([Options("a", "b")])[1:3] == ["no-such-choice", "a-unknown"]
    est = _Declared(shrink=2)
    with pytest.raises(ValueError, match=r"^_Declared: shrink must be a finite number in "
                                         r"\[0, 1\]; got 2\.$"):
        validate_parameters(est)
    validate_parameters(_TaskMean(shrink="anything"))   # no declaration: nothing checked


def test_lazy_snapshots_cost_nothing_until_read():
    from explorer.models import LazyMapping, RobustMTFL
    X, y, task = data_for(R)
    snapshots = list(RobustMTFL(**_ITER).fit_iter(X, y, task))
    assert all(isinstance(s.matrices, LazyMapping) for s in snapshots)
    assert all(s.matrices._data is None for s in snapshots)  # nothing materialised yet
    early = dict(snapshots[0].matrices)
    late = dict(snapshots[-1].matrices)
    assert not np.allclose(early["W"], late["W"])  # each snapshot kept its own iterate
    again = pickle.loads(pickle.dumps(snapshots[0]))
    np.testing.assert_array_equal(again.matrices["W"], early["W"])


def test_fit_input_errors_name_the_argument():
    X, y, task = linear_tasks()
    est = RegularizedMTL()
    with pytest.raises(ValueError, match=r"^RegularizedMTL: lambda_deviation must be a finite "
                       r"number >= 0; got -1\.0\.$"):
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
    est = RegularizedMTL(lambda_deviation=0.1, lambda_common=0.05, tol=1e-12,
                         max_iter=20000).fit(X, y, task)
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
    est = RegularizedMTL(lambda_deviation=0.0, lambda_common=1.0, tol=1e-14,
                         max_iter=50000).fit(Xc, yc, taskc)
    ref = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10000).fit(Xc, yc)
    np.testing.assert_allclose(est.coef_[:, 0], ref.coef_[0], atol=1e-3)


def test_large_coupling_pools_tasks_and_hurts_the_negated_task():
    X, y, task = linear_tasks("classification", n=80)
    pooled = RegularizedMTL(lambda_deviation=1e3, lambda_common=0.01, tol=1e-9,
                            max_iter=5000).fit(X, y, task)
    sim = pooled.task_relationships()["similarity"]
    assert sim.shape == (3, 3)
    np.testing.assert_allclose(sim, 1.0, atol=1e-3)  # every task on w_0
    separate = PerTaskEstimator(estimator=LogisticRegression()).fit(X, y, task)
    assert pooled.score_per_task(X, y, task)[2] < separate.score_per_task(X, y, task)[2] - 0.3
    loose = RegularizedMTL(lambda_deviation=0.01, lambda_common=0.01, tol=1e-9,
                           max_iter=5000).fit(X, y, task)
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
