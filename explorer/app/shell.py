"""The app's shell: the sidebar beside the main area, which shows the chosen page.

Pages come from the registry :data:`explorer.app.pages.PAGES`; each is built the first time
it is shown and then kept for the session. Errors become notifications; the app keeps
working.
"""

from __future__ import annotations

import logging

import panel as pn

from explorer.app.class_link import ClassLink
from explorer.app.components import ShownPageLayout
from explorer.app.process import freeze_long_lived
from explorer.app.sidebar import make_sidebar
from explorer.app.work import Admission, batched, served
from explorer.viz.live import escape

__all__ = ["ExplorerApp", "hidden_pages_rule"]

log = logging.getLogger(__name__)


class ExplorerApp(pn.viewable.Viewer):
    """Sidebar (scenario) + main area (the chosen page) over one :class:`ExplorerState`.

    Parameters
    ----------
    state : ExplorerState, optional
        A new one by default.
    pages : sequence of Page, optional
        Defaults to the registry :data:`explorer.app.pages.PAGES`.
    admission : Admission, optional
        The server process's policy for sessions opening together (``build_app`` passes
        the process's one); by default one of its own (a notebook, a test: nobody to wait
        for).
    """

    def __init__(self, state=None, pages=None, admission: Admission | None = None, **params):
        super().__init__(**params)
        from explorer.app.pages import PAGES
        from explorer.app.state import ExplorerState

        self.pages = {page.slug: page for page in (PAGES if pages is None else pages)}
        self.state = state if state is not None else ExplorerState(
            pages={slug: getattr(page, "params", None) for slug, page in self.pages.items()})
        self._built: dict[str, pn.viewable.Viewable] = {}
        #: the sidebar's items (:func:`make_sidebar`), in :attr:`sidebar_area`
        self.sidebar: list = []
        # invisible: keeps the browser's layout passes to the shown page (see the class)
        self.sidebar_area = pn.Column(ShownPageLayout(width=0, height=0, margin=0),
                                      sizing_mode="stretch_width")
        self._page_error = pn.pane.Alert("", alert_type="danger", visible=False)
        self._frames: dict[str, pn.viewable.Viewable] = {}   # slug -> the page's layout
        self.main = pn.Column(self._page_error, sizing_mode="stretch_width", min_height=600)
        self._shown_view = None
        #: True once a browser drew the session's first document (Panel's ``onload``)
        self.drawn = False
        self.admission = admission if admission is not None else Admission()
        doc = pn.state.curdoc
        if served(doc):
            self.admission.admit(doc)
        if self.state.class_code:
            # A class's link: joined now, while the document is made (the store is read at
            # once: no loop yet), so the round's scenario, page and hidden truth are the
            # state's before anything is built or watched. Joined later (by the sidebar, built
            # in a turn of its own when a class opens together), the round's scenario changed
            # the sidebar's widgets in a message that reached the browser before BokehJS had
            # drawn them: its Select threw, and the student's page never came.
            ClassLink.of(self.state)
        self.state.param.watch(self._show_page, "page")
        # served while other sessions open: the first document is the template and this
        # line; the sidebar and the page follow once it is drawn
        self._coming = pn.pane.Markdown(
            f"*Opening the {escape(self.pages[self.state.page].title)} page...*",
            margin=(10, 20), styles={"font-size": "1.1em"})
        if self._first_page_after_load():
            self.main.objects = [*self.main.objects, self._coming]
        else:
            self._make_sidebar()
            self._show_page()
        if served(doc):   # (not panel serve --warm's build: its first visitor is alone)
            self.admission.opened()
            pn.state.onload(self._drawn)

    def __panel__(self):
        return pn.Row(pn.Column(self.sidebar_area, width=340), self.main,
                      sizing_mode="stretch_width")

    def _drawn(self) -> None:
        """The first document is drawn: the session's objects (all of it, for a visitor on
        their own) live as long as it does, out of the collector's way."""
        self.drawn = True
        freeze_long_lived()

    def _make_sidebar(self) -> None:
        """Build the sidebar's items over the session's state (once)."""
        if self.sidebar:
            return
        self.sidebar = make_sidebar(self.state, self.pages)
        self.sidebar_area.objects = [*self.sidebar, *self.sidebar_area.objects]

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

    def _first_page_after_load(self) -> bool:
        """When sessions open together (a class opening the link), arrange for this one's
        first page to be built once the browser reports the first document drawn (Panel's
        ``onload``), in turn with the others (:meth:`~explorer.app.work.Admission.in_turn`),
        and return True. Returns False where the page goes with the first document instead:
        a visitor on their own (:meth:`~explorer.app.work.Admission.opening_together`), no
        served session, or ``panel serve --warm`` (no event loop yet: it warms the page's
        code up for the first visitor).

        Deferred, a session's first document is the template and a line saying the page
        is coming (~15 Bokeh models instead of ~300, ~35 ms of the server instead of
        ~0.35 s): thirty students get their first document within seconds, and the
        sidebars and pages follow in the order they asked, each build in a turn of its
        own, so the sessions already open are answered between them. A visitor on their
        own gets the page sooner with the document (measured: 0.5-0.7 s sooner drawn,
        bench_app's first render).
        """
        import asyncio

        doc = pn.state.curdoc
        if not served(doc) or pn.state.loaded:
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        if not self.admission.opening_together():
            return False

        def after_load() -> None:
            # three turns of ~0.1-0.2 s each (measured under load): the sidebar; the page's
            # objects; their Bokeh models, sent, and the session's objects frozen
            for build in (self._make_sidebar, self._build_chosen_page, self._show_page_built):
                self.admission.in_turn(doc, build)

        pn.state.onload(after_load)
        return True

    def _show_page(self, *events) -> None:
        """Show the chosen page: built the first time (then kept for the session), and every
        page built so far stays in the main area. A switch changes one style rule of the main
        area (:func:`hidden_pages_rule`), not the pages' ``visible``, which would make Bokeh
        re-create the page's views and re-measure every figure."""
        with batched(pn.state.curdoc):
            self._show_chosen_page()

    def _show_page_built(self) -> None:
        """The last turn of a session opened with others: its page shown, and the objects
        it made (they live as long as the session) moved out of the collector's way."""
        self._show_page()
        freeze_long_lived()

    def _build_chosen_page(self):
        """The chosen page's view, built the first time without being shown; None when its
        build fails (the page's alert then says why)."""
        page = self.pages[self.state.page]
        if page.slug in self._built:
            return self._built[page.slug]
        try:
            view = page.build(self.state)
        except Exception as exc:  # a page bug must not take the app down
            log.exception("building page %r failed", page.slug)
            self.state.notify(f"The page {page.title!r} could not be built: {exc}", "error")
            self._page_error.object = f"The page could not be built: {escape(exc)}"
            return None
        self._built[page.slug] = view
        # the page's own layout, not wrapped: an extra Column kept some pages' figures
        # from ever reporting drawn in Chromium, so the session never counted connected
        frame = pn.panel(view)
        frame.css_classes = [*frame.css_classes, "explorer-page", f"explorer-page-{page.slug}"]
        self._frames[page.slug] = frame
        return view

    def _show_chosen_page(self) -> None:
        page = self.pages[self.state.page]
        view = self._build_chosen_page()
        if view is None:
            self._page_error.visible = True
            self._shown_view = None
            self.main.stylesheets = [hidden_pages_rule(None)]
            return
        self._page_error.visible = False
        for slug, built in self._built.items():   # hidden pages wait for data changes
            if slug != page.slug and hasattr(built, "set_shown"):
                built.set_shown(False)
        if hasattr(view, "set_shown"):
            view.set_shown(True)
        self._shown_view = view
        # the new page and the rule that shows it in one update of the main area (each
        # update makes Bokeh walk every model of the document)
        update = {"stylesheets": [hidden_pages_rule(page.slug)]}
        frame = self._frames[page.slug]
        if not any(obj is frame for obj in self.main.objects):
            update["objects"] = [*(obj for obj in self.main.objects if obj is not self._coming),
                                 frame]
        self.main.param.update(**update)


def hidden_pages_rule(shown: str | None) -> str:
    """The main area's style rule that shows only the page ``shown`` (a slug; None: none).

    Every page sits in one grid cell, so the shown one is at the top whatever its place in
    the column; the others are ``content-visibility: hidden``: not drawn, but laid out, so
    showing one again re-creates and re-measures nothing (``display: none`` would re-measure
    every figure of the page shown again; see benchmarks/bench_app.py). A hidden page's own
    box stays where it is, on top of the pages before it, with the size Bokeh last gave it:
    ``pointer-events: none`` lets the clicks through to the page shown (the UI tour once found
    a hidden page's empty box over the shown page's buttons).

    >>> rule = hidden_pages_rule("trees")
    >>> "explorer-page-trees" in rule, "pointer-events: none" in rule
    (True, True)
    """
    keep = f":not(.explorer-page-{shown})" if shown else ""
    return (":host { display: grid !important; grid-template-columns: minmax(0, 1fr); "
            "align-items: start; }\n"
            ":host > * { grid-area: 1 / 1; }\n"
            f":host > .explorer-page{keep} {{ content-visibility: hidden !important; "
            "pointer-events: none !important; }")
