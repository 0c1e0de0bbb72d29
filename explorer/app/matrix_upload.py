"""A task matrix of your own beside the data's truth, on every model page.

A researcher's estimate computed elsewhere (a CSV or ``.npy`` file, tasks x tasks) is read
(:func:`explorer.data.matrix_file.read_task_matrix`, off the event loop), drawn beside the
truth the user picks among the data's task x task truths, and judged by the same agreement
caption as the page's own estimate (:class:`explorer.viz.live.EstimateTruthView`).
"""

from __future__ import annotations

import types

import numpy as np
import panel as pn

from explorer.app.components import figure_pane, set_flex_objects
from explorer.app.page_panel import PagePanel
from explorer.data.matrix_file import MAX_MATRIX_BYTES, read_task_matrix
from explorer.viz.live import EstimateTruthView, escape

__all__ = ["YourMatrixPanel"]

KEY = "your_matrix"


def square_truths(data) -> list[str]:
    """The data's truths that are task x task matrices (what a task matrix can be judged
    against), in the order the data list them."""
    m = data.n_tasks
    return [key for key, value in (data.truth or {}).items() if np.shape(value) == (m, m)]


class YourMatrixPanel(PagePanel):
    """"Your own matrix beside the truth": a file chooser, the truth to compare with, the
    pair and its agreement (a section under the page, folded until opened)."""

    below = True

    def __init__(self):
        self.file = pn.widgets.FileInput(accept=".csv,.npy", multiple=False,
                                         description=f"A tasks x tasks matrix, at most "
                                                     f"{MAX_MATRIX_BYTES // 1_000_000} MB")
        self.truth_key = pn.widgets.Select(label="Beside the truth", options=[], width=220)
        self.message = pn.pane.Alert("", alert_type="warning", visible=False,
                                     sizing_mode="stretch_width")
        # The pair's figures are made when the first matrix is read (:meth:`_show`): a page
        # that nobody uploads to sends none of their models to the browser.
        self.view: EstimateTruthView | None = None
        # (a layout's visibility: a Bokeh pane's would copy its model's properties; a FlexBox:
        # its late children get the template's theme through set_flex_objects). Its sizing
        # is given: a column FlexBox defaults to stretch_height, which Panel passes up to
        # every layout above it, and a page whose height stretches is capped at the window's
        # height, its figures drawn over its text (the overlap issue 39 measured).
        self.result = pn.FlexBox(flex_direction="column", visible=False, margin=0,
                                 sizing_mode="stretch_width")
        self._train = None
        self._matrix: np.ndarray | None = None
        self.layout = pn.Card(
            pn.pane.Markdown(
                "A task matrix computed elsewhere (another model, another tool) as a **CSV** "
                "(numbers; task names as the first row and/or column are optional) or a "
                "**.npy** file, tasks x tasks in the order of the data's tasks: it is drawn "
                "beside the truth you choose, with the same agreement figures.",
                sizing_mode="stretch_width"),
            pn.Row(self.file, self.truth_key), self.message, self.result,
            title="Your own matrix beside the truth", collapsed=True,
            sizing_mode="stretch_width", margin=(10, 10))
        self.file.param.watch(self._chosen, "value")
        self.truth_key.param.watch(lambda *_: self._show(), "value")

    def set_data(self, train) -> None:
        self._train = train
        keys = square_truths(train)
        self.truth_key.options = keys
        self.truth_key.disabled = not keys
        if keys and self.truth_key.value not in keys:
            self.truth_key.value = keys[0]
        self._matrix = None   # a matrix of the old tasks says nothing about the new ones
        self._show()

    def _chosen(self, event) -> None:
        raw, name, train = event.new, self.file.filename or "", self._train
        if not raw or train is None:
            return
        names = [str(n) for n in train.task_names]
        self.submit(lambda token: read_task_matrix(raw, name, names), self._read,
                    self._refused)

    def _read(self, matrix) -> None:
        self._matrix = matrix
        self.message.visible = False
        self._show()

    def _refused(self, error: Exception) -> None:
        self._matrix = None
        self.message.object = escape(str(error))
        self.message.visible = True
        self._show()

    def _show(self) -> None:
        """Draw the matrix beside the chosen truth (nothing before a file is read)."""
        shown = self._matrix is not None and self._train is not None
        if shown:
            if self.view is None:
                self.view = EstimateTruthView(KEY, "Your matrix", "task_relation", "Truth",
                                              frame=200)
                # (made in a session callback: themed through figure_pane)
                self._panes = {id(fig): figure_pane(fig) for fig in self.view.figures}
                self._pair = pn.Row(design=None)
                set_flex_objects(self.result, [self._pair, figure_pane(self.view.caption)])
            key = self.truth_key.value or ""
            truth = (self._train.truth or {}).get(key)
            # one colour scale for both, wide enough for either
            scale = max(float(np.max(np.abs(self._matrix))),
                        float(np.max(np.abs(truth))) if truth is not None else 0.0) or 1.0
            self.view.estimate.limit = self.view.truth.limit = lambda data: scale
            self.view.truth.key = key
            self.view.truth.title = f"True {key}" if key else "Truth (none for these data)"
            self.view.set_data(self._train)
            self.view.update(types.SimpleNamespace(matrices={KEY: self._matrix}))
            # the pair, or the matrix alone where the data have no truth (School)
            shown_panes = [self._panes[id(fig)] for fig in self.view.figures]
            if [id(p) for p in self._pair.objects] != [id(p) for p in shown_panes]:
                self._pair.objects = shown_panes
        self.result.visible = shown
