"""A student's guess of how the tasks relate, drawn as a grid a click edits (issue 41).

:class:`GuessGrid` is one plain Bokeh figure: a ``rect`` per task pair, coloured as the app's
matrices are (related blue, negated red, unrelated grey) and a symbol in each cell (``+``,
``−``, ``0``, ``?`` for don't know), with a ``TapTool``: a click on a pair cycles it through
related, negated, unrelated and don't know (:func:`cycled`), the pair's mirror with it; the
diagonal (a task and itself) is fixed. Made and changed on the event loop only.

>>> grid = GuessGrid(["T0", "T1", "T2"])
>>> grid.tap(0, 1); grid.tap(2, 1); grid.tap(2, 1)
>>> float(grid.relation[1, 0]), float(grid.relation[1, 2])
(1.0, -1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from bokeh.models import ColumnDataSource, CustomJS, FactorRange, HoverTool, TapTool
from bokeh.plotting import figure

from explorer.viz.style import DIVERGING, ZERO_COLOR, style_figure

__all__ = ["CYCLE", "SCORE_BINS", "GuessGrid", "ScoreBars", "blank", "cycled", "relation_words",
           "score_counts"]

#: Most tasks whose names the grid's axes show.
MAX_NAMED = 20

#: A pair's states in the order a click cycles them: don't know (NaN), related, negated,
#: unrelated, and back.
CYCLE = (np.nan, 1.0, -1.0, 0.0)

#: What a cell shows: (fill, ink, symbol, word) by state.
_LOOK = {1.0: (DIVERGING[-3], "white", "+", "related"),
         -1.0: (DIVERGING[2], "white", "−", "negated"),
         0.0: (ZERO_COLOR, "#222222", "0", "unrelated"),
         "nan": ("#ffffff", "#666666", "?", "don't know"),
         "diagonal": ("#f0f0f0", "#999999", "=", "the task itself")}


def cycled(value: float) -> float:
    """The state after ``value`` in :data:`CYCLE`.

    >>> cycled(np.nan), cycled(1.0), cycled(-1.0), cycled(0.0)
    (1.0, -1.0, 0.0, nan)
    """
    if np.isnan(value):
        return CYCLE[1]
    index = [k for k, state in enumerate(CYCLE) if state == value][0]
    return CYCLE[(index + 1) % len(CYCLE)]


def relation_words(value: float) -> str:
    """'related', 'negated', 'unrelated' or "don't know"."""
    return _LOOK["nan" if np.isnan(value) else float(value)][3]


def _look(matrix: np.ndarray, i: int, j: int) -> tuple[str, str, str, str]:
    if i == j:
        return _LOOK["diagonal"]
    value = matrix[i, j]
    if np.isnan(value):
        return _LOOK["nan"]
    sign = float(np.sign(value)) if abs(value) >= 0.5 else 0.0   # a pooled mean: its lean
    return _LOOK[sign]


class GuessGrid:
    """A tasks x tasks guess a click edits (see the module docstring).

    Parameters
    ----------
    names : sequence of str
        The tasks' names (rows top to bottom, columns left to right).
    title : str
    editable : bool
        Whether a click changes the guess (a revealed guess is only shown).
    cell : int, optional
        Side of a cell in pixels (default: from the number of tasks, 14-48).
    """

    def __init__(self, names: Sequence[str], *, title: str = "Your guess",
                 editable: bool = True, cell: int | None = None):
        self.editable = editable
        self._cell = cell
        self._callbacks: list[Callable[[int, int], None]] = []
        self.names: list[str] = []
        self.relation = np.zeros((0, 0))
        self.source = ColumnDataSource({key: [] for key in
                                        ("x", "y", "i", "j", "fill", "ink", "symbol", "word")})
        self.figure = fig = figure(x_range=FactorRange(), y_range=FactorRange(), title=title,
                                   toolbar_location=None, tools="", sizing_mode="fixed")
        cells = fig.rect("x", "y", width=1, height=1, source=self.source, fill_color="fill",
                         line_color="white", line_width=2, selection_fill_color="fill",
                         selection_line_color="white", nonselection_fill_color="fill",
                         nonselection_fill_alpha=1.0, nonselection_line_color="white")
        self.text = fig.text("x", "y", text="symbol", source=self.source, text_color="ink",
                             text_align="center", text_baseline="middle",
                             text_font_size="13px")
        self.tap_tool = TapTool(renderers=[cells])
        fig.add_tools(self.tap_tool, HoverTool(renderers=[cells], tooltips=[
            ("pair", "@y – @x"), ("guess", "@word")]))
        # the frame is sized by the cells (set_names); the figure takes what its names need
        fig.width = fig.height = None
        fig.grid.grid_line_color = None
        fig.axis.major_tick_line_color = None
        fig.axis.axis_line_color = None
        fig.xaxis.major_label_orientation = 0.8
        style_figure(fig)
        # A tap selects a cell; the browser forgets the selection at once, so a second click
        # on the same cell is a change again (the server sees [k], then []).
        self.source.selected.js_on_change("indices", CustomJS(
            code="if (cb_obj.indices.length) setTimeout(() => { cb_obj.indices = [] }, 0)"))
        # BokehJS takes a click within 300 ms of the last for a double tap, which the tap
        # tool ignores: a double tap selects the cell under it too, so quick clicks (on one
        # cell or on two) all count
        fig.js_on_event("doubletap", CustomJS(args={"source": self.source,
                                                    "x_range": fig.x_range}, code="""
            const m = x_range.factors.length, j = Math.floor(cb_obj.x);
            const i = m - 1 - Math.floor(cb_obj.y);
            if (i >= 0 && i < m && j >= 0 && j < m) source.selected.indices = [i * m + j];
        """))
        self.source.selected.on_change("indices", self._selected)
        self.set_names(names)

    # ------------------------------------------------------------------ data
    def set_names(self, names: Sequence[str], relation: np.ndarray | None = None) -> None:
        """Re-target the grid at tasks ``names`` (a new size: every pair don't know)."""
        names = [str(n) for n in names]
        m = len(names)
        resized = m != len(self.names)
        self.names = names
        fig = self.figure
        fig.x_range.factors = names
        fig.y_range.factors = list(reversed(names))
        cell = self._cell or int(np.clip(360 // max(m, 1), 14, 48))
        fig.frame_width = fig.frame_height = cell * max(m, 1)
        # the title ("Your locked guess", ~160 px) is drawn in the canvas: a small grid's
        # frame leaves it room on the right
        fig.min_border_right = max(10, 170 - fig.frame_width)
        labels = m <= MAX_NAMED   # past it the names would overlap; hover names each pair
        fig.xaxis.major_label_text_font_size = fig.yaxis.major_label_text_font_size = (
            "11pt" if labels else "0pt")
        # short names (T0, T1, ...) level; longer ones slanted so that they do not overlap
        fig.xaxis.major_label_orientation = (
            "horizontal" if max((len(n) for n in names), default=0) <= 3 else 0.8)
        self.text.glyph.text_font_size = f"{int(min(16, max(9, cell * 0.45)))}px"
        if relation is not None:
            self.relation = np.array(relation, dtype=float)
        elif resized or self.relation.shape != (m, m):
            self.relation = blank(m)
        self._draw()

    def show(self, relation: np.ndarray) -> None:
        """Show ``relation`` ((m, m): +1, -1, 0, NaN; a pooled mean shows its lean)."""
        relation = np.asarray(relation, dtype=float)
        if relation.shape != (len(self.names),) * 2:
            raise ValueError(f"relation must have shape {(len(self.names),) * 2}; got "
                             f"{relation.shape}.")
        self.relation = relation.copy()
        self._draw()

    def _draw(self) -> None:
        m = len(self.names)
        i, j = np.divmod(np.arange(m * m), m)
        looks = [_look(self.relation, a, b) for a, b in zip(i, j, strict=True)]
        self.source.data = {
            "x": [self.names[b] for b in j], "y": [self.names[a] for a in i],
            "i": i.tolist(), "j": j.tolist(),
            "fill": [look[0] for look in looks], "ink": [look[1] for look in looks],
            "symbol": [look[2] for look in looks], "word": [look[3] for look in looks]}

    def _redraw_pair(self, a: int, b: int) -> None:
        m = len(self.names)
        patches: dict[str, list] = {"fill": [], "ink": [], "symbol": [], "word": []}
        for p, q in ((a, b), (b, a)):
            look = _look(self.relation, p, q)
            for key, value in zip(patches, look, strict=True):
                patches[key].append((p * m + q, value))
        self.source.patch(patches)

    # ------------------------------------------------------------------ clicks
    def on_tap(self, callback: Callable[[int, int], None]) -> None:
        """``callback(i, j)`` after a click changed pair (i, j) (and (j, i))."""
        self._callbacks.append(callback)

    def _selected(self, attr, old, new) -> None:
        if not new:
            return
        index = int(new[0])
        m = len(self.names)
        if 0 <= index < m * m:
            self.cycle(*divmod(index, m))

    def cycle(self, i: int, j: int) -> None:
        """Pair (i, j) moves to its next state (nothing on the diagonal, or when the grid is
        not editable)."""
        if i == j or not self.editable:
            return
        value = cycled(self.relation[i, j])
        self.relation[i, j] = self.relation[j, i] = value
        self._redraw_pair(i, j)
        for callback in self._callbacks:
            callback(i, j)

    def tap(self, i: int, j: int) -> None:
        """What a click on cell (i, j) does in the browser: select it, then forget it (for
        tests and scripts)."""
        self.source.selected.indices = [i * len(self.names) + j]
        self.source.selected.indices = []


def blank(m: int) -> np.ndarray:
    """A guess with every pair open (NaN), the diagonal 1."""
    relation = np.full((m, m), np.nan)
    np.fill_diagonal(relation, 1.0)
    return relation


#: The bins of :class:`ScoreBars`: the share of a student's guessed pairs whose sign is right.
SCORE_BINS = ("0–20%", "20–40%", "40–60%", "60–80%", "80–100%")


def score_counts(scores) -> list[int]:
    """How many of ``scores`` (shares 0..1; NaN: nothing to score) fall in each of
    :data:`SCORE_BINS`, then how many had nothing scored.

    >>> score_counts([0.1, 0.5, 1.0, 0.8, float("nan")])
    [1, 0, 1, 0, 2, 1]
    """
    values = np.asarray(list(scores), dtype=float)
    known = values[np.isfinite(values)]
    bins = np.minimum((np.clip(known, 0.0, 1.0) * len(SCORE_BINS)).astype(int),
                      len(SCORE_BINS) - 1)
    counts = np.bincount(bins, minlength=len(SCORE_BINS)).tolist()
    return [int(c) for c in counts] + [int(values.size - known.size)]


class ScoreBars:
    """The distribution of a class's scores: how many students got each share of their
    guessed pairs' signs right (one bar per :data:`SCORE_BINS`, and "none guessed")."""

    def __init__(self, *, title: str = "The class's guesses: signs right", width: int = 420,
                 height: int = 260):
        self.bins = [*SCORE_BINS, "none guessed"]
        self.source = ColumnDataSource({"bin": self.bins, "count": [0] * len(self.bins)})
        self.figure = fig = figure(x_range=FactorRange(*self.bins), title=title, width=width,
                                   height=height, tools="", toolbar_location=None,
                                   sizing_mode="fixed")
        fig.vbar(x="bin", top="count", width=0.8, source=self.source,
                 fill_color=DIVERGING[-3], line_color=None)
        fig.add_tools(HoverTool(tooltips=[("signs right", "@bin"), ("students", "@count")]))
        fig.yaxis.axis_label = "students"
        fig.y_range.start = 0
        fig.xaxis.major_label_orientation = 0.6
        fig.grid.grid_line_color = None
        style_figure(fig)

    def update(self, scores) -> None:
        """Show the counts of ``scores`` (:func:`score_counts`)."""
        counts = score_counts(scores)
        if list(self.source.data["count"]) != counts:
            self.source.data = {"bin": self.bins, "count": counts}
