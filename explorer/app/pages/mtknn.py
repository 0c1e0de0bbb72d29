"""The "Neighbourhoods (MT-KNN)" page: MT-KNN (classification) or MT-KR (regression), Zhang 2013.

A :class:`~explorer.app.kit.ModelPage` declaration: the learned W (each row divided by its
diagonal, as the paper reads it) live over the solver's sweeps beside the true relation;
per-task kNN / kernel regression as the baseline. Its panels: the neighbour inspector (2-D
tasks: click a test point) and the error-vs-k curve (the paper's Figure 4), computed off the
event loop after each fit.
"""

from __future__ import annotations

import panel as pn
import param

from explorer.app.kit import ModelPage, PagePanel
from explorer.models import MTKNN, MTKR, KernelRegressionPerTask, KNNPerTask
from explorer.viz.live import SnapshotMatrixView, TruthMatrixView
from explorer.viz.mtknn import NeighbourInspector, sensitivity_curve, sensitivity_view

__all__ = ["MTKNN_PAGE", "NeighbourhoodParams", "K_GRID"]

K_GRID = (5, 10, 15, 20, 25, 30, 35, 40)

INTRO = """
## Heterogeneous neighbourhoods (MT-KNN / MT-KR)

A test point's **k nearest neighbours come from all tasks**. Each neighbour votes with its
label times its similarity, scaled by a learned **task-pair weight** `w[own task, its task]`.
The matrix W shows, row by row, how much a task trusts the others' points (divided by the
diagonal): **blue +1** related, **red -1** related with flipped labels, **white 0**
unrelated — compare it with the true relation beside it. On 2-D tasks, **click a test point**
to see its neighbours, each line and ring as thick as its vote (blue for the positive
class, red against). The objective is Eq. 2 (Eq. 7) at the solver's current W: the exact
solver's first steps may sit above the final value; the paper's coordinate descent never
rises. The last plot refits for k = 5..40 (the paper's Figure 4).
"""


class NeighbourhoodParams(param.Parameterized):
    """Hyper-parameters of the page (URL keys ``mtknn.<name>``)."""

    log_scale = ("asymmetry", "ridge")

    k = param.Integer(5, bounds=(1, 40), label="Neighbours k",
                      doc="Number of nearest neighbours, taken from all tasks.")
    asymmetry = param.Number(1.0, bounds=(1e-3, 100.0), label="Symmetry pull (lambda1)",
                             doc="Weight of ||W - W^T||^2: pulls w_qr towards w_rq.")
    ridge = param.Number(1.0, bounds=(1e-3, 100.0), label="Size of W (lambda2)",
                         doc="Weight of ||W||^2.")
    loss = param.Selector(default="hinge", objects=["hinge", "square"], label="Loss",
                          doc="Classification loss (MT-KR always uses the square loss).")
    solver = param.Selector(default="dual", objects=["dual", "paper"], label="Solver",
                            doc="dual: exact (interior point / dual QP), stops at the optimum; "
                                "paper: the paper's coordinate descent (MT-KNN) or SMO (MT-KR), "
                                "one sweep per frame, may stop short of the optimum.")


def make_model(params, random_state, data):
    common = dict(n_neighbors=params.k, lambda_asymmetry=params.asymmetry,
                  lambda_ridge=params.ridge, solver=params.solver, tol=1e-6, max_iter=20000,
                  random_state=random_state)
    if data.kind == "classification":
        return MTKNN(loss=params.loss, **common)
    return MTKR(**common)


def make_baseline(params, random_state, data):
    base = KNNPerTask if data.kind == "classification" else KernelRegressionPerTask
    return base(n_neighbors=params.k, random_state=random_state)


def views():
    return [SnapshotMatrixView("W_normalised", "Learned W (row / diagonal)"),
            TruthMatrixView("task_relation", "True task relation")]


class InspectorPanel(PagePanel):
    """Click a test point (2-D tasks): its neighbours from all tasks and their votes."""

    def __init__(self):
        self.inspector = NeighbourInspector()
        self.layout = pn.pane.Bokeh(self.inspector.figure)

    def fitted(self, estimator, result, fit) -> None:
        self.inspector.set_model(estimator, fit.train, fit.test)

    def clear(self) -> None:
        self.inspector.clear()


class SensitivityPanel(PagePanel):
    """Test error against k (the paper's Figure 4): eight refits off the event loop after
    each fit, stopped between refits when the fit's inputs change."""

    def __init__(self):
        self.curve = sensitivity_view()
        self.layout = pn.pane.Bokeh(self.curve.figure)

    def fitted(self, estimator, result, fit) -> None:
        self.curve.reset()

        def compute(token):
            def make(k):   # the curve needs errors, not 1e-5 optima: a looser gap
                token.check()
                return estimator.__class__(**{**estimator.get_params(), "n_neighbors": k,
                                              "tol": 1e-3, "max_iter": 20000})

            return sensitivity_curve(make, fit.train, fit.test, K_GRID)

        self.submit(compute, lambda curve: self.curve.reset(*curve))   # failures are logged

    def clear(self) -> None:
        self.curve.reset()


MTKNN_PAGE = ModelPage(
    slug="mtknn", title="Neighbourhoods (MT-KNN)", params=NeighbourhoodParams,
    make=make_model, views=views, baselines={"per-task": make_baseline},
    min_tasks=1, min_per_task=6, intro=INTRO, objective="Objective (Eq. 2 / Eq. 7)",
    pace="1 step/s", panels=lambda: [InspectorPanel(), SensitivityPanel()])
