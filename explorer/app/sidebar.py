"""The sidebar: page choice, scenario, data set and its parameters, seeds, CSV upload.

Every widget is derived from a ``param`` declaration (:class:`~explorer.app.widgets.ParamForm`)
and bound to the session's :class:`~explorer.app.state.ExplorerState`; the sidebar never
builds data itself.
"""

from __future__ import annotations

import panel as pn

from explorer.app.class_link import class_sidebar
from explorer.app.components import CsvUpload
from explorer.app.scenarios import ScenarioChooser
from explorer.app.state import UPLOAD_LIMIT_BYTES, UPLOADED
from explorer.app.widgets import ParamForm
from explorer.data.catalog import CATALOG
from explorer.parameters import public_parameters
from explorer.viz.live import escape

__all__ = ["CSV_NOTE", "DataParamsForm", "make_sidebar"]

CSV_NOTE = (
    "**Your own data (CSV).** One row per example: numeric feature columns, a `task` "
    "column (task id or name) and a `y` column (class label or number). Up to 10 MB."
)


class DataParamsForm(pn.viewable.Viewer):
    """The chosen catalog entry's parameters as widgets (from its ``param`` declaration),
    rebuilt when the data set changes; every value typed is validated by the declaration."""

    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self._form = None
        self._layout = pn.Column(sizing_mode="stretch_width", margin=0)
        state.param.watch(self._rebuild, "dataset_name")
        state.param.watch(self._sync_values, "data_params")
        self._rebuild()

    def __panel__(self):
        return self._layout

    def _rebuild(self, *events) -> None:
        entry = self._state.entry
        if entry is None:
            self._form = None
            self._layout[:] = [pn.pane.Markdown(
                f"Uploaded file: **{escape(self._state.uploaded_name)}**")]
            return
        values = self._state.current_params()
        self._form = ParamForm(entry.params, public_parameters(entry.params), values,
                               apply=self._state.set_data_param, notify=self._state.notify,
                               current=lambda name: self._state.current_params()[name])
        self._layout[:] = [self._form]

    def _sync_values(self, *events) -> None:
        if self._form is not None:
            for name, value in self._state.current_params().items():
                self._form.show(name, value)


def state_form(state, names) -> ParamForm:
    """Widgets for the state's own parameters (seeds, train fraction), validated the same way."""
    form = ParamForm(state, names, {n: getattr(state, n) for n in names},
                     apply=lambda name, value: setattr(state, name, value), notify=state.notify,
                     current=lambda name: getattr(state, name))
    form.follow(state)
    return form


def two_way(widget, state, name: str) -> None:
    """Keep ``widget.value`` and ``state.<name>`` equal (either side may change)."""
    def to_state(event) -> None:
        if getattr(state, name) != event.new:
            setattr(state, name, event.new)

    def to_widget(event) -> None:
        if widget.value != event.new:
            widget.value = event.new

    widget.param.watch(to_state, "value")
    state.param.watch(to_widget, name)


def _description(state) -> str:
    entry = state.entry
    return entry.description if entry is not None else "Data from your CSV file."


def _summary(state) -> str:
    return f"**Data:** {state.summary()}"


def make_sidebar(state, pages) -> list:
    """The sidebar's items over ``state``; ``pages`` maps slug -> page (title, in order)."""
    page_choice = pn.widgets.RadioButtonGroup(
        label="Page", options={page.title: slug for slug, page in pages.items()},
        value=state.page, orientation="vertical", color="primary",
        variant="outline", sizing_mode="stretch_width",
        stylesheets=[".bk-btn { font-size: 16px; padding: 6px 10px; }"])
    two_way(page_choice, state, "page")

    def dataset_options() -> dict:
        options = {entry.label: name for name, entry in CATALOG.items()}
        if UPLOADED in state.param.dataset_name.objects:
            options[f"Uploaded: {state.uploaded_name}"] = UPLOADED
        return options

    # the select of data/scenarios, the chosen one's story, "(edited)" once data change
    scenario_choice = ScenarioChooser(
        state, pages={slug: page.title for slug, page in pages.items()})

    dataset_choice = pn.widgets.Select(label="Dataset", options=dataset_options(),
                                       value=state.dataset_name, sizing_mode="stretch_width")

    def on_objects(*events):
        dataset_choice.options = dataset_options()
        dataset_choice.value = state.dataset_name

    state.param.watch(on_objects, "dataset_name")
    two_way(dataset_choice, state, "dataset_name")
    description = pn.pane.Markdown(_description(state), sizing_mode="stretch_width",
                                   styles={"font-size": "0.95em", "color": "#444"})
    state.param.watch(lambda *e: setattr(description, "object", _description(state)),
                      "dataset_name")

    seeds = state_form(state, ["data_seed", "init_seed", "train_fraction"])
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
