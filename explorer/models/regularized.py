"""`RegularizedMTL`: "all tasks are alike" (Evgeniou & Pontil, KDD 2004).

Each task's weight vector is a shared part plus a task-specific deviation,
``w_t = w_0 + v_t``, and the deviations are kept small:

    min_{w_0, V, b}  (1/m) sum_t (1/n_t) sum_{i in t} loss(y_i, x_i^T (w_0 + v_t) + b_t)
                     + lambda1 (1/m) sum_t ||v_t||^2 + lambda2 ||w_0||^2

with the squared loss ``(y - f)^2`` or the logistic loss ``log(1 + exp(-y f))`` (labels of
each task mapped to -1/+1). Large ``lambda1`` pulls every task onto ``w_0`` (pooling); small
``lambda1`` lets tasks go their own way. It is the contrast the other pages need: it helps
related tasks and visibly hurts a negated one, whose weights it drags toward the others'.

The problem is smooth, so it runs through the same accelerated proximal-gradient routine as
the sparse models (:mod:`explorer.solvers.proximal_gradient`) with a zero penalty; the ridge
terms sit in the smooth part. Per-task blocks are stored stacked with offsets.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy.special import expit, log_expit
from sklearn.utils.validation import check_is_fitted

from ..data.validation import check_scalar
from ..solvers.proximal_gradient import proximal_gradient_steps
from .base import ConvergenceMonitor, MultiTaskEstimator, Snapshot

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
    lambda1 : float >= 0
        Weight of ``(1/m) sum_t ||v_t||^2``: how strongly tasks are pulled together.
    lambda2 : float > 0
        Weight of ``||w_0||^2``.
    fit_intercept : bool
        Unpenalised per-task intercepts ``b_t``.
    max_iter : int
    tol : float
        Stop when the relative objective change falls below ``tol``.
    random_state : None, int or Generator
        Unused by the deterministic solver; kept for a uniform contract.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_tasks)      W, column t is w_0 + v_t
    shared_coef_ : ndarray of shape (n_features,)       w_0
    intercept_ : ndarray of shape (n_tasks,)
    classes_ : list of ndarray (logistic loss only)
    n_iter_, converged_, objective_history_
    """

    def __init__(self, *, loss: str = "logistic", lambda1: float = 0.1, lambda2: float = 0.01,
                 fit_intercept: bool = True, max_iter: int = 500, tol: float = 1e-6,
                 random_state=None):
        self.loss = loss
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    @property
    def _estimator_type(self) -> str:  # type: ignore[override]
        return "classifier" if self.loss == "logistic" else "regressor"

    def _check_params(self) -> None:
        if self.loss not in ("logistic", "squared"):
            raise ValueError(f"loss must be 'logistic' or 'squared'; got {self.loss!r}.")
        check_scalar(self.lambda1, "lambda1", low=0)
        check_scalar(self.lambda2, "lambda2", low=0, low_inclusive=False)
        check_scalar(self.max_iter, "max_iter", kind=int, low=1)
        check_scalar(self.tol, "tol", low=0)

    def _fit_steps(self, X, y, task, init=None) -> Iterator[Snapshot]:
        self._check_params()
        m, d = self.n_tasks_, self.n_features_in_
        if self.loss == "logistic":
            signs = np.empty(y.shape[0])
            classes = []
            for t in range(m):
                rows = task == t
                labels = np.unique(y[rows])
                if labels.size != 2:
                    raise ValueError(
                        f"RegularizedMTL(loss='logistic') needs 2 classes in every task; "
                        f"task {t} has {labels.size} ({labels.tolist()})."
                    )
                signs[rows] = np.where(y[rows] == labels[1], 1.0, -1.0)
                classes.append(labels)
            self.classes_ = classes
            target = signs
        else:
            target = y.astype(np.float64)

        # Stack rows task by task so every per-task block is a contiguous slice.
        order = np.argsort(task, kind="stable")
        Xs, ys = X[order], target[order]
        offsets = np.concatenate([[0], np.cumsum(np.bincount(task, minlength=m))])
        slices = [slice(offsets[t], offsets[t + 1]) for t in range(m)]
        row_weight = np.empty(Xs.shape[0])  # 1 / (m n_t) per row
        for sl in slices:
            row_weight[sl] = 1.0 / (m * (sl.stop - sl.start))
        row_task = task[order]
        lam1, lam2 = float(self.lambda1), float(self.lambda2)
        logistic = self.loss == "logistic"
        use_b = bool(self.fit_intercept)

        # Parameters packed in one array theta of shape (d + 1, m + 1):
        # theta[:d, 0] = w_0, theta[:d, 1:] = V, theta[d, 1:] = b, theta[d, 0] unused (0).
        def unpack(theta):
            return theta[:d, 0], theta[:d, 1:], theta[d, 1:]

        def margins(theta):
            w0, V, b = unpack(theta)
            W = w0[:, None] + V
            f = np.einsum("ij,ji->i", Xs, W[:, row_task])
            return f + b[row_task] if use_b else f

        def loss_terms(f):
            if logistic:
                return -log_expit(ys * f), None
            r = f - ys
            return r * r, r

        def value(theta):
            w0, V, _ = unpack(theta)
            terms, _ = loss_terms(margins(theta))
            return float(row_weight @ terms + lam1 / m * np.sum(V * V) + lam2 * w0 @ w0)

        def smooth(theta):
            w0, V, _ = unpack(theta)
            f = margins(theta)
            terms, r = loss_terms(f)
            # d loss / d f per row, times the row's weight
            dloss = -ys * expit(-ys * f) if logistic else 2.0 * r
            g_rows = row_weight * dloss
            grad = np.zeros_like(theta)
            for t, sl in enumerate(slices):
                grad[:d, 1 + t] = Xs[sl].T @ g_rows[sl]
                if use_b:
                    grad[d, 1 + t] = g_rows[sl].sum()
            grad[:d, 0] = grad[:d, 1:].sum(axis=1) + 2.0 * lam2 * w0
            grad[:d, 1:] += 2.0 * lam1 / m * V
            val = float(row_weight @ terms + lam1 / m * np.sum(V * V) + lam2 * w0 @ w0)
            return val, grad

        # Lower bound of the Lipschitz constant: the curvature along single coordinates
        # (a unit vector's Rayleigh quotient never exceeds the largest eigenvalue).
        curvature = 0.25 if logistic else 2.0
        col_sq = np.array([np.max(row_weight[sl][0] * np.sum(Xs[sl] ** 2, axis=0))
                           for sl in slices])
        lipschitz = max(curvature * col_sq.max() + 2.0 * max(lam1 / m, lam2), 1e-12)

        theta0 = np.zeros((d + 1, m + 1))
        if init is not None:
            W0 = np.asarray(init, dtype=np.float64)
            if W0.shape != (d, m):
                raise ValueError(f"init must have shape ({d}, {m}) (W); got {W0.shape}.")
            theta0[:d, 1:] = W0

        monitor = ConvergenceMonitor(type(self).__name__, tol=float(self.tol),
                                     max_iter=int(self.max_iter))
        steps = proximal_gradient_steps(
            theta0, smooth, prox=lambda v, step: v, penalty=lambda v: 0.0,
            lipschitz=lipschitz, smooth_value=value)
        for step in steps:
            monitor.record(step.objective, change=step.relative_change
                           if step.iteration > 1 else None)
            self._store(step.x, d)
            yield Snapshot(
                step=step.iteration,
                objective=step.objective,
                matrices={"similarity": self.task_relationships()["similarity"],
                          "W": self.coef_.copy()},
                info={"lipschitz": step.lipschitz, "relative_change": step.relative_change},
            )
            if monitor.done:
                break
        monitor.finish(self)

    def _store(self, theta: np.ndarray, d: int) -> None:
        self.shared_coef_ = theta[:d, 0].copy()
        self.coef_ = theta[:d, 0][:, None] + theta[:d, 1:]
        self.intercept_ = theta[d, 1:].copy()

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
