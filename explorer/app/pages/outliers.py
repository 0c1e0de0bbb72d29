"""The "Outliers & shared features" page: rMTFL (Gong, Ye & Zhang 2012) live.

``W = P + Q``: the rows of P that stay nonzero are the features every task shares, the
columns of Q that stay nonzero are the outlier tasks. A :class:`~explorer.app.kit.ModelPage`
declaration: P, Q, W (tasks x features, exact zeros grey, as the paper's Figure 3) beside the
true W on one colour scale, the outlier scores right/wrong against the truth, and per-task
lasso and ridge baselines. The penalties are set in units of each penalty's closed-form
``lambda_max`` (1 = everything zero); moving one after a fit refits from the current solution.
"""

from __future__ import annotations

import numpy as np
import param

from explorer.app.kit import ModelPage, PageHooks, make_from
from explorer.compare.metrics import detection_scores, nmse
from explorer.models import MultiTaskLassoL1, MultiTaskRidge, RobustMTFL
from explorer.models.constraints import estimator_from, from_constraint
from explorer.viz.live import EstimateTruthView, SnapshotMatrixView, escape
from explorer.viz.outliers import OutlierScoresView

__all__ = ["OUTLIERS", "OutliersParams", "coefficient_scale"]

INTRO = """
## Outliers & shared features (robust MTFL)

rMTFL writes every task's weights as **w_i = p_i + q_i**. The penalty on the *rows* of
**P** keeps only features that **all tasks share**; the penalty on the *columns* of **Q**
lets a few **outlier tasks** have weights of their own. Run the solver (FISTA) and watch the
zeros appear (grey cells are exactly 0). Both penalties are set as a fraction of the value
that zeroes their block: move one and the model refits from where it is. Bars: each task's
outlier score ||q_i||; any bar above the dashed line at 0 is a detected outlier, coloured
right or wrong against the truth.
"""


class OutliersParams(param.Parameterized):
    """Hyper-parameters of the page (URL keys ``outliers.<name>``).

    ``rows`` and ``columns`` are the page's own unit: RobustMTFL's ``lambda_rows`` is
    ``rows * lambda_max["lambda_rows"]`` (``RobustMTFL().lambda_max(X, y, task)``, the
    smallest penalty that zeroes P; 1 = everything zero), ``lambda_columns`` likewise; any
    fraction > 0 gives a penalty the estimator accepts (>= 0). ``max_iter`` is RobustMTFL's.
    """

    log_scale = ("rows", "columns")

    rows = param.Number(0.2, bounds=(1e-3, 1.0), label="Shared features: lambda_rows / max",
                        doc="Penalty on the rows of P as a fraction of its lambda_max.")
    columns = param.Number(0.2, bounds=(1e-3, 1.0), label="Outlier tasks: lambda_columns / max",
                           doc="Penalty on the columns of Q as a fraction of its lambda_max.")
    max_iter = from_constraint(RobustMTFL, "max_iter", default=3000, bounds=(10, 20000),
                               label="Max iterations",
                             doc="FISTA iterations before the solver stops and warns.")


def make_model(params, random_state, data):
    """RobustMTFL with penalties ``fraction * lambda_max`` (a cheap closed form)."""
    lambda_max = RobustMTFL().lambda_max(data.X, data.y, data.task)
    return estimator_from(params, RobustMTFL, random_state=random_state,
                          lambda_rows=params.rows * lambda_max["lambda_rows"],
                          lambda_columns=params.columns * lambda_max["lambda_columns"],
                          tol=1e-6, warm_start=True)


def code_terms(params):
    """Show code writes the penalties as the sliders do: a fraction of lambda_max."""
    return (["lambda_max = RobustMTFL().lambda_max(*train.arrays())   # the sliders' unit"],
            {name: f"{float(getattr(params, short))!r} * lambda_max[{name!r}]"
             for name, short in (("lambda_rows", "rows"), ("lambda_columns", "columns"))})


def coefficient_scale(data) -> float:
    """A fixed colour limit for coefficients: the truth's scale when known, else the scale of
    per-task, per-feature least-squares slopes (O(n d), no fit on the event loop)."""
    coef = (data.truth or {}).get("coef")
    if coef is None:
        X = data.X - data.X.mean(axis=0)
        slopes = [X[data.task == t].T @ (data.y[data.task == t] - data.y[data.task == t].mean())
                  / np.maximum((X[data.task == t] ** 2).sum(axis=0), 1e-12)
                  for t in range(data.n_tasks)]
        coef = np.asarray(slopes)
    return float(np.percentile(np.abs(coef), 98)) or 1.0


def views():
    shape = {"limit": coefficient_scale, "columns": "features", "layout": "columns x tasks"}
    size = {**shape, "width": 480, "height": 300}
    return [EstimateTruthView("W", "W = P + Q (estimate)", "coef", "True W", entries="all",
                              **shape),
            OutlierScoresView(width=520),
            SnapshotMatrixView("P", "P (shared): nonzero columns = shared features", **size),
            SnapshotMatrixView("Q", "Q (outliers): nonzero rows = outlier tasks", **size)]


def explain(model, result, data, test) -> str:
    """Detection against the truth and the test nMSE."""
    names = data.task_names
    found = ", ".join(escape(names[t]) for t in np.flatnonzero(model.outlier_tasks_)) or "none"
    shared = model.shared_features_
    text = (f"Detected outlier tasks: **{found}**; shared features: **{int(shared.sum())}** of "
            f"{data.n_features}.")
    truth = data.truth or {}
    if truth.get("outlier_tasks") is not None:
        f1 = detection_scores(model.outlier_tasks_, np.asarray(truth["outlier_tasks"]))["f1"]
        text += (f" Outlier F1 against the truth: **{f1:.2f}** (1: exactly the true outlier "
                 "tasks, none missed, none extra).")
    if truth.get("shared_features") is not None:
        found = detection_scores(shared, np.asarray(truth["shared_features"]))
        text += (f" True shared features recovered: **{found['true_positives']} of "
                 f"{found['relevant']}** ({found['detected'] - found['true_positives']} extra).")
    if np.min(test.task_sizes) < 2:
        return text + " Test nMSE: too few test examples per task."
    score = nmse(test.y, model.predict(test.X, test.task), test.task)
    return text + (f" Test nMSE: **{score:.3f}** after {model.n_iter_} iterations (each "
                   "task's mean squared error over the variance of its targets, averaged: 0 "
                   "is perfect, 1 no better than predicting the mean).")




OUTLIERS = ModelPage(
    slug="outliers", title="Outliers & shared features", params=OutliersParams,
    make=make_model, views=views,
    baselines={"lasso": make_from(MultiTaskLassoL1), "ridge": make_from(MultiTaskRidge)},
    kinds=("regression",), min_tasks=1, min_per_task=2, intro=INTRO,
    objective="Objective (Eq. 2)", objective_log=True, warm=True, scenario="outlier_tasks",
    steps_are="solver iterations", hooks=PageHooks(explain=explain, code_terms=code_terms))
