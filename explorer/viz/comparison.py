"""Figures of a comparison (:class:`explorer.compare.ComparisonResult`) and its standalone
HTML report. HoloViews for the composed static plots; no Panel.

* :func:`comparison_plot`: :func:`bar_plot`, one bar panel per task column (mean over
  trials, error bars one standard deviation), and :func:`pair_plot`, the per-trial values of
  method A against method B with the diagonal (points under it: B's value is smaller);
* :func:`relationship_plot`: each method's task matrices averaged over the trials, on the
  diverging map of every signed matrix of the app, symmetric limits;
* :func:`report_html`: one HTML document with the tables and those figures, Bokeh's
  JavaScript inline (it opens offline, from a file or an e-mail);
* :func:`page_table_html`: the table as the app shows it, read on a projector: the average
  first, narrow columns, and a strong mark only on a column's clear winner
  (:func:`clearly_best`). The report's tables are the same tables, so the page and the
  report mark "best" the same way.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh renderer)
import numpy as np
import pandas as pd

from . import style
from .standalone import standalone_html

__all__ = ["bar_plot", "bokeh_model", "clearly_best", "comparison_plot", "page_table_html",
           "pair_frame", "pair_plot", "relationship_plot", "report_html", "MAX_BAR_PANELS",
           "MAX_MATRICES", "CLEAR_MARK", "TABLE_CSS"]

#: Task panels drawn at most (the average always is): a picture of 200 tasks reads as noise.
MAX_BAR_PANELS = 16
#: Relationship matrices drawn at most in a report.
MAX_MATRICES = 12


def bokeh_model(obj):
    """The Bokeh model of a HoloViews object, rendered in a throw-away document.

    ``hv.render`` attaches the plot to the *current* document, which off the event loop of a
    served app is whichever session Panel last made current, possibly one already destroyed
    ("'Document' object has no attribute '_theme'" on a comparison thread). A renderer in
    server mode takes the document it is given (in the default mode it ignores it); the
    model returned belongs to no document, so a pane can adopt it.
    """
    from bokeh.document import Document

    renderer = hv.renderer("bokeh").instance(mode="server")
    return renderer.get_plot(obj, doc=Document()).state


#: Every text of the plots at the app's sizes (at least 12 px: read on a projector).
_FONTS = {"title": style.TITLE_FONT, "labels": style.AXIS_FONT, "xticks": style.TICK_FONT,
          "yticks": style.TICK_FONT, "legend": style.TICK_FONT, "cticks": style.TICK_FONT}


def _method_colors(methods) -> dict[str, str]:
    return dict(zip(methods, style.label_colors(len(methods)), strict=True))


def _wrapped(name: str, width: int = 12) -> str:
    """A method's name on lines of about ``width`` characters (broken at spaces), so the
    bars' slanted labels stay apart.

    >>> print(_wrapped("single-task logistic"))
    single-task
    logistic
    """
    lines: list[str] = []
    for word in str(name).split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _bars(result, metric: str, width: int, height: int) -> list:
    """One bar panel per task column and the average; past :data:`MAX_BAR_PANELS` tasks the
    average, each method's distribution over the tasks and the worst tasks (by the mean of
    the methods' errors) instead (139 schools drew a screen of small panels of the first 16,
    which said nothing of the other 123)."""
    summary = result.summary(metric)
    colors = _method_colors(result.methods)
    columns = result.columns
    direction = "higher" if result.greater_is_better[metric] else "lower"
    panels = []
    if len(columns) > MAX_BAR_PANELS + 1:
        tasks = summary[summary["task"] != columns[-1]]
        panels.append(_distribution(tasks, metric, direction, colors, width, height))
        by_task = tasks.groupby("task", sort=False)["mean"].mean()
        worst = (by_task.nlargest(WORST_TASKS) if direction == "lower"
                 else by_task.nsmallest(WORST_TASKS))
        columns = [columns[-1], *worst.index]
    for task in columns:
        part = summary[summary["task"] == task][["method", "mean", "std"]].copy()
        part["std"] = part["std"].fillna(0.0)
        part["color"] = part["method"].map(colors)
        part["method"] = part["method"].map(_wrapped)
        bars = hv.Bars(part, kdims=["method"], vdims=["mean", "std", "color"]).opts(
            color="color", line_color=None, tools=["hover"])
        errors = hv.ErrorBars(part, kdims=["method"], vdims=["mean", "std"]).opts(
            line_width=1.5)
        title = str(task) if len(columns) == len(result.columns) or task == columns[0] \
            else f"worst: {task}"
        panels.append((bars * errors).opts(
            title=title, width=width, height=height, xrotation=70, xlabel="",
            ylabel=f"{metric} ({direction} better)", fontsize=_FONTS))
    return panels


#: Tasks drawn one by one past MAX_BAR_PANELS: the worst for the methods on average.
WORST_TASKS = 4


def _distribution(tasks: pd.DataFrame, metric: str, direction: str, colors: dict,
                  width: int, height: int):
    """Each method's per-task means (the mean over the trials) as a box and whiskers, one
    box a method: how the methods do over many tasks, in one panel."""
    frame = tasks[["method", "task", "mean"]].copy()
    frame["method"] = frame["method"].map(_wrapped)
    wrapped = {_wrapped(name): color for name, color in colors.items()}
    n_tasks = frame["task"].nunique()
    return hv.BoxWhisker(frame, kdims=["method"], vdims=["mean"]).opts(
        box_fill_color=hv.dim("method").categorize(wrapped), title=f"{n_tasks} tasks",
        width=width, height=height, xrotation=70, xlabel="",
        ylabel=f"{metric} ({direction} better)", fontsize=_FONTS, tools=["hover"])


def pair_frame(result, metric: str, a: str, b: str) -> pd.DataFrame:
    """Per-(trial, task column) values of methods ``a`` and ``b``: columns trial, task,
    a, b."""
    frame = result.frame[result.frame["metric"] == metric]
    wide = frame.pivot_table(index=["trial", "task"], columns="method", values="value",
                             sort=False)
    out = wide[[a, b]].reset_index()
    out.columns = ["trial", "task", "a", "b"]
    return out


def _check_metric(result, metric):
    metric = result.metrics[0] if metric is None else metric
    if metric not in result.greater_is_better:
        raise ValueError(f"metric must be one of {result.metrics}; got {metric!r}.")
    return metric


def _pair(result, a, b) -> tuple[str, str]:
    a = result.methods[0] if a is None else a
    if b is None:
        others = [m for m in result.methods if m != a]
        b = others[0] if others else a
    for name, value in (("a", a), ("b", b)):
        if value not in result.methods:
            raise ValueError(f"{name} must be one of the methods {result.methods}; got "
                             f"{value!r}.")
    return a, b


def pair_plot(result, metric: str | None = None, *, a: str | None = None,
              b: str | None = None, size: int = 240, legend: bool = True) -> hv.Overlay:
    """Per-trial values of method ``a`` (x) against method ``b`` (y), one point per trial
    and task column (tasks in their colours, the average black), with the diagonal.

    ``legend`` adds the task legend on the right (the plot gets wider by it).
    """
    metric = _check_metric(result, metric)
    a, b = _pair(result, a, b)
    pairs = pair_frame(result, metric, a, b)
    finite = pairs[["a", "b"]].to_numpy()
    finite = finite[np.isfinite(finite)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    pad = 0.05 * (high - low or 1.0)
    low, high = low - pad, high + pad
    colors = [*style.task_colors(len(result.task_names)), "#000000"]
    diagonal = hv.Curve([(low, low), (high, high)], label="equal").opts(
        color="#888888", line_dash="dashed")
    overlay = diagonal
    for task, color in zip(result.columns, colors, strict=True):
        part = pairs[pairs["task"] == task]
        overlay = overlay * hv.Scatter(
            part, kdims=[hv.Dimension("a", label=a)],
            vdims=[hv.Dimension("b", label=b), "task", "trial"], label=str(task)).opts(
            color=color, size=7, alpha=0.8, tools=["hover"])
    return overlay.opts(
        title=f"{metric}, each trial and task", width=size + (170 if legend else 0),
        height=size, xlabel=a, ylabel=b, legend_position="right", show_legend=legend,
        toolbar="above",
        xlim=(low, high), ylim=(low, high), fontsize=_FONTS)


def bar_plot(result, metric: str | None = None, *, width: int = 240, height: int = 240,
             cols: int = 4) -> hv.Layout:
    """One panel per task column (at most :data:`MAX_BAR_PANELS` tasks, and the average):
    each method's mean over the trials, error bars one standard deviation."""
    metric = _check_metric(result, metric)
    return hv.Layout(_bars(result, metric, width, height)).cols(cols)


def comparison_plot(result, metric: str | None = None, *, a: str | None = None,
                    b: str | None = None, width: int = 240, height: int = 240) -> hv.Layout:
    """:func:`bar_plot`'s panels and, with two methods or more, :func:`pair_plot` (same
    size, no legend: a grid of equal panels; hover names the task).

    Parameters
    ----------
    result : ComparisonResult
    metric : str, optional
        A recorded metric (default: the first).
    a, b : str, optional
        Methods of the scatter (default: the first two).
    """
    metric = _check_metric(result, metric)
    panels = _bars(result, metric, width, height)
    if len(result.methods) >= 2 or a is not None or b is not None:
        panels.append(pair_plot(result, metric, a=a, b=b, size=width, legend=False))
    return hv.Layout(panels).cols(4)


def relationship_plot(result, *, truth=None, size: int = 240, limit: int = MAX_MATRICES):
    """Each method's 2-D task matrices averaged over the trials (tasks as rows, named), or
    None when no method learned any.

    ``truth`` (optional): a mapping key -> 2-D array (e.g. the data's ``task_relation`` or
    ``coef``) drawn first, titled "truth: <key>", on the same kind of panel."""
    names = result.task_names
    panels = []
    learned = result.relationships()
    if not learned:
        return None
    groups = ([("truth", dict(truth))] if truth else []) + list(learned.items())
    for method, matrices in groups:
        for key, matrix in matrices.items():
            if matrix.ndim != 2 or len(panels) >= limit:
                continue
            shown = matrix.T if matrix.shape[1] == len(names) \
                and matrix.shape[0] != matrix.shape[1] else matrix   # (d, m) -> tasks as rows
            rows, cols = shown.shape
            bound = float(np.max(np.abs(shown))) or 1.0
            # hv.Image puts the array's first row at the top: task 0 reads first.
            image = hv.Image(shown, bounds=(0, 0, cols, rows), kdims=["column", "row"],
                             vdims=[key])
            ticks = {}   # as many names as the panel holds apart (every k-th of 139)
            if rows == len(names):
                every = style.label_every(rows, style.labels_fit(size))
                ticks["yticks"] = [(rows - i - 0.5, n) for i, n in enumerate(names)
                                   if i % every == 0]
            if cols == len(names):
                every = style.label_every(cols, style.labels_fit(size))
                ticks["xticks"] = [(j + 0.5, n) for j, n in enumerate(names)
                                   if j % every == 0]
            panels.append(image.opts(
                cmap=list(style.DIVERGING), clim=(-bound, bound), colorbar=True,
                title=f"{method}: {key}", width=size + 140, height=size + 40, xlabel="",
                ylabel="", xaxis="bottom" if "xticks" in ticks else None, xrotation=45,
                tools=["hover"], fontsize=_FONTS, **ticks))
    return hv.Layout(panels).cols(3) if panels else None


#: The styles of :func:`page_table_html`'s table (the Compare page's and the report's).
TABLE_CSS = """
table.mtl-compare { border-collapse: collapse; font-size: 14px; }
p.mtl-caption { font-size: 13px; color: #444; margin: 4px 0 0; }
table.mtl-compare th, table.mtl-compare td { border-bottom: 1px solid #ddd;
  padding: 4px 8px; text-align: right; vertical-align: top; white-space: nowrap; }
table.mtl-compare th { white-space: normal; min-width: 4.5em; max-width: 6.5em; }
table.mtl-compare tbody th, table.mtl-compare thead th:first-child { text-align: left;
  min-width: 7em; max-width: 9em; }
table.mtl-compare .spread { display: block; font-size: 12px; color: #444; }
table.mtl-compare .average { border-left: 2px solid #444; border-right: 2px solid #444;
  background: #f2f2f2; font-weight: 600; }
table.mtl-compare td.clear-best { background: #1f4e9c; color: #ffffff; font-weight: 700; }
table.mtl-compare td.clear-best .spread { color: #ffffff; }
table.mtl-compare td.clear-best .star { font-size: 16px; }
"""

#: The report's own styles (the page, the settings), besides :data:`TABLE_CSS`.
REPORT_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
p.mtl-caption { margin-bottom: 1.5em; }
dl.settings { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.settings dt { font-weight: 600; }
"""


def _settings_html(result) -> str:
    items = {"methods": ", ".join(result.methods), "trials": result.n_trials,
             **{k: v for k, v in result.settings.items() if k not in ("n_trials",)}}
    rows = "".join(f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>"
                   for k, v in items.items())
    return f'<dl class="settings">{rows}</dl>'


def report_html(result, *, metric: str | None = None, digits: int = 3, alpha: float = 0.05,
                title: str = "MTL Explorer: comparison", truth=None) -> str:
    """The standalone report: settings, one table per recorded metric (``metric`` first),
    the bars and A-vs-B scatter of ``metric``, the averaged task matrices.

    The tables are the Compare page's (:func:`page_table_html`): a column's clear winner
    (:func:`clearly_best`) is the one marked, as on the page.
    """
    metric = result.metrics[0] if metric is None else metric
    metrics = [metric, *[m for m in result.metrics if m != metric]]
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    fragments = [f"<h1>{html.escape(title)}</h1>",
                 f"<p>Made {stamp} by <code>explorer.compare</code>.</p>",
                 _settings_html(result)]
    for name in metrics:
        fragments += [f"<h2>{html.escape(name)}</h2>",
                      page_table_html(result, name, digits=digits, alpha=alpha)]
    blocks: list = [*fragments, f"<h2>{html.escape(metric)} per task</h2>",
                    bokeh_model(bar_plot(result, metric))]
    if len(result.methods) >= 2:
        a, b = result.methods[:2]
        blocks += [f"<h2>{html.escape(a)} against {html.escape(b)}, trial by trial</h2>",
                   "<p>Each point is one trial and task; below the diagonal "
                   f"{html.escape(b)}'s value is smaller.</p>",
                   bokeh_model(pair_plot(result, metric, a=a, b=b, size=320))]
    matrices = relationship_plot(result, truth=truth)
    if matrices is not None:
        blocks += ["<h2>Task relationships (each method's, averaged over the trials"
                   + (", beside the truth" if truth else "") + ")</h2>",
                   bokeh_model(matrices)]
    return standalone_html(blocks, title, TABLE_CSS + REPORT_CSS)


#: The mark of a column's clear winner in :func:`page_table_html` (with a filled cell).
CLEAR_MARK = "★"


def clearly_best(result, metric: str | None = None, *, alpha: float = 0.05) -> pd.Series:
    """Per table column (tasks, then the average): the method that is clearly best, or None.

    Clearly best: the column's best mean, and a paired t-test over the trials (level
    ``alpha``) tells every other method apart from it: the paper's marking singles it
    out. With few trials (or close methods) no method is.
    """
    metric = _check_metric(result, metric)
    best = result.best(metric, alpha=alpha)
    winners = {}
    for column in result.columns:
        marked = best.index[best[column].to_numpy()]
        winners[column] = marked[0] if len(marked) == 1 and len(result.methods) > 1 else None
    return pd.Series(winners, dtype=object)


def page_table_html(result, metric: str | None = None, *, digits: int = 3,
                    alpha: float = 0.05) -> str:
    """The comparison table as the app shows it (HTML, names escaped).

    Methods as rows; the average is the first column after the method, so it is in view
    however many tasks follow; each cell holds the mean over a line with the standard
    deviation, so columns stay narrow, and long names wrap. Only a clear winner
    (:func:`clearly_best`) is marked: a filled cell with :data:`CLEAR_MARK`; the caption
    under the table says what the mark means.
    """
    metric = _check_metric(result, metric)
    summary = result.summary(metric, alpha=alpha).set_index(["task", "method"])
    winners = clearly_best(result, metric, alpha=alpha)
    esc = html.escape
    columns = [result.columns[-1], *result.columns[:-1]]      # the average first

    def cell(column: str, method: str) -> str:
        row = summary.loc[(column, method)]
        mean, std, n = row["mean"], row["std"], row["n"]
        text = "n/a" if np.isnan(mean) else f"{mean:.{digits}f}"
        spread = f"± {std:.{digits}f}" if n >= 2 and not np.isnan(std) else ""
        classes = ["average"] if column == columns[0] else []
        mark = ""
        if winners[column] == method:
            classes.append("clear-best")
            mark = f'<span class="star" aria-label="clearly best">{CLEAR_MARK}</span> '
        attribute = f' class="{" ".join(classes)}"' if classes else ""
        return (f"<td{attribute}>{mark}{text}"
                + (f'<span class="spread">{spread}</span>' if spread else "") + "</td>")

    head = f'<th class="average">{esc(columns[0])}</th>' + "".join(
        f"<th>{esc(c)}</th>" for c in columns[1:])
    body = "".join(f"<tr><th>{esc(method)}</th>"
                   + "".join(cell(c, method) for c in columns) + "</tr>"
                   for method in result.methods)
    direction = "higher" if result.greater_is_better[metric] else "lower"
    caption = (f"{metric} ({direction} is better): mean and ± standard deviation over "
               f"{result.n_trials} trials. {CLEAR_MARK} on a filled cell: clearly the best of "
               f"its column (the best mean, and a paired t-test at {alpha:g} tells every "
               "other method apart from it); a column without the mark has no clear winner.")
    # the caption under the table, not in it: a table wider than the page scrolls sideways
    # and its <caption> with it, past the right edge
    return (f'<table class="mtl-compare mtl-page"><thead><tr><th>method</th>{head}</tr>'
            f'</thead><tbody>{body}</tbody></table><p class="mtl-caption">{esc(caption)}</p>')
