"""Robust multi-task feature learning (Gong, Ye & Zhang, KDD 2012) and its baselines.

rMTFL decomposes the weight matrix ``W = P + Q`` (d features x m tasks) and solves (Eq. 2)

    min_{P, Q}  sum_i 1/(m n_i) ||X_i^T (p_i + q_i) - y_i||^2
                + lambda1 ||P||_{1,2} + lambda2 ||Q^T||_{1,2}

``||P||_{1,2}`` sums the L2 norms of the *rows* of P (features shared by all tasks), and
``||Q^T||_{1,2}`` sums the L2 norms of the *columns* of Q (tasks that go their own way: the
outlier tasks). The solver is the shared accelerated proximal gradient routine
(:mod:`explorer.solvers.proximal_gradient`, Eq. 5-8) in its monotone variant **MFISTA**
(the objective never increases), with closed-form row / column group soft-thresholding
(Eq. 6-7) and backtracking that doubles the step constant from a lower bound of the Lipschitz
constant. Per-task gradients come from :class:`explorer.solvers.multitask_least_squares.
StackedTasks`, so tasks may have different ``n_i`` and no (dm x dm) matrix is formed.

Default regularisation. The paper's rule (Eq. 16, ``lambda ~ sqrt(d m) / sum n_i``) reaches
``lambda_max`` near ``n_i = 200`` and then zeroes everything, so the default here is relative
to the closed-form ``lambda_max`` of each penalty (the smallest value for which P = 0, resp.
Q = 0, is optimal): ``lambda1 = 0.2 * lambda_max(P)`` and
``lambda2 = 1.15 * sqrt(d / m) * lambda1`` (:data:`DEFAULT_FRACTIONS`, :data:`DEFAULT_RATIO`).
The ratio is what decides the outliers. Derivation (from the KKT conditions, not in the
paper): at the optimum every row of the loss gradient G has norm <= lambda1, so a typical
entry is ~ lambda1 / sqrt(m) and a non-outlier task's gradient column has norm ~
lambda1 sqrt(d / m); Q's column stays zero when that is <= lambda2. Measured on the
Section 6.1 setting (m=30, d=200, 10 outliers): the useful window of lambda2 / lambda1 is
narrow (about 2.7-3.2 at n=20), hence a ratio tied to sqrt(d / m) rather than a fraction
of lambda_max(Q).

Baselines on the same solver (one routine, different proximal operators): ridge, lasso
(L1), L2,1 ("MTFL", Q = 0), the column-group model (P = 0), trace-norm regression, RMTL
(Chen, Zhou & Ye 2011: low-rank L + column-sparse S, singular-value thresholding) and
:class:`TwoStageRMTFL`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..data.validation import check_scalar
from ..solvers.multitask_least_squares import StackedTasks
from ..solvers.proximal_gradient import proximal_gradient_steps
from ..solvers.proximal_operators import (
    column_norms,
    prox_columns,
    prox_l1,
    prox_rows,
    prox_trace,
    row_norms,
)
from .base import ConvergenceMonitor, MultiTaskEstimator, Snapshot

__all__ = [
    "DEFAULT_FRACTIONS",
    "DEFAULT_RATIO",
    "RobustMTFL",
    "TwoStageRMTFL",
    "MultiTaskRidge",
    "MultiTaskLassoL1",
    "L21MTFL",
    "ColumnGroupMTL",
    "TraceNormMTL",
    "RMTL",
]

#: Default lambda as a fraction of the closed-form lambda_max of each penalty.
DEFAULT_FRACTIONS = {"lambda1": 0.2, "lam": 0.1}
#: Default lambda2 / lambda1 in units of sqrt(d / m) (see the module docstring).
DEFAULT_RATIO = 1.15


class _StackedProxMTL(MultiTaskEstimator):
    """Least squares on stacked tasks plus a penalty with a cheap prox.

    The unknown is ``k`` blocks of shape (d, m) stored side by side, ``x = [B_1 | ... | B_k]``,
    and ``W = B_1 + ... + B_k``. Subclasses set ``_blocks`` and ``_block_names`` and implement
    ``_lambdas(data)`` (resolved penalties), ``_prox_blocks`` and ``_penalty_blocks``.
    """

    _blocks = 1
    _block_names: tuple[str, ...] = ("W",)

    def _check_common(self) -> None:
        check_scalar(self.max_iter, "max_iter", kind=int, low=1)
        check_scalar(self.tol, "tol", low=0)

    def _lam(self, value, name: str, lam_max: float) -> float:
        if isinstance(value, str):
            if value != "auto":
                raise ValueError(f"{name} must be a number >= 0 or 'auto'; got {value!r}.")
            return DEFAULT_FRACTIONS.get(name, 0.1) * lam_max
        check_scalar(value, name, low=0)
        return float(value)

    def _lambdas(self, data: StackedTasks) -> tuple[float, ...]:
        raise NotImplementedError

    def _prox_blocks(self, blocks, step, lams):
        raise NotImplementedError

    def _penalty_blocks(self, blocks, lams) -> float:
        raise NotImplementedError

    def _fit_steps(self, X, y, task) -> Iterator[Snapshot]:
        self._check_common()
        m, d, k = self.n_tasks_, self.n_features_in_, self._blocks
        data = StackedTasks(X, y, task, m, normalize=bool(self.normalize),
                            center=bool(self.fit_intercept))
        self._data = data
        lams = self._lambdas(data)

        def split(x):
            return [x[:, b * m:(b + 1) * m] for b in range(k)]

        def total(x):
            return x[:, :m] if k == 1 else sum(split(x))

        def smooth(x):
            val, G = data.value_grad(total(x))
            return val, (G if k == 1 else np.tile(G, (1, k)))

        def value(x):
            return data.value(total(x))

        def prox(v, step):
            return np.hstack(self._prox_blocks(split(v), step, lams)) if k > 1 else \
                self._prox_blocks(split(v), step, lams)[0]

        def penalty(x):
            return self._penalty_blocks(split(x), lams)

        x0 = np.zeros((d, k * m))
        previous = getattr(self, "_solution_", None)
        if getattr(self, "warm_start", False) and previous is not None \
                and previous.shape == x0.shape:
            x0 = previous.copy()
        lipschitz = max(data.lipschitz_lower_bound(), 1e-12)
        monitor = ConvergenceMonitor(type(self).__name__, tol=float(self.tol),
                                     max_iter=int(self.max_iter))
        for step in proximal_gradient_steps(x0, smooth, prox, penalty, lipschitz=lipschitz,
                                            smooth_value=value):
            monitor.record(step.objective,
                           change=step.relative_change if step.iteration > 1 else None)
            self._store(step.x, split, total)
            yield self._snapshot(step)
            if monitor.done:
                break
        monitor.finish(self)

    def _store(self, x, split, total) -> None:
        self._solution_ = x.copy()
        data = self._data
        self.coef_, self.intercept_ = data.to_user_scale(total(x))
        for name, block in zip(self._block_names, split(x), strict=True):
            if name != "W":
                setattr(self, name + "_", block / data.scale)

    def _snapshot(self, step) -> Snapshot:
        matrices = {name: getattr(self, name + "_").copy() for name in self._block_names
                    if name != "W"}
        matrices["W"] = self.coef_.copy()
        return Snapshot(step=step.iteration, objective=step.objective, matrices=matrices,
                        info={"lipschitz": step.lipschitz,
                              "relative_change": step.relative_change})

    def objective(self) -> float:
        """Objective (Eq. 2 for rMTFL) of the current solution on the normalised data."""
        check_is_fitted(self, "_solution_")
        return float(self.objective_history_[-1])

    def predict(self, X, task) -> np.ndarray:
        """``x^T w_t + b_t`` for each row, shape (n_samples,)."""
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "coef_")
        return np.einsum("ij,ji->i", X, self.coef_[:, task]) + self.intercept_[task]


class RobustMTFL(_StackedProxMTL):
    """Robust multi-task feature learning, ``W = P + Q`` (Gong, Ye & Zhang 2012, Eq. 2).

    Solved by MFISTA (monotone FISTA, Eq. 5-8) with row / column group soft-thresholding.

    Parameters
    ----------
    lambda1 : float >= 0 or "auto"
        Weight of ``||P||_{1,2}`` (row sparsity: shared features). "auto" =
        ``0.2 * lambda_max(P)``.
    lambda2 : float >= 0 or "auto"
        Weight of ``||Q^T||_{1,2}`` (column sparsity: outlier tasks). "auto" =
        ``1.15 * sqrt(d / m) * lambda1``.
    max_iter : int
    tol : float
        Stop when the relative objective change < tol.
    normalize : bool
        Scale every feature of every task to unit norm (Eq. 1); coefficients are mapped back.
    fit_intercept : bool
        Centre each task (unpenalised per-task intercepts).
    warm_start : bool
        Start from the previous solution (paths, live slider refits).

    Attributes
    ----------
    coef_ : ndarray (d, m)         W on the user's scale
    P_, Q_ : ndarray (d, m)        the two parts, on the user's scale
    intercept_ : ndarray (m,)
    shared_features_ : ndarray of int     indices of the nonzero rows of P
    outlier_scores_ : ndarray (m,)        column norms of Q on the normalised scale
    outlier_tasks_ : ndarray of int       indices of the nonzero columns of Q
    lambda1_, lambda2_ : resolved penalties;  lambda_max_ : dict {"lambda1", "lambda2"}
    objective_history_, n_iter_, converged_
    """

    _blocks = 2
    _block_names = ("P", "Q")

    def __init__(self, *, lambda1="auto", lambda2="auto", max_iter: int = 1000,
                 tol: float = 1e-5, normalize: bool = True, fit_intercept: bool = True,
                 warm_start: bool = False):
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.max_iter = max_iter
        self.tol = tol
        self.normalize = normalize
        self.fit_intercept = fit_intercept
        self.warm_start = warm_start

    def _lambdas(self, data):
        self.lambda_max_ = {"lambda1": data.lambda_max_rows(),
                            "lambda2": data.lambda_max_columns()}
        self.lambda1_ = self._lam(self.lambda1, "lambda1", self.lambda_max_["lambda1"])
        if isinstance(self.lambda2, str) and self.lambda2 == "auto":
            self.lambda2_ = DEFAULT_RATIO * np.sqrt(data.d / data.m) * self.lambda1_
        else:
            self.lambda2_ = self._lam(self.lambda2, "lambda2", self.lambda_max_["lambda2"])
        return self.lambda1_, self.lambda2_

    def _prox_blocks(self, blocks, step, lams):
        P, Q = blocks
        return [prox_rows(P, step, lams[0]), prox_columns(Q, step, lams[1])]

    def _penalty_blocks(self, blocks, lams):
        P, Q = blocks
        return lams[0] * float(row_norms(P).sum()) + lams[1] * float(column_norms(Q).sum())

    def _store(self, x, split, total):
        super()._store(x, split, total)
        P, Q = split(x)
        self.shared_features_ = np.flatnonzero(row_norms(P) > 0)
        self.outlier_scores_ = column_norms(Q)
        self.outlier_tasks_ = np.flatnonzero(self.outlier_scores_ > 0)

    def _snapshot(self, step):
        snap = super()._snapshot(step)
        snap.info.update(outlier_scores=self.outlier_scores_.copy(),
                         outlier_tasks=self.outlier_tasks_.copy(),
                         shared_features=self.shared_features_.copy())
        return snap

    def lambda_max(self, X, y, task) -> dict[str, float]:
        """Closed-form smallest lambda1 (P = 0) and lambda2 (Q = 0), on the normalised data."""
        X, y, task = self._validate_fit_data(X, y, task)
        data = StackedTasks(X, y, task, self.n_tasks_, normalize=bool(self.normalize),
                            center=bool(self.fit_intercept))
        return {"lambda1": data.lambda_max_rows(), "lambda2": data.lambda_max_columns()}

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"P", "Q", "W": (d, m) on the user's scale, "outlier_scores": (m,)}`` (DESIGN.md)."""
        check_is_fitted(self, "coef_")
        return {"P": self.P_.copy(), "Q": self.Q_.copy(), "W": self.coef_.copy(),
                "outlier_scores": self.outlier_scores_.copy()}


class _SinglePenaltyMTL(_StackedProxMTL):
    """One block W with penalty ``lam * g(W)``; ``lam`` 'auto' = 0.1 lambda_max."""

    def __init__(self, *, lam="auto", max_iter: int = 1000, tol: float = 1e-5,
                 normalize: bool = True, fit_intercept: bool = True, warm_start: bool = False):
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol
        self.normalize = normalize
        self.fit_intercept = fit_intercept
        self.warm_start = warm_start

    def _lam_max(self, data) -> float:
        raise NotImplementedError

    def _lambdas(self, data):
        self.lambda_max_ = self._lam_max(data)
        self.lam_ = self._lam(self.lam, "lam", self.lambda_max_)
        return (self.lam_,)


class MultiTaskRidge(_SinglePenaltyMTL):
    """Per-task ridge, ``lam ||W||_F^2`` ('auto' = 0.1 x the largest gradient entry at 0)."""

    def _lam_max(self, data):
        return data.lambda_max_l1()

    def _prox_blocks(self, blocks, step, lams):
        return [blocks[0] / (1.0 + 2.0 * step * lams[0])]

    def _penalty_blocks(self, blocks, lams):
        return lams[0] * float(np.sum(blocks[0] ** 2))


class MultiTaskLassoL1(_SinglePenaltyMTL):
    """Per-task lasso, ``lam ||W||_1``."""

    def _lam_max(self, data):
        return data.lambda_max_l1()

    def _prox_blocks(self, blocks, step, lams):
        return [prox_l1(blocks[0], step, lams[0])]

    def _penalty_blocks(self, blocks, lams):
        return lams[0] * float(np.abs(blocks[0]).sum())


class L21MTFL(_SinglePenaltyMTL):
    """Multi-task feature learning, ``lam ||W||_{1,2}`` (rows; rMTFL with Q = 0)."""

    def _lam_max(self, data):
        return data.lambda_max_rows()

    def _prox_blocks(self, blocks, step, lams):
        return [prox_rows(blocks[0], step, lams[0])]

    def _penalty_blocks(self, blocks, lams):
        return lams[0] * float(row_norms(blocks[0]).sum())


class ColumnGroupMTL(_SinglePenaltyMTL):
    """Column-group model, ``lam ||W^T||_{1,2}`` (rMTFL with P = 0)."""

    def _lam_max(self, data):
        return data.lambda_max_columns()

    def _prox_blocks(self, blocks, step, lams):
        return [prox_columns(blocks[0], step, lams[0])]

    def _penalty_blocks(self, blocks, lams):
        return lams[0] * float(column_norms(blocks[0]).sum())


class TraceNormMTL(_SinglePenaltyMTL):
    """Trace-norm regression, ``lam ||W||_*`` (singular-value thresholding)."""

    def _lam_max(self, data):
        return float(np.linalg.norm(data.grad_at_zero(), 2))

    def _prox_blocks(self, blocks, step, lams):
        return [prox_trace(blocks[0], step, lams[0])]

    def _penalty_blocks(self, blocks, lams):
        return lams[0] * float(np.linalg.svd(blocks[0], compute_uv=False).sum())


class RMTL(RobustMTFL):
    """Robust MTL (Chen, Zhou & Ye 2011): ``W = L + S``, penalty
    ``lambda1 ||L||_* + lambda2 ||S^T||_{1,2}``.

    Same parameters as :class:`RobustMTFL`; ``P_`` holds the low-rank part L, ``Q_`` the
    column-sparse part S. 'auto' lambda1 uses the spectral norm of the gradient at 0.
    """

    def _lambdas(self, data):
        self.lambda_max_ = {"lambda1": float(np.linalg.norm(data.grad_at_zero(), 2)),
                            "lambda2": data.lambda_max_columns()}
        self.lambda1_ = self._lam(self.lambda1, "lambda1", self.lambda_max_["lambda1"])
        self.lambda2_ = self._lam(self.lambda2, "lambda2", self.lambda_max_["lambda2"])
        return self.lambda1_, self.lambda2_

    def _prox_blocks(self, blocks, step, lams):
        L, S = blocks
        return [prox_trace(L, step, lams[0]), prox_columns(S, step, lams[1])]

    def _penalty_blocks(self, blocks, lams):
        L, S = blocks
        return lams[0] * float(np.linalg.svd(L, compute_uv=False).sum()) + \
            lams[1] * float(column_norms(S).sum())


class TwoStageRMTFL(MultiTaskEstimator):
    """2S-rMTFL: fit rMTFL, drop the detected outlier tasks, refit L2,1 on the rest.

    Outlier tasks keep rMTFL's weights; the others get the L2,1 refit (``lam`` 'auto' =
    0.1 lambda_max of the refit data).

    Attributes
    ----------
    rmtfl_ : RobustMTFL;  refit_ : L21MTFL or None;  outlier_tasks_, coef_, intercept_
    """

    def __init__(self, *, lambda1="auto", lambda2="auto", lam="auto", max_iter: int = 1000,
                 tol: float = 1e-5, normalize: bool = True, fit_intercept: bool = True):
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol
        self.normalize = normalize
        self.fit_intercept = fit_intercept

    def _fit_steps(self, X, y, task) -> Iterator[Snapshot]:
        common = dict(max_iter=self.max_iter, tol=self.tol, normalize=self.normalize,
                      fit_intercept=self.fit_intercept)
        first = RobustMTFL(lambda1=self.lambda1, lambda2=self.lambda2, **common)
        yield from first.fit_iter(X, y, task)
        self.rmtfl_ = first
        self.outlier_tasks_ = first.outlier_tasks_.copy()
        self.coef_ = first.coef_.copy()
        self.intercept_ = first.intercept_.copy()
        keep = np.setdiff1d(np.arange(self.n_tasks_), self.outlier_tasks_)
        self.refit_ = None
        if keep.size:
            rows = np.isin(task, keep)
            remap = np.full(self.n_tasks_, -1)
            remap[keep] = np.arange(keep.size)
            refit = L21MTFL(lam=self.lam, **common)
            yield from refit.fit_iter(X[rows], y[rows], remap[task[rows]])
            self.refit_ = refit
            self.coef_[:, keep] = refit.coef_
            self.intercept_[keep] = refit.intercept_
        self.n_iter_ = first.n_iter_ + (self.refit_.n_iter_ if self.refit_ else 0)
        self.converged_ = first.converged_ and (self.refit_ is None or self.refit_.converged_)

    def predict(self, X, task) -> np.ndarray:
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "coef_")
        return np.einsum("ij,ji->i", X, self.coef_[:, task]) + self.intercept_[task]
