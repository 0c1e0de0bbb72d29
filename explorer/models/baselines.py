"""`PerTaskEstimator`: the single-task baseline every page compares against."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from .base import MultiTaskEstimator, Snapshot, n_tasks_of
from .constraints import RANDOM_STATE, InstanceOf

__all__ = ["PerTaskEstimator"]


class PerTaskEstimator(MultiTaskEstimator):
    """Independent clones of one scikit-learn estimator, one per task.

    No information flows between tasks: this is single-task learning (STL) in the papers'
    tables. ``fit_iter`` yields one :class:`Snapshot` per task fitted.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for each task; a classifier makes this a classifier. ``sample_weight`` is
        accepted when its ``fit`` takes one.
    random_state : None, int or Generator
        When not None and the estimator has a ``random_state`` parameter, each task's clone
        gets its own integer seed drawn from ``np.random.default_rng(random_state)``; when
        None, the clones keep the estimator's own ``random_state``.

    Attributes
    ----------
    estimators_ : list of fitted estimators, one per task
    classes_ : list of ndarray (classifiers), task t's labels
    n_tasks_, n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> X = np.arange(12.0).reshape(6, 2); task = np.array([0, 0, 0, 1, 1, 1])
    >>> y = np.where(task == 0, X[:, 0], -X[:, 0])
    >>> model = PerTaskEstimator(estimator=Ridge(alpha=1e-9)).fit(X, y, task)
    >>> np.round(model.predict(X[:1], [1]), 6)
    array([-0.])
    """

    _parameter_constraints = {
        "estimator": [InstanceOf(BaseEstimator,
                                 description="a scikit-learn estimator with fit/predict")],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, estimator: BaseEstimator | None = None, random_state=None):
        self.estimator = estimator
        self.random_state = random_state

    @property
    def accepts_sample_weight(self) -> bool:  # type: ignore[override]
        """True when the wrapped estimator's ``fit`` takes ``sample_weight``."""
        return isinstance(self.estimator, BaseEstimator) and has_fit_parameter(
            self.estimator, "sample_weight")

    @property
    def _estimator_type(self) -> str:  # type: ignore[override]
        if not isinstance(self.estimator, BaseEstimator):
            raise ValueError(
                f"estimator must be a scikit-learn estimator with fit/predict; got "
                f"{self.estimator!r}."
            )
        return "classifier" if is_classifier(self.estimator) else "regressor"

    def _fit_steps(self, X, y, task, sample_weight=None) -> Iterator[Snapshot]:
        estimators = []
        classes = []
        is_clf = self._estimator_type == "classifier"
        seeded = self.random_state is not None and \
            "random_state" in self.estimator.get_params()
        rng = self._rng()
        for t in range(n_tasks_of(task)):
            rows = task == t
            model = clone(self.estimator)
            if seeded:
                model.set_params(random_state=int(rng.integers(2**31 - 1)))
            if sample_weight is None:
                model.fit(X[rows], y[rows])
            else:
                model.fit(X[rows], y[rows], sample_weight=np.asarray(sample_weight)[rows])
            estimators.append(model)
            if is_clf:
                classes.append(model.classes_)
            yield Snapshot(step=t + 1, info={"task": t, "n_samples": int(rows.sum())})
        self.estimators_ = estimators
        if is_clf:
            self.classes_ = classes

    def _per_task(self, method: str, X, task) -> tuple[list, int]:
        """``([(rows, output of estimators_[t].method, t) per task present], n_samples)``."""
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "estimators_")
        out = []
        for t in np.unique(task):
            rows = np.flatnonzero(task == t)
            out.append((rows, getattr(self.estimators_[t], method)(X[rows]), t))
        return out, X.shape[0]

    def predict(self, X, task) -> np.ndarray:
        """Each row's prediction by its task's model, shape (n_samples,)."""
        parts, n = self._per_task("predict", X, task)
        dtype = np.result_type(*[p.dtype for _, p, _ in parts]) if parts else float
        result = np.empty(n, dtype=dtype)
        for rows, pred, _ in parts:
            result[rows] = pred
        return result

    def predict_proba(self, X, task) -> np.ndarray:
        """Class probabilities, shape (n_samples, max_t k_t).

        Column c of a row of task t is the probability of ``classes_[t][c]``; columns past
        task t's class count are zero.
        """
        if not hasattr(self.estimator, "predict_proba"):
            raise AttributeError(f"{type(self.estimator).__name__} has no predict_proba.")
        parts, n = self._per_task("predict_proba", X, task)
        width = max(len(c) for c in self.classes_)
        result = np.zeros((n, width))
        for rows, proba, _ in parts:
            result[rows, : proba.shape[1]] = proba
        return result

    def decision_function(self, X, task) -> np.ndarray:
        """Decision values of binary per-task classifiers, shape (n_samples,)."""
        if not hasattr(self.estimator, "decision_function"):
            raise AttributeError(f"{type(self.estimator).__name__} has no decision_function.")
        parts, n = self._per_task("decision_function", X, task)
        result = np.empty(n)
        for rows, values, t in parts:
            if values.ndim != 1:
                raise ValueError(
                    f"decision_function needs binary tasks; task {t} has "
                    f"{len(self.classes_[t])} classes. Use predict_proba."
                )
            result[rows] = values
        return result
