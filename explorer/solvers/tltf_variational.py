"""Variational EM of TL-TF (Yan & Zhang, IJCAI 2009), vectorised across tasks.

The generative model (the paper's Eqs. 1-2), for task k with examples ``x_i`` (rows of X,
with any intercept / appended columns already in them), labels ``y_i`` in {-1, +1} and gate
input ``u_k = [1, t_k]``::

    s_k ~ Multinomial(softmax(Gamma^T u_k)),  gamma_1 = 0
    theta_k | s_k = h ~ N(lambda_h, Psi)
    p(y_i | x_i, theta_k) = sigma(y_i theta_k^T x_i)

Variational posterior ``q(s_k) q(theta_k) = Mult(phi_k) N(m_k, V_k)``; the logistic
likelihood is bounded by Jaakkola & Jordan (1997) with one ``xi_i`` per example::

    log sigma(z) >= log sigma(xi) + (z - xi) / 2 - lambda(xi) (z^2 - xi^2),
    lambda(xi) = tanh(xi / 2) / (4 xi)

so that the per-task bound is (everything exact, no dropped constants)::

    L_k = sum_h phi_kh log p_kh                                   (gate)
          - 1/2 log|Psi| - 1/2 tr(Psi^-1 V_k) - 1/2 sum_h phi_kh (m_k - lambda_h)^T Psi^-1
            (m_k - lambda_h) + F/2 + 1/2 log|V_k|                 (prior + entropy of theta)
          + sum_i [log sigma(xi_i) + (y_i m_k^T x_i - xi_i) / 2
                   - lambda(xi_i) (x_i^T (V_k + m_k m_k^T) x_i - xi_i^2)]
          - sum_h phi_kh log phi_kh                               (entropy of s)

Each E-step block below maximises it exactly with the others fixed (derived from the bound,
not copied from the printed equations, which have errors; see :mod:`explorer.models.tltf`):

* ``xi_i = sqrt(x_i^T (V_k + m_k m_k^T) x_i)``                           (Eq. 3)
* ``V_k^-1 = Psi^-1 + 2 sum_i lambda(xi_i) x_i x_i^T``                   (Eq. 4, corrected)
* ``m_k = V_k (1/2 sum_i y_i x_i + Psi^-1 Lambda phi_k)``                 (Eq. 5)
* ``phi_kh ∝ p_kh exp(-1/2 (m_k - lambda_h)^T Psi^-1 (m_k - lambda_h))`` (Eq. 6)

and the M-step (Eq. 7, Gamma an *argmax*, with a ridge): ``lambda_h`` the phi-weighted mean of
the ``m_k``, ``Psi = 1/K sum_k (V_k + sum_h phi_kh (m_k - lambda_h)(m_k - lambda_h)^T)`` (or its
isotropic version ``tr/F I``), and Gamma by a phi-weighted multinomial logistic regression
with penalty ``gamma_l2 / 2 ||Gamma||^2`` solved by Newton's method.

Per-task blocks are stacked: examples sorted by task, per-task F x F matrices as (K, F, F)
arrays with batched Cholesky factorisations. The per-row work (xi, the weighted Gram sums of
Eq. 4, the likelihood part of the bound) runs in compiled kernels that stream over the rows
once (:mod:`explorer.solvers._tltf_kernels`), with no (N, F, F) temporaries. The cost of one
E-step sweep is O(N F^2 + K F^3): linear in the number of tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import log_expit, log_softmax, softmax

__all__ = [
    "StackedLogisticTasks",
    "VariationalState",
    "jj_lambda",
    "gate_log_prob",
    "update_xi",
    "update_posterior",
    "update_phi",
    "task_bounds",
    "e_step",
    "m_step",
    "fit_gate",
    "per_task_ridge_logistic",
    "em_objective",
    "warm_up",
]


@dataclass(frozen=True)
class StackedLogisticTasks:
    """Examples sorted by task with per-task offsets.

    Attributes
    ----------
    X : ndarray (N, F)        rows sorted by task
    y : ndarray (N,)          labels in {-1, +1}
    task : ndarray (N,)       task of each row, non-decreasing, every task 0..K-1 present
    starts : ndarray (K,)     first row of each task
    n_tasks : int
    half_yx : ndarray (K, F)  ``1/2 sum_i y_i x_i`` per task (constant through the fit)
    """

    X: np.ndarray
    y: np.ndarray
    task: np.ndarray
    starts: np.ndarray
    n_tasks: int
    half_yx: np.ndarray

    @classmethod
    def build(cls, X: np.ndarray, y_pm: np.ndarray, task: np.ndarray,
              n_tasks: int) -> tuple[StackedLogisticTasks, np.ndarray]:
        """Sort by task; returns the stacked tasks and the sorting order of the rows."""
        order = np.argsort(task, kind="stable")
        Xs, ys, ts = X[order], y_pm[order].astype(np.float64), task[order]
        counts = np.bincount(ts, minlength=n_tasks)
        if np.any(counts == 0):
            raise ValueError("every task needs at least one example.")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        half_yx = 0.5 * np.add.reduceat(ys[:, None] * Xs, starts, axis=0)
        return cls(Xs, ys, ts, starts, n_tasks, half_yx), order

    def per_task_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of per-row ``values`` (N, ...) within each task -> (K, ...)."""
        return np.add.reduceat(values, self.starts, axis=0)

    def weighted_gram(self, weight: np.ndarray) -> np.ndarray:
        """``sum_{i in task k} weight_i x_i x_i^T`` for every task, shape (K, F, F)."""
        from ._tltf_kernels import weighted_gram

        return weighted_gram(_floats(self.X), self.starts.astype(np.int64),
                             _floats(weight))


def _floats(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


@dataclass(frozen=True)
class VariationalState:
    """Variational parameters (per task) and model parameters Omega = (Lambda, Gamma, Psi).

    Shapes: ``xi`` (N,), ``m`` (K, F), ``V`` (K, F, F), ``logdet_V`` (K,), ``phi`` (K, H),
    ``Lambda`` (F, H), ``Gamma`` (P + 1, H) with column 0 zero, ``Psi`` (F, F).
    """

    xi: np.ndarray
    m: np.ndarray
    V: np.ndarray
    logdet_V: np.ndarray
    phi: np.ndarray
    Lambda: np.ndarray
    Gamma: np.ndarray
    Psi: np.ndarray


def jj_lambda(xi: np.ndarray) -> np.ndarray:
    """Jaakkola-Jordan ``lambda(xi) = tanh(xi/2) / (4 xi)`` (1/8 at 0), elementwise.

    >>> float(jj_lambda(np.array([0.0]))[0])
    0.125
    """
    xi = np.abs(np.asarray(xi, dtype=np.float64))
    small = xi < 1e-6
    safe = np.where(small, 1.0, xi)
    return np.where(small, 0.125 - xi * xi / 96.0, np.tanh(safe / 2.0) / (4.0 * safe))


def gate_log_prob(U: np.ndarray, Gamma: np.ndarray) -> np.ndarray:
    """``log softmax(U Gamma)`` row by row, shape (K, H) (zeros' log 1 = 0 when H = 1)."""
    return log_softmax(U @ Gamma, axis=1)


def _second_moment(m: np.ndarray, V: np.ndarray) -> np.ndarray:
    return V + m[:, :, None] * m[:, None, :]


def update_xi(data: StackedLogisticTasks, m: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Eq. 3: ``xi_i = sqrt(x_i^T (V_k + m_k m_k^T) x_i)``, shape (N,)."""
    from ._tltf_kernels import xi_from_moments

    return xi_from_moments(_floats(data.X), data.starts.astype(np.int64),
                           _second_moment(m, V))


def _psi_inverse(Psi: np.ndarray) -> np.ndarray:
    L = np.linalg.cholesky(Psi)
    inv_L = np.linalg.inv(L)
    return inv_L.T @ inv_L


def update_posterior(data: StackedLogisticTasks, xi: np.ndarray, phi: np.ndarray,
                     Lambda: np.ndarray, Psi_inv: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eqs. 4-5 (corrected): the joint maximiser (m, V) given xi and phi.

    Returns ``m`` (K, F), ``V`` (K, F, F) and ``log|V_k|`` (K,).
    """
    weight = 2.0 * jj_lambda(xi)
    precision = Psi_inv[None] + data.weighted_gram(weight)
    chol = np.linalg.cholesky(precision)
    eye = np.broadcast_to(np.eye(Psi_inv.shape[0]), precision.shape)
    inv_chol = np.linalg.solve(chol, eye)
    V = np.swapaxes(inv_chol, 1, 2) @ inv_chol
    V = 0.5 * (V + np.swapaxes(V, 1, 2))
    rhs = data.half_yx + (phi @ Lambda.T) @ Psi_inv
    m = np.einsum("kfg,kg->kf", V, rhs)
    logdet_V = -2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
    return m, V, logdet_V


def _mahalanobis(m: np.ndarray, Lambda: np.ndarray, Psi_inv: np.ndarray) -> np.ndarray:
    """``(m_k - lambda_h)^T Psi^-1 (m_k - lambda_h)``, shape (K, H)."""
    diff = m[:, None, :] - Lambda.T[None, :, :]
    return np.einsum("khf,fg,khg->kh", diff, Psi_inv, diff)


def update_phi(m: np.ndarray, Lambda: np.ndarray, Psi_inv: np.ndarray,
               log_prior: np.ndarray) -> np.ndarray:
    """Eq. 6: ``phi_kh ∝ p_kh exp(-1/2 (m_k - lambda_h)^T Psi^-1 (m_k - lambda_h))``."""
    return softmax(log_prior - 0.5 * _mahalanobis(m, Lambda, Psi_inv), axis=1)


def task_bounds(data: StackedLogisticTasks, state: VariationalState,
                log_prior: np.ndarray) -> np.ndarray:
    """The variational lower bound of each task's log marginal likelihood, shape (K,)."""
    return _bounds_and_next_xi(data, state, log_prior)[0]


def _bounds_and_next_xi(data: StackedLogisticTasks, state: VariationalState,
                        log_prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`task_bounds` and, from the same quadratic forms, :func:`update_xi` at the
    state's (m, V) (the next sweep's first block)."""
    from ._tltf_kernels import likelihood_bounds

    F = state.m.shape[1]
    Psi_inv = _psi_inverse(state.Psi)
    _, logdet_Psi = np.linalg.slogdet(state.Psi)
    xi, m, V, phi = state.xi, state.m, state.V, state.phi
    next_xi = np.empty(data.X.shape[0])
    likelihood = likelihood_bounds(_floats(data.X), _floats(data.y), data.starts.astype(np.int64),
                                   _floats(xi), _floats(m), _second_moment(m, V), next_xi)
    safe_phi = np.where(phi > 0, phi, 1.0)
    gate = np.sum(phi * log_prior, axis=1) - np.sum(phi * np.log(safe_phi), axis=1)
    trace = np.einsum("fg,kgf->k", Psi_inv, V)
    prior = (-0.5 * logdet_Psi - 0.5 * trace
             - 0.5 * np.sum(phi * _mahalanobis(m, state.Lambda, Psi_inv), axis=1)
             + 0.5 * F + 0.5 * state.logdet_V)
    return likelihood + gate + prior, next_xi


def e_step(data: StackedLogisticTasks, state: VariationalState, log_prior: np.ndarray, *,
           max_sweeps: int = 50, tol: float = 1e-10) -> tuple[VariationalState, int]:
    """Algorithm 1, step 2, for every task at once: sweeps of xi, (V, m), phi until the
    bound's relative change is below ``tol``. Returns the new state and the sweeps run."""
    Psi_inv = _psi_inverse(state.Psi)
    previous = -np.inf
    sweeps = 0
    xi = update_xi(data, state.m, state.V)
    for sweeps in range(1, max_sweeps + 1):  # noqa: B007 -- the count is returned
        m, V, logdet_V = update_posterior(data, xi, state.phi, state.Lambda, Psi_inv)
        phi = update_phi(m, state.Lambda, Psi_inv, log_prior)
        state = replace(state, xi=xi, m=m, V=V, logdet_V=logdet_V, phi=phi)
        bounds, xi = _bounds_and_next_xi(data, state, log_prior)
        bound = float(bounds.sum())
        if abs(bound - previous) <= tol * max(abs(bound), 1.0):
            break
        previous = bound
    return state, sweeps


def _gate_objective(U, phi, free, l2):
    H = phi.shape[1]
    Gamma = np.zeros((U.shape[1], H))
    Gamma[:, 1:] = free
    logp = log_softmax(U @ Gamma, axis=1)
    value = float(np.sum(phi * logp)) - 0.5 * l2 * float(np.sum(free * free))
    return value, np.exp(logp)


def fit_gate(U: np.ndarray, phi: np.ndarray, Gamma: np.ndarray, gamma_l2: float, *,
             max_iter: int = 50, tol: float = 1e-10) -> np.ndarray:
    """Eq. 7 for Gamma (an argmax): maximise ``sum_k sum_h phi_kh log p_kh(Gamma) -
    gamma_l2/2 ||Gamma||^2`` over Gamma (P + 1, H) with column 0 fixed at 0, by Newton's
    method with backtracking, from ``Gamma``. The value never decreases from the start."""
    H = phi.shape[1]
    if H == 1:
        return np.zeros_like(Gamma)
    P1 = U.shape[1]
    free = Gamma[:, 1:].copy()
    value, prob = _gate_objective(U, phi, free, gamma_l2)
    ridge = max(gamma_l2, 1e-12)
    for _ in range(max_iter):
        # gradient and Hessian of the concave objective in the free columns (H - 1 classes)
        resid = phi[:, 1:] - prob[:, 1:]
        grad = U.T @ resid - gamma_l2 * free                       # (P1, H-1)
        p = prob[:, 1:]
        A = np.einsum("ka,ab->kab", p, np.eye(H - 1)) - p[:, :, None] * p[:, None, :]
        hess = np.einsum("kab,ki,kj->aibj", A, U, U).reshape((H - 1) * P1, (H - 1) * P1)
        hess += ridge * np.eye(hess.shape[0])
        g = grad.T.reshape(-1)
        step = np.linalg.solve(hess, g).reshape(H - 1, P1).T
        decrement = float(g @ step.T.reshape(-1))
        if decrement <= tol * max(1.0, abs(value)):
            break
        t = 1.0
        while t > 1e-10:
            candidate = free + t * step
            new_value, new_prob = _gate_objective(U, phi, candidate, gamma_l2)
            if new_value >= value:
                break
            t *= 0.5
        else:
            break
        free, value, prob = candidate, new_value, new_prob
    out = np.zeros_like(Gamma)
    out[:, 1:] = free
    return out


def m_step(state: VariationalState, U: np.ndarray, *, covariance: str, gamma_l2: float
           ) -> VariationalState:
    """Eq. 7: Lambda (phi-weighted means of m), Psi (full or isotropic), Gamma (argmax)."""
    m, V, phi = state.m, state.V, state.phi
    K, F = m.shape
    weight = phi.sum(axis=0)
    Lambda = state.Lambda.copy()
    used = weight > 1e-12 * K          # an empty cluster keeps its centre
    Lambda[:, used] = (m.T @ phi[:, used]) / weight[used]
    diff = m[:, None, :] - Lambda.T[None, :, :]                      # (K, H, F)
    scatter = np.einsum("kh,khf,khg->fg", phi, diff, diff)
    Psi = (V.sum(axis=0) + scatter) / K
    Psi = 0.5 * (Psi + Psi.T)
    if covariance == "isotropic":
        Psi = np.trace(Psi) / F * np.eye(F)
    Gamma = fit_gate(U, phi, state.Gamma, gamma_l2)
    return replace(state, Lambda=Lambda, Psi=Psi, Gamma=Gamma)


def em_objective(data: StackedLogisticTasks, state: VariationalState, U: np.ndarray,
                 gamma_l2: float) -> tuple[float, float]:
    """``(bound - gamma_l2/2 ||Gamma||^2, bound)``: the maximised objective and the plain
    variational lower bound of log p(y | Omega, X, t)."""
    bound = float(task_bounds(data, state, gate_log_prob(U, state.Gamma)).sum())
    return bound - 0.5 * gamma_l2 * float(np.sum(state.Gamma ** 2)), bound


def per_task_ridge_logistic(data: StackedLogisticTasks, l2: float = 1.0, *,
                            n_newton: int = 25) -> np.ndarray:
    """Per-task ridge-penalised logistic regressions, all tasks at once by batched Newton:
    ``min_theta sum_i log(1 + exp(-y_i theta^T x_i)) + l2/2 ||theta||^2``; shape (K, F)."""
    K, F = data.n_tasks, data.X.shape[1]
    theta = np.zeros((K, F))
    eye = np.eye(F)
    for _ in range(n_newton):
        z = np.einsum("nf,nf->n", data.X, theta[data.task])
        s = np.exp(log_expit(-data.y * z))                   # sigma(-y z)
        grad = -data.per_task_sum((data.y * s)[:, None] * data.X) + l2 * theta
        w = s * (1.0 - s)
        hess = data.weighted_gram(w)
        step = np.linalg.solve(hess + l2 * eye, grad[:, :, None])[:, :, 0]
        theta = theta - step
        if np.max(np.abs(step)) < 1e-10:
            break
    return theta


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels on a tiny problem."""
    X = np.array([[1.0, 0.5], [0.2, 1.0], [0.3, 1.0]])
    data, _ = StackedLogisticTasks.build(X, np.array([1.0, -1.0, 1.0]), np.array([0, 1, 1]), 2)
    state = VariationalState(xi=np.ones(3), m=np.zeros((2, 2)), V=np.stack([np.eye(2)] * 2),
                             logdet_V=np.zeros(2), phi=np.ones((2, 1)), Lambda=np.zeros((2, 1)),
                             Gamma=np.zeros((1, 1)), Psi=np.eye(2))
    e_step(data, state, np.zeros((2, 1)), max_sweeps=1)
    per_task_ridge_logistic(data, n_newton=1)
