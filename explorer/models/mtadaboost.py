"""MT-Adaboost (Algorithm 2 of Faddoul et al., ECML PKDD 2012) and single-task AdaBoost.M1."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .base import LazyMapping, MultiTaskEstimator, Snapshot, encode_task_labels, n_tasks_of
from .constraints import COUNT, RANDOM_STATE, InstanceOf, validate_parameters
from .mtdt import MTDecisionTree, _check_weight, _decode, _tidy, fit_one_per_task

__all__ = ["MTAdaBoost", "SingleTaskAdaBoost"]

#: The parameters of MTAdaBoost and SingleTaskAdaBoost.
BOOSTING_CONSTRAINTS = {
    "base": [None, InstanceOf(MTDecisionTree, description="an MTDecisionTree")],
    "n_estimators": [COUNT],
    "random_state": RANDOM_STATE,
}


class MTAdaBoost(MultiTaskEstimator):
    """Multi-task AdaBoost.M1 over ``(example, task)`` pairs with MT-DT weak learners.

    Algorithm 2: ``D_1`` uniform over the pairs; in round t the weak learner
    ``h_t`` (a clone of ``base`` fitted with weights ``D_t``) has error
    ``eps_t = sum of D_t over misclassified pairs`` (all tasks together); the loop stops
    when ``eps_t >= 1/2`` (see below), else ``beta_t = eps_t / (1 - eps_t)``, correctly
    classified pairs are multiplied by ``beta_t`` and ``D`` is renormalised (``Z_t``). The
    final rule is ``H_j(x) = argmax_{y in Y_j} sum_{t: h_t^j(x) = y} ln(1 / beta_t)``.

    Deviations, derived from the model where the extracted text is garbled or silent: the
    extracted final rule lost its condition ``h_t^j(x) = y`` under the sum (restored as in
    AdaBoost.M1); the loop also stops at ``eps_t = 1/2`` exactly, because then
    ``ln(1/beta_t) = 0`` and ``D`` would not change, so every later round would repeat the
    same hypothesis; a round with ``eps_t = 0`` is kept with the vote weight of
    ``eps = 1e-10`` and ends the loop (``beta_t = 0`` would give an infinite vote). When
    the very first weak learner has ``eps_1 >= 1/2`` there is no classifier to return and a
    ``ValueError`` asks for a stronger base.

    Parameters
    ----------
    base : MTDecisionTree or None
        Weak learner; default ``MTDecisionTree(criterion="ig_m", max_depth=3)``.
    n_estimators : int
        Number of rounds ``T`` (fewer when the loop stops early).
    random_state : None, int or Generator
        Passed to nothing random (the trees are deterministic); kept for the contract.

    Attributes
    ----------
    estimators_ : list of fitted MTDecisionTree
    estimator_errors_ : ndarray (n_rounds,), ``eps_t`` of the kept rounds
    betas_ : ndarray (n_rounds,), ``beta_t``;  ``estimator_weights_`` = ``ln(1/beta_t)``
    train_errors_ : ndarray (n_rounds, m), per-task training error of ``H`` after each round
    stop_reason_ : str, why the loop ended; ``rejected_error_`` the ``eps`` that stopped it
    classes_ : list of ndarray
    n_iter_ : int
        Rounds kept (= ``n_estimators_``), 1-based.
    objective_history_ : ndarray of shape (n_iter_,)
        After round t, ``prod_{s <= t} 2 sqrt(eps_s (1 - eps_s))``: the upper bound of
        Freund & Schapire (1997, Theorem 6) on the training error of ``H`` under the
        initial distribution ``D_1``, i.e. the exponential-loss bound AdaBoost.M1 drives
        down. It is what the snapshots' ``objective`` carries; it never increases.
    converged_ : bool
        True when the loop stopped before ``n_estimators`` rounds for the algorithm's own
        reason (a perfect weak learner, or none better than chance); False when it used up
        ``n_estimators``. ``n_estimators`` is a budget, not a convergence limit, so there
        is no ``ConvergenceWarning``.

    Snapshots: one per kept round; ``matrices`` ``{"split_borrowing": (m, m)}`` (lazy),
    ``info`` ``{"round", "weak_error", "beta", "train_error" (m,), "n_nodes"}``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 2)); task = np.repeat([0, 1], 60)
    >>> y = np.where(task == 0, X[:, 0] > 0, X[:, 0] + X[:, 1] > 0).astype(int)
    >>> model = MTAdaBoost(n_estimators=5).fit(X, y, task)
    >>> bool(model.train_errors_[-1].mean() <= model.train_errors_[0].mean())
    True
    """

    _estimator_type = "classifier"
    accepts_sample_weight = True
    _parameter_constraints = BOOSTING_CONSTRAINTS

    def __init__(self, *, base: MTDecisionTree | None = None, n_estimators: int = 50,
                 random_state=None):
        self.base = base
        self.n_estimators = n_estimators
        self.random_state = random_state

    def _make_base(self) -> MTDecisionTree:
        if self.base is None:
            return MTDecisionTree(criterion="ig_m", max_depth=3)
        return clone(self.base)

    def _fit_steps(self, X, y, task, sample_weight=None) -> Iterator[Snapshot]:
        n_rounds = int(self.n_estimators)
        validate_parameters(self._make_base())
        m = n_tasks_of(task)
        codes, classes = encode_task_labels(y, task, m)
        weight = _check_weight(sample_weight, X.shape[0])
        distribution = weight / weight.sum()
        prepared = self._make_base()._prepare(X)
        width = max(len(c) for c in classes)
        votes = np.zeros((X.shape[0], width))
        rows = np.arange(X.shape[0])
        task_sizes = np.bincount(task, minlength=m)
        estimators, errors, betas, train_errors, bound = [], [], [], [], []
        stop_reason = f"reached n_estimators={n_rounds}"
        rejected_error = None
        for t in range(n_rounds):
            tree = self._make_base()
            for _ in tree._grow(X, codes, task, distribution, classes, prepared=prepared):
                pass
            predicted = tree._predict_codes(X, task)
            wrong = predicted != codes
            error = float(distribution[wrong].sum())
            if error >= 0.5:
                rejected_error = error
                stop_reason = f"weak learner error {error:.4f} >= 1/2 in round {t + 1}"
                if t == 0:
                    raise ValueError(
                        f"MTAdaBoost: the first weak learner has weighted error {error:.4f}"
                        " >= 1/2, so AdaBoost.M1 has no classifier to return; use a "
                        "stronger base (larger max_depth)."
                    )
                break
            perfect = error <= 0.0
            kept_error = max(error, 1e-10)
            beta = kept_error / (1.0 - kept_error)
            votes[rows, predicted] += np.log(1.0 / beta)
            estimators.append(tree)
            errors.append(error)
            betas.append(beta)
            # Freund & Schapire (1997), Theorem 6: training error of H <= prod 2 sqrt(e(1-e))
            bound.append((bound[-1] if bound else 1.0)
                         * 2.0 * np.sqrt(kept_error * (1.0 - kept_error)))
            per_task = np.bincount(task, weights=_argmax_codes(votes, classes, task) != codes,
                                   minlength=m) / task_sizes
            train_errors.append(per_task)
            yield Snapshot(step=t + 1, objective=bound[-1],
                           matrices=LazyMapping(partial(
                               _borrowing, tuple(estimators), np.log(1.0 / np.array(betas)),
                               m)),
                           info={"round": t + 1, "weak_error": error, "beta": beta,
                                 "train_error": per_task, "n_nodes": tree.n_nodes_})
            if perfect:
                stop_reason = f"weak learner error 0 in round {t + 1}"
                break
            distribution = np.where(wrong, distribution, distribution * beta)
            distribution /= distribution.sum()
        self.classes_ = classes
        self.estimators_ = estimators
        self.estimator_errors_ = np.array(errors)
        self.betas_ = np.array(betas)
        self.estimator_weights_ = np.log(1.0 / self.betas_)
        self.train_errors_ = np.array(train_errors)
        self.n_estimators_ = len(errors)
        self.stop_reason_ = stop_reason
        self.rejected_error_ = rejected_error
        self.n_iter_ = len(errors)
        self.converged_ = len(errors) < n_rounds
        self.objective_history_ = np.array(bound)


    # ------------------------------------------------------------------ prediction
    def _votes(self, X, task, n_rounds: int | None = None) -> Iterator[np.ndarray]:
        width = max(len(c) for c in self.classes_)
        votes = np.zeros((X.shape[0], width))
        rows = np.arange(X.shape[0])
        weights = self.estimator_weights_[:n_rounds]
        for tree, alpha in zip(self.estimators_[:n_rounds], weights, strict=True):
            votes[rows, tree._predict_codes(X, task)] += alpha
            yield votes

    def _final_votes(self, X, task) -> np.ndarray:
        *_, votes = self._votes(X, task)
        return votes

    def staged_predict(self, X, task) -> Iterator[np.ndarray]:
        """Predictions of ``H`` after each round, each of shape (n_samples,)."""
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "estimators_")
        for votes in self._votes(X, task):
            yield _decode(_argmax_codes(votes, self.classes_, task), task, self.classes_)

    def predict(self, X, task) -> np.ndarray:
        """``H_j(x)`` of each row for its task, shape (n_samples,)."""
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "estimators_")
        votes = self._final_votes(X, task)
        return _decode(_argmax_codes(votes, self.classes_, task), task, self.classes_)

    def predict_proba(self, X, task) -> np.ndarray:
        """Normalised votes, shape (n_samples, max_t k_t) (columns past k_t are zero)."""
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "estimators_")
        votes = self._final_votes(X, task) * _class_mask(self.classes_, task)
        return votes / np.maximum(votes.sum(axis=1, keepdims=True), 1e-300)

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"split_borrowing": (m, m)}``: the trees' matrices weighted by ``ln(1/beta_t)``."""
        check_is_fitted(self, "estimators_")
        return _borrowing(self.estimators_, self.estimator_weights_, self.n_tasks_)


class SingleTaskAdaBoost(MultiTaskEstimator):
    """Baseline: AdaBoost.M1 with single-task entropy trees, one booster per task.

    Each task gets its own :class:`MTAdaBoost` fitted on that task alone, which is exactly
    AdaBoost.M1 (Freund & Schapire 1997) with the C4.5-like tree. ``fit_iter`` yields one
    snapshot per task. ``train_errors_`` is (n_estimators, m), padded with each task's
    last value when its booster stopped early.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); task = np.repeat([0, 1], 40)
    >>> model = SingleTaskAdaBoost(n_estimators=3).fit(X, (X[:, 0] > 0).astype(int), task)
    >>> model.predict(X[:2], [0, 1]).shape
    (2,)
    """

    _estimator_type = "classifier"
    accepts_sample_weight = True
    _parameter_constraints = BOOSTING_CONSTRAINTS

    def __init__(self, *, base: MTDecisionTree | None = None, n_estimators: int = 50,
                 random_state=None):
        self.base = base
        self.n_estimators = n_estimators
        self.random_state = random_state

    def _fit_steps(self, X, y, task, sample_weight=None) -> Iterator[Snapshot]:
        yield from fit_one_per_task(
            self, lambda: MTAdaBoost(base=self.base, n_estimators=self.n_estimators),
            lambda booster: {"n_rounds": booster.n_estimators_}, X, y, task, sample_weight)
        longest = max(b.n_estimators_ for b in self.estimators_)
        self.train_errors_ = np.column_stack([
            np.concatenate([b.train_errors_[:, 0],
                            np.full(longest - b.n_estimators_, b.train_errors_[-1, 0])])
            for b in self.estimators_])

    def predict(self, X, task) -> np.ndarray:
        X, task = self._validate_predict_data(X, task)
        check_is_fitted(self, "estimators_")
        out = np.empty(X.shape[0], dtype=object)
        for t in np.unique(task):
            rows = task == t
            out[rows] = self.estimators_[t].predict(X[rows], np.zeros(rows.sum(), np.intp))
        return _tidy(out, [self.classes_[t] for t in np.unique(task)])


def _borrowing(trees, weights: np.ndarray, m: int) -> dict[str, np.ndarray]:
    """``{"split_borrowing": sum_t ln(1/beta_t) B_t}`` over the trees' (m, m) matrices."""
    total = np.zeros((m, m))
    for tree, alpha in zip(trees, weights, strict=True):
        total += alpha * tree.split_borrowing_
    return {"split_borrowing": total}


def _class_mask(classes: list[np.ndarray], task: np.ndarray) -> np.ndarray:
    """(n, width) mask of the label codes that exist for each row's task."""
    width = max(len(c) for c in classes)
    sizes = np.array([len(c) for c in classes])
    return np.arange(width)[None, :] < sizes[task][:, None]


def _argmax_codes(votes: np.ndarray, classes: list[np.ndarray], task: np.ndarray) -> np.ndarray:
    """Per-row argmax of the votes over the row's own task's labels (ties: lowest code)."""
    masked = np.where(_class_mask(classes, task), votes, -np.inf)
    return np.argmax(masked, axis=1)
