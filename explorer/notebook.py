"""The app's views in a Jupyter notebook, rendered with no internet connection.

Every teaching notebook starts with::

    from explorer import notebook
    notebook.setup()

which loads Panel's and Bokeh's JavaScript and CSS *inline*: they travel inside the
notebook's outputs from the installed packages, never from a CDN, so JupyterLab draws the
app's pages and plots in a classroom without internet (``import explorer`` does not import
Panel; this module imports it only when a function is called).

Then any page of the app is a live Panel viewable in a cell::

    page = notebook.app_page("shared_vs_separate", dataset="task_family",
                             params={"relations": "related,negated,unrelated"})
    notebook.fit(page)      # run the page's fit to its end now (optional)
    page                    # the page: Run / Step / Reset, sliders, the live views

or your own estimator (any class with ``fit``, ``predict`` and ``task_relationships``) on a
page of its own, its task matrices beside the truth::

    page = notebook.model_page(MyEstimator(alpha=0.5), "task_family",
                               params={"kind": "regression"})

or the pages' own live views on a fit the notebook ran itself::

    snapshots = list(model.fit_iter(X, y, task))
    notebook.replay([SnapshotMatrixView("similarity", "Learned similarity"),
                     TruthMatrixView("task_relation", "True relation"), ObjectiveView()],
                    data, snapshots)

In a notebook there is no Bokeh server: data are built at once in the cell (see
:mod:`explorer.app.work`), ``Step`` advances one snapshot synchronously, and ``Run``
runs the fit on a worker thread while the kernel's event loop draws its frames.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["setup", "app_page", "fit", "model_page", "page_views", "replay"]


def setup(*, holoviews: bool = True) -> None:
    """Load Panel and Bokeh (and HoloViews' Bokeh backend) for this notebook, offline.

    Call it first, once per notebook (running it again is harmless). The resources are
    inlined into the output of the cell (a few MB), so a notebook opened without internet
    still draws every view; nothing is fetched from a CDN.

    Parameters
    ----------
    holoviews : bool, default True
        Also set up HoloViews' Bokeh backend (the library's static plots, e.g.
        ``comparison_plot(compare(...))``). HoloViews then loads through Panel, with the same inline
        resources.
    """
    import panel as pn

    from explorer._compat import inline_stylesheet_updates

    if holoviews:
        import holoviews as hv
        import holoviews.plotting.bokeh  # noqa: F401 -- registers the Bokeh renderer

        hv.extension("bokeh", inline=True, logo=False)
    # ``inline=True`` makes Panel send BokehJS, Panel's JS and every component's stylesheet
    # from the installed packages instead of linking the CDN (panel.io.notebook.load_notebook
    # and Viewable._repr_mimebundle_ read ``config.inline``).
    pn.extension(inline=True)
    # pane *updates* would still link the CDN: tests/ui/test_jupyterlab.py fails on a request
    # to another host
    inline_stylesheet_updates()


def app_page(slug: str, *, dataset: str = "task_family", params: Mapping[str, Any] | None = None,
             data_seed: int = 0, init_seed: int = 0, train_fraction: float = 0.7,
             **page_params: Any):
    """One page of the app, built for a notebook cell.

    Parameters
    ----------
    slug : str
        The page (:data:`explorer.app.pages.PAGES`), e.g. ``"tasks"``,
        ``"shared_vs_separate"``, ``"trees"``, ``"mtknn"``.
    dataset : str
        A catalog entry (:data:`explorer.data.catalog.CATALOG`).
    params : mapping, optional
        The entry's generator parameters (the rest take their defaults); checked by the
        same declaration as the app's sidebar.
    data_seed, init_seed : int
        Seeds of the data (and split) and of the page's estimators.
    train_fraction : float
    **page_params
        The page's own settings (e.g. ``coupling=1.0`` on ``shared_vs_separate``).

    Returns
    -------
    The page's Panel viewable; a model page also has ``state``, ``params`` (its settings),
    ``runner`` (Run / Step / Pause / Reset) and ``views``.
    """
    return _build(_pages(), slug, dataset=dataset, params=params, data_seed=data_seed,
                  init_seed=init_seed, train_fraction=train_fraction, **page_params)


def model_page(estimator, dataset: str = "task_family", *,
               params: Mapping[str, Any] | None = None, data_seed: int = 0,
               init_seed: int = 0, train_fraction: float = 0.7, **page_params: Any):
    """The app's page for your own estimator, built for a notebook cell.

    Parameters
    ----------
    estimator : class or instance
        Any class with ``fit(X, y, task)``, ``predict(X, task)`` and
        ``task_relationships()`` (``fit_iter`` optional: the page is then live); an
        instance's hyper-parameters become the page's defaults.
    dataset, params, data_seed, init_seed, train_fraction, **page_params
        As :func:`app_page` (``page_params``: the estimator's hyper-parameters, by name).

    Returns
    -------
    The page (as :func:`app_page`'s model pages: ``state``, ``params``, ``runner``,
    ``views``; ``views[0]`` draws every matrix of ``task_relationships()`` beside the truth).

    Raises
    ------
    explorer.app.custom.ContractError
        When the class breaks the estimator contract (the message names what is missing).
    """
    from explorer.app.custom import model_page as page_of

    page = page_of(estimator)
    pages = {**_pages(), page.slug: page}
    return _build(pages, page.slug, dataset=dataset, params=params, data_seed=data_seed,
                  init_seed=init_seed, train_fraction=train_fraction, **page_params)


def _build(pages: dict, slug: str, *, dataset, params, data_seed, init_seed, train_fraction,
           **page_params):
    """Page ``slug`` of ``pages`` on a new state with the given data."""
    from explorer.app.state import ExplorerState, page_query_key
    from explorer.parameters import encode_value, parse_values

    if slug not in pages:
        raise ValueError(f"slug must be one of {list(pages)}; got {slug!r}.")
    state = ExplorerState(pages={s: page.params for s, page in pages.items()}, page=slug,
                          dataset_name=dataset, data_params=dict(params or {}),
                          data_seed=data_seed, init_seed=init_seed,
                          train_fraction=train_fraction)
    if state.error:
        raise ValueError(state.error)
    if page_params:
        declaration = pages[slug].params
        if declaration is None:
            raise ValueError(f"page {slug!r} has no settings; got {sorted(page_params)}.")
        # As a link's values: checked by the page's declaration, and in place before the
        # page builds its widgets, so the sliders show them.
        values = parse_values(declaration, page_params)
        problems = state.from_query({page_query_key(slug, name): encode_value(
            declaration.param[name], value) for name, value in values.items()})
        if problems:
            raise ValueError("; ".join(problems))
    return pages[slug].build(state)


def _pages() -> dict:
    from explorer.app.pages import PAGES

    return {page.slug: page for page in PAGES}


def page_views(slug: str) -> list:
    """New copies of the live views a model page shows: its declaration's views and the
    objective curve the page kit adds, for :func:`replay` of a fit the notebook ran itself.

    >>> [type(view).__name__ for view in page_views("shared_vs_separate")]
    ['EstimateTruthView', 'TruthMatrixView', 'ObjectiveView']
    """
    from explorer.viz.live import ObjectiveView

    page = _pages().get(slug)
    if page is None or not hasattr(page, "views"):
        models = [s for s, p in _pages().items() if hasattr(p, "views")]
        raise ValueError(f"slug must be one of the model pages {models}; got {slug!r}.")
    views = list(page.views())
    if page.objective:
        views.append(ObjectiveView(page.objective, log=page.objective_log, width=480))
    return views


def fit(view, *, timeout: float = 60.0):
    """Run a model page's fit to its end now, unthrottled, and show the result.

    The same as pressing Run and waiting (the page's views, summary and per-task errors
    show the finished fit), but the cell returns only when the fit is done, so the next
    cells can use it. Returns the fitted estimator.

    Raises
    ------
    RuntimeError
        When the fit fails (the page's message) or takes longer than ``timeout`` seconds.
    """
    runner = getattr(view, "runner", None)
    if runner is None:
        raise ValueError(f"fit needs a model page (with a runner); got {type(view).__name__}.")
    session = runner.session
    paced = session.steps_per_second
    session.steps_per_second = None   # unthrottled: the page's teaching pace is for watching
    try:
        runner.run()
        finished = session.wait(timeout)
    finally:
        session.steps_per_second = paced
    if not finished:
        runner.pause()
        raise RuntimeError(f"the fit did not finish within {timeout} s; it is paused at step "
                           f"{session.version}.")
    runner.poll()   # the last frame, the summary and the per-task errors
    if session.state == "error":
        raise RuntimeError(f"the fit failed: {session.error}")
    return session.estimator


def replay(views, data, snapshots, *, step: int | None = None):
    """The app's live views (:class:`explorer.viz.live.LiveView`) showing a recorded fit.

    Each view is set to ``data``; an accumulating view (a curve) gets every snapshot up to
    the one shown, the others the shown one, as the app's pages do when you scrub.

    Parameters
    ----------
    views : sequence of LiveView
    data : MultiTaskDataset
        The data the fit saw (names, truth, colour limits).
    snapshots : iterable of Snapshot
        From ``fit_iter`` (or a page's ``runner.session.record.items()``).
    step : int, optional
        The snapshot to show (its ``step``); default the last one.

    Returns
    -------
    panel.FlexBox
        The views' figures, wrapping to the cell's width; a view that compares an estimate
        with its truth says how close they are under its figures.
    """
    import panel as pn

    snapshots = list(snapshots)
    if not snapshots:
        raise ValueError("snapshots must hold at least one Snapshot; got none.")
    if step is None:
        shown = snapshots[-1]
    else:
        shown = next((s for s in snapshots if s.step == step), None)
        if shown is None:
            raise ValueError(f"step must be one of the recorded steps "
                             f"{snapshots[0].step}..{snapshots[-1].step}; got {step!r}.")
    for view in views:
        view.set_data(data)
        if view.accumulates:
            view.extend([s for s in snapshots if s.step <= shown.step])
        else:
            view.update(shown)
    panes = []
    for view in views:   # a view's figures, then its caption (how close to the truth)
        panes += [pn.pane.Bokeh(figure) for figure in view.figures]
        if getattr(view, "caption", None) is not None:
            panes.append(pn.pane.Bokeh(view.caption, sizing_mode="stretch_width"))
    return pn.FlexBox(*panes)
