"""The model-page kit: a page is a :class:`ModelPage` declaration; :class:`ModelPageView` runs it.

A declaration names the page's parameter class (widgets, URL keys ``<slug>.<name>`` and
messages derive from it), an estimator factory that receives the init seed, the live views
(:class:`explorer.viz.live.LiveView`), the baselines fitted on the same split, the data kinds
it accepts and the minimum data it needs. The kit owns everything else, once for every page:

* widgets from the declaration, each change validated and refused with one message;
* URL sync (the state registers the page's parameters; a link's values are applied);
* the live-fit runner: the estimator and the data are built on the event loop when a run
  starts, the fit, the baselines, the test scores and the page's ``after`` step run on the
  worker;
* the page's own panels (:class:`PagePanel`: an inspector, a figure computed after the fit)
  told of the data, the finished fit and a reset; their off-loop work goes through the
  session's work service under a key of their own, cancelled when the fit's inputs change;
* re-targeting every view when the data change (``set_data``), clearing on reset;
* the objective curve (streamed from the record), per-task test error of the model beside
  each baseline, a summary line (plus the page's own truth pairing);
* a warm refit when a hyper-parameter moves after a finished fit (``warm_start=True``);
* a polite note, never a crash, when the data do not suit the page;
* "Show code" (the data, model, baselines and fit that reproduce the page's numbers), every
  figure's PNG (its toolbar on hover), the figures as one HTML file, the results as CSV.

Everything shown that came from a user (names from an upload, values from a link) is escaped.

:class:`ModelPageView` wires parts with one job each, every one testable without a browser:
``fit`` (:class:`~explorer.app.page_fit.PageFit`: the runner, what a run is made of, the warm
refit), ``flow`` (:class:`~explorer.app.page_flow.FigureFlow`: the views, their frames, the
off-screen culling; its ``panes`` place the figures), ``outcome``
(:class:`~explorer.app.page_summary.PageSummary`: the summary and the per-task errors),
``notice`` (:class:`~explorer.app.page_summary.PageNote`: the note about the data) and
``exports`` (:class:`~explorer.app.page_exports.PageExports`: Show code, the CSV).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import panel as pn
import param

from explorer.app.access import name_panes
from explorer.app.components import beside, figure_pane, intro_card
from explorer.app.guess import GuessPanel
from explorer.app.matrix_upload import YourMatrixPanel
from explorer.app.page_exports import PageExports
from explorer.app.page_fit import PageFit, per_task_error
from explorer.app.page_flow import FigureFlow
from explorer.app.page_panel import FitInputs, FitResult, PagePanel
from explorer.app.page_summary import PageNote, PageSummary
from explorer.app.sweep_panel import SweepPanel
from explorer.app.widgets import SettingsForm
from explorer.app.work import WorkService, in_notebook_kernel, locked
from explorer.models.constraints import estimator_from
from explorer.parameters import public_parameters
from explorer.viz.live import LiveView

# figure_pane: a page's panels make their figures' panes with it (themed when made late)
__all__ = ["FitInputs", "FitResult", "ModelPage", "ModelPageView", "PageHooks", "PagePanel",
           "figure_pane", "make_from", "per_task_error", "settings_form"]


#: Least width of a model page's right-hand column (px): the story's pair of figures. Beside
#: the 300 px settings it fits a 1366 px window with the sidebar open; in a narrower one the
#: column goes under the settings.
STORY_MIN_WIDTH = 620


def make_from(estimator: type, **transforms) -> Callable[..., Any]:
    """A page's ``make`` (or a baseline's) derived from its declaration: ``make(params,
    random_state, data)`` is :func:`~explorer.models.constraints.estimator_from` ``(params,
    estimator, random_state=random_state, **transforms)``: the page's settings feed the
    parameters they declare, the init seed is ``random_state``, ``transforms`` are fixed."""
    def make(params, random_state, data):
        return estimator_from(params, estimator, random_state=random_state, **transforms)

    return make


def settings_form(state, slug: str, params: param.Parameterized) -> SettingsForm:
    """The widgets of a page's settings (URL keys ``<slug>.<name>``), made by ``from_param``
    from the page's instance ``params``: a widget, a scenario or a link changes the one value
    the widget shows and the fit uses; a refused text is reported once (``state.notify``)."""
    state.register_page_params(slug, params)
    return SettingsForm(params, public_parameters(params), notify=state.notify)


@dataclass(frozen=True)
class PageHooks:
    """A model page's optional hooks (:attr:`ModelPage.hooks`); each may be left out.

    Attributes
    ----------
    explain : callable (estimator, FitResult, train, test) -> str, optional
        Extra summary text (e.g. detection against the truth), Markdown; any name in it must
        be escaped with :func:`explorer.viz.live.escape`.
    after : callable (estimator, FitInputs) -> dict, optional
        Further work on the fit's worker once the fit and the baselines are done (e.g. a
        held-out evaluation); its result is ``FitResult.extra``.
    advice : callable (data) -> str, optional
        Why usable data still do not show what the page is about ('' when they do; e.g.
        Transfer without task features): said, with the scenario's button, above a page
        that stays usable.
    code_terms : callable (params) -> (list of str, dict name -> str), optional
        For "Show code", in the units of the page's sliders: lines computed from ``train``
        before the model (e.g. ``lambda_max = ...``) and the estimator's parameters written
        as expressions of them (e.g. ``lambda_rows='0.2 * lambda_max["lambda_rows"]'``).
    panels : callable () -> list of PagePanel
        Creates the page's own panels (once per page and session).
    """

    explain: Callable[..., str] | None = None
    after: Callable[[Any, FitInputs], dict] | None = None
    advice: Callable[[Any], str] | None = None
    code_terms: Callable[[Any], tuple[list[str], dict[str, str]]] | None = None
    panels: Callable[[], Sequence[PagePanel]] = tuple


@dataclass(frozen=True)
class ModelPage:
    """The declaration of a model page.

    Attributes
    ----------
    slug, title : str
        URL key (``?page=<slug>``) and the sidebar's label.
    params : type of param.Parameterized
        The page's hyper-parameters. A tuple class attribute ``log_scale`` names the ones
        shown on a log-spaced slider.
    make : callable (params, random_state, data) -> estimator
        Builds the estimator (on the event loop); ``random_state`` is the init seed. Most
        are :func:`explorer.models.constraints.estimator_from` and the page's transforms.
    views : callable () -> list of LiveView
        Creates the page's live views (once per page and session).
    baselines : mapping name -> callable (params, random_state, data) -> estimator
        Fitted on the same training split after the model; shown per task beside it.
    kinds : tuple of str
        Data kinds the page accepts.
    min_tasks, min_per_task : int
        The least data the model needs (checked with a message, never a crash).
    intro : str
        Markdown shown above the controls.
    objective : str
        Title of the objective curve the kit adds ('' for none); ``objective_log``: log axis.
    warm : bool
        A hyper-parameter change after a finished fit refits from the current solution.
    pace : str or callable (data) -> str
        The speed the page opens at (a key of :data:`explorer.app.runner.SPEEDS`): chosen so
        that a fit at the defaults lasts 5-20 s, slow enough for a class to follow
        ("unthrottled" is in the same menu). A callable chooses it for each data set (a fit
        on 139 tasks may take ten times the steps): it is set again whenever the data change.
    scenario : str
        The scenario (``data/scenarios/<name>.json``) whose data suit the page: when the
        current data do not, the page says why and offers it in one click.
    steps_are : str
        What one step of the fit is on this page ("boosting rounds", "EM iterations"), said
        in the summary.
    story : int
        How many of the first views tell the page's story: their figures go in one row at
        the top of the page (an estimate beside its truth, the tree), with their captions
        under it; the others flow below, across the width.
    hooks : PageHooks
        The optional hooks: ``explain``, ``after``, ``advice``, ``code_terms``, ``panels``.
    """

    slug: str
    title: str
    params: type[param.Parameterized]
    make: Callable[..., Any]
    views: Callable[[], Sequence[LiveView]]
    baselines: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    kinds: tuple[str, ...] = ("classification", "regression")
    min_tasks: int = 1
    min_per_task: int = 2
    intro: str = ""
    objective: str = "Objective"
    objective_log: bool = False
    warm: bool = False
    pace: str | Callable[[Any], str] = "5 steps/s"
    scenario: str = ""
    story: int = 1
    steps_are: str = ""
    hooks: PageHooks = field(default_factory=PageHooks)

    def build(self, state) -> ModelPageView:
        """The page for one session (the registry calls this the first time it is shown)."""
        return ModelPageView(state, self)

    def pace_for(self, data) -> str:
        """The speed a fit on ``data`` opens at (see ``pace``)."""
        return self.pace(data) if callable(self.pace) else self.pace

    def problem_with(self, data) -> str:
        """Why ``data`` does not suit the page ('' when it does)."""
        if data is None:
            return "There is no data yet: choose a data set in the sidebar."
        if data.kind not in self.kinds:
            return (f"{self.title} works with {' or '.join(self.kinds)} data; the current data "
                    f"set is {data.kind}. Choose another data set (or its kind) in the sidebar.")
        if data.n_tasks < self.min_tasks:
            return (f"{self.title} needs at least {self.min_tasks} tasks; the data set has "
                    f"{data.n_tasks}.")
        smallest = int(np.min(data.task_sizes))
        if smallest < self.min_per_task:
            return (f"{self.title} needs at least {self.min_per_task} training examples per "
                    f"task; the smallest task has {smallest}. Use more examples per task or "
                    "a larger train fraction.")
        if data.kind == "classification":
            single = [str(data.task_names[t]) for t in range(data.n_tasks)
                      if np.unique(data.y[data.task == t]).size < 2]
            if single:
                return (f"{self.title} needs two classes in every task's training examples; "
                        f"{', '.join(single[:5])} {'has' if len(single) == 1 else 'have'} one. "
                        "Use more examples per task or a larger train fraction.")
        return ""


def _same_examples(shown, train) -> bool:
    """True when ``train`` holds the examples ``shown`` holds (the same arrays): only the
    task names or the truth changed (the sidebar's "Hide the truth")."""
    return (shown is not None and train is not None and shown.X is train.X
            and shown.y is train.y and shown.task is train.task)


class _PanelWork:
    """The work service of a page's panels: the session's, or in a notebook (whose state
    builds its data in the cell) one on the kernel's loop, so a figure made after a fit does
    not hold the kernel."""

    def __init__(self, state):
        self.state, self._kernel = state, None

    def __call__(self) -> WorkService:
        work = self.state.work
        if work.asynchronous or not in_notebook_kernel():
            return work
        if self._kernel is None:
            self._kernel = WorkService.for_document(pn.state.curdoc)
        return self._kernel


class ModelPageView(pn.viewable.Viewer):
    """One session's page for a :class:`ModelPage` declaration: it wires its parts (``fit``,
    ``flow``, ``outcome``, ``notice``, ``exports``: see the module docstring), owns the
    layout and follows the data: new examples re-target the views, new names or truth for
    the same examples relabel them (the fit stays), a hidden page catches up when shown."""

    def __init__(self, state, page: ModelPage, **params):
        super().__init__(**params)
        self.state, self.page = state, page
        self.params = page.params()
        self.form = settings_form(state, page.slug, self.params)
        self.outcome = PageSummary(page.baselines)
        # the per-task errors join the settings with the first fit's (FigureFlow.sync)
        self._settings_column = pn.Column(self.form, width=300, margin=0)
        self.flow = FigureFlow(page, self.outcome.errors, self._settings_column,
                               has_errors=lambda: self.outcome.shown is not None)
        self.fit = PageFit(state, page, self.params, render=self.flow.render,
                           finished=self._finished, cleared=self._cleared,
                           on_stop=self._caught_up_next)
        self.params.param.watch(locked(self.fit.params_changed), public_parameters(self.params))
        self.runner = self.fit.runner
        self.flow.follow(self.runner)
        self.notice = PageNote(state, page)
        self.exports = PageExports(state, page, self.params,
                                   figures=lambda: [*self.flow.views, self.errors.figure],
                                   fitted=lambda: self.fit.fitted,
                                   errors=lambda: self.outcome.shown)
        # the parts' panes, as the page shows them
        self.summary, self.details = self.outcome.summary, self.outcome.details
        self.errors, self.tools = self.outcome.errors, self.exports.tools
        self.note, self.scenario_button = self.notice.note, self.notice.scenario_button
        panes = self.flow.panes
        self.story, self.body, self.captions = panes.story, panes.body, panes.captions
        self._train = None         # the training data the views show
        self._relabel_pending = False
        self._shown, self._stale = True, False
        self.panels = [*page.hooks.panels(), GuessPanel(state, page, self.runner),
                       SweepPanel(page, self.params, state, self.runner),
                       YourMatrixPanel()]
        work = _PanelWork(state)
        for panel in self.panels:
            panel.bind(work, f"{page.slug}.{type(panel).__name__}")
        panes.add_panels(self.panels)
        self._layout = self._arrange()
        state.param.watch(locked(self._data_changed), "train")
        state.param.watch(locked(self._building_changed), "building")
        state.param.watch(locked(lambda *_: self.runner.reset()), "init_seed")
        self._data_changed()

    def _arrange(self) -> pn.Column:
        """One screen at 1366 x 768 tells the story: the settings and the per-task errors on
        the left; on the right the Run controls, the headline and the story's figures in one
        row (an estimate beside its truth); everything else below, across the width (in a
        narrower window the right-hand column goes under the settings: ``beside``)."""
        return pn.Column(
            intro_card(self.page.intro),
            beside(self._settings_column,
                   pn.Column(self.note, self.scenario_button, self.runner, self.summary,
                             self.story, self.captions, self.details, self.tools,
                             sizing_mode="stretch_width", margin=0),
                   right_least=STORY_MIN_WIDTH),
            self.body,
            *[panel.layout for panel in self.panels if panel.below],
            sizing_mode="stretch_width")

    def __panel__(self):
        return self._layout

    @property
    def views(self) -> list[LiveView]:
        """The page's live views (none until data suit the page)."""
        return self.flow.views

    def summary_text(self) -> str:
        """The summary of the last fit, Markdown: the headline above the story's figures and
        the page's own details under them ('' before a fit)."""
        return self.outcome.text()

    def code(self) -> str:
        """The Python that reproduces the page (:meth:`PageExports.code`)."""
        return self.exports.code()

    def close(self) -> None:
        """The session ended: stop the worker (paused or not), the panels' work, and release
        the record."""
        for panel in self.panels:
            panel.cancel()
        self.runner.close()
        self.fit.forget()

    @locked
    def set_shown(self, shown: bool) -> None:
        """The app shows or hides the page; a hidden page re-targets its views only when it is
        shown again (a data change costs nothing for pages nobody looks at)."""
        self._shown = shown
        if shown and self._stale:
            self._data_changed()
        elif shown and self._relabel_pending:
            self._relabel()
        self.runner.set_rendering(shown)   # a hidden page's fit goes on without frames

    # ------------------------------------------------------------------ the fit's outcome
    def _finished(self, estimator, result: FitResult) -> None:
        """The fit finished (on the event loop): the summary, then the page's panels."""
        self.fit.finished(estimator, result)
        self._summarise()
        for panel in self.panels:
            panel.fitted(estimator, result, self.fit.inputs)
            name_panes(panel.layout)

    def _caught_up_next(self) -> None:
        """The run stopped (paused, done, failed): the views skipped while off screen get its
        last frame in the next message, after the one that says so (a click on Pause waited
        for them: their heatmaps made and drawn before "paused" showed)."""
        if self.flow.catching_up:
            self.state.work.post("catch-up", lambda: self.flow.catch_up(everything=True))

    def _summarise(self) -> None:
        """The summary of the finished fit; its per-task errors join the page."""
        estimator, result, state = self.fit.fitted, self.fit.result, self.state
        explain = self.page.hooks.explain
        self.outcome.show(
            result.errors, steps=getattr(estimator, "n_iter_", self.runner.session.version),
            steps_are=self.page.steps_are, train=state.train,
            details=(lambda: explain(estimator, result, state.train, state.test))
            if explain else None)
        self.exports.refresh()
        self.flow.panes.sync()   # the per-task errors join the page with the first fit

    def _cleared(self) -> None:
        """The runner was reset: empty the live views (a warm refit keeps them on screen);
        the panels' work for the old fit stops."""
        for panel in self.panels:
            panel.cancel()
        warm = self.fit.warm_refit
        self.flow.clear(everything=not warm)
        if warm:
            return
        self.fit.forget()
        for panel in self.panels:
            panel.clear()
        self.outcome.clear()
        self.exports.refresh()

    # ------------------------------------------------------------------ the data
    def _relabel(self) -> None:
        """New names or truth for the same examples: the views are re-targeted and the
        fit on screen stays (its last snapshot and summary are drawn again)."""
        self._relabel_pending = False
        train = self._train = self.state.train
        self.flow.set_data(train)
        self.flow.panes.sync()
        self.errors.set_categories(train.task_names)
        self.flow.replay()
        if self.fit.fitted is not None and self.fit.result is not None:
            self._summarise()

    def _data_changed(self, *_) -> None:
        if not self._stale and _same_examples(self._train, self.state.train):
            if self._shown:
                self._relabel()
            else:
                self._relabel_pending = True
            return
        self._train = None
        self.fit.forget()
        self.runner.reset()
        self._stale = not self._shown
        if self._stale:
            return
        train = self.state.train
        problem = self.notice.say(train)
        self.flow.panes.show(not problem)
        for control in (self.runner, self.form):
            control.__panel__().visible = not problem
        if problem:
            return
        if callable(self.page.pace):
            self.runner.set_speed(self.page.pace(train))
        self.flow.make_views()
        self.flow.set_data(train)
        for panel in self.panels:
            panel.set_data(train)
        self._train = train
        self.flow.panes.sync()
        self.errors.set_categories(train.task_names)
        self._cleared()

    def _building_changed(self, *_) -> None:
        if self._shown and not self._stale:
            self.notice.say(self.state.train)
