"""Outlier-task scores of rMTFL as live bars, right/wrong against the truth (plain Bokeh).

rMTFL's outlier score of task i is the L2 norm of column i of Q; the column group
soft-thresholding of the solver (Eq. 7 of Gong, Ye & Zhang 2012) sets a column exactly to 0
unless the task needs weights of its own, so the detection threshold is 0: any nonzero
column is an outlier. The view draws the threshold as a dashed line and colours each bar by
what the detection means against the truth, when the truth is known.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from bokeh.models import ColumnDataSource, HoverTool, Legend, LegendItem, Span
from bokeh.plotting import figure

from .live import LiveView
from .style import (
    category_ticks,
    label_every,
    label_orientation,
    labels_fit,
    set_columns,
    style_figure,
)

__all__ = ["OUTCOME_COLORS", "OutlierBars", "OutlierScoresView", "detection_outcomes"]

#: Fill colour per outcome of a task's detection.
OUTCOME_COLORS = {
    "outlier (right)": "#1b9e77",     # detected and truly an outlier
    "outlier (wrong)": "#d95f02",     # detected but the truth says it shares
    "missed outlier": "#ffffff",      # a true outlier not detected (outlined)
    "shares (right)": "#bdbdbd",      # not detected, and truly not an outlier
    "outlier": "#1f77b4",             # detected, truth unknown
    "shares": "#bdbdbd",              # not detected, truth unknown
}


def detection_outcomes(detected, truth=None) -> list[str]:
    """One outcome label per task (keys of :data:`OUTCOME_COLORS`).

    Parameters
    ----------
    detected : bool array (m,)
    truth : bool array (m,) or None

    >>> detection_outcomes([True, True, False, False], [True, False, True, False])
    ['outlier (right)', 'outlier (wrong)', 'missed outlier', 'shares (right)']
    >>> detection_outcomes([True, False])
    ['outlier', 'shares']
    """
    detected = np.asarray(detected, dtype=bool)
    if truth is None:
        return ["outlier" if d else "shares" for d in detected]
    truth = np.asarray(truth, dtype=bool)
    if truth.shape != detected.shape:
        raise ValueError(f"detection_outcomes: truth must have shape {detected.shape}; got "
                         f"{truth.shape}.")
    table = {(True, True): "outlier (right)", (True, False): "outlier (wrong)",
             (False, True): "missed outlier", (False, False): "shares (right)"}
    return [table[(bool(d), bool(t))] for d, t in zip(detected, truth, strict=True)]


class OutlierBars:
    """Per-task outlier scores ``||q_i||``; bars coloured by detection outcome.

    Parameters
    ----------
    task_names : sequence of str
    truth : bool array (m,) or None
        The generator's ``truth["outlier_tasks"]``; None for real data.

    Examples
    --------
    >>> bars = OutlierBars(["T0", "T1", "T2"], truth=[False, True, True])
    >>> bars.update([0.0, 2.5, 0.0])
    >>> bars.source.data["outcome"]
    ['shares (right)', 'outlier (right)', 'missed outlier']
    """

    def __init__(self, task_names: Sequence[str], truth=None, *, title: str = "",
                 width: int = 520, height: int = 300):
        self.task_names = [str(t) for t in task_names]
        self.truth = self._checked_truth(truth, len(self.task_names))
        m = len(self.task_names)
        self.source = ColumnDataSource(self._columns(np.zeros(m)))
        self.figure = fig = figure(
            x_range=self.task_names, title=title or "Outlier score ||q_i|| per task",
            width=width, height=height, tools="", toolbar_location=None,
            sizing_mode="fixed")
        renderer = fig.vbar(x="task", top="score", width=0.8, source=self.source,
                            fill_color="color", line_color="line")
        # A marker on the baseline for every task, so a missed outlier (score 0, no bar)
        # is still visible.
        fig.scatter(x="task", y=0.0, marker="square", size=13, source=self.source,
                    fill_color="color", line_color="line", line_width=2)
        # A legend of the outcomes that can occur (one fixed entry each, not per bar); the
        # entries that need a truth hide when the data set has none.
        self._legend_items = {}
        for outcome in ("outlier (right)", "outlier (wrong)", "missed outlier",
                        "shares (right)", "outlier", "shares"):
            swatch = fig.scatter([0], [0], marker="square", size=12, visible=False,
                                 fill_color=OUTCOME_COLORS[outcome], line_color="#333333")
            self._legend_items[outcome] = LegendItem(label=outcome, renderers=[swatch])
        fig.add_layout(Legend(items=list(self._legend_items.values()), location="top_left",
                              label_text_font_size="10pt"))
        fig.add_tools(HoverTool(renderers=[renderer],
                                tooltips=[("task", "@task"), ("||q_i||", "@score{0.0000}"),
                                          ("", "@outcome")]))
        fig.add_layout(Span(location=0.0, dimension="width", line_dash="dashed",
                            line_color="black", line_width=1.5))
        fig.yaxis.axis_label = "||q_i||  (0 = shares the features)"
        style_figure(fig)
        self._show_legend()

    @staticmethod
    def _checked_truth(truth, m):
        truth = None if truth is None else np.asarray(truth, dtype=bool)
        if truth is not None and truth.shape != (m,):
            raise ValueError(f"OutlierBars: truth must have shape ({m},); got {truth.shape}.")
        return truth

    def _show_legend(self) -> None:
        with_truth = self.truth is not None
        for outcome, item in self._legend_items.items():
            item.visible = (outcome not in ("outlier", "shares")) == with_truth
        fits = labels_fit(self.figure.width - 80)   # the plot's frame, less the value axis
        every = label_every(len(self.task_names), fits)
        self.figure.xaxis.major_label_orientation = label_orientation(
            self.task_names[::every], self.figure.width)
        category_ticks(self.figure.xaxis, len(self.task_names), fits)

    def set_tasks(self, task_names: Sequence[str], truth=None) -> None:
        """Re-target to other tasks (a new data set), patching the figure in place."""
        self.task_names = [str(t) for t in task_names]
        self.truth = self._checked_truth(truth, len(self.task_names))
        self.figure.x_range.factors = self.task_names
        self._show_legend()
        self.source.data = self._columns(np.zeros(len(self.task_names)))

    def _columns(self, scores):
        scores = np.asarray(scores, dtype=float)
        outcome = detection_outcomes(scores > 0, self.truth)
        return {"task": self.task_names, "score": scores.tolist(), "outcome": outcome,
                "color": [OUTCOME_COLORS[o] for o in outcome],
                "line": ["#d95f02" if o == "missed outlier" else "#555555" for o in outcome]}


    def update(self, scores) -> None:
        """Show ``scores`` (shape (m,)); a task is detected when its score is > 0."""
        scores = np.asarray(scores, dtype=float)
        if scores.shape != (len(self.task_names),):
            raise ValueError(f"OutlierBars.update: scores must have shape "
                             f"({len(self.task_names)},); got {scores.shape}.")
        set_columns(self.source, **self._columns(scores))


class OutlierScoresView(LiveView):
    """The protocol view of :class:`OutlierBars`: ``snapshot.info["outlier_scores"]`` against
    ``truth["outlier_tasks"]``."""

    def __init__(self, **figure):
        self.bars = OutlierBars(["T0"], **figure)
        self.figures = [self.bars.figure]

    def set_data(self, dataset) -> None:
        truth = (getattr(dataset, "truth", None) or {}).get("outlier_tasks")
        self.bars.set_tasks(dataset.task_names, truth)

    def update(self, snapshot) -> None:
        scores = snapshot.info.get("outlier_scores")
        if scores is not None:
            self.bars.update(scores)

    def clear(self) -> None:
        self.bars.update(np.zeros(len(self.bars.task_names)))
