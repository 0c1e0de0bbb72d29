"""The "Neighbourhoods (MT-KNN)" page: MT-KNN (classification) or MT-KR (regression), Zhang 2013.

A :class:`~explorer.app.kit.ModelPage` declaration: the learned W (each row divided by its
diagonal, as the paper reads it) live over the solver's sweeps beside the true relation;
per-task kNN / kernel regression as the baseline. Its panel: the neighbour inspector (2-D
tasks: click a test point); the test error against k (the paper's Figure 4) is the sweep
every page has (:mod:`explorer.app.sweep_panel`), whose first setting is k. After a fit
with the paper's solver, the summary says how far it stopped above the default solver's
optimum (measured on the fit's worker).
"""

from __future__ import annotations

import param

from explorer.app.kit import ModelPage, PageHooks, PagePanel, figure_pane
from explorer.models import MTKNN, MTKR, KernelRegressionPerTask, KNNPerTask
from explorer.models.constraints import estimator_from, from_constraint
from explorer.solvers.task_weights import MAX_EXACT_TASKS
from explorer.viz.live import EstimateTruthView
from explorer.viz.mtknn import NeighbourInspector

__all__ = ["MTKNN_PAGE", "NeighbourhoodParams"]

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
rises. The **Sweep** section below refits for a range of k (the paper's Figure 4).
"""


class NeighbourhoodParams(param.Parameterized):
    """Hyper-parameters of the page (URL keys ``mtknn.<name>``), derived from MT-KNN's (and
    MT-KR's and the per-task baselines') declarations, narrowed to a teaching range; the
    defaults are MT-KNN's."""

    log_scale = ("asymmetry", "ridge")

    k = from_constraint(MTKNN, "n_neighbors", also=[(MTKR, "n_neighbors"),
                                                    (KNNPerTask, "n_neighbors"),
                                                    (KernelRegressionPerTask, "n_neighbors")],
                        bounds=(None, 40), label="Neighbours k",
                        doc="Number of nearest neighbours, taken from all tasks.")
    asymmetry = from_constraint(MTKNN, "lambda_asymmetry", also=[(MTKR, "lambda_asymmetry")],
                                bounds=(1e-3, 100.0),
                                label="Symmetry pull (lambda1)",
                                doc="Weight of ||W - W^T||^2: pulls w_qr towards w_rq.")
    ridge = from_constraint(MTKNN, "lambda_ridge", also=[(MTKR, "lambda_ridge")],
                            bounds=(1e-3, 100.0), label="Size of W (lambda2)",
                            doc="Weight of ||W||^2.")
    loss = from_constraint(MTKNN, "loss", label="Loss",
                           doc="Classification loss (MT-KR always uses the square loss).")
    solver = from_constraint(MTKNN, "solver", also=[(MTKR, "solver")], label="Solver",
                             doc="auto: dual up to 50 tasks, projected above (square loss); "
                                 "dual: exact (interior point / dual QP), stops at the optimum; "
                                 "projected: exact, matrix-free (square loss, any number of "
                                 "tasks); "
                                 "paper: the paper's coordinate descent (MT-KNN) or SMO "
                                 "(MT-KR), one sweep per frame, may stop short of the optimum.")


def make_model(params, random_state, data):
    # above the dense solver's limit the matrix-free one certifies a relative gap of 1e-4 in
    # ~40 snapshots on School (1e-6, the default, takes ~200): close enough for W and errors
    many = data is not None and data.n_tasks > MAX_EXACT_TASKS
    model = MTKNN if data.kind == "classification" else MTKR
    return estimator_from(params, model, random_state=random_state, max_iter=20000,
                          **({"tol": 1e-4} if many else {}))


def make_baseline(params, random_state, data):
    base = KNNPerTask if data.kind == "classification" else KernelRegressionPerTask
    return estimator_from(params, base, random_state=random_state)


def measure_gap(estimator, fit) -> dict:
    """On the fit's worker: after a fit with the paper's solver, how far it stopped above the
    optimum the default (exact) solver reaches (``{"gap": {...}}``; nothing for the default
    solver, nor where the exact solver refuses the number of tasks)."""
    if fit.params.solver != "paper" or estimator.W_.shape[0] > MAX_EXACT_TASKS:
        return {}
    return {"gap": estimator.gap_to_optimum()}


def explain_gap(estimator, result, train, test) -> str:
    """The summary's sentence on the paper's solver (see :func:`measure_gap`)."""
    if getattr(estimator, "solver", "dual") != "paper":
        return ""
    gap = result.extra.get("gap")
    if gap is None:
        return (f"The default solver cannot say how far the paper's solver stopped from the "
                f"optimum: it handles at most {MAX_EXACT_TASKS} tasks.")
    if gap["relative_gap"] > 1e-3:
        return (f"The paper's solver stopped {gap['relative_gap']:.0%} above the optimum the "
                f"default solver reaches ({gap['objective']:.3g} vs {gap['optimum']:.3g}).")
    return ("The paper's solver reached the default solver's optimum (within 0.1%: "
            f"{gap['objective']:.4g}).")


def pace(data) -> str:
    """1 step/s; on more tasks than the dense solver takes (School's 139) the matrix-free
    solver's snapshots (ten steps each) come faster and more of them: 10 steps/s."""
    return "10 steps/s" if data is not None and data.n_tasks > MAX_EXACT_TASKS else "1 step/s"


def views():
    return [EstimateTruthView("W_normalised", "Learned W (row / diagonal)",
                              "task_relation", "True task relation")]


class InspectorPanel(PagePanel):
    """Click a test point (2-D tasks): its neighbours from all tasks and their votes."""

    def __init__(self):
        self.inspector = NeighbourInspector()
        self.layout = figure_pane(self.inspector.figure)

    def fitted(self, estimator, result, fit) -> None:
        self.inspector.set_model(estimator, fit.train, fit.test)

    def clear(self) -> None:
        self.inspector.clear()


MTKNN_PAGE = ModelPage(
    slug="mtknn", title="Neighbourhoods (MT-KNN)", params=NeighbourhoodParams,
    make=make_model, views=views, baselines={"per-task": make_baseline},
    min_tasks=1, min_per_task=6, intro=INTRO, objective="Objective (Eq. 2 / Eq. 7)",
    pace=pace, scenario="neighbours_from_other_tasks", steps_are="solver steps",
    hooks=PageHooks(panels=lambda: [InspectorPanel()], after=measure_gap, explain=explain_gap))
