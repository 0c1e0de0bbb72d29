"""Live views of TL-TF (Yan & Zhang 2009), plain Bokeh, no Panel.

* :class:`PhiView` -- the responsibilities phi (tasks x clusters) of each EM iteration beside
  the true clusters (one-hot), estimated clusters matched to the true ones so that the two
  read alike;
* :class:`PsiScaleView` -- ``tr(Psi)/F`` over the EM iterations (accumulating: the bound's
  bias toward a small Psi at few examples per task shows here);
* :class:`GateView` -- a new task's gate ``p_h`` (bars) and its zero-shot ``p(y = 1 | x)`` on
  the plane of the first two data features (others at their training mean); updated from
  precomputed arrays, so a slider move costs a matrix-vector product;
* :func:`figure1` -- the paper's Figure 1: zero-shot mean AP against H for TL-TF and TL-MC.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from bokeh.models import ColorBar, ColumnDataSource, Div, HoverTool, LinearColorMapper, Range1d
from bokeh.palettes import RdBu11
from bokeh.plotting import figure
from scipy.optimize import linear_sum_assignment

from .live import CurveView, LiveView, MatrixHeatmap, agreement_html
from .style import TICK_FONT, set_columns, style_figure

__all__ = ["PhiView", "PsiScaleView", "GateView", "figure1", "match_clusters",
           "transfer_table_markdown", "slider_ranges", "fit_summary"]


def match_clusters(phi: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """A column order of ``phi`` (m, H) that best matches the true clusters ``truth`` (m,):
    matched columns first, in the order of the true clusters, then the unmatched ones.

    >>> match_clusters(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0, 1])).tolist()
    [1, 0]
    """
    H = phi.shape[1]
    n_true = int(truth.max()) + 1
    overlap = np.zeros((n_true, H))
    np.add.at(overlap, truth, phi)
    rows, cols = linear_sum_assignment(-overlap)
    order = [int(c) for _, c in sorted(zip(rows, cols, strict=True))]
    return np.array(order + [h for h in range(H) if h not in order], dtype=int)


def _cluster_names(H: int) -> list[str]:
    return [f"h{h + 1}" for h in range(H)]


def co_membership(phi: np.ndarray) -> np.ndarray:
    """P(tasks i and j in one cluster) = (phi phi^T)_ij, shape (m, m): a task x task matrix
    that does not depend on the clusters' order, comparable with the truth's.

    >>> co_membership(np.eye(2)[[0, 0, 1]]).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    return phi @ phi.T


class PhiView(LiveView):
    """phi (tasks x clusters) per EM iteration, beside the true clusters (one-hot), and a
    caption: the agreement of "same cluster" (:func:`co_membership`) with the truth's."""

    def __init__(self, *, width=320, height=330):
        self.phi = MatrixHeatmap(["T0"], ["h1"], limit=1.0, width=width, height=height,
                                 title="phi: q(cluster) per task", x_label="cluster",
                                 color_bar=False)
        self.truth = MatrixHeatmap(["T0"], ["c0"], limit=1.0, width=width, height=height,
                                   title="True clusters", x_label="true cluster")
        self.figures = [self.phi.figure, self.truth.figure]
        # the pair fits the first screen: past the task names that fit (14 px each) the
        # rows have no names (hover names each)
        for heatmap in (self.phi, self.truth):
            heatmap.max_row_names = max(1, (height - 110) // 14)
        self.caption = Div(text="", width=2 * width, styles={"font-size": "15px"})
        self.true_clusters: np.ndarray | None = None
        self.task_names: list[str] = ["T0"]

    def set_data(self, dataset) -> None:
        self.task_names = [str(n) for n in dataset.task_names]

        clusters = (dataset.truth or {}).get("clusters")
        self.true_clusters = None if clusters is None else np.asarray(clusters, dtype=int)
        if self.true_clusters is None:
            self.truth.set_names(self.task_names, ["?"])
            self.truth.figure.title.text = "True clusters (unknown here)"
            self.caption.text = ("<b>Agreement with the truth</b>: the true clusters are hidden, "
                                 "or unknown for these data.")
        else:
            k = int(self.true_clusters.max()) + 1
            self.truth.set_names(self.task_names, [f"c{c}" for c in range(k)])
            self.truth.figure.title.text = "True clusters"
            self.truth.update(np.eye(k)[self.true_clusters])
        self.phi.set_names(self.task_names, self.phi.col_names)

    def update(self, snapshot) -> None:
        phi = snapshot.matrices.get("phi")
        if phi is None:
            return
        phi = np.asarray(phi)
        names = _cluster_names(phi.shape[1])
        if self.true_clusters is not None:
            order = match_clusters(phi, self.true_clusters)
            phi, names = phi[:, order], [names[h] for h in order]
        if names != self.phi.col_names:
            self.phi.set_names(self.task_names, names)
        self.phi.update(phi)
        if self.true_clusters is not None:
            from explorer.compare.agreement import relationship_agreement

            same = np.eye(int(self.true_clusters.max()) + 1)[self.true_clusters]
            agreement = relationship_agreement(co_membership(phi), co_membership(same))
            # a probability is never negative: "sign right" says nothing here
            agreement["sign_agreement"] = float("nan")
            self.caption.text = (agreement_html(agreement)[:-1]
                                 + ", of P(two tasks share a cluster) against the truth.")

    def clear(self) -> None:
        self.phi.clear()
        if self.true_clusters is not None:
            self.caption.text = ("<b>Agreement with the truth</b>: run the fit to see how close "
                                 "the clusters come.")


class PsiScaleView(LiveView):
    """``tr(Psi)/F`` against the EM iteration (streamed; log axis)."""

    accumulates = True

    def __init__(self, **figure):
        self.curve = CurveView(title="Scale of Psi: tr(Psi) / F", y_label="tr(Psi)/F",
                               x_label="EM iteration", y_axis_type="log", **figure)
        self.figures = [self.curve.figure]

    def set_data(self, dataset) -> None:
        self.clear()

    def update(self, snapshot) -> None:
        self.extend([snapshot])

    def extend(self, snapshots) -> None:
        points = [(s.step, s.info["psi_scale"]) for s in snapshots if "psi_scale" in s.info]
        if points:
            self.curve.update([x for x, _ in points], [y for _, y in points])

    def clear(self) -> None:
        self.curve.reset()


class GateView:
    """A new task's gate and its zero-shot predictions, patched in place.

    :meth:`set_model` precomputes everything a slider move needs (a fitted TLTF and the
    training data); :meth:`show` takes the new task's features and updates the bars and the
    probability image.
    """

    GRID = 60

    def __init__(self, *, width=380, height=330):
        self.bar_source = ColumnDataSource({"cluster": ["h1"], "p": [0.0]})
        bars = figure(x_range=["h1"], y_range=Range1d(0, 1), width=260, height=height,
                      title="Gate p_h of the new task", tools="", toolbar_location=None)
        bars.vbar(x="cluster", top="p", width=0.8, source=self.bar_source, color="#1f77b4")
        bars.add_tools(HoverTool(tooltips=[("cluster", "@cluster"), ("p_h", "@p{0.000}")]))
        self.mapper = LinearColorMapper(palette=list(reversed(RdBu11)), low=0.0, high=1.0)
        self.image_source = ColumnDataSource({"image": [np.zeros((2, 2), np.float32)]})
        self.points = ColumnDataSource({"x": [], "y": [], "color": []})
        plane = figure(width=width, height=height, tools="", toolbar_location=None,
                       title="Zero-shot p(y = 1 | x) of the new task")
        self.image = plane.image(image="image", x=0, y=0, dw=1, dh=1, source=self.image_source,
                                 color_mapper=self.mapper)
        plane.scatter("x", "y", color="color", size=6, line_color="white", line_width=0.5,
                      source=self.points)
        plane.add_layout(ColorBar(color_mapper=self.mapper, width=10,
                                  major_label_text_font_size=TICK_FONT), "right")
        for fig in (bars, plane):
            style_figure(fig)
        self.bars, self.plane = bars, plane
        self.figures = [bars, plane]
        self.model = self.train = None
        self._grid = None

    def set_model(self, model, train) -> None:
        """Prepare for ``model`` (a fitted TLTF) and its training data set ``train``."""
        self.model, self.train = model, train
        X = train.X
        H = model.Lambda_.shape[1]
        names = _cluster_names(H)
        self.bars.x_range.factors = names
        self.bar_source.data = {"cluster": names, "p": [0.0] * H}
        lo, hi = X[:, :2].min(axis=0), X[:, :2].max(axis=0)
        axes = [np.linspace(lo[j], hi[j], self.GRID) for j in range(min(2, X.shape[1]))]
        if X.shape[1] == 1:
            axes.append(np.linspace(0.0, 1.0, self.GRID))
        gx, gy = np.meshgrid(axes[0], axes[1])
        grid = np.tile(X.mean(axis=0), (gx.size, 1))
        grid[:, 0] = gx.ravel()
        if X.shape[1] > 1:
            grid[:, 1] = gy.ravel()
        self._grid = grid
        glyph = self.image.glyph
        glyph.x, glyph.y = float(axes[0][0]), float(axes[1][0])
        glyph.dw, glyph.dh = float(axes[0][-1] - axes[0][0]), float(axes[1][-1] - axes[1][0])
        self.plane.x_range.start, self.plane.x_range.end = float(axes[0][0]), float(axes[0][-1])
        self.plane.y_range.start, self.plane.y_range.end = float(axes[1][0]), float(axes[1][-1])
        self.plane.xaxis.axis_label = str(train.feature_names[0])
        self.plane.yaxis.axis_label = str(train.feature_names[1]) if X.shape[1] > 1 else ""

    def _nearest_task(self, task_features) -> int | None:
        """The training task whose (standardised) features are nearest to ``task_features``."""
        features = self.train.task_features
        if task_features is None or features is None:
            return None
        scale = features.std(axis=0) + 1e-12
        distance = np.sum(((features - np.asarray(task_features)) / scale) ** 2, axis=1)
        return int(np.argmin(distance))

    def show(self, task_features: Sequence[float] | None) -> np.ndarray:
        """Update bars and image for a new task with these features; returns p_h. The dots
        are the examples of the nearest training task (dark blue: positive)."""
        if self.model is None:
            return np.zeros(0)
        p_h = self.model.gate_probabilities(task_features)
        proba = self.model.predict_proba_new_task(self._grid, task_features)[:, 1]
        set_columns(self.bar_source, p=[float(v) for v in p_h])
        self.image_source.data = {"image": [proba.reshape(self.GRID, self.GRID)
                                            .astype(np.float32)]}
        nearest = self._nearest_task(task_features)
        if nearest is None:
            self.points.data = {"x": [], "y": [], "color": []}
            self.plane.title.text = "Zero-shot p(y = 1 | x) of the new task"
            return p_h
        X, y = self.train.task_data(nearest)
        positive = y == self.model.classes_[1]
        self.points.data = {"x": X[:, 0].tolist(),
                            "y": (X[:, 1] if X.shape[1] > 1 else np.full(len(y), 0.5)).tolist(),
                            "color": np.where(positive, "#08306b", "#67000d").tolist()}
        self.plane.title.text = f"Zero-shot p(y=1|x); dots: {self.train.task_names[nearest]}"
        return p_h

    def clear(self) -> None:
        self.model = None
        self.bar_source.data = {"cluster": list(self.bars.x_range.factors),
                                "p": [0.0] * len(self.bars.x_range.factors)}
        self.image_source.data = {"image": [np.full((2, 2), np.nan, np.float32)]}
        self.points.data = {"x": [], "y": [], "color": []}


def figure1(curves: dict[str, tuple[Sequence[int], Sequence[float]]], *, width=420,
            height=300):
    """The paper's Figure 1: zero-shot mean AP against the number of clusters H, one line
    per method (``{"TL-TF": (H values, mean APs), "TL-MC": ...}``)."""
    fig = figure(width=width, height=height, title="Mean AP on held-out tasks vs H (Fig. 1)",
                 x_axis_label="number of clusters H", y_axis_label="mean AP", tools="save",
                 y_range=Range1d(0.0, 1.02))
    colors = {"TL-TF": "#1f77b4", "TL-MC": "#ff7f0e"}
    for name, (hs, values) in curves.items():
        color = colors.get(name, "#555555")
        fig.line(list(hs), list(values), line_width=2, color=color, legend_label=name)
        fig.scatter(list(hs), list(values), size=7, color=color, legend_label=name)
    fig.legend.location = "bottom_right"
    return style_figure(fig)


def transfer_table_markdown(table) -> str:
    """Markdown of :func:`explorer.compare.transfer.zero_shot_table`'s result (numbers and
    fixed method names only)."""
    if not table:
        return "*Zero-shot table: needs task features and at least 4 tasks.*"
    columns = list(next(iter(table.values())))
    lines = ["**Zero-shot on held-out tasks** (every 4th task, no training example)", "",
             "| method | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {name} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |"
              for name, row in table.items()]
    return "\n".join(lines)


def slider_ranges(model, train) -> list[tuple[float, float, float]]:
    """``(start, end, value)`` of a slider per task feature of a fitted TLTF: the training
    tasks' range padded by 10 %, starting at the first held-out task's features (every
    fourth task, see :func:`explorer.compare.transfer.held_out_tasks`). Empty when the model
    uses no task features."""
    features = train.task_features
    if features is None or not model.n_task_features_:
        return []
    start = features[3 if train.n_tasks > 3 else 0]
    lo, hi = features.min(axis=0), features.max(axis=0)
    pad = 0.1 * (hi - lo) + 1e-3
    return [(round(float(a), 2), round(float(b), 2), float(np.clip(v, a, b)))
            for a, b, v in zip(lo - pad, hi + pad, start, strict=True)]


def fit_summary(model, data) -> str:
    """Markdown: clusters against the truth (adjusted Rand index of phi's argmax), Psi's
    scale, and why TL-TF and TL-MC predict alike on the training tasks."""
    from sklearn.metrics import adjusted_rand_score

    text = ""
    clusters = (data.truth or {}).get("clusters")
    if clusters is not None:
        ari = adjusted_rand_score(np.asarray(clusters), model.phi_.argmax(axis=1))
        text += (f"Clusters against the truth: adjusted Rand index **{ari:.2f}** (1: the "
                 "true clusters exactly, up to their names; 0: no better than chance). ")
    scale = np.trace(model.Psi_) / model.Psi_.shape[0]
    return text + (f"tr(Psi)/F = **{scale:.3g}** (Psi: how far a task's weights spread around "
                   "its cluster's prediction from the task features; the bound favours a small "
                   "Psi at few examples per task). On tasks seen in training every variant "
                   "predicts with the task's own posterior mean, so TL-TF and TL-MC score alike "
                   "there; the difference is on *new* tasks (below).")
