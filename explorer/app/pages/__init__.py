"""The page registry: every page of the app, in the order of the sidebar.

A model page is a :class:`~explorer.app.kit.ModelPage` declaration in its own module
(parameters, estimator factory, views, baselines, data it needs) plus one line in
:data:`PAGES`; the kit does the rest. A plain page (like Tasks) is a :class:`Page` whose
``build(state)`` returns any Panel viewable.

``build(state)`` is called the first time a page is shown in a session (the result is cached
for the session). ``params`` is the page's parameter declaration (None for a page without
settings): the session's state checks a link's ``<slug>.<name>`` values against it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from explorer.compare.methods import CompareSettings

from .mtboost import MTBOOST
from .mtknn import MTKNN_PAGE
from .outliers import OUTLIERS
from .shared_vs_separate import SHARED_VS_SEPARATE
from .tltf import TRANSFER
from .trees import TREES

__all__ = ["PAGES", "Page"]


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


def _compare(state):
    from .compare import ComparePage

    return ComparePage(state)


PAGES: list = [
    Page("tasks", "Tasks", _tasks),
    SHARED_VS_SEPARATE,
    TREES,
    OUTLIERS,
    MTBOOST,
    MTKNN_PAGE,
    TRANSFER,
    Page("compare", "Compare", _compare, params=CompareSettings),
]
