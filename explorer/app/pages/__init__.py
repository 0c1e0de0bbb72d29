"""The page registry: every page of the app, in the order of the sidebar.

A model page is a :class:`~explorer.app.kit.ModelPage` declaration in its own module
(parameters, estimator factory, views, baselines, data it needs) plus one line in
:data:`PAGES`; the kit does the rest. A plain page (like Tasks) is a :class:`Page` whose
``build(state)`` returns any Panel viewable.

``build(state)`` is called the first time a page is shown in a session (the result is cached
for the session). ``params`` is the page's parameter declaration (None for a page without
settings): the session's state checks a link's ``<slug>.<name>`` values against it.

:func:`pages_for` adds a page per estimator class of the user's (:mod:`explorer.app.custom`)
after the shipped ones, and puts those classes on the Compare page's list.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from explorer.compare.methods import METHODS, CompareSettings, Method, with_methods

from .mtboost import MTBOOST
from .mtknn import MTKNN_PAGE
from .outliers import OUTLIERS
from .shared_vs_separate import SHARED_VS_SEPARATE
from .tltf import TRANSFER
from .trees import TREES

__all__ = ["PAGES", "Page", "pages_for"]


@dataclass(frozen=True)
class Page:
    """A page that is not a model page.

    Attributes
    ----------
    slug : str
        URL-safe key (the ``page`` query value).
    title : str
        Shown in the sidebar's page chooser.
    build : callable
        ``build(state) -> viewable``.
    params : type of param.Parameterized or None
        The page's settings (link keys ``<slug>.<name>``), None for a page without any.
    """

    slug: str
    title: str
    build: Callable[[Any], Any]
    params: type | None = None


def _tasks(state):
    from .tasks import TasksPage

    return TasksPage(state)


def _class(state):
    from .classroom import ClassPage

    return ClassPage(state)


def _compare(state, settings=CompareSettings, methods=METHODS):
    from .compare import ComparePage

    return ComparePage(state, settings=settings, methods=methods)


PAGES: list = [
    Page("tasks", "Tasks", _tasks),
    SHARED_VS_SEPARATE,
    TREES,
    OUTLIERS,
    MTBOOST,
    MTKNN_PAGE,
    TRANSFER,
    Page("compare", "Compare", _compare, params=CompareSettings),
    # a class that guesses, then sees the truth: open one, the teacher's view (issue 41)
    Page("class", "Class", _class),
]


def pages_for(models: Sequence[type] = ()) -> list:
    """The app's pages with a model page for each estimator class in ``models`` (after the
    shipped pages; slugs from the class names, made unique) and those classes on the
    Compare page's list, for the data kinds their pages accept. ``PAGES`` when there are
    none."""
    return list(_pages_for(tuple(models))) if models else PAGES


@functools.lru_cache(maxsize=8)
def _pages_for(models: tuple[type, ...]) -> tuple:
    from explorer.app.custom import model_page, unique_slugs

    slugs = unique_slugs(models, [page.slug for page in PAGES]
                         + list(CompareSettings.param))
    custom = [model_page(cls, slug=slug) for cls, slug in zip(models, slugs, strict=True)]
    methods = [Method(page.slug, page.title, kind, functools.partial(_default_model, cls))
               for cls, page in zip(models, custom, strict=True) for kind in page.kinds]
    settings, offered = with_methods(methods)
    compare = Page("compare", "Compare",
                   functools.partial(_compare, settings=settings, methods=offered),
                   params=settings)
    return (*[compare if page.slug == "compare" else page for page in PAGES], *custom)


def _default_model(cls, settings):
    """A user's estimator on the Compare page: its defaults."""
    return cls()
