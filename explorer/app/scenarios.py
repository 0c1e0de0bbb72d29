"""The sidebar's scenario chooser: a select of the scenarios and the chosen one's story.

A scenario (``data/scenarios/<name>.json``) sets the data, the seeds, the page and the page's
settings at once (:meth:`~explorer.app.state.ExplorerState.apply_preset`). Under the select,
one line says what to look at. Once a data setting is changed, the state marks the scenario
edited: the select then shows the scenario's title with " (edited)" (an entry of its own, so
choosing the plain title again is a real choice and restores the scenario) and the story
line says the data were edited.
"""

from __future__ import annotations

from collections.abc import Sequence

import panel as pn

from explorer.data.catalog import list_presets, load_preset
from explorer.viz.live import escape

__all__ = ["NO_SCENARIO", "ScenarioChooser", "edited_value"]

#: Label of the select's entry for "no scenario".
NO_SCENARIO = "(choose a scenario)"
_EDITED = "edited:"   # value prefix of the "(edited)" entry (scenario names have no colon)

STORY_STYLE = {"font-size": "0.92em", "color": "#444", "line-height": "1.3"}


def edited_value(name: str) -> str:
    """The select's value of scenario ``name`` while it is edited."""
    return _EDITED + name


class ScenarioChooser(pn.viewable.Viewer):
    """Select + story line over an :class:`~explorer.app.state.ExplorerState`.

    Parameters
    ----------
    state : ExplorerState
    page_order : sequence of str, optional
        Page slugs in the sidebar's order: scenarios are listed by page, then by title.
    """

    def __init__(self, state, page_order: Sequence[str] = (), **params):
        super().__init__(**params)
        self._state = state
        self._scenarios = {name: load_preset(name) for name in list_presets()}
        rank = {slug: i for i, slug in enumerate(page_order)}
        self._order = sorted(self._scenarios, key=lambda n: (
            rank.get(self._scenarios[n]["page"], len(rank)), self._scenarios[n]["title"]))
        self._syncing = False
        self.select = pn.widgets.Select(label="Scenario", options={NO_SCENARIO: ""}, value="",
                                        sizing_mode="stretch_width")
        self.story = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10, 4, 10),
                                  styles=STORY_STYLE, css_classes=["scenario-story"])
        self._layout = pn.Column(self.select, self.story, sizing_mode="stretch_width", margin=0)
        self.select.param.watch(self._chosen, "value")
        state.param.watch(self._sync, ["scenario", "scenario_edited"])
        self._sync()

    def __panel__(self):
        return self._layout

    def title(self, name: str) -> str:
        """The scenario's title as listed."""
        return self._scenarios[name]["title"]

    # ------------------------------------------------------------------ state -> widgets
    def _options(self) -> dict[str, str]:
        state = self._state
        options = {NO_SCENARIO: ""}
        for name in self._order:
            if name == state.scenario and state.scenario_edited:
                options[f"{self.title(name)} (edited)"] = edited_value(name)
            options[self.title(name)] = name
        return options

    def _sync(self, *events) -> None:
        state = self._state
        name = state.scenario if state.scenario in self._scenarios else ""
        value = edited_value(name) if name and state.scenario_edited else name
        self._syncing = True
        try:   # options and value in one step: the value is always one of the options
            self.select.param.update(options=self._options(), value=value)
        finally:
            self._syncing = False
        if not name:
            self.story.object, self.story.visible = "", False
        elif state.scenario_edited:
            self.story.object = (
                "<i>Edited:</i> the data settings differ from this scenario, so its story may "
                f"not hold. Choose &ldquo;{escape(self.title(name))}&rdquo; again to restore it.")
            self.story.visible = True
        else:
            self.story.object = escape(self._scenarios[name]["story"])
            self.story.visible = True

    # ------------------------------------------------------------------ widgets -> state
    def _chosen(self, event) -> None:
        if self._syncing:
            return
        value = event.new or ""
        if not value:
            self._state.clear_scenario()
        elif value in self._scenarios:
            self._state.apply_preset(value)
        self._sync()   # also when nothing changed in the state (e.g. a refused scenario)
