"""The page registry: every page of the app, in the order of the sidebar.

Adding a page = one module in ``explorer/app/pages/`` whose view takes the session's
:class:`~explorer.app.state.ExplorerState`, plus one line in :data:`PAGES`:

    Page("my_model", "My model", build=my_module.MyPage, kinds=("classification",))

``build(state)`` is called the first time the page is shown in a session (the result is
cached for the session); it returns any Panel viewable (a ``pn.viewable.Viewer`` works the
same in a notebook). ``kinds`` lists the dataset kinds the page accepts; for another kind the
app shows a polite note instead of building the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["PAGES", "Page"]


@dataclass(frozen=True)
class Page:
    """One entry of the registry.

    Attributes
    ----------
    slug : str
        URL-safe key (the ``page`` query value).
    title : str
        Shown in the sidebar's page chooser.
    build : callable
        ``build(state) -> viewable``.
    kinds : tuple of str
        Dataset kinds the page accepts ("classification", "regression").
    """

    slug: str
    title: str
    build: Callable[[Any], Any]
    kinds: tuple[str, ...] = ("classification", "regression")


def _tasks(state):
    from .tasks import TasksPage

    return TasksPage(state)


def _trees(state):
    from .trees import TreesPage

    return TreesPage(state)


def _outliers(state):
    from .outliers import OutliersPage

    return OutliersPage(state)


def _shared_vs_separate(state):
    from .shared_vs_separate import SharedVsSeparatePage

    return SharedVsSeparatePage(state)


PAGES: list[Page] = [
    Page("tasks", "Tasks", _tasks, ("classification", "regression")),
    Page("shared_vs_separate", "Shared vs separate", _shared_vs_separate),
    Page("trees", "Trees", _trees, ("classification",)),
    Page("outliers", "Outliers & shared features", _outliers, ("regression",)),
]
