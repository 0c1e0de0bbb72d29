"""A sweep's curves on a model page: plain Bokeh figures patched in place, no Panel.

:class:`SweepCurves` draws a :class:`explorer.compare.sweep.SweepResult` against the swept
value, in the page's units (a model page sweeps its own slider: :mod:`explorer.app.
sweep_panel`): the test error (mean over the trials, a band of ±1 standard deviation) beside
the single-task baseline's; the agreement of one learned matrix with the truth (sign
agreement, rank correlation, relative error); the structure found against the truth (outlier
tasks and shared features: precision, recall) and the share of the features kept. Every
figure draws the same points from one ``ColumnDataSource`` (a row per value), so a click on a
point of any of them selects that value; three vertical markers (``Span``) say where the
slider stands, which value cross-validation chose and which value agrees best with the truth.
A new result replaces the source's data; the figures are made once.

:func:`sweep_table` turns a result into that source's columns (off the event loop).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from bokeh.models import ColumnDataSource, HoverTool, Legend, LegendItem, Range1d, Span, TapTool
from bokeh.plotting import figure

from .style import TICK_FONT, style_figure

__all__ = ["COLUMNS", "MARKERS", "SweepCurves", "sweep_table"]

#: The source's columns: the x value, then each curve's mean over the trials (NaN where the
#: result has no such quantity) and the test error's band.
COLUMNS = ("x", "test", "test_low", "test_high", "baseline", "sign", "rank",
           "relative_error", "outlier_precision", "outlier_recall", "feature_precision",
           "feature_recall", "kept_share")

#: The markers: name -> (colour, dash, what the caption calls it).
MARKERS = {"slider": ("#d95f02", "solid", "the slider"),
           "cv": ("#444444", "dashed", "cross-validation's choice"),
           "truth": ("#2ca02c", "dotted", "closest to the truth")}

#: The figures' curves: figure -> [(column, legend, colour, dash)].
_CURVES = {
    "error": [("test", "test error", "#1f77b4", "solid"),
              ("baseline", "single-task baseline", "#7f7f7f", "dashed")],
    "agreement": [("sign", "sign agreement", "#1f77b4", "solid"),
                  ("rank", "rank correlation", "#9467bd", "solid"),
                  ("relative_error", "relative error", "#8c564b", "dashed")],
    "structure": [("outlier_precision", "outliers: precision", "#d62728", "solid"),
                  ("outlier_recall", "outliers: recall", "#d62728", "dashed"),
                  ("feature_precision", "features: precision", "#17becf", "solid"),
                  ("feature_recall", "features: recall", "#17becf", "dashed"),
                  ("kept_share", "share of features kept", "#7f7f7f", "dotted")],
}

#: The quantities of :class:`~explorer.compare.sweep.SweepResult` behind each column (the
#: agreement's ``{key}`` is the learned matrix judged).
_QUANTITIES = {"test": "test_error", "baseline": "baseline_error",
               "sign": "agreement:{key}:sign", "rank": "agreement:{key}:rank",
               "relative_error": "agreement:{key}:relative_error",
               "outlier_precision": "outliers:precision", "outlier_recall": "outliers:recall",
               "feature_precision": "features:precision", "feature_recall": "features:recall",
               "kept_share": "features:kept"}


def sweep_table(result, x: Sequence[float], *, n_features: int) -> dict[str, np.ndarray]:
    """The columns of :attr:`SweepCurves.source` for ``result``.

    Parameters
    ----------
    result : SweepResult
    x : sequence of float, shape (len(result.values),)
        Where each of ``result.values`` is drawn (the page's value behind it).
    n_features : int
        The data's features: the features kept are drawn as a share of them.

    Returns
    -------
    dict
        :data:`COLUMNS` -> float array, shape (len(x),); NaN where the result has no
        such quantity (no truth, or a model without that structure).
    """
    n = len(result.values)
    if len(x) != n:
        raise ValueError(f"x must give a position for each of the {n} values; got {len(x)}.")
    recorded = set(result.quantities)
    key = (result.truth_quantity() or "::").split(":")[1]
    table = {"x": np.asarray(x, dtype=float)}
    for column, quantity in _QUANTITIES.items():
        quantity = quantity.format(key=key)
        if quantity in recorded:
            curve = result.curve(quantity)
            table[column] = curve["mean"].to_numpy(dtype=float)
            if column == "test":
                std = curve["std"].to_numpy(dtype=float)
                table["test_low"], table["test_high"] = table["test"] - std, table["test"] + std
        else:
            table[column] = np.full(n, np.nan)
    table.setdefault("test_low", np.full(n, np.nan))
    table.setdefault("test_high", np.full(n, np.nan))
    table["kept_share"] = table["kept_share"] / max(int(n_features), 1)
    return {column: table[column] for column in COLUMNS}


class SweepCurves:
    """Three figures of a sweep over one source (see the module docstring).

    Parameters
    ----------
    log_x : bool
        A log x axis (the slider is log-spaced).
    width, height : int
        Each figure's size (px).

    Attributes
    ----------
    source : ColumnDataSource
        :data:`COLUMNS`; its ``selected.indices`` is the point clicked (:meth:`on_tap`).
    error, agreement, structure : bokeh figure
    spans : dict
        figure name -> {marker name -> Span}.
    """

    def __init__(self, *, log_x: bool, width: int = 400, height: int = 320):
        self.log_x = bool(log_x)
        self.source = ColumnDataSource({column: [] for column in COLUMNS})
        self.renderers: dict[str, object] = {}    # column -> its line
        self.items: dict[str, LegendItem] = {}    # column -> its legend item
        self.spans: dict[str, dict[str, Span]] = {}
        made = {name: self._figure(name, curves, width, height)
                for name, curves in _CURVES.items()}
        self.error, self.agreement, self.structure = (made[n] for n in _CURVES)
        # every share is within [0, 1]: a fixed range (relative errors may pass 1)
        self.structure.y_range = Range1d(-0.03, 1.05)

    def _figure(self, name: str, curves, width: int, height: int):
        fig = figure(width=width, height=height, tools="", toolbar_location=None,
                     x_axis_type="log" if self.log_x else "linear", sizing_mode="fixed")
        if name == "error":   # the spread over the trials
            fig.varea("x", "test_low", "test_high", source=self.source, fill_color="#1f77b4",
                      fill_alpha=0.15)
        points, items = [], []
        for column, label, color, dash in curves:
            line = fig.line("x", column, source=self.source, line_color=color,
                            line_dash=dash, line_width=2)
            dots = fig.scatter("x", column, source=self.source, size=11, fill_color=color,
                               line_color="white", selection_fill_color=color,
                               nonselection_fill_alpha=1.0, nonselection_line_alpha=1.0)
            points.append(dots)
            self.renderers[column] = line
            item = self.items[column] = LegendItem(label=label, renderers=[line, dots])
            items.append(item)
        fig.add_layout(Legend(items=items, orientation="horizontal", ncols=2,
                              label_text_font_size=TICK_FONT, spacing=2, padding=4,
                              margin=4), "below")
        fig.add_tools(TapTool(renderers=points),
                      HoverTool(renderers=points, tooltips=[
                          ("value", "@x{%0.4g}"),
                          *[(label, f"@{{{column}}}{{0.000}}") for column, label, *_ in curves]],
                          formatters={"@x": "printf"}))
        self.spans[name] = {}
        for marker, (color, dash, _) in MARKERS.items():
            span = Span(location=None, dimension="height", line_color=color, line_dash=dash,
                        line_width=2)
            fig.add_layout(span)
            self.spans[name][marker] = span
        style_figure(fig)
        return fig

    @property
    def figures(self) -> list:
        """The three figures (whether or not they have something to draw)."""
        return [self.error, self.agreement, self.structure]

    def has(self, figure_name: str) -> bool:
        """True when the data shown give ``figure_name`` ("error", "agreement",
        "structure") a curve."""
        return any(self.items[column].visible for column, *_ in _CURVES[figure_name])

    def show(self, table: dict, *, x_label: str, agreement_of: str = "") -> None:
        """Draw a sweep's :func:`sweep_table` (``x_label``: the swept setting's name;
        ``agreement_of``: the learned matrix judged against the truth, for the title)."""
        for column, item in self.items.items():
            shown = bool(np.isfinite(table[column]).any())
            item.visible = self.renderers[column].visible = shown
        self.source.selected.indices = []
        self.source.data = {column: np.asarray(table[column], dtype=float)
                            for column in COLUMNS}
        self.error.title.text = "Test error (band: ±1 sd over the trials)"
        self.agreement.title.text = (f"Learned {agreement_of} against the truth"
                                     if agreement_of else "Agreement with the truth")
        self.structure.title.text = "Structure found"
        for fig in self.figures:
            fig.xaxis.axis_label = x_label
        self.error.yaxis.axis_label = "test error"
        self.agreement.yaxis.axis_label = "agreement"
        self.structure.yaxis.axis_label = "share"

    def set_marker(self, marker: str, x: float | None) -> None:
        """Put ``marker`` (a key of :data:`MARKERS`) at ``x`` on every figure (None: hide
        it)."""
        location = None if x is None or not np.isfinite(x) else float(x)
        for spans in self.spans.values():
            if spans[marker].location != location:
                spans[marker].location = location

    def marker(self, marker: str) -> float | None:
        """Where ``marker`` stands (None: hidden)."""
        return self.spans["error"][marker].location

    def on_tap(self, callback) -> None:
        """``callback(index)`` when a point is clicked: ``index`` into the values shown."""
        def tapped(attr, old, new) -> None:
            if new:
                callback(int(new[0]))

        self.source.selected.on_change("indices", tapped)
