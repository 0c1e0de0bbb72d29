"""The "Tasks" page: every task's data and everything the dataset's truth knows.

A plain view of the scenario before any model is fitted: one scatter per task (in a shared
2-D projection when there are more than two features) and the ground truth as heatmaps
with the same diverging colour map the model pages use for their estimates.
"""

from __future__ import annotations

import html
import re

import panel as pn

from explorer.app.access import name_figures
from explorer.app.components import figure_pane, intro_card, set_flex_objects
from explorer.app.export import PageTools, dataset_code, savable
from explorer.app.guess import GuessBlock
from explorer.app.work import after_this_paint, batched
from explorer.viz.live import MatrixHeatmap
from explorer.viz.tasks import MAX_POINTS_PER_PANEL, TaskScatterGrid, scatter_frame, truth_matrices

__all__ = ["TasksPage"]

INTRO = """
## Tasks

Each panel is one task's data, coloured by its label (regression: by the target value);
hover over a point for its task, label and position.
With more than two features every task is drawn in the same 2-D plane, so positions can be
compared across tasks: the two directions along which the tasks' labels change most (found
from all tasks together). A task's classes fall apart along them; related tasks look alike,
a negated task mirrored, an unrelated task changes along the other direction.
Below, the **ground truth** the generator knows: which tasks are related (+1, blue),
negated (-1, red) or unrelated (0); every task is related to itself (+1 on the diagonal).
Beside it, the **true similarity**: the cosine of the tasks' true coefficient vectors, on
the same -1..1 scale, so a model's learned similarity can be compared number by number.
Where the generator has them: clusters, outlier tasks, shared features and coefficients.
The model pages show their estimates on the same colour scale.
"""

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def escape_markdown(text: str) -> str:
    r"""Text from the dataset (task/feature names of an upload) made inert in Markdown.

    Markdown punctuation is backslash-escaped, then HTML is escaped (``html.escape``).

    >>> print(escape_markdown("<b>T1</b> [x](javascript:1)"))
    &lt;b&gt;T1&lt;/b&gt; \[x\]\(javascript:1\)
    """
    return html.escape(_MARKDOWN_SPECIAL.sub(r"\\\1", str(text)))


MAX_TASKS = 8


class TasksPage(pn.viewable.Viewer):
    """The tasks' scatters + truth heatmaps of ``state.dataset``, patched when the data change.

    The figures are made once (one figure with a panel per task, a heatmap per kind of
    truth the first time a data set needs it) and patched in place afterwards; the
    projection, the colours and the truth's matrices are computed off the event loop
    (``state.work``: arrays only), so a data change costs the event loop only the patches.
    Bokeh models are made on the event loop only. The scatters go with the page; the truth's
    heatmaps (~60 Bokeh models and ~20-30 ms of Python each, below the scatters) are made
    and sent once the browser has painted it (:func:`after_this_paint`), in a turn of their
    own.
    """

    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self._scatter = TaskScatterGrid(title="Data of each task")
        self._scatter_pane = figure_pane(self._scatter.figure, margin=(0, 10))
        self._scatter_note = pn.pane.Markdown("", styles={"font-size": "1.05em"})
        self._truth: dict[str, tuple[MatrixHeatmap, pn.Column]] = {}
        self._truth_box = pn.FlexBox(sizing_mode="stretch_width")
        self._no_truth = pn.pane.Markdown(
            "This dataset has no ground truth (real or uploaded data).", visible=False)
        self.tools = PageTools("tasks", self.code, self._figures, self._data_csv,
                               has_results=lambda: self._state.dataset is not None)
        # "Your guess" (shown while the truth is hidden, and once a locked guess is revealed)
        self.guess = GuessBlock(state)
        self._layout = pn.Column(
            intro_card(INTRO),
            self.tools, self._scatter_note, self._scatter_pane, self.guess,
            pn.pane.Markdown("### Ground truth", margin=(20, 10, 0, 10)), self._no_truth,
            self._truth_box, sizing_mode="stretch_width",
        )
        self._shown, self._stale = True, False
        self._first_draw = True
        self._truth_items: list[dict] = []   # the truth of the data shown (computed)
        state.param.watch(self._render, "dataset")
        self._render()

    def __panel__(self):
        return self._layout

    def set_shown(self, shown: bool) -> None:
        """The app shows or hides the page; hidden, it redraws only when shown again."""
        self._shown = shown
        if shown and self._stale:
            self._render()

    def _render(self, *events) -> None:
        self._stale = not self._shown
        if self._stale:
            return
        dataset = self._state.dataset
        if dataset is None:
            self._scatter_note.object = "No data yet."
            return

        def compute():   # off the event loop when served: projection, colours, truth
            # (arrays only: the figures are made and patched on the loop)
            return dataset, scatter_frame(dataset, max_tasks=MAX_TASKS), truth_matrices(dataset)

        self._state.work.submit("tasks-page", compute, self._show)

    def _show(self, frame) -> None:
        """Patch the figures with a computed frame (on the event loop; no numerics); new
        figures are attached together (each change of a layout's children makes Bokeh walk
        the whole document), in one message."""
        with batched(pn.state.curdoc):
            self._patch(*frame)

    def _patch(self, dataset, scatter, truth) -> None:
        self._scatter.apply(scatter)
        name_figures(self._scatter.figure)
        shown = min(dataset.n_tasks, MAX_TASKS)
        note = f"**{dataset.n_tasks} tasks**"
        if shown < dataset.n_tasks:
            note += f" (the first {shown} are drawn)"
        if dataset.n_features > 2:
            note += (f"; {dataset.n_features} features, drawn on the two directions along "
                     "which the tasks' labels change most")
        if scatter["subsampled"]:
            note += f"; at most {MAX_POINTS_PER_PANEL:,} points of a task are drawn"
        self._scatter_note.object = note + "."
        self.tools.refresh()
        self._no_truth.object = (
            "The truth is hidden (sidebar: *Hide the truth*): guess which tasks are related "
            "from the plots, then reveal it." if getattr(self._state, "hide_truth", False)
            else "This dataset has no ground truth (real or uploaded data).")
        self._no_truth.visible = not truth
        present = {item["key"] for item in truth}
        for key, (_, column) in self._truth.items():
            column.visible = key in present
        self._truth_items = truth
        # The first time, the browser draws the scatters before the truth's heatmaps are
        # made, laid out and drawn below them.
        if self._first_draw:
            self._first_draw = False
            if after_this_paint(self._show_truths):
                return
        self._show_truths()

    def _show_truths(self) -> None:
        """Show the truth of the data shown (on the event loop), then attach the columns
        made for it."""
        for item in self._truth_items:
            self._show_truth(item)
        self._attach()

    def _attach(self) -> None:
        """Put the truth's columns made so far that are not on the page yet into their box."""
        attached = {id(obj) for obj in self._truth_box.objects}
        missing = [column for _, column in self._truth.values() if id(column) not in attached]
        if missing:
            set_flex_objects(self._truth_box, [*self._truth_box.objects, *missing])

    # ------------------------------------------------------------------ code and export
    def code(self) -> str:
        """The Python that makes the data shown and prints its truth."""
        expression, imports = dataset_code(self._state)
        return "\n".join([*imports, "", f"dataset = {expression}", "print(dataset)",
                          "for key, value in (dataset.truth or {}).items():",
                          "    print(key, value, sep='\\n')", ""])

    def _figures(self) -> list:
        return [self._scatter.figure, *(view.figure for view, _ in self._truth.values())]

    def _data_csv(self) -> str | None:
        dataset = self._state.dataset
        return None if dataset is None else dataset.to_csv()

    @staticmethod
    def _height(item: dict) -> int:
        n_rows = item["matrix"].shape[0]
        return 170 if n_rows == 1 else min(120 + 28 * n_rows, 520)

    def _make_heatmap(self, item: dict) -> MatrixHeatmap:
        """A heatmap for a kind of truth (not shown yet; on the event loop)."""
        view = MatrixHeatmap(item["row_names"], item["col_names"], limit=item["limit"],
                             title=item["title"], width=420, height=self._height(item))
        savable(view.figure)
        name_figures(view.figure, truth=True)
        return view

    def _show_truth(self, item: dict) -> None:
        """Show one kind of truth; the first time, its heatmap and column are made (the
        column attached by :meth:`_attach`)."""
        matrix = item["matrix"]
        height = self._height(item)
        if item["key"] not in self._truth:
            view = self._make_heatmap(item)
            # notes may quote task names (an upload's): escaped before they become Markdown
            column = pn.Column(figure_pane(view.figure, sizing_mode="stretch_width"),
                               pn.pane.Markdown("", styles={"font-size": "1.0em"}),
                               width=440, margin=(5, 10))
            self._truth[item["key"]] = (view, column)
        view, column = self._truth[item["key"]]
        if view.shape != matrix.shape or view.row_names != list(map(str, item["row_names"])) \
                or view.col_names != list(map(str, item["col_names"])):
            view.set_names(item["row_names"], item["col_names"])
        view.set_limit(item["limit"])
        view.figure.height = height
        view.figure.title.text = item["title"]
        name_figures(view.figure, truth=True)
        view.update(matrix)
        column[1].object = escape_markdown(item["note"])
