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
from scipy.linalg.lapack import dsyevd
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
    "task_curvature",
    "task_gradient",
    "task_losses",
    "task_row_scale",
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
    m = B.shape[0]
    shifted = B + B.T                      # symmetric to the last bit, whatever B's round-off
    shifted.reshape(-1)[::m + 1] += 2.0 * ridge    # the diagonal (a view: shifted is new)
    values, vectors = _eigh(shifted)
    root = np.sqrt(numerical_eigenvalues(values))
    total = root.sum()
    if total <= 0.0:
        return np.eye(m) / m
    omega = (vectors * (root / total)) @ vectors.T
    omega += omega.T
    omega *= 0.5
    return omega


def _eigh(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.linalg.eigh(A)`` for a small symmetric A: the LAPACK routine NumPy's ``eigh``
    calls (``dsyevd``, lower triangle) through SciPy's direct binding, which costs a third
    of NumPy's checks and wrapping on the (m, m) matrices of an inner step (the same
    values: tests/test_mtboost.py compares the fits with those stored before)."""
    values, vectors, info = dsyevd(A, compute_v=1, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"Eigenvalues did not converge (dsyevd info={info}).")
    return values, vectors


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
