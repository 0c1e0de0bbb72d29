"""Plain-Bokeh live views with in-place updates (docs/DESIGN.md, "Live views").

Each view owns one ``ColumnDataSource``; ``update(...)`` replaces the source's columns in
place (same lengths, so Bokeh sends one small patch) and never rebuilds the figure, so a
periodic callback can call it ~10 times a second.

* :class:`MatrixHeatmap` -- a signed matrix on a fixed diverging map centred on 0; exact
  zeros are drawn in neutral grey (as in Figure 3 of the rMTFL paper) so
  "zero" is never confused with "small".
* :class:`CurveView` -- a streaming curve (``source.stream`` with rollover).
* :class:`BarView` -- per-task bars, one colour per bar, highlight and optional threshold.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    CustomJSHover,
    Div,
    HoverTool,
    LinearColorMapper,
    LogTicker,
    Span,
)
from bokeh.plotting import figure

from .style import (
    DIVERGING,
    MAX_CATEGORY_LABELS,
    TICK_FONT,
    ZERO_COLOR,
    category_ticks,
    label_every,
    label_orientation,
    labels_fit,
    set_columns,
    style_figure,
)

__all__ = ["append_rows", "MatrixHeatmap", "pool_max_abs", "CurveView", "BarView", "LiveView",
           "ObjectiveView", "EstimateTruthView", "agreement_html", "cell_text",
           "SnapshotMatrixView",
           "TruthMatrixView", "ZERO_COLOR", "DIVERGING", "escape"]

#: Screen pixels a heatmap cell gets at least: a larger matrix is pooled to fit (a frame
#: carries what is displayed, not the 100 x 500 values of a matrix drawn 350 px wide).
MIN_CELL_PX = 2

#: A matrix with at most this many rows and columns writes its values in its cells ("how
#: close is it?" is read, not guessed from a colour).
MAX_VALUE_CELLS = 12

#: Narrowest cell (px) that holds a value at the smallest projector-readable font (12 px).
MIN_VALUE_CELL_PX = 17


def cell_text(values: np.ndarray, cell_px: float) -> list[str]:
    """The values as cell labels that fit ``cell_px`` at a 12-13 px font: two decimals in
    wide cells, one in narrower ones, and without the leading zero in the narrowest; "?"
    for a value nobody knows (NaN: a pair no student guessed).

    >>> cell_text(np.array([0.934, -0.5, 0.0, 1.0, -0.001, np.nan]), 50)
    ['0.93', '-0.50', '0', '1.00', '0', '?']
    >>> cell_text(np.array([0.934, -0.5]), 30), cell_text(np.array([0.934, -0.5]), 20)
    (['0.9', '-0.5'], ['.9', '-.5'])
    """
    decimals = 2 if cell_px >= 44 else 1
    texts = []
    for value in np.asarray(values, dtype=float).ravel():
        if np.isnan(value):
            texts.append("?")
            continue
        text = f"{value:.{decimals}f}"
        if float(text) == 0.0:   # no "-0.00"
            texts.append("0")
            continue
        if cell_px < 28:
            text = text.replace("0.", ".", 1)
        texts.append(text)
    return texts


def pool_max_abs(matrix: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """``matrix`` reduced by blocks of ``rows`` x ``cols`` cells, each block shown by its value
    of largest magnitude (sign kept): a block is exactly zero only when all of it is, so the
    zero pattern (shared features, outlier tasks) survives the reduction.

    >>> pool_max_abs(np.array([[0.0, -3.0, 1.0], [2.0, 0.0, 0.0]]), 1, 2)
    array([[-3.,  1.],
           [ 2.,  0.]])
    """
    r, c = matrix.shape
    if rows == 1 and cols == 1:
        return matrix
    padded = np.zeros((-(-r // rows) * rows, -(-c // cols) * cols), dtype=matrix.dtype)
    padded[:r, :c] = matrix
    blocks = padded.reshape(padded.shape[0] // rows, rows, padded.shape[1] // cols, cols)
    blocks = blocks.transpose(0, 2, 1, 3).reshape(blocks.shape[0], blocks.shape[2], -1)
    pick = np.abs(blocks).argmax(axis=2)
    return np.take_along_axis(blocks, pick[..., None], axis=2)[..., 0]


class MatrixHeatmap:
    """A (rows, cols) matrix as one ``image`` on a fixed diverging colour map.

    One image glyph, not a rect per cell: measured in headless Chromium, a 10 x 20 heatmap of
    hatched rects blocked the browser ~190 ms per update (1.7 frames/s on the rMTFL page),
    an image redraws in a few ms. Exact zeros are sent as NaN, which the colour mapper paints
    neutral grey, so "zero" is never confused with "small" (the near-zero colour of the
    diverging map is white), as in Figure 3 of the rMTFL paper. The image travels as float32.

    Parameters
    ----------
    row_names, col_names : sequence of str
        Axis labels (task or feature names); fix the shape (r, c) of every update.
    limit : float > 0
        Symmetric colour limits ``[-limit, limit]``; fixed across updates (a live view
        whose colours rescale every frame is unreadable).
    title : str
    x_label, y_label : str
        Axis titles. With more than ``style.MAX_CATEGORY_LABELS`` columns (rows) the tick labels are
        hidden (they would overlap); hover still names every cell.

    Examples
    --------
    >>> view = MatrixHeatmap(["T0", "T1"], ["T0", "T1"], limit=1.0)
    >>> view.update(np.array([[1.0, 0.0], [-0.5, 1.0]]))
    >>> view.is_zero
    array([[False,  True],
           [False, False]])
    """

    def __init__(self, row_names: Sequence[str], col_names: Sequence[str], *, limit: float = 1.0,
                 title: str = "", width: int = 420, height: int = 380, x_label: str = "",
                 y_label: str = "", show_values: bool = True, color_bar: bool = True):
        self.row_names = [str(n) for n in row_names]
        self.col_names = [str(n) for n in col_names]
        #: most row names drawn (past it the rows have none; hover names each)
        self.max_row_names = MAX_CATEGORY_LABELS
        if not self.row_names or not self.col_names:
            raise ValueError("MatrixHeatmap: row_names and col_names must be non-empty; "
                             f"got {len(self.row_names)} and {len(self.col_names)} names.")
        r, c = len(self.row_names), len(self.col_names)
        self.color_mapper = LinearColorMapper(palette=list(DIVERGING), low=-1.0, high=1.0,
                                              nan_color=ZERO_COLOR)
        self.set_limit(limit)
        self._values = np.zeros((r, c))
        # cells of the drawn image per screen pixel budget (the plot's inner area, roughly)
        self._max_cells = (max(1, (height - 90) // MIN_CELL_PX),
                           max(1, (width - 130) // MIN_CELL_PX))
        self.pool = (1, 1)
        self.source = ColumnDataSource(self._columns(self._values))
        # Categorical axes place factor k at synthetic coordinate k + 0.5, so an image from
        # (0, 0) with size (c, r) fills the cells exactly. Image row 0 is drawn at the
        # bottom, the last row name sits there (y factors are the row names reversed).
        y_factors = list(reversed(self.row_names))
        self.figure = fig = figure(
            x_range=self.col_names, y_range=y_factors, title=title,
            width=width, height=height, toolbar_location=None, tools="",
            sizing_mode="fixed")
        self._images = [
            fig.image(image="image", x=0, y=0, dw=c, dh=r, source=self.source,
                      color_mapper=self.color_mapper)]
        # thin white cell borders: equal neighbours stay readable (small matrices only)
        self._borders = ColumnDataSource({"xs": [], "ys": []})
        fig.multi_line("xs", "ys", source=self._borders, line_color="white", line_width=1)
        # the values in the cells of a small matrix: dark text on light cells, white on dark
        # ones, one text glyph of one colour each (a per-value colour column, resized with
        # the data in one held message, failed in BokehJS: "Offset is outside the bounds of
        # the DataView")
        self.show_values = show_values
        self._labels = {ink: ColumnDataSource({"x": [], "y": [], "text": []})
                        for ink in ("white", "#222222")}
        self._label_glyphs = [
            fig.text("x", "y", text="text", source=source, text_color=ink, text_align="center",
                     text_baseline="middle", text_font_size="12px")
            for ink, source in self._labels.items()]
        name_of = "return names[Math.floor(value)] ?? '';"
        self._row_hover = CustomJSHover(code=name_of, args={"names": y_factors})
        self._col_hover = CustomJSHover(code=name_of, args={"names": self.col_names})
        self._hover = HoverTool(renderers=[self._images[0]], tooltips=self._tooltips(),
                                formatters={"$y": self._row_hover, "$x": self._col_hover})
        fig.add_tools(self._hover)
        fig.xaxis.axis_label, fig.yaxis.axis_label = x_label, y_label
        fig.grid.grid_line_color = None
        fig.x_range.range_padding = fig.y_range.range_padding = 0
        # The colour bar makes the fixed limits readable (a cell's value needs no hover).
        self.color_bar = (ColorBar(color_mapper=self.color_mapper, width=10,
                                   major_label_text_font_size="10pt") if color_bar else None)
        if self.color_bar is not None:
            fig.add_layout(self.color_bar, "right")
        style_figure(fig)
        self._style_axes()

    def _tooltips(self) -> list:
        tips = [("row", "$y{row}"), ("column", "$x{col}"), ("value", "@image{0.000}")]
        if self.pool != (1, 1):
            tips.append(("cell", f"{self.pool[0]} x {self.pool[1]} entries: the largest |value|"))
        return tips

    def _style_axes(self) -> None:
        fig = self.figure
        r, c = self.shape
        pool = (-(-r // self._max_cells[0]), -(-c // self._max_cells[1]))
        if pool != self.pool:
            self.pool = pool
            if hasattr(self, "_hover"):
                self._hover.tooltips = self._tooltips()
        # names side by side when they fit the plot's frame (the figure less the row names
        # and the colour bar), slanted when they would overlap; as many as the frame holds
        # apart (27 features in a 220 px frame: every second one)
        frame_width = fig.frame_width or max(fig.width - 170, 80)
        frame_height = fig.frame_height or max(fig.height - 90, 60)
        x_fits = labels_fit(frame_width)
        names = getattr(self, "col_names", [""] * c)
        fig.xaxis.major_label_orientation = label_orientation(
            names[::label_every(c, x_fits)], frame_width)
        category_ticks(fig.xaxis, c, x_fits)
        category_ticks(fig.yaxis, r, min(self.max_row_names, labels_fit(frame_height)))
        small = r <= MAX_CATEGORY_LABELS and c <= MAX_CATEGORY_LABELS
        self._borders.data = {
            "xs": ([[k, k] for k in range(1, c)] + [[0, c] for _ in range(1, r)]) if small else [],
            "ys": ([[0, r] for _ in range(1, c)] + [[k, k] for k in range(1, r)]) if small else []}

    def set_names(self, row_names: Sequence[str], col_names: Sequence[str]) -> None:
        """Re-target the heatmap to other rows/columns (a new data set), patching the existing
        figure in place: axis factors, image extent, hover names, borders; the values are
        cleared to zero."""
        self.row_names = [str(n) for n in row_names]
        self.col_names = [str(n) for n in col_names]
        if not self.row_names or not self.col_names:
            raise ValueError("MatrixHeatmap.set_names: names must be non-empty; got "
                             f"{len(self.row_names)} and {len(self.col_names)} names.")
        r, c = self.shape
        y_factors = list(reversed(self.row_names))
        self.figure.x_range.factors = self.col_names
        self.figure.y_range.factors = y_factors
        for image in self._images:
            image.glyph.dw, image.glyph.dh = c, r
        self._row_hover.args = {"names": y_factors}
        self._col_hover.args = {"names": self.col_names}
        self._style_axes()
        self.clear()

    def clear(self) -> None:
        """Show zeros (grey) of the current shape, with no values in the cells."""
        self._values = np.zeros(self.shape)
        self.source.data = self._columns(self._values)
        self._set_labels(self._value_columns(None))

    @property
    def cell_px(self) -> float:
        """Width of a cell on screen, roughly (the plot's frame less the names and the
        colour bar)."""
        frame = self.figure.frame_width or max(self.figure.width - 150, 40)
        return frame / len(self.col_names)

    def _value_columns(self, matrix: np.ndarray | None) -> dict:
        """Per ink, the text glyph columns writing ``matrix``'s values in its cells (none
        for None, a matrix too large or cells too narrow to hold a number)."""
        empty = {ink: {"x": [], "y": [], "text": []} for ink in self._labels}
        cell = self.cell_px
        if (matrix is None or not self.show_values or max(matrix.shape) > MAX_VALUE_CELLS
                or cell < MIN_VALUE_CELL_PX):
            return empty
        r, c = matrix.shape
        rows, cols = np.divmod(np.arange(r * c), c)
        x, y, text = cols + 0.5, r - 1 - rows + 0.5, np.array(cell_text(matrix, cell))
        limit = float(self.color_mapper.high)
        dark = np.abs(matrix.ravel()) > 0.6 * limit   # the deep ends of the diverging map
        return {ink: {"x": x[on].tolist(), "y": y[on].tolist(), "text": text[on].tolist()}
                for ink, on in (("white", dark), ("#222222", ~dark))}

    def _set_labels(self, columns: dict) -> None:
        size = "13px" if self.cell_px >= 44 else "12px"
        for glyph in self._label_glyphs:
            if glyph.glyph.text_font_size != size:
                glyph.glyph.text_font_size = size
        for ink, source in self._labels.items():
            if source.data != columns[ink]:
                source.data = columns[ink]

    def _columns(self, matrix):
        # Pooled to the display's resolution, float32 (half the bytes of a frame; a colour
        # needs no more), exact zeros as NaN, which the colour mapper paints grey: one image,
        # no second mask image. The image keeps its extent, so the axes stay the names.
        matrix = pool_max_abs(np.asarray(matrix), *self.pool)
        flipped = np.array(matrix[::-1], dtype=np.float32)
        flipped[flipped == 0.0] = np.nan
        return {"image": [flipped]}

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.row_names), len(self.col_names)

    @property
    def values(self) -> np.ndarray:
        """The matrix shown, shape (rows, cols), rows in the order of ``row_names``."""
        return self._values.copy()

    @property
    def is_zero(self) -> np.ndarray:
        """Cells drawn as exact zeros (grey), shape (rows, cols)."""
        return self._values == 0.0

    def set_limit(self, limit: float) -> None:
        """Set the symmetric colour limits to ``[-limit, limit]``."""
        limit = float(limit)
        if not np.isfinite(limit) or limit <= 0:
            raise ValueError(f"MatrixHeatmap: limit must be a finite float > 0; got {limit!r}.")
        self.color_mapper.low, self.color_mapper.high = -limit, limit

    def update(self, matrix) -> None:
        """Show ``matrix`` (shape (rows, cols)); replaces the source's two images in place."""
        matrix = np.asarray(matrix, dtype=float)
        if matrix.shape != self.shape:
            raise ValueError(f"MatrixHeatmap.update: matrix must have shape {self.shape}; "
                             f"got {matrix.shape}.")
        self._values = matrix.copy()
        set_columns(self.source, **self._columns(matrix))
        self._set_labels(self._value_columns(matrix))


class CurveView:
    """A streaming line (e.g. objective vs step), ``rollover`` points kept.

    >>> view = CurveView(title="objective")
    >>> view.update(1, 0.5); view.update(2, 0.25)
    >>> view.source.data["y"]
    [0.5, 0.25]
    """

    def __init__(self, *, title: str = "", x_label: str = "step", y_label: str = "",
                 rollover: int = 2000, y_axis_type: str = "linear", width: int = 420,
                 height: int = 300):
        self.rollover = int(rollover)
        self.source = ColumnDataSource({"x": [], "y": []})
        self.figure = fig = figure(title=title, width=width, height=height, tools="",
                                   toolbar_location=None, y_axis_type=y_axis_type,
                                   sizing_mode="fixed")
        fig.line("x", "y", source=self.source, line_width=2)
        if y_axis_type == "log":
            # ticks at 1, 2, 3, 5 x 10^k: an objective that moves within one decade (0.3 to
            # 0.5, say) still gets labelled ticks, not only the one power of ten in view
            fig.yaxis.ticker = LogTicker(mantissas=[1, 2, 3, 5], desired_num_ticks=6)
        fig.xaxis.axis_label, fig.yaxis.axis_label = x_label, y_label
        fig.add_tools(HoverTool(tooltips=[(x_label, "@x"), (y_label or "value", "@y{0.0000}")]))
        style_figure(fig)

    def update(self, x, y) -> None:
        """Append one point (or equal-length sequences of points)."""
        xs = list(np.atleast_1d(x).tolist())
        ys = list(np.atleast_1d(y).astype(float).tolist())
        append_rows(self.source, {"x": xs, "y": ys}, rollover=self.rollover)

    def reset(self, xs=(), ys=()) -> None:
        """Replace the whole curve (e.g. when scrubbing back)."""
        self.source.data = {"x": list(xs), "y": [float(v) for v in ys]}


class BarView:
    """Grouped per-task bars (one group per task, one bar per series).

    Parameters
    ----------
    categories : sequence of str
        Task names (x axis).
    series : sequence of str
        Series names, e.g. ("shared", "separate"); one colour each.
    threshold : float, optional
        Draws a dashed line at this value.
    horizontal : bool
        Tasks down the y axis and bars to the right, the series' legend above: the names
        stay level and readable in a narrow column.

    >>> view = BarView(["T0", "T1"], ["shared", "separate"])
    >>> view.update({"shared": [0.1, 0.2], "separate": [0.3, 0.4]}, highlight=[1])
    >>> view.source.data["alpha"]
    [0.45, 0.45, 1.0, 1.0]
    """

    COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")

    def __init__(self, categories: Sequence[str], series: Sequence[str] = ("value",), *,
                 title: str = "", y_label: str = "", threshold: float | None = None,
                 y_range: tuple[float, float] | None = None, width: int = 420, height: int = 300,
                 horizontal: bool = False):
        from bokeh.transform import factor_cmap

        self.categories = [str(c) for c in categories]
        self.series = [str(s) for s in series]
        self.horizontal = horizontal
        factors = self._factors()
        n = len(factors)
        self.source = ColumnDataSource({"x": factors, "value": [0.0] * n, "alpha": [1.0] * n,
                                        "series": [s for _, s in factors]})
        ranges = {"y_range" if horizontal else "x_range": _factor_range(self._axis_factors())}
        if y_range is not None:
            ranges["x_range" if horizontal else "y_range"] = y_range
        self.figure = fig = figure(title=title, width=width, height=height, tools="",
                                   toolbar_location=None, sizing_mode="fixed", **ranges)
        colors = factor_cmap("x", palette=list(self.COLORS[:len(self.series)]),
                             factors=self.series, start=1, end=2)
        bars = {"fill_alpha": "alpha", "line_color": None, "legend_field": "series",
                "fill_color": colors, "source": self.source}
        # a dash at each bar's end: a bar of length 0 (a task learned perfectly) still shows
        dash = {"size": 14, "line_width": 3, "line_color": colors, "line_alpha": "alpha",
                "source": self.source}
        if horizontal:
            fig.hbar(y="x", right="value", height=0.85, **bars)
            fig.scatter(x="value", y="x", marker="dash", angle=np.pi / 2, **dash)
        else:
            fig.vbar(x="x", top="value", width=0.85, **bars)
            fig.scatter(x="x", y="value", marker="dash", **dash)
        fig.add_tools(HoverTool(tooltips=[("task", "@x"), ("value", "@value{0.000}")]))
        self._orient_labels()
        legend = fig.legend[0]   # beside (or above) the bars, never over them
        fig.center = [item for item in fig.center if item is not legend]
        fig.add_layout(legend, "above" if horizontal else "right")
        # In one line when it fits the width (~7.5 px a character at 10 pt, 28 px an item's
        # glyph and gaps): a legend a line per series pushed 40 tasks' bars below the fold.
        one_line = 20 + sum(28 + 7.5 * len(name) for name in self.series)
        if horizontal and one_line <= width:
            legend.orientation = "horizontal"
        legend.label_text_font_size, legend.spacing = "10pt", 1
        values_axis = fig.xaxis if horizontal else fig.yaxis
        values_axis.axis_label = y_label
        if horizontal:   # a narrow axis: ~7 numbers at the tick font ran into each other
            values_axis.ticker.desired_num_ticks = 4
        self.threshold = Span(location=0.0 if threshold is None else float(threshold),
                              dimension="height" if horizontal else "width",
                              line_dash="dashed", line_color="black",
                              visible=threshold is not None)
        fig.add_layout(self.threshold)
        style_figure(fig)
        names = fig.yaxis if horizontal else fig.xaxis
        if len(self.series) > 1:  # the legend names the series; per-bar labels only collide
            names.major_label_text_font_size = "0pt"
            names.group_text_font_size = TICK_FONT

    def _factors(self) -> list[tuple[str, str]]:
        """(task, series) factors, task by task."""
        return [(c, s) for c in self.categories for s in self.series]

    def _axis_factors(self) -> list[tuple[str, str]]:
        """The factors along the axis: down a horizontal chart (whose axis runs upwards)
        reversed, so the first task is on top."""
        return self._factors()[::-1] if self.horizontal else self._factors()

    def _orient_labels(self) -> None:
        """Task names side by side when they fit, slanted when they would overlap (level
        down a horizontal chart)."""
        axis = self.figure.yaxis if self.horizontal else self.figure.xaxis
        angle = 0.0 if self.horizontal else label_orientation(self.categories,
                                                               self.figure.width)
        axis.major_label_orientation = angle
        axis.group_label_orientation = angle
        category_ticks(axis, len(self.categories), self.names_fit)

    @property
    def names_fit(self) -> int:
        """How many task names fit along the axis (level, 14 px each down a horizontal
        chart); past it the axis has no names and hover names each bar."""
        if self.horizontal:
            return max(1, (self.figure.height - 110) // 14)
        return MAX_CATEGORY_LABELS

    def set_categories(self, categories: Sequence[str]) -> None:
        """Re-target the bars to other tasks, patching the figure in place; values -> 0."""
        self.categories = [str(c) for c in categories]
        factors = self._factors()
        n = len(factors)
        (self.figure.y_range if self.horizontal else self.figure.x_range).factors = (
            self._axis_factors())
        self._orient_labels()
        self.source.data = {"x": factors, "value": [0.0] * n, "alpha": [1.0] * n,
                            "series": [s for _, s in factors]}

    def update(self, values: dict, highlight: Sequence[int] = ()) -> None:
        """Set each series' per-task values; tasks in ``highlight`` are opaque, others faded.

        ``values`` maps a series name to a length-(n_tasks,) sequence; missing series -> 0.
        """
        m = len(self.categories)
        cols = []
        for name in values:
            if name not in self.series:
                raise ValueError(f"BarView.update: unknown series {name!r}; expected one of "
                                 f"{self.series}.")
        for s in self.series:
            v = np.asarray(values.get(s, np.zeros(m)), dtype=float)
            if v.shape != (m,):
                raise ValueError(f"BarView.update: values[{s!r}] must have shape ({m},); "
                                 f"got {v.shape}.")
            cols.append(v)
        value = [float(cols[k][t]) for t in range(m) for k in range(len(self.series))]
        hl = set(int(h) for h in highlight)
        alpha = [(1.0 if (not hl or t in hl) else 0.45) for t in range(m)
                 for _ in self.series]
        set_columns(self.source, value=value, alpha=alpha)

    def set_threshold(self, value: float | None) -> None:
        """Show a dashed line at ``value`` (hide it with None)."""
        self.threshold.visible = value is not None
        if value is not None:
            self.threshold.location = float(value)


def append_rows(source: ColumnDataSource, rows: dict, rollover: int | None = None) -> None:
    """Append ``rows`` (column -> list) to ``source``: streamed, or, into an empty source,
    set whole.

    An emptied source (``source.data = ...``, a reset) streamed into in the same message
    lost its reset in the browser: Bokeh's held events combine the reset away, so the
    points were appended to the old ones (a curve drawn back from its last step to its first
    after the truth was revealed). Setting the data whole combines with the reset safely.
    """
    if not any(len(column) for column in source.data.values()):
        source.data = {key: list(values) for key, values in rows.items()}
    else:
        source.stream(rows, rollover=rollover)


def _factor_range(factors):
    from bokeh.models import FactorRange

    return FactorRange(*factors)


def escape(text) -> str:
    """Text from a user (task and feature names from an upload, values from a link) made
    safe for Markdown/HTML panes."""
    import html

    return html.escape(str(text), quote=False)


# ---------------------------------------------------------------------- the view protocol
class LiveView:
    """The protocol every live view of a model page follows.

    A view is created once per page and re-targeted with :meth:`set_data` when the data
    change (names, sizes, truth and colour limits are patched into the existing figures);
    :meth:`update` shows a snapshot (the newest while running, any recorded one when the
    user scrubs), :meth:`clear` empties it. ``figures`` lists its Bokeh figures; it may
    grow (a view makes a figure the first time the data or a snapshot needs it, so a page
    holds the fewest models that draw it; the kit shows new figures after ``set_data`` and
    after each frame, never rebuilding the others). A view may offer :meth:`on_tap` (a
    click on a point).
    """

    figures: list = []
    #: An accumulating view (a curve) is handed every recorded snapshot in order, not only
    #: the newest, and is cleared and replayed when the user scrubs back.
    accumulates = False

    def set_data(self, dataset) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement set_data")

    def update(self, snapshot) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement update")

    def extend(self, snapshots) -> None:
        """Show several snapshots in order (an accumulating view gets every recorded step
        since the last frame); views that stream should send them as one patch."""
        for snapshot in snapshots:
            self.update(snapshot)

    def clear(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement clear")

    def on_tap(self, callback) -> None:
        raise TypeError(f"{type(self).__name__} has nothing to tap.")

    def export_blocks(self) -> list:
        """What a page's "Figures (HTML)" file holds of this view, in order: its figures
        (Bokeh models), then its caption's text (trusted HTML) when it has one (the
        agreement with the truth, say)."""
        caption = getattr(self, "caption", None)
        text = getattr(caption, "text", "")
        return [*self.figures, *([f'<p class="caption">{text}</p>'] if text else [])]

    def axes_labelled_beside(self) -> list:
        """Axes hidden on the page because the figure beside carries their labels (the same
        names, level with them); in a file of figures one under another they are shown."""
        return []


def _names(dataset, axis: str) -> list[str]:
    return [str(n) for n in (dataset.task_names if axis == "tasks" else dataset.feature_names)]


class SnapshotMatrixView(LiveView):
    """One named matrix of the snapshots (``snapshot.matrices[key]``), tasks as rows.

    Parameters
    ----------
    key : str
        A ``task_relationships()`` key of the model (e.g. "similarity", "P").
    title : str
    columns : {"tasks", "features"}
        What the columns are.
    layout : {"tasks x columns", "columns x tasks"}
        How the model stores the matrix (coefficients are (d, m): "columns x tasks");
        the view always shows tasks as rows.
    limit : callable (dataset) -> float, optional
        The fixed colour limit for a data set (default 1).
    """

    def __init__(self, key: str, title: str, *, columns: str = "tasks",
                 layout: str = "tasks x columns", limit=None, **figure):
        self.key, self.columns, self.layout = key, columns, layout
        self.limit = limit
        figure = {"width": 440, "height": 380, **figure}
        self.heatmap = MatrixHeatmap(["T0"], ["T0"], title=title, **figure)
        self.figures = [self.heatmap.figure]

    def set_data(self, dataset) -> None:
        self.heatmap.set_names(_names(dataset, "tasks"), _names(dataset, self.columns))
        self.heatmap.set_limit(self.limit(dataset) if self.limit else 1.0)

    def update(self, snapshot) -> None:
        matrix = snapshot.matrices.get(self.key)
        if matrix is None:
            return
        matrix = np.asarray(matrix)
        self.heatmap.update(matrix.T if self.layout == "columns x tasks" else matrix)

    def clear(self) -> None:
        self.heatmap.clear()


class TruthMatrixView(SnapshotMatrixView):
    """The truth beside an estimate, on the estimate's colour scale: ``dataset.truth[key]``
    (static; snapshots do not change it). A data set without that truth says so."""

    def __init__(self, key: str, title: str, **kwargs):
        super().__init__(key, title, **kwargs)
        self.title = title
        #: the figure it may show (``figures``: empty while the data have no such truth)
        self.all_figures = list(self.figures)

    def set_data(self, dataset) -> None:
        super().set_data(dataset)
        truth = (getattr(dataset, "truth", None) or {}).get(self.key)
        # Real data, or the truth hidden for a class: no figure at all (an empty grey box
        # took half of the first screen of Outliers on School); the page shows the others
        # in its place, and the figure again with data that have the truth.
        self.figures = [] if truth is None else [self.heatmap.figure]
        if truth is None:
            self.heatmap.clear()
            self.heatmap.figure.title.text = f"{self.title} (hidden, or unknown here)"
            return
        self.heatmap.figure.title.text = self.title
        truth = np.asarray(truth, dtype=float)
        self.heatmap.update(truth.T if self.layout == "columns x tasks" else truth)

    def update(self, snapshot) -> None:
        pass

    def clear(self) -> None:
        pass


def agreement_html(agreement: dict, *, what: str = "pairs") -> str:
    """One line saying how close an estimate is to its truth (from
    :func:`explorer.compare.agreement.relationship_agreement`), for a caption beside the
    pair; ``what`` names what was compared ("pairs" of tasks, "coefficients").

    >>> agreement_html({"sign_agreement": 0.75, "rank_correlation": 0.9,
    ...                 "relative_error": 0.25, "n_pairs": 12, "reason": ""})  # doctest: +ELLIPSIS
    '<b>Agreement with the truth</b>: sign right on <b>75%</b> of the related/negated pairs...'
    """
    signed = ("related/negated pairs" if what == "pairs" else "truly non-zero coefficients")
    parts = []
    if np.isfinite(agreement["sign_agreement"]):
        parts.append(f"sign right on <b>{agreement['sign_agreement']:.0%}</b> of the {signed}")
    if np.isfinite(agreement["rank_correlation"]):
        parts.append(f"rank correlation <b>{agreement['rank_correlation']:.2f}</b> "
                     "(1 = same order)")
    if np.isfinite(agreement["relative_error"]):
        parts.append(f"relative error <b>{agreement['relative_error']:.2f}</b> "
                     "(0 = same up to scale, 1.4 = unrelated)")
    if not parts:
        return f"<b>Agreement with the truth</b>: none to show ({escape(agreement['reason'])})."
    return "<b>Agreement with the truth</b>: " + " · ".join(parts) + "."


class EstimateTruthView(LiveView):
    """A learned matrix beside its truth, the story of a model page: same size, same colour
    scale, same task order, values in the cells of small matrices, and a caption saying how
    close they are (:func:`explorer.compare.agreement.relationship_agreement`, updated
    with every frame).

    Parameters
    ----------
    key, title : str
        The snapshot matrix (``snapshot.matrices[key]``) and its figure's title.
    truth_key, truth_title : str
        The truth (``dataset.truth[truth_key]``) and its figure's title (it begins with
        "True", so its accessible name says it is the truth).
    columns, layout, limit
        As :class:`SnapshotMatrixView` (both figures).
    entries : {"off-diagonal", "all"}
        Task pairs of task x task matrices, or every entry (coefficients).
    frame : int
        Side of each figure's plotting frame in pixels (the frames are equal whatever the
        names and the colour bar take).
    """

    def __init__(self, key: str, title: str, truth_key: str, truth_title: str, *,
                 columns: str = "tasks", layout: str = "tasks x columns", limit=None,
                 entries: str = "off-diagonal", frame: int = 220):
        size = {"columns": columns, "layout": layout, "limit": limit}
        self.estimate = SnapshotMatrixView(key, title, **size)
        self.estimate_title = title
        # the pair's colour bar is the truth's; the estimate shows its own when alone
        self._estimate_bar = self.estimate.heatmap.color_bar
        self.estimate.heatmap.figure.right = []
        self.truth = TruthMatrixView(truth_key, truth_title, **size)
        self.parts = (self.estimate, self.truth)
        self.entries = entries
        self.frame = int(frame)
        for fig in (self.estimate.heatmap.figure, self.truth.heatmap.figure):
            # equal square frames (a tasks x features W too: rows stay readable, columns
            # become stripes); the figure takes what its names and bar need
            fig.width = fig.height = None
            fig.frame_width = fig.frame_height = self.frame
        # the truth's rows are the estimate's, in the same order, level with them: its task
        # names would only take the width the pair needs
        self.truth.heatmap.figure.yaxis.visible = False
        self.figures = [self.estimate.heatmap.figure, self.truth.heatmap.figure]
        #: every figure the pair may show (``figures``: those it shows for the data now)
        self.all_figures = list(self.figures)
        self.caption = Div(text="", width=2 * self.frame + 200,
                           styles={"font-size": "15px", "line-height": "1.35"})
        self._comparison = None   # the data's truth, prepared for every frame's comparison

    def set_data(self, dataset) -> None:
        truth = (getattr(dataset, "truth", None) or {}).get(self.truth.key)
        # Without a truth (real data, or hidden for a class to guess) the estimate stands
        # alone at the width of the pair: no empty box beside it, and a wide matrix (139
        # schools) gets the room its columns need.
        alone = truth is None
        estimate = self.estimate.heatmap.figure
        estimate.frame_width = 2 * self.frame if alone else self.frame
        estimate.right = [self._estimate_bar] if alone else []
        estimate.title.text = self.estimate_title + (
            " (no truth to compare with here)" if alone else "")
        self.estimate.set_data(dataset)
        self.truth.set_data(dataset)
        from explorer.compare.agreement import TruthComparison

        self.figures = [estimate] + ([] if alone else [self.truth.heatmap.figure])
        self._comparison = (None if truth is None
                            else TruthComparison(truth, entries=self.entries))
        self.caption.text = ("" if truth is not None else
                             "<b>Agreement with the truth</b>: none, the truth is hidden or "
                             "unknown for these data: the estimate stands alone.")

    def update(self, snapshot) -> None:
        self.estimate.update(snapshot)
        matrix = snapshot.matrices.get(self.estimate.key)
        if matrix is None or self._comparison is None:
            return
        matrix = np.asarray(matrix, dtype=float)
        if matrix.shape != self._comparison.truth.shape or not np.all(np.isfinite(matrix)):
            return
        agreement = self._comparison.agreement(matrix)
        text = agreement_html(agreement,
                              what="pairs" if self.entries == "off-diagonal" else "coefficients")
        if text != self.caption.text:
            self.caption.text = text

    def axes_labelled_beside(self) -> list:
        return list(self.truth.heatmap.figure.yaxis)   # the estimate's row names

    def clear(self) -> None:
        self.estimate.clear()
        if self._comparison is not None:
            self.caption.text = ("<b>Agreement with the truth</b>: run the fit to see how close "
                                 "the estimate comes.")


class ObjectiveView(LiveView):
    """The objective against the step, streamed (an accumulating view)."""

    accumulates = True

    def __init__(self, title: str = "Objective", *, log: bool = False, **figure):
        self.curve = CurveView(title=title, y_label="objective",
                               y_axis_type="log" if log else "linear", **figure)
        self.figures = [self.curve.figure]

    def set_data(self, dataset) -> None:
        self.clear()

    def update(self, snapshot) -> None:
        self.extend([snapshot])

    def extend(self, snapshots) -> None:
        points = [(s.step, s.objective) for s in snapshots if s.objective is not None]
        if points:   # one stream message per frame, however many steps it covers
            self.curve.update([x for x, _ in points], [y for _, y in points])

    def clear(self) -> None:
        self.curve.reset()
