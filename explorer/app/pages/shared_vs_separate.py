"""The "Shared vs separate" page: one regularized multi-task model vs one model per task.

A :class:`~explorer.app.kit.ModelPage` declaration: the parameters, the estimator, the views
(learned similarity beside the true relation and the true cosine) and the per-task baseline;
the kit does the wiring.
"""

from __future__ import annotations

import param
from sklearn.linear_model import LogisticRegression, Ridge

from explorer.app.kit import ModelPage
from explorer.models import PerTaskEstimator, RegularizedMTL
from explorer.models.constraints import estimator_from, from_constraint
from explorer.viz.live import EstimateTruthView, TruthMatrixView

__all__ = ["SHARED_VS_SEPARATE", "SharedVsSeparateParams"]

INTRO = """
## Shared vs separate

**Separate**: every task fits its own model on its own (few) examples.
**Shared**: one regularized multi-task model (RegularizedMTL) learns all tasks together;
the *coupling* penalty pulls the tasks' weight vectors towards a common one, the *size*
penalty keeps that common vector small. Watch the learned **task similarity** (cosine of the
weight vectors) converge beside the **true relation** of the generated tasks (blue +1 =
related, red -1 = negated, white 0 = unrelated) and their **true cosine**. At the end the
bars show each task's **test error** for both approaches.

The data open with few examples per task in 12 dimensions, where sharing pays. *Try:* 200
examples per task in the sidebar: separate models catch up; then the coupling at 10, which
pulls every task onto one weight vector: the unrelated task's error jumps (the scenario
"When sharing hurts" shows it with a negated task).
"""


class SharedVsSeparateParams(param.Parameterized):
    """Hyper-parameters of the page (URL keys ``shared_vs_separate.<name>``): RegularizedMTL's
    ``lambda_deviation``, ``lambda_common`` and ``max_iter``, narrowed to a teaching range."""

    log_scale = ("coupling", "size")

    coupling = from_constraint(RegularizedMTL, "lambda_deviation",
                               bounds=(1e-4, 10.0), label="Coupling (pull towards shared)",
                               doc="Penalty on each task's deviation from the shared weights.")
    size = from_constraint(RegularizedMTL, "lambda_common", bounds=(1e-4, 10.0),
                           label="Size of the shared weights",
                           doc="Penalty on the norm of the shared weight vector.")
    max_iter = from_constraint(RegularizedMTL, "max_iter", default=300, bounds=(10, 5000),
                               label="Max iterations",
                               doc="Iterations of the solver before it stops and warns.")


def _loss(data) -> str:
    return "logistic" if data.kind == "classification" else "squared"


def make_model(params, random_state, data):
    return estimator_from(params, RegularizedMTL, random_state=random_state, loss=_loss(data))


def make_separate(params, random_state, data):
    base = LogisticRegression() if data.kind == "classification" else Ridge()
    return PerTaskEstimator(estimator=base, random_state=random_state)


def pace(data) -> str:
    """So that a fit at the defaults lasts 5-20 s: 2-D tasks settle in 13-40 steps (2 steps/s),
    tasks in more dimensions (the opening data) in 35-60 (5 steps/s); on many tasks (School's
    139) the solver runs to its 300 iterations (30 steps/s)."""
    if data is not None and data.n_tasks > 40:
        return "30 steps/s"
    return "2 steps/s" if data is not None and data.n_features <= 2 else "5 steps/s"


def views():
    return [EstimateTruthView("similarity", "Learned similarity",
                              "task_similarity", "True cosine of the weights"),
            TruthMatrixView("task_relation", "True task relation", width=400, height=340)]


SHARED_VS_SEPARATE = ModelPage(
    slug="shared_vs_separate", title="Shared vs separate", params=SharedVsSeparateParams,
    make=make_model, views=views, baselines={"separate": make_separate},
    min_tasks=1, min_per_task=2, intro=INTRO, objective="Objective",
    pace=pace, scenario="negated_task",
    steps_are="solver iterations")
