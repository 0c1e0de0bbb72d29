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
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import panel as pn
import param

from explorer.app.access import name_figures, name_panes
from explorer.app.components import (
    LiveText,
    beside,
    figure_pane,
    flowing_row,
    intro_card,
    set_flex_objects,
)
from explorer.app.export import MATRIX_CODE, PageTools, dataset_code, results_csv, savable
from explorer.app.fit_session import FitJob
from explorer.app.guess import GuessPanel
from explorer.app.matrix_upload import YourMatrixPanel
from explorer.app.page_panel import FitInputs, FitResult, PagePanel
from explorer.app.runner import LiveFitRunner
from explorer.app.sweep_panel import SweepPanel
from explorer.app.widgets import ParamForm
from explorer.app.work import (
    WorkService,
    after_this_paint,
    batched,
    in_notebook_kernel,
    locked,
)
from explorer.compare.code import estimator_code, merged_imports
from explorer.parameters import public_parameters
from explorer.viz.live import BarView, LiveView, ObjectiveView, TruthMatrixView, escape

# figure_pane: a page's panels make their figures' panes with it (themed when made late)
__all__ = ["FitInputs", "FitResult", "ModelPage", "ModelPageView", "PagePanel", "figure_pane",
           "per_task_error", "settings_form"]


#: Least width of a model page's right-hand column (px): the story's pair of figures. Beside
#: the 300 px settings it fits a 1366 px window with the sidebar open; in a narrower one the
#: column goes under the settings.
STORY_MIN_WIDTH = 620


def settings_form(state, slug: str, params: param.Parameterized) -> ParamForm:
    """The widgets of a page's settings (URL keys ``<slug>.<name>``), each change validated
    by the declaration and refused with one message."""
    state.register_page_params(slug, params)
    names = public_parameters(params)
    form = ParamForm(params, names, {n: getattr(params, n) for n in names},
                     apply=lambda name, value: setattr(params, name, value),
                     notify=state.notify, current=lambda name: getattr(params, name))
    form.follow(params)   # a value set by a scenario or a link shows in its widget too
    return form


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
        Builds the estimator (on the event loop); ``random_state`` is the init seed.
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
    explain : callable (estimator, FitResult, train, test) -> str, optional
        Extra summary text (e.g. detection against the truth), Markdown; any name in it must
        be escaped with :func:`explorer.viz.live.escape`.
    objective : str
        Title of the objective curve the kit adds ('' for none); ``objective_log``: log axis.
    warm : bool
        A hyper-parameter change after a finished fit refits from the current solution.
    pace : str or callable (data) -> str
        The speed the page opens at (a key of :data:`explorer.app.runner.SPEEDS`): chosen so
        that a fit at the defaults lasts 5-20 s, slow enough for a class to follow
        ("unthrottled" is in the same menu). A callable chooses it for each data set (a fit
        on 139 tasks may take ten times the steps): it is set again whenever the data change.
    panels : callable () -> list of PagePanel
        Creates the page's own panels (once per page and session).
    after : callable (estimator, FitInputs) -> dict, optional
        Further work on the fit's worker once the fit and the baselines are done (e.g. a
        held-out evaluation); its result is ``FitResult.extra``.
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
    advice : callable (data) -> str, optional
        Why usable data still do not show what the page is about ('' when they do; e.g.
        Transfer without task features): said, with the scenario's button, above a page
        that stays usable.
    code_terms : callable (params) -> (list of str, dict name -> str), optional
        For "Show code", in the units of the page's sliders: lines computed from ``train``
        before the model (e.g. ``lambda_max = ...``) and the estimator's parameters written
        as expressions of them (e.g. ``lambda_rows='0.2 * lambda_max["lambda_rows"]'``).
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
    explain: Callable[..., str] | None = None
    objective: str = "Objective"
    objective_log: bool = False
    warm: bool = False
    pace: str | Callable[[Any], str] = "5 steps/s"
    panels: Callable[[], Sequence[PagePanel]] = tuple
    after: Callable[[Any, FitInputs], dict] | None = None
    code_terms: Callable[[Any], tuple[list[str], dict[str, str]]] | None = None
    scenario: str = ""
    advice: Callable[[Any], str] | None = None
    story: int = 1
    steps_are: str = ""

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


def scenario_title(name: str) -> str:
    """The title of scenario ``name`` ('' for none)."""
    from explorer.data.catalog import load_preset

    return load_preset(name)["title"] if name else ""


def _mean(values: np.ndarray) -> str:
    """The mean of the scored tasks, formatted ('n/a' when none could be scored)."""
    scored = values[~np.isnan(values)]
    return f"{scored.mean():.3f}" if scored.size else "n/a"


def per_task_error(estimator, data) -> np.ndarray:
    """Per-task test error, shape (m,): 1 - accuracy (classifiers) or 1 - R^2 (regressors).

    An estimator without ``score_per_task`` (a user's class) is scored from its ``predict``
    by the data's kind (NaN for a task with too few test examples)."""
    if hasattr(estimator, "score_per_task"):
        return 1.0 - estimator.score_per_task(data.X, data.y, data.task)
    from sklearn.metrics import r2_score

    predicted = np.asarray(estimator.predict(data.X, data.task))
    errors = np.full(data.n_tasks, np.nan)
    for t in range(data.n_tasks):
        rows = data.task == t
        if data.kind == "classification" and rows.any():
            errors[t] = np.mean(predicted[rows] != data.y[rows])
        elif rows.sum() > 1:
            errors[t] = 1.0 - r2_score(data.y[rows], predicted[rows])
    return errors


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


class ModelPageView(pn.viewable.Viewer):
    """One session's page for a :class:`ModelPage` declaration (see the module docstring)."""

    def __init__(self, state, page: ModelPage, **params):
        super().__init__(**params)
        self.state, self.page = state, page
        self.params = page.params()
        self.form = settings_form(state, page.slug, self.params)
        self.params.param.watch(locked(self._params_changed), public_parameters(self.params))
        self.runner = LiveFitRunner(self._prepare, self._render, self._finished, self._cleared,
                                    notify=state.notify, speed=page.pace_for(state.train),
                                    work=state.work,
                                    on_stop=lambda: self._catch_up(everything=True))
        self._behind: set[int] = set()   # views skipped while off screen (their index)
        self._last_snapshot = None
        self.runner.pacer.param.watch(locked(self._scrolled), "offscreen")
        # made when the page first has data that suit it (:meth:`_make_views`): a page
        # opened on data it cannot use shows its note and costs no figures
        self.views: list[LiveView] = []
        self.errors = BarView(["T0"], ["model", *page.baselines], title="Per-task test error",
                              y_label="test error", width=300, height=300, horizontal=True)
        self.summary = pn.pane.Markdown("", sizing_mode="stretch_width",
                                        styles={"font-size": "1.05em"}, margin=(0, 10))
        self.details = pn.pane.Markdown("", sizing_mode="stretch_width",
                                        styles={"font-size": "1.0em"}, margin=(0, 10))
        self.note = pn.pane.Alert("", alert_type="info", visible=False,
                                  sizing_mode="stretch_width")
        self.scenario_button = pn.widgets.Button(color="primary", visible=False)
        self.scenario_button.on_click(locked(lambda *_: state.apply_preset(page.scenario)))
        self._fitted = None        # the last estimator whose fit finished (warm refits)
        self._last_result: FitResult | None = None
        self._inputs: FitInputs | None = None   # what the current fit is made of
        self._train = None         # the training data the views show
        self._relabel_pending = False
        self._shown, self._stale = True, False
        self._warm_refit = False
        self._shown_step = 0
        self._panes: dict[int, pn.pane.Bokeh] = {}   # id(figure) -> its pane
        self._first_draw = True    # the page has not been drawn yet
        self._all_shown = False    # every figure made so far has its pane in the body
        self._listed: list[int] = []   # ids of the figures the panes were last arranged for
        self.body = pn.FlexBox(sizing_mode="stretch_width")
        self.story = flowing_row()   # the pair side by side, one under the other if narrow
        self.captions = pn.Column(margin=0)
        self._captions: list[tuple[Any, LiveText]] = []   # (a view's caption, its text here)
        self._errors_pane = figure_pane(savable(self.errors.figure))
        self._panes[id(self.errors.figure)] = self._errors_pane
        # the per-task errors join the settings with the first fit's (:meth:`_sync_figures`)
        self._settings_column = pn.Column(self.form, width=300, margin=0)
        self._errors_shown: dict[str, np.ndarray] | None = None
        # Figures (HTML): each view's figures and caption (the agreement), then the errors
        self.tools = PageTools(page.slug, self.code, lambda: [*self.views, self.errors.figure],
                               self._results_csv,
                               has_results=lambda: self._errors_shown is not None)
        self._kernel_work = None
        self.panels = [*page.panels(), GuessPanel(state, page),
                       SweepPanel(page, self.params, state, self.runner),
                       YourMatrixPanel()]
        for panel in self.panels:
            panel.bind(self._panel_work, f"{page.slug}.{type(panel).__name__}")
        self.body.extend([panel.layout for panel in self.panels if not panel.below])
        # One screen at 1366 x 768 tells the story: the settings and the per-task errors on
        # the left; on the right the Run controls, the headline and the story's figures in
        # one row (an estimate beside its truth); everything else below, across the width.
        # (in a narrower window the right-hand column goes under the settings: ``beside``)
        self._layout = pn.Column(
            intro_card(page.intro),
            beside(self._settings_column,
                   pn.Column(self.note, self.scenario_button, self.runner, self.summary,
                             self.story, self.captions, self.details, self.tools,
                             sizing_mode="stretch_width", margin=0),
                   right_least=STORY_MIN_WIDTH),
            self.body,
            *[panel.layout for panel in self.panels if panel.below],
            sizing_mode="stretch_width")
        state.param.watch(locked(self._data_changed), "train")
        state.param.watch(locked(self._building_changed), "building")
        state.param.watch(locked(lambda *_: self.runner.reset()), "init_seed")
        self._data_changed()

    def __panel__(self):
        return self._layout

    def summary_text(self) -> str:
        """The summary of the last fit, Markdown: the headline above the story's figures and
        the page's own details under them ('' before a fit)."""
        return " ".join(t for t in (self.summary.object, self.details.object) if t)

    def _panel_work(self):
        """The work service of the panels: the session's, or in a notebook (whose state
        builds its data in the cell) one on the kernel's loop, so a figure made after a fit
        does not hold the kernel."""
        work = self.state.work
        if work.asynchronous or not in_notebook_kernel():
            return work
        if self._kernel_work is None:
            self._kernel_work = WorkService.for_document(pn.state.curdoc)
        return self._kernel_work

    def _figures(self) -> list:
        """Every figure of the page, in order."""
        return [f for view in self.views for f in view.figures] + [self.errors.figure]

    def _sync_figures(self, *, frame: bool = False) -> None:
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
        self._sync_captions()
        figures = self._figures()
        for view in self.views:   # titles may change with the data or the fit
            for fig in view.figures:
                name_figures(fig, truth=_shows_truth(view, fig))
        name_figures(self.errors.figure)
        for panel in () if frame else self.panels:
            name_panes(panel.layout)
        listed = [id(fig) for fig in figures]
        if self._all_shown and listed == self._listed:
            return   # every frame comes here: nothing new
        self._listed = listed   # (a view may drop a figure: a truth the data do not have)
        for fig in figures:
            if id(fig) not in self._panes:
                self._panes[id(fig)] = figure_pane(savable(fig))   # (maybe in a callback)
        story = [self._panes[id(fig)] for view in self.views[:self.page.story]
                 for fig in view.figures]
        rest = [self._panes[id(fig)] for view in self.views[self.page.story:]
                for fig in view.figures]
        self._all_shown = True
        if self._first_draw:
            self._first_draw = False
            if after_this_paint(self._sync_figures):
                rest, self._all_shown = [], False
        if self._errors_pane not in self._settings_column.objects:
            if self._all_shown and self._errors_shown is not None:
                # empty before a fit: it joins the settings with the first fit's errors
                self._settings_column.append(self._errors_pane)
            else:
                self._all_shown = False
        self.runner.pacer.watched = [fig.id for fig in figures]
        if [id(p) for p in story] != [id(obj) for obj in self.story.objects]:
            set_flex_objects(self.story, story)
        ours = {id(pane) for pane in self._panes.values()}
        wanted = rest + [obj for obj in self.body.objects if id(obj) not in ours]
        if [id(obj) for obj in wanted] != [id(obj) for obj in self.body.objects]:
            set_flex_objects(self.body, wanted)

    def close(self) -> None:
        """The session ended: stop the worker (paused or not), the panels' work, and release
        the record."""
        for panel in self.panels:
            panel.cancel()
        self.runner.close()
        self._fitted = None

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

    # ------------------------------------------------------------------ data and params
    def _same_examples(self, train) -> bool:
        """True when ``train`` holds the examples the views show (the same arrays): only
        the task names or the truth changed (the sidebar's "Hide the truth")."""
        shown = self._train
        return (shown is not None and train is not None and shown.X is train.X
                and shown.y is train.y and shown.task is train.task)

    def _relabel(self) -> None:
        """New names or truth for the same examples: the views are re-targeted and the
        fit on screen stays (its last snapshot and summary are drawn again)."""
        self._relabel_pending = False
        train = self._train = self.state.train
        for view in self.views:
            view.set_data(train)
        self._sync_figures()
        self.errors.set_categories(train.task_names)
        self._shown_step = 0
        for view in self.views:
            if view.accumulates:
                view.clear()
        snapshot = self.runner.session.latest()
        if snapshot is not None:
            self._render(snapshot)
        if self._fitted is not None and self._last_result is not None:
            self._summarise(self._fitted, self._last_result)

    def _data_changed(self, *_) -> None:
        if not self._stale and self._same_examples(self.state.train):
            if self._shown:
                self._relabel()
            else:
                self._relabel_pending = True
            return
        self._train = None
        self._fitted = None
        self.runner.reset()
        self._stale = not self._shown
        if self._stale:
            return
        train = self.state.train
        problem = self._say_what_suits(train)
        for part in (self.body, self.story, self.captions):
            part.visible = not problem
        for control in (self.runner, self.form):
            control.__panel__().visible = not problem
        if problem:
            return
        if callable(self.page.pace):
            self.runner.set_speed(self.page.pace(train))
        self._make_views()
        for view in self.views:
            view.set_data(train)
        for panel in self.panels:
            panel.set_data(train)
        self._train = train
        self._sync_figures()
        self.errors.set_categories(train.task_names)
        self._cleared()

    def _say_what_suits(self, train) -> str:
        """The note above the page: why ``train`` (the data the page has) does not suit it,
        with the page's scenario one click away; returns the problem ('' when none). While
        the sidebar's new data are being built, the note says so instead: the data the page
        has are about to go (a note about them once contradicted the link beside it)."""
        if self.state.building:
            self.note.object = "Building the data you chose..."
            self.note.visible = True
            self.scenario_button.visible = False
            return self.page.problem_with(train)
        problem = self.page.problem_with(train)
        advice = problem or (self.page.advice(train) if self.page.advice else "")
        offer = bool(advice and self.page.scenario) and (
            self.state.scenario != self.page.scenario or self.state.scenario_edited)
        title = scenario_title(self.page.scenario) if offer else ""
        self.note.object = escape(advice) + (
            f" The scenario *{escape(title)}* has data that suit this page: one click loads "
            "it." if offer else "")
        self.note.visible = bool(advice)
        self.scenario_button.param.update(label=f"Load the scenario “{title}”", visible=offer)
        return problem

    def _building_changed(self, *_) -> None:
        if self._shown and not self._stale:
            self._say_what_suits(self.state.train)

    def _make_views(self) -> None:
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
        # A view's caption is a Bokeh Div, whose every new text lays out the whole page in
        # the browser (Outliers at its largest data: 12 times in 3 s of a run); the page
        # shows its text in a LiveText instead (:meth:`_sync_captions`).
        self._captions = [(view.caption, LiveText(html=view.caption.text,
                                                  width=view.caption.width, margin=(0, 10)))
                          for view in views[:page.story]
                          if getattr(view, "caption", None) is not None]
        self.captions.objects = [text for _, text in self._captions]

    def _sync_captions(self) -> None:
        """The story's captions show their views' current text."""
        for caption, text in self._captions:
            if text.html != caption.text:
                text.html = caption.text

    def _params_changed(self, *_) -> None:
        warm = self.page.warm and self._fitted is not None
        self._warm_refit = warm
        try:
            self.runner.reset()
        finally:
            self._warm_refit = False
        if warm:
            self.runner.run()

    # ------------------------------------------------------------------ the fit
    def _prepare(self) -> FitJob:
        """Build the estimator and read the data, on the event loop (see the runner)."""
        train, test = self.state.train, self.state.test
        problem = self.page.problem_with(train)
        if problem:
            raise ValueError(problem)
        seed = int(self.state.init_seed)
        values = types.SimpleNamespace(**self.params.param.values())
        inputs = self._inputs = FitInputs(values, seed, self.state.dataset, train, test)
        after_fit = self.page.after
        estimator = self.page.make(self.params, seed, train)
        if self._fitted is not None and self.page.warm:
            # scikit-learn's warm-start idiom: the fitted estimator takes the new
            # hyper-parameters and starts from its current solution.
            previous = self._fitted
            previous.set_params(**{**estimator.get_params(deep=False), "warm_start": True})
            estimator = previous
        baselines = {name: make(self.params, seed, train)
                     for name, make in self.page.baselines.items()}
        kwargs = {}
        if train.task_features is not None and getattr(estimator, "uses_task_features", False):
            kwargs["task_features"] = train.task_features

        def after(model) -> FitResult:   # on the worker: baselines, test scores, page's step
            fitted = {name: base.fit(train.X, train.y, train.task)
                      for name, base in baselines.items()}
            errors = {"model": per_task_error(model, test)}
            errors.update({name: per_task_error(base, test) for name, base in fitted.items()})
            extra = after_fit(model, inputs) if after_fit is not None else {}
            return FitResult(errors=errors, baselines=fitted, extra=extra)

        return FitJob(estimator, (train.X, train.y, train.task), kwargs, after)

    def _render(self, snapshot) -> None:
        """Show ``snapshot``: the newest while running, any recorded one when scrubbing.

        Accumulating views (curves) get every recorded snapshot since the last frame, in
        order (frames skip steps); after a scrub back they are cleared and replayed.
        """
        accumulating = [view for view in self.views if view.accumulates]
        if accumulating:
            back = snapshot.step < self._shown_step
            since = 0 if back else self._shown_step
            recorded = [s for s in self.runner.session.record.items()
                        if since < s.step <= snapshot.step]
            for view in accumulating:
                if back:
                    view.clear()
                view.extend(recorded)
        # During a run, a view whose figures are all scrolled out of the viewport is not
        # redrawn (drawing costs the browser); it catches up when it scrolls in, and when
        # the run stops (_catch_up).
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
        self._shown_step = snapshot.step
        self._sync_figures(frame=True)

    def _scrolled(self, *_) -> None:
        """The browser reported other figures out of sight: views back in sight catch up,
        in one message."""
        with batched(pn.state.curdoc):
            self._catch_up()

    def _catch_up(self, *, everything: bool = False) -> None:
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

    def _finished(self, estimator, result: FitResult) -> None:
        """The fit finished (on the event loop): the summary, then the page's panels."""
        self._summarise(estimator, result)
        for panel in self.panels:
            panel.fitted(estimator, result, self._inputs)
            name_panes(panel.layout)

    def _summarise(self, estimator, result: FitResult) -> None:
        self._fitted, self._last_result = estimator, result
        errors = result.errors
        model = errors["model"]
        steps = getattr(estimator, "n_iter_", self.runner.session.version)
        what = f" ({self.page.steps_are})" if self.page.steps_are else ""
        error = ("1 - R², 0 is perfect" if self.state.train.kind == "regression"
                 else "share misclassified")
        text = (f"Fitted in {steps} steps{what}. Mean test error ({error}): model "
                f"**{_mean(model)}**")
        baselines = [name for name in errors if name != "model"]
        for name in baselines:
            text += f", {escape(name)} **{_mean(errors[name])}**"
        better: list[int] = []
        if baselines:
            # per task, against each baseline by name (MTBoost's "0 of 7" once counted the
            # tasks where it beat every baseline, a baseline of its own variants included)
            best_baseline = np.min([errors[name] for name in baselines], axis=0)
            better = np.flatnonzero(model < best_baseline).tolist()
            def against(name: str) -> str:   # ties said as ties, not as losses
                other = errors[name]
                return (f"{escape(name)} on {int(np.sum(model < other))} of {len(model)} "
                        f"({int(np.sum(model > other))} worse, "
                        f"{int(np.sum(model == other))} tied)")

            each = ", than ".join(against(name) for name in baselines)
            solid = "all" if len(baselines) > 1 else "it"
            text += f"; the model is better than {each}: solid bars where it beats {solid}"
        unscored = int(np.sum(np.isnan(model)))
        if unscored:
            text += (f"; {unscored} task(s) have too few test examples to score (drawn at 0: "
                     "use a smaller train fraction)")
        text += self._show_errors(errors, better)
        extra = (self.page.explain(estimator, result, self.state.train, self.state.test)
                 if self.page.explain else "")
        self.summary.object = text + "."
        self.details.object = extra
        self._errors_shown = errors
        self.tools.refresh()
        self._sync_figures()   # the per-task errors join the page with the first fit

    def _show_errors(self, errors: dict[str, np.ndarray], better: list[int]) -> str:
        """Draw the per-task bars; past the tasks whose names fit down the chart
        (``BarView.names_fit``) the tasks go in order of the model's error, so the bars read as its
        distribution over tasks (hover names each), and the worst three are named (the
        returned sentence, escaped)."""
        names = [str(n) for n in self.state.train.task_names]
        drawn = {name: np.nan_to_num(values, nan=0.0) for name, values in errors.items()}
        if len(names) <= self.errors.names_fit:
            self.errors.figure.title.text = "Per-task test error"
            self.errors.set_categories(names)
            self.errors.update(drawn, highlight=better)
            return ""
        order = np.argsort(-drawn["model"], kind="stable")
        self.errors.figure.title.text = "Test error, tasks sorted"
        self.errors.set_categories([names[t] for t in order])
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        self.errors.update({name: values[order] for name, values in drawn.items()},
                           highlight=sorted(rank[better].tolist()))
        worst = ", ".join(f"{escape(names[t])} ({drawn['model'][t]:.2f})" for t in order[:3])
        return f"; worst for the model: {worst}"

    # ------------------------------------------------------------------ code and export
    def code(self) -> str:
        """The Python that reproduces the page: the data, the split, the model and the
        baselines with the page's parameters, the fit and the per-task test errors shown."""
        state, train = self.state, self.state.train
        seed = int(state.init_seed)
        expression, imports = dataset_code(state)
        lines_import = {*imports, "import numpy as np"}
        estimator = self.page.make(self.params, seed, train)
        features = ("task_features=train.task_features"
                    if getattr(estimator, "uses_task_features", False)
                    and train.task_features is not None else "")
        setup, expressions = (self.page.code_terms(self.params) if self.page.code_terms
                              else ([], {}))
        model = estimator_code(estimator, lines_import, expressions)
        body = [f"dataset = {expression}",
                f"train, test = dataset.split({float(state.train_fraction)!r}, "
                f"random_state={int(state.data_seed)})",
                *setup,
                f"model = {model}",
                f"model.fit(*train.arrays(){', ' + features if features else ''})",
                ("errors = {'model': 1 - model.score_per_task(*test.arrays())}"
                 if hasattr(estimator, "score_per_task") else
                 "errors = {'model': per_task_error(model, test)}")]
        if not hasattr(estimator, "score_per_task"):
            lines_import.add("from explorer.app.kit import per_task_error")
        for name, make in self.page.baselines.items():
            baseline = estimator_code(make(self.params, seed, train), lines_import)
            body.append(f"errors[{name!r}] = 1 - {baseline}.fit(*train.arrays())"
                        ".score_per_task(*test.arrays())")
        body += ["for name, values in errors.items():   # per-task test error, as the page",
                 "    print(name, np.round(values, 3), 'mean', round(np.nanmean(values), 3))",
                 *MATRIX_CODE]
        return "\n".join([*merged_imports(lines_import), "", *body, ""])

    def _results_csv(self) -> str | None:
        """Per-task test errors of the model and the baselines, and the model's learned task
        matrices, as one tidy CSV (:func:`~explorer.app.export.results_csv`; None before a
        fit)."""
        if self._errors_shown is None or self._fitted is None:
            return None
        train = self.state.train
        matrices = (dict(self._fitted.task_relationships())
                    if hasattr(self._fitted, "task_relationships") else {})
        return results_csv(self._errors_shown, matrices, [str(n) for n in train.task_names],
                           [str(n) for n in train.feature_names])

    def _cleared(self) -> None:
        """The runner was reset: empty the live views (a warm refit keeps them on screen);
        the panels' work for the old fit stops."""
        for panel in self.panels:
            panel.cancel()
        self._shown_step = 0
        self._behind.clear()
        self._last_snapshot = None
        for view in self.views:
            if view.accumulates:
                view.clear()
        if self._warm_refit:
            return
        self._fitted, self._last_result = None, None
        for view in self.views:
            view.clear()
        self._sync_captions()
        for panel in self.panels:
            panel.clear()
        self.errors.update({})
        self.summary.object = ""
        self.details.object = ""
        self._errors_shown = None
        self.tools.refresh()
