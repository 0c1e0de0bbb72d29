"""The estimator contract (DESIGN.md, "The estimator contract").

Every estimator in :mod:`explorer.models` derives from :class:`MultiTaskEstimator`:

* scikit-learn ``BaseEstimator`` semantics: keyword-only constructor parameters stored as
  given, resolved values in locals or fitted attributes ending in ``_``;
* ``fit(X, y, task)`` is *implemented here* by exhausting ``fit_iter(X, y, task)``, so the
  live views and the library share one code path;
* ``fit_iter`` validates the data once, then delegates to the subclass's ``_fit_steps``
  generator, which yields :class:`Snapshot` objects;
* iterative models use :class:`ConvergenceMonitor` for ``n_iter_``, ``converged_``,
  ``objective_history_``, the ``ConvergenceWarning`` with numbers, and a clear
  :class:`FitDivergedError` on NaN or divergence.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_is_fitted

from ..data.validation import check_multitask

__all__ = [
    "Snapshot",
    "MultiTaskEstimator",
    "ConvergenceMonitor",
    "FitDivergedError",
    "encode_task_labels",
]


class FitDivergedError(ArithmeticError):
    """A solver produced NaN/inf or an objective that grew without bound."""


@dataclass(frozen=True)
class Snapshot:
    """One meaningful step of a fit, as the live views and the tests see it.

    Attributes
    ----------
    step : int
        1-based step count (boosting round, iteration, node added ...).
    objective : float or None
        Objective value after the step, when the model has one.
    matrices : dict of str -> ndarray
        Named matrices at this step (e.g. ``{"P": ..., "Q": ..., "W": ...}``). They are
        *copies* owned by the snapshot: a solver never hands out views of arrays it will
        keep mutating, because the snapshot is stored while the solver continues.
    info : dict
        Anything else the views need (partial tree, detected sets, per-task errors, ...).
    """

    step: int
    objective: float | None = None
    matrices: Mapping[str, np.ndarray] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)


class ConvergenceMonitor:
    """Bookkeeping shared by iterative estimators.

    >>> monitor = ConvergenceMonitor("Demo", tol=1e-3, max_iter=10)
    >>> monitor.record(1.0)
    inf
    >>> round(monitor.record(0.9995), 6)
    0.0005
    >>> monitor.converged
    True
    """

    def __init__(self, who: str, *, tol: float, max_iter: int, criterion: str =
                 "relative objective change", divergence_factor: float = 1e12):
        self.who = who
        self.tol = tol
        self.max_iter = max_iter
        self.criterion = criterion
        self.divergence_factor = divergence_factor
        self.history: list[float] = []
        self.last_change = math.inf
        self.converged = False

    @property
    def n_iter(self) -> int:
        return len(self.history)

    def record(self, objective: float, change: float | None = None) -> float:
        """Append an objective value and return the stopping criterion's value.

        ``change`` overrides the default criterion ``|f_k - f_{k-1}| / max(|f_{k-1}|, tiny)``.
        Sets ``converged`` when it falls below ``tol``. Raises :class:`FitDivergedError` on
        a non-finite objective or one that exceeds the first by ``divergence_factor``.
        """
        objective = float(objective)
        if not math.isfinite(objective):
            raise FitDivergedError(
                f"{self.who} diverged: the objective became {objective} at iteration "
                f"{self.n_iter + 1}. Try a smaller step or stronger regularisation, and "
                "check the data scale."
            )
        if self.history and abs(objective) > self.divergence_factor * max(
                abs(self.history[0]), 1.0):
            raise FitDivergedError(
                f"{self.who} diverged: the objective grew from {self.history[0]:.3g} to "
                f"{objective:.3g} by iteration {self.n_iter + 1}."
            )
        if change is None and self.history:
            previous = self.history[-1]
            change = abs(previous - objective) / max(abs(previous), np.finfo(float).tiny)
        self.history.append(objective)
        self.last_change = math.inf if change is None else float(change)
        self.converged = self.last_change < self.tol
        return self.last_change

    @property
    def done(self) -> bool:
        return self.converged or self.n_iter >= self.max_iter

    def finish(self, estimator: MultiTaskEstimator) -> None:
        """Store ``n_iter_``, ``converged_``, ``objective_history_`` and warn if unconverged."""
        estimator.n_iter_ = self.n_iter
        estimator.converged_ = bool(self.converged)
        estimator.objective_history_ = np.asarray(self.history, dtype=np.float64)
        if not self.converged:
            warnings.warn(
                f"{self.who} did not converge in {self.n_iter} iterations "
                f"(max_iter={self.max_iter}): {self.criterion} {self.last_change:.3g}, "
                f"tol {self.tol:.3g}. Increase max_iter or loosen tol.",
                ConvergenceWarning,
                stacklevel=3,
            )


def encode_task_labels(y: np.ndarray, task: np.ndarray, n_tasks: int
                       ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per-task label encoding: each task's labels become ``0..k_t-1``.

    Returns
    -------
    codes : ndarray of intp, shape (n_samples,)
    classes : list of length n_tasks; ``classes[t]`` holds task t's sorted labels.
    """
    codes = np.empty(y.shape[0], dtype=np.intp)
    classes = []
    for t in range(n_tasks):
        rows = task == t
        labels, inverse = np.unique(y[rows], return_inverse=True)
        codes[rows] = inverse
        classes.append(labels)
    return codes, classes


class MultiTaskEstimator(BaseEstimator):
    """Base class of every multi-task estimator and baseline.

    Subclasses set ``_estimator_type`` ("classifier" or "regressor"), implement
    ``_fit_steps(X, y, task, **fit_params)`` (a generator of :class:`Snapshot`; it must
    leave all fitted attributes set when exhausted) and ``predict``; they may override
    ``task_relationships`` and ``_min_classes``.
    """

    _estimator_type = "regressor"
    #: Classifiers: the least number of classes each task must have at fit time.
    _min_classes = 2

    # ------------------------------------------------------------------ fitting
    @property
    def _kind(self) -> str:
        return "classification" if self._estimator_type == "classifier" else "regression"

    def _validate_fit_data(self, X, y, task):
        X, y, task = check_multitask(
            X, y, task, kind=self._kind,
            min_classes=self._min_classes if self._kind == "classification" else None,
            who=type(self).__name__,
        )
        self.n_tasks_ = int(task.max()) + 1
        self.n_features_in_ = X.shape[1]
        return X, y, task

    def _rng(self) -> np.random.Generator:
        """A fresh ``Generator`` from ``self.random_state`` (never the global state)."""
        return np.random.default_rng(getattr(self, "random_state", None))

    def fit_iter(self, X, y, task, **fit_params) -> Iterator[Snapshot]:
        """Fit step by step, yielding a :class:`Snapshot` per meaningful step.

        When the generator is exhausted the estimator is fitted exactly as :meth:`fit`
        leaves it. Validation happens before the first snapshot.
        """
        X, y, task = self._validate_fit_data(X, y, task)
        return self._fit_steps(X, y, task, **fit_params)

    def _fit_steps(self, X, y, task, **fit_params) -> Iterator[Snapshot]:
        raise NotImplementedError

    def fit(self, X, y, task, **fit_params):
        """Fit on stacked multi-task data; returns ``self``."""
        for _ in self.fit_iter(X, y, task, **fit_params):
            pass
        return self

    # ------------------------------------------------------------------ prediction
    def _validate_predict_data(self, X, task):
        check_is_fitted(self, "n_tasks_")
        X, _, task = check_multitask(X, None, task, n_tasks=self.n_tasks_,
                                     n_features=self.n_features_in_, require_all_tasks=False,
                                     who=type(self).__name__)
        return X, task

    def predict(self, X, task) -> np.ndarray:
        raise NotImplementedError

    def score_per_task(self, X, y, task) -> np.ndarray:
        """Per-task score, shape (n_tasks_,): accuracy (classifiers) or R^2 (regressors).

        Tasks with no rows in ``X`` get NaN.
        """
        X, task = self._validate_predict_data(X, task)
        y = np.asarray(y)
        if y.shape != task.shape:
            raise ValueError(f"y must have shape {task.shape}; got shape {y.shape}.")
        predicted = self.predict(X, task)
        scores = np.full(self.n_tasks_, np.nan)
        for t in np.unique(task):
            rows = task == t
            if self._estimator_type == "classifier":
                scores[t] = np.mean(predicted[rows] == y[rows])
            else:
                scores[t] = r2_score(y[rows], predicted[rows]) if rows.sum() > 1 else np.nan
        return scores

    def score(self, X, y, task) -> float:
        """Mean over the tasks present in ``task`` of :meth:`score_per_task`."""
        return float(np.nanmean(self.score_per_task(X, y, task)))

    # ------------------------------------------------------------------ relationships
    def task_relationships(self) -> dict[str, np.ndarray]:
        """Named matrices the model learns about tasks (DESIGN.md lists the keys)."""
        check_is_fitted(self, "n_tasks_")
        return {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = self._estimator_type
        return tags
