"""The "Trees" page: watch a multi-task decision tree grow node by node (Faddoul et al. 2012).

Choose the criterion (IG_M, IG_J, IG_U) and the depth, then Step (one node), Run (node by
node at the chosen speed), Pause, Reset, or scrub back through the growth. The views:

* the tree: nodes ``feature <= threshold``, outlined in the colour of the task whose gain
  decided the split; per-task class distributions as thin bars under each node; per-task
  early decision leaves as squares in the task's colour;
* for 2-D data, each task's plane partitioned by the tree so far;
* the per-task information gains of the newest split, the deciding task highlighted;
* boosting (MT-Adaboost, Algorithm 2): rounds vs per-task training / test error and beta_t;
* the paper's Figure 3: IG_M and IG_U relative to IG_J on random two-task data sets.
"""

from __future__ import annotations

import functools

import numpy as np
import panel as pn

from explorer.app.runner import LiveFitRunner
from explorer.models import MTAdaBoost, MTDecisionTree
from explorer.solvers.tree_split import relative_gains
from explorer.viz.tree import (
    BoostingCurves,
    GainBars,
    PartitionView,
    TreeDiagram,
    theorem1_boxplot,
)

__all__ = ["TreesPage"]

INTRO = """
## Multi-task decision trees

Every task keeps its own labels; at each node the tasks whose examples are **pure** get an
*early decision leaf* (a square in the task's colour) and leave the node, and the split
`feature <= threshold` maximises the chosen criterion over the remaining tasks:
**IG_M** = the largest per-task gain (the paper's proposal), **IG_J** = the gain of all
labels pooled, **IG_U** = the sum of the per-task gains. The node's outline has the colour
of the task whose gain was largest. **Step** adds one node; **Run** grows node by node.
"""

CRITERIA = {"IG_M (max of task gains)": "ig_m", "IG_J (pooled labels)": "ig_j",
            "IG_U (sum of task gains)": "ig_u"}

MAX_NODES_SHOWN = 255


@functools.lru_cache(maxsize=1)
def _figure3_ratios():
    """The Figure 3 experiment, computed once per process (fixed seed)."""
    return relative_gains(100, random_state=0)


class TreesPage(pn.viewable.Viewer):
    """Grow an MT-DT on ``state.train`` node by node; boost it; see Theorem 1."""

    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self.criterion = pn.widgets.Select(label="Criterion", options=CRITERIA, value="ig_m",
                                           width=220)
        self.depth = pn.widgets.IntSlider(label="Max depth", start=1, end=8, value=4, width=200)
        self.rounds = pn.widgets.IntSlider(label="Boosting rounds", start=1, end=50, value=20,
                                           width=200)
        self.boost_depth = pn.widgets.IntSlider(label="Depth of boosted trees", start=1, end=6,
                                                value=3, width=200)
        self.boost_button = pn.widgets.Button(label="Boost", color="primary", width=90)
        self.boost_note = pn.pane.Markdown("", width=420)
        self.status = pn.pane.Markdown("", sizing_mode="stretch_width")
        self._diagram_pane = pn.pane.Bokeh(sizing_mode="fixed")
        self._gains_pane = pn.pane.Bokeh(sizing_mode="fixed")
        self._partition_pane = pn.FlexBox()
        self._boost_panes = pn.FlexBox()
        self._figure3 = pn.pane.Bokeh(theorem1_boxplot(_figure3_ratios()))
        self._runner = self._make_runner()
        self.boost_button.on_click(self._boost)
        for widget in (self.criterion, self.depth):
            widget.param.watch(self._restart, "value")
        state.param.watch(self._on_data, ["train", "test"])
        self._on_data()
        if pn.state.location is not None:  # a copied link restores criterion and depth
            pn.state.location.sync(self.criterion, {"value": "tree_criterion"})
            pn.state.location.sync(self.depth, {"value": "tree_depth"})
        self._layout = pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width", styles={"font-size": "1.05em"}),
            pn.Row(self.criterion, self.depth),
            self._runner,
            self.status,
            pn.FlexBox(self._diagram_pane, self._gains_pane),
            self._partition_pane,
            pn.pane.Markdown("### Boosting: MT-Adaboost (Algorithm 2)"),
            pn.Row(self.rounds, self.boost_depth, self.boost_button, self.boost_note),
            self._boost_panes,
            pn.pane.Markdown(
                "### Theorem 1 at work (the paper's Figure 3)\n"
                "100 random two-task data sets per family (label distributions Uniform, "
                "Normal, Poisson; 2-20 labels; both tasks label the same instances): the "
                "best IG_M is never below the best IG_J (ratio >= 1, dashed line), while "
                "IG_U / IG_J sits at 2 with no spread.", sizing_mode="stretch_width"),
            self._figure3,
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        return self._layout

    # ------------------------------------------------------------------ growth control
    def _make_runner(self):
        def data():
            train = self._state.train
            return train.X, train.y, train.task

        return LiveFitRunner(
            make_estimator=lambda: MTDecisionTree(criterion=self.criterion.value,
                                                  max_depth=self.depth.value),
            get_data=data, render=self._render_snapshot,
            on_reset=lambda: self._render_snapshot(None))

    def _restart(self, *events) -> None:
        self._runner.reset()  # its on_reset empties the views

    def _on_data(self, *events) -> None:
        train = self._state.train
        if train is None or train.kind != "classification":
            self.status.object = "The Trees page needs a classification dataset."
            self._runner.reset()
            return
        self._classes = [np.unique(train.y[train.task == t]) for t in range(train.n_tasks)]
        self._diagram = TreeDiagram(train.task_names, self._classes, train.feature_names)
        self._gains = GainBars(train.task_names)
        self._diagram_pane.object = self._diagram.figure
        self._gains_pane.object = self._gains.figure
        if train.n_features == 2:
            self._partition = PartitionView(train.X, train.y, train.task, self._classes,
                                            train.task_names, width=280, height=260)
            self._partition_pane[:] = [pn.pane.Bokeh(f) for f in self._partition.figures[:6]]
        else:
            self._partition = None
            self._partition_pane[:] = [pn.pane.Markdown(
                f"*The partition view needs 2-D data; this dataset has {train.n_features} "
                "features.*")]
        self._curves = BoostingCurves(train.task_names)
        self._boost_panes[:] = [pn.pane.Bokeh(self._curves.error_figure),
                                pn.pane.Bokeh(self._curves.beta_figure)]
        self.boost_note.object = ""
        self._restart()

    def _render_snapshot(self, snapshot) -> None:
        """Draw one recorded snapshot (the newest while running, any when scrubbing)."""
        if snapshot is None:
            if not hasattr(self, "_diagram"):  # no classification data yet: nothing drawn
                return
            self._diagram.update([], title="MT-DT: click Step to add a node")
            self._gains.update(None)
            if self._partition is not None:
                self._partition.update([])
            self.status.object = "Empty tree. **Step** adds the root."
            return
        nodes = snapshot.info["tree"]
        node = snapshot.info["node"]
        shown = nodes if len(nodes) <= MAX_NODES_SHOWN else nodes[:MAX_NODES_SHOWN]
        self._diagram.update(shown, highlight=node["node"],
                             title=f"MT-DT ({self.criterion.value.upper()}): "
                                   f"{len(nodes)} nodes")
        self._gains.update(node)
        if self._partition is not None:
            self._partition.update(nodes)
        names = self._state.train.task_names
        text = f"Node {node['node']} (depth {node['depth']})"
        if node["feature"] is not None:
            decider = names[node["deciding_task"]]
            text += (f": split `{self._state.train.feature_names[node['feature']]} <= "
                     f"{node['threshold']:.3g}`, decided by **{decider}**")
        if node["early_leaves"]:
            text += "; leaves: " + ", ".join(
                f"{names[leaf['task']]} -> {leaf['label']} ({leaf['reason']})"
                for leaf in node["early_leaves"])
        pending = snapshot.info["n_pending"]
        text += f". Nodes grown: {snapshot.step}" + (
            f"; {pending} node(s) pending." if pending else "; the tree is complete.")
        self.status.object = text

    # ------------------------------------------------------------------ boosting
    def _boost(self, *events) -> None:
        train, test = self._state.train, self._state.test
        if train is None:
            return
        model = MTAdaBoost(base=MTDecisionTree(criterion=self.criterion.value,
                                               max_depth=self.boost_depth.value),
                           n_estimators=self.rounds.value)
        try:
            model.fit(train.X, train.y, train.task)
        except ValueError as exc:
            self.boost_note.object = f"**Boosting stopped:** {exc}"
            return
        m = train.n_tasks
        test_errors = []
        for predicted in model.staged_predict(test.X, test.task):
            wrong = predicted != test.y
            test_errors.append([wrong[test.task == t].mean() if np.any(test.task == t)
                                else np.nan for t in range(m)])
        self.boosted_ = model
        rounds = np.arange(1, model.n_estimators_ + 1)
        self._curves.update(rounds, model.train_errors_, test_errors, model.betas_,
                            model.estimator_errors_)
        self.boost_note.object = (
            f"{model.n_estimators_} rounds ({model.stop_reason_}); final test accuracy "
            f"{1 - np.nanmean(test_errors[-1]):.3f}.")
