"""Figures of a sweep (:class:`explorer.compare.SweepResult`) and its standalone HTML report.
HoloViews, no Panel.

* :func:`sweep_plot`: one panel per group of quantities against the swept value, each curve
  the mean over the trials with a band of ±1 standard deviation: the test error beside the
  single-task baseline's, each learned matrix's agreement with its truth (sign, rank,
  relative error), the structure found (outlier tasks, shared features: precision, recall),
  the features kept, optionally the fit time. Vertical markers at the cross-validated choice
  and at the value the truth prefers (:meth:`SweepResult.truth_best`). A log x axis when the
  values are positive and span more than a factor of :data:`LOG_SPAN`.
* :func:`report_html`: one HTML document with the settings, those curves and the table of
  means (:meth:`SweepResult.to_html`), Bokeh's JavaScript inline (it opens offline).

The result holds numbers and text only (:mod:`explorer.compare` sits under this layer):
``sweep_plot(result)``, not ``result.plot()``.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from pathlib import Path

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh renderer)
import numpy as np
import pandas as pd

from . import style
from .comparison import _FONTS, REPORT_CSS, TABLE_CSS, bokeh_model
from .standalone import standalone_html

__all__ = ["sweep_plot", "report_html", "panel_groups", "log_ticks", "LOG_SPAN", "CV_COLOR",
           "TRUTH_COLOR"]

#: A log x axis when the (positive) values span more than this factor.
LOG_SPAN = 10.0
#: The markers' colours: the cross-validated choice, the truth-best value.
CV_COLOR, TRUTH_COLOR = "#444444", "#2ca02c"
#: The report's table: the quantities' names on one line, the caption on the left.
SWEEP_CSS = ("table.mtl-sweep tbody th { max-width: none; white-space: nowrap; }\n"
             "table.mtl-sweep caption { text-align: left; font-size: 13px; color: #444; }\n")
#: Quantities drawn unless asked for: the CV choice is a marker, not a curve.
_NOT_CURVES = ("cv_choice",)
#: Quantities left out by default (asked for by name they are drawn).
_OPTIONAL = ("fit_time",)


def panel_groups(quantities) -> dict[str, list[str]]:
    """The panels' titles -> their quantities, in order: the errors, each matrix's
    agreement, the structure found, the features kept, the fit time.

    >>> list(panel_groups(["features:kept", "outliers:recall", "agreement:W:sign",
    ...                    "baseline_error", "test_error"]))
    ['test error', 'W against the truth', 'structure found', 'features kept']
    """
    groups: dict[str, list[str]] = {}
    for quantity in quantities:
        if quantity in ("test_error", "baseline_error"):
            title = "test error"
        elif quantity.startswith("agreement:"):
            title = f"{quantity.split(':')[1]} against the truth"
        elif quantity in ("features:kept", "fit_time"):
            title = {"features:kept": "features kept", "fit_time": "fit time (s)"}[quantity]
        elif quantity.startswith(("outliers:", "features:")):
            title = "structure found"
        else:
            title = quantity
        groups.setdefault(title, []).append(quantity)
    order = ["test error"] + sorted(t for t in groups if t.endswith("against the truth")) + [
        "structure found", "features kept", "fit time (s)"]
    return {t: groups[t] for t in order + [t for t in groups if t not in order] if t in groups}


def _positions(result) -> tuple[np.ndarray, list | None, bool]:
    """The x of each value, the axis's ticks (a value's name at its position when the
    values are not numbers, :func:`log_ticks` on a log axis, else Bokeh's) and whether the
    axis is logarithmic."""
    values = result.values
    numeric = all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                  for v in values)
    if not numeric:
        return np.arange(len(values), dtype=float), [(float(i), str(v)) for i, v in
                                                     enumerate(values)], False
    x = np.asarray(values, dtype=float)
    log = bool(np.all(x > 0) and x.max() / x.min() > LOG_SPAN)
    return x, (log_ticks(x.min(), x.max()) if log else None), log


def log_ticks(low: float, high: float) -> list[float]:
    """Tick positions of a log axis over [low, high]: 1, 2 and 5 times each power of ten
    (1 and 3 when that gives more than 12 ticks; the powers alone past 12 of those).

    Bokeh's own log ticker labels too few of them over two or three decades.

    >>> log_ticks(0.014, 1.45)
    [0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    """
    decades = np.arange(np.floor(np.log10(low)), np.ceil(np.log10(high)) + 1)
    for steps in ((1, 2, 5), (1, 3), (1,)):
        ticks = [float(f"{m * 10.0 ** k:.12g}") for k in decades for m in steps]
        ticks = [t for t in ticks if low <= t <= high]
        if len(ticks) <= 12:
            return ticks
    return ticks


def _label(quantity: str) -> str:
    """A curve's legend entry: the quantity without its panel's prefix.

    >>> _label("agreement:W:relative_error"), _label("outliers:recall"), _label("test_error")
    ('relative error', 'outliers recall', 'test error')
    """
    parts = quantity.split(":")
    if parts[0] == "agreement":
        return parts[-1].replace("_", " ")
    return " ".join(parts).replace("_", " ")


def _marker(x: float, low: float, high: float, label: str, color: str, dash: str):
    return hv.Curve([(x, low), (x, high)], label=label).opts(
        color=color, line_dash=dash, line_width=2)


def sweep_plot(result, quantities=None, *, width: int = 330, height: int = 260,
               cols: int = 2) -> hv.Layout:
    """Curves of ``quantities`` (``task == "mean"`` rows) against the swept value.

    Parameters
    ----------
    result : SweepResult
    quantities : list of str, optional
        Quantities of ``result.frame`` to draw (default: all but ``fit_time``; never
        ``cv_choice``, which is a marker).
    width, height : int
        Of each panel, in pixels (the legend adds 160 to the width).
    cols : int
        Panels per row.

    Returns
    -------
    holoviews.Layout
        One panel per group (:func:`panel_groups`), each curve the mean over the trials
        with a ±1 std band; dashed grey: the CV choice (most frequent over the trials),
        dotted green: the truth-best value (:meth:`SweepResult.truth_best`).
    """
    recorded = [q for q in result.quantities if q not in _NOT_CURVES]
    if quantities is None:
        quantities = [q for q in recorded if q not in _OPTIONAL]
    else:
        quantities = list(quantities)
        unknown = [q for q in quantities if q not in recorded]
        if unknown or not quantities:
            raise ValueError(f"quantities must be recorded quantities of the sweep "
                             f"{recorded}; got {quantities!r}.")
    x, ticks, log = _positions(result)
    where = {str(v): float(xi) for v, xi in zip(result.values, x, strict=True)}
    markers = [(result.cv_choice(), "CV choice", CV_COLOR, "dashed"),
               (result.truth_best(), "truth-best", TRUTH_COLOR, "dotted")]
    panels = []
    for title, group in panel_groups(quantities).items():
        colors = style.label_colors(len(group))
        overlay, lows, highs = [], [], []
        for quantity, color in zip(group, colors, strict=True):
            curve = result.curve(quantity)
            mean, std = curve["mean"].to_numpy(float), curve["std"].to_numpy(float)
            finite = np.isfinite(mean)
            frame = pd.DataFrame({"x": x[finite], "mean": mean[finite], "std": std[finite]})
            dash = "dashed" if quantity == "baseline_error" else "solid"
            label = ("baseline (single-task)" if quantity == "baseline_error"
                     else _label(quantity))
            if finite.any():
                lows.append(float(np.min(frame["mean"] - frame["std"])))
                highs.append(float(np.max(frame["mean"] + frame["std"])))
            overlay.append(hv.Spread(frame, kdims=["x"], vdims=["mean", "std"]).opts(
                color=color, alpha=0.2, line_alpha=0))
            overlay.append(hv.Curve(frame, kdims=["x"], vdims=["mean"], label=label).opts(
                color=color, line_dash=dash, line_width=2, tools=["hover"]))
            overlay.append(hv.Scatter(frame, kdims=["x"], vdims=["mean"]).opts(
                color=color, size=5))
        low, high = (min(lows), max(highs)) if lows else (0.0, 1.0)
        for value, label, color, dash in markers:
            if value is not None and str(value) in where:
                overlay.append(_marker(where[str(value)], low, high, label, color, dash))
        ylabel = (f"{result.metric} ({'higher' if result.greater_is_better else 'lower'} "
                  f"better)" if title == "test error" else "")
        extra = {"xticks": ticks} if ticks else {}
        panels.append(hv.Overlay(overlay).opts(
            title=title, width=width + 160, height=height, logx=log, xlabel=result.param,
            ylabel=ylabel, legend_position="right", show_legend=True, toolbar="above",
            fontsize=_FONTS, **extra))
    # each panel its own y axis (the errors, [0, 1] shares and counts differ in scale)
    return hv.Layout(panels).cols(cols).opts(shared_axes=False)


def _settings_html(result) -> str:
    items = {"parameter": result.param,
             "values": ", ".join(_value_text(v) for v in result.values),
             "trials": result.n_trials,
             "truth keys": (", ".join(result.truth_keys)
                            or "none (error and structure only)"),
             "CV choice": result.cv_choice(), "truth-best": result.truth_best(),
             **{k: v for k, v in result.settings.items()
                if k not in ("n_trials", "path")},
             "path (order of the fits)": ", ".join(
                 _value_text(v) for v in result.settings.get("path", []))}
    rows = "".join(f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>"
                   for k, v in items.items())
    return f'<dl class="settings">{rows}</dl>'


def _value_text(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def report_html(result, path=None, *, title: str | None = None) -> str | None:
    """The standalone report of a sweep: settings, the curves (:func:`sweep_plot`), the
    table of means (:meth:`SweepResult.to_html`, in a box that scrolls sideways); Bokeh's
    JavaScript inline, it opens offline. Returned as text, or written to ``path`` (returns
    None)."""
    title = title or f"MTL Explorer: sweep of {result.param}"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    blocks = [f"<h1>{html.escape(title)}</h1>",
              f"<p>Made {stamp} by <code>explorer.compare.sweep</code>. "
              f"{result.caption()}</p>",
              _settings_html(result),
              "<h2>Curves</h2>",
              "<p>Mean over the trials, band ±1 std; dashed grey: the value cross-validation "
              "chose most often; dotted green: the value whose estimate is closest to the "
              "truth.</p>",
              bokeh_model(sweep_plot(result)),
              "<h2>Means</h2>",
              f'<div style="overflow-x: auto">{result.to_html()}</div>']
    document = standalone_html(blocks, title, TABLE_CSS + REPORT_CSS + SWEEP_CSS)
    if path is None:
        return document
    Path(path).write_text(document, encoding="utf-8")
    return None
