"""The MTL Explorer app: a Panel template with the scenario sidebar and the registered pages.

``panel serve apps/explorer.py`` and ``python -m explorer serve`` both serve
:func:`build_app`; in a notebook, ``ExplorerApp()`` shows the same sidebar and pages.

* State lives in :class:`explorer.app.state.ExplorerState` (dataset spec, seeds, page).
* Pages come from the registry :data:`explorer.app.pages.PAGES`; each is built the first
  time it is shown and then cached for the session.
* The scenario is written to the URL query on every change and read back when a session
  starts, so a copied link reproduces the data, the seeds and the page (pages sync their own
  hyper-parameters with ``pn.state.location.sync``).
* Errors become notifications (and a red note under the data summary); the app keeps
  working.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import threading
from urllib.parse import parse_qsl, urlencode

import numpy as np
import panel as pn

__all__ = ["ExplorerApp", "build_app", "serve", "sync_with_url", "warm_up_kernels"]

log = logging.getLogger(__name__)

TITLE = "MTL Explorer"
ACCENT = "#1f4e79"

#: Readable on a projector: bigger base font, roomy widgets.
CSS = """
:root { --bokeh-font-size: 15px; --bs-body-font-size: 1.05rem; }
body { font-size: 16px; }
#header .title { font-size: 1.7rem; font-weight: 600; }
"""

CSV_NOTE = (
    "**Your own data (CSV).** One row per example: numeric feature columns, a `task` "
    "column (task id or name) and a `y` column (class label or number). Up to 20 MB."
)

_warm_lock = threading.Lock()
_warm_thread: threading.Thread | None = None


def warm_up_kernels() -> threading.Thread | None:
    """Compile the numba kernels in a background thread, once per process.

    Calls ``explorer.solvers.tree_split.warm_up()`` when that module exists, so a user's first
    click never waits for a compilation. Returns the thread (None when there is nothing to
    warm).
    """
    global _warm_thread
    with _warm_lock:
        if _warm_thread is not None:
            return _warm_thread
        if importlib.util.find_spec("explorer.solvers.tree_split") is None:
            return None

        def run() -> None:
            try:
                from explorer.solvers import tree_split

                tree_split.warm_up()
            except Exception:  # a failed warm-up only costs time later
                log.exception("warming up the compiled kernels failed")

        _warm_thread = threading.Thread(target=run, name="explorer-warm-up", daemon=True)
        _warm_thread.start()
        return _warm_thread


# ---------------------------------------------------------------------- parameter form
def _log_grid(low: float, high: float, value: float, integer: bool) -> list:
    grid = np.geomspace(max(low, 1e-12), high, 25)
    values = sorted({int(round(v)) for v in grid} if integer
                    else {float(f"{v:.3g}") for v in grid})
    if value not in values:
        values = sorted([*values, value])
    return values


def param_widget(spec, value):
    """A widget for one :class:`~explorer.data.catalog.ParamSpec`.

    Returns ``(widget, value_parameter)``: the parameter whose changes are applied (sliders
    apply on release).
    """
    widget, attr = _param_widget(spec, value)
    if spec.doc and "description" in widget.param:
        widget.description = spec.doc
    return widget, attr


def _param_widget(spec, value):
    label = spec.label or spec.name.replace("_", " ")
    common = {"label": label, "sizing_mode": "stretch_width"}
    bounds = spec.bounds or (None, None)
    bounded = bounds[0] is not None and bounds[1] is not None
    if spec.kind == "bool":
        return pn.widgets.Checkbox(value=bool(value), **common), "value"
    if spec.kind == "choice":
        options = {str(choice): choice for choice in spec.choices}
        return pn.widgets.Select(options=options, value=value, **common), "value"
    if spec.kind == "text":
        return pn.widgets.TextInput(value=str(value), **common), "value"
    integer = spec.kind == "int"
    if bounded and spec.log and bounds[0] > 0:
        options = _log_grid(bounds[0], bounds[1], value, integer)
        return pn.widgets.DiscreteSlider(options=options, value=value, **common), "value_throttled"
    if bounded and integer:
        return pn.widgets.IntSlider(start=int(bounds[0]), end=int(bounds[1]), value=int(value),
                                    **common), "value_throttled"
    if bounded:
        span = float(bounds[1]) - float(bounds[0])
        step = 10 ** math.floor(math.log10(span / 100)) if span > 0 else 0.01
        return pn.widgets.FloatSlider(start=float(bounds[0]), end=float(bounds[1]),
                                      value=float(value), step=step, **common), "value_throttled"
    limits = {"start": bounds[0], "end": bounds[1]}
    if integer:
        return pn.widgets.IntInput(value=int(value), **limits, **common), "value"
    return pn.widgets.FloatInput(value=float(value), **limits, **common), "value"


class DataParamsForm(pn.viewable.Viewer):
    """The generator's parameters as widgets, rebuilt when the dataset changes."""

    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self._widgets: dict[str, pn.widgets.Widget] = {}
        self._layout = pn.Column(sizing_mode="stretch_width", margin=0)
        self._syncing = False
        state.param.watch(self._rebuild, "dataset_name")
        state.param.watch(self._sync_values, "data_params")
        self._rebuild()

    def __panel__(self):
        return self._layout

    def _rebuild(self, *events) -> None:
        entry = self._state.entry
        self._widgets = {}
        items: list = []
        if entry is None:
            items.append(pn.pane.Markdown(f"Uploaded file: **{self._state.uploaded_name}**"))
        else:
            values = self._state.current_params()
            for spec in entry.params:
                widget, attr = param_widget(spec, values[spec.name])
                widget.param.watch(self._make_callback(spec.name), attr)
                self._widgets[spec.name] = widget
                items.append(widget)
        self._layout[:] = items

    def _make_callback(self, name: str):
        def apply(event) -> None:
            if self._syncing or event.new is None:
                return
            self._state.set_data_param(name, event.new)
        return apply

    def _sync_values(self, *events) -> None:
        values = self._state.current_params()
        self._syncing = True
        try:
            for name, widget in self._widgets.items():
                if name in values and widget.value != values[name]:
                    widget.value = values[name]
        except ValueError:  # e.g. a value from a link that is not on a log slider's grid
            self._rebuild()
        finally:
            self._syncing = False


# ---------------------------------------------------------------------- the app
def _two_way(widget, state, name: str) -> None:
    """Keep ``widget.value`` and ``state.<name>`` equal (either side may change)."""
    def to_state(event) -> None:
        if getattr(state, name) != event.new:
            setattr(state, name, event.new)

    def to_widget(event) -> None:
        if widget.value != event.new:
            widget.value = event.new

    widget.param.watch(to_state, "value")
    state.param.watch(to_widget, name)


class ExplorerApp(pn.viewable.Viewer):
    """Sidebar (scenario) + main area (the chosen page) over one :class:`ExplorerState`.

    Parameters
    ----------
    state : ExplorerState, optional
        A new one by default.
    pages : sequence of Page, optional
        Defaults to the registry :data:`explorer.app.pages.PAGES`.
    """

    def __init__(self, state=None, pages=None, **params):
        super().__init__(**params)
        from explorer.app.pages import PAGES
        from explorer.app.state import ExplorerState

        self.pages = {page.slug: page for page in (PAGES if pages is None else pages)}
        self.state = state if state is not None else ExplorerState(pages=list(self.pages))
        self._built: dict[str, pn.viewable.Viewable] = {}
        self.sidebar = self._make_sidebar()
        self.main = pn.Column(sizing_mode="stretch_width", min_height=600)
        self.state.param.watch(self._show_page, ["page", "dataset"])
        self._show_page()

    def __panel__(self):
        return pn.Row(pn.Column(*self.sidebar, width=340), self.main, sizing_mode="stretch_width")

    # ------------------------------------------------------------------ sidebar
    def _make_sidebar(self) -> list:
        from explorer.app.state import UPLOADED
        from explorer.data.catalog import CATALOG

        state = self.state
        page_choice = pn.widgets.RadioButtonGroup(
            label="Page", options={page.title: slug for slug, page in self.pages.items()},
            value=state.page, orientation="vertical", color="primary",
            variant="outline", sizing_mode="stretch_width",
            stylesheets=[".bk-btn { font-size: 16px; padding: 6px 10px; }"])
        _two_way(page_choice, state, "page")

        def dataset_options() -> dict:
            options = {entry.label: name for name, entry in CATALOG.items()}
            if UPLOADED in state.param.dataset_name.objects:
                options[f"Uploaded: {state.uploaded_name}"] = UPLOADED
            return options

        from explorer.data.catalog import list_presets, load_preset

        scenarios = {"(choose a scenario)": ""}
        scenarios.update({load_preset(n).get("title", n): n for n in list_presets()})
        scenario_choice = pn.widgets.Select(label="Scenario", options=scenarios, value="",
                                            sizing_mode="stretch_width")

        def on_scenario(event) -> None:
            if event.new:
                state.apply_preset(event.new)

        scenario_choice.param.watch(on_scenario, "value")

        dataset_choice = pn.widgets.Select(label="Dataset", options=dataset_options(),
                                           value=state.dataset_name, sizing_mode="stretch_width")

        def on_objects(*events):
            dataset_choice.options = dataset_options()
            dataset_choice.value = state.dataset_name

        state.param.watch(on_objects, "dataset_name")
        _two_way(dataset_choice, state, "dataset_name")
        description = pn.pane.Markdown(self._description(), sizing_mode="stretch_width",
                                       styles={"font-size": "0.95em", "color": "#444"})
        state.param.watch(lambda *e: setattr(description, "object", self._description()),
                          "dataset_name")

        seeds = pn.Row(
            pn.widgets.IntInput.from_param(state.param.data_seed, label="Data seed", width=140),
            pn.widgets.IntInput.from_param(state.param.init_seed, label="Init seed", width=140),
        )
        train_fraction = pn.widgets.FloatSlider.from_param(
            state.param.train_fraction, label="Train fraction", sizing_mode="stretch_width")

        upload = pn.widgets.FileInput(accept=".csv", multiple=False, sizing_mode="stretch_width")

        def on_upload(event) -> None:
            if event.new:
                state.load_uploaded_csv(event.new, upload.filename or "upload.csv")

        upload.param.watch(on_upload, "value")

        summary = pn.pane.Markdown(self._summary(), sizing_mode="stretch_width",
                                   styles={"font-size": "1.05em"}, css_classes=["summary"])
        error = pn.pane.Alert("", alert_type="danger", visible=False,
                              sizing_mode="stretch_width")

        def on_data(*events) -> None:
            summary.object = self._summary()
            error.object = (f"{state.error}  \nThe data shown is the last one that built."
                            if state.error else "")
            error.visible = bool(state.error)

        state.param.watch(on_data, ["dataset", "error"])
        return [
            pn.pane.Markdown("### Page", margin=(0, 10)), page_choice,
            pn.pane.Markdown("### Data", margin=(10, 10, 0, 10)), scenario_choice,
            dataset_choice, description,
            DataParamsForm(state), seeds, train_fraction, summary, error,
            pn.pane.Markdown(CSV_NOTE, styles={"font-size": "0.9em"}), upload,
        ]

    def _description(self) -> str:
        entry = self.state.entry
        return entry.description if entry is not None else "Data from your CSV file."

    def _summary(self) -> str:
        return f"**Data:** {self.state.summary()}"

    # ------------------------------------------------------------------ main area
    def _show_page(self, *events) -> None:
        state = self.state
        page = self.pages[state.page]
        kinds = tuple(getattr(page, "kinds", ()) or ())
        dataset = state.dataset
        if dataset is not None and kinds and dataset.kind not in kinds:
            self.main[:] = [pn.pane.Alert(
                f"**{page.title}** works with {' or '.join(kinds)} data; the current dataset "
                f"is {dataset.kind}. Choose another dataset (or its `kind`) in the sidebar.",
                alert_type="info", sizing_mode="stretch_width")]
            return
        view = self._built.get(page.slug)
        if view is None:
            try:
                view = page.build(state)
            except Exception as exc:  # a page bug must not take the app down
                log.exception("building page %r failed", page.slug)
                state.notify(f"The page {page.title!r} could not be built: {exc}", "error")
                self.main[:] = [pn.pane.Alert(f"The page could not be built: {exc}",
                                              alert_type="danger")]
                return
            self._built[page.slug] = view
        if len(self.main) != 1 or self.main[0] is not view:
            self.main[:] = [view]


def _bind_url(state) -> list[tuple[str, str]]:
    """Two-way binding of the scenario with the URL query; returns the notices it caused."""
    location = pn.state.location
    if location is None:
        return []
    seen = len(state.notices)
    incoming = dict(parse_qsl((location.search or "").lstrip("?")))
    if incoming:
        state.from_query(incoming)

    def write(*events) -> None:
        current = dict(parse_qsl((location.search or "").lstrip("?")))
        foreign = {key: value for key, value in current.items()
                   if not state.owns_query_key(key)}
        search = "?" + urlencode({**foreign, **state.to_query()})
        if search != location.search:
            location.search = search

    state.param.watch(write, ["dataset_name", "data_params", "data_seed", "init_seed",
                              "train_fraction", "page"])
    write()
    # The browser reports its own (shorter) search when the page connects; write the whole
    # scenario back once it has loaded so the address bar is a complete link at once.
    pn.state.onload(write)
    return list(state.notices)[seen:]


def sync_with_url(parameterized, parameters, state=None) -> None:
    """Bind a page's hyper-parameters to the URL query, both ways (``pn.state.location.sync``).

    A link with ``?lam=0.3`` restores the value; a change rewrites the URL. Values a link
    carries that the parameters refuse (wrong type, out of bounds) are left out and, when
    ``state`` is given, reported with :meth:`ExplorerState.notify`. Does nothing outside a
    server session (e.g. in a notebook).

    Parameters
    ----------
    parameterized : param.Parameterized
    parameters : list of str or dict of str -> str
        Parameter names (dict: parameter name -> query key). Keys must not collide with the
        scenario's (``data``, ``data_seed``, ``init_seed``, ``train``, ``page``, ``d.*``).
    state : ExplorerState, optional
    """
    location = pn.state.location
    if location is None or pn.state.curdoc is None or pn.state.curdoc.session_context is None:
        return

    def on_error(values: dict) -> None:
        if state is not None:
            shown = ", ".join(f"{key}={value!r}" for key, value in values.items())[:200]
            state.notify(f"Some values in the link could not be used: {shown}.", "warning")

    location.sync(parameterized, parameters, on_error=on_error)


def _show_notification(level: str, message: str) -> None:
    area = pn.state.notifications
    if area is None or not message:
        return
    duration = {"error": 12000, "warning": 8000}.get(level, 4000)
    getattr(area, level)(message, duration=duration)


def build_app() -> pn.template.BootstrapTemplate:
    """The whole app for one session: a Bootstrap template titled "MTL Explorer"."""
    pn.extension(notifications=True)
    warm_up_kernels()
    from explorer.app.pages import PAGES
    from explorer.app.state import ExplorerState

    state = ExplorerState(pages=[page.slug for page in PAGES])
    early = _bind_url(state)
    app = ExplorerApp(state=state, pages=PAGES)
    state.param.watch(lambda event: _show_notification(*event.new), "notification")
    if early:
        pn.state.onload(lambda: [_show_notification(*notice) for notice in early])
    template = pn.template.BootstrapTemplate(
        # one root per area: every extra root makes Bokeh recompute the whole document
        title=TITLE, sidebar=[pn.Column(*app.sidebar, sizing_mode="stretch_width")],
        main=[app.main], header_background=ACCENT,
        sidebar_width=360,
    )
    template.config.raw_css.append(CSS)
    return template


def serve(port: int = 5006, address: str | None = None, show: bool = False, num_procs: int = 1,
          **kwargs):
    """Serve the app, the same as ``panel serve apps/explorer.py`` (blocks).

    Parameters
    ----------
    port : int
    address : str, optional
        Address to listen on (default: all interfaces as Bokeh decides).
    show : bool
        Open a browser tab.
    num_procs : int
        Server processes (``panel serve --num-procs``).
    **kwargs
        Passed to :func:`panel.serve` (e.g. ``websocket_origin``).
    """
    if num_procs == 1:
        warm_up_kernels()  # forked processes warm up on their first session instead
    return pn.serve({"explorer": build_app}, port=port, address=address, show=show,
                    num_procs=num_procs, title=TITLE, **kwargs)

