"""The sidebar: page choice, scenario, data set and its parameters, seeds, CSV upload.

Every widget is made by ``from_param`` from a ``param`` declaration and linked by Panel both
ways to what it shows (:mod:`explorer.app.widgets`): the page and data-set choices and the
state's own settings to the session's :class:`~explorer.app.state.ExplorerState`, the
generator's parameters to an instance of the chosen catalog entry's declaration
(:class:`DataParamsForm`); the sidebar never builds data itself.
"""

from __future__ import annotations

import panel as pn
import param

from explorer.app.class_link import class_sidebar
from explorer.app.components import CsvUpload
from explorer.app.scenarios import ScenarioChooser
from explorer.app.state import UPLOAD_LIMIT_BYTES, UPLOADED
from explorer.app.widgets import SettingsForm
from explorer.data.catalog import CATALOG
from explorer.parameters import public_parameters
from explorer.viz.live import escape

__all__ = ["CSV_NOTE", "DataParamsForm", "make_sidebar", "state_form"]

CSV_NOTE = (
    "**Your own data (CSV).** One row per example: numeric feature columns, a `task` "
    "column (task id or name) and a `y` column (class label or number). Up to 10 MB."
)


class DataParamsForm(pn.viewable.Viewer):
    """The chosen catalog entry's parameters as widgets, rebuilt when the data set changes.

    The state holds the generator's values in one dict (``data_params``: a link, a scenario,
    a refused build put back, all set it whole), so the form keeps one small documented layer:
    an instance of the entry's declaration (``values``) that the widgets are linked to both
    ways by ``from_param``; a change of the instance sets ``state.data_params``, a change of
    ``data_params`` updates the instance (and so the widgets). A text the declaration refuses
    is reported by the field itself (:class:`~explorer.app.widgets.Field`).
    """

    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self._form: SettingsForm | None = None
        self.values: param.Parameterized | None = None
        self._following = False
        self._layout = pn.Column(sizing_mode="stretch_width", margin=0)
        state.param.watch(self._rebuild, "dataset_name")
        state.param.watch(self._follow_state, "data_params")
        self._rebuild()

    def __panel__(self):
        return self._layout

    @property
    def widgets(self) -> dict:
        """The generator parameters' widgets by name (none for an uploaded file)."""
        return {} if self._form is None else self._form.widgets

    def _rebuild(self, *events) -> None:
        entry = self._state.entry
        if entry is None:
            self._form = self.values = None
            self._layout[:] = [pn.pane.Markdown(
                f"Uploaded file: **{escape(self._state.uploaded_name)}**")]
            return
        names = public_parameters(entry.params)
        self.values = entry.params(**self._state.current_params())
        self.values.param.watch(self._to_state, names)
        self._form = SettingsForm(self.values, names, notify=self._state.notify)
        self._layout[:] = [self._form]

    def _to_state(self, *events) -> None:
        """A widget moved: the state's dict follows (one rebuild for values set together)."""
        if not self._following:
            self._state.data_params = {**self._state.current_params(),
                                       **{event.name: event.new for event in events}}

    def _follow_state(self, *events) -> None:
        """``data_params`` changed: the instance (and its widgets) show the values in force."""
        entry = self._state.entry
        if entry is None or type(self.values) is not entry.params:
            return self._rebuild()
        self._following = True
        try:
            self.values.param.update(**self._state.current_params())
        finally:
            self._following = False


def state_form(state, names) -> SettingsForm:
    """Widgets for the state's own parameters (seeds, train fraction, hide the truth), linked
    to the state both ways by ``from_param``."""
    return SettingsForm(state, names, notify=state.notify)


def _description(state) -> str:
    entry = state.entry
    return entry.description if entry is not None else "Data from your CSV file."


def _summary(state) -> str:
    return f"**Data:** {state.summary()}"


def _upload(state) -> CsvUpload:
    """The CSV upload: a file the browser sent is read by the state; one over the limit is
    refused in the browser, and said."""
    upload = CsvUpload(limit_bytes=UPLOAD_LIMIT_BYTES, sizing_mode="stretch_width", height=40)

    def on_upload(event) -> None:
        state.load_uploaded_csv(upload.content, upload.filename or "upload.csv")
        upload.content = ""   # the dataset holds the data; drop the text

    def on_refused(event) -> None:
        size, _, name = event.new.partition(" ")
        state.notify(f"Could not use {name!r}: the file is {int(size):,} bytes; the limit "
                     f"is {UPLOAD_LIMIT_BYTES:,} bytes. It was not sent.", "error")

    upload.param.watch(on_upload, "upload_id")
    upload.param.watch(on_refused, "refused")
    return upload


def _data_status(state) -> tuple[pn.pane.Markdown, pn.pane.Alert]:
    """The data's one-line summary (and "building") and why the last spec did not build."""
    summary = pn.pane.Markdown(_summary(state), sizing_mode="stretch_width",
                               styles={"font-size": "1.05em"}, css_classes=["summary"])
    error = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width")

    def on_data(*events) -> None:
        summary.object = _summary(state) + (" *(building the new data...)*"
                                            if state.building else "")
        error.object = (f"{escape(state.error)}  \nThe data shown is the last one that "
                        "built." if state.error else "")
        error.visible = bool(state.error)

    state.param.watch(on_data, ["dataset", "error", "building"])
    return summary, error


def make_sidebar(state, pages) -> list:
    """The sidebar's items over ``state``; ``pages`` maps slug -> page (title, in order)."""
    page_choice = pn.widgets.RadioButtonGroup.from_param(
        state.param.page, label="Page",
        options={page.title: slug for slug, page in pages.items()},
        orientation="vertical", color="primary", variant="outline", sizing_mode="stretch_width",
        stylesheets=[".bk-btn { font-size: 16px; padding: 6px 10px; }"])

    def dataset_options() -> dict:
        options = {entry.label: name for name, entry in CATALOG.items()}
        if UPLOADED in state.param.dataset_name.objects:
            options[f"Uploaded: {state.uploaded_name}"] = UPLOADED
        return options

    # the select of data/scenarios, the chosen one's story, "(edited)" once data change
    scenario_choice = ScenarioChooser(
        state, pages={slug: page.title for slug, page in pages.items()})

    dataset_choice = pn.widgets.Select.from_param(
        state.param.dataset_name, options=dataset_options(), sizing_mode="stretch_width")

    def on_objects(*events):   # an upload joins the choices, under its file's name
        dataset_choice.options = dataset_options()

    for what in ("objects", "value"):
        state.param.watch(on_objects, "dataset_name", what=what)
    description = pn.pane.Markdown(_description(state), sizing_mode="stretch_width",
                                   styles={"font-size": "0.95em", "color": "#444"})
    state.param.watch(lambda *e: setattr(description, "object", _description(state)),
                      "dataset_name")

    seeds = state_form(state, ["data_seed", "init_seed", "train_fraction"])
    upload = _upload(state)
    summary, error = _data_status(state)

    # "Hide the truth": the generator's settings say what the truth is, so they fold too
    hide = state_form(state, ["hide_truth"])
    data_form = DataParamsForm(state)
    folded = pn.pane.Markdown(
        "*The truth is hidden: task names are neutral, truth panels and the generator's "
        "settings are folded. Untick to reveal (fits stay).*",
        styles={"font-size": "0.95em", "color": "#444"}, sizing_mode="stretch_width")

    def on_hide(*events) -> None:
        data_form.__panel__().visible = not state.hide_truth
        description.visible = not state.hide_truth
        folded.visible = state.hide_truth

    state.param.watch(on_hide, "hide_truth")
    on_hide()
    return [
        pn.pane.Markdown("### Page", margin=(0, 10)), page_choice,
        pn.pane.Markdown("### Data", margin=(10, 10, 0, 10)), scenario_choice,
        hide, folded, dataset_choice, description,
        data_form, seeds, summary, error,
        pn.pane.Markdown(CSV_NOTE, styles={"font-size": "0.9em"}), upload,
        *class_sidebar(state),   # "Open a class", or this session's place in one (issue 41)
    ]
