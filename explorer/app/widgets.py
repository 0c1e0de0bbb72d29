"""Widgets derived from ``param`` declarations, with one validation path and one message each.

:func:`widget_for` picks the widget from a parameter's type, bounds and choices (bounded
numbers: sliders that apply on release; a name in the owner's ``log_scale`` tuple: a
log-spaced slider; unbounded or huge integer ranges: a number field; selectors: a select;
booleans: a checkbox; text: a text field). :class:`ParamForm` links a list of such widgets
to a callback ``apply(name, value)``: every value a user types goes through
:func:`explorer.parameters.parse_value`, a refused one is reported once through ``notify``
and the widget goes back to the value in force.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import panel as pn
import param

from explorer.app.work import served
from explorer.parameters import parse_value

__all__ = ["LabelledCheckbox", "ParamForm", "widget_for"]

_NOTHING = object()

#: Integer ranges wider than this get a number field instead of a slider (seeds).
_SLIDER_MAX_SPAN = 100_000


def _log_grid(low: float, high: float, value: float, integer: bool) -> list:
    grid = np.geomspace(max(low, 1e-12), high, 25)
    values = sorted({int(round(v)) for v in grid} if integer
                    else {float(f"{v:.3g}") for v in grid})
    if value not in values:
        values = sorted([*values, value])
    return values


class LabelledCheckbox(pn.custom.JSComponent):
    """A checkbox inside a ``<label>`` with its text: clicking the text ticks it, and the box's
    accessible name is the text. (Bokeh 3.9's ``Checkbox`` draws its label as a separate
    ``<div>``, so its text neither ticks the box nor names it.)"""

    value = param.Boolean(default=False)
    label = param.String(default="")
    description = param.String(default="", doc="Shown on hover.")
    disabled = param.Boolean(default=False)

    _esm = """
    export function render({ model }) {
      const box = document.createElement("input")
      box.type = "checkbox"
      const text = document.createElement("span")
      const label = document.createElement("label")
      label.style.cssText = "display: flex; gap: 0.4em; align-items: center; cursor: pointer"
      label.append(box, text)
      const show = () => {
        box.checked = model.value
        box.disabled = model.disabled
        text.textContent = model.label
        label.title = model.description
      }
      show()
      box.addEventListener("change", () => { model.value = box.checked })
      for (const name of ["value", "disabled", "label", "description"]) model.on(name, show)
      return label
    }
    """


def widget_for(owner, name: str, value: Any) -> tuple[pn.widgets.Widget, str]:
    """A widget for parameter ``name`` of ``owner`` (class or instance) showing ``value``.

    Returns ``(widget, value_parameter)``: the widget parameter whose changes are applied
    (sliders apply on release, ``value_throttled``). The parameter's doc becomes the
    widget's tooltip where the widget has one.
    """
    widget, attr = _widget_for(owner, name, value)
    doc = owner.param[name].doc
    if doc and "description" in widget.param:
        widget.description = " ".join(doc.split())
    return widget, attr


def _widget_for(owner, name: str, value: Any) -> tuple[pn.widgets.Widget, str]:
    parameter = owner.param[name]
    label = parameter.label or name.replace("_", " ")
    common = {"label": label, "sizing_mode": "stretch_width"}
    bounds = getattr(parameter, "bounds", None) or (None, None)
    bounded = bounds[0] is not None and bounds[1] is not None
    log = name in getattr(owner, "log_scale", ())
    if isinstance(parameter, param.Boolean):
        return LabelledCheckbox(value=bool(value), **common), "value"
    if isinstance(parameter, param.Selector):
        options = {str(choice): choice for choice in parameter.objects}
        return pn.widgets.Select(options=options, value=value, **common), "value"
    if isinstance(parameter, param.String):
        return pn.widgets.TextInput(value=str(value), **common), "value"
    integer = isinstance(parameter, param.Integer)
    if bounded and log and bounds[0] > 0:
        options = _log_grid(bounds[0], bounds[1], value, integer)
        return pn.widgets.DiscreteSlider(options=options, value=value, **common), \
            "value_throttled"
    if bounded and integer and bounds[1] - bounds[0] <= _SLIDER_MAX_SPAN:
        return pn.widgets.IntSlider(start=int(bounds[0]), end=int(bounds[1]), value=int(value),
                                    **common), "value_throttled"
    if bounded and not integer:
        span = float(bounds[1]) - float(bounds[0])
        step = parameter.step or (10 ** math.floor(math.log10(span / 100)) if span > 0 else 0.01)
        return pn.widgets.FloatSlider(start=float(bounds[0]), end=float(bounds[1]),
                                      value=float(value), step=step, **common), "value_throttled"
    # A number field: no browser-side bounds, so an out-of-range value reaches the
    # declaration and gets its message (a browser clamp would hide the mistake).
    if integer:
        return pn.widgets.IntInput(value=int(value), **common), "value"
    return pn.widgets.FloatInput(value=float(value), **common), "value"


class ParamForm(pn.viewable.Viewer):
    """Widgets for some parameters of ``owner``, each change validated by the declaration.

    Parameters
    ----------
    owner : param.Parameterized class or instance
        The declaration (and, for an instance, the values shown).
    names : list of str
    values : mapping name -> value
        Values to show first.
    apply : callable (name, value) -> None
        Called with a validated value; it may raise ``ValueError`` to refuse it.
    notify : callable (message, level) -> None
        Where a refusal is reported (once).
    current : callable (name) -> value
        The value in force (a refused widget goes back to it).
    """

    def __init__(self, owner, names, values: Mapping[str, Any], apply: Callable,
                 notify: Callable, current: Callable, **params):
        super().__init__(**params)
        self._owner, self._apply, self._notify, self._current = owner, apply, notify, current
        self._syncing = False
        self._refused: dict[str, Any] = {}
        self.widgets: dict[str, pn.widgets.Widget] = {}
        for name in names:
            widget, attr = widget_for(owner, name, values[name])
            widget.param.watch(self._make_callback(name), attr)
            self.widgets[name] = widget
        self._layout = pn.Column(*self.widgets.values(), sizing_mode="stretch_width", margin=0)

    def __panel__(self):
        return self._layout

    def _make_callback(self, name: str):
        def on_change(event) -> None:
            if self._syncing:
                return
            try:
                if event.new is None:   # a cleared number field
                    raise ValueError(f"{name} needs a value; the field is empty.")
                value = parse_value(self._owner, name, event.new)
                self._apply(name, value)
                self._refused.pop(name, None)
            except ValueError as exc:
                # The browser may send the same text twice (Enter, then the change event
                # after the revert): the user hears about one refusal once.
                if self._refused.get(name, _NOTHING) != event.new:
                    self._notify(str(exc), "error")
                self._refused[name] = event.new
                self._revert(name)
        return on_change

    def _revert(self, name: str) -> None:
        """Put the value in force back into the widget. In a server session this waits for
        the next tick: Panel does not echo a property back to the browser while it handles
        the browser's change of it, so the refused text would stay and be sent again."""
        document = pn.state.curdoc
        if served(document):
            document.add_next_tick_callback(lambda: self.show(name, self._current(name)))
        else:
            self.show(name, self._current(name))

    def follow(self, source: param.Parameterized) -> None:
        """Show every change of ``source``'s parameters of this form in their widgets, however
        it was made (a scenario, a link, Python): the widget always reads the value in force."""
        def shown(*events) -> None:   # (one call for the values a param.update set together)
            for event in events:
                self.show(event.name, event.new)

        source.param.watch(shown, list(self.widgets))

    def show(self, name: str, value: Any) -> None:
        """Put ``value`` in the widget of ``name`` without applying it."""
        widget = self.widgets.get(name)
        if widget is None:
            return
        self._syncing = True
        try:
            if isinstance(widget, pn.widgets.DiscreteSlider) and value not in widget.values:
                widget.options = sorted({*widget.values, value})
            if widget.value != value:
                widget.value = value
        finally:
            self._syncing = False
