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

import logging
from urllib.parse import parse_qsl, urlencode

import panel as pn

from explorer.app.components import ShownPageLayout
from explorer.app.process import (
    configure_process,
    freeze_imports,
    release_memory_soon,
    warm_up_kernels,
)
from explorer.app.widgets import ParamForm
from explorer.app.work import WorkService, batched
from explorer.parameters import public_parameters
from explorer.viz.live import escape

__all__ = ["ExplorerApp", "build_app", "configure_process", "serve", "warm_up_kernels"]

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
    "column (task id or name) and a `y` column (class label or number). Up to 10 MB."
)

#: How long a session waits for its websocket (and lives on after its tab closed). A session
#: is built when its page is requested; with a class opening the link at once, connecting
#: took longer than Bokeh's default 15 s, the session was discarded and the browser got a
#: fresh one without its link's settings. 30 s covers that, and a closed tab's memory is
#: back within ~35 s (sessions are looked for every 5 s).
SESSION_LIFETIME_MS = 30_000
CHECK_SESSIONS_MS = 5_000

# ---------------------------------------------------------------------- forms
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


def _state_form(state, names) -> ParamForm:
    """Widgets for the state's own parameters (seeds, train fraction), validated the same way."""
    form = ParamForm(state, names, {n: getattr(state, n) for n in names},
                     apply=lambda name, value: setattr(state, name, value), notify=state.notify,
                     current=lambda name: getattr(state, name))
    state.param.watch(lambda event: form.show(event.name, event.new), names)
    return form


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
        self.state = state if state is not None else ExplorerState(
            pages={slug: getattr(page, "params", None) for slug, page in self.pages.items()})
        self._built: dict[str, pn.viewable.Viewable] = {}
        # invisible: keeps the browser's layout passes to the shown page (see the class)
        self.sidebar = [*self._make_sidebar(), ShownPageLayout(width=0, height=0, margin=0)]
        self._page_error = pn.pane.Alert("", alert_type="danger", visible=False)
        self._frames: dict[str, pn.viewable.Viewable] = {}   # slug -> the page's layout
        self.main = pn.Column(self._page_error, sizing_mode="stretch_width", min_height=600)
        self._shown_view = None
        self.state.param.watch(self._show_page, "page")
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

        from explorer.app.scenarios import ScenarioChooser

        # the select of data/scenarios, the chosen one's story, "(edited)" once data change
        scenario_choice = ScenarioChooser(
            state, pages={slug: page.title for slug, page in self.pages.items()})

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

        seeds = _state_form(state, ["data_seed", "init_seed", "train_fraction"])

        from explorer.app.components import CsvUpload
        from explorer.app.state import UPLOAD_LIMIT_BYTES

        upload = CsvUpload(limit_bytes=UPLOAD_LIMIT_BYTES, sizing_mode="stretch_width",
                           height=40)

        def on_upload(event) -> None:
            state.load_uploaded_csv(upload.content, upload.filename or "upload.csv")
            upload.content = ""   # the dataset holds the data; drop the text

        def on_refused(event) -> None:
            size, _, name = event.new.partition(" ")
            state.notify(f"Could not use {name!r}: the file is {int(size):,} bytes; the limit "
                         f"is {UPLOAD_LIMIT_BYTES:,} bytes. It was not sent.", "error")

        upload.param.watch(on_upload, "upload_id")
        upload.param.watch(on_refused, "refused")

        summary = pn.pane.Markdown(self._summary(), sizing_mode="stretch_width",
                                   styles={"font-size": "1.05em"}, css_classes=["summary"])
        error = pn.pane.Alert("", alert_type="danger", visible=False,
                              sizing_mode="stretch_width")

        def on_data(*events) -> None:
            summary.object = self._summary() + (" *(building the new data...)*"
                                                if state.building else "")
            error.object = (f"{escape(state.error)}  \nThe data shown is the last one that "
                            "built." if state.error else "")
            error.visible = bool(state.error)

        state.param.watch(on_data, ["dataset", "error", "building"])

        # "Hide the truth": the generator's settings say what the truth is, so they fold too
        hide = _state_form(state, ["hide_truth"])
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
        ]

    def _description(self) -> str:
        entry = self.state.entry
        return entry.description if entry is not None else "Data from your CSV file."

    def _summary(self) -> str:
        return f"**Data:** {self.state.summary()}"

    # ------------------------------------------------------------------ main area
    def close(self) -> None:
        """End the session's work: every built page stops its fit and drops its record (a page
        whose clean-up fails does not keep the others from theirs)."""
        for slug, view in self._built.items():
            close = getattr(view, "close", None)
            if close is None:
                continue
            try:
                close()
            except Exception:  # noqa: BLE001 -- logged; the next page still closes
                log.exception("closing page %r failed", slug)
        self._built.clear()
        self._frames.clear()

    @property
    def shown(self):
        """What the main area shows: the chosen page's view (or the alert of a page that
        could not be built)."""
        return self._shown_view if self._shown_view is not None else self._page_error

    def _show_page(self, *events) -> None:
        """Show the chosen page: built the first time (then kept for the session), and every
        page built so far stays in the main area. A switch changes one style rule of the main
        area (:func:`hidden_pages_rule`), not the pages' ``visible`` (toggling that made
        Bokeh re-create the page's views and re-measure every figure)."""
        with batched(pn.state.curdoc):
            self._show_chosen_page()

    def _show_chosen_page(self) -> None:
        state = self.state
        page = self.pages[state.page]
        view = self._built.get(page.slug)
        built_now = view is None
        if built_now:
            try:
                view = page.build(state)
            except Exception as exc:  # a page bug must not take the app down
                log.exception("building page %r failed", page.slug)
                state.notify(f"The page {page.title!r} could not be built: {exc}", "error")
                self._page_error.object = f"The page could not be built: {escape(exc)}"
                self._page_error.visible = True
                self._shown_view = None
                self.main.stylesheets = [hidden_pages_rule(None)]
                return
            self._built[page.slug] = view
            # the page's own layout, shown or hidden (an extra wrapping Column kept the Trees
            # page's figures from ever reporting drawn in Chromium: no document_ready, so
            # Panel never counted the session connected and its callbacks never ran)
            frame = pn.panel(view)
            frame.css_classes = [*frame.css_classes, "explorer-page",
                                 f"explorer-page-{page.slug}"]
            self._frames[page.slug] = frame
        self._page_error.visible = False
        for slug, built in self._built.items():   # hidden pages wait for data changes
            if slug != page.slug and hasattr(built, "set_shown"):
                built.set_shown(False)
        if hasattr(view, "set_shown"):
            view.set_shown(True)
        self._shown_view = view
        # the new page and the rule that shows it in one update of the main area (each
        # update made Bokeh walk every model of the document)
        update = {"stylesheets": [hidden_pages_rule(page.slug)]}
        if built_now:
            update["objects"] = [*self.main.objects, self._frames[page.slug]]
        self.main.param.update(**update)


def hidden_pages_rule(shown: str | None) -> str:
    """The main area's style rule that shows only the page ``shown`` (a slug; None: none).

    Every page sits in one grid cell, so the shown one is at the top whatever its place in
    the column; the others are ``content-visibility: hidden``: not drawn, not clickable,
    but laid out, so showing one again re-creates and re-measures nothing (painted in the
    next frame). Measured with ``bench_app.py`` during runs, against ``display: none``
    (which re-measured every figure of the page shown again, one whole-document layout a
    figure): back to a page 0.0 s against 0.45-2.4 s until painted; a first visit to a page
    0.84-1.0 s against 0.48-0.84 s (hidden pages are laid out with the new one).

    >>> "explorer-page-trees" in hidden_pages_rule("trees")
    True
    """
    keep = f":not(.explorer-page-{shown})" if shown else ""
    return (":host { display: grid !important; grid-template-columns: minmax(0, 1fr); "
            "align-items: start; }\n"
            ":host > * { grid-area: 1 / 1; }\n"
            f":host > .explorer-page{keep} {{ content-visibility: hidden !important; }}")


def _token_arguments() -> dict[str, str]:
    """The page request's query when the session has no URL of its own.

    With ``--num-procs 2`` a page's request and its websocket may reach different server
    processes; the second then makes the session when the websocket connects, from the
    session token, whose payload carries the request's arguments but whose "URL" is the
    websocket's (no query). Measured with 30 sessions on 2 processes: 3 of 5 links opened
    the default page, and their settings were lost. The arguments restore them.
    """
    arguments = pn.state.session_args or {}
    return {str(key): values[-1].decode("utf-8", "replace") if isinstance(values[-1], bytes)
            else str(values[-1])
            for key, values in arguments.items()
            if values and not str(key).startswith("bokeh-")}


def _bind_url(state) -> list[tuple[str, str]]:
    """Two-way binding of the scenario with the URL query; returns the notices it caused."""
    location = pn.state.location
    if location is None:
        return []
    seen = len(state.notices)
    incoming = dict(parse_qsl((location.search or "").lstrip("?"))) or _token_arguments()
    if incoming:
        state.from_query(incoming)

    def write(*events) -> None:
        # Only the scenario as it stands: a refused or unknown value from a link is not kept.
        search = "?" + urlencode(state.to_query())
        if search != location.search:
            location.search = search

    state.param.watch(write, ["dataset_name", "data_params", "data_seed", "init_seed",
                              "train_fraction", "page", "query_changed", "scenario"])
    write()
    # The browser reports its own (shorter) search when the page connects; write the whole
    # scenario back once it has loaded so the address bar is a complete link at once.
    pn.state.onload(write)
    return list(state.notices)[seen:]


def _show_notification(level: str, message: str) -> None:
    """A toast; the message is escaped (it may quote a link, a file name or a typed value)."""
    area = pn.state.notifications
    if area is None or not message:
        return
    duration = {"error": 12000, "warning": 8000}.get(level, 4000)
    getattr(area, level)(escape(message), duration=duration)


class ExplorerTemplate(pn.template.BootstrapTemplate):
    """The Bootstrap template, attached to a session's document in one walk of its models.

    Attaching a template adds one root per area and Panel freezes and thaws the document
    around each, so Bokeh walked every model of the new session ~9 times (~420 models on
    the Outliers page: 0.41 s of the 0.75 s a new session took before its HTML went out).
    Frozen around the whole attachment, Bokeh walks them once when it thaws (0.26 s).
    """

    def server_doc(self, doc=None, title=None, location=True):
        doc = doc if doc is not None else pn.state.curdoc
        if doc is None:
            return super().server_doc(doc, title, location)
        roots_before = set(pn.state._fake_roots)
        with doc.models.freeze():
            doc = super().server_doc(doc, title, location)
        # Panel (1.9) lists the template's root of each document process-wide and removes it
        # when the session ends through ``_refs``, which it never fills: one id a session was
        # kept for good, and those scattered strings kept the ended sessions' memory from
        # going back to the system. Filled here, Panel's own clean-up removes it.
        added = [ref for ref in pn.state._fake_roots if ref not in roots_before]
        if added:
            self._refs[doc] = added[-1]
        return doc


def build_app() -> pn.template.BootstrapTemplate:
    """The whole app for one session: a Bootstrap template titled "MTL Explorer"."""
    pn.extension(notifications=True)
    configure_process()
    warm_up_kernels()
    from explorer.app.pages import PAGES
    from explorer.app.state import ExplorerState

    freeze_imports()   # the first session's build: everything is imported, nothing made yet

    state = ExplorerState(pages={page.slug: page.params for page in PAGES})
    early = _bind_url(state)
    app = ExplorerApp(state=state, pages=PAGES)
    # From now on data are built off the event loop (the link's data were built while the
    # session's document was made, before anything was shown).
    state.offloader = WorkService.for_document(pn.state.curdoc)
    # A closed tab ends its session: stop its fits (a paused worker would keep the whole
    # session alive), drop builds in flight and let go of what they hold.
    def end_session(context) -> None:
        state.offloader.close()
        app.close()
        release_memory_soon()

    pn.state.on_session_destroyed(end_session)
    state.param.watch(lambda event: _show_notification(*event.new), "notification")
    if early:
        pn.state.onload(lambda: [_show_notification(*notice) for notice in early])
    template = ExplorerTemplate(
        # one root per area: every extra root makes Bokeh recompute the whole document
        title=TITLE, sidebar=[pn.Column(*app.sidebar, sizing_mode="stretch_width")],
        main=[app.main], header_background=ACCENT,
        sidebar_width=360,
        # Panel's busy flag is one per process: every callback of any session toggled every
        # session's spinner (15 sessions a process changing a field every 2 s: ~200 spinner
        # patches a second). The pages say what they are doing themselves (the runner's
        # status, "building the new data..." under the data summary).
        busy_indicator=None,
    )
    template.config.raw_css.append(CSS)
    return template


def serve(port: int = 5006, address: str = "localhost", show: bool = False, num_procs: int = 1,
          allow_origins: tuple[str, ...] = (), **kwargs):
    """Serve the app, the same as ``panel serve apps/explorer.py`` (blocks).

    By default only this machine can connect: the server listens on ``localhost`` and the
    websocket accepts the origin ``localhost:<port>`` only. To open it to a classroom
    network, listen on all interfaces and name the origin the students' browsers use, e.g.
    ``serve(address="0.0.0.0", allow_origins=("192.168.1.10:5006",))``.

    Parameters
    ----------
    port : int
    address : str
        Address to listen on.
    show : bool
        Open a browser tab.
    num_procs : int
        Server processes (``panel serve --num-procs``).
    allow_origins : tuple of str
        Further websocket origins (``host:port``) to accept besides localhost.
    **kwargs
        Passed to :func:`panel.serve`.
    """
    if num_procs == 1:
        configure_process()
        warm_up_kernels()  # forked processes warm up on their first session instead
    origins = [f"localhost:{port}", f"127.0.0.1:{port}", *allow_origins]
    options = {
        "websocket_max_message_size": 20 * 1024 * 1024,
        "unused_session_lifetime_milliseconds": SESSION_LIFETIME_MS,
        "check_unused_sessions_milliseconds": CHECK_SESSIONS_MS,
        **kwargs,
    }
    return pn.serve({"explorer": build_app}, port=port, address=address, show=show,
                    num_procs=num_procs, title=TITLE, websocket_origin=origins, **options)
