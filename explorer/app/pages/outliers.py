"""The "Outliers & shared features" page: rMTFL (Gong, Ye & Zhang 2012) live.

``W = P + Q``: the rows of P that stay nonzero are the features every task shares, the
columns of Q that stay nonzero are the outlier tasks. The page watches MFISTA converge
through the live-fit runner: heatmaps of P, Q and W (tasks x features, fixed diverging
colours, exact zeros grey as in the paper's Figure 3) beside the true W, the
objective, and the outlier score ``||q_i||`` of every task, marked right or wrong against the
generator's truth. The two lambda sliders (log scale, in units of each penalty's
``lambda_max``) refit from the current solution (warm start) as soon as they move.
"""

from __future__ import annotations

import numpy as np
import panel as pn

from explorer.app.runner import LiveFitRunner
from explorer.compare.metrics import nmse
from explorer.models.rmtfl import DEFAULT_FRACTIONS, DEFAULT_RATIO, L21MTFL, RobustMTFL
from explorer.viz.live import CurveView, MatrixHeatmap
from explorer.viz.outliers import OutlierBars

__all__ = ["OutliersPage", "lambda_options"]

INTRO = """
## Outliers & shared features (robust MTFL)

rMTFL writes every task's weights as **w_i = p_i + q_i**. The penalty on the *rows* of
**P** keeps only features that **all tasks share**; the penalty on the *columns* of **Q**
lets a few **outlier tasks** have weights of their own. Run the solver (FISTA) and watch the
zeros appear (grey cells are exactly 0). **lambda1** trades fewer shared features
for fit, **lambda2** decides how easily a task is called an outlier: move a slider and the
model refits from where it is. Bars: each task's outlier score ||q_i||; any bar above the
dashed line at 0 is a detected outlier, coloured right or wrong against the truth.
"""

#: Slider positions, as fractions of lambda_max (log scale).
FRACTIONS = np.round(np.logspace(-3, 0, 25), 6)


def lambda_options(lambda_max: float, default: float) -> dict[str, float]:
    """Log-spaced slider options ``{label: lambda}`` from 1e-3 to 1 times ``lambda_max``.

    ``default`` is inserted (it need not lie on the grid). Labels show the value and its
    fraction of ``lambda_max``.

    >>> opts = lambda_options(2.0, 0.4)
    >>> list(opts)[0], opts["0.4 (0.2 x max)"]
    ('0.002 (0.001 x max)', 0.4)
    """
    values = sorted(set(float(f * lambda_max) for f in FRACTIONS) | {float(default)})
    return {f"{v:.3g} ({v / lambda_max:.2g} x max)": v for v in values}


class OutliersPage(pn.viewable.Viewer):
    """rMTFL on ``state.train`` with live P, Q, W, objective and outlier bars."""

    def __init__(self, state, **params):
        super().__init__(**params)
        self.state = state
        self.lambda1 = pn.widgets.DiscreteSlider(label="lambda1 (shared features, rows of P)",
                                                 options={"auto": 1.0}, width=330)
        self.lambda2 = pn.widgets.DiscreteSlider(label="lambda2 (outlier tasks, columns of Q)",
                                                 options={"auto": 1.0}, width=330)
        self.runner = LiveFitRunner(self._make_estimator, self._data, self._render,
                                    self._finished, self._cleared, record_cap=200)
        self._estimator: RobustMTFL | None = None
        self._warm = False       # True once a fit on the current data has finished
        self._refitting = False  # a slider moved: the reset keeps the solution (warm start)
        self._setting_sliders = False
        self._note = pn.pane.Markdown("", sizing_mode="stretch_width")
        self._panes = pn.FlexBox(sizing_mode="stretch_width")
        self._heatmap_panes = pn.Column(sizing_mode="stretch_width")
        self._on_data()
        self.lambda1.param.watch(self._lambda_moved, "value")
        self.lambda2.param.watch(self._lambda_moved, "value")
        state.param.watch(self._on_data, "train")
        self._layout = pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width", styles={"font-size": "15px"}),
            pn.Row(self.lambda1, self.lambda2),
            self.runner, self._note, self._panes, self._heatmap_panes,
            sizing_mode="stretch_width")

    def __panel__(self):
        return self._layout

    # ------------------------------------------------------------------ model
    def _data(self):
        train = self.state.train
        if train is None or train.kind != "regression":
            raise ValueError("rMTFL needs a regression data set: choose 'Outlier tasks' in "
                             "the sidebar.")
        return train.X, train.y, train.task

    def _make_estimator(self):
        """The page's one estimator, its lambdas set from the sliders.

        The same instance is refitted with ``warm_start=True`` after a slider move, so a
        refit starts from the current solution (scikit-learn's warm-start idiom).
        """
        if self._estimator is None:
            self._estimator = RobustMTFL(tol=1e-6, max_iter=3000, warm_start=True)
        self._estimator.set_params(lambda1=self.lambda1.value, lambda2=self.lambda2.value)
        return self._estimator

    # ------------------------------------------------------------------ data -> views
    def _on_data(self, *_):
        self.runner.reset()   # its on_reset drops the solution (no warm start across data)
        train = self.state.train
        if train is None or train.kind != "regression":
            self._panes[:] = [pn.pane.Markdown(
                "rMTFL is a regression model: choose **Outlier tasks** (or another regression "
                "data set) in the sidebar.")]
            self._heatmap_panes[:] = []
            return
        X, y, task = self._data()
        lmax = RobustMTFL().lambda_max(X, y, task)
        d, m = train.n_features, train.n_tasks
        default1 = DEFAULT_FRACTIONS["lambda1"] * lmax["lambda1"]
        default2 = DEFAULT_RATIO * np.sqrt(d / m) * default1
        for slider, key, default in ((self.lambda1, "lambda1", default1),
                                     (self.lambda2, "lambda2", default2)):
            self._setting_sliders = True   # no refit for this programmatic change
            try:
                slider.param.update(options=lambda_options(lmax[key], default), value=default)
            finally:
                self._setting_sliders = False
        self._build_views(train)

    def _truth(self):
        truth = getattr(self.state.dataset, "truth", None) or {}
        return {k: truth.get(k) for k in ("coef", "outlier_tasks", "shared_features")}

    def _build_views(self, train):
        tasks = list(train.task_names)
        features = list(train.feature_names)
        truth = self._truth()
        coef = truth["coef"]
        # Fixed colour limits for the whole run: the true coefficients' scale when known,
        # else a quick L2,1 fit's (a live view whose colours rescale is unreadable).
        if coef is None:
            coef = L21MTFL().fit(train.X, train.y, train.task).coef_
        limit = float(np.percentile(np.abs(coef), 98)) or 1.0
        size = {"width": 640, "height": max(160, 26 * len(tasks) + 80)}
        self.P = MatrixHeatmap(tasks, features, limit=limit, x_label="feature",
                               title="P (shared part): nonzero columns = shared features", **size)
        self.Q = MatrixHeatmap(tasks, features, limit=limit, x_label="feature",
                               title="Q (outlier part): nonzero rows = outlier tasks", **size)
        self.W = MatrixHeatmap(tasks, features, limit=limit, x_label="feature",
                               title="W = P + Q (estimate)", **size)
        self.W_true = MatrixHeatmap(tasks, features, limit=limit, x_label="feature",
                                    title="True W", **size)
        if truth["coef"] is not None:
            self.W_true.update(np.asarray(truth["coef"]).T)
        else:
            self.W_true.figure.title.text = "True W (unknown for this data set)"
        self.curve = CurveView(title="Objective (Eq. 2)", y_label="objective",
                               y_axis_type="log", width=520)
        outliers = truth["outlier_tasks"]
        self.bars = OutlierBars(tasks, truth=outliers, width=520)
        self._panes[:] = [pn.pane.Bokeh(self.bars.figure), pn.pane.Bokeh(self.curve.figure)]
        self._heatmap_panes[:] = [
            pn.Row(pn.pane.Bokeh(self.P.figure), pn.pane.Bokeh(self.Q.figure),
                   sizing_mode="stretch_width"),
            pn.Row(pn.pane.Bokeh(self.W.figure), pn.pane.Bokeh(self.W_true.figure),
                   sizing_mode="stretch_width")]
        self._note.object = ""

    # ------------------------------------------------------------------ live rendering
    def _render(self, snap):
        # The model stores P, Q, W as (d, m); the heatmaps show tasks x features.
        for name in ("P", "Q", "W"):
            getattr(self, name).update(snap.matrices[name].T)
        self.bars.update(snap.info["outlier_scores"])
        self.curve.reset(*self.runner.objective_trace(snap.step))
        self._note.object = self._summary(snap.info["outlier_tasks"],
                                          snap.info["shared_features"])

    def _summary(self, outliers, shared, model=None) -> str:
        names = self.state.train.task_names
        found = ", ".join(str(names[t]) for t in outliers) or "none"
        text = (f"Detected outlier tasks: **{found}**; shared features: **{len(shared)}** of "
                f"{self.state.train.n_features}.")
        truth = self._truth()
        if truth["outlier_tasks"] is not None:
            true_out = set(np.flatnonzero(truth["outlier_tasks"]))
            tp = len(true_out & set(outliers))
            f1 = 1.0 if not true_out and not len(outliers) else \
                2 * tp / max(len(true_out) + len(outliers), 1)
            text += f" Outlier F1 against the truth: **{f1:.2f}**."
        if truth["shared_features"] is not None:
            true_shared = set(np.flatnonzero(truth["shared_features"]))
            hit = len(true_shared & set(shared))
            text += (f" True shared features recovered: **{hit} of {len(true_shared)}** "
                     f"({len(shared) - hit} extra).")
        if model is not None:
            test = self.state.test
            score = nmse(test.y, model.predict(test.X, test.task), test.task)
            text += f" Test nMSE: **{score:.3f}** after {model.n_iter_} iterations."
        return text

    def _finished(self, model):
        self._warm = True
        self._note.object = self._summary(model.outlier_tasks_, model.shared_features_, model)

    def _cleared(self):
        """The runner was reset. Reset button / new data: start from zero; slider: warm."""
        if self._refitting:   # keep the solution on screen: the refit starts from it
            if hasattr(self, "curve"):
                self.curve.reset()
            return
        self._estimator, self._warm = None, False
        if not hasattr(self, "curve"):
            return
        self.curve.reset()
        for view in (self.P, self.Q, self.W):
            view.update(np.zeros(view.shape))
        self.bars.update(np.zeros(len(self.bars.task_names)))
        self._note.object = ""

    # ------------------------------------------------------------------ events
    def _lambda_moved(self, *_):
        """Refit from the current solution when a fit exists; otherwise just reset."""
        if self._setting_sliders:
            return
        warm = self._warm
        self._refitting = warm
        try:
            self.runner.reset()
        finally:
            self._refitting = False
        if warm:
            self.runner.run()
