"""Numerics of multi-task boosting (Zhang & Yeung, ECML PKDD 2012) and MTRL (UAI 2010).

Pure functions on arrays; the estimators in :mod:`explorer.models.mtboost` call them.
Notation (one boosting round t, m tasks, n stacked rows, ``task`` the row's task):

* margin cost ``c(z) = ln(1 + exp(-z))``, ``c'(z) = -1 / (1 + exp(z))``, ``0 < c'' <= 1/4``;
* ``row_scale`` r_j: the row's share of its task, ``r_j = s_j / sum_{k in task} s_k`` (``1/n_i``
  with unit sample weights), so ``C_i(F) = sum_{j in i} r_j c(y_j F(x_j))`` is task i's *mean*
  loss;
* ``beta_i = <grad C_i(F), f> = sum_{j in i} r_j y_j f(x_j) c'(y_j F(x_j))`` (Eq. 11's beta_t
  per mean loss);
* ``D_i = 1/4 sum_{j in i} r_j f(x_j)^2``, the curvature bound of ``C_i`` along ``f``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit

__all__ = [
    "armijo_step",
    "correlation_from_covariance",
    "gradient_rows",
    "gradient_statistics",
    "ls_svm_fit",
    "mm_task_weights",
    "numerical_eigenvalues",
    "omega_update",
    "paper_task_weights",
    "smoothing_ridge",
    "step_statistics",
    "supertask_rows",
    "task_curvature",
    "task_gradient",
    "task_losses",
    "task_row_scale",
    "warm_up",
]


_EPS = float(np.finfo(float).eps)


def task_row_scale(task: np.ndarray, n_tasks: int, sample_weight: np.ndarray | None = None
                   ) -> np.ndarray:
    """``r_j = s_j / sum_{k in task(j)} s_k``, shape (n,): each task's rows sum to 1."""
    weight = np.ones(task.shape[0]) if sample_weight is None else np.asarray(sample_weight,
                                                                             float)
    totals = np.bincount(task, weights=weight, minlength=n_tasks)
    return weight / totals[task]


def task_losses(margin: np.ndarray, y: np.ndarray, task: np.ndarray, row_scale: np.ndarray,
                n_tasks: int) -> np.ndarray:
    """Per-task mean logistic loss ``C_i = sum_j r_j ln(1 + exp(-y_j F_j))``, shape (m,)."""
    return np.bincount(task, weights=-row_scale * log_expit(y * margin), minlength=n_tasks)


def gradient_statistics(margin: np.ndarray, y: np.ndarray, task: np.ndarray,
                        row_scale: np.ndarray, f: np.ndarray, n_tasks: int
                        ) -> tuple[np.ndarray, np.ndarray]:
    """``(beta, D)``, each (m,): the functional gradient of ``C_i`` along ``f`` and its
    curvature bound ``1/4 sum r_j f_j^2`` (``c'' <= 1/4``)."""
    slope = gradient_rows(margin, y, row_scale)
    return task_gradient(slope, task, f, n_tasks), task_curvature(row_scale, task, f, n_tasks)


def gradient_rows(margin: np.ndarray, y: np.ndarray, row_scale: np.ndarray) -> np.ndarray:
    """``r_j y_j c'(y_j F_j)`` per row, shape (n,): fixed within a round (F does not move),
    so the inner steps reuse it."""
    return -row_scale * y * expit(-y * margin)


def task_gradient(slope: np.ndarray, task: np.ndarray, f: np.ndarray, n_tasks: int
                  ) -> np.ndarray:
    """``beta_i = sum_{j in i} r_j y_j f_j c'(y_j F_j)`` from :func:`gradient_rows`, (m,)."""
    return np.bincount(task, weights=slope * f, minlength=n_tasks)


def task_curvature(row_scale: np.ndarray, task: np.ndarray, f: np.ndarray, n_tasks: int
                   ) -> np.ndarray:
    """``D_i = 1/4 sum_{j in i} r_j f_j^2``, (m,)."""
    return 0.25 * np.bincount(task, weights=row_scale * f * f, minlength=n_tasks)


def supertask_rows(w: np.ndarray, task: np.ndarray, slope_rows: np.ndarray,
                   target: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One inner step's supertask for task weights ``w`` (m,): per row (n,) the instance
    weight ``|w_t| / max|w| * slope_rows``, whether the task's weight is negative, the +-1
    ``target`` negated there, and the instance weights normalised to sum 1 (NumPy's sum: with
    one task the weights are AnyBoost's bit for bit). ``w`` must have a non-zero entry. The
    rows come from one compiled pass (NumPy took seven calls)."""
    from ._mtboost_kernels import supertask_rows as compiled

    instance, flipped, signed = compiled(w, task, slope_rows, target)
    return instance, flipped, signed, instance / instance.sum()


def smoothing_ridge(B: np.ndarray, delta: float) -> float:
    """``eps = delta * tr(B) / m``: the ridge the corrected Omega update adds to ``B``."""
    return float(delta) * float(B.trace()) / B.shape[0]


def omega_update(B: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """``Omega = (B + ridge I)^{1/2} / tr((B + ridge I)^{1/2})`` (Eq. 10 when ridge = 0).

    The minimiser of ``tr(Omega^{-1} (B + ridge I))`` over ``Omega >= 0, tr(Omega) = 1``
    (the Cauchy-Schwarz argument of Section 2.2). ``B`` must be symmetric PSD (m, m); a zero
    ``B`` gives ``I / m`` (every Omega is optimal; the uniform one is the neutral choice).

    >>> np.round(omega_update(np.diag([4.0, 1.0])), 4)
    array([[0.6667, 0.    ],
           [0.    , 0.3333]])
    """
    from ._mtboost_kernels import omega_from_gram

    return omega_from_gram(np.asarray(B, dtype=np.float64), float(ridge))


def step_statistics(gradient: np.ndarray, task: np.ndarray, f: np.ndarray,
                    committed: np.ndarray, w: np.ndarray, smoothing: float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An inner step's numbers after its fit ``f`` (n,), in one compiled call (NumPy took a
    dozen calls of ~1 us each on (m,) and (m, m) arrays): ``beta =`` :func:`task_gradient`
    (m,), ``B = committed + w w^T`` (m, m) and ``omega_update(B, smoothing_ridge(B,
    smoothing))`` (m, m)."""
    from ._mtboost_kernels import step_statistics as compiled

    return compiled(gradient, task, f, committed, w, float(smoothing))


def numerical_eigenvalues(values: np.ndarray) -> np.ndarray:
    """Ascending eigenvalues (as ``eigh`` returns them) of a PSD matrix with those at
    round-off level (below
    ``m * machine eps * largest``) set to 0, as a numerical rank does.

    Without it the square root of Eq. (10) lifts round-off (1e-16) to 1e-8, and that seed
    grows round after round: the rank-1 collapse of the printed update, exact in exact
    arithmetic, would dissolve through noise alone.
    """
    cut = values.shape[0] * _EPS * max(values[-1], 0.0)    # eigh sorts ascending
    return np.where(values > cut, values, 0.0)


def correlation_from_covariance(omega: np.ndarray) -> np.ndarray:
    """``Omega_ij / sqrt(Omega_ii Omega_jj)`` (m, m); rows of a zero variance give 0, the
    diagonal of a positive variance 1."""
    scale = np.sqrt(np.clip(np.diag(omega), 0.0, None))
    safe = np.where(scale > 0, scale, 1.0)
    corr = omega / np.outer(safe, safe)
    corr[scale == 0, :] = 0.0
    corr[:, scale == 0] = 0.0
    diagonal = np.where(scale > 0, 1.0, 0.0)
    np.fill_diagonal(corr, diagonal)
    return np.clip(corr, -1.0, 1.0)


def paper_task_weights(omega: np.ndarray, beta: np.ndarray, lam: float) -> np.ndarray:
    """Eq. (12): ``w = -(1/lam) Omega beta``, the minimiser of the linearised Eq. (11)."""
    return -(omega @ beta) / lam


def mm_task_weights(omega: np.ndarray, beta: np.ndarray, curvature: np.ndarray,
                    lam: float) -> np.ndarray:
    """Majorise-minimise step ``w = -(lam I + Omega D)^{-1} Omega beta``.

    Minimises the quadratic upper bound ``w.beta + 1/2 w^T D w + lam/2 w^T Omega^+ w`` of
    Eq. (4) in ``w`` (``c'' <= 1/4`` gives ``C_i(F + w_i f) <= C_i(F) + w_i beta_i +
    1/2 D_i w_i^2``); for it ``sum C(F + w f) <= sum C(F) + 1/2 w.beta`` and ``w.beta <= 0``.
    """
    m = omega.shape[0]
    return -np.linalg.solve(lam * np.eye(m) + omega * curvature[None, :], omega @ beta)


def armijo_step(loss_at, loss0: float, slope: float, *, sigma: float = 1e-4,
                max_halvings: int = 40) -> tuple[float, float, int]:
    """Backtracking on a scalar step ``s = 1, 1/2, ...`` until
    ``loss_at(s) <= loss0 + sigma * s * slope`` (``slope = w.beta <= 0``).

    Returns ``(s, loss_at(s), halvings)``; ``s = 0`` (and ``loss0``) when no step of the
    schedule decreases enough, or when ``slope >= 0`` (no descent direction).
    """
    if not slope < 0.0:
        return 0.0, float(loss0), 0
    step = 1.0
    for halvings in range(max_halvings + 1):
        value = float(loss_at(step))
        if value <= loss0 + sigma * step * slope:
            return step, value, halvings
        step *= 0.5
    return 0.0, float(loss0), max_halvings


def ls_svm_fit(X: np.ndarray, target: np.ndarray, weight: np.ndarray, ridge: float
               ) -> tuple[np.ndarray, float]:
    """Weighted linear least-squares SVM in closed form: ``(coef (d,), intercept)`` of

        min_{a, b}  sum_j weight_j (target_j - x_j a - b)^2 + ridge ||a||^2

    (the intercept is not penalised). ``weight`` is non-negative with a positive sum; it is
    normalised to sum 1 first, so ``ridge`` is on the scale of one unit of weight.
    """
    weight = weight / weight.sum()
    mean_x = weight @ X
    mean_t = float(weight @ target)
    centred = X - mean_x
    weighted = centred * weight[:, None]
    gram = centred.T @ weighted
    gram.flat[::gram.shape[0] + 1] += ridge
    coef = np.linalg.solve(gram, weighted.T @ (target - mean_t))
    return coef, mean_t - float(mean_x @ coef)


def warm_up() -> None:
    """Compile (or load from numba's cache) the inner step's kernels on a tiny problem."""
    task = np.array([0, 1, 1])
    w = np.array([0.5, -1.0])
    rows = np.array([1.0, 0.5, 0.25])
    supertask_rows(w, task, rows, np.array([1.0, -1.0, 1.0]))
    step_statistics(rows, task, rows, np.eye(2), w, 0.1)
    omega_update(np.eye(2))
