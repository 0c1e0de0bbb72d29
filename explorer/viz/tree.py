"""Live views of multi-task decision trees and MT-Adaboost (plain Bokeh, no Panel).

Each view owns its figure and ``ColumnDataSource``s and has an ``update(...)`` that patches
them in place (``source.data = ...``), as the live-view pattern of docs/DESIGN.md asks:

* :class:`TreeDiagram` -- the (partial) tree from a ``Snapshot.info["tree"]``: split nodes
  labelled ``feature`` / ``<= threshold`` and outlined in the colour of the task that decided
  the split, per-task class distributions as thin stacked bars under each node (one row per
  task, in class colours), per-task early leaves as squares in the task's colour holding
  the leaf's label, pending nodes in grey; a legend for the task colours and one for the
  class colours (never the same colours), a note when the drawing is cut;
* :class:`PartitionView` -- for 2-D data, the partition of each task's plane by the tree
  (regions coloured by the task's predicted label), over the task's training points;
* :class:`GainBars` -- the per-task information gains of the chosen split, the deciding
  task highlighted, IG_J / IG_U / IG_M in the title;
* :class:`BoostingView` -- MT-Adaboost round by round: per-task training error, ``beta_t``;
* :func:`theorem1_boxplot` -- the paper's Figure 3 (static).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from bokeh.core.properties import value as spec_value
from bokeh.models import (
    ColumnDataSource,
    CustomJS,
    HoverTool,
    Legend,
    LegendItem,
    Range1d,
    Span,
    Title,
)
from bokeh.plotting import figure

from explorer._compat import CLIENT_ONLY_SETV_JS

from .live import LiveView, append_rows
from .style import category_ticks, set_columns, task_colors
from .style import style_figure as _style
from .tree_layout import class_palette, shorten, text_width, tidy_x

__all__ = ["BoostingView", "GainBars", "GainBarsView", "PartitionLiveView",
           "PartitionView", "TreeDiagram", "TreeDiagramView", "class_colors", "task_colors",
           "theorem1_boxplot"]


def class_colors(classes: Sequence[Sequence], n_tasks: int) -> dict:
    """One colour per class label of any task (``{label: colour}``, labels sorted), none of
    them close to a colour of the first ``n_tasks`` tasks (:func:`class_palette`): on the
    Trees page a colour names either a task or a class."""
    labels = sorted({label for task_classes in classes for label in task_classes})
    return dict(zip(labels, class_palette(len(labels), task_colors(min(n_tasks, 8))),
                    strict=True))


def _short_number(value: float) -> str:
    """3 significant digits, or 2 past 5 characters (the hover gives the full value).

    >>> _short_number(1.96), _short_number(-0.0479), _short_number(0.21875)
    ('1.96', '-0.048', '0.219')
    """
    text = f"{value:.3g}"
    return text if len(text) <= 5 else f"{value:.2g}"


def _ink(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (``#rrggbb``)."""
    r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#ffffff"



def _appended(column, values: list):
    """``column`` (list or array) with ``values`` after its end, as a new column."""
    if isinstance(column, np.ndarray):
        return np.concatenate([column, np.asarray(values, dtype=column.dtype)])
    return [*column, *values]


def _patched(column, changes: list):
    """``column`` with ``(row, value)`` ``changes`` applied, as a new column."""
    column = column.copy() if isinstance(column, np.ndarray) else list(column)
    for row, value in changes:
        column[row] = value
    return column

class TreeDiagram:
    """The tree as a node-link diagram, patched in place as it grows.

    A growing tree only appends node records (a prefix stays valid), so each frame sends
    what changed: the new nodes, edges, class bars and early leaves are *streamed* once, a
    pending node that gets processed is *patched*, and only the geometry (plain numbers:
    adding a split moves the layout) is replaced. A record list that is not an extension
    of the one drawn (a new fit, a scrub back) is drawn afresh.

    Geometry is in screen pixels at scale 1: every box is as wide as its label
    (:func:`~explorer.viz.tree_layout.text_width`) and
    the early-leaf squares it holds (a split node: one row under its label, for the tasks
    that stop there; a leaf node: nothing else, in at most two rows), and the tidy layout
    (:func:`~explorer.viz.tree_layout.tidy_x`) keeps the boxes of one depth apart. Labels
    are short on screen (feature names past ``max_feature_chars``, 2 significant digits,
    leaf labels past 3 characters); the hover tooltips give them in full. The figure
    stretches to its column's width and the browser draws positions and fonts at one scale
    that fits the tree to it (:data:`_FIT_JS`, from ``extent``, the tree's size at scale 1),
    so what fits at scale 1 fits on every screen. That scale never takes a text below 12 px
    (``min_scale``): a wider tree is panned. From depth ``compact_depth`` on, a split node's
    label is its feature alone (the threshold on hover), so deep levels stay narrow.

    Per-task detail is capped for readability and frame size: class bars for the first
    ``max_bar_tasks`` tasks, hover text for the first ``max_hover_tasks``, at most
    ``max_leaf_items`` early-leaf squares per node (the last one then says how many more).

    Parameters
    ----------
    task_names : list of str
    classes : list of array, each task's labels (for the class-distribution bars)
    feature_names : list of str
    """

    max_bar_tasks = 8
    max_hover_tasks = 8
    max_leaf_items = 8
    max_feature_chars = 10
    #: From this depth on a split node shows its feature only, in at most
    #: ``compact_feature_chars`` characters (the hover gives the split in full).
    compact_depth, compact_feature_chars = 3, 6
    max_legend_items = 10
    #: Legend rows wrap to this width (the figure's column at 1366 x 768), font in px.
    legend_width, legend_font_px = 620, 13
    #: Sizes in screen pixels (at scale 1).
    font_px, item_font_px, line_px, pad = 13, 13, 15, 5
    item_px, item_gap = 17, 2
    bar_px, bar_gap, edge_px, node_gap, margin = 2, 1, 16, 8, 12
    _NODE_COLUMNS = ("x", "y", "w", "h", "ty", "text", "full", "fill", "line", "width",
                     "node", "counts", "gains")
    _TEXT_COLUMNS = ("text", "full", "fill", "line", "width", "counts", "gains")
    _LEAF_COLUMNS = ("x", "y", "w", "color", "ink", "text", "task", "label", "reason")

    #: The smallest text drawn, in pixels (9 pt: read from the back of a classroom).
    min_text_px = 12
    #: Scales the browser may draw at (see :data:`_FIT_JS`): never below ``min_scale`` (the
    #: smallest label at ``min_text_px``; a wider tree is panned), never above
    #: ``max_scale`` or taller than ``max_frame_height`` pixels.
    min_scale, max_scale, max_frame_height = min_text_px / min(font_px, item_font_px), 1.25, 640

    def __init__(self, task_names, classes, feature_names, *, width=760, height=420,
                 max_frame_height: int | None = None):
        if max_frame_height is not None:   # e.g. a page that keeps the tree on one screen
            self.max_frame_height = int(max_frame_height)
        self.min_frame = (width - 20, min(height - 120, self.max_frame_height))
        self.natural_size = (0.0, 0.0)
        # the tree's extent at scale 1 (pixels): the browser fits it to the frame
        self.extent = ColumnDataSource(dict(lo=[0.0], hi=[float(self.min_frame[0])],
                                            height=[float(self.min_frame[1])], reserve=[0.0],
                                            root=[self.min_frame[0] / 2.0]))
        self.edges = ColumnDataSource(dict(x0=[], y0=[], x1=[], y1=[]))
        self.nodes = ColumnDataSource({c: [] for c in self._NODE_COLUMNS},
                                      name="mtdt_tree_nodes")
        self.bars = ColumnDataSource(dict(left=[], right=[], top=[], bottom=[], color=[],
                                          node=[]))
        self.leaves = ColumnDataSource({c: [] for c in self._LEAF_COLUMNS})
        self.task_swatches = ColumnDataSource(dict(x=[], y=[], color=[]))
        self.class_swatches = ColumnDataSource(dict(x=[], y=[], color=[]))
        fig = figure(title="MT-DT: click Step to add a node", tools="pan,wheel_zoom,reset,save",
                     toolbar_location="right", sizing_mode="stretch_width",
                     min_width=min(width, 400), frame_height=self.min_frame[1], min_border=4,
                     x_range=Range1d(0, self.min_frame[0]),
                     y_range=Range1d(-self.min_frame[1], 0))
        fig.segment("x0", "y0", "x1", "y1", source=self.edges, line_color="#999999",
                    line_width=1.5)
        box = fig.rect("x", "y", width="w", height="h", source=self.nodes,
                       fill_color="fill", line_color="line", line_width="width")
        node_text = fig.text("x", "ty", text="text", source=self.nodes, text_align="center",
                 text_baseline="middle", text_font_size=f"{self.font_px}px",
                 text_line_height=self.line_px / self.font_px)
        fig.quad("left", "right", "top", "bottom", source=self.bars, fill_color="color",
                 line_color=None)
        squares = fig.rect("x", "y", width="w", height=self.item_px, source=self.leaves,
                           fill_color="color", line_color="#222222", line_width=0.5)
        leaf_text = fig.text("x", "y", text="text", source=self.leaves, text_color="ink",
                 text_align="center", text_baseline="middle", text_font_style="bold",
                 text_font_size=f"{self.item_font_px}px")
        fig.add_tools(HoverTool(renderers=[box], tooltips=[
            ("node", "@node"), ("split", "@full"), ("weighted class counts", "@counts"),
            ("task gains", "@gains")]))
        fig.add_tools(HoverTool(renderers=[squares], tooltips=[
            ("early leaf of", "@task"), ("label", "@label"), ("why", "@reason")]))
        # legends, one row each: swatch glyphs that draw nothing in the frame (no
        # coordinates); each row opens with its name (an item without a swatch: a Legend's
        # own title is turned on its side when it sits left of a row)
        task_glyph = fig.rect("x", "y", width=1, height=1, source=self.task_swatches,
                              fill_color="color", line_color="#222222")
        class_glyph = fig.rect("x", "y", width=1, height=1, source=self.class_swatches,
                               fill_color="color", line_color=None)
        name_glyph = fig.rect(x=np.nan, y=np.nan, width=1, height=1, fill_alpha=0,
                              line_alpha=0)
        self.task_legend, self.class_legend = (
            Legend(items=[], orientation="horizontal", location="left",
                   label_text_font_size=f"{self.legend_font_px}px", glyph_width=14,
                   glyph_height=14,
                   spacing=10, padding=2, margin=1, border_line_alpha=0,
                   background_fill_alpha=0)
            for _ in range(2))
        self._swatch_glyphs = (task_glyph, class_glyph, name_glyph)
        self.note = Title(text="", visible=False, text_color="#b22222", text_font_size="12px",
                          text_font_style="bold")
        self.pan_note = Title(text="Wider than the page: drag the drawing sideways for the "
                              "rest (or hide the sidebar).", visible=False,
                              text_color="#555555", text_font_size="12px",
                              text_font_style="italic")
        fig.add_layout(self.pan_note, "above")
        fit = CustomJS(code=_FIT_JS, args=dict(
            fig=fig, extent=self.extent, node_text=node_text.glyph, leaf_text=leaf_text.glyph,
            pan_note=self.pan_note, fonts=[self.font_px, self.item_font_px],
            limits=[self.min_scale, self.max_scale, self.max_frame_height,
                    self.min_frame[1]]))
        self.extent.js_on_change("data", fit)
        # and a new width (a resized window, the sidebar shown or hidden): BokehJS sets the
        # plot's inner width after laying it out; a new height alone needs no refit
        fig.js_on_change("inner_width", fit)
        # a hidden glyph puts the extent in the figure's document (else it never syncs)
        fig.scatter("lo", "height", source=self.extent, visible=False)
        fig.add_layout(self.class_legend, "above")
        fig.add_layout(self.task_legend, "above")
        fig.add_layout(self.note, "above")
        fig.axis.visible = False
        fig.grid.visible = False
        _style(fig)
        self.figure = fig
        self.set_names(task_names, classes, feature_names)

    # ------------------------------------------------------------------ data and legends
    def set_names(self, task_names, classes, feature_names) -> None:
        """Re-target to other tasks, labels and features: colours, legends; empties the tree."""
        self.task_names = [str(n) for n in task_names]
        self.classes = [list(c) for c in classes]
        self.feature_names = [str(n) for n in feature_names]
        m = len(self.task_names)
        self.colors = task_colors(m)
        self.class_color = class_colors(self.classes, m)
        cap = self.max_legend_items
        # the task palette has 8 colours: past them the legend says that they repeat
        shown_tasks = self.task_names[:8]
        task_swatch = [self.colors[j] for j in range(len(shown_tasks))]
        task_labels = list(shown_tasks)
        if m > len(shown_tasks):
            task_swatch.append("#ffffff")
            task_labels.append(f"+{m - len(shown_tasks)} more")
        labels = list(self.class_color)
        shown_labels = labels[:cap if len(labels) <= cap else cap - 1]
        class_swatch = [self.class_color[label] for label in shown_labels]
        class_labels = [shorten(label, 12) for label in shown_labels]
        if len(labels) > len(shown_labels):
            class_swatch.append("#ffffff")
            class_labels.append(f"+{len(labels) - len(shown_labels)} more")
        for source, legend, glyph, colours, title, names in (
                (self.task_swatches, self.task_legend, self._swatch_glyphs[0], task_swatch,
                 "Tasks:", task_labels),
                (self.class_swatches, self.class_legend, self._swatch_glyphs[1],
                 class_swatch, "Classes (bars):", class_labels)):
            source.data = dict(x=[np.nan] * len(colours), y=[np.nan] * len(colours),
                               color=colours)
            if len(legend.items) == 1 + len(names):
                # relabel the items in place: new items are new models, and each makes Bokeh
                # walk the whole document (two walks were ~130 ms of a data change)
                for item, name in zip(legend.items[1:], names, strict=True):
                    item.label = spec_value(name)   # a plain string would name a column
            else:
                legend.items = [LegendItem(label=title, renderers=[self._swatch_glyphs[2]]),
                                *(LegendItem(label=name, renderers=[glyph], index=k)
                                  for k, name in enumerate(names))]
            legend.ncols = self._legend_columns([title, *names])
        self._forget()

    def _legend_columns(self, labels: Sequence[str]) -> int:
        """The most items a legend row holds within ``legend_width`` (a Legend's cells are
        as wide as its widest item: swatch, gap, label, spacing)."""
        # ~0.47 em a character (Liberation Sans: 0.44 for names like "T0 0 vs rest")
        cell = max(0.47 * self.legend_font_px * len(label) for label in labels) + 30
        return max(1, min(len(labels), int(self.legend_width // cell)))

    def _forget(self) -> None:
        """Empty the sources and what is known about the drawn tree."""
        self._drawn: list[int] = []          # processed node ids, in record order
        self._processed: set[int] = set()
        self._row: dict[int, int] = {}       # node id -> row of the nodes source
        self._row_ids: list[int] = []        # row -> node id
        self._kind: list[str] = []           # per row: "split", "leaf", "pending", "cut"
        self._box: list[tuple[float, float]] = []   # per row: box (width, height)
        self._lines: list[int] = []          # per row: lines of its label
        self._depth: dict[int, int] = {}
        self._children: dict[int, tuple[int, int]] = {}
        self._grid: dict[int, tuple[int, float]] = {}  # node id -> (squares, square width)
        self._edge_child: list[int] = []     # per edge row: the child's node id
        self._bar_node: list[int] = []       # per bar row: its node id, and where it is
        self._bar_span: list[tuple[float, float]] = []   # across the box (fractions)
        self._leaf_node: list[int] = []      # per early-leaf row: its node id
        self._leaf_dx: list[float] = []      # and its x from the node's x
        self._highlight: int | None = None
        self._cut = False
        self.edges.data = dict(x0=[], y0=[], x1=[], y1=[])
        self.nodes.data = {c: [] for c in self._NODE_COLUMNS}
        self.bars.data = dict(left=[], right=[], top=[], bottom=[], color=[], node=[])
        self.leaves.data = {c: [] for c in self._LEAF_COLUMNS}
        self.note.visible = False

    def _extends_drawn(self, nodes: Sequence[dict]) -> bool:
        k = len(self._drawn)
        return k == 0 or (len(nodes) >= k and nodes[0]["node"] == self._drawn[0]
                          and nodes[k - 1]["node"] == self._drawn[-1])

    # ------------------------------------------------------------------ sizes
    def _describe(self, node: dict) -> dict:
        """The node row's text columns (computed once per processed node)."""
        shown = range(min(len(self.task_names), self.max_hover_tasks))
        more = len(self.task_names) - len(shown)
        tail = f"; ... {more} more tasks" if more > 0 else ""
        counts = "; ".join(
            f"{self.task_names[j]}: " + ", ".join(
                f"{self.classes[j][k]}={c:.3g}" for k, c in enumerate(node["class_counts"][j])
                if c > 0)
            for j in shown if np.sum(node["class_counts"][j]) > 0) + tail
        gains = "" if node["gains"] is None else ", ".join(
            f"{self.task_names[j]}={g:.3f}" for j in shown
            for g in [node["gains"]["task"][j]] if np.isfinite(g)) + tail
        if node["feature"] is None:
            text = "" if node["early_leaves"] else "leaf"
            full = "none (a leaf for every task still here)"
        else:
            name = self.feature_names[node["feature"]]
            if node["depth"] >= self.compact_depth:
                text = shorten(name, self.compact_feature_chars)
            else:
                text = (f"{shorten(name, self.max_feature_chars)}\n"
                        f"≤ {_short_number(node['threshold'])}")
            full = f"{name} <= {node['threshold']:.6g}"
        split = node["deciding_task"] is not None
        return {"text": text, "full": full, "fill": "white",
                "line": self.colors[node["deciding_task"]] if split else "#777777",
                "width": 2.5 if split else 1.0, "counts": counts, "gains": gains}

    def _box_size(self, kind: str, text: str, node_id: int) -> tuple[float, float]:
        """(width, height) of a node's box: its label over its early-leaf squares."""
        grid_w, grid_h = self._grid_size(node_id, kind)
        if kind == "leaf" and grid_w:
            return grid_w + 8, grid_h + 8
        lines = text.count("\n") + 1
        width = text_width(text, self.font_px) + 2 * self.pad
        height = lines * self.line_px + self.pad
        if grid_w:
            width, height = max(width, grid_w + 8), height + grid_h + 4
        return width, height

    def _grid_size(self, node_id: int, kind: str) -> tuple[float, float]:
        """(width, height) of a node's early-leaf squares (one row in a split node)."""
        cols, rows = self._grid_shape(node_id, kind)
        item_w = self._grid.get(node_id, (0, 0.0))[1]
        if not cols:
            return 0.0, 0.0
        return (cols * item_w + (cols - 1) * self.item_gap,
                rows * self.item_px + (rows - 1) * self.item_gap)

    def _grid_shape(self, node_id: int, kind: str) -> tuple[int, int]:
        n = self._grid.get(node_id, (0, 0.0))[0]
        rows = 1 if kind != "leaf" or n <= 2 else 2
        return -(-n // rows), (rows if n else 0)

    @property
    def level_px(self) -> float:
        """Vertical distance between two depths: the tallest box, the bars, the edges."""
        n = min(len(self.task_names), self.max_leaf_items)
        split = 2 * self.line_px + self.pad + (self.item_px + 4 if n else 0)
        leaf = (2 if n > 2 else 1) * (self.item_px + self.item_gap) + 8
        return max(split, leaf) + 2 + self._bars_px() + self.edge_px

    def _bars_px(self) -> float:
        return min(len(self.task_names), self.max_bar_tasks) * (self.bar_px + self.bar_gap)

    # ------------------------------------------------------------------ frames
    def update(self, nodes: Sequence[dict], highlight: int | None = None,
               title: str | None = None, n_total: int | None = None,
               reserve_depth: int | None = None) -> None:
        """Show the node records of ``Snapshot.info["tree"]`` (see the class docstring).

        ``n_total``: how many nodes the tree has when ``nodes`` is only its first part (the
        drawing then says it is cut, and children beyond it read "not drawn").

        ``reserve_depth``: the deepest the tree may still grow (a fit in progress): the
        frame takes the height of that depth at once instead of growing with the tree, so
        the page is not laid out again at every new depth (:data:`_FIT_JS`). ``None`` (the
        tree is complete): the frame fits the drawing.

        A node's box, bars, squares and edges get their heights when they appear (a depth
        has a fixed height); each frame then replaces only the x columns of the new layout.
        """
        if not self._extends_drawn(nodes):
            self._forget()
        new_rows = {c: [] for c in self._NODE_COLUMNS}
        new_edges = dict(x0=[], y0=[], x1=[], y1=[])
        new_bars = dict(left=[], right=[], top=[], bottom=[], color=[], node=[])
        new_leaves = {c: [] for c in self._LEAF_COLUMNS}
        patches: dict[str, list] = {c: [] for c in (*self._TEXT_COLUMNS, *self._SHAPE)}

        def add_row(node_id: int, kind: str, columns: dict) -> None:
            self._row[node_id] = row = len(self._row_ids)
            self._row_ids.append(node_id)
            self._kind.append(kind)
            self._box.append(self._box_size(kind, columns["text"], node_id))
            self._lines.append(columns["text"].count("\n") + 1)
            new_rows["node"].append(node_id)
            new_rows["x"].append(0.0)
            for c, value in self._shape(row).items():
                new_rows[c].append(value)
            for c in self._TEXT_COLUMNS:
                new_rows[c].append(columns[c])

        def reshape_row(row: int, kind: str, text: str) -> None:
            self._kind[row] = kind
            self._box[row] = self._box_size(kind, text, self._row_ids[row])
            self._lines[row] = text.count("\n") + 1
            for c, value in self._shape(row).items():
                patches[c].append((row, value))

        pending = {"text": "pending", "full": "not processed yet", "fill": "#eeeeee",
                   "line": "#bbbbbb", "width": 1.0, "counts": "", "gains": ""}
        for node in nodes[len(self._drawn):]:
            node_id = node["node"]
            self._depth[node_id] = int(node["depth"])
            items = self._leaf_items(node)
            columns = self._describe(node)
            kind = "leaf" if node["feature"] is None else "split"
            if node_id in self._row:          # a pending node got processed
                row = self._row[node_id]
                for c, value in columns.items():
                    patches[c].append((row, value))
                reshape_row(row, kind, columns["text"])
            else:
                add_row(node_id, kind, columns)
            self._drawn.append(node_id)
            self._processed.add(node_id)
            self._add_leaves(node_id, items, new_leaves)
            self._add_bars(node, new_bars)
            if node["feature"] is not None:   # its children appear, pending
                self._children[node_id] = (node["left"], node["right"])
                bottom = self._top(node_id) - self._box[self._row[node_id]][1] - 2 \
                    - self._bars_px()
                for child in (node["left"], node["right"]):
                    self._depth[child] = int(node["depth"]) + 1
                    if child not in self._row:
                        add_row(child, "pending", pending)
                    self._edge_child.append(child)
                    new_edges["x0"].append(0.0)
                    new_edges["x1"].append(0.0)
                    new_edges["y0"].append(bottom)
                    new_edges["y1"].append(self._top(child))
        cut = n_total is not None and n_total > len(nodes)
        if cut != self._cut:                  # children the cut leaves out say so (and back)
            self._cut = cut
            text, fill = ("not drawn", "#f6f6f6") if cut else ("pending", "#eeeeee")
            for row, node_id in enumerate(self._row_ids):
                if node_id not in self._processed:
                    patches["text"].append((row, text))
                    patches["fill"].append((row, fill))
                    reshape_row(row, "cut" if cut else "pending", text)
        if highlight != self._highlight:
            for node_id, fill in ((self._highlight, "white"), (highlight, "#fff3c4")):
                if node_id in self._processed:
                    patches["fill"].append((self._row[node_id], fill))
            self._highlight = highlight
        # New rows and changed cells as whole new columns, not stream/patch: a frame held
        # with the tree's reset (a new data set) sent those after the reset's replacement
        # and the browser had rows past the ends of its columns (see ``set_columns``).
        # Each source is set once a frame, rows, cells and layout together: Bokeh sends
        # every replacement of a source whole, and the browser recomputes all its glyphs
        # (the labels measured again) for each (tests/test_frame_events.py).
        sources = {"nodes": self.nodes, "edges": self.edges, "bars": self.bars,
                   "leaves": self.leaves}
        columns: dict[str, dict] = {name: {} for name in sources}
        for name, rows in (("nodes", new_rows), ("edges", new_edges), ("bars", new_bars),
                           ("leaves", new_leaves)):
            if next(iter(rows.values())):
                data = sources[name].data
                columns[name] = {c: _appended(data[c], rows[c]) for c in rows}
        node_columns = columns["nodes"]
        for c, changes in patches.items():
            if changes:
                node_columns[c] = _patched(node_columns.get(c, self.nodes.data[c]), changes)
        for name, placed in self._place(reserve_depth).items():
            columns[name].update(placed)
        for name, changed in columns.items():
            if changed:
                set_columns(sources[name], **changed)
        if cut:
            self.note.text = (f"Cut: the first {len(nodes)} of {n_total} nodes are drawn; "
                              "boxes reading 'not drawn' continue beyond the drawing.")
        self.note.visible = cut
        if title is not None:
            self.figure.title.text = title

    _SHAPE = ("y", "w", "h", "ty")

    def _top(self, node_id: int) -> float:
        """y of the top of the boxes at the node's depth."""
        return -self.margin - self.level_px * self._depth[node_id]

    def _shape(self, row: int) -> dict:
        """A row's box (w, h), centre y and label y: fixed until its kind changes."""
        w, h = self._box[row]
        top = self._top(self._row_ids[row])
        return {"y": top - h / 2, "w": w, "h": h,
                "ty": top - (self._lines[row] * self.line_px + self.pad) / 2}

    def _add_bars(self, node: dict, new_bars: dict) -> None:
        """Per task (the first ``max_bar_tasks``), a thin stacked bar of its class counts."""
        w, h = self._box[self._row[node["node"]]]
        below = self._top(node["node"]) - h - 2
        for j, cc in enumerate(node["class_counts"][:self.max_bar_tasks]):
            total = float(np.sum(cc))
            if total <= 0:
                continue
            top = below - j * (self.bar_px + self.bar_gap)
            start = 0.0
            for k, c in enumerate(cc):
                if c <= 0:
                    continue
                stop = start + c / total
                self._bar_node.append(node["node"])
                self._bar_span.append((start, stop))
                new_bars["left"].append(0.0)
                new_bars["right"].append(0.0)
                new_bars["top"].append(top)
                new_bars["bottom"].append(top - self.bar_px)
                new_bars["color"].append(self.class_color[self.classes[j][k]])
                new_bars["node"].append(node["node"])
                start = stop

    def _leaf_items(self, node: dict) -> list[tuple]:
        """The node's early leaves as squares (colour, text, task, label, reason), sorted by
        task, at most ``max_leaf_items`` (the last then counts the rest); sets its grid."""
        leaves = sorted(node["early_leaves"], key=lambda leaf: leaf["task"])
        if len(leaves) > self.max_leaf_items:
            more = len(leaves) - self.max_leaf_items + 1
            leaves = leaves[:self.max_leaf_items - 1] + [{"more": more}]
        items = []
        for leaf in leaves:
            if "more" in leaf:
                items.append(("#ffffff", f"+{leaf['more']}", f"{leaf['more']} more tasks",
                              "", ""))
                continue
            j, label = leaf["task"], leaf["label"]
            items.append((self.colors[j], shorten(label, 3), self.task_names[j], str(label),
                          str(leaf.get("reason", ""))))
        if items:
            item_w = max(self.item_px,
                         *(text_width(t, self.item_font_px) + 5 for _, t, *_ in items))
            self._grid[node["node"]] = (len(items), item_w)
        return items

    def _add_leaves(self, node_id: int, items: list[tuple], new_leaves: dict) -> None:
        """Squares in their task's colour holding the label: centred in a leaf node's box,
        in a row under a split node's label."""
        if not items:
            return
        row = self._row[node_id]
        kind = self._kind[row]
        cols, _ = self._grid_shape(node_id, kind)
        item_w = self._grid[node_id][1]
        grid_w, grid_h = self._grid_size(node_id, kind)
        grid_top = self._top(node_id) - self._box[row][1] + 4 + grid_h
        for slot, (color, text, task, label, reason) in enumerate(items):
            col, line = slot % cols, slot // cols
            self._leaf_node.append(node_id)
            self._leaf_dx.append(-grid_w / 2 + col * (item_w + self.item_gap) + item_w / 2)
            y = grid_top - line * (self.item_px + self.item_gap) - self.item_px / 2
            values = dict(x=0.0, y=y, w=item_w, color=color, ink=_ink(color), text=text,
                          task=task, label=label, reason=reason)
            for key, value in values.items():
                new_leaves[key].append(value)

    def _place(self, reserve_depth: int | None) -> dict[str, dict]:
        """Lay the tree out (screen pixels): the new x columns (numbers only) of each source
        (``{"nodes": {"x": ...}, "edges": {...}, ...}``), for the caller to set."""
        ids = self._row_ids
        if not ids:
            self._frame(2.0 * self.margin, -self.margin, reserve_depth)
            return {}
        extent = {node_id: (-box[0] / 2, box[0] / 2)
                  for node_id, box in zip(ids, self._box, strict=True)}
        x_of = tidy_x(self._children, extent, gap=self.node_gap, root=ids[0])
        # x from the drawing's left edge (the margin), y down from its top
        lo = min(x_of[i] + extent[i][0] for i in ids) - self.margin
        hi = max(x_of[i] + extent[i][1] for i in ids) - lo + self.margin
        x = np.array([x_of[i] for i in ids], dtype=np.float32) - np.float32(lo)
        w = np.array([b[0] for b in self._box], dtype=np.float32)
        placed = {"nodes": {"x": x}}
        row_of = self._row
        if self._edge_child:
            parent_of = {c: p for p, pair in self._children.items() for c in pair}
            placed["edges"] = {"x0": x[[row_of[parent_of[c]] for c in self._edge_child]],
                               "x1": x[[row_of[c] for c in self._edge_child]]}
        if self._bar_node:
            rows = np.array([row_of[n] for n in self._bar_node])
            span = np.asarray(self._bar_span, dtype=np.float32)
            left_edge = x[rows] - w[rows] / 2
            placed["bars"] = {"left": left_edge + span[:, 0] * w[rows],
                              "right": left_edge + span[:, 1] * w[rows]}
        if self._leaf_node:
            rows = np.array([row_of[n] for n in self._leaf_node])
            placed["leaves"] = {"x": x[rows] + np.asarray(self._leaf_dx, dtype=np.float32)}
        deepest = max(self._depth[i] for i in ids)
        self._frame(hi, self.margin - self._height_at_depth(deepest), reserve_depth,
                    root_x=float(x[0]))
        return placed

    def _frame(self, width: float, bottom: float, reserve_depth: int | None,
               root_x: float | None = None) -> None:
        """Send the tree's extent at scale 1, the height kept for the depth it may still
        reach and the root's x (a tree wider than the frame opens on its root); the
        browser fits them to the frame (_FIT_JS)."""
        height = self.margin - bottom
        self.natural_size = (width, height)
        reserve = 0.0 if reserve_depth is None else self._height_at_depth(reserve_depth)
        root = width / 2.0 if root_x is None else root_x
        self.extent.data = dict(lo=[0.0], hi=[width], height=[height], reserve=[reserve],
                                root=[root])

    def _height_at_depth(self, depth: int) -> float:
        """Height at scale 1 of a drawing whose deepest nodes are at ``depth``."""
        return 2 * self.margin + self.level_px * (depth + 1) - self.edge_px


#: Fits the drawing to the frame in the browser, where the frame's width is known (the
#: figure stretches to its column: ~620 px at 1366 x 768 beside the settings, ~1200 at
#: 1920): one scale for positions and fonts alike, so every label stays inside its box.
#: The scale fills the width, up to ``max_scale`` and ``max_frame_height``; below
#: ``min_scale`` the drawing keeps that scale and shows its left part (pan for the rest).
#: Runs when a frame brings a new extent, and when the figure's width changes (a resized
#: window, the sidebar hidden or shown: the plot's ``inner_width``).
_FIT_JS = CLIENT_ONLY_SETV_JS + """
// Client-only changes (set_local, explorer/_compat.py): the fit is the browser's business,
// and sending ranges, frame height and fonts back cost the server ~170 ms of CPU per data
// change.
function fit() {
  const width = fig.inner_width
  if (!(width > 0)) return
  const [lo, hi, height] = [extent.data.lo[0], extent.data.hi[0], extent.data.height[0]]
  const reserve = extent.data.reserve[0]
  const [min_scale, max_scale, max_height, min_height] = limits
  let scale = Math.min(max_scale, width / (hi - lo), max_height / height)
  const panned = scale < min_scale
  scale = Math.max(scale, min_scale)
  const span = width / scale
  // a tree wider than the frame is panned: it opens on its root, above the middle of the
  // tree, not on its left edge, where the top of the drawing was empty
  const root = extent.data.root[0]
  const start = panned ? Math.max(lo, Math.min(root - span / 2, hi - span))
                       : (lo + hi - span) / 2
  // A new frame height lays out the whole page (~100 ms in the browser, a frame's time).
  // During a fit the frame takes the height of the deepest tree the fit may grow
  // (``reserve``, at most scale 1) on its first frame, instead of growing at every new
  // depth: within ``max_height``; a drawing that outgrows ``max_height`` anyway (a wide
  // tree kept at the smallest readable scale) takes the whole reserve the first time it
  // does (Trees at its largest data: 2 layouts of the page instead of 7). The frame grows
  // in 40 px steps past that, and shrinks only for a much smaller complete drawing (a new
  // tree, or a fit that stopped shallower than it could have).
  const needed = Math.max(min_height, height * scale)
  const reserved = reserve * Math.min(1, scale)
  const wanted = Math.max(needed, needed > max_height ? reserved : Math.min(max_height, reserved))
  let frame_height = fig.frame_height
  if (wanted > frame_height || (reserve == 0 && needed < 0.6 * frame_height))
    frame_height = Math.max(min_height, Math.min(Math.ceil(wanted / 40) * 40,
                                                 Math.max(max_height, wanted)))
  frame_height = Math.round(frame_height)
  // Only what changed is set: every set repaints, and a glyph's font size recomputes the
  // visuals of all its texts (~10% of the browser's time during a Trees run, set per frame).
  const set_range = (range, start, end) => {
    if (range.start != start || range.end != end)
      set_local(range, {start: start, end: end, reset_start: start, reset_end: end})
  }
  set_range(fig.x_range, start, start + span)
  set_range(fig.y_range, -frame_height / scale, 0)
  if (fig.frame_height != frame_height) set_local(fig, {frame_height: frame_height})
  const set_font = (glyph, px) => {
    const size = `${(px * scale).toFixed(2)}px`
    const now = glyph.text_font_size
    if ((now != null && typeof now === "object" ? now.value : now) != size)
      set_local(glyph, {text_font_size: {value: size}})
  }
  set_font(node_text, fonts[0])
  set_font(leaf_text, fonts[1])
  if (pan_note.visible != panned) set_local(pan_note, {visible: panned})
}
fit()
"""


def _node_regions(nodes: Sequence[dict], bounds: tuple[float, float, float, float]
                  ) -> dict[int, tuple[float, float, float, float]]:
    """Rectangle ``(x0, x1, y0, y1)`` of every processed and pending node (2-D data)."""
    regions = {0: bounds}
    for node in sorted(nodes, key=lambda n: n["node"]):
        if node["feature"] is None or node["node"] not in regions:
            continue
        x0, x1, y0, y1 = regions[node["node"]]
        t = node["threshold"]
        if node["feature"] == 0:
            regions[node["left"]] = (x0, min(x1, t), y0, y1)
            regions[node["right"]] = (max(x0, t), x1, y0, y1)
        else:
            regions[node["left"]] = (x0, x1, y0, min(y1, t))
            regions[node["right"]] = (x0, x1, max(y0, t), y1)
    return regions


class PartitionView:
    """Each task's plane partitioned by the (partial) tree, for 2-D data.

    Regions where the task already has a decision leaf are filled with its label's colour
    (the class colours of the tree diagram, :func:`class_colors`);
    regions still pending (or whose node is not yet processed) are shown lightly with the
    majority label of the nearest processed ancestor. ``max_panels`` figures are made once;
    :meth:`set_data` re-targets them (a data set with fewer tasks hides the rest).
    """

    def __init__(self, X=None, y=None, task=None, classes=None, task_names=None, *,
                 width=300, height=280, max_panels: int = 4):
        self.width, self.height, self.max_panels = width, height, max_panels
        # panels are made the first time a 2-D data set needs them (the fewest models)
        self.sources, self.points, self.figures = [], [], []
        self.classes, self.task_names = [], []
        if X is not None:
            self.set_data(X, y, task, classes, task_names)

    def _add_panel(self) -> None:
        source = ColumnDataSource(dict(left=[], right=[], bottom=[], top=[], color=[],
                                       alpha=[]))
        points = ColumnDataSource(dict(x=[], y=[], color=[]))
        fig = figure(width=self.width, height=self.height, title="", x_range=Range1d(0, 1),
                     y_range=Range1d(0, 1), tools="pan,wheel_zoom,reset,save")
        fig.quad("left", "right", "top", "bottom", source=source, fill_color="color",
                 fill_alpha="alpha", line_color="white", line_width=1)
        fig.scatter("x", "y", color="color", size=4, line_color="black", line_width=0.3,
                    source=points)
        _style(fig)
        self.sources.append(source)
        self.points.append(points)
        self.figures.append(fig)

    def set_data(self, X, y, task, classes, task_names) -> None:
        """Re-target the panels to a 2-D data set (in place: ranges, points, titles)."""
        self.classes = [list(c) for c in classes]
        self.task_names = list(task_names)
        self.class_color = class_colors(self.classes, len(self.task_names))
        while len(self.figures) < min(len(self.task_names), self.max_panels):
            self._add_panel()
        pad = 0.05 * (X.max(axis=0) - X.min(axis=0) + 1e-9)
        self.bounds = (float(X[:, 0].min() - pad[0]), float(X[:, 0].max() + pad[0]),
                       float(X[:, 1].min() - pad[1]), float(X[:, 1].max() + pad[1]))
        for j, fig in enumerate(self.figures):
            fig.visible = j < len(self.task_names)
            self.sources[j].data = dict(left=[], right=[], bottom=[], top=[], color=[],
                                        alpha=[])
            if not fig.visible:
                self.points[j].data = dict(x=[], y=[], color=[])
                continue
            rows = task == j
            self.points[j].data = dict(x=X[rows, 0].tolist(), y=X[rows, 1].tolist(),
                                       color=[self.class_color[v] for v in y[rows]])
            fig.title.text = f"{self.task_names[j]}: partition"
            fig.x_range.start, fig.x_range.end = self.bounds[:2]
            fig.y_range.start, fig.y_range.end = self.bounds[2:]

    def update(self, nodes: Sequence[dict]) -> None:
        if not nodes or not self.task_names:
            for source in self.sources:
                source.data = dict(left=[], right=[], bottom=[], top=[], color=[], alpha=[])
            return
        regions = _node_regions(nodes, self.bounds)
        by_id = {n["node"]: n for n in nodes}
        parent_of = {}
        for n in nodes:
            if n["feature"] is not None:
                parent_of[n["left"]] = n["node"]
                parent_of[n["right"]] = n["node"]
        for j, source in enumerate(self.sources[:len(self.task_names)]):
            palette = [self.class_color[label] for label in self.classes[j]]
            data = dict(left=[], right=[], bottom=[], top=[], color=[], alpha=[])
            for node_id, (x0, x1, y0, y1) in regions.items():
                node = by_id.get(node_id)
                code, alpha = None, 0.45
                if node is not None:
                    leaf = next((lf for lf in node["early_leaves"] if lf["task"] == j), None)
                    if leaf is not None:
                        code = self.classes[j].index(leaf["label"])
                    elif node["feature"] is not None and j in node["active_tasks"]:
                        continue  # refined by the children
                    else:
                        continue  # this task stopped higher up
                else:
                    parent = by_id[parent_of[node_id]]
                    if j not in parent["active_tasks"] or any(
                            lf["task"] == j for lf in parent["early_leaves"]):
                        continue
                    counts = parent["class_counts"][j]
                    code, alpha = int(np.argmax(counts)), 0.15
                data["left"].append(x0)
                data["right"].append(x1)
                data["bottom"].append(y0)
                data["top"].append(y1)
                data["color"].append(palette[code])
                data["alpha"].append(alpha)
            # numbers as float32 arrays: sent as binary, not encoded one by one (every frame
            # of a run redraws every task's plane)
            source.data = {key: values if key == "color" else np.asarray(values, np.float32)
                           for key, values in data.items()}


class GainBars:
    """Per-task information gain of the chosen split; the deciding task is highlighted."""

    def __init__(self, task_names, *, width=440, height=300):
        self.task_names = list(task_names)
        self.colors = task_colors(len(task_names))
        self.source = ColumnDataSource(dict(task=self.task_names,
                                            gain=[0.0] * len(task_names),
                                            color=self.colors,
                                            alpha=[0.35] * len(task_names),
                                            line=[0] * len(task_names)))
        fig = figure(x_range=self.task_names, width=width, height=height,
                     title="Per-task gain of the chosen split (bits)", y_range=Range1d(0, 1),
                     tools="save", toolbar_location=None, y_axis_label="IG(Y_j; split)")
        fig.vbar(x="task", top="gain", width=0.7, source=self.source, fill_color="color",
                 fill_alpha="alpha", line_color="black", line_width="line")
        fig.add_tools(HoverTool(tooltips=[("task", "@task"), ("gain", "@gain{0.0000}")]))
        _style(fig)
        fig.title.text_font_size = "11pt"
        self.ig_j_line = Span(location=0, dimension="width", line_dash="dashed",
                              line_color="#444444", line_width=2, visible=False)
        fig.add_layout(self.ig_j_line)
        self.figure = fig
        self.set_names(task_names)

    def set_names(self, task_names) -> None:
        """Re-target to other tasks (axis factors, colours; slanted labels when crowded)."""
        self.task_names = [str(n) for n in task_names]
        self.colors = task_colors(len(self.task_names))
        self.figure.x_range.factors = self.task_names
        needed = sum(text_width(name, 15) + 12 for name in self.task_names)
        self.figure.xaxis.major_label_orientation = (
            0.0 if needed <= 0.85 * self.figure.width else 0.8)
        category_ticks(self.figure.xaxis, len(self.task_names))
        self.source.data = dict(task=self.task_names, color=self.colors,
                                **self._numbers(len(self.task_names)))
        self.update(None)

    @staticmethod
    def _numbers(m: int, gains=None, winner: int | None = None) -> dict:
        """The bars' number columns for ``m`` tasks, float32 (sent as binary): ``gains``
        with the ``winner`` task's bar outlined, or empty bars."""
        decided = np.arange(m) == winner
        return dict(gain=np.zeros(m, np.float32) if gains is None
                    else np.asarray(gains, np.float32),
                    alpha=np.where(decided, 1.0, 0.35).astype(np.float32),
                    line=np.where(decided, 3.0, 0.0).astype(np.float32))

    def update(self, node: dict | None, last_split: dict | None = None) -> None:
        """Show the gains of ``node`` (a snapshot record). At a leaf node the chart shows
        ``last_split`` (the newest node that split, if any; the title says so), so a
        finished fit keeps a split on screen; with neither (or no node) the bars and the
        IG_J line are cleared.

        Only the numbers change, as float32 arrays (sent as binary): the task names and
        colours are set by :meth:`set_names`. Lists were encoded element by element, ~5 KB
        and a few ms of the server's time a frame at 100 tasks."""
        m = len(self.task_names)
        shown = node if node is not None and node.get("gains") is not None else (
            last_split if node is not None else None)
        if shown is None or shown.get("gains") is None:
            set_columns(self.source, **self._numbers(m))
            self.ig_j_line.visible = False
            self.figure.title.text = ("Per-task gain of the chosen split (bits)" if node is None
                                      else f"node {node['node']}: a leaf, no split")
            return
        gains = np.nan_to_num(np.asarray(shown["gains"]["task"], dtype=float))
        set_columns(self.source, **self._numbers(m, gains, shown["deciding_task"]))
        g = shown["gains"]
        self.ig_j_line.location = float(g["ig_j"])
        self.ig_j_line.visible = True
        # the pooled gain may exceed every task's: the axis shows both
        self.figure.y_range.end = 1.1 * max(float(gains.max(initial=0.0)), float(g["ig_j"]),
                                            0.05)
        if shown is node:
            self.figure.title.text = (f"node {node['node']}: IG_M {g['ig_m']:.2f}, "
                                      f"IG_U {g['ig_u']:.2f}, IG_J {g['ig_j']:.2f} (dashed)")
        else:
            self.figure.title.text = (f"last split, node {shown['node']}: IG_M "
                                      f"{g['ig_m']:.2f}, IG_U {g['ig_u']:.2f}, "
                                      f"IG_J {g['ig_j']:.2f}")


def theorem1_boxplot(ratios: dict[str, dict[str, np.ndarray]], *, width=560, height=300):
    """Figure 3 of the paper: box plots of IG_M / IG_J and IG_U / IG_J per data-set family.

    ``ratios[family] = {"ig_m": array, "ig_u": array}`` (see
    :func:`explorer.solvers.tree_split.relative_gains`).
    """
    families = list(ratios)
    factors = [(fam, crit) for fam in families for crit in ("IG_M", "IG_U")]
    from bokeh.models import FactorRange

    fig = figure(x_range=FactorRange(*factors), width=width, height=height,
                 title="Best IG_M (blue) and IG_U (red) relative to best IG_J",
                 y_axis_label="ratio to IG_J", tools="save", toolbar_location=None)
    data = dict(x=[], q1=[], q2=[], q3=[], low=[], high=[], color=[])
    for fam in families:
        for crit, color in (("IG_M", "#1f77b4"), ("IG_U", "#d62728")):
            values = np.asarray(ratios[fam][crit.lower()], dtype=float)
            q1, q2, q3 = np.percentile(values, [25, 50, 75])
            iqr = q3 - q1
            data["x"].append((fam, crit))
            data["q1"].append(q1)
            data["q2"].append(q2)
            data["q3"].append(q3)
            data["low"].append(float(values[values >= q1 - 1.5 * iqr].min()))
            data["high"].append(float(values[values <= q3 + 1.5 * iqr].max()))
            data["color"].append(color)
    source = ColumnDataSource(data)
    fig.segment("x", "low", "x", "high", source=source, line_color="black")
    fig.vbar("x", 0.6, "q2", "q3", source=source, fill_color="color", fill_alpha=0.6,
             line_color="black")
    fig.vbar("x", 0.6, "q1", "q2", source=source, fill_color="color", fill_alpha=0.6,
             line_color="black")
    fig.add_layout(Span(location=1.0, dimension="width", line_dash="dashed"))
    fig.xaxis.major_label_orientation = 0.9
    fig.xaxis.group_label_orientation = 0.0
    _style(fig)
    return fig


# ---------------------------------------------------------------------- protocol views
def _task_classes(dataset) -> list[np.ndarray]:
    return [np.unique(dataset.y[dataset.task == t]) for t in range(dataset.n_tasks)]


class TreeDiagramView(LiveView):
    """The growing tree of MT-DT snapshots (``info["tree"]``, ``info["node"]``).

    Snapshots without a tree (MT-Adaboost rounds) leave the diagram as it is.
    """

    #: The most nodes drawn (a deeper tree says how many it left out).
    max_nodes = 255

    def __init__(self, **figure):
        self.diagram = TreeDiagram(["T0"], [[0, 1]], ["x0"], **figure)
        self.figures = [self.diagram.figure]

    def set_data(self, dataset) -> None:
        self.diagram.set_names(dataset.task_names, _task_classes(dataset),
                               dataset.feature_names)
        self.clear()

    def update(self, snapshot) -> None:
        nodes = snapshot.info.get("tree")
        if nodes is None:
            return
        node = snapshot.info["node"]
        shown = nodes if len(nodes) <= self.max_nodes else nodes[:self.max_nodes]
        title = f"MT-DT ({str(snapshot.info.get('criterion', '')).upper()}): {len(nodes)} nodes"
        if len(nodes) > self.max_nodes:
            title += f", the first {self.max_nodes} drawn"
        growing = snapshot.info.get("n_pending", 0) > 0
        self.diagram.update(shown, highlight=node["node"], title=title, n_total=len(nodes),
                            reserve_depth=snapshot.info.get("max_depth") if growing else None)

    def clear(self) -> None:
        self.diagram.update([], title="MT-DT: click Step to add a node")


class GainBarsView(LiveView):
    """Per-task gains of the newest node (``info["node"]``); at a leaf, of the newest node
    of the tree that split (so the end of a fit shows its last split)."""

    def __init__(self, **figure):
        self.bars = GainBars(["T0"], **figure)
        self.figures = [self.bars.figure]

    def set_data(self, dataset) -> None:
        self.bars.set_names(dataset.task_names)

    def update(self, snapshot) -> None:
        if "node" not in snapshot.info:
            return
        node = snapshot.info["node"]
        last_split = None
        if node.get("gains") is None:   # the records are in the order they were processed
            last_split = next((n for n in reversed(snapshot.info.get("tree") or ())
                               if n.get("gains") is not None), None)
        self.bars.update(node, last_split)

    def clear(self) -> None:
        self.bars.update(None)


class PartitionLiveView(LiveView):
    """Each task's plane partitioned by the tree so far (2-D data; otherwise hidden)."""

    def __init__(self, **figure):
        self.view = PartitionView(**figure)
        self.figures = self.view.figures

    def set_data(self, dataset) -> None:
        if dataset.n_features != 2:
            self.view.task_names = []
            for fig in self.figures:
                fig.visible = False
            return
        self.view.set_data(dataset.X, dataset.y, dataset.task, _task_classes(dataset),
                           dataset.task_names)

    def update(self, snapshot) -> None:
        nodes = snapshot.info.get("tree")
        if nodes is not None and self.view.task_names:
            self.view.update(nodes)

    def clear(self) -> None:
        self.view.update([])


class BoostingView(LiveView):
    """MT-Adaboost round by round: per-task weighted training error, ``beta_t`` and the weak
    learner's error ``eps_t`` (Algorithm 2). An *accumulating* view: the kit hands it every
    recorded round in order (and replays them after a scrub back)."""

    accumulates = True
    max_tasks = 10

    def __init__(self, *, width=560, height=280):
        self.width, self.height = width, height
        # made at the first boosting round (a single tree has none: the fewest models)
        self.figures: list = []
        self.task_names: list[str] = []
        self.n_tasks = 0

    def _build(self) -> None:
        width, height = self.width, self.height
        self.error_source = ColumnDataSource(self._empty())
        self.beta_source = ColumnDataSource(dict(round=[], beta=[], weak_error=[]))
        err = figure(width=width, height=height, title="MT-Adaboost: training error per task",
                     x_axis_label="round", y_axis_label="error", tools="save,reset")
        colors = task_colors(self.max_tasks)
        self._lines = [err.line("round", f"train_{j}", source=self.error_source,
                                color=colors[j], line_width=2, legend_label=f"task {j}")
                       for j in range(self.max_tasks)]
        err.legend.label_text_font_size = "9pt"
        err.legend.location = "top_right"
        err.y_range.start = 0
        beta = figure(width=width - 140, height=height, title="beta_t and weak error eps_t",
                      x_axis_label="round", tools="save,reset")
        beta.line("round", "beta", source=self.beta_source, line_width=2, legend_label="beta_t")
        beta.scatter("round", "weak_error", source=self.beta_source, color="firebrick",
                     legend_label="eps_t")
        beta.add_layout(Span(location=0.5, dimension="width", line_dash="dotted",
                             line_color="firebrick"))
        beta.y_range.start = 0
        beta.legend.label_text_font_size = "9pt"
        beta.legend.location = "top_left"
        for fig in (err, beta):
            _style(fig)
        self.figures = [err, beta]
        self._label_lines()

    def _empty(self):
        return {"round": [], **{f"train_{j}": [] for j in range(self.max_tasks)}}

    def _label_lines(self) -> None:
        legend = self.figures[0].legend[0]
        for j, (line, item) in enumerate(zip(self._lines, legend.items, strict=True)):
            line.visible = item.visible = j < self.n_tasks
            if j < len(self.task_names):
                item.label = {"value": self.task_names[j]}

    def set_data(self, dataset) -> None:
        self.n_tasks = min(dataset.n_tasks, self.max_tasks)
        self.task_names = [str(n) for n in dataset.task_names]
        if self.figures:
            self._label_lines()
        self.clear()

    def update(self, snapshot) -> None:
        self.extend([snapshot])

    def extend(self, snapshots) -> None:
        rounds = [s.info for s in snapshots if "round" in s.info]
        if not rounds:
            return
        errors = np.zeros((len(rounds), self.max_tasks))
        for k, info in enumerate(rounds):
            train = np.asarray(info["train_error"], dtype=float)[:self.max_tasks]
            errors[k, :len(train)] = train
        steps = [info["round"] for info in rounds]
        if not self.figures:
            self._build()
        for fig in self.figures:   # shown once there is boosting to show
            fig.visible = True
        append_rows(self.error_source, {"round": steps, **{
            f"train_{j}": errors[:, j].tolist() for j in range(self.max_tasks)}})
        append_rows(self.beta_source, {"round": steps,
                                       "beta": [float(info["beta"]) for info in rounds],
                                       "weak_error": [float(info["weak_error"])
                                                      for info in rounds]})

    def clear(self) -> None:
        if not self.figures:
            return
        self.error_source.data = self._empty()
        self.beta_source.data = dict(round=[], beta=[], weak_error=[])
        for fig in self.figures:   # a single tree has no rounds: no empty frames on screen
            fig.visible = False
