"""Show code and export, once for every page.

* :func:`dataset_code`: the Python expression that builds the session's data set;
* :func:`savable`: a figure's PNG download (Bokeh's save tool, its toolbar shown on hover);
* :func:`figures_html`: a page's figures as one standalone HTML file (Bokeh inline: it opens
  offline, from a file or an e-mail), each view's caption under its figures and every figure
  with its own labels;
* :func:`results_csv`: a fit's numbers as one tidy CSV (the per-task test errors and the
  learned task matrices, one value a row);
* :class:`PageTools`: the row of "Show code", "Figures (HTML)" and "Results (CSV)" a page puts
  under its controls; the page gives three callables and the kit or page owns nothing else.

Everything runs when the user asks (a click), on the event loop: the code is text, the CSV a
few rows, the HTML the serialisation of figures that already exist.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Sequence
from contextlib import contextmanager

import numpy as np
import panel as pn
from bokeh.models import SaveTool

from explorer.viz.standalone import standalone_html

__all__ = ["PageTools", "dataset_code", "figures_html", "fresh_curdoc", "results_csv",
           "savable", "MATRIX_CODE"]

#: Show code's lines that print the learned task matrices, as the page's CSV holds them.
MATRIX_CODE = [
    "for key, matrix in model.task_relationships().items():   # the learned task matrices",
    "    if np.ndim(matrix) == 2:",
    "        print(key, np.round(np.asarray(matrix, dtype=float), 3), sep='\\n')"]


def csv_field(text) -> str:
    """A CSV field: quoted when it holds a comma, a quote or a line break.

    >>> csv_field('a,b'), csv_field('T0')
    ('"a,b"', 'T0')
    """
    text = str(text)
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _axis_names(size: int, task_names: Sequence[str], feature_names: Sequence[str]) -> list:
    """Names along one axis of a learned matrix: the tasks' or the features' when its length
    is theirs (tasks first), else 0, 1, ..."""
    if size == len(task_names):
        return list(task_names)
    if size == len(feature_names):
        return list(feature_names)
    return list(range(size))


def results_csv(errors: dict, matrices: dict, task_names: Sequence[str],
                feature_names: Sequence[str] = ()) -> str:
    """A fit's numbers as one tidy CSV, one value a row, columns
    ``quantity, key, row, column, value``:

    * ``test_error, <model or baseline>, <task>, , <1 - score>`` per task (the bars);
    * ``matrix, <task_relationships() key>, <row>, <column>, <value>`` per entry of each
      learned 2-D matrix; rows and columns are named by the tasks (or the features) whose
      number they match.

    >>> print(results_csv({"model": np.array([0.1, 0.2])},
    ...                   {"similarity": np.array([[1.0, -0.5], [-0.5, 1.0]])}, ["a", "b"]))
    quantity,key,row,column,value
    test_error,model,a,,0.1
    test_error,model,b,,0.2
    matrix,similarity,a,a,1.0
    matrix,similarity,a,b,-0.5
    matrix,similarity,b,a,-0.5
    matrix,similarity,b,b,1.0
    <BLANKLINE>
    """
    lines = ["quantity,key,row,column,value"]
    for name, values in errors.items():
        lines += [f"test_error,{csv_field(name)},{csv_field(task)},,{float(v)!r}"
                  for task, v in zip(task_names, values, strict=True)]
    for key, matrix in matrices.items():
        try:
            matrix = np.asarray(matrix, dtype=float)
        except (TypeError, ValueError):   # not a numeric matrix
            continue
        if matrix.ndim != 2:
            continue
        rows = _axis_names(matrix.shape[0], task_names, feature_names)
        cols = _axis_names(matrix.shape[1], task_names, feature_names)
        lines += [f"matrix,{csv_field(key)},{csv_field(r)},{csv_field(c)},{float(matrix[i, j])!r}"
                  for i, r in enumerate(rows) for j, c in enumerate(cols)]
    return "\n".join(lines) + "\n"


def dataset_code(state) -> tuple[str, list[str]]:
    """A Python expression that builds the session's data set, and the imports it needs.

    >>> from explorer.app.state import ExplorerState
    >>> expression, imports = dataset_code(ExplorerState(pages=("tasks",)))
    >>> expression.startswith("make_dataset('task_family', {")
    True
    """
    if state.entry is None:   # an upload: the user has the file
        name = state.uploaded_name or "your_file.csv"
        return f"read_csv({name!r})", ["from explorer.data import read_csv"]
    params = {k: (v.item() if isinstance(v, np.generic) else v)
              for k, v in state.current_params().items()}
    return (f"make_dataset({state.dataset_name!r}, {params!r}, "
            f"random_state={int(state.data_seed)})",
            ["from explorer.data.catalog import make_dataset"])


def savable(fig):
    """Give ``fig`` a PNG download: a save tool, the toolbar on the right, shown on hover.
    Returns ``fig``."""
    if not any(isinstance(tool, SaveTool) for tool in fig.tools):
        fig.add_tools(SaveTool())
    if fig.toolbar_location is None:
        fig.toolbar_location = "right"
    fig.toolbar.autohide = True
    fig.toolbar.logo = None
    return fig


@contextmanager
def fresh_curdoc():
    """A blank current document for Bokeh's embedding functions, in both places they look.

    They copy callbacks from ``curdoc()``. In a served session's callback that is the
    document Bokeh patched in (``bokeh.io.doc.patch_curdoc``), which may be a destroyed
    session's ("'DocumentCallbackManager' object has no attribute '_js_event_callbacks'":
    the UI tour met it once other sessions had expired); Panel keeps its own current document
    too (``panel.io.state.set_curdoc``). An export needs nothing from either.
    """
    from bokeh.document import Document
    from bokeh.io.doc import patch_curdoc
    from panel.io.state import set_curdoc

    blank = Document()   # (patch_curdoc keeps only a weak reference)
    with patch_curdoc(blank), set_curdoc(blank):
        yield


#: The file's styles: a caption under its figures, as on the page.
FIGURES_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
p.caption { font-size: 15px; line-height: 1.35; max-width: 48em; margin: 0.3em 0 1.5em; }
"""


def _blocks(items: Sequence) -> tuple[list, list]:
    """The file's blocks (shown Bokeh models and HTML text, in order) and the axes to show
    in it, from ``items``: live views (:meth:`LiveView.export_blocks`), Bokeh models or HTML
    strings."""
    blocks, axes = [], []
    for item in items:
        if hasattr(item, "export_blocks"):
            blocks += item.export_blocks()
            axes += item.axes_labelled_beside()
        elif item is not None:
            blocks.append(item)
    shown = [b for b in blocks if isinstance(b, str) or getattr(b, "visible", True)]
    return shown, axes


@contextmanager
def _axes_shown(models: list, axes: list):
    """``axes`` visible while ``models`` are serialised, the live ones untouched: the models
    sit in a temporary document meanwhile (Bokeh's ``OutputDocumentFor(always_new=True)``),
    so the change reaches no session, and the axes are hidden again before they leave it."""
    if not axes:
        yield
        return
    from bokeh.embed.util import OutputDocumentFor

    with OutputDocumentFor(models, always_new=True) as document:
        # only the axes of figures in the file: any other is still in a session's document
        hidden = [axis for axis in axes
                  if not axis.visible and document.get_model_by_id(axis.id) is axis]
        for axis in hidden:
            axis.visible = True
        try:
            yield
        finally:
            for axis in hidden:
                axis.visible = False


def figures_html(items: Sequence, title: str) -> str:
    """One standalone HTML document of a page's figures, JavaScript inline, nothing to fetch
    (:func:`explorer.viz.standalone.standalone_html`).

    ``items``: live views (each gives its figures, then its caption, as
    :meth:`explorer.viz.live.LiveView.export_blocks` says), Bokeh models or HTML strings.
    The figures stand one under another, so an axis a view hides on the page because the
    figure beside carries its labels (the truth's task names, level with the estimate's) is
    shown in the file. The figures may belong to a live session's document: Bokeh
    serialises them in a temporary document of their own and leaves the session's untouched.
    """
    blocks, axes = _blocks(items)
    models = [block for block in blocks if not isinstance(block, str)]
    if not models:
        return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>"
                f"{html.escape(title)}</title></head><body><p>Nothing drawn yet.</p>"
                "</body></html>")
    with fresh_curdoc(), _axes_shown(models, axes):
        return standalone_html(blocks, title, FIGURES_CSS)


class PageTools(pn.viewable.Viewer):
    """"Show code", "Figures (HTML)" and "Results (CSV)" for one page.

    Parameters
    ----------
    slug : str
        Names the downloaded files (``<slug>-figures.html``, ``<slug>-results.csv``).
    code : callable () -> str
        The Python that reproduces what the page shows (read when the code is shown).
    figures : callable () -> list
        The page's figures, in order: live views (their figures and captions), Bokeh models
        or HTML strings (see :func:`figures_html`).
    results : callable () -> str or None, optional
        The page's results as CSV text (None: nothing to download yet); without it there is
        no CSV button. Called only when the user downloads.
    has_results : callable () -> bool, optional
        Whether there is something to download (cheap: it is asked on every data change).
    """

    def __init__(self, slug: str, code: Callable[[], str], figures: Callable[[], list],
                 results: Callable[[], str | None] | None = None,
                 has_results: Callable[[], bool] | None = None, **params):
        super().__init__(**params)
        self._code, self._figures, self._results = code, figures, results
        self._has_results = has_results or (lambda: False)
        self.code_toggle = pn.widgets.Toggle(label="Show code", width=110)
        # long lines scroll inside the code's own box, never past the window's edge
        self.code = pn.pane.HTML("", visible=False, sizing_mode="stretch_width",
                                 styles={"font-size": "13px"},
                                 stylesheets=["pre { overflow-x: auto; max-width: 100%; }"])
        self.code_toggle.param.watch(self._toggle_code, "value")
        self.figures_button = pn.widgets.FileDownload(
            callback=self._figures_file, filename=f"{slug}-figures.html",
            label="Figures (HTML)", width=150)
        buttons = [self.code_toggle, self.figures_button]
        self.results_button = None
        if results is not None:
            self.results_button = pn.widgets.FileDownload(
                callback=self._results_file, filename=f"{slug}-results.csv",
                label="Results (CSV)", width=140, disabled=True)
            buttons.append(self.results_button)
        self._title = f"MTL Explorer: {slug}"
        self._layout = pn.Column(pn.Row(*buttons, margin=0), self.code,
                                 sizing_mode="stretch_width", margin=0)

    def __panel__(self):
        return self._layout

    def code_text(self) -> str:
        return self._code()

    def refresh(self) -> None:
        """Re-read the code (shown) and whether there are results to download."""
        if self.code_toggle.value:
            self.code.object = f"<pre><code>{html.escape(self.code_text())}</code></pre>"
        if self.results_button is not None:
            self.results_button.disabled = not self._has_results()

    def _toggle_code(self, event) -> None:
        self.code.visible = bool(event.new)
        self.refresh()

    def _figures_file(self) -> io.StringIO:
        return io.StringIO(figures_html(self._figures(), self._title))

    def _results_file(self) -> io.StringIO:
        return io.StringIO(self._results() or "")
