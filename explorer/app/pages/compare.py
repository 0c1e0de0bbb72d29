"""The "Compare" page: the chosen methods (:class:`~explorer.compare.methods.CompareSettings`,
URL keys ``compare.<name>``) fitted on ``n_trials`` random splits in worker processes, through
the session's work service (one comparison per server process at a time: a second one waits
its turn and says so); a progress bar, Cancel, then :class:`~explorer.app.comparison.
ComparisonResults` (the table, the downloads, Show code and the figures).
"""

from __future__ import annotations

import time

import panel as pn

from explorer.app.comparison import ComparisonResults, run_comparison, truth_matrices
from explorer.app.components import beside, intro_card
from explorer.app.export import dataset_code
from explorer.app.kit import settings_form
from explorer.app.work import TURNS, Cancelled, busy, locked
from explorer.compare import ComparisonCancelled
from explorer.compare.methods import METHODS, CompareSettings, chosen_estimators, settings_shown
from explorer.viz.comparison import CLEAR_MARK
from explorer.viz.live import escape

__all__ = ["ComparePage", "COMPARE_WORKERS", "best_on_average", "truth_matrices"]

#: Worker processes of one comparison (the machine's two cores).
COMPARE_WORKERS = 2

INTRO = """
## Compare methods

Every chosen method is fitted on the same random splits of the current data (the sidebar's
train fraction per task, one split per trial) and scored on the rest: error rate for
classification, nMSE for regression. The table gives mean ± standard deviation over the
trials, the average first. A filled cell with ★ is clearly the best of its column: the best
mean, and a paired t-test (5%) tells every other method apart from it; a column without ★
has no clear winner (with few trials, often). Below: the same numbers as bars, trial by
trial as a scatter of two methods, and what each method learned about the tasks beside the
truth.
"""


def best_on_average(result) -> str:
    """The status's verdict on the average column (Markdown): the method of the best mean,
    then the ones a paired t-test (5%) cannot tell apart from it (it is not clearly best)."""
    summary = result.summary(columns=[result.columns[-1]])
    marked = summary[summary["best"]]
    if marked.empty:
        return "Best on average: **?**."
    first = marked["mean"].idxmax() if result.greater_is_better[result.metrics[0]] \
        else marked["mean"].idxmin()
    others = [escape(m) for m in marked["method"] if m != marked.at[first, "method"]]
    text = f"Best on average: **{escape(marked.at[first, 'method'])}**"
    if others:
        return (text + ", not clearly ahead of " + ", ".join(f"**{m}**" for m in others)
                + " (paired t-test, 5%).")
    return text + f" ({CLEAR_MARK}: clearly)."


class ComparePage(pn.viewable.Viewer):
    """One session's Compare page (see the module docstring); ``settings`` and ``methods``
    add the user's estimators (:func:`explorer.compare.methods.with_methods`)."""

    def __init__(self, state, *, settings=CompareSettings, methods=METHODS, **params):
        super().__init__(**params)
        self.state = state
        self.methods = tuple(methods)
        self.settings = settings()
        # the switches and hyper-parameters: from_param widgets of self.settings (both ways)
        self.form = settings_form(state, "compare", self.settings)
        self.settings.param.watch(lambda *_: self._show_relevant_controls(), [*self.form.widgets])
        self.run_button = pn.widgets.Button(label="▶ Run comparison", color="primary",
                                            width=170)
        self.cancel_button = pn.widgets.Button(label="Cancel", width=90, disabled=True)
        self.run_button.on_click(locked(lambda *_: self.run()))
        self.cancel_button.on_click(locked(lambda *_: self.cancel()))
        self.progress = pn.indicators.Progress(value=0, max=1, visible=False,
                                               sizing_mode="stretch_width", bar_color="primary")
        self.status = pn.pane.Markdown("Ready: choose methods and press Run.", styles={
            "font-size": "1.05em"}, sizing_mode="stretch_width")
        self.results = ComparisonResults()
        self.running = self._cancelling = False
        self._progress_seen = (0, 1)
        self._layout = pn.Column(
            intro_card(INTRO),
            beside(pn.Column(self.form, width=360),
                   pn.Column(pn.Row(self.run_button, self.cancel_button), self.progress,
                             self.status, self.results.summary, sizing_mode="stretch_width"),
                   right_least=560),
            self.results.figures, sizing_mode="stretch_width")
        state.param.watch(locked(self._data_changed), "dataset")
        self._data_changed()

    def __panel__(self):
        return self._layout

    @property
    def result(self):
        return self.results.result

    def _show_relevant_controls(self) -> None:
        """Switches of the methods the data allow; hyper-parameters of the chosen ones."""
        data = self.state.dataset
        shown = settings_shown(self.settings, None if data is None else data.kind,
                               task_features=data is not None and data.task_features is not None,
                               methods=self.methods)
        for name, widget in self.form.widgets.items():
            widget.visible = name in shown

    def _data_changed(self, *_) -> None:
        """New data: a running comparison stops, results of the old data go."""
        self.cancel()
        self._show_relevant_controls()
        if self.result is not None:
            self.results.clear()
            self.status.object = "The data changed: press Run to compare on the new data."

    def run(self) -> None:
        """Start a comparison of the chosen methods on the session's data (off the loop)."""
        data, work = self.state.dataset, self.state.work
        if data is None:
            self.state.notify("There is no data yet: choose a data set in the sidebar.", "error")
        if self.running or data is None:
            return
        estimators = chosen_estimators(self.settings, data.kind,
                                       task_features=data.task_features is not None,
                                       methods=self.methods)
        n_trials = int(self.settings.n_trials)
        total = n_trials * len(estimators)
        code_data, code_imports = dataset_code(self.state)
        options = dict(n_trials=n_trials, train_fraction=float(self.state.train_fraction),
                       random_state=int(self.state.data_seed), code_data=code_data,
                       code_imports=code_imports,
                       n_jobs=COMPARE_WORKERS if work.asynchronous else 1)
        self._progress_seen, self.running, self._cancelling = (0, total), True, False
        self.progress.param.update(value=0, max=total, visible=True)
        self.run_button.disabled, self.cancel_button.disabled = True, False
        self.status.object = (
            "Waiting: another comparison is running on this server; this one starts when it "
            "ends (Cancel to give up)." if busy(TURNS) else
            f"Running {len(estimators)} methods × {n_trials} trials ({total} fits) in "
            f"{COMPARE_WORKERS} worker processes …")
        started = time.perf_counter()

        def compute(token):   # on a work-service thread
            return run_comparison(estimators, data, should_stop=token,
                                  callback=lambda done, n: self._on_progress(done, n),
                                  **options)

        def show(outcome) -> None:
            self._finish()
            self.results.show(outcome)
            self.status.object = (
                f"Done: {len(outcome.result.methods)} methods × {outcome.result.n_trials} "
                f"trials in {time.perf_counter() - started:.1f} s. "
                + best_on_average(outcome.result) + "".join(
                    f"\n\nLeft out, its fit failed: **{escape(method)}** ({escape(reason)})."
                    for method, reason in outcome.result.failures.items()))

        def failed(exc: Exception) -> None:
            self._finish()
            if isinstance(exc, (ComparisonCancelled, Cancelled)):
                self.status.object = f"Cancelled after {self._progress_seen[0]} of {total} fits."
                return
            self.status.object = f"The comparison failed: {escape(exc)}"
            self.state.notify(f"The comparison failed: {exc}", "error")

        work.submit("compare", compute, show, failed, pool=TURNS, cancellable=True)

    def _on_progress(self, done: int, total: int) -> None:
        """From the comparison's thread: the count goes to the loop, one update at a time."""
        self._progress_seen = (done, total)
        self.state.work.post("compare.progress", self._show_progress)

    def _show_progress(self) -> None:
        if not self.running:
            return
        done, total = self._progress_seen
        self.progress.value = min(done, total)
        # the fits already on the workers still report after a Cancel: keep saying so
        verb = "Cancelling" if self._cancelling else "Running"
        self.status.object = f"{verb} … {done} of {total} fits done."

    def _finish(self) -> None:
        self.running = False
        self.progress.visible = False
        self.run_button.disabled, self.cancel_button.disabled = False, True

    def cancel(self) -> None:
        """Stop the running comparison (no new fit starts; the result is dropped)."""
        if self.running:
            self._cancelling = True
            self.state.work.cancel("compare")
            self.status.object = "Cancelling …"
            self.cancel_button.disabled = True

    def close(self) -> None:
        """The session ended: the comparison stops and nothing is shown any more."""
        self.state.work.cancel("compare")
        self.results.clear()
