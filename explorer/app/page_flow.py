"""A model page's figure flow: its live views' life cycle and where their figures go.

:class:`FigureFlow` makes the page's views the first time data suit the page, re-targets them
(``set_data``), draws each frame the runner hands it (accumulating views get every recorded
snapshot since the last frame), skips during a run the views scrolled out of sight and lets
them catch up. :class:`PagePanes` keeps the page's panes in order: the story's figures in one
flowing row (an estimate beside its truth) with their captions under it, the other figures in
the body, the per-task errors under the settings from the first fit on. Testable without a
browser: :meth:`FigureFlow.render` draws a snapshot, :meth:`PagePanes.figures` lists the
figures.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from explorer.app.access import name_figures, name_panes
from explorer.app.components import LiveText, figure_pane, flowing_row, set_flex_objects
from explorer.app.export import savable
from explorer.app.work import after_this_paint, batched, locked
from explorer.viz.live import LiveView, ObjectiveView, TruthMatrixView

__all__ = ["FigureFlow", "PagePanes"]


def _out_of_sight(view: LiveView, offscreen: set[str]) -> bool:
    """True when every figure of ``view`` is among the ``offscreen`` figure ids."""
    return bool(view.figures) and all(fig.id in offscreen for fig in view.figures)


def _shows_truth(view: LiveView, fig) -> bool:
    """True when ``fig`` of ``view`` draws the ground truth (a truth view, or a view's
    ``truth`` heatmap beside its estimate)."""
    beside = getattr(view, "truth", None)
    if isinstance(beside, TruthMatrixView):   # an estimate beside its truth
        beside = beside.heatmap
    return isinstance(view, TruthMatrixView) or fig is getattr(beside, "figure", None)


class PagePanes:
    """Where a model page's figures go (see the module docstring).

    Parameters
    ----------
    page : ModelPage
        The declaration (its ``story``: how many of the first views are the story's).
    views : callable () -> list of LiveView
        The page's views (none until data suit the page).
    errors : BarView
        The per-task test errors.
    settings : pn.Column
        The column of the page's settings; the errors' pane joins it once ``has_errors()``.
    has_errors : callable () -> bool
        Whether a fit's per-task errors are drawn.
    """

    def __init__(self, page, views, errors, settings: pn.Column, has_errors):
        self.page, self.views, self.errors = page, views, errors
        self.settings, self.has_errors = settings, has_errors
        self.pacer = None   # the runner's FramePacer, told which figures the page shows
        self.panels: list = []   # the page's own panels (:meth:`add_panels`)
        self.body = pn.FlexBox(sizing_mode="stretch_width")
        self.story = flowing_row()   # the pair side by side, one under the other if narrow
        self.captions = pn.Column(margin=0)
        self._captions: list[tuple[Any, LiveText]] = []   # (a view's caption, its text here)
        self._errors_pane = figure_pane(savable(errors.figure))
        self._panes: dict[int, pn.pane.Bokeh] = {id(errors.figure): self._errors_pane}
        self._first_draw = True    # the page has not been drawn yet
        self._all_shown = False    # every figure made so far has its pane in the body
        self._listed: list[int] = []   # ids of the figures the panes were last arranged for

    def add_panels(self, panels) -> None:
        """The page's own panels: those not ``below`` the page flow in the body."""
        self.panels = list(panels)
        self.body.extend([panel.layout for panel in self.panels if not panel.below])

    def show(self, visible: bool) -> None:
        """Show the figures, or hide them (the data do not suit the page)."""
        for part in (self.body, self.story, self.captions):
            part.visible = visible

    def set_captions(self, views) -> None:
        """The captions of the story's ``views``. A view's caption is a Bokeh Div, whose
        every new text lays out the whole page in the browser (Outliers at its largest data:
        12 times in 3 s of a run); the page shows its text in a LiveText instead
        (:meth:`sync_captions`)."""
        self._captions = [(view.caption, LiveText(html=view.caption.text,
                                                  width=view.caption.width, margin=(0, 10)))
                          for view in views if getattr(view, "caption", None) is not None]
        self.captions.objects = [text for _, text in self._captions]

    def sync_captions(self) -> None:
        """The story's captions show their views' current text."""
        for caption, text in self._captions:
            if text.html != caption.text:
                text.html = caption.text

    def figures(self) -> list:
        """Every figure of the page, in order."""
        return [f for view in self.views() for f in view.figures] + [self.errors.figure]

    def sync(self, *, frame: bool = False) -> None:
        """Show every view's figures, in order: the story's in their row, the others in the
        body, then the page's own panels. ``frame``: called for a live frame, which changes
        the views only (the panels' figures keep their names).

        A view may make figures late (the first time the data or a snapshot needs them: the
        fewest models); existing panes are kept. The first time a served page is drawn, only
        the story's figures (on screen at 1366 x 768) go with the page; the others, below the
        fold, follow in the next message (:func:`after_this_paint`), so the browser paints the
        page without laying out and drawing them first. The per-task errors, empty before a
        fit, join the page with the first fit's (~40 Bokeh models that a class opening the
        link together would otherwise all be sent empty). A curve cannot join late: a figure
        whose range placeholder the browser first saw hidden kept it hidden when Reset
        emptied the curve ("could not set initial ranges", measured).
        """
        self.sync_captions()
        figures, views = self.figures(), self.views()
        for view in views:   # titles may change with the data or the fit
            for fig in view.figures:
                name_figures(fig, truth=_shows_truth(view, fig))
        name_figures(self.errors.figure)
        for panel in () if frame else self.panels:
            name_panes(panel.layout)
        listed = [id(fig) for fig in figures]
        if self._all_shown and listed == self._listed:
            return   # every frame comes here: nothing new
        self._listed = listed   # (a view may drop a figure: a truth the data do not have)
        for fig in [fig for view in views for fig in _every_figure(view)]:
            if id(fig) not in self._panes:
                self._panes[id(fig)] = figure_pane(savable(fig))   # (maybe in a callback)
        self._arrange(views)
        if self.pacer is not None:
            self.pacer.watched = [fig.id for fig in figures]

    def _arrange(self, views) -> None:
        """The panes in place: the story's row, the body (the rest after the first paint),
        the per-task errors under the settings once a fit drew them."""
        # A figure a view drops for now (the truth, hidden for a class to guess) keeps its
        # place, hidden: the reveal then shows it, where taking it out and back in drew the
        # whole row again in the browser (1-2 s of a student's browser at a reveal).
        shown = {id(fig) for view in views for fig in view.figures}
        for view in views:
            for fig in _every_figure(view):
                # The figure's own flag, not its pane's: Panel's Bokeh pane, told of a
                # change of its own parameters, copies the figure's properties back into
                # them, and the themed figure's style sheets are objects its list refuses
                # (a TypeError that stopped the reveal halfway: seen in a served session).
                fig.visible = id(fig) in shown
        story = [self._panes[id(fig)] for view in views[:self.page.story]
                 for fig in _every_figure(view)]
        rest = [self._panes[id(fig)] for view in views[self.page.story:]
                for fig in _every_figure(view)]
        self._all_shown = True
        if self._first_draw:
            self._first_draw = False
            if after_this_paint(self.sync):
                rest, self._all_shown = [], False
        if self._errors_pane not in self.settings.objects:
            if self._all_shown and self.has_errors():
                # empty before a fit: it joins the settings with the first fit's errors
                self.settings.append(self._errors_pane)
            else:
                self._all_shown = False
        if [id(p) for p in story] != [id(obj) for obj in self.story.objects]:
            set_flex_objects(self.story, story)
        ours = {id(pane) for pane in self._panes.values()}
        wanted = rest + [obj for obj in self.body.objects if id(obj) not in ours]
        if [id(obj) for obj in wanted] != [id(obj) for obj in self.body.objects]:
            set_flex_objects(self.body, wanted)


def _every_figure(view) -> list:
    """Every figure ``view`` may show (``all_figures``), in order; its ``figures`` are those
    it shows now."""
    return list(getattr(view, "all_figures", None) or view.figures)


class FigureFlow:
    """The live views of one session's model page and their frames (see the module
    docstring); ``panes`` (:class:`PagePanes`) places their figures.

    Parameters
    ----------
    page : ModelPage
        The declaration (its ``views``, ``story``, ``objective``).
    errors, settings, has_errors :
        The per-task test errors, the settings' column and whether a fit's errors are
        drawn (see :class:`PagePanes`).
    """

    def __init__(self, page, errors, settings: pn.Column, has_errors):
        self.page = page
        self.runner = None   # the page's runner (:meth:`follow`)
        # made when the page first has data that suit it (:meth:`make_views`): a page
        # opened on data it cannot use shows its note and costs no figures
        self.views: list[LiveView] = []
        self.panes = PagePanes(page, lambda: self.views, errors, settings, has_errors)
        self._behind: set[int] = set()   # views skipped while off screen (their index)
        self._last_snapshot = None
        self.shown_step = 0   # the step the accumulating views have drawn up to

    def follow(self, runner) -> None:
        """Draw the frames of ``runner``; views scrolled back in sight catch up."""
        self.runner, self.panes.pacer = runner, runner.pacer
        runner.pacer.param.watch(locked(self.scrolled), "offscreen")

    def make_views(self) -> None:
        """The page's live views and their captions, the first time data suit the page (a
        view makes most of its figures then; Outliers' seven figures cost ~0.27 s of Python
        a session opened on data it cannot use)."""
        if self.views:
            return
        page = self.page
        views = list(page.views())
        if page.objective:
            views.append(ObjectiveView(page.objective, log=page.objective_log, width=480))
        self.views = views
        self.panes.set_captions(views[:page.story])

    def set_data(self, train) -> None:
        """Every view re-targeted at ``train`` (its figures patched, none made again)."""
        for view in self.views:
            view.set_data(train)

    def clear(self, *, everything: bool = True) -> None:
        """The runner was reset: the curves empty; ``everything`` (not a warm refit, which
        keeps the views on screen) empties every view."""
        self.shown_step = 0
        self._behind.clear()
        self._last_snapshot = None
        for view in self.views:
            if view.accumulates:
                view.clear()
        if everything:
            for view in self.views:
                view.clear()
            self.panes.sync_captions()

    def replay(self) -> None:
        """Draw the newest recorded snapshot again (the views were re-targeted at new names
        or truth for the same examples): the curves from the start."""
        self.shown_step = 0
        for view in self.views:
            if view.accumulates:
                view.clear()
        snapshot = self.runner.session.latest()
        if snapshot is not None:
            self.render(snapshot)

    def render(self, snapshot) -> None:
        """Show ``snapshot``: the newest while running, any recorded one when scrubbing.

        Accumulating views (curves) get every recorded snapshot since the last frame, in
        order (frames skip steps); after a scrub back they are cleared and replayed.
        """
        self._accumulate(snapshot)
        # During a run, a view whose figures are all scrolled out of the viewport is not
        # redrawn (drawing costs the browser); it catches up when it scrolls in, and when
        # the run stops (catch_up).
        offscreen = (set(self.runner.pacer.offscreen)
                     if self.runner.session.state == "running" else set())
        for k, view in enumerate(self.views):
            if view.accumulates:
                continue
            if _out_of_sight(view, offscreen):
                self._behind.add(k)
                continue
            self._behind.discard(k)
            view.update(snapshot)
        self._last_snapshot = snapshot
        self.shown_step = snapshot.step
        self.panes.sync(frame=True)

    def _accumulate(self, snapshot) -> None:
        accumulating = [view for view in self.views if view.accumulates]
        if not accumulating:
            return
        back = snapshot.step < self.shown_step
        since = 0 if back else self.shown_step
        recorded = [s for s in self.runner.session.record.items()
                    if since < s.step <= snapshot.step]
        for view in accumulating:
            if back:
                view.clear()
            view.extend(recorded)

    def scrolled(self, *_) -> None:
        """The browser reported other figures out of sight: views back in sight catch up,
        in one message."""
        with batched(pn.state.curdoc):
            self.catch_up()

    @property
    def catching_up(self) -> bool:
        """Views skipped while off screen wait for the last frame (:meth:`catch_up`)."""
        return bool(self._behind) and self._last_snapshot is not None

    def catch_up(self, *, everything: bool = False) -> None:
        """Draw the last frame's snapshot in the views skipped while off screen: those back
        in the viewport, or all of them (``everything``: the run stopped)."""
        if not self._behind or self._last_snapshot is None:
            return
        offscreen = set() if everything else set(self.runner.pacer.offscreen)
        for k in sorted(self._behind):
            view = self.views[k]
            if not _out_of_sight(view, offscreen):
                self._behind.discard(k)
                view.update(self._last_snapshot)
