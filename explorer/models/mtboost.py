"""MTBoost (Zhang & Yeung, ECML PKDD 2012) and its baseline AnyBoost (MTRL: :mod:`.mtrl`).

The numerics (Omega update, step rules, weighted LS-SVM) live in
:mod:`explorer.solvers.mtboost`; this module holds the estimators and the base learners.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, RegressorMixin, clone, is_classifier
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from ..solvers.mtboost import (
    armijo_step,
    correlation_from_covariance,
    gradient_rows,
    ls_svm_fit,
    mm_task_weights,
    numerical_eigenvalues,
    omega_update,
    paper_task_weights,
    step_statistics,
    supertask_rows,
    task_curvature,
    task_gradient,
    task_losses,
    task_row_scale,
)
from .base import (
    LazyMapping,
    MultiTaskEstimator,
    Snapshot,
    binary_targets,
    labels_from_margin,
    n_tasks_of,
)
from .constraints import (
    BOOLEAN,
    COUNT,
    NON_NEGATIVE,
    POSITIVE,
    RANDOM_STATE,
    InstanceOf,
    Options,
)

__all__ = ["AnyBoost", "MTBoost", "WeightedLSSVM"]

LS_SVM_RIDGE = 1e-2


class WeightedLSSVM(RegressorMixin, BaseEstimator):
    """Linear least-squares SVM with example weights, in closed form (the paper's base learner).

    ``min_{a, b} sum_j s_j (y_j - x_j a - b)^2 + ridge ||a||^2`` with ``s`` normalised to sum
    1 (see :func:`explorer.solvers.mtboost.ls_svm_fit`). Real-valued output.

    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> model = WeightedLSSVM(ridge=1e-12).fit(X, 2 * X[:, 0] - 1)
    >>> np.round(model.predict(X), 6)
    array([-1.,  1.,  3.,  5.])
    """

    def __init__(self, *, ridge: float = LS_SVM_RIDGE):
        self.ridge = ridge

    def fit(self, X, y, sample_weight=None):
        X, y = np.asarray(X, float), np.asarray(y, float)
        weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        self.coef_, self.intercept_ = ls_svm_fit(X, y, weight, float(self.ridge))
        return self

    def predict(self, X):
        return np.asarray(X, float) @ self.coef_ + self.intercept_


def _weighted_fit(estimator) -> bool:
    return has_fit_parameter(estimator, "sample_weight")


#: ``base_learner`` of MTBoost and AnyBoost.
BASE_LEARNER = [Options("ls_svm", "stump", "tree"),
                InstanceOf(BaseEstimator, check=_weighted_fit,
                           description="a scikit-learn estimator whose fit accepts "
                                       "sample_weight")]


def _make_base(base_learner, seed: int):
    """A fresh unfitted base learner for the string names or a clone of an estimator
    (``base_learner`` validated: see :data:`BASE_LEARNER`)."""
    if base_learner == "ls_svm":
        return WeightedLSSVM()
    if base_learner in ("stump", "tree"):
        return DecisionTreeClassifier(max_depth=1 if base_learner == "stump" else 3,
                                      random_state=seed)
    learner = clone(base_learner)
    if "random_state" in learner.get_params() and learner.get_params()["random_state"] is None:
        learner.set_params(random_state=seed)
    return learner


def _fit_base(base_learner, seed: int, X: np.ndarray, target: np.ndarray,
              weight: np.ndarray):
    """Fit a base learner to +-1 targets with weights summing to 1; (learner, f on X)."""
    learner = _make_base(base_learner, seed)
    if isinstance(learner, WeightedLSSVM):
        learner.fit(X, target, sample_weight=weight)
    else:   # scikit-learn estimators expect weights of average 1
        learner.fit(X, target, sample_weight=weight * X.shape[0])
    return learner, _output(learner, X)


def _output(learner, X: np.ndarray) -> np.ndarray:
    """Real output of a regressor; +-1 of a classifier (the paper's f in {-1, 1})."""
    if isinstance(learner, WeightedLSSVM):      # the hot path: no tag lookup
        return X @ learner.coef_ + learner.intercept_
    out = np.asarray(learner.predict(X), dtype=float)
    if is_classifier(learner):
        return np.where(out > 0, 1.0, -1.0)
    return out


class _BoostingClassifier(MultiTaskEstimator):
    """Prediction shared by MTBoost and AnyBoost: ``F_i(x) = sum_t W[t, i] f_t^i(x)``."""

    _estimator_type = "classifier"
    accepts_sample_weight = True

    _parameter_constraints = {
        "base_learner": BASE_LEARNER,
        "lam": [POSITIVE],
        "n_rounds": [COUNT],
        "eps": [NON_NEGATIVE],
        "step": [Options("armijo", "mm", "plain")],
        "random_state": RANDOM_STATE,
    }

    def _refuse_non_finite(self, total: float, round_number: int) -> None:
        """A raw step (``step="plain"``) at too small a ``lam`` can overflow the margins."""
        if not np.isfinite(total):
            raise ValueError(f"{type(self).__name__}: the training loss became {total} in "
                             f"round {round_number}; use a larger lam or step='armijo'.")

    @property
    def estimators_(self) -> list:
        """The fitted base learners (kept privately: fitted scikit-learn trees do not compare
        with ``==``, and the contract compares fitted state through predictions instead)."""
        check_is_fitted(self, "weights_")
        return self._learners

    def _learner_outputs(self, X: np.ndarray, task: np.ndarray) -> np.ndarray:
        """(n, T) outputs of each round's learner for each row's task."""
        raise NotImplementedError

    def decision_function(self, X, task) -> np.ndarray:
        """Margins ``F_i(x)`` for each row's task, shape (n_samples,)."""
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "weights_")
        outputs = self._learner_outputs(X, task)
        return np.einsum("nt,tn->n", outputs, self.weights_[:, task])

    def predict(self, X, task) -> np.ndarray:
        return labels_from_margin(self.decision_function(X, task), task, self.classes_)

    def predict_proba(self, X, task) -> np.ndarray:
        """(n, 2): probabilities of ``classes_[t][0]`` and ``classes_[t][1]`` (logistic)."""
        p = expit(self.decision_function(X, task))
        return np.column_stack([1.0 - p, p])


class MTBoost(_BoostingClassifier):
    """Multi-task boosting with a learned task covariance (Table 1 of Zhang & Yeung 2012).

    All tasks share the base learners ``f_t``; task i weighs them with its own ``W[t, i]``.
    Round t solves Eq. (4) approximately,

        min_{w^t, Omega, f_t}  sum_i C_i(F_i^{t-1} + w_it f_t)
                               + lam/2 tr(W_t Omega^{-1} W_t^T),  Omega >= 0, tr Omega = 1,

    by ``n_inner`` alternations (``Q_1``): fit ``f_t`` to the *supertask* (all tasks' rows,
    labels ``sign(w_it) y``, instance weights ``|w_it| r_j |c'(y F_i)|``, Eq. 7-8); update
    Omega by Eq. (10) on ``B = W_t^T W_t`` (``W_t`` the rounds' weights so far plus the
    current ``w^t``); update ``w^t`` by Eq. (12) (``step="mm"``: the majorise-minimise
    weights instead). ``w^t`` starts from a draw ``N(0, Omega)``. Then ``F_i += s w_it f_t``.

    Two errors of the paper, and what this class does about them
    ------------------------------------------------------------
    1. **Eq. (10) collapses Omega to rank 1 in the first round.** With one row in ``W_t``,
       ``Omega = w w^T / ||w||^2``; Eq. (12) keeps ``w`` in its span and the next draw
       ``N(0, Omega)`` does too, so every task's weights stay proportional to the random
       first draw: correlations +-1 with random signs. ``variant="corrected"`` smooths:
       ``Omega = (B + eps I)^{1/2} / tr(.)``, ``eps = smoothing * tr(B) / m`` (the usual
       eps-smoothing of this alternating scheme, Argyriou et al. 2008). The correlation of
       the unsmoothed ``B^{1/2}`` is kept as ``"correlation_unsmoothed"`` so the damping of
       the picture is visible.
    2. **Theorem 2 assumes c(x) = ln(1 + e^{-x}) is concave; it is convex.** The inequality
       points the other way: ``sum C(F^t) >= sum C(F^{t-1}) + w.beta`` (with Eq. 12,
       ``w.beta = -(1/lam) beta^T Omega beta``): a *lower* bound, and the raw step can raise
       the loss. ``step="armijo"`` backtracks a scalar ``s = 1, 1/2, ...`` until
       ``sum C`` falls by at least ``1e-4 s |w.beta|``; ``step="mm"`` uses
       ``w = -(lam I + Omega D)^{-1} Omega beta`` (``D_i = 1/4 mean f^2`` from
       ``c'' <= 1/4``), which satisfies ``sum C(F^t) <= sum C(F^{t-1}) + 1/2 w.beta``.
       ``variant="paper"`` is Eq. (10) and Eq. (12) exactly as printed, with the raw step
       ``s = 1`` whatever ``step`` says (``step_`` records the step used), so the collapse
       and the rising loss can be watched. In the square root of Eq. (10) eigenvalues at
       round-off level (below ``m * machine eps * largest``) count as 0, as a numerical rank
       does: otherwise ``sqrt`` lifts 1e-16 to 1e-8 and that seed grows round by round, so
       the collapse, exact in exact arithmetic, would dissolve through noise alone.

    Weight of each task, and the scale of ``lam``
    ---------------------------------------------
    By default (``task_weighting="mean"``) ``beta_i`` is taken on task i's *mean* loss,
    ``C_i = sum_j r_j c(y_j F_i(x_j))`` with ``r_j = 1 / n_i`` (``s_j / sum_{task} s`` with
    sample weights): every task counts the same whatever its size, and ``lam`` does not
    grow with the data. The paper *sums* each task's losses (``r_j = 1``), so a task
    weighs in proportion to its examples: with tasks of unequal size the default reweights
    the tasks against the paper (a task of 50 examples beside one of 500 counts 10 times
    more than in the paper). ``task_weighting="sum"`` is the paper's weighting,
    ``r_j = s_j / (N / m)`` (N examples in all): every example weighs the same, rescaled by
    the mean task size so that ``lam`` keeps its scale; with tasks of equal size (and no
    sample weights) both options give the same fit. The paper's lambda is
    ``(N / m) * lam``: with ``n`` examples in every task its objective is ``n`` times ours
    (its grid {0.01, ..., 100} at ``n = 400`` is ``lam`` in {2.5e-5, ..., 0.25}).

    Other details: Omega starts at ``I / m`` (the printed ``I_m`` breaks ``tr Omega = 1``;
    only the direction of the first draw depends on it). The loop stops after a round with
    ``beta^T Omega beta <= eps`` (Table 1), which sets ``converged_``; ``n_rounds`` is a
    budget, so no ``ConvergenceWarning``.

    Parameters
    ----------
    base_learner : {"ls_svm", "stump", "tree"} or scikit-learn estimator
        "ls_svm": :class:`WeightedLSSVM` (linear, real-valued, the paper's choice); "stump" /
        "tree": weighted decision tree of depth 1 / 3 with outputs +-1; any estimator whose
        ``fit`` takes ``sample_weight`` (a classifier's output is used as +-1).
    lam : float > 0
        Weight of ``tr(W Omega^{-1} W^T) / 2``; see "Scale of lam".
    n_rounds, n_inner : int
        ``Q`` and ``Q_1`` of Table 1.
    eps : float >= 0
        Stop when ``beta^T Omega beta <= eps``.
    variant : {"corrected", "paper"}
    step : {"armijo", "mm", "plain"}
    smoothing : float >= 0
        ``delta`` of the corrected Omega update.
    learn_omega : bool
        False keeps Omega at ``I / m``: shared base learners without relationship learning.
    task_weighting : {"mean", "sum"}
        Each task's loss averaged over its examples (every task counts the same) or summed
        as in the paper (a task counts by its size); see "Weight of each task".
    random_state : None, int or Generator
        The draws of ``w^t`` and the seeds of random base learners.

    Attributes
    ----------
    weights_ : ndarray (n_iter_, m)
        ``W``: the applied weights ``s w^t`` of each round (row t, one column per task).
    estimators_ : list of fitted base learners, one per round
    Omega_ : ndarray (m, m)
        The task covariance of the last update; ``correlation_`` its correlation.
    step_sizes_ : ndarray (n_iter_,), the scalar steps ``s``
    paper_bounds_ : ndarray (n_iter_,)
        Theorem 2 as printed, ``C(F^{t-1}) - beta^T Omega beta / lam``: the paper claims the
        loss after round t lies below it; by convexity it lies above whenever ``s = 1``.
    betas_ : ndarray (n_iter_, m), ``beta_t`` at ``F^{t-1}``
    train_loss_ : ndarray (n_iter_, m), per-task loss ``C_i`` after each round (the mean, or
        with ``task_weighting="sum"`` the sum divided by ``N / m``)
    classes_ : list of ndarray, each task's two labels (``[0]`` is -1, ``[1]`` is +1)
    step_ : str, the step rule used
    n_iter_, converged_, objective_history_ (total loss ``sum_i C_i`` after each round)

    Snapshots (one per round): ``objective`` the total loss; ``matrices`` ``{"Omega",
    "correlation", "correlation_unsmoothed"}`` (lazy); ``info`` (lazy) ``{"W" (t, m),
    "beta", "w", "step_size", "halvings", "loss_before", "loss_per_task",
    "paper_bound" (the claimed upper bound ``C(F^{t-1}) - beta^T Omega beta / lam``),
    "reversed_bound" (the true lower bound ``C(F^{t-1}) + s w.beta``), "mm_bound"
    (``C(F^{t-1}) + s w.beta / 2``), "instance_weights" (n,), "flipped" (n,) bool,
    "inner_Omega" (n_inner, m, m)}``.

    Examples
    --------
    >>> from explorer.data import make_task_family
    >>> data = make_task_family(("related", "negated"), n_samples_per_task=60,
    ...                         random_state=0)
    >>> model = MTBoost(n_rounds=20, random_state=0).fit(*data.arrays())
    >>> corr = model.task_relationships()["correlation"]
    >>> bool(corr[0, 1] > 0 > corr[0, 2])
    True
    """

    _parameter_constraints = {
        **_BoostingClassifier._parameter_constraints,
        "n_inner": [COUNT],
        "variant": [Options("corrected", "paper")],
        "smoothing": [NON_NEGATIVE],
        "learn_omega": [BOOLEAN],
        "task_weighting": [Options("mean", "sum")],
    }

    def __init__(self, *, base_learner="ls_svm", lam: float = 0.1, n_rounds: int = 100,
                 n_inner: int = 10, eps: float = 1e-6, variant: str = "corrected",
                 step: str = "armijo", smoothing: float = 0.1, learn_omega: bool = True,
                 task_weighting: str = "mean", random_state=None):
        self.base_learner = base_learner
        self.lam = lam
        self.n_rounds = n_rounds
        self.n_inner = n_inner
        self.eps = eps
        self.variant = variant
        self.step = step
        self.smoothing = smoothing
        self.learn_omega = learn_omega
        self.task_weighting = task_weighting
        self.random_state = random_state

    def _fit_steps(self, X, y, task, sample_weight=None) -> Iterator[Snapshot]:
        step, lam, n_rounds = self.step, float(self.lam), int(self.n_rounds)
        n_inner, delta = int(self.n_inner), float(self.smoothing)
        paper = self.variant == "paper"
        step = "plain" if paper else step
        smoothing = 0.0 if paper else delta
        m = n_tasks_of(task)
        X = np.ascontiguousarray(X, dtype=np.float64)
        target, classes = binary_targets(y, task, m, type(self).__name__)
        scale = task_row_scale(task, m, sample_weight)
        if self.task_weighting == "sum":   # the paper's: every example the same weight
            weight = np.ones(task.shape[0]) if sample_weight is None else \
                np.asarray(sample_weight, dtype=np.float64)
            scale = weight * (m / weight.sum())
        rng = self._rng()
        seed = int(rng.integers(2**31 - 1))
        margin = np.zeros(X.shape[0])
        losses = task_losses(margin, target, task, scale, m)
        omega = np.eye(m) / m
        committed = np.zeros((m, m))          # W^T W of the applied weights
        weights, learners, steps, betas, history, per_task = [], [], [], [], [], []
        claimed = []     # Theorem 2 as printed: C(F^{t-1}) - beta^T Omega beta / lam
        converged = False
        for t in range(n_rounds):
            slope_rows = expit(-target * margin) * scale    # |c'(y F)| r, fixed this round
            gradient = gradient_rows(margin, target, scale)
            w = _draw(rng, omega)
            inner = []
            for _ in range(n_inner):
                largest = np.abs(w).max()
                if not largest > 0.0:
                    break
                # |w_i| relative to the largest: with one task the weights are AnyBoost's
                # bit for bit (Eq. 7 normalises them anyway)
                instance, flipped, signed, row_weight = supertask_rows(w, task, slope_rows,
                                                                       target)
                learner, f = _fit_base(self.base_learner, seed, X, signed, row_weight)
                beta, B, learned = step_statistics(gradient, task, f, committed, w, smoothing)
                if self.learn_omega:
                    omega = learned
                inner.append(omega)
                w = (mm_task_weights(omega, beta, task_curvature(scale, task, f, m), lam)
                     if step == "mm" else paper_task_weights(omega, beta, lam))
            if not inner:      # every task weight is exactly 0: nothing left to learn
                converged = True
                break
            slope = float(w @ beta)
            before = float(losses.sum())
            if step == "armijo":
                def total_at(s, f=f, w=w, margin=margin):
                    return float(task_losses(margin + s * w[task] * f, target, task,
                                             scale, m).sum())
                size, _, halvings = armijo_step(total_at, before, slope)
            else:
                size, halvings = 1.0, 0
            applied = size * w
            margin = margin + applied[task] * f
            losses = task_losses(margin, target, task, scale, m)
            committed = committed + applied[:, None] * applied
            weights.append(applied)
            learners.append(learner)
            steps.append(size)
            betas.append(beta)
            per_task.append(losses)
            total = float(losses.sum())
            history.append(total)
            self._refuse_non_finite(total, t + 1)
            criterion = float(beta @ omega @ beta)
            claimed.append(before - criterion / lam)
            info = partial(_round_info, tuple(weights), beta, applied, w, size, halvings,
                           before, losses, lam, omega, instance, flipped, tuple(inner))
            yield Snapshot(step=t + 1, objective=total,
                           matrices=LazyMapping(partial(_relationships, omega, B)),
                           info=LazyMapping(info))
            if criterion <= self.eps:
                converged = True
                break
        self.weights_ = np.array(weights).reshape(-1, m)
        self._learners = learners
        self.Omega_ = omega
        self.correlation_ = correlation_from_covariance(omega)
        self.omega_gram_ = B if learners else np.zeros((m, m))
        self.step_sizes_ = np.array(steps)
        self.paper_bounds_ = np.array(claimed)
        self.betas_ = np.array(betas).reshape(-1, m)
        self.train_loss_ = np.array(per_task).reshape(-1, m)
        self.classes_ = classes
        self.step_ = step
        self.n_iter_ = len(history)
        self.converged_ = bool(converged)
        self.objective_history_ = np.array(history)

    def _learner_outputs(self, X, task):
        return np.column_stack([_output(learner, X) for learner in self.estimators_]) \
            if self.estimators_ else np.zeros((X.shape[0], 0))

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"Omega", "correlation", "correlation_unsmoothed"}``, each (m, m)."""
        check_is_fitted(self, "Omega_")
        return _relationships(self.Omega_, self.omega_gram_)


def _draw(rng: np.random.Generator, omega: np.ndarray) -> np.ndarray:
    """One draw of ``N(0, Omega)`` for a PSD Omega (through its eigen-decomposition)."""
    values, vectors = np.linalg.eigh(omega)
    return vectors @ (np.sqrt(numerical_eigenvalues(values)) * rng.standard_normal(omega.shape[0]))


def _relationships(omega: np.ndarray, B: np.ndarray) -> dict[str, np.ndarray]:
    return {"Omega": omega.copy(), "correlation": correlation_from_covariance(omega),
            "correlation_unsmoothed": correlation_from_covariance(omega_update(B))}


def _round_info(weights, beta, applied, w, size, halvings, before, losses, lam, omega,
                instance, flipped, inner) -> dict:
    total_before = float(before)
    return {"W": np.array(weights), "beta": beta, "w": applied, "w_full": w,
            "step_size": size, "halvings": halvings, "loss_before": total_before,
            "loss_per_task": losses,
            "paper_bound": total_before - float(beta @ omega @ beta) / lam,
            "reversed_bound": total_before + float(applied @ beta),
            "mm_bound": total_before + 0.5 * float(applied @ beta),
            "instance_weights": instance / instance.sum(), "flipped": flipped,
            "inner_Omega": np.array(inner)}


class AnyBoost(_BoostingClassifier):
    """Baseline: gradient boosting of each task on its own (Mason et al. 1999, the paper's
    AnyBoost) with MTBoost's loss, base learners and step rules.

    Task i's round: ``f`` fitted to the task's labels with weights ``r_j |c'(y F_i)|``,
    ``w_i = -beta_i / lam`` (``step="mm"``: ``-beta_i / (lam + D_i)``; ``"armijo"``: then
    backtracked on the task's own loss), ``F_i += s w_i f``. It is MTBoost's round with one
    task (``Omega = [[1]]``): MTBoost on one task gives the same model.

    Parameters
    ----------
    base_learner, lam, n_rounds, eps, step, random_state : as :class:`MTBoost`
        A task stops when ``beta_i^2 <= eps``.

    Attributes
    ----------
    weights_ : ndarray (n_iter_, m)   task i's ``s w_i`` per round (0 after it stopped)
    estimators_ : list (n_iter_) of lists (m) of fitted base learners (None after a stop)
    classes_, n_iter_, converged_, objective_history_ (total loss after each round)

    Snapshots: one per round, ``objective`` the total loss, ``info`` ``{"loss_per_task"}``.
    """

    def __init__(self, *, base_learner="ls_svm", lam: float = 0.1, n_rounds: int = 100,
                 eps: float = 1e-6, step: str = "armijo", random_state=None):
        self.base_learner = base_learner
        self.lam = lam
        self.n_rounds = n_rounds
        self.eps = eps
        self.step = step
        self.random_state = random_state

    def _fit_steps(self, X, y, task, sample_weight=None) -> Iterator[Snapshot]:
        step, lam, n_rounds = self.step, float(self.lam), int(self.n_rounds)
        m = n_tasks_of(task)
        target, classes = binary_targets(y, task, m, type(self).__name__)
        scale = task_row_scale(task, m, sample_weight)
        seed = int(self._rng().integers(2**31 - 1))
        rows = [np.flatnonzero(task == i) for i in range(m)]
        task_X = [np.ascontiguousarray(X[r], dtype=np.float64) for r in rows]
        margin = np.zeros(X.shape[0])
        active = np.ones(m, bool)
        one = np.ones((1, 1))
        weights, learners, history = [], [], []
        for t in range(n_rounds):
            applied = np.zeros(m)
            round_learners = [None] * m
            for i in np.flatnonzero(active):
                r = rows[i]
                Xi, yi, si, Fi = task_X[i], target[r], scale[r], margin[r]
                zeros = np.zeros(r.size, np.intp)
                slope_rows = expit(-yi * Fi) * si
                slope_total = slope_rows.sum()
                if not slope_total > 0:
                    # every example's margin is so large that its loss is 0 in floating
                    # point (a huge raw step, step="plain" at a tiny lam): nothing is left to
                    # fit, and the base learner's weights would be 0 / 0
                    active[i] = False
                    continue
                learner, f = _fit_base(self.base_learner, seed, Xi, yi,
                                       slope_rows / slope_total)
                beta = task_gradient(gradient_rows(Fi, yi, si), zeros, f, 1)
                w = (mm_task_weights(one, beta, task_curvature(si, zeros, f, 1), lam)
                     if step == "mm" else paper_task_weights(one, beta, lam))
                size = 1.0
                if step == "armijo":
                    before = float(task_losses(Fi, yi, zeros, si, 1).sum())

                    def loss_at(s, Fi=Fi, w=w, f=f, yi=yi, zeros=zeros, si=si):
                        return float(task_losses(Fi + s * w[zeros] * f, yi, zeros, si,
                                                 1).sum())
                    size, _, _ = armijo_step(loss_at, before, float(w @ beta))
                applied[i] = size * w[0]
                margin[r] = Fi + applied[i] * f
                round_learners[i] = learner
                if float(beta @ beta) <= self.eps:
                    active[i] = False
            weights.append(applied)
            learners.append(round_learners)
            losses = task_losses(margin, target, task, scale, m)
            history.append(float(losses.sum()))
            self._refuse_non_finite(history[-1], t + 1)
            yield Snapshot(step=t + 1, objective=history[-1],
                           info={"loss_per_task": losses})
            if not active.any():
                break
        self.weights_ = np.array(weights)
        self._learners = learners
        self.classes_ = classes
        self.n_iter_ = len(history)
        self.converged_ = not active.any()
        self.objective_history_ = np.array(history)

    def _learner_outputs(self, X, task):
        out = np.zeros((X.shape[0], len(self.estimators_)))
        for t, round_learners in enumerate(self.estimators_):
            for i, learner in enumerate(round_learners):
                rows = task == i
                if learner is not None and rows.any():
                    out[rows, t] = _output(learner, X[rows])
        return out

    def task_relationships(self) -> dict[str, np.ndarray]:
        """AnyBoost learns nothing about tasks: ``{}``."""
        check_is_fitted(self, "weights_")
        return {}
