"""The "Trees" page: a multi-task decision tree grown node by node, or MT-Adaboost round by
round (Faddoul et al. 2012), beside single-task trees / AdaBoost.M1 fitted on the same split.

A :class:`~explorer.app.kit.ModelPage` declaration. Views: the tree (nodes
``feature <= threshold`` outlined in the colour of the task whose gain decided the split,
per-task class bars, per-task early leaves), the per-task gains of the newest split, each
task's plane partitioned (2-D data), the boosting curves, and the paper's Figure 3 in a
folded card (computed once per process at server start, off the event loop).
"""

from __future__ import annotations

import functools

import panel as pn
import param

from explorer.app.kit import ModelPage, PageHooks, PagePanel, figure_pane
from explorer.app.process import warm_up_with
from explorer.models import MTAdaBoost, MTDecisionTree, SingleTaskAdaBoost, SingleTaskTree
from explorer.models.constraints import estimator_from, from_constraint
from explorer.viz.tree import (
    BoostingView,
    GainBarsView,
    PartitionLiveView,
    TreeDiagramView,
    theorem1_boxplot,
)

__all__ = ["TREES", "TreesParams", "figure3_ratios"]

INTRO = """
## Multi-task decision trees

Every task keeps its own labels; at each node the tasks whose examples are **pure** get an
*early decision leaf* (a square in the task's colour) and leave the node, and the split
`feature <= threshold` maximises the chosen criterion over the remaining tasks:
**IG_M** = the largest per-task gain (the paper's proposal), **IG_J** = the gain of all
labels pooled, **IG_U** = the sum of the per-task gains. The node's outline has the colour
of the task whose gain was largest. **Step** adds one node (one boosting round for
MT-Adaboost); **Run** grows the rest. The bars compare each task's test error with one tree
(or AdaBoost.M1) per task.
"""

FIGURE3_TEXT = (
    "100 random two-task data sets per family (label distributions Uniform, Normal, Poisson; "
    "2-20 labels; both tasks label the same instances): the best IG_M is never below the best "
    "IG_J (ratio >= 1, dashed line), while IG_U / IG_J sits at 2 with no spread.")


class TreesParams(param.Parameterized):
    """Hyper-parameters of the page (URL keys ``trees.<name>``); ``method`` is the page's
    own, the others derive from MTDecisionTree / MTAdaBoost (and their single-task
    baselines), narrowed to a teaching range."""

    method = param.Selector(default="tree", objects=["tree", "boosting"], label="Method",
                            doc="tree: one MT-DT grown node by node; boosting: MT-Adaboost.")
    criterion = from_constraint(MTDecisionTree, "criterion", label="Criterion",
                                doc="ig_m: max of task gains; ig_j: pooled labels; ig_u: sum.")
    max_depth = from_constraint(MTDecisionTree, "max_depth",
                                also=[(SingleTaskTree, "max_depth")], default=4,
                                bounds=(None, 8), label="Max depth",
                                doc="Depth of the tree (of each boosted tree: at most 6 used).")
    rounds = from_constraint(MTAdaBoost, "n_estimators",
                             also=[(SingleTaskAdaBoost, "n_estimators")], default=20,
                             bounds=(None, 50), label="Boosting rounds",
                             doc="Rounds of MT-Adaboost (method boosting).")


def _boosted_tree(params, random_state=None):
    """The trees MT-Adaboost and AdaBoost.M1 boost: at most 6 deep."""
    return estimator_from(params, MTDecisionTree, random_state=random_state,
                          max_depth=min(params.max_depth, 6))


def make_model(params, random_state, data):
    """The page's method: one tree, or MT-Adaboost over trees."""
    if params.method == "tree":
        return estimator_from(params, MTDecisionTree, random_state=random_state)
    return estimator_from(params, MTAdaBoost, random_state=random_state,
                          base=_boosted_tree(params, random_state))


def make_single_task(params, random_state, data):
    if params.method == "tree":
        return estimator_from(params, SingleTaskTree, random_state=random_state)
    return estimator_from(params, SingleTaskAdaBoost, random_state=random_state,
                          base=_boosted_tree(params))


def views():
    # the tree stays on the first screen of a 1366 x 768 projector, beside the per-task
    # errors (a taller tree is panned)
    return [TreeDiagramView(max_frame_height=320), GainBarsView(),
            PartitionLiveView(width=280, height=260), BoostingView()]


@warm_up_with   # computed at server start, before the first user unfolds it
@functools.lru_cache(maxsize=1)
def figure3_ratios():
    """The Figure 3 experiment (fixed seed), once per process; ~0.4 s of numba kernels."""
    from explorer.solvers.tree_split import relative_gains

    return relative_gains(100, random_state=0)


class Figure3Panel(PagePanel):
    """The paper's Figure 3 in a folded card, drawn when first unfolded.

    The box plot is a figure of its own, so it is made only for a user who opens the card;
    its numbers are computed once per process, off the event loop (the server's warm-up, or
    the session's work service here).
    """

    below = True

    def __init__(self):
        self.layout = pn.Card(pn.pane.Markdown(FIGURE3_TEXT, sizing_mode="stretch_width"),
                              title="Theorem 1 at work (the paper's Figure 3)",
                              collapsed=True, sizing_mode="stretch_width",
                              margin=(10, 10, 5, 10))
        self.layout.param.watch(self._unfolded, "collapsed")

    def _unfolded(self, event) -> None:
        if event.new or len(self.layout) > 1:
            return   # folded again, or drawn (or being computed) already
        if figure3_ratios.cache_info().currsize:   # the server's warm-up computed it
            self._show(figure3_ratios())
            return
        self.layout.append(pn.pane.Markdown("*Computing...*"))
        self.submit(lambda token: figure3_ratios(), self._show)

    def _show(self, ratios) -> None:
        plot = figure_pane(theorem1_boxplot(ratios))
        if len(self.layout) > 1:
            self.layout[1] = plot
        else:
            self.layout.append(plot)


TREES = ModelPage(
    slug="trees", title="Trees", params=TreesParams, make=make_model, views=views,
    baselines={"single-task": make_single_task}, kinds=("classification",),
    min_tasks=1, min_per_task=2, intro=INTRO, objective="", pace="2 steps/s",
    scenario="different_label_sets", steps_are="tree nodes, or boosting rounds",
    hooks=PageHooks(panels=lambda: [Figure3Panel()]))
