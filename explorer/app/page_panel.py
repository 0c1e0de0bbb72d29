"""What a model page's own panels are: :class:`PagePanel`, and what the kit tells them.

A panel (an inspector, a figure computed after the fit, the upload of a task matrix of
your own) is told of new data, of a finished fit (:class:`FitResult`, :class:`FitInputs`) and
of a reset; the kit (:mod:`explorer.app.kit`) places and drives it. Panels and the kit
both build on this module, so a panel every page shows (:mod:`explorer.app.matrix_upload`)
needs no kit to be defined.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.app.access import name_panes
from explorer.app.work import LONG

__all__ = ["FitInputs", "FitResult", "PagePanel"]


@dataclass(frozen=True)
class FitInputs:
    """What a fit is made of: the page's settings (their values when the run started), the
    init seed, the whole data set and its split."""

    params: Any
    seed: int
    dataset: Any
    train: Any
    test: Any


@dataclass
class FitResult:
    """What the worker computed after the fit: per-task test errors of the model and of each
    baseline (name -> (m,) array), the fitted baselines, and what the page's ``after`` step
    returned (``extra``)."""

    errors: dict[str, np.ndarray]
    baselines: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


class PagePanel:
    """A page's own panel beside its live views (an inspector, a figure made after the fit).

    The kit places ``layout`` in the figures' flow (or, with ``below``, as a section under the
    page) and calls ``set_data(train)`` on new data, ``fitted(estimator, result, fit)`` when
    a fit finishes (on the event loop) and ``clear()`` on a reset. Slow work goes through
    :meth:`submit` (off the loop; one job per panel, the newest wins), cancelled by the kit
    whenever the fit's inputs change and when the session ends.
    """

    layout: Any = None
    below: bool = False

    def bind(self, work: Callable[[], Any], key: str) -> None:
        """Called by the kit: ``work()`` is the session's work service, ``key`` this panel's."""
        self._work, self.key = work, key

    def set_data(self, train) -> None:
        """New training data (the previous fit's results are gone)."""

    def fitted(self, estimator, result: FitResult, fit: FitInputs) -> None:
        """A fit finished."""

    def clear(self) -> None:
        """The fit was reset: show nothing of it."""

    def submit(self, compute: Callable[[Any], Any], apply: Callable[[Any], None],
               on_error: Callable[[Exception], None] | None = None) -> None:
        """``compute(token)`` off the loop (checking ``token`` between its steps), then
        ``apply(result)`` on it; synchronous where there is no loop."""
        def shown(result) -> None:
            apply(result)
            name_panes(self.layout)   # a figure made after the fit gets its name

        self._work().submit(self.key, compute, shown, on_error, pool=LONG, cancellable=True)

    def cancel(self) -> None:
        self._work().cancel(self.key)
