"""Static views of a multi-task dataset: a 2-D scatter per task (plain Bokeh, no Panel), as
one figure with a panel per task (:class:`TaskScatterGrid`, the app's Tasks page) or a figure
per task (:func:`task_scatter_figures`).

With two features the axes are the features themselves; with more, every task is drawn in
the same 2-D projection, so that positions are comparable from task to task: the plane of
the directions along which the tasks' labels change (:func:`label_directions`), where a
task's classes fall apart and related tasks look alike; a PCA of all tasks' examples when
no labels are given. The axis labels say which, with each axis' share. Axis ranges are
shared across the tasks for the same reason.

>>> import numpy as np
>>> from explorer.data import MultiTaskDataset
>>> ds = MultiTaskDataset(np.eye(4), [0, 1, 0, 1], [0, 0, 1, 1])
>>> Z, labels = project_2d(ds.X, ds.feature_names)
>>> Z.shape, labels[0].startswith("PC1")
((4, 2), True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from bokeh.layouts import gridplot
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    LinearColorMapper,
    Range1d,
)
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from explorer.data import MultiTaskDataset

from . import style

__all__ = ["TaskScatterGrid", "label_colors", "label_directions", "project_2d", "scatter_frame",
           "task_scatter_figures", "task_scatter_grid", "truth_matrices"]

#: Points drawn per task panel at most (a random, fixed subset beyond): the browser draws
#: what a person can see, not the 100,000 rows a large task may have.
MAX_POINTS_PER_PANEL = 2000



def label_directions(X: np.ndarray, y: np.ndarray, task: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The directions along which the tasks' labels change, most shared first.

    Each task contributes ``X_t^T Y_t`` (its centred examples against its centred labels:
    one column for a numeric target, one per class otherwise), scaled to unit norm so every
    task counts alike; the left singular vectors of all tasks' columns together are the
    directions. A negated task adds the same direction as its base task, an unrelated one
    a direction of its own.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), numbers or class labels
    task : ndarray of shape (n_samples,), task indices

    Returns
    -------
    directions : ndarray of shape (n_features, k), orthonormal columns (k <= n_features);
        the first points the way task 0's labels grow
    share : ndarray of shape (k,), each direction's share of the tasks' label variation

    >>> X = np.array([[1.0, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]])
    >>> d, share = label_directions(X, np.array([1, 0, 1, 0]), np.array([0, 0, 1, 1]))
    >>> np.round(np.abs(d[:, :2]), 6).tolist(), np.round(share, 2).tolist()
    ([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], [0.5, 0.5])
    """
    X, y, task = np.asarray(X, dtype=np.float64), np.asarray(y), np.asarray(task)
    numeric = np.issubdtype(y.dtype, np.number) and np.unique(y).size > 2
    columns = []
    for t in np.unique(task):
        rows = task == t
        Xt = X[rows] - X[rows].mean(axis=0)
        if numeric:
            Yt = y[rows, None].astype(np.float64)
        else:
            Yt = (y[rows, None] == np.unique(y[rows])[None, :]).astype(np.float64)
        Yt = Yt - Yt.mean(axis=0)
        block = Xt.T @ Yt
        norm = np.linalg.norm(block)
        if norm > 0:
            columns.append(block / norm)
    if not columns:
        return np.zeros((X.shape[1], 0)), np.zeros(0)
    directions, singular, _ = np.linalg.svd(np.hstack(columns), full_matrices=False)
    first = columns[0][:, -1]        # task 0's last class (or its target) grows rightwards
    if first @ directions[:, 0] < 0:
        directions[:, 0] *= -1
    keep = singular > 1e-12 * singular[0]
    return directions[:, keep], singular[keep] ** 2 / np.sum(singular**2)


def project_2d(X: np.ndarray, feature_names: Sequence[str] | None = None, y=None, task=None
               ) -> tuple[np.ndarray, tuple[str, str]]:
    """Coordinates for a 2-D picture of ``X`` and the two axis labels.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    feature_names : list of str, optional
    y, task : ndarray of shape (n_samples,), optional
        Labels and task indices: with them (and more than two features) the picture is
        the plane of the first two :func:`label_directions`.

    Returns
    -------
    Z : ndarray of shape (n_samples, 2)
        ``X`` itself for two features; ``(x, 0)`` for one; otherwise the scores on the
        first two label directions, or (without labels) on the first two principal
        components of ``X`` (all rows, i.e. all tasks together).
    labels : (str, str)
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(d)]
    if d == 1:
        return np.column_stack([X[:, 0], np.zeros(n)]), (names[0], "(one feature)")
    if d == 2:
        return X.copy(), (names[0], names[1])
    centred = X - X.mean(axis=0)
    if y is not None and task is not None:
        directions, share = label_directions(X, y, task)
        if directions.shape[1] >= 2:
            return centred @ directions[:, :2], (
                f"Direction 1 of the tasks' labels ({share[0]:.0%})",
                f"Direction 2 ({share[1]:.0%})")
    # economy SVD: the right singular vectors are the principal axes
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    Z = centred @ vt[:2].T
    total = float(np.sum(singular**2))
    share = singular[:2] ** 2 / total if total > 0 else np.zeros(2)
    return Z, (f"PC1 of all tasks ({share[0]:.0%} of variance)",
               f"PC2 ({share[1]:.0%})")


def label_colors(labels: Sequence) -> dict:
    """A fixed colour per class label (the same label has the same colour in every task)."""
    return dict(zip(labels, style.label_colors(len(labels)), strict=True))


def _padded_range(values: np.ndarray) -> Range1d:
    low, high = float(np.min(values)), float(np.max(values))
    pad = 0.05 * (high - low) if high > low else 1.0
    return Range1d(low - pad, high + pad)


def task_scatter_figures(dataset: MultiTaskDataset, *, width: int = 320, height: int = 300,
                         max_tasks: int = 12) -> list:
    """One Bokeh scatter per task (the first ``max_tasks`` tasks), coloured by label.

    Classification: one colour per class label, the same across tasks, with a legend.
    Regression: colour is the target value on one shared scale (a colour bar on the last
    figure). All figures share the projection of :func:`project_2d` (with the labels) and
    the axis ranges.

    Returns
    -------
    list of bokeh.plotting.figure
    """
    Z, (xlabel, ylabel) = project_2d(dataset.X, dataset.feature_names, dataset.y, dataset.task)
    x_range, y_range = _padded_range(Z[:, 0]), _padded_range(Z[:, 1])
    shown = range(min(dataset.n_tasks, max_tasks))
    classification = dataset.kind == "classification"
    if classification:
        colors = label_colors(np.unique(dataset.y).tolist())
        mapper = None
    else:
        low, high = float(np.min(dataset.y)), float(np.max(dataset.y))
        high = high if high > low else low + 1
        mapper = LinearColorMapper(palette=Viridis256, low=low, high=high)
    figures = []
    for t in shown:
        rows = dataset.task == t
        fig = figure(width=width, height=height, x_range=x_range, y_range=y_range,
                     title=f"{dataset.task_names[t]}  (n = {int(rows.sum())})",
                     tools="pan,wheel_zoom,box_zoom,reset,save", x_axis_label=xlabel,
                     y_axis_label=ylabel)
        style.style_figure(fig)
        if classification:
            for label, color in colors.items():
                mask = rows & (dataset.y == label)
                if not mask.any():
                    continue
                source = ColumnDataSource({"x": Z[mask, 0], "y": Z[mask, 1],
                                           "label": [str(label)] * int(mask.sum())})
                fig.scatter("x", "y", source=source, size=7, color=color, alpha=0.75,
                            line_color="white", line_width=0.5, legend_label=f"y = {label}")
            fig.legend.location = "top_left"
            fig.legend.label_text_font_size = style.TICK_FONT
            fig.legend.background_fill_alpha = 0.6
            fig.legend.click_policy = "hide"
            hover_value = "@label"
        else:
            source = ColumnDataSource({"x": Z[rows, 0], "y": Z[rows, 1], "target": dataset.y[rows]})
            fig.scatter("x", "y", source=source, size=7, alpha=0.8, line_color="white",
                        line_width=0.5, color={"field": "target", "transform": mapper})
            hover_value = "@target{0.00}"
        fig.add_tools(HoverTool(tooltips=[("y", hover_value), ("x", "(@x{0.00}, @y{0.00})")]))
        figures.append(fig)
    if mapper is not None and figures:
        figures[-1].add_layout(ColorBar(color_mapper=mapper, title="y", width=10,
                                        major_label_text_font_size=style.TICK_FONT), "right")
        figures[-1].width = width + 70
    return figures


def task_scatter_grid(dataset: MultiTaskDataset, *, ncols: int = 3, width: int = 320,
                      height: int = 300, max_tasks: int = 12):
    """:func:`task_scatter_figures` laid out in a grid (a Bokeh ``GridPlot``)."""
    figures = task_scatter_figures(dataset, width=width, height=height, max_tasks=max_tasks)
    return gridplot(figures, ncols=ncols, toolbar_location="right", merge_tools=True)


def scatter_frame(dataset: MultiTaskDataset, *, max_tasks: int = 8,
                  max_points: int = MAX_POINTS_PER_PANEL) -> dict:
    """Everything :class:`TaskScatterGrid` draws for ``dataset``, as plain arrays.

    Pure NumPy (the projection of :func:`project_2d`, colours, subsampling), so the app
    computes it off the event loop and only patches sources on it.

    Returns
    -------
    dict
        ``panels``: one dict per drawn task (the first ``max_tasks``) with ``name``,
        ``title``, ``x``, ``y``, ``color`` and ``label`` (what the hover shows);
        ``x_range`` / ``y_range`` (shared limits); ``x_label`` / ``y_label``;
        ``target_range`` ((low, high) of the colour scale for regression, None for
        classification); ``subsampled`` (True when a panel shows a subset of its task's
        points).

    >>> from explorer.data import make_task_family
    >>> frame = scatter_frame(make_task_family(("related",), random_state=0))
    >>> len(frame["panels"]), frame["target_range"] is None
    (2, True)
    """
    Z, (x_label, y_label) = project_2d(dataset.X, dataset.feature_names, dataset.y,
                                       dataset.task)
    classification = dataset.kind == "classification"
    if classification:
        labels = np.unique(dataset.y).tolist()
        colors = np.asarray(style.label_colors(len(labels)), dtype=object)
        code = np.searchsorted(np.asarray(labels), dataset.y)
        target_range = None
    else:
        low, high = float(np.min(dataset.y)), float(np.max(dataset.y))
        high = high if high > low else low + 1.0
        target_range = (low, high)
        colors = np.asarray(Viridis256, dtype=object)
        code = np.clip(((dataset.y - low) / (high - low) * 255).astype(int), 0, 255)
    rng = np.random.default_rng(0)
    panels, subsampled = [], False
    for t in range(min(dataset.n_tasks, max_tasks)):
        rows = np.flatnonzero(dataset.task == t)
        n = rows.size
        if n > max_points:
            rows, subsampled = np.sort(rng.choice(rows, max_points, replace=False)), True
        values = dataset.y[rows]
        label = ([str(v) for v in values.tolist()] if classification
                 else [f"{v:.2f}" for v in values.tolist()])
        panels.append({"name": str(dataset.task_names[t]),
                       "title": f"{_short(str(dataset.task_names[t]))} (n = {n})",
                       "x": Z[rows, 0], "y": Z[rows, 1],
                       "color": colors[code[rows]].tolist(), "label": label})
    return {"panels": panels, "x_range": _padded_limits(Z[:, 0]),
            "y_range": _padded_limits(Z[:, 1]), "x_label": x_label, "y_label": y_label,
            "target_range": target_range, "subsampled": subsampled}


def _padded_limits(values: np.ndarray) -> tuple[float, float]:
    low, high = float(np.min(values)), float(np.max(values))
    pad = 0.05 * (high - low) if high > low else 1.0
    return low - pad, high + pad


def _short(name: str, most: int = 13) -> str:
    """A task's name cut to fit its panel's title (the hover names it whole).

    >>> _short("T6 unrelated"), _short("a school with a long name")
    ('T6 unrelated', 'a school with…')
    """
    return name if len(name) <= most else name[:most].rstrip() + "…"


class TaskScatterGrid:
    """Every task's scatter in one figure, a grid of panels, patched in place per data set.

    Each task has its panel (its name and size above it, light lines at 0 in the shared
    projection); every panel has the same limits, so positions compare across tasks.
    Classification: one colour per class label with a legend; regression: colour is the
    target on one shared scale, with a colour bar. The hover names the task, the label and
    the point's coordinates in the projection. No zoom: it would zoom every panel at once.

    One figure for all tasks, not one a task: a Bokeh figure is ~37 models that a server
    makes, attaches to a session's document and serialises for every visitor (seven tasks
    were 259 models and ~0.17 s of Python a session), and the browser draws one canvas.

    >>> from explorer.data import make_task_family
    >>> grid = TaskScatterGrid()
    >>> grid.apply(scatter_frame(make_task_family(("related", "negated"), random_state=0)))
    >>> grid.columns, grid.rows, len(grid.cells.data["title"])
    (3, 1, 3)
    """

    #: Of a panel's width and height: the margin around its plot area, the band for its title.
    PAD, TITLE_BAND = 0.05, 0.13

    def __init__(self, *, cell_width: int = 175, cell_height: int = 170,
                 max_columns: int = 3, title: str = ""):
        self.cell_width, self.cell_height, self.max_columns = cell_width, cell_height, max_columns
        self.columns, self.rows = 1, 1
        self.points = ColumnDataSource({key: [] for key in
                                        ("x", "y", "color", "label", "task", "px", "py")})
        self.cells = ColumnDataSource({key: [] for key in
                                       ("left", "right", "bottom", "top", "title", "tx", "ty")})
        self.zero = ColumnDataSource({key: [] for key in ("x0", "y0", "x1", "y1")})
        self.mapper = LinearColorMapper(palette=Viridis256, low=0.0, high=1.0)
        fig = figure(x_range=Range1d(0, 1), y_range=Range1d(-1, 0), tools="save",
                     frame_width=cell_width, frame_height=cell_height, title=title,
                     min_border_left=10, min_border_right=10, min_border_top=5)
        fig.quad(left="left", right="right", bottom="bottom", top="top", source=self.cells,
                 fill_color="#fafafa", line_color="#bbbbbb")
        fig.segment(x0="x0", y0="y0", x1="x1", y1="y1", source=self.zero,
                    line_color="#cccccc", line_dash="dashed")
        fig.text(x="tx", y="ty", text="title", source=self.cells, text_baseline="bottom",
                 text_font_size=style.AXIS_FONT, text_font_style="bold", text_color="#333333")
        points = fig.scatter("x", "y", source=self.points, size=7, color="color", alpha=0.75,
                             line_color="white", line_width=0.5, legend_field="label")
        legend = fig.legend[0]
        fig.center = [item for item in fig.center if item is not legend]
        fig.add_layout(legend, "right")
        legend.title = "y"
        legend.label_text_font_size = style.TICK_FONT
        legend.margin, legend.padding, legend.spacing = 2, 4, 2
        fig.add_tools(HoverTool(renderers=[points], tooltips=[
            ("task", "@task"), ("y", "@label"), ("at", "(@px{0.00}, @py{0.00})")]))
        fig.toolbar.autohide = True
        self._bar = ColorBar(color_mapper=self.mapper, title="y", width=10, visible=False,
                             major_label_text_font_size=style.TICK_FONT)
        fig.add_layout(self._bar, "right")
        for axis in (fig.xaxis[0], fig.yaxis[0]):   # the panels' directions, no grid numbers
            axis.ticker = FixedTicker(ticks=[])
            axis.axis_line_color = None
        fig.grid.visible = False
        fig.outline_line_color = None
        style.style_figure(fig)
        self.figure = fig

    def apply(self, frame: dict) -> None:
        """Show a :func:`scatter_frame` (new columns, sizes and labels; no new models)."""
        panels = frame["panels"]
        n = max(len(panels), 1)
        self.columns = min(n, self.max_columns)
        self.rows = -(-n // self.columns)
        (x0, x1), (y0, y1) = frame["x_range"], frame["y_range"]
        pad, band = self.PAD, self.TITLE_BAND
        width, height = 1 - 2 * pad, 1 - 2 * pad - band

        def place(k: int) -> tuple[float, float]:   # lower left corner of panel k's plot
            return k % self.columns + pad, -(k // self.columns + 1) + pad

        points = {key: [] for key in self.points.data}
        cells = {key: [] for key in self.cells.data}
        zero = {key: [] for key in self.zero.data}
        for k, panel in enumerate(panels):
            left, bottom = place(k)
            x, y = np.asarray(panel["x"], float), np.asarray(panel["y"], float)
            points["x"].append(left + (x - x0) / (x1 - x0) * width)
            points["y"].append(bottom + (y - y0) / (y1 - y0) * height)
            points["px"].append(x)
            points["py"].append(y)
            points["color"].extend(panel["color"])
            points["label"].extend(panel["label"])
            points["task"].extend([panel["name"]] * x.size)
            cells["left"].append(left)
            cells["right"].append(left + width)
            cells["bottom"].append(bottom)
            cells["top"].append(bottom + height)
            cells["title"].append(panel["title"])
            cells["tx"].append(left)
            cells["ty"].append(bottom + height + 0.01)
            segments = []   # the lines at 0 that fall inside the panel
            if x0 < 0 < x1:
                at = left - x0 / (x1 - x0) * width
                segments.append((at, bottom, at, bottom + height))
            if y0 < 0 < y1:
                at = bottom - y0 / (y1 - y0) * height
                segments.append((left, at, left + width, at))
            for segment in segments:
                for key, value in zip(("x0", "y0", "x1", "y1"), segment, strict=True):
                    zero[key].append(value)
        for key in ("x", "y", "px", "py"):
            points[key] = np.concatenate(points[key]) if points[key] else np.zeros(0)
        regression = frame["target_range"] is not None
        if regression:
            self.mapper.low, self.mapper.high = frame["target_range"]
        fig = self.figure
        fig.x_range.start, fig.x_range.end = 0, self.columns
        fig.y_range.start, fig.y_range.end = -self.rows, 0
        fig.frame_width = self.cell_width * self.columns
        fig.frame_height = self.cell_height * self.rows
        fig.xaxis.axis_label, fig.yaxis.axis_label = frame["x_label"], frame["y_label"]
        fig.legend.visible = not regression
        self._bar.visible = regression
        self.points.data, self.cells.data, self.zero.data = points, cells, zero


def truth_matrices(dataset: MultiTaskDataset) -> list[dict]:
    """What the dataset's truth holds, as matrices ready for a heatmap.

    Returns
    -------
    list of dict
        Each with ``key``, ``title``, ``matrix`` (2-D float array), ``row_names``,
        ``col_names``, ``limit`` (the symmetric colour limit: 1 for relations, cosines,
        clusters and masks, so they share one scale; the largest magnitude for
        coefficients) and ``note`` (how to read it, plain text: escape it before it goes
        into HTML or Markdown). Fixed order: task relation, true cosine similarity (beside
        the relation, on the same -1..1 scale), same cluster, outlier tasks, shared
        features, coefficients. Missing truth is skipped.

    >>> import numpy as np
    >>> from explorer.data import make_task_family
    >>> items = truth_matrices(make_task_family(("unrelated",), random_state=0))
    >>> [item["key"] for item in items]
    ['task_relation', 'task_similarity', 'coef']
    >>> (np.round(items[1]["matrix"], 6) + 0.0).tolist()  # + 0.0: no "-0.0"
    [[1.0, 0.0], [0.0, 1.0]]
    """
    truth = dataset.truth
    tasks = list(dataset.task_names)
    features = list(dataset.feature_names)
    out = []
    if "task_relation" in truth:
        out.append({"key": "task_relation", "title": "True task relation",
                    "matrix": np.asarray(truth["task_relation"], dtype=np.float64),
                    "row_names": tasks, "col_names": tasks, "limit": 1.0,
                    "note": "+1 related, -1 negated, 0 unrelated; every task is related to "
                            "itself (+1 on the diagonal)."})
    if "task_similarity" in truth:
        out.append({"key": "task_similarity",
                    "title": "True similarity (cosine of coefficients)",
                    "matrix": np.asarray(truth["task_similarity"], dtype=np.float64),
                    "row_names": tasks, "col_names": tasks, "limit": 1.0,
                    "note": "The true cosine of two tasks' coefficient vectors, on the same "
                            "-1..1 scale: compare it with a model's learned similarity."})
    if "clusters" in truth:
        clusters = np.asarray(truth["clusters"])
        same = (clusters[:, None] == clusters[None, :]).astype(np.float64)
        listing = ", ".join(f"{name}: {c}"
                            for name, c in zip(tasks, clusters.tolist(), strict=True))
        out.append({"key": "clusters", "title": "Same cluster (truth)", "matrix": same,
                    "row_names": tasks, "col_names": tasks, "limit": 1.0,
                    "note": f"1 where two tasks come from the same cluster ({listing})."})
    if "outlier_tasks" in truth:
        out.append({"key": "outlier_tasks", "title": "Outlier tasks (truth)",
                    "matrix": np.asarray(truth["outlier_tasks"], dtype=np.float64)[None, :],
                    "row_names": ["outlier"], "col_names": tasks, "limit": 1.0,
                    "note": "1 marks a task that does not share the common features."})
    if "shared_features" in truth:
        out.append({"key": "shared_features", "title": "Shared features (truth)",
                    "matrix": np.asarray(truth["shared_features"], dtype=np.float64)[None, :],
                    "row_names": ["shared"], "col_names": features, "limit": 1.0,
                    "note": "1 marks a feature the regular tasks use."})
    if "coef" in truth:
        coef = np.asarray(truth["coef"], dtype=np.float64)
        # tasks as rows, like every task matrix of the app (the truth stores (d, m))
        out.append({"key": "coef", "title": "True coefficients (tasks x features)",
                    "matrix": coef.T, "row_names": tasks, "col_names": features,
                    "limit": float(np.max(np.abs(coef))) or 1.0,
                    "note": "Weight of each feature in each task."})
    return out
