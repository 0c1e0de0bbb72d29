"""Live views of multi-task decision trees and MT-Adaboost (plain Bokeh, no Panel).

Each view owns its figure and ``ColumnDataSource``s and has an ``update(...)`` that patches
them in place (``source.data = ...``), as the live-view pattern of DESIGN.md asks:

* :class:`TreeDiagram` -- the (partial) tree from a ``Snapshot.info["tree"]``: nodes
  labelled ``feature <= threshold``, per-task class distributions as small stacked bars,
  per-task early leaves as squares in the task's colour, pending nodes in grey;
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
from bokeh.models import ColumnDataSource, HoverTool, Range1d, Span
from bokeh.plotting import figure

from .live import LiveView
from .style import label_colors as _label_palette
from .style import style_figure as _style
from .style import task_colors

__all__ = ["BoostingView", "GainBars", "GainBarsView", "PartitionLiveView",
           "PartitionView", "TreeDiagram", "TreeDiagramView", "task_colors", "theorem1_boxplot",
           "tree_layout"]



def tree_layout(nodes: Sequence[dict]) -> dict[int, tuple[float, float]]:
    """Positions ``{node id: (x, y)}`` of processed and pending nodes (y = -depth).

    Leaves (and pending nodes) get consecutive x in depth-first order; an internal node sits
    above the middle of its children.

    >>> tree_layout([{"node": 0, "depth": 0, "left": 1, "right": 2, "feature": 0}])
    {1: (0.0, -1.0), 2: (1.0, -1.0), 0: (0.5, 0.0)}
    """
    by_id = {n["node"]: n for n in nodes}
    position: dict[int, tuple[float, float]] = {}
    next_x = [0.0]

    def place(node_id: int, depth: int) -> float:
        node = by_id.get(node_id)
        if node is None or node.get("feature") is None:
            position[node_id] = (next_x[0], -float(depth) + 0.0)
            next_x[0] += 1.0
            return position[node_id][0]
        x = 0.5 * (place(node["left"], depth + 1) + place(node["right"], depth + 1))
        position[node_id] = (x, -float(depth) + 0.0)
        return x

    if by_id:
        place(0, 0)
    return position


class TreeDiagram:
    """The tree as a node-link diagram, patched in place as it grows.

    A growing tree only appends node records (a prefix stays valid), so each frame sends
    what changed: the new nodes, edges, class bars and early leaves are *streamed* once, a
    pending node that gets processed is *patched*, and only the positions (plain numbers:
    adding a split shifts the layout) are replaced. A record list that is not an extension
    of the one drawn (a new fit, a scrub back) is drawn afresh.

    Per-task detail is capped for readability and frame size: class bars for the first
    ``max_bar_tasks`` tasks, hover text for the first ``max_hover_tasks``.

    Parameters
    ----------
    task_names : list of str
    classes : list of array, each task's labels (for the class-distribution bars)
    feature_names : list of str
    """

    max_bar_tasks = 8
    max_hover_tasks = 8
    _NODE_COLUMNS = ("x", "y", "text", "fill", "line", "node", "counts", "gains")

    def __init__(self, task_names, classes, feature_names, *, width=760, height=420):
        self.task_names = list(task_names)
        self.classes = [list(c) for c in classes]
        self.feature_names = list(feature_names)
        self.colors = task_colors(len(task_names))
        self.edges = ColumnDataSource(dict(x0=[], y0=[], x1=[], y1=[]))
        self.nodes = ColumnDataSource({c: [] for c in self._NODE_COLUMNS},
                                      name="mtdt_tree_nodes")
        self.bars = ColumnDataSource(dict(left=[], right=[], top=[], bottom=[], color=[]))
        self.leaves = ColumnDataSource(dict(x=[], y=[], color=[], text=[], task=[]))
        fig = figure(width=width, height=height, title="MT-DT: click Step to add a node",
                     tools="pan,wheel_zoom,reset,save", toolbar_location="right",
                     x_range=Range1d(-1, 1), y_range=Range1d(-1.2, 0.5))
        fig.segment("x0", "y0", "x1", "y1", source=self.edges, line_color="#999999",
                    line_width=1.5)
        box = fig.rect("x", "y", width=0.9, height=0.32, source=self.nodes,
                       fill_color="fill", line_color="line", line_width=2)
        fig.text("x", "y", text="text", source=self.nodes, text_align="center",
                 text_baseline="middle", text_font_size="9pt")
        fig.quad("left", "right", "top", "bottom", source=self.bars, fill_color="color",
                 line_color=None)
        fig.scatter("x", "y", marker="square", size=13, source=self.leaves,
                    fill_color="color", line_color="black")
        fig.text("x", "y", text="text", source=self.leaves, x_offset=9, y_offset=5,
                 text_font_size="8pt", text_baseline="middle")
        fig.add_tools(HoverTool(renderers=[box], tooltips=[
            ("node", "@node"), ("weighted class counts", "@counts"), ("task gains", "@gains")]))
        fig.axis.visible = False
        fig.grid.visible = False
        _style(fig)
        self.figure = fig
        self._forget()

    def _forget(self) -> None:
        """Empty the sources and what is known about the drawn tree."""
        self._drawn: list[int] = []          # processed node ids, in record order
        self._processed: set[int] = set()
        self._row: dict[int, int] = {}       # node id -> row of the nodes source
        self._edge_child: list[int] = []     # per edge row: the child's node id
        self._bar_node: list[int] = []       # per bar row: its node id
        self._bar_dx: list[tuple[float, float]] = []
        self._leaf_node: list[int] = []
        self._leaf_dx: list[float] = []
        self._highlight: int | None = None
        self.edges.data = dict(x0=[], y0=[], x1=[], y1=[])
        self.nodes.data = {c: [] for c in self._NODE_COLUMNS}
        self.bars.data = dict(left=[], right=[], top=[], bottom=[], color=[])
        self.leaves.data = dict(x=[], y=[], color=[], text=[], task=[])

    def _extends_drawn(self, nodes: Sequence[dict]) -> bool:
        k = len(self._drawn)
        return k == 0 or (len(nodes) >= k and nodes[0]["node"] == self._drawn[0]
                          and nodes[k - 1]["node"] == self._drawn[-1])

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
        text = ("leaf" if node["feature"] is None else
                f"{self.feature_names[node['feature']]} <= {node['threshold']:.3g}")
        line = (self.colors[node["deciding_task"]] if node["deciding_task"] is not None
                else "#555555")
        return {"text": text, "fill": "white", "line": line, "counts": counts, "gains": gains}

    def update(self, nodes: Sequence[dict], highlight: int | None = None,
               title: str | None = None) -> None:
        """Show the node records of ``Snapshot.info["tree"]`` (see the class docstring)."""
        if not self._extends_drawn(nodes):
            self._forget()
        position = tree_layout(nodes)
        y_of = {node_id: xy[1] for node_id, xy in position.items()}
        new_rows = {c: [] for c in self._NODE_COLUMNS}
        new_edges = dict(x0=[], y0=[], x1=[], y1=[])
        new_bars = dict(left=[], right=[], top=[], bottom=[], color=[])
        new_leaves = dict(x=[], y=[], color=[], text=[], task=[])
        patches: dict[str, list] = {c: [] for c in ("text", "fill", "line", "counts", "gains")}

        def add_row(node_id: int, columns: dict) -> None:
            self._row[node_id] = len(self._row)
            new_rows["node"].append(node_id)
            new_rows["x"].append(0.0)
            new_rows["y"].append(y_of[node_id])
            for c in ("text", "fill", "line", "counts", "gains"):
                new_rows[c].append(columns[c])

        pending = {"text": "pending", "fill": "#eeeeee", "line": "#bbbbbb", "counts": "",
                   "gains": ""}
        for node in nodes[len(self._drawn):]:
            node_id, y = node["node"], y_of[node["node"]]
            columns = self._describe(node)
            if node_id in self._row:          # a pending node got processed
                row = self._row[node_id]
                for c, value in columns.items():
                    patches[c].append((row, value))
            else:
                add_row(node_id, columns)
            self._drawn.append(node_id)
            self._processed.add(node_id)
            if node["feature"] is not None:   # its children appear, pending
                for child in (node["left"], node["right"]):
                    if child not in self._row:
                        add_row(child, pending)
                    self._edge_child.append(child)
                    for key in new_edges:
                        new_edges[key].append(0.0)
            # per-task class distribution: one thin stacked bar per task under the box
            for j, cc in enumerate(node["class_counts"][:self.max_bar_tasks]):
                total = float(np.sum(cc))
                if total <= 0:
                    continue
                left, top = -0.4, y - 0.17 - 0.07 * j
                palette = _label_palette(len(cc))
                for k, c in enumerate(cc):
                    if c <= 0:
                        continue
                    right = left + 0.8 * c / total
                    self._bar_node.append(node_id)
                    self._bar_dx.append((left, right))
                    new_bars["left"].append(0.0)
                    new_bars["right"].append(0.0)
                    new_bars["top"].append(top)
                    new_bars["bottom"].append(top - 0.055)
                    new_bars["color"].append(palette[k])
                    left = right
            for k, leaf in enumerate(node["early_leaves"]):
                j = leaf["task"]
                self._leaf_node.append(node_id)
                self._leaf_dx.append(-0.42 + 0.3 * (k % 3))
                new_leaves["x"].append(0.0)
                new_leaves["y"].append(y + 0.27 + 0.12 * (k // 3))
                new_leaves["color"].append(self.colors[j])
                new_leaves["text"].append(str(leaf["label"]))
                new_leaves["task"].append(self.task_names[j])
        if highlight != self._highlight:
            for node_id, fill in ((self._highlight, "white"), (highlight, "#fff3c4")):
                if node_id in self._processed:
                    patches["fill"].append((self._row[node_id], fill))
            self._highlight = highlight
        for source, rows in ((self.nodes, new_rows), (self.edges, new_edges),
                             (self.bars, new_bars), (self.leaves, new_leaves)):
            if next(iter(rows.values())):
                source.stream(rows)
        patches = {c: p for c, p in patches.items() if p}
        if patches:
            self.nodes.patch(patches)
        self._place(position, nodes)
        if title is not None:
            self.figure.title.text = title

    def _place(self, position: dict[int, tuple[float, float]], nodes: Sequence[dict]) -> None:
        """Replace the position columns (numbers only) after the layout moved."""
        ids = self.nodes.data["node"]
        if not len(ids):
            return
        x = np.array([position[i][0] for i in ids], dtype=float)
        x_of = dict(zip(ids, x.tolist(), strict=True))
        y_of = {i: position[i][1] for i in ids}
        parent_of = {}
        for node in nodes:
            if node["feature"] is not None:
                parent_of[node["left"]] = parent_of[node["right"]] = node["node"]
        self.nodes.data.update(x=x, y=np.array([y_of[i] for i in ids], dtype=float))
        if self._edge_child:
            parents = [parent_of[c] for c in self._edge_child]
            self.edges.data.update(
                x0=np.array([x_of[p] for p in parents]),
                y0=np.array([y_of[p] - 0.16 for p in parents]),
                x1=np.array([x_of[c] for c in self._edge_child]),
                y1=np.array([y_of[c] + 0.16 for c in self._edge_child]))
        if self._bar_node:
            centre = np.array([x_of[n] for n in self._bar_node])
            dx = np.asarray(self._bar_dx)
            self.bars.data.update(left=centre + dx[:, 0], right=centre + dx[:, 1])
        if self._leaf_node:
            self.leaves.data.update(x=np.array([x_of[n] for n in self._leaf_node])
                                    + np.asarray(self._leaf_dx))
        m = min(len(self.task_names), self.max_bar_tasks)
        xs = x.tolist() or [0.0]
        ys = list(y_of.values()) or [0.0]
        self.figure.x_range.start, self.figure.x_range.end = min(xs) - 0.8, max(xs) + 0.8
        self.figure.y_range.start = min(ys) - 0.2 - 0.07 * m
        self.figure.y_range.end = 0.7


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

    Regions where the task already has a decision leaf are filled with its label's colour;
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
            palette = _label_palette(len(classes[j]))
            index = {label: k for k, label in enumerate(classes[j])}
            self.points[j].data = dict(x=X[rows, 0].tolist(), y=X[rows, 1].tolist(),
                                       color=[palette[index[v]] for v in y[rows]])
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
            palette = _label_palette(len(self.classes[j]))
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
            source.data = data


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
                     title="Per-task gain of the chosen split (bits)",
                     tools="save", toolbar_location=None, y_axis_label="IG(Y_j; split)")
        fig.vbar(x="task", top="gain", width=0.7, source=self.source, fill_color="color",
                 fill_alpha="alpha", line_color="black", line_width="line")
        fig.y_range.start = 0
        fig.add_tools(HoverTool(tooltips=[("task", "@task"), ("gain", "@gain{0.0000}")]))
        fig.title.text_font_size = "11pt"
        self.ig_j_line = Span(location=0, dimension="width", line_dash="dashed",
                              line_color="#444444")
        fig.add_layout(self.ig_j_line)
        fig.toolbar.logo = None
        self.figure = fig

    def update(self, node: dict | None) -> None:
        """Show the gains of ``node`` (a snapshot record); a leaf node clears the bars."""
        m = len(self.task_names)
        if node is None or node.get("gains") is None:
            self.source.data = dict(task=self.task_names, gain=[0.0] * m, color=self.colors,
                                    alpha=[0.35] * m, line=[0] * m)
            self.figure.title.text = "Per-task gain (no split at this node)"
            return
        gains = np.nan_to_num(np.asarray(node["gains"]["task"], dtype=float))
        winner = node["deciding_task"]
        self.source.data = dict(task=self.task_names, gain=gains.tolist(), color=self.colors,
                                alpha=[1.0 if j == winner else 0.35 for j in range(m)],
                                line=[3 if j == winner else 0 for j in range(m)])
        g = node["gains"]
        self.ig_j_line.location = float(g["ig_j"])
        self.figure.title.text = (f"node {node['node']}: IG_M {g['ig_m']:.2f}, "
                                  f"IG_U {g['ig_u']:.2f}, IG_J {g['ig_j']:.2f} (dashed)")


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
        d = self.diagram
        d.task_names = [str(n) for n in dataset.task_names]
        d.classes = [list(c) for c in _task_classes(dataset)]
        d.feature_names = [str(n) for n in dataset.feature_names]
        d.colors = task_colors(dataset.n_tasks)
        self.clear()

    def update(self, snapshot) -> None:
        nodes = snapshot.info.get("tree")
        if nodes is None:
            return
        node = snapshot.info["node"]
        shown = nodes if len(nodes) <= self.max_nodes else nodes[:self.max_nodes]
        title = f"MT-DT ({str(snapshot.info.get('criterion', '')).upper()}): {len(nodes)} nodes"
        if len(nodes) > self.max_nodes:
            title += f" (the first {self.max_nodes} drawn)"
        self.diagram.update(shown, highlight=node["node"], title=title)

    def clear(self) -> None:
        self.diagram.update([], title="MT-DT: click Step to add a node")


class GainBarsView(LiveView):
    """Per-task gains of the newest split (``info["node"]``)."""

    def __init__(self, **figure):
        self.bars = GainBars(["T0"], **figure)
        self.figures = [self.bars.figure]

    def set_data(self, dataset) -> None:
        b = self.bars
        b.task_names = [str(n) for n in dataset.task_names]
        b.colors = task_colors(dataset.n_tasks)
        b.figure.x_range.factors = b.task_names
        self.clear()

    def update(self, snapshot) -> None:
        if "node" in snapshot.info:
            self.bars.update(snapshot.info["node"])

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
        self.error_source.stream({"round": steps, **{f"train_{j}": errors[:, j].tolist()
                                                     for j in range(self.max_tasks)}})
        self.beta_source.stream({"round": steps,
                                 "beta": [float(info["beta"]) for info in rounds],
                                 "weak_error": [float(info["weak_error"]) for info in rounds]})

    def clear(self) -> None:
        if not self.figures:
            return
        self.error_source.data = self._empty()
        self.beta_source.data = dict(round=[], beta=[], weak_error=[])
        for fig in self.figures:   # a single tree has no rounds: no empty frames on screen
            fig.visible = False
