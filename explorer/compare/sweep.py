"""``sweep``: one estimator along one hyper-parameter, judged by test error and by the truth.

``sweep(estimator, data, "lambda_columns", values, n_trials=3)`` fits
``clone(estimator).set_params(lambda_columns=value)`` at every value on ``n_trials`` random
splits and returns a :class:`SweepResult`: one tidy frame (columns :data:`FRAME_COLUMNS`)
with, at every value and trial, the test error (per task and their mean), the single-task
baseline's test error, each learned task matrix's agreement with the data's truth, the
structure the truth can judge (outlier tasks, shared features) and the fit time; with
``cv=k`` also the value that ``k``-fold cross-validation on the trial's training part
chooses. ``.best()``, ``.truth_best()``, ``.cv_choice()``, ``.curve()``, ``.to_csv()``,
``.to_html()`` (the table of means). Numbers and text only: the curves and the standalone
report are :func:`explorer.viz.sweep.sweep_plot` and :func:`explorer.viz.sweep.report_html`,
a layer above this one.

Splits and seeds are :func:`explorer.compare.compare`'s (:func:`~.harness.job_seeds`):
trial ``i`` uses ``dataset.split(train_fraction, seed_i)`` with the split seed of trial ``i``,
so a sweep and a comparison with the same ``random_state`` and ``train_fraction`` see the
same splits; the inner folds are the harness's (:func:`~.harness.cv_folds`) and so is their
pooled scoring (:func:`~.harness.pooled_cv_score`). A trial is one job (its path runs in
order, each fit starting from the previous one); trials run in parallel through the
harness's executors (joblib's loky processes or threads, or Dask), and the frame does not
depend on which: nothing depends on the order in which trials finish.

Quantities (column ``quantity``; ``task`` is a task name, or ``"mean"`` for the mean over
the tasks and for whole-model figures):

======================================= ======================= ===========================
quantity                                task                    value
======================================= ======================= ===========================
``test_error``                          each task, ``"mean"``   the metric on the test part
                                                                ("auto": error rate, 1 -
                                                                accuracy, for classifiers;
                                                                nMSE = 1 - R^2 for
                                                                regressors)
``baseline_error``                      each task, ``"mean"``   the same for the single-task
                                                                baseline (fitted once per
                                                                trial, repeated at every
                                                                value)
``agreement:K:sign`` / ``:rank`` /      ``"mean"``              :func:`~.agreement.
``:relative_error``                                             relationship_agreement` of
                                                                ``task_relationships()[K]``
                                                                with its truth
                                                                (:func:`~.agreement.
                                                                truth_for`)
``outliers:precision`` / ``:recall``    ``"mean"``              ``outlier_tasks_`` against
                                                                ``truth["outlier_tasks"]``
``features:precision`` / ``:recall``    ``"mean"``              the features kept against
                                                                ``truth["shared_features"]``
``features:kept``                       ``"mean"``              how many features the model
                                                                keeps (with or without truth)
``fit_time``                            ``"mean"``              seconds of the fit
``cv_choice`` (with ``cv``)             ``"mean"``              the value CV chose; its
                                                                ``param_value`` is the
                                                                chosen value too
======================================= ======================= ===========================

The features a model keeps: ``shared_features_`` when it has one (rMTFL: the nonzero rows of
P), else the nonzero rows of a (d, m) ``coef_`` (L2,1 MTFL, lasso, ridge: every row); a model
with neither has no ``features:`` rows. Data without a truth (School) give test and baseline
error, ``features:kept`` and ``fit_time`` only.

Warm starts: where the estimator has a ``warm_start`` parameter, each trial fits the values in
path order (:func:`path_order`) on one model with ``warm_start=True``, each fit starting from
the previous solution; ``warm_start=False`` fits every value from scratch (a fresh clone).
The frame lists the fits in the user's order of ``values`` either way. Both reach the same
optimum up to the solver's stopping tolerance (``tests/test_sweep.py`` checks it).

>>> path_order("lambda_columns", [0.01, 1.0, 0.1])   # a penalty: from large to small
(1, 2, 0)
>>> path_order("n_neighbors", [9, 3, 5])             # anything else: from small to large
(1, 2, 0)
"""

from __future__ import annotations

import html
import numbers
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.dataset import MultiTaskDataset, frame_to_csv
from ..parameters import describe
from .agreement import AGREEMENT_KEYS, TRUTH_FOR, relationship_agreement, truth_for
from .code import plain_value
from .harness import (
    ComparisonCancelled,
    Job,
    _check_callable,
    _check_execution,
    _check_fraction,
    _check_int,
    _cv_score,
    _fit_kwargs,
    _root_seed,
    _run_dask,
    _run_joblib,
    _run_sequential,
    _seeded,
    cv_folds,
    job_seeds,
    pooled_cv_score,
    positive_labels,
)
from .metrics import detection_scores
from .scoring import Metric, estimator_outputs, evaluate, resolve_metrics

__all__ = ["sweep", "SweepResult", "SweepCancelled", "FRAME_COLUMNS", "MEAN", "ORDERS",
           "path_order", "baseline_for"]

#: The columns of :attr:`SweepResult.frame`.
FRAME_COLUMNS = ["param_value", "trial", "task", "quantity", "value"]
#: The ``task`` of the rows that average over the tasks or describe the whole model.
MEAN = "mean"
#: ``order`` of :func:`sweep` (and :func:`path_order`).
ORDERS = ("auto", "given", "decreasing", "increasing")
#: Parameters named so (or starting with ``lambda``) are penalties: larger is simpler.
PENALTY_NAMES = ("lam", "alpha")
#: The short names of :func:`~.agreement.relationship_agreement`'s figures in the quantities.
AGREEMENT_NAMES = dict(zip(AGREEMENT_KEYS, ("sign", "rank", "relative_error"), strict=True))
#: Compare's single-task baseline of each data kind (a ``Method.key`` of :mod:`.methods`).
BASELINE_METHODS = {"classification": "single_logistic", "regression": "ridge"}


class SweepCancelled(ComparisonCancelled):
    """``should_stop()`` returned True: the sweep stopped between fits.

    A :class:`~explorer.compare.harness.ComparisonCancelled` (the harness's cancellation
    error, what ``compare`` raises), so one ``except`` serves both.

    Attributes
    ----------
    done, total : int
        Fits finished before the stop, and fits planned.
    """

    def __init__(self, done: int, total: int):
        super().__init__(done, total)
        self.args = (f"sweep cancelled after {done} of {total} fits",)


class _Stopped(Exception):
    """Raised inside a trial when ``should_stop()`` says so (turned into SweepCancelled)."""


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def path_order(param: str, values: Sequence, order: str = "auto") -> tuple[int, ...]:
    """The order in which a trial fits ``values`` (indices into ``values``).

    Warm starts help when each fit starts from a solution close to its own, walking from the
    most regularised end: a penalty from large to small (the solution of a larger penalty is
    sparser and smoother, and lambda_max's solution is zero), anything else from small to
    large (fewer neighbours, rounds, depth first).

    Parameters
    ----------
    param : str
        The parameter's name: ``lambda...``, ``lam`` and ``alpha`` are penalties.
    values : sequence
        The values, in the user's order.
    order : {"auto", "given", "decreasing", "increasing"}
        "auto": the rule above for numbers (the user's order when a value is not a number);
        "given": the user's order; "decreasing" / "increasing": sorted so.

    Returns
    -------
    tuple of int, shape (len(values),)
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {list(ORDERS)}; got {describe(order)}.")
    given = tuple(range(len(values)))
    if order == "given" or not all(_is_number(v) for v in values):
        if order in ("decreasing", "increasing"):
            raise ValueError(f"order={order!r} needs numeric values; got {list(values)!r}.")
        return given
    if order == "auto":
        penalty = param.startswith("lambda") or param in PENALTY_NAMES
        order = "decreasing" if penalty else "increasing"
    sign = -1.0 if order == "decreasing" else 1.0
    return tuple(sorted(given, key=lambda i: (sign * float(values[i]), i)))


def baseline_for(kind: str) -> tuple[str, object]:
    """Compare's single-task baseline for data of ``kind``: ``(its name, an unfitted
    estimator)`` (per-task logistic regression, per-task ridge; :data:`.methods.METHODS`)."""
    from .methods import METHODS, CompareSettings

    method = next(m for m in METHODS if m.key == BASELINE_METHODS[kind])
    return method.name, method.make(CompareSettings())


@dataclass(frozen=True)
class SweepJob:
    """One trial of a sweep: what a worker needs besides the data set (small, picklable)."""

    trial: int
    estimator: object
    name: str
    param: str
    values: tuple
    order: tuple[int, ...]
    warm_start: bool
    baseline: object | None
    baseline_name: str
    train_fraction: float
    metric: Metric
    cv: int | None
    random_state: int

    @property
    def n_fits(self) -> int:
        """The fits of this trial, as :func:`sweep` counts its progress."""
        return (len(self.values) * (1 + (self.cv or 0))
                + (self.baseline is not None))


@dataclass(frozen=True)
class TrialResult:
    """One trial's rows ``(value index, trial, task, quantity, value)``; ``truth_keys``: the
    truth keys that judged something."""

    trial: int
    rows: list
    truth_keys: tuple[str, ...]
    n_fits: int


def _error_rows(index: int, trial: int, quantity: str, scores: tuple, names) -> list:
    per_task, average = scores
    return ([(index, trial, names[t], quantity, float(v)) for t, v in sorted(per_task.items())]
            + [(index, trial, MEAN, quantity, float(average))])


def _features_kept(model) -> np.ndarray | None:
    """The model's kept features, shape (d,) bool: ``shared_features_``, else the nonzero
    rows of a 2-D ``coef_``; None when it has neither."""
    kept = getattr(model, "shared_features_", None)
    if kept is not None and np.ndim(kept) == 1:
        return np.asarray(kept, dtype=bool)
    coef = getattr(model, "coef_", None)
    if isinstance(coef, np.ndarray) and coef.ndim == 2:
        return np.any(coef != 0, axis=1)
    return None


def _model_rows(index: int, trial: int, model, truth: dict, used: set) -> list:
    """The agreement and structure rows of a fitted model (``used`` gets the truth keys
    that judged something)."""
    rows = []
    relationships = dict(model.task_relationships()) if hasattr(
        model, "task_relationships") else {}
    for key in sorted(relationships):
        try:
            matrix = np.asarray(relationships[key], dtype=np.float64)
        except (TypeError, ValueError):   # not a numeric matrix
            continue
        judged = truth_for(key, matrix.shape, truth) if matrix.ndim == 2 else None
        if judged is None:
            continue
        name, entries = judged
        used.add(name)
        figures = (relationship_agreement(matrix, truth[name], entries=entries)
                   if np.all(np.isfinite(matrix)) else {})
        rows += [(index, trial, MEAN, f"agreement:{key}:{short}",
                  float(figures.get(figure, np.nan)))
                 for figure, short in AGREEMENT_NAMES.items()]
    outliers = getattr(model, "outlier_tasks_", None)
    if outliers is not None and truth.get("outlier_tasks") is not None \
            and np.shape(outliers) == np.shape(truth["outlier_tasks"]):
        used.add("outlier_tasks")
        found = detection_scores(np.asarray(outliers, dtype=bool), truth["outlier_tasks"])
        rows += [(index, trial, MEAN, f"outliers:{s}", found[s])
                 for s in ("precision", "recall")]
    kept = _features_kept(model)
    if kept is not None:
        shared = truth.get("shared_features")
        if shared is not None and kept.shape == np.shape(shared):
            used.add("shared_features")
            found = detection_scores(kept, shared)
            rows += [(index, trial, MEAN, f"features:{s}", found[s])
                     for s in ("precision", "recall")]
        rows.append((index, trial, MEAN, "features:kept", float(kept.sum())))
    return rows


def _path_models(job: SweepJob, seed: int, X, y, task, fit_kwargs: dict, stop: Callable):
    """Fit the values in path order on rows ``X`` (n, d), ``y``, ``task`` (n,): yields
    ``(index, fitted model, seconds)``; warm-started on one model when ``job.warm_start``,
    else a fresh clone per value. ``stop()`` is checked before each fit."""
    model = None
    for index in job.order:
        stop()
        value = {job.param: job.values[index]}
        if model is not None and job.warm_start:
            model.set_params(**value)
        else:
            model = _seeded(job.estimator, seed).set_params(**value)
            if job.warm_start:
                model.set_params(warm_start=True)
        start = time.perf_counter()
        model.fit(X, y, task, **fit_kwargs)
        yield index, model, time.perf_counter() - start


def _cv_choice(job: SweepJob, train: MultiTaskDataset, seed: int, positive, stop, on_fit
               ) -> int:
    """Index (into ``job.values``) of the value ``job.cv``-fold CV on ``train`` chooses:
    the best pooled out-of-fold score (:func:`~.harness.pooled_cv_score`); ties go to the
    first in the user's order. Warm-started along the path within each fold, like the
    trial's own fits (cold: :func:`~.harness._cv_score` itself)."""
    folds = cv_folds(train, job.cv, np.random.default_rng(seed))
    n = len(job.values)
    if not job.warm_start:
        harness_job = Job(job.trial, job.name, job.estimator, None, job.train_fraction,
                          (job.metric,), job.cv, job.random_state)
        scores = []
        for value in job.values:
            stop()
            scores.append(_cv_score(harness_job, {job.param: value}, train, folds, seed,
                                    positive))
            for _ in range(job.cv):
                on_fit()
    else:
        held_rows: list = []
        outputs: list[list] = [[] for _ in range(n)]   # value -> per fold (predictions, scores)
        for k in range(job.cv):
            held = folds == k
            if not held.any():
                for _ in range(n):
                    on_fit()
                continue
            keep = ~held
            held_rows.append(np.flatnonzero(held))
            for index, model, _ in _path_models(
                    job, seed, train.X[keep], train.y[keep], train.task[keep],
                    _fit_kwargs(job.estimator, train.task_features), stop):
                outputs[index].append(estimator_outputs([job.metric], model, train.X[held],
                                                        train.task[held]))
                on_fit()
        scores = [pooled_cv_score(job.metric, train, held_rows,
                                  [o[0] for o in outputs[i]], [o[1] for o in outputs[i]],
                                  positive) for i in range(n)]
    return int(np.argmax(scores))   # ties: the first in the user's order


def run_trial(job: SweepJob, dataset: MultiTaskDataset, *, on_fit: Callable | None = None,
              should_stop: Callable | None = None) -> TrialResult:
    """One trial: split, fit the baseline, fit every value along the path and score it,
    then (with ``job.cv``) choose a value by inner CV on the training part.

    ``on_fit()`` is called after each fit, ``should_stop()`` checked before each (True
    raises ``_Stopped``). An error is re-raised with a note naming the trial.
    """
    on_fit = on_fit or (lambda: None)

    def stop():
        if should_stop is not None and should_stop():
            raise _Stopped

    try:
        return _run_trial(job, dataset, on_fit, stop)
    except _Stopped:
        raise
    except Exception as error:
        if hasattr(error, "add_note"):   # Python >= 3.11
            error.add_note(f"in sweep: {job.name}, {job.param}, trial {job.trial}")
        raise


def _run_trial(job: SweepJob, dataset: MultiTaskDataset, on_fit, stop) -> TrialResult:
    split_seed, seed = job_seeds(job.random_state, job.trial, job.name)
    train, test = dataset.split(job.train_fraction, random_state=split_seed)
    positive = positive_labels(dataset)
    names = list(dataset.task_names)
    truth = dict(dataset.truth or {})
    rows: list = []
    used: set = set()
    metrics = [job.metric]
    baseline = None
    if job.baseline is not None:
        stop()
        base = _seeded(job.baseline, job_seeds(job.random_state, job.trial,
                                               job.baseline_name)[1])
        base.fit(train.X, train.y, train.task, **_fit_kwargs(base, train.task_features))
        baseline = evaluate(metrics, base, test.X, test.y, test.task,
                            positive)[job.metric.name]
        on_fit()
    for index, model, seconds in _path_models(
            job, seed, train.X, train.y, train.task,
            _fit_kwargs(job.estimator, train.task_features), stop):
        scores = evaluate(metrics, model, test.X, test.y, test.task, positive)[job.metric.name]
        rows += _error_rows(index, job.trial, "test_error", scores, names)
        if baseline is not None:
            rows += _error_rows(index, job.trial, "baseline_error", baseline, names)
        rows += _model_rows(index, job.trial, model, truth, used)
        rows.append((index, job.trial, MEAN, "fit_time", float(seconds)))
        on_fit()
    if job.cv:
        choice = _cv_choice(job, train, seed, positive, stop, on_fit)
        value = job.values[choice]
        rows.append((choice, job.trial, MEAN, "cv_choice",
                     float(value) if _is_number(value) else float(choice)))
    return TrialResult(job.trial, rows, tuple(sorted(used)), job.n_fits)


# ---------------------------------------------------------------------- the result
#: Quantities whose best value is the largest (by suffix); the others' is the smallest.
_HIGHER = (":sign", ":rank", ":precision", ":recall")
#: Quantities without a better direction.
_NO_DIRECTION = ("features:kept", "cv_choice")


class SweepResult:
    """A sweep's tidy frame and what it says.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns :data:`FRAME_COLUMNS`: ``param_value`` (a value of ``param``), ``trial``
        (int), ``task`` (a task name or ``"mean"``), ``quantity`` (module docstring),
        ``value`` (float). Rows in the user's order of ``values``, then by trial; the
        ``cv_choice`` rows last.
    param : str
        The parameter swept.
    values : list
        Its values, in the user's order.
    truth_keys : list of str
        The data's truth keys that judged something (``"coef"``, ``"outlier_tasks"``, ...);
        empty without a truth.
    metric : str
        The metric behind ``test_error`` and ``baseline_error``.
    greater_is_better : bool
        Its direction (False for the default error rate and nMSE).
    task_names : list of str
    settings : dict, optional
        The other arguments of :func:`sweep` (shown by :meth:`to_html`).
    """

    def __init__(self, frame: pd.DataFrame, *, param: str, values: Sequence,
                 truth_keys: Sequence[str] = (), metric: str = "error_rate",
                 greater_is_better: bool = False, task_names: Sequence[str] = (),
                 settings: dict | None = None):
        missing = sorted(set(FRAME_COLUMNS) - set(frame.columns))
        if missing:
            raise ValueError(f"frame must have the columns {FRAME_COLUMNS}; {missing} are "
                             f"missing.")
        self.frame = frame
        self.param = param
        self.values = list(values)
        self.truth_keys = list(truth_keys)
        self.metric = metric
        self.greater_is_better = bool(greater_is_better)
        self.task_names = list(task_names)
        self.settings = dict(settings or {})

    def __repr__(self) -> str:
        return (f"SweepResult(param={self.param!r}, n_values={len(self.values)}, "
                f"n_trials={self.n_trials}, truth_keys={self.truth_keys})")

    @property
    def n_trials(self) -> int:
        return int(self.frame["trial"].nunique())

    @property
    def quantities(self) -> list[str]:
        """The quantities recorded, in the frame's order."""
        return list(dict.fromkeys(self.frame["quantity"]))

    def higher_is_better(self, quantity: str) -> bool:
        """Whether a larger ``quantity`` is better (ValueError for one without a
        direction: ``features:kept``, ``cv_choice``)."""
        if quantity in _NO_DIRECTION:
            raise ValueError(f"{quantity!r} has no better direction; choose one of "
                             f"{[q for q in self.quantities if q not in _NO_DIRECTION]}.")
        if quantity in ("test_error", "baseline_error"):
            return self.greater_is_better
        return quantity.endswith(_HIGHER)

    def curve(self, quantity: str, task: str = MEAN) -> pd.DataFrame:
        """Mean, standard deviation (ddof=1; 0 with one trial) and count over the trials of
        one quantity at every value.

        Returns
        -------
        pandas.DataFrame
            Index: the values in the user's order (``param_value``); columns ``mean``,
            ``std``, ``n``. Values without a finite figure have ``mean`` NaN.
        """
        if quantity not in self.quantities or quantity == "cv_choice":
            raise ValueError(f"quantity must be one of the recorded quantities "
                             f"{[q for q in self.quantities if q != 'cv_choice']}; got "
                             f"{describe(quantity)}.")
        part = self.frame[(self.frame["quantity"] == quantity) & (self.frame["task"] == task)]
        if part.empty:
            raise ValueError(f"task must be a task with {quantity!r} rows; got "
                             f"{describe(task)}.")
        positions = {_key(v): i for i, v in enumerate(self.values)}
        index = part["param_value"].map(lambda v: positions[_key(v)])
        grouped = part["value"].groupby(index.to_numpy())
        out = pd.DataFrame({"mean": grouped.mean(), "std": grouped.std(ddof=1).fillna(0.0),
                            "n": grouped.count()}).reindex(range(len(self.values)))
        out.index = pd.Index(self.values, name="param_value")
        return out

    def best(self, by: str = "test_error", *, task: str = MEAN):
        """The value of ``param`` with the best mean over the trials of quantity ``by``.

        Best: lowest for ``test_error``, ``baseline_error`` (highest when the metric is a
        score), ``:relative_error`` and ``fit_time``; highest for ``:sign``, ``:rank``,
        ``:precision`` and ``:recall``. Ties go to the first in the user's order of
        ``values``; None when no value has a finite mean.
        """
        higher = self.higher_is_better(by)
        means = self.curve(by, task)["mean"].to_numpy(dtype=float)
        if not np.isfinite(means).any():
            return None
        scores = np.where(np.isfinite(means), means if higher else -means, -np.inf)
        return self.values[int(np.argmax(scores))]

    def truth_quantity(self) -> str | None:
        """The quantity :meth:`truth_best` goes by: the relative error of the learned matrix
        the truth judges (``agreement:<K>:relative_error``), ``K`` the first of
        :data:`~.agreement.TRUTH_FOR`'s keys recorded (``W``, ``similarity``,
        ``correlation``, ``W_normalised``: the whole estimate), else the first in sorted
        order; None without such rows (no truth)."""
        judged = sorted(q.split(":")[1] for q in self.quantities
                        if q.startswith("agreement:") and q.endswith(":relative_error"))
        if not judged:
            return None
        preferred = [k for k in TRUTH_FOR if k in judged] + judged
        return f"agreement:{preferred[0]}:relative_error"

    def truth_best(self, by: str | None = None):
        """The value at which the estimate agrees best with the truth: :meth:`best` by
        ``by``, by default by :meth:`truth_quantity` (the lowest relative error, to the
        truth, of the whole learned matrix: scale-free, it weighs every entry); None when
        the data have no truth for it."""
        by = self.truth_quantity() if by is None else by
        return None if by is None else self.best(by)

    def cv_choices(self) -> list:
        """Each trial's CV choice (trial order); empty without ``cv``."""
        part = self.frame[self.frame["quantity"] == "cv_choice"].sort_values("trial")
        return list(part["param_value"])

    def cv_choice(self):
        """The value chosen most often by the trials' inner CV (ties: the first in the
        user's order of ``values``); None without ``cv``."""
        choices = self.cv_choices()
        if not choices:
            return None
        counts = [sum(_key(c) == _key(v) for c in choices) for v in self.values]
        return self.values[int(np.argmax(counts))]

    def summary(self) -> pd.DataFrame:
        """Mean ± std over the trials of every ``"mean"`` quantity (not ``cv_choice``) at
        every value: rows the values (user's order), columns the quantities, cells
        ``"mean ± std"`` text."""
        columns = {}
        for quantity in self.quantities:
            if quantity == "cv_choice":
                continue
            curve = self.curve(quantity)
            columns[quantity] = [f"{m:.4g} ± {s:.2g}" if np.isfinite(m) else "n/a"
                                 for m, s in zip(curve["mean"], curve["std"], strict=True)]
        out = pd.DataFrame(columns, index=pd.Index(self.values, name=self.param))
        return out

    def to_csv(self, path=None) -> str | None:
        """The tidy frame as CSV (a string when ``path`` is None)."""
        return frame_to_csv(self.frame, path)

    def to_html(self, path=None) -> str | None:
        """The table of means (:meth:`summary`, quantities as rows, the values as columns)
        as an HTML ``<table>`` (names escaped) with its caption; written to ``path`` when
        given (returns None).

        The curves (:func:`explorer.viz.sweep.sweep_plot`) and the standalone report with
        them, Bokeh inline (:func:`explorer.viz.sweep.report_html`), are drawn by the viz
        layer, above this one.
        """
        summary = self.summary().T
        esc = html.escape
        head = "".join(f"<th>{esc(_text(v))}</th>" for v in self.values)
        body = "".join(
            f"<tr><th>{esc(str(quantity))}</th>"
            + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>"
            for quantity, row in zip(summary.index, summary.to_numpy(), strict=True))
        table = (f'<table class="mtl-compare mtl-sweep"><caption>{self.caption()} Mean ± std '
                 f'over the trials of the rows of task "mean".</caption><thead><tr>'
                 f"<th>{esc(self.param)}</th>{head}</tr></thead><tbody>{body}</tbody></table>")
        if path is None:
            return table
        Path(path).write_text(table, encoding="utf-8")
        return None

    def caption(self) -> str:
        """One sentence on the markers: the CV choice and the truth-best value."""
        parts = [f"{self.param} swept over {len(self.values)} values, {self.n_trials} trials"]
        cv, best = self.cv_choice(), self.truth_best()
        if cv is not None:
            parts.append(f"CV's choice {_text(cv)}")
        if best is not None:
            parts.append(f"truth-best {_text(best)}")
        return html.escape("; ".join(parts) + ".")


def _key(value):
    """A value as a dict key: numbers by their float value (ints and floats alike)."""
    return float(value) if _is_number(value) else repr(value)


def _text(value) -> str:
    return f"{value:.4g}" if _is_number(value) else str(value)


# ---------------------------------------------------------------------- sweep
def _check_values(values, estimator, param) -> tuple:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)) \
            or len(values) == 0:
        raise ValueError(f"values must be a non-empty sequence of values of {param!r}; got "
                         f"{describe(values)}.")
    values = tuple(v.item() if isinstance(v, np.generic) else v for v in values)
    keys = [_key(v) for v in values]
    if len(set(keys)) != len(keys):
        raise ValueError(f"values must be distinct; got {list(values)!r}.")
    return values


def sweep(estimator, data: MultiTaskDataset, param: str, values: Sequence, *,
          n_trials: int = 3, train_fraction: float = 0.7, cv: int | None = None,
          metric="auto", random_state: int | None = 0, n_jobs: int = 1,
          backend: str = "loky", client=None, warm_start: bool = True,
          callback: Callable[[int, int], None] | None = None,
          should_stop: Callable[[], bool] | None = None, baseline="auto",
          order: str = "auto") -> SweepResult:
    """Fit ``estimator`` at every value of ``param`` on ``n_trials`` random splits.

    Parameters
    ----------
    estimator : estimator
        Any estimator of the contract (docs/DESIGN.md); cloned per trial. Its
        ``random_state``, when None, is the trial's seed (the same at every value).
    data : MultiTaskDataset
    param : str
        One of ``estimator.get_params()``.
    values : sequence, shape (n_values,)
        Distinct values of ``param``; the frame lists them in this order.
    n_trials : int >= 1
        Random splits: trial ``i`` uses ``data.split(train_fraction, seed_i)``, the split of
        :func:`~explorer.compare.compare`'s trial ``i`` (:func:`~.harness.job_seeds`).
    train_fraction : float in (0, 1)
    cv : int >= 2, optional
        Also choose the value by ``cv``-fold cross-validation on each trial's training part
        (the harness's per-task folds and pooled scoring, the metric below); recorded as
        quantity ``cv_choice``.
    metric : str or callable
        One metric (:mod:`explorer.compare.scoring`): "auto" is the error rate (1 -
        accuracy) for classification, nMSE (1 - R^2 per task) for regression.
    random_state : int >= 0 or None
        Root of every seed (None draws one, kept in ``settings``).
    n_jobs : int
        Trials in parallel for ``"loky"`` / ``"threading"`` (-1: all cores); 1 runs in
        process. Ignored by ``"dask"``.
    backend : {"loky", "threading", "dask"}
    client : distributed.Client or str, optional
        As :func:`~explorer.compare.compare` (``backend="dask"``).
    warm_start : bool
        Fit each trial's values in path order (:func:`path_order`), each from the previous
        solution, when the estimator has a ``warm_start`` parameter; False: every value
        from scratch.
    callback : callable(done, total), optional
        Progress in fits (the path's, the baseline's and, with ``cv``, ``cv`` per value).
        Called in the calling thread: after each fit with ``n_jobs=1``, after each trial
        (its fits at once) in parallel.
    should_stop : callable() -> bool, optional
        Checked between fits (``n_jobs=1`` and threads: before every fit; loky and Dask:
        between trials); True raises :class:`SweepCancelled` (a
        :class:`~explorer.compare.harness.ComparisonCancelled`). Make it cheap and
        thread-safe (e.g. ``event.is_set``).
    baseline : "auto", estimator or None
        The single-task baseline behind ``baseline_error``: "auto" is
        :func:`~explorer.compare.compare`'s for the data kind (per-task logistic
        regression, per-task ridge; :func:`baseline_for`), fitted once per trial with that
        method's seed; None records none.
    order : {"auto", "given", "decreasing", "increasing"}
        The path order of the fits (:func:`path_order`); "auto": a penalty from large to
        small, anything else from small to large.

    Returns
    -------
    SweepResult
    """
    if not all(hasattr(estimator, a) for a in ("fit", "predict", "get_params")):
        raise ValueError(f"estimator must be an estimator with fit, predict and get_params; "
                         f"got {describe(estimator)}.")
    if not isinstance(data, MultiTaskDataset):
        raise ValueError(f"data must be a MultiTaskDataset; got {describe(data)}.")
    known = estimator.get_params()
    if not isinstance(param, str) or param not in known:
        raise ValueError(f"param must be one of {type(estimator).__name__}'s parameters "
                         f"{sorted(known)}; got {describe(param)}.")
    values = _check_values(values, estimator, param)
    n_trials = _check_int("n_trials", n_trials, 1)
    train_fraction = _check_fraction(train_fraction)
    if cv is not None:
        cv = _check_int("cv", cv, 2)
    metrics = resolve_metrics(metric, data.kind)
    if len(metrics) != 1:
        raise ValueError(f"metric must name one metric; got {[m.name for m in metrics]}.")
    random_state = _root_seed(random_state)
    n_jobs = _check_execution(n_jobs, backend, client)
    if not isinstance(warm_start, (bool, np.bool_)):
        raise ValueError(f"warm_start must be True or False; got {describe(warm_start)}.")
    callback = _check_callable("callback", callback)
    should_stop = _check_callable("should_stop", should_stop) or (lambda: False)
    if isinstance(baseline, str) and baseline == "auto":
        baseline_name, baseline = baseline_for(data.kind)
    elif baseline is None or all(hasattr(baseline, a) for a in ("fit", "predict")):
        baseline_name = "baseline"
    else:
        raise ValueError(f"baseline must be 'auto', an estimator or None; got "
                         f"{describe(baseline)}.")
    order_rule = order
    order = path_order(param, values, order)
    warm = bool(warm_start) and "warm_start" in known
    # One split up front: a data set that cannot be split fails here, with its message.
    name = type(estimator).__name__
    data.split(train_fraction, random_state=job_seeds(random_state, 0, name)[0])

    jobs = [SweepJob(trial, estimator, name, param, values, order, warm, baseline,
                     baseline_name, train_fraction, metrics[0], cv, random_state)
            for trial in range(n_trials)]
    total = sum(job.n_fits for job in jobs)
    results: list[TrialResult] = []
    done = [0]
    lock = threading.Lock()

    def report(n: int) -> None:
        with lock:
            done[0] += n
            count = done[0]
        if callback is not None:
            callback(count, total)

    sequential = backend != "dask" and n_jobs == 1

    def on_done(result: TrialResult) -> None:
        results.append(result)
        if not sequential:   # (in process, each fit reported itself)
            report(result.n_fits)

    try:
        if backend == "dask":
            finished = _run_dask(jobs, data, on_done, should_stop, client, run=run_trial)
        elif sequential:
            finished = _run_sequential(jobs, data, on_done, should_stop, run=partial(
                run_trial, on_fit=lambda: report(1), should_stop=should_stop))
        else:
            run = (partial(run_trial, should_stop=should_stop) if backend == "threading"
                   else run_trial)
            finished = _run_joblib(jobs, data, on_done, should_stop, backend, n_jobs,
                                   run=run)
    except _Stopped:
        finished = False
    if not finished:
        raise SweepCancelled(done[0], total)

    rows = sorted((row for result in results for row in result.rows),
                  key=lambda r: (r[3] == "cv_choice", r[0] if r[3] != "cv_choice" else 0,
                                 r[1]))
    frame = pd.DataFrame([(values[r[0]], *r[1:]) for r in rows], columns=FRAME_COLUMNS)
    frame = frame.astype({"trial": np.int64, "value": np.float64})
    truth_keys = sorted({key for result in results for key in result.truth_keys})
    settings = {"estimator": repr(estimator), "n_trials": n_trials,
                "train_fraction": train_fraction, "cv": cv, "metric": metrics[0].name,
                "random_state": random_state, "warm_start": warm,
                "order": order_rule, "path": [plain_value(values[i]) for i in order],
                "baseline": baseline_name if baseline is not None else None}
    return SweepResult(frame, param=param, values=list(values), truth_keys=truth_keys,
                       metric=metrics[0].name,
                       greater_is_better=metrics[0].greater_is_better,
                       task_names=list(data.task_names), settings=settings)
