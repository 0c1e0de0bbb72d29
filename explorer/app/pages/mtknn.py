"""The "Neighbourhoods (MT-KNN)" page: MT-KNN (classification) or MT-KR (regression), Zhang 2013.

A :class:`~explorer.app.kit.ModelPage` declaration: the learned W (each row divided by its
diagonal, as the paper reads it) live over the solver's sweeps beside the true relation;
per-task kNN / kernel regression as the baseline. The page view adds the neighbour
inspector (2-D tasks: click a test point) and the error-vs-k curve (the paper's Figure 4),
computed on a thread after each fit and shown by a periodic check on the event loop.
"""

from __future__ import annotations

import threading

import panel as pn
import param

from explorer.app.kit import ModelPage, ModelPageView
from explorer.app.runner import can_poll
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


class NeighbourhoodPageView(ModelPageView):
    """The kit's page plus the neighbour inspector and the error-vs-k curve."""

    def __init__(self, state, page, **params):
        super().__init__(state, page, **params)
        self.inspector = NeighbourInspector()
        self.sensitivity = sensitivity_view()
        self._curve: tuple | None = None
        self._check = None
        self.body.extend([pn.pane.Bokeh(self.inspector.figure),
                          pn.pane.Bokeh(self.sensitivity.figure)])

    def _finished(self, estimator, result) -> None:
        super()._finished(estimator, result)
        train, test = self.state.train, self.state.test
        self.inspector.set_model(estimator, train, test)
        self.start_sensitivity(estimator, train, test)

    def start_sensitivity(self, estimator, train, test) -> threading.Thread:
        """Error vs k off the event loop; a periodic check shows it when ready."""
        self._curve = None
        self._generation = generation = getattr(self, "_generation", 0) + 1
        self.sensitivity.reset()

        def make(k):   # the curve needs errors, not 1e-5 optima: a looser gap
            return estimator.__class__(**{**estimator.get_params(), "n_neighbors": k,
                                          "tol": 1e-3, "max_iter": 20000})

        def work():
            curve = sensitivity_curve(make, train, test, K_GRID)
            if generation == self._generation:   # a newer fit's curve supersedes this one
                self._curve = curve

        thread = threading.Thread(target=work, name="mtknn-sensitivity", daemon=True)
        thread.start()
        if can_poll():   # a server session or a notebook kernel: show it when ready
            if self._check is not None:
                self._check.stop()
            self._check = pn.state.add_periodic_callback(self.show_sensitivity, period=300,
                                                         count=400)
        return thread

    def show_sensitivity(self) -> bool:
        """Draw the curve if computed; True when shown."""
        if self._curve is None:
            return False
        if self._check is not None:
            self._check.stop()
            self._check = None
        self.sensitivity.reset(*self._curve)
        return True

    def _cleared(self) -> None:
        super()._cleared()
        if not self._warm_refit and hasattr(self, "inspector"):
            self._generation = getattr(self, "_generation", 0) + 1   # drop a running curve
            self._curve = None
            self.inspector.clear()
            self.sensitivity.reset()


class NeighbourhoodPage(ModelPage):
    def build(self, state):
        return NeighbourhoodPageView(state, self)


MTKNN_PAGE = NeighbourhoodPage(
    slug="mtknn", title="Neighbourhoods (MT-KNN)", params=NeighbourhoodParams,
    make=make_model, views=views, baselines={"per-task": make_baseline},
    min_tasks=1, min_per_task=6, intro=INTRO, objective="Objective (Eq. 2 / Eq. 7)",
    pace="1 step/s")
