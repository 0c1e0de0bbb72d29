"""Serving the app: one session's template (:func:`build_app`), the link it reads and
writes, its end, and the server (:func:`serve`).

``panel serve apps/explorer.py`` and ``python -m explorer serve`` both serve
:func:`build_app`.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qsl, urlencode

import panel as pn
from panel.io.state import set_curdoc

from explorer._compat import (
    stylesheets_from_this_server,
    template_root_forgotten_on_session_end,
    theme_kept_on_pane_updates,
)
from explorer.app.process import (
    configure_process,
    freeze_long_lived,
    release_memory_soon,
    warm_up_kernels,
)
from explorer.app.shell import ExplorerApp
from explorer.app.work import Admission, WorkService, served
from explorer.viz.live import escape

__all__ = ["ExplorerTemplate", "bind_url", "build_app", "process_admission", "serve"]

log = logging.getLogger(__name__)

TITLE = "MTL Explorer"
ACCENT = "#1f4e79"

#: Readable on a projector: bigger base font, roomy widgets.
CSS = """
:root { --bokeh-font-size: 15px; --bs-body-font-size: 1.05rem; }
body { font-size: 16px; }
#header .title { font-size: 1.7rem; font-weight: 600; }
"""

#: Toast backgrounds under their white text, each at least 4.5:1 (WCAG AA for normal text;
#: Notyf's and Panel's defaults, e.g. white on yellow #ffc107, are 1.6:1 to 4:1).
TOAST_BACKGROUNDS = {"error": "#b02a37", "warning": "#8a4b00", "success": "#1e6b34",
                     "info": ACCENT}


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (1 to 21).

    >>> round(contrast_ratio("#ffffff", "#ffc107"), 2)
    1.63
    """
    def luminance(colour: str) -> float:
        channels = [int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    lighter, darker = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


#: How long a session waits for its websocket (and lives on after its tab closed): a class
#: opening one link at once needs longer than Bokeh's default 15 s to connect, else a
#: session is discarded and the browser gets a fresh one without its link's settings.
SESSION_LIFETIME_MS = 30_000
CHECK_SESSIONS_MS = 5_000

# ---------------------------------------------------------------------- the link
def _token_arguments() -> dict[str, str]:
    """The page request's query when the session has no URL of its own.

    With ``--num-procs 2`` a page's request and its websocket may reach different server
    processes; the second then makes the session from the session token, whose payload
    carries the request's arguments but whose "URL" is the websocket's (no query).
    """
    arguments = pn.state.session_args or {}
    return {str(key): values[-1].decode("utf-8", "replace") if isinstance(values[-1], bytes)
            else str(values[-1])
            for key, values in arguments.items()
            if values and not str(key).startswith("bokeh-")}


def bind_url(state, location=None) -> list[tuple[str, str]]:
    """The link is the state: apply the session's URL query to ``state``, then write
    :meth:`~explorer.app.state.ExplorerState.to_query` to the address bar on every change of
    a setting (``query_changed``) and whenever the browser reports another address, so a
    refused or unknown value never stays in the link. Returns the notices it caused.

    ``location`` defaults to the session's ``pn.state.location``. Not
    ``location.sync``: why the link is a layer of its own is said in :mod:`explorer.app.link`.
    """
    location = location if location is not None else pn.state.location
    if location is None:
        return []
    seen = len(state.notices)
    incoming = dict(parse_qsl((location.search or "").lstrip("?"))) or _token_arguments()
    if incoming:
        state.from_query(incoming)

    def write(*events) -> None:
        search = "?" + urlencode(state.to_query())
        if search != location.search:
            location.search = search

    def browser_reported(event) -> None:
        # The browser reports the address it was opened with when it connects; answered
        # on the next tick, because Panel does not echo a property back while it handles
        # the browser's change of it.
        document = pn.state.curdoc
        if served(document):
            document.add_next_tick_callback(write)
        else:
            write()

    state.param.watch(write, "query_changed")
    location.param.watch(browser_reported, "search")
    write()
    return list(state.notices)[seen:]


def _show_notification(level: str, message: str) -> None:
    """A toast; the message is escaped (it may quote a link, a file name or a typed value)."""
    area = pn.state.notifications
    if area is None or not message:
        return
    duration = {"error": 12000, "warning": 8000}.get(level, 4000)
    area.send(escape(message), duration=duration, type=level,
              background=TOAST_BACKGROUNDS.get(level))


# ---------------------------------------------------------------------- the session
class ExplorerTemplate(pn.template.BootstrapTemplate):
    """The Bootstrap template, attached to a session's document in one walk of its models
    (Panel re-walks the document for each of the template's roots otherwise), and
    forgotten by Panel when the session ends."""

    def server_doc(self, doc=None, title=None, location=True):
        doc = doc if doc is not None else pn.state.curdoc
        if doc is None:
            return super().server_doc(doc, title, location)
        with template_root_forgotten_on_session_end(self, doc), \
                pn.io.hold(doc, freeze=True):
            return super().server_doc(doc, title, location)


def themed_by_the_template(doc) -> None:
    """Components made in the session from now on are themed by the template, like the
    first ones: it gives each the Bootstrap rules of its kind.

    The template makes its design the session's default design; Panel then renders a
    component made later (a page built on its first visit, views made when data first suit
    a page, figures sent after the paint) as an isolated one, with the whole of
    Bootstrap's style sheets (~230 KB) in its shadow root, and every style change of the
    browser in such a root is slower (Outliers at its largest data: 29 ms of style
    recalculation a frame against 9). Called once the browser has the page (Panel's
    ``onload``): the page's HTML takes the design's scripts from the same default.
    """
    with set_curdoc(doc):
        pn.config.design = None


def build_app(models=None, *, admission: Admission | None = None
              ) -> pn.template.BootstrapTemplate:
    """The whole app for one session: a Bootstrap template titled "MTL Explorer".

    ``models``: further estimator classes (or ``"pkg.mod:Class"`` names) with a page each,
    besides those named in ``MTL_EXPLORER_MODELS`` and the ``mtl_explorer.models`` entry
    points (:func:`explorer.app.custom.configured_models`). ``admission``: the policy for
    sessions opening together (:class:`~explorer.app.work.Admission`), one per server
    process: by default the process's own (:func:`process_admission`)."""
    pn.extension(notifications=True)
    configure_process()
    listening = _listening()
    if listening:
        # before any model is made: a session made from its token alone (--num-procs)
        # would link every style sheet to the CDN
        stylesheets_from_this_server(pn.state.curdoc)
    # ``panel serve --warm`` runs this once before the server listens (no loop yet): the
    # warm-up is paid there, before any visitor; in a session it goes on off the loop.
    warm_up_kernels(wait=not listening)
    from explorer.app.custom import configured_models
    from explorer.app.pages import pages_for
    from explorer.app.state import ExplorerState

    pages = pages_for(configured_models(models or ()))
    freeze_long_lived()   # the imports (first session), the sessions built so far

    doc = pn.state.curdoc
    if listening and doc is not None:
        # first of the session's onload callbacks: before a page built then (ExplorerApp)
        pn.state.onload(lambda: themed_by_the_template(doc))
    state = ExplorerState(pages={page.slug: page.params for page in pages})
    early = bind_url(state)
    app = ExplorerApp(state=state, pages=pages,
                      admission=admission if admission is not None else process_admission())
    # From now on data are built off the event loop (the link's data were built while the
    # session's document was made, before anything was shown).
    state.work = WorkService.for_document(pn.state.curdoc)

    def end_session(context) -> None:
        # a paused fit would keep the whole session alive
        state.work.close()
        app.close()
        release_memory_soon(drawn=app.drawn)

    pn.state.on_session_destroyed(end_session)
    state.param.watch(lambda event: _show_notification(*event.new), "notification")
    if early:
        pn.state.onload(lambda: [_show_notification(*notice) for notice in early])
    template = ExplorerTemplate(
        # one root per area: every extra root makes Bokeh recompute the whole document
        title=TITLE, sidebar=[app.sidebar_area],
        main=[app.main], header_background=ACCENT,
        sidebar_width=360,
        # Panel's busy flag is one per process: every callback of any session would toggle
        # every session's spinner; the pages say what they are doing themselves.
        busy_indicator=None,
    )
    template.config.raw_css.append(CSS)
    theme_kept_on_pane_updates(template)
    return template


def _listening() -> bool:
    """True when an event loop runs (a server's session), False before it listens."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def process_admission() -> Admission:
    """This server process's :class:`~explorer.app.work.Admission`: made by the first
    session's build and kept across sessions in Panel's process-wide cache
    (``pn.state.as_cached``; ``panel serve apps/explorer.py`` runs the app's script once per
    session, so nothing of the script outlives a session). Each process of ``--num-procs``
    has its own."""
    return pn.state.as_cached("explorer.app.admission", Admission.from_environment)


def serve(port: int = 5006, address: str = "localhost", show: bool = False, num_procs: int = 1,
          allow_origins: tuple[str, ...] = (), models=(), **kwargs):
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
    models : sequence of class or str
        Your estimator classes (or ``"pkg.mod:Class"`` names), a page each
        (:mod:`explorer.app.custom`); checked here, before the server listens: a class that
        breaks the estimator contract raises ``ContractError`` naming it.
    **kwargs
        Passed to :func:`panel.serve`.
    """
    # paid before the server listens (and before --num-procs forks: the children inherit
    # the compiled kernels), so no visitor waits for it
    from explorer.app.custom import configured_models

    models = configured_models(models)   # refused now, not in a visitor's session
    configure_process()
    warm_up_kernels(wait=True)
    origins = [f"localhost:{port}", f"127.0.0.1:{port}", *allow_origins]
    options = {
        "websocket_max_message_size": 20 * 1024 * 1024,
        "unused_session_lifetime_milliseconds": SESSION_LIFETIME_MS,
        "check_unused_sessions_milliseconds": CHECK_SESSIONS_MS,
        **kwargs,
    }
    # this process's (each forked process gets its own copy)
    admission = Admission.from_environment()

    def app():   # a plain function: Panel serves a partial as its repr
        return build_app(models, admission=admission)

    return pn.serve({"explorer": app}, port=port,
                    address=address, show=show, num_procs=num_procs, title=TITLE,
                    websocket_origin=origins, **options)
