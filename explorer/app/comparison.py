"""What the Compare page shows of a comparison, and the comparison's work off the event loop.

:func:`run_comparison` runs :func:`explorer.compare.compare` and builds everything shown from
its result (the Bokeh figures and the code included) on a work-service thread;
:class:`ComparisonResults` shows that on the event loop: the table (the average first, a
column's clear winner marked), "Download CSV", "Download report" (``ComparisonResult.to_html``,
Bokeh inline), "Show code", the per-task bars and the task matrices beside the truth.
"""

from __future__ import annotations

import html
import io
from dataclasses import dataclass
from typing import Any

import numpy as np
import panel as pn

from explorer.app.access import name_figures
from explorer.app.components import figure_pane
from explorer.app.export import fresh_curdoc
from explorer.compare import compare
from explorer.data.validation import TRUTH_SPEC
from explorer.viz.comparison import (
    TABLE_CSS,
    bokeh_model,
    comparison_plot,
    page_table_html,
    relationship_plot,
    report_html,
)

__all__ = ["ComparisonOutcome", "ComparisonResults", "run_comparison", "truth_matrices",
           "TABLE_CSS"]

def truth_matrices(dataset) -> dict[str, np.ndarray]:
    """The data's 2-D truth that a method's task matrices are read against: task x task
    relations and feature x task coefficients (see ``TRUTH_SPEC``)."""
    truth = dataset.truth or {}
    wanted = {("task", "task"), ("feature", "task")}
    return {key: np.asarray(truth[key], dtype=float) for key, (axes, _, _) in TRUTH_SPEC.items()
            if key in truth and axes in wanted}


@dataclass
class ComparisonOutcome:
    """A finished comparison and what shows it (built off the event loop)."""

    result: Any
    truth: dict
    plots: Any
    matrices: Any
    code: str


def run_comparison(estimators, data, *, n_trials: int, train_fraction: float,
                   random_state: int, n_jobs: int, should_stop, callback,
                   code_data: str, code_imports) -> ComparisonOutcome:
    """Compare ``estimators`` on ``data`` (worker processes: ``n_jobs``) and build the
    figures and the code that reproduces the table. No Panel object is touched. A method
    whose fit fails is left out and named in ``result.failures`` (the others still show)."""
    result = compare(estimators, data, n_trials=n_trials, train_fraction=train_fraction,
                     random_state=random_state, n_jobs=n_jobs, backend="loky",
                     progress=False, callback=callback, should_stop=should_stop,
                     errors="report")
    truth = truth_matrices(data)
    matrices = relationship_plot(result, truth=truth, size=190)
    return ComparisonOutcome(result, truth, bokeh_model(comparison_plot(result)),
                             None if matrices is None else bokeh_model(matrices),
                             result.to_code(dataset=code_data, imports=code_imports))


class ComparisonResults(pn.viewable.Viewer):
    """The table, the downloads and Show code (``summary``) and the figures (``figures``)."""

    def __init__(self, **params):
        super().__init__(**params)
        self.result, self.truth = None, {}
        self.table = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[TABLE_CSS],
                                  styles={"overflow-x": "auto"})
        self.csv_button = pn.widgets.FileDownload(callback=self._csv, filename="comparison.csv",
                                                  label="Download CSV", disabled=True,
                                                  width=160)
        self.report_button = pn.widgets.FileDownload(
            callback=self._report, filename="comparison.html", label="Download report",
            disabled=True, width=170)
        self.code_toggle = pn.widgets.Toggle(label="Show code", disabled=True, width=120)
        self.code = pn.pane.HTML("", visible=False, sizing_mode="stretch_width")
        self.code_toggle.param.watch(lambda e: setattr(self.code, "visible", e.new), "value")
        self.plots = figure_pane(None, sizing_mode="stretch_width")
        self.matrices = figure_pane(None, sizing_mode="stretch_width")
        self.summary = pn.Column(
            self.table, pn.Row(self.csv_button, self.report_button, self.code_toggle),
            self.code, sizing_mode="stretch_width", margin=0)
        self.figures = pn.Column(self.plots, self.matrices, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.Column(self.summary, self.figures, sizing_mode="stretch_width")

    def show(self, outcome: ComparisonOutcome) -> None:
        self.result, self.truth = outcome.result, outcome.truth
        self.table.object = page_table_html(outcome.result)
        name_figures(outcome.plots)
        name_figures(outcome.matrices)   # "truth: <key>" figures say so in their titles
        self.plots.object, self.matrices.object = outcome.plots, outcome.matrices
        self.code.object = f"<pre><code>{html.escape(outcome.code)}</code></pre>"
        for widget in (self.csv_button, self.report_button, self.code_toggle):
            widget.disabled = False

    def clear(self) -> None:
        self.result, self.truth = None, {}
        self.table.object = ""
        self.plots.object = self.matrices.object = None
        for widget in (self.csv_button, self.report_button, self.code_toggle):
            widget.disabled = True
        self.code_toggle.value = False
        self.code.object = ""

    def _csv(self) -> io.StringIO:
        return io.StringIO(self.result.to_csv() if self.result is not None else "")

    def _report(self) -> io.StringIO:
        if self.result is None:
            return io.StringIO("")
        with fresh_curdoc():
            return io.StringIO(report_html(self.result, truth=self.truth))
