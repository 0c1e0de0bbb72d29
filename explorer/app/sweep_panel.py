"""The sweep on every model page: how the fit moves with one of the page's settings.

A section under each model page (the kit adds :class:`SweepPanel` to every page, a user's
own estimator's page included), folded until opened. The user picks one of the page's
numeric settings (its range and log scale from the page's declaration: ``bounds`` and the
class's ``log_scale``), the number of values and of trials, and runs
:func:`explorer.compare.sweep.sweep` through the session's work service, with progress and
Cancel. The curves (:class:`explorer.viz.sweep_curves.SweepCurves`) show the test error
beside the single-task baseline's, one learned matrix's agreement with the truth, and the
structure found (outlier tasks, shared features), with three markers: the slider, the
value 3-fold cross-validation chose, and the value that agrees best with the truth. A click
on a point moves the page's slider there and a fit starts.

The sweep runs the page's own settings: a page's ``make(params, seed, data)`` maps its
sliders to the estimator (Outliers' ``columns`` is a fraction of ``lambda_max`` on the
training data), so :func:`estimator_path` builds the page's estimator at every value and
finds the one estimator parameter that moves with the slider (``lambda_columns``); the
library sweeps that parameter (warm-started along the path) and the curves are drawn against
the slider's values. Where the data have no truth (School) the section says so and shows
the errors and the structure only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import panel as pn
import param

from explorer.app.components import figure_pane, flowing_row, set_flex_objects
from explorer.app.page_panel import PagePanel
from explorer.app.process import capture_warnings
from explorer.app.widgets import LabelledCheckbox
from explorer.app.work import Cancelled, locked
from explorer.compare.harness import ComparisonCancelled
from explorer.parameters import parse_value, public_parameters
from explorer.viz.live import escape
from explorer.viz.sweep_curves import MARKERS, SweepCurves, sweep_table

__all__ = ["CV_FOLDS", "SweepPanel", "estimator_path", "sweep_range", "sweep_values",
           "sweepable"]

#: Folds of the cross-validated choice on each trial's training part.
CV_FOLDS = 3
#: Defaults and ranges of the section's own controls.
N_VALUES, MAX_VALUES = 8, 40
N_TRIALS, MAX_TRIALS = 3, 10

INTRO = (
    "Fit the model at several values of one setting, each on the same random splits of the "
    "data (the sidebar's train fraction), and see how the **test error**, the **agreement "
    "with the truth** and the **structure found** move with it. Each value starts from the "
    "previous solution where the model allows. With the CV choice on, 3-fold "
    "cross-validation on each training part also picks a value: does it pick the value "
    "the truth would? **Click a point** to move the slider there and refit.")

NO_TRUTH = ("These data have no known truth (real data, or the truth is hidden): the sweep "
            "shows the test error and the structure found, not the agreement with the truth.")


#: A range the declaration leaves open (no upper bound) is this factor either side of the
#: current value (log-spaced), within the bounds it has.
OPEN_FACTOR = 100.0


def sweep_range(params, name: str) -> tuple[float, float, bool] | None:
    """``(low, high, log)``: where a sweep of setting ``name`` goes, or None when it has no
    range.

    The declared range (hard or soft bounds), log-spaced when the class names the setting
    in ``log_scale``. A number the declaration bounds on one side only (a penalty >= 0 of
    a user's estimator) goes from 1/100 to 100 times its current value, log-spaced, within
    the bound it has; an integer from its lower bound to 4 times its value (at least 10).
    """
    parameter = params.param[name]
    low, high = parameter.get_soft_bounds()
    if low is not None and high is not None:
        low, high = float(low), float(high)
        if not (math.isfinite(low) and math.isfinite(high)) or low >= high:
            return None
        return low, high, name in getattr(params, "log_scale", ()) and low > 0
    value = getattr(params, name)
    if isinstance(parameter, param.Integer):
        if low is None or high is not None:
            return None
        return float(low), float(max(int(low) + 1, 4 * int(value), 10)), False
    if value is None or not math.isfinite(value) or value <= 0:
        return None
    start, stop = float(value) / OPEN_FACTOR, float(value) * OPEN_FACTOR
    start = start if low is None else max(start, float(low))
    stop = stop if high is None else min(stop, float(high))
    return (start, stop, start > 0) if start < stop else None


def sweepable(params) -> list[tuple[str, str]]:
    """The settings a sweep can move, ``(label, name)`` in the declaration's order: numbers
    and integers with a range (:func:`sweep_range`; not booleans, choices or text)."""
    found = []
    for name in public_parameters(params):
        parameter = params.param[name]
        if isinstance(parameter, (param.Number, param.Integer)) \
                and not isinstance(parameter, param.Boolean) and sweep_range(params, name):
            found.append((parameter.label or name, name))
    return found


def sweep_values(params, name: str, n: int) -> list:
    """``n`` values of setting ``name`` across :func:`sweep_range`, ascending, distinct, each
    accepted by the declaration: log-spaced values rounded to 3 significant digits (as the
    log slider's), evenly spaced ones as they are, integers rounded (so there may be
    fewer). An end the declaration excludes moves 1% inwards.

    >>> class P(param.Parameterized):
    ...     log_scale = ("lam",)
    ...     lam = param.Number(0.1, bounds=(1e-3, 1.0))
    ...     k = param.Integer(5, bounds=(1, 40))
    ...     alpha = param.Number(1.0, bounds=(0, None))
    >>> sweep_values(P, "lam", 4), sweep_values(P, "k", 4), sweep_values(P, "alpha", 3)
    ([0.001, 0.01, 0.1, 1.0], [1, 14, 27, 40], [0.01, 1.0, 100.0])
    """
    parameter = params.param[name]
    low, high, log = sweep_range(params, name)
    declared = getattr(parameter, "bounds", None) or (None, None)
    inclusive = getattr(parameter, "inclusive_bounds", (True, True))
    if log:
        ratio = (high / low) ** 0.01
        low = low * ratio if low == declared[0] and not inclusive[0] else low
        high = high / ratio if high == declared[1] and not inclusive[1] else high
        grid = np.geomspace(low, high, int(n))
    else:
        step = 0.01 * (high - low)
        low = low + step if low == declared[0] and not inclusive[0] else low
        high = high - step if high == declared[1] and not inclusive[1] else high
        grid = np.linspace(low, high, int(n))
    integer = isinstance(parameter, param.Integer)
    values: list = []
    for v in grid:
        value = int(round(v)) if integer else (float(f"{v:.3g}") if log else float(v))
        try:
            value = parse_value(params, name, value)
        except ValueError:
            continue
        if value not in values:
            values.append(value)
    return sorted(values)


def _same(a, b) -> bool:
    """Whether two parameter values are equal (arrays elementwise; anything that cannot be
    compared is different)."""
    if a is b:
        return True
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return bool(np.array_equal(a, b))
        return bool(a == b)
    except Exception:  # noqa: BLE001 -- e.g. objects whose == raises
        return False


def _leaves(estimator) -> dict[str, Any]:
    """The estimator's parameters, nested ones by their ``outer__inner`` names, without the
    nested estimators themselves (compared by their own parameters)."""
    found = estimator.get_params(deep=True)
    return {name: value for name, value in found.items() if not hasattr(value, "get_params")}


def estimator_path(make, params, name: str, values: Sequence, seed: int, data):
    """The page's estimator at each value of its setting ``name``, as one parameter sweep.

    ``make(params, seed, data)`` (the page's factory) is called with a copy of ``params`` at
    each value; the one estimator parameter whose value differs between them is the one
    the library sweeps.

    Returns
    -------
    (estimator, parameter, estimator_values, page_values)
        The estimator at the first value, the parameter's name (``"base__max_depth"`` for a
        nested one), its values, and the page's values behind them (values that give the
        same estimator are kept once).

    Raises
    ------
    ValueError
        When the estimator has no ``get_params``, when the setting changes no estimator
        parameter at the current settings, or when it changes several at once.
    """
    cls = type(params)
    current = {n: getattr(params, n) for n in public_parameters(params)}
    estimators = [make(cls(**{**current, name: value}), seed, data) for value in values]
    if not all(hasattr(e, "get_params") and hasattr(e, "set_params") for e in estimators):
        raise ValueError("A sweep needs an estimator with get_params and set_params "
                         "(scikit-learn's BaseEstimator gives both).")
    leaves = [_leaves(e) for e in estimators]
    moved = [key for key in leaves[0]
             if any(not _same(leaves[0][key], other.get(key)) for other in leaves[1:])]
    label = params.param[name].label or name
    if not moved:
        raise ValueError(f"{label} does not change the model at the current settings: "
                         "there is nothing to sweep.")
    if len(moved) > 1:
        raise ValueError(f"{label} changes {len(moved)} of the model's parameters at once "
                         f"({', '.join(moved)}); a sweep moves one.")
    key = moved[0]
    kept_estimator: list = []
    kept_page: list = []
    for value, found in zip(values, leaves, strict=True):
        if not any(_same(found[key], v) for v in kept_estimator):
            kept_estimator.append(found[key])
            kept_page.append(value)
    return estimators[0], key, kept_estimator, kept_page


def _index(result, chosen) -> int | None:
    """Where the library's ``chosen`` value is among ``result.values`` (None: none)."""
    if chosen is None:
        return None
    return next(i for i, v in enumerate(result.values) if v is chosen or _same(v, chosen))


def _text(value) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _controls(choices) -> tuple:
    """The section's widgets: the setting (of ``choices``), the number of values and of
    trials, the CV choice, Run sweep and Cancel."""
    return (
        pn.widgets.Select(label="Setting", options=dict(choices), width=280,
                          disabled=not choices),
        pn.widgets.IntSlider(label="Values", start=3, end=MAX_VALUES, value=N_VALUES,
                             width=170),
        pn.widgets.IntSlider(label="Trials (random splits)", start=1, end=MAX_TRIALS,
                             value=N_TRIALS, width=170),
        LabelledCheckbox(label=f"{CV_FOLDS}-fold CV choice", value=True,
                         description="Also choose a value by cross-validation on each "
                                     "training part (4 fits a value instead of 1).",
                         width=160, margin=(30, 10, 5, 10)),   # level with the sliders
        pn.widgets.Button(label="▶ Run sweep", color="primary", width=130,
                          disabled=not choices),
        pn.widgets.Button(label="Cancel", width=90, disabled=True))


def _sweep_job(page, params, state, name: str, *, n_values: int, n_trials: int, cv,
               progress):
    """The sweep of setting ``name`` of ``page`` (settings ``params``) on the session's data:
    ``(compute(token) -> outcome, the setting's label, the number of values)``; the
    estimators are made here (on the loop), ``compute`` fits them off it, telling
    ``progress(done, total)``. A ValueError says why the setting cannot be swept."""
    train, dataset = state.train, state.dataset
    values = sweep_values(params, name, n_values)
    estimator, key, path, shown = estimator_path(page.make, params, name, values,
                                                 int(state.init_seed), train)
    label = params.param[name].label or name
    others = ", ".join(f"{n} = {_text(getattr(params, n))}"
                       for n in public_parameters(params) if n != name)
    options = dict(n_trials=n_trials, train_fraction=float(state.train_fraction), cv=cv,
                   random_state=int(state.data_seed))
    n_features = dataset.n_features
    log = sweep_range(params, name)[2]
    started = time.perf_counter()

    def compute(token):   # on a work-service thread: no Panel, no Bokeh
        from explorer.compare.sweep import sweep

        warned: list[str] = []
        with capture_warnings(warned):   # this thread's, said with the result
            result = sweep(estimator, dataset, key, path, callback=progress,
                           should_stop=token, **options)
        return {"result": result, "table": sweep_table(result, shown, n_features=n_features),
                "name": name, "label": label, "values": list(shown), "log": log,
                "others": others, "warned": warned, "seconds": time.perf_counter() - started}

    return compute, label, len(shown)


class SweepResult:
    """A finished sweep as the section draws it: the curves (made with the first result, so
    a page nobody sweeps sends none of their models; one set a kind of x axis, log or
    linear), their markers and the caption, in ``result``. A click on a point calls
    ``tapped(index)``."""

    def __init__(self, tapped):
        self.tapped = tapped
        self.caption = pn.pane.HTML("", sizing_mode="stretch_width")
        self.curves: SweepCurves | None = None
        self._curves: dict[bool, SweepCurves] = {}
        self._panes: dict[int, pn.pane.Bokeh] = {}
        self.figures = flowing_row()
        # (given sizing: see YourMatrixPanel's result box)
        self.result = pn.FlexBox(self.figures, self.caption, flex_direction="column",
                                 visible=False, margin=0, sizing_mode="stretch_width")

    def show(self, outcome: dict, slider: float) -> None:
        """Draw ``outcome`` (what the sweep's job returned) with the slider at ``slider``."""
        result = outcome["result"]
        curves = self._curves.get(outcome["log"])
        if curves is None:
            curves = self._curves[outcome["log"]] = SweepCurves(log_x=outcome["log"])
            curves.on_tap(locked(self.tapped))
            self._panes.update({id(fig): figure_pane(fig) for fig in curves.figures})
        self.curves = curves
        judged = result.truth_quantity()
        curves.show(outcome["table"], x_label=outcome["label"],
                    agreement_of=judged.split(":")[1] if judged else "")
        values = outcome["values"]
        cv, best = _index(result, result.cv_choice()), _index(result, result.truth_best())
        curves.set_marker("cv", None if cv is None else values[cv])
        curves.set_marker("truth", None if best is None else values[best])
        curves.set_marker("slider", slider)
        shown = [fig for name, fig in zip(("error", "agreement", "structure"), curves.figures,
                                          strict=True)
                 if name == "error" or curves.has(name)]
        panes = [self._panes[id(fig)] for fig in shown]
        if [id(p) for p in self.figures.objects] != [id(p) for p in panes]:
            set_flex_objects(self.figures, panes)
        self.caption.object = self._caption(outcome, cv, best, judged)
        self.result.visible = True

    def _caption(self, outcome: dict, cv, best, judged) -> str:
        values = outcome["values"]
        parts = []
        slider = MARKERS["slider"]
        parts.append(f"<b style='color:{slider[0]}'>solid</b>: the slider")
        if cv is not None:
            parts.append(f"<b style='color:{MARKERS['cv'][0]}'>dashed</b>: "
                         f"{CV_FOLDS}-fold cross-validation's choice, "
                         f"<b>{escape(_text(values[cv]))}</b> (the value the trials chose "
                         "most often)")
        if best is not None:
            matrix = judged.split(":")[1]
            parts.append(f"<b style='color:{MARKERS['truth'][0]}'>dotted</b>: closest to the "
                         f"truth, <b>{escape(_text(values[best]))}</b> (the lowest relative "
                         f"error of the learned {escape(matrix)})")
        text = "Lines: " + "; ".join(parts) + "."
        if cv is not None and best is not None:
            text += (" Cross-validation picks the value the truth would." if cv == best else
                     " Cross-validation and the truth disagree.")
        text += (" Click a point to move the slider there and refit. Swept at "
                 f"{escape(outcome['others'])}." if outcome["others"] else
                 " Click a point to move the slider there and refit.")
        return f"<p style='font-size: 15px; margin: 0 10px'>{text}</p>"


class SweepPanel(PagePanel):
    """"Sweep": one setting of the page against the test error and the truth (a section
    under the page, folded until opened; see the module docstring).

    Parameters
    ----------
    page : ModelPage
        The page's declaration (``make``, ``title``, the problem with data).
    params : param.Parameterized
        The page's settings (the sliders): a click on a point sets one of them.
    state : ExplorerState
        The session's data and seeds.
    runner : LiveFitRunner
        Starts the refit after a click when the page does not refit by itself.
    """

    below = True

    def __init__(self, page, params, state, runner):
        self.page, self.params, self.state, self.runner = page, params, state, runner
        choices = sweepable(params)
        (self.setting, self.n_values, self.n_trials, self.with_cv, self.run_button,
         self.cancel_button) = _controls(choices)
        self.run_button.on_click(locked(lambda *_: self.run()))
        self.cancel_button.on_click(locked(lambda *_: self.stop()))
        self.progress = pn.indicators.Progress(value=0, max=1, visible=False,
                                               sizing_mode="stretch_width",
                                               bar_color="primary")
        self.status = pn.pane.Markdown(
            "" if choices else "This page has no numeric setting with a range to sweep.",
            sizing_mode="stretch_width", styles={"font-size": "1.05em"})
        self.note = pn.pane.Alert(NO_TRUTH, alert_type="info", visible=False,
                                  sizing_mode="stretch_width")
        self.shown = SweepResult(self._tapped)
        self.figures, self.caption, self.result = (self.shown.figures, self.shown.caption,
                                                   self.shown.result)
        self.running = False
        self.outcome = None     # the last sweep shown (the dict run()'s compute returns)
        self._progress_seen = (0, 1)
        self._stopped_because = ""
        self.layout = pn.Card(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
            flowing_row(self.setting, self.n_values, self.n_trials, self.with_cv,
                        self.run_button, self.cancel_button),
            self.progress, self.status, self.note, self.result,
            title="Sweep: the fit against one setting, beside the truth", collapsed=True,
            sizing_mode="stretch_width", margin=(10, 10))
        for widget in (self.setting, self.n_values, self.n_trials, self.with_cv):
            widget.param.watch(lambda *_: self._say_cost(), "value")
        self._say_cost()
        params.param.watch(locked(self._moved), public_parameters(params))

    # ------------------------------------------------------------------ the kit's calls
    def set_data(self, train) -> None:
        """New data: a running sweep stops, the old curves go."""
        self.note.visible = not (train is not None and train.truth)
        if self.running:
            self._stopped_because = "The data changed: the sweep stopped."
            self.stop()
        if self.outcome is not None:
            self.outcome = None
            self.result.visible = False
            self.status.object = "The data changed: press Run sweep to sweep the new data."

    def cancel(self) -> None:
        """The kit stops its panels' work when the fit's inputs change (a slider, Reset,
        Run after a fit). A sweep is not the fit's: it goes on; its own Cancel, new data
        (:meth:`set_data`) and the session's end (its work service closes) stop it."""

    # ------------------------------------------------------------------ the sweep
    def _fits(self) -> int:
        per_value = 1 + (CV_FOLDS if self.with_cv.value else 0)
        return self.n_values.value * self.n_trials.value * per_value + self.n_trials.value

    def _say_cost(self) -> None:
        if self.running or self.outcome is not None or not self.setting.options:
            return
        self.status.object = (f"{self.n_values.value} values × {self.n_trials.value} trials: "
                              f"about {self._fits()} fits. Press Run sweep.")

    def run(self) -> None:
        """Start a sweep of the chosen setting (the estimators are made here, on the loop;
        the fits off it)."""
        state, name = self.state, self.setting.value
        if self.running or name is None:
            return
        problem = self.page.problem_with(state.train)
        if problem:
            self.status.object = escape(problem)
            return
        self.note.visible = not state.dataset.truth
        try:
            compute, label, count = _sweep_job(
                self.page, self.params, state, name, n_values=self.n_values.value,
                n_trials=int(self.n_trials.value), cv=CV_FOLDS if self.with_cv.value else None,
                progress=self._on_progress)
        except ValueError as exc:
            self.status.object = escape(exc)
            return
        self.running, self._stopped_because = True, ""
        self._progress_seen = (0, 1)
        self.progress.param.update(value=0, max=1, visible=True)
        self.run_button.disabled, self.cancel_button.disabled = True, False
        self.status.object = f"Running … sweeping {escape(label)} over {count} values."
        self.submit(compute, self._show, self._failed)

    def stop(self) -> None:
        """Cancel: the running sweep stops before its next fit; nothing of it is shown."""
        if self.running:
            self._work().cancel(self.key)
            self.cancel_button.disabled = True
            self.status.object = "Cancelling …"

    def _on_progress(self, done: int, total: int) -> None:
        """From the sweep's thread: the count goes to the loop, one update at a time."""
        self._progress_seen = (done, total)
        self._work().post(f"{self.key}.progress", self._show_progress)

    def _show_progress(self) -> None:
        if not self.running or self.cancel_button.disabled:
            return
        done, total = self._progress_seen
        if self.progress.max != max(total, 1):
            self.progress.param.update(value=0, max=max(total, 1))
        self.progress.value = min(done, total)
        self.status.object = f"Running … {done} of {total} fits done."

    def _finish(self) -> None:
        self.running = False
        self.progress.visible = False
        self.run_button.disabled, self.cancel_button.disabled = False, True

    def _failed(self, exc: Exception) -> None:
        self._finish()
        done, total = self._progress_seen
        if isinstance(exc, (ComparisonCancelled, Cancelled)):
            self.status.object = (self._stopped_because
                                  or f"Cancelled after {done} of {total} fits.")
            return
        self.status.object = f"The sweep failed: {escape(exc)}"
        self.state.notify(f"The sweep failed: {exc}", "error")

    # ------------------------------------------------------------------ what is shown
    @property
    def curves(self) -> SweepCurves | None:
        """The curves of the sweep shown (None before the first)."""
        return self.shown.curves

    def _show(self, outcome: dict) -> None:
        """Draw a finished sweep (on the loop): the curves in place, the markers, the
        caption, and say it."""
        self._finish()
        self.outcome = outcome
        result, values = outcome["result"], outcome["values"]
        self.shown.show(outcome, float(getattr(self.params, outcome["name"])))
        n_fits = self._progress_seen[1]
        self.status.object = (f"Done: {escape(outcome['label'])} at {len(values)} values × "
                              f"{result.n_trials} trials ({n_fits} fits) in "
                              f"{outcome['seconds']:.1f} s.")
        warned = outcome["warned"]
        if warned:
            self.status.object += (f" {len(warned)} warning{'s' if len(warned) > 1 else ''}, "
                                   f"the first: {escape(warned[0])}")

    def _moved(self, *events) -> None:
        """A setting moved: the slider's marker follows it."""
        if self.curves is None or self.outcome is None:
            return
        for event in events:
            if event.name == self.outcome["name"]:
                self.curves.set_marker("slider", float(event.new))

    def _tapped(self, index: int) -> None:
        """A point was clicked: its value goes to the slider, and a fit starts."""
        if self.outcome is None:
            return
        self.choose(self.outcome["values"][index])
        if self.curves is not None:
            self.curves.source.selected.indices = []

    def choose(self, value) -> None:
        """Set the swept setting to ``value`` (the slider follows) and start a fit: a page
        that refits when a setting moves (``warm``) already has; another starts as Run
        does."""
        name = self.outcome["name"]
        try:
            setattr(self.params, name, value)
        except ValueError as exc:
            self.state.notify(str(exc), "error")
            return
        if self.runner.session.state != "running":
            self.runner.run()
