"""`RegularizedMTL`: "all tasks are alike" (Evgeniou & Pontil, KDD 2004).

Each task's weight vector is a shared part plus a task-specific deviation,
``w_t = w_0 + v_t``, and the deviations are kept small:

    min_{w_0, V, b}  (1/m) sum_t (1/n_t) sum_{i in t} loss(y_i, x_i^T (w_0 + v_t) + b_t)
                     + lambda_deviation (1/m) sum_t ||v_t||^2 + lambda_common ||w_0||^2

with the squared loss ``(y - f)^2`` or the logistic loss ``log(1 + exp(-y f))`` (labels of
each task mapped to -1/+1). Large ``lambda_deviation`` pulls every task onto ``w_0``
(pooling); small ``lambda_deviation`` lets tasks go their own way (Evgeniou & Pontil's
lambda1 / lambda2 are ``lambda_deviation`` / ``lambda_common`` here: penalties are named
after the term they weight, see the table in :mod:`explorer.models`). It is the contrast
the other pages need: it helps related tasks and visibly hurts a negated one, whose
weights it drags toward the others'.

The problem is smooth, so it runs through the same accelerated proximal-gradient routine as
the sparse models (:mod:`explorer.solvers.proximal_gradient`) with a zero penalty; the ridge
terms sit in the smooth part. The numerics (value, gradient, Lipschitz bound) live in
:mod:`explorer.solvers.regularized_mtl` on the stacked-task layer the rMTFL family uses.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import numpy as np
from scipy.special import expit
from sklearn.utils.validation import check_is_fitted

from ..solvers.multitask_least_squares import StackedTasks
from ..solvers.proximal_gradient import proximal_gradient_steps
from ..solvers.regularized_mtl import RegularizedMTLProblem, pack, unpack
from .base import ConvergenceMonitor, LazyMapping, MultiTaskEstimator, Snapshot, n_tasks_of
from .constraints import BOOLEAN, COUNT, NON_NEGATIVE, POSITIVE, RANDOM_STATE, Options

__all__ = ["RegularizedMTL", "cosine_similarity_columns"]


def cosine_similarity_columns(W: np.ndarray) -> np.ndarray:
    """Cosine similarity of the columns of ``W`` (d, m) -> (m, m); zero columns give 0."""
    norms = np.linalg.norm(W, axis=0)
    safe = np.where(norms > 0, norms, 1.0)
    unit = W / safe
    sim = unit.T @ unit
    zero = norms == 0
    sim[zero, :] = 0.0
    sim[:, zero] = 0.0
    return np.clip(sim, -1.0, 1.0)


class RegularizedMTL(MultiTaskEstimator):
    """Regularized multi-task learning, w_t = w_0 + v_t (Evgeniou & Pontil 2004).

    Parameters
    ----------
    loss : {"logistic", "squared"}
        "logistic" makes a binary classifier per task (labels may differ between tasks);
        "squared" a regressor.
    lambda_deviation : float >= 0
        Weight of ``(1/m) sum_t ||v_t||^2`` (the tasks' deviations from ``w_0``): how
        strongly tasks are pulled together.
    lambda_common : float > 0
        Weight of ``||w_0||^2`` (the common part).
    fit_intercept : bool
        Unpenalised per-task intercepts ``b_t``.
    max_iter : int
    tol : float
        Stop when the relative objective change falls below ``tol``.
    warm_start : bool
        Start from the previous fit's ``shared_coef_``, ``coef_`` and ``intercept_`` when
        their shapes fit the data (scikit-learn's idiom).
    random_state : None, int or Generator
        Unused by the deterministic solver; kept for a uniform contract.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_tasks)      W, column t is w_0 + v_t
    shared_coef_ : ndarray of shape (n_features,)       w_0
    intercept_ : ndarray of shape (n_tasks,)
    classes_ : list of ndarray (logistic loss only)
    n_iter_, converged_, objective_history_

    Snapshots carry ``matrices`` ``{"similarity": (m, m)}`` (the only key of
    ``task_relationships()``), computed only when read.
    """

    _parameter_constraints = {
        "loss": [Options("logistic", "squared")],
        "lambda_deviation": [NON_NEGATIVE],
        "lambda_common": [POSITIVE],
        "fit_intercept": [BOOLEAN],
        "max_iter": [COUNT],
        "tol": [NON_NEGATIVE],
        "warm_start": [BOOLEAN],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, loss: str = "logistic", lambda_deviation: float = 0.1,
                 lambda_common: float = 0.01, fit_intercept: bool = True, max_iter: int = 500,
                 tol: float = 1e-6, warm_start: bool = False, random_state=None):
        self.loss = loss
        self.lambda_deviation = lambda_deviation
        self.lambda_common = lambda_common
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.random_state = random_state

    @property
    def _estimator_type(self) -> str:  # type: ignore[override]
        return "classifier" if self.loss == "logistic" else "regressor"

    def _fit_steps(self, X, y, task) -> Iterator[Snapshot]:
        m, d = n_tasks_of(task), X.shape[1]
        classes = None
        if self.loss == "logistic":
            target = np.empty(y.shape[0])
            classes = []
            for t in range(m):
                rows = task == t
                labels = np.unique(y[rows])
                if labels.size != 2:
                    raise ValueError(
                        f"RegularizedMTL(loss='logistic') needs 2 classes in every task; "
                        f"task {t} has {labels.size} ({labels.tolist()})."
                    )
                target[rows] = np.where(y[rows] == labels[1], 1.0, -1.0)
                classes.append(labels)
        else:
            target = y.astype(np.float64)
        data = StackedTasks(X, target, task, m, normalize=False, center=False)
        problem = RegularizedMTLProblem(
            data, loss=self.loss, lambda_deviation=self.lambda_deviation,
            lambda_common=self.lambda_common, fit_intercept=self.fit_intercept)
        smooth, value = problem.closures()
        monitor = ConvergenceMonitor(type(self).__name__, tol=float(self.tol),
                                     max_iter=int(self.max_iter))
        last = None
        for step in proximal_gradient_steps(
                self._initial(d, m), smooth, prox=_identity_prox, penalty=_zero_penalty,
                lipschitz=problem.lipschitz_lower_bound(), smooth_value=value):
            monitor.record(step.objective, change=step.relative_change
                           if step.iteration > 1 else None)
            last = step
            yield Snapshot(step=step.iteration, objective=step.objective,
                           matrices=LazyMapping(partial(_similarity, step.x)),
                           info=LazyMapping(partial(_step_info, step)))
            if monitor.done:
                break
        w0, V, b = unpack(last.x)
        self.shared_coef_ = w0.copy()
        self.coef_ = w0[:, None] + V
        self.intercept_ = b.copy()
        if classes is not None:
            self.classes_ = classes
        monitor.finish(self)

    def _initial(self, d: int, m: int) -> np.ndarray:
        """Zeros, or with ``warm_start`` the previous fit's (w_0, V, b) when shapes fit."""
        coef = getattr(self, "coef_", None)
        if self.warm_start and coef is not None and coef.shape == (d, m):
            return pack(self.shared_coef_, coef - self.shared_coef_[:, None],
                        self.intercept_)
        return np.zeros((d + 1, m + 1))

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X, task) -> np.ndarray:
        """Margins ``x^T w_t + b_t``, shape (n_samples,)."""
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "coef_")
        return np.einsum("ij,ji->i", X, self.coef_[:, task]) + self.intercept_[task]

    def predict(self, X, task) -> np.ndarray:
        f = self.decision_function(X, task)
        if self.loss == "squared":
            return f
        task = np.asarray(task, dtype=np.intp)
        neg = np.array([c[0] for c in self.classes_])
        pos = np.array([c[1] for c in self.classes_])
        return np.where(f > 0, pos[task], neg[task])

    def predict_proba(self, X, task) -> np.ndarray:
        """Shape (n_samples, 2): probabilities of ``classes_[t][0]`` and ``classes_[t][1]``."""
        if self.loss != "logistic":
            raise AttributeError("predict_proba is only available with loss='logistic'.")
        p = expit(self.decision_function(X, task))
        return np.column_stack([1.0 - p, p])

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"similarity": (m, m)}``: cosine of the task weight vectors ``w_t``."""
        check_is_fitted(self, "coef_")
        return {"similarity": cosine_similarity_columns(self.coef_)}


def _identity_prox(v: np.ndarray, step: float) -> np.ndarray:
    return v


def _zero_penalty(v: np.ndarray) -> float:
    return 0.0


def _similarity(theta: np.ndarray) -> dict[str, np.ndarray]:
    w0, V, _ = unpack(theta)
    return {"similarity": cosine_similarity_columns(w0[:, None] + V)}


def _step_info(step) -> dict:
    return {"lipschitz": step.lipschitz, "relative_change": step.relative_change}
