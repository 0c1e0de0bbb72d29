"""A model page's fit controller: what a run is made of, the warm refit, the last finished fit.

:class:`PageFit` owns the page's :class:`~explorer.app.runner.LiveFitRunner`. When a run
starts it builds the estimator and reads the data on the event loop (:meth:`PageFit.prepare`);
the fit, the baselines, the test scores and the page's ``after`` step run on the worker. A
hyper-parameter that moves after a finished fit refits from the current solution when the
page declares ``warm`` (scikit-learn's ``warm_start`` idiom). Testable without a browser:
:meth:`PageFit.prepare` returns the :class:`~explorer.app.fit_session.FitJob` a worker runs.
"""

from __future__ import annotations

import types

import numpy as np

from explorer.app.fit_session import FitJob
from explorer.app.page_panel import FitInputs, FitResult
from explorer.app.runner import LiveFitRunner

__all__ = ["PageFit", "per_task_error"]


def per_task_error(estimator, data) -> np.ndarray:
    """Per-task test error, shape (m,): 1 - accuracy (classifiers) or 1 - R^2 (regressors).

    An estimator without ``score_per_task`` (a user's class) is scored from its ``predict``
    by the data's kind (NaN for a task with too few test examples)."""
    if hasattr(estimator, "score_per_task"):
        return 1.0 - estimator.score_per_task(data.X, data.y, data.task)
    from sklearn.metrics import r2_score

    predicted = np.asarray(estimator.predict(data.X, data.task))
    errors = np.full(data.n_tasks, np.nan)
    for t in range(data.n_tasks):
        rows = data.task == t
        if data.kind == "classification" and rows.any():
            errors[t] = np.mean(predicted[rows] != data.y[rows])
        elif rows.sum() > 1:
            errors[t] = 1.0 - r2_score(data.y[rows], predicted[rows])
    return errors


def _fit_result(baselines: dict, after_fit, inputs: FitInputs):
    """The job's step after the fit, on the worker: the baselines fitted on the same split,
    every test score, the page's ``after`` step."""
    train, test = inputs.train, inputs.test

    def after(model) -> FitResult:
        fitted = {name: base.fit(train.X, train.y, train.task)
                  for name, base in baselines.items()}
        errors = {"model": per_task_error(model, test)}
        errors.update({name: per_task_error(base, test) for name, base in fitted.items()})
        extra = after_fit(model, inputs) if after_fit is not None else {}
        return FitResult(errors=errors, baselines=fitted, extra=extra)

    return after


class PageFit:
    """The fit of one session's model page (see the module docstring).

    ``render``, ``finished``, ``cleared`` and ``on_stop`` are the runner's callbacks (the
    page's figures and summary); ``fitted`` / ``result`` are the last finished fit's
    estimator and :class:`FitResult` (None before one, and after new data), ``inputs`` what
    the current fit is made of.
    """

    def __init__(self, state, page, params, *, render, finished, cleared, on_stop):
        self.state, self.page, self.params = state, page, params
        self.fitted = None     # the last estimator whose fit finished (warm refits)
        self.result: FitResult | None = None
        self.inputs: FitInputs | None = None
        self.warm_refit = False   # True while a reset makes way for a warm refit
        self.runner = LiveFitRunner(self.prepare, render, finished, cleared,
                                    notify=state.notify, speed=page.pace_for(state.train),
                                    work=state.work, on_stop=on_stop)

    def finished(self, estimator, result: FitResult) -> None:
        """A fit finished: it is the one a warm refit starts from."""
        self.fitted, self.result = estimator, result

    def forget(self) -> None:
        """The fit on screen is gone (a reset, new data): nothing to warm-start from."""
        self.fitted, self.result = None, None

    def params_changed(self, *_) -> None:
        """A hyper-parameter moved: the fit starts again, from the current solution after a
        finished fit of a ``warm`` page (the views stay on screen meanwhile)."""
        warm = self.page.warm and self.fitted is not None
        self.warm_refit = warm
        try:
            self.runner.reset()
        finally:
            self.warm_refit = False
        if warm:
            self.runner.run()

    def prepare(self) -> FitJob:
        """Build the estimator and read the data, on the event loop (see the runner)."""
        train, test = self.state.train, self.state.test
        problem = self.page.problem_with(train)
        if problem:
            raise ValueError(problem)
        seed = int(self.state.init_seed)
        values = types.SimpleNamespace(**self.params.param.values())
        inputs = self.inputs = FitInputs(values, seed, self.state.dataset, train, test)
        estimator = self.page.make(self.params, seed, train)
        if self.fitted is not None and self.page.warm:
            # scikit-learn's warm-start idiom: the fitted estimator takes the new
            # hyper-parameters and starts from its current solution.
            previous = self.fitted
            previous.set_params(**{**estimator.get_params(deep=False), "warm_start": True})
            estimator = previous
        baselines = {name: make(self.params, seed, train)
                     for name, make in self.page.baselines.items()}
        kwargs = {}
        if train.task_features is not None and getattr(estimator, "uses_task_features", False):
            kwargs["task_features"] = train.task_features
        after = _fit_result(baselines, self.page.hooks.after, inputs)
        return FitJob(estimator, (train.X, train.y, train.task), kwargs, after)
