"""What a model page says in words: the summary of a fit and the note about its data.

:class:`PageSummary`: after a fit, the headline (steps, mean test error of the model and of
each baseline, per task against each baseline by name, ties said as ties), the page's own
details (its ``explain`` hook) and the per-task test errors as bars (past the tasks whose names
fit down the chart, sorted, the worst three named). :class:`PageNote`: why the data do not
suit the page (or what they do not show), with the page's scenario one click away. Both are
testable without a browser: their text is in their panes' ``object``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import panel as pn

from explorer.app.work import locked
from explorer.viz.live import BarView, escape

__all__ = ["PageNote", "PageSummary", "scenario_title"]


def scenario_title(name: str) -> str:
    """The title of scenario ``name`` ('' for none)."""
    from explorer.data.catalog import load_preset

    return load_preset(name)["title"] if name else ""


def _mean(values: np.ndarray) -> str:
    """The mean of the scored tasks, formatted ('n/a' when none could be scored)."""
    scored = values[~np.isnan(values)]
    return f"{scored.mean():.3f}" if scored.size else "n/a"


def _against(errors: dict[str, np.ndarray], baselines: list[str]) -> tuple[str, list[int]]:
    """Per task, the model against each baseline by name (MTBoost's "0 of 7" once counted
    the tasks where it beat every baseline, a baseline of its own variants included): the
    sentence and the tasks where the model beats them all."""
    model = errors["model"]
    best_baseline = np.min([errors[name] for name in baselines], axis=0)
    better = np.flatnonzero(model < best_baseline).tolist()

    def against(name: str) -> str:   # ties said as ties, not as losses
        other = errors[name]
        return (f"{escape(name)} on {int(np.sum(model < other))} of {len(model)} "
                f"({int(np.sum(model > other))} worse, "
                f"{int(np.sum(model == other))} tied)")

    each = ", than ".join(against(name) for name in baselines)
    solid = "all" if len(baselines) > 1 else "it"
    return f"; the model is better than {each}: solid bars where it beats {solid}", better


class PageSummary:
    """The summary of a page's last fit: ``summary`` (the headline above the story's
    figures), ``details`` (the page's own text under them) and ``errors`` (the per-task
    test error of the model beside each baseline); ``shown`` holds the errors drawn (None
    before a fit)."""

    def __init__(self, baselines):
        self.errors = BarView(["T0"], ["model", *baselines], title="Per-task test error",
                              y_label="test error", width=300, height=300, horizontal=True)
        self.summary = pn.pane.Markdown("", sizing_mode="stretch_width",
                                        styles={"font-size": "1.05em"}, margin=(0, 10))
        self.details = pn.pane.Markdown("", sizing_mode="stretch_width",
                                        styles={"font-size": "1.0em"}, margin=(0, 10))
        self.shown: dict[str, np.ndarray] | None = None

    def text(self) -> str:
        """The headline and the details, Markdown ('' before a fit)."""
        return " ".join(t for t in (self.summary.object, self.details.object) if t)

    def show(self, errors: dict[str, np.ndarray], *, steps, steps_are: str, train,
             details: Callable[[], str] | None = None) -> None:
        """Say a finished fit: ``errors`` by name ("model" and each baseline), after
        ``steps`` steps (each one ``steps_are``) on ``train``; ``details``: the page's own
        Markdown, asked once the bars are drawn."""
        model = errors["model"]
        what = f" ({steps_are})" if steps_are else ""
        error = "1 - R², 0 is perfect" if train.kind == "regression" else "share misclassified"
        text = (f"Fitted in {steps} steps{what}. Mean test error ({error}): model "
                f"**{_mean(model)}**")
        baselines = [name for name in errors if name != "model"]
        for name in baselines:
            text += f", {escape(name)} **{_mean(errors[name])}**"
        better: list[int] = []
        if baselines:
            sentence, better = _against(errors, baselines)
            text += sentence
        unscored = int(np.sum(np.isnan(model)))
        if unscored:
            text += (f"; {unscored} task(s) have too few test examples to score (drawn at 0: "
                     "use a smaller train fraction)")
        text += self._show_errors(errors, better, [str(n) for n in train.task_names])
        extra = details() if details is not None else ""
        self.summary.object = text + "."
        self.details.object = extra
        self.shown = errors

    def _show_errors(self, errors: dict[str, np.ndarray], better: list[int],
                     names: list[str]) -> str:
        """Draw the per-task bars; past the tasks whose names fit down the chart
        (``BarView.names_fit``) the tasks go in order of the model's error, so the bars read
        as its distribution over tasks (hover names each), and the worst three are named
        (the returned sentence, escaped)."""
        drawn = {name: np.nan_to_num(values, nan=0.0) for name, values in errors.items()}
        if len(names) <= self.errors.names_fit:
            self.errors.figure.title.text = "Per-task test error"
            self.errors.set_categories(names)
            self.errors.update(drawn, highlight=better)
            return ""
        order = np.argsort(-drawn["model"], kind="stable")
        self.errors.figure.title.text = "Test error, tasks sorted"
        self.errors.set_categories([names[t] for t in order])
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        self.errors.update({name: values[order] for name, values in drawn.items()},
                           highlight=sorted(rank[better].tolist()))
        worst = ", ".join(f"{escape(names[t])} ({drawn['model'][t]:.2f})" for t in order[:3])
        return f"; worst for the model: {worst}"

    def clear(self) -> None:
        """No fit on screen: empty bars, no text."""
        self.errors.update({})
        self.summary.object = ""
        self.details.object = ""
        self.shown = None


class PageNote:
    """The note above a page: why the data do not suit it (or what they do not show), with
    the page's scenario one click away; while new data are being built, it says so."""

    def __init__(self, state, page):
        self.state, self.page = state, page
        self.note = pn.pane.Alert("", alert_type="info", visible=False,
                                  sizing_mode="stretch_width")
        self.scenario_button = pn.widgets.Button(color="primary", visible=False)
        self.scenario_button.on_click(locked(lambda *_: state.apply_preset(page.scenario)))

    def say(self, train) -> str:
        """The note for ``train`` (the data the page has); returns the problem ('' when
        none). While the sidebar's new data are being built, the note says so instead: the
        data the page has are about to go (a note about them once contradicted the link
        beside it)."""
        page, state = self.page, self.state
        if state.building:
            self.note.object = "Building the data you chose..."
            self.note.visible = True
            self.scenario_button.visible = False
            return page.problem_with(train)
        problem = page.problem_with(train)
        advice = problem or (page.hooks.advice(train) if page.hooks.advice else "")
        offer = bool(advice and page.scenario) and (
            state.scenario != page.scenario or state.scenario_edited)
        title = scenario_title(page.scenario) if offer else ""
        self.note.object = escape(advice) + (
            f" The scenario *{escape(title)}* has data that suit this page: one click loads "
            "it." if offer else "")
        self.note.visible = bool(advice)
        self.scenario_button.param.update(label=f"Load the scenario “{title}”", visible=offer)
        return problem
