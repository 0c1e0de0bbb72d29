"""The "Compare" page: methods side by side on the session's data, the papers' way.

Pick methods (:class:`~explorer.compare.methods.CompareSettings`: one switch per method and
their key hyper-parameters, all URL keys ``compare.<name>``), the number of trials, and Run:
:func:`explorer.compare.compare` fits every method on ``n_trials`` random splits (the sidebar's
train fraction) in worker processes, while a progress bar moves and Cancel stops it. Then the
table (mean and standard deviation per task and on average, the best per column in bold, ties
decided by a paired t-test), the per-task bars and the A-vs-B scatter, and each method's task
matrices averaged over the trials beside the truth. "Download CSV" gives the tidy results,
"Download report" the standalone HTML report (``ComparisonResult.to_html``, Bokeh inline),
"Show code" the ``compare(...)`` call that reproduces the table from Python.

Nothing of a comparison runs on the event loop: a comparison thread drives the worker
processes (one comparison per server process at a time: they share the machine's cores; a
second one waits its turn and says so), and the results are built there too.
"""

from __future__ import annotations

import html
import io
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import panel as pn

from explorer.app.components import intro_card
from explorer.app.export import dataset_code, fresh_curdoc
from explorer.app.offload import Offloader, locked_callback
from explorer.app.widgets import ParamForm
from explorer.compare import ComparisonCancelled, compare
from explorer.compare.methods import METHODS, CompareSettings, chosen_estimators, methods_for
from explorer.data.validation import TRUTH_SPEC
from explorer.parameters import public_parameters
from explorer.viz.comparison import bokeh_model, comparison_plot, relationship_plot
from explorer.viz.live import escape

__all__ = ["ComparePage", "COMPARE_WORKERS", "truth_matrices"]

#: Worker processes of one comparison (the machine's two cores).
COMPARE_WORKERS = 2

INTRO = """
## Compare methods

Every chosen method is fitted on the same random splits of the current data (the sidebar's
train fraction per task, one split per trial) and scored on the rest: error rate for
classification, nMSE for regression. The table gives mean ± standard deviation over the
trials; **bold** is the best of a column, and every method that a paired t-test (5%) cannot
tell apart from it. Below: the same numbers as bars, trial by trial as a scatter of two
methods, and what each method learned about the tasks beside the truth.
"""

#: One comparison at a time per server process: its workers already use both cores.
_turn = threading.Lock()
_threads: ThreadPoolExecutor | None = None
_threads_lock = threading.Lock()


def _comparison_threads() -> ThreadPoolExecutor:
    """The threads that drive comparisons (they wait on worker processes, not on a core)."""
    global _threads
    with _threads_lock:
        if _threads is None:
            _threads = ThreadPoolExecutor(max_workers=8, thread_name_prefix="explorer-compare")
        return _threads


def truth_matrices(dataset) -> dict[str, np.ndarray]:
    """The data's 2-D truth that a method's task matrices are read against: task x task
    relations and feature x task coefficients (see ``TRUTH_SPEC``)."""
    truth = dataset.truth or {}
    wanted = {("task", "task"), ("feature", "task")}
    return {key: np.asarray(truth[key], dtype=float) for key, (axes, _, _) in TRUTH_SPEC.items()
            if key in truth and axes in wanted}


class ComparePage(pn.viewable.Viewer):
    """One session's Compare page (see the module docstring)."""

    def __init__(self, state, **params):
        super().__init__(**params)
        self.state = state
        self.settings = CompareSettings()
        state.register_page_params("compare", self.settings)
        names = public_parameters(self.settings)
        self.form = ParamForm(self.settings, names,
                              {n: getattr(self.settings, n) for n in names},
                              apply=lambda name, value: setattr(self.settings, name, value),
                              notify=state.notify,
                              current=lambda name: getattr(self.settings, name))
        self.settings.param.watch(self._settings_changed, names)
        document = pn.state.curdoc
        self.offloader = Offloader.for_document(document)
        if self.offloader.asynchronous:
            self.offloader.executor = _comparison_threads()
        self.run_button = pn.widgets.Button(label="▶ Run comparison", color="primary",
                                            width=170)
        self.cancel_button = pn.widgets.Button(label="Cancel", width=90, disabled=True)
        self.run_button.on_click(locked_callback(lambda *_: self.run()))
        self.cancel_button.on_click(locked_callback(lambda *_: self.cancel()))
        self.progress = pn.indicators.Progress(value=0, max=1, visible=False,
                                               sizing_mode="stretch_width", bar_color="primary")
        self.status = pn.pane.Markdown("Ready: choose methods and press Run.",
                                       sizing_mode="stretch_width",
                                       styles={"font-size": "1.05em"})
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
        # Bokeh figures rendered from HoloViews on the comparison thread (not on the loop)
        self.plots = pn.pane.Bokeh(None, sizing_mode="stretch_width")
        self.matrices = pn.pane.Bokeh(None, sizing_mode="stretch_width")
        self.result = None
        self._truth: dict[str, np.ndarray] = {}
        self._cancel: threading.Event | None = None
        self._progress_pending = False
        self._progress_seen = (0, 1)
        self._layout = pn.Column(
            intro_card(INTRO),
            pn.Row(pn.Column(self.form, width=360),
                   pn.Column(pn.Row(self.run_button, self.cancel_button), self.progress,
                             self.status, self.table,
                             pn.Row(self.csv_button, self.report_button, self.code_toggle),
                             self.code, sizing_mode="stretch_width"),
                   sizing_mode="stretch_width"),
            self.plots, self.matrices, sizing_mode="stretch_width")
        state.param.watch(self._data_changed, "dataset")
        self._data_changed()

    def __panel__(self):
        return self._layout

    # ------------------------------------------------------------------ choices
    def _methods(self):
        """The methods offered for the current data (kind, task features)."""
        data = self.state.dataset
        if data is None:
            return []
        return methods_for(data.kind, task_features=data.task_features is not None)

    def _settings_changed(self, *_) -> None:
        self._show_relevant_controls()

    def _show_relevant_controls(self) -> None:
        """Switches of the methods the data allow; hyper-parameters of the chosen ones."""
        offered = self._methods()
        chosen = [m for m in offered if getattr(self.settings, m.key)]
        used = {h for m in chosen for h in m.hyper}
        keys = {m.key for m in METHODS}
        for name, widget in self.form.widgets.items():
            if name in keys:
                widget.visible = any(m.key == name for m in offered)
            elif name != "n_trials":
                widget.visible = name in used

    def _data_changed(self, *_) -> None:
        """New data: a running comparison stops, results of the old data go."""
        self.cancel()
        self._show_relevant_controls()
        if self.result is not None:
            self._clear_results("The data changed: press Run to compare on the new data.")

    def _clear_results(self, message: str) -> None:
        self.result = None
        self.table.object = ""
        self.plots.object = self.matrices.object = None
        for widget in (self.csv_button, self.report_button, self.code_toggle):
            widget.disabled = True
        self.code_toggle.value = False
        self.code.object = ""
        self.status.object = message

    # ------------------------------------------------------------------ running
    @property
    def running(self) -> bool:
        return self._cancel is not None

    def run(self) -> None:
        """Start a comparison of the chosen methods on the session's data (off the loop)."""
        if self.running:
            return
        data = self.state.dataset
        if data is None:
            self.state.notify("There is no data yet: choose a data set in the sidebar.", "error")
            return
        estimators = chosen_estimators(self.settings, data.kind,
                                       task_features=data.task_features is not None)
        n_trials, fraction = int(self.settings.n_trials), float(self.state.train_fraction)
        seed = int(self.state.data_seed)
        code_data, code_imports = dataset_code(self.state)
        truth = truth_matrices(data)
        cancel = self._cancel = threading.Event()
        total = n_trials * len(estimators)
        self._progress_seen = (0, total)
        self.progress.param.update(value=0, max=total, visible=True)
        self.run_button.disabled, self.cancel_button.disabled = True, False
        self.status.object = (f"Running {len(estimators)} methods × {n_trials} trials "
                              f"({total} fits) in {COMPARE_WORKERS} worker processes …")
        started = time.perf_counter()
        workers = COMPARE_WORKERS if self.offloader.asynchronous else 1

        def compute():   # on a comparison thread: no Panel object is touched here
            if not _turn.acquire(blocking=False):
                self._say("Waiting: another comparison is running on this server; this one "
                          "starts when it ends (Cancel to give up).")
                while not _turn.acquire(timeout=0.2):
                    if cancel.is_set():
                        raise ComparisonCancelled(0, total)
            try:
                result = compare(estimators, data, n_trials=n_trials, train_fraction=fraction,
                                 random_state=seed, n_jobs=workers, backend="loky",
                                 progress=False, callback=self._on_progress,
                                 should_stop=cancel.is_set)
            finally:
                _turn.release()
            plots = bokeh_model(comparison_plot(result))
            matrices = relationship_plot(result, truth=truth, size=190)
            if matrices is not None:
                matrices = bokeh_model(matrices)
            code = result.to_code(dataset=code_data, imports=code_imports)
            return result, plots, matrices, code

        def show(outcome) -> None:   # on the event loop
            result, plots, matrices, code = outcome
            self._finish()
            self.result, self._truth = result, truth
            self.table.object = result.table_html()
            self.plots.object = plots
            self.matrices.object = matrices
            self.code.object = f"<pre><code>{html.escape(code)}</code></pre>"
            for widget in (self.csv_button, self.report_button, self.code_toggle):
                widget.disabled = False
            average = result.best()[result.columns[-1]]
            winners = ", ".join(escape(m) for m in average.index[average.to_numpy()]) or "?"
            self.status.object = (f"Done: {len(result.methods)} methods × {result.n_trials} "
                                  f"trials in {time.perf_counter() - started:.1f} s. Best on "
                                  f"average: **{winners}**.")

        def failed(exc: Exception) -> None:   # on the event loop
            self._finish()
            if isinstance(exc, ComparisonCancelled):
                self.status.object = (f"Cancelled after {self._progress_seen[0]} of {total} "
                                      "fits.")
                return
            self.status.object = f"The comparison failed: {escape(exc)}"
            self.state.notify(f"The comparison failed: {exc}", "error")

        self.offloader.submit("compare", compute, show, failed)

    def _on_progress(self, done: int, total: int) -> None:
        """From the comparison thread: show the count, at most one update queued at a time
        (the browser never gets a backlog of progress frames)."""
        self._progress_seen = (done, total)
        if not self.offloader.asynchronous:
            self._show_progress()
            return
        if self._progress_pending:
            return
        self._progress_pending = True
        self.offloader.schedule(self._show_progress)

    def _say(self, message: str) -> None:
        """Set the status line from the comparison thread (on the event loop when served)."""
        def show() -> None:
            if self.running:
                self.status.object = message
        if self.offloader.asynchronous:
            self.offloader.schedule(show)
        else:
            show()

    def _show_progress(self) -> None:
        self._progress_pending = False
        if not self.running:
            return
        done, total = self._progress_seen
        self.progress.value = min(done, total)
        # the fits already on the workers still report after a Cancel: keep saying so
        verb = "Cancelling" if self._cancel.is_set() else "Running"
        self.status.object = f"{verb} … {done} of {total} fits done."

    def _finish(self) -> None:
        self._cancel = None
        self.progress.visible = False
        self.run_button.disabled, self.cancel_button.disabled = False, True

    def cancel(self) -> None:
        """Stop the running comparison (no new fit starts; the result is dropped)."""
        if self._cancel is not None:
            self._cancel.set()
            self.status.object = "Cancelling …"
            self.cancel_button.disabled = True

    def close(self) -> None:
        """The session ended: the comparison stops and nothing is shown any more."""
        if self._cancel is not None:
            self._cancel.set()
        self.offloader.close()
        self.result = None

    # ------------------------------------------------------------------ downloads
    def _csv(self) -> io.StringIO:
        return io.StringIO(self.result.to_csv() if self.result is not None else "")

    def _report(self) -> io.StringIO:
        if self.result is None:
            return io.StringIO("")
        with fresh_curdoc():
            return io.StringIO(self.result.to_html(report=True, truth=self._truth))


TABLE_CSS = """
table.mtl-compare { border-collapse: collapse; font-size: 14px; }
table.mtl-compare caption { caption-side: bottom; text-align: left; font-size: 13px;
  color: #555; padding-top: 4px; }
table.mtl-compare th, table.mtl-compare td { border-bottom: 1px solid #ddd;
  padding: 4px 10px; text-align: right; white-space: nowrap; }
table.mtl-compare th:first-child { text-align: left; }
table.mtl-compare td.best { background: #eef5ff; }
"""
