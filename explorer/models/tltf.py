"""`TLTF`: transfer learning with task-level features (Yan & Zhang, IJCAI 2009).

Each task k is a logistic regression whose weights come from one of H clusters, chosen by a
softmax gate on the task's own features ``t_k`` (the paper's Eqs. 1-2)::

    s_k ~ Multinomial(softmax(Gamma^T [1, t_k])),  gamma_1 = 0
    theta_k = Lambda s_k + e_k,  e_k ~ N(0, Psi)
    y_i ~ Bernoulli(sigma(theta_k^T x_i))

Omega = (Lambda, Gamma, Psi) is fitted by empirical Bayes: variational EM (Algorithm 1) on
the lower bound of ``log p(y | Omega, X, t)`` with q(s_k) q(theta_k) = Mult(phi_k) N(m_k, V_k)
and the Jaakkola-Jordan bound of the logistic likelihood. The numerics are in
:mod:`explorer.solvers.tltf_variational` (every task's E-step at once, stacked arrays).
A task seen in training predicts with its posterior mean ``m_k``; a *new* task, from its task
features alone, with the paper's MAP shortcut ``p(y | x) = sum_h p_h sigma(lambda_h^T x)``.

Baselines are settings of the same class, so every variant shares one code path:
TL-SC = ``n_clusters=1``; TL-MC = ``gate="constant"`` (the gate is its bias column only);
TL-Comb = ``gate="append"`` (task features appended to the data features, constant gate).
STL is ``PerTaskEstimator(estimator=LogisticRegression())``.

Where this implementation deviates from the printed paper (derived from the model;
tests/test_tltf.py checks the resulting bound and updates against independent references,
notebook 06 shows each printed error with numbers):

1. **Labels in {-1, +1}.** The paper writes ``y in {0, 1}``, but the Jaakkola-Jordan bound
   ``log sigma(z) >= log sigma(xi) + (z - xi)/2 - lambda(xi)(z^2 - xi^2)`` holds for
   ``z = y theta^T x`` with ``y = +-1``; with 0/1 labels the term ``1/2 sum y_i x_i`` of
   Eq. 5 is wrong. With centred features it keeps the direction of the logistic fit
   (cosine >= 0.998) but shrinks the posterior mean, the more the stronger the fit: 0.27-0.37x
   its length with true weights (1, -2, 0.5), 0.40-0.45x / 0.26-0.35x / 0.15-0.23x with
   random true weights of length 1 / 2.3 / 4.6 (one task of 400 centred normal examples in
   3-D, a weak prior Psi = 100 I, seeds 0-11 each, the 0/1-label E-step's mean projected on
   scikit-learn's fit; ``benchmarks/measure_tltf_label_shrink.py``): rankings survive,
   probabilities do not. With non-centred features it is far off.
2. **Eq. 4 uses lambda(xi) = tanh(xi/2) / (4 xi)** (the paper's ``-h(xi)``), not the logistic
   g(xi): ``V^-1 = Psi^-1 + 2 sum_i lambda(xi_i) x_i x_i^T``. As printed (``Psi^-1 - 2 sum
   g(xi_i) x_i x_i^T``) the precision is indefinite.
3. **Gamma is an argmax** (Eq. 7 prints argmin) of the phi-weighted multinomial
   log-likelihood, with a ridge ``gamma_l2/2 ||Gamma||^2`` (with separable task features the
   unpenalised maximiser is at infinity), and the gate input is ``[1, t_k]`` (a bias column,
   so that a constant gate is the special case TL-MC). Task features are standardised
   (mean 0, variance 1 over the training tasks) before the gate sees them. The objective EM
   maximises, stored in ``objective_history_``, is therefore the variational bound minus that
   ridge (the bound of ``log p(y, Gamma)`` under a Gaussian prior on Gamma, up to a
   constant); it never decreases.
4. **Initialisation.** ``init="paper"`` is the paper's (Psi = I, Gamma and Lambda uniform in
   [0, 1]). It usually reaches the optimum k-means reaches, but not always: on 30
   clustered tasks (3 clusters, 30 examples each, seeds 0-7) it matched k-means' bound
   and clusters in 5 of 8 starts and stopped at a lower bound with the clusters partly
   merged (ARI 0.5-0.81) in 3 (an independent audit: the same bound and zero-shot AP on 10
   seeds, ARI < 0.9 in 3 of 16 starts of notebook 06's protocol). ``init="kmeans"``
   (default) fits a ridge-logistic regression per task, runs k-means on those weight
   vectors for Lambda and the first phi, with Psi = I and Gamma = 0: it found the clusters
   in all 8 starts.
5. **An intercept** (``fit_intercept=True``): a constant column appended to X, so its weight
   is part of theta and shares the hierarchical prior (the paper has none; non-centred
   features need one).

With few examples per task the variational bound prefers a small Psi (a known bias of the
bound: the true marginal likelihood peaks near the true Psi). Psi-hat is not an estimate of
Psi at small n.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from scipy.special import expit, softmax
from sklearn.cluster import KMeans
from sklearn.utils.validation import check_is_fitted

from ..data.validation import check_multitask
from ..solvers.tltf_variational import (
    StackedLogisticTasks,
    VariationalState,
    e_step,
    em_objective,
    gate_log_prob,
    m_step,
    per_task_ridge_logistic,
)
from .base import ConvergenceMonitor, LazyMapping, MultiTaskEstimator, Snapshot, n_tasks_of
from .constraints import BOOLEAN, COUNT, NON_NEGATIVE, RANDOM_STATE, Options

__all__ = ["TLTF", "AdaptedTask"]

#: EM iterations each start runs before the best of ``n_init`` starts is kept.
SCREEN_ITER = 5


@dataclass(frozen=True)
class AdaptedTask:
    """A new task's posterior after one E-step on a few labelled examples
    (:meth:`TLTF.adapt_new_task`).

    Attributes
    ----------
    coef : ndarray (F,)      posterior mean m of theta (the model's augmented feature space)
    covariance : ndarray (F, F)
    phi : ndarray (H,)       posterior cluster responsibilities
    prior : ndarray (H,)     the gate's p_h from the task features alone
    classes : ndarray (2,)
    """

    coef: np.ndarray
    covariance: np.ndarray
    phi: np.ndarray
    prior: np.ndarray
    classes: np.ndarray
    _augment: object = field(repr=False)

    def decision_function(self, X) -> np.ndarray:
        """``m^T x`` for each row of X (n, d), shape (n,)."""
        return self._augment(X) @ self.coef

    def predict_proba(self, X) -> np.ndarray:
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        return self.classes[(self.decision_function(X) > 0).astype(int)]


class TLTF(MultiTaskEstimator):
    """TL-TF: logistic tasks from H clusters chosen by a gate on task features.

    Parameters
    ----------
    n_clusters : int >= 1
        H, the number of task clusters (columns of Lambda and Gamma).
    covariance : {"full", "isotropic"}
        Psi full, or ``tau^2 I`` with ``tau^2 = tr(Psi-hat) / F``.
    gate : {"task_features", "constant", "append"}
        "task_features": TL-TF; "constant": TL-MC (the gate ignores the task features);
        "append": TL-Comb (task features appended to each example's data features, constant
        gate). Fitted without task features, every gate is constant (``gate_`` says which
        was used).
    init : {"kmeans", "paper"}
        See deviation 4 in the module docstring.
    n_init : int >= 1
        Starts (different random draws); each runs ``SCREEN_ITER`` EM iterations and the one
        with the best objective is run to convergence (its snapshots start at step 1).
    gamma_l2 : float >= 0
        Ridge on Gamma (deviation 3).
    fit_intercept : bool
        Deviation 5.
    max_iter : int
        EM iterations.
    tol : float
        Stop when the relative change of the objective falls below ``tol`` (the paper's
        1e-5).
    random_state : None, int or Generator

    Attributes
    ----------
    classes_ : ndarray (2,)                labels; the second is the "+1" class
    Lambda_ : ndarray (F, H)               cluster centres in the augmented feature space
        (the d data features, then the q task features with ``gate="append"``, then the
        intercept)
    Gamma_ : ndarray (P + 1, H)            gate weights on ``[1, standardised t]``, column 0 zero
    Psi_ : ndarray (F, F)
    phi_ : ndarray (m, H)                  posterior responsibilities of the training tasks
    posterior_mean_ : ndarray (m, F), posterior_cov_ : ndarray (m, F, F)
    coef_ : ndarray (d, m), intercept_ : ndarray (m,)   posterior means, data part
    gate_ : str                            the gate used
    bound_ : float                         the final variational lower bound (no ridge)
    n_iter_, converged_, objective_history_

    Snapshots (one per EM iteration) carry ``matrices`` phi, Lambda, Gamma, similarity and
    ``info`` Psi, psi_scale (``tr(Psi)/F``), bound, computed only when read.
    """

    _estimator_type = "classifier"
    uses_task_features = True
    supports_new_tasks = True
    _parameter_constraints = {
        "n_clusters": [COUNT],
        "covariance": [Options("full", "isotropic")],
        "gate": [Options("task_features", "constant", "append")],
        "init": [Options("kmeans", "paper")],
        "n_init": [COUNT],
        "gamma_l2": [NON_NEGATIVE],
        "fit_intercept": [BOOLEAN],
        "max_iter": [COUNT],
        "tol": [NON_NEGATIVE],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, n_clusters: int = 3, covariance: str = "full",
                 gate: str = "task_features", init: str = "kmeans", n_init: int = 1,
                 gamma_l2: float = 0.01, fit_intercept: bool = True, max_iter: int = 500,
                 tol: float = 1e-5, random_state=None):
        self.n_clusters = n_clusters
        self.covariance = covariance
        self.gate = gate
        self.init = init
        self.n_init = n_init
        self.gamma_l2 = gamma_l2
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _check_clusters(self, n_tasks: int) -> None:
        """The data-dependent limit of ``n_clusters`` (its constraint is declared)."""
        if self.n_clusters > n_tasks:
            raise ValueError(f"n_clusters must be <= the number of tasks ({n_tasks}); got "
                             f"{self.n_clusters}.")

    # ------------------------------------------------------------------ features
    def _gate_input(self, standardised: np.ndarray | None, n: int) -> np.ndarray:
        return _Config(self.gate_, self.fit_intercept).gate_input(standardised, n)

    def _augment_rows(self, X: np.ndarray, tf_rows: np.ndarray | None) -> np.ndarray:
        return _Config(self.gate_, self.fit_intercept).augment(X, tf_rows)

    def _standardise(self, task_features) -> np.ndarray | None:
        if task_features is None:
            return None
        return (task_features - self.task_feature_mean_) / self.task_feature_scale_

    # ------------------------------------------------------------------ fitting
    def _fit_steps(self, X, y, task, task_features=None) -> Iterator[Snapshot]:
        m = n_tasks_of(task)
        self._check_clusters(m)
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(f"TLTF needs the same two classes in every task (one model of "
                             f"theta for all tasks); got {classes.size} labels overall "
                             f"({classes.tolist()[:6]}).")
        y_pm = np.where(y == classes[1], 1.0, -1.0)           # deviation 1: {-1, +1}
        gate = self.gate if task_features is not None else "constant"
        # fitted attributes are set together at the end; these locals configure the helpers
        mean = scale = None
        tf_std = None
        if task_features is not None:
            mean = task_features.mean(axis=0)
            scale = task_features.std(axis=0)
            scale = np.where(scale > 0, scale, 1.0)
            tf_std = (task_features - mean) / scale
        helper = _Config(gate, self.fit_intercept)
        U = helper.gate_input(tf_std, m)
        Xa = helper.augment(X, None if tf_std is None else tf_std[task])
        data, _ = StackedLogisticTasks.build(Xa, y_pm, task, m)
        rng = self._rng()
        starts = [self._initial_state(data, U, rng) for _ in range(int(self.n_init))]
        if len(starts) > 1:
            scores = [self._screen(data, U, s) for s in starts]
            start = starts[int(np.argmax(scores))]
        else:
            start = starts[0]
        monitor = ConvergenceMonitor(type(self).__name__, tol=float(self.tol),
                                     max_iter=int(self.max_iter))
        state = start
        bound = -math.inf
        for iteration in range(1, int(self.max_iter) + 1):
            state, bound = self._em_iteration(data, U, state)
            objective = bound - 0.5 * self.gamma_l2 * float(np.sum(state.Gamma ** 2))
            monitor.record(objective)
            yield Snapshot(step=iteration, objective=objective,
                           matrices=LazyMapping(partial(_relationships, state)),
                           info=LazyMapping(partial(_info, state, bound)))
            if monitor.done:
                break
        self.classes_ = classes
        self.gate_ = gate
        self.task_feature_mean_, self.task_feature_scale_ = mean, scale
        self.n_task_features_ = 0 if task_features is None else task_features.shape[1]
        self.training_task_features_ = tf_std
        self.Lambda_, self.Gamma_, self.Psi_ = state.Lambda, state.Gamma, state.Psi
        self.phi_ = state.phi
        self.posterior_mean_, self.posterior_cov_ = state.m, state.V
        d = X.shape[1]
        self.coef_ = state.m[:, :d].T.copy()
        self.intercept_ = (state.m[:, -1].copy() if self.fit_intercept else np.zeros(m))
        self.bound_ = bound
        monitor.finish(self)

    def _em_iteration(self, data, U, state) -> tuple[VariationalState, float]:
        state, _ = e_step(data, state, gate_log_prob(U, state.Gamma))
        state = m_step(state, U, covariance=self.covariance, gamma_l2=float(self.gamma_l2))
        try:
            np.linalg.cholesky(state.Psi)
        except np.linalg.LinAlgError:
            from .base import FitDivergedError

            raise FitDivergedError(
                "TLTF: Psi became singular in the M-step (the tasks' posteriors collapsed "
                "onto the cluster centres). Use covariance='isotropic', fewer clusters or "
                "more examples per task.") from None
        _, bound = em_objective(data, state, U, float(self.gamma_l2))
        return state, bound

    def _screen(self, data, U, state) -> float:
        for _ in range(SCREEN_ITER):
            state, bound = self._em_iteration(data, U, state)
        return bound - 0.5 * self.gamma_l2 * float(np.sum(state.Gamma ** 2))

    def _initial_state(self, data: StackedLogisticTasks, U: np.ndarray,
                       rng: np.random.Generator) -> VariationalState:
        K, F = data.n_tasks, data.X.shape[1]
        H = int(self.n_clusters)
        Psi = np.eye(F)
        if self.init == "paper":
            Lambda = rng.uniform(0.0, 1.0, size=(F, H))
            Gamma = rng.uniform(0.0, 1.0, size=(U.shape[1], H))
            Gamma[:, 0] = 0.0
            phi = softmax(U @ Gamma, axis=1)
            m = phi @ Lambda.T
        else:
            m = per_task_ridge_logistic(data, l2=1.0)
            if H == 1:
                labels = np.zeros(K, dtype=int)
                Lambda = m.mean(axis=0)[:, None]
            else:
                km = KMeans(n_clusters=H, n_init=4,
                            random_state=int(rng.integers(2**31 - 1))).fit(m)
                labels, Lambda = km.labels_, km.cluster_centers_.T.copy()
            Gamma = np.zeros((U.shape[1], H))
            phi = np.eye(H)[labels]
        V = np.broadcast_to(Psi, (K, F, F)).copy()
        return VariationalState(xi=np.zeros(data.X.shape[0]), m=m, V=V,
                                logdet_V=np.zeros(K), phi=phi, Lambda=Lambda, Gamma=Gamma,
                                Psi=Psi)

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X, task) -> np.ndarray:
        """``m_k^T x`` with task k's posterior mean, shape (n_samples,)."""
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "posterior_mean_")
        tf = (None if self.training_task_features_ is None
              else self.training_task_features_[task])
        Xa = self._augment_rows(X, tf)
        return np.einsum("nf,nf->n", Xa, self.posterior_mean_[task])

    def predict_proba(self, X, task) -> np.ndarray:
        """Shape (n_samples, 2): probabilities of ``classes_[0]`` and ``classes_[1]``."""
        p = expit(self.decision_function(X, task))
        return np.column_stack([1.0 - p, p])

    def predict(self, X, task) -> np.ndarray:
        positive = self.decision_function(X, task) > 0
        return self.classes_[positive.astype(int)]

    def _check_new_task(self, X, task_features) -> tuple[np.ndarray, np.ndarray | None]:
        check_is_fitted(self, "posterior_mean_")
        rows = np.shape(X)[0] if np.ndim(X) >= 1 else 0   # one task: every row is task 0
        X, _, _ = check_multitask(X, None, np.zeros(rows, dtype=int),
                                  n_features=self.n_features_in_, who="TLTF")
        q = self.n_task_features_
        if q == 0:
            if task_features is not None:
                raise ValueError("TLTF was fitted without task features; call "
                                 "predict_new_task(X, None).")
            return X, None
        tf = np.asarray(task_features, dtype=np.float64) if task_features is not None else None
        if tf is None or tf.shape != (q,) or not np.all(np.isfinite(tf)):
            raise ValueError(f"task_features must be a finite array of shape ({q},) (the new "
                             f"task's features); got "
                             f"{None if tf is None else tf.shape}.")
        return X, self._standardise(tf[None, :])

    def gate_probabilities(self, task_features) -> np.ndarray:
        """The gate's p_h for tasks with these features: (q,) -> (H,), (n, q) -> (n, H)."""
        check_is_fitted(self, "Gamma_")
        tf = None if task_features is None else np.asarray(task_features, dtype=np.float64)
        single = tf is None or tf.ndim == 1
        rows = 1 if tf is None else (1 if tf.ndim == 1 else tf.shape[0])
        std = None if tf is None or self.n_task_features_ == 0 else \
            self._standardise(np.atleast_2d(tf))
        p = np.exp(gate_log_prob(self._gate_input(std, rows), self.Gamma_))
        return p[0] if single else p

    def predict_proba_new_task(self, X, task_features) -> np.ndarray:
        """Zero-shot: ``p(y|x) = sum_h p_h sigma(lambda_h^T x)`` with p_h from the task's
        features alone (the paper's MAP shortcut); shape (n_samples, 2)."""
        X, std = self._check_new_task(X, task_features)
        p_h = np.exp(gate_log_prob(self._gate_input(std, 1), self.Gamma_))[0]
        Xa = self._augment_rows(X, None if std is None else np.repeat(std, X.shape[0], 0))
        p = expit(Xa @ self.Lambda_) @ p_h
        return np.column_stack([1.0 - p, p])

    def predict_new_task(self, X, task_features) -> np.ndarray:
        positive = self.predict_proba_new_task(X, task_features)[:, 1] > 0.5
        return self.classes_[positive.astype(int)]

    def adapt_new_task(self, X, y, task_features, *, max_sweeps: int = 100) -> AdaptedTask:
        """A new task's posterior from a few labelled examples: the E-step (Algorithm 1,
        step 2) for that task alone with the fitted Omega."""
        X, std = self._check_new_task(X, task_features)
        y = np.asarray(y)
        if y.shape != (X.shape[0],) or not np.all(np.isin(y, self.classes_)):
            raise ValueError(f"y must have shape ({X.shape[0]},) with labels among "
                             f"{self.classes_.tolist()}.")
        Xa = self._augment_rows(X, None if std is None else np.repeat(std, X.shape[0], 0))
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        data, _ = StackedLogisticTasks.build(Xa, y_pm, np.zeros(X.shape[0], dtype=int), 1)
        log_prior = gate_log_prob(self._gate_input(std, 1), self.Gamma_)
        prior = np.exp(log_prior)
        F = Xa.shape[1]
        state = VariationalState(
            xi=np.zeros(X.shape[0]), m=prior @ self.Lambda_.T, V=self.Psi_[None].copy(),
            logdet_V=np.zeros(1), phi=prior, Lambda=self.Lambda_, Gamma=self.Gamma_,
            Psi=self.Psi_)
        state, _ = e_step(data, state, log_prior, max_sweeps=max_sweeps)
        augment = partial(_augment_new, self.gate_, self.fit_intercept,
                          None if std is None else std[0], self.n_features_in_)
        assert state.m.shape == (1, F)
        return AdaptedTask(coef=state.m[0], covariance=state.V[0], phi=state.phi[0],
                           prior=prior[0], classes=self.classes_, _augment=augment)

    # ------------------------------------------------------------------ relationships
    def task_relationships(self) -> dict[str, np.ndarray]:
        """``phi`` (m, H), ``Lambda`` (F, H), ``Gamma`` (P + 1, H), ``similarity`` = phi phi^T
        (m, m): the probability that two tasks share a cluster under q."""
        check_is_fitted(self, "phi_")
        return _relationships(_fitted_state(self))

    def n_parameters(self) -> int:
        """Free parameters of Omega: Lambda, Gamma (column 0 fixed), Psi."""
        check_is_fitted(self, "Lambda_")
        F, H = self.Lambda_.shape
        psi = F * (F + 1) // 2 if self.covariance == "full" else 1
        return F * H + self.Gamma_.shape[0] * (H - 1) + psi

    def select_n_clusters(self, X, y, task, *, task_features=None,
                          candidates: Iterable[int] = range(1, 7), criterion: str = "bic"
                          ) -> dict:
        """Choose H by BIC (or AIC) with n = the number of tasks (the tasks are the draws
        of the hierarchical model): ``-2 bound + n_parameters log(n_tasks)``.

        Returns ``{"n_clusters": best H, "scores": {H: score}, "estimator": fitted best}``.
        """
        if criterion not in ("bic", "aic"):
            raise ValueError(f"criterion must be 'bic' or 'aic'; got {criterion!r}.")
        from sklearn.base import clone

        scores, fitted = {}, {}
        for H in candidates:
            model = clone(self).set_params(n_clusters=int(H))
            model.fit(X, y, task, task_features=task_features)
            penalty = math.log(model.n_tasks_) if criterion == "bic" else 2.0
            scores[int(H)] = -2.0 * model.bound_ + penalty * model.n_parameters()
            fitted[int(H)] = model
        best = min(scores, key=scores.get)
        return {"n_clusters": best, "scores": scores, "estimator": fitted[best]}


@dataclass(frozen=True)
class _Config:
    """The gate input ``[1, t]`` (or ``[1]``) and the augmented data features
    ``[x, t (append gate), 1 (intercept)]`` of one gate setting."""

    gate: str
    fit_intercept: bool

    def gate_input(self, standardised, n):
        if self.gate != "task_features":
            return np.ones((n, 1))
        return np.column_stack([np.ones(n), standardised])

    def augment(self, X, tf_rows):
        parts = [X]
        if self.gate == "append":
            parts.append(tf_rows)
        if self.fit_intercept:
            parts.append(np.ones((X.shape[0], 1)))
        return np.column_stack(parts) if len(parts) > 1 else X


def _augment_new(gate, fit_intercept, std, d, X):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"X must have shape (n, {d}); got {X.shape}.")
    tf_rows = None if std is None else np.repeat(std[None, :], X.shape[0], 0)
    return _Config(gate, fit_intercept).augment(X, tf_rows)


def _fitted_state(model: TLTF) -> VariationalState:
    """The fitted model's parameters as a :class:`VariationalState` (for the relationships)."""
    K, F = model.posterior_mean_.shape
    return VariationalState(xi=np.zeros(0), m=model.posterior_mean_, V=model.posterior_cov_,
                            logdet_V=np.zeros(K), phi=model.phi_, Lambda=model.Lambda_,
                            Gamma=model.Gamma_, Psi=model.Psi_)


def _relationships(state: VariationalState) -> dict[str, np.ndarray]:
    phi = state.phi
    return {"phi": phi.copy(), "Lambda": state.Lambda.copy(), "Gamma": state.Gamma.copy(),
            "similarity": phi @ phi.T}


def _info(state: VariationalState, bound: float) -> dict:
    F = state.Psi.shape[0]
    return {"Psi": state.Psi.copy(), "psi_scale": float(np.trace(state.Psi) / F),
            "bound": float(bound)}

