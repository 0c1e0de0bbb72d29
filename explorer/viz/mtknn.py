"""Views of the Neighbourhoods (MT-KNN) page: the neighbour inspector.

Plain Bokeh, one ``ColumnDataSource`` per glyph set, ``source.data = ...`` per change.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource, HoverTool, Legend, LegendItem, TapTool
from bokeh.plotting import figure
from sklearn.base import is_classifier

from .style import DIVERGING, style_figure, task_colors

__all__ = ["NeighbourInspector", "neighbour_votes"]


def neighbour_votes(model, x: np.ndarray, task: int) -> dict:
    """The k heterogeneous neighbours of one point and each one's share of the decision.

    MT-KNN: ``vote_l = w_{t, t_l} s(i, l) y_l`` (labels +-1); the votes sum to the decision
    function. MT-KR: ``vote_l = w_{t, t_l} s(i, l) y_l / sum_{l' in N(i), t_l' = t_l} s(i, l')``,
    the neighbour's part of its task's kernel-regression term in Eq. 6; the votes sum to
    the prediction except for tasks with no neighbour (their mean target stands in).
    Returns a dict of arrays (``index``, ``task``, ``similarity``, ``vote``) and
    ``decision`` (the predicted label, or MT-KR's prediction).
    """
    x = np.asarray(x, dtype=float)[None, :]
    nb = model.neighbourhoods(x)
    index, tasks, sim = nb.index[0], nb.task[0], nb.similarity[0]
    weight = model.W_[task, tasks] * sim * model.train_y_[index]
    if is_classifier(model):
        votes = weight
        decision = model.classes_[task][1] if votes.sum() > 0 else model.classes_[task][0]
    else:
        per_task = np.bincount(tasks, weights=sim, minlength=model.W_.shape[0])
        votes = weight / per_task[tasks]
        decision = float(model.predict(x, [task])[0])
    return {"index": index, "task": tasks, "similarity": sim, "vote": votes,
            "decision": decision}


class NeighbourInspector:
    """Test points of 2-D tasks; a click shows the point's k neighbours from all tasks.

    Each neighbour is joined to the clicked point by a segment whose width is ``|vote|`` and
    whose colour is its sign (blue: votes for the positive class / with the same sign, red:
    against), with ``vote = w_{t_i, t_l} s(i, l) y_l``; the title gives the decision.
    """

    def __init__(self, *, width: int = 540, height: int = 400):
        self.points = ColumnDataSource({"x": [], "y": [], "color": [], "task": []})
        self.train = ColumnDataSource({"x": [], "y": [], "color": []})
        self.links = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": [], "width": [],
                                       "color": [], "vote": [], "task": []})
        self.figure = fig = figure(title="Click a test point", width=width, height=height,
                                   tools="", toolbar_location=None, sizing_mode="fixed")
        fig.scatter("x", "y", source=self.train, color="color", alpha=0.25, size=5)
        fig.segment("x0", "y0", "x1", "y1", source=self.links, line_width="width",
                    line_color="color", line_alpha=0.85)
        # rings on the neighbours, as thick as their votes (they are often close together)
        fig.scatter("x1", "y1", source=self.links, size=18, fill_alpha=0.0,
                    line_color="color", line_width="width")
        renderer = fig.scatter("x", "y", source=self.points, color="color", size=8,
                               line_color="black", nonselection_alpha=0.35,
                               legend_field="task")
        # legends beside the plot: the tasks' colours, and what a link's colour says
        tasks = fig.legend[0]
        fig.center = [item for item in fig.center if item is not tasks]
        fig.add_layout(tasks, "right")
        tasks.title, tasks.label_text_font_size, tasks.spacing = "task", "10pt", 1
        votes = [LegendItem(label=label, renderers=[fig.segment(
                    [0], [0], [0], [0], line_color=color, line_width=4, visible=False)])
                 for label, color in (("vote for", DIVERGING[-2]),
                                      ("vote against", DIVERGING[1]))]
        fig.add_layout(Legend(items=votes, orientation="horizontal",
                              label_text_font_size="10pt"), "above")
        fig.add_tools(TapTool(renderers=[renderer]),
                      HoverTool(renderers=[renderer], tooltips=[("task", "@task")]))
        style_figure(fig)
        self.model = self.test = None
        self.points.selected.on_change("indices", self._tapped)

    def set_model(self, model, train, test) -> None:
        """Show ``test``'s points (2-D data only) for the fitted ``model``."""
        self.clear()
        if train.X.shape[1] != 2:
            self.figure.title.text = "Neighbour inspector: needs 2-D tasks"
            return
        self.model, self.test = model, test
        self._train_X = train.X      # the neighbour indices are rows of the fitted data
        self.names = [str(n) for n in train.task_names]
        colors = np.array(task_colors(train.n_tasks))
        names = [str(n) for n in train.task_names]
        self.train.data = {"x": train.X[:, 0], "y": train.X[:, 1],
                           "color": colors[train.task].tolist()}
        self.points.data = {"x": test.X[:, 0], "y": test.X[:, 1],
                            "color": colors[test.task].tolist(),
                            "task": [names[t] for t in test.task]}
        self.figure.title.text = "Click a test point to see its neighbours"

    def show(self, i: int) -> dict:
        """Draw the neighbours of test point ``i``; returns :func:`neighbour_votes`' dict."""
        x, t = self.test.X[i], int(self.test.task[i])
        info = neighbour_votes(self.model, x, t)
        train_X = self._train_X
        scale = max(float(np.abs(info["vote"]).max()), 1e-12)
        self.links.data = {
            "x0": [float(x[0])] * len(info["index"]), "y0": [float(x[1])] * len(info["index"]),
            "x1": train_X[info["index"], 0], "y1": train_X[info["index"], 1],
            "width": (2.5 + 6.0 * np.abs(info["vote"]) / scale).tolist(),   # projector-thick
            "color": [DIVERGING[-2] if v > 0 else DIVERGING[1] for v in info["vote"]],
            "vote": info["vote"].tolist(), "task": info["task"].tolist()}
        decision = info["decision"]
        if isinstance(decision, float):
            shown = f"prediction {decision:.3g}"
        else:
            shown = f"vote sum {info['vote'].sum():+.3f} -> class {decision}"
        self.figure.title.text = f"{self.names[t]}, point {i}: {shown}"
        return info

    def _tapped(self, attr, old, new) -> None:
        if new and self.model is not None:
            self.show(int(new[0]))

    def clear(self) -> None:
        self.model = self.test = None
        for source in (self.points, self.train, self.links):
            source.data = {key: [] for key in source.data}
        self.figure.title.text = "Click a test point"

