"""The estimator contract (docs/DESIGN.md, "The estimator contract").

Every estimator in :mod:`explorer.models` derives from :class:`MultiTaskEstimator`:

* scikit-learn ``BaseEstimator`` semantics: keyword-only constructor parameters stored as
  given, resolved values in locals or fitted attributes ending in ``_``;
* ``fit(X, y, task, *, task_features=None, sample_weight=None)`` is *implemented here* by
  exhausting ``fit_iter`` with the same arguments, so the live views and the library share
  one code path;
* every constructor parameter's constraints are declared once, in the class attribute
  ``_parameter_constraints`` (:mod:`explorer.models.constraints`), and checked when a fit
  starts; the app derives its widgets from the same declaration;
* ``fit_iter`` validates the data (and ``task_features`` / ``sample_weight``) once, then
  delegates to the subclass's ``_fit_steps`` generator, which yields :class:`Snapshot`
  objects and sets the fitted attributes when it is exhausted (``n_tasks_`` and
  ``n_features_in_`` last, so ``check_is_fitted`` fails until the fit is complete);
* a snapshot's ``matrices`` and ``info`` are usually :class:`LazyMapping` objects: computed
  on first access from references to arrays the solver never mutates, so ``fit`` pays
  nothing for snapshots nobody reads;
* iterative models use :class:`ConvergenceMonitor` for ``n_iter_``, ``converged_``,
  ``objective_history_``, the ``ConvergenceWarning`` with numbers, and a clear
  :class:`FitDivergedError` on NaN or divergence.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_is_fitted

from ..data.validation import check_multitask, check_shared_design, check_task_features
from .constraints import validate_parameters

__all__ = [
    "Snapshot",
    "LazyMapping",
    "MultiTaskEstimator",
    "ConvergenceMonitor",
    "FitDivergedError",
    "encode_task_labels",
]


class FitDivergedError(ArithmeticError):
    """A solver produced NaN/inf or an objective that grew without bound."""


class LazyMapping(Mapping):
    """A read-only mapping computed by ``compute()`` on first access, then cached.

    Snapshots use it so that building one costs a closure, not copies of matrices: the
    closure holds references to arrays the solver never mutates after yielding them.
    Pickling materialises it (a plain ``dict`` is pickled).

    >>> calls = []
    >>> lazy = LazyMapping(lambda: calls.append(1) or {"W": 1.0})
    >>> calls
    []
    >>> lazy["W"], list(lazy), len(calls)
    (1.0, ['W'], 1)
    """

    __slots__ = ("_compute", "_data")

    def __init__(self, compute: Callable[[], Mapping[str, Any]]):
        self._compute: Callable[[], Mapping[str, Any]] | None = compute
        self._data: dict[str, Any] | None = None

    @property
    def materialised(self) -> bool:
        """True once ``compute()`` has run (looking at it does not run it)."""
        return self._data is not None

    def _materialise(self) -> dict[str, Any]:
        if self._data is None:
            assert self._compute is not None
            self._data = dict(self._compute())
            self._compute = None
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._materialise()[key]

    def __iter__(self):
        return iter(self._materialise())

    def __len__(self) -> int:
        return len(self._materialise())

    def __repr__(self) -> str:
        return f"LazyMapping({self._materialise()!r})"

    def __reduce__(self):
        return dict, (self._materialise(),)


@dataclass(frozen=True)
class Snapshot:
    """One meaningful step of a fit, as the live views and the tests see it.

    Attributes
    ----------
    step : int
        1-based step count (boosting round, iteration, node added ...).
    objective : float or None
        Objective value after the step, when the model has one.
    matrices : mapping of str -> ndarray
        Named matrices at this step (e.g. ``{"P": ..., "Q": ..., "W": ...}``); every key is
        one of the model's ``task_relationships()`` keys, with the same orientation
        (feature x task matrices are (d, m) like ``coef_``). Usually a
        :class:`LazyMapping`: nothing is computed until somebody reads it, and what is
        returned is the snapshot's own (never mutated later by the solver).
    info : mapping
        Anything else the views need (partial tree, detected sets, per-task errors, ...),
        also usually lazy.
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
        """Store ``n_iter_``, ``converged_``, ``objective_history_``; warn if unconverged."""
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


def n_tasks_of(task: np.ndarray) -> int:
    """Number of tasks of validated fit-time task ids (``max(task) + 1``)."""
    return int(task.max()) + 1


def binary_targets(y: np.ndarray, task: np.ndarray, m: int, who: str
                   ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each task's two labels mapped to -1/+1 (the larger label is +1), for the binary
    multi-task models (MTBoost, MTRL, MT-KNN).

    Returns the (n_samples,) float targets and each task's two labels; a task without
    exactly two labels is refused with a message naming ``who``.

    >>> binary_targets(np.array(["a", "b", "b", "c"]), np.array([0, 0, 1, 1]), 2, "M")[0]
    array([-1.,  1., -1.,  1.])
    """
    target = np.empty(y.shape[0])
    classes = []
    for t in range(m):
        rows = task == t
        labels = np.unique(y[rows])
        if labels.size != 2:
            raise ValueError(f"{who} needs 2 classes in every task; task {t} has "
                             f"{labels.size} ({labels.tolist()}).")
        target[rows] = np.where(y[rows] == labels[1], 1.0, -1.0)
        classes.append(labels)
    return target, classes


def labels_from_margin(margin: np.ndarray, task, classes: list[np.ndarray]) -> np.ndarray:
    """The inverse of :func:`binary_targets` for predictions: each row's task label, the
    second (larger) one where ``margin > 0``."""
    task = np.asarray(task, dtype=np.intp)
    negative = np.array([c[0] for c in classes])
    positive = np.array([c[1] for c in classes])
    return np.where(margin > 0, positive[task], negative[task])


class MultiTaskEstimator(BaseEstimator):
    """Base class of every multi-task estimator and baseline.

    Subclasses set ``_estimator_type`` ("classifier" or "regressor"), implement
    ``_fit_steps(X, y, task, **fit_params)`` (a generator of :class:`Snapshot`; it must set
    all its fitted attributes when exhausted and none before) and ``predict``; they may
    override ``task_relationships`` and ``_min_classes``. ``fit_params`` holds
    ``task_features`` only when :attr:`uses_task_features` is true and ``sample_weight``
    only when :attr:`accepts_sample_weight` is true (both validated here).

    Attributes
    ----------
    _parameter_constraints : dict, class attribute
        Constructor parameter name -> list of constraints (any one accepts a value; see
        :mod:`explorer.models.constraints`), checked at the start of ``fit_iter``. Every
        shipped estimator declares all its parameters; None (a user's class) checks nothing.
    uses_task_features : bool, class attribute
        Whether ``fit`` uses task-level features (``task_features``, shape (m, q), one row
        per task). Callers (the app, the comparison harness) pass a dataset's task
        features only when this is true; a model that does not use them raises a
        ``ValueError`` naming itself when given some.
    supports_new_tasks : bool, class attribute
        Whether the model transfers to a task unseen in training through
        :meth:`predict_new_task` / :meth:`predict_proba_new_task` (from that task's
        features). False for every model here; TL-TF will be the first.
    accepts_sample_weight : bool, class attribute (a property on PerTaskEstimator)
        Whether ``fit`` uses per-example weights (trees and boosting do; PerTaskEstimator
        when its estimator does); the others raise a ``ValueError`` when given
        ``sample_weight``.
    """

    _estimator_type = "regressor"
    #: Classifiers: the least number of classes each task must have at fit time.
    _min_classes = 2
    _parameter_constraints: ClassVar[dict[str, list] | None] = None
    uses_task_features: ClassVar[bool] = False
    supports_new_tasks: ClassVar[bool] = False
    accepts_sample_weight: ClassVar[bool] = False

    # ------------------------------------------------------------------ fitting
    @property
    def _kind(self) -> str:
        return "classification" if self._estimator_type == "classifier" else "regression"

    def _validate_fit_data(self, X, y, task):
        """Validated ``(X, y, task)``; sets no attribute (nothing is fitted yet)."""
        return check_multitask(
            X, y, task, kind=self._kind,
            min_classes=self._min_classes if self._kind == "classification" else None,
            who=type(self).__name__,
        )

    def _check_task_features(self, task_features, n_tasks: int):
        """``None`` or a finite float array of shape (n_tasks, q); see ``uses_task_features``."""
        who = type(self).__name__
        if task_features is None:
            return None
        if not self.uses_task_features:
            raise ValueError(
                f"{who} uses no task features, but task_features were given (shape "
                f"{np.shape(task_features)}); pass task_features only to models whose "
                "uses_task_features is True."
            )
        try:   # the one validation helper of the data contract
            return check_task_features(task_features, n_tasks)
        except ValueError as exc:
            raise ValueError(f"{who}: {exc}") from None

    def _check_sample_weight(self, sample_weight, n_samples: int):
        """``None`` or a finite non-negative array of shape (n_samples,) with positive sum."""
        who = type(self).__name__
        if sample_weight is None:
            return None
        if not self.accepts_sample_weight:
            raise ValueError(f"{who} does not use sample_weight; fit it without weights.")
        weight = np.asarray(sample_weight, dtype=np.float64)
        if weight.shape != (n_samples,):
            raise ValueError(f"{who}: sample_weight must have shape ({n_samples},); got shape "
                             f"{weight.shape}.")
        if not np.all(np.isfinite(weight)) or np.any(weight < 0) or weight.sum() <= 0:
            raise ValueError(f"{who}: sample_weight must be finite, non-negative and have a "
                             "positive sum.")
        return weight

    def _rng(self) -> np.random.Generator:
        """A fresh ``Generator`` from ``self.random_state`` (never the global state)."""
        return np.random.default_rng(getattr(self, "random_state", None))

    def fit_iter(self, X, y, task, *, task_features=None, sample_weight=None
                 ) -> Iterator[Snapshot]:
        """Fit step by step, yielding a :class:`Snapshot` per meaningful step.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        task : array-like of int, shape (n_samples,), ids ``0..m-1``
        task_features : array-like of shape (m, q) or None
            Task-level features, one row per task; only for models whose
            :attr:`uses_task_features` is true.
        sample_weight : array-like of shape (n_samples,) or None
            Example weights; only for models whose :attr:`accepts_sample_weight` is true.

        Validation (the parameters against ``_parameter_constraints``, then the data)
        happens before the first snapshot (this method is not a generator itself, so bad
        input raises at the call). When the returned generator is exhausted
        the estimator is fitted exactly as :meth:`fit` leaves it; until then no fitted
        attribute is (re)set, so stopping early leaves the previous state.
        """
        validate_parameters(self)
        X, y, task = self._validate_fit_data(X, y, task)
        m = n_tasks_of(task)
        fit_params = {}
        features = self._check_task_features(task_features, m)
        if self.uses_task_features:
            fit_params["task_features"] = features
        weight = self._check_sample_weight(sample_weight, X.shape[0])
        if self.accepts_sample_weight:
            fit_params["sample_weight"] = weight
        return self._run(self._fit_steps(X, y, task, **fit_params), m, X.shape[1])

    def _run(self, steps: Iterator[Snapshot], n_tasks: int, n_features: int
             ) -> Iterator[Snapshot]:
        yield from steps
        self.n_features_in_ = n_features
        self.n_tasks_ = n_tasks

    def _fit_steps(self, X, y, task, **fit_params) -> Iterator[Snapshot]:
        raise NotImplementedError

    def fit(self, X, y, task, *, task_features=None, sample_weight=None):
        """Fit on stacked multi-task data (arguments as :meth:`fit_iter`); returns ``self``."""
        for _ in self.fit_iter(X, y, task, task_features=task_features,
                               sample_weight=sample_weight):
            pass
        return self

    def fit_shared(self, X, Y, *, task_features=None):
        """Fit regression tasks that all share one design ``X`` (n, d); ``Y`` is (n, m).

        Column ``t`` of ``Y`` holds task ``t``'s responses (scikit-learn's
        ``MultiTaskLasso`` layout). The same model as :meth:`fit` on the stacked copies;
        this generic version stacks them, the group-penalty models override it to solve on
        the one design. Returns ``self``.
        """
        X, Y = check_shared_design(X, Y, who=type(self).__name__)
        n, m = Y.shape
        return self.fit(np.tile(X, (m, 1)), Y.T.ravel(), np.repeat(np.arange(m), n),
                        task_features=task_features)

    # ------------------------------------------------------------------ prediction
    def _validate_predict_data(self, X, task):
        check_is_fitted(self, "n_tasks_")
        X, _, task = check_multitask(X, None, task, n_tasks=self.n_tasks_,
                                     n_features=self.n_features_in_, require_all_tasks=False,
                                     who=type(self).__name__)
        return X, task

    def predict(self, X, task) -> np.ndarray:
        raise NotImplementedError

    def _no_new_tasks(self, method: str):
        raise NotImplementedError(
            f"{type(self).__name__} cannot predict for a task unseen in training "
            f"(supports_new_tasks is False): {method} needs a model that transfers from "
            "task features, such as TL-TF. Use predict(X, task) for the training tasks."
        )

    def predict_new_task(self, X, task_features) -> np.ndarray:
        """Predict for one task unseen in training from its task features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        task_features : array-like of shape (q,)
            The new task's features (same columns as at fit time).

        Returns
        -------
        ndarray of shape (n_samples,)

        Only models whose :attr:`supports_new_tasks` is true implement it; the others raise
        ``NotImplementedError`` saying so.
        """
        self._no_new_tasks("predict_new_task")

    def predict_proba_new_task(self, X, task_features) -> np.ndarray:
        """Class probabilities for a task unseen in training, shape (n_samples, k).

        See :meth:`predict_new_task`.
        """
        self._no_new_tasks("predict_proba_new_task")

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
        """Named matrices the model learns about tasks (docs/DESIGN.md lists the keys)."""
        check_is_fitted(self, "n_tasks_")
        return {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = self._estimator_type
        return tags
