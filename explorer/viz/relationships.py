"""Every matrix an estimator learns about its tasks, each beside its truth: the live view of
a page made for any estimator class (:mod:`explorer.app.custom`).

The keys of ``task_relationships()`` are known only once a fit has produced a snapshot, so
:class:`RelationshipsView` makes its figures at the first snapshot that carries a matrix
(the page kit shows figures a view adds after each frame), one view per key:

* an :class:`~explorer.viz.live.EstimateTruthView` (the estimate beside the truth, with the
  agreement caption) when the data hold a truth of the same key (or ``"task_" + key``:
  ``"similarity"`` lines up with the generators' ``"task_similarity"``) of the same shape;
* a :class:`~explorer.viz.live.SnapshotMatrixView` otherwise.

A matrix is drawn when its shape reads as tasks x tasks, tasks x features or features x
tasks (``coef_``'s layout); any other (a vector, a matrix of clusters) is named in the
caption as not drawn. Colour limits follow the matrices' own scale (a user's covariance need
not lie in [-1, 1]), the same for an estimate and its truth.
"""

from __future__ import annotations

import math

import numpy as np
from bokeh.models import Div

from .live import EstimateTruthView, LiveView, SnapshotMatrixView, escape

__all__ = ["RelationshipsView", "matrix_layout", "truth_key_for"]

WAITING = ("<b>Agreement with the truth</b>: run the fit to see every matrix of "
           "<code>task_relationships()</code> beside the truth of the same key.")


def truth_key_for(key: str, truth) -> str | None:
    """The truth a learned matrix ``key`` is compared with: ``key`` itself, else
    ``"task_" + key``; None when the data hold neither.

    >>> truth_key_for("similarity", {"task_similarity": 1}), truth_key_for("W", {})
    ('task_similarity', None)
    """
    truth = truth or {}
    for candidate in (key, f"task_{key}"):
        if candidate in truth:
            return candidate
    return None


def matrix_layout(shape: tuple, n_tasks: int, n_features: int) -> tuple[str, str] | None:
    """``(columns, layout)`` of a learned matrix of ``shape`` for
    :class:`~explorer.viz.live.SnapshotMatrixView`, or None when it is not a task matrix.

    >>> matrix_layout((3, 3), 3, 5), matrix_layout((5, 3), 3, 5), matrix_layout((3,), 3, 5)
    (('tasks', 'tasks x columns'), ('features', 'columns x tasks'), None)
    """
    if len(shape) != 2:
        return None
    if shape == (n_tasks, n_tasks):
        return "tasks", "tasks x columns"
    if shape == (n_tasks, n_features):
        return "features", "tasks x columns"
    if shape == (n_features, n_tasks):
        return "features", "columns x tasks"
    return None


def _nice_limit(value: float) -> float:
    """The colour limit for values up to ``value``: 1, 2 or 5 times a power of ten.

    >>> _nice_limit(0.7), _nice_limit(1.0), _nice_limit(13.0)
    (1.0, 1.0, 20.0)
    """
    if not math.isfinite(value) or value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    return next(m * power for m in (1.0, 2.0, 5.0, 10.0) if value <= m * power * (1 + 1e-9))


class RelationshipsView(LiveView):
    """Every ``task_relationships()`` matrix of the snapshots, each beside its truth when the
    data have one (see the module docstring). ``figures`` grows at the first snapshot; a
    key whose kind of view no longer fits (the truth hidden or revealed, other shapes) gets
    a new one at the next snapshot.

    Parameters
    ----------
    frame : int
        Side of each heatmap's plotting frame in pixels.
    """

    def __init__(self, *, frame: int = 220):
        self.frame = int(frame)
        self.caption = Div(text=WAITING, width=2 * self.frame + 200,
                           styles={"font-size": "15px", "line-height": "1.35"})
        self.figures: list = []
        self._views: dict[str, tuple[tuple, LiveView]] = {}   # key -> (spec, view)
        self._limits: dict[str, float] = {}
        self._skipped: dict[str, tuple] = {}
        self._data = None

    # ------------------------------------------------------------------ protocol
    def set_data(self, dataset) -> None:
        self._data = dataset
        self._limits.clear()
        self._skipped.clear()
        for _, view in self._views.values():
            view.set_data(dataset)
        self._write_caption()

    def update(self, snapshot) -> None:
        if self._data is None:
            return
        matrices = snapshot.matrices
        for key in list(matrices):
            matrix = np.asarray(matrices[key], dtype=float)
            spec = self._spec(key, matrix.shape)
            if spec is None:
                self._skipped[key] = matrix.shape
                continue
            self._skipped.pop(key, None)
            current = self._views.get(key)
            if current is None or current[0] != spec:
                view = self._make(key, spec)
                view.set_data(self._data)
                self._views[key] = (spec, view)
            view = self._views[key][1]
            self._scale(key, spec, view, matrix)
            view.update(snapshot)
        self.figures = [fig for _, view in self._views.values() for fig in view.figures]
        self._write_caption()

    def clear(self) -> None:
        for _, view in self._views.values():
            view.clear()
        self._write_caption()

    # ------------------------------------------------------------------ parts
    @property
    def keys(self) -> list[str]:
        """The keys drawn so far, in the order of the figures."""
        return list(self._views)

    def view(self, key: str) -> LiveView:
        """The view drawing matrix ``key``."""
        return self._views[key][1]

    def _spec(self, key: str, shape: tuple) -> tuple | None:
        """(columns, layout, truth key or None) of matrix ``key``; None: not drawn."""
        data = self._data
        layout = matrix_layout(shape, data.n_tasks, data.n_features)
        if layout is None:
            return None
        truth = getattr(data, "truth", None) or {}
        truth_key = truth_key_for(key, truth)
        if truth_key is not None and np.shape(truth[truth_key]) != tuple(shape):
            truth_key = None
        return (*layout, truth_key)

    def _make(self, key: str, spec: tuple) -> LiveView:
        columns, layout, truth_key = spec
        title = f"Learned {key}"
        limit = {"limit": lambda _data, key=key: self._limits.get(key, 1.0)}
        if truth_key is None:
            view = SnapshotMatrixView(key, title, columns=columns, layout=layout, **limit)
            fig = view.heatmap.figure
            fig.width = fig.height = None
            fig.frame_width = fig.frame_height = self.frame
            return view
        return EstimateTruthView(key, title, truth_key, f"True {truth_key}", columns=columns,
                                 layout=layout, frame=self.frame, **limit)

    def _scale(self, key: str, spec: tuple, view: LiveView, matrix: np.ndarray) -> None:
        """Colour limits on the matrix's own scale (its truth's too), widened as it grows
        and narrowed only when it shrinks fourfold (colours that rescale every frame are
        unreadable)."""
        largest = float(np.max(np.abs(matrix[np.isfinite(matrix)]), initial=0.0))
        truth_key = spec[2]
        if truth_key is not None:
            largest = max(largest, float(np.max(np.abs(self._data.truth[truth_key]))))
        needed = _nice_limit(largest)
        current = self._limits.get(key)
        if current is not None and needed <= current < 4 * needed:
            return
        self._limits[key] = needed
        heatmaps = ([view.estimate.heatmap, view.truth.heatmap]
                    if isinstance(view, EstimateTruthView) else [view.heatmap])
        for heatmap in heatmaps:
            heatmap.set_limit(needed)
        if isinstance(view, EstimateTruthView):   # the truth is drawn again on its new scale
            view.truth.set_data(self._data)

    def _write_caption(self) -> None:
        lines = []
        several = len(self._views) + len(self._skipped) > 1
        for key, (_, view) in self._views.items():
            text = getattr(getattr(view, "caption", None), "text", "")
            if not text:
                text = ("<b>Agreement with the truth</b>: these data have no truth "
                        f"<code>{escape(key)}</code> (nor <code>task_{escape(key)}</code>).")
            lines.append(f"<code>{escape(key)}</code>: {text}" if several else text)
        for key, shape in self._skipped.items():
            lines.append(f"<code>{escape(key)}</code> (shape {escape(shape)}) is not drawn: "
                         "it is neither tasks x tasks nor tasks x features.")
        text = "<br>".join(lines) if lines else WAITING
        if text != self.caption.text:
            self.caption.text = text
