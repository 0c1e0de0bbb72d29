"""The "Transfer (TL-TF)" page (Yan & Zhang 2009): a ModelPage with STL and TL-MC as baselines;
phi beside the true clusters, the bound, Psi's scale; a new task's gate (sliders, no fit on a
move); mean AP / P@10 on held-out tasks (on the fit's worker); Figure 1 (on its own thread).
"""

from __future__ import annotations

import panel as pn
import param
from sklearn.linear_model import LogisticRegression

from explorer.app.background import compute_off_loop
from explorer.app.kit import ModelPage, ModelPageView
from explorer.app.offload import locked_callback
from explorer.compare.transfer import figure1_curves, held_out_tasks, zero_shot_table
from explorer.models import TLTF, PerTaskEstimator
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
    """Hyper-parameters of the page (URL keys ``transfer.<name>``)."""

    log_scale = ("tol",)

    n_clusters = param.Integer(3, bounds=(1, 10), label="Clusters H",
                               doc="Number of task clusters (columns of Lambda).")
    gate = param.Selector(default="task_features", objects=["task_features", "constant",
                                                            "append"], label="Gate",
                          doc="task_features: TL-TF; constant: TL-MC; append: TL-Comb.")
    covariance = param.Selector(default="full", objects=["full", "isotropic"],
                                label="Psi", doc="Full covariance or tau^2 I.")
    init = param.Selector(default="kmeans", objects=["kmeans", "paper"], label="Start",
                          doc="kmeans: per-task fits clustered; paper: uniform random.")
    max_iter = param.Integer(500, bounds=(5, 5000), label="Max EM iterations")
    tol = param.Number(1e-4, bounds=(1e-8, 1e-2), label="Tolerance",
                       doc="Stop when the bound's relative change falls below this.")


def make_model(params, random_state, data):
    return TLTF(n_clusters=params.n_clusters, gate=params.gate, covariance=params.covariance,
                init=params.init, max_iter=params.max_iter, tol=params.tol,
                random_state=random_state)


def views():
    return [PhiView(), PsiScaleView(width=420, height=300)]


class TransferPageView(ModelPageView):
    """The kit's page plus the gate, the held-out table and Figure 1."""

    def __init__(self, state, page, **params):
        super().__init__(state, page, **params)
        self.gate, self.sliders = GateView(), pn.Column(PLACEHOLDER, width=240)
        self.table = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.figure1 = pn.Column(pn.pane.Markdown(""), sizing_mode="stretch_width")
        self._figure1_cache, self._figure1_thread = {}, None
        # The gate's figures join after the first fit (a page holds the fewest models); the
        # section is never hidden (cleared in place).
        self.gate_row = pn.Row(self.sliders)
        self.extra = pn.Column(
            pn.pane.Markdown("### A new task from its features alone"), self.gate_row,
            pn.Row(self.table, self.figure1, sizing_mode="stretch_width"),
            sizing_mode="stretch_width")
        self._layout.append(self.extra)

    def _prepare(self):
        job = super()._prepare()
        data, kit_after = self.state.dataset, job.after
        H, covariance = self.params.n_clusters, self.params.covariance
        seed = int(self.state.init_seed)

        def after(model):   # on the worker
            result = kit_after(model)
            result.transfer = None
            if data.task_features is not None and held_out_tasks(data.n_tasks)[1].size:
                result.transfer = zero_shot_table(data, n_clusters=H, covariance=covariance,
                                                  random_state=seed)
            return result

        job.after = after
        return job

    def _finished(self, estimator, result) -> None:
        super()._finished(estimator, result)
        train = self.state.train
        self.gate.set_model(estimator, train)
        if len(self.gate_row) == 1:
            self.gate_row.extend([pn.pane.Bokeh(f) for f in self.gate.figures])
        sliders = [pn.widgets.FloatSlider(label=f"task feature t{j}", start=lo, end=hi,
                                          value=value, step=0.05, width=220)
                   for j, (lo, hi, value) in enumerate(slider_ranges(estimator, train))]
        for slider in sliders:
            slider.param.watch(self._gate_moved, "value")
        self.sliders[:] = sliders or [pn.pane.Markdown("*No task features: the gate is "
                                                       "constant.*")]
        self._gate_moved()
        self.table.object = transfer_table_markdown(getattr(result, "transfer", None))
        self._start_figure1()

    @locked_callback
    def _gate_moved(self, *_) -> None:
        """A slider moved: a gate evaluation and a 60 x 60 matrix-vector product, no fit."""
        values = [s.value for s in self.sliders if isinstance(s, pn.widgets.FloatSlider)]
        self.gate.show(values or None)

    def _cleared(self) -> None:
        super()._cleared()
        if not self._warm_refit and hasattr(self, "extra"):
            self.gate.clear()
            self.sliders[:], self.table.object = [PLACEHOLDER], ""
            self.figure1[:] = [pn.pane.Markdown("")]

    # ------------------------------------------------------------------ Figure 1
    def _figure1_key(self):
        return id(self.state.dataset), self.params.covariance, int(self.state.init_seed)

    def _start_figure1(self) -> None:
        data, key = self.state.dataset, self._figure1_key()
        if data.task_features is None or not held_out_tasks(data.n_tasks)[1].size:
            self.figure1[:] = [pn.pane.Markdown("*Figure 1 needs task features and 4 tasks.*")]
        elif key in self._figure1_cache:
            self._show_figure1(self._figure1_cache[key])
        else:
            self.figure1[:] = [pn.pane.Markdown("*Figure 1: fitting TL-TF and TL-MC for "
                                                "H = 1..6 ...*")]
            covariance, seed = self.params.covariance, int(self.state.init_seed)

            def compute():
                curves = figure1_curves(data, covariance=covariance, random_state=seed)
                self._figure1_cache[key] = curves
                return curves

            self._figure1_thread = compute_off_loop(compute, self._show_figure1,
                                                    name="tltf-figure1")

    def _show_figure1(self, curves) -> None:
        if isinstance(curves, Exception):
            self.figure1[:] = [pn.pane.Markdown(f"*Figure 1 failed: {escape(curves)}*")]
        elif curves is not None:
            self.figure1[:] = [pn.pane.Bokeh(figure1(curves))]


class TransferPage(ModelPage):
    def build(self, state):
        return TransferPageView(state, self)


TRANSFER = TransferPage(
    slug="transfer", title="Transfer (TL-TF)", params=TransferParams, make=make_model,
    views=views,
    baselines={"STL": lambda p, seed, d: PerTaskEstimator(estimator=LogisticRegression()),
               "TL-MC": lambda p, seed, d: TLTF(n_clusters=p.n_clusters, gate="constant",
                                                covariance=p.covariance, tol=p.tol,
                                                random_state=seed)},
    kinds=("classification",), min_tasks=2, min_per_task=2, intro=INTRO,
    explain=lambda model, result, data, test: fit_summary(model, data),
    objective="Variational lower bound (EM: never decreases)")
