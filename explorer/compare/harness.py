"""``compare``: methods side by side over repeated random splits, as in the papers' tables.

Each (trial, method) pair is one independent job. Its randomness comes from
``numpy.random.SeedSequence(random_state, spawn_key=...)``: the split of trial ``i`` from
``spawn_key=(i,)`` (the same split for every method of the trial), the estimator's seed and
its inner cross-validation folds from ``spawn_key=(i, crc32(method name))``. Nothing depends
on the order in which jobs run, so sequential, joblib (loky processes or threads) and Dask
runs give the same numbers for the same seeds.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from ..data.dataset import MultiTaskDataset
from ..parameters import describe
from .code import plain_value
from .result import ComparisonResult
from .scoring import Metric, estimator_outputs, evaluate, resolve_metrics, score_outputs

__all__ = ["compare", "ComparisonCancelled", "BACKENDS", "job_seeds"]

BACKENDS = ("loky", "threading", "dask")


class ComparisonCancelled(RuntimeError):
    """``should_stop()`` returned True: the comparison stopped between jobs.

    Attributes
    ----------
    done, total : int
        Jobs finished before the stop, and jobs planned.
    """

    def __init__(self, done: int, total: int):
        super().__init__(f"comparison cancelled after {done} of {total} jobs")
        self.done, self.total = done, total


def job_seeds(random_state: int, trial: int, method: str) -> tuple[int, int]:
    """``(split seed, method seed)`` of job (trial, method).

    The split seed depends on the trial only (every method of a trial sees the same
    split); the method seed (estimator ``random_state`` when it is None, inner CV folds)
    also on the method's name.

    >>> job_seeds(0, 1, "ridge")[0] == job_seeds(0, 1, "lasso")[0]
    True
    >>> job_seeds(0, 1, "ridge")[1] == job_seeds(0, 1, "lasso")[1]
    False
    """
    split = np.random.SeedSequence(random_state, spawn_key=(trial,))
    method_key = zlib.crc32(method.encode("utf-8"))
    own = np.random.SeedSequence(random_state, spawn_key=(trial, method_key))
    return (int(split.generate_state(1, np.uint64)[0]),
            int(own.generate_state(1, np.uint32)[0]))


@dataclass(frozen=True)
class Job:
    """What one worker needs besides the data set (small, picklable)."""

    trial: int
    method: str
    estimator: object
    candidates: tuple[dict, ...] | None
    train_fraction: float
    metrics: tuple[Metric, ...]
    cv: int
    random_state: int
    report_errors: bool = False


@dataclass(frozen=True)
class JobResult:
    """One job's outcome: ``scores[metric] = (per-task dict, average)``."""

    trial: int
    method: str
    scores: dict
    fit_time_s: float
    params: str
    relationships: dict


@dataclass(frozen=True)
class JobFailure:
    """A job whose fit (or scoring) raised, with ``errors="report"``: the error's type and
    message, as text (picklable whatever the error was)."""

    trial: int
    method: str
    error: str


def _fit_kwargs(estimator, task_features) -> dict:
    if task_features is not None and getattr(estimator, "uses_task_features", False):
        return {"task_features": task_features}
    return {}


def _seeded(estimator, seed: int):
    """A clone whose ``random_state`` is ``seed`` when the given one is None."""
    model = clone(estimator)
    params = model.get_params(deep=False)
    if "random_state" in params and params["random_state"] is None:
        model.set_params(random_state=seed)
    return model


def cv_folds(train: MultiTaskDataset, cv: int, rng: np.random.Generator) -> np.ndarray:
    """Inner-CV fold of each training row, shape (n_samples,), values in ``-1..cv-1``.

    Rows are dealt round-robin within each task (and, for classification, each class of
    a task: per-task stratified folds). A group of one row gets -1 (always trained on), so
    every fold's training part keeps every task and every class of a task.
    """
    folds = np.full(train.n_samples, -1, dtype=np.intp)
    for t in range(train.n_tasks):
        rows = np.flatnonzero(train.task == t)
        groups = [rows]
        if train.kind == "classification":
            groups = [rows[train.y[rows] == c] for c in np.unique(train.y[rows])]
        for group in groups:
            if group.size >= 2:
                start = int(rng.integers(cv))
                folds[rng.permutation(group)] = (start + np.arange(group.size)) % cv
    return folds


def _cv_score(job: Job, candidate: dict, train: MultiTaskDataset, folds: np.ndarray,
              seed: int, positive: np.ndarray) -> float:
    """The candidate's inner-CV score (greater is better): the metric of the out-of-fold
    predictions of every held-out row, pooled over the folds and scored once
    (:func:`pooled_cv_score`).

    Scoring each fold on its own and averaging would normalise a regression task's nMSE by
    the variance of the few rows it holds out of that fold (about 8 per task at 24%
    training on School, 1 for the smallest schools): a single held-out row has variance 0,
    its nMSE is infinite for every candidate, and the tie went to the first of the grid.
    Pooled, each task's nMSE divides by the variance of all its training rows, as the test
    score does with the test rows.
    """
    metric = job.metrics[0]
    held_rows, predictions, scores = [], [], []
    for k in range(job.cv):
        held = folds == k
        if not held.any():
            continue
        model = _seeded(job.estimator, seed).set_params(**candidate)
        fit_rows = ~held
        model.fit(train.X[fit_rows], train.y[fit_rows], train.task[fit_rows],
                  **_fit_kwargs(model, train.task_features))
        fold_predictions, fold_scores = estimator_outputs([metric], model, train.X[held],
                                                          train.task[held])
        held_rows.append(np.flatnonzero(held))
        predictions.append(fold_predictions)
        scores.append(fold_scores)
    return pooled_cv_score(metric, train, held_rows, predictions, scores, positive)


def pooled_cv_score(metric: Metric, train: MultiTaskDataset, held_rows: list,
                    predictions: list, scores: list, positive: np.ndarray | None) -> float:
    """One candidate's inner-CV score (greater is better) from its out-of-fold outputs.

    Parameters
    ----------
    metric : Metric
    train : MultiTaskDataset
        The training part the folds were cut from.
    held_rows : list of ndarray of int
        Each fold's held-out rows of ``train``, shape (n_held_k,).
    predictions, scores : list of (ndarray of shape (n_held_k,) or None)
        Each fold's model's outputs on its held-out rows (:func:`estimator_outputs`).
    positive : ndarray of shape (n_tasks,) or None
        Each task's relevant label (:func:`positive_labels`).

    Returns
    -------
    float
        The metric of the pooled rows (negated when lower is better), ``-inf`` without
        held-out rows or when it is not finite. Tasks whose value is not finite for this
        candidate (a task whose training targets are all equal) are left out of its
        average.
    """
    if not held_rows:
        return -np.inf
    rows = np.concatenate(held_rows)
    pooled = [None if parts[0] is None else np.concatenate(parts)
              for parts in (predictions, scores)]
    per_task, average = score_outputs([metric], train.y[rows], train.task[rows], *pooled,
                                      positive)[metric.name]
    if metric.function is not None or metric.name != "ap":   # "ap" averages no tasks
        finite = [v for v in per_task.values() if np.isfinite(v)]
        average = float(np.mean(finite)) if finite else np.nan
    if not np.isfinite(average):
        return -np.inf
    return average if metric.greater_is_better else -average


def positive_labels(dataset: MultiTaskDataset) -> np.ndarray | None:
    """Each task's larger label (the relevant one of the ranking metrics), or None."""
    if dataset.kind != "classification":
        return None
    return np.array([np.max(dataset.y[dataset.task == t]) for t in range(dataset.n_tasks)])


def run_job(job: Job, dataset: MultiTaskDataset) -> JobResult | JobFailure:
    """Split, choose hyper-parameters by inner CV (if a grid is given), fit, score.

    An error is re-raised with a note naming the job (method and trial), or returned as a
    :class:`JobFailure` when ``job.report_errors``.
    """
    try:
        return _run_job(job, dataset)
    except Exception as error:
        if job.report_errors:
            return JobFailure(job.trial, job.method, f"{type(error).__name__}: {error}")
        if hasattr(error, "add_note"):   # Python >= 3.11
            error.add_note(f"in compare: method {job.method!r}, trial {job.trial}")
        raise


def _run_job(job: Job, dataset: MultiTaskDataset) -> JobResult:
    split_seed, seed = job_seeds(job.random_state, job.trial, job.method)
    train, test = dataset.split(job.train_fraction, random_state=split_seed)
    positive = positive_labels(dataset)
    chosen: dict = dict(job.candidates[0]) if job.candidates else {}
    if job.candidates and len(job.candidates) > 1:
        folds = cv_folds(train, job.cv, np.random.default_rng(seed))
        cv_scores = [_cv_score(job, c, train, folds, seed, positive) for c in job.candidates]
        chosen = dict(job.candidates[int(np.argmax(cv_scores))])  # ties: first in the grid
    model = _seeded(job.estimator, seed).set_params(**chosen)
    start = time.perf_counter()
    model.fit(train.X, train.y, train.task, **_fit_kwargs(model, train.task_features))
    fit_time = time.perf_counter() - start
    scores = evaluate(job.metrics, model, test.X, test.y, test.task, positive)
    relationships = {}
    if hasattr(model, "task_relationships"):
        for key, value in dict(model.task_relationships()).items():
            try:
                relationships[key] = np.array(value, dtype=np.float64)
            except (TypeError, ValueError):   # not a numeric matrix: nothing to average
                continue
    return JobResult(job.trial, job.method, scores, fit_time,
                     json.dumps(chosen, sort_keys=True, default=repr), relationships)


# ---------------------------------------------------------------------- validation
def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {describe(value)}.")
    return int(value)


def _check_estimators(estimators) -> dict:
    if not isinstance(estimators, Mapping) or not estimators:
        raise ValueError(f"estimators must be a non-empty dict of name -> estimator; got "
                         f"{describe(estimators)}.")
    for name, estimator in estimators.items():
        if not isinstance(name, str) or not name.strip() or name == "average":
            raise ValueError(f"estimators' names must be non-empty strings other than "
                             f"'average'; got {describe(name)}.")
        if not all(hasattr(estimator, a) for a in ("fit", "predict", "get_params")):
            raise ValueError(f"estimators[{name!r}] must be an estimator with fit, predict "
                             f"and get_params; got {describe(estimator)}.")
    return dict(estimators)


def _check_grid(param_grid, estimators: dict) -> dict[str, tuple[dict, ...]]:
    if param_grid is None:
        return {}
    if not isinstance(param_grid, Mapping):
        raise ValueError(f"param_grid must be None or a dict of method -> grid; got "
                         f"{describe(param_grid)}.")
    grids = {}
    for method, grid in param_grid.items():
        if method not in estimators:
            raise ValueError(f"param_grid keys must be methods of estimators "
                             f"{list(estimators)}; got {describe(method)}.")
        try:
            candidates = tuple(dict(c) for c in ParameterGrid(grid))
        except (TypeError, ValueError) as error:
            raise ValueError(f"param_grid[{method!r}] must be a scikit-learn style grid "
                             f"(dict of name -> list of values, or a list of such); "
                             f"{error}") from None
        known = estimators[method].get_params()
        for candidate in candidates:
            unknown = sorted(set(candidate) - set(known))
            if unknown:
                raise ValueError(f"param_grid[{method!r}] must name parameters of "
                                 f"{type(estimators[method]).__name__}; got {unknown}.")
        if candidates:
            grids[method] = candidates
    return grids


def _check_fraction(train_fraction) -> float:
    if isinstance(train_fraction, bool) or not isinstance(train_fraction, (int, float)) \
            or not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must be a number in (0, 1); got "
                         f"{describe(train_fraction)}.")
    return float(train_fraction)


def _root_seed(random_state) -> int:
    """``random_state`` checked, or a fresh one drawn when it is None."""
    if random_state is None:
        random_state = int(np.random.SeedSequence().generate_state(1, np.uint32)[0])
    return _check_int("random_state", random_state, 0)


def _check_execution(n_jobs, backend, client) -> int:
    """``n_jobs``, ``backend`` and ``client`` checked together (as :func:`compare` takes
    them); returns ``n_jobs``."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 \
            or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1; got {describe(n_jobs)}.")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {list(BACKENDS)}; got {describe(backend)}.")
    if client is not None and backend != "dask":
        raise ValueError(f"client is only used with backend='dask'; got backend={backend!r}.")
    return int(n_jobs)


def _check_callable(name: str, value):
    if value is not None and not callable(value):
        raise ValueError(f"{name} must be None or a callable; got {describe(value)}.")
    return value


# ---------------------------------------------------------------------- execution
def _run_sequential(jobs, dataset, on_done, should_stop, run=run_job):
    """Each job in turn, in this process: ``on_done(run(job, dataset))``; False when
    ``should_stop()`` stopped it (checked before each job). The three executors take the
    function of one job (``run``: :func:`run_job`, or the sweep's trial)."""
    for job in jobs:
        if should_stop():
            return False
        on_done(run(job, dataset))
    return True


def _run_joblib(jobs, dataset, on_done, should_stop, backend, n_jobs, run=run_job):
    from joblib import Parallel, delayed

    stopped = threading.Event()

    def feed():
        # joblib pulls jobs from this iterator as workers free up (pre_dispatch): after a
        # stop it yields no more, and the few already dispatched are drained unrecorded.
        for job in jobs:
            if stopped.is_set() or should_stop():
                stopped.set()
                return
            yield delayed(run)(job, dataset)

    parallel = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered",
                        batch_size=1)
    for result in parallel(feed()):
        if stopped.is_set():
            continue
        on_done(result)
        if should_stop():
            stopped.set()
    return not stopped.is_set()


def _dask_client(client):
    try:
        import distributed
    except ImportError:   # pragma: no cover - the test extra installs it
        raise ValueError("backend='dask' needs the 'distributed' package "
                         "(pip install 'dask[distributed]').") from None
    if isinstance(client, distributed.Client):
        return client, False
    if isinstance(client, str):
        return distributed.Client(client, set_as_default=False), True
    if client is None:
        try:
            return distributed.get_client(), False
        except ValueError:
            pass
    raise ValueError(f"client must be a distributed.Client or a scheduler address when "
                     f"backend='dask' (or a default client must exist); got "
                     f"{describe(client)}.")


def _run_dask(jobs, dataset, on_done, should_stop, client, run=run_job):
    from distributed import as_completed

    client, owned = _dask_client(client)
    futures = []
    try:
        if should_stop():
            return False
        data = client.scatter(dataset, broadcast=True, hash=False)
        futures = [client.submit(run, job, data, pure=False) for job in jobs]
        # each result through its own future (its own client): ``with_results`` gathers
        # through the *default* client, which a client opened from an address is not
        for future in as_completed(futures):
            on_done(future.result())
            if should_stop():
                return False
        return True
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)
        if owned:
            client.close()


def compare(estimators: Mapping[str, object], dataset: MultiTaskDataset, *,
            n_trials: int = 10, train_fraction: float = 0.2, metric="auto",
            param_grid: Mapping | None = None, cv: int = 5, random_state: int | None = 0,
            n_jobs: int = 1, backend: str = "loky", client=None, progress: bool = True,
            callback: Callable[[int, int], None] | None = None,
            should_stop: Callable[[], bool] | None = None,
            errors: str = "raise") -> ComparisonResult:
    """Fit every method on ``n_trials`` random splits and score it on the test part.

    Parameters
    ----------
    estimators : dict of str -> estimator
        Methods by name, each following the estimator contract; cloned per job. An
        estimator whose ``random_state`` is None gets the job's seed; task features are
        passed to ``fit`` when it ``uses_task_features`` and the data have them.
    dataset : MultiTaskDataset
    n_trials : int >= 1
        Random splits; trial ``i`` uses ``dataset.split(train_fraction, seed_i)``.
    train_fraction : float in (0, 1)
        Per task (stratified for classification), as the papers' protocols (e.g. 20%).
    metric : str, callable, or list of them
        ``"auto"`` (error rate for classification, nMSE for regression), ``"error_rate"``,
        ``"accuracy"``, ``"nmse"``, ``"amse"``, ``"mean_ap"``, ``"ap"``, ``"p_at_k"``
        (``"p_at_5"`` etc.), or ``f(y_true, y_pred) -> float`` (see
        :mod:`explorer.compare.scoring`). With a list, every metric is recorded and the first
        one drives the inner CV.
    param_grid : dict of method -> grid, optional
        For those methods the hyper-parameters are chosen by ``cv``-fold cross-validation on
        the trial's training part (per-task stratified folds; the out-of-fold predictions of
        all folds pooled and scored once, see :func:`_cv_score`), then refitted on all of
        it.
    cv : int >= 2
    random_state : int >= 0 or None
        Root of every seed (see :func:`job_seeds`); None draws one (kept in the result).
    n_jobs : int
        Parallel jobs for ``"loky"`` / ``"threading"`` (-1: all cores); 1 runs in process.
        Ignored by ``"dask"`` (the cluster decides).
    backend : {"loky", "threading", "dask"}
    client : distributed.Client or str, optional
        The cluster (or its scheduler address) for ``backend="dask"``; default: the
        current default client.
    progress : bool
        A tqdm bar on stderr (text, in a notebook too: ``tqdm.auto`` would warn into the
        cell's output wherever ipywidgets is missing, even with the bar switched off).
    callback : callable(done, total), optional
        Called after each finished (trial, method) job, in the calling thread.
    should_stop : callable() -> bool, optional
        Checked between jobs; True stops the run and raises :class:`ComparisonCancelled`:
        no job starts after it, the jobs already running on workers finish unrecorded
        (joblib) or are cancelled (Dask). With joblib it may be called from joblib's
        dispatch thread: make it a cheap, thread-safe check (e.g. ``event.is_set``).
    errors : {"raise", "report"}
        What a method whose fit (or scoring) raises does to the run. "raise" (default): the
        error propagates, with a note naming the method and trial. "report": the run goes
        on; that method is left out of the result (of every trial, so the table stays
        paired) and ``result.failures`` says why. If every method fails, a RuntimeError
        lists the reasons.

    Returns
    -------
    ComparisonResult
        ``.frame``: one row per (method, trial, task or "average", metric), with columns
        method, trial, task, metric, value, fit_time_s (the final fit), params (JSON).
        ``.failures``: method -> why it failed (empty unless ``errors="report"``).
    """
    estimators = _check_estimators(estimators)
    if not isinstance(dataset, MultiTaskDataset):
        raise ValueError(f"dataset must be a MultiTaskDataset; got {describe(dataset)}.")
    n_trials = _check_int("n_trials", n_trials, 1)
    train_fraction = _check_fraction(train_fraction)
    metrics = tuple(resolve_metrics(metric, dataset.kind))
    cv = _check_int("cv", cv, 2)
    grids = _check_grid(param_grid, estimators)
    random_state = _root_seed(random_state)
    n_jobs = _check_execution(n_jobs, backend, client)
    # One split up front: a data set that cannot be split fails here, with its message.
    dataset.split(float(train_fraction), random_state=job_seeds(random_state, 0, "")[0])
    if errors not in ("raise", "report"):
        raise ValueError(f"errors must be 'raise' or 'report'; got {describe(errors)}.")
    callback = _check_callable("callback", callback)
    should_stop = _check_callable("should_stop", should_stop) or (lambda: False)

    jobs = [Job(trial, method, estimator, grids.get(method), float(train_fraction), metrics,
                cv, random_state, errors == "report")
            for trial in range(n_trials) for method, estimator in estimators.items()]
    total = len(jobs)
    results: list[JobResult | JobFailure] = []
    from tqdm import tqdm

    with tqdm(total=total, disable=not progress, desc="compare", unit="fit",
              leave=False) as bar:
        def on_done(result: JobResult) -> None:
            results.append(result)
            bar.update(1)
            if callback is not None:
                callback(len(results), total)

        if backend == "dask":
            finished = _run_dask(jobs, dataset, on_done, should_stop, client)
        elif n_jobs == 1:
            finished = _run_sequential(jobs, dataset, on_done, should_stop)
        else:
            finished = _run_joblib(jobs, dataset, on_done, should_stop, backend, int(n_jobs))
    if not finished:
        raise ComparisonCancelled(len(results), total)
    failures: dict[str, str] = {}
    for failure in sorted((r for r in results if isinstance(r, JobFailure)),
                          key=lambda f: f.trial):
        failures.setdefault(failure.method, f"trial {failure.trial}: {failure.error}")
    if len(failures) == len(estimators):
        raise RuntimeError("every method failed: " + "; ".join(
            f"{method} ({reason})" for method, reason in failures.items()))
    kept = [method for method in estimators if method not in failures]
    results = [r for r in results if isinstance(r, JobResult) and r.method in kept]
    settings = {"n_trials": n_trials, "train_fraction": float(train_fraction),
                "metric": [m.name for m in metrics],
                "param_grid": {m: plain_value(param_grid[m]) for m in grids} or None, "cv": cv,
                "random_state": random_state}
    return ComparisonResult.from_jobs(results, methods=kept,
                                      task_names=list(dataset.task_names), metrics=metrics,
                                      estimators={m: estimators[m] for m in kept},
                                      settings=settings, truth=dataset.truth,
                                      failures=failures)
