"""Live views of MTBoost (Zhang & Yeung 2012), plain Bokeh (no Panel).

* :class:`LossBoundsView` -- the training loss round by round with, for each round, the
  paper's Theorem 2 bound ``C(F^{t-1}) - beta^T Omega beta / lam`` (claimed to lie *above*
  the new loss) and the reversed bound ``C(F^{t-1}) + s w.beta`` (which convexity puts
  *below* it). An accumulating view: one stream message per frame.
* :class:`SupertaskView` -- on 2-D data, the supertask the current base learner was fitted
  to: each training point sized by its instance weight ``d_j`` (Eq. 7), drawn as a triangle
  when its label was flipped (``sign(w_it) < 0``), coloured by the supertask label.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource, DataRange1d, HoverTool
from bokeh.plotting import figure

from .live import LiveView, SnapshotMatrixView, append_rows
from .style import label_colors, style_figure

__all__ = ["LossBoundsView", "SupertaskView", "TaskMatrixView"]


class _TiltedTaskNames:
    """Task names under a narrow heatmap, tilted so that long names do not overlap."""

    def set_data(self, dataset) -> None:
        super().set_data(dataset)
        self.heatmap.figure.xaxis.major_label_orientation = 0.7


class TaskMatrixView(_TiltedTaskNames, SnapshotMatrixView):
    """:class:`~explorer.viz.live.SnapshotMatrixView` with tilted task names."""



_SERIES = ("round", "loss", "paper", "reversed")


class LossBoundsView(LiveView):
    """Training loss with the paper's (claimed upper) and the reversed (true lower) bound.

    >>> from explorer.models import Snapshot
    >>> view = LossBoundsView()
    >>> view.extend([Snapshot(step=1, objective=0.5, info={"paper_bound": 0.4,
    ...                                                    "reversed_bound": 0.45})])
    >>> view.source.data["paper"], view.broken
    ([0.4], 1)
    """

    accumulates = True

    def __init__(self, *, width: int = 560, height: int = 320):
        self.source = ColumnDataSource({key: [] for key in _SERIES})
        fig = figure(width=width, height=height, tools="", toolbar_location=None,
                     title="Training loss and Theorem 2, round by round",
                     x_axis_label="round", y_axis_label="sum of per-task mean losses",
                     sizing_mode="fixed")
        loss = fig.line("round", "loss", source=self.source, line_width=2, color="black",
                        legend_label="training loss")
        fig.scatter("round", "paper", source=self.source, marker="inverted_triangle", size=8,
                    color="#d95f02", legend_label="paper: loss <= C(F^{t-1}) - b'Ob/lam")
        fig.scatter("round", "reversed", source=self.source, marker="triangle", size=9,
                    color="#1b9e77", legend_label="reversed: loss >= C(F^{t-1}) + w.b")
        # the range follows the loss: at small lam the bounds fall far below it
        fig.y_range = DataRange1d(renderers=[loss], range_padding=0.25)
        fig.add_tools(HoverTool(renderers=[loss], tooltips=[
            ("round", "@round"), ("loss", "@loss{0.0000}"), ("paper bound", "@paper{0.0000}"),
            ("reversed bound", "@reversed{0.0000}")]))
        fig.legend.location = "top_right"
        fig.legend.label_text_font_size = "10pt"
        fig.legend.background_fill_alpha = 0.7
        style_figure(fig)
        self.figures = [fig]
        self.broken = 0     # rounds whose loss lies above the paper's claimed bound

    def set_data(self, dataset) -> None:
        self.clear()

    def update(self, snapshot) -> None:
        self.extend([snapshot])

    def extend(self, snapshots) -> None:
        rows = {key: [] for key in _SERIES}
        for snap in snapshots:
            if snap.objective is None or "paper_bound" not in snap.info:
                continue
            rows["round"].append(snap.step)
            rows["loss"].append(float(snap.objective))
            rows["paper"].append(float(snap.info["paper_bound"]))
            rows["reversed"].append(float(snap.info["reversed_bound"]))
            self.broken += rows["loss"][-1] > rows["paper"][-1] + 1e-12
        if rows["round"]:
            append_rows(self.source, rows)

    def clear(self) -> None:
        self.source.data = {key: [] for key in _SERIES}
        self.broken = 0


class SupertaskView(LiveView):
    """The supertask of the newest round on 2-D data (size = weight, triangle = flipped).

    One renderer per supertask label, each of one colour. A single renderer coloured by a
    column, with a legend built from a column, broke in the browser: BokehJS can draw a
    legend between a source's new rows and their new colours, and then read a colour past
    the end of the old ones ("Offset is outside the bounds of the DataView"), which a
    frame that grows the points from none (the first after a Reset) met.
    """

    TITLE = "Supertask: size = weight, triangle = flipped"
    LABELS = (1, -1)

    def __init__(self, *, width: int = 440, height: int = 380):
        self.sources = {label: ColumnDataSource(self._empty()) for label in self.LABELS}
        fig = figure(width=width, height=height, tools="", toolbar_location=None,
                     title=self.TITLE, x_axis_label="x0", y_axis_label="x1",
                     sizing_mode="fixed")
        colors = label_colors(2)
        renderers = [fig.scatter("x", "y", source=self.sources[label], size="size",
                                 marker="marker", color=colors[int(label > 0)],
                                 fill_alpha=0.55, legend_label=f"supertask label {label:+d}")
                     for label in self.LABELS]
        fig.legend.location = "top_left"
        fig.legend.label_text_font_size = "9pt"
        fig.legend.background_fill_alpha = 0.6
        fig.add_tools(HoverTool(renderers=renderers, tooltips=[
            ("task", "@task"), ("label", "@label"), ("weight", "@weight{0.0000}"),
            ("flipped", "@flipped")]))
        style_figure(fig)
        self.figures = [fig]
        self.figure = fig
        self._data = None

    @staticmethod
    def _empty():
        return {"x": [], "y": [], "size": [], "marker": [], "task": [], "label": [],
                "weight": [], "flipped": []}

    @property
    def points(self) -> dict[str, np.ndarray]:
        """Every point drawn, as columns (+1 points first), plus its ``supertask`` label."""
        columns = {key: np.concatenate([np.asarray(self.sources[label].data[key])
                                        for label in self.LABELS])
                   for key in self._empty()}
        columns["supertask"] = np.concatenate([np.full(len(self.sources[label].data["x"]),
                                                       label) for label in self.LABELS])
        return columns

    def set_data(self, dataset) -> None:
        self._data = dataset if dataset.n_features == 2 else None
        self.figure.title.text = (self.TITLE if self._data is not None else
                                  "Supertask (drawn for 2-D data only)")
        self.clear()

    def update(self, snapshot) -> None:
        data = self._data
        if data is None or "instance_weights" not in snapshot.info:
            return
        weight = np.asarray(snapshot.info["instance_weights"], float)
        flipped = np.asarray(snapshot.info["flipped"], bool)
        if weight.shape != (data.X.shape[0],):
            return
        labels = np.empty(len(weight))
        for t in range(data.n_tasks):       # each task's labels as -1/+1, as the model does
            rows = data.task == t
            labels[rows] = np.where(data.y[rows] == np.unique(data.y[rows])[-1], 1.0, -1.0)
        supertask = np.where(flipped, -labels, labels)
        size = (3.0 + 22.0 * np.sqrt(weight * len(weight) / 4.0)).clip(3, 30)
        names = np.array([str(n) for n in data.task_names], dtype=object)
        for label in self.LABELS:
            rows = supertask == label
            self.sources[label].data = {
                "x": data.X[rows, 0].tolist(), "y": data.X[rows, 1].tolist(),
                "size": size[rows].tolist(),
                "marker": np.where(flipped[rows], "triangle", "circle").tolist(),
                "task": names[data.task[rows]].tolist(), "label": data.y[rows].tolist(),
                "weight": weight[rows].tolist(), "flipped": flipped[rows].tolist()}

    def clear(self) -> None:
        for source in self.sources.values():
            source.data = self._empty()
