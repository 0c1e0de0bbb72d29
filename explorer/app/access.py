"""Accessible names of figures (WAI-ARIA), for screen readers and for the UI tests.

Every figure's element carries ``role="img"`` and an ``aria-label`` with its title
(Bokeh's public ``html_attributes``), so the figures of a page can be told apart without
seeing them; a figure of the ground truth says so in its name ("True task relation",
"Truth: coefficients").
"""

from __future__ import annotations

import re

__all__ = ["figure_name", "name_figures", "name_panes"]

_SAYS_TRUTH = re.compile(r"^\s*(true|truth)\b", re.IGNORECASE)


def figure_name(fig, *, truth: bool = False) -> str:
    """The accessible name of a Bokeh figure: its title (one line), prefixed with "Truth: "
    when ``truth`` and the title does not already begin with "True" or "Truth".

    >>> from bokeh.plotting import figure
    >>> figure_name(figure(title="coefficients"), truth=True)
    'Truth: coefficients'
    >>> figure_name(figure(title="True  task\\nrelation"), truth=True)
    'True task relation'
    """
    title = getattr(fig, "title", None)
    text = " ".join(str(getattr(title, "text", "") or "").split()) or "Figure"
    return f"Truth: {text}" if truth and not _SAYS_TRUTH.match(text) else text


def name_figures(model, *, truth: bool = False) -> None:
    """Give every figure in ``model`` (a figure, or a layout holding figures) its accessible
    name. Only a changed name is set: a title that did not change sends nothing."""
    if model is None:
        return
    from bokeh.models import Plot  # lazily: the name is computed where figures are

    # a figure is named directly: select() would walk every model it references (its
    # sources included) on every frame that syncs the page's figures
    figures = [model] if isinstance(model, Plot) else model.select({"type": Plot})
    for fig in figures:
        attributes = {**fig.html_attributes, "role": "img",
                      "aria-label": figure_name(fig, truth=truth)}
        if attributes != fig.html_attributes:
            fig.html_attributes = attributes


def name_panes(layout) -> None:
    """Name the figures of every Bokeh pane inside a Panel ``layout`` (titles say truth)."""
    if layout is None:
        return
    import panel as pn

    for pane in layout.select(pn.pane.Bokeh):
        name_figures(pane.object)
