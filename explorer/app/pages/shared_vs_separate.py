"""The "Shared vs separate" page: one regularized multi-task model vs one model per task.

The example page for page authors: it builds its views from :mod:`explorer.viz.live`, hands a
factory, a data getter and a ``render(snapshot)`` callback to :class:`LiveFitRunner`, and
resets the runner when the data (``state.param.train``) or its own hyper-parameters change.
"""

from __future__ import annotations

import numpy as np
import panel as pn

from explorer.app.runner import LiveFitRunner
from explorer.models.baselines import PerTaskEstimator
from explorer.models.regularized import RegularizedMTL
from explorer.viz.live import BarView, CurveView, MatrixHeatmap

__all__ = ["SharedVsSeparatePage"]

INTRO = """
## Shared vs separate

**Separate**: every task fits its own model on its own (few) examples.
**Shared**: one regularized multi-task model (RegularizedMTL) learns all tasks together;
`lambda1` pulls related tasks' weight vectors towards each other, `lambda2` keeps them small.
Watch the learned **task similarity** (cosine of the weight vectors) converge, and compare it
with the **true** relation of the generated tasks (blue = related, red = negated, grey
= exactly 0). At the end the bars show each task's **test error** for both approaches.

*Try:* fewer examples per task and more features in the sidebar, where sharing pays; then
`lambda1` = 10, which pulls every task onto one weight vector: the negated task's error jumps.
"""

LAMBDAS = [1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]


class SharedVsSeparatePage(pn.viewable.Viewer):
    """RegularizedMTL (shared) vs PerTaskEstimator (separate), live."""

    def __init__(self, state, **params):
        super().__init__(**params)
        self.state = state
        self.lambda1 = pn.widgets.DiscreteSlider(label="lambda1 (task coupling)",
                                                 options=LAMBDAS, value=0.1, width=260)
        self.lambda2 = pn.widgets.DiscreteSlider(label="lambda2 (weight size)",
                                                 options=LAMBDAS, value=0.01, width=260)
        self.runner = LiveFitRunner(self._make_estimator, self._data, self._render,
                                    self._finished, self._cleared)
        self._panes = [pn.pane.Bokeh(sizing_mode="stretch_width") for _ in range(4)]
        self._note = pn.pane.Markdown("", sizing_mode="stretch_width")
        self._build_views()
        self.lambda1.param.watch(self._changed, "value")
        self.lambda2.param.watch(self._changed, "value")
        state.param.watch(self._data_changed, "train")
        self._layout = pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width", styles={"font-size": "15px"}),
            pn.Row(self.lambda1, self.lambda2),
            self.runner,
            self._note,
            pn.Row(self._panes[0], self._panes[1], sizing_mode="stretch_width"),
            pn.Row(self._panes[2], self._panes[3], sizing_mode="stretch_width"),
            sizing_mode="stretch_width")

    def __panel__(self):
        return self._layout

    # ------------------------------------------------------------------ model
    @property
    def kind(self) -> str:
        train = self.state.train
        return "classification" if train is None else train.kind

    def _make_estimator(self):
        loss = "logistic" if self.kind == "classification" else "squared"
        return RegularizedMTL(loss=loss, lambda1=self.lambda1.value, lambda2=self.lambda2.value,
                              max_iter=300)

    def _data(self):
        train = self.state.train
        if train is None:
            raise ValueError("No training data: choose a data set in the sidebar.")
        return train.X, train.y, train.task

    # ------------------------------------------------------------------ views
    def _build_views(self):
        train = self.state.train
        names = list(train.task_names) if train is not None else ["T0"]
        self.similarity = MatrixHeatmap(names, names, limit=1.0,
                                        title="Learned task similarity (shared model)")
        truth = getattr(self.state.dataset, "truth", None) or {}
        relation = truth.get("task_relation") if hasattr(truth, "get") else None
        self.truth = MatrixHeatmap(names, names, limit=1.0, title="True task relation")
        if relation is not None:
            rel = np.asarray(relation, dtype=float)
            peak = float(np.max(np.abs(rel))) or 1.0
            self.truth.set_limit(peak)
            self.truth.update(rel)
        else:
            self.truth.figure.title.text = "True task relation (unknown for this data set)"
        self.curve = CurveView(title="Objective", y_label="objective")
        label = "test error" if self.kind == "classification" else "1 - R^2 (test)"
        self.bars = BarView(names, ["shared", "separate"], title=f"Per-task {label}",
                            y_label=label)
        for pane, view in zip(self._panes, (self.similarity, self.truth, self.curve, self.bars),
                              strict=True):
            pane.object = view.figure

    def _render(self, snap):
        sim = snap.matrices.get("similarity")
        if sim is not None and np.shape(sim) == self.similarity.shape:
            self.similarity.update(sim)
        self.curve.reset(*self.runner.objective_trace(snap.step))

    def _errors(self, model):
        test = self.state.test
        score = model.score_per_task(test.X, test.y, test.task)
        return np.nan_to_num(1.0 - score, nan=0.0)

    def _finished(self, shared):
        from sklearn.linear_model import LogisticRegression, Ridge

        base = LogisticRegression() if self.kind == "classification" else Ridge()
        X, y, task = self._data()
        separate = PerTaskEstimator(estimator=base).fit(X, y, task)
        err_shared, err_sep = self._errors(shared), self._errors(separate)
        better = [t for t in range(len(err_shared)) if err_shared[t] < err_sep[t]]
        self.bars.update({"shared": err_shared, "separate": err_sep}, highlight=better)
        self._note.object = (f"Mean test error: shared **{err_shared.mean():.3f}**, "
                             f"separate **{err_sep.mean():.3f}**; sharing helps on "
                             f"{len(better)} of {len(err_shared)} tasks (highlighted).")

    # ------------------------------------------------------------------ events
    def _cleared(self):
        """The runner was reset: empty the live views (the truth stays)."""
        if hasattr(self, "curve"):
            self.similarity.update(np.zeros(self.similarity.shape))
            self.curve.reset()
            self.bars.update({})
        self._note.object = ""

    def _changed(self, *_):
        self.runner.reset()

    def _data_changed(self, *_):
        self.runner.reset()
        self._build_views()
