"""The sidebar's scenario chooser: a select of the scenarios and the chosen one's story.

A scenario (``data/scenarios/<name>.json``) sets the data, the seeds, the page and the page's
settings at once (:meth:`~explorer.app.state.ExplorerState.apply_preset`). The select lists
them under their pages' titles; under it, one line says what to look at. Once a data setting
is changed, the state marks the scenario edited: the select's label reads "Scenario (edited)",
it shows the scenario's title with " (edited)" (an entry of its own, so choosing the plain
title again is a real choice and restores the scenario) and the story line says the data
were edited.
"""

from __future__ import annotations

from collections.abc import Mapping

import panel as pn

from explorer.data.catalog import list_presets, load_preset
from explorer.viz.live import escape

__all__ = ["NO_SCENARIO", "ScenarioChooser", "edited_value"]

#: Label of the select's entry for "no scenario".
NO_SCENARIO = "(choose a scenario)"
_EDITED = "edited:"   # value prefix of the "(edited)" entry (scenario names have no colon)

LABEL, EDITED_LABEL = "Scenario", "Scenario (edited)"
STORY_STYLE = {"font-size": "0.92em", "color": "#333", "line-height": "1.3",
               "border-left": "3px solid #1f4e79", "padding-left": "8px"}


def edited_value(name: str) -> str:
    """The select's value of scenario ``name`` while it is edited."""
    return _EDITED + name


class ScenarioChooser(pn.viewable.Viewer):
    """Select + story line over an :class:`~explorer.app.state.ExplorerState`.

    Parameters
    ----------
    state : ExplorerState
    pages : mapping of str -> str, optional
        Page slug -> title, in the sidebar's order: scenarios are listed under their page's
        title in that order (a scenario of another page comes last, under its slug).
    """

    def __init__(self, state, pages: Mapping[str, str] | None = None, **params):
        super().__init__(**params)
        self._state = state
        self._scenarios = {name: load_preset(name) for name in list_presets()}
        pages = dict(pages or {})
        for scenario in self._scenarios.values():
            pages.setdefault(scenario["page"], scenario["page"])
        self._pages = pages
        rank = {slug: i for i, slug in enumerate(pages)}
        self._order = sorted(self._scenarios, key=lambda n: (
            rank[self._scenarios[n]["page"]], self._scenarios[n]["title"]))
        self._syncing = False
        self.select = pn.widgets.Select(label=LABEL, groups=self._groups(), value="",
                                        sizing_mode="stretch_width")
        self.story = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10, 8, 10),
                                  styles=STORY_STYLE, css_classes=["scenario-story"])
        self._layout = pn.Column(self.select, self.story, sizing_mode="stretch_width", margin=0)
        self.select.param.watch(self._chosen, "value")
        # the story names the truth ("task 2 is negated"): it folds with "Hide the truth"
        watched = ["scenario", "scenario_edited", "hide_truth"]
        state.param.watch(self._sync, [name for name in watched if name in state.param])
        self._sync()

    def __panel__(self):
        return self._layout

    def title(self, name: str) -> str:
        """The scenario's title as listed."""
        return self._scenarios[name]["title"]

    # ------------------------------------------------------------------ state -> widgets
    def _groups(self) -> dict[str, dict[str, str]]:
        """Page title -> {option label: value}; the "no scenario" entry first."""
        state = self._state
        groups: dict[str, dict[str, str]] = {"": {NO_SCENARIO: ""}}
        for name in self._order:
            options = groups.setdefault(self._pages[self._scenarios[name]["page"]], {})
            if name == state.scenario and state.scenario_edited:
                options[f"{self.title(name)} (edited)"] = edited_value(name)
            options[self.title(name)] = name
        return groups

    def _sync(self, *events) -> None:
        state = self._state
        name = state.scenario if state.scenario in self._scenarios else ""
        value = edited_value(name) if name and state.scenario_edited else name
        self._syncing = True
        try:   # options and value in one step: the value is always one of the options
            self.select.param.update(groups=self._groups(), value=value,
                                     label=EDITED_LABEL if value != name else LABEL)
        finally:
            self._syncing = False
        if not name:
            self.story.object, self.story.visible = "", False
        elif getattr(state, "hide_truth", False):
            self.story.object = "<i>The story is hidden with the truth.</i>"
            self.story.visible = True
        elif state.scenario_edited:
            self.story.object = ("<i>Edited:</i> the data differ from this scenario. Choose "
                                 "it again to restore it.")
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
