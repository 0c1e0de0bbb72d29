"""The "Task relationships (MTBoost)" page: multi-task boosting (Zhang & Yeung 2012) live.

A :class:`~explorer.app.kit.ModelPage` declaration: Omega and the task correlation round by
round beside the true relation, the correlation without smoothing, the training loss with the
paper's Theorem 2 bound and the reversed bound, the supertask on 2-D data, and per-task test
error against AnyBoost and against MTBoost with Omega fixed at I/m. The *Variant* switch runs
the paper's printed updates on the same data and seed: the collapse and the rising loss are
one click away.
"""

from __future__ import annotations

import numpy as np
import param

from explorer.app.kit import ModelPage, PageHooks
from explorer.models import AnyBoost, MTBoost
from explorer.models.constraints import estimator_from, from_constraint
from explorer.viz.live import EstimateTruthView
from explorer.viz.mtboost import LossBoundsView, SupertaskView, TaskMatrixView

__all__ = ["MTBOOST", "MTBoostParams"]

INTRO = """
## Task relationships (MTBoost)

All tasks share each round's base learner f_t; task i weighs it with its own w_it. To fit
f_t, MTBoost pools every task into one **supertask**: a task whose weight is negative has its
labels **flipped** (triangles on 2-D data), and each example is weighted by how wrong it still
is. The weights follow the learned **task covariance Omega** (Eq. 10): related tasks get
weights of the same sign (blue), negated ones opposite signs (red).
**Variant** *as in the paper* runs Eq. 10 and Eq. 12 as printed: Omega collapses to rank 1
in the first round (correlations +-1 with random signs) and at small lambda the loss rises
above the paper's Theorem 2 bound (orange); *corrected* smooths Omega and guards the step.
"""


class MTBoostParams(param.Parameterized):
    """Hyper-parameters of the page (URL keys ``mtboost.<name>``); types, choices and bounds
    are MTBoost's (and AnyBoost's, the baseline's), narrowed to a teaching range."""

    log_scale = ("lam",)

    variant = from_constraint(MTBoost, "variant", label="Variant",
                              doc="paper: Eq. 10 and 12 as printed; corrected: smoothed Omega, "
                                  "guarded step.")
    step = from_constraint(MTBoost, "step", also=[(AnyBoost, "step")],
                           label="Step (corrected variant)",
                           doc="armijo: backtracking; mm: majorise-minimise; plain: Eq. 12.")
    lam = from_constraint(MTBoost, "lam", also=[(AnyBoost, "lam")],
                          bounds=(1e-4, 10.0), label="lambda (per mean loss)",
                          doc="Weight of tr(W Omega^-1 W^T)/2; the paper's lambda is n_i times "
                              "it.")
    n_rounds = from_constraint(MTBoost, "n_rounds", also=[(AnyBoost, "n_rounds")], default=40,
                               bounds=(None, 300), label="Rounds", doc="Boosting rounds Q.")
    n_inner = from_constraint(MTBoost, "n_inner", default=5, bounds=(None, 30),
                              label="Inner steps",
                              doc="Alternations Q_1 of f, Omega and w in each round.")
    base_learner = from_constraint(MTBoost, "base_learner", also=[(AnyBoost, "base_learner")],
                                   label="Base learner",
                                   doc="Weighted linear LS-SVM, stump or depth-3 tree.")
    smoothing = from_constraint(MTBoost, "smoothing", bounds=(None, 1.0),
                                label="Smoothing of Omega",
                                doc="delta of the corrected update: eps = delta tr(W^T W) / m.")


def _step(params) -> str:
    return "plain" if params.variant == "paper" else params.step


def make_model(params, random_state, data):
    return estimator_from(params, MTBoost, random_state=random_state, step=_step(params))


def make_anyboost(params, random_state, data):
    return estimator_from(params, AnyBoost, random_state=random_state, step=_step(params))


def make_fixed(params, random_state, data):
    model = make_model(params, random_state, data)
    return model.set_params(learn_omega=False)


def views():
    corr = {"width": 400, "height": 340}
    omega_limit = {"limit": lambda data: 1.5 / data.n_tasks, **corr}
    return [EstimateTruthView("correlation", "Learned task correlation",
                              "task_relation", "True relation (+1, -1, 0)"),
            TaskMatrixView("Omega", "Omega (covariance, trace 1)", **omega_limit),
            TaskMatrixView("correlation_unsmoothed", "Correlation before smoothing", **corr),
            LossBoundsView(), SupertaskView()]


#: What each step rule does, as the summary says it.
STEP_RULES = {"armijo": "backtracking until the loss falls", "mm": "a majorise-minimise step",
              "plain": "the paper's full step, Eq. 12"}


def explain(model, result, data, test) -> str:
    """Signs against the truth, the collapse, the rounds whose loss rose."""
    corr = model.correlation_
    text = ""
    relation = (data.truth or {}).get("task_relation")
    if relation is not None and data.n_tasks > 1:
        off = ~np.eye(data.n_tasks, dtype=bool)
        linked = off & (np.asarray(relation) != 0)
        right = int(np.sum(np.sign(corr[linked]) == np.asarray(relation)[linked]))
        text += (f"Correlation signs right on **{right // 2} of {int(linked.sum()) // 2}** "
                 "related/negated pairs (a learned correlation's sign against the true +1 / "
                 "-1 of the pair). ")
    values = np.sort(np.linalg.eigvalsh(model.Omega_))[::-1]
    if data.n_tasks > 1:
        text += (f"Omega's eigenvalue ratio 2nd/1st: **{values[1] / values[0]:.2g}** (near 0: "
                 "Omega has collapsed onto one direction, as if all tasks were one task or "
                 "its negation). ")
    history = np.r_[np.log(2.0) * data.n_tasks, model.objective_history_]
    rose = int(np.sum(np.diff(history) > 1e-12))
    above = int(np.sum(history[1:] > model.paper_bounds_ + 1e-12))
    rule = STEP_RULES.get(model.step_, "its step rule")
    return text + (f"The loss rose in **{rose} of {model.n_iter_}** rounds (step: "
                   f"{model.step_}, {rule}; a rise means a step too long). It lay above the "
                   f"paper's Theorem 2 bound in **{above}** rounds: Theorem 2 claims each "
                   "round's loss ends at most at the previous loss minus beta' Omega beta / "
                   "lambda (the orange curve of the loss chart); a round above it is a round "
                   "where that claim fails (by convexity it fails whenever the full step is "
                   "taken).")


MTBOOST = ModelPage(
    slug="mtboost", title="Task relationships (MTBoost)", params=MTBoostParams,
    make=make_model, views=views,
    baselines={"AnyBoost": make_anyboost, "Omega fixed at I/m": make_fixed},
    kinds=("classification",), min_tasks=1, min_per_task=2, intro=INTRO,
    objective="", scenario="boosting_relationships", steps_are="boosting rounds",
    hooks=PageHooks(explain=explain))
