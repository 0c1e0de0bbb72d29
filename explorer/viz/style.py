"""The one style of every figure in the app: fonts readable on a projector, the colours of
tasks and labels, and the diverging map every signed matrix uses.

* Matrices: red (negative) -> white (0) -> blue (positive), fixed symmetric limits, exact
  zeros grey (:data:`ZERO_COLOR`), tasks as rows.
* Tasks: :func:`task_colors` (Dark2), distinct from class labels: :func:`label_colors`
  (Category10, Category20 past ten labels).
"""

from __future__ import annotations

from bokeh.palettes import Category10_10, Category20_20, Dark2_8, RdBu11

__all__ = ["AXIS_FONT", "DIVERGING", "TICK_FONT", "TITLE_FONT", "ZERO_COLOR", "label_colors",
           "fewer_glyph_models", "label_orientation", "set_columns", "style_figure", "task_colors"]

TITLE_FONT = "13pt"
AXIS_FONT = "12pt"
TICK_FONT = "11pt"

DIVERGING = tuple(reversed(RdBu11))
"""Red (negative) -> white (0) -> blue (positive), the convention of every matrix in the app."""

ZERO_COLOR = "#d9d9d9"
"""Fill of cells whose value is exactly 0 (neutral grey)."""


def task_colors(n_tasks: int) -> list[str]:
    """One colour per task (Dark2), distinct from the label colours (Category10)."""
    return [Dark2_8[t % len(Dark2_8)] for t in range(n_tasks)]


def label_colors(n_labels: int) -> list[str]:
    """One colour per class label (Category10; Category20 past ten labels)."""
    palette = Category10_10 if n_labels <= 10 else Category20_20
    return [palette[i % len(palette)] for i in range(n_labels)]


def style_figure(fig):
    """Fonts of the title, axis labels and ticks; no Bokeh logo; ranges that stay defined
    while the figure has no data (:func:`extent_while_empty`). Returns ``fig``."""
    fig.title.text_font_size = TITLE_FONT
    for axis in (fig.xaxis, fig.yaxis):
        axis.axis_label_text_font_size = AXIS_FONT
        axis.major_label_text_font_size = TICK_FONT
    fig.toolbar.logo = None
    extent_while_empty(fig)
    fewer_glyph_models(fig)
    return fig


def fewer_glyph_models(fig) -> None:
    """Let the browser derive each glyph's faded copies: a renderer's muted glyph always, its
    non-selected glyph when nothing can select (no selection tool). Bokeh's Python makes both
    copies for every glyph; each is a model that a server makes, sends and serialises for
    every session (two of a renderer's ~8), while ``"auto"`` makes BokehJS derive the same
    copy from the glyph (fill alpha 0.2). The app mutes nothing.

    >>> from bokeh.plotting import figure
    >>> fig = figure(tools="save")
    >>> renderer = fig.scatter([1], [2])
    >>> fewer_glyph_models(fig)
    >>> renderer.nonselection_glyph, renderer.muted_glyph
    ('auto', 'auto')
    """
    from bokeh.models import GlyphRenderer
    from bokeh.models.tools import SelectTool

    selectable = any(isinstance(tool, SelectTool) for tool in fig.tools)
    for renderer in fig.renderers:
        if isinstance(renderer, GlyphRenderer):
            renderer.muted_glyph = "auto"
            if not selectable:
                renderer.nonselection_glyph = "auto"


def extent_while_empty(fig) -> None:
    """Give ``fig``'s automatic ranges an extent (1 to 10 on both axes, valid on log axes
    too) while none of its glyphs has data; they follow the data again once some arrive.

    A ``DataRange1d`` over empty sources has no start or end: BokehJS then draws nothing
    and warns "could not set initial ranges" (or, on a log axis, "could not determine
    minimum data value") at every paint, and a live view is empty until its first frame.
    Here a transparent placeholder glyph is the data while the sources are empty: the
    ranges count visible glyphs only, and the placeholder is visible exactly then. A figure
    without automatic ranges, or without glyphs yet, is left as it is.
    """
    from bokeh.models import ColumnDataSource, DataRange1d, GlyphRenderer

    ranges = [r for r in (fig.x_range, fig.y_range) if isinstance(r, DataRange1d)]
    # the sources of the glyphs that draw (a legend's hidden swatch has data but no place)
    sources = {id(r.data_source): r.data_source for r in fig.renderers
               if isinstance(r, GlyphRenderer) and r.visible
               and isinstance(r.data_source, ColumnDataSource)}
    if not ranges or not sources:
        return
    placeholder = fig.scatter(x=[1.0, 10.0], y=[1.0, 10.0], size=0, alpha=0.0)
    for data_range in ranges:
        data_range.only_visible = True
        if data_range.renderers and data_range.renderers != "auto":
            data_range.renderers = [*data_range.renderers, placeholder]

    def follow(attr, old, new) -> None:
        empty = all(len(next(iter(s.data.values()), ())) == 0 for s in sources.values())
        if placeholder.visible != empty:
            placeholder.visible = empty

    for source in sources.values():
        source.on_change("data", follow)
    follow("data", None, None)
    # ... and in the browser, for every new data and every streamed point: a served app's
    # live frames reach the browser without Bokeh running the Python callbacks above (Panel
    # writes held data events to the socket itself), and the placeholder once kept a curve
    # at 0.28 on a 0-10 axis for a whole run.
    from bokeh.models import CustomJS

    in_browser = CustomJS(args={"sources": list(sources.values()), "placeholder": placeholder},
                          code="const empty = sources.every((s) => s.get_length() === 0);\n"
                               "if (placeholder.visible !== empty) placeholder.visible = empty;")
    for source in sources.values():
        source.js_on_change("data", in_browser)
        source.js_on_change("streaming", in_browser)


def label_orientation(names, width: int) -> float:
    """Angle (radians) for categorical tick labels: 0 when they fit side by side in
    ``width`` pixels at the tick font (~7.5 px a character), else 0.8 (slanted, never
    overlapping).

    >>> label_orientation(["T0", "T1"], 400), label_orientation(["T0 shared"] * 10, 400)
    (0.0, 0.8)
    """
    needed = sum(7.5 * len(str(name)) + 12 for name in names)
    return 0.0 if needed <= 0.85 * width else 0.8


#: Most category labels an axis shows; past it every k-th category is labelled (hover names
#: every bar or cell).
MAX_CATEGORY_LABELS = 40

#: Room a tick label needs along its axis (px): a slanted or horizontal line of 12 px text.
LABEL_PITCH_PX = 15


def labels_fit(length_px: float) -> int:
    """How many category labels an axis of ``length_px`` pixels holds apart (at least 2).

    >>> labels_fit(220), labels_fit(10)
    (14, 2)
    """
    return max(2, int(length_px // LABEL_PITCH_PX))


def label_every(n_categories: int, fits: int = MAX_CATEGORY_LABELS) -> int:
    """Label every k-th category so that at most ``fits`` labels show (1: every one).

    >>> label_every(27, 14), label_every(139, 40), label_every(7, 14)
    (2, 4, 1)
    """
    fits = max(1, min(fits, MAX_CATEGORY_LABELS))
    return max(1, -(-n_categories // fits))


def category_ticks(axis, n_categories: int, fits: int = MAX_CATEGORY_LABELS) -> None:
    """Label the categories of a categorical ``axis`` (a figure's ``xaxis`` or ``yaxis``):
    each one when at most ``fits`` (:data:`MAX_CATEGORY_LABELS`, or fewer when the axis is
    short) fit, else every k-th (:func:`label_every`; hover names each bar or cell).

    27 features in a 220 px frame drew 27 labels into one smear; 139 school names were not
    labelled at all. Every label drawn is measured by the browser whenever any layout of the
    page changes (two 100 x 500 heatmaps with all their labels: ~0.4 s a relayout): a thinned
    axis measures at most ``fits``. A ``CustomJSTicker`` picks them in the browser from the
    range's factors (the code is ours; nothing from the user goes in it).
    """
    from bokeh.models import CategoricalTicker, CustomJSTicker

    every = label_every(n_categories, fits)
    code = ("const factors = cb_data.range.factors;\n"
            f"return factors.filter((_, i) => i % {every} === 0);")
    for one in axis:
        if every == 1:
            if not isinstance(one.ticker, CategoricalTicker):
                one.ticker = CategoricalTicker()
        elif not isinstance(one.ticker, CustomJSTicker):
            one.ticker = CustomJSTicker(major_code=code)
        elif one.ticker.major_code != code:
            one.ticker.major_code = code


def set_columns(source, **columns) -> None:
    """Give ``source`` these columns, keeping its others: one whole new ``data``.

    Never ``source.data.update(...)``: that sends only the named columns, and when a held
    document (Panel's ``hold``, as every frame and data change of the app is sent) later
    replaces the source's whole ``data``, Bokeh folds the replacement into the earlier
    event and still sends only those columns. A data set with another number of tasks then
    reached the browser as columns of two lengths ("columns of inconsistent lengths",
    "Size mismatch", "Offset is outside the bounds of the DataView").

    >>> from bokeh.models import ColumnDataSource
    >>> source = ColumnDataSource({"x": [1, 2], "y": [0, 0]})
    >>> set_columns(source, y=[3, 4])
    >>> source.data["x"], source.data["y"]
    ([1, 2], [3, 4])
    """
    source.data = {**source.data, **columns}
