"""Robust multi-task feature learning (Gong, Ye & Zhang, KDD 2012) and its baselines.

rMTFL decomposes the weight matrix ``W = P + Q`` (d features x m tasks) and solves (Eq. 2)

    min_{P, Q}  sum_i 1/(m n_i) ||X_i^T (p_i + q_i) - y_i||^2
                + lambda_rows ||P||_{1,2} + lambda_columns ||Q^T||_{1,2}

``||P||_{1,2}`` sums the L2 norms of the *rows* of P (features shared by all tasks), and
``||Q^T||_{1,2}`` sums the L2 norms of the *columns* of Q (tasks that go their own way: the
outlier tasks). The solver is the shared accelerated proximal gradient routine
(:mod:`explorer.solvers.proximal_gradient`, Eq. 5-8) in its monotone variant **MFISTA**
(the objective never increases), with closed-form row / column group soft-thresholding
(Eq. 6-7) and backtracking that doubles the step constant from a lower bound of the Lipschitz
constant. Per-task gradients come from :class:`explorer.solvers.multitask_least_squares.
StackedTasks`, so tasks may have different ``n_i`` and no (dm x dm) matrix is formed.

The separable group penalties (rows, columns, both, L1) are also solved by block coordinate
descent (:mod:`explorer.solvers.block_cd`: one group at a time with the residuals kept up to
date, a working set so zero groups cost nothing, a duality-gap stopping test reported as
``dual_gap_``); ``solver="auto"`` picks the faster of the two for the problem, and both
reach the same optimum (tests/test_block_cd.py).

Default regularisation. The paper's rule (Eq. 16, ``lambda ~ sqrt(d m) / sum n_i``) reaches
``lambda_max`` near ``n_i = 200`` and then zeroes everything, so the default here is relative
to the closed-form ``lambda_max`` of each penalty (the smallest value for which P = 0, resp.
Q = 0, is optimal): ``lambda_rows = 0.2 * lambda_max(P)`` and
``lambda_columns = 1.15 * sqrt(d / m) * lambda_rows`` (:data:`DEFAULT_FRACTIONS`,
:data:`DEFAULT_RATIO`). The paper's lambda1 / lambda2 are ``lambda_rows`` /
``lambda_columns`` here: every penalty parameter is named after the norm it weights (the
table in :mod:`explorer.models`).
The ratio is what decides the outliers. Derivation (from the KKT conditions, not in the
paper): at the optimum every row of the loss gradient G has norm <= lambda1, so a typical
entry is ~ lambda_rows / sqrt(m) and a non-outlier task's gradient column has norm ~
lambda_rows sqrt(d / m); Q's column stays zero when that is <= lambda_columns. Measured on the
Section 6.1 setting (m=30, d=200, 10 outliers): the useful window of lambda_columns / lambda_rows is
narrow (about 2.7-3.2 at n=20), hence a ratio tied to sqrt(d / m) rather than a fraction
of lambda_max(Q).

Baselines on the same solver (one routine, different proximal operators): ridge, lasso
(L1), L2,1 ("MTFL", Q = 0), the column-group model (P = 0), trace-norm regression, RMTL
(Chen, Zhou & Ye 2011: low-rank L + column-sparse S, singular-value thresholding) and
:class:`TwoStageRMTFL`. A model is its penalties: one class of
:mod:`explorer.solvers.penalties` per block (``_penalty_types``), which the solvers ask for
values, proximal steps, dual norms and ``lambda_max``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..data.validation import check_multitask, check_shared_design
from ..solvers.block_cd import block_cd_steps, handles, relative_duality_gap
from ..solvers.multitask_least_squares import StackedTasks
from ..solvers.penalties import (
    BlockSum,
    ColumnGroups,
    Lasso,
    Penalty,
    Ridge,
    RowGroups,
    TraceNorm,
)
from ..solvers.proximal_operators import column_norms, row_norms
from ..solvers.stacked_fista import mfista_steps
from .base import ConvergenceMonitor, LazyMapping, MultiTaskEstimator, Snapshot, n_tasks_of
from .constraints import (
    BOOLEAN,
    COUNT,
    NON_NEGATIVE,
    RANDOM_STATE,
    Options,
    validate_parameters,
)

__all__ = [
    "DEFAULT_FRACTIONS",
    "DEFAULT_RATIO",
    "SINGLE_PENALTY_FRACTION",
    "RobustMTFL",
    "TwoStageRMTFL",
    "MultiTaskRidge",
    "MultiTaskLassoL1",
    "L21MTFL",
    "ColumnGroupMTL",
    "TraceNormMTL",
    "RMTL",
]

#: "auto" penalties of the two-penalty models (RobustMTFL, RMTL), as fractions of the
#: closed-form lambda_max of the same penalty. RobustMTFL's "auto" ``lambda_columns`` uses
#: :data:`DEFAULT_RATIO` instead (see the module docstring).
DEFAULT_FRACTIONS = {"lambda_rows": 0.2, "lambda_trace": 0.2, "lambda_columns": 0.1}
#: RobustMTFL's default ``lambda_columns / lambda_rows`` in units of sqrt(d / m).
DEFAULT_RATIO = 1.15
#: "auto" penalty of the single-penalty baselines, as a fraction of their lambda_max.
SINGLE_PENALTY_FRACTION = 0.1
#: ``solver="auto"`` picks block coordinate descent for per-task designs only when tasks have
#: at most this fraction of d samples on average (wide designs: few groups active, sweeps
#: cheap, MFISTA slow) and the problem has more than :data:`AUTO_BCD_MIN_ENTRIES` design
#: entries; measured by ``benchmarks/bench_peers.py --crossover`` (see
#: :meth:`_StackedProxMTL._use_bcd`).
AUTO_BCD_MAX_SAMPLES_PER_FEATURE = 0.25
AUTO_BCD_MIN_ENTRIES = 20_000
SOLVERS = ("auto", "bcd", "fista")

#: A penalty parameter: a weight >= 0 or "auto" (a fraction of its lambda_max).
PENALTY = [NON_NEGATIVE, Options("auto")]
#: The parameters every stacked least-squares model has (``solver`` only those with BCD).
_COMMON_CONSTRAINTS = {
    "max_iter": [COUNT],
    "tol": [NON_NEGATIVE],
    "normalize": [BOOLEAN],
    "fit_intercept": [BOOLEAN],
    "warm_start": [BOOLEAN],
    "random_state": RANDOM_STATE,
}
_SOLVER = {"solver": [Options(*SOLVERS)]}


def _constraints(*penalties: str, solver: bool) -> dict[str, list]:
    return {**dict.fromkeys(penalties, PENALTY), **_COMMON_CONSTRAINTS,
            **(_SOLVER if solver else {})}


def _resolve(value, lambda_max: float, fraction: float) -> float:
    """A (validated) penalty parameter's value: "auto" = ``fraction * lambda_max``."""
    return fraction * lambda_max if isinstance(value, str) else float(value)


def _keep_parameters(est, params: dict) -> None:
    """scikit-learn's ``__init__``: every parameter stored as given (``params`` is the
    ``__init__``'s ``locals()``; the signature is the declaration)."""
    for name, value in params.items():
        if name != "self":
            setattr(est, name, value)


def _predict_linear(X, task, coef, intercept) -> np.ndarray:
    """``x^T w_t + b_t`` for each row (coef (d, m), intercept (m,))."""
    return np.einsum("ij,ji->i", X, coef[:, task]) + intercept[task]


class _StackedProxMTL(MultiTaskEstimator):
    """Least squares on stacked tasks plus a penalty with a cheap prox.

    The unknown is ``k`` blocks of shape (d, m) stored side by side, ``x = [B_1 | ... | B_k]``,
    and ``W = B_1 + ... + B_k`` (all on the normalised scale inside the solver). Subclasses
    set ``_penalties`` (the penalty parameter names, one per block, in block order),
    ``_penalty_types`` (the :class:`~explorer.solvers.penalties.Penalty` class of each
    block: the solver, ``lambda_max_`` and whether block CD applies follow from them) and
    ``_block_names`` (the fitted attribute of each block: ``"P"`` -> ``P_``; ``"W"`` means the
    single block is ``coef_``); ``_resolve_penalties`` may be overridden.

    Fitted attributes are set once, when the solver stops; the snapshots hold references to
    the solver's iterates (never mutated after being yielded) and compute their matrices
    only when read.
    """

    _penalties: tuple[str, ...] = ()
    _penalty_types: tuple[type[Penalty], ...] = ()
    _block_names: tuple[str, ...] = ("W",)

    @property
    def _bcd(self) -> bool:
        """Whether block coordinate descent (:mod:`explorer.solvers.block_cd`) solves the
        model (the estimator then has a ``solver`` parameter)."""
        return handles(self._penalty_types)

    def _use_bcd(self, data: StackedTasks, lams: tuple[float, ...]) -> bool:
        """Block coordinate descent or MFISTA for this fit (``solver``; "auto" rule below).

        BCD needs every penalty > 0 (its duality gap is the stopping test). "auto" (measured
        crossover, ``benchmarks/bench_peers.py --crossover``): BCD on a design shared by all
        tasks (the MultiTaskLasso setting: a sweep touches only the working set's rows),
        and on wide per-task designs (mean n_t <= 0.25 d, more than 20 000 entries);
        MFISTA for the column-group model alone (a column step costs as much as a MFISTA
        iteration and the sweeps are no fewer), for tall per-task designs (MFISTA converges
        in a few BLAS-bound iterations) and for tiny problems (per-sweep overhead).
        """
        solver = getattr(self, "solver", "fista")
        if not self._bcd or solver == "fista":
            return False
        positive = all(lam > 0 for lam in lams)
        if solver == "bcd" and not positive:
            raise ValueError(f"solver='bcd' needs positive penalties; got {lams}. Use "
                             "solver='fista' for an unpenalised block.")
        return positive and self._bcd_expected(data.counts, data.d,
                                               data.shared_design is not None)

    def _bcd_expected(self, counts: np.ndarray, d: int, shared: bool) -> bool:
        """:meth:`_use_bcd` before the penalties are known (assuming them positive): it
        picks the layout the data are prepared in."""
        solver = getattr(self, "solver", "fista")
        if not self._bcd or solver == "fista":
            return False
        if solver == "bcd":
            return True
        if self._penalty_types == (ColumnGroups,):
            return False
        if shared:
            return True
        wide = np.mean(counts) <= AUTO_BCD_MAX_SAMPLES_PER_FEATURE * d
        return bool(wide and np.sum(counts) * d > AUTO_BCD_MIN_ENTRIES)

    def _stack(self, X, y, task, m) -> StackedTasks:
        # (whether every task has the same design is found while stacking)
        counts = np.bincount(task, minlength=m)
        layouts = ["features" if self._bcd_expected(counts, X.shape[1], shared) else "rows"
                   for shared in (False, True)]
        return StackedTasks(X, y, task, m, normalize=bool(self.normalize),
                            center=bool(self.fit_intercept), layout=layouts[0],
                            shared_layout=layouts[1])

    def _lambda_max(self, data: StackedTasks) -> dict[str, float]:
        """Each penalty's closed-form lambda_max (its dual norm of the gradient at 0)."""
        G0 = data.grad_at_zero()
        return {name: kind.lambda_max(G0)
                for name, kind in zip(self._penalties, self._penalty_types, strict=True)}

    def _resolve_penalties(self, lambda_max: dict[str, float], data: StackedTasks
                           ) -> dict[str, float]:
        fraction = DEFAULT_FRACTIONS if len(self._penalties) > 1 else \
            dict.fromkeys(self._penalties, SINGLE_PENALTY_FRACTION)
        return {name: _resolve(getattr(self, name), lambda_max[name], fraction[name])
                for name in self._penalties}

    def _penalty(self, lams: tuple[float, ...]) -> BlockSum:
        """The fit's penalty: one object per block, with its weight."""
        return BlockSum(*(kind(lam) for kind, lam in zip(self._penalty_types, lams,
                                                         strict=True)))

    def lambda_max(self, X, y, task) -> dict[str, float]:
        """Closed-form smallest value of each penalty that makes its block zero.

        On the normalised (and centred) data, as the solver sees it; keyed by penalty
        parameter name, like ``lambda_max_``. Sets no attribute.
        """
        X, y, task = check_multitask(X, y, task, kind="regression", who=type(self).__name__)
        return self._lambda_max(self._stack(X, y, task, n_tasks_of(task)))

    def _initial(self, data: StackedTasks) -> np.ndarray:
        """Zeros, or with ``warm_start`` the previous solution mapped to this data's scale."""
        d, m = data.d, data.m
        blocks = []
        for name in self._block_names:
            previous = getattr(self, "coef_" if name == "W" else name + "_", None)
            if not (self.warm_start and previous is not None and previous.shape == (d, m)):
                return np.zeros((d, m * len(self._block_names)))
            blocks.append(previous * data.scale)
        return np.hstack(blocks)

    def fit_shared(self, X, Y, *, task_features=None):
        """Fit tasks that share one design, without stacking it (the MultiTaskLasso layout).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)   the design of every task
        Y : array-like of shape (n_samples, n_tasks)      column t: task t's responses

        The same model as ``fit(np.tile(X, (m, 1)), Y.T.ravel(), np.repeat(range(m), n))``
        (same optimum, same fitted attributes) but the ``(m n, d)`` stack is never built
        or compared: the solver works on the one design. Returns ``self``.
        """
        X, Y = check_shared_design(X, Y, who=type(self).__name__)
        validate_parameters(self)
        self._check_task_features(task_features, Y.shape[1])
        layout = "features" if self._bcd_expected(np.full(Y.shape[1], X.shape[0]),
                                                  X.shape[1], True) else "rows"
        data = StackedTasks.shared(X, Y, normalize=bool(self.normalize),
                                   center=bool(self.fit_intercept), layout=layout)
        for _ in self._run(self._solve_steps(data), data.m, data.d):
            pass
        return self

    def _fit_steps(self, X, y, task) -> Iterator[Snapshot]:
        return self._solve_steps(self._stack(X, y, task, n_tasks_of(task)))

    def _solve_steps(self, data: StackedTasks) -> Iterator[Snapshot]:
        """The fit's snapshots on prepared data (stacked or one shared design)."""
        lambda_max = self._lambda_max(data)
        penalties = self._resolve_penalties(lambda_max, data)
        lams = tuple(penalties[name] for name in self._penalties)
        monitor = ConvergenceMonitor(type(self).__name__, tol=float(self.tol),
                                     max_iter=int(self.max_iter))
        penalty = self._penalty(lams)
        bcd = self._use_bcd(data, lams)
        if bcd:
            monitor.criterion = "relative duality gap"
            steps = block_cd_steps(data, penalty, self._initial(data), tol=float(self.tol))
        else:
            steps = mfista_steps(data, penalty, self._initial(data),
                                 lipschitz=max(data.lipschitz_lower_bound(), 1e-12))
        last = None
        gap = np.inf
        for step in steps:
            if bcd:
                # the gap is computed every few sweeps; in between the last value stands
                gap = gap if np.isnan(step.dual_gap) else step.dual_gap
                monitor.record(step.objective, change=gap)
            else:
                monitor.record(step.objective,
                               change=step.relative_change if step.iteration > 1 else None)
            last = step
            yield Snapshot(step=step.iteration, objective=step.objective,
                           matrices=LazyMapping(partial(self._matrices, data, step.x)),
                           info=LazyMapping(partial(self._info, data, step)))
            if monitor.done:
                break
        fitted = self._matrices(data, last.x)
        self.coef_ = fitted.pop("W")
        self.intercept_ = data.y_mean - np.einsum("jt,jt->t", data.x_mean, self.coef_)
        for name, block in fitted.items():
            setattr(self, name + "_", block)
        self._store_extra(fitted)
        self.lambda_max_ = lambda_max
        for name, lam in penalties.items():
            setattr(self, name + "_", lam)
        self.solver_ = "bcd" if bcd else "fista"
        if bcd and np.isfinite(gap) and not np.isnan(last.dual_gap):
            self.dual_gap_ = float(last.dual_gap)
        elif self._bcd and all(lam > 0 for lam in lams):
            self.dual_gap_ = relative_duality_gap(data, penalty, last.x)
        else:
            self.dual_gap_ = float("nan")
        monitor.finish(self)

    def _store_extra(self, fitted: dict[str, np.ndarray]) -> None:
        """Derived fitted attributes (detected sets ...) from the final matrices."""

    def _matrices(self, data: StackedTasks, x: np.ndarray) -> dict[str, np.ndarray]:
        """The blocks and ``W`` (all (d, m), user's scale) of an iterate ``x``."""
        m = data.m
        if len(self._block_names) == 1:
            return {"W": x / data.scale}
        out = {name: x[:, b * m:(b + 1) * m] / data.scale
               for b, name in enumerate(self._block_names)}
        out["W"] = sum(out.values())
        return out

    def _info(self, data: StackedTasks, step) -> dict:
        """``lipschitz`` (MFISTA's step constant; NaN for BCD), ``relative_change`` (of
        the objective), ``dual_gap`` (BCD: relative duality gap when computed after this
        sweep, else NaN; MFISTA: NaN)."""
        return {"lipschitz": getattr(step, "lipschitz", float("nan")),
                "relative_change": step.relative_change,
                "dual_gap": getattr(step, "dual_gap", float("nan"))}

    def predict(self, X, task) -> np.ndarray:
        """``x^T w_t + b_t`` for each row, shape (n_samples,)."""
        X, task = self._validate_predict_data(X, task)
        return _predict_linear(X, task, self.coef_, self.intercept_)

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"W": coef_}``, shape (d, m) (features x tasks, like ``truth["coef"]``)."""
        check_is_fitted(self, "n_tasks_")
        return {"W": self.coef_.copy()}


_SOLVER_DOC = """    solver : {"auto", "bcd", "fista"}
        "bcd": block coordinate descent (:mod:`explorer.solvers.block_cd`: one sweep over
        the working set's groups per iteration, duality-gap stopping); "fista": MFISTA
        (Eq. 5-8); "auto": the faster for the problem (:meth:`_use_bcd`). Both reach the
        same optimum. With "bcd", ``max_iter`` counts sweeps and ``tol`` bounds the relative
        duality gap ``(F(W) - D) / F(W)`` (which bounds the relative suboptimality); with
        "fista", iterations and the relative objective change.
"""

_COMMON_PARAMS_DOC = """    max_iter : int
        Most MFISTA iterations (BCD sweeps with ``solver="bcd"``).
    tol : float
        Stop when the relative objective change falls below ``tol`` (MFISTA), or the
        relative duality gap does (BCD).
    normalize : bool
        Scale every feature of every task to unit norm (Eq. 1); coefficients are mapped back.
    fit_intercept : bool
        Centre each task (unpenalised per-task intercepts).
    warm_start : bool
        Start from the previous fit's solution (``coef_`` and the blocks) when its shape
        fits the data: paths, live slider refits. scikit-learn's idiom; the only way to
        start from a previous solution.
    random_state : None, int or Generator
        Unused (the solver is deterministic); part of the uniform estimator contract."""

_BCD_ATTRS_DOC = """    solver_ : {"bcd", "fista"}
        The solver that ran.
    dual_gap_ : float
        Relative duality gap ``(F(W) - D(theta)) / F(W)`` of the answer (an upper bound of
        its relative suboptimality; ``block_cd`` module docstring)."""


class RobustMTFL(_StackedProxMTL):
    __doc__ = f"""Robust multi-task feature learning, ``W = P + Q`` (Gong, Ye & Zhang 2012, Eq. 2).

    Minimises, by MFISTA (monotone FISTA, Eq. 5-8) with row / column group soft-thresholding
    (Eq. 6-7),

        sum_i 1/(m n_i) ||X_i^T (p_i + q_i) - y_i||^2
        + lambda_rows ||P||_{{1,2}} + lambda_columns ||Q^T||_{{1,2}}

    Parameters
    ----------
    lambda_rows : float >= 0 or "auto"
        The paper's lambda1: weight of ``||P||_{{1,2}}`` (sum of row norms; row sparsity =
        shared features). "auto" = ``0.2 * lambda_max_["lambda_rows"]``.
    lambda_columns : float >= 0 or "auto"
        The paper's lambda2: weight of ``||Q^T||_{{1,2}}`` (sum of column norms; column
        sparsity = outlier tasks). "auto" = ``1.15 * sqrt(d / m) * lambda_rows_``.
{_COMMON_PARAMS_DOC}
{_SOLVER_DOC}
    Attributes
    ----------
    coef_ : ndarray of shape (d, m)
        W = P + Q on the user's scale (``truth["coef"]``'s shape).
    P_, Q_ : ndarray of shape (d, m)
        The two parts, on the user's scale.
    intercept_ : ndarray of shape (m,)
    shared_features_ : ndarray of bool, shape (d,)
        Nonzero rows of P (``truth["shared_features"]``).
    outlier_scores_ : ndarray of shape (m,)
        Column norms of ``Q_`` (user's scale).
    outlier_tasks_ : ndarray of bool, shape (m,)
        Nonzero columns of Q (``truth["outlier_tasks"]``).
    lambda_rows_, lambda_columns_ : float
        The penalties used (on the normalised data).
    lambda_max_ : dict of str -> float, keys "lambda_rows" and "lambda_columns"
        Closed-form smallest penalty that zeroes P, resp. Q (with the other block zero).
    objective_history_ : ndarray of shape (n_iter_,)
        Eq. (2) on the normalised data after each iteration.
    n_iter_ : int;  converged_ : bool;  n_tasks_, n_features_in_ : int
{_BCD_ATTRS_DOC}
    Snapshots carry ``matrices`` ``{{"P", "Q", "W"}}`` (d, m) and ``info``
    ``{{"outlier_scores", "outlier_tasks", "shared_features", "lipschitz",
    "relative_change"}}`` with the fitted attributes' shapes and meaning.

    Examples
    --------
    >>> from explorer.data.synthetic import make_outlier_tasks
    >>> ds = make_outlier_tasks(n_tasks=6, n_outliers=2, n_features=10, n_shared_features=4,
    ...                         random_state=0)
    >>> est = RobustMTFL().fit(ds.X, ds.y, ds.task)
    >>> est.coef_.shape, est.outlier_tasks_.dtype, est.shared_features_.shape
    ((10, 6), dtype('bool'), (10,))
    """

    _parameter_constraints = _constraints("lambda_rows", "lambda_columns", solver=True)
    _penalties = ("lambda_rows", "lambda_columns")
    _penalty_types = (RowGroups, ColumnGroups)
    _block_names = ("P", "Q")

    def __init__(self, *, lambda_rows="auto", lambda_columns="auto", max_iter: int = 1000,
                 tol: float = 1e-5, normalize: bool = True, fit_intercept: bool = True,
                 warm_start: bool = False, solver: str = "auto", random_state=None):
        _keep_parameters(self, locals())

    def _resolve_penalties(self, lambda_max, data):
        rows = _resolve(self.lambda_rows, lambda_max["lambda_rows"],
                        DEFAULT_FRACTIONS["lambda_rows"])
        if isinstance(self.lambda_columns, str):   # "auto": relative to lambda_rows
            columns = DEFAULT_RATIO * np.sqrt(data.d / data.m) * rows
        else:
            columns = float(self.lambda_columns)
        return {"lambda_rows": rows, "lambda_columns": columns}

    @staticmethod
    def _detected(P, Q) -> dict[str, np.ndarray]:
        scores = column_norms(Q)
        return {"outlier_scores": scores, "outlier_tasks": scores > 0,
                "shared_features": row_norms(P) > 0}

    def _store_extra(self, fitted):
        detected = self._detected(fitted["P"], fitted["Q"])
        self.outlier_scores_ = detected["outlier_scores"]
        self.outlier_tasks_ = detected["outlier_tasks"]
        self.shared_features_ = detected["shared_features"]

    def _info(self, data, step):
        info = super()._info(data, step)
        m = data.m
        x = step.x
        info.update(self._detected(x[:, :m], x[:, m:] / data.scale))
        return info

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"P", "Q", "W"}``: (d, m) on the user's scale; ``"outlier_scores"``: (m,)."""
        check_is_fitted(self, "n_tasks_")
        return {"P": self.P_.copy(), "Q": self.Q_.copy(), "W": self.coef_.copy(),
                "outlier_scores": self.outlier_scores_.copy()}


class _SinglePenaltyMTL(_StackedProxMTL):
    """One block W with one penalty; "auto" = ``SINGLE_PENALTY_FRACTION * lambda_max``.

    Snapshots carry ``matrices`` ``{"W": (d, m)}``; ``task_relationships()`` is
    ``{"W": coef_}``.
    """


def _single_penalty_doc(summary: str, name: str, lambda_max: str, *, solver: bool) -> str:
    """The docstring of a single-penalty model (they differ in these words only)."""
    return f"""{summary}

    Least squares on stacked tasks (as :class:`RobustMTFL`) plus this one penalty, by MFISTA.

    Parameters
    ----------
    {name} : float >= 0 or "auto"
        Weight of the penalty; "auto" = ``0.1 * lambda_max_["{name}"]``.
{_COMMON_PARAMS_DOC}
{_SOLVER_DOC if solver else ""}
    Attributes
    ----------
    coef_ : ndarray of shape (d, m);  intercept_ : ndarray of shape (m,)
    {name}_ : float, the penalty used (on the normalised data)
    lambda_max_ : dict {{"{name}": float}}
        {lambda_max}
    objective_history_, n_iter_, converged_, n_tasks_, n_features_in_
{_BCD_ATTRS_DOC if solver else ""}    """


class MultiTaskRidge(_SinglePenaltyMTL):
    __doc__ = _single_penalty_doc(
        "Per-task ridge, ``lambda_ridge ||W||_F^2``.", "lambda_ridge",
        "The largest entry of the gradient at 0 (a scale: ridge never zeroes W).",
        solver=False)
    _parameter_constraints = _constraints("lambda_ridge", solver=False)
    _penalties, _penalty_types = ("lambda_ridge",), (Ridge,)

    def __init__(self, *, lambda_ridge="auto", max_iter: int = 1000, tol: float = 1e-5,
                 normalize: bool = True, fit_intercept: bool = True, warm_start: bool = False,
                 random_state=None):
        _keep_parameters(self, locals())


class MultiTaskLassoL1(_SinglePenaltyMTL):
    __doc__ = _single_penalty_doc(
        "Per-task lasso, ``lambda_l1 ||W||_1``.", "lambda_l1",
        "The largest entry of the gradient at 0 (smallest penalty with W = 0).", solver=True)
    _parameter_constraints = _constraints("lambda_l1", solver=True)
    _penalties, _penalty_types = ("lambda_l1",), (Lasso,)

    def __init__(self, *, lambda_l1="auto", max_iter: int = 1000, tol: float = 1e-5,
                 normalize: bool = True, fit_intercept: bool = True, warm_start: bool = False,
                 solver: str = "auto", random_state=None):
        _keep_parameters(self, locals())


class L21MTFL(_SinglePenaltyMTL):
    __doc__ = _single_penalty_doc(
        "Multi-task feature learning, ``lambda_rows ||W||_{1,2}`` (rMTFL with Q = 0).",
        "lambda_rows",
        "The largest row norm of the gradient at 0 (smallest penalty with W = 0).",
        solver=True)
    _parameter_constraints = _constraints("lambda_rows", solver=True)
    _penalties, _penalty_types = ("lambda_rows",), (RowGroups,)

    def __init__(self, *, lambda_rows="auto", max_iter: int = 1000, tol: float = 1e-5,
                 normalize: bool = True, fit_intercept: bool = True, warm_start: bool = False,
                 solver: str = "auto", random_state=None):
        _keep_parameters(self, locals())


class ColumnGroupMTL(_SinglePenaltyMTL):
    __doc__ = _single_penalty_doc(
        "Column-group model, ``lambda_columns ||W^T||_{1,2}`` (rMTFL with P = 0).",
        "lambda_columns",
        "The largest column norm of the gradient at 0 (smallest penalty with W = 0).",
        solver=True)
    _parameter_constraints = _constraints("lambda_columns", solver=True)
    _penalties, _penalty_types = ("lambda_columns",), (ColumnGroups,)

    def __init__(self, *, lambda_columns="auto", max_iter: int = 1000, tol: float = 1e-5,
                 normalize: bool = True, fit_intercept: bool = True, warm_start: bool = False,
                 solver: str = "auto", random_state=None):
        _keep_parameters(self, locals())


class TraceNormMTL(_SinglePenaltyMTL):
    __doc__ = _single_penalty_doc(
        "Trace-norm regression, ``lambda_trace ||W||_*`` (singular-value thresholding).",
        "lambda_trace",
        "The spectral norm of the gradient at 0 (smallest penalty with W = 0).",
        solver=False)
    _parameter_constraints = _constraints("lambda_trace", solver=False)
    _penalties, _penalty_types = ("lambda_trace",), (TraceNorm,)

    def __init__(self, *, lambda_trace="auto", max_iter: int = 1000, tol: float = 1e-5,
                 normalize: bool = True, fit_intercept: bool = True, warm_start: bool = False,
                 random_state=None):
        _keep_parameters(self, locals())


class RMTL(RobustMTFL):
    __doc__ = f"""Robust MTL (Chen, Zhou & Ye 2011): ``W = L + S``.

    Minimises ``sum_i 1/(m n_i) ||X_i^T (l_i + s_i) - y_i||^2 + lambda_trace ||L||_*
    + lambda_columns ||S^T||_{{1,2}}`` by MFISTA (singular-value thresholding for L).

    Parameters
    ----------
    lambda_trace : float >= 0 or "auto"
        Weight of the trace norm of the low-rank part L. "auto" =
        ``0.2 * lambda_max_["lambda_trace"]`` (spectral norm of the gradient at 0).
    lambda_columns : float >= 0 or "auto"
        Weight of ``||S^T||_{{1,2}}`` (outlier tasks). "auto" =
        ``0.1 * lambda_max_["lambda_columns"]`` (largest gradient column norm at 0).
{_COMMON_PARAMS_DOC}

    Attributes
    ----------
    As :class:`RobustMTFL`, with ``P_`` the low-rank part L, ``Q_`` the column-sparse part
    S, ``lambda_trace_`` in place of ``lambda_rows_`` and ``lambda_max_`` keyed
    ``{{"lambda_trace", "lambda_columns"}}``. ``shared_features_`` marks the nonzero rows
    of L.
    """

    _parameter_constraints = _constraints("lambda_trace", "lambda_columns", solver=False)
    _penalties = ("lambda_trace", "lambda_columns")
    _penalty_types = (TraceNorm, ColumnGroups)

    def __init__(self, *, lambda_trace="auto", lambda_columns="auto", max_iter: int = 1000,
                 tol: float = 1e-5, normalize: bool = True, fit_intercept: bool = True,
                 warm_start: bool = False, random_state=None):
        _keep_parameters(self, locals())

    def _resolve_penalties(self, lambda_max, data):
        return _StackedProxMTL._resolve_penalties(self, lambda_max, data)


class TwoStageRMTFL(MultiTaskEstimator):
    """2S-rMTFL: fit rMTFL, drop the detected outlier tasks, refit L2,1 on the rest.

    Stage 1 is :class:`RobustMTFL` (Eq. 2) on all tasks; stage 2 is :class:`L21MTFL` on the
    tasks stage 1 did not flag. Outlier tasks keep rMTFL's columns of W; the others get
    the refit's.

    Parameters
    ----------
    lambda_rows, lambda_columns : float >= 0 or "auto"
        Stage 1's penalties (as :class:`RobustMTFL`).
    refit_lambda_rows : float >= 0 or "auto"
        Stage 2's ``||W||_{1,2}`` weight; "auto" = 0.1 lambda_max of the refit data.
    max_iter, tol, normalize, fit_intercept, solver, random_state
        As :class:`RobustMTFL`, for each stage.

    Attributes
    ----------
    rmtfl_ : RobustMTFL (stage 1);  refit_ : L21MTFL or None (no task left)
    coef_ : ndarray of shape (d, m)
        Refit columns for the kept tasks, rMTFL's for the outlier tasks.
    intercept_ : ndarray of shape (m,)
    outlier_tasks_ : ndarray of bool, shape (m,);  outlier_scores_ : ndarray (m,)
    shared_features_ : ndarray of bool, shape (d,)
        Nonzero rows of the final W over the kept tasks (stage 1's P when none is kept).
    objective_history_ : ndarray of shape (n_iter_,)
        Stage 1's objective (Eq. 2) for its iterations, then stage 2's L2,1 objective.
    n_iter_ : int, both stages together;  converged_ : bool, both stages converged

    Snapshots are numbered 1..n_iter_ across both stages; their ``matrices`` are always
    ``{"P", "Q", "W"}`` of shape (d, m): stage 1's P and Q (fixed during stage 2) and the
    current full W (during stage 2, the refit's columns with the outliers' rMTFL columns);
    ``info["stage"]`` is 1 or 2.
    """

    _parameter_constraints = {
        name: constraint for name, constraint in _constraints(
            "lambda_rows", "lambda_columns", "refit_lambda_rows", solver=True).items()
        if name != "warm_start"}

    def __init__(self, *, lambda_rows="auto", lambda_columns="auto",
                 refit_lambda_rows="auto", max_iter: int = 1000, tol: float = 1e-5,
                 normalize: bool = True, fit_intercept: bool = True, solver: str = "auto",
                 random_state=None):
        _keep_parameters(self, locals())

    def _fit_steps(self, X, y, task) -> Iterator[Snapshot]:
        common = dict(max_iter=self.max_iter, tol=self.tol, normalize=self.normalize,
                      fit_intercept=self.fit_intercept, solver=self.solver)
        m = n_tasks_of(task)
        first = RobustMTFL(lambda_rows=self.lambda_rows, lambda_columns=self.lambda_columns,
                           **common)
        for snap in first.fit_iter(X, y, task):
            yield Snapshot(step=snap.step, objective=snap.objective, matrices=snap.matrices,
                           info=LazyMapping(partial(_stage_info, snap.info, 1)))
        n_first = first.n_iter_
        coef, intercept = first.coef_.copy(), first.intercept_.copy()
        keep = np.flatnonzero(~first.outlier_tasks_)
        refit = None
        if keep.size:
            rows = np.isin(task, keep)
            remap = np.full(m, -1)
            remap[keep] = np.arange(keep.size)
            refit = L21MTFL(lambda_rows=self.refit_lambda_rows, **common)
            for snap in refit.fit_iter(X[rows], y[rows], remap[task[rows]]):
                yield Snapshot(step=n_first + snap.step, objective=snap.objective,
                               matrices=LazyMapping(partial(
                                   _stage_two_matrices, first, snap.matrices, keep)),
                               info=LazyMapping(partial(_stage_info, snap.info, 2)))
            coef[:, keep] = refit.coef_
            intercept[keep] = refit.intercept_
        self.rmtfl_, self.refit_ = first, refit
        self.coef_, self.intercept_ = coef, intercept
        self.outlier_tasks_ = first.outlier_tasks_.copy()
        self.outlier_scores_ = first.outlier_scores_.copy()
        self.shared_features_ = (row_norms(coef[:, keep]) > 0) if keep.size else \
            first.shared_features_.copy()
        histories = [first.objective_history_] + ([refit.objective_history_] if refit else [])
        self.objective_history_ = np.concatenate(histories)
        self.n_iter_ = int(self.objective_history_.size)
        self.converged_ = bool(first.converged_ and (refit is None or refit.converged_))

    def predict(self, X, task) -> np.ndarray:
        """``x^T w_t + b_t`` for each row, shape (n_samples,)."""
        X, task = self._validate_predict_data(X, task)
        return _predict_linear(X, task, self.coef_, self.intercept_)

    def task_relationships(self) -> dict[str, np.ndarray]:
        """``{"P", "Q"}``: stage 1's parts, ``"W"``: the final coef_, all (d, m);
        ``"outlier_scores"``: stage 1's, (m,)."""
        check_is_fitted(self, "n_tasks_")
        return {"P": self.rmtfl_.P_.copy(), "Q": self.rmtfl_.Q_.copy(),
                "W": self.coef_.copy(), "outlier_scores": self.outlier_scores_.copy()}


def _stage_info(info, stage: int) -> dict:
    return {**info, "stage": stage}


def _stage_two_matrices(first: RobustMTFL, refit_matrices, keep: np.ndarray) -> dict:
    W = first.coef_.copy()
    W[:, keep] = refit_matrices["W"]
    return {"P": first.P_.copy(), "Q": first.Q_.copy(), "W": W}
