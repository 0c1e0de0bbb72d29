"""Widgets from ``param`` declarations, linked to them by Panel: two-way by construction.

:func:`widget_for` makes the widget of one parameter of a ``param.Parameterized`` *instance*
with ``Widget.from_param(instance.param[name], ...)`` (Panel's own link: a change of the
widget sets the parameter, a change of the parameter, however it was made (a scenario, a
link, Python), moves the widget). Only the widget's type and display come from here, chosen
from the declaration once (:func:`widget_spec`):

* a name in the owner's ``log_scale`` tuple: a ``DiscreteSlider`` over a log grid of the
  bounds (the value in force always among its options);
* bounded numbers: ``IntSlider`` / ``FloatSlider``; sliders apply on release
  (``throttled=True``: the parameter follows ``value_throttled``);
* selectors: a ``Select`` of the declared objects; booleans: :class:`LabelledCheckbox`;
* wide or open ranges (seeds) and text: a :class:`Field`.

Every tooltip says what the declaration accepts in the words of
:func:`explorer.parameters.expectation` (the estimator's message and the link's refusal use
the same words).

**Refused values are refused at the door.** A slider, a select and a checkbox can only offer
values the declaration accepts. A :class:`Field` knows its declaration's format, bounds and
pattern in the browser: a text it cannot accept is never set as its value (so Panel's link
never meets a refused value and nothing is put back by hand); the field shows the value in
force again and sends the refused text to the server, where
:func:`explorer.parameters.parse_value` words the refusal (the name, what was expected, what
came) and the form reports it once through ``notify(message, "error")``. (Were the browser
and the declaration ever to disagree, the declaration decides: a text the browser refused
and the declaration accepts is applied.) A value the declaration refuses that reaches
Panel's link anyway (a hand-made websocket message) raises the declaration's
``ValueError`` there, and Panel puts the value in force back into the widget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import panel as pn
import param

from explorer.parameters import FORMATS, expectation, parse_value

__all__ = ["Field", "LabelledCheckbox", "SettingsForm", "log_grid", "tooltip", "widget_for",
           "widget_spec"]

#: Integer ranges wider than this get a field instead of a slider (seeds).
_SLIDER_MAX_SPAN = 100_000


def _from_param(cls, parameter: param.Parameter, **params):
    """``Widget.from_param`` for the project's own components (JSComponents are no Panel
    ``Widget``): the same call Panel's makes, ``pn.Param.widget``, so the component is
    linked to the parameter both ways by Panel."""
    return pn.Param.widget(parameter.name, parameter.owner, dict(type=cls, **params))


class LabelledCheckbox(pn.custom.JSComponent):
    """A checkbox inside a ``<label>`` with its text: clicking the text ticks it, and the box's
    accessible name is the text. (Bokeh 3.9's ``Checkbox`` draws its label as a separate
    ``<div>``, so its text neither ticks the box nor names it.) ``from_param`` links it to a
    ``param.Boolean`` as ``Widget.from_param`` links Panel's widgets."""

    value = param.Boolean(default=False)
    label = param.String(default="")
    description = param.String(default="", doc="Shown on hover.")
    disabled = param.Boolean(default=False)

    from_param = classmethod(_from_param)

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


class Field(pn.custom.JSComponent):
    """A labelled text field for a number or a text that knows its declaration in the browser.

    ``kind`` ("integer", "number" or "text"), ``pattern`` (the text a value may be typed as:
    :data:`explorer.parameters.FORMATS` for numbers, the declaration's ``regex`` for text),
    ``start`` / ``end`` with ``inclusive`` (the declaration's bounds; ``None`` is open). On
    Enter or leaving the field, a typed text the browser accepts becomes ``value``; any other
    is not set: the field shows ``value`` again and the text is sent to the server, where the
    callbacks given to :meth:`on_refused` receive it. ``from_param`` links it to a parameter
    as ``Widget.from_param`` links Panel's widgets.

    (Bokeh's ``Spinner``, behind Panel's ``IntInput`` / ``FloatInput``, keeps the value in
    force without a word when a number outside its bounds is typed, and sends ``None`` for an
    emptied field, which the declaration then refuses in Panel's link with a traceback.)
    """

    value = param.Parameter(default=None)
    kind = param.Selector(default="text", objects=["integer", "number", "text"])
    pattern = param.String(default="", doc="A JavaScript regular expression ('' for any).")
    start = param.Number(default=None, allow_None=True)
    end = param.Number(default=None, allow_None=True)
    inclusive = param.Tuple(default=(True, True), length=2)
    label = param.String(default="")
    description = param.String(default="", doc="Shown on hover.")
    disabled = param.Boolean(default=False)

    from_param = classmethod(_from_param)

    _stylesheets = ["""
    label { display: flex; flex-direction: column; gap: 0.25em; }
    input { font: inherit; padding: 0.3em 0.6em; border: 1px solid #ced4da; border-radius: 4px;
            width: 100%; box-sizing: border-box; }
    input:focus { outline: 2px solid #86b7fe; border-color: #86b7fe; }
    """]

    _esm = """
    export function render({ model }) {
      const input = document.createElement("input")
      input.type = "text"
      input.inputMode = {integer: "numeric", number: "decimal"}[model.kind] ?? "text"
      const text = document.createElement("span")
      const label = document.createElement("label")
      label.append(text, input)
      const shown = () => model.value == null ? "" : String(model.value)
      const show = () => {
        input.value = shown()
        input.disabled = model.disabled
        text.textContent = model.label
        label.title = model.description
      }
      const accepted = (raw) => {   // the value of a typed text, or undefined
        const typed = model.kind == "text" ? raw : raw.trim()
        if (model.pattern && !new RegExp(model.pattern).test(typed)) return undefined
        if (model.kind == "text") return raw
        const x = Number(raw.trim())
        const [low_in, high_in] = model.inclusive
        if (raw.trim() == "" || !Number.isFinite(x)) return undefined
        if (model.start != null && (low_in ? x < model.start : x <= model.start)) return undefined
        if (model.end != null && (high_in ? x > model.end : x >= model.end)) return undefined
        return x
      }
      const commit = () => {
        const raw = input.value
        if (raw == shown()) return
        const value = accepted(raw)
        if (value === undefined) {
          input.value = shown()
          model.send_msg(raw)
        } else {
          model.value = value
          show()
        }
      }
      input.addEventListener("change", commit)
      input.addEventListener("keydown", (event) => { if (event.key == "Enter") commit() })
      for (const name of ["value", "disabled", "label", "description"]) model.on(name, show)
      show()
      return label
    }
    """

    def __init__(self, **params):
        super().__init__(**params)
        self._refused: list[Callable[[str], None]] = []
        self.on_msg(lambda event: self.refused(event.data))

    def on_refused(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(text)`` with each text the browser did not accept."""
        self._refused.append(callback)

    def refused(self, text: Any) -> None:
        """The browser did not accept ``text`` (a test may say so too)."""
        for callback in self._refused:
            callback(str(text))


def log_grid(low: float, high: float, integer: bool) -> list:
    """25 log-spaced values from ``low`` to ``high`` (rounded to 3 significant digits)."""
    grid = np.geomspace(max(low, 1e-12), high, 25)
    return sorted({int(round(v)) for v in grid} if integer else {float(f"{v:.3g}") for v in grid})


def _with_value(grid: Sequence, value: Any) -> list:
    """The grid with ``value`` among its points: a value set elsewhere (a link, a scenario,
    a sweep's click) is shown as it is, never rounded to a grid point."""
    return sorted({*grid, value})


def tooltip(parameter: param.Parameter) -> str:
    """The widget's tooltip: the declaration's doc, and for a number what it accepts, in the
    words of the estimator's message and the link's refusal."""
    doc = " ".join((parameter.doc or "").split())
    if isinstance(parameter, param.Number):
        accepts = expectation(parameter)
        doc = f"{doc} {accepts[0].upper()}{accepts[1:]}.".strip()
    return doc


def widget_spec(owner, name: str) -> tuple[type, dict[str, Any]]:
    """The widget type for parameter ``name`` of ``owner`` and the keywords to give
    ``from_param`` besides the declaration's own (label, value, bounds, options, doc)."""
    parameter = owner.param[name]
    common: dict[str, Any] = {"sizing_mode": "stretch_width", "description": tooltip(parameter)}
    if isinstance(parameter, param.Boolean):
        return LabelledCheckbox, common
    if isinstance(parameter, param.Selector):
        return pn.widgets.Select, common
    if isinstance(parameter, param.String):
        return Field, {**common, "kind": "text", "pattern": parameter.regex or ""}
    if not isinstance(parameter, param.Number):
        raise TypeError(f"{name}: no widget for a parameter of type {type(parameter).__name__}.")
    integer = isinstance(parameter, param.Integer)
    low, high = parameter.bounds or (None, None)
    if low is not None and high is not None:
        if name in getattr(owner, "log_scale", ()) and low > 0:
            grid = log_grid(low, high, integer)
            return pn.widgets.DiscreteSlider, {
                **common, "throttled": True,
                "options": _with_value(grid, getattr(owner, name)), "grid": grid}
        if integer and high - low <= _SLIDER_MAX_SPAN:
            return pn.widgets.IntSlider, {**common, "throttled": True}
        if not integer:
            span = float(high) - float(low)
            step = parameter.step or (10 ** math.floor(math.log10(span / 100)) if span > 0
                                      else 0.01)
            return pn.widgets.FloatSlider, {**common, "throttled": True, "step": step}
    kind = "integer" if integer else "number"
    return Field, {**common, "kind": kind, "pattern": FORMATS[kind], "start": low, "end": high,
                   "inclusive": tuple(parameter.inclusive_bounds)}


def widget_for(owner: param.Parameterized, name: str,
               notify: Callable[[str, str], None] | None = None):
    """The widget of parameter ``name`` of the instance ``owner``, linked to it both ways
    (``from_param``); a text a :class:`Field` refuses is reported once through
    ``notify(message, "error")`` in :func:`explorer.parameters.parse_value`'s words."""
    cls, params = widget_spec(owner, name)
    if "description" not in cls.param:   # (Panel's sliders have no tooltip)
        params.pop("description")
    grid = params.pop("grid", None)
    made: list = []
    if grid is not None:
        # A value set elsewhere (a link, a scenario, a sweep's click) joins the log grid
        # and moves the slider in ONE update, before Panel's link would move it alone
        # (watchers of one precedence run in the order they were registered; this one is
        # registered before from_param's link). Moved alone, then given the new grid, the
        # browser's slider showed the grid's first point (0.373 read 0.001).
        def with_value(event) -> None:
            if made and event.new not in made[0].options:   # both in one update
                made[0].param.update(options=_with_value(grid, event.new), value=event.new)

        owner.param.watch(with_value, name)
    widget = cls.from_param(owner.param[name], **params)
    made.append(widget)
    if isinstance(widget, Field) and notify is not None:
        widget.on_refused(_refusal(owner, name, notify))
    return widget


def _refusal(owner, name: str, notify: Callable[[str, str], None]) -> Callable[[str], None]:
    def refused(text: str) -> None:
        if not text.strip() and not isinstance(owner.param[name], param.String):
            notify(f"{name} needs a value; the field is empty.", "error")
            return
        try:
            value = parse_value(owner, name, text)
        except ValueError as exc:
            notify(str(exc), "error")
            return
        setattr(owner, name, value)   # the declaration is the judge: it accepts the text
    return refused


class SettingsForm(pn.viewable.Viewer):
    """The widgets of parameters ``names`` of the instance ``owner`` (:func:`widget_for`), in a
    column; ``widgets`` maps each name to its widget. Refusals go to ``notify``."""

    def __init__(self, owner: param.Parameterized, names: Sequence[str],
                 notify: Callable[[str, str], None], **params):
        super().__init__(**params)
        self.owner = owner
        self.widgets = {name: widget_for(owner, name, notify) for name in names}
        self._layout = pn.Column(*self.widgets.values(), sizing_mode="stretch_width", margin=0)

    def __panel__(self):
        return self._layout
