"""The "Transfer (TL-TF)" page (Yan & Zhang 2009): a ModelPage with STL and TL-MC as baselines;
phi beside the true clusters, the bound, Psi's scale; a new task's gate (sliders, no fit on a
move); mean AP / P@10 on held-out tasks (the page's ``after`` step, on the fit's worker);
Figure 1 (off the event loop, through the session's work service).
"""

from __future__ import annotations

import panel as pn
import param
from sklearn.linear_model import LogisticRegression

from explorer.app.components import flowing_row, set_flex_objects
from explorer.app.kit import ModelPage, PageHooks, PagePanel, figure_pane, make_from
from explorer.app.work import Cancelled, locked
from explorer.compare.transfer import figure1_curves, held_out_tasks, zero_shot_table
from explorer.models import TLTF, PerTaskEstimator
from explorer.models.constraints import from_constraint
from explorer.viz.live import escape
from explorer.viz.tltf import (
    GateView,
    PhiView,
    PsiScaleView,
    figure1,
    fit_summary,
    slider_ranges,
    transfer_table_markdown,
)

__all__ = ["TRANSFER", "TransferParams"]

INTRO = """
## Transfer through task-level features (TL-TF)

Each task is a logistic regression whose weights come from one of **H clusters** (centres:
the columns of Lambda; spread: Psi). A **gate** on the task's own features (a query's words,
a user's profile) picks the cluster, so a **new task with no labelled example** gets a model
at once: sum_h p_h sigma(lambda_h^T x). **Run** the variational EM: phi (each task's
cluster) settles beside the true clusters and the bound rises. Below: a new task's sliders,
and zero-shot ranking on held-out tasks (every fourth) against TL-MC (no task features in
the gate), TL-SC (one cluster), TL-Comb (task features as data features) and STL.
"""
PLACEHOLDER = "*Run the fit, then move a new task's features here.*"


class TransferParams(param.Parameterized):
    """Hyper-parameters of the page (URL keys ``transfer.<name>``), derived from TLTF's
    declaration, narrowed to a teaching range."""

    log_scale = ("tol",)

    n_clusters = from_constraint(TLTF, "n_clusters", bounds=(None, 10),
                                 label="Clusters H",
                                 doc="Number of task clusters (columns of Lambda).")
    gate = from_constraint(TLTF, "gate", label="Gate",
                           doc="task_features: TL-TF; constant: TL-MC; append: TL-Comb.")
    covariance = from_constraint(TLTF, "covariance", label="Psi",
                                 doc="Full covariance or tau^2 I.")
    init = from_constraint(TLTF, "init", label="Start",
                           doc="kmeans: per-task fits clustered; paper: uniform random.")
    max_iter = from_constraint(TLTF, "max_iter", bounds=(5, 5000),
                               label="Max EM iterations")
    tol = from_constraint(TLTF, "tol", default=1e-4, bounds=(1e-8, 1e-2), label="Tolerance",
                          doc="Stop when the bound's relative change falls below this.")


def after(model, fit) -> dict:
    """On the fit's worker: zero-shot ranking of the held-out tasks (mean AP, P@10)."""
    data = fit.dataset
    if data.task_features is None or not held_out_tasks(data.n_tasks)[1].size:
        return {"transfer": None}
    return {"transfer": zero_shot_table(data, n_clusters=fit.params.n_clusters,
                                        covariance=fit.params.covariance,
                                        random_state=fit.seed)}


def advice(data) -> str:
    """Data without task features fit, but show nothing of what the page is about."""
    if data.task_features is None:
        return ("Transfer predicts a new task from its task features (a description of each "
                "task); these data have none, so the gate is constant and the zero-shot "
                "table and Figure 1 stay empty.")
    return ""


class TransferPanel(PagePanel):
    """A new task's gate from its features (sliders; no fit on a move), the held-out table
    and Figure 1 (computed off the event loop, once per data, Psi and seed)."""

    below = True

    def __init__(self):
        self.gate, self.sliders = GateView(), pn.Column(PLACEHOLDER, width=240)
        self.table = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.figure1 = pn.Column(pn.pane.Markdown(""), sizing_mode="stretch_width")
        self._figure1_cache: dict = {}
        # The gate's figures join after the first fit (a page holds the fewest models); the
        # section is never hidden (cleared in place).
        self.gate_row = flowing_row(self.sliders)
        self.layout = pn.Column(
            pn.pane.Markdown("### A new task from its features alone"), self.gate_row,
            flowing_row(self.table, self.figure1), sizing_mode="stretch_width")

    def fitted(self, estimator, result, fit) -> None:
        self.gate.set_model(estimator, fit.train)
        if len(self.gate_row) == 1:
            set_flex_objects(self.gate_row, [self.sliders, *map(figure_pane, self.gate.figures)])
        sliders = [pn.widgets.FloatSlider(label=f"task feature t{j}", start=lo, end=hi,
                                          value=value, step=0.05, width=220)
                   for j, (lo, hi, value) in enumerate(slider_ranges(estimator, fit.train))]
        for slider in sliders:
            slider.param.watch(locked(self._gate_moved), "value")
        self.sliders[:] = sliders or [pn.pane.Markdown("*No task features: the gate is "
                                                       "constant.*")]
        self._gate_moved()
        self.table.object = transfer_table_markdown(result.extra.get("transfer"))
        self._start_figure1(fit)

    def _gate_moved(self, *_) -> None:
        """A slider moved: a gate evaluation and a 60 x 60 matrix-vector product, no fit."""
        values = [s.value for s in self.sliders if isinstance(s, pn.widgets.FloatSlider)]
        self.gate.show(values or None)

    def clear(self) -> None:
        self.gate.clear()
        self.sliders[:], self.table.object = [PLACEHOLDER], ""
        self.figure1[:] = [pn.pane.Markdown("")]

    def _start_figure1(self, fit) -> None:
        data, covariance = fit.dataset, fit.params.covariance
        key = id(data), covariance, fit.seed
        if data.task_features is None or not held_out_tasks(data.n_tasks)[1].size:
            self.figure1[:] = [pn.pane.Markdown("*Figure 1 needs task features and 4 tasks.*")]
        elif key in self._figure1_cache:
            self._show_figure1(self._figure1_cache[key])
        else:
            self.figure1[:] = [pn.pane.Markdown("*Figure 1: fitting TL-TF and TL-MC for "
                                                "H = 1..6 ...*")]

            def compute(token):   # one H at a time: it stops between them once cancelled
                curves: dict = {}
                for H in range(1, 7):
                    token.check()
                    for name, (hs, values) in figure1_curves(
                            data, clusters=[H], covariance=covariance,
                            random_state=fit.seed).items():
                        curves.setdefault(name, ([], []))
                        curves[name][0].extend(hs)
                        curves[name][1].extend(values)
                self._figure1_cache[key] = curves
                return curves

            self.submit(compute, self._show_figure1, self._figure1_failed)

    def _show_figure1(self, curves) -> None:
        self.figure1[:] = [figure_pane(figure1(curves))]

    def _figure1_failed(self, exc: Exception) -> None:
        if not isinstance(exc, Cancelled):
            self.figure1[:] = [pn.pane.Markdown(f"*Figure 1 failed: {escape(exc)}*")]


TRANSFER = ModelPage(
    slug="transfer", title="Transfer (TL-TF)", params=TransferParams, make=make_from(TLTF),
    views=lambda: [PhiView(), PsiScaleView(width=420, height=300)],
    baselines={"STL": lambda p, seed, d: PerTaskEstimator(estimator=LogisticRegression()),
               "TL-MC": make_from(TLTF, gate="constant")},   # the same TL-TF, no task features
    kinds=("classification",), min_tasks=2, min_per_task=2, intro=INTRO,
    objective="Variational lower bound (EM: never decreases)",
    scenario="new_task_from_task_features", steps_are="EM iterations",
    hooks=PageHooks(explain=lambda model, result, data, test: fit_summary(model, data),
                    after=after, panels=lambda: [TransferPanel()], advice=advice),
    # with task features the EM settles in ~40 steps (8 s at 5 steps/s); without them the
    # gate is constant and the EM may run to its 500 iterations: 30 steps/s, under 17 s
    pace=lambda data: "30 steps/s" if data is not None and data.task_features is None
    else "5 steps/s")
